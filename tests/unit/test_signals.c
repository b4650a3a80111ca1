/* Real signals sent to this process, handled on a real loop. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/log/log.h"
#include "controller/signals.h"
#include "controller/signals_internal.h"
#include "time_limit.h"

struct world {
	uv_timer_t keepalive; /* stands for the work that shutdown must finish */
	struct tj_signals *signals;
	int order[8];
	int n_calls;
	int signums[8];
	int exits;
	int exit_status;
	bool raise_again;
	bool finish_work;
};

static struct world w;

/* How long a test's loop may run on a plain build. */
#define KEEPALIVE_MS 5000

static void on_keepalive(uv_timer_t *timer)
{
	fail_msg("the loop was still running after %llu ms",
	         (unsigned long long)time_limit_ms(KEEPALIVE_MS));
}

static void finish_work(void)
{
	if (!uv_is_closing((uv_handle_t *)&w.keepalive))
		uv_close((uv_handle_t *)&w.keepalive, NULL);
}

static void first(void *userdata, int signum)
{
	w.order[w.n_calls] = 1;
	w.signums[w.n_calls++] = signum;
	if (w.raise_again)
		assert_int_equal(uv_kill(getpid(), SIGINT), 0);
}

static void second(void *userdata, int signum)
{
	w.order[w.n_calls] = (int)(intptr_t)userdata;
	w.signums[w.n_calls++] = signum;
	if (w.finish_work)
		finish_work();
}

static void fake_exit(int status)
{
	w.exits++;
	w.exit_status = status;
	finish_work();
}

static void quiet_sink(void *userdata, const char *line, size_t len)
{
}

static void start(uv_loop_t *loop, uint64_t grace_ms)
{
	memset(&w, 0, sizeof(w));
	assert_int_equal(uv_loop_init(loop), 0);
	assert_int_equal(uv_timer_init(loop, &w.keepalive), 0);
	assert_int_equal(uv_timer_start(&w.keepalive, on_keepalive, time_limit_ms(KEEPALIVE_MS), 0),
	                 0);
	assert_int_equal(tj_signals_new(loop, grace_ms, &w.signals), 0);
	tj_signals_set_exit(w.signals, fake_exit);
	assert_int_equal(tj_signals_on_shutdown(w.signals, first, NULL), 0);
	assert_int_equal(tj_signals_on_shutdown(w.signals, second, (void *)(intptr_t)2), 0);
}

static void stop(uv_loop_t *loop)
{
	tj_signals_close(w.signals);
	assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(loop), 0);
}

static void test_sigterm_runs_callbacks_in_order_once(void **state)
{
	uv_loop_t loop;

	start(&loop, 1000);
	w.finish_work = true;
	assert_false(tj_signals_stopping(w.signals));
	assert_int_equal(uv_kill(getpid(), SIGTERM), 0);
	/* Returns when the work is done: the watchers do not hold the loop. */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(w.n_calls, 2);
	assert_int_equal(w.order[0], 1);
	assert_int_equal(w.order[1], 2);
	assert_int_equal(w.signums[0], SIGTERM);
	assert_int_equal(w.signums[1], SIGTERM);
	assert_true(tj_signals_stopping(w.signals));
	assert_int_equal(w.exits, 0);
	/* Asking again changes nothing. */
	tj_signals_shutdown(w.signals);
	assert_int_equal(w.n_calls, 2);
	stop(&loop);
}

static void test_second_signal_exits_at_once(void **state)
{
	uv_loop_t loop;

	start(&loop, 1000);
	w.raise_again = true;
	assert_int_equal(uv_kill(getpid(), SIGINT), 0);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(w.n_calls, 2);
	assert_int_equal(w.signums[0], SIGINT);
	assert_int_equal(w.exits, 1);
	assert_int_equal(w.exit_status, 1);
	stop(&loop);
}

static void test_grace_period_bounds_shutdown(void **state)
{
	uv_loop_t loop;
	uint64_t started;

	start(&loop, 50);
	started = uv_now(&loop);
	tj_signals_shutdown(w.signals);
	assert_int_equal(w.n_calls, 2);
	assert_int_equal(w.signums[0], 0);
	assert_int_equal(w.exits, 0);
	/* The work never finishes by itself; the grace timer ends it. */
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(w.exits, 1);
	assert_int_equal(w.exit_status, 1);
	assert_in_range(uv_now(&loop) - started, 50, time_limit_ms(1000));
	stop(&loop);
}

static void test_callback_limit(void **state)
{
	uv_loop_t loop;

	start(&loop, 1000);
	for (int i = 2; i < TJ_SHUTDOWN_MAX_CALLBACKS; i++)
		assert_int_equal(tj_signals_on_shutdown(w.signals, second, (void *)(intptr_t)i), 0);
	assert_int_equal(tj_signals_on_shutdown(w.signals, second, NULL), -E2BIG);
	finish_work();
	stop(&loop);
	tj_signals_close(NULL);
}

static int setup(void **state)
{
	tj_log_set_sink(quiet_sink, NULL);
	return 0;
}

static int teardown(void **state)
{
	tj_log_set_sink(NULL, NULL);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigterm_runs_callbacks_in_order_once),
		cmocka_unit_test(test_second_signal_exits_at_once),
		cmocka_unit_test(test_grace_period_bounds_shutdown),
		cmocka_unit_test(test_callback_limit),
	};
	return cmocka_run_group_tests_name("signals", tests, setup, teardown);
}
