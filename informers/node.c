#include "informers/node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/quantity.h"
#include "base/rfc3339.h"
#include "informers/intern.h"
#include "informers/projection.h"

#define MAX_CONDITIONS 64
#define MAX_TAINTS     64

/* Counts the entries of an array that the projection keeps (objects with the required
 * string members) and the bytes their strings need. */
static int measure(const cJSON *arr, const char *const *keys, size_t n_keys, size_t n_required,
                   size_t max, size_t *ret_n, size_t *ret_bytes)
{
	const cJSON *e;
	size_t n = 0, bytes = 0;

	cJSON_ArrayForEach(e, arr)
	{
		bool keep = true;

		for (size_t k = 0; k < n_required; k++)
			keep = keep && tj_field_string(e, keys[k]);
		if (!keep)
			continue;
		if (++n > max)
			return -E2BIG;
		for (size_t k = 0; k < n_keys; k++) {
			const char *s = tj_field_string(e, keys[k]);

			bytes += s ? strlen(s) + 1 : 0;
		}
	}
	*ret_n = n;
	*ret_bytes = bytes;
	return 0;
}

static char *pack(char **cursor, const char *s)
{
	size_t n;
	char *r;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	r = memcpy(*cursor, s, n);
	*cursor += n;
	return r;
}

static enum tj_condition_status parse_status(const char *s)
{
	if (strcmp(s, "True") == 0)
		return TJ_COND_TRUE;
	if (strcmp(s, "False") == 0)
		return TJ_COND_FALSE;
	return TJ_COND_UNKNOWN;
}

static int64_t time_at(const cJSON *obj, const char *key)
{
	int64_t t;

	return tj_rfc3339_parse(tj_field_string(obj, key), &t) < 0 ? 0 : t;
}

/* The labels kept: string values only (the API server has no others). */
static size_t count_labels(const cJSON *labels)
{
	const cJSON *l;
	size_t n = 0;

	if (!cJSON_IsObject(labels))
		return 0;
	cJSON_ArrayForEach(l, labels)
	{
		if (cJSON_IsString(l) && n < TJ_NODE_MAX_LABELS)
			n++;
	}
	return n;
}

/* Drops the references of a packed node's interned strings; those not reached are NULL. */
static void unref_interned(struct tj_node *node)
{
	for (size_t i = 0; i < node->n_labels; i++) {
		node->labels[i].key = tj_intern_unref(node->labels[i].key);
		node->labels[i].value = tj_intern_unref(node->labels[i].value);
	}
	/* Interned, so not const when they were made. */
	for (uint8_t i = 0; i < node->allocatable.n_extended; i++)
		node->allocatable.extended[i].name =
		        tj_intern_unref((char *)node->allocatable.extended[i].name);
}

static int read_labels(const cJSON *labels, struct tj_node *node)
{
	const cJSON *l;
	size_t i = 0;

	cJSON_ArrayForEach(l, labels)
	{
		if (i == node->n_labels)
			break;
		if (!cJSON_IsString(l))
			continue;
		node->labels[i].key = tj_intern(l->string);
		node->labels[i].value = tj_intern(l->valuestring);
		if (!node->labels[i].key || !node->labels[i].value)
			return -ENOMEM;
		i++;
	}
	return 0;
}

/* A node's allocatable amount: 0 if it is not a quantity or negative (the node offers none
 * of it), INT64_MAX if it is too large to count. */
static int64_t allocatable_amount(const cJSON *q, bool milli)
{
	int64_t v;
	int r = milli ? tj_quantity_json_milli(q, &v) : tj_quantity_json_value(q, &v);

	if (r == -ERANGE)
		return cJSON_IsString(q) && q->valuestring[0] == '-' ? 0 : INT64_MAX;
	return r < 0 || v < 0 ? 0 : v;
}

static int read_allocatable(const cJSON *alloc, struct tj_node_allocatable *a)
{
	const cJSON *q;

	if (!cJSON_IsObject(alloc))
		return 0;
	cJSON_ArrayForEach(q, alloc)
	{
		char *name;

		if (!q->string)
			continue;
		if (strcmp(q->string, "cpu") == 0) {
			a->cpu_milli = allocatable_amount(q, true);
		} else if (strcmp(q->string, "memory") == 0) {
			a->memory = allocatable_amount(q, false);
		} else if (strcmp(q->string, "pods") == 0) {
			a->pods = allocatable_amount(q, false);
		} else if (tj_resource_is_extended(q->string) &&
		           a->n_extended < TJ_NODE_MAX_EXTENDED) {
			name = tj_intern(q->string);
			if (!name)
				return -ENOMEM;
			a->extended[a->n_extended++] =
			        (struct tj_extended_resource){ name, allocatable_amount(q, false) };
		}
	}
	return 0;
}

int tj_node_from_json(const cJSON *obj, struct tj_node **ret)
{
	static const char *const cond_keys[] = { "type", "status", "reason" };
	static const char *const taint_keys[] = { "key", "effect", "value" };
	const cJSON *meta = tj_field(obj, "metadata");
	const cJSON *conds = tj_field(obj, "status", "conditions");
	const cJSON *taints = tj_field(obj, "spec", "taints");
	const cJSON *labels = tj_field(meta, "labels");
	const char *kind = tj_field_string(obj, "kind");
	const char *name, *uid, *rv, *arch, *failures, *mark;
	size_t n_conds, cond_bytes, n_taints, taint_bytes, n_labels, size;
	struct tj_node *node;
	const cJSON *e;
	char *cursor;
	size_t i;
	int r;

	if (!cJSON_IsObject(obj) || (kind && strcmp(kind, "Node") != 0))
		return -EINVAL;
	name = tj_field_string(meta, "name");
	if (!name || !*name)
		return -EINVAL;
	uid = tj_field_string(meta, "uid");
	rv = tj_field_string(meta, "resourceVersion");
	arch = tj_field_string(meta, "labels", "kubernetes.io/arch");
	failures = tj_field_string(meta, "annotations", TJ_ANNOTATION_NODE_FAILURES);
	if (failures && strlen(failures) > TJ_NODE_FAILURES_MAX)
		failures = NULL;
	mark = tj_field_string(meta, "annotations", TJ_ANNOTATION_SUSPECT);
	if (!mark && tj_field(meta, "annotations", TJ_ANNOTATION_SUSPECT))
		mark = ""; /* present, but not a string */
	if (mark && strlen(mark) > TJ_NODE_FAILURES_MAX)
		mark = "";
	/* A condition needs a type and a status, a taint a key and an effect (the API server
	 * validates both); anything else is skipped rather than guessed at. */
	r = measure(conds, cond_keys, 3, 2, MAX_CONDITIONS, &n_conds, &cond_bytes);
	if (r < 0)
		return r;
	r = measure(taints, taint_keys, 3, 2, MAX_TAINTS, &n_taints, &taint_bytes);
	if (r < 0)
		return r;

	n_labels = count_labels(labels);

	size = sizeof(*node) + n_conds * sizeof(*node->conditions) +
	       n_taints * sizeof(*node->taints) + n_labels * sizeof(*node->labels) + strlen(name) +
	       1 + (uid ? strlen(uid) + 1 : 0) + (rv ? strlen(rv) + 1 : 0) +
	       (arch ? strlen(arch) + 1 : 0) + (failures ? strlen(failures) + 1 : 0) +
	       (mark ? strlen(mark) + 1 : 0) + cond_bytes + taint_bytes;
	node = calloc(1, size);
	if (!node)
		return -ENOMEM;
	node->packed = true;
	{
		struct tj_node_condition *conditions = (struct tj_node_condition *)(node + 1);
		struct tj_node_taint *taint_array = (struct tj_node_taint *)(conditions + n_conds);
		struct tj_node_label *label_array =
		        (struct tj_node_label *)(taint_array + n_taints);

		node->conditions = n_conds ? conditions : NULL;
		node->taints = n_taints ? taint_array : NULL;
		node->labels = n_labels ? label_array : NULL;
		node->n_labels = n_labels;
		cursor = (char *)(label_array + n_labels);
	}
	node->name = pack(&cursor, name);
	node->uid = pack(&cursor, uid);
	node->resource_version = pack(&cursor, rv);
	node->arch = pack(&cursor, arch);
	node->failures = pack(&cursor, failures);
	node->suspect_mark = pack(&cursor, mark);
	node->unschedulable = tj_field_bool(tj_field(obj, "spec"), "unschedulable");

	i = 0;
	cJSON_ArrayForEach(e, conds)
	{
		struct tj_node_condition *c;
		const char *status = tj_field_string(e, "status");

		if (!tj_field_string(e, "type") || !status)
			continue;
		c = &node->conditions[i];
		c->type = pack(&cursor, tj_field_string(e, "type"));
		c->status = parse_status(status);
		c->reason = pack(&cursor, tj_field_string(e, "reason"));
		c->last_transition_time = time_at(e, "lastTransitionTime");
		i++;
	}
	node->n_conditions = i;

	i = 0;
	cJSON_ArrayForEach(e, taints)
	{
		struct tj_node_taint *t;

		if (!tj_field_string(e, "key") || !tj_field_string(e, "effect"))
			continue;
		t = &node->taints[i];
		t->key = pack(&cursor, tj_field_string(e, "key"));
		t->effect = pack(&cursor, tj_field_string(e, "effect"));
		t->value = pack(&cursor, tj_field_string(e, "value"));
		t->time_added = time_at(e, "timeAdded");
		i++;
	}
	node->n_taints = i;
	if ((r = read_labels(labels, node)) < 0 ||
	    (r = read_allocatable(tj_field(obj, "status", "allocatable"), &node->allocatable)) < 0)
		goto fail_node;
	*ret = node;
	return 0;

fail_node:
	unref_interned(node);
	free(node);
	return r;
}

const char *tj_node_label(const struct tj_node *node, const char *key)
{
	for (size_t i = 0; i < node->n_labels; i++)
		if (strcmp(node->labels[i].key, key) == 0)
			return node->labels[i].value;
	return NULL;
}

int64_t tj_node_allocatable_extended(const struct tj_node *node, const char *name)
{
	const struct tj_node_allocatable *a = &node->allocatable;

	for (uint8_t i = 0; i < a->n_extended; i++)
		if (a->extended[i].name == name || strcmp(a->extended[i].name, name) == 0)
			return a->extended[i].value;
	return 0;
}

const struct tj_node_condition *tj_node_condition(const struct tj_node *node, const char *type)
{
	for (size_t i = 0; i < node->n_conditions; i++)
		if (strcmp(node->conditions[i].type, type) == 0)
			return &node->conditions[i];
	return NULL;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool same_allocatable(const struct tj_node_allocatable *a,
                             const struct tj_node_allocatable *b)
{
	if (a->cpu_milli != b->cpu_milli || a->memory != b->memory || a->pods != b->pods ||
	    a->n_extended != b->n_extended)
		return false;
	for (uint8_t i = 0; i < a->n_extended; i++)
		if (a->extended[i].value != b->extended[i].value ||
		    !same_str(a->extended[i].name, b->extended[i].name))
			return false;
	return true;
}

bool tj_node_same_placement(const struct tj_node *a, const struct tj_node *b)
{
	if (a->unschedulable != b->unschedulable || !same_str(a->arch, b->arch) ||
	    a->n_labels != b->n_labels || a->n_taints != b->n_taints ||
	    a->n_conditions != b->n_conditions ||
	    !same_allocatable(&a->allocatable, &b->allocatable))
		return false;
	for (size_t i = 0; i < a->n_labels; i++)
		if (!same_str(a->labels[i].key, b->labels[i].key) ||
		    !same_str(a->labels[i].value, b->labels[i].value))
			return false;
	for (size_t i = 0; i < a->n_taints; i++) {
		const struct tj_node_taint *x = &a->taints[i], *y = &b->taints[i];

		if (!same_str(x->key, y->key) || !same_str(x->value, y->value) ||
		    !same_str(x->effect, y->effect) || x->time_added != y->time_added)
			return false;
	}
	for (size_t i = 0; i < a->n_conditions; i++) {
		const struct tj_node_condition *x = &a->conditions[i], *y = &b->conditions[i];

		if (!same_str(x->type, y->type) || x->status != y->status ||
		    !same_str(x->reason, y->reason) ||
		    x->last_transition_time != y->last_transition_time)
			return false;
	}
	return true;
}

struct tj_node *tj_node_free(struct tj_node *node)
{
	if (!node)
		return NULL;
	if (node->packed) {
		unref_interned(node);
	} else {
		for (size_t i = 0; i < node->n_labels; i++) {
			free(node->labels[i].key);
			free(node->labels[i].value);
		}
		free(node->labels);
		for (size_t i = 0; i < node->n_conditions; i++) {
			free(node->conditions[i].type);
			free(node->conditions[i].reason);
		}
		for (size_t i = 0; i < node->n_taints; i++) {
			free(node->taints[i].key);
			free(node->taints[i].value);
			free(node->taints[i].effect);
		}
		free(node->conditions);
		free(node->taints);
		free(node->name);
		free(node->uid);
		free(node->resource_version);
		free(node->arch);
		free(node->failures);
		free(node->suspect_mark);
	}
	free(node);
	return NULL;
}

/* ---- the node store ---- */

static void node_free(void *obj)
{
	tj_node_free(obj);
}

static int node_key(const void *obj, char *buf, size_t size)
{
	const struct tj_node *node = obj;
	int n = snprintf(buf, size, "%s", node->name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

const struct tj_store_ops tj_node_store_ops = {
	.free = node_free,
	.key = node_key,
};

int tj_node_project(const cJSON *obj, void **ret)
{
	struct tj_node *node;
	int r = tj_node_from_json(obj, &node);

	if (r == 0)
		*ret = node;
	return r;
}
