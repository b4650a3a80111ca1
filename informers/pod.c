#include "informers/pod.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rfc3339.h"
#include "base/utf8.h"
#include "informers/intern.h"
#include "informers/projection.h"
#include "informers/store.h"

/* What the projection reads, as borrowed pointers into the cJSON tree, before anything is
 * allocated: the sizes are known first, so the pod and its strings take one allocation. */
struct pod_source {
	const char *namespace, *name, *uid, *resource_version, *owner_uid, *trainjob;
	const char *node_name, *pinned_node, *nominated_node, *reason, *message,
	        *unschedulable_message;
	const char *exit_reason, *disruption_reason, *launcher_hold;
	/* The termination message from its tail offset on (see TJ_POD_TERMINATION_MAX). */
	const char *termination_message;
};

static enum tj_pod_phase parse_phase(const char *s)
{
	static const struct {
		const char *name;
		enum tj_pod_phase phase;
	} phases[] = {
		{ "Pending", TJ_POD_PENDING },     { "Running", TJ_POD_RUNNING },
		{ "Succeeded", TJ_POD_SUCCEEDED }, { "Failed", TJ_POD_FAILED },
		{ "Unknown", TJ_POD_UNKNOWN },
	};

	/* A pod the API server has just admitted always has a phase; a missing one can only
	 * be a pod not yet looked at, which is what Pending means. */
	if (!s)
		return TJ_POD_PENDING;
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (strcmp(s, phases[i].name) == 0)
			return phases[i].phase;
	return TJ_POD_UNKNOWN;
}

static const char *controller_owner_uid(const cJSON *meta)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, tj_field(meta, "ownerReferences")) if (
	        tj_field_bool(ref, "controller")) return tj_field_string(ref, "uid");
	return NULL;
}

static bool has_gate(const cJSON *spec, const char *name)
{
	const cJSON *gate;

	cJSON_ArrayForEach(gate, tj_field(spec, "schedulingGates"))
	{
		const char *n = tj_field_string(gate, "name");

		if (n && strcmp(n, name) == 0)
			return true;
	}
	return false;
}

static int label_index(const cJSON *labels, const char *key)
{
	int v;

	return tj_parse_index(tj_field_string(labels, key), &v) < 0 ? -1 : v;
}

static int64_t time_at(const cJSON *obj, const char *key)
{
	int64_t t;

	return tj_rfc3339_parse(tj_field_string(obj, key), &t) < 0 ? 0 : t;
}

static void read_conditions(const cJSON *status, struct tj_pod *pod, struct pod_source *src)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, tj_field(status, "conditions"))
	{
		const char *type = tj_field_string(c, "type");
		const char *st = tj_field_string(c, "status");

		if (!type || !st)
			continue;
		if (strcmp(type, "Ready") == 0) {
			pod->ready = strcmp(st, "True") == 0;
		} else if (strcmp(type, "PodScheduled") == 0) {
			const char *reason = tj_field_string(c, "reason");

			pod->unschedulable = strcmp(st, "False") == 0 && reason &&
			                     strcmp(reason, "Unschedulable") == 0;
			src->unschedulable_message =
			        pod->unschedulable ? tj_field_string(c, "message") : NULL;
		} else if (strcmp(type, "DisruptionTarget") == 0) {
			src->disruption_reason =
			        strcmp(st, "True") == 0 ? tj_field_string(c, "reason") : NULL;
		}
	}
}

/* Returns the finishedAt of the chosen container, 0 if it has none. */
static int64_t read_termination(const cJSON *status, struct tj_pod *pod, struct pod_source *src)
{
	const cJSON *cs, *chosen = NULL;

	cJSON_ArrayForEach(cs, tj_field(status, "containerStatuses"))
	{
		const cJSON *term = tj_field(cs, "state", "terminated");
		const char *name = tj_field_string(cs, "name");

		if (!cJSON_IsObject(term))
			continue;
		if (name && strcmp(name, "node") == 0) {
			chosen = term;
			break;
		}
		if (!chosen)
			chosen = term;
	}
	if (!chosen)
		return 0;
	pod->terminated = true;
	{
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(chosen, "exitCode");
		double v = cJSON_IsNumber(code) ? code->valuedouble : 0;

		pod->exit_code = v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v;
	}
	src->exit_reason = tj_field_string(chosen, "reason");
	src->termination_message = tj_field_string(chosen, "message");
	if (src->termination_message) {
		size_t len = strlen(src->termination_message);

		src->termination_message +=
		        tj_utf8_tail(src->termination_message, len, TJ_POD_TERMINATION_MAX);
	}
	return time_at(chosen, "finishedAt");
}

/* The moment a pod being deleted was asked to stop: the API server sets deletionTimestamp
 * to that moment plus the grace period it grants. */
static int64_t deletion_requested(const cJSON *meta, int64_t deletion_time)
{
	const cJSON *grace = tj_field(meta, "deletionGracePeriodSeconds");
	double g = cJSON_IsNumber(grace) ? grace->valuedouble : 0;

	if (!deletion_time)
		return 0;
	return g > 0 && g < (double)deletion_time ? deletion_time - (int64_t)g : deletion_time;
}

static int32_t held_seconds(int64_t start, int64_t finished, int64_t deletion_requested)
{
	int64_t stop = finished ? finished : deletion_requested;

	if (!start || !stop)
		return -1;
	if (stop <= start)
		return 0;
	return stop - start > INT32_MAX ? INT32_MAX : (int32_t)(stop - start);
}

int32_t tj_pod_spec_termination_grace(const cJSON *pod_spec)
{
	const cJSON *g = tj_field(pod_spec, "terminationGracePeriodSeconds");

	if (!cJSON_IsNumber(g))
		return 30;
	if (!(g->valuedouble > 0))
		return 0;
	return g->valuedouble >= INT32_MAX ? INT32_MAX : (int32_t)g->valuedouble;
}

static size_t size_of(const char *s)
{
	return s ? strlen(s) + 1 : 0;
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

static int intern(const char *s, char **ret)
{
	if (!s) {
		*ret = NULL;
		return 0;
	}
	*ret = tj_intern(s);
	return *ret ? 0 : -ENOMEM;
}

static void unref_interned(struct tj_pod *pod)
{
	/* The names are interned and so were not const when they were made. */
	for (uint8_t i = 0; i < pod->requests.n_extended; i++)
		pod->requests.extended[i].name =
		        tj_intern_unref((char *)pod->requests.extended[i].name);
	pod->namespace = tj_intern_unref(pod->namespace);
	pod->owner_uid = tj_intern_unref(pod->owner_uid);
	pod->pinned_node = tj_intern_unref(pod->pinned_node);
	pod->nominated_node = tj_intern_unref(pod->nominated_node);
	pod->trainjob = tj_intern_unref(pod->trainjob);
	pod->node_name = tj_intern_unref(pod->node_name);
	pod->reason = tj_intern_unref(pod->reason);
	pod->exit_reason = tj_intern_unref(pod->exit_reason);
	pod->disruption_reason = tj_intern_unref(pod->disruption_reason);
}

int tj_pod_from_json(const cJSON *obj, struct tj_pod **ret)
{
	const cJSON *meta = tj_field(obj, "metadata");
	const cJSON *status = tj_field(obj, "status");
	const cJSON *labels = tj_field(meta, "labels");
	const char *kind = tj_field_string(obj, "kind");
	struct pod_source src = { 0 };
	struct tj_pod tmp = { 0 }, *pod;
	struct tj_extended_resource extended[TJ_RESOURCES_MAX_EXTENDED];
	char *cursor;
	size_t size;
	int r;

	/* Items of a list response carry no kind; a kind that is there must be Pod. */
	if (!cJSON_IsObject(obj) || (kind && strcmp(kind, "Pod") != 0))
		return -EINVAL;
	src.namespace = tj_field_string(meta, "namespace");
	src.name = tj_field_string(meta, "name");
	if (!src.namespace || !*src.namespace || !src.name || !*src.name)
		return -EINVAL;
	src.uid = tj_field_string(meta, "uid");
	src.resource_version = tj_field_string(meta, "resourceVersion");
	src.owner_uid = controller_owner_uid(meta);
	src.trainjob = tj_field_string(labels, TJ_LABEL_TRAINJOB);
	src.node_name = tj_field_string(obj, "spec", "nodeName");
	src.pinned_node = tj_field_string(meta, "annotations", TJ_ANNOTATION_PINNED_NODE);
	src.nominated_node = tj_field_string(status, "nominatedNodeName");
	if (src.nominated_node && !*src.nominated_node)
		src.nominated_node = NULL;
	src.launcher_hold = tj_field_string(meta, "annotations", TJ_ANNOTATION_LAUNCHER_HOLD);
	if (src.launcher_hold && strlen(src.launcher_hold) > TJ_POD_LAUNCHER_HOLD_MAX)
		src.launcher_hold = NULL;
	src.reason = tj_field_string(status, "reason");
	src.message = tj_field_string(status, "message");

	tmp.rank = label_index(labels, TJ_LABEL_RANK);
	tmp.attempt = label_index(labels, TJ_LABEL_ATTEMPT);
	tmp.kept = cJSON_GetObjectItemCaseSensitive(labels, TJ_LABEL_FAILED_ATTEMPT) != NULL;
	tmp.phase = parse_phase(tj_field_string(status, "phase"));
	tmp.creation_time = time_at(meta, "creationTimestamp");
	tmp.deletion_time = time_at(meta, "deletionTimestamp");
	tmp.start_time = time_at(status, "startTime");
	tmp.deadline = time_at(tj_field(meta, "annotations"), TJ_ANNOTATION_DEADLINE);
	tmp.termination_grace = tj_pod_spec_termination_grace(tj_field(obj, "spec"));
	tmp.gated = has_gate(tj_field(obj, "spec"), TJ_SCHEDULING_GATE);
	read_conditions(status, &tmp, &src);
	tmp.held_seconds = held_seconds(tmp.start_time, read_termination(status, &tmp, &src),
	                                deletion_requested(meta, tmp.deletion_time));
	/* The API server has validated every quantity of a pod it stores; one that is not a
	 * quantity can only be in a pod of our own, which the server would refuse. The names
	 * still point into the tree: they are interned below. */
	if (tj_pod_spec_requests(tj_field(obj, "spec"), &tmp.requests) < 0)
		tmp.requests = (struct tj_pod_resources){ 0 };
	memcpy(extended, tmp.requests.extended, sizeof(extended));
	for (uint8_t i = 0; i < tmp.requests.n_extended; i++)
		tmp.requests.extended[i].name = NULL;

	size = sizeof(*pod) + size_of(src.name) + size_of(src.uid) + size_of(src.resource_version) +
	       size_of(src.message) + size_of(src.unschedulable_message) +
	       size_of(src.termination_message) + size_of(src.launcher_hold);
	pod = malloc(size);
	if (!pod)
		return -ENOMEM;
	*pod = tmp;
	pod->packed = true;
	cursor = (char *)(pod + 1);
	pod->name = pack(&cursor, src.name);
	pod->uid = pack(&cursor, src.uid);
	pod->resource_version = pack(&cursor, src.resource_version);
	pod->message = pack(&cursor, src.message);
	pod->unschedulable_message = pack(&cursor, src.unschedulable_message);
	pod->termination_message = pack(&cursor, src.termination_message);
	pod->launcher_hold = pack(&cursor, src.launcher_hold);
	if ((r = intern(src.namespace, &pod->namespace)) < 0 ||
	    (r = intern(src.owner_uid, &pod->owner_uid)) < 0 ||
	    (r = intern(src.trainjob, &pod->trainjob)) < 0 ||
	    (r = intern(src.node_name, &pod->node_name)) < 0 ||
	    (r = intern(src.pinned_node, &pod->pinned_node)) < 0 ||
	    (r = intern(src.nominated_node, &pod->nominated_node)) < 0 ||
	    (r = intern(src.reason, &pod->reason)) < 0 ||
	    (r = intern(src.exit_reason, &pod->exit_reason)) < 0 ||
	    (r = intern(src.disruption_reason, &pod->disruption_reason)) < 0)
		goto fail_pod;
	for (uint8_t i = 0; i < pod->requests.n_extended; i++) {
		char *name = tj_intern(extended[i].name);

		if (!name) {
			r = -ENOMEM;
			goto fail_pod;
		}
		pod->requests.extended[i].name = name;
	}
	*ret = pod;
	return 0;

fail_pod:
	/* Fields not reached yet are still NULL from tmp, the names of the requests too. */
	unref_interned(pod);
	free(pod);
	return r;
}

int tj_pod_key(const struct tj_pod *pod, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", pod->namespace, pod->name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

struct tj_pod *tj_pod_free(struct tj_pod *pod)
{
	if (!pod)
		return NULL;
	if (pod->packed) {
		unref_interned(pod);
	} else {
		free(pod->namespace);
		free(pod->name);
		free(pod->uid);
		free(pod->resource_version);
		free(pod->owner_uid);
		free(pod->trainjob);
		free(pod->node_name);
		free(pod->pinned_node);
		free(pod->nominated_node);
		free(pod->unschedulable_message);
		free(pod->reason);
		free(pod->message);
		free(pod->exit_reason);
		free(pod->disruption_reason);
		free(pod->termination_message);
		free(pod->launcher_hold);
	}
	free(pod);
	return NULL;
}

/* ---- the pod store ---- */

static void pod_free(void *obj)
{
	tj_pod_free(obj);
}

static int pod_key(const void *obj, char *buf, size_t size)
{
	return tj_pod_key(obj, buf, size);
}

int tj_pod_trainjob_key(const struct tj_pod *pod, char *buf, size_t size)
{
	int n;

	if (!pod->trainjob)
		return 0;
	n = snprintf(buf, size, "%s/%s", pod->namespace, pod->trainjob);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 1;
}

static int pod_by_trainjob(const void *obj, char *buf, size_t size)
{
	return tj_pod_trainjob_key(obj, buf, size);
}

static int pod_by_node(const void *obj, char *buf, size_t size)
{
	const struct tj_pod *pod = obj;
	const char *node = tj_pod_node_of(pod);
	int n;

	if (!node)
		return 0;
	n = snprintf(buf, size, "%s", node);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 1;
}

const struct tj_store_ops tj_pod_store_ops = {
	.free = pod_free,
	.key = pod_key,
	.index = { [TJ_POD_INDEX_TRAINJOB] = pod_by_trainjob, [TJ_POD_INDEX_NODE] = pod_by_node },
	.n_indexes = 2,
};

static bool owned_by(const struct tj_pod *pod, const char *owner_uid)
{
	return pod->owner_uid && strcmp(pod->owner_uid, owner_uid) == 0;
}

int tj_pod_collect_owned(const struct tj_store *store, const char *job_key, const char *owner_uid,
                         size_t max, const struct tj_pod ***ret, size_t *ret_n)
{
	const struct tj_pod **pods = NULL, *pod;
	struct tj_store_iter it;
	size_t n = 0, i = 0;

	/* Counted first, so that the array has exactly the owned pods. */
	if (owner_uid && *owner_uid) {
		tj_store_iter_index(store, TJ_POD_INDEX_TRAINJOB, job_key, &it);
		while ((pod = tj_store_iter_next(&it)))
			n += owned_by(pod, owner_uid);
	}
	if (n > max)
		return -E2BIG;
	if (n > 0) {
		pods = calloc(n, sizeof(*pods));
		if (!pods)
			return -ENOMEM;
		tj_store_iter_index(store, TJ_POD_INDEX_TRAINJOB, job_key, &it);
		while ((pod = tj_store_iter_next(&it)))
			if (owned_by(pod, owner_uid))
				pods[i++] = pod;
	}
	*ret = pods;
	*ret_n = n;
	return 0;
}

int tj_pod_project(const cJSON *obj, void **ret)
{
	struct tj_pod *pod;
	int r = tj_pod_from_json(obj, &pod);

	if (r == 0)
		*ret = pod;
	return r;
}
