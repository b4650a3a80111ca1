/* The workqueue between the informers and the reconcilers, with client-go's guarantees
 * (util/workqueue): keys are handed out in FIFO order; a key queued several times is queued
 * once; a key is never processed twice at once (a key added while it is processed runs again
 * after tj_workqueue_done()); per-key exponential backoff for failures, reset by forget;
 * delayed adds on libuv timers.
 *
 * Everything runs on one libuv loop. Processing is asynchronous: the queue calls process()
 * with a key, the reconcile runs (its HTTP requests on the loop), and the owner calls
 * tj_workqueue_done() when it is finished. Concurrency is the number of keys in flight
 * (max_in_flight), not threads. process() is never called from inside tj_workqueue_add() or
 * tj_workqueue_done(), always from the loop, so a handler that adds a key never recurses into
 * a reconcile. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

struct tj_std_metrics;

/* client-go's DefaultControllerRateLimiter, per item: 5 ms doubling up to 1000 s. */
#define TJ_WORKQUEUE_BASE_DELAY_MS 5
#define TJ_WORKQUEUE_MAX_DELAY_MS  (1000 * 1000)
/* Longest key ("namespace/name"), and default bound on distinct keys held. */
#define TJ_WORKQUEUE_KEY_MAX       320
#define TJ_WORKQUEUE_DEFAULT_ITEMS (1 << 20)

struct tj_workqueue;

struct tj_workqueue_config {
	/* Called on the loop with a key to process. key stays valid until
	 * tj_workqueue_done(q, key). Required. */
	void (*process)(struct tj_workqueue *q, const char *key, void *userdata);
	void *userdata;
	unsigned max_in_flight; /* keys processed at once; 0 means 1 (controller-runtime) */
	uint64_t base_delay_ms; /* 0 means TJ_WORKQUEUE_BASE_DELAY_MS */
	uint64_t max_delay_ms;  /* 0 means TJ_WORKQUEUE_MAX_DELAY_MS */
	size_t max_items;       /* distinct keys held at once; 0 means the default */
	/* Where the queue observes how long keys wait and are processed
	 * (workqueue_queue_duration_seconds, workqueue_work_duration_seconds, with name as both
	 * the name and the controller label); borrowed, NULL observes nothing. */
	const struct tj_std_metrics *metrics;
	const char *name; /* borrowed; required with metrics */
};

/* Counters for the workqueue_* metrics. */
struct tj_workqueue_stats {
	uint64_t adds;    /* tj_workqueue_add() calls that queued a key (workqueue_adds_total) */
	uint64_t retries; /* add_after and add_rate_limited calls (workqueue_retries_total) */
	size_t depth;     /* keys queued, not yet handed out (workqueue_depth) */
	size_t in_flight; /* keys being processed */
	size_t waiting;   /* keys waiting for a delayed add */
	/* Seconds the keys in flight have been processed, summed and the longest
	 * (workqueue_unfinished_work_seconds, workqueue_longest_running_processor_seconds). */
	double unfinished_seconds;
	double longest_seconds;
};

int tj_workqueue_new(uv_loop_t *loop, const struct tj_workqueue_config *config,
                     struct tj_workqueue **ret);

/* Queues key unless it is already queued; if it is being processed, it is queued again
 * when done. -ESHUTDOWN after shutdown, -ENAMETOOLONG, -E2BIG (max_items), -ENOMEM. */
int tj_workqueue_add(struct tj_workqueue *q, const char *key);

/* As tj_workqueue_add, but ahead of every queued key (a queued key moves to the front; a key
 * in flight comes back at the front when done), and it may start while every slot is taken,
 * up to half of max_in_flight more: for the work that capacity waits on, such as an admitted
 * gang whose pods are still to be created, which must not wait behind thousands of status
 * refreshes nor for their slow writes to end. */
int tj_workqueue_add_first(struct tj_workqueue *q, const char *key);

/* Adds key after delay_ms (0: at once). If the key already waits, the earlier time wins. */
int tj_workqueue_add_after(struct tj_workqueue *q, const char *key, uint64_t delay_ms);

/* Adds key after its next backoff delay, and counts one more failure for it. */
int tj_workqueue_add_rate_limited(struct tj_workqueue *q, const char *key);

/* Clears the failure count of key (the backoff starts again from the base). */
void tj_workqueue_forget(struct tj_workqueue *q, const char *key);

/* Ends the processing of key; if it was added meanwhile, it is queued again. -ENOENT if key
 * is not being processed. */
int tj_workqueue_done(struct tj_workqueue *q, const char *key);

void tj_workqueue_stats(const struct tj_workqueue *q, struct tj_workqueue_stats *ret);

/* Orderly shutdown: adds are refused from now on, queued and delayed keys are dropped (the
 * reconciliation is level-based, so the next leader loses nothing), the keys in flight run
 * to their tj_workqueue_done(), and then, once the queue's libuv handles are closed,
 * drained(userdata) is called. It may call tj_workqueue_free(). Calling it twice is
 * -EALREADY. */
int tj_workqueue_shutdown(struct tj_workqueue *q, void (*drained)(void *userdata), void *userdata);

/* Frees a queue whose shutdown has drained (its libuv handles are closed). Accepts NULL. */
struct tj_workqueue *tj_workqueue_free(struct tj_workqueue *q);
