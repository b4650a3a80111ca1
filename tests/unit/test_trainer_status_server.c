/* The trainer status server against the scripted API server (scripted_server.h), fetched as a
 * training script posts: the TokenReview it asks with the job's audience, a token of another
 * job or namespace refused (and the refusal cached), the status patch, the API server's
 * refusal passed on and told, and the rate limit. The body's checks are test_trainer_status.c's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/http/trainer_status_server.h"
#include "http_fetch.h"
#include "scripted_server.h"

#define TOKENS   "/apis/authentication.k8s.io/v1/tokenreviews"
#define STATUS   "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/status"
#define AUDIENCE "trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/status"
#define REPORT                                                                                     \
	"{\"trainerStatus\":{\"progressPercentage\":42,\"estimatedRemainingSeconds\":600,"         \
	"\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}"
/* The answer to a TokenReview of a pod's token of llama's audience. */
#define REVIEWED(user, audiences)                                                                  \
	"{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":true,\"user\":{\"username\":"     \
	"\"" user "\"},\"audiences\":" audiences "}}"
#define DEFAULT_SA "system:serviceaccount:team-a:default"

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
	struct tj_trainer_status_server *status;
	int port;
	int refusals; /* told to the refused callback */
	char refused[512];
};

static void on_refused(void *userdata, const char *ns, const char *name, const char *message)
{
	struct fixture *fx = userdata;

	fx->refusals++;
	snprintf(fx->refused, sizeof(fx->refused), "%s/%s: %s", ns, name, message);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct tj_bind_addr a;
	char err[128];

	assert_non_null(fx);
	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	fx->client = server_client_new(&fx->server);
	assert_int_equal(tj_bind_addr_parse("127.0.0.1:0", &a, err, sizeof(err)), 0);
	/* Plain HTTP: the certificate is the serving certificate's business (test_serving_cert.c).
	 */
	assert_int_equal(tj_trainer_status_serve(&fx->loop, &a, NULL, fx->client, on_refused, fx,
	                                         &fx->status),
	                 0);
	fx->port = tj_trainer_status_server_port(fx->status);
	server_capture_log(&fx->server);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	tj_trainer_status_server_close(fx->status);
	fx->client = tj_client_free(fx->client);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

/* A POST of body to path with the bearer token (none when NULL); the answer's status, and its
 * body into *ret_body (owned by the caller). */
static int post(struct fixture *fx, const char *path, const char *token, const char *body,
                char **ret_body)
{
	struct fetch f;
	struct response r;
	char *request = NULL, auth[256] = "";

	if (token)
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", token);
	assert_true(asprintf(&request,
	                     "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s"
	                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	                     path, auth, strlen(body), body) > 0);
	fetch_start_raw(&fx->loop, &f, fx->port, request);
	free(request);
	run_until_done(&fx->loop, &f, 1);
	r = parse(&f);
	*ret_body = strdup(r.body);
	free(f.response);
	return r.status;
}

static void test_a_report_is_reviewed_for_its_job_and_written(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = TOKENS,
		  .status = 201,
		  .body = REVIEWED(DEFAULT_SA, "[\"" AUDIENCE "\"]") },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
	};
	char *body;

	server_script(&fx->server, replies, 2);
	assert_int_equal(post(fx, STATUS, "pod-token", REPORT, &body), 200);
	assert_string_equal(body, "{\"trainerStatus\":{\"progressPercentage\":42,"
	                          "\"estimatedRemainingSeconds\":600,"
	                          "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}");
	free(body);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " TOKENS "|PATCH " STATUS "|");
	assert_request_body(&fx->server, 0,
	                    "{'apiVersion':'authentication.k8s.io/v1','kind':'TokenReview',"
	                    "'spec':{'token':'pod-token','audiences':['" AUDIENCE "']}}");
	/* Every field, null where the report had none: a merge patch forgets the last one's. */
	assert_request_body(&fx->server, 1,
	                    "{'status':{'trainerStatus':{'progressPercentage':42,"
	                    "'estimatedRemainingSeconds':600,'metrics':null,"
	                    "'lastUpdatedTime':'2026-12-04T10:00:00Z'}}}");
	assert_non_null(strstr(fx->server.seen[1].head, "application/merge-patch+json"));
	assert_int_equal(fx->refusals, 0);
}

/* What a token that is not the job's gets: 403, and no write. */
static void test_tokens_not_of_the_job_are_refused(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		/* Another job's token: the API server finds it of no audience asked for. */
		{ .method = "POST",
		  .path = TOKENS,
		  .request_has = "other-job",
		  .status = 201,
		  .body = "{\"status\":{\"authenticated\":false,\"error\":\"token audiences "
		          "[\\\"x\\\"] is invalid for the target audiences\"}}" },
		/* An authenticator that ignores spec.audiences answers with none of them. */
		{ .method = "POST",
		  .path = TOKENS,
		  .request_has = "any-audience",
		  .status = 201,
		  .body = REVIEWED(DEFAULT_SA, "[\"https://kubernetes.default.svc\"]") },
		/* The job's audience, but a ServiceAccount of another namespace. */
		{ .method = "POST",
		  .path = TOKENS,
		  .request_has = "stranger",
		  .status = 201,
		  .body = REVIEWED("system:serviceaccount:team-b:default", "[\"" AUDIENCE "\"]") },
	};
	char *body;

	server_script(&fx->server, replies, 3);
	assert_int_equal(post(fx, STATUS, NULL, REPORT, &body), 401);
	assert_non_null(strstr(body, "\"reason\":\"Unauthorized\""));
	free(body);
	assert_int_equal(post(fx, STATUS, "other-job", REPORT, &body), 403);
	assert_string_equal(body,
	                    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	                    "\"message\":\"Forbidden: the token is not valid for this "
	                    "TrainJob\",\"reason\":\"Forbidden\",\"code\":403}");
	free(body);
	assert_int_equal(post(fx, STATUS, "any-audience", REPORT, &body), 403);
	free(body);
	assert_int_equal(post(fx, STATUS, "stranger", REPORT, &body), 403);
	assert_non_null(strstr(body, "system:serviceaccount:team-b:default is no ServiceAccount"));
	free(body);
	/* The refusal is remembered: the same token again costs no review. */
	assert_int_equal(post(fx, STATUS, "other-job", REPORT, &body), 403);
	free(body);
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "POST " TOKENS "|POST " TOKENS "|POST " TOKENS "|");
}

/* The API server's refusal goes back to the pod and to the refused callback; a report that
 * comes within a second of a write waits; any other path is 404. */
static void test_refusals_and_the_rate(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = TOKENS,
		  .status = 201,
		  .repeat = true,
		  .body = REVIEWED(DEFAULT_SA, "[\"" AUDIENCE "\"]") },
		{ .method = "PATCH",
		  .path = STATUS,
		  .status = 422,
		  .body = API_ERROR(422, "Invalid", "status.trainerStatus: Invalid value") },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
	};
	char *body;

	server_script(&fx->server, replies, 3);
	assert_int_equal(post(fx, STATUS, "pod-token", REPORT, &body), 422);
	assert_non_null(strstr(body, "\"message\":\"status.trainerStatus: Invalid value\""));
	free(body);
	assert_int_equal(fx->refusals, 1);
	assert_string_equal(fx->refused, "team-a/llama: status.trainerStatus: Invalid value");
	/* That write counted: the next, at once, waits a second. */
	assert_int_equal(post(fx, STATUS, "pod-token", REPORT, &body), 429);
	assert_non_null(strstr(body, "\"reason\":\"TooManyRequests\""));
	free(body);
	assert_int_equal(server_count(&fx->server, "PATCH", STATUS), 1);
	/* A body the CRD would not take is refused before any write. */
	assert_int_equal(post(fx, STATUS, "pod-token", "{\"trainerStatus\":{}}", &body), 422);
	assert_non_null(strstr(body, "trainerStatus.lastUpdatedTime: is required"));
	free(body);
	assert_int_equal(post(fx, "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs",
	                      "pod-token", REPORT, &body),
	                 404);
	free(body);
	assert_int_equal(fx->refusals, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_report_is_reviewed_for_its_job_and_written,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_tokens_not_of_the_job_are_refused, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_refusals_and_the_rate, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
