#include "informers/node.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rfc3339.h"
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

int tj_node_from_json(const cJSON *obj, struct tj_node **ret)
{
	static const char *const cond_keys[] = { "type", "status", "reason" };
	static const char *const taint_keys[] = { "key", "effect", "value" };
	const cJSON *meta = tj_field(obj, "metadata");
	const cJSON *conds = tj_field(obj, "status", "conditions");
	const cJSON *taints = tj_field(obj, "spec", "taints");
	const char *kind = tj_field_string(obj, "kind");
	const char *name, *uid, *rv, *arch;
	size_t n_conds, cond_bytes, n_taints, taint_bytes, size;
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
	/* A condition needs a type and a status, a taint a key and an effect (the API server
	 * validates both); anything else is skipped rather than guessed at. */
	r = measure(conds, cond_keys, 3, 2, MAX_CONDITIONS, &n_conds, &cond_bytes);
	if (r < 0)
		return r;
	r = measure(taints, taint_keys, 3, 2, MAX_TAINTS, &n_taints, &taint_bytes);
	if (r < 0)
		return r;

	size = sizeof(*node) + n_conds * sizeof(*node->conditions) +
	       n_taints * sizeof(*node->taints) + strlen(name) + 1 + (uid ? strlen(uid) + 1 : 0) +
	       (rv ? strlen(rv) + 1 : 0) + (arch ? strlen(arch) + 1 : 0) + cond_bytes + taint_bytes;
	node = calloc(1, size);
	if (!node)
		return -ENOMEM;
	node->packed = true;
	node->conditions = n_conds ? (struct tj_node_condition *)(node + 1) : NULL;
	node->taints =
	        n_taints
	                ? (struct tj_node_taint *)((struct tj_node_condition *)(node + 1) + n_conds)
	                : NULL;
	cursor = (char *)((struct tj_node_condition *)(node + 1) + n_conds) +
	         n_taints * sizeof(struct tj_node_taint);
	node->name = pack(&cursor, name);
	node->uid = pack(&cursor, uid);
	node->resource_version = pack(&cursor, rv);
	node->arch = pack(&cursor, arch);
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
	*ret = node;
	return 0;
}

const struct tj_node_condition *tj_node_condition(const struct tj_node *node, const char *type)
{
	for (size_t i = 0; i < node->n_conditions; i++)
		if (strcmp(node->conditions[i].type, type) == 0)
			return &node->conditions[i];
	return NULL;
}

struct tj_node *tj_node_free(struct tj_node *node)
{
	if (!node)
		return NULL;
	if (!node->packed) {
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
