/* The client end to end on a loop, against the scripted HTTP/1.1 server (scripted_server.h) in
 * the same loop: requests, retries, credentials after a 401, limits, watches, cancellation. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/client.h"
#include "kube/request.h"
#include "kube/watch.h"
#include "tj-version.h"

#include "scripted_server.h"

#define RUN_UNTIL(fx, cond) SERVER_RUN_UNTIL(&(fx)->server, cond)

/* ---- fixture ------------------------------------------------------------------------------ */

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
	char server_url[64];
	char token_path[64];
};

static void make_client(struct fixture *fx, const struct tj_client_options *opts,
                        const char *token_file)
{
	struct tj_kube_config cfg = { .server = fx->server_url,
		                      .namespace = "team",
		                      .token = "static-token",
		                      .token_file = (char *)token_file };

	assert_int_equal(tj_client_new(&fx->loop, &cfg, opts, &fx->client), 0);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	snprintf(fx->server_url, sizeof(fx->server_url), "http://127.0.0.1:%d", fx->server.port);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fx->client = tj_client_free(fx->client);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	/* Every handle of the client and the server is closed. */
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	if (fx->token_path[0])
		unlink(fx->token_path);
	free(fx);
	return 0;
}

static void script(struct fixture *fx, const struct reply *replies, int n)
{
	server_script(&fx->server, replies, n);
}

/* What a request's callback saw. */
struct result {
	int calls;
	int rc;
	long http_status;
	char body[1024];
	struct tj_status status;
	char error[256];
	bool maybe_done;
	struct fixture *fx;
};

static void on_response(struct tj_response *resp, void *userdata)
{
	struct result *r = userdata;
	char *text = resp->body ? cJSON_PrintUnformatted(resp->body) : NULL;

	r->calls++;
	r->rc = resp->rc;
	r->http_status = resp->http_status;
	snprintf(r->body, sizeof(r->body), "%s", text ? text : "");
	free(text);
	tj_status_clear(&r->status);
	tj_status_copy(&resp->status, &r->status);
	snprintf(r->error, sizeof(r->error), "%s", resp->error);
	r->maybe_done = resp->maybe_done;
}

static void result_clear(struct result *r)
{
	tj_status_clear(&r->status);
}

/* ---- requests ----------------------------------------------------------------------------- */

static void test_get(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200, .headers = NULL, .body = "{\"kind\":\"Pod\"}" }
	};
	struct tj_ref ref = { &tj_resource_pods, "team", "p 1", NULL };
	struct result r = { 0 };

	script(fx, replies, 1);
	make_client(fx, NULL, NULL);
	assert_int_equal(tj_kube_get(fx->client, &ref, on_response, &r, NULL), 0);
	assert_int_equal(r.calls, 0); /* never from inside the call */
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.http_status, 200);
	assert_string_equal(r.body, "{\"kind\":\"Pod\"}");
	assert_string_equal(r.error, "");
	assert_string_equal(fx->server.seen[0].method, "GET");
	assert_string_equal(fx->server.seen[0].path, "/api/v1/namespaces/team/pods/p%201");
	assert_non_null(strstr(fx->server.seen[0].head,
	                       "\r\nUser-Agent: trainjob-controller/" TJ_VERSION "\r\n"));
	assert_non_null(
	        strstr(fx->server.seen[0].head, "\r\nAuthorization: Bearer static-token\r\n"));
	assert_non_null(strstr(fx->server.seen[0].head, "\r\nAccept: application/json\r\n"));
	assert_string_equal(tj_client_namespace(fx->client), "team");
	result_clear(&r);
}

static void test_api_error_is_decoded(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 404,
		  .headers = NULL,
		  .body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"pods "
		          "\\\"x\\\" not "
		          "found\",\"reason\":\"NotFound\",\"code\":404}" },
	};
	struct tj_ref ref = { &tj_resource_pods, "team", "x", NULL };
	struct result r = { 0 };

	script(fx, replies, 1);
	make_client(fx, NULL, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, -EREMOTEIO);
	assert_int_equal(r.http_status, 404);
	assert_string_equal(r.body, "");
	assert_true(tj_status_is_not_found(&r.status));
	assert_string_equal(r.error, "pods \"x\" not found");
	result_clear(&r);
}

static void test_writes(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 201, .headers = NULL, .body = "{}" },
		{ .status = 200, .headers = NULL, .body = "{}" },
		{ .status = 200, .headers = NULL, .body = "{}" },
		{ .status = 200, .headers = NULL, .body = "{}" },
	};
	struct tj_ref coll = { &tj_resource_pods, "team", NULL, NULL };
	struct tj_ref status = { &tj_resource_trainjobs, "team", "j", "status" };
	struct tj_ref pod = { &tj_resource_pods, "team", "p", NULL };
	struct tj_write_options wo = { .field_manager = "trainjob-controller" };
	struct tj_patch_options po = { .field_manager = "trainjob-controller", .force = true };
	struct tj_delete_options del = { .precondition_uid = "u1",
		                         .propagation_policy = "Background" };
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"p\"}}");
	struct result r[4] = { 0 };

	script(fx, replies, 4);
	make_client(fx, NULL, NULL);
	/* One at a time, so the server sees them in order. */
	assert_int_equal(tj_kube_create(fx->client, &coll, obj, &wo, on_response, &r[0], NULL), 0);
	RUN_UNTIL(fx, r[0].calls == 1);
	assert_int_equal(tj_kube_patch(fx->client, &status, TJ_PATCH_APPLY, obj, &po, on_response,
	                               &r[1], NULL),
	                 0);
	RUN_UNTIL(fx, r[1].calls == 1);
	assert_int_equal(tj_kube_update(fx->client, &pod, obj, NULL, on_response, &r[2], NULL), 0);
	RUN_UNTIL(fx, r[2].calls == 1);
	assert_int_equal(tj_kube_delete(fx->client, &pod, &del, on_response, &r[3], NULL), 0);
	RUN_UNTIL(fx, r[3].calls == 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(r[i].rc, 0);
	assert_int_equal(r[0].http_status, 201);

	assert_string_equal(fx->server.seen[0].method, "POST");
	assert_string_equal(fx->server.seen[0].path,
	                    "/api/v1/namespaces/team/pods?fieldManager=trainjob-controller");
	assert_non_null(strstr(fx->server.seen[0].head, "Content-Type: application/json\r\n"));
	assert_string_equal(fx->server.seen[0].body, "{\"metadata\":{\"name\":\"p\"}}");

	assert_string_equal(fx->server.seen[1].method, "PATCH");
	assert_string_equal(fx->server.seen[1].path,
	                    "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/j/status"
	                    "?fieldManager=trainjob-controller&force=true");
	assert_non_null(
	        strstr(fx->server.seen[1].head, "Content-Type: application/apply-patch+yaml\r\n"));

	assert_string_equal(fx->server.seen[2].method, "PUT");
	assert_string_equal(fx->server.seen[2].path, "/api/v1/namespaces/team/pods/p");

	assert_string_equal(fx->server.seen[3].method, "DELETE");
	assert_string_equal(
	        fx->server.seen[3].body,
	        "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":"
	        "\"Background\",\"preconditions\":{\"uid\":\"u1\"}}");

	/* Refused before anything is sent. */
	assert_int_equal(tj_kube_patch(fx->client, &pod, TJ_PATCH_APPLY, obj, NULL, on_response,
	                               &r[0], NULL),
	                 -EINVAL); /* apply without a field manager */
	assert_int_equal(
	        tj_kube_patch(fx->client, &pod, TJ_PATCH_JSON, obj, NULL, on_response, &r[0], NULL),
	        -EINVAL); /* a JSON patch is an array */
	assert_int_equal(tj_kube_get(fx->client, &coll, on_response, &r[0], NULL), -EINVAL);
	assert_int_equal(fx->server.n_seen, 4);
	cJSON_Delete(obj);
	for (int i = 0; i < 4; i++)
		result_clear(&r[i]);
}

/* A create that got no answer (the connection dropped with the request in it), the caller
 * asking for resends: sent again until an answer says what became of it. timeout_ms: the
 * client's per request, 0 for its default. */
static void create_with_resends(struct fixture *fx, const struct reply *replies, int n, bool resend,
                                long timeout_ms, struct result *r)
{
	struct tj_client_options opts = { .resend_first_ms = 1,
		                          .max_retry_delay_ms = 1,
		                          .timeout_ms = timeout_ms };
	struct tj_ref coll = { &tj_resource_pods, "team", NULL, NULL };
	struct tj_write_options wo = { .resend_unanswered = resend };
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"p\"}}");

	script(fx, replies, n);
	make_client(fx, &opts, NULL);
	assert_int_equal(tj_kube_create(fx->client, &coll, obj, &wo, on_response, r, NULL), 0);
	RUN_UNTIL(fx, r->calls == 1);
	cJSON_Delete(obj);
}

static void test_an_unanswered_create_is_sent_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .drop = true },
		{ .status = 201, .body = "{\"metadata\":{\"name\":\"p\"}}" },
	};
	struct result r = { 0 };

	create_with_resends(fx, replies, 2, true, 0, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.http_status, 201);
	assert_false(r.maybe_done);
	assert_int_equal(fx->server.n_seen, 2);
	assert_string_equal(fx->server.seen[1].body, fx->server.seen[0].body);
	result_clear(&r);
}

/* The first attempt made the pod after all: the resend's AlreadyExists says so, and the
 * answer tells that the write may have been done. */
static void test_a_resent_create_meets_its_own_pod(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .drop = true },
		{ .drop = true },
		{ .status = 503, .body = "{}" },
		{ .status = 429, .body = "{}" },
		{ .status = 409, .body = API_ERROR(409, "AlreadyExists", "pods p already exists") },
	};
	struct result r = { 0 };

	create_with_resends(fx, replies, 5, true, 0, &r);
	assert_int_equal(r.rc, -EREMOTEIO);
	assert_true(tj_status_is_already_exists(&r.status));
	assert_true(r.maybe_done);
	assert_int_equal(fx->server.n_seen, 5);
	result_clear(&r);
}

/* Without the option, or once the resends are used up, the caller hears that the write may
 * have been done. */
static void test_resends_are_asked_for_and_bounded(void **state)
{
	struct fixture *fx = *state;
	const struct reply unanswered[] = { { .drop = true, .repeat = true } };
	struct result r = { 0 }, again = { 0 };

	create_with_resends(fx, unanswered, 1, false, 0, &r);
	assert_int_equal(r.rc, -ECONNRESET);
	assert_true(r.maybe_done);
	assert_int_equal(fx->server.n_seen, 1);

	struct tj_ref coll = { &tj_resource_pods, "team", NULL, NULL };
	struct tj_write_options wo = { .resend_unanswered = true };
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"p\"}}");

	assert_int_equal(tj_kube_create(fx->client, &coll, obj, &wo, on_response, &again, NULL), 0);
	RUN_UNTIL(fx, again.calls == 1);
	assert_int_equal(again.rc, -ECONNRESET);
	assert_true(again.maybe_done);
	assert_int_equal(fx->server.n_seen, 1 + 1 + TJ_KUBE_RESENDS);
	/* A PUT is never sent again: done once, it would conflict with itself. */
	struct tj_ref pod = { &tj_resource_pods, "team", "p", NULL };

	assert_int_equal(tj_kube_update(fx->client, &pod, obj, &wo, on_response, &again, NULL),
	                 -EINVAL);
	cJSON_Delete(obj);
	result_clear(&r);
	result_clear(&again);
}

/* An attempt that timed out has taken as long as a request may: the create is not sent
 * again, and the caller hears that it may have been done. */
static void test_a_create_that_timed_out_is_not_sent_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .hang = true },
		{ .status = 201, .body = "{\"metadata\":{\"name\":\"p\"}}" },
	};
	struct result r = { 0 };

	create_with_resends(fx, replies, 2, true, 100, &r);
	assert_int_equal(r.rc, -ETIMEDOUT);
	assert_true(r.maybe_done);
	assert_int_equal(fx->server.n_seen, 1);
	result_clear(&r);
}

/* An answer that says the create was not made ends it, resends asked for or not: a 429 past
 * its retries, a refusal. A GET that got no answer changed nothing. */
static void test_a_create_answered_is_not_sent_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 429, .body = "{}" },
		{ .status = 403, .body = API_ERROR(403, "Forbidden", "exceeded quota") },
		{ .drop = true },
	};
	struct tj_ref coll = { &tj_resource_pods, "team", NULL, NULL };
	struct tj_ref pod = { &tj_resource_pods, "team", "p", NULL };
	struct tj_write_options wo = { .resend_unanswered = true };
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"p\"}}");
	struct result r[3] = { 0 };

	script(fx, replies, 3);
	make_client(fx, &(struct tj_client_options){ .resend_first_ms = 1 }, NULL);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(
		        tj_kube_create(fx->client, &coll, obj, &wo, on_response, &r[i], NULL), 0);
		RUN_UNTIL(fx, r[i].calls == 1);
		assert_int_equal(r[i].rc, -EREMOTEIO);
		assert_false(r[i].maybe_done);
	}
	assert_int_equal(r[0].http_status, 429);
	assert_int_equal(r[1].http_status, 403);
	assert_int_equal(tj_kube_get(fx->client, &pod, on_response, &r[2], NULL), 0);
	RUN_UNTIL(fx, r[2].calls == 1);
	assert_int_equal(r[2].rc, -ECONNRESET);
	assert_false(r[2].maybe_done);
	assert_int_equal(fx->server.n_seen, 3);
	cJSON_Delete(obj);
	for (int i = 0; i < 3; i++)
		result_clear(&r[i]);
}

static void test_retry_after(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 429,
		  .headers = "Retry-After: 1\r\n",
		  .body = "{\"kind\":\"Status\",\"code\":429}" },
		{ .status = 503, .headers = "Retry-After: 2\r\n", .body = "busy" },
		{ .status = 200, .headers = NULL, .body = "{\"ok\":true}" },
		{ .status = 503, .headers = NULL, .body = "no retry-after" },
	};
	struct tj_client_options opts = { .max_retry_delay_ms = 5 };
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };

	script(fx, replies, 4);
	make_client(fx, &opts, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.calls, 1);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.body, "{\"ok\":true}");
	assert_int_equal(fx->server.n_seen, 3);

	/* Without Retry-After a 503 is final. */
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 2);
	assert_int_equal(r.calls, 2);
	assert_int_equal(r.rc, -EREMOTEIO);
	assert_int_equal(r.http_status, 503);
	assert_string_equal(r.status.reason, "ServiceUnavailable");
	assert_string_equal(r.error, "the server answered HTTP 503: no retry-after");
	assert_int_equal(fx->server.n_seen, 4);
	result_clear(&r);
}

static void test_retries_are_bounded(void **state)
{
	struct fixture *fx = *state;
	const struct reply busy = { .status = 429, .headers = "Retry-After: 1\r\n", .body = "{}" };
	const struct reply replies[] = { busy, busy, busy };
	struct tj_client_options opts = { .max_retries = 2, .max_retry_delay_ms = 1 };
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };

	script(fx, replies, 3);
	make_client(fx, &opts, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, -EREMOTEIO);
	assert_int_equal(r.http_status, 429);
	assert_int_equal(fx->server.n_seen, 3); /* the first try and two retries */
	result_clear(&r);
}

static void test_401_rereads_the_token_file_once(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 401,
		  .headers = NULL,
		  .body = "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}" },
		{ .status = 200, .headers = NULL, .body = "{}" },
		{ .status = 401,
		  .headers = NULL,
		  .body = "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}" },
		{ .status = 401,
		  .headers = NULL,
		  .body = "{\"kind\":\"Status\",\"reason\":\"Unauthorized\",\"code\":401}" },
	};
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };
	FILE *f;

	snprintf(fx->token_path, sizeof(fx->token_path), "/tmp/tj-token-%d", (int)getpid());
	f = fopen(fx->token_path, "w");
	fputs("old", f);
	fclose(f);
	script(fx, replies, 4);
	make_client(fx, NULL, fx->token_path);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	/* The token rotates on disk while the first request is in flight. */
	f = fopen(fx->token_path, "w");
	fputs("new\n", f);
	fclose(f);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, 0);
	assert_int_equal(fx->server.n_seen, 2);
	assert_non_null(strstr(fx->server.seen[0].head, "Authorization: Bearer old\r\n"));
	assert_non_null(strstr(fx->server.seen[1].head, "Authorization: Bearer new\r\n"));

	/* A second 401 after the retry is returned, not retried forever. */
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 2);
	assert_int_equal(r.rc, -EREMOTEIO);
	assert_true(tj_status_is_unauthorized(&r.status));
	assert_int_equal(fx->server.n_seen, 4);
	result_clear(&r);
}

static void test_limits_and_bad_bodies(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200,
		  .headers = NULL,
		  .body = "{\"padding\":\"0123456789012345678901234567890123456789\"}" },
		{ .status = 200, .headers = NULL, .body = "not json" },
	};
	struct tj_client_options opts = { .max_body = 32 };
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };

	script(fx, replies, 2);
	make_client(fx, &opts, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, -EMSGSIZE);
	assert_non_null(strstr(r.error, "GET http://127.0.0.1:"));
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 2);
	assert_int_equal(r.rc, -EBADMSG);
	assert_int_equal(r.http_status, 200);
	assert_string_equal(r.error, "the server's answer is not JSON");
	result_clear(&r);
}

static void test_timeout(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = { { .hang = true } };
	struct tj_client_options opts = { .timeout_ms = 100 };
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };

	script(fx, replies, 1);
	make_client(fx, &opts, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, -ETIMEDOUT);
	assert_int_equal(r.http_status, 0);
	assert_non_null(strstr(r.error, "timed out"));
	result_clear(&r);
}

static void test_connection_refused(void **state)
{
	struct fixture *fx = *state;
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };

	/* Stop listening, so that the port refuses. */
	uv_close((uv_handle_t *)&fx->server.listener, NULL);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	uv_tcp_init(&fx->loop, &fx->server.listener); /* for teardown's close */
	make_client(fx, NULL, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, -ECONNREFUSED);
	assert_non_null(strstr(r.error, "GET http://127.0.0.1:"));
	result_clear(&r);
}

/* What the observer was given, as "METHOD path status host;" per exchange. */
struct observed {
	char log[256];
	double seconds;
};

static void observe(const struct tj_http_observation *o, void *userdata)
{
	struct observed *obs = userdata;
	size_t len = strlen(obs->log);
	const char *path = strstr(o->url, "/api");

	snprintf(obs->log + len, sizeof(obs->log) - len, "%s %s %ld %s;", o->method,
	         path ? path : o->url, o->status, o->host[0] ? "host" : "none");
	obs->seconds += o->seconds;
}

/* Every exchange is observed, each retry on its own, and a call that got no answer with
 * status 0. */
static void test_exchanges_are_observed(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 429, .headers = "Retry-After: 0\r\n", .body = "{}" },
		{ .status = 201, .headers = NULL, .body = "{\"ok\":true}" },
	};
	struct observed obs = { "", 0 };
	struct tj_client_options opts = { .max_retry_delay_ms = 5,
		                          .transport = { .observe = observe,
		                                         .observe_userdata = &obs } };
	struct tj_ref coll = { &tj_resource_pods, "team", NULL, NULL };
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };
	cJSON *pod = cJSON_CreateObject();

	script(fx, replies, 2);
	make_client(fx, &opts, NULL);
	assert_int_equal(tj_kube_create(fx->client, &coll, pod, NULL, on_response, &r, NULL), 0);
	cJSON_Delete(pod);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, 0);
	assert_string_equal(obs.log, "POST /api/v1/namespaces/team/pods 429 host;"
	                             "POST /api/v1/namespaces/team/pods 201 host;");
	assert_true(obs.seconds >= 0 && obs.seconds < 10);
	result_clear(&r);
	fx->client = tj_client_free(fx->client);

	/* Nobody listens: no answer, status 0. */
	r = (struct result){ 0 };
	obs.log[0] = '\0';
	uv_close((uv_handle_t *)&fx->server.listener, NULL);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	uv_tcp_init(&fx->loop, &fx->server.listener);
	make_client(fx, &opts, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, -ECONNREFUSED);
	assert_string_equal(obs.log, "GET /api/v1/namespaces/team/pods/p 0 host;");
	result_clear(&r);
}

static void test_url_host(void **state)
{
	static const struct {
		const char *url, *host;
	} cases[] = {
		{ "https://10.0.0.1:6443", "10.0.0.1:6443" },
		{ "https://10.0.0.1:6443/prefix/path?x=1", "10.0.0.1:6443" },
		{ "https://kubernetes.default.svc", "kubernetes.default.svc" },
		{ "https://user:pw@api.example.org:443/", "api.example.org:443" },
		{ "http://[::1]:8080/x", "[::1]:8080" },
		{ "no-scheme", "" },
		{ "https://a-very-long-host-name.example.org:6443", "a-very-long-host-name.e" },
	};
	char buf[24];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tj_url_host(cases[i].url, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].host);
	}
}

static void test_cancel_and_free_with_requests_in_flight(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = { { .hang = true }, { .hang = true } };
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct tj_request *req;
	struct result r = { 0 };

	script(fx, replies, 2);
	make_client(fx, NULL, NULL);
	tj_kube_get(fx->client, &ref, on_response, &r, &req);
	tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	tj_request_cancel(req);
	for (int i = 0; i < 20 && fx->server.n_seen < 2; i++)
		uv_run(&fx->loop, UV_RUN_ONCE);
	fx->client = tj_client_free(fx->client); /* the other one: no callback either */
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	assert_int_equal(r.calls, 0);
}

static void test_requests_do_not_wait_behind_an_unanswered_one(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200, .body = "{\"n\":1}", .hold = true },
		{ .status = 200, .body = "{\"n\":2}" },
	};
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result first = { 0 }, second = { 0 };

	script(fx, replies, 2);
	make_client(fx, NULL, NULL);
	tj_kube_get(fx->client, &ref, on_response, &first, NULL);
	tj_kube_get(fx->client, &ref, on_response, &second, NULL);
	/* Plain HTTP/1.1 cannot multiplex: the second request takes a connection of its own at
	 * once instead of waiting to learn what the first one's can do. */
	RUN_UNTIL(fx, second.calls == 1);
	assert_int_equal(first.calls, 0);
	assert_string_equal(second.body, "{\"n\":2}");
	server_release(&fx->server, 0);
	RUN_UNTIL(fx, first.calls == 1);
	assert_string_equal(first.body, "{\"n\":1}");
	result_clear(&first);
	result_clear(&second);
}

/* ---- watches ------------------------------------------------------------------------------ */

#define EV(type, name)                                                                             \
	"{\"type\":\"" type "\",\"object\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name       \
	"\"}}}\n"

struct watch_result {
	char events[512];
	int n_events;
	int done_calls;
	int rc;
	long http_status;
	struct tj_status status;
	int cancel_at; /* cancel from inside the nth event */
	struct tj_watch *watch;
	struct tj_client *get_from_event; /* start a GET from inside the first event */
	struct result *get_result;
};

static int on_watch_event(struct tj_watch_event *ev, void *userdata)
{
	struct watch_result *w = userdata;
	size_t len = strlen(w->events);
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->object, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");

	snprintf(w->events + len, sizeof(w->events) - len, "%s %s|",
	         tj_watch_event_type_name(ev->type),
	         ev->type == TJ_WATCH_ERROR ? ev->status.reason : name->valuestring);
	if (++w->n_events == w->cancel_at)
		tj_watch_cancel(w->watch);
	if (w->get_from_event && w->n_events == 1) {
		struct tj_ref ref = { &tj_resource_pods, "team", "from-event", NULL };

		assert_int_equal(
		        tj_kube_get(w->get_from_event, &ref, on_response, w->get_result, NULL), 0);
	}
	return 0;
}

static void on_watch_done(struct tj_response *resp, void *userdata)
{
	struct watch_result *w = userdata;

	w->done_calls++;
	w->rc = resp->rc;
	w->http_status = resp->http_status;
	tj_status_copy(&resp->status, &w->status);
}

static void test_watch_stream(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200,
		  .headers = NULL,
		  .body = EV("ADDED", "a") EV("MODIFIED", "a") EV("DELETED", "a"),
		  .chunked = true },
	};
	struct tj_ref ref = { &tj_resource_pods, "team", NULL, NULL };
	struct tj_watch_options opts = { .resource_version = "7",
		                         .allow_bookmarks = true,
		                         .timeout_seconds = 300 };
	struct watch_result w = { 0 };

	script(fx, replies, 1);
	make_client(fx, NULL, NULL);
	assert_int_equal(tj_watch_start(fx->client, &ref, &opts, on_watch_event, on_watch_done, &w,
	                                &w.watch),
	                 0);
	RUN_UNTIL(fx, w.done_calls == 1);
	assert_string_equal(w.events, "ADDED a|MODIFIED a|DELETED a|");
	assert_int_equal(w.done_calls, 1);
	assert_int_equal(w.rc, 0);
	assert_int_equal(w.http_status, 200);
	assert_string_equal(fx->server.seen[0].path,
	                    "/api/v1/namespaces/team/pods?watch=1&resourceVersion=7&"
	                    "allowWatchBookmarks=true&timeoutSeconds=300");
}

static void test_watch_expired(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200,
		  .headers = NULL,
		  .body = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"status\":"
		          "\"Failure\","
		          "\"reason\":\"Expired\",\"code\":410,\"message\":\"too old\"}}\n",
		  .chunked = true },
		{ .status = 410,
		  .headers = NULL,
		  .body = "{\"kind\":\"Status\",\"reason\":\"Gone\",\"code\":410}" },
	};
	struct tj_ref ref = { &tj_resource_pods, NULL, NULL, NULL };
	struct watch_result w = { 0 }, g = { 0 };

	script(fx, replies, 2);
	make_client(fx, NULL, NULL);
	tj_watch_start(fx->client, &ref, NULL, on_watch_event, on_watch_done, &w, NULL);
	RUN_UNTIL(fx, w.done_calls == 1);
	assert_string_equal(w.events, "ERROR Expired|");
	assert_int_equal(w.rc, 0);

	/* The other form: the watch itself refused with 410. */
	tj_watch_start(fx->client, &ref, NULL, on_watch_event, on_watch_done, &g, NULL);
	RUN_UNTIL(fx, g.done_calls == 1);
	assert_int_equal(g.n_events, 0);
	assert_int_equal(g.rc, -EREMOTEIO);
	assert_int_equal(g.http_status, 410);
	assert_true(tj_status_is_expired(&g.status));
	tj_status_clear(&g.status);
	tj_status_clear(&w.status);
}

static void test_watch_broken_stream(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200,
		  .headers = NULL,
		  .body = EV("ADDED", "a") "{\"type\":\"ADDED\"\n" EV("ADDED", "b"),
		  .chunked = true },
		{ .status = 200,
		  .headers = NULL,
		  .body = EV("ADDED", "a") EV("ADDED", "a-long-name-beyond-the-limit"),
		  .chunked = true },
	};
	struct tj_ref ref = { &tj_resource_pods, NULL, NULL, NULL };
	struct tj_watch_options opts = { .max_event = 80 };
	struct watch_result w = { 0 }, big = { 0 };

	script(fx, replies, 2);
	make_client(fx, NULL, NULL);
	tj_watch_start(fx->client, &ref, NULL, on_watch_event, on_watch_done, &w, NULL);
	RUN_UNTIL(fx, w.done_calls == 1);
	assert_string_equal(w.events, "ADDED a|");
	assert_int_equal(w.rc, -EBADMSG);

	tj_watch_start(fx->client, &ref, &opts, on_watch_event, on_watch_done, &big, NULL);
	RUN_UNTIL(fx, big.done_calls == 1);
	assert_string_equal(big.events, "ADDED a|");
	assert_int_equal(big.rc, -EMSGSIZE);
}

static void test_watch_cancel_from_event(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200,
		  .headers = NULL,
		  .body = EV("ADDED", "a") EV("ADDED", "b") EV("ADDED", "c"),
		  .chunked = true,
		  .keep_open = true },
	};
	struct tj_ref ref = { &tj_resource_pods, NULL, NULL, NULL };
	struct watch_result w = { .cancel_at = 2 };

	script(fx, replies, 1);
	make_client(fx, NULL, NULL);
	tj_watch_start(fx->client, &ref, NULL, on_watch_event, on_watch_done, &w, &w.watch);
	/* The stream stays open: the loop ends only because the cancel closed it. */
	RUN_UNTIL(fx, fx->server.eofs == 1);
	assert_string_equal(w.events, "ADDED a|ADDED b|");
	assert_int_equal(w.done_calls, 0);
	assert_int_equal(fx->server.eofs, 1);
}

static void test_request_from_inside_a_watch_event(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200, .body = EV("ADDED", "a"), .chunked = true, .keep_open = true },
		{ .status = 200, .body = "{\"from\":\"event\"}" },
	};
	struct tj_ref ref = { &tj_resource_pods, NULL, NULL, NULL };
	struct result r = { 0 };
	struct watch_result w = { .get_result = &r };

	script(fx, replies, 2);
	make_client(fx, NULL, NULL);
	w.get_from_event = fx->client;
	tj_watch_start(fx->client, &ref, NULL, on_watch_event, on_watch_done, &w, &w.watch);
	/* libcurl is on the stack when the event arrives; the GET must still go out. */
	RUN_UNTIL(fx, r.calls == 1);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.body, "{\"from\":\"event\"}");
	assert_string_equal(fx->server.seen[1].path, "/api/v1/namespaces/team/pods/from-event");
	tj_watch_cancel(w.watch);
	result_clear(&r);
}

static void test_free_client_with_open_watch(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .status = 200,
		  .headers = NULL,
		  .body = EV("ADDED", "a"),
		  .chunked = true,
		  .keep_open = true },
	};
	struct tj_ref ref = { &tj_resource_pods, NULL, NULL, NULL };
	struct watch_result w = { 0 };

	script(fx, replies, 1);
	make_client(fx, NULL, NULL);
	tj_watch_start(fx->client, &ref, NULL, on_watch_event, on_watch_done, &w, &w.watch);
	while (w.n_events == 0)
		uv_run(&fx->loop, UV_RUN_ONCE);
	fx->client = tj_client_free(fx->client);
	RUN_UNTIL(fx, fx->server.eofs == 1);
	assert_int_equal(w.done_calls, 0);
	assert_int_equal(fx->server.eofs, 1);
}

static void test_rate_limit_delays_requests(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = { { .status = 200, .headers = NULL, .body = "{}" },
		                         { .status = 200, .headers = NULL, .body = "{}" },
		                         { .status = 200, .headers = NULL, .body = "{}" } };
	struct tj_client_options opts = { .qps = 20, .burst = 1 };
	struct tj_ref ref = { &tj_resource_pods, "team", "p", NULL };
	struct result r = { 0 };
	uint64_t start;

	script(fx, replies, 3);
	make_client(fx, &opts, NULL);
	uv_update_time(&fx->loop);
	start = uv_now(&fx->loop);
	for (int i = 0; i < 3; i++)
		tj_kube_get(fx->client, &ref, on_response, &r, NULL);
	RUN_UNTIL(fx, r.calls == 3);
	assert_int_equal(r.calls, 3);
	/* One at once, then one every 50 ms. */
	assert_true(uv_now(&fx->loop) - start >= 100);
	result_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get, setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_error_is_decoded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_unanswered_create_is_sent_again, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_a_resent_create_meets_its_own_pod, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_a_create_that_timed_out_is_not_sent_again,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_resends_are_asked_for_and_bounded, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_a_create_answered_is_not_sent_again, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_retry_after, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retries_are_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_401_rereads_the_token_file_once, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_limits_and_bad_bodies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exchanges_are_observed, setup, teardown),
		cmocka_unit_test(test_url_host),
		cmocka_unit_test_setup_teardown(test_cancel_and_free_with_requests_in_flight, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_requests_do_not_wait_behind_an_unanswered_one,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_expired, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_broken_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_cancel_from_event, setup, teardown),
		cmocka_unit_test_setup_teardown(test_request_from_inside_a_watch_event, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_free_client_with_open_watch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rate_limit_delays_requests, setup, teardown),
	};
	return cmocka_run_group_tests_name("kube_client", tests, NULL, NULL);
}
