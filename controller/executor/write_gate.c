#include "controller/executor/write_gate.h"

#include <errno.h>
#include <stdlib.h>

/* How often a gate with waiters looks again at its busy() predicate and at the oldest
 * waiter's age. */
#define CHECK_INTERVAL_MS 10
/* The gate opens once it has had nothing urgent for this long: a burst of TrainJobs arrives
 * over the watch with gaps between them, and the gaps are not its end. */
#define QUIET_MS 50
/* Waiters released per look: the bookkeeping of a burst goes out at a bounded pace (3,200
 * per second), so that requests in flight, and their buffers, stay bounded, and urgent work
 * that comes back shuts the gate on the rest. */
#define RELEASE_BATCH 32

struct tj_write_gate {
	uv_loop_t *loop; /* borrowed */
	struct tj_write_gate_config config;
	uv_timer_t timer;
	struct tj_list waiters;     /* borrowed FIFO of struct tj_write_gate_waiter */
	struct tj_status_pass pass; /* its waiters borrowed */
	struct tj_write_gate_stats stats;
	uint64_t last_urgent_ms; /* loop time of the last urgent write sent or answered; 0 */
	bool flushed;            /* open for good */
};

/* Urgent writes in flight or a moment ago. */
static bool urgent(const struct tj_write_gate *g)
{
	return g->stats.urgent_in_flight > 0 ||
	       (g->last_urgent_ms && uv_now(g->loop) - g->last_urgent_ms < QUIET_MS);
}

/* Urgent writes, or work queued that may bring some. */
static bool shut(const struct tj_write_gate *g)
{
	if (g->flushed)
		return false;
	return urgent(g) || (g->config.busy && g->config.busy(g->config.userdata));
}

/* As many deferrable writes in flight as may be (unless the gate is open for good). */
static bool full(const struct tj_write_gate *g)
{
	return !g->flushed && g->stats.deferred_in_flight >= TJ_WRITE_GATE_MAX_DEFERRED;
}

bool tj_write_gate_open(const struct tj_write_gate *g)
{
	return !g || (!g->waiters.head && !shut(g) && !full(g));
}

/* The waiter whose link is at link, or NULL. */
static struct tj_write_gate_waiter *waiter_of(struct tj_link *link)
{
	return TJ_LIST_ENTRY(link, struct tj_write_gate_waiter, link);
}

static void unlink_waiter(struct tj_write_gate *g, struct tj_write_gate_waiter *w)
{
	tj_list_unlink(&g->waiters, &w->link);
	w->waiting = false;
}

/* The pass's stale waiters told, and as many of its waiters released as may be in flight:
 * neither the busy queue nor a burst holds it. */
static void release_pass(struct tj_write_gate *g)
{
	struct tj_status_pass_waiter *w;

	while ((w = tj_status_pass_take_stale(&g->pass)))
		w->stale(w, w->userdata);
	while ((w = tj_status_pass_next(&g->pass, TJ_STATUS_PASS_MAX_IN_FLIGHT)))
		w->release(w, w->userdata);
}

/* Whether the timer has waiters to look at. */
static bool has_waiters(const struct tj_write_gate *g)
{
	return g->waiters.head || tj_status_pass_pending(&g->pass);
}

static void on_check(uv_timer_t *t)
{
	struct tj_write_gate *g = t->data;
	uint64_t now = uv_now(g->loop);
	bool open = !shut(g);
	uint64_t bound = urgent(g) ? g->config.max_hold_ms : g->config.max_wait_ms;
	/* Only the waiters queued now: a release may queue new ones, which wait for the next
	 * look. */
	struct tj_write_gate_waiter *last = waiter_of(g->waiters.tail);

	for (int n = 0; g->waiters.head && n < RELEASE_BATCH; n++) {
		struct tj_write_gate_waiter *w = waiter_of(g->waiters.head);
		bool expired = now - w->since_ms >= bound;

		/* The writes a release sends count at once: the next waiter looks again. */
		if ((!open && !expired) || full(g))
			break;
		if (!open)
			g->stats.expired_total++;
		unlink_waiter(g, w);
		w->release(w, w->userdata);
		if (w == last)
			break;
	}
	release_pass(g);
	if (!has_waiters(g))
		uv_timer_stop(&g->timer);
}

/* Looks at the gate from the loop soon, then every CHECK_INTERVAL_MS while waiters wait. */
static void poke(struct tj_write_gate *g)
{
	if (has_waiters(g))
		uv_timer_start(&g->timer, on_check, 0, CHECK_INTERVAL_MS);
}

void tj_write_gate_urgent_begin(struct tj_write_gate *g)
{
	if (!g)
		return;
	g->stats.urgent_in_flight++;
	g->last_urgent_ms = uv_now(g->loop);
}

void tj_write_gate_urgent_end(struct tj_write_gate *g)
{
	if (!g || g->stats.urgent_in_flight == 0)
		return;
	g->last_urgent_ms = uv_now(g->loop);
	--g->stats.urgent_in_flight;
}

void tj_write_gate_deferred_begin(struct tj_write_gate *g)
{
	if (g)
		g->stats.deferred_in_flight++;
}

void tj_write_gate_deferred_end(struct tj_write_gate *g)
{
	if (g && g->stats.deferred_in_flight > 0)
		g->stats.deferred_in_flight--;
}

void tj_write_gate_wait(struct tj_write_gate *g, struct tj_write_gate_waiter *w,
                        void (*release)(struct tj_write_gate_waiter *w, void *userdata),
                        void *userdata)
{
	w->release = release;
	w->userdata = userdata;
	w->since_ms = uv_now(g->loop);
	tj_list_append(&g->waiters, &w->link);
	w->waiting = true;
	g->stats.deferred_total++;
	if (!uv_is_active((uv_handle_t *)&g->timer))
		poke(g);
}

void tj_write_gate_flush(struct tj_write_gate *g)
{
	if (!g)
		return;
	g->flushed = true;
	poke(g);
}

void tj_write_gate_cancel(struct tj_write_gate *g, struct tj_write_gate_waiter *w)
{
	if (!g || !w->waiting)
		return;
	unlink_waiter(g, w);
	if (!has_waiters(g))
		uv_timer_stop(&g->timer);
}

void tj_write_gate_pass_wait(struct tj_write_gate *g, struct tj_status_pass_waiter *w,
                             tj_status_pass_fn release, tj_status_pass_fn stale, void *userdata)
{
	w->release = release;
	w->stale = stale;
	w->userdata = userdata;
	tj_status_pass_add(&g->pass, w);
	poke(g);
}

void tj_write_gate_pass_done(struct tj_write_gate *g, const char *key)
{
	if (!g)
		return;
	tj_status_pass_done(&g->pass, key);
	poke(g);
}

void tj_write_gate_pass_cancel(struct tj_write_gate *g, struct tj_status_pass_waiter *w)
{
	if (g)
		tj_status_pass_remove(&g->pass, w);
}

bool tj_write_gate_status_begin(struct tj_write_gate *g, const char *key)
{
	return g && tj_status_pass_begin(&g->pass, key);
}

void tj_write_gate_status_end(struct tj_write_gate *g, const char *key)
{
	tj_write_gate_pass_done(g, key);
}

bool tj_write_gate_status_in_flight(const struct tj_write_gate *g, const char *key)
{
	return g && tj_status_pass_in_flight(&g->pass, key);
}

void tj_write_gate_stats(const struct tj_write_gate *g, struct tj_write_gate_stats *ret)
{
	*ret = g->stats;
	ret->waiting = g->waiters.n;
	ret->pass_in_flight = g->pass.n_in_flight;
	ret->pass_waiting = g->pass.queued.n + g->pass.n_blocked;
}

int tj_write_gate_new(uv_loop_t *loop, const struct tj_write_gate_config *config,
                      struct tj_write_gate **ret)
{
	struct tj_write_gate *g = calloc(1, sizeof(*g));
	int rc;

	if (!g)
		return -ENOMEM;
	g->loop = loop;
	g->config = *config;
	if (!g->config.max_wait_ms)
		g->config.max_wait_ms = TJ_WRITE_GATE_MAX_WAIT_MS;
	if (!g->config.max_hold_ms)
		g->config.max_hold_ms = TJ_WRITE_GATE_MAX_HOLD_MS;
	if (g->config.max_hold_ms < g->config.max_wait_ms)
		g->config.max_hold_ms = g->config.max_wait_ms;
	rc = uv_timer_init(loop, &g->timer);
	if (rc < 0) {
		free(g);
		return rc;
	}
	g->timer.data = g;
	*ret = g;
	return 0;
}

static void on_closed(uv_handle_t *h)
{
	free(h->data);
}

struct tj_write_gate *tj_write_gate_free(struct tj_write_gate *g)
{
	if (!g)
		return NULL;
	while (g->waiters.head)
		unlink_waiter(g, waiter_of(g->waiters.head));
	while (g->pass.queued.head)
		tj_status_pass_remove(
		        &g->pass,
		        TJ_CONTAINER_OF(g->pass.queued.head, struct tj_status_pass_waiter, link));
	while (g->pass.stale.head)
		tj_status_pass_remove(
		        &g->pass,
		        TJ_CONTAINER_OF(g->pass.stale.head, struct tj_status_pass_waiter, link));
	uv_close((uv_handle_t *)&g->timer, on_closed);
	return NULL;
}
