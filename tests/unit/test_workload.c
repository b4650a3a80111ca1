/* Kueue's Workload projection: the owning TrainJob, and why Kueue keeps the job waiting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "informers/workload.h"

#define OWNER                                                                                      \
	"'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"      \
	"'name':'llm','uid':'u1','controller':true}]"
#define PENDING                                                                                    \
	"{'type':'QuotaReserved','status':'False','reason':'Pending','message':'couldn\\u0027t "   \
	"assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor "  \
	"gh200, 8 more needed'}"

static const struct {
	const char *what;
	const char *json;
	int rc;
	const char *owner, *owner_uid;
	bool waiting;
	const char *reason, *message;
} projections[] = {
	{ "waiting for quota",
	  "{'metadata':{'namespace':'a','name':'trainjob-llm-1f2e3'," OWNER
	  "},'status':{'conditions':[" PENDING "]}}",
	  0, "llm", "u1", true, "Pending",
	  "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu "
	  "in flavor gh200, 8 more needed" },
	{ "preempted, among other conditions",
	  "{'metadata':{'namespace':'a','name':'w'," OWNER
	  "},'status':{'conditions':[{'type':'Evicted','status':'True','reason':'Preempted',"
	  "'message':'x'},{'type':'QuotaReserved','status':'False','reason':'Preempted',"
	  "'message':'Preempted to accommodate a workload'}]}}",
	  0, "llm", "u1", true, "Preempted", "Preempted to accommodate a workload" },
	{ "admitted",
	  "{'metadata':{'namespace':'a','name':'w'," OWNER
	  "},'status':{'conditions':[{'type':'QuotaReserved','status':'True','reason':'"
	  "QuotaReserved',"
	  "'message':'Quota reserved in ClusterQueue team-a'}]}}",
	  0, "llm", "u1", false, "", "" },
	{ "new: no condition yet", "{'metadata':{'namespace':'a','name':'w'," OWNER "}}", 0, "llm",
	  "u1", false, "", "" },
	{ "a condition without reason or message",
	  "{'metadata':{'namespace':'a','name':'w'," OWNER
	  "},'status':{'conditions':[{'type':'QuotaReserved','status':'False'}]}}",
	  0, "llm", "u1", true, "", "" },
	{ "the Workload of a batch/v1 Job",
	  "{'metadata':{'namespace':'a','name':'w','ownerReferences':[{'apiVersion':'batch/v1',"
	  "'kind':'Job','name':'j','uid':'u2','controller':true}]}}",
	  0, "", "", false, "", "" },
	{ "a TrainJob that owns it without being its controller",
	  "{'metadata':{'namespace':'a','name':'w','ownerReferences':[{'apiVersion':"
	  "'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'llm','uid':'u1'}]}}",
	  0, "", "", false, "", "" },
	{ "conditions that are not a list",
	  "{'metadata':{'namespace':'a','name':'w'," OWNER "},'status':{'conditions':7}}", 0, "llm",
	  "u1", false, "", "" },
	{ "no namespace", "{'metadata':{'name':'w'}}", -EINVAL, NULL, NULL, false, NULL, NULL },
	{ "no name", "{'metadata':{'namespace':'a'}}", -EINVAL, NULL, NULL, false, NULL, NULL },
	{ "not an object's metadata", "{'metadata':'w'}", -EINVAL, NULL, NULL, false, NULL, NULL },
};

static void test_projection(void **state)
{
	for (size_t i = 0; i < sizeof(projections) / sizeof(projections[0]); i++) {
		cJSON *j = jlit(projections[i].json);
		struct tj_workload *w = (struct tj_workload *)0x1;
		int rc = tj_workload_from_json(j, &w);

		print_message("# case: %s\n", projections[i].what);
		assert_int_equal(rc, projections[i].rc);
		if (rc == 0) {
			assert_string_equal(w->namespace, "a");
			assert_string_equal(w->owner, projections[i].owner);
			assert_string_equal(w->owner_uid, projections[i].owner_uid);
			assert_int_equal(w->waiting, projections[i].waiting);
			/* Of these, only the admitted one's quota is reserved. */
			assert_int_equal(w->reserved, strcmp(projections[i].what, "admitted") == 0);
			assert_string_equal(w->reason, projections[i].reason);
			assert_string_equal(w->message, projections[i].message);
			tj_workload_free(w);
		} else {
			assert_ptr_equal(w, (struct tj_workload *)0x1);
		}
		cJSON_Delete(j);
	}
}

/* A message longer than the projection keeps is cut before a multi-byte character, never
 * inside one. */
static void test_long_message(void **state)
{
	char text[TJ_WORKLOAD_MESSAGE_MAX + 8];
	cJSON *j = jlit("{'metadata':{'namespace':'a','name':'w'},'status':{'conditions':["
	                "{'type':'QuotaReserved','status':'False','reason':'Pending'}]}}");
	cJSON *cond = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "status"), "conditions"), 0);
	struct tj_workload *w;

	memset(text, 'x', TJ_WORKLOAD_MESSAGE_MAX - 2);
	/* "é" (two bytes) straddles the last byte the projection can keep. */
	memcpy(text + TJ_WORKLOAD_MESSAGE_MAX - 2, "\xc3\xa9yyyy", 7);
	assert_non_null(cJSON_AddStringToObject(cond, "message", text));
	assert_int_equal(tj_workload_from_json(j, &w), 0);
	assert_int_equal(strlen(w->message), TJ_WORKLOAD_MESSAGE_MAX - 2);
	assert_int_equal(w->message[TJ_WORKLOAD_MESSAGE_MAX - 3], 'x');
	tj_workload_free(w);
	cJSON_Delete(j);
}

static void add(struct tj_store *s, const char *json)
{
	cJSON *j = jlit(json);
	void *w;

	assert_int_equal(tj_workload_project(j, &w), 0);
	assert_int_equal(tj_store_upsert(s, w, NULL), 0);
	cJSON_Delete(j);
}

/* A job's Workload is found by the job's key and uid: not a namesake's in another
 * namespace, nor the one of an earlier job of the same name. */
static void test_workload_of(void **state)
{
	struct tj_store *s;
	const struct tj_workload *w;

	assert_null(tj_workload_of(NULL, "a/llm", "u1"));
	assert_int_equal(tj_store_new(&tj_workload_store_ops, &s), 0);
	assert_null(tj_workload_of(s, "a/llm", "u1"));
	add(s, "{'metadata':{'namespace':'a','name':'old','ownerReferences':[{'apiVersion':"
	       "'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'llm','uid':'u0',"
	       "'controller':true}]}}");
	add(s, "{'metadata':{'namespace':'b','name':'w'," OWNER "}}");
	assert_null(tj_workload_of(s, "a/llm", "u1"));
	add(s, "{'metadata':{'namespace':'a','name':'w'," OWNER "},'status':{'conditions':[" PENDING
	       "]}}");
	w = tj_workload_of(s, "a/llm", "u1");
	assert_non_null(w);
	assert_string_equal(w->name, "w");
	assert_true(w->waiting);
	assert_string_equal(tj_workload_of(s, "a/llm", "u0")->name, "old");
	assert_null(tj_workload_of(s, "a/llm", ""));
	assert_null(tj_workload_of(s, "a/llm", NULL));
	tj_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_long_message),
		cmocka_unit_test(test_workload_of),
	};
	return cmocka_run_group_tests_name("workload", tests, NULL, NULL);
}
