/* The reflector: its pure decisions (after-watch rules, backoff values, watch timeout) and
 * its behaviour against a fake API server that the test drives step by step (list pages,
 * watch events, stream ends), with the real pod projection and store. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "informers/pod.h"
#include "informers/reflector.h"

/* ---- pure decisions ---- */

struct after_case {
	const char *name;
	struct tj_watch_outcome o;
	enum tj_reflector_next want;
};

static const struct after_case after_cases[] = {
	{ "server closed after events", { 0, 0, 0, NULL, 300000, 12 }, TJ_REFLECTOR_REWATCH },
	{ "server closed a quiet watch", { 0, 0, 0, NULL, 5000, 0 }, TJ_REFLECTOR_REWATCH },
	{ "very short watch", { 0, 0, 0, NULL, 999, 0 }, TJ_REFLECTOR_RELIST },
	{ "short with one event", { 0, 0, 0, NULL, 10, 1 }, TJ_REFLECTOR_REWATCH },
	{ "ERROR event 410 Expired", { 0, 0, 410, "Expired", 20000, 3 }, TJ_REFLECTOR_RELIST },
	{ "ERROR event 410 Gone", { 0, 0, 410, "Gone", 20000, 3 }, TJ_REFLECTOR_RELIST },
	{ "ERROR event Expired without code", { 0, 0, 0, "Expired", 10, 1 }, TJ_REFLECTOR_RELIST },
	{ "HTTP 410 refusal", { -EREMOTEIO, 410, 410, "Gone", 5, 0 }, TJ_REFLECTOR_RELIST },
	{ "HTTP 410 without Status", { -EREMOTEIO, 410, 0, NULL, 5, 0 }, TJ_REFLECTOR_RELIST },
	{ "ERROR event 429",
	  { 0, 0, 429, "TooManyRequests", 10, 1 },
	  TJ_REFLECTOR_REWATCH_BACKOFF },
	{ "HTTP 429 refusal",
	  { -EREMOTEIO, 429, 429, "TooManyRequests", 5, 0 },
	  TJ_REFLECTOR_REWATCH_BACKOFF },
	{ "ERROR event 500", { 0, 0, 500, "InternalError", 10, 1 }, TJ_REFLECTOR_RELIST },
	{ "HTTP 403 refusal", { -EREMOTEIO, 403, 403, "Forbidden", 5, 0 }, TJ_REFLECTOR_RELIST },
	{ "connection refused", { -ECONNREFUSED, 0, 0, NULL, 1, 0 }, TJ_REFLECTOR_REWATCH_BACKOFF },
	{ "connection reset after events",
	  { -ECONNRESET, 0, 0, NULL, 40000, 7 },
	  TJ_REFLECTOR_REWATCH },
	{ "connection reset at once", { -ECONNRESET, 0, 0, NULL, 3, 0 }, TJ_REFLECTOR_RELIST },
	{ "TLS failure", { -EPROTO, 0, 0, NULL, 30, 0 }, TJ_REFLECTOR_RELIST },
	{ "oversized event", { -EMSGSIZE, 0, 0, NULL, 40000, 7 }, TJ_REFLECTOR_RELIST },
	{ "malformed event", { -EBADMSG, 0, 0, NULL, 40000, 7 }, TJ_REFLECTOR_RELIST },
	{ "out of memory", { -ENOMEM, 0, 0, NULL, 40000, 7 }, TJ_REFLECTOR_RELIST },
	{ "client-side timeout of a dead stream",
	  { -ETIMEDOUT, 0, 0, NULL, 630000, 40 },
	  TJ_REFLECTOR_REWATCH },
};

static void test_after_watch(void **state)
{
	for (size_t i = 0; i < sizeof(after_cases) / sizeof(after_cases[0]); i++) {
		print_message("# case: %s\n", after_cases[i].name);
		assert_int_equal(tj_reflector_after_watch(&after_cases[i].o), after_cases[i].want);
	}
}

static void test_is_expired(void **state)
{
	assert_true(tj_reflector_is_expired(410, NULL));
	assert_true(tj_reflector_is_expired(0, "Expired"));
	assert_true(tj_reflector_is_expired(0, "Gone"));
	assert_false(tj_reflector_is_expired(500, "InternalError"));
	assert_false(tj_reflector_is_expired(0, NULL));
}

static void test_backoff_values(void **state)
{
	static const uint64_t want[] = { 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000 };
	struct tj_backoff b;
	uint64_t now = 1000;

	tj_backoff_init(&b, TJ_REFLECTOR_BACKOFF_INITIAL_MS, TJ_REFLECTOR_BACKOFF_CAP_MS,
	                TJ_REFLECTOR_BACKOFF_RESET_MS);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(tj_backoff_next(&b, now, 0.0), want[i]);
		now += want[i];
	}
	/* Jitter 1.0: d * (1 + r). */
	assert_int_equal(tj_backoff_next(&b, now, 0.5), 45000);
	assert_int_equal(tj_backoff_next(&b, now, 0.999), 59970);
	/* Exactly two minutes after the previous wait began: not yet reset. */
	now += TJ_REFLECTOR_BACKOFF_RESET_MS;
	assert_int_equal(tj_backoff_next(&b, now, 0.0), 30000);
	/* More than two minutes healthy: back to the start. */
	now += TJ_REFLECTOR_BACKOFF_RESET_MS + 1;
	assert_int_equal(tj_backoff_next(&b, now, 0.0), 800);
	assert_int_equal(tj_backoff_next(&b, now, 0.25), 2000);
	/* A draw out of range counts as no jitter. */
	assert_int_equal(tj_backoff_next(&b, now, 1.0), 3200);
}

static void test_watch_timeout(void **state)
{
	assert_int_equal(tj_reflector_watch_timeout(0.0), 300);
	assert_int_equal(tj_reflector_watch_timeout(0.5), 450);
	assert_int_equal(tj_reflector_watch_timeout(0.9999), 599);
	assert_int_equal(tj_reflector_watch_timeout(1.0), 300);
}

/* ---- the fake API server ---- */

struct fake {
	uv_loop_t loop;
	/* the list request in flight */
	tj_response_fn list_fn;
	void *list_ud;
	int lists;
	long last_limit;
	char last_continue[64];
	char last_list_selector[128];
	bool last_list_rv_set;
	int list_fail;       /* list() itself fails with this ... */
	int list_fail_times; /* ... this many times */
	/* the watch in flight */
	tj_watch_event_fn on_event;
	tj_watch_done_fn on_done;
	void *watch_ud;
	int watches;
	char last_watch_rv[32];
	int last_timeout;
	bool last_bookmarks;
	bool last_initial_events; /* sendInitialEvents */
	char last_rv_match[16];   /* resourceVersionMatch, "" = none */
	bool streaming;           /* the reflector is made with streaming_list */
	char last_watch_selector[128];
	int cancels;
	/* what the handlers saw */
	char log[2048];
	int synced;
	size_t len_min, len_max; /* the store's size during add, update and delete handlers */
	int errors;              /* on_error calls */
	char error[256];         /* the last one's message */
	struct tj_reflector *r;
};

static int fake_list(void *ctx, const struct tj_list_options *opts, tj_response_fn fn,
                     void *userdata, void **ret_call)
{
	struct fake *f = ctx;

	if (f->list_fail_times > 0) {
		f->list_fail_times--;
		return f->list_fail;
	}
	assert_null(f->list_fn); /* one page at a time */
	f->list_fn = fn;
	f->list_ud = userdata;
	f->lists++;
	f->last_limit = opts->limit;
	snprintf(f->last_continue, sizeof(f->last_continue), "%s",
	         opts->continue_token ? opts->continue_token : "");
	snprintf(f->last_list_selector, sizeof(f->last_list_selector), "%s",
	         opts->label_selector ? opts->label_selector : "");
	f->last_list_rv_set = opts->resource_version != NULL;
	*ret_call = f;
	return 0;
}

static void fake_cancel(void *call)
{
	struct fake *f = call;

	f->cancels++;
	f->list_fn = NULL;
	f->on_event = NULL;
	f->on_done = NULL;
}

static int fake_watch(void *ctx, const struct tj_watch_options *opts, tj_watch_event_fn on_event,
                      tj_watch_done_fn on_done, void *userdata, void **ret_call)
{
	struct fake *f = ctx;

	assert_null(f->on_done); /* one watch at a time */
	f->on_event = on_event;
	f->on_done = on_done;
	f->watch_ud = userdata;
	f->watches++;
	snprintf(f->last_watch_rv, sizeof(f->last_watch_rv), "%s",
	         opts->resource_version ? opts->resource_version : "(null)");
	f->last_timeout = opts->timeout_seconds;
	f->last_bookmarks = opts->allow_bookmarks;
	f->last_initial_events = opts->send_initial_events;
	snprintf(f->last_rv_match, sizeof(f->last_rv_match), "%s",
	         opts->resource_version_match ? opts->resource_version_match : "");
	snprintf(f->last_watch_selector, sizeof(f->last_watch_selector), "%s",
	         opts->label_selector ? opts->label_selector : "");
	*ret_call = f;
	return 0;
}

static void logf_(struct fake *f, const char *fmt, ...)
{
	size_t len = strlen(f->log);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->log + len, sizeof(f->log) - len, fmt, ap);
	va_end(ap);
}

/* What the cache holds while a handler runs. */
static void note_len(struct fake *f)
{
	size_t n = tj_store_len(tj_reflector_store(f->r));

	if (n < f->len_min)
		f->len_min = n;
	if (n > f->len_max)
		f->len_max = n;
}

static void on_add(const void *obj, void *ud)
{
	const struct tj_pod *p = obj;

	note_len(ud);
	logf_(ud, "add %s@%s; ", p->name, p->resource_version);
}

static void on_update(const void *old, const void *new_obj, void *ud)
{
	const struct tj_pod *o = old, *n = new_obj;

	note_len(ud);
	logf_(ud, "update %s@%s->%s; ", n->name, o->resource_version, n->resource_version);
}

static void on_delete(const void *obj, void *ud)
{
	const struct tj_pod *p = obj;

	note_len(ud);
	logf_(ud, "delete %s@%s; ", p->name, p->resource_version);
}

static void on_error(const char *message, void *ud)
{
	struct fake *f = ud;

	f->errors++;
	snprintf(f->error, sizeof(f->error), "%s", message);
}

/* Forgets what the handlers saw so far. */
static void clear_seen(struct fake *f)
{
	f->log[0] = '\0';
	f->len_min = SIZE_MAX;
	f->len_max = 0;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The log with its entries sorted: a relist announces its adds and updates in no particular
 * order. */
static const char *sorted_log(struct fake *f)
{
	static char out[2048];
	char copy[2048], *entries[64] = { 0 }, *save = NULL;
	size_t n = 0;

	snprintf(copy, sizeof(copy), "%s", f->log);
	for (char *e = strtok_r(copy, ";", &save); e; e = strtok_r(NULL, ";", &save)) {
		if (*e == ' ')
			e++;
		if (!*e)
			continue;
		assert_true(n < 64);
		entries[n++] = e;
	}
	qsort(entries, n, sizeof(entries[0]), compare_strings);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strncat(out, entries[i], sizeof(out) - strlen(out) - 1);
		strncat(out, "; ", sizeof(out) - strlen(out) - 1);
	}
	return out;
}

static void on_synced(void *ud)
{
	struct fake *f = ud;

	f->synced++;
	/* The store is complete when on_synced runs. */
	logf_(ud, "synced(%zu); ", tj_store_len(tj_reflector_store(f->r)));
}

/* Makes f's reflector on loop, f its fake server and the handlers' target. */
static void fake_attach(struct fake *f, uv_loop_t *loop, const struct tj_store_ops *ops,
                        bool streaming, struct tj_list_turns *turns)
{
	struct tj_reflector_config cfg = {
		.name = "pods",
		.lw = { fake_list, fake_cancel, fake_watch, fake_cancel, f },
		.label_selector = TJ_LABEL_TRAINJOB,
		.project = tj_pod_project,
		.store_ops = ops,
		.handlers = { on_add, on_update, on_delete, on_synced, on_error, f },
		.backoff_initial_ms = 1,
		.backoff_cap_ms = 4,
		.seed = 42,
		.streaming_list = streaming,
		.turns = turns,
		.turn_idle_ms = 20,
	};

	f->streaming = streaming;
	clear_seen(f);
	assert_int_equal(tj_reflector_new(loop, &cfg, &f->r), 0);
}

static struct fake *fake_new_with(const struct tj_store_ops *ops, bool streaming)
{
	static struct fake f;

	memset(&f, 0, sizeof(f));
	assert_int_equal(uv_loop_init(&f.loop), 0);
	fake_attach(&f, &f.loop, ops, streaming, NULL);
	return &f;
}

static struct fake *fake_new(void)
{
	return fake_new_with(&tj_pod_store_ops, false);
}

static void fake_free(struct fake *f)
{
	assert_null(tj_reflector_free(f->r));
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
}

static char *pod_json(const char *name, const char *rv, const char *node)
{
	static char buf[4][512];
	static int i;
	char *b = buf[i++ % 4];

	snprintf(b, sizeof(buf[0]),
	         "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\",\"resourceVersion\":\"%s\","
	         "\"labels\":{\"trainer.kubeflow.org/trainjob-name\":\"j\"}},"
	         "\"spec\":{\"nodeName\":\"%s\"},\"status\":{\"phase\":\"Running\"}}",
	         name, rv, node);
	return b;
}

/* Answers the list request in flight with 200 and this JSON body. */
static void answer_body(struct fake *f, const char *body)
{
	struct tj_response resp = { .http_status = 200, .error = "" };
	tj_response_fn fn = f->list_fn;

	resp.body = cJSON_Parse(body);
	assert_non_null(resp.body);
	assert_non_null(fn);
	f->list_fn = NULL;
	fn(&resp, f->list_ud);
	cJSON_Delete(resp.body);
}

/* Answers the list request in flight with a page (items is a JSON array text). */
static void answer_page(struct fake *f, const char *rv, const char *cont, const char *items)
{
	char body[8192];

	snprintf(body, sizeof(body),
	         "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{"
	         "\"resourceVersion\":\"%s\",\"continue\":\"%s\"},\"items\":%s}",
	         rv, cont, items);
	answer_body(f, body);
}

static void fail_page(struct fake *f, long http, int code, const char *reason)
{
	struct tj_response resp = { .rc = -EREMOTEIO, .http_status = http, .error = "refused" };
	tj_response_fn fn = f->list_fn;

	resp.status.code = code;
	resp.status.reason = (char *)reason;
	assert_non_null(fn);
	f->list_fn = NULL;
	fn(&resp, f->list_ud);
}

static int send_event(struct fake *f, enum tj_watch_event_type type, const char *object)
{
	struct tj_watch_event ev = { .type = type };
	int rc;

	ev.object = cJSON_Parse(object);
	assert_non_null(ev.object);
	rc = f->on_event(&ev, f->watch_ud);
	cJSON_Delete(ev.object);
	return rc;
}

static void send_error(struct fake *f, int code, const char *reason)
{
	struct tj_watch_event ev = { .type = TJ_WATCH_ERROR };

	ev.object = cJSON_CreateObject();
	ev.status.code = code;
	ev.status.reason = (char *)reason;
	ev.status.message = (char *)"too old resource version: 5 (100)";
	assert_int_equal(f->on_event(&ev, f->watch_ud), 0);
	cJSON_Delete(ev.object);
}

static void end_watch(struct fake *f, int rc, long http, int code, const char *reason)
{
	struct tj_response resp = { .rc = rc, .http_status = http, .error = rc ? "ended" : "" };
	tj_watch_done_fn fn = f->on_done;

	resp.status.code = code;
	resp.status.reason = (char *)reason;
	assert_non_null(fn);
	f->on_done = NULL;
	f->on_event = NULL;
	fn(&resp, f->watch_ud);
}

static const struct tj_pod *cached(struct fake *f, const char *key)
{
	return tj_store_get(tj_reflector_store(f->r), key);
}

/* Lists two pages, then watches from the first page's resourceVersion. */
static void list_initial(struct fake *f)
{
	char items[2048];

	assert_int_equal(tj_reflector_start(f->r), 0);
	assert_int_equal(tj_reflector_start(f->r), -EALREADY);
	assert_int_equal(f->lists, 1);
	assert_int_equal(f->last_limit, 500);
	assert_string_equal(f->last_continue, "");
	assert_false(f->last_list_rv_set);
	assert_string_equal(f->last_list_selector, "trainer.kubeflow.org/trainjob-name");
	snprintf(items, sizeof(items), "[%s,%s]", pod_json("p0", "90", "n1"),
	         pod_json("p1", "95", "n1"));
	answer_page(f, "100", "token-1", items);
	assert_false(tj_reflector_has_synced(f->r));
	assert_int_equal(f->watches, 0);
	assert_int_equal(f->lists, 2);
	assert_string_equal(f->last_continue, "token-1");
	assert_int_equal(f->last_limit, 500);
	snprintf(items, sizeof(items), "[%s]", pod_json("p2", "99", "n2"));
	/* Later pages repeat the snapshot's resourceVersion; the first one counts. */
	answer_page(f, "100", "", items);
	assert_true(tj_reflector_has_synced(f->r));
	assert_int_equal(f->synced, 1);
	assert_int_equal(f->watches, 1);
	assert_string_equal(f->last_watch_rv, "100");
	assert_true(f->last_bookmarks);
	assert_true(f->last_timeout >= 300 && f->last_timeout < 600);
	assert_string_equal(f->last_watch_selector, "trainer.kubeflow.org/trainjob-name");
	assert_string_equal(tj_reflector_resource_version(f->r), "100");
}

static void test_list_then_watch_events(void **state)
{
	struct fake *f = fake_new();
	struct tj_reflector_stats st;

	assert_string_equal(tj_reflector_resource_version(f->r), "");
	list_initial(f);
	assert_string_equal(sorted_log(f), "add p0@90; add p1@95; add p2@99; synced(3); ");
	assert_int_equal(f->len_min, 3);
	assert_int_equal(f->len_max, 3);
	f->log[0] = '\0';

	assert_int_equal(send_event(f, TJ_WATCH_ADDED, pod_json("p3", "101", "n2")), 0);
	assert_string_equal(tj_reflector_resource_version(f->r), "101");
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p0", "102", "n3")), 0);
	assert_int_equal(send_event(f, TJ_WATCH_DELETED, pod_json("p1", "103", "n1")), 0);
	assert_int_equal(send_event(f, TJ_WATCH_BOOKMARK,
	                            "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
	                            "\"resourceVersion\":\"110\"}}"),
	                 0);
	/* An object the projection refuses is skipped, and still moves the version. */
	assert_int_equal(send_event(f, TJ_WATCH_ADDED,
	                            "{\"kind\":\"Service\",\"metadata\":{\"namespace\":\"ns\","
	                            "\"name\":\"s\",\"resourceVersion\":\"111\"}}"),
	                 0);
	assert_string_equal(f->log, "add p3@101; update p0@90->102; delete p1@103; ");
	assert_string_equal(tj_reflector_resource_version(f->r), "111");
	assert_null(cached(f, "ns/p1"));
	assert_string_equal(cached(f, "ns/p0")->node_name, "n3");
	assert_int_equal(tj_store_index_count(tj_reflector_store(f->r), TJ_POD_INDEX_NODE, "n1"),
	                 0);
	assert_int_equal(tj_store_index_count(tj_reflector_store(f->r), TJ_POD_INDEX_NODE, "n2"),
	                 2);

	/* The server ends the stream after its timeout: watch again at once from the last
	 * version, without a list. */
	uv_update_time(&f->loop);
	end_watch(f, 0, 0, 0, NULL);
	assert_int_equal(f->watches, 2);
	assert_int_equal(f->lists, 2);
	assert_string_equal(f->last_watch_rv, "111");
	tj_reflector_stats(f->r, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.events, 5);
	assert_int_equal(st.skipped, 1);
	assert_int_equal(st.watches, 2);
	fake_free(f);
}

static const char *pod_version(const void *obj)
{
	return ((const struct tj_pod *)obj)->resource_version;
}

/* case: a write-back replaces an older cached object without a handler; a watch event older
 * than it is then ignored, the event of its own version is not; it never adds an object the
 * cache does not hold nor steps back; without ops->version it is refused. */
static void test_write_back(void **state)
{
	static struct tj_store_ops ops;
	struct fake *f;
	cJSON *obj;

	f = fake_new();
	list_initial(f);
	obj = cJSON_Parse(pod_json("p0", "150", "n1"));
	assert_int_equal(tj_reflector_write_back(f->r, obj), -EINVAL);
	cJSON_Delete(obj);
	fake_free(f);

	ops = tj_pod_store_ops;
	ops.version = pod_version;
	f = fake_new_with(&ops, false);
	list_initial(f);
	f->log[0] = '\0';
	obj = cJSON_Parse(pod_json("p0", "150", "n7"));
	assert_int_equal(tj_reflector_write_back(f->r, obj), 0);
	cJSON_Delete(obj);
	assert_string_equal(cached(f, "ns/p0")->resource_version, "150");
	assert_string_equal(cached(f, "ns/p0")->node_name, "n7");
	assert_int_equal(tj_store_index_count(tj_reflector_store(f->r), TJ_POD_INDEX_NODE, "n7"),
	                 1);
	assert_string_equal(f->log, "");
	/* The watch still delivers what happened before the write. */
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p0", "120", "n1")), 0);
	assert_string_equal(cached(f, "ns/p0")->resource_version, "150");
	assert_string_equal(f->log, "");
	assert_string_equal(tj_reflector_resource_version(f->r), "120");
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p0", "150", "n7")), 0);
	assert_string_equal(f->log, "update p0@150->150; ");
	/* Older than the cache, or not in it: ignored. */
	obj = cJSON_Parse(pod_json("p1", "94", "n9"));
	assert_int_equal(tj_reflector_write_back(f->r, obj), 0);
	cJSON_Delete(obj);
	assert_string_equal(cached(f, "ns/p1")->resource_version, "95");
	obj = cJSON_Parse(pod_json("p9", "200", "n9"));
	assert_int_equal(tj_reflector_write_back(f->r, obj), 0);
	cJSON_Delete(obj);
	assert_null(cached(f, "ns/p9"));
	/* Versions that are not numbers are never compared: the event wins. */
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p1", "x1", "n2")), 0);
	assert_string_equal(cached(f, "ns/p1")->resource_version, "x1");
	fake_free(f);
}

static void test_expired_relists_and_synthesises_deletes(void **state)
{
	struct fake *f = fake_new();
	struct tj_reflector_stats st;
	char items[2048];

	list_initial(f);
	f->log[0] = '\0';
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p2", "120", "n2")), 0);
	assert_string_equal(f->log, "update p2@99->120; ");
	clear_seen(f);
	/* The watch cache says the version is too old: ERROR event, then the end. */
	send_error(f, 410, "Expired");
	end_watch(f, 0, 0, 0, NULL);
	assert_string_equal(tj_reflector_last_error(f->r),
	                    "watch pods: too old resource version: 5 (100)");
	assert_int_equal(f->errors, 1);
	assert_string_equal(f->error, "watch pods: too old resource version: 5 (100)");
	/* A relist after a backoff wait, never at once. */
	assert_int_equal(f->lists, 2);
	assert_null(f->list_fn);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 3);
	assert_string_equal(f->last_continue, "");
	assert_false(f->last_list_rv_set);
	assert_int_equal(f->watches, 1);

	/* p0 vanished while we were away, p1 is unchanged, p2 changed again, p4 is new. */
	snprintf(items, sizeof(items), "[%s,%s,%s]", pod_json("p1", "95", "n1"),
	         pod_json("p2", "130", "n2"), pod_json("p4", "131", "n4"));
	answer_page(f, "140", "", items);
	assert_string_equal(sorted_log(f),
	                    "add p4@131; delete p0@90; update p1@95->95; update p2@120->130; ");
	/* The synthesised deletes come last. */
	assert_string_equal(f->log + strlen(f->log) - strlen("delete p0@90; "), "delete p0@90; ");
	assert_null(cached(f, "ns/p0"));
	assert_non_null(cached(f, "ns/p4"));
	assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 3);
	assert_int_equal(f->synced, 1); /* only once */
	assert_int_equal(f->watches, 2);
	assert_string_equal(f->last_watch_rv, "140");
	tj_reflector_stats(f->r, &st);
	assert_int_equal(st.lists, 2);
	assert_int_equal(st.synthesised_deletes, 1);
	fake_free(f);
}

static void test_http_410_and_429(void **state)
{
	struct fake *f = fake_new();

	list_initial(f);
	/* The watch itself is refused with 410: relist after a wait. */
	end_watch(f, -EREMOTEIO, 410, 410, "Gone");
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 3);
	answer_page(f, "200", "", "[]");
	assert_int_equal(f->watches, 2);
	assert_string_equal(f->last_watch_rv, "200");

	/* 429: same version again after a wait, no list. */
	send_error(f, 429, "TooManyRequests");
	end_watch(f, 0, 0, 0, NULL);
	assert_int_equal(f->watches, 2);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->watches, 3);
	assert_int_equal(f->lists, 3);
	assert_string_equal(f->last_watch_rv, "200");

	/* Connection refused: the same. */
	end_watch(f, -ECONNREFUSED, 0, 0, NULL);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->watches, 4);
	assert_int_equal(f->lists, 3);
	fake_free(f);
}

/* Watching only with a watch open after the last list: never in the backoff wait before a
 * relist, nor while the relist is in flight (the cache may be behind then). */
static void test_watching_only_between_a_list_and_a_broken_watch(void **state)
{
	struct fake *f = fake_new();
	uint64_t since = 0;

	assert_false(tj_reflector_watching(f->r, NULL));
	list_initial(f);
	assert_true(tj_reflector_watching(f->r, &since));
	assert_int_equal(since, uv_now(&f->loop));
	end_watch(f, -EREMOTEIO, 410, 410, "Gone");
	assert_false(tj_reflector_watching(f->r, NULL)); /* waiting to relist */
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 3);
	assert_false(tj_reflector_watching(f->r, NULL)); /* the relist in flight */
	answer_page(f, "200", "", "[]");
	assert_true(tj_reflector_watching(f->r, &since));
	/* 429: the same version again, after a wait. */
	send_error(f, 429, "TooManyRequests");
	end_watch(f, 0, 0, 0, NULL);
	assert_false(tj_reflector_watching(f->r, NULL));
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_true(tj_reflector_watching(f->r, NULL));
	fake_free(f);
}

static void test_list_failures_retry(void **state)
{
	struct fake *f = fake_new();
	char items[1024];

	assert_int_equal(tj_reflector_start(f->r), 0);
	fail_page(f, 403, 403, "Forbidden");
	assert_string_equal(tj_reflector_last_error(f->r), "list pods: refused");
	assert_false(tj_reflector_has_synced(f->r));
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 2);

	/* A continue token that expires mid-list restarts from the first page. */
	snprintf(items, sizeof(items), "[%s]", pod_json("p0", "10", "n1"));
	answer_page(f, "50", "tok", items);
	fail_page(f, 410, 410, "Expired");
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 4);
	assert_string_equal(f->last_continue, "");
	answer_page(f, "60", "", "[]");
	/* p0 of the failed list never reached the cache: nothing to add, nothing to delete. */
	assert_string_equal(f->log, "synced(0); ");
	assert_true(tj_reflector_has_synced(f->r));

	/* list() refusing at once is retried the same way. */
	end_watch(f, 0, 0, 0, NULL); /* very short: relist */
	f->list_fail = -ENOMEM;
	f->list_fail_times = 3;
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->list_fail_times, 0);
	assert_int_equal(f->lists, 5);
	assert_string_equal(tj_reflector_last_error(f->r), "list pods: Cannot allocate memory");
	fake_free(f);
}

/* The cache as list_initial() left it: p0 and p1 on n1, p2 on n2, all of job j. */
static void assert_initial_cache(struct fake *f)
{
	const struct tj_store *st = tj_reflector_store(f->r);

	assert_int_equal(tj_store_len(st), 3);
	assert_string_equal(cached(f, "ns/p0")->resource_version, "90");
	assert_string_equal(cached(f, "ns/p1")->resource_version, "95");
	assert_string_equal(cached(f, "ns/p2")->resource_version, "99");
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_NODE, "n1"), 2);
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_NODE, "n2"), 1);
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_TRAINJOB, "ns/j"), 3);
}

/* Ends the watch of list_initial() with 410 and lets the backoff pass: the relist's first
 * page is then requested. */
static void start_relist(struct fake *f)
{
	end_watch(f, -EREMOTEIO, 410, 410, "Gone");
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 3);
	assert_string_equal(f->last_continue, "");
	clear_seen(f);
	f->errors = 0;
}

struct no_items_case {
	const char *name;
	const char *body;
	bool first_list; /* the first list (empty cache) rather than a relist */
	bool second_page;
};

static const struct no_items_case no_items_cases[] = {
	{ "no items", "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"200\"}}", false,
	  false },
	{ "items null", "{\"metadata\":{\"resourceVersion\":\"200\"},\"items\":null}", false,
	  false },
	{ "items an object", "{\"metadata\":{\"resourceVersion\":\"200\"},\"items\":{}}", false,
	  false },
	{ "items a string", "{\"metadata\":{\"resourceVersion\":\"200\"},\"items\":\"[]\"}", false,
	  false },
	{ "body an array", "[]", false, false },
	{ "no items on the second page",
	  "{\"metadata\":{\"resourceVersion\":\"200\",\"continue\":\"\"}}", false, true },
	{ "no items in the first list", "{\"metadata\":{\"resourceVersion\":\"200\"}}", true,
	  false },
};

/* case: a 200 list reply without an items array is refused like a failed page: the cache
 * is unchanged (never emptied), no handler runs, no watch starts, the error is counted and
 * told, and the list is retried from its first page after a backoff wait. */
static void test_list_without_items_is_refused(void **state)
{
	for (size_t i = 0; i < sizeof(no_items_cases) / sizeof(no_items_cases[0]); i++) {
		const struct no_items_case *c = &no_items_cases[i];
		struct fake *f = fake_new();
		struct tj_reflector_stats st;
		int lists;

		print_message("# case: %s\n", c->name);
		if (c->first_list) {
			assert_int_equal(tj_reflector_start(f->r), 0);
		} else {
			list_initial(f);
			start_relist(f);
		}
		if (c->second_page) {
			char items[512];

			snprintf(items, sizeof(items), "[%s]", pod_json("p9", "199", "n9"));
			answer_page(f, "200", "tok", items);
		}
		lists = f->lists;
		answer_body(f, c->body);
		assert_string_equal(f->log, "");
		if (c->first_list) {
			assert_false(tj_reflector_has_synced(f->r));
			assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 0);
			assert_int_equal(f->watches, 0);
		} else {
			assert_initial_cache(f);
			assert_null(cached(f, "ns/p9"));
			assert_int_equal(f->watches, 1);
		}
		tj_reflector_stats(f->r, &st);
		assert_int_equal(st.list_errors, 1);
		assert_int_equal(st.lists, c->first_list ? 0 : 1);
		assert_int_equal(st.synthesised_deletes, 0);
		assert_string_equal(tj_reflector_last_error(f->r),
		                    "list pods: the reply has no items array");
		assert_int_equal(f->errors, 1);
		assert_string_equal(f->error, "list pods: the reply has no items array");
		/* Retried after a wait, never at once, from the first page. */
		assert_int_equal(f->lists, lists);
		assert_null(f->list_fn);
		uv_run(&f->loop, UV_RUN_DEFAULT);
		assert_int_equal(f->lists, lists + 1);
		assert_string_equal(f->last_continue, "");
		answer_page(f, "210", "", "[]");
		tj_reflector_stats(f->r, &st);
		assert_int_equal(st.lists, c->first_list ? 1 : 2);
		assert_int_equal(st.synthesised_deletes, c->first_list ? 0 : 3);
		assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 0);
		assert_true(tj_reflector_has_synced(f->r));
		assert_string_equal(f->last_watch_rv, "210");
		fake_free(f);
	}
}

/* case: a relist of three pages gathers aside: between its pages the cache (what a reconcile
 * reads) holds the contents before it, and no handler runs; after the last page the new
 * contents are in at once, indexes included, every handler sees the whole of them, and
 * the delete of what vanished is synthesised only then. */
static void test_relist_swaps_at_the_last_page(void **state)
{
	struct fake *f = fake_new();
	const struct tj_store *st;
	struct tj_reflector_stats stats;
	char items[2048];

	list_initial(f);
	start_relist(f);
	snprintf(items, sizeof(items), "[%s,%s]", pod_json("p1", "95", "n1"),
	         pod_json("p3", "150", "n3"));
	answer_page(f, "300", "t1", items);
	assert_string_equal(f->last_continue, "t1");
	assert_string_equal(f->log, "");
	assert_initial_cache(f);
	assert_null(cached(f, "ns/p3"));
	assert_int_equal(tj_store_index_count(tj_reflector_store(f->r), TJ_POD_INDEX_NODE, "n3"),
	                 0);

	snprintf(items, sizeof(items), "[%s]", pod_json("p2", "160", "n3"));
	answer_page(f, "300", "t2", items);
	assert_string_equal(f->last_continue, "t2");
	assert_string_equal(f->log, "");
	assert_initial_cache(f);
	assert_int_equal(f->watches, 1);

	snprintf(items, sizeof(items), "[%s]", pod_json("p4", "170", "n4"));
	answer_page(f, "300", "", items);
	assert_string_equal(sorted_log(f), "add p3@150; add p4@170; delete p0@90; "
	                                   "update p1@95->95; update p2@99->160; ");
	assert_string_equal(f->log + strlen(f->log) - strlen("delete p0@90; "), "delete p0@90; ");
	assert_int_equal(f->len_min, 4);
	assert_int_equal(f->len_max, 4);
	st = tj_reflector_store(f->r);
	assert_int_equal(tj_store_len(st), 4);
	assert_null(cached(f, "ns/p0"));
	assert_string_equal(cached(f, "ns/p1")->resource_version, "95");
	assert_string_equal(cached(f, "ns/p2")->resource_version, "160");
	assert_string_equal(cached(f, "ns/p3")->resource_version, "150");
	assert_string_equal(cached(f, "ns/p4")->resource_version, "170");
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_NODE, "n1"), 1);
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_NODE, "n2"), 0);
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_NODE, "n3"), 2);
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_NODE, "n4"), 1);
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_TRAINJOB, "ns/j"), 4);
	tj_reflector_stats(f->r, &stats);
	assert_int_equal(stats.lists, 2);
	assert_int_equal(stats.synthesised_deletes, 1);
	assert_int_equal(stats.list_errors, 0);
	assert_int_equal(f->watches, 2);
	assert_string_equal(f->last_watch_rv, "300");
	assert_string_equal(tj_reflector_resource_version(f->r), "300");

	/* The watch goes on from the swapped-in cache. */
	clear_seen(f);
	assert_int_equal(send_event(f, TJ_WATCH_DELETED, pod_json("p3", "301", "n3")), 0);
	assert_string_equal(f->log, "delete p3@301; ");
	assert_int_equal(tj_store_index_count(st, TJ_POD_INDEX_NODE, "n3"), 1);
	fake_free(f);
}

struct relist_failure_case {
	const char *name;
	long http; /* the third page's refusal; 0 when list() itself refuses it */
	int code;
	const char *reason;
	const char *error; /* tj_reflector_last_error() */
};

static const struct relist_failure_case relist_failures[] = {
	{ "410 Expired on page 3", 410, 410, "Expired", "list pods: refused" },
	{ "500 on page 3", 500, 500, "InternalError", "list pods: refused" },
	{ "list() refuses page 3", 0, 0, NULL, "list pods: Cannot allocate memory" },
};

/* case: a relist that fails on its third page leaves the cache as it was before the relist
 * (objects, versions, indexes), runs no handler, and starts again from the first page. */
static void test_relist_failure_leaves_cache(void **state)
{
	for (size_t i = 0; i < sizeof(relist_failures) / sizeof(relist_failures[0]); i++) {
		const struct relist_failure_case *c = &relist_failures[i];
		struct fake *f = fake_new();
		struct tj_reflector_stats st;
		char items[2048];

		print_message("# case: %s\n", c->name);
		list_initial(f);
		start_relist(f);
		snprintf(items, sizeof(items), "[%s,%s]", pod_json("p1", "95", "n1"),
		         pod_json("p3", "150", "n3"));
		answer_page(f, "300", "t1", items);
		snprintf(items, sizeof(items), "[%s]", pod_json("p2", "160", "n3"));
		if (!c->http) {
			f->list_fail = -ENOMEM;
			f->list_fail_times = 1;
		}
		answer_page(f, "300", "t2", items);
		if (c->http)
			fail_page(f, c->http, c->code, c->reason);
		assert_string_equal(f->log, "");
		assert_initial_cache(f);
		assert_null(cached(f, "ns/p3"));
		assert_int_equal(
		        tj_store_index_count(tj_reflector_store(f->r), TJ_POD_INDEX_NODE, "n3"), 0);
		tj_reflector_stats(f->r, &st);
		assert_int_equal(st.list_errors, 1);
		assert_int_equal(st.lists, 1);
		assert_int_equal(st.synthesised_deletes, 0);
		assert_string_equal(tj_reflector_last_error(f->r), c->error);
		assert_int_equal(f->errors, 1);
		assert_int_equal(f->watches, 1);

		uv_run(&f->loop, UV_RUN_DEFAULT);
		assert_string_equal(f->last_continue, "");
		snprintf(items, sizeof(items), "[%s]", pod_json("p1", "95", "n1"));
		answer_page(f, "310", "", items);
		assert_string_equal(sorted_log(f),
		                    "delete p0@90; delete p2@99; update p1@95->95; ");
		assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 1);
		assert_int_equal(f->watches, 2);
		fake_free(f);
	}
}

/* case: with ops->version, a write-back made during a relist lands in the cache at once;
 * the list, which marks what exists, replaces it at its last page; after the swap the
 * older-event check reads the new cache: an event older than the listed object is dropped,
 * the write-back's own event is taken. */
static void test_write_back_across_a_relist(void **state)
{
	static struct tj_store_ops ops;
	struct fake *f;
	char items[2048];
	cJSON *obj;

	ops = tj_pod_store_ops;
	ops.version = pod_version;
	f = fake_new_with(&ops, false);
	list_initial(f);
	start_relist(f);
	snprintf(items, sizeof(items), "[%s]", pod_json("p0", "90", "n1"));
	answer_page(f, "300", "t1", items);
	obj = cJSON_Parse(pod_json("p1", "305", "n5"));
	assert_int_equal(tj_reflector_write_back(f->r, obj), 0);
	cJSON_Delete(obj);
	assert_string_equal(cached(f, "ns/p1")->resource_version, "305");
	assert_string_equal(f->log, "");

	snprintf(items, sizeof(items), "[%s,%s]", pod_json("p1", "95", "n1"),
	         pod_json("p2", "250", "n2"));
	answer_page(f, "300", "", items);
	assert_string_equal(sorted_log(f), "update p0@90->90; update p1@305->95; "
	                                   "update p2@99->250; ");
	assert_string_equal(cached(f, "ns/p1")->resource_version, "95");
	assert_int_equal(tj_store_index_count(tj_reflector_store(f->r), TJ_POD_INDEX_NODE, "n5"),
	                 0);
	clear_seen(f);
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p2", "200", "n7")), 0);
	assert_string_equal(f->log, "");
	assert_string_equal(cached(f, "ns/p2")->resource_version, "250");
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p1", "305", "n5")), 0);
	assert_string_equal(f->log, "update p1@95->305; ");
	assert_int_equal(tj_store_index_count(tj_reflector_store(f->r), TJ_POD_INDEX_NODE, "n5"),
	                 1);
	fake_free(f);
}

static void test_free_cancels_in_flight(void **state)
{
	struct fake *f = fake_new();

	list_initial(f);
	assert_non_null(f->on_done);
	fake_free(f);
	assert_int_equal(f->cancels, 1);
}

/* ---- the streaming list ---- */

/* A bookmark; end marks the end of a streaming list's initial events. */
static void send_bookmark(struct fake *f, const char *rv, bool end)
{
	char obj[256];

	snprintf(obj, sizeof(obj),
	         "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
	         "\"%s\"%s}}",
	         rv, end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
	assert_int_equal(send_event(f, TJ_WATCH_BOOKMARK, obj), 0);
}

/* The watch in flight is a streaming list: initial events from a state at least as new as
 * a consistent read, with bookmarks. */
static void assert_streaming_watch(struct fake *f)
{
	assert_non_null(f->on_done);
	assert_true(f->last_initial_events);
	assert_string_equal(f->last_rv_match, "NotOlderThan");
	assert_string_equal(f->last_watch_rv, "(null)");
	assert_true(f->last_bookmarks);
	assert_string_equal(f->last_watch_selector, "trainer.kubeflow.org/trainjob-name");
}

static void test_streaming_list_lands_at_its_bookmark_and_goes_on_watching(void **state)
{
	struct fake *f = fake_new_with(&tj_pod_store_ops, true);
	struct tj_reflector_stats st;

	assert_int_equal(tj_reflector_start(f->r), 0);
	assert_int_equal(f->lists, 0);
	assert_int_equal(f->watches, 1);
	assert_streaming_watch(f);
	assert_int_equal(send_event(f, TJ_WATCH_ADDED, pod_json("p0", "90", "n1")), 0);
	assert_int_equal(send_event(f, TJ_WATCH_ADDED, pod_json("p1", "95", "n1")), 0);
	assert_int_equal(send_event(f, TJ_WATCH_ADDED, pod_json("p2", "97", "n2")), 0);
	assert_int_equal(send_event(f, TJ_WATCH_DELETED, pod_json("p2", "98", "n2")), 0);
	/* A plain bookmark is no end; until the end the cache and the handlers see nothing. */
	send_bookmark(f, "99", false);
	assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 0);
	assert_false(tj_reflector_has_synced(f->r));
	assert_string_equal(f->log, "");
	assert_string_equal(tj_reflector_resource_version(f->r), "");
	assert_false(tj_reflector_watching(f->r, NULL)); /* a list, though a watch is open */
	send_bookmark(f, "100", true);
	assert_true(tj_reflector_has_synced(f->r));
	assert_true(tj_reflector_watching(f->r, NULL));
	assert_string_equal(sorted_log(f), "add p0@90; add p1@95; synced(2); ");
	assert_string_equal(tj_reflector_resource_version(f->r), "100");
	/* The same stream goes on as the watch. */
	clear_seen(f);
	assert_int_equal(send_event(f, TJ_WATCH_MODIFIED, pod_json("p0", "101", "n1")), 0);
	assert_string_equal(f->log, "update p0@90->101; ");
	assert_string_equal(tj_reflector_resource_version(f->r), "101");
	assert_int_equal(f->watches, 1);
	tj_reflector_stats(f->r, &st);
	assert_int_equal(st.lists, 1);
	assert_int_equal(st.streamed_lists, 1);
	assert_int_equal(st.stream_fallbacks, 0);
	/* After 410 the relist streams again; the cache stays whole until its end. */
	end_watch(f, -EREMOTEIO, 410, 410, "Gone");
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->watches, 2);
	assert_streaming_watch(f);
	clear_seen(f);
	assert_int_equal(send_event(f, TJ_WATCH_ADDED, pod_json("p0", "101", "n1")), 0);
	assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 2);
	send_bookmark(f, "200", true);
	assert_string_equal(sorted_log(f), "delete p1@95; update p0@101->101; ");
	assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 1);
	assert_int_equal(f->lists, 0);
	fake_free(f);
}

static void test_streaming_list_refused_falls_back_to_pages(void **state)
{
	struct fake *f = fake_new_with(&tj_pod_store_ops, true);
	struct tj_reflector_stats st;
	char items[1024];

	assert_int_equal(tj_reflector_start(f->r), 0);
	assert_streaming_watch(f);
	assert_int_equal(send_event(f, TJ_WATCH_ADDED, pod_json("p0", "90", "n1")), 0);
	/* A server without WatchList refuses the parameters. */
	end_watch(f, -EREMOTEIO, 422, 422, "Invalid");
	assert_false(tj_reflector_has_synced(f->r));
	assert_string_equal(tj_reflector_last_error(f->r),
	                    "streaming list pods: falling back to paginated lists");
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 1);
	assert_int_equal(f->watches, 1);
	snprintf(items, sizeof(items), "[%s]", pod_json("p0", "90", "n1"));
	answer_page(f, "100", "", items);
	assert_true(tj_reflector_has_synced(f->r));
	assert_int_equal(f->watches, 2);
	assert_false(f->last_initial_events);
	assert_string_equal(f->last_watch_rv, "100");
	/* Relists stay paginated. */
	end_watch(f, -EREMOTEIO, 410, 410, "Gone");
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(f->lists, 2);
	tj_reflector_stats(f->r, &st);
	assert_int_equal(st.stream_fallbacks, 1);
	assert_int_equal(st.streamed_lists, 0);
	fake_free(f);
}

static void test_streaming_list_that_keeps_breaking_falls_back(void **state)
{
	struct fake *f = fake_new_with(&tj_pod_store_ops, true);

	assert_int_equal(tj_reflector_start(f->r), 0);
	/* Closed or broken before the end: the cache stays as it was, and it streams again after
	 * a wait, TJ_REFLECTOR_STREAM_TRIES times in all. */
	for (int i = 1; i <= TJ_REFLECTOR_STREAM_TRIES; i++) {
		assert_int_equal(f->watches, i);
		assert_streaming_watch(f);
		assert_int_equal(send_event(f, TJ_WATCH_ADDED, pod_json("p0", "90", "n1")), 0);
		end_watch(f, i % 2 ? 0 : -EBADMSG, 0, 0, NULL);
		assert_int_equal(tj_store_len(tj_reflector_store(f->r)), 0);
		uv_run(&f->loop, UV_RUN_DEFAULT);
	}
	assert_int_equal(f->watches, TJ_REFLECTOR_STREAM_TRIES);
	assert_int_equal(f->lists, 1);
	assert_string_equal(f->log, "");
	answer_page(f, "100", "", "[]");
	assert_true(tj_reflector_has_synced(f->r));
	fake_free(f);
}

/* A resource the server does not serve yet (a CRD installed later) or a refusal a list
 * would meet too is no reason to stop streaming. */
static void test_streaming_list_not_found_streams_again(void **state)
{
	struct fake *f = fake_new_with(&tj_pod_store_ops, true);

	assert_int_equal(tj_reflector_start(f->r), 0);
	for (int i = 1; i <= TJ_REFLECTOR_STREAM_TRIES + 1; i++) {
		assert_int_equal(f->watches, i);
		assert_streaming_watch(f);
		end_watch(f, -EREMOTEIO, i % 2 ? 404 : 403, 0, NULL);
		uv_run(&f->loop, UV_RUN_DEFAULT);
	}
	assert_int_equal(f->lists, 0);
	send_bookmark(f, "7", true);
	assert_true(tj_reflector_has_synced(f->r));
	assert_string_equal(f->log, "synced(0); ");
	fake_free(f);
}

/* Three streaming reflectors on one loop that share turns, started in the order a, b, c;
 * returns a, whose loop it is. */
static struct fake *start_three_in_turns(struct fake *b, struct fake *c,
                                         struct tj_list_turns *turns)
{
	struct fake *a = fake_new_with(&tj_pod_store_ops, true);

	tj_reflector_free(a->r);
	memset(b, 0, sizeof(*b));
	memset(c, 0, sizeof(*c));
	fake_attach(a, &a->loop, &tj_pod_store_ops, true, turns);
	fake_attach(b, &a->loop, &tj_pod_store_ops, true, turns);
	fake_attach(c, &a->loop, &tj_pod_store_ops, true, turns);
	assert_int_equal(tj_reflector_start(a->r), 0);
	assert_int_equal(tj_reflector_start(b->r), 0);
	assert_int_equal(tj_reflector_start(c->r), 0);
	return a;
}

/* Three reflectors share the turns of their streaming lists: one streams at a time, in the
 * order they started; a holder passes the turn on when its initial events are in, when its
 * stream ends, or when it has received nothing for the idle period, and then goes on
 * streaming beside the next one. */
static void test_streaming_lists_take_turns(void **state)
{
	static struct fake b, c;
	struct tj_list_turns turns = { 0 };
	struct fake *a = start_three_in_turns(&b, &c, &turns);

	assert_int_equal(a->watches, 1);
	assert_streaming_watch(a);
	assert_int_equal(b.watches + c.watches + b.lists + c.lists, 0);
	/* a's initial events are in: b streams next, c still waits. */
	assert_int_equal(send_event(a, TJ_WATCH_ADDED, pod_json("p0", "90", "n1")), 0);
	send_bookmark(a, "100", true);
	assert_true(tj_reflector_has_synced(a->r));
	assert_int_equal(b.watches, 0);
	uv_run(&a->loop, UV_RUN_NOWAIT);
	assert_int_equal(b.watches, 1);
	assert_streaming_watch(&b);
	assert_int_equal(c.watches, 0);
	/* b makes progress and keeps the turn over one check; idle over the next, it passes the
	 * turn on and goes on streaming. */
	assert_int_equal(send_event(&b, TJ_WATCH_ADDED, pod_json("p1", "91", "n1")), 0);
	uv_run(&a->loop, UV_RUN_ONCE);
	uv_run(&a->loop, UV_RUN_NOWAIT);
	assert_int_equal(c.watches, 0);
	uv_run(&a->loop, UV_RUN_ONCE);
	uv_run(&a->loop, UV_RUN_NOWAIT);
	assert_int_equal(c.watches, 1);
	assert_streaming_watch(&c);
	assert_non_null(b.on_done);
	assert_false(tj_reflector_has_synced(b.r));
	/* c's stream ends before its initial events: it streams again after its backoff. */
	end_watch(&c, 0, 0, 0, NULL);
	while (c.watches < 2)
		uv_run(&a->loop, UV_RUN_ONCE);
	assert_streaming_watch(&c);
	send_bookmark(&b, "101", true);
	send_bookmark(&c, "102", true);
	assert_true(tj_reflector_has_synced(b.r));
	assert_true(tj_reflector_has_synced(c.r));
	assert_string_equal(b.log, "add p1@91; synced(1); ");
	assert_null(turns.holder);
	assert_null(turns.first);
	tj_reflector_free(b.r);
	tj_reflector_free(c.r);
	fake_free(a);
}

/* A reflector freed while it waits leaves the line; one freed while it streams passes the
 * turn on. */
static void test_freed_reflectors_leave_the_turns(void **state)
{
	static struct fake b, c;
	struct tj_list_turns turns = { 0 };
	struct fake *a = start_three_in_turns(&b, &c, &turns);

	tj_reflector_free(b.r);
	assert_ptr_equal(turns.first, c.r);
	assert_ptr_equal(turns.last, c.r);
	tj_reflector_free(a->r);
	assert_ptr_equal(turns.holder, c.r);
	assert_null(turns.first);
	assert_null(turns.last);
	uv_run(&a->loop, UV_RUN_NOWAIT);
	assert_int_equal(c.watches, 1);
	assert_int_equal(b.watches, 0);
	tj_reflector_free(c.r);
	assert_null(turns.holder);
	uv_run(&a->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&a->loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_after_watch),
		cmocka_unit_test(test_is_expired),
		cmocka_unit_test(test_backoff_values),
		cmocka_unit_test(test_watch_timeout),
		cmocka_unit_test(test_list_then_watch_events),
		cmocka_unit_test(test_write_back),
		cmocka_unit_test(test_expired_relists_and_synthesises_deletes),
		cmocka_unit_test(test_http_410_and_429),
		cmocka_unit_test(test_watching_only_between_a_list_and_a_broken_watch),
		cmocka_unit_test(test_list_failures_retry),
		cmocka_unit_test(test_list_without_items_is_refused),
		cmocka_unit_test(test_relist_swaps_at_the_last_page),
		cmocka_unit_test(test_relist_failure_leaves_cache),
		cmocka_unit_test(test_write_back_across_a_relist),
		cmocka_unit_test(test_free_cancels_in_flight),
		cmocka_unit_test(test_streaming_list_lands_at_its_bookmark_and_goes_on_watching),
		cmocka_unit_test(test_streaming_list_refused_falls_back_to_pages),
		cmocka_unit_test(test_streaming_list_that_keeps_breaking_falls_back),
		cmocka_unit_test(test_streaming_list_not_found_streams_again),
		cmocka_unit_test(test_streaming_lists_take_turns),
		cmocka_unit_test(test_freed_reflectors_leave_the_turns),
	};
	return cmocka_run_group_tests_name("reflector", tests, NULL, NULL);
}
