/* The two restart budgets: which failure charges which budget, the counts a charge leaves in
 * the status, the exhaustion of each, and the words the planner puts in its messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/policy/budget.h"

#define MAX_JOB   3
#define MAX_INFRA 10

struct budget_case {
	const char *name;
	const char *cls;
	int restarts, infra; /* the status before: restartCount, infrastructureRestarts */
	int max_restarts, max_infra;
	/* expected */
	enum tj_budget budget;
	bool charged;
	int want_restarts, want_infra; /* the status after */
	int used, limit;
	const char *reason; /* NULL unless spent */
	const char *text;
};

static const struct budget_case cases[] = {
	{ "a non-zero exit is the job's own", "WorkerFailed", 0, 0, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_JOB, true, 1, 0, 1, MAX_JOB, NULL, "restart 1 of 3" },
	{ "a deleted node is the infrastructure's", "NodeDeleted", 0, 0, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_INFRASTRUCTURE, true, 1, 1, 1, MAX_INFRA, NULL,
	  "infrastructure restart 1 of 10" },
	{ "an unreachable node", "NodeUnreachable", 2, 1, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_INFRASTRUCTURE, true, 3, 2, 2, MAX_INFRA, NULL,
	  "infrastructure restart 2 of 10" },
	{ "a NotReady node", "NodeNotReady", 0, 0, MAX_JOB, MAX_INFRA, TJ_BUDGET_INFRASTRUCTURE,
	  true, 1, 1, 1, MAX_INFRA, NULL, "infrastructure restart 1 of 10" },
	{ "an unhealthy GPU", "GPUUnhealthy", 0, 0, MAX_JOB, MAX_INFRA, TJ_BUDGET_INFRASTRUCTURE,
	  true, 1, 1, 1, MAX_INFRA, NULL, "infrastructure restart 1 of 10" },
	{ "a node cordoned for a fault", "NodeCordonedForFault", 0, 0, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_INFRASTRUCTURE, true, 1, 1, 1, MAX_INFRA, NULL,
	  "infrastructure restart 1 of 10" },
	{ "a crash on a suspect node", "NodeSuspect", 0, 0, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_INFRASTRUCTURE, true, 1, 1, 1, MAX_INFRA, NULL,
	  "infrastructure restart 1 of 10" },
	{ "an eviction", "Evicted", 0, 0, MAX_JOB, MAX_INFRA, TJ_BUDGET_INFRASTRUCTURE, true, 1, 1,
	  1, MAX_INFRA, NULL, "infrastructure restart 1 of 10" },
	{ "a preemption", "Preempted", 0, 0, MAX_JOB, MAX_INFRA, TJ_BUDGET_INFRASTRUCTURE, true, 1,
	  1, 1, MAX_INFRA, NULL, "infrastructure restart 1 of 10" },
	{ "a stall", "Stalled", 1, 0, 0, MAX_INFRA, TJ_BUDGET_INFRASTRUCTURE, true, 2, 1, 1,
	  MAX_INFRA, NULL, "infrastructure restart 1 of 10" },
	{ "a class nobody named is the job's own", "SomethingNew", 0, 0, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_JOB, true, 1, 0, 1, MAX_JOB, NULL, "restart 1 of 3" },
	{ "no class at all is the job's own", NULL, 0, 0, MAX_JOB, MAX_INFRA, TJ_BUDGET_JOB, true,
	  1, 0, 1, MAX_JOB, NULL, "restart 1 of 3" },
	{ "maxRestarts 0: a node failure still restarts", "NodeDeleted", 0, 0, 0, MAX_INFRA,
	  TJ_BUDGET_INFRASTRUCTURE, true, 1, 1, 1, MAX_INFRA, NULL,
	  "infrastructure restart 1 of 10" },
	{ "maxRestarts 0: the job's own first failure fails it", "WorkerFailed", 0, 0, 0, MAX_INFRA,
	  TJ_BUDGET_JOB, false, 0, 0, 0, 0, "ReachedMaxRestarts",
	  "the restart budget of 0 is spent" },
	{ "infrastructure restarts do not spend the job's budget", "WorkerFailed", 9, 7, MAX_JOB,
	  MAX_INFRA, TJ_BUDGET_JOB, true, 10, 7, 3, MAX_JOB, NULL, "restart 3 of 3" },
	{ "the job's budget spent by its own failures", "WorkerFailed", 5, 2, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_JOB, false, 5, 2, 3, MAX_JOB, "ReachedMaxRestarts",
	  "the restart budget of 3 is spent" },
	{ "the job's own failures do not spend the infrastructure's budget", "NodeNotReady", 3, 0,
	  MAX_JOB, MAX_INFRA, TJ_BUDGET_INFRASTRUCTURE, true, 4, 1, 1, MAX_INFRA, NULL,
	  "infrastructure restart 1 of 10" },
	{ "the last infrastructure restart", "NodeDeleted", 12, 9, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_INFRASTRUCTURE, true, 13, 10, 10, MAX_INFRA, NULL,
	  "infrastructure restart 10 of 10" },
	{ "the infrastructure's budget spent", "GPUUnhealthy", 13, 10, MAX_JOB, MAX_INFRA,
	  TJ_BUDGET_INFRASTRUCTURE, false, 13, 10, 10, MAX_INFRA,
	  "ReachedMaxInfrastructureRestarts",
	  "the infrastructure restart budget of 10 (failurePolicy.maxInfrastructureRestarts) is "
	  "spent" },
	{ "maxInfrastructureRestarts 0: the first node failure fails the job", "Evicted", 0, 0,
	  MAX_JOB, 0, TJ_BUDGET_INFRASTRUCTURE, false, 0, 0, 0, 0,
	  "ReachedMaxInfrastructureRestarts",
	  "the infrastructure restart budget of 0 (failurePolicy.maxInfrastructureRestarts) is "
	  "spent" },
	{ "a status claiming more infrastructure restarts than restarts", "NodeDeleted", 2, 5,
	  MAX_JOB, MAX_INFRA, TJ_BUDGET_INFRASTRUCTURE, true, 3, 3, 3, MAX_INFRA, NULL,
	  "infrastructure restart 3 of 10" },
	{ "the same status: none of them was the job's own", "WorkerFailed", 2, 5, MAX_JOB,
	  MAX_INFRA, TJ_BUDGET_JOB, true, 3, 5, 1, MAX_JOB, NULL, "restart 1 of 3" },
};

static void test_budget_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct budget_case *c = &cases[i];
		struct tj_trainjob_status st = { .restart_count = c->restarts,
			                         .infrastructure_restarts = c->infra };
		struct tj_budget_charge charge;
		char text[160];

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_budget_of(c->cls), c->budget);
		assert_int_equal(
		        tj_budget_charge(&st, c->cls, c->max_restarts, c->max_infra, &charge),
		        c->charged);
		assert_int_equal(charge.budget, c->budget);
		assert_int_equal(charge.spent, !c->charged);
		assert_int_equal(charge.used, c->used);
		assert_int_equal(charge.limit, c->limit);
		if (c->reason)
			assert_string_equal(charge.reason, c->reason);
		else
			assert_null(charge.reason);
		assert_int_equal(st.restart_count, c->want_restarts);
		assert_int_equal(st.infrastructure_restarts, c->want_infra);
		tj_budget_describe(&charge, text, sizeof(text));
		assert_string_equal(text, c->text);
	}
}

/* The budgets are spent in turn: a job with maxRestarts 1 and maxInfrastructureRestarts 2
 * survives two node failures and one failure of its own, in any order, and the next of
 * either kind fails it. */
static void test_budgets_spent_in_turn(void **state)
{
	static const char *const sequence[] = { "NodeDeleted", "WorkerFailed", "Evicted" };
	struct tj_trainjob_status st = { 0 };
	struct tj_budget_charge charge;

	(void)state;
	for (size_t i = 0; i < sizeof(sequence) / sizeof(sequence[0]); i++)
		assert_true(tj_budget_charge(&st, sequence[i], 1, 2, &charge));
	assert_int_equal(st.restart_count, 3);
	assert_int_equal(st.infrastructure_restarts, 2);
	assert_false(tj_budget_charge(&st, "WorkerFailed", 1, 2, &charge));
	assert_string_equal(charge.reason, "ReachedMaxRestarts");
	assert_false(tj_budget_charge(&st, "NodeNotReady", 1, 2, &charge));
	assert_string_equal(charge.reason, "ReachedMaxInfrastructureRestarts");
	assert_int_equal(st.restart_count, 3);
	assert_int_equal(st.infrastructure_restarts, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_table),
		cmocka_unit_test(test_budgets_spent_in_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
