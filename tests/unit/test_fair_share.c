/* Fair share (reconcilers/admission/fair_share.h): decayed usage, the factor of each namespace from
 * its usage and share, the age points, and the accounts made from TrainJobs and the
 * config's shares. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/admission/fair_share.h"
#include "reconcilers/trainjob.h"

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

static struct tj_trainjob used(char *ns, int64_t gpu_seconds, int64_t start, int64_t until)
{
	return (struct tj_trainjob){ .namespace = ns,
		                     .status = { .gpu_seconds = gpu_seconds,
		                                 .start_time = start,
		                                 .gpu_seconds_until = until } };
}

static void test_accounts(void **state)
{
	static char *allowed[] = { "normal" };
	static struct tj_qos_namespace rules[] = {
		{ .namespace = "team-a",
		  .allowed = allowed,
		  .n_allowed = 1,
		  .default_tier = "normal",
		  .share = 2 },
		{ .namespace = "*",
		  .allowed = allowed,
		  .n_allowed = 1,
		  .default_tier = "normal",
		  .share = 1 },
	};
	const struct tj_admission_policy policy = { .qos_namespaces = rules,
		                                    .n_qos_namespaces = 2,
		                                    .fair_share_half_life = DAY };
	struct tj_fair_share_account *a = calloc(4, sizeof(*a));
	struct tj_trainjob jobs[] = {
		used("team-b", 1000, 0, 2 * DAY), /* the middle a half-life ago: 500 */
		used("team-a", 500, 2 * DAY, 2 * DAY),
		used("team-z", 0, 0, DAY), /* used nothing: no account */
		used("team-b", 250, 2 * DAY, 0),
	};
	size_t n = 0;

	(void)state;
	assert_non_null(a);
	/* A namespace that waits has an account before it used anything. */
	assert_non_null(tj_fair_share_account_of(a, &n, 4, "team-c"));
	for (size_t i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++)
		tj_fair_share_charge(a, &n, 4, jobs[i].namespace, jobs[i].status.gpu_seconds,
		                     jobs[i].status.start_time, jobs[i].status.gpu_seconds_until,
		                     policy.fair_share_half_life, 2 * DAY);
	assert_int_equal(n, 3);
	assert_string_equal(a[0].namespace, "team-a");
	assert_string_equal(a[1].namespace, "team-b");
	assert_string_equal(a[2].namespace, "team-c");
	assert_true(fabs(a[0].usage - 500) < 1e-9);
	assert_true(fabs(a[1].usage - 750) < 1e-9);
	assert_true(a[2].usage == 0);
	assert_ptr_equal(tj_fair_share_account_of(a, &n, 4, "team-b"), &a[1]);
	assert_ptr_equal(tj_fair_share_find(a, n, "team-c"), &a[2]);
	assert_null(tj_fair_share_find(a, n, "team-z"));
	assert_null(tj_fair_share_find(a, 0, "team-a"));

	tj_fair_share_settle(a, n, &policy);
	assert_true(a[0].share == 2 && a[1].share == 1 && a[2].share == 1);
	/* U: 500/1250 and 750/1250; S: 2/4 and 1/4. */
	assert_true(fabs(a[0].factor - exp2(-0.4 / 0.5)) < 1e-9);
	assert_true(fabs(a[1].factor - exp2(-0.6 / 0.25)) < 1e-9);
	assert_true(a[2].factor == 1);
	assert_int_equal(a[0].points, 5743);
	assert_int_equal(a[1].points, 1895);
	assert_int_equal(a[2].points, 10000);

	/* Full: a new namespace gets no account, one it has keeps its own. */
	assert_non_null(tj_fair_share_account_of(a, &n, 4, "team-d"));
	assert_null(tj_fair_share_account_of(a, &n, 4, "team-e"));
	assert_non_null(tj_fair_share_account_of(a, &n, 4, "team-a"));
	assert_int_equal(n, 4);
	tj_fair_share_accounts_free(a, n);
}

/* A running job counts as it runs: what its pods hold since the status counted last. */
static void test_charge_running(void **state)
{
	static const struct {
		const char *name;
		int64_t gpus, start, counted_until, now;
		double usage; /* with a half-life so long that nothing decays */
	} cases[] = {
		{ "since its start, when the status counted nothing yet", 8, 1000, 0, 1100, 800 },
		{ "since the status's count, after its start", 8, 1000, 1050, 1100, 400 },
		{ "a count before the start (a clock's skew): since the start", 4, 1000, 900, 1010,
		  40 },
		{ "nothing held: nothing", 0, 1000, 0, 1100, 0 },
		{ "counted up to now: nothing", 8, 1000, 1100, 1100, 0 },
		{ "a count after now: nothing", 8, 1000, 1200, 1100, 0 },
		{ "not started: nothing", 8, 0, 0, 1100, 0 },
		{ "so many GPUs the product overflows: nothing", INT64_MAX / 2, 1000, 0, 1100, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_fair_share_account *a = calloc(2, sizeof(*a));
		size_t n = 0;

		print_message("# case: %s\n", cases[i].name);
		assert_non_null(a);
		tj_fair_share_charge_running(a, &n, 2, "team-a", cases[i].gpus, cases[i].start,
		                             cases[i].counted_until, 1000 * DAY, cases[i].now);
		if (cases[i].usage == 0) {
			assert_int_equal(n, 0);
		} else {
			assert_int_equal(n, 1);
			assert_true(fabs(a[0].usage - cases[i].usage) < 1e-3 * cases[i].usage);
		}
		tj_fair_share_accounts_free(a, n);
	}
}

static void test_share_of(void **state)
{
	static char *allowed[] = { "normal" };
	static struct tj_qos_namespace own_only[] = {
		{ .namespace = "team-a",
		  .allowed = allowed,
		  .n_allowed = 1,
		  .default_tier = "normal",
		  .share = 5 },
	};
	const struct tj_admission_policy policy = { .qos_namespaces = own_only,
		                                    .n_qos_namespaces = 1 };

	(void)state;
	assert_true(tj_fair_share_share_of(&policy, "team-a") == 5);
	/* No rule at all: 1. */
	assert_true(tj_fair_share_share_of(&policy, "team-b") == 1);
	/* The built-in rules. */
	assert_true(tj_fair_share_share_of(&(struct tj_admission_policy){ 0 }, "team-b") == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decayed),    cmocka_unit_test(test_factors),
		cmocka_unit_test(test_age_points), cmocka_unit_test(test_accounts),
		cmocka_unit_test(test_share_of),   cmocka_unit_test(test_charge_running),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
