/* The shortcuts of tj_admit (its memos of what a shape of gang holds) decide every job as
 * deciding each afresh does (tj_admission_decide_afresh): a property over random clusters and
 * queues, one per seed, with every rule of the admission in play (classes and topology
 * domains, releases, backfill depths, launchers, nodes to avoid, eligibility, quotas, QOS
 * limits, preemption and claims). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "random_queue.h"
#include "reconcilers/admission/admission_internal.h"

#define SEEDS 600

static void test_memos_decide_as_afresh(void **state)
{
	size_t admitted = 0, backfilled = 0, preempting = 0, waiting = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct tj_random_queue q;
		struct tj_admission_result *memo = NULL, *afresh = NULL;

		tj_random_queue_build(&q, seed);
		print_message("#   seed %llu\n", (unsigned long long)seed);
		assert_int_equal(tj_admit(&q.in, &memo), 0);
		assert_int_equal(tj_admission_decide_afresh(&q.in, &afresh), 0);
		tj_test_assert_same_result(&q.in, memo, afresh);
		admitted += memo->admitted;
		backfilled += memo->backfilled;
		preempting += memo->preempting;
		for (size_t j = 0; j < memo->n_decisions; j++)
			waiting += memo->decisions[j].verdict == TJ_ADMISSION_WAITING;
		tj_admission_result_free(memo);
		tj_admission_result_free(afresh);
	}
	/* The seeds reach every outcome the memos shorten. */
	assert_true(admitted > 100);
	assert_true(backfilled > 50);
	assert_true(waiting > 1000);
	print_message("#   %zu admitted (%zu backfilled), %zu waiting, %zu preempting\n", admitted,
	              backfilled, waiting, preempting);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memos_decide_as_afresh),
	};
	return cmocka_run_group_tests_name("admission_memo", tests, NULL, NULL);
}
