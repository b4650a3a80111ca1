#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/request.h"

static const struct tj_resource namespaces = { "", "v1", "namespaces", false };

struct url_case {
	const char *name;
	struct tj_ref ref;
	struct tj_query_param params[3];
	size_t n_params;
	int want_rc;
	const char *want;
};

static const struct url_case url_cases[] = {
	{ "core collection",
	  { &tj_resource_pods, "default", NULL, NULL },
	  { { 0 } },
	  0,
	  0,
	  "/api/v1/namespaces/default/pods" },
	{ "all namespaces",
	  { &tj_resource_pods, NULL, NULL, NULL },
	  { { 0 } },
	  0,
	  0,
	  "/api/v1/pods" },
	{ "group object",
	  { &tj_resource_trainjobs, "team-a", "llama", NULL },
	  { { 0 } },
	  0,
	  0,
	  "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama" },
	{ "status subresource",
	  { &tj_resource_trainjobs, "team-a", "llama", "status" },
	  { { 0 } },
	  0,
	  0,
	  "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/status" },
	{ "cluster-scoped",
	  { &tj_resource_clustertrainingruntimes, NULL, "torch-gh200", NULL },
	  { { 0 } },
	  0,
	  0,
	  "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-gh200" },
	{ "lease",
	  { &tj_resource_leases, "sys", "tjc", NULL },
	  { { 0 } },
	  0,
	  0,
	  "/apis/coordination.k8s.io/v1/namespaces/sys/leases/tjc" },
	{ "names are percent-encoded",
	  { &tj_resource_nodes, NULL, "a:b@c d", NULL },
	  { { 0 } },
	  0,
	  0,
	  "/api/v1/nodes/a%3Ab%40c%20d" },
	{ "query values are percent-encoded",
	  { &tj_resource_pods, "ns", NULL, NULL },
	  { { "labelSelector", "app in (a,b),!x" }, { "skipped", NULL }, { "k", "~._-" } },
	  3,
	  0,
	  "/api/v1/namespaces/ns/pods?labelSelector=app%20in%20%28a%2Cb%29%2C%21x&k=~._-" },
	{ "continue token with +/=",
	  { &namespaces, NULL, NULL, NULL },
	  { { "continue", "eyJ2Ij+/=" } },
	  1,
	  0,
	  "/api/v1/namespaces?continue=eyJ2Ij%2B%2F%3D" },
	{ "non-ASCII",
	  { &tj_resource_pods, "ns", NULL, NULL },
	  { { "fieldSelector", "ü" } },
	  1,
	  0,
	  "/api/v1/namespaces/ns/pods?fieldSelector=%C3%BC" },
	{ "namespace on a cluster-scoped resource",
	  { &tj_resource_nodes, "ns", NULL, NULL },
	  { { 0 } },
	  0,
	  -EINVAL,
	  NULL },
	{ "slash in a name",
	  { &tj_resource_pods, "ns", "a/b", NULL },
	  { { 0 } },
	  0,
	  -EINVAL,
	  NULL },
	{ "dot-dot name", { &tj_resource_pods, "ns", "..", NULL }, { { 0 } }, 0, -EINVAL, NULL },
	{ "empty namespace", { &tj_resource_pods, "", NULL, NULL }, { { 0 } }, 0, -EINVAL, NULL },
	{ "subresource without name",
	  { &tj_resource_pods, "ns", NULL, "status" },
	  { { 0 } },
	  0,
	  -EINVAL,
	  NULL },
};

static void test_url(void **state)
{
	for (size_t i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
		const struct url_case *c = &url_cases[i];
		char *url = NULL;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_kube_url(&c->ref, c->params, c->n_params, &url), c->want_rc);
		if (c->want)
			assert_string_equal(url, c->want);
		else
			assert_null(url);
		free(url);
	}
}

static void test_url_limit(void **state)
{
	char *big = malloc(9000), *url = NULL;
	struct tj_ref ref = { &tj_resource_pods, "ns", NULL, NULL };
	struct tj_query_param p = { "labelSelector", big };

	memset(big, 'a', 8999);
	big[8999] = '\0';
	assert_int_equal(tj_kube_url(&ref, &p, 1, &url), -E2BIG);
	assert_null(url);
	free(big);
}

static void test_list_url(void **state)
{
	struct tj_ref ref = { &tj_resource_pods, "ns", NULL, NULL };
	struct tj_list_options first = { .limit = 500,
		                         .resource_version = "0",
		                         .label_selector = "a=b" };
	struct tj_list_options next = { .limit = 500, .continue_token = "tok=" };
	char *url;

	assert_int_equal(tj_kube_list_url(&ref, &first, &url), 0);
	assert_string_equal(
	        url, "/api/v1/namespaces/ns/pods?limit=500&labelSelector=a%3Db&resourceVersion=0");
	free(url);
	assert_int_equal(tj_kube_list_url(&ref, &next, &url), 0);
	assert_string_equal(url, "/api/v1/namespaces/ns/pods?limit=500&continue=tok%3D");
	free(url);
	assert_int_equal(tj_kube_list_url(&ref, NULL, &url), 0);
	assert_string_equal(url, "/api/v1/namespaces/ns/pods");
	free(url);
	ref.name = "p";
	assert_int_equal(tj_kube_list_url(&ref, NULL, &url), -EINVAL);
}

struct delete_case {
	const char *name;
	struct tj_delete_options opts;
	int want_rc;
	const char *want;
};

static const struct delete_case delete_cases[] = {
	{ "defaults", { 0 }, 0, "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"}" },
	{ "force delete now",
	  { .set_grace_period = true, .grace_period_seconds = 0 },
	  0,
	  "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":0}" },
	{ "everything",
	  { .precondition_uid = "u-1",
	    .precondition_resource_version = "42",
	    .propagation_policy = "Foreground",
	    .set_grace_period = true,
	    .grace_period_seconds = 30,
	    .dry_run = true },
	  0,
	  "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":30,"
	  "\"propagationPolicy\":\"Foreground\",\"preconditions\":{\"uid\":\"u-1\","
	  "\"resourceVersion\":\"42\"},\"dryRun\":[\"All\"]}" },
	{ "uid precondition only",
	  { .precondition_uid = "u-2", .propagation_policy = "Background" },
	  0,
	  "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":\"Background\","
	  "\"preconditions\":{\"uid\":\"u-2\"}}" },
	{ "unknown policy", { .propagation_policy = "Eventually" }, -EINVAL, NULL },
	{ "negative grace",
	  { .set_grace_period = true, .grace_period_seconds = -1 },
	  -EINVAL,
	  NULL },
};

static void test_delete_options(void **state)
{
	for (size_t i = 0; i < sizeof(delete_cases) / sizeof(delete_cases[0]); i++) {
		const struct delete_case *c = &delete_cases[i];
		char *json = NULL;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_delete_options_json(&c->opts, &json), c->want_rc);
		if (c->want)
			assert_string_equal(json, c->want);
		else
			assert_null(json);
		free(json);
	}
}

struct retry_case {
	const char *name;
	long status;
	const char *retry_after;
	int attempts_done;
	long want;
};

/* max_retries 10 and a cap of 30 s throughout. */
static const struct retry_case retry_cases[] = {
	{ "429 with Retry-After", 429, "2", 0, 2000 },
	{ "503 with Retry-After", 503, "1", 3, 1000 },
	{ "500 with Retry-After", 500, "5", 9, 5000 },
	{ "capped", 429, "120", 0, 30000 },
	{ "huge value capped without overflow", 429, "99999999999999999999", 0, 30000 },
	{ "zero waits a second", 429, "0", 0, 1000 },
	{ "budget spent", 429, "1", 10, -1 },
	{ "no Retry-After", 503, NULL, 0, -1 },
	{ "empty Retry-After", 503, "", 0, -1 },
	{ "HTTP date is not honoured", 503, "Wed, 21 Oct 2015 07:28:00 GMT", 0, -1 },
	{ "negative", 429, "-1", 0, -1 },
	{ "409 is never retried", 409, "1", 0, -1 },
	{ "404 is never retried", 404, "1", 0, -1 },
	{ "200 is never retried", 200, "1", 0, -1 },
	{ "599 is a 5xx", 599, "1", 0, 1000 },
	{ "600 is not", 600, "1", 0, -1 },
};

static void test_retry_delay(void **state)
{
	for (size_t i = 0; i < sizeof(retry_cases) / sizeof(retry_cases[0]); i++) {
		const struct retry_case *c = &retry_cases[i];

		print_message("# case: %s\n", c->name);
		assert_int_equal(
		        tj_retry_delay_ms(c->status, c->retry_after, c->attempts_done, 10, 30000),
		        c->want);
	}
	/* The cap may be below the one-second floor. */
	assert_int_equal(tj_retry_delay_ms(429, "3", 0, 10, 500), 500);
	/* No retries configured. */
	assert_int_equal(tj_retry_delay_ms(429, "3", 0, 0, 30000), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_url),         cmocka_unit_test(test_url_limit),
		cmocka_unit_test(test_list_url),    cmocka_unit_test(test_delete_options),
		cmocka_unit_test(test_retry_delay),
	};
	return cmocka_run_group_tests_name("kube_request", tests, NULL, NULL);
}
