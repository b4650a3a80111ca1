/* Kubeflow's trainer status API: the path and audience of a job, the users that may report,
 * the check of a report's body against the CRD's schema, and the wiring of a pod. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/json.h"
#include "reconcilers/trainer_status.h"

static void test_path_and_audience(void **state)
{
	char buf[TJ_TRAINER_STATUS_PATH_MAX];

	tj_trainer_status_path("team-a", "llama", buf);
	assert_string_equal(
	        buf,
	        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/status");
	tj_trainer_status_audience("team-a", "llama", buf);
	assert_string_equal(
	        buf, "trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/status");
}

static void test_path_parse_table(void **state)
{
	static const struct {
		const char *path;
		int want;
		const char *ns, *name;
	} rows[] = {
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/status", 0,
		  "team-a", "llama" },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/a/trainjobs/b-1/status", 0, "a",
		  "b-1" },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama", -ENOENT,
		  NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/status/",
		  -ENOENT, NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/llama/scale",
		  -ENOENT, NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces//trainjobs/llama/status", -ENOENT,
		  NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/Team/trainjobs/llama/status",
		  -ENOENT, NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/-a/trainjobs/llama/status",
		  -ENOENT, NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/a/trainjobs/../status", -ENOENT,
		  NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1/namespaces/a/trainjobs/b/status", -ENOENT, NULL,
		  NULL },
		{ "/metrics", -ENOENT, NULL, NULL },
		{ "", -ENOENT, NULL, NULL },
		{ "/apis/trainer.kubeflow.org/v1alpha1/namespaces/"
		  "a234567890123456789012345678901234567890123456789012345678901234/trainjobs/b/"
		  "status",
		  -ENOENT, NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char ns[64] = "unset", name[64] = "unset";

		assert_int_equal(tj_trainer_status_path_parse(rows[i].path, ns, name),
		                 rows[i].want);
		assert_string_equal(ns, rows[i].want == 0 ? rows[i].ns : "unset");
		assert_string_equal(name, rows[i].want == 0 ? rows[i].name : "unset");
	}
}

static void test_user_allowed_table(void **state)
{
	static const struct {
		const char *user, *ns;
		bool want;
	} rows[] = {
		{ "system:serviceaccount:team-a:default", "team-a", true },
		{ "system:serviceaccount:team-a:trainer", "team-a", true },
		{ "system:serviceaccount:team-b:default", "team-a", false },
		{ "system:serviceaccount:team-ab:default", "team-a", false },
		{ "system:serviceaccount:team-a:", "team-a", false },
		{ "system:serviceaccount:team-a:x:y", "team-a", false },
		{ "kubernetes-admin", "team-a", false },
		{ "system:node:gh200-1", "team-a", false },
		{ NULL, "team-a", false },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(tj_trainer_status_user_allowed(rows[i].user, rows[i].ns),
		                 rows[i].want);
}

/* A body, and the trainerStatus to write (compact JSON), or the error's start. */
struct parse_row {
	const char *body;
	int want;
	const char *result; /* the trainerStatus, "null" for none; or a prefix of err */
};

static const struct parse_row parse_rows[] = {
	{ "{\"trainerStatus\":{\"progressPercentage\":42,\"estimatedRemainingSeconds\":600,"
	  "\"metrics\":[{\"name\":\"loss\",\"value\":\"0.25\"}],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  0,
	  "{\"progressPercentage\":42,\"estimatedRemainingSeconds\":600,\"metrics\":[{\"name\":"
	  "\"loss\",\"value\":\"0.25\"}],\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}" },
	/* The SDK's time: Python's isoformat, microseconds and an offset. */
	{ "{\"trainerStatus\":{\"progressPercentage\":7,"
	  "\"lastUpdatedTime\":\"2026-12-04T11:00:00.123456+01:00\"}}",
	  0,
	  "{\"progressPercentage\":7,\"estimatedRemainingSeconds\":null,\"metrics\":null,"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}" },
	{ "{\"trainerStatus\":{\"progressPercentage\":null,\"metrics\":[],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  0,
	  "{\"progressPercentage\":null,\"estimatedRemainingSeconds\":null,\"metrics\":[],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}" },
	{ "{}", 0, "null" },
	{ "{\"trainerStatus\":null}", 0, "null" },
	{ "{\"trainerStatus\":{\"progressPercentage\":101,\"lastUpdatedTime\":\"2026-12-04T10:00:"
	  "00Z\"}}",
	  -EINVAL, "trainerStatus.progressPercentage: must be an integer from 0 to 100" },
	{ "{\"trainerStatus\":{\"progressPercentage\":-1,\"lastUpdatedTime\":\"2026-12-04T10:00:"
	  "00Z\"}}",
	  -EINVAL, "trainerStatus.progressPercentage: must be an integer" },
	{ "{\"trainerStatus\":{\"progressPercentage\":4.5,\"lastUpdatedTime\":\"2026-12-04T10:00:"
	  "00Z\"}}",
	  -EINVAL, "trainerStatus.progressPercentage: must be an integer" },
	{ "{\"trainerStatus\":{\"progressPercentage\":\"50\",\"lastUpdatedTime\":\"2026-12-04T10:"
	  "00:00Z\"}}",
	  -EINVAL, "trainerStatus.progressPercentage: must be an integer" },
	{ "{\"trainerStatus\":{\"estimatedRemainingSeconds\":2147483648,"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL,
	  "trainerStatus.estimatedRemainingSeconds: must be an integer from 0 to 2147483647" },
	{ "{\"trainerStatus\":{\"progressPercentage\":5}}", -EINVAL,
	  "trainerStatus.lastUpdatedTime: is required" },
	{ "{\"trainerStatus\":{\"lastUpdatedTime\":\"yesterday\"}}", -EINVAL,
	  "trainerStatus.lastUpdatedTime: must be an RFC 3339 time" },
	{ "{\"trainerStatus\":{\"lastUpdatedTime\":5}}", -EINVAL,
	  "trainerStatus.lastUpdatedTime: must be an RFC 3339 time" },
	{ "{\"trainerStatus\":{\"progress\":5,\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL, "trainerStatus: unknown field \"progress\"" },
	{ "{\"trainerStatus\":{\"progressPercentage\":5,\"progressPercentage\":6,"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL, "trainerStatus: field \"progressPercentage\" is given twice" },
	{ "{\"status\":{}}", -EINVAL, "body: unknown field \"status\"" },
	{ "{\"trainerStatus\":5}", -EINVAL, "trainerStatus: must be an object" },
	{ "[1]", -EINVAL, "the body is not a JSON object" },
	{ "{\"trainerStatus\":", -EINVAL, "the body is not a JSON object" },
	{ "", -EINVAL, "the body is not a JSON object" },
	{ "{\"trainerStatus\":{\"metrics\":{\"loss\":\"1\"},\"lastUpdatedTime\":\"2026-12-04T10:00:"
	  "00Z\"}}",
	  -EINVAL, "trainerStatus.metrics: must be a list of {name, value}" },
	{ "{\"trainerStatus\":{\"metrics\":[{\"name\":\"loss\",\"value\":0.5}],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL, "trainerStatus.metrics[0].value: must be a string" },
	{ "{\"trainerStatus\":{\"metrics\":[{\"name\":\"\",\"value\":\"1\"}],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL, "trainerStatus.metrics[0].name: must have 1 to 64 characters, not 0" },
	{ "{\"trainerStatus\":{\"metrics\":[{\"name\":\"a\",\"value\":\"1\",\"unit\":\"s\"}],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL, "trainerStatus.metrics[0]: unknown field \"unit\"" },
	{ "{\"trainerStatus\":{\"metrics\":[{\"name\":\"a\",\"value\":\"1\"},{\"name\":\"a\","
	  "\"value\":\"2\"}],\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL, "trainerStatus.metrics[1]: metric \"a\" is given twice (also metrics[0])" },
	{ "{\"trainerStatus\":{\"metrics\":[{\"name\":\"a\",\"value\":\"\\u00ff\\u00fe\"}],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  0,
	  "{\"progressPercentage\":null,\"estimatedRemainingSeconds\":null,\"metrics\":[{\"name\":"
	  "\"a\",\"value\":\"\xc3\xbf\xc3\xbe\"}],\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}" },
	{ "{\"trainerStatus\":{\"metrics\":[{\"name\":\"a\",\"value\":\"\xff\"}],"
	  "\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}",
	  -EINVAL, "trainerStatus.metrics[0].value: is not valid UTF-8" },
};

static void test_parse_table(void **state)
{
	for (size_t i = 0; i < sizeof(parse_rows) / sizeof(parse_rows[0]); i++) {
		const struct parse_row *row = &parse_rows[i];
		struct tj_problem why = { "", "" };
		const char *err = why.message;
		cJSON *status = (cJSON *)1;
		int r = tj_trainer_status_parse(row->body, strlen(row->body), &status, &why);

		if (r != row->want)
			fail_msg("row %zu: %d, want %d (%s)", i, r, row->want, err);
		if (r == 0) {
			char *text = status ? cJSON_PrintUnformatted(status) : strdup("null");

			if (strcmp(text, row->result) != 0)
				fail_msg("row %zu: %s\nwant %s", i, text, row->result);
			free(text);
			cJSON_Delete(status);
		} else if (strncmp(err, row->result, strlen(row->result)) != 0) {
			fail_msg("row %zu: error \"%s\", want \"%s...\"", i, err, row->result);
		} else {
			assert_string_equal(why.reason, "Invalid");
			assert_ptr_equal(status, (cJSON *)1); /* not written on failure */
		}
	}
}

/* 256 metrics are the schema's limit; 257 are refused, and so is a body past 64 KiB. */
static void test_parse_limits(void **state)
{
	size_t cap = TJ_TRAINER_STATUS_MAX_BODY * 2, len = 0;
	char *body = malloc(cap);
	struct tj_problem why = { "", "" };
	cJSON *status = NULL;

	for (int n = 256; n <= 257; n++) {
		len = (size_t)snprintf(body, cap, "{\"trainerStatus\":{\"metrics\":[");
		for (int i = 0; i < n; i++)
			len += (size_t)snprintf(body + len, cap - len,
			                        "%s{\"name\":\"m%d\",\"value\":\"%d\"}",
			                        i ? "," : "", i, i);
		len += (size_t)snprintf(body + len, cap - len,
		                        "],\"lastUpdatedTime\":\"2026-12-04T10:00:00Z\"}}");
		assert_int_equal(tj_trainer_status_parse(body, len, &status, &why),
		                 n == 256 ? 0 : -EINVAL);
		if (n == 256) {
			assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(status, "metrics")),
			                 256);
			cJSON_Delete(status);
		} else {
			assert_string_equal(
			        why.message,
			        "trainerStatus.metrics: has 257 entries, the limit is 256");
		}
	}
	memset(body, ' ', TJ_TRAINER_STATUS_MAX_BODY + 1);
	assert_int_equal(
	        tj_trainer_status_parse(body, TJ_TRAINER_STATUS_MAX_BODY + 1, &status, &why),
	        -E2BIG);
	assert_string_equal(why.reason, "RequestEntityTooLarge");
	free(body);
}

static void test_patch(void **state)
{
	cJSON *status = cJSON_Parse("{\"progressPercentage\":3}");
	cJSON *patch = tj_trainer_status_patch(status);
	char *text = cJSON_PrintUnformatted(patch);

	assert_string_equal(text, "{\"status\":{\"trainerStatus\":{\"progressPercentage\":3}}}");
	free(text);
	cJSON_Delete(patch);
	cJSON_Delete(status);
}

static const char pod_spec[] =
        "{\"containers\":[{\"name\":\"node\",\"env\":[{\"name\":\"KUBEFLOW_TRAINER_SERVER_URL\","
        "\"value\":\"mine\"},{\"name\":\"A\",\"value\":\"1\"}],\"volumeMounts\":[{\"name\":\"x\","
        "\"mountPath\":\"/var/run/secrets/kubeflow/trainer\"}]},{\"name\":\"sidecar\"}],"
        "\"volumes\":[{\"name\":\"kubeflow-trainer-token\",\"emptyDir\":{}}]}";

static void test_add_to_pod(void **state)
{
	static const struct {
		const char *ca;
		const char *want;
	} rows[] = {
		{ "trainjob-ca",
		  "{\"containers\":[{\"name\":\"node\",\"env\":[{\"name\":\"KUBEFLOW_TRAINER_"
		  "SERVER_URL\","
		  "\"value\":\"https://tjc.sys.svc:10443/apis/trainer.kubeflow.org/v1alpha1/"
		  "namespaces/"
		  "team-a/trainjobs/llama/status\"},{\"name\":\"A\",\"value\":\"1\"},{\"name\":"
		  "\"KUBEFLOW_TRAINER_SERVER_TOKEN\",\"value\":\"/var/run/secrets/kubeflow/trainer/"
		  "token\"},{\"name\":\"KUBEFLOW_TRAINER_SERVER_CA_CERT\",\"value\":\"/var/run/"
		  "secrets/"
		  "kubeflow/trainer/"
		  "ca.crt\"}],\"volumeMounts\":[{\"name\":\"kubeflow-trainer-token\","
		  "\"mountPath\":\"/var/run/secrets/kubeflow/"
		  "trainer\",\"readOnly\":true}]},{\"name\":"
		  "\"sidecar\"}],\"volumes\":[{\"name\":\"kubeflow-trainer-token\",\"projected\":{"
		  "\"sources\":[{\"serviceAccountToken\":{\"audience\":\"trainer.kubeflow.org/"
		  "v1alpha1/"
		  "namespaces/team-a/trainjobs/llama/status\",\"expirationSeconds\":3600,\"path\":"
		  "\"token\"}},{\"configMap\":{\"name\":\"trainjob-ca\",\"items\":[{\"key\":\"ca."
		  "crt\","
		  "\"path\":\"ca.crt\"}]}}]}}]}" },
		{ NULL,
		  "{\"containers\":[{\"name\":\"node\",\"env\":[{\"name\":\"KUBEFLOW_TRAINER_"
		  "SERVER_URL\","
		  "\"value\":\"https://tjc.sys.svc:10443/apis/trainer.kubeflow.org/v1alpha1/"
		  "namespaces/"
		  "team-a/trainjobs/llama/status\"},{\"name\":\"A\",\"value\":\"1\"},{\"name\":"
		  "\"KUBEFLOW_TRAINER_SERVER_TOKEN\",\"value\":\"/var/run/secrets/kubeflow/trainer/"
		  "token\"}],\"volumeMounts\":[{\"name\":\"kubeflow-trainer-token\",\"mountPath\":"
		  "\"/var/run/secrets/kubeflow/"
		  "trainer\",\"readOnly\":true}]},{\"name\":\"sidecar\"}],"
		  "\"volumes\":[{\"name\":\"kubeflow-trainer-token\",\"projected\":{\"sources\":[{"
		  "\"serviceAccountToken\":{\"audience\":\"trainer.kubeflow.org/v1alpha1/"
		  "namespaces/"
		  "team-a/trainjobs/llama/"
		  "status\",\"expirationSeconds\":3600,\"path\":\"token\"}}]}}]}" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *spec = cJSON_Parse(pod_spec);
		char *text;

		assert_int_equal(tj_trainer_status_add_to_pod(spec, "node", "team-a", "llama",
		                                              "https://tjc.sys.svc:10443",
		                                              rows[i].ca),
		                 0);
		text = cJSON_PrintUnformatted(spec);
		assert_string_equal(text, rows[i].want);
		free(text);
		cJSON_Delete(spec);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_and_audience),  cmocka_unit_test(test_path_parse_table),
		cmocka_unit_test(test_user_allowed_table), cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_limits),       cmocka_unit_test(test_patch),
		cmocka_unit_test(test_add_to_pod),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
