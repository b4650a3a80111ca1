#include "informers/resources.h"

#include <errno.h>
#include <string.h>

#include "base/quantity.h"
#include "informers/projection.h"

/* The requests of one container (or of a sum or maximum of them), the extended resources
 * by their slot in the pod's list of names. */
struct tally {
	int64_t cpu_milli, memory;
	int64_t extended[TJ_RESOURCES_MAX_EXTENDED];
};

/* The extended resource names of the pod, in the order first met. */
struct names {
	const char *name[TJ_RESOURCES_MAX_EXTENDED]; /* borrowed from the tree */
	uint8_t n;
	bool dropped;
};

bool tj_resource_is_extended(const char *name)
{
	static const char native[] = "kubernetes.io";
	const char *slash = strchr(name, '/');
	size_t len, n = sizeof(native) - 1;

	if (!slash || slash == name || strncmp(name, "requests.", 9) == 0)
		return false;
	len = (size_t)(slash - name);
	if (len == n && memcmp(name, native, n) == 0)
		return false;
	return !(len > n && name[len - n - 1] == '.' && memcmp(slash - n, native, n) == 0);
}

/* Both operands are non-negative: requests are. */
static int64_t add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

static int64_t max(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void tally_add(struct tally *to, const struct tally *t)
{
	to->cpu_milli = add(to->cpu_milli, t->cpu_milli);
	to->memory = add(to->memory, t->memory);
	for (size_t i = 0; i < TJ_RESOURCES_MAX_EXTENDED; i++)
		to->extended[i] = add(to->extended[i], t->extended[i]);
}

static void tally_max(struct tally *to, const struct tally *t)
{
	to->cpu_milli = max(to->cpu_milli, t->cpu_milli);
	to->memory = max(to->memory, t->memory);
	for (size_t i = 0; i < TJ_RESOURCES_MAX_EXTENDED; i++)
		to->extended[i] = max(to->extended[i], t->extended[i]);
}

/* A quantity too large for an int64 is kept as the largest one: no node has room for it,
 * which is what such a request means. */
static int read_request(const cJSON *q, bool milli, int64_t *ret)
{
	int64_t v;
	int r = milli ? tj_quantity_json_milli(q, &v) : tj_quantity_json_value(q, &v);

	if (r == -ERANGE)
		v = (cJSON_IsString(q) ? q->valuestring[0] == '-' : q->valuedouble < 0) ? -1
		                                                                        : INT64_MAX;
	else if (r < 0)
		return r;
	if (v < 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int64_t *slot(struct tally *t, struct names *names, const char *name, bool *ret_milli)
{
	*ret_milli = false;
	if (strcmp(name, "cpu") == 0) {
		*ret_milli = true;
		return &t->cpu_milli;
	}
	if (strcmp(name, "memory") == 0)
		return &t->memory;
	if (!tj_resource_is_extended(name))
		return NULL;
	for (uint8_t i = 0; i < names->n; i++)
		if (strcmp(names->name[i], name) == 0)
			return &t->extended[i];
	if (names->n == TJ_RESOURCES_MAX_EXTENDED) {
		names->dropped = true;
		return NULL;
	}
	names->name[names->n] = name;
	return &t->extended[names->n++];
}

/* Adds a resource list (an object of name: quantity) to t, leaving out the names that the
 * object skip has (a container's limits count only where it has no request). */
static int add_list(const cJSON *list, const cJSON *skip, struct names *names, struct tally *t)
{
	const cJSON *q;

	if (!cJSON_IsObject(list))
		return 0;
	cJSON_ArrayForEach(q, list)
	{
		int64_t v, *to;
		bool milli;
		int r;

		if (cJSON_IsObject(skip) && cJSON_GetObjectItemCaseSensitive(skip, q->string))
			continue;
		to = slot(t, names, q->string, &milli);
		if (!to)
			continue;
		if ((r = read_request(q, milli, &v)) < 0)
			return r;
		*to = add(*to, v);
	}
	return 0;
}

static int container_requests(const cJSON *c, struct names *names, struct tally *ret)
{
	const cJSON *requests = tj_field(c, "resources", "requests");
	int r;

	*ret = (struct tally){ 0 };
	if ((r = add_list(requests, NULL, names, ret)) < 0)
		return r;
	return add_list(tj_field(c, "resources", "limits"), requests, names, ret);
}

/* A pod-level request (or limit, standing for the request) of cpu or memory: 1 if set. */
static int pod_level(const cJSON *spec, const char *name, bool milli, int64_t *ret)
{
	const cJSON *q = tj_field(spec, "resources", "requests", name);
	int r;

	if (!q)
		q = tj_field(spec, "resources", "limits", name);
	if (!q)
		return 0;
	r = read_request(q, milli, ret);
	return r < 0 ? r : 1;
}

int tj_pod_spec_requests(const cJSON *pod_spec, struct tj_pod_resources *ret)
{
	struct tally sum = { 0 }, sidecars = { 0 }, init = { 0 }, c;
	struct names names = { 0 };
	const cJSON *e;
	int64_t v;
	int r;

	cJSON_ArrayForEach(e, tj_field(pod_spec, "containers"))
	{
		if ((r = container_requests(e, &names, &c)) < 0)
			return r;
		tally_add(&sum, &c);
	}
	/* Init containers run one at a time, in order, each beside the sidecars started before
	 * it; a sidecar then keeps running beside the containers. */
	cJSON_ArrayForEach(e, tj_field(pod_spec, "initContainers"))
	{
		const char *policy = tj_field_string(e, "restartPolicy");

		if ((r = container_requests(e, &names, &c)) < 0)
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
	if ((r = pod_level(pod_spec, "cpu", true, &v)) < 0)
		return r;
	if (r)
		sum.cpu_milli = v;
	if ((r = pod_level(pod_spec, "memory", false, &v)) < 0)
		return r;
	if (r)
		sum.memory = v;
	if ((r = add_list(tj_field(pod_spec, "overhead"), NULL, &names, &sum)) < 0)
		return r;

	*ret = (struct tj_pod_resources){
		.cpu_milli = sum.cpu_milli,
		.memory = sum.memory,
		.n_extended = names.n,
	};
	for (uint8_t i = 0; i < names.n; i++)
		ret->extended[i] = (struct tj_extended_resource){ names.name[i], sum.extended[i] };
	return names.dropped ? 1 : 0;
}

int64_t tj_pod_resources_extended(const struct tj_pod_resources *r, const char *name)
{
	for (uint8_t i = 0; i < r->n_extended; i++)
		if (r->extended[i].name == name || strcmp(r->extended[i].name, name) == 0)
			return r->extended[i].value;
	return 0;
}
