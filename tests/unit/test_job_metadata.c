#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/render/job_metadata.h"

struct merge_case {
	const char *name;
	const char *runtime_meta; /* the runtime's spec.template.metadata, or NULL */
	const char *job_spec;     /* members of the TrainJob's spec besides runtimeRef, or "" */
	const char *existing;     /* the object's metadata before */
	const char *want;         /* and after */
};

static const struct merge_case cases[] = {
	{ "nothing to merge", NULL, "", "{'labels':{'a':'1'}}", "{'labels':{'a':'1'}}" },
	{ "the runtime template's labels and annotations",
	  "{'labels':{'team':'ml'},'annotations':{'owner':'x'}}", "", "{}",
	  "{'labels':{'team':'ml'},'annotations':{'owner':'x'}}" },
	{ "the TrainJob's spec.labels and spec.annotations win over the runtime's",
	  "{'labels':{'team':'ml','tier':'gold'},'annotations':{'owner':'x'}}",
	  ",'labels':{'team':'vision'},'annotations':{'owner':'y','note':'z'}", "{}",
	  "{'labels':{'team':'vision','tier':'gold'},'annotations':{'owner':'y','note':'z'}}" },
	{ "runtimePatches' template metadata win over both, later patches last",
	  "{'labels':{'team':'ml'}}",
	  ",'labels':{'team':'vision','cost':'a'},'runtimePatches':["
	  "{'manager':'a','trainingRuntimeSpec':{'template':{'metadata':{'labels':{'team':'p1',"
	  "'cost':'b'},'annotations':{'prometheus.io/scrape':'true'}}}}},"
	  "{'manager':'b','trainingRuntimeSpec':{'template':{'metadata':{'labels':{'team':'p2'}}}}}"
	  ","
	  "{'manager':'c','trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[]}}}}]",
	  "{}",
	  "{'labels':{'team':'p2','cost':'b'},'annotations':{'prometheus.io/scrape':'true'}}" },
	{ "the patches' Job metadata of the step comes after every patch's JobSet metadata", NULL,
	  ",'runtimePatches':[{'manager':'a','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':{'team':'job'},"
	  "'annotations':{'j':'1'}}}},{'name':'launcher','template':{'metadata':{'labels':{"
	  "'other':'x'}}}}]}}}},{'manager':'b','trainingRuntimeSpec':{'template':{'metadata':{"
	  "'labels':{'team':'jobset','cost':'c'}}}}}]",
	  "{}", "{'labels':{'team':'job','cost':'c'},'annotations':{'j':'1'}}" },
	{ "a key the object has keeps its value (the pod template's, the controller's)",
	  "{'labels':{'trainer.kubeflow.org/trainjob-name':'other','team':'ml'}}",
	  ",'labels':{'jobset.sigs.k8s.io/jobset-name':'evil'},'annotations':{'a':'job'}",
	  "{'name':'vit','labels':{'trainer.kubeflow.org/trainjob-name':'vit',"
	  "'jobset.sigs.k8s.io/jobset-name':'vit'},'annotations':{'a':'pod'}}",
	  "{'name':'vit','labels':{'trainer.kubeflow.org/trainjob-name':'vit',"
	  "'jobset.sigs.k8s.io/jobset-name':'vit','team':'ml'},'annotations':{'a':'pod'}}" },
	{ "values that are not strings are skipped", "{'labels':{'n':1,'ok':'y'},'annotations':[]}",
	  "", "{}", "{'labels':{'ok':'y'}}" },
};

static void test_merge_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct merge_case *c = &cases[i];
		char buf[4096];
		struct tj_trainjob *job = NULL;
		struct tj_runtime *rt = NULL;
		cJSON *jj, *rj, *meta = jlit(c->existing);

		print_message("# case: %s\n", c->name);
		snprintf(buf, sizeof(buf),
		         "{'kind':'TrainJob','metadata':{'name':'vit','namespace':'a'},'spec':{"
		         "'runtimeRef':{'name':'r'}%s}}",
		         c->job_spec);
		jj = jlit(buf);
		snprintf(buf, sizeof(buf),
		         "{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{"
		         "'template':{'metadata':%s,'spec':{}}}}",
		         c->runtime_meta ? c->runtime_meta : "{}");
		rj = jlit(buf);
		assert_int_equal(tj_trainjob_from_json(jj, &job), 0);
		assert_null(job->spec_error);
		assert_int_equal(tj_runtime_from_json(rj, &rt), 0);
		assert_int_equal(tj_job_metadata_apply(meta, job, rt, "node"), 0);
		assert_json_equal(meta, c->want);
		cJSON_Delete(meta);
		cJSON_Delete(jj);
		cJSON_Delete(rj);
		tj_trainjob_free(job);
		tj_runtime_free(rt);
	}
}

/* The Service (no step) gets the JobSet's metadata only. */
static void test_service_has_no_step(void **state)
{
	cJSON *jj = jlit("{'kind':'TrainJob','metadata':{'name':'vit','namespace':'a'},'spec':{"
	                 "'runtimeRef':{'name':'r'},'runtimePatches':[{'manager':'a',"
	                 "'trainingRuntimeSpec':{'template':{'metadata':{'labels':{'team':'js'}},"
	                 "'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':{"
	                 "'labels':{'team':'job'}}}}]}}}}]}}");
	cJSON *meta = jlit("{}");
	struct tj_trainjob *job = NULL;

	assert_int_equal(tj_trainjob_from_json(jj, &job), 0);
	assert_int_equal(tj_job_metadata_apply(meta, job, NULL, NULL), 0);
	assert_json_equal(meta, "{'labels':{'team':'js'}}");
	cJSON_Delete(meta);
	meta = jlit("{}");
	assert_int_equal(tj_job_metadata_apply(meta, job, NULL, "node"), 0);
	assert_json_equal(meta, "{'labels':{'team':'job'}}");
	cJSON_Delete(meta);
	cJSON_Delete(jj);
	tj_trainjob_free(job);
}

/* spec.labels of the wrong type is the TrainJob's error, named. */
static void test_wrong_type(void **state)
{
	cJSON *j = jlit("{'kind':'TrainJob','metadata':{'name':'vit','namespace':'a'},'spec':{"
	                "'runtimeRef':{'name':'r'},'labels':['a']}}");
	struct tj_trainjob *job = NULL;

	assert_int_equal(tj_trainjob_from_json(j, &job), 0);
	assert_non_null(job->spec_error);
	assert_string_equal(job->spec_error, "spec.labels: must be an object");
	tj_trainjob_free(job);
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_table),
		cmocka_unit_test(test_service_has_no_step),
		cmocka_unit_test(test_wrong_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
