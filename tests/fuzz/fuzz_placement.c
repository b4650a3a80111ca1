/* libFuzzer target: the placement of a pod spec (nodeSelector, required node affinity,
 * tolerations, extended requests) on arbitrary JSON, the input as the spec or as a pod with
 * one. A placement that compiles is judged against a labelled, tainted GPU node and a bare
 * one, and compiled again: the two must be equal and hash alike, or the target aborts.
 *
 * The same spec's ResourceQuota profile (reconcilers/admission/quota.h) is read too, counted
 * against a quota of each scope and used against a few quota keys and against every resource it
 * names: a pod must be in exactly one of a scope and its opposite, and use no negative amount, or
 * the target aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission/placement.h"
#include "reconcilers/admission/quota.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tj_node_label labels[] = {
	{ "kubernetes.io/hostname", "gh200-1" },
	{ "kubernetes.io/arch", "arm64" },
	{ "nvidia.com/gpu.product", "NVIDIA-GH200-480GB" },
	{ "nvidia.com/cuda.driver.major", "550" },
	{ "example.com/offset", "-3" },
};
static struct tj_node_taint taints[] = {
	{ "nvidia.com/gpu", "present", "NoSchedule", 0 },
	{ "example.com/busy", NULL, "PreferNoSchedule", 0 },
	{ "example.com/maintenance", "drain", "NoExecute", 0 },
};
static const struct tj_node gpu_node = {
	.name = "gh200-1",
	.taints = taints,
	.n_taints = sizeof(taints) / sizeof(taints[0]),
	.labels = labels,
	.n_labels = sizeof(labels) / sizeof(labels[0]),
	.allocatable = { .n_extended = 2,
	                 .extended = { { "nvidia.com/gpu", 1 }, { "nvidia.com/mig-1g.10gb", 7 } } },
};
static const struct tj_node bare_node = { .name = "cpu-1" };

static void judge(const cJSON *spec)
{
	char problem[TJ_PLACEMENT_PROBLEM_MAX], why[TJ_PLACEMENT_WHY_MAX];
	struct tj_placement *p = NULL, *again = NULL;

	if (tj_placement_compile(spec, &p, problem, sizeof(problem)) < 0)
		return;
	tj_placement_allows(p, &gpu_node, why, sizeof(why));
	tj_placement_allows(p, &bare_node, NULL, 0);
	if (tj_placement_compile(spec, &again, NULL, 0) == 0 &&
	    (!tj_placement_equal(p, again) || tj_placement_hash(p) != tj_placement_hash(again)))
		abort();
	tj_placement_unref(again);
	tj_placement_unref(p);
}

/* The scopes of a quota each, one per scope and operator. A pod is in exactly one of
 * Terminating and NotTerminating, of BestEffort and NotBestEffort, and of In and NotIn the
 * same classes; never in PriorityClass DoesNotExist nor in a scope of other objects. */
static char *classes[] = { "high", "urgent" };
static struct tj_quota_expression expressions[] = {
	{ TJ_QUOTA_SCOPE_TERMINATING, TJ_QUOTA_OP_EXISTS, NULL, 0 },
	{ TJ_QUOTA_SCOPE_NOT_TERMINATING, TJ_QUOTA_OP_EXISTS, NULL, 0 },
	{ TJ_QUOTA_SCOPE_BEST_EFFORT, TJ_QUOTA_OP_EXISTS, NULL, 0 },
	{ TJ_QUOTA_SCOPE_NOT_BEST_EFFORT, TJ_QUOTA_OP_EXISTS, NULL, 0 },
	{ TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_IN, classes, 2 },
	{ TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_NOT_IN, classes, 2 },
	{ TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_EXISTS, NULL, 0 },
	{ TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_DOES_NOT_EXIST, NULL, 0 },
	{ TJ_QUOTA_SCOPE_CROSS_NAMESPACE, TJ_QUOTA_OP_EXISTS, NULL, 0 },
	{ TJ_QUOTA_SCOPE_OTHER, TJ_QUOTA_OP_EXISTS, NULL, 0 },
};
#define N_EXPRESSIONS (sizeof(expressions) / sizeof(expressions[0]))

static const char *const quota_keys[] = {
	"pods",
	"count/pods",
	"cpu",
	"requests.cpu",
	"limits.cpu",
	"memory",
	"limits.memory",
	"hugepages-2Mi",
	"requests.nvidia.com/gpu",
	"limits.nvidia.com/gpu",
	"services",
	"requests.storage",
};

static bool counted_by(size_t i, const struct tj_quota_pod *p)
{
	struct tj_resource_quota q = { .scopes = &expressions[i], .n_scopes = 1 };

	return tj_quota_counts(&q, p);
}

static void use(const struct tj_quota_pod *p, const char *resource)
{
	int64_t v;

	if (tj_quota_usage(p, resource, &v) && v < 0)
		abort();
}

static void count(const cJSON *spec)
{
	struct tj_quota_pod *p;
	bool in[N_EXPRESSIONS];
	char key[300];
	int64_t cpu, requests_cpu;

	if (tj_quota_pod_of(spec, &p) < 0)
		return;
	for (size_t i = 0; i < N_EXPRESSIONS; i++)
		in[i] = counted_by(i, p);
	if (in[0] == in[1] || in[2] == in[3] || in[4] == in[5] || in[7] || in[9])
		abort();
	for (size_t i = 0; i < sizeof(quota_keys) / sizeof(quota_keys[0]); i++)
		use(p, quota_keys[i]);
	for (size_t i = 0; i < p->n_amounts; i++) {
		use(p, p->amounts[i].resource);
		snprintf(key, sizeof(key), "requests.%s", p->amounts[i].resource);
		use(p, key);
		snprintf(key, sizeof(key), "limits.%s", p->amounts[i].resource);
		use(p, key);
	}
	if (!tj_quota_usage(p, "cpu", &cpu) || !tj_quota_usage(p, "requests.cpu", &requests_cpu) ||
	    cpu != requests_cpu)
		abort();
	tj_quota_format(key, sizeof(key), p->n_amounts ? p->amounts[0].request : 0);
	tj_quota_pod_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);

	if (!obj)
		return 0;
	judge(obj);
	judge(cJSON_GetObjectItemCaseSensitive(obj, "spec"));
	count(obj);
	count(cJSON_GetObjectItemCaseSensitive(obj, "spec"));
	cJSON_Delete(obj);
	return 0;
}
