/* Orderly shutdown on SIGTERM and SIGINT, as a Kubernetes pod is stopped.
 *
 * The first signal runs the shutdown callbacks, in the order they were registered, once
 * (stop taking keys, drain the workqueue, release the lease, close the servers); each starts
 * its own asynchronous work and returns. The loop then ends by itself when the last handle
 * closes: the signal watchers and the grace timer do not keep it alive. A second signal
 * exits at once with status 1, as controller-runtime does; so does a shutdown that is still
 * running after the grace period (controller-runtime's GracefulShutdownTimeout, 30 s). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#define TJ_SHUTDOWN_GRACE_MS_DEFAULT 30000
#define TJ_SHUTDOWN_MAX_CALLBACKS    16

/* signum is the signal that started the shutdown, or 0 when tj_signals_shutdown did. */
typedef void (*tj_shutdown_fn)(void *userdata, int signum);

/* What ends the process when it cannot wait: exit(3) unless a test replaces it. */
typedef void (*tj_exit_fn)(int status);

struct tj_signals;

/* Starts watching SIGTERM and SIGINT on loop. */
int tj_signals_new(uv_loop_t *loop, uint64_t grace_ms, struct tj_signals **ret);

/* -E2BIG past TJ_SHUTDOWN_MAX_CALLBACKS. A callback registered after the shutdown began is
 * not run. */
int tj_signals_on_shutdown(struct tj_signals *signals, tj_shutdown_fn fn, void *userdata);

/* Begins the shutdown as a signal would (for example when leadership is lost); does nothing
 * if it has begun already. */
void tj_signals_shutdown(struct tj_signals *signals);

/* Whether the shutdown has begun. */
bool tj_signals_stopping(const struct tj_signals *signals);

/* Stops watching and frees once the handles have closed (the loop must run for that).
 * Accepts NULL. Signals that arrive afterwards get their default action again. */
void tj_signals_close(struct tj_signals *signals);
