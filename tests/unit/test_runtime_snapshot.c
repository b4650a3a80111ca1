/* The runtime snapshot (reconcilers/runtime_snapshot.h): the copy a runtime keeps, the
 * ConfigMap made of it, what the informer reads back, which runtime a job runs on, and the
 * plans that make a snapshot and those that do not. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/runtime_snapshot.h"

#define NOW 1795953600

#define RUNTIME_WITH(kind, ns, name, image)                                                        \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'" kind                              \
	"','metadata':{'name':'" name "'" ns                                                       \
	",'uid':'rt-uid','resourceVersion':'7','generation':3,'labels':{"                          \
	"'trainjob.flame.dev/gpu-class':'gh200'},'annotations':{'a':'b'},'managedFields':[{"       \
	"'manager':'kubectl'}],'finalizers':['x']},'spec':{'mlPolicy':{'numNodes':1,'torch':{"     \
	"'numProcPerNode':'auto'}},'template':{'spec':{'replicatedJobs':[{'name':'node',"          \
	"'template':{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':"         \
	"'trainer'}},'spec':{'template':{'spec':{'containers':[{'name':'node','image':'" image     \
	"'}]}}}}}]}}},'status':{}}"
#define TORCH RUNTIME_WITH("ClusterTrainingRuntime", "", "torch-gh200", "pytorch:1")

#define JOB_WITH(ref)                                                                              \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':"      \
	"'vit','namespace':'team-a','uid':'uid-vit','resourceVersion':'42','generation':2,"        \
	"'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':{'runtimeRef':" ref ",'trainer':{"     \
	"'numNodes':2,'command':['python3','train.py']}}}"
#define JOB JOB_WITH("{'name':'torch-gh200'}")

static struct tj_runtime *runtime_of(const char *sq)
{
	struct tj_runtime *rt;
	cJSON *j = jlit(sq);

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	return rt;
}

static struct tj_trainjob *job_of(const char *sq)
{
	struct tj_trainjob *job;
	cJSON *j = jlit(sq);

	assert_int_equal(tj_trainjob_from_json(j, &job), 0);
	cJSON_Delete(j);
	return job;
}

/* The ConfigMap as the API server would return it, read by the informer's projection. */
static struct tj_runtime_snapshot *read_back(const cJSON *cm)
{
	struct tj_runtime_snapshot *s;

	assert_int_equal(tj_runtime_snapshot_from_json(cm, &s), 0);
	return s;
}

static void test_the_copy_keeps_who_the_runtime_is_and_its_spec(void **state)
{
	struct tj_runtime *rt = runtime_of(TORCH);

	cJSON *copy = NULL;

	assert_non_null(rt->snapshot);
	assert_int_equal(tj_json_parse(rt->snapshot, &copy), 0);
	assert_json_equal(
	        copy,
	        "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
	        "'metadata':{'name':'torch-gh200','uid':'rt-uid','resourceVersion':'7',"
	        "'generation':3,'labels':{'trainjob.flame.dev/gpu-class':'gh200'},"
	        "'annotations':{'a':'b'}},'spec':{'mlPolicy':{'numNodes':1,'torch':{"
	        "'numProcPerNode':'auto'}},'template':{'spec':{'replicatedJobs':[{'name':'node',"
	        "'template':{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':"
	        "'trainer'}},'spec':{'template':{'spec':{'containers':[{'name':'node','image':"
	        "'pytorch:1'}]}}}}}]}}}}");
	cJSON_Delete(copy);
	tj_runtime_free(rt);
}

static void test_the_config_map_is_the_jobs_and_reads_back_as_the_runtime(void **state)
{
	struct tj_runtime *rt = runtime_of(TORCH);
	struct tj_trainjob *job = job_of(JOB);
	struct tj_runtime_snapshot *s;
	const struct tj_runtime *picked = NULL;
	struct tj_problem why = { "", "" };
	cJSON *cm;

	assert_int_equal(tj_runtime_snapshot_config_map(job, rt, &cm), 0);
	assert_string_equal(tj_json_string(cm, "metadata.name"), "vit-runtime-snapshot");
	assert_string_equal(tj_json_string(cm, "metadata.namespace"), "team-a");
	assert_string_equal(
	        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	                tj_json_path(cm, "metadata.labels"), TJ_LABEL_RUNTIME_SNAPSHOT)),
	        "true");
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetArrayItem(tj_json_path(cm, "metadata.ownerReferences"), 0),
	        "controller")));
	assert_string_equal(tj_json_string(cm, "data.runtime"), rt->snapshot);
	/* As the informer lists it. */
	tj_json_set_string(tj_json_object(cm, "metadata"), "resourceVersion", "9");
	s = read_back(cm);
	assert_string_equal(s->owner_uid, "uid-vit");
	assert_string_equal(s->resource_version, "9");
	assert_null(s->problem);
	assert_int_equal(tj_runtime_snapshot_pick(job, s, &picked, &why), 1);
	assert_ptr_equal(picked, s->runtime);
	assert_string_equal(picked->name, "torch-gh200");
	assert_string_equal(picked->gpu_class, "gh200");
	assert_non_null(strstr(picked->node_template, "pytorch:1"));
	tj_runtime_snapshot_free(s);
	cJSON_Delete(cm);
	tj_trainjob_free(job);
	tj_runtime_free(rt);
}

/* Which runtime a job runs on, by its snapshot: the table. */
static void test_which_runtime_a_job_runs_on(void **state)
{
	static const struct {
		const char *what, *job, *config_map;
		int want;
		const char *message; /* a part of why's message when want < 0 */
	} rows[] = {
		{ "no snapshot: the live runtime", JOB, NULL, 0, NULL },
		{ "the job's snapshot", JOB,
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'data':{'runtime':"
		  "'{\\\"kind\\\":\\\"ClusterTrainingRuntime\\\",\\\"metadata\\\":{\\\"name\\\":"
		  "\\\"torch-gh200\\\"}}'}"
		  "}",
		  1, NULL },
		{ "a namesake's leftover (another uid): the live runtime", JOB,
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-old','controller':true}]},'data':{'runtime':"
		  "'{\\\"kind\\\":\\\"ClusterTrainingRuntime\\\",\\\"metadata\\\":{\\\"name\\\":"
		  "\\\"torch-gh200\\\"}}'}"
		  "}",
		  0, NULL },
		{ "owned but not as controller: the live runtime", JOB,
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit'}]},'data':{'runtime':'{}'}}",
		  0, NULL },
		{ "the job's, without its key", JOB,
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'data':{}}",
		  -EINVAL, "has no data key \"runtime\"" },
		{ "the job's, not JSON", JOB,
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'data':{'runtime':"
		  "'kind: ClusterTrainingRuntime'}}",
		  -EINVAL, "is not JSON" },
		{ "the job's, not a runtime", JOB,
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'data':{'runtime':"
		  "'{\\\"kind\\\":\\\"Pod\\\",\\\"metadata\\\":{\\\"name\\\":\\\"torch-gh200\\\"}}'"
		  "}}",
		  -EINVAL, "is not a ClusterTrainingRuntime or TrainingRuntime" },
		{ "the job's, of another runtime", JOB,
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'data':{'runtime':"
		  "'{\\\"kind\\\":\\\"ClusterTrainingRuntime\\\",\\\"metadata\\\":{\\\"name\\\":"
		  "\\\"torch-h100\\\"}}'}"
		  "}",
		  -EINVAL,
		  "holds ClusterTrainingRuntime torch-h100, not the ClusterTrainingRuntime "
		  "torch-gh200" },
		{ "the job's, of the other kind",
		  JOB_WITH("{'name':'torch-gh200','kind':'TrainingRuntime'}"),
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'data':{'runtime':"
		  "'{\\\"kind\\\":\\\"ClusterTrainingRuntime\\\",\\\"metadata\\\":{\\\"name\\\":"
		  "\\\"torch-gh200\\\"}}'}"
		  "}",
		  -EINVAL, "not the TrainingRuntime torch-gh200" },
		{ "a namespaced runtime's", JOB_WITH("{'name':'mine','kind':'TrainingRuntime'}"),
		  "{'metadata':{'name':'vit-runtime-snapshot','namespace':'team-a',"
		  "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'data':{'runtime':"
		  "'{\\\"kind\\\":\\\"TrainingRuntime\\\",\\\"metadata\\\":{\\\"name\\\":"
		  "\\\"mine\\\","
		  "\\\"namespace\\\":\\\"team-a\\\"}}'}}",
		  1, NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tj_trainjob *job = job_of(rows[i].job);
		struct tj_runtime_snapshot *s = NULL;
		const struct tj_runtime *picked = NULL;
		struct tj_problem why = { "", "" };
		cJSON *cm = rows[i].config_map ? jlit(rows[i].config_map) : NULL;

		print_message("# case: %s\n", rows[i].what);
		if (cm)
			s = read_back(cm);
		assert_int_equal(tj_runtime_snapshot_pick(job, s, &picked, &why), rows[i].want);
		if (rows[i].want > 0)
			assert_ptr_equal(picked, s->runtime);
		else
			assert_null(picked);
		if (rows[i].want < 0) {
			assert_string_equal(why.reason, "InvalidRuntimeSnapshot");
			assert_non_null(strstr(why.message, "vit-runtime-snapshot"));
			if (!strstr(why.message, rows[i].message))
				fail_msg("%s: %s", rows[i].what, why.message);
		}
		tj_runtime_snapshot_free(s);
		cJSON_Delete(cm);
		tj_trainjob_free(job);
	}
}

static void test_a_config_map_without_a_name_is_not_projected(void **state)
{
	struct tj_runtime_snapshot *s = NULL;
	cJSON *cm = jlit("{'metadata':{'namespace':'team-a'},'data':{'runtime':'{}'}}");

	assert_int_equal(tj_runtime_snapshot_from_json(cm, &s), -EINVAL);
	assert_null(s);
	cJSON_Delete(cm);
}

/* A runtime whose copy would not fit a ConfigMap keeps none, and no snapshot is made: its
 * jobs run on the live runtime. */
static void test_a_runtime_too_large_to_copy_keeps_none(void **state)
{
	cJSON *obj = jlit(TORCH);
	size_t n = TJ_RUNTIME_SNAPSHOT_MAX + 1;
	char *big = malloc(n + 1);
	struct tj_trainjob *job = job_of(JOB);
	struct tj_runtime *rt;
	cJSON *cm = NULL;

	memset(big, 'x', n);
	big[n] = '\0';
	tj_json_set_string(tj_json_object(tj_json_object(obj, "metadata"), "annotations"), "big",
	                   big);
	assert_int_equal(tj_runtime_from_json(obj, &rt), 0);
	assert_null(rt->snapshot);
	assert_int_equal(tj_runtime_snapshot_config_map(job, rt, &cm), -EINVAL);
	assert_null(cm);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
	cJSON_Delete(obj);
	free(big);
}

/* ---- the plans that make a snapshot ---- */

/* The snapshots the plan makes; the last one's action in *ret. */
static size_t snapshots_in(const struct tj_plan *plan, const struct tj_action **ret)
{
	size_t n = 0;

	for (size_t i = 0; i < plan->n_actions; i++)
		if (plan->actions[i].kind == TJ_ACTION_CREATE_OBJECT &&
		    strcmp(plan->actions[i].name, "vit-runtime-snapshot") == 0) {
			*ret = &plan->actions[i];
			n++;
		}
	return n;
}

/* The stage of the plan's status patch, -1 without one. */
static int status_stage(const struct tj_plan *plan)
{
	for (size_t i = 0; i < plan->n_actions; i++)
		if (plan->actions[i].kind == TJ_ACTION_PATCH_STATUS)
			return plan->actions[i].stage;
	return -1;
}

static size_t pod_creates_in(const struct tj_plan *plan)
{
	size_t n = 0;

	for (size_t i = 0; i < plan->n_actions; i++)
		n += plan->actions[i].kind == TJ_ACTION_CREATE_POD;
	return n;
}

/* The plan that creates the pods makes the snapshot, and so does the plan that records the
 * first start (the one that created the pods was superseded before its bookkeeping went):
 * a first start's goes with the status patch, deferrable, after the pods. */
static void test_the_plan_that_creates_pods_makes_the_snapshot(void **state)
{
	static const struct {
		const char *what;
		enum tj_snapshot_state snapshot;
		bool running;  /* the job's two pods exist */
		bool recorded; /* and its status records their start */
		size_t want;
	} rows[] = {
		{ "the first pods, no snapshot yet", TJ_SNAPSHOT_MISSING, false, false, 1 },
		{ "the first pods, the snapshot used", TJ_SNAPSHOT_USED, false, false, 0 },
		{ "the first pods of an offline plan", TJ_SNAPSHOT_OFF, false, false, 0 },
		{ "running, the start not recorded yet", TJ_SNAPSHOT_MISSING, true, false, 1 },
		{ "running, the start recorded", TJ_SNAPSHOT_MISSING, true, true, 0 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tj_runtime *rt = runtime_of(TORCH);
		struct tj_trainjob *job = job_of(JOB);
		struct tj_pod pods[2];
		const struct tj_pod *ptrs[2] = { &pods[0], &pods[1] };
		struct tj_plan *plan = NULL;
		const struct tj_action *a = NULL;

		print_message("# case: %s\n", rows[i].what);
		if (rows[i].recorded)
			job->status.start_time = NOW - 60;
		/* Without its GPU class, the plan needs no config to place the pods. */
		free(rt->gpu_class);
		rt->gpu_class = NULL;
		for (int r = 0; r < 2; r++)
			pods[r] =
			        (struct tj_pod){ .namespace = "team-a",
				                 .name = r ? "vit-node-0-1-a0" : "vit-node-0-0-a0",
				                 .uid = r ? "p1" : "p0",
				                 .owner_uid = "uid-vit",
				                 .trainjob = "vit",
				                 .rank = r,
				                 .node_name = "gh200-0",
				                 .phase = TJ_POD_RUNNING,
				                 .creation_time = NOW - 60,
				                 .start_time = NOW - 50 };
		assert_int_equal(
		        tj_plan_trainjob(&(struct tj_plan_input){ .job = job,
		                                                  .runtime = rt,
		                                                  .snapshot = rows[i].snapshot,
		                                                  .pods = ptrs,
		                                                  .n_pods = rows[i].running ? 2 : 0,
		                                                  .now = NOW },
		                         &plan),
		        0);
		assert_int_equal(pod_creates_in(plan), rows[i].running ? 0 : 2);
		assert_int_equal(snapshots_in(plan, &a), rows[i].want);
		if (a) {
			assert_true(a->deferrable);
			assert_int_equal(a->stage, status_stage(plan));
			assert_true(a->stage > 0 || rows[i].running);
		}
		tj_plan_free(plan);
		tj_trainjob_free(job);
		tj_runtime_free(rt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_copy_keeps_who_the_runtime_is_and_its_spec),
		cmocka_unit_test(test_the_config_map_is_the_jobs_and_reads_back_as_the_runtime),
		cmocka_unit_test(test_which_runtime_a_job_runs_on),
		cmocka_unit_test(test_a_config_map_without_a_name_is_not_projected),
		cmocka_unit_test(test_a_runtime_too_large_to_copy_keeps_none),
		cmocka_unit_test(test_the_plan_that_creates_pods_makes_the_snapshot),
	};
	return cmocka_run_group_tests_name("runtime_snapshot", tests, NULL, NULL);
}
