#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/watch.h"

/* What the callback saw, one line per event: "TYPE name" or "ERROR code reason". */
struct seen {
	char text[2048];
	int count;
	int stop_after; /* return -EINTR at this event (1-based); 0 = never */
	cJSON *kept;    /* an object the callback took ownership of */
};

static int record(struct tj_watch_event *ev, void *userdata)
{
	struct seen *s = userdata;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->object, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	size_t len = strlen(s->text);

	if (ev->type == TJ_WATCH_ERROR)
		snprintf(s->text + len, sizeof(s->text) - len, "ERROR %d %s|", ev->status.code,
		         ev->status.reason ? ev->status.reason : "-");
	else
		snprintf(s->text + len, sizeof(s->text) - len, "%s %s|",
		         tj_watch_event_type_name(ev->type),
		         cJSON_IsString(name) ? name->valuestring : "-");
	s->count++;
	if (s->stop_after && s->count == s->stop_after)
		return -EINTR;
	return 0;
}

static const char stream[] =
        "{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\","
        "\"resourceVersion\":\"1\"},\"spec\":{\"note\":\"brace } and \\\"quote\\\" and \\\\n\"}}}\n"
        "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}}\r\n"
        "\n"
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":"
        "\"9\"}}}\n"
        "{\"type\":\"DELETED\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"ü\"}}}\n"
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
        "\"Failure\",\"message\":\"too old resource version: 1 (5)\",\"reason\":\"Expired\","
        "\"code\":410}}\n";

static const char want[] = "ADDED a|MODIFIED b|BOOKMARK -|DELETED ü|ERROR 410 Expired|";

static void test_every_split_point(void **state)
{
	size_t len = sizeof(stream) - 1;

	for (size_t cut = 0; cut <= len; cut++) {
		struct tj_watch_framer f;
		struct seen s = { 0 };

		tj_watch_framer_init(&f, 0);
		assert_int_equal(tj_watch_framer_feed(&f, stream, cut, record, &s), 0);
		assert_int_equal(tj_watch_framer_feed(&f, stream + cut, len - cut, record, &s), 0);
		assert_int_equal(tj_watch_framer_finish(&f, record, &s), 0);
		if (strcmp(s.text, want) != 0)
			fail_msg("cut at %zu: got %s", cut, s.text);
		tj_watch_framer_clear(&f);
	}
}

static void test_every_pair_of_split_points(void **state)
{
	size_t len = sizeof(stream) - 1;

	for (size_t a = 0; a <= len; a += 7) {
		for (size_t b = a; b <= len; b++) {
			struct tj_watch_framer f;
			struct seen s = { 0 };

			tj_watch_framer_init(&f, 0);
			assert_int_equal(tj_watch_framer_feed(&f, stream, a, record, &s), 0);
			assert_int_equal(tj_watch_framer_feed(&f, stream + a, b - a, record, &s),
			                 0);
			assert_int_equal(tj_watch_framer_feed(&f, stream + b, len - b, record, &s),
			                 0);
			if (strcmp(s.text, want) != 0)
				fail_msg("cuts at %zu, %zu: got %s", a, b, s.text);
			tj_watch_framer_clear(&f);
		}
	}
}

static void test_byte_by_byte(void **state)
{
	struct tj_watch_framer f;
	struct seen s = { 0 };

	tj_watch_framer_init(&f, 0);
	for (size_t i = 0; i < sizeof(stream) - 1; i++)
		assert_int_equal(tj_watch_framer_feed(&f, stream + i, 1, record, &s), 0);
	assert_string_equal(s.text, want);
	assert_int_equal(s.count, 5);
	tj_watch_framer_clear(&f);
}

static void test_last_event_without_newline(void **state)
{
	static const char tail[] =
	        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"z\"}}}";
	struct tj_watch_framer f;
	struct seen s = { 0 };

	tj_watch_framer_init(&f, 0);
	assert_int_equal(tj_watch_framer_feed(&f, tail, sizeof(tail) - 1, record, &s), 0);
	assert_int_equal(s.count, 0);
	assert_int_equal(tj_watch_framer_finish(&f, record, &s), 0);
	assert_string_equal(s.text, "ADDED z|");
	/* Finishing again delivers nothing. */
	assert_int_equal(tj_watch_framer_finish(&f, record, &s), 0);
	assert_int_equal(s.count, 1);
	tj_watch_framer_clear(&f);
}

static void test_size_limit(void **state)
{
	static const char ev[] =
	        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"n\"}}}\n";
	size_t line = sizeof(ev) - 2; /* without the newline */
	struct tj_watch_framer f;
	struct seen s = { 0 };

	/* Exactly at the limit passes, whether whole or split. */
	tj_watch_framer_init(&f, line);
	assert_int_equal(tj_watch_framer_feed(&f, ev, sizeof(ev) - 1, record, &s), 0);
	assert_int_equal(tj_watch_framer_feed(&f, ev, 10, record, &s), 0);
	assert_int_equal(tj_watch_framer_feed(&f, ev + 10, sizeof(ev) - 11, record, &s), 0);
	assert_int_equal(s.count, 2);
	tj_watch_framer_clear(&f);

	/* One byte less: -EMSGSIZE, whole or split, and the error sticks. */
	for (size_t cut = 0; cut < sizeof(ev) - 1; cut++) {
		int r;

		memset(&s, 0, sizeof(s));
		tj_watch_framer_init(&f, line - 1);
		r = tj_watch_framer_feed(&f, ev, cut, record, &s);
		if (r == 0)
			r = tj_watch_framer_feed(&f, ev + cut, sizeof(ev) - 1 - cut, record, &s);
		assert_int_equal(r, -EMSGSIZE);
		assert_int_equal(s.count, 0);
		assert_int_equal(tj_watch_framer_feed(&f, "\n", 1, record, &s), -EMSGSIZE);
		assert_int_equal(tj_watch_framer_finish(&f, record, &s), -EMSGSIZE);
		tj_watch_framer_clear(&f);
	}
}

static void test_unterminated_line_is_bounded(void **state)
{
	char chunk[4096];
	struct tj_watch_framer f;
	struct seen s = { 0 };
	int r = 0;

	memset(chunk, 'x', sizeof(chunk));
	tj_watch_framer_init(&f, 64 * 1024);
	for (int i = 0; i < 100 && r == 0; i++)
		r = tj_watch_framer_feed(&f, chunk, sizeof(chunk), record, &s);
	assert_int_equal(r, -EMSGSIZE);
	assert_true(f.cap <= 64 * 1024);
	tj_watch_framer_clear(&f);
}

struct bad_case {
	const char *name;
	const char *line;
};

static const struct bad_case bad_cases[] = {
	{ "not JSON", "{\"type\":\"ADDED\",\n" },
	{ "unknown type", "{\"type\":\"RENAMED\",\"object\":{}}\n" },
	{ "no object", "{\"type\":\"ADDED\"}\n" },
	{ "object not an object", "{\"type\":\"ADDED\",\"object\":[1]}\n" },
	{ "type not a string", "{\"type\":1,\"object\":{}}\n" },
	{ "top level array", "[{\"type\":\"ADDED\",\"object\":{}}]\n" },
	{ "ERROR object not a Status", "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Pod\"}}\n" },
	{ "two events on one line", "{\"type\":\"ADDED\",\"object\":{}}{\"type\":\"ADDED\"}\n" },
};

static void test_malformed_events(void **state)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		struct tj_watch_framer f;
		struct seen s = { 0 };
		const char *l = bad_cases[i].line;

		print_message("# case: %s\n", bad_cases[i].name);
		tj_watch_framer_init(&f, 0);
		assert_int_equal(tj_watch_framer_feed(&f, l, strlen(l), record, &s), -EBADMSG);
		assert_int_equal(s.count, 0);
		/* Sticky: a valid event afterwards is not delivered. */
		assert_int_equal(tj_watch_framer_feed(&f, stream, 50, record, &s), -EBADMSG);
		tj_watch_framer_clear(&f);
	}
}

static void test_callback_stops_the_stream(void **state)
{
	struct tj_watch_framer f;
	struct seen s = { .stop_after = 2 };

	tj_watch_framer_init(&f, 0);
	assert_int_equal(tj_watch_framer_feed(&f, stream, sizeof(stream) - 1, record, &s), -EINTR);
	assert_string_equal(s.text, "ADDED a|MODIFIED b|");
	assert_int_equal(tj_watch_framer_feed(&f, "\n", 1, record, &s), -EINTR);
	tj_watch_framer_clear(&f);
}

static int keep_object(struct tj_watch_event *ev, void *userdata)
{
	struct seen *s = userdata;

	cJSON_Delete(s->kept);
	s->kept = ev->object;
	ev->object = NULL;
	return 0;
}

static void test_callback_may_take_the_object(void **state)
{
	struct tj_watch_framer f;
	struct seen s = { 0 };
	const cJSON *meta;

	tj_watch_framer_init(&f, 0);
	assert_int_equal(tj_watch_framer_feed(&f, stream, sizeof(stream) - 1, keep_object, &s), 0);
	/* The last event kept is the ERROR's Status. */
	meta = cJSON_GetObjectItemCaseSensitive(s.kept, "reason");
	assert_string_equal(meta->valuestring, "Expired");
	cJSON_Delete(s.kept);
	tj_watch_framer_clear(&f);
}

static void test_parse_error_event(void **state)
{
	static const char line[] =
	        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":\"Failure\","
	        "\"message\":\"too old resource version: 5 "
	        "(10)\",\"reason\":\"Gone\",\"code\":410}}";
	struct tj_watch_event ev;

	assert_int_equal(tj_watch_event_parse(line, sizeof(line) - 1, &ev), 0);
	assert_int_equal(ev.type, TJ_WATCH_ERROR);
	assert_int_equal(ev.status.code, 410);
	assert_string_equal(ev.status.reason, "Gone");
	assert_string_equal(ev.status.message, "too old resource version: 5 (10)");
	assert_true(tj_status_is_expired(&ev.status));
	assert_non_null(ev.object);
	tj_watch_event_clear(&ev);
	assert_null(ev.object);
	assert_null(ev.status.reason);
}

struct url_case {
	const char *name;
	struct tj_ref ref;
	struct tj_watch_options opts;
	int want_rc;
	const char *want;
};

static const struct url_case url_cases[] = {
	{ "reflector-style watch",
	  { &tj_resource_pods, "ns", NULL, NULL },
	  { .resource_version = "123",
	    .timeout_seconds = 417,
	    .allow_bookmarks = true,
	    .label_selector = "trainer.kubeflow.org/trainjob-name" },
	  0,
	  "/api/v1/namespaces/ns/pods?watch=1&resourceVersion=123&allowWatchBookmarks=true&"
	  "timeoutSeconds=417&labelSelector=trainer.kubeflow.org%2Ftrainjob-name" },
	{ "streaming list",
	  { &tj_resource_trainjobs, NULL, NULL, NULL },
	  { .resource_version_match = "NotOlderThan",
	    .send_initial_events = true,
	    .allow_bookmarks = true },
	  0,
	  "/apis/trainer.kubeflow.org/v1alpha1/trainjobs?watch=1&resourceVersionMatch=NotOlderThan&"
	  "allowWatchBookmarks=true&sendInitialEvents=true" },
	{ "field selector of one node",
	  { &tj_resource_nodes, NULL, NULL, NULL },
	  { .field_selector = "metadata.name=gh200-0" },
	  0,
	  "/api/v1/nodes?watch=1&fieldSelector=metadata.name%3Dgh200-0" },
	{ "a name is refused", { &tj_resource_pods, "ns", "p", NULL }, { 0 }, -EINVAL, NULL },
	{ "negative timeout",
	  { &tj_resource_pods, NULL, NULL, NULL },
	  { .timeout_seconds = -1 },
	  -EINVAL,
	  NULL },
};

static void test_watch_url(void **state)
{
	for (size_t i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
		const struct url_case *c = &url_cases[i];
		char *url = NULL;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_kube_watch_url(&c->ref, &c->opts, &url), c->want_rc);
		if (c->want)
			assert_string_equal(url, c->want);
		else
			assert_null(url);
		free(url);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_split_point),
		cmocka_unit_test(test_every_pair_of_split_points),
		cmocka_unit_test(test_byte_by_byte),
		cmocka_unit_test(test_last_event_without_newline),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_unterminated_line_is_bounded),
		cmocka_unit_test(test_malformed_events),
		cmocka_unit_test(test_callback_stops_the_stream),
		cmocka_unit_test(test_callback_may_take_the_object),
		cmocka_unit_test(test_parse_error_event),
		cmocka_unit_test(test_watch_url),
	};
	return cmocka_run_group_tests_name("kube_watch", tests, NULL, NULL);
}
