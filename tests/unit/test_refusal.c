#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/plan/refusal.h"

struct classify_case {
	long http;
	const char *message;
	enum tj_refusal want;
};

/* The API server's own words for each kind of refusal. */
static const struct classify_case classify_cases[] = {
	{ 403,
	  "pods \"sa-node-0-0-a0\" is forbidden: error looking up service account team-a/trainer: "
	  "serviceaccount \"trainer\" not found",
	  TJ_REFUSAL_RETRY },
	{ 403,
	  "pods \"q-node-0-0-a0\" is forbidden: exceeded quota: gpu, requested: "
	  "requests.nvidia.com/gpu=4, used: requests.nvidia.com/gpu=0, limited: "
	  "requests.nvidia.com/gpu=2",
	  TJ_REFUSAL_RETRY },
	{ 403,
	  "pods \"p-node-0-0-a0\" is forbidden: violates PodSecurity \"restricted:latest\": "
	  "allowPrivilegeEscalation != false",
	  TJ_REFUSAL_RETRY },
	{ 403, NULL, TJ_REFUSAL_RETRY },
	{ 403,
	  "pods \"t-node-0-0-a0\" is forbidden: unable to create new content in namespace team-a "
	  "because it is being terminated",
	  TJ_REFUSAL_NAMESPACE_TERMINATING },
	{ 422, "Pod \"x\" is invalid: spec.containers[0].image: Required value",
	  TJ_REFUSAL_PERMANENT },
	{ 400, "the body of the request was in an unknown format", TJ_REFUSAL_PERMANENT },
	{ 401, "Unauthorized", TJ_REFUSAL_NONE },
	{ 404, "namespaces \"gone\" not found", TJ_REFUSAL_NONE },
	{ 409, "pods \"x\" already exists", TJ_REFUSAL_NONE },
	{ 429, "too many requests", TJ_REFUSAL_NONE },
	{ 500, "etcdserver: request timed out", TJ_REFUSAL_NONE },
	{ 503, NULL, TJ_REFUSAL_NONE },
	{ 0, NULL, TJ_REFUSAL_NONE },
};

static void test_classify(void **state)
{
	for (size_t i = 0; i < sizeof(classify_cases) / sizeof(classify_cases[0]); i++) {
		const struct classify_case *c = &classify_cases[i];

		print_message("# case %zu: %ld\n", i, c->http);
		assert_int_equal(tj_refusal_classify(c->http, c->message), c->want);
	}
}

static void test_status_patch(void **state)
{
	cJSON *patch = NULL;

	assert_int_equal(tj_refusal_status_patch(TJ_REFUSAL_RETRY, "exceeded quota: gpu", &patch),
	                 0);
	assert_json_equal(patch, "{'status':{'state':'Pending','reason':'FailedCreate','message':"
	                         "'exceeded quota: gpu'}}");
	cJSON_Delete(patch);
	assert_int_equal(tj_refusal_status_patch(TJ_REFUSAL_PERMANENT, "Pod is invalid", &patch),
	                 0);
	assert_json_equal(patch, "{'status':{'state':'Failed','reason':'FailedCreate','message':"
	                         "'Pod is invalid'}}");
	cJSON_Delete(patch);
	assert_int_equal(tj_refusal_status_patch(TJ_REFUSAL_RETRY, "", &patch), 0);
	assert_json_equal(patch, "{'status':{'state':'Pending','reason':'FailedCreate','message':"
	                         "'the API server refused the create'}}");
	cJSON_Delete(patch);
	patch = NULL;
	assert_int_equal(tj_refusal_status_patch(TJ_REFUSAL_NONE, "x", &patch), -EINVAL);
	assert_int_equal(tj_refusal_status_patch(TJ_REFUSAL_NAMESPACE_TERMINATING, "x", &patch),
	                 -EINVAL);
	assert_null(patch);
}

/* A message longer than the status holds is cut between UTF-8 sequences; a byte that is not
 * UTF-8 becomes '?'. */
static void test_messages_are_bounded_utf8(void **state)
{
	char big[3 * TJ_MESSAGE_MAX], event[TJ_MESSAGE_MAX];
	const char *msg;
	cJSON *patch;
	size_t n = 0;

	while (n + 2 < sizeof(big) - 1) {
		big[n++] = '\xc3'; /* U+00E9 */
		big[n++] = '\xa9';
	}
	big[n] = '\0';
	assert_int_equal(tj_refusal_status_patch(TJ_REFUSAL_RETRY, big, &patch), 0);
	msg = cJSON_GetStringValue(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(patch, "status"), "message"));
	assert_int_equal(strlen(msg), TJ_MESSAGE_MAX - 2); /* 511 whole sequences */
	assert_memory_equal(msg, "\xc3\xa9", 2);
	cJSON_Delete(patch);

	tj_refusal_event_message(big, event);
	assert_memory_equal(event, "Error creating: \xc3\xa9", 18);
	/* 16 bytes of prefix, then 503 sequences: 1022 bytes */
	assert_int_equal(strlen(event), 16 + 2 * 503);

	tj_refusal_event_message("bad \xff byte", event);
	assert_string_equal(event, "Error creating: bad ? byte");
	tj_refusal_event_message(NULL, event);
	assert_string_equal(event, "Error creating: ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_status_patch),
		cmocka_unit_test(test_messages_are_bounded_utf8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
