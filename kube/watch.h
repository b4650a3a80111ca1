/* Watch streams. The framer turns the body of a watch response, arriving in arbitrary chunks,
 * into complete events: newline-delimited JSON objects {"type": T, "object": {...}} (JSON
 * strings never hold a raw newline, so the newline is a safe delimiter). It does no I/O, so
 * tests feed it every possible split. tj_watch_start runs a streaming GET ?watch=1 through the
 * client and feeds the framer from libcurl's write callback. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "kube/client.h"
#include "kube/request.h"
#include "kube/status.h"

/* Default limit of one event (one line). etcd refuses objects above 1.5 MiB, so an event near
 * this size is already broken. */
#define TJ_WATCH_MAX_EVENT (16u << 20)

enum tj_watch_event_type {
	TJ_WATCH_ADDED,
	TJ_WATCH_MODIFIED,
	TJ_WATCH_DELETED,
	TJ_WATCH_BOOKMARK, /* only metadata.resourceVersion (and annotations) are meaningful */
	TJ_WATCH_ERROR,    /* the object is a Status, decoded into status (410 Expired: relist) */
};

struct tj_watch_event {
	enum tj_watch_event_type type;
	/* The event's object. Owned by the framer and freed after the callback returns, unless
	 * the callback takes it by setting this to NULL. */
	cJSON *object;
	struct tj_status status; /* TJ_WATCH_ERROR only; zeroed otherwise; freed after the
	                            callback */
};

/* Called for each complete event. Return 0 to continue or a negative errno to stop: the
 * framer then returns that code. */
typedef int (*tj_watch_event_fn)(struct tj_watch_event *ev, void *userdata);

struct tj_watch_framer {
	char *buf; /* owned; the incomplete line carried over between chunks */
	size_t len;
	size_t cap;
	size_t max_event; /* limit of one line, newline excluded */
	int error;        /* sticky: once a feed failed, every later feed returns this */
};

/* max_event 0 = TJ_WATCH_MAX_EVENT. */
void tj_watch_framer_init(struct tj_watch_framer *f, size_t max_event);

/* Feeds a chunk; calls fn for each event it completes, in order. Blank lines (and "\r\n"
 * endings) are accepted. Returns 0, -EMSGSIZE if a line grows beyond max_event, -EBADMSG for
 * a line that is not a watch event (not JSON, no object, unknown type), -ENOMEM, or the code
 * fn returned. Any error is sticky: the stream must be dropped. */
int tj_watch_framer_feed(struct tj_watch_framer *f, const char *data, size_t len,
                         tj_watch_event_fn fn, void *userdata);

/* End of stream: an unterminated last line is parsed as an event. Returns as feed. */
int tj_watch_framer_finish(struct tj_watch_framer *f, tj_watch_event_fn fn, void *userdata);

/* Frees the buffer; the framer can be initialised again. */
void tj_watch_framer_clear(struct tj_watch_framer *f);

/* Parses one event line. Returns 0, -EBADMSG, -ENOMEM; *ret is written only on success. */
int tj_watch_event_parse(const char *line, size_t len, struct tj_watch_event *ret);

/* Frees the object and status. */
void tj_watch_event_clear(struct tj_watch_event *ev);

/* "ADDED", ... */
const char *tj_watch_event_type_name(enum tj_watch_event_type type);

struct tj_watch_options {
	const char *label_selector;
	const char *field_selector;
	const char *resource_version;       /* NULL: synthetic ADDED events for the current state */
	const char *resource_version_match; /* "NotOlderThan" with send_initial_events */
	/* timeoutSeconds: the server ends the stream after this (client-go picks [300, 600)).
	 * The client also aborts the transfer 30 s after that, in case the connection died
	 * silently. 0 = the server's default and no client-side bound. */
	int timeout_seconds;
	bool allow_bookmarks;
	bool send_initial_events;
	size_t max_event; /* 0 = TJ_WATCH_MAX_EVENT */
};

/* How a watch ended: rc 0 when the server closed the stream (its timeout, or after an ERROR
 * event); -EREMOTEIO when it refused the watch (http_status and status say why: 410 means
 * relist); -EMSGSIZE or -EBADMSG when the stream broke; a transport error; or the code the
 * event callback returned. body is always NULL. */
typedef void (*tj_watch_done_fn)(struct tj_response *resp, void *userdata);

struct tj_watch;

/* Starts a watch of ref's collection (ref->name must be NULL; use a fieldSelector
 * metadata.name=X for one object). on_event runs for each event; on_done runs once at the
 * end unless the watch was cancelled. *ret (may be NULL) is valid until on_done returns. */
int tj_watch_start(struct tj_client *c, const struct tj_ref *ref,
                   const struct tj_watch_options *opts, tj_watch_event_fn on_event,
                   tj_watch_done_fn on_done, void *userdata, struct tj_watch **ret);

/* Stops a watch; on_done is not called. Safe from inside on_event; a no-op from inside
 * on_done. Accepts NULL. */
void tj_watch_cancel(struct tj_watch *w);

/* The URL of a watch request ("?watch=1&resourceVersion=..&timeoutSeconds=.."). Pure. */
int tj_kube_watch_url(const struct tj_ref *ref, const struct tj_watch_options *opts, char **ret);
