#include "controller/workqueue.h"
#include "controller/workqueue_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "controller/metrics/std_metrics.h"
#include "informers/store.h"

/* Processing slots handed out per turn of the loop, so that a key that re-adds itself
 * synchronously cannot starve the loop. */
#define DISPATCH_BATCH 64

/* What the queue knows about one key. It lives while the key is queued, processed, waiting
 * or has failures counted; the store of items is keyed by the key itself. */
struct item {
	struct item *next; /* borrowed; next in the FIFO */
	uint64_t ready_at; /* loop time (ms) of a delayed add, while waiting */
	size_t heap_index; /* position in the delay heap, while waiting */
	unsigned failures; /* since the last forget */
	bool queued;       /* in the FIFO (client-go's dirty set, for keys not in flight) */
	bool dirty;        /* added while in flight: queue again on done */
	bool processing;
	bool waiting; /* in the delay heap */
	bool first;   /* added by add_first and not started since: it goes ahead of the rest */
	uint64_t queued_ns;  /* uv_hrtime() when it entered the FIFO */
	uint64_t started_ns; /* uv_hrtime() when its processing started */
	char key[];
};

struct tj_workqueue {
	uv_loop_t *loop; /* borrowed */
	struct tj_workqueue_config config;
	struct tj_store *items;   /* owned; struct item by key */
	struct item *head, *tail; /* borrowed; the FIFO */
	struct item **heap;       /* owned array; min-heap by ready_at */
	size_t heap_len, heap_cap;
	uv_timer_t timer; /* fires at the heap's earliest ready_at */
	uv_idle_t idle;   /* runs dispatch while keys are queued and slots free */
	struct tj_workqueue_stats stats;
	void (*drained)(void *userdata);
	void *drained_userdata;
	int open_handles;
	bool shutting_down;
};

static void item_free(void *obj)
{
	free(obj);
}

static int item_key(const void *obj, char *buf, size_t size)
{
	return tj_store_key_of(buf, size, NULL, ((const struct item *)obj)->key);
}

static const struct tj_store_ops item_ops = {
	.free = item_free,
	.key = item_key,
};

uint64_t tj_workqueue_backoff_ms(unsigned failures, uint64_t base_ms, uint64_t max_ms)
{
	/* base * 2^failures without overflow: stop doubling as soon as max is reached. */
	uint64_t d = base_ms;

	for (unsigned i = 0; i < failures && d < max_ms; i++)
		d = d > max_ms / 2 ? max_ms : d * 2;
	return d < max_ms ? d : max_ms;
}

static struct item *find(const struct tj_workqueue *q, const char *key)
{
	/* The queue owns its items: the store only indexes them. */
	return (struct item *)tj_store_get(q->items, key);
}

static int find_or_create(struct tj_workqueue *q, const char *key, struct item **ret)
{
	struct item *it = find(q, key);
	size_t len;
	int r;

	if (it) {
		*ret = it;
		return 0;
	}
	len = strlen(key);
	if (len >= TJ_WORKQUEUE_KEY_MAX)
		return -ENAMETOOLONG;
	if (tj_store_len(q->items) >= q->config.max_items)
		return -E2BIG;
	it = calloc(1, sizeof(*it) + len + 1);
	if (!it)
		return -ENOMEM;
	memcpy(it->key, key, len + 1);
	r = tj_store_upsert(q->items, it, NULL);
	if (r < 0) {
		free(it);
		return r;
	}
	*ret = it;
	return 0;
}

/* Forgets an item that no longer carries any state. */
static void release(struct tj_workqueue *q, struct item *it)
{
	if (it->queued || it->dirty || it->processing || it->waiting || it->failures)
		return;
	tj_store_delete(q->items, it->key, NULL);
}

static void schedule_dispatch(struct tj_workqueue *q);

/* Observes seconds since since_ns in a histogram of the queue's metrics, if it has them. */
static void observe_since(const struct tj_workqueue *q, struct tj_metric *histogram,
                          uint64_t since_ns, uint64_t now_ns)
{
	if (q->config.metrics)
		tj_metric_observe(histogram, TJ_LABELS(q->config.name, q->config.name),
		                  (double)(now_ns - since_ns) / 1e9);
}

static void enqueue(struct tj_workqueue *q, struct item *it)
{
	it->queued = true;
	it->queued_ns = uv_hrtime();
	it->next = NULL;
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	q->stats.depth++;
	schedule_dispatch(q);
}

/* Ahead of every other key. */
static void push_front(struct tj_workqueue *q, struct item *it)
{
	it->queued = true;
	it->queued_ns = uv_hrtime();
	it->next = q->head;
	q->head = it;
	if (!q->tail)
		q->tail = it;
	q->stats.depth++;
	schedule_dispatch(q);
}

static void add_item(struct tj_workqueue *q, struct item *it)
{
	if (it->queued || it->dirty)
		return;
	q->stats.adds++;
	if (it->processing)
		it->dirty = true;
	else
		enqueue(q, it);
}

int tj_workqueue_add(struct tj_workqueue *q, const char *key)
{
	struct item *it;
	int r;

	if (q->shutting_down)
		return -ESHUTDOWN;
	r = find_or_create(q, key, &it);
	if (r < 0)
		return r;
	add_item(q, it);
	return 0;
}

int tj_workqueue_add_first(struct tj_workqueue *q, const char *key)
{
	struct item *it, *prev = NULL;
	int r;

	if (q->shutting_down)
		return -ESHUTDOWN;
	r = find_or_create(q, key, &it);
	if (r < 0)
		return r;
	it->first = true;
	if (it->processing || it->dirty) {
		/* It runs again as soon as its reconcile is done, ahead of the rest. */
		add_item(q, it);
		return 0;
	}
	if (it->queued) {
		/* Out of its place in the FIFO: a scan, for the few keys that jump the queue. */
		for (struct item *x = q->head; x != it; x = x->next)
			prev = x;
		if (prev)
			prev->next = it->next;
		else
			q->head = it->next;
		if (q->tail == it)
			q->tail = prev;
		q->stats.depth--;
	} else {
		q->stats.adds++;
	}
	push_front(q, it);
	return 0;
}

/* ---- the delay heap ---- */

static void heap_swap(struct tj_workqueue *q, size_t a, size_t b)
{
	struct item *t = q->heap[a];

	q->heap[a] = q->heap[b];
	q->heap[b] = t;
	q->heap[a]->heap_index = a;
	q->heap[b]->heap_index = b;
}

static void heap_up(struct tj_workqueue *q, size_t i)
{
	while (i > 0 && q->heap[(i - 1) / 2]->ready_at > q->heap[i]->ready_at) {
		heap_swap(q, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct tj_workqueue *q, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->heap_len && q->heap[l]->ready_at < q->heap[m]->ready_at)
			m = l;
		if (r < q->heap_len && q->heap[r]->ready_at < q->heap[m]->ready_at)
			m = r;
		if (m == i)
			return;
		heap_swap(q, i, m);
		i = m;
	}
}

static struct item *heap_pop(struct tj_workqueue *q)
{
	struct item *top = q->heap[0];

	q->heap_len--;
	if (q->heap_len > 0) {
		q->heap[0] = q->heap[q->heap_len];
		q->heap[0]->heap_index = 0;
		heap_down(q, 0);
	}
	top->waiting = false;
	q->stats.waiting--;
	return top;
}

static void on_timer(uv_timer_t *timer);

static void arm_timer(struct tj_workqueue *q)
{
	uint64_t now = uv_now(q->loop);

	if (q->heap_len == 0) {
		uv_timer_stop(&q->timer);
		return;
	}
	uv_timer_start(&q->timer, on_timer,
	               q->heap[0]->ready_at > now ? q->heap[0]->ready_at - now : 0, 0);
}

static void on_timer(uv_timer_t *timer)
{
	struct tj_workqueue *q = timer->data;
	uint64_t now = uv_now(q->loop);

	while (q->heap_len > 0 && q->heap[0]->ready_at <= now)
		add_item(q, heap_pop(q));
	arm_timer(q);
}

int tj_workqueue_add_after(struct tj_workqueue *q, const char *key, uint64_t delay_ms)
{
	uint64_t ready_at;
	struct item *it;
	int r;

	if (q->shutting_down)
		return -ESHUTDOWN;
	r = find_or_create(q, key, &it);
	if (r < 0)
		return r;
	q->stats.retries++;
	if (delay_ms == 0) {
		add_item(q, it);
		return 0;
	}
	ready_at = uv_now(q->loop) + delay_ms;
	if (it->waiting) {
		if (ready_at < it->ready_at) {
			it->ready_at = ready_at;
			heap_up(q, it->heap_index);
			arm_timer(q);
		}
		return 0;
	}
	if (q->heap_len == q->heap_cap) {
		size_t ncap = q->heap_cap ? q->heap_cap * 2 : 16;
		struct item **n = realloc(q->heap, ncap * sizeof(*n));

		if (!n) {
			release(q, it);
			return -ENOMEM;
		}
		q->heap = n;
		q->heap_cap = ncap;
	}
	it->ready_at = ready_at;
	it->waiting = true;
	it->heap_index = q->heap_len;
	q->heap[q->heap_len++] = it;
	q->stats.waiting++;
	heap_up(q, it->heap_index);
	arm_timer(q);
	return 0;
}

int tj_workqueue_add_rate_limited(struct tj_workqueue *q, const char *key)
{
	struct item *it;
	uint64_t delay;
	int r;

	if (q->shutting_down)
		return -ESHUTDOWN;
	r = find_or_create(q, key, &it);
	if (r < 0)
		return r;
	delay = tj_workqueue_backoff_ms(it->failures, q->config.base_delay_ms,
	                                q->config.max_delay_ms);
	it->failures++;
	return tj_workqueue_add_after(q, key, delay);
}

void tj_workqueue_forget(struct tj_workqueue *q, const char *key)
{
	struct item *it = find(q, key);

	if (!it)
		return;
	it->failures = 0;
	release(q, it);
}

unsigned tj_workqueue_num_requeues(const struct tj_workqueue *q, const char *key)
{
	const struct item *it = find(q, key);

	return it ? it->failures : 0;
}

/* ---- dispatch ---- */

static void close_handles(struct tj_workqueue *q);

/* Whether the key at the head may start: while fewer than max_in_flight keys are in flight,
 * and a key added first even past that, up to half as many again, since what it does (the
 * creates of an admitted gang) is what idle capacity waits for, and the keys in flight may be
 * slow bookkeeping. */
static bool may_start(const struct tj_workqueue *q, const struct item *it)
{
	unsigned max = q->config.max_in_flight;

	if (!it || q->shutting_down)
		return false;
	if (q->stats.in_flight < max)
		return true;
	return it->first && q->stats.in_flight < max + max / 2 + 1;
}

static void on_idle(uv_idle_t *idle)
{
	struct tj_workqueue *q = idle->data;

	for (int n = 0; n < DISPATCH_BATCH; n++) {
		struct item *it = q->head;

		if (!may_start(q, it))
			break;
		q->head = it->next;
		if (!q->head)
			q->tail = NULL;
		it->next = NULL;
		it->queued = false;
		it->processing = true;
		it->first = false;
		q->stats.depth--;
		q->stats.in_flight++;
		it->started_ns = uv_hrtime();
		if (q->config.metrics)
			observe_since(q, q->config.metrics->workqueue_queue_duration_seconds,
			              it->queued_ns, it->started_ns);
		q->config.process(q, it->key, q->config.userdata);
	}
	if (!may_start(q, q->head))
		uv_idle_stop(&q->idle);
}

static void schedule_dispatch(struct tj_workqueue *q)
{
	if (may_start(q, q->head))
		uv_idle_start(&q->idle, on_idle);
}

int tj_workqueue_done(struct tj_workqueue *q, const char *key)
{
	struct item *it = find(q, key);

	if (!it || !it->processing)
		return -ENOENT;
	it->processing = false;
	if (q->config.metrics)
		observe_since(q, q->config.metrics->workqueue_work_duration_seconds, it->started_ns,
		              uv_hrtime());
	q->stats.in_flight--;
	if (it->dirty && !q->shutting_down) {
		it->dirty = false;
		if (it->first)
			push_front(q, it);
		else
			enqueue(q, it);
	} else {
		it->dirty = false;
		release(q, it);
	}
	schedule_dispatch(q);
	if (q->shutting_down && q->stats.in_flight == 0)
		close_handles(q);
	return 0;
}

void tj_workqueue_stats(const struct tj_workqueue *q, struct tj_workqueue_stats *ret)
{
	uint64_t now = uv_hrtime();
	struct tj_store_iter iter;
	const struct item *it;

	*ret = q->stats;
	ret->unfinished_seconds = ret->longest_seconds = 0;
	if (q->stats.in_flight == 0)
		return;
	/* Only a scrape asks, and the keys held are those queued, in flight or with failures
	 * counted: a scan is cheaper than keeping the keys in flight in a list of their own. */
	tj_store_iter_init(q->items, &iter);
	while ((it = tj_store_iter_next(&iter))) {
		double s = (double)(now - it->started_ns) / 1e9;

		if (!it->processing)
			continue;
		ret->unfinished_seconds += s;
		if (s > ret->longest_seconds)
			ret->longest_seconds = s;
	}
}

/* ---- lifecycle ---- */

int tj_workqueue_new(uv_loop_t *loop, const struct tj_workqueue_config *config,
                     struct tj_workqueue **ret)
{
	struct tj_workqueue *q;
	int r;

	if (!config->process)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->loop = loop;
	q->config = *config;
	if (!q->config.max_in_flight)
		q->config.max_in_flight = 1;
	if (!q->config.base_delay_ms)
		q->config.base_delay_ms = TJ_WORKQUEUE_BASE_DELAY_MS;
	if (!q->config.max_delay_ms)
		q->config.max_delay_ms = TJ_WORKQUEUE_MAX_DELAY_MS;
	if (!q->config.max_items)
		q->config.max_items = TJ_WORKQUEUE_DEFAULT_ITEMS;
	r = tj_store_new(&item_ops, &q->items);
	if (r < 0)
		goto fail_queue;
	/* Neither call can fail for a valid loop. */
	uv_timer_init(loop, &q->timer);
	uv_idle_init(loop, &q->idle);
	q->timer.data = q;
	q->idle.data = q;
	q->open_handles = 2;
	*ret = q;
	return 0;

fail_queue:
	free(q);
	return r;
}

static void on_closed(uv_handle_t *handle)
{
	struct tj_workqueue *q = handle->data;

	if (--q->open_handles > 0)
		return;
	/* Last statement: the callback may free the queue. */
	if (q->drained)
		q->drained(q->drained_userdata);
}

static void close_handles(struct tj_workqueue *q)
{
	if (uv_is_closing((uv_handle_t *)&q->timer))
		return;
	uv_close((uv_handle_t *)&q->timer, on_closed);
	uv_close((uv_handle_t *)&q->idle, on_closed);
}

int tj_workqueue_shutdown(struct tj_workqueue *q, void (*drained)(void *userdata), void *userdata)
{
	struct item *it, *next;

	if (q->shutting_down)
		return -EALREADY;
	q->shutting_down = true;
	q->drained = drained;
	q->drained_userdata = userdata;
	for (it = q->head; it; it = next) {
		next = it->next;
		it->queued = false;
		it->next = NULL;
		release(q, it);
	}
	q->head = q->tail = NULL;
	q->stats.depth = 0;
	while (q->heap_len > 0)
		release(q, heap_pop(q));
	uv_timer_stop(&q->timer);
	uv_idle_stop(&q->idle);
	if (q->stats.in_flight == 0)
		close_handles(q);
	return 0;
}

struct tj_workqueue *tj_workqueue_free(struct tj_workqueue *q)
{
	if (!q)
		return NULL;
	tj_store_free(q->items);
	free(q->heap);
	free(q);
	return NULL;
}
