/* Fair share (reconcilers/fair_share.h): decayed usage, the factor of each namespace from
 * its usage and share, and the age points. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/fair_share.h"

#define DAY 86400

static void test_decayed(void **state)
{
	static const struct {
		const char *what;
		int64_t gpu_seconds, start, until, now, half_life;
		double want;
	} cases[] = {
		{ "nothing held", 0, 0, 0, 100, DAY, 0 },
		{ "held just now: all of it", 1000, 100, 100, 100, DAY, 1000 },
		{ "the middle a half-life ago: half", 1000, 0, 2 * DAY, 2 * DAY, DAY, 500 },
		{ "two half-lives: a quarter", 800, 0, 0, 2 * DAY, DAY, 200 },
		{ "until before start: at start", 800, DAY, 0, 2 * DAY, DAY, 400 },
		{ "a clock behind: all of it", 800, 100, 200, 50, DAY, 800 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double got =
		        tj_fair_share_decayed(cases[i].gpu_seconds, cases[i].start, cases[i].until,
		                              cases[i].now, cases[i].half_life);

		if (fabs(got - cases[i].want) > 1e-6)
			fail_msg("case \"%s\": got %f, want %f", cases[i].what, got, cases[i].want);
	}
}

static void test_factors(void **state)
{
	static const struct {
		const char *what;
		size_t n;
		double usage[3], share[3];
		int points[3];
	} cases[] = {
		{ "nobody used anything: 1 each", 2, { 0, 0 }, { 1, 1 }, { 10000, 10000 } },
		{ "equal shares, equal use: one half each",
		  2,
		  { 50, 50 },
		  { 1, 1 },
		  { 5000, 5000 } },
		{ "one used all, the other nothing", 2, { 100, 0 }, { 1, 1 }, { 2500, 10000 } },
		{ "2:1:1 shares used as shared: one half each",
		  3,
		  { 50, 25, 25 },
		  { 2, 1, 1 },
		  { 5000, 5000, 5000 } },
		{ "2:1:1 shares used equally: the larger share goes first",
		  3,
		  { 10, 10, 10 },
		  { 2, 1, 1 },
		  { 6300, 3969, 3969 } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_fair_share_account a[3];

		for (size_t k = 0; k < cases[i].n; k++)
			a[k] = (struct tj_fair_share_account){ .namespace = "ns",
				                               .usage = cases[i].usage[k],
				                               .share = cases[i].share[k] };
		tj_fair_share_factors(a, cases[i].n);
		for (size_t k = 0; k < cases[i].n; k++)
			if (a[k].points != cases[i].points[k])
				fail_msg("case \"%s\": account %zu has %d points, want %d",
				         cases[i].what, k, a[k].points, cases[i].points[k]);
	}
}

static void test_age_points(void **state)
{
	assert_int_equal(tj_fair_share_age_points(1000, 1000), 0);
	assert_int_equal(tj_fair_share_age_points(1000, 900), 0);
	assert_int_equal(tj_fair_share_age_points(0, TJ_FAIR_SHARE_MAX_AGE / 2), 500);
	assert_int_equal(tj_fair_share_age_points(0, TJ_FAIR_SHARE_MAX_AGE), 1000);
	assert_int_equal(tj_fair_share_age_points(0, 10 * TJ_FAIR_SHARE_MAX_AGE), 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decayed),
		cmocka_unit_test(test_factors),
		cmocka_unit_test(test_age_points),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
