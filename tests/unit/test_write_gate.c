/* The write gate on a real libuv loop: open when idle, shut while urgent writes are in flight
 * or the queue is busy, waiters released in order and never from inside the call, the bounds on
 * a wait (for queued work, and the longer one while urgent writes go out), and cancel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/executor/write_gate.h"

struct fx {
	uv_loop_t loop;
	struct tj_write_gate *gate;
	bool busy;
	char log[64]; /* the names of released waiters, in order */
	uint64_t released_at;
};

struct named_waiter {
	struct tj_write_gate_waiter w;
	struct fx *fx;
	const char *name;
};

static bool is_busy(void *userdata)
{
	return ((struct fx *)userdata)->busy;
}

static void released(struct tj_write_gate_waiter *w, void *userdata)
{
	struct named_waiter *n = userdata;

	strncat(n->fx->log, n->name, sizeof(n->fx->log) - strlen(n->fx->log) - 1);
	n->fx->released_at = uv_now(&n->fx->loop);
}

static struct fx *fx_new_hold(uint64_t max_wait_ms, uint64_t max_hold_ms)
{
	static struct fx fx;
	struct tj_write_gate_config cfg = { .busy = is_busy,
		                            .userdata = &fx,
		                            .max_wait_ms = max_wait_ms,
		                            .max_hold_ms = max_hold_ms };

	memset(&fx, 0, sizeof(fx));
	assert_int_equal(uv_loop_init(&fx.loop), 0);
	assert_int_equal(tj_write_gate_new(&fx.loop, &cfg, &fx.gate), 0);
	return &fx;
}

static struct fx *fx_new(uint64_t max_wait_ms)
{
	return fx_new_hold(max_wait_ms, 0);
}

static void fx_free(struct fx *fx)
{
	fx->gate = tj_write_gate_free(fx->gate);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
}

static void wait_named(struct fx *fx, struct named_waiter *n, const char *name)
{
	n->fx = fx;
	n->name = name;
	tj_write_gate_wait(fx->gate, &n->w, released, n);
}

/* case: an idle gate is open; a NULL gate is always open. */
static void test_idle_gate_is_open(void **state)
{
	struct fx *fx = fx_new(0);

	assert_true(tj_write_gate_open(fx->gate));
	assert_true(tj_write_gate_open(NULL));
	tj_write_gate_urgent_begin(NULL);
	tj_write_gate_urgent_end(NULL);
	fx_free(fx);
}

/* case: urgent writes in flight shut the gate; waiters go, in order, once the last one is
 * answered, from the loop and not from inside the call. */
static void test_waiters_go_after_the_urgent_writes(void **state)
{
	struct fx *fx = fx_new(0);
	struct named_waiter a, b;
	struct tj_write_gate_stats st;

	tj_write_gate_urgent_begin(fx->gate);
	tj_write_gate_urgent_begin(fx->gate);
	assert_false(tj_write_gate_open(fx->gate));
	wait_named(fx, &a, "a");
	wait_named(fx, &b, "b");
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "");
	tj_write_gate_urgent_end(fx->gate);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_string_equal(fx->log, "");
	tj_write_gate_urgent_end(fx->gate);
	assert_string_equal(fx->log, "");
	/* Waiters still queued keep the gate shut for newcomers, who queue behind them. */
	assert_false(tj_write_gate_open(fx->gate));
	uint64_t ended = uv_now(&fx->loop);

	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_string_equal(fx->log, "ab");
	/* Not before the gate has been quiet for a while: gaps in a burst are not its end. */
	assert_true(fx->released_at - ended >= 50);
	assert_true(tj_write_gate_open(fx->gate));
	tj_write_gate_stats(fx->gate, &st);
	assert_int_equal(st.urgent_in_flight, 0);
	assert_int_equal(st.waiting, 0);
	assert_int_equal(st.deferred_total, 2);
	assert_int_equal(st.expired_total, 0);
	/* An extra end is ignored rather than wrapping the count. */
	tj_write_gate_urgent_end(fx->gate);
	assert_true(tj_write_gate_open(fx->gate));
	fx_free(fx);
}

static void unbusy(uv_timer_t *t)
{
	((struct fx *)t->data)->busy = false;
	uv_close((uv_handle_t *)t, NULL);
}

/* case: a busy queue shuts the gate although no urgent write is in flight; the waiter goes
 * soon after the queue stops being busy. */
static void test_busy_queue_shuts_the_gate(void **state)
{
	struct fx *fx = fx_new(0);
	struct named_waiter a;
	uv_timer_t t;

	fx->busy = true;
	assert_false(tj_write_gate_open(fx->gate));
	wait_named(fx, &a, "a");
	uv_timer_init(&fx->loop, &t);
	t.data = fx;
	uv_timer_start(&t, unbusy, 40, 0);
	uint64_t start = uv_now(&fx->loop);

	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_string_equal(fx->log, "a");
	assert_true(fx->released_at - start >= 40);
	fx_free(fx);
}

/* case: under an endless queue a waiter still goes after max_wait_ms, counted as expired. */
static void test_wait_is_bounded(void **state)
{
	struct fx *fx = fx_new_hold(30, 10000);
	struct named_waiter a;
	struct tj_write_gate_stats st;

	fx->busy = true;
	uint64_t start = uv_now(&fx->loop);

	wait_named(fx, &a, "a");
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_string_equal(fx->log, "a");
	assert_true(fx->released_at - start >= 30);
	assert_true(fx->released_at - start < 10000);
	tj_write_gate_stats(fx->gate, &st);
	assert_int_equal(st.expired_total, 1);
	fx_free(fx);
}

/* case: while urgent writes go out, a waiter is held past max_wait_ms, until max_hold_ms;
 * a hold shorter than the wait counts as the wait. */
static void test_urgent_writes_hold_up_to_max_hold(void **state)
{
	struct fx *fx = fx_new_hold(20, 80);
	struct named_waiter a;
	struct tj_write_gate_stats st;

	fx->busy = true;
	tj_write_gate_urgent_begin(fx->gate);
	uint64_t start = uv_now(&fx->loop);

	wait_named(fx, &a, "a");
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_string_equal(fx->log, "a");
	assert_true(fx->released_at - start >= 80);
	tj_write_gate_stats(fx->gate, &st);
	assert_int_equal(st.expired_total, 1);
	assert_int_equal(st.urgent_in_flight, 1);
	fx_free(fx);

	fx = fx_new_hold(30, 5);
	tj_write_gate_urgent_begin(fx->gate);
	start = uv_now(&fx->loop);
	wait_named(fx, &a, "a");
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_string_equal(fx->log, "a");
	assert_true(fx->released_at - start >= 30);
	fx_free(fx);
}

/* case: a cancelled waiter is never released; the others still are. */
static void test_cancel(void **state)
{
	struct fx *fx = fx_new(0);
	struct named_waiter a, b, c;

	tj_write_gate_urgent_begin(fx->gate);
	wait_named(fx, &a, "a");
	wait_named(fx, &b, "b");
	wait_named(fx, &c, "c");
	tj_write_gate_cancel(fx->gate, &b.w);
	tj_write_gate_cancel(fx->gate, &b.w);
	tj_write_gate_urgent_end(fx->gate);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_string_equal(fx->log, "ac");
	fx_free(fx);
}

/* A released waiter sends its deferrable write. */
static void released_sends(struct tj_write_gate_waiter *w, void *userdata)
{
	struct named_waiter *n = userdata;

	released(w, userdata);
	tj_write_gate_deferred_begin(n->fx->gate);
}

static void answer_one(uv_timer_t *t)
{
	tj_write_gate_deferred_end(((struct fx *)t->data)->gate);
}

/* case: at most TJ_WRITE_GATE_MAX_DEFERRED deferrable writes in flight, even for a waiter
 * past max_wait_ms: each answer lets one more go. An extra end does not wrap the count. */
static void test_deferred_in_flight_are_bounded(void **state)
{
	struct fx *fx = fx_new(20);
	struct named_waiter a, b;
	struct tj_write_gate_stats st;
	uv_timer_t first, second;

	for (int i = 0; i < TJ_WRITE_GATE_MAX_DEFERRED - 1; i++)
		tj_write_gate_deferred_begin(fx->gate);
	assert_true(tj_write_gate_open(fx->gate));
	tj_write_gate_deferred_begin(fx->gate);
	assert_false(tj_write_gate_open(fx->gate));
	a.fx = b.fx = fx;
	a.name = "a";
	b.name = "b";
	tj_write_gate_wait(fx->gate, &a.w, released_sends, &a);
	tj_write_gate_wait(fx->gate, &b.w, released_sends, &b);
	uv_timer_init(&fx->loop, &first);
	uv_timer_init(&fx->loop, &second);
	first.data = second.data = fx;
	uv_timer_start(&first, answer_one, 60, 0);
	uv_timer_start(&second, answer_one, 100, 0);
	uint64_t start = uv_now(&fx->loop);

	uv_run(&fx->loop, UV_RUN_ONCE);
	while (strlen(fx->log) < 1)
		uv_run(&fx->loop, UV_RUN_ONCE);
	assert_string_equal(fx->log, "a");
	assert_true(fx->released_at - start >= 60);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_string_equal(fx->log, "ab");
	assert_true(fx->released_at - start >= 100);
	tj_write_gate_stats(fx->gate, &st);
	assert_int_equal(st.deferred_in_flight, TJ_WRITE_GATE_MAX_DEFERRED);
	assert_int_equal(st.expired_total, 0);
	for (int i = 0; i <= TJ_WRITE_GATE_MAX_DEFERRED; i++)
		tj_write_gate_deferred_end(fx->gate);
	tj_write_gate_stats(fx->gate, &st);
	assert_int_equal(st.deferred_in_flight, 0);
	assert_true(tj_write_gate_open(fx->gate));
	uv_close((uv_handle_t *)&first, NULL);
	uv_close((uv_handle_t *)&second, NULL);
	fx_free(fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_gate_is_open),
		cmocka_unit_test(test_waiters_go_after_the_urgent_writes),
		cmocka_unit_test(test_busy_queue_shuts_the_gate),
		cmocka_unit_test(test_wait_is_bounded),
		cmocka_unit_test(test_urgent_writes_hold_up_to_max_hold),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_deferred_in_flight_are_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
