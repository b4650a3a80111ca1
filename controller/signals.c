#include "controller/signals.h"
#include "controller/signals_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "controller/log/log.h"

struct callback {
	tj_shutdown_fn fn;
	void *userdata;
};

struct tj_signals {
	uv_signal_t term;
	uv_signal_t intr;
	uv_timer_t grace;
	uint64_t grace_ms;
	struct callback callbacks[TJ_SHUTDOWN_MAX_CALLBACKS];
	size_t n_callbacks;
	bool stopping;
	tj_exit_fn exit_fn;
	int open_handles; /* freed when the last libuv handle has closed */
};

static void on_grace_expired(uv_timer_t *timer)
{
	struct tj_signals *s = timer->data;

	tj_log_error("signals", "shutdown did not finish within the grace period, exiting",
	             TJ_INT("grace_ms", (long long)s->grace_ms));
	s->exit_fn(1);
}

static void begin_shutdown(struct tj_signals *s, int signum)
{
	s->stopping = true;
	/* Armed before the callbacks run, so that one that hangs the loop's progress (but
	 * returns) is still bounded. The timer is unreferenced: it never keeps the loop alive. */
	uv_timer_start(&s->grace, on_grace_expired, s->grace_ms, 0);
	for (size_t i = 0; i < s->n_callbacks; i++)
		s->callbacks[i].fn(s->callbacks[i].userdata, signum);
}

static const char *signal_name(int signum)
{
	return signum == SIGTERM ? "SIGTERM" : signum == SIGINT ? "SIGINT" : "other";
}

static void on_signal(uv_signal_t *handle, int signum)
{
	struct tj_signals *s = handle->data;

	if (s->stopping) {
		tj_log_error("signals", "second signal, exiting now",
		             TJ_STR("signal", signal_name(signum)));
		s->exit_fn(1);
		return;
	}
	tj_log_info("signals", "shutting down", TJ_STR("signal", signal_name(signum)),
	            TJ_INT("grace_ms", (long long)s->grace_ms));
	begin_shutdown(s, signum);
}

static void on_handle_closed(uv_handle_t *handle)
{
	struct tj_signals *s = handle->data;

	if (--s->open_handles == 0)
		free(s);
}

int tj_signals_new(uv_loop_t *loop, uint64_t grace_ms, struct tj_signals **ret)
{
	struct tj_signals *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->grace_ms = grace_ms;
	s->exit_fn = exit;
	/* uv_signal_init and uv_timer_init only fail for a loop whose signal pipe cannot be
	 * made; then nothing is initialised yet that would need closing. */
	r = uv_signal_init(loop, &s->term);
	if (r < 0) {
		free(s);
		return r;
	}
	uv_signal_init(loop, &s->intr);
	uv_timer_init(loop, &s->grace);
	s->term.data = s->intr.data = s->grace.data = s;
	s->open_handles = 3;
	uv_unref((uv_handle_t *)&s->term);
	uv_unref((uv_handle_t *)&s->intr);
	uv_unref((uv_handle_t *)&s->grace);
	r = uv_signal_start(&s->term, on_signal, SIGTERM);
	if (r == 0)
		r = uv_signal_start(&s->intr, on_signal, SIGINT);
	if (r < 0) {
		tj_signals_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

int tj_signals_on_shutdown(struct tj_signals *signals, tj_shutdown_fn fn, void *userdata)
{
	if (signals->n_callbacks >= TJ_SHUTDOWN_MAX_CALLBACKS)
		return -E2BIG;
	signals->callbacks[signals->n_callbacks++] = (struct callback){ fn, userdata };
	return 0;
}

void tj_signals_shutdown(struct tj_signals *signals)
{
	if (signals->stopping)
		return;
	tj_log_info("signals", "shutting down", TJ_INT("grace_ms", (long long)signals->grace_ms));
	begin_shutdown(signals, 0);
}

bool tj_signals_stopping(const struct tj_signals *signals)
{
	return signals->stopping;
}

void tj_signals_set_exit(struct tj_signals *signals, tj_exit_fn exit_fn)
{
	signals->exit_fn = exit_fn;
}

void tj_signals_close(struct tj_signals *signals)
{
	if (!signals)
		return;
	uv_close((uv_handle_t *)&signals->term, on_handle_closed);
	uv_close((uv_handle_t *)&signals->intr, on_handle_closed);
	uv_close((uv_handle_t *)&signals->grace, on_handle_closed);
}
