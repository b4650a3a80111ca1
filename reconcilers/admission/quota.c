#include "reconcilers/admission/quota.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "informers/projection.h"

/* Per resource name of the pod, in thousandths: one container's, or a sum or maximum. */
struct tally {
	int64_t v[TJ_QUOTA_POD_MAX_RESOURCES];
};

struct names {
	const char *name[TJ_QUOTA_POD_MAX_RESOURCES]; /* borrowed from the tree */
	size_t n;
};

static int slot_of(struct names *names, const char *name)
{
	for (size_t i = 0; i < names->n; i++)
		if (strcmp(names->name[i], name) == 0)
			return (int)i;
	if (names->n == TJ_QUOTA_POD_MAX_RESOURCES)
		return -E2BIG;
	names->name[names->n] = name;
	return (int)names->n++;
}

/* Adds a resource list (name: quantity) to t, leaving out the names that skip has. */
static int add_list(const cJSON *list, const cJSON *skip, struct names *names, struct tally *t)
{
	const cJSON *q;

	if (!cJSON_IsObject(list))
		return 0;
	cJSON_ArrayForEach(q, list)
	{
		int64_t v;
		int s, r;

		if (!q->string ||
		    (cJSON_IsObject(skip) && cJSON_GetObjectItemCaseSensitive(skip, q->string)))
			continue;
		if ((s = slot_of(names, q->string)) < 0)
			return s;
		if ((r = tj_quota_amount_json(q, &v)) < 0)
			return r;
		t->v[s] = tj_add_capped(t->v[s], v);
	}
	return 0;
}

/* A container's requests (its limit standing for a request it lacks, as API defaulting does)
 * or limits. */
static int container_amounts(const cJSON *c, bool limits, struct names *names, struct tally *ret)
{
	const cJSON *requests = tj_field(c, "resources", "requests");
	const cJSON *lims = tj_field(c, "resources", "limits");
	int r;

	*ret = (struct tally){ 0 };
	if (limits)
		return add_list(lims, NULL, names, ret);
	if ((r = add_list(requests, NULL, names, ret)) < 0)
		return r;
	return add_list(lims, requests, names, ret);
}

static void tally_add(struct tally *to, const struct tally *t)
{
	for (size_t i = 0; i < TJ_QUOTA_POD_MAX_RESOURCES; i++)
		to->v[i] = tj_add_capped(to->v[i], t->v[i]);
}

static void tally_max(struct tally *to, const struct tally *t)
{
	for (size_t i = 0; i < TJ_QUOTA_POD_MAX_RESOURCES; i++)
		if (t->v[i] > to->v[i])
			to->v[i] = t->v[i];
}

/* Pod-level CPU and memory (spec.resources) replace the containers'. */
static int pod_level(const cJSON *spec, bool limits, struct names *names, struct tally *t)
{
	static const char *const native[] = { "cpu", "memory" };
	const cJSON *own = tj_field(spec, "resources", limits ? "limits" : "requests");
	const cJSON *other = tj_field(spec, "resources", "limits");

	for (size_t i = 0; i < 2; i++) {
		const cJSON *q = cJSON_GetObjectItemCaseSensitive(own, native[i]);
		int64_t v;
		int s, r;

		if (!q && !limits)
			q = cJSON_GetObjectItemCaseSensitive(other, native[i]);
		if (!q)
			continue;
		if ((s = slot_of(names, native[i])) < 0)
			return s;
		if ((r = tj_quota_amount_json(q, &v)) < 0)
			return r;
		t->v[s] = v;
	}
	return 0;
}

/* spec.overhead, added to every request but only to the limits the pod has (the scheduler's
 * PodLimits adds none to a resource without a limit; a limit of 0 counts as none here). */
static int add_overhead(const cJSON *spec, bool limits, struct names *names, struct tally *t)
{
	struct tally o = { 0 };
	int r = add_list(tj_field(spec, "overhead"), NULL, names, &o);

	if (r < 0)
		return r;
	for (size_t i = 0; i < TJ_QUOTA_POD_MAX_RESOURCES; i++)
		if (!limits || t->v[i] != 0)
			t->v[i] = tj_add_capped(t->v[i], o.v[i]);
	return 0;
}

/* The pod's requests or limits: the containers' sum (sidecars included) or the largest init
 * container beside the sidecars started before it, whichever is larger, then the pod-level
 * CPU and memory, then the overhead. */
static int pod_amounts(const cJSON *spec, bool limits, struct names *names, struct tally *ret)
{
	struct tally sum = { 0 }, sidecars = { 0 }, init = { 0 }, c;
	const cJSON *e;
	int r;

	cJSON_ArrayForEach(e, tj_field(spec, "containers"))
	{
		if ((r = container_amounts(e, limits, names, &c)) < 0)
			return r;
		tally_add(&sum, &c);
	}
	cJSON_ArrayForEach(e, tj_field(spec, "initContainers"))
	{
		const char *policy = tj_field_string(e, "restartPolicy");

		if ((r = container_amounts(e, limits, names, &c)) < 0)
			return r;
		if (policy && strcmp(policy, "Always") == 0) {
			tally_add(&sum, &c);
			tally_add(&sidecars, &c);
		} else {
			tally_add(&c, &sidecars);
			tally_max(&init, &c);
		}
	}
	tally_max(&sum, &init);
	if ((r = pod_level(spec, limits, names, &sum)) < 0 ||
	    (r = add_overhead(spec, limits, names, &sum)) < 0)
		return r;
	*ret = sum;
	return 0;
}

/* A request or limit of CPU or memory, other than zero, in one resource list. */
static bool sets_compute(const cJSON *list)
{
	static const char *const native[] = { "cpu", "memory" };

	for (size_t i = 0; i < 2; i++) {
		const cJSON *q = cJSON_GetObjectItemCaseSensitive(list, native[i]);
		int64_t v;

		if (q && (tj_quota_amount_json(q, &v) < 0 || v != 0))
			return true;
	}
	return false;
}

/* QoS class BestEffort: nothing of the pod requests or limits CPU or memory. */
static bool best_effort(const cJSON *spec)
{
	static const char *const lists[] = { "containers", "initContainers" };
	const cJSON *e;

	if (sets_compute(tj_field(spec, "resources", "requests")) ||
	    sets_compute(tj_field(spec, "resources", "limits")))
		return false;
	for (size_t i = 0; i < 2; i++)
		cJSON_ArrayForEach(e, tj_field(spec, lists[i]))
		{
			if (sets_compute(tj_field(e, "resources", "requests")) ||
			    sets_compute(tj_field(e, "resources", "limits")))
				return false;
		}
	return true;
}

static bool names_namespaces(const cJSON *term)
{
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(term, "namespaces");
	const cJSON *sel = cJSON_GetObjectItemCaseSensitive(term, "namespaceSelector");

	return cJSON_GetArraySize(ns) > 0 || (sel && !cJSON_IsNull(sel));
}

/* A pod (anti-)affinity term that reaches other namespaces. */
static bool cross_namespace(const cJSON *spec)
{
	static const char *const kinds[] = { "podAffinity", "podAntiAffinity" };
	const cJSON *t;

	for (size_t i = 0; i < 2; i++) {
		const cJSON *a = tj_field(spec, "affinity", kinds[i]);

		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
		                              a, "requiredDuringSchedulingIgnoredDuringExecution"))
		{
			if (names_namespaces(t))
				return true;
		}
		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
		                              a, "preferredDuringSchedulingIgnoredDuringExecution"))
		{
			if (names_namespaces(
			            cJSON_GetObjectItemCaseSensitive(t, "podAffinityTerm")))
				return true;
		}
	}
	return false;
}

struct tj_quota_pod *tj_quota_pod_free(struct tj_quota_pod *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->n_amounts; i++)
		free(p->amounts[i].resource);
	free(p->priority_class);
	free(p);
	return NULL;
}

int tj_quota_pod_of(const cJSON *pod_spec, struct tj_quota_pod **ret)
{
	struct names names = { 0 };
	struct tally requests, limits;
	const cJSON *deadline = cJSON_GetObjectItemCaseSensitive(pod_spec, "activeDeadlineSeconds");
	const char *pc = tj_field_string(pod_spec, "priorityClassName");
	struct tj_quota_pod *p;
	int r;

	if ((r = pod_amounts(pod_spec, false, &names, &requests)) < 0 ||
	    (r = pod_amounts(pod_spec, true, &names, &limits)) < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->priority_class = strdup(pc ? pc : "")))
		goto oom;
	p->terminating = cJSON_IsNumber(deadline) && deadline->valuedouble >= 0;
	p->best_effort = best_effort(pod_spec);
	p->cross_namespace = cross_namespace(pod_spec);
	for (size_t i = 0; i < names.n; i++) {
		struct tj_quota_amount *a = &p->amounts[p->n_amounts];

		if (!(a->resource = strdup(names.name[i])))
			goto oom;
		a->request = requests.v[i];
		a->limit = limits.v[i];
		p->n_amounts++;
	}
	*ret = p;
	return 0;
oom:
	tj_quota_pod_free(p);
	return -ENOMEM;
}

static bool has_value(const struct tj_quota_expression *e, const char *v)
{
	for (size_t i = 0; i < e->n_values; i++)
		if (strcmp(e->values[i], v) == 0)
			return true;
	return false;
}

static bool in_scope(const struct tj_quota_expression *e, const struct tj_quota_pod *p)
{
	switch (e->scope) {
	case TJ_QUOTA_SCOPE_TERMINATING:
		return p->terminating;
	case TJ_QUOTA_SCOPE_NOT_TERMINATING:
		return !p->terminating;
	case TJ_QUOTA_SCOPE_BEST_EFFORT:
		return p->best_effort;
	case TJ_QUOTA_SCOPE_NOT_BEST_EFFORT:
		return !p->best_effort;
	case TJ_QUOTA_SCOPE_CROSS_NAMESPACE:
		return p->cross_namespace;
	case TJ_QUOTA_SCOPE_PRIORITY_CLASS:
		switch (e->op) {
		case TJ_QUOTA_OP_EXISTS:
			return *p->priority_class != '\0';
		case TJ_QUOTA_OP_IN:
			return has_value(e, p->priority_class);
		case TJ_QUOTA_OP_NOT_IN:
			return !has_value(e, p->priority_class);
		case TJ_QUOTA_OP_DOES_NOT_EXIST:
			return false;
		}
		return false;
	case TJ_QUOTA_SCOPE_OTHER:
		return false;
	}
	return false;
}

bool tj_quota_counts(const struct tj_resource_quota *q, const struct tj_quota_pod *p)
{
	for (size_t i = 0; i < q->n_scopes; i++)
		if (!in_scope(&q->scopes[i], p))
			return false;
	return true;
}

/* The native resources a quota names without a prefix. */
static bool native_compute(const char *name)
{
	return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
	       strcmp(name, "ephemeral-storage") == 0 || strncmp(name, "hugepages-", 10) == 0;
}

bool tj_quota_usage(const struct tj_quota_pod *p, const char *resource, int64_t *ret)
{
	const char *name = resource;
	bool limits = false;

	if (strcmp(resource, "pods") == 0 || strcmp(resource, "count/pods") == 0) {
		*ret = 1000;
		return true;
	}
	if (strncmp(resource, "requests.", 9) == 0) {
		name = resource + 9;
	} else if (strncmp(resource, "limits.", 7) == 0) {
		/* The pod evaluator counts the limits of native resources only: an extended
		 * resource's (limits.nvidia.com/gpu) is accepted in a quota but never charged. */
		name = resource + 7;
		limits = true;
		if (!native_compute(name))
			return false;
	} else if (!native_compute(resource)) {
		return false;
	}
	/* requests.storage is what persistent volume claims ask for, not pods. */
	if (strcmp(name, "storage") == 0)
		return false;
	*ret = 0;
	for (size_t i = 0; i < p->n_amounts; i++)
		if (strcmp(p->amounts[i].resource, name) == 0)
			*ret = limits ? p->amounts[i].limit : p->amounts[i].request;
	return true;
}

void tj_quota_format(char *buf, size_t size, int64_t milli)
{
	if (milli == INT64_MAX)
		snprintf(buf, size, "unlimited");
	else if (milli % 1000 == 0)
		snprintf(buf, size, "%" PRId64, milli / 1000);
	else
		snprintf(buf, size, "%" PRId64 "m", milli);
}
