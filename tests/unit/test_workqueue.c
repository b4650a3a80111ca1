/* The workqueue's semantics on a real libuv loop: dedup, never two at once, re-add during
 * processing, keys in flight, per-key backoff values, delayed adds (earliest wins), forget,
 * limits and orderly shutdown. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/metrics/std_metrics.h"
#include "controller/workqueue.h"
#include "controller/workqueue_internal.h"
#include "time_limit.h"

struct fx {
	uv_loop_t loop;
	struct tj_workqueue *q;
	char log[512];    /* "key@ms " per process call, ms rounded down to 10 ms */
	char held[8][32]; /* keys handed out and not yet done (auto_done false) */
	size_t n_held;
	bool auto_done;
	uint64_t start;
	int drained;
};

static void process(struct tj_workqueue *q, const char *key, void *userdata)
{
	struct fx *fx = userdata;
	char entry[64];

	snprintf(entry, sizeof(entry), "%s ", key);
	strncat(fx->log, entry, sizeof(fx->log) - strlen(fx->log) - 1);
	if (fx->auto_done) {
		assert_int_equal(tj_workqueue_done(q, key), 0);
		return;
	}
	assert_true(fx->n_held < 8);
	snprintf(fx->held[fx->n_held++], sizeof(fx->held[0]), "%s", key);
}

static struct fx *fx_new(unsigned max_in_flight, size_t max_items, bool auto_done)
{
	static struct fx fx;
	struct tj_workqueue_config cfg = {
		.process = process,
		.userdata = &fx,
		.max_in_flight = max_in_flight,
		.max_items = max_items,
	};

	memset(&fx, 0, sizeof(fx));
	assert_int_equal(uv_loop_init(&fx.loop), 0);
	assert_int_equal(tj_workqueue_new(&fx.loop, &cfg, &fx.q), 0);
	fx.auto_done = auto_done;
	fx.start = uv_now(&fx.loop);
	return &fx;
}

static void on_drained(void *userdata)
{
	struct fx *fx = userdata;

	fx->drained++;
	fx->q = tj_workqueue_free(fx->q);
}

static void fx_free(struct fx *fx)
{
	if (fx->q)
		assert_int_equal(tj_workqueue_shutdown(fx->q, on_drained, fx), 0);
	while (fx->n_held > 0)
		tj_workqueue_done(fx->q, fx->held[--fx->n_held]);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_null(fx->q);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
}

/* Runs the loop until nothing is left to do (no queued key, no timer). */
static void run(struct fx *fx)
{
	uv_run(&fx->loop, UV_RUN_DEFAULT);
}

static void test_backoff_values(void **state)
{
	static const struct {
		unsigned failures;
		uint64_t want;
	} cases[] = {
		{ 0, 5 },        { 1, 10 },         { 2, 20 },       { 3, 40 },
		{ 10, 5120 },    { 17, 655360 },    { 18, 1000000 }, { 19, 1000000 },
		{ 64, 1000000 }, { 1000, 1000000 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_int_equal(tj_workqueue_backoff_ms(cases[i].failures,
		                                         TJ_WORKQUEUE_BASE_DELAY_MS,
		                                         TJ_WORKQUEUE_MAX_DELAY_MS),
		                 cases[i].want);
	/* No overflow with an unbounded cap. */
	assert_int_equal(tj_workqueue_backoff_ms(70, 5, UINT64_MAX), UINT64_MAX);
	assert_int_equal(tj_workqueue_backoff_ms(3, 1, 4), 4);
}

static void test_dedup_and_fifo(void **state)
{
	struct fx *fx = fx_new(1, 0, true);
	struct tj_workqueue_stats st;

	assert_int_equal(tj_workqueue_add(fx->q, "ns/a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/b"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/c"), 0);
	/* Never processed from inside add. */
	assert_string_equal(fx->log, "");
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.adds, 3);
	assert_int_equal(st.depth, 3);
	run(fx);
	assert_string_equal(fx->log, "ns/a ns/b ns/c ");
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.depth, 0);
	assert_int_equal(st.in_flight, 0);
	fx_free(fx);
}

/* add_first jumps the queue: a queued key moves to the front (the tail stays right), a new
 * one goes there, a key in flight runs again once it is done; nothing is counted twice. */
static void test_add_first(void **state)
{
	struct fx *fx = fx_new(1, 0, true);
	struct tj_workqueue_stats st;

	assert_int_equal(tj_workqueue_add(fx->q, "ns/a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/b"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/c"), 0);
	assert_int_equal(tj_workqueue_add_first(fx->q, "ns/c"), 0); /* the tail moves */
	assert_int_equal(tj_workqueue_add_first(fx->q, "ns/d"), 0); /* a new key */
	assert_int_equal(tj_workqueue_add_first(fx->q, "ns/d"), 0); /* already first */
	assert_int_equal(tj_workqueue_add(fx->q, "ns/e"), 0);       /* behind the old tail b */
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.adds, 5);
	assert_int_equal(st.depth, 5);
	run(fx);
	assert_string_equal(fx->log, "ns/d ns/c ns/a ns/b ns/e ");
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.depth, 0);
	fx_free(fx);

	/* A key in flight is queued again when it is done, ahead of the keys queued meanwhile. */
	fx = fx_new(1, 0, false);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/b"), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "ns/a ");
	assert_int_equal(tj_workqueue_add_first(fx->q, "ns/a"), 0);
	assert_int_equal(tj_workqueue_done(fx->q, fx->held[--fx->n_held]), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "ns/a ns/a ");
	fx_free(fx);

	/* A key added first starts even when every slot is taken, up to half as many again
	 * (one more, for one slot); a plain key waits for a slot. */
	fx = fx_new(1, 0, false);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "ns/b"), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_int_equal(tj_workqueue_add_first(fx->q, "ns/c"), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "ns/a ns/c ");
	assert_int_equal(tj_workqueue_add_first(fx->q, "ns/d"), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "ns/a ns/c ");
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.in_flight, 2);
	assert_int_equal(tj_workqueue_done(fx->q, "ns/a"), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "ns/a ns/c ns/d ");
	assert_int_equal(tj_workqueue_done(fx->q, "ns/c"), 0);
	assert_int_equal(tj_workqueue_done(fx->q, "ns/d"), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "ns/a ns/c ns/d ns/b ");
	fx->n_held = 0;
	assert_int_equal(tj_workqueue_done(fx->q, "ns/b"), 0);
	fx_free(fx);
}

static void test_readd_while_processing_runs_again_after_done(void **state)
{
	struct fx *fx = fx_new(4, 0, false);
	struct tj_workqueue_stats st;

	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0);
	run(fx);
	assert_string_equal(fx->log, "a ");
	/* a is in flight: re-adds are remembered once and not handed out. */
	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0);
	run(fx);
	assert_string_equal(fx->log, "a ");
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.in_flight, 1);
	assert_int_equal(st.depth, 0);
	assert_int_equal(st.adds, 2);
	assert_int_equal(tj_workqueue_done(fx->q, "a"), 0);
	fx->n_held = 0;
	run(fx);
	assert_string_equal(fx->log, "a a ");
	assert_int_equal(tj_workqueue_done(fx->q, "a"), 0);
	fx->n_held = 0;
	run(fx);
	assert_string_equal(fx->log, "a a ");
	assert_int_equal(tj_workqueue_done(fx->q, "a"), -ENOENT);
	assert_int_equal(tj_workqueue_done(fx->q, "never"), -ENOENT);
	fx_free(fx);
}

/* The number after "prefix" in text, or -1. */
static double value_after(const char *text, const char *prefix)
{
	const char *p = strstr(text, prefix);

	return p ? strtod(p + strlen(prefix), NULL) : -1;
}

/* With metrics, the queue observes how long a key waited and how long it was processed, and
 * its stats say how long the keys in flight have run. */
static void test_durations_observed(void **state)
{
	static struct fx fx;
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	struct tj_workqueue_stats st;
	char *text;
	size_t len;

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), 0);
	struct tj_workqueue_config cfg = {
		.process = process,
		.userdata = &fx,
		.metrics = &m,
		.name = "trainjob",
		.max_in_flight = 4,
	};
	memset(&fx, 0, sizeof(fx));
	assert_int_equal(uv_loop_init(&fx.loop), 0);
	assert_int_equal(tj_workqueue_new(&fx.loop, &cfg, &fx.q), 0);

	tj_workqueue_stats(fx.q, &st);
	assert_true(st.longest_seconds == 0 && st.unfinished_seconds == 0);
	assert_int_equal(tj_workqueue_add(fx.q, "a"), 0);
	assert_int_equal(tj_workqueue_add(fx.q, "b"), 0);
	usleep(20000);
	run(&fx);
	assert_string_equal(fx.log, "a b ");
	usleep(30000);
	tj_workqueue_stats(fx.q, &st);
	assert_true(st.longest_seconds >= 0.03 && st.longest_seconds < 5);
	assert_true(st.unfinished_seconds >= 2 * 0.03 &&
	            st.unfinished_seconds >= st.longest_seconds);
	assert_int_equal(tj_workqueue_done(fx.q, "a"), 0);
	assert_int_equal(tj_workqueue_done(fx.q, "b"), 0);
	fx.n_held = 0;
	tj_workqueue_stats(fx.q, &st);
	assert_true(st.longest_seconds == 0 && st.unfinished_seconds == 0);

	assert_int_equal(tj_metrics_render(reg, &text, &len), 0);
	assert_true(value_after(text, "workqueue_queue_duration_seconds_count{controller="
	                              "\"trainjob\",name=\"trainjob\"} ") == 2);
	assert_true(value_after(text, "workqueue_queue_duration_seconds_sum{controller="
	                              "\"trainjob\",name=\"trainjob\"} ") >= 2 * 0.02);
	assert_true(value_after(text, "workqueue_work_duration_seconds_count{controller="
	                              "\"trainjob\",name=\"trainjob\"} ") == 2);
	assert_true(value_after(text, "workqueue_work_duration_seconds_sum{controller="
	                              "\"trainjob\",name=\"trainjob\"} ") >= 2 * 0.03);
	free(text);
	fx_free(&fx);
	tj_metrics_free(reg);
}

static void test_keys_in_flight_bound(void **state)
{
	struct fx *fx = fx_new(2, 0, false);
	struct tj_workqueue_stats st;

	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "b"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "c"), 0);
	run(fx);
	assert_string_equal(fx->log, "a b ");
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.in_flight, 2);
	assert_int_equal(st.depth, 1);
	assert_int_equal(tj_workqueue_done(fx->q, "b"), 0);
	run(fx);
	assert_string_equal(fx->log, "a b c ");
	assert_int_equal(tj_workqueue_done(fx->q, "a"), 0);
	assert_int_equal(tj_workqueue_done(fx->q, "c"), 0);
	fx->n_held = 0;
	fx_free(fx);
}

static uint64_t processed_at;

static void stamp(struct tj_workqueue *q, const char *key, void *userdata)
{
	struct fx *fx = userdata;

	processed_at = uv_now(&fx->loop) - fx->start;
	process(q, key, userdata);
}

static void test_add_after_earliest_wins(void **state)
{
	struct fx *fx = fx_new(1, 0, true);
	struct tj_workqueue_config cfg = { .process = stamp, .userdata = fx };
	struct tj_workqueue_stats st;

	/* Rebuild with the stamping callback. */
	tj_workqueue_shutdown(fx->q, on_drained, fx);
	run(fx);
	assert_int_equal(tj_workqueue_new(&fx->loop, &cfg, &fx->q), 0);
	uv_update_time(&fx->loop);
	fx->start = uv_now(&fx->loop);

	assert_int_equal(tj_workqueue_add_after(fx->q, "a", 300), 0);
	assert_int_equal(tj_workqueue_add_after(fx->q, "a", 30), 0);
	assert_int_equal(tj_workqueue_add_after(fx->q, "a", 200), 0);
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.waiting, 1);
	assert_int_equal(st.retries, 3);
	run(fx);
	/* Once, at the earliest time; the later requests were folded into it. */
	assert_string_equal(fx->log, "a ");
	assert_true(processed_at >= 30);
	assert_true(processed_at < 200);

	/* Zero delay is an immediate add. */
	assert_int_equal(tj_workqueue_add_after(fx->q, "b", 0), 0);
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.depth, 1);
	assert_int_equal(st.waiting, 0);
	run(fx);
	assert_string_equal(fx->log, "a b ");

	/* Several keys come out in ready-time order. */
	fx->log[0] = '\0';
	assert_int_equal(tj_workqueue_add_after(fx->q, "x", 60), 0);
	assert_int_equal(tj_workqueue_add_after(fx->q, "y", 20), 0);
	assert_int_equal(tj_workqueue_add_after(fx->q, "z", 40), 0);
	run(fx);
	assert_string_equal(fx->log, "y z x ");
	fx_free(fx);
}

static void test_rate_limited_backoff_and_forget(void **state)
{
	struct fx *fx = fx_new(1, 0, true);
	struct tj_workqueue_config cfg = {
		.process = stamp, .userdata = fx, .base_delay_ms = 20, .max_delay_ms = 50
	};

	tj_workqueue_shutdown(fx->q, on_drained, fx);
	run(fx);
	assert_int_equal(tj_workqueue_new(&fx->loop, &cfg, &fx->q), 0);

	assert_int_equal(tj_workqueue_num_requeues(fx->q, "a"), 0);
	for (unsigned i = 0; i < 4; i++) {
		static const uint64_t want[] = { 20, 40, 50, 50 };

		uv_update_time(&fx->loop);
		fx->start = uv_now(&fx->loop);
		assert_int_equal(tj_workqueue_add_rate_limited(fx->q, "a"), 0);
		assert_int_equal(tj_workqueue_num_requeues(fx->q, "a"), i + 1);
		run(fx);
		assert_true(processed_at >= want[i]);
		assert_true(processed_at < want[i] + time_limit_ms(100));
	}
	/* Failures outlive processing until forget. */
	assert_int_equal(tj_workqueue_num_requeues(fx->q, "a"), 4);
	tj_workqueue_forget(fx->q, "a");
	assert_int_equal(tj_workqueue_num_requeues(fx->q, "a"), 0);
	tj_workqueue_forget(fx->q, "unknown");
	uv_update_time(&fx->loop);
	fx->start = uv_now(&fx->loop);
	assert_int_equal(tj_workqueue_add_rate_limited(fx->q, "a"), 0);
	run(fx);
	assert_true(processed_at >= 20 && processed_at < 40 + time_limit_ms(100));
	assert_string_equal(fx->log, "a a a a a ");
	fx_free(fx);
}

static void test_limits(void **state)
{
	struct fx *fx = fx_new(1, 2, true);
	char key[TJ_WORKQUEUE_KEY_MAX + 1];

	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	assert_int_equal(tj_workqueue_add(fx->q, key), -ENAMETOOLONG);
	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "b"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "c"), -E2BIG);
	assert_int_equal(tj_workqueue_add_after(fx->q, "c", 5), -E2BIG);
	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0); /* known keys still fine */
	run(fx);
	/* Processed keys without failures are forgotten, so there is room again. */
	assert_int_equal(tj_workqueue_add(fx->q, "c"), 0);
	run(fx);
	assert_string_equal(fx->log, "a b c ");
	fx_free(fx);
}

static void test_shutdown_drains_in_flight(void **state)
{
	struct fx *fx = fx_new(1, 0, false);
	struct tj_workqueue_stats st;

	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0);
	assert_int_equal(tj_workqueue_add(fx->q, "b"), 0);
	assert_int_equal(tj_workqueue_add_after(fx->q, "c", 10), 0);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "a ");

	assert_int_equal(tj_workqueue_shutdown(fx->q, on_drained, fx), 0);
	assert_int_equal(tj_workqueue_shutdown(fx->q, on_drained, fx), -EALREADY);
	assert_int_equal(tj_workqueue_add(fx->q, "d"), -ESHUTDOWN);
	assert_int_equal(tj_workqueue_add_after(fx->q, "d", 1), -ESHUTDOWN);
	assert_int_equal(tj_workqueue_add_rate_limited(fx->q, "d"), -ESHUTDOWN);
	tj_workqueue_stats(fx->q, &st);
	assert_int_equal(st.depth, 0);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.in_flight, 1);
	/* Not drained while a is in flight, even with the loop idle. */
	run(fx);
	assert_int_equal(fx->drained, 0);
	assert_int_equal(tj_workqueue_add(fx->q, "a"), -ESHUTDOWN);
	assert_int_equal(tj_workqueue_done(fx->q, "a"), 0);
	fx->n_held = 0;
	run(fx);
	assert_int_equal(fx->drained, 1);
	assert_null(fx->q);
	/* b and c were dropped. */
	assert_string_equal(fx->log, "a ");
	assert_int_equal(uv_loop_close(&fx->loop), 0);
}

static int self_adds;

static void readd_self(struct tj_workqueue *q, const char *key, void *userdata)
{
	/* Added again while in flight, so done() inside process() queues it once more. */
	if (++self_adds < 200)
		assert_int_equal(tj_workqueue_add(q, key), 0);
	process(q, key, userdata);
}

static void test_synchronous_done_and_readd(void **state)
{
	struct fx *fx = fx_new(1, 0, true);
	struct tj_workqueue_config cfg = { .process = readd_self, .userdata = fx };

	tj_workqueue_shutdown(fx->q, on_drained, fx);
	run(fx);
	assert_int_equal(tj_workqueue_new(&fx->loop, &cfg, &fx->q), 0);
	/* A key that re-adds itself after done runs again and again, one turn of the loop at a
	 * time, without recursion. */
	self_adds = 0;
	assert_int_equal(tj_workqueue_add(fx->q, "a"), 0);
	run(fx);
	assert_int_equal(self_adds, 200);
	fx_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff_values),
		cmocka_unit_test(test_dedup_and_fifo),
		cmocka_unit_test(test_add_first),
		cmocka_unit_test(test_readd_while_processing_runs_again_after_done),
		cmocka_unit_test(test_keys_in_flight_bound),
		cmocka_unit_test(test_add_after_earliest_wins),
		cmocka_unit_test(test_rate_limited_backoff_and_forget),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_shutdown_drains_in_flight),
		cmocka_unit_test(test_synchronous_done_and_readd),
		cmocka_unit_test(test_durations_observed),
	};
	return cmocka_run_group_tests_name("workqueue", tests, NULL, NULL);
}
