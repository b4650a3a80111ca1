/* Retention: the TTL of finished jobs and what becomes of a replaced attempt's pods. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "reconcilers/policy/retention.h"

#define NOW 1795953600

/* A pod that is not its rank's current one any more; newest is the newest attempt kept or
 * to be kept, ran the seconds the next attempt has had every pod running (-1: not yet);
 * stopping: a stalled attempt's live pod, with stop_left seconds until stop_until. */
struct keep_case {
	const char *name;
	bool finished, deleting, node_failed, kept;
	int attempt, newest;
	bool job_finished;
	int64_t ran;
	int keep_seconds;
	enum tj_keep_verdict want;
	int64_t want_wait;
	bool stopping;
	int64_t stop_left;
};

static const struct keep_case keep_cases[] = {
	{ "a finished pod of the replaced attempt: its rank's labels go first", true, false, false,
	  false, 1, 1, false, -1, 300, TJ_KEEP_LABEL, 0, false, 0 },
	{ "a pod that still runs is deleted (it holds its GPUs)", false, false, false, false, 1, 1,
	  false, -1, 300, TJ_KEEP_DELETE, 0, false, 0 },
	{ "a pod on a failed node is deleted (force, by the planner)", true, false, true, false, 1,
	  1, false, -1, 300, TJ_KEEP_DELETE, 0, false, 0 },
	{ "a kept pod on a node that failed later is deleted", true, false, true, true, 1, 1, false,
	  -1, 300, TJ_KEEP_DELETE, 0, false, 0 },
	{ "a pod being deleted is left to go", true, true, false, false, 1, 1, false, -1, 300,
	  TJ_KEEP_DELETE, 0, false, 0 },
	{ "a kept pod older than the newest kept attempt is deleted", true, false, false, true, 0,
	  1, false, -1, 300, TJ_KEEP_DELETE, 0, false, 0 },
	{ "an older attempt is not even labelled", true, false, false, false, 0, 1, false, -1, 300,
	  TJ_KEEP_DELETE, 0, false, 0 },
	{ "kept while the next attempt does not run yet", true, false, false, true, 1, 1, false, -1,
	  300, TJ_KEEP, 0, false, 0 },
	{ "kept while the next attempt has run for less than the grace: look again then", true,
	  false, false, true, 1, 1, false, 100, 300, TJ_KEEP, 200, false, 0 },
	{ "deleted once the next attempt has run for the grace", true, false, false, true, 1, 1,
	  false, 300, 300, TJ_KEEP_DELETE, 0, false, 0 },
	{ "a grace of 0 deletes it as soon as the next attempt runs", true, false, false, true, 1,
	  1, false, 0, 0, TJ_KEEP_DELETE, 0, false, 0 },
	{ "a finished job keeps it for the TTL, however long its last attempt ran", true, false,
	  false, true, 1, 1, true, 9999, 300, TJ_KEEP, 0, false, 0 },
	{ "a stalled attempt's pod that still runs: its labels go, and it is stopped", false, false,
	  false, false, 1, 0, false, -1, 300, TJ_KEEP_LABEL, 0, true, 90 },
	{ "stopped, it is kept while its kubelet stops it: look again when its time is up", false,
	  false, false, true, 1, 0, false, -1, 300, TJ_KEEP, 90, true, 90 },
	{ "so in a finished job", false, false, false, true, 1, 0, true, -1, 300, TJ_KEEP, 90, true,
	  90 },
	{ "one that still runs when its time is up is deleted", false, false, false, true, 1, 0,
	  false, -1, 300, TJ_KEEP_DELETE, 0, true, 0 },
	{ "a stopping pod being deleted is left to go", false, true, false, true, 1, 0, false, -1,
	  300, TJ_KEEP_DELETE, 0, true, 90 },
	{ "a stopping pod on a failed node is deleted", false, false, true, true, 1, 0, false, -1,
	  300, TJ_KEEP_DELETE, 0, true, 90 },
	{ "once it has stopped it is kept as a crashed attempt's pod", true, false, false, true, 1,
	  1, false, 100, 300, TJ_KEEP, 200, false, 0 },
};

static void test_keep(void **state)
{
	for (size_t i = 0; i < sizeof(keep_cases) / sizeof(keep_cases[0]); i++) {
		const struct keep_case *c = &keep_cases[i];
		struct tj_keep_input in = {
			.finished = c->finished,
			.deleting = c->deleting,
			.node_failed = c->node_failed,
			.kept = c->kept,
			.attempt = c->attempt,
			.newest_attempt = c->newest,
			.job_finished = c->job_finished,
			.running_since = c->ran >= 0 ? NOW - c->ran : 0,
			.keep_seconds = c->keep_seconds,
			.stopping = c->stopping,
			.stop_until = NOW + c->stop_left,
			.now = NOW,
		};
		int64_t wait = -1;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_retention_keep(&in, &wait), c->want);
		assert_int_equal(wait, c->want_wait);
		assert_int_equal(tj_retention_keepable(&in),
		                 c->finished && !c->deleting && !c->node_failed);
		assert_int_equal(tj_retention_stopping(&in), c->stopping && !c->deleting &&
		                                                     !c->node_failed &&
		                                                     c->stop_left > 0);
	}
}

struct ttl_case {
	const char *name;
	int64_t completion_time;
	int ttl;
	bool want;
	int64_t want_wait; /* -1: not written */
};

static const struct ttl_case ttl_cases[] = {
	{ "no TTL: never", NOW - 999999, -1, false, -1 },
	{ "no completion time: never", 0, 60, false, -1 },
	{ "within the TTL: the seconds left", NOW - 20, 60, false, 40 },
	{ "at the TTL: expired", NOW - 60, 60, true, -1 },
	{ "past the TTL: expired", NOW - 61, 60, true, -1 },
	{ "a TTL of 0: expired at once", NOW, 0, true, -1 },
};

static void test_ttl(void **state)
{
	for (size_t i = 0; i < sizeof(ttl_cases) / sizeof(ttl_cases[0]); i++) {
		const struct ttl_case *c = &ttl_cases[i];
		int64_t wait = -1;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_retention_ttl_expired(c->completion_time, c->ttl, NOW, &wait),
		                 c->want);
		assert_int_equal(wait, c->want_wait);
	}
}

static void test_ttl_source(void **state)
{
	struct tj_retention_policy none = { .ttl_seconds_after_finished = -1 };
	struct tj_retention_policy day = { .ttl_seconds_after_finished = 86400 };
	struct tj_runtime rt = { .ttl_seconds_after_finished = -1 };

	assert_int_equal(tj_retention_ttl(NULL, &none), -1);
	assert_int_equal(tj_retention_ttl(NULL, &day), 86400);
	assert_int_equal(tj_retention_ttl(&rt, &day), 86400);
	rt.ttl_seconds_after_finished = 0;
	assert_int_equal(tj_retention_ttl(&rt, &day), 0);
	rt.ttl_seconds_after_finished = 600;
	assert_int_equal(tj_retention_ttl(&rt, &none), 600);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_ttl_source),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
