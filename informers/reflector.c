#include "informers/reflector.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informers/projection.h"

/* ---- pure decisions ---- */

void tj_backoff_init(struct tj_backoff *b, uint64_t initial_ms, uint64_t cap_ms, uint64_t reset_ms)
{
	*b = (struct tj_backoff){
		.initial_ms = initial_ms,
		.cap_ms = cap_ms,
		.reset_ms = reset_ms,
		.next_ms = initial_ms,
	};
}

uint64_t tj_backoff_next(struct tj_backoff *b, uint64_t now_ms, double r)
{
	uint64_t d;

	/* client-go resets the backoff when the previous wait began more than the reset
	 * period ago: after two healthy minutes a failure waits the initial time again. */
	if (!b->started || now_ms - b->last_start_ms > b->reset_ms)
		b->next_ms = b->initial_ms;
	b->started = true;
	b->last_start_ms = now_ms;
	d = b->next_ms;
	b->next_ms = d * 2 < b->cap_ms ? d * 2 : b->cap_ms;
	if (r < 0 || r >= 1)
		r = 0;
	return d + (uint64_t)(r * (double)d);
}

int tj_reflector_watch_timeout(double r)
{
	if (r < 0 || r >= 1)
		r = 0;
	return TJ_REFLECTOR_WATCH_TIMEOUT_MIN + (int)(r * TJ_REFLECTOR_WATCH_TIMEOUT_MIN);
}

bool tj_reflector_is_expired(int code, const char *reason)
{
	/* 410 with reason Expired (watch cache), Gone (servers up to 1.17), or a bare 410. */
	return code == 410 ||
	       (reason && (strcmp(reason, "Expired") == 0 || strcmp(reason, "Gone") == 0));
}

enum tj_reflector_next tj_reflector_after_watch(const struct tj_watch_outcome *o)
{
	int code = o->error_code ? o->error_code : (int)o->http_status;
	bool failed = o->error_code || o->error_reason || o->rc == -EREMOTEIO;

	if (failed) {
		if (tj_reflector_is_expired(code, o->error_reason))
			return TJ_REFLECTOR_RELIST;
		if (code == 429)
			return TJ_REFLECTOR_REWATCH_BACKOFF;
		/* client-go retries 500 only within MaxInternalErrorRetryDuration, which is 0
		 * by default: everything else ends ListAndWatch and relists. */
		return TJ_REFLECTOR_RELIST;
	}
	if (o->rc == 0) {
		if (o->duration_ms < 1000 && o->events == 0)
			return TJ_REFLECTOR_RELIST; /* "very short watch" */
		return TJ_REFLECTOR_REWATCH;
	}
	if (o->rc == -ECONNREFUSED)
		return TJ_REFLECTOR_REWATCH_BACKOFF;
	/* A malformed or oversized event would come back on every rewatch from the same
	 * resourceVersion, and our own failure (out of memory) needs a fresh start. */
	if (o->rc == -EBADMSG || o->rc == -EMSGSIZE || o->rc == -ENOMEM)
		return TJ_REFLECTOR_RELIST;
	if (o->events > 0 || o->duration_ms >= 1000)
		return TJ_REFLECTOR_REWATCH;
	return TJ_REFLECTOR_RELIST;
}

/* ---- the reflector ---- */

struct tj_reflector {
	uv_loop_t *loop; /* borrowed */
	uv_timer_t timer;
	char *name;           /* owned */
	char *label_selector; /* owned; NULL = none */
	char *field_selector; /* owned; NULL = none */
	struct tj_listwatch lw;
	tj_project_fn project;
	struct tj_reflector_handlers handlers;
	long page_size;
	const struct tj_store_ops *ops; /* borrowed */
	struct tj_store *store;         /* owned */
	struct tj_store *relist;        /* owned; the list in progress gathers here, NULL if none */
	struct tj_backoff backoff;
	uint64_t rng;
	enum tj_reflector_next pending; /* what the timer starts */
	bool started, synced;
	/* The streaming list (a watch with sendInitialEvents, answered from the watch cache):
	 * tried first when configured; streaming while the watch in flight gathers the initial
	 * events into relist; off for good once the server refused it or it failed
	 * TJ_REFLECTOR_STREAM_TRIES times in a row. */
	bool stream, streaming, stream_off;
	unsigned stream_failures;
	struct tj_list_turns *turns;       /* borrowed; NULL if none */
	struct tj_reflector *next_in_turn; /* in turns' waiting line */
	bool waiting_turn;
	uint64_t turn_events; /* watch_events at the last check of the holder's progress */
	uint64_t turn_idle_ms;

	char *rv;             /* owned; last resourceVersion seen, NULL before the first list */
	char *list_rv;        /* owned; resourceVersion of the list in progress */
	char *continue_token; /* owned; of the next page, NULL on the first */
	void *list_call;      /* borrowed; the page request in flight */
	void *watch_call;     /* borrowed; the watch in flight */
	uint64_t watch_start_ms;
	uint64_t watch_events;
	int watch_error_code;
	char *watch_error_reason; /* owned; of an ERROR event */
	char last_error[256];
	struct tj_reflector_stats stats;
};

static double draw(struct tj_reflector *r)
{
	/* xorshift64*: plenty for jitter, and reproducible from the seed in tests. */
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return (double)((r->rng * 2685821657736338717ull) >> 11) / (double)(1ull << 53);
}

static int set_string(char **field, const char *s)
{
	char *copy;

	if (*field && s && strcmp(*field, s) == 0)
		return 0;
	copy = s ? strdup(s) : NULL;
	if (s && !copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

static void fail(struct tj_reflector *r, const char *what, const char *error)
{
	snprintf(r->last_error, sizeof(r->last_error), "%s %s: %s", what, r->name, error);
	if (r->handlers.on_error)
		r->handlers.on_error(r->last_error, r->handlers.userdata);
}

static void start_list(struct tj_reflector *r);
static void start_watch(struct tj_reflector *r);

static void on_timer(uv_timer_t *timer)
{
	struct tj_reflector *r = timer->data;

	if (r->pending == TJ_REFLECTOR_RELIST)
		start_list(r);
	else
		start_watch(r);
}

/* Waits a backoff step, then relists or watches again. */
static void schedule(struct tj_reflector *r, enum tj_reflector_next next)
{
	uint64_t delay;

	if (next == TJ_REFLECTOR_REWATCH) {
		start_watch(r);
		return;
	}
	delay = tj_backoff_next(&r->backoff, uv_now(r->loop), draw(r));
	r->pending = next;
	uv_timer_start(&r->timer, on_timer, delay, 0);
}

/* Whether resource version a is newer than b, both numbers; false when either is not. */
static bool version_newer(const char *a, const char *b)
{
	char *end_a, *end_b;
	unsigned long long va, vb;

	if (!a || !b || !*a || !*b)
		return false;
	errno = 0;
	va = strtoull(a, &end_a, 10);
	vb = strtoull(b, &end_b, 10);
	return errno == 0 && !*end_a && !*end_b && va > vb;
}

/* The stored object with obj's key, which obj would replace, or NULL. */
static const void *stored_twin(const struct tj_reflector *r, const void *obj)
{
	char key[TJ_STORE_KEY_MAX];

	return r->ops->key(obj, key, sizeof(key)) == 0 ? tj_store_get(r->store, key) : NULL;
}

/* The stored object that obj would replace is newer (a write-back the watch has not caught
 * up with). */
static bool stored_is_newer(const struct tj_reflector *r, const void *obj)
{
	const void *cur = r->ops->version ? stored_twin(r, obj) : NULL;

	return cur && version_newer(r->ops->version(cur), r->ops->version(obj));
}

/* Puts the projected object of a watch event into the store and tells the handlers. On
 * success the store owns obj; on failure the caller still does. An event older than the
 * stored object (which a write-back put there) is dropped. */
static int store_object(struct tj_reflector *r, void *obj)
{
	void *old = NULL;
	int rc;

	if (stored_is_newer(r, obj)) {
		r->ops->free(obj);
		return 0;
	}
	rc = tj_store_upsert(r->store, obj, &old);
	if (rc < 0)
		return rc;
	if (old) {
		if (r->handlers.on_update)
			r->handlers.on_update(old, obj, r->handlers.userdata);
		r->ops->free(old);
	} else if (r->handlers.on_add) {
		r->handlers.on_add(obj, r->handlers.userdata);
	}
	return 0;
}

/* Projects an API object: 1 with *ret set, 0 if the projection refuses it (counted and
 * skipped, as client-go skips objects of the wrong type), or -ENOMEM. */
static int project(struct tj_reflector *r, const cJSON *item, void **ret)
{
	int rc = r->project(item, ret);

	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		r->stats.skipped++;
		return 0;
	}
	return 1;
}

/* Puts obj into store (the live one for an event, the relist's for a list item): 0, or
 * -ENOMEM (the caller starts over). An object whose key does not fit is counted and
 * skipped. obj is the store's or freed. */
static int keep_object(struct tj_reflector *r, struct tj_store *store, void *obj)
{
	int rc = store == r->store ? store_object(r, obj) : tj_store_upsert(store, obj, NULL);

	if (rc < 0) {
		r->ops->free(obj);
		if (rc == -ENOMEM)
			return rc;
		r->stats.skipped++;
	}
	return 0;
}

/* An ADDED or MODIFIED event, or a list item for the relist's store. */
static int apply_object(struct tj_reflector *r, struct tj_store *store, const cJSON *item)
{
	void *obj;
	int rc = project(r, item, &obj);

	return rc <= 0 ? rc : keep_object(r, store, obj);
}

/* A DELETED event: the handlers get the event's object, the last state the server had. */
static int delete_object(struct tj_reflector *r, const cJSON *item)
{
	char key[TJ_STORE_KEY_MAX];
	void *obj, *old = NULL;
	int rc = project(r, item, &obj);

	if (rc <= 0)
		return rc;
	if (r->ops->key(obj, key, sizeof(key)) == 0) {
		tj_store_delete(r->store, key, &old);
		if (r->handlers.on_delete)
			r->handlers.on_delete(obj, r->handlers.userdata);
	} else {
		r->stats.skipped++;
	}
	if (old)
		r->ops->free(old);
	r->ops->free(obj);
	return 0;
}

/* Tells the handlers what the swapped-in relist changed: old holds the contents before it.
 * Each listed object is an update of its twin in old, or an add; what is left in old
 * vanished while the reflector was not watching, and gets a synthesised delete. The list
 * replaces every twin, even one that a write-back made newer meanwhile: it marks what
 * exists, and the watch from its resourceVersion brings the newer version again. Twins are
 * freed as they are met, so that the two copies of the cache shrink back to one during the
 * pass. */
static void announce_relist(struct tj_reflector *r, struct tj_store *old)
{
	char key[TJ_STORE_KEY_MAX];
	struct tj_store_iter it;
	const void *obj;

	tj_store_iter_init(r->store, &it);
	while ((obj = tj_store_iter_next(&it))) {
		void *twin = NULL;

		if (r->ops->key(obj, key, sizeof(key)) == 0)
			tj_store_delete(old, key, &twin);
		if (!twin) {
			if (r->handlers.on_add)
				r->handlers.on_add(obj, r->handlers.userdata);
			continue;
		}
		if (r->handlers.on_update)
			r->handlers.on_update(twin, obj, r->handlers.userdata);
		r->ops->free(twin);
	}
	tj_store_iter_init(old, &it);
	while ((obj = tj_store_iter_next(&it))) {
		r->stats.synthesised_deletes++;
		if (r->handlers.on_delete)
			r->handlers.on_delete(obj, r->handlers.userdata);
	}
}

/* Forgets the list in progress: its continue token and the contents it has gathered. */
static void drop_relist(struct tj_reflector *r)
{
	free(r->continue_token);
	r->continue_token = NULL;
	r->relist = tj_store_free(r->relist);
}

/* A page failed: the live store stays as it was, and the whole list starts again after a
 * backoff wait, from its first page. */
static void abort_list(struct tj_reflector *r, const char *error)
{
	r->stats.list_errors++;
	fail(r, "list", error);
	drop_relist(r);
	schedule(r, TJ_REFLECTOR_RELIST);
}

/* The relist is complete: its contents replace the cache at once (the stores have the same
 * ops, so the swap cannot fail), then the handlers hear of the difference. */
static void land_relist(struct tj_reflector *r)
{
	tj_store_swap(r->store, r->relist);
	announce_relist(r, r->relist);
	drop_relist(r);
	r->stats.lists++;
	if (!r->synced) {
		r->synced = true;
		if (r->handlers.on_synced)
			r->handlers.on_synced(r->handlers.userdata);
	}
}

static void request_page(struct tj_reflector *r);

static void on_page(struct tj_response *resp, void *userdata)
{
	struct tj_reflector *r = userdata;
	const cJSON *meta, *items, *item;
	const char *cont;
	int rc;

	r->list_call = NULL;
	if (resp->rc < 0) {
		abort_list(r, resp->error);
		return;
	}
	/* A list reply without its items is no empty list: taken as one, it would delete the
	 * whole cache. */
	items = tj_field(resp->body, "items");
	if (!cJSON_IsArray(items)) {
		abort_list(r, "the reply has no items array");
		return;
	}
	meta = tj_field(resp->body, "metadata");
	if (!r->continue_token) {
		/* Every page shares the first page's resourceVersion: one consistent snapshot. */
		rc = set_string(&r->list_rv, tj_field_string(meta, "resourceVersion"));
		if (rc < 0)
			goto fail;
		rc = tj_store_new(r->ops, &r->relist);
		if (rc < 0)
			goto fail;
	}
	/* The pages gather aside: until the last one, the cache and the handlers see the
	 * contents before the list, never a part of it. */
	cJSON_ArrayForEach(item, items)
	{
		rc = apply_object(r, r->relist, item);
		if (rc < 0)
			goto fail;
	}
	cont = tj_field_string(meta, "continue");
	if (cont && *cont) {
		rc = set_string(&r->continue_token, cont);
		if (rc < 0)
			goto fail;
		request_page(r);
		return;
	}
	rc = set_string(&r->rv, r->list_rv ? r->list_rv : "");
	if (rc < 0)
		goto fail;
	land_relist(r);
	start_watch(r);
	return;

fail:
	abort_list(r, strerror(-rc));
}

static void request_page(struct tj_reflector *r)
{
	/* Relists read the most recent state (no resourceVersion): a consistent, paginated
	 * snapshot that is never older than what the store already holds. client-go's first
	 * list asks for "0" from the watch cache instead, which may go back in time, and its
	 * paginated relists fall back to this after "expired" anyway. */
	struct tj_list_options opts = {
		.label_selector = r->label_selector,
		.field_selector = r->field_selector,
		.limit = r->page_size,
		.continue_token = r->continue_token,
	};
	int rc;

	rc = r->lw.list(r->lw.ctx, &opts, on_page, r, &r->list_call);
	if (rc < 0)
		abort_list(r, strerror(-rc));
}

static void start_stream(struct tj_reflector *r);

/* ---- turns of streaming lists ---- */

static void release_turn(struct tj_reflector *r);

/* Every idle period while r streams holding the turn: if its stream has received nothing
 * since the last check, r passes the turn on and goes on streaming. */
static void on_turn_check(uv_timer_t *timer)
{
	struct tj_reflector *r = timer->data;

	if (r->watch_events == r->turn_events) {
		uv_timer_stop(&r->timer);
		release_turn(r);
		return;
	}
	r->turn_events = r->watch_events;
}

/* Whether r may stream now; if not, it waits in line and lists when its turn comes. */
static bool take_turn(struct tj_reflector *r)
{
	struct tj_list_turns *t = r->turns;

	if (!t || t->holder == r)
		return true;
	if (!t->holder) {
		t->holder = r;
		return true;
	}
	if (!r->waiting_turn) {
		r->waiting_turn = true;
		r->next_in_turn = NULL;
		if (t->last)
			t->last->next_in_turn = r;
		else
			t->first = r;
		t->last = r;
	}
	return false;
}

/* The holder's initial events are in, or its stream ended: the first in line lists next,
 * from its timer (a new request is not opened from inside another one's callback). */
static void release_turn(struct tj_reflector *r)
{
	struct tj_list_turns *t = r->turns;
	struct tj_reflector *next;

	if (!t || t->holder != r)
		return;
	next = t->first;
	t->holder = next;
	if (!next)
		return;
	t->first = next->next_in_turn;
	if (!t->first)
		t->last = NULL;
	next->waiting_turn = false;
	next->next_in_turn = NULL;
	next->pending = TJ_REFLECTOR_RELIST;
	uv_timer_start(&next->timer, on_timer, 0, 0);
}

/* A reflector that goes away leaves the line, or passes the turn on. */
static void leave_turns(struct tj_reflector *r)
{
	struct tj_list_turns *t = r->turns;
	struct tj_reflector **p, *prev = NULL;

	if (!t)
		return;
	release_turn(r);
	if (!r->waiting_turn)
		return;
	/* r is in the line: it waits. */
	for (p = &t->first; *p != r; p = &(*p)->next_in_turn)
		prev = *p;
	*p = r->next_in_turn;
	if (t->last == r)
		t->last = prev;
	r->waiting_turn = false;
}

/* r's streaming list is over (its initial events are in, or it failed): the check of its
 * progress stops and the turn passes on. */
static void stream_over(struct tj_reflector *r)
{
	r->streaming = false;
	uv_timer_stop(&r->timer);
	release_turn(r);
}

static void start_list(struct tj_reflector *r)
{
	drop_relist(r);
	if (!r->stream || r->stream_off)
		request_page(r);
	else if (take_turn(r))
		start_stream(r);
}

/* The bookmark that ends a streaming list's initial events. */
static bool initial_events_end(const cJSON *object)
{
	const char *end =
	        tj_field_string(object, "metadata", "annotations", "k8s.io/initial-events-end");

	return end && strcmp(end, "true") == 0;
}

/* A DELETED event among a streaming list's initial events: the object leaves the relist. */
static int unlist_object(struct tj_reflector *r, const cJSON *item)
{
	char key[TJ_STORE_KEY_MAX];
	void *obj;
	int rc = project(r, item, &obj);

	if (rc <= 0)
		return rc;
	if (r->ops->key(obj, key, sizeof(key)) == 0)
		tj_store_delete(r->relist, key, NULL);
	r->ops->free(obj);
	return 0;
}

/* The initial events are all in: the relist lands as a paginated one does, and the same
 * watch goes on from the bookmark's resourceVersion. */
static int end_stream(struct tj_reflector *r, const char *rv)
{
	int rc = set_string(&r->rv, rv ? rv : "");

	if (rc < 0)
		return rc;
	stream_over(r);
	r->stream_failures = 0;
	r->stats.streamed_lists++;
	land_relist(r);
	return 0;
}

/* A streaming list ended before its initial events did: the cache stays as it was. A server
 * that refuses the parameters (422 Invalid without the WatchList feature, 400, or 405/501
 * from something in between) gets paginated lists from now on, and so does one whose
 * streams keep ending early. Other refusals (403, 404 before a CRD exists, 410, 429, 5xx)
 * would meet a paginated list too: it streams again after the wait. */
static void stream_failed(struct tj_reflector *r, const struct tj_response *resp)
{
	long http = resp->rc == -EREMOTEIO ? resp->http_status : 0;
	bool refused = http == 400 || http == 405 || http == 422 || http == 501;

	stream_over(r);
	r->stats.list_errors++;
	fail(r, "streaming list",
	     resp->rc < 0 ? resp->error : "the stream ended before its initial events did");
	drop_relist(r);
	if (refused || (http == 0 && ++r->stream_failures >= TJ_REFLECTOR_STREAM_TRIES)) {
		r->stream_off = true;
		r->stats.stream_fallbacks++;
		fail(r, "streaming list", "falling back to paginated lists");
	}
	schedule(r, TJ_REFLECTOR_RELIST);
}

static int on_event(struct tj_watch_event *ev, void *userdata)
{
	struct tj_reflector *r = userdata;
	const char *rv = tj_field_string(ev->object, "metadata", "resourceVersion");
	int rc = 0;

	r->watch_events++;
	r->stats.events++;
	switch (ev->type) {
	case TJ_WATCH_ERROR:
		r->watch_error_code = ev->status.code;
		rc = set_string(&r->watch_error_reason,
		                ev->status.reason ? ev->status.reason : "Unknown");
		if (rc == 0)
			fail(r, "watch", ev->status.message ? ev->status.message : "ERROR event");
		return rc;
	case TJ_WATCH_BOOKMARK:
		if (r->streaming && initial_events_end(ev->object))
			return end_stream(r, rv);
		break;
	case TJ_WATCH_ADDED:
	case TJ_WATCH_MODIFIED:
		rc = apply_object(r, r->streaming ? r->relist : r->store, ev->object);
		break;
	case TJ_WATCH_DELETED:
		rc = r->streaming ? unlist_object(r, ev->object) : delete_object(r, ev->object);
		break;
	}
	/* Every event, bookmarks included, moves the resourceVersion the next watch starts
	 * from; a streaming list's initial events wait for the bookmark that ends them. */
	if (rc == 0 && rv && *rv && !r->streaming)
		rc = set_string(&r->rv, rv);
	return rc;
}

static void on_watch_done(struct tj_response *resp, void *userdata)
{
	struct tj_reflector *r = userdata;
	struct tj_watch_outcome o = {
		.rc = resp->rc,
		.http_status = resp->rc == -EREMOTEIO ? resp->http_status : 0,
		.error_code = r->watch_error_code,
		.error_reason = r->watch_error_reason,
		.duration_ms = uv_now(r->loop) - r->watch_start_ms,
		.events = r->watch_events,
	};
	enum tj_reflector_next next;

	r->watch_call = NULL;
	if (r->streaming) {
		free(r->watch_error_reason);
		r->watch_error_reason = NULL;
		r->watch_error_code = 0;
		stream_failed(r, resp);
		return;
	}
	if (resp->rc == -EREMOTEIO) {
		o.error_code = resp->status.code ? resp->status.code : (int)resp->http_status;
		o.error_reason = resp->status.reason;
	}
	if (resp->rc < 0)
		fail(r, "watch", resp->error);
	next = tj_reflector_after_watch(&o);
	free(r->watch_error_reason);
	r->watch_error_reason = NULL;
	r->watch_error_code = 0;
	schedule(r, next);
}

/* Opens a watch with opts (the selectors, timeout and bookmarks filled in here): 0, or the
 * code the open failed with. */
static int open_watch(struct tj_reflector *r, struct tj_watch_options *opts)
{
	opts->label_selector = r->label_selector;
	opts->field_selector = r->field_selector;
	opts->timeout_seconds = tj_reflector_watch_timeout(draw(r));
	opts->allow_bookmarks = true;
	r->watch_start_ms = uv_now(r->loop);
	r->watch_events = 0;
	r->stats.watches++;
	return r->lw.watch(r->lw.ctx, opts, on_event, on_watch_done, r, &r->watch_call);
}

static void start_watch(struct tj_reflector *r)
{
	struct tj_watch_options opts = { .resource_version = r->rv };
	int rc = open_watch(r, &opts);

	if (rc < 0) {
		fail(r, "watch", strerror(-rc));
		schedule(r, TJ_REFLECTOR_RELIST);
	}
}

/* A list as a watch (client-go's WatchList): every object as an ADDED event from the watch
 * cache, then a bookmark that ends the initial events, and the same stream goes on as the
 * watch. No resourceVersion: the state is at least as new as a consistent read, never older
 * than the cache. The events gather aside, as the pages of a list do. */
static void start_stream(struct tj_reflector *r)
{
	struct tj_watch_options opts = { .resource_version_match = "NotOlderThan",
		                         .send_initial_events = true };
	int rc = tj_store_new(r->ops, &r->relist);

	if (rc < 0) {
		abort_list(r, strerror(-rc));
		return;
	}
	r->streaming = true;
	rc = open_watch(r, &opts);
	if (rc < 0) {
		stream_over(r);
		abort_list(r, strerror(-rc));
		return;
	}
	if (r->turns) {
		r->turn_events = 0;
		uv_timer_start(&r->timer, on_turn_check, r->turn_idle_ms, r->turn_idle_ms);
	}
}

int tj_reflector_new(uv_loop_t *loop, const struct tj_reflector_config *config,
                     struct tj_reflector **ret)
{
	struct tj_reflector *r;
	int rc = -ENOMEM;

	if (!config->lw.list || !config->lw.watch || !config->project || !config->store_ops)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->loop = loop;
	r->lw = config->lw;
	r->ops = config->store_ops;
	r->project = config->project;
	r->handlers = config->handlers;
	r->page_size = config->page_size ? config->page_size : TJ_REFLECTOR_PAGE_SIZE;
	r->stream = config->streaming_list;
	r->turns = config->turns;
	r->turn_idle_ms = config->turn_idle_ms ? config->turn_idle_ms : TJ_REFLECTOR_TURN_IDLE_MS;
	r->rng = config->seed ? config->seed : uv_hrtime() | 1;
	tj_backoff_init(&r->backoff,
	                config->backoff_initial_ms ? config->backoff_initial_ms
	                                           : TJ_REFLECTOR_BACKOFF_INITIAL_MS,
	                config->backoff_cap_ms ? config->backoff_cap_ms
	                                       : TJ_REFLECTOR_BACKOFF_CAP_MS,
	                TJ_REFLECTOR_BACKOFF_RESET_MS);
	if (set_string(&r->name, config->name ? config->name : "objects") < 0 ||
	    set_string(&r->label_selector, config->label_selector) < 0 ||
	    set_string(&r->field_selector, config->field_selector) < 0)
		goto fail_strings;
	rc = tj_store_new(config->store_ops, &r->store);
	if (rc < 0)
		goto fail_strings;
	uv_timer_init(loop, &r->timer);
	r->timer.data = r;
	*ret = r;
	return 0;

fail_strings:
	free(r->name);
	free(r->label_selector);
	free(r->field_selector);
	free(r);
	return rc;
}

int tj_reflector_start(struct tj_reflector *r)
{
	if (r->started)
		return -EALREADY;
	r->started = true;
	start_list(r);
	return 0;
}

bool tj_reflector_has_synced(const struct tj_reflector *r)
{
	return r->synced;
}

const struct tj_store *tj_reflector_store(const struct tj_reflector *r)
{
	return r->store;
}

int tj_reflector_write_back(struct tj_reflector *r, const cJSON *obj)
{
	const void *cur;
	void *proj, *old = NULL;
	int rc;

	if (!r->ops->version)
		return -EINVAL;
	rc = r->project(obj, &proj);
	if (rc < 0)
		return rc == -ENOMEM ? rc : -EINVAL;
	/* Only over an older version that the cache holds: a write-back never steps back, and
	 * never brings back an object that a DELETED event has removed meanwhile. */
	cur = stored_twin(r, proj);
	if (!cur || !version_newer(r->ops->version(proj), r->ops->version(cur))) {
		r->ops->free(proj);
		return 0;
	}
	rc = tj_store_upsert(r->store, proj, &old);
	if (rc < 0) {
		r->ops->free(proj);
		return rc;
	}
	if (old)
		r->ops->free(old);
	return 0;
}

const char *tj_reflector_resource_version(const struct tj_reflector *r)
{
	return r->rv ? r->rv : "";
}

const char *tj_reflector_last_error(const struct tj_reflector *r)
{
	return r->last_error;
}

bool tj_reflector_watching(const struct tj_reflector *r, uint64_t *since)
{
	if (!r->watch_call || r->streaming || r->relist)
		return false;
	if (since)
		*since = r->watch_start_ms;
	return true;
}

void tj_reflector_stats(const struct tj_reflector *r, struct tj_reflector_stats *ret)
{
	*ret = r->stats;
}

static void on_closed(uv_handle_t *handle)
{
	struct tj_reflector *r = handle->data;

	tj_store_free(r->store);
	tj_store_free(r->relist);
	free(r->name);
	free(r->label_selector);
	free(r->field_selector);
	free(r->rv);
	free(r->list_rv);
	free(r->continue_token);
	free(r->watch_error_reason);
	free(r);
}

struct tj_reflector *tj_reflector_free(struct tj_reflector *r)
{
	if (!r)
		return NULL;
	if (r->list_call)
		r->lw.cancel_list(r->list_call);
	if (r->watch_call)
		r->lw.cancel_watch(r->watch_call);
	r->list_call = r->watch_call = NULL;
	leave_turns(r);
	uv_close((uv_handle_t *)&r->timer, on_closed);
	return NULL;
}
