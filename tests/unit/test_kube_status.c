#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kube/status.h"

static void test_decode_full_status(void **state)
{
	static const char body[] =
	        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
	        "\"message\":\"pods \\\"p\\\" already exists\",\"reason\":\"AlreadyExists\","
	        "\"details\":{\"name\":\"p\",\"kind\":\"pods\",\"retryAfterSeconds\":3},"
	        "\"code\":409}";
	struct tj_status s;

	assert_int_equal(tj_status_from_response(409, body, strlen(body), &s), 0);
	assert_int_equal(s.code, 409);
	assert_string_equal(s.status, "Failure");
	assert_string_equal(s.reason, "AlreadyExists");
	assert_string_equal(s.message, "pods \"p\" already exists");
	assert_string_equal(s.details_name, "p");
	assert_string_equal(s.details_kind, "pods");
	assert_null(s.details_group);
	assert_int_equal(s.retry_after_seconds, 3);
	assert_true(tj_status_is_already_exists(&s));
	assert_false(tj_status_is_conflict(&s));
	assert_false(tj_status_is_not_found(&s));
	tj_status_clear(&s);
	assert_null(s.reason);
	assert_int_equal(s.code, 0);
}

static void test_status_code_defaults_to_http_code(void **state)
{
	static const char body[] = "{\"kind\":\"Status\",\"reason\":\"NotFound\"}";
	struct tj_status s;

	assert_int_equal(tj_status_from_response(404, body, strlen(body), &s), 0);
	assert_int_equal(s.code, 404);
	assert_true(tj_status_is_not_found(&s));
	tj_status_clear(&s);
}

struct synth_case {
	long code;
	const char *body;
	const char *want_reason;
	const char *want_message;
};

static const struct synth_case synth_cases[] = {
	{ 404, "", "NotFound", "the server answered HTTP 404" },
	{ 410, "gone\n", "Gone", "the server answered HTTP 410: gone" },
	{ 429, "slow down", "TooManyRequests", "the server answered HTTP 429: slow down" },
	{ 502, "<html>bad gateway</html>", "InternalError",
	  "the server answered HTTP 502: <html>bad gateway</html>" },
	{ 503, "", "ServiceUnavailable", "the server answered HTTP 503" },
	{ 418, "{\"kind\":\"Pod\"}", "Unknown",
	  "the server answered HTTP 418: {\"kind\":\"Pod\"}" },
	{ 409, "{\"not\":\"a status\"}", "Conflict",
	  "the server answered HTTP 409: {\"not\":\"a status\"}" },
};

static void test_synthesised_from_http_code(void **state)
{
	for (size_t i = 0; i < sizeof(synth_cases) / sizeof(synth_cases[0]); i++) {
		const struct synth_case *c = &synth_cases[i];
		struct tj_status s;

		print_message("# case: %ld\n", c->code);
		assert_int_equal(tj_status_from_response(c->code, c->body, strlen(c->body), &s), 0);
		assert_int_equal(s.code, c->code);
		assert_string_equal(s.status, "Failure");
		assert_string_equal(s.reason, c->want_reason);
		assert_string_equal(s.message, c->want_message);
		tj_status_clear(&s);
	}
}

static void test_long_body_is_quoted_in_part(void **state)
{
	char body[1000];
	struct tj_status s;

	memset(body, 'x', sizeof(body));
	assert_int_equal(tj_status_from_response(500, body, sizeof(body), &s), 0);
	assert_int_equal(strlen(s.message), strlen("the server answered HTTP 500: ") + 256);
	tj_status_clear(&s);
}

static void test_from_json_rejects_other_kinds(void **state)
{
	cJSON *pod = cJSON_Parse("{\"kind\":\"Pod\"}");
	cJSON *arr = cJSON_Parse("[1]");
	cJSON *bare = cJSON_Parse("{\"code\":410,\"reason\":\"Expired\",\"message\":\"too old\"}");
	struct tj_status s = { .code = 7 };

	assert_int_equal(tj_status_from_json(pod, &s), -EINVAL);
	assert_int_equal(tj_status_from_json(arr, &s), -EINVAL);
	assert_int_equal(s.code, 7); /* untouched */
	/* Without a kind it is read as a Status (watch ERROR objects always say Status, but
	 * nothing is lost by being lenient). */
	assert_int_equal(tj_status_from_json(bare, &s), 0);
	assert_int_equal(s.code, 410);
	assert_true(tj_status_is_expired(&s));
	tj_status_clear(&s);
	cJSON_Delete(pod);
	cJSON_Delete(arr);
	cJSON_Delete(bare);
}

struct pred_case {
	const char *name;
	struct tj_status s;
	bool (*pred)(const struct tj_status *);
	bool want;
};

static const struct pred_case pred_cases[] = {
	{ "Expired", { .code = 410, .reason = "Expired" }, tj_status_is_expired, true },
	{ "Gone (old servers)", { .code = 410, .reason = "Gone" }, tj_status_is_expired, true },
	{ "bare 410", { .code = 410 }, tj_status_is_expired, true },
	{ "500 is not expired",
	  { .code = 500, .reason = "InternalError" },
	  tj_status_is_expired,
	  false },
	{ "Conflict", { .code = 409, .reason = "Conflict" }, tj_status_is_conflict, true },
	{ "AlreadyExists is not Conflict",
	  { .code = 409, .reason = "AlreadyExists" },
	  tj_status_is_conflict,
	  false },
	{ "bare 409 is Conflict", { .code = 409 }, tj_status_is_conflict, true },
	{ "bare 409 is not AlreadyExists", { .code = 409 }, tj_status_is_already_exists, false },
	{ "NotFound", { .code = 404, .reason = "NotFound" }, tj_status_is_not_found, true },
	{ "429", { .code = 429 }, tj_status_is_too_many_requests, true },
	{ "401", { .code = 401, .reason = "Unauthorized" }, tj_status_is_unauthorized, true },
	{ "403", { .code = 403, .reason = "Forbidden" }, tj_status_is_forbidden, true },
	{ "422", { .code = 422, .reason = "Invalid" }, tj_status_is_invalid, true },
	{ "504", { .code = 504 }, tj_status_is_timeout, true },
	{ "Timeout reason on 500",
	  { .code = 500, .reason = "Timeout" },
	  tj_status_is_timeout,
	  true },
	{ "500", { .code = 500, .reason = "InternalError" }, tj_status_is_internal_error, true },
	{ "zeroed", { 0 }, tj_status_is_not_found, false },
};

static void test_predicates(void **state)
{
	for (size_t i = 0; i < sizeof(pred_cases) / sizeof(pred_cases[0]); i++) {
		print_message("# case: %s\n", pred_cases[i].name);
		assert_int_equal(pred_cases[i].pred(&pred_cases[i].s), pred_cases[i].want);
		assert_false(pred_cases[i].pred(NULL));
	}
}

static void test_copy(void **state)
{
	struct tj_status src = { .code = 409,
		                 .status = "Failure",
		                 .reason = "Conflict",
		                 .message = "m",
		                 .details_name = "n",
		                 .retry_after_seconds = 2 };
	struct tj_status dst;

	assert_int_equal(tj_status_copy(&src, &dst), 0);
	assert_int_equal(dst.code, 409);
	assert_string_equal(dst.reason, "Conflict");
	assert_ptr_not_equal(dst.reason, src.reason);
	assert_string_equal(dst.message, "m");
	assert_string_equal(dst.details_name, "n");
	assert_null(dst.details_kind);
	assert_int_equal(dst.retry_after_seconds, 2);
	tj_status_clear(&dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_full_status),
		cmocka_unit_test(test_status_code_defaults_to_http_code),
		cmocka_unit_test(test_synthesised_from_http_code),
		cmocka_unit_test(test_long_body_is_quoted_in_part),
		cmocka_unit_test(test_from_json_rejects_other_kinds),
		cmocka_unit_test(test_predicates),
		cmocka_unit_test(test_copy),
	};
	return cmocka_run_group_tests_name("kube_status", tests, NULL, NULL);
}
