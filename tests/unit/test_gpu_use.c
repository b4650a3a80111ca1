/* GPUs of TrainJobs' pods by class (reconcilers/usage/gpu_use.h): requested, running, and idle in
 * partial gangs, from a table of pods on the nodes of two classes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/usage/gpu_use.h"

static struct tj_kv gh200_labels[] = { { "nvidia.com/gpu.product", "GH200" } };
static struct tj_kv h100_labels[] = { { "nvidia.com/gpu.product", "H100" } };
static struct tj_gpu_class classes[] = {
	{ .name = "gh200",
	  .resource = "nvidia.com/gpu",
	  .arch = "arm64",
	  .node_labels = gh200_labels,
	  .n_node_labels = 1 },
	{ .name = "h100",
	  .resource = "nvidia.com/gpu",
	  .arch = "amd64",
	  .node_labels = h100_labels,
	  .n_node_labels = 1 },
};
static const struct tj_config config = { .classes = classes, .n_classes = 2 };

static struct tj_node_label gh_label[] = { { "nvidia.com/gpu.product", "GH200" } };
static struct tj_node_label h_label[] = { { "nvidia.com/gpu.product", "H100" } };
static const struct tj_node nodes[] = {
	{ .name = "gh-0", .arch = "arm64", .labels = gh_label, .n_labels = 1 },
	{ .name = "gh-1", .arch = "arm64", .labels = gh_label, .n_labels = 1 },
	{ .name = "h-0", .arch = "amd64", .labels = h_label, .n_labels = 1 },
	/* the labels of GH200, but the wrong architecture: no class */
	{ .name = "odd", .arch = "amd64", .labels = gh_label, .n_labels = 1 },
	{ .name = "cpu", .arch = "amd64" },
};

static const struct tj_node *lookup(const char *name, void *ctx)
{
	int *calls = ctx;

	(*calls)++;
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (strcmp(nodes[i].name, name) == 0)
			return &nodes[i];
	return NULL;
}

struct row {
	const char *namespace, *job, *node, *pinned;
	int attempt;
	enum tj_pod_phase phase;
	int64_t gpus;
	bool terminated, kept;
};

static void test_class_of_node(void **state)
{
	assert_int_equal(tj_gpu_class_of_node(&config, &nodes[0]), 0);
	assert_int_equal(tj_gpu_class_of_node(&config, &nodes[2]), 1);
	assert_int_equal(tj_gpu_class_of_node(&config, &nodes[3]), -1);
	assert_int_equal(tj_gpu_class_of_node(&config, &nodes[4]), -1);
	assert_int_equal(tj_gpu_class_of_node(NULL, &nodes[0]), -1);
}

static void test_count(void **state)
{
	static const struct row rows[] = {
		/* a: a whole gang of two running on gh200 */
		{ "t1", "a", "gh-0", NULL, 0, TJ_POD_RUNNING, 4, false, false },
		{ "t1", "a", "gh-1", NULL, 0, TJ_POD_RUNNING, 4, false, false },
		/* b: one of two runs, the other waits on its pinned node: 4 idle */
		{ "t1", "b", "gh-0", NULL, 0, TJ_POD_RUNNING, 4, false, false },
		{ "t1", "b", NULL, "gh-1", 0, TJ_POD_PENDING, 4, false, false },
		/* a job named b in another namespace is another job: whole, not idle */
		{ "t2", "b", "h-0", NULL, 0, TJ_POD_RUNNING, 8, false, false },
		/* c: attempt 1 runs whole; a pod of attempt 0 still stopping runs but is not of a
		 * partial gang, and the failed pod kept for its logs counts nowhere */
		{ "t1", "c", "h-0", NULL, 1, TJ_POD_RUNNING, 2, false, false },
		{ "t1", "c", "h-0", NULL, 0, TJ_POD_RUNNING, 2, false, false },
		{ "t1", "c", "h-0", NULL, 0, TJ_POD_FAILED, 2, true, true },
		/* d: finished pods hold nothing */
		{ "t1", "d", "gh-0", NULL, 0, TJ_POD_SUCCEEDED, 4, true, false },
		/* pods of no class: unknown node, no node at all, node of no class, CPU node */
		{ "t1", "e", "gone", NULL, 0, TJ_POD_RUNNING, 4, false, false },
		{ "t1", "e", NULL, NULL, 0, TJ_POD_PENDING, 4, false, false },
		{ "t1", "f", "odd", NULL, 0, TJ_POD_RUNNING, 4, false, false },
		{ "t1", "g", "cpu", NULL, 0, TJ_POD_RUNNING, 0, false, false },
		/* not a TrainJob's pod */
		{ "t1", NULL, "gh-1", NULL, 0, TJ_POD_RUNNING, 4, false, false },
	};
	enum {
		N = sizeof(rows) / sizeof(rows[0])
	};
	struct tj_pod pods[N];
	const struct tj_pod *ptrs[N];
	struct tj_gpu_use use[2] = { { 99, 99, 99 }, { 99, 99, 99 } };
	int calls = 0;

	memset(pods, 0, sizeof(pods));
	for (size_t i = 0; i < N; i++) {
		pods[i].namespace = (char *)rows[i].namespace;
		pods[i].name = "p";
		pods[i].trainjob = (char *)rows[i].job;
		pods[i].node_name = (char *)rows[i].node;
		pods[i].pinned_node = (char *)rows[i].pinned;
		pods[i].attempt = rows[i].attempt;
		pods[i].phase = rows[i].phase;
		pods[i].terminated = rows[i].terminated;
		pods[i].kept = rows[i].kept;
		pods[i].requests.n_extended = 1;
		pods[i].requests.extended[0].name = "nvidia.com/gpu";
		pods[i].requests.extended[0].value = rows[i].gpus;
		ptrs[i] = &pods[i];
	}
	assert_int_equal(tj_gpu_use_count(&config, ptrs, N, lookup, &calls, use), 0);
	assert_int_equal(use[0].requested, 4 + 4 + 4 + 4);
	assert_int_equal(use[0].running, 4 + 4 + 4);
	assert_int_equal(use[0].idle, 4);
	assert_int_equal(use[1].requested, 8 + 2 + 2);
	assert_int_equal(use[1].running, 8 + 2 + 2);
	assert_int_equal(use[1].idle, 0);
	assert_true(calls > 0);

	/* The order of the pods does not matter. */
	for (size_t i = 0; i < N / 2; i++) {
		const struct tj_pod *t = ptrs[i];

		ptrs[i] = ptrs[N - 1 - i];
		ptrs[N - 1 - i] = t;
	}
	assert_int_equal(tj_gpu_use_count(&config, ptrs, N, lookup, &calls, use), 0);
	assert_int_equal(use[0].idle, 4);
	assert_int_equal(use[0].requested, 16);
	assert_int_equal(use[1].running, 12);

	/* No pods: zeros. */
	assert_int_equal(tj_gpu_use_count(&config, NULL, 0, lookup, &calls, use), 0);
	assert_int_equal(use[0].requested + use[0].running + use[0].idle + use[1].requested, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_of_node),
		cmocka_unit_test(test_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
