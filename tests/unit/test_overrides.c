#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/json.h"
#include "reconcilers/render/overrides.h"
#include "reconcilers/render/render_step.h"

/* A runtime of four steps, as Kubeflow's multi-step examples have them: two initializers (the
 * dataset one with an init container), the trainer and a launcher. */
#define MULTI_RUNTIME                                                                              \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'multi'},'spec':{'template':{'spec':" \
	"{"                                                                                        \
	"'replicatedJobs':["                                                                       \
	"{'name':'dataset-initializer','template':{'metadata':{'labels':{'trainer.kubeflow.org/"   \
	"trainjob-ancestor-step':'dataset-initializer'}},'spec':{'template':{'spec':{"             \
	"'initContainers':[{'name':'prepare','image':'p'}],"                                       \
	"'containers':[{'name':'dataset-initializer','image':'d'}]}}}}},"                          \
	"{'name':'model-initializer','template':{'metadata':{'labels':{'trainer.kubeflow.org/"     \
	"trainjob-ancestor-step':'model-initializer'}},'spec':{'template':{'spec':{"               \
	"'containers':[{'name':'model-initializer','image':'m'}]}}}}},"                            \
	"{'name':'node','dependsOn':[{'name':'dataset-initializer','status':'Complete'}],"         \
	"'template':{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':"         \
	"'trainer'}},'spec':{'template':{'spec':{'containers':[{'name':'node','image':'t'}]}}}}}," \
	"{'name':'launcher','template':{'spec':{'template':{'spec':{'containers':[{'name':"        \
	"'launcher','image':'l'}]}}}}}]}}}}"

/* A v2.1 override of the dataset initializer: its labels, node selector, a volume mounted
 * in its container, and env for its init container (the initializer container's own env is
 * spec.initializer's). */
#define DATASET_OVERRIDE                                                                           \
	"{'runtimeRef':{'name':'multi'},'podTemplateOverrides':[{'targetJobs':[{'name':"           \
	"'dataset-initializer'}],'metadata':{'labels':{'team':'data'}},'spec':{'nodeSelector':{"   \
	"'pool':'cpu'},'volumes':[{'name':'cache','emptyDir':{}}],'initContainers':[{'name':"      \
	"'prepare','env':[{'name':'TOKEN','value':'x'}]}],'containers':[{'name':"                  \
	"'dataset-initializer','volumeMounts':[{'name':'cache','mountPath':'/cache'}]}]}}]}"

/* A v2.0 override naming two steps. */
#define TWO_STEP_OVERRIDE                                                                          \
	"{'runtimeRef':{'name':'multi'},'podSpecOverrides':[{'targetJobs':[{'name':"               \
	"'model-initializer'},{'name':'launcher'}],'serviceAccountName':'loader'}]}"

/* runtimePatches of the launcher, from two managers, the later winning. */
#define LAUNCHER_PATCH                                                                             \
	"{'runtimeRef':{'name':'multi'},'runtimePatches':[{'manager':'a','trainingRuntimeSpec':{"  \
	"'template':{'spec':{'replicatedJobs':[{'name':'launcher','template':{'spec':{'template':" \
	"{"                                                                                        \
	"'metadata':{'annotations':{'note':'a'}},'spec':{'serviceAccountName':'a',"                \
	"'tolerations':[{'key':'spot','operator':'Exists'}]}}}}}]}}}},{'manager':'b',"             \
	"'trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':'launcher',"         \
	"'template':{'spec':{'template':{'spec':{'serviceAccountName':'b'}}}}}]}}}}]}"

static struct tj_runtime *multi_runtime(void)
{
	cJSON *j = jlit(MULTI_RUNTIME);
	struct tj_runtime *rt = NULL;

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	return rt;
}

struct apply_case {
	const char *name;
	const char *spec; /* the TrainJob's spec */
	const char *step;
	const char *path;         /* of the step's pod template after the overrides */
	const char *want;         /* JSON at path; NULL: absent */
	const char *want_message; /* InvalidSpec, instead of want */
};

static const struct apply_case apply_cases[] = {
	{ "an override of the dataset initializer reaches its template", DATASET_OVERRIDE,
	  "dataset-initializer", "spec",
	  "{'initContainers':[{'name':'prepare','image':'p','env':[{'name':'TOKEN','value':'x'}]}],"
	  "'containers':[{'name':'dataset-initializer','image':'d','volumeMounts':[{'name':"
	  "'cache','mountPath':'/cache'}]}],'nodeSelector':{'pool':'cpu'},'volumes':[{'name':"
	  "'cache','emptyDir':{}}]}",
	  NULL },
	{ "and its labels", DATASET_OVERRIDE, "dataset-initializer", "metadata.labels",
	  "{'trainer.kubeflow.org/trainjob-ancestor-step':'dataset-initializer','team':'data'}",
	  NULL },
	{ "but not the trainer's", DATASET_OVERRIDE, "node", "spec.nodeSelector", NULL, NULL },
	{ "nor the model initializer's", DATASET_OVERRIDE, "model-initializer", "spec.volumes",
	  NULL, NULL },
	{ "a v2.0 override reaches each step it names: the model initializer", TWO_STEP_OVERRIDE,
	  "model-initializer", "spec.serviceAccountName", "'loader'", NULL },
	{ "and the launcher", TWO_STEP_OVERRIDE, "launcher", "spec.serviceAccountName", "'loader'",
	  NULL },
	{ "but no other", TWO_STEP_OVERRIDE, "dataset-initializer", "spec.serviceAccountName", NULL,
	  NULL },
	{ "runtime patches of the launcher, in order", LAUNCHER_PATCH, "launcher", "spec",
	  "{'containers':[{'name':'launcher','image':'l'}],'serviceAccountName':'b',"
	  "'tolerations':[{'key':'spot','operator':'Exists'}]}",
	  NULL },
	{ "with the pod template's metadata", LAUNCHER_PATCH, "launcher", "metadata.annotations",
	  "{'note':'a'}", NULL },
	{ "not on the trainer", LAUNCHER_PATCH, "node", "spec.serviceAccountName", NULL, NULL },
	{ "a runtime patch's grace period (Kubeflow v2.3)",
	  "{'runtimeRef':{'name':'multi'},'runtimePatches':[{'manager':'m','trainingRuntimeSpec':"
	  "{'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'template':"
	  "{'spec':{'terminationGracePeriodSeconds':7}}}}}]}}}}]}",
	  "node", "spec.terminationGracePeriodSeconds", "7", NULL },
	{ "env of the dataset initializer's container is spec.initializer's",
	  "{'runtimeRef':{'name':'multi'},'podTemplateOverrides':[{'targetJobs':[{'name':"
	  "'dataset-initializer'}],'spec':{'containers':[{'name':'dataset-initializer','env':[{"
	  "'name':'A','value':'1'}]}]}}]}",
	  "dataset-initializer", NULL, NULL,
	  "spec.podTemplateOverrides[0].spec.containers[0].env: the env of container "
	  "dataset-initializer is set through spec.initializer.dataset.env, not through "
	  "overrides" },
	{ "env of the model initializer's container too",
	  "{'runtimeRef':{'name':'multi'},'runtimePatches':[{'manager':'m','trainingRuntimeSpec':"
	  "{'template':{'spec':{'replicatedJobs':[{'name':'model-initializer','template':{'spec':"
	  "{'template':{'spec':{'containers':[{'name':'model-initializer','env':[{'name':'A',"
	  "'value':'1'}]}]}}}}}]}}}}]}",
	  "model-initializer", NULL, NULL,
	  "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template."
	  "spec.template.spec.containers[0].env: the env of container model-initializer is set "
	  "through spec.initializer.model.env, not through overrides" },
	{ "a container the step does not have",
	  "{'runtimeRef':{'name':'multi'},'podSpecOverrides':[{'targetJobs':[{'name':'launcher'}]"
	  ",'initContainers':[{'name':'node'}]}]}",
	  "launcher", NULL, NULL,
	  "spec.podSpecOverrides[0].initContainers[0]: the runtime's launcher pod has no init "
	  "container named 'node'" },
};

static void test_apply_table(void **state)
{
	struct tj_runtime *rt = multi_runtime();

	(void)state;
	for (size_t i = 0; i < sizeof(apply_cases) / sizeof(apply_cases[0]); i++) {
		const struct apply_case *c = &apply_cases[i];
		struct tj_trainjob *job = make_job(c->spec);
		size_t s = tj_step_graph_find(&rt->graph, c->step);
		struct tj_problem why = { "", "" };
		cJSON *tmpl;
		int r;

		print_message("# case: %s\n", c->name);
		assert_true(s < rt->graph.n);
		assert_int_equal(tj_json_parse(rt->graph.steps[s].pod_template, &tmpl), 0);
		r = tj_overrides_apply(tmpl, job, c->step, &why);
		if (c->want_message) {
			assert_int_equal(r, -EINVAL);
			assert_string_equal(why.reason, "InvalidSpec");
			assert_string_equal(why.message, c->want_message);
		} else if (c->want) {
			assert_int_equal(r, 0);
			assert_json_equal(tj_json_path(tmpl, c->path), c->want);
		} else {
			assert_int_equal(r, 0);
			assert_null(tj_json_path(tmpl, c->path));
		}
		cJSON_Delete(tmpl);
		tj_trainjob_free(job);
	}
	tj_runtime_free(rt);
}

#define MULTI_JOBS "(its replicated jobs: dataset-initializer, model-initializer, node, launcher)"

struct check_case {
	const char *name;
	const char *spec;
	const char *want_message; /* NULL: accepted */
};

static const struct check_case check_cases[] = {
	{ "every target is a step of the runtime",
	  "{'runtimeRef':{'name':'multi'},'podSpecOverrides':[{'targetJobs':[{'name':'node'},{"
	  "'name':'launcher'}]}],'podTemplateOverrides':[{'targetJobs':[{'name':"
	  "'model-initializer'}]}],'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{"
	  "'template':{'spec':{'replicatedJobs':[{'name':'dataset-initializer'}]}}}}]}",
	  NULL },
	{ "a v2.1 target the runtime lacks",
	  "{'runtimeRef':{'name':'multi'},'podTemplateOverrides':[{'targetJobs':[{'name':'node'}]"
	  "},{'targetJobs':[{'name':'launcher'},{'name':'trainer'}]}]}",
	  "spec.podTemplateOverrides[1].targetJobs[1].name: ClusterTrainingRuntime multi has no "
	  "replicated job 'trainer' " MULTI_JOBS "; an override or patch must name one of them" },
	{ "a v2.0 target the runtime lacks",
	  "{'runtimeRef':{'name':'multi'},'podSpecOverrides':[{'targetJobs':[{'name':'worker'}]}]}",
	  "spec.podSpecOverrides[0].targetJobs[0].name: ClusterTrainingRuntime multi has no "
	  "replicated job 'worker' " MULTI_JOBS "; an override or patch must name one of them" },
	{ "a runtime patch of a job the runtime lacks",
	  "{'runtimeRef':{'name':'multi'},'runtimePatches':[{'manager':'m'},{'manager':'k',"
	  "'trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':'node'},{'name':"
	  "'workers','template':{'spec':{'template':{'spec':{'nodeSelector':{'a':'b'}}}}}}]}}}}]}",
	  "spec.runtimePatches[1].trainingRuntimeSpec.template.spec.replicatedJobs[1].name: "
	  "ClusterTrainingRuntime multi has no replicated job 'workers' " MULTI_JOBS
	  "; an override or patch must name one of them" },
	/* The launcher's pods come only once the nodes are Ready: its override is checked
	 * before any pod exists all the same. */
	{ "an override a later step cannot take",
	  "{'runtimeRef':{'name':'multi'},'podTemplateOverrides':[{'targetJobs':[{'name':"
	  "'launcher'}],'spec':{'containers':[{'name':'node','volumeMounts':[{'name':'v',"
	  "'mountPath':'/v'}]}]}}]}",
	  "spec.podTemplateOverrides[0].spec.containers[0]: the runtime's launcher pod has no "
	  "container named 'node'" },
};

static void test_check_table(void **state)
{
	struct tj_runtime *rt = multi_runtime();

	(void)state;
	for (size_t i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		const struct check_case *c = &check_cases[i];
		struct tj_trainjob *job = make_job(c->spec);
		struct tj_problem why = { "", "" };

		print_message("# case: %s\n", c->name);
		if (!c->want_message) {
			assert_int_equal(tj_overrides_check(job, rt, &why), 0);
		} else {
			assert_int_equal(tj_overrides_check(job, rt, &why), -EINVAL);
			assert_string_equal(why.reason, "InvalidSpec");
			assert_string_equal(why.message, c->want_message);
		}
		tj_trainjob_free(job);
	}
	tj_runtime_free(rt);
}

/* spec.initializer.dataset and .model need the step that takes them: without it they are
 * refused, never dropped. */
static void test_initializer_needs_its_step(void **state)
{
	struct tj_runtime *multi = multi_runtime(), *plain = NULL;
	cJSON *j = jlit("{'kind':'ClusterTrainingRuntime','metadata':{'name':'plain'},'spec':{"
	                "'template':{'spec':{'replicatedJobs':[{'name':'node','template':{"
	                "'spec':{'template':{'spec':{'containers':[{'name':'node','image':'t'}]"
	                "}}}}}]}}}}");
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'multi'},'initializer':{"
	                                   "'dataset':{'storageUri':'hf://a/b'},'model':{"
	                                   "'storageUri':'hf://c/d'}}}");
	struct tj_problem why = { "", "" };

	(void)state;
	assert_int_equal(tj_runtime_from_json(j, &plain), 0);
	assert_int_equal(tj_overrides_check(job, multi, &why), 0);
	assert_int_equal(tj_overrides_check(job, plain, &why), -EINVAL);
	assert_string_equal(why.reason, "InvalidSpec");
	assert_string_equal(
	        why.message,
	        "spec.initializer.dataset: the runtime has no dataset-initializer step "
	        "(a replicated job labelled trainer.kubeflow.org/trainjob-ancestor-step"
	        ": dataset-initializer with a container dataset-initializer) to give it "
	        "to; remove it or choose a runtime that has one");
	tj_trainjob_free(job);
	job = make_job("{'runtimeRef':{'name':'plain'},'initializer':{'model':{'storageUri':"
	               "'hf://c/d'}}}");
	assert_int_equal(tj_overrides_check(job, plain, &why), -EINVAL);
	assert_string_equal(why.message,
	                    "spec.initializer.model: the runtime has no model-initializer step "
	                    "(a replicated job labelled trainer.kubeflow.org/trainjob-ancestor-step"
	                    ": model-initializer with a container model-initializer) to give it "
	                    "to; remove it or choose a runtime that has one");
	tj_trainjob_free(job);
	tj_runtime_free(plain);
	tj_runtime_free(multi);
	cJSON_Delete(j);
}

/* The dataset initializer's pod carries the override, and the fields the controller owns
 * win over it: the JobSet's labels, as JobSet sets them on its pods. */
static void test_step_pod_takes_override(void **state)
{
	struct tj_runtime *rt = multi_runtime();
	struct tj_trainjob *job = make_job(
	        "{'runtimeRef':{'name':'multi'},'podTemplateOverrides':[{'targetJobs':[{'name':"
	        "'dataset-initializer'}],'metadata':{'labels':{'jobset.sigs.k8s.io/"
	        "replicatedjob-name':'other','team':'data'}},'spec':{'nodeSelector':{'pool':'cpu'"
	        "}}}]}");
	size_t s = tj_step_graph_find(&rt->graph, "dataset-initializer");
	struct tj_problem why = { "", "" };
	cJSON *pod = NULL;

	(void)state;
	assert_int_equal(tj_render_step_pod(job, &rt->graph.steps[s], 0, 0, &pod, &why), 0);
	assert_json_equal(tj_json_path(pod, "spec.nodeSelector"), "{'pool':'cpu'}");
	assert_string_equal(tj_json_string(pod, "metadata.labels.team"), "data");
	assert_json_equal(cJSON_GetObjectItemCaseSensitive(tj_json_path(pod, "metadata.labels"),
	                                                   "jobset.sigs.k8s.io/replicatedjob-name"),
	                  "'dataset-initializer'");
	cJSON_Delete(pod);
	tj_trainjob_free(job);
	tj_runtime_free(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply_table),
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_initializer_needs_its_step),
		cmocka_unit_test(test_step_pod_takes_override),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
