/* Stalled jobs: the stall timeout a job gets from its annotation or its runtime's, the verdict
 * on its progress, and the words of the finding. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/policy/stall.h"

/* 2026-11-29T12:00:00Z */
#define NOW            1795953600

#define NOT_A_DURATION "is not a duration such as 30m, 1h30m or 600s (1 s to 366 d), or 0 for none"

struct timeout_case {
	const char *name;
	const char *job;     /* the TrainJob's annotation, NULL: absent */
	const char *runtime; /* the runtime's setting, NULL: absent */
	int rc;
	int64_t want;
	const char *reason, *message;
};

static const struct timeout_case timeouts[] = {
	{ "neither sets one: none", NULL, NULL, 0, 0, NULL, NULL },
	{ "minutes", "30m", NULL, 0, 1800, NULL, NULL },
	{ "seconds", "600s", NULL, 0, 600, NULL, NULL },
	{ "a bare number of seconds", "600", NULL, 0, 600, NULL, NULL },
	{ "amounts of several units", "1h30m", NULL, 0, 5400, NULL, NULL },
	{ "the runtime's default", NULL, "20m", 0, 1200, NULL, NULL },
	{ "the TrainJob's wins over its runtime's", "10m", "1h", 0, 600, NULL, NULL },
	{ "0 on the TrainJob switches its runtime's off", "0", "1h", 0, 0, NULL, NULL },
	{ "0 on a runtime is none too", NULL, "0", 0, 0, NULL, NULL },
	{ "a TrainJob's value that is no duration", "5x", "1h", -EINVAL, 0, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/stall-timeout]: '5x' " NOT_A_DURATION },
	{ "units out of order", "30m1h", NULL, -EINVAL, 0, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/stall-timeout]: '30m1h' " NOT_A_DURATION },
	{ "a negative one", "-1m", NULL, -EINVAL, 0, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/stall-timeout]: '-1m' " NOT_A_DURATION },
	{ "an empty one", "", NULL, -EINVAL, 0, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/stall-timeout]: '' " NOT_A_DURATION },
	{ "longer than a walltime may be", "367d", NULL, -EINVAL, 0, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/stall-timeout]: '367d' " NOT_A_DURATION },
	{ "a runtime's value that is no duration", NULL, "soon", -EINVAL, 0, "InvalidRuntime",
	  "ClusterTrainingRuntime torch-gh200: trainjob.flame.dev/stall-timeout "
	  "'soon' " NOT_A_DURATION },
	{ "a TrainJob's own hides its runtime's bad one", "15m", "soon", 0, 900, NULL, NULL },
};

static void test_timeout_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		const struct timeout_case *c = &timeouts[i];
		struct tj_trainjob job = { .stall_timeout = (char *)c->job };
		struct tj_runtime rt = { .kind = TJ_RUNTIME_CLUSTER,
			                 .name = "torch-gh200",
			                 .stall_timeout = (char *)c->runtime };
		struct tj_problem why = { "", "" };
		int64_t got = -7;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_stall_timeout(&job, &rt, &got, &why), c->rc);
		if (c->rc < 0) {
			assert_int_equal(got, -7); /* written only on success */
			assert_string_equal(why.reason, c->reason);
			assert_string_equal(why.message, c->message);
			continue;
		}
		assert_int_equal(got, c->want);
		/* Without a runtime, the TrainJob's alone counts. */
		if (!c->job) {
			assert_int_equal(tj_stall_timeout(&job, NULL, &got, &why), 0);
			assert_int_equal(got, 0);
		}
	}
}

/* Times as seconds before NOW; 0: unset. */
struct judge_case {
	const char *name;
	int64_t timeout;
	bool reported;
	int64_t running, seen;
	bool stalled;
	int64_t since; /* seconds before NOW; -1: 0 (not judged) */
	bool from_start;
	int64_t check_in; /* seconds after NOW; -1: 0 */
};

static const struct judge_case judges[] = {
	{ "no timeout: never judged", 0, true, 3600, 3600, false, -1, false, -1 },
	{ "a job that never reported progress: never judged", 600, false, 3600, 0, false, -1, false,
	  -1 },
	{ "a job that reports nothing now (its entry gone): not judged", 600, true, 3600, 0, false,
	  -1, false, -1 },
	{ "not every rank runs (queued, suspended, restarting, or a rank done): not judged", 600,
	  true, 0, 3600, false, -1, false, -1 },
	{ "progress changed 100 s ago: look again when the timeout would be over", 600, true, 3600,
	  100, false, 100, false, 500 },
	{ "unchanged for the whole timeout: stalled", 600, true, 3600, 600, true, 600, false, -1 },
	{ "unchanged for longer", 600, true, 7200, 5000, true, 5000, false, -1 },
	{ "an attempt that started since: its clock starts with its pods", 600, true, 300, 7200,
	  false, 300, true, 300 },
	{ "an attempt that has not changed it for the timeout since its pods started", 600, true,
	  600, 7200, true, 600, true, -1 },
	{ "a controller that started a minute ago saw the job first then", 600, true, 86400, 60,
	  false, 60, false, 540 },
	{ "changed in the same second the attempt started: not from the start", 600, true, 600, 600,
	  true, 600, false, -1 },
};

static void test_judge_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(judges) / sizeof(judges[0]); i++) {
		const struct judge_case *c = &judges[i];
		struct tj_stall_input in = {
			.timeout = c->timeout,
			.reported = c->reported,
			.running_since = c->running ? NOW - c->running : 0,
			.progress_seen = c->seen ? NOW - c->seen : 0,
			.now = NOW,
		};
		struct tj_stall_verdict v;

		print_message("# case: %s\n", c->name);
		tj_stall_judge(&in, &v);
		assert_int_equal(v.stalled, c->stalled);
		assert_int_equal(v.since, c->since >= 0 ? NOW - c->since : 0);
		assert_int_equal(v.from_start, c->from_start);
		assert_int_equal(v.check_at, c->check_in >= 0 ? NOW + c->check_in : 0);
	}
}

static void test_describe(void **state)
{
	struct tj_stall_input in = { .timeout = 1200,
		                     .reported = true,
		                     .running_since = NOW - 7200,
		                     .progress_seen = NOW - 1500,
		                     .now = NOW };
	struct tj_stall_verdict v;
	char buf[256];

	(void)state;
	tj_stall_judge(&in, &v);
	tj_stall_describe(&in, &v, 42, buf, sizeof(buf));
	assert_string_equal(buf, "the progress it reports (42%) has not changed since "
	                         "2026-11-29T11:35:00Z, longer than its stall timeout of 20m");
	/* A report of metrics alone. */
	tj_stall_describe(&in, &v, -1, buf, sizeof(buf));
	assert_string_equal(buf, "the progress it reports has not changed since "
	                         "2026-11-29T11:35:00Z, longer than its stall timeout of 20m");
	/* A new attempt that has reported nothing new since its pods started. */
	in = (struct tj_stall_input){ .timeout = 90,
		                      .reported = true,
		                      .running_since = NOW - 95,
		                      .progress_seen = NOW - 7200,
		                      .now = NOW };
	tj_stall_judge(&in, &v);
	tj_stall_describe(&in, &v, 0, buf, sizeof(buf));
	assert_string_equal(buf, "the progress it reports (0%) has not changed since its pods "
	                         "started at 2026-11-29T11:58:25Z, longer than its stall timeout "
	                         "of 1m30s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeout_table),
		cmocka_unit_test(test_judge_table),
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
