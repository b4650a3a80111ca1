/* Who may read /metrics, against the scripted API server (scripted_server.h): the reviews
 * sent, the answers (200, 401, 403, 500), what the cache spares, and a check cancelled in
 * flight. The parsing itself is test_review.c's, the cache's rules test_review_cache.c's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/http/metrics_auth.h"
#include "controller/log/log.h"
#include "scripted_server.h"

#define TOKENS "/apis/authentication.k8s.io/v1/tokenreviews"
#define ACCESS "/apis/authorization.k8s.io/v1/subjectaccessreviews"

#define ALICE                                                                                      \
	"{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{\"username\":"     \
	"\"alice\",\"uid\":\"u-1\",\"groups\":[\"system:authenticated\"]}}}"

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
	struct tj_metrics_auth *auth;
	struct tj_auth_result result; /* the last callback's */
	int answers;                  /* callbacks so far */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	fx->client = server_client_new(&fx->server);
	assert_int_equal(tj_metrics_auth_new(fx->client, &fx->auth), 0);
	server_capture_log(&fx->server);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fx->auth = tj_metrics_auth_free(fx->auth);
	fx->client = tj_client_free(fx->client);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

static void on_answer(const struct tj_auth_result *result, void *userdata)
{
	struct fixture *fx = userdata;

	fx->result = *result;
	fx->answers++;
}

/* Checks a GET of /metrics with header; the answer, now or after the reviews. */
static struct tj_auth_result check(struct fixture *fx, const char *header, bool want_reviews)
{
	struct tj_auth_result now = { 0 };
	struct tj_auth_check *c = NULL;
	int before = fx->answers;
	int r = tj_metrics_auth_check(fx->auth, header, "GET", "/metrics", on_answer, fx, &now, &c);

	assert_int_equal(r, want_reviews ? 1 : 0);
	if (!want_reviews) {
		assert_null(c);
		return now;
	}
	assert_non_null(c);
	SERVER_RUN_UNTIL(&fx->server, fx->answers == before + 1);
	return fx->result;
}

static void test_no_token_is_401_without_a_review(void **state)
{
	struct fixture *fx = *state;
	struct tj_auth_result r;

	r = check(fx, NULL, false);
	assert_int_equal(r.status, 401);
	assert_string_equal(r.message, "Unauthorized");
	r = check(fx, "Basic dXNlcjpwYXNz", false);
	assert_int_equal(r.status, 401);
	server_spin(&fx->server);
	assert_int_equal(fx->server.n_seen, 0);
}

static void test_allowed_user_then_cached(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = TOKENS, .status = 201, .body = ALICE },
		{ .method = "POST",
		  .path = ACCESS,
		  .status = 201,
		  .body = "{\"status\":{\"allowed\":true,\"reason\":\"RBAC\"}}" },
	};
	struct tj_auth_result r;

	server_script(&fx->server, replies, 2);
	r = check(fx, "Bearer tok-1", true);
	assert_int_equal(r.status, 200);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " TOKENS "|POST " ACCESS "|");
	assert_request_body(&fx->server, 0,
	                    "{'apiVersion':'authentication.k8s.io/v1','kind':'TokenReview',"
	                    "'spec':{'token':'tok-1'}}");
	assert_request_body(&fx->server, 1,
	                    "{'apiVersion':'authorization.k8s.io/v1','kind':'SubjectAccessReview',"
	                    "'spec':{'user':'alice','uid':'u-1','groups':['system:authenticated'],"
	                    "'nonResourceAttributes':{'path':'/metrics','verb':'get'}}}");

	/* The next scrape with the same token is answered from the cache, at once. */
	r = check(fx, "Bearer tok-1", false);
	assert_int_equal(r.status, 200);
	server_spin(&fx->server);
	assert_int_equal(fx->server.n_seen, 2);
}

static void test_unknown_token_is_401_and_cached(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = TOKENS,
		  .status = 201,
		  .body = "{\"status\":{\"user\":{},\"error\":\"invalid bearer token\"}}" },
	};
	struct tj_auth_result r;

	server_script(&fx->server, replies, 1);
	r = check(fx, "Bearer forged", true);
	assert_int_equal(r.status, 401);
	assert_string_equal(r.message, "Unauthorized");
	r = check(fx, "Bearer forged", false);
	assert_int_equal(r.status, 401);
	server_spin(&fx->server);
	assert_int_equal(fx->server.n_seen, 1);
}

static void test_denied_user_is_403_and_cached(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = TOKENS, .status = 201, .body = ALICE },
		{ .method = "POST",
		  .path = ACCESS,
		  .status = 201,
		  .body = "{\"status\":{\"allowed\":false}}" },
	};
	struct tj_auth_result r;

	server_script(&fx->server, replies, 2);
	r = check(fx, "Bearer tok-2", true);
	assert_int_equal(r.status, 403);
	assert_string_equal(r.message, "Authorization denied for user alice");
	r = check(fx, "Bearer tok-2", false);
	assert_int_equal(r.status, 403);
	server_spin(&fx->server);
	assert_int_equal(fx->server.n_seen, 2);
}

static void test_failed_reviews_are_500_and_not_cached(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = TOKENS,
		  .status = 403,
		  .body = API_ERROR(403, "Forbidden", "cannot create tokenreviews") },
		{ .method = "POST", .path = TOKENS, .status = 201, .body = ALICE },
		{ .method = "POST",
		  .path = ACCESS,
		  .status = 201,
		  .body = "{\"status\":\"not an object\"}" },
	};
	struct tj_auth_result r;

	server_script(&fx->server, replies, 3);
	r = check(fx, "Bearer tok-3", true);
	assert_int_equal(r.status, 500);
	assert_string_equal(r.message, "Authentication failed");
	assert_non_null(strstr(fx->server.log, "cannot review the token of a metrics request"));
	/* Asked again: the failure was not kept. */
	r = check(fx, "Bearer tok-3", true);
	assert_int_equal(r.status, 500);
	assert_string_equal(r.message, "Authorization for user alice failed");
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "POST " TOKENS "|POST " TOKENS "|POST " ACCESS "|");
}

static void test_cancelled_check_never_answers(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = TOKENS, .hang = true },
	};
	struct tj_auth_result now = { 0 };
	struct tj_auth_check *c = NULL;

	server_script(&fx->server, replies, 1);
	assert_int_equal(tj_metrics_auth_check(fx->auth, "Bearer tok-4", "GET", "/metrics",
	                                       on_answer, fx, &now, &c),
	                 1);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 1);
	tj_auth_check_cancel(c);
	server_spin(&fx->server);
	assert_int_equal(fx->answers, 0);
	assert_int_equal(now.status, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_no_token_is_401_without_a_review, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_allowed_user_then_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_token_is_401_and_cached, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_denied_user_is_403_and_cached, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_failed_reviews_are_500_and_not_cached, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_cancelled_check_never_answers, setup,
		                                teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
