/* The stall clock: when the controller last saw each job's reported progress change, by its
 * own clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "controller/stall_clock.h"

#define T0 1795953600

static struct tj_trainjob job_with(const char *uid, uint64_t digest)
{
	return (struct tj_trainjob){ .uid = (char *)uid, .status = { .progress_digest = digest } };
}

static void test_the_clock_moves_only_with_the_progress(void **state)
{
	struct tj_stall_clock *c = NULL;
	struct tj_trainjob job;

	(void)state;
	assert_int_equal(tj_stall_clock_new(&c), 0);
	/* No progress reported: no clock. */
	job = job_with("uid-1", 0);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0), 0);
	/* The first report seen starts it; the same one seen again (a relist, a report that
	 * repeats the values with another lastUpdatedTime) does not move it. */
	job = job_with("uid-1", 0xabc);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 10), T0 + 10);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 20), T0 + 10);
	/* Another job's key is its own. */
	assert_int_equal(tj_stall_clock_see(c, "team-b/vit", &job, T0 + 25), T0 + 25);
	/* Changed progress starts it again. */
	job = job_with("uid-1", 0xdef);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 30), T0 + 30);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 90), T0 + 30);
	/* A new job of the same name with the same report starts afresh. */
	job = job_with("uid-2", 0xdef);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 100), T0 + 100);
	/* A report without progress forgets it; the next progress starts it again. */
	job = job_with("uid-2", 0);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 110), 0);
	job = job_with("uid-2", 0xdef);
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 120), T0 + 120);
	/* A finished job is judged no more: forgotten. */
	job.status.conditions[0] =
	        (struct tj_condition){ .type = TJ_CONDITION_COMPLETE, .status = true };
	job.status.n_conditions = 1;
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 125), 0);
	job.status.n_conditions = 0;
	/* A deleted job is forgotten; the other stays. */
	tj_stall_clock_forget(c, "team-a/vit");
	tj_stall_clock_forget(c, "team-a/never-seen");
	assert_int_equal(tj_stall_clock_see(c, "team-a/vit", &job, T0 + 130), T0 + 130);
	job = job_with("uid-1", 0xabc);
	assert_int_equal(tj_stall_clock_see(c, "team-b/vit", &job, T0 + 140), T0 + 25);
	assert_null(tj_stall_clock_free(c));
	assert_null(tj_stall_clock_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_clock_moves_only_with_the_progress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
