/* The admitter's queue entries: what a plan that wants a created gang's pods again leads to
 * (the cache behind, the same pods again, or the job decided again); and the nodes that
 * refused a job's pinned pods, each kept until its time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_created_again_table),
		cmocka_unit_test(test_refusals_renew_and_make_room),
	};
	return cmocka_run_group_tests_name("admitter_queue", tests, NULL, NULL);
}
