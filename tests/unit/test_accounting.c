/* Accounting records (reconcilers/usage/accounting.h): a deleted job's record reads back to what
 * the fair share counts, its object to what kubectl sacct lists (CANCELLED for a job deleted
 * before it ended); records too large are cut, text that is no record is refused, and the
 * records past the retention or the most a namespace keeps go, the oldest first. */
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
#include "reconcilers/usage/accounting.h"

#define NOW 1795953600 /* 2026-11-29T12:00:00Z */

static struct tj_trainjob *job_of(const char *status, const char *annotations)
{
	char text[8192];
	struct tj_trainjob *job = NULL;
	cJSON *obj;

	snprintf(
	        text, sizeof(text),
	        "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"vit\",\"uid\":\"u-1\","
	        "\"creationTimestamp\":\"2026-11-29T10:00:00Z\",\"annotations\":{%s}},"
	        "\"spec\":{\"runtimeRef\":{\"name\":\"torch-gh200\"},\"trainer\":{\"numNodes\":2}},"
	        "\"status\":%s}",
	        annotations, status);
	obj = cJSON_Parse(text);
	assert_non_null(obj);
	assert_int_equal(tj_trainjob_from_json(obj, &job), 0);
	cJSON_Delete(obj);
	return job;
}

static void test_a_finished_job_reads_back(void **state)
{
	struct tj_trainjob *job = job_of(
	        "{\"state\":\"Complete\",\"reason\":\"AllPodsSucceeded\",\"message\":\"done\","
	        "\"startTime\":\"2026-11-29T10:01:00Z\",\"completionTime\":\"2026-11-29T11:00:"
	        "00Z\","
	        "\"gpuSeconds\":28320,\"gpuSecondsCountedUntil\":\"2026-11-29T11:00:00Z\","
	        "\"preemptions\":1}",
	        "\"trainjob.flame.dev/submitted-by\":\"alice\",\"trainjob.flame.dev/partition\":"
	        "\"gh200\",\"trainjob.flame.dev/qos\":\"low\",\"other\":\"dropped\"");
	char *text = tj_accounting_record(job, NOW);
	struct tj_accounting_entry e;
	struct tj_trainjob *back = NULL;
	cJSON *obj;

	(void)state;
	assert_non_null(text);
	assert_int_equal(tj_accounting_parse(text, strlen(text), "team-a", &e), 0);
	assert_string_equal(e.uid, "u-1");
	assert_string_equal(e.namespace, "team-a");
	assert_int_equal(e.deleted, NOW);
	assert_int_equal(e.gpu_seconds, 28320);
	assert_int_equal(e.start, NOW - 7140);
	assert_int_equal(e.counted_until, NOW - 3600);
	obj = tj_accounting_object(text, strlen(text));
	assert_non_null(obj);
	assert_int_equal(tj_trainjob_from_json(obj, &back), 0);
	assert_string_equal(back->name, "vit");
	assert_string_equal(back->runtime_name, "torch-gh200");
	assert_int_equal(back->num_nodes, 2);
	assert_int_equal(back->deletion_time, 0); /* it ended: its own state, not cancelled */
	assert_int_equal(back->status.state, TJ_STATE_COMPLETE);
	assert_int_equal(back->status.preemptions, 1);
	assert_string_equal(back->submitted_by, "alice");
	assert_string_equal(back->partition, "gh200");
	assert_string_equal(back->qos, "low");
	assert_null(cJSON_GetObjectItemCaseSensitive(tj_json_path(obj, "metadata.annotations"),
	                                             "other"));
	tj_trainjob_free(back);
	cJSON_Delete(obj);
	free(text);
	tj_trainjob_free(job);
}

static void test_a_job_deleted_before_its_end_is_cancelled(void **state)
{
	struct tj_trainjob *job = job_of("{\"state\":\"Running\",\"reason\":\"AllPodsRunning\","
	                                 "\"startTime\":\"2026-11-29T11:00:00Z\"}",
	                                 "");
	char *text = tj_accounting_record(job, NOW);
	struct tj_trainjob *back = NULL;
	cJSON *obj = text ? tj_accounting_object(text, strlen(text)) : NULL;

	(void)state;
	assert_non_null(obj);
	assert_int_equal(tj_trainjob_from_json(obj, &back), 0);
	assert_int_equal(back->deletion_time, NOW);
	tj_trainjob_free(back);
	cJSON_Delete(obj);
	free(text);
	tj_trainjob_free(job);
}

static void test_long_messages_are_cut_to_fit(void **state)
{
	char status[6000], message[1500];
	struct tj_trainjob *job;
	struct tj_accounting_entry e;
	char *text;

	(void)state;
	memset(message, 'x', sizeof(message) - 1);
	message[sizeof(message) - 1] = '\0';
	snprintf(status, sizeof(status),
	         "{\"state\":\"Failed\",\"reason\":\"ReachedMaxRestarts\",\"message\":\"%.900s\","
	         "\"lastFailure\":{\"rank\":0,\"node\":\"n\",\"pod\":\"p\",\"reason\":\"Error\","
	         "\"time\":\"2026-11-29T11:00:00Z\",\"exitCode\":1,\"message\":\"%.900s\"},"
	         "\"gpuSeconds\":5}",
	         message, message);
	job = job_of(status, "");
	text = tj_accounting_record(job, NOW);
	assert_non_null(text);
	assert_true(strlen(text) <= TJ_ACCOUNTING_RECORD_MAX);
	assert_int_equal(tj_accounting_parse(text, strlen(text), "team-a", &e), 0);
	assert_int_equal(e.gpu_seconds, 5);
	free(text);
	tj_trainjob_free(job);
}

static void test_text_that_is_no_record_is_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"{\"kind\":\"Pod\",\"metadata\":{\"uid\":\"u\",\"annotations\":{"
		"\"trainjob.flame.dev/deleted-at\":\"2026-11-29T12:00:00Z\"}}}",
		"{\"kind\":\"TrainJob\",\"metadata\":{\"annotations\":{"
		"\"trainjob.flame.dev/deleted-at\":\"2026-11-29T12:00:00Z\"}}}",
		"{\"kind\":\"TrainJob\",\"metadata\":{\"uid\":\"u\"}}",
		"{\"kind\":\"TrainJob\",\"metadata\":{\"uid\":\"u\",\"annotations\":{"
		"\"trainjob.flame.dev/deleted-at\":\"yesterday\"}}}",
	};
	struct tj_accounting_entry e;
	char *big = calloc(TJ_ACCOUNTING_RECORD_MAX + 2, 1);

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tj_accounting_parse(bad[i], strlen(bad[i]), "ns", &e), -EINVAL);
	assert_non_null(big);
	memset(big, ' ', TJ_ACCOUNTING_RECORD_MAX + 1);
	assert_int_equal(tj_accounting_parse(big, strlen(big), "ns", &e), -EINVAL);
	free(big);
}

static void test_prune_by_retention_then_the_oldest(void **state)
{
	struct tj_accounting_entry *e = calloc(TJ_ACCOUNTING_MAX_RECORDS + 3, sizeof(*e));
	bool *drop = calloc(TJ_ACCOUNTING_MAX_RECORDS + 3, sizeof(*drop));
	size_t n = TJ_ACCOUNTING_MAX_RECORDS + 3;

	(void)state;
	assert_non_null(e);
	assert_non_null(drop);
	for (size_t i = 0; i < n; i++) {
		snprintf(e[i].uid, sizeof(e[i].uid), "u-%05zu", i);
		e[i].deleted = NOW - 1000 - (int64_t)i; /* the later ones older */
	}
	e[0].deleted = NOW - TJ_ACCOUNTING_RETENTION - 1; /* past the retention */
	/* One past the retention, then the two oldest of the rest. */
	assert_int_equal(tj_accounting_prune(e, n, NOW, TJ_ACCOUNTING_RETENTION, drop), 3);
	assert_true(drop[0]);
	assert_true(drop[n - 1] && drop[n - 2]);
	assert_false(drop[n - 3] || drop[1]);
	/* Without a retention, only the most a namespace keeps: the three oldest. */
	assert_int_equal(tj_accounting_prune(e, n, NOW, 0, drop), 3);
	assert_true(drop[0] && drop[n - 1] && drop[n - 2]);
	assert_false(drop[n - 3] || drop[1]);
	free(e);
	free(drop);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_finished_job_reads_back),
		cmocka_unit_test(test_a_job_deleted_before_its_end_is_cancelled),
		cmocka_unit_test(test_long_messages_are_cut_to_fit),
		cmocka_unit_test(test_text_that_is_no_record_is_refused),
		cmocka_unit_test(test_prune_by_retention_then_the_oldest),
	};
	return cmocka_run_group_tests_name("accounting", tests, NULL, NULL);
}
