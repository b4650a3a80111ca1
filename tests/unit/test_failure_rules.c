#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/failure_rules.h"

/* A Job's podFailurePolicy: the first rule whose onExitCodes match decides; FailJob makes
 * the reason PodFailurePolicy, Count (or no match) BackoffLimitExceeded; exit code 0 or none
 * matches nothing. */
static void test_job_reason(void **state)
{
	static const char *const rules =
	        "[{\"action\":\"Count\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[7]}},"
	        "{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"In\",\"values\":[7,42]}},"
	        "{\"action\":\"FailJob\",\"onExitCodes\":{\"operator\":\"NotIn\",\"values\":[1,"
	        "2]}}]";
	static const struct {
		const char *rules;
		int exit_code;
		const char *want;
	} cases[] = {
		{ NULL, 42, TJ_JOB_REASON_BACKOFF_LIMIT },
		{ rules, 42, TJ_JOB_REASON_POD_FAILURE_POLICY },
		{ rules, 7, TJ_JOB_REASON_BACKOFF_LIMIT }, /* Count comes first */
		{ rules, 1, TJ_JOB_REASON_BACKOFF_LIMIT },
		{ rules, 3, TJ_JOB_REASON_POD_FAILURE_POLICY }, /* NotIn [1, 2] */
		{ rules, 0, TJ_JOB_REASON_BACKOFF_LIMIT },
		{ rules, -1, TJ_JOB_REASON_BACKOFF_LIMIT },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("# case %zu\n", i);
		assert_string_equal(tj_failure_job_reason(cases[i].rules, cases[i].exit_code),
		                    cases[i].want);
	}
}

/* The JobSet's rules: the first that matches the step and the reason decides. */
static void test_rules_fail(void **state)
{
	static const char *const rules =
	        "[{\"name\":\"init\",\"action\":\"RestartJobSet\",\"targetReplicatedJobs\":["
	        "\"prepare\"]},{\"name\":\"fatal\",\"action\":\"FailJobSet\","
	        "\"onJobFailureReasons\":[\"PodFailurePolicy\"]},{\"name\":\"rest\",\"action\":"
	        "\"RestartJobSet\"}]";
	static const struct {
		const char *rules, *step, *reason;
		const char *want; /* why, NULL: not failed */
	} cases[] = {
		{ NULL, "node", TJ_JOB_REASON_POD_FAILURE_POLICY, NULL },
		{ rules, "node", TJ_JOB_REASON_POD_FAILURE_POLICY,
		  "failurePolicy rule 1 (fatal): FailJobSet on a Job of node failed with reason "
		  "PodFailurePolicy" },
		{ rules, "node", TJ_JOB_REASON_BACKOFF_LIMIT, NULL },
		{ rules, "prepare", TJ_JOB_REASON_POD_FAILURE_POLICY, NULL },
		{ "[{\"action\":\"FailJobSet\"}]", "prepare", TJ_JOB_REASON_BACKOFF_LIMIT,
		  "failurePolicy rule 0 (): FailJobSet on a Job of prepare failed with reason "
		  "BackoffLimitExceeded" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[256] = "";
		bool fail = tj_failure_rules_fail(cases[i].rules, cases[i].step, cases[i].reason,
		                                  why, sizeof(why));

		print_message("# case %zu\n", i);
		assert_int_equal(fail, cases[i].want != NULL);
		assert_string_equal(why, cases[i].want ? cases[i].want : "");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_job_reason),
		cmocka_unit_test(test_rules_fail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
