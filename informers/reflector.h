/* The reflector: keeps one store equal to the API server's state of one resource, as
 * client-go's Reflector and shared informer do together. It lists the collection page by page
 * (limit 500, continue) into a second store, swaps that in for the cache once the last page
 * is in (client-go's Replace: the cache never holds part of a list, and a list that fails
 * leaves it as it was), then watches from the list's resourceVersion with bookmarks and a
 * randomised timeout; it watches again when a stream ends, lists again after 410 Expired
 * (synthesising deletes for objects that vanished), and backs off like client-go (0.8 s
 * doubling to 30 s, jittered, reset after 2 min healthy). A list reply without an items
 * array is refused like a failed page, never read as an empty list. Or it lists by one
 * streaming watch (client-go's WatchList); the streaming lists of a set take turns.
 *
 * Handlers run after the store is updated, on the loop, one event at a time. They must be
 * quick (put a key into a workqueue) and must not free the reflector. Objects passed to them
 * are borrowed for the duration of the call.
 *
 * The decisions (what to do after a watch ended, how long to back off) are pure functions
 * below, which the tests call directly. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "informers/store.h"
#include "kube/request.h"
#include "kube/watch.h"

/* client-go reflector defaults (tools/cache/reflector.go). */
#define TJ_REFLECTOR_PAGE_SIZE          500
#define TJ_REFLECTOR_BACKOFF_INITIAL_MS 800
#define TJ_REFLECTOR_BACKOFF_CAP_MS     30000
#define TJ_REFLECTOR_BACKOFF_RESET_MS   120000
#define TJ_REFLECTOR_WATCH_TIMEOUT_MIN  300 /* seconds; the timeout is in [min, 2 min) */
/* Streaming lists in a row that may end before their initial events did, before the
 * reflector falls back to paginated lists for good. */
#define TJ_REFLECTOR_STREAM_TRIES 3
/* A streaming list that holds the turn (struct tj_list_turns) and has received no event for
 * this long passes the turn on, and goes on streaming beside the next one. */
#define TJ_REFLECTOR_TURN_IDLE_MS 5000

/* ---- pure decisions ---- */

/* client-go's exponential backoff manager: factor 2, jitter 1.0 (each wait is d * (1 + r)
 * for r in [0, 1)), capped, and back at the initial value when the previous wait began more
 * than reset_ms ago. */
struct tj_backoff {
	uint64_t initial_ms;
	uint64_t cap_ms;
	uint64_t reset_ms;
	uint64_t next_ms;       /* un-jittered duration of the next wait */
	uint64_t last_start_ms; /* loop time the previous wait was handed out */
	bool started;
};

void tj_backoff_init(struct tj_backoff *b, uint64_t initial_ms, uint64_t cap_ms, uint64_t reset_ms);

/* The next wait in milliseconds at loop time now_ms, with r in [0, 1) the jitter draw. */
uint64_t tj_backoff_next(struct tj_backoff *b, uint64_t now_ms, double r);

/* The watch timeoutSeconds for a draw r in [0, 1): [300, 600) as client-go. */
int tj_reflector_watch_timeout(double r);

/* How a watch ended, as the reflector saw it. */
struct tj_watch_outcome {
	int rc;                   /* as tj_watch_done_fn's resp->rc */
	long http_status;         /* of a refused watch (rc -EREMOTEIO), else 0 */
	int error_code;           /* Status.code of an ERROR event or of the refusal, 0 if none */
	const char *error_reason; /* Status.reason of the same, NULL if none */
	uint64_t duration_ms;
	uint64_t events; /* events received, bookmarks included */
};

enum tj_reflector_next {
	TJ_REFLECTOR_REWATCH,         /* watch again at once from the last resourceVersion */
	TJ_REFLECTOR_REWATCH_BACKOFF, /* the same after a backoff wait (connection refused, 429) */
	TJ_REFLECTOR_RELIST,          /* list again after a backoff wait, then watch */
};

/* client-go's rules: a stream the server closed is watched again at once, unless it was a
 * "very short watch" (under 1 s with no event), which counts as a failure and relists;
 * 410 Expired/Gone (HTTP or ERROR event) relists; connection refused and 429 back off and
 * watch again; any other failure relists after a backoff. A stream that broke after it had
 * worked (events or a second of life) is watched again at once, like a closed one. */
enum tj_reflector_next tj_reflector_after_watch(const struct tj_watch_outcome *o);

/* Whether a Status (code, reason) means the resourceVersion is too old: 410, Expired, Gone. */
bool tj_reflector_is_expired(int code, const char *reason);

/* ---- the reflector ---- */

/* How the reflector reaches the API server: list one page, open a watch, cancel either.
 * informers.h binds it to a kube client and a resource; tests bind it to fakes. The
 * semantics are those of tj_kube_list() and tj_watch_start(): callbacks on a later loop
 * iteration, never from inside the starting call. */
struct tj_listwatch {
	int (*list)(void *ctx, const struct tj_list_options *opts, tj_response_fn fn,
	            void *userdata, void **ret_call);
	void (*cancel_list)(void *call);
	int (*watch)(void *ctx, const struct tj_watch_options *opts, tj_watch_event_fn on_event,
	             tj_watch_done_fn on_done, void *userdata, void **ret_call);
	void (*cancel_watch)(void *call);
	void *ctx; /* borrowed */
};

/* Projects an API object (a list item or a watch event's object) into a new object for the
 * store: 0, -EINVAL if it is not a valid object of the kind (skipped), -ENOMEM. */
typedef int (*tj_project_fn)(const cJSON *obj, void **ret);

struct tj_reflector_handlers {
	void (*on_add)(const void *obj, void *userdata);
	/* old and new may carry the same resourceVersion after a relist (nothing changed).
	 * After a relist the handlers run once the whole list is in the store: adds and
	 * updates in no particular order, then the synthesised deletes. */
	void (*on_update)(const void *old, const void *new_obj, void *userdata);
	/* The last known state: the DELETED event's object, or the cached one for a delete
	 * synthesised after a relist. */
	void (*on_delete)(const void *obj, void *userdata);
	/* Once, after the first full list is in the store and its handlers have run. */
	void (*on_synced)(void *userdata);
	/* Each failure, as tj_reflector_last_error() then says it ("list pods: ..."), for the
	 * log; the reflector retries by itself. */
	void (*on_error)(const char *message, void *userdata);
	void *userdata;
};

/* Streaming lists that take turns: one at a time among the reflectors that share it, the
 * others waiting in the order they asked. The API server answers a streaming list's initial
 * events before the changes that arrive meanwhile; those wait in the watcher's buffer (100
 * events for nodes), and a watcher whose buffer stays full is closed for unresponsiveness.
 * Streams read side by side over one connection and one loop share its throughput: at
 * 150,000 pods and 5,000 nodes, the nodes' stream beside the pods' one was closed three
 * times in a row before its end. Plain watches and paginated lists take no turn. Zeroed to
 * start; the reflectors that share it must be freed before it. */
struct tj_list_turns {
	struct tj_reflector *holder;       /* streaming; NULL if none */
	struct tj_reflector *first, *last; /* waiting to stream */
};

struct tj_reflector_config {
	const char *name; /* for messages: "pods"; copied */
	struct tj_listwatch lw;
	const char *label_selector; /* copied; NULL = none */
	const char *field_selector; /* copied; NULL = none */
	tj_project_fn project;
	const struct tj_store_ops *store_ops; /* must outlive the reflector */
	struct tj_reflector_handlers handlers;
	long page_size;              /* 0 = TJ_REFLECTOR_PAGE_SIZE */
	uint64_t backoff_initial_ms; /* 0 = TJ_REFLECTOR_BACKOFF_INITIAL_MS */
	uint64_t backoff_cap_ms;     /* 0 = TJ_REFLECTOR_BACKOFF_CAP_MS */
	uint32_t seed;               /* of the jitter draws; 0 = from the clock */
	/* List by a streaming watch (sendInitialEvents, from the API server's watch cache,
	 * WatchList in client-go) and fall back to paginated lists if the server refuses it or
	 * it fails TJ_REFLECTOR_STREAM_TRIES times in a row. */
	bool streaming_list;
	struct tj_list_turns *turns; /* borrowed; NULL = streams whenever it lists */
	uint64_t turn_idle_ms;       /* 0 = TJ_REFLECTOR_TURN_IDLE_MS */
};

struct tj_reflector_stats {
	uint64_t lists;       /* full lists completed */
	uint64_t list_errors; /* pages that failed, or were refused (no items array) */
	uint64_t watches;     /* watches started */
	uint64_t events;      /* watch events received, bookmarks included */
	uint64_t skipped;     /* objects the projection refused */
	uint64_t synthesised_deletes;
	uint64_t streamed_lists;   /* of lists, those done by a streaming list */
	uint64_t stream_fallbacks; /* 1 once the reflector fell back to paginated lists */
};

struct tj_reflector;

int tj_reflector_new(uv_loop_t *loop, const struct tj_reflector_config *config,
                     struct tj_reflector **ret);

/* Starts the first list. -EALREADY if started. */
int tj_reflector_start(struct tj_reflector *r);

/* True once the first full list has landed in the store. */
bool tj_reflector_has_synced(const struct tj_reflector *r);

/* The cache. Read-only for everyone but the reflector. */
const struct tj_store *tj_reflector_store(const struct tj_reflector *r);

/* Stores an object that one of the controller's own writes returned (the answer of a status
 * patch), so that the next reconcile plans from it instead of the version before it, which
 * the watch may not have replaced yet, and meets no 409 Conflict. No handler runs: the
 * watch event of the same version, when it comes, runs them. Needs the store's
 * ops->version; a watch event older than the stored object is then ignored too (resource
 * versions compared as numbers, as the API server's own watch cache does; a version that is
 * not a number is never ignored). 0, or -EINVAL (no ops->version, or an object the
 * projection refuses), -ENOMEM. */
int tj_reflector_write_back(struct tj_reflector *r, const cJSON *obj);

/* The last resourceVersion seen (list, event or bookmark), "" before the first list. */
const char *tj_reflector_resource_version(const struct tj_reflector *r);

/* Whether the reflector is watching: a watch open after the last list landed, and no list,
 * streaming list or backoff wait in progress. Then *since (may be NULL) is when that watch
 * opened (uv_now, ms). While it is not, its cache may be behind the server by however long
 * the next backoff wait is (up to twice TJ_REFLECTOR_BACKOFF_CAP_MS), with no event to say
 * so. */
bool tj_reflector_watching(const struct tj_reflector *r, uint64_t *since);

/* The last failure, for a person ("list pods: 403 Forbidden: ..."), "" if none yet. */
const char *tj_reflector_last_error(const struct tj_reflector *r);

void tj_reflector_stats(const struct tj_reflector *r, struct tj_reflector_stats *ret);

/* Cancels the list or watch in flight (no handler runs after this) and releases the
 * reflector and its store; memory is released from a libuv close callback, so the loop must
 * run once more. Not from inside a handler. Accepts NULL; returns NULL. */
struct tj_reflector *tj_reflector_free(struct tj_reflector *r);
