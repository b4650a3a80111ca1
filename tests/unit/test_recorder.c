/* The event recorder against the scripted API server (scripted_server.h): the Event it
 * creates, a repeat folded into a PATCH of count and lastTimestamp, a failed create or patch
 * (logged, counted, and the next occurrence creates afresh), the spam budget, and freeing it
 * with writes in flight. The decisions themselves are test_events.c's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/executor/recorder.h"
#include "controller/executor/recorder_internal.h"
#include "controller/log/log.h"
#include "fixtures.h"
#include "reconcilers/events.h"
#include "scripted_server.h"

#define EVENTS "/api/v1/namespaces/team-a/events"
#define SEC    INT64_C(1000000000)
#define T0     (INT64_C(1795946400) * SEC) /* 2026-11-29T10:00:00Z */
/* The name of the Event first recorded at T0 + 5 ns: the object's, then the time in hex. */
#define NAME "vit.18ec7bbc47a44005"

static const struct tj_event_object vit = { "team-a", "vit", "uid-vit", NULL };

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
	struct tj_recorder *recorder;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	fx->client = server_client_new(&fx->server);
	assert_int_equal(
	        tj_recorder_new(fx->client, "trainjob-controller", "ctrl-0", &fx->recorder), 0);
	server_capture_log(&fx->server);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fx->recorder = tj_recorder_free(fx->recorder);
	fx->client = tj_client_free(fx->client);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

static struct tj_recorder_stats stats(const struct fixture *fx)
{
	struct tj_recorder_stats st;

	tj_recorder_stats(fx->recorder, &st);
	return st;
}

/* Writes answered so far. */
static int answered(const struct fixture *fx)
{
	struct tj_recorder_stats st = stats(fx);

	return (int)(st.created + st.patched + st.failed);
}

/* How many requests have a body containing text. */
static int find_body(const struct fixture *fx, const char *text)
{
	int n = 0;

	for (int i = 0; i < fx->server.n_seen; i++)
		n += strstr(fx->server.seen[i].body, text) != NULL;
	return n;
}

static void test_create_then_patch_a_repeat(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
		{ .method = "PATCH", .path = EVENTS "/" NAME, .status = 200, .body = "{}" },
	};
	struct tj_recorder_stats st;

	server_script(&fx->server, replies, 2);
	assert_int_equal(
	        tj_recorder_record(fx->recorder, &vit, false, "Created", "creating 2 pods", T0 + 5),
	        0);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).created == 1);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " EVENTS "|");
	assert_request_body(
	        &fx->server, 0,
	        "{'apiVersion':'v1','kind':'Event',"
	        "'metadata':{'name':'" NAME "','namespace':'team-a'},"
	        "'involvedObject':{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
	        "'namespace':'team-a','name':'vit','uid':'uid-vit'},"
	        "'source':{'component':'trainjob-controller'},"
	        "'type':'Normal','reason':'Created','message':'creating 2 pods',"
	        "'firstTimestamp':'2026-11-29T10:00:00Z','lastTimestamp':'2026-11-29T10:00:00Z',"
	        "'count':1,'reportingComponent':'trainjob-controller','reportingInstance':'ctrl-0'"
	        "}");

	/* The same event a minute later: one Event, its count and lastTimestamp grow. */
	assert_int_equal(tj_recorder_record(fx->recorder, &vit, false, "Created", "creating 2 pods",
	                                    T0 + 70 * SEC),
	                 0);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).patched == 1);
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "POST " EVENTS "|PATCH " EVENTS "/" NAME "|");
	assert_request_body(&fx->server, 1,
	                    "{'count':2,'lastTimestamp':'2026-11-29T10:01:10Z',"
	                    "'message':'creating 2 pods'}");
	assert_non_null(strstr(fx->server.seen[1].head,
	                       "\r\nContent-Type: application/merge-patch+json\r\n"));
	st = stats(fx);
	assert_int_equal(st.created, 1);
	assert_int_equal(st.patched, 1);
	assert_int_equal(st.dropped, 0);
	assert_int_equal(st.failed, 0);
	assert_string_equal(fx->server.log, "");
}

static void test_warning_of_an_object_without_uid(void **state)
{
	struct fixture *fx = *state;
	const struct reply created = {
		.method = "POST", .path = EVENTS, .status = 201, .body = "{}"
	};
	const struct tj_event_object no_uid = { "team-a", "vit", NULL, NULL };

	server_script(&fx->server, &created, 1);
	assert_int_equal(
	        tj_recorder_record(fx->recorder, &no_uid, true, "Failed", "no runtime", T0 + 5), 0);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).created == 1);
	assert_request_body(
	        &fx->server, 0,
	        "{'apiVersion':'v1','kind':'Event',"
	        "'metadata':{'name':'" NAME "','namespace':'team-a'},"
	        "'involvedObject':{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
	        "'namespace':'team-a','name':'vit'},"
	        "'source':{'component':'trainjob-controller'},"
	        "'type':'Warning','reason':'Failed','message':'no runtime',"
	        "'firstTimestamp':'2026-11-29T10:00:00Z','lastTimestamp':'2026-11-29T10:00:00Z',"
	        "'count':1,'reportingComponent':'trainjob-controller','reportingInstance':'ctrl-0'"
	        "}");
}

/* case: an Event on a Node (a suspect node, controller/suspect_nodes.h) goes to namespace
 * default, as the kubelet's do, and names the Node without a namespace. */
static void test_event_on_a_node(void **state)
{
	struct fixture *fx = *state;
	const struct reply created = { .method = "POST",
		                       .path = "/api/v1/namespaces/default/events",
		                       .status = 201,
		                       .body = "{}" };
	const struct tj_event_object node = { "default", "gh200-1", NULL, "Node" };

	server_script(&fx->server, &created, 1);
	assert_int_equal(
	        tj_recorder_record(fx->recorder, &node, true, "NodeSuspect", "suspect", T0 + 5), 0);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).created == 1);
	assert_request_body(
	        &fx->server, 0,
	        "{'apiVersion':'v1','kind':'Event',"
	        "'metadata':{'name':'gh200-1.18ec7bbc47a44005','namespace':'default'},"
	        "'involvedObject':{'apiVersion':'v1','kind':'Node','name':'gh200-1'},"
	        "'source':{'component':'trainjob-controller'},"
	        "'type':'Warning','reason':'NodeSuspect','message':'suspect',"
	        "'firstTimestamp':'2026-11-29T10:00:00Z','lastTimestamp':'2026-11-29T10:00:00Z',"
	        "'count':1,'reportingComponent':'trainjob-controller','reportingInstance':'ctrl-0'"
	        "}");
}

/* case: a write that fails is logged and counted; the next occurrence starts a new Event
 * (after a failed create there is none; after a failed patch the Event has expired). */
static void test_failed_create_is_forgotten(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = EVENTS,
		  .status = 403,
		  .body = API_ERROR(403, "Forbidden", "events is forbidden") },
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
	};
	struct tj_recorder_stats st;

	server_script(&fx->server, replies, 2);
	assert_int_equal(tj_recorder_record(fx->recorder, &vit, false, "Created", "m", T0 + 5), 0);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).failed == 1);
	assert_non_null(strstr(fx->server.log,
	                       "\"level\":\"warn\",\"logger\":\"recorder\","
	                       "\"msg\":\"could not write event\",\"namespace\":\"team-a\","
	                       "\"trainjob\":\"vit\",\"reason\":\"Created\","
	                       "\"error\":\"events is forbidden\"}\n"));
	assert_int_equal(tj_recorder_record(fx->recorder, &vit, false, "Created", "m", T0 + 9), 0);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).created == 1);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " EVENTS "|POST " EVENTS "|");
	/* A new Event of count 1, under a new name. */
	assert_non_null(strstr(fx->server.seen[1].body, "\"name\":\"vit.18ec7bbc47a44009\""));
	assert_non_null(strstr(fx->server.seen[1].body, "\"count\":1"));
	st = stats(fx);
	assert_int_equal(st.failed, 1);
	assert_int_equal(st.patched, 0);
}

static void test_failed_patch_is_forgotten(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
		{ .method = "PATCH",
		  .path = EVENTS "/" NAME,
		  .status = 404,
		  .body = API_ERROR(404, "NotFound", "the event has expired") },
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
	};

	server_script(&fx->server, replies, 3);
	tj_recorder_record(fx->recorder, &vit, false, "Created", "m", T0 + 5);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).created == 1);
	tj_recorder_record(fx->recorder, &vit, false, "Created", "m", T0 + 2 * 3600 * SEC);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).failed == 1);
	tj_recorder_record(fx->recorder, &vit, false, "Created", "m", T0 + 2 * 3600 * SEC + 7);
	SERVER_RUN_UNTIL(&fx->server, stats(fx).created == 2);
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "POST " EVENTS "|PATCH " EVENTS "/" NAME "|POST " EVENTS "|");
	assert_non_null(strstr(fx->server.seen[2].body, "\"count\":1"));
	assert_non_null(
	        strstr(fx->server.seen[2].body, "\"firstTimestamp\":\"2026-11-29T12:00:00Z\""));
	assert_non_null(strstr(fx->server.log, "\"error\":\"the event has expired\""));
}

/* The spam budget: TJ_EVENT_BURST events of one object go out, the next are dropped without
 * a request, and the bucket refills one event per TJ_EVENT_REFILL_SECONDS. */
static void test_spam_budget(void **state)
{
	struct fixture *fx = *state;
	const struct reply created = {
		.method = "POST", .path = EVENTS, .repeat = true, .status = 201, .body = "{}"
	};
	const struct tj_event_object other = { "team-a", "other", "uid-other", NULL };
	struct tj_recorder_stats st;
	char message[32];

	server_script(&fx->server, &created, 1);
	for (int i = 0; i < TJ_EVENT_BURST + 3; i++) {
		snprintf(message, sizeof(message), "attempt %d", i);
		assert_int_equal(
		        tj_recorder_record(fx->recorder, &vit, true, "Restarting", message, T0 + i),
		        0);
	}
	st = stats(fx);
	assert_int_equal(st.dropped, 3); /* decided at once */
	SERVER_RUN_UNTIL(&fx->server, stats(fx).created == TJ_EVENT_BURST);
	assert_int_equal(fx->server.n_seen, TJ_EVENT_BURST);
	/* Another object has a budget of its own. */
	assert_int_equal(tj_recorder_record(fx->recorder, &other, true, "Restarting", "x", T0), 0);
	/* A refill period (and a second) later, one more event of vit, and no more. */
	assert_int_equal(tj_recorder_record(fx->recorder, &vit, true, "Restarting", "late",
	                                    T0 + (TJ_EVENT_REFILL_SECONDS + 1) * SEC),
	                 0);
	assert_int_equal(tj_recorder_record(fx->recorder, &vit, true, "Restarting", "later",
	                                    T0 + (TJ_EVENT_REFILL_SECONDS + 2) * SEC),
	                 0);
	SERVER_RUN_UNTIL(&fx->server, answered(fx) == TJ_EVENT_BURST + 2);
	st = stats(fx);
	assert_int_equal(st.created, TJ_EVENT_BURST + 2);
	assert_int_equal(st.dropped, 4);
	assert_int_equal(st.failed, 0);
	assert_int_equal(fx->server.n_seen, TJ_EVENT_BURST + 2);
	assert_int_equal(find_body(fx, "\"name\":\"other\""), 1);
	assert_int_equal(find_body(fx, "\"message\":\"late\""), 1);
	assert_int_equal(find_body(fx, "\"message\":\"later\""), 0);
}

/* Freed with writes in flight: they are cancelled, and no callback runs afterwards. */
static void test_free_with_writes_in_flight(void **state)
{
	struct fixture *fx = *state;
	const struct reply held = {
		.method = "POST", .path = EVENTS, .repeat = true, .hold = true, .status = 201
	};

	server_script(&fx->server, &held, 1);
	tj_recorder_record(fx->recorder, &vit, false, "Created", "a", T0 + 5);
	tj_recorder_record(fx->recorder, &vit, false, "Running", "b", T0 + 5);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 2);
	fx->recorder = tj_recorder_free(fx->recorder);
	/* The client closes both connections; the loop closes in teardown without a callback
	 * touching the freed recorder (the sanitizers would see it). */
	SERVER_RUN_UNTIL(&fx->server, fx->server.eofs == 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_then_patch_a_repeat, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_on_a_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warning_of_an_object_without_uid, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_failed_create_is_forgotten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_patch_is_forgotten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spam_budget, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_with_writes_in_flight, setup, teardown),
	};
	return cmocka_run_group_tests_name("recorder", tests, NULL, NULL);
}
