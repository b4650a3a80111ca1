/* libFuzzer target: the placement of a pod spec (nodeSelector, required node affinity,
 * tolerations, extended requests) on arbitrary JSON, the input as the spec or as a pod with
 * one. A placement that compiles is judged against a labelled, tainted GPU node and a bare
 * one, and compiled again: the two must be equal and hash alike, or the target aborts. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/placement.h"

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
	tj_placement_free(again);
	tj_placement_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);

	if (!obj)
		return 0;
	judge(obj);
	judge(cJSON_GetObjectItemCaseSensitive(obj, "spec"));
	cJSON_Delete(obj);
	return 0;
}
