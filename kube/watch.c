/* Watch-stream framing (pure) and the streaming watch request built on it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/watch.h"

static const char *const type_names[] = {
	[TJ_WATCH_ADDED] = "ADDED",     [TJ_WATCH_MODIFIED] = "MODIFIED",
	[TJ_WATCH_DELETED] = "DELETED", [TJ_WATCH_BOOKMARK] = "BOOKMARK",
	[TJ_WATCH_ERROR] = "ERROR",
};

const char *tj_watch_event_type_name(enum tj_watch_event_type type)
{
	if ((unsigned)type >= sizeof(type_names) / sizeof(type_names[0]))
		return "UNKNOWN";
	return type_names[type];
}

static int parse_type(const char *s, enum tj_watch_event_type *ret)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strcmp(s, type_names[i]) == 0) {
			*ret = (enum tj_watch_event_type)i;
			return 0;
		}
	return -EBADMSG;
}

int tj_watch_event_parse(const char *line, size_t len, struct tj_watch_event *ret)
{
	struct tj_watch_event ev = { 0 };
	cJSON *json, *type, *object;
	const char *end = NULL;
	int r;

	/* One JSON value per line: anything but blanks after it is a broken stream. */
	json = cJSON_ParseWithLengthOpts(line, len, &end, false);
	if (!json)
		return -EBADMSG;
	for (; end < line + len; end++)
		if (*end != ' ' && *end != '\t' && *end != '\r') {
			cJSON_Delete(json);
			return -EBADMSG;
		}
	type = cJSON_GetObjectItemCaseSensitive(json, "type");
	object = cJSON_GetObjectItemCaseSensitive(json, "object");
	r = -EBADMSG;
	if (!cJSON_IsObject(json) || !cJSON_IsString(type) || !cJSON_IsObject(object))
		goto out_free_json;
	r = parse_type(type->valuestring, &ev.type);
	if (r < 0)
		goto out_free_json;
	if (ev.type == TJ_WATCH_ERROR) {
		r = tj_status_from_json(object, &ev.status);
		if (r < 0) {
			r = r == -ENOMEM ? r : -EBADMSG;
			goto out_free_json;
		}
	}
	ev.object = cJSON_DetachItemViaPointer(json, object);
	cJSON_Delete(json);
	*ret = ev;
	return 0;

out_free_json:
	cJSON_Delete(json);
	return r;
}

void tj_watch_event_clear(struct tj_watch_event *ev)
{
	if (!ev)
		return;
	cJSON_Delete(ev->object);
	ev->object = NULL;
	tj_status_clear(&ev->status);
}

void tj_watch_framer_init(struct tj_watch_framer *f, size_t max_event)
{
	*f = (struct tj_watch_framer){ .max_event = max_event ? max_event : TJ_WATCH_MAX_EVENT };
}

void tj_watch_framer_clear(struct tj_watch_framer *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = f->cap = 0;
}

/* Parses one line (without its newline) and hands the event to fn. Blank lines, which a
 * server or proxy may send to keep the connection alive, are skipped. */
static int deliver(const char *line, size_t len, tj_watch_event_fn fn, void *userdata)
{
	struct tj_watch_event ev;
	int r;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	while (len > 0 && (line[0] == ' ' || line[0] == '\t' || line[0] == '\r')) {
		line++;
		len--;
	}
	if (len == 0)
		return 0;
	r = tj_watch_event_parse(line, len, &ev);
	if (r < 0)
		return r;
	r = fn(&ev, userdata);
	tj_watch_event_clear(&ev);
	return r < 0 ? r : 0;
}

static int append(struct tj_watch_framer *f, const char *data, size_t len)
{
	if (len > f->max_event - f->len)
		return -EMSGSIZE;
	if (f->len + len > f->cap) {
		size_t cap = f->cap ? f->cap : 4096;
		char *buf;

		while (cap < f->len + len)
			cap *= 2;
		if (cap > f->max_event)
			cap = f->max_event;
		buf = realloc(f->buf, cap);
		if (!buf)
			return -ENOMEM;
		f->buf = buf;
		f->cap = cap;
	}
	memcpy(f->buf + f->len, data, len);
	f->len += len;
	return 0;
}

int tj_watch_framer_feed(struct tj_watch_framer *f, const char *data, size_t len,
                         tj_watch_event_fn fn, void *userdata)
{
	const char *end = data + len;
	int r;

	if (f->error)
		return f->error;
	while (data < end) {
		const char *nl = memchr(data, '\n', (size_t)(end - data));
		size_t piece = (size_t)((nl ? nl : end) - data);

		if (!nl) {
			r = append(f, data, piece);
			if (r < 0)
				goto out_fail;
			break;
		}
		if (f->len == 0) {
			/* The whole line is in this chunk: parse it in place, no copy. */
			r = piece > f->max_event ? -EMSGSIZE : deliver(data, piece, fn, userdata);
		} else {
			r = append(f, data, piece);
			if (r == 0) {
				size_t total = f->len;

				f->len = 0;
				r = deliver(f->buf, total, fn, userdata);
			}
		}
		if (r < 0)
			goto out_fail;
		data = nl + 1;
	}
	return 0;

out_fail:
	f->error = r;
	return r;
}

int tj_watch_framer_finish(struct tj_watch_framer *f, tj_watch_event_fn fn, void *userdata)
{
	size_t total = f->len;
	int r;

	if (f->error)
		return f->error;
	f->len = 0;
	r = deliver(f->buf, total, fn, userdata);
	if (r < 0)
		f->error = r;
	return r;
}

/* ---- the streaming request ----------------------------------------------------------------- */

/* How long after the server's timeoutSeconds the client gives up on a silent stream. */
#define WATCH_TIMEOUT_SLACK_MS 30000

int tj_kube_watch_url(const struct tj_ref *ref, const struct tj_watch_options *opts, char **ret)
{
	static const struct tj_watch_options none;
	char timeout[24];

	if (!opts)
		opts = &none;
	if (ref->name || opts->timeout_seconds < 0)
		return -EINVAL;
	snprintf(timeout, sizeof(timeout), "%d", opts->timeout_seconds);
	const struct tj_query_param params[] = {
		{ "watch", "1" },
		{ "resourceVersion", opts->resource_version },
		{ "resourceVersionMatch", opts->resource_version_match },
		{ "allowWatchBookmarks", opts->allow_bookmarks ? "true" : NULL },
		{ "sendInitialEvents", opts->send_initial_events ? "true" : NULL },
		{ "timeoutSeconds", opts->timeout_seconds > 0 ? timeout : NULL },
		{ "labelSelector", opts->label_selector },
		{ "fieldSelector", opts->field_selector },
	};
	return tj_kube_url(ref, params, sizeof(params) / sizeof(params[0]), ret);
}

struct tj_watch {
	struct tj_client_user link;
	struct tj_client *client; /* NULL once the client is gone */
	uv_timer_t timer;         /* the rate limiter's wait, or a deferred failure */
	struct tj_http_call *call;
	char *path; /* owned */
	long timeout_ms;
	size_t max_body;
	struct tj_watch_framer framer; /* owns its buffer */
	tj_watch_event_fn on_event;
	tj_watch_done_fn on_done;
	void *userdata;
	bool in_event; /* on_event is running: cancel only marks */
	bool in_done;
	bool cancelled;
	bool closing;
};

static void on_watch_closed(uv_handle_t *h)
{
	struct tj_watch *w = h->data;

	tj_watch_framer_clear(&w->framer);
	free(w->path);
	free(w);
}

static void release_watch(struct tj_watch *w)
{
	if (w->closing)
		return;
	w->closing = true;
	if (w->client)
		tj_client_detach(w->client, &w->link);
	w->client = NULL;
	uv_timer_stop(&w->timer);
	uv_close((uv_handle_t *)&w->timer, on_watch_closed);
}

static int deliver_event(struct tj_watch_event *ev, void *userdata)
{
	struct tj_watch *w = userdata;
	int r;

	w->in_event = true;
	r = w->on_event(ev, w->userdata);
	w->in_event = false;
	/* Cancelled from inside the callback: stop feeding the rest of the chunk. */
	return w->cancelled ? -ECANCELED : r;
}

static int on_watch_data(const char *chunk, size_t len, void *userdata)
{
	struct tj_watch *w = userdata;
	int r;

	r = tj_watch_framer_feed(&w->framer, chunk, len, deliver_event, w);
	if (w->cancelled) {
		/* The transport drops the call without a callback; nothing refers to w any
		 * more once this returns. */
		release_watch(w);
		return -ECANCELED;
	}
	return r;
}

static void finish_watch(struct tj_watch *w, int rc, long http_status, const char *body,
                         size_t body_len, const char *error)
{
	struct tj_response resp = { .rc = rc, .http_status = http_status, .error = error };

	if (rc == 0 && (http_status < 200 || http_status >= 300)) {
		resp.rc = tj_status_from_response(http_status, body, body_len, &resp.status);
		if (resp.rc == 0) {
			resp.rc = -EREMOTEIO;
			resp.error = resp.status.message ? resp.status.message : "";
		} else {
			resp.error = "out of memory";
		}
	} else if (rc == -EMSGSIZE) {
		resp.error = "a watch event is larger than the limit";
	} else if (rc == -EBADMSG) {
		resp.error = "the watch stream holds something that is not a watch event";
	}
	w->in_done = true;
	w->on_done(&resp, w->userdata);
	w->in_done = false;
	tj_status_clear(&resp.status);
	release_watch(w);
}

static void on_watch_done(const struct tj_http_response *http, void *userdata)
{
	struct tj_watch *w = userdata;
	int rc = http->rc;

	w->call = NULL;
	/* A last event without its newline still counts. */
	if (rc == 0 && http->status >= 200 && http->status < 300) {
		rc = tj_watch_framer_finish(&w->framer, deliver_event, w);
		if (w->cancelled) {
			release_watch(w);
			return;
		}
	}
	finish_watch(w, rc, http->status, http->body, http->body_len, http->error);
}

static void on_watch_send_failed(uv_timer_t *h)
{
	finish_watch(h->data, -ESHUTDOWN, 0, "", 0, "the client is shutting down");
}

static void watch_send(uv_timer_t *h)
{
	struct tj_watch *w = h->data;
	struct tj_http_request req = {
		.method = "GET",
		.path = w->path,
		.timeout_ms = w->timeout_ms,
		.max_body = w->max_body,
		.on_data = on_watch_data,
		.on_done = on_watch_done,
		.userdata = w,
	};

	if (tj_transport_send(tj_client_transport(w->client), &req, &w->call) < 0)
		uv_timer_start(&w->timer, on_watch_send_failed, 0, 0);
}

static void abort_watch(struct tj_client_user *u)
{
	struct tj_watch *w = (struct tj_watch *)u;

	w->client = NULL;
	tj_watch_cancel(w);
}

int tj_watch_start(struct tj_client *c, const struct tj_ref *ref,
                   const struct tj_watch_options *opts, tj_watch_event_fn on_event,
                   tj_watch_done_fn on_done, void *userdata, struct tj_watch **ret)
{
	struct tj_watch *w;
	uint64_t wait;
	int r;

	if (!on_event || !on_done)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	r = tj_kube_watch_url(ref, opts, &w->path);
	if (r < 0) {
		free(w);
		return r;
	}
	w->client = c;
	w->on_event = on_event;
	w->on_done = on_done;
	w->userdata = userdata;
	w->max_body = tj_client_options(c)->max_body;
	if (opts && opts->timeout_seconds > 0)
		w->timeout_ms = opts->timeout_seconds * 1000L + WATCH_TIMEOUT_SLACK_MS;
	tj_watch_framer_init(&w->framer, opts ? opts->max_event : 0);
	w->link.abort = abort_watch;
	uv_timer_init(tj_client_loop(c), &w->timer);
	w->timer.data = w;
	tj_client_attach(c, &w->link);
	/* Opening a watch takes a token; its events do not. */
	wait = tj_client_admit(c);
	if (wait > 0)
		uv_timer_start(&w->timer, watch_send, wait, 0);
	else
		watch_send(&w->timer);
	if (ret)
		*ret = w;
	return 0;
}

void tj_watch_cancel(struct tj_watch *w)
{
	if (!w || w->in_done || w->cancelled || w->closing)
		return;
	w->cancelled = true;
	tj_http_call_cancel(w->call);
	w->call = NULL;
	/* From inside on_event the framer is still on the stack: on_watch_data releases. */
	if (!w->in_event)
		release_watch(w);
}
