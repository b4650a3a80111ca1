/* The admitter's queue entries: what a plan that wants a created gang's pods again leads to
 * (the cache behind, the same pods again, or the job decided again); and the nodes that
 * refused a job's pinned pods, each kept until its time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/admitter_queue.h"

#define CREATED_MS 1000000
#define PATIENCE   TJ_QUEUE_CREATED_PATIENCE_MS

struct again_case {
	const char *name;
	enum tj_queue_state state;
	uint64_t after_ms; /* since the creates */
	int num_pods;      /* the plan wants pods for this many ranks */
	bool restart;      /* a restart's replacements, or part of the gang */
	bool launcher;     /* the plan wants a launcher's place */
	bool has_launcher; /* the admission has one */
	const char *excluded;
	enum tj_queue_again again;
};

static const struct again_case cases[] = {
	{ "the cache shows none of its pods yet", TJ_QUEUE_CREATED, 5000, 2, false, false, false,
	  NULL, TJ_QUEUE_WAIT_FOR_CACHE },
	{ "the cache shows part of the gang", TJ_QUEUE_CREATED, 5000, 1, true, false, false, NULL,
	  TJ_QUEUE_WAIT_FOR_CACHE },
	{ "pods to avoid another node", TJ_QUEUE_CREATED, 5000, 2, false, false, false, "gh-9",
	  TJ_QUEUE_WAIT_FOR_CACHE },
	{ "pods to avoid one of its nodes: a failure there", TJ_QUEUE_CREATED, 5000, 1, true, false,
	  false, "gh-1", TJ_QUEUE_DECIDE_AGAIN },
	{ "past the patience, the whole gang missing", TJ_QUEUE_CREATED, PATIENCE, 2, false, false,
	  false, NULL, TJ_QUEUE_CREATE_AGAIN },
	{ "past the patience, with its launcher", TJ_QUEUE_CREATED, PATIENCE + 1, 2, false, true,
	  true, NULL, TJ_QUEUE_CREATE_AGAIN },
	{ "past the patience, part of the gang", TJ_QUEUE_CREATED, PATIENCE, 1, true, false, false,
	  NULL, TJ_QUEUE_DECIDE_AGAIN },
	{ "past the patience, a restart of the whole gang", TJ_QUEUE_CREATED, PATIENCE, 2, true,
	  false, false, NULL, TJ_QUEUE_DECIDE_AGAIN },
	{ "past the patience, a launcher wanted that was not admitted", TJ_QUEUE_CREATED, PATIENCE,
	  2, false, true, false, NULL, TJ_QUEUE_DECIDE_AGAIN },
	{ "past the patience, a launcher admitted that is not wanted", TJ_QUEUE_CREATED, PATIENCE,
	  2, false, false, true, NULL, TJ_QUEUE_DECIDE_AGAIN },
	{ "admitted, not created yet", TJ_QUEUE_ADMITTED, 5000, 2, false, false, false, NULL,
	  TJ_QUEUE_DECIDE_AGAIN },
	{ "waiting", TJ_QUEUE_WAITING, 5000, 2, false, false, false, NULL, TJ_QUEUE_DECIDE_AGAIN },
	{ "started", TJ_QUEUE_STARTING, 5000, 2, false, false, false, NULL, TJ_QUEUE_DECIDE_AGAIN },
};

static void test_created_again_table(void **state)
{
	char *nodes[] = { "gh-0", "gh-1" };
	char *launcher_node = "gh-0";
	cJSON launcher_pod = { 0 }; /* only whether there is one counts */

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct again_case *c = &cases[i];
		char *excluded[] = { (char *)c->excluded };
		struct tj_queue_entry e = {
			.state = c->state,
			.num_pods = 2,
			.nodes = nodes,
			.n_nodes = 2,
			.launcher_node = c->has_launcher ? launcher_node : NULL,
			.created_ms = CREATED_MS,
		};
		struct tj_plan_want want = {
			.wanted = true,
			.num_nodes = 2,
			.num_pods = c->num_pods,
			.restart = c->restart,
			.excluded = excluded,
			.n_excluded = c->excluded ? 1 : 0,
			.launcher = c->launcher ? &launcher_pod : NULL,
		};

		print_message("# %s\n", c->name);
		assert_int_equal(tj_queue_created_again(&e, &want, CREATED_MS + c->after_ms),
		                 c->again);
	}
}

/* A node named again has its time renewed, not a second row; when every row is taken, the
 * refusal that ends first makes room. */
static void test_refusals_renew_and_make_room(void **state)
{
	struct tj_queue_refusals r = { .key = "team-a/j" };
	char nodes[TJ_PLAN_MAX_REFUSED + 1][TJ_NAME_MAX];

	(void)state;
	for (size_t i = 0; i <= TJ_PLAN_MAX_REFUSED; i++)
		snprintf(nodes[i], sizeof(nodes[i]), "gh-%zu", i);
	tj_queue_refusals_add(&r, (const char(*)[TJ_NAME_MAX])nodes, 2, 1000);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.nodes[0], "gh-0");
	assert_string_equal(r.nodes[1], "gh-1");
	tj_queue_refusals_add(&r, (const char(*)[TJ_NAME_MAX]) & nodes[1], 1, 5000);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.until_ms[0], 1000);
	assert_int_equal(r.until_ms[1], 5000);
	/* Fill every row, gh-0 (until 1000) ending first; one more takes its row. */
	tj_queue_refusals_add(&r, (const char(*)[TJ_NAME_MAX]) & nodes[2], TJ_PLAN_MAX_REFUSED - 2,
	                      3000);
	assert_int_equal(r.n, TJ_PLAN_MAX_REFUSED);
	tj_queue_refusals_add(&r, (const char(*)[TJ_NAME_MAX]) & nodes[TJ_PLAN_MAX_REFUSED], 1,
	                      9000);
	assert_int_equal(r.n, TJ_PLAN_MAX_REFUSED);
	assert_string_equal(r.nodes[0], nodes[TJ_PLAN_MAX_REFUSED]);
	assert_int_equal(r.until_ms[0], 9000);
	assert_string_equal(r.nodes[1], "gh-1");
}

static struct tj_kv gh200_labels[] = { { "nvidia.com/gpu.product", "GH200" } };
static struct tj_gpu_class gone_classes[] = {
	{ .name = "gh200",
	  .resource = "nvidia.com/gpu",
	  .arch = "arm64",
	  .node_labels = gh200_labels,
	  .n_node_labels = 1 },
};
static const struct tj_config gone_config = { .classes = gone_classes, .n_classes = 1 };
static struct tj_node_label gh_label[] = { { "nvidia.com/gpu.product", "GH200" } };

/* A deleted node of a class is remembered with its class and size for TJ_QUEUE_GONE_MS; one
 * of no class is not; deleted again, its time is renewed; a full list drops the node that
 * was to be forgotten first. */
static void test_gone_nodes_kept_renewed_and_make_room(void **state)
{
	static struct tj_queue_gone_node gone[TJ_QUEUE_MAX_GONE];
	struct tj_node gh = { .name = "gh-1", .arch = "arm64", .labels = gh_label, .n_labels = 1 };
	struct tj_node cpu = { .name = "cpu-1", .arch = "amd64" };
	char name[32];
	size_t n = 0;

	gh.allocatable = (struct tj_node_allocatable){
		.cpu_milli = 72000,
		.memory = 1024,
		.pods = 110,
		.n_extended = 1,
		.extended = { { "nvidia.com/gpu", 4 } },
	};
	tj_queue_gone_add(gone, &n, &gone_config, &cpu, 1000);
	assert_int_equal(n, 0);
	tj_queue_gone_add(gone, &n, &gone_config, &gh, 1000);
	assert_int_equal(n, 1);
	assert_string_equal(gone[0].name, "gh-1");
	assert_string_equal(gone[0].gpu_class, "gh200");
	assert_int_equal(gone[0].allocatable.gpus, 4);
	assert_int_equal(gone[0].allocatable.cpu_milli, 72000);
	assert_int_equal(gone[0].allocatable.memory, 1024);
	assert_int_equal(gone[0].allocatable.pods, 110);
	assert_int_equal(gone[0].until_ms, 1000 + TJ_QUEUE_GONE_MS);
	tj_queue_gone_add(gone, &n, &gone_config, &gh, 5000);
	assert_int_equal(n, 1);
	assert_int_equal(gone[0].until_ms, 5000 + TJ_QUEUE_GONE_MS);
	for (size_t i = 1; i < TJ_QUEUE_MAX_GONE; i++) {
		snprintf(name, sizeof(name), "gh-x%zu", i);
		gh.name = name;
		tj_queue_gone_add(gone, &n, &gone_config, &gh, 10000 + i);
	}
	assert_int_equal(n, TJ_QUEUE_MAX_GONE);
	gh.name = "gh-new";
	tj_queue_gone_add(gone, &n, &gone_config, &gh, 20000);
	assert_int_equal(n, TJ_QUEUE_MAX_GONE);
	assert_string_equal(gone[0].name, "gh-new");
	assert_string_equal(gone[1].name, "gh-x1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_created_again_table),
		cmocka_unit_test(test_refusals_renew_and_make_room),
		cmocka_unit_test(test_gone_nodes_kept_renewed_and_make_room),
	};
	return cmocka_run_group_tests_name("admitter_queue", tests, NULL, NULL);
}
