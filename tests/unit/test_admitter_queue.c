/* The admitter's queue entries: when a plan that wants a created gang's pods again keeps the
 * admission (the same nodes) rather than having the job decided again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "controller/admitter_queue.h"

struct keep_case {
	const char *name;
	enum tj_queue_state state;
	int num_pods;      /* the plan wants pods for this many ranks */
	bool restart;      /* a restart's replacements */
	bool launcher;     /* the plan wants a launcher's place */
	bool has_launcher; /* the admission has one */
	const char *excluded;
	bool keeps;
};

static const struct keep_case cases[] = {
	{ "created, the cache shows none of its pods", TJ_QUEUE_CREATED, 2, false, false, false,
	  NULL, true },
	{ "created with its launcher", TJ_QUEUE_CREATED, 2, false, true, true, NULL, true },
	{ "created, pods to avoid another node", TJ_QUEUE_CREATED, 2, false, false, false, "gh-9",
	  true },
	{ "created, its pods must avoid one of its nodes", TJ_QUEUE_CREATED, 2, false, false, false,
	  "gh-1", false },
	{ "a restart's replacements", TJ_QUEUE_CREATED, 2, true, false, false, NULL, false },
	{ "fewer pods missing than admitted", TJ_QUEUE_CREATED, 1, false, false, false, NULL,
	  false },
	{ "a launcher wanted that was not admitted", TJ_QUEUE_CREATED, 2, false, true, false, NULL,
	  false },
	{ "a launcher admitted that is not wanted", TJ_QUEUE_CREATED, 2, false, false, true, NULL,
	  false },
	{ "admitted, not created yet", TJ_QUEUE_ADMITTED, 2, false, false, false, NULL, false },
	{ "waiting", TJ_QUEUE_WAITING, 2, false, false, false, NULL, false },
	{ "started", TJ_QUEUE_STARTING, 2, false, false, false, NULL, false },
};

static void test_keeps_admission_table(void **state)
{
	char *nodes[] = { "gh-0", "gh-1" };
	char *launcher_node = "gh-0";
	cJSON launcher_pod = { 0 }; /* only whether there is one counts */

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct keep_case *c = &cases[i];
		char *excluded[] = { (char *)c->excluded };
		struct tj_queue_entry e = {
			.state = c->state,
			.num_pods = 2,
			.nodes = nodes,
			.n_nodes = 2,
			.launcher_node = c->has_launcher ? launcher_node : NULL,
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
		assert_int_equal(tj_queue_keeps_admission(&e, &want), c->keeps);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_admission_table),
	};
	return cmocka_run_group_tests_name("admitter_queue", tests, NULL, NULL);
}
