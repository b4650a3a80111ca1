/* The wall-clock share of the admission cycle: work starts at once while the balance lasts,
 * waits for its debt to be paid back at the share's rate, and a long pause saves no more
 * than the burst. Times in milliseconds here; the module counts nanoseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/time_share.h"

#define MS 1000000ULL

struct step {
	uint64_t at_ms;     /* the work is asked for */
	uint64_t want_ms;   /* the wait the budget says */
	uint64_t took_ms;   /* then the work runs that long, starting after the wait */
	uint64_t credit_ms; /* the debt it may start with */
};

struct share_case {
	const char *name;
	double share;
	uint64_t burst_ms;
	struct step steps[8];
	size_t n_steps;
};

static const struct share_case cases[] = {
	{ "quiet: every cycle at once",
	  1.0 / 3,
	  100,
	  { { 0, 0, 20, 0 }, { 500, 0, 20, 0 }, { 1000, 0, 20, 0 } },
	  3 },
	{ "a burst spends the balance, then waits three times the debt",
	  1.0 / 3,
	  60,
	  /* 60 saved; each cycle of 30 refills 10 while it runs: 40, 20, 0, then -20 is owed. */
	  { { 0, 0, 30, 0 },
	    { 30, 0, 30, 0 },
	    { 60, 0, 30, 0 },
	    { 90, 0, 30, 0 },
	    { 120, 60, 0, 0 } },
	  5 },
	{ "a long cycle is paid back before the next",
	  0.5,
	  10,
	  /* 10 saved, 50 spent, 25 refilled while it ran: 15 owed at 0.5 per ms. */
	  { { 0, 0, 50, 0 }, { 50, 30, 1, 0 } },
	  2 },
	{ "a pause saves no more than the burst",
	  0.25,
	  20,
	  { { 0, 0, 20, 0 }, { 10000, 0, 20, 0 }, { 10020, 0, 20, 0 }, { 10040, 40, 0, 0 } },
	  4 },
	{ "a share above 1 is no limit", 3, 0, { { 0, 0, 100, 0 }, { 100, 0, 100, 0 } }, 2 },
	{ "a clock going backwards adds nothing",
	  0.5,
	  0,
	  { { 1000, 0, 10, 0 }, { 900, 10, 0, 0 } },
	  2 },
	{ "work with credit starts in debt, up to the credit",
	  0.5,
	  0,
	  /* 20 owed after the first: the credit of 30 starts the second at once (40 owed then),
	   * a credit of 30 waits for 10 of it to be paid (20 ms), no credit for all of it. */
	  { { 0, 0, 40, 0 }, { 40, 0, 40, 30 }, { 80, 20, 0, 30 }, { 100, 60, 0, 0 } },
	  4 },
};

static void test_share(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct share_case *c = &cases[i];
		struct tj_time_share t;

		print_message("# case: %s\n", c->name);
		tj_time_share_init(&t, c->share, c->burst_ms * MS, c->steps[0].at_ms * MS);
		for (size_t s = 0; s < c->n_steps; s++) {
			const struct step *st = &c->steps[s];
			uint64_t wait = st->credit_ms
			                        ? tj_time_share_wait_credit(&t, st->at_ms * MS,
			                                                    st->credit_ms * MS)
			                        : tj_time_share_wait(&t, st->at_ms * MS);

			if ((wait + MS - 1) / MS != st->want_ms)
				fail_msg("step %zu at %llu ms: waits %.3f ms, want %llu", s,
				         (unsigned long long)st->at_ms, (double)wait / MS,
				         (unsigned long long)st->want_ms);
			tj_time_share_spend(&t, st->took_ms * MS,
			                    st->at_ms * MS + wait + st->took_ms * MS);
		}
	}
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
