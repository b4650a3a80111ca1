#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/runtime_support.h"

/* A runtime whose spec is {<spec>, template: {spec: {replicatedJobs: [node], <jobset>}}}. */
#define RT(spec, jobset)                                                                           \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{" spec                   \
	"'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{"    \
	"'spec':{'containers':[{'name':'node','image':'x'}]}}}}}]" jobset "}}}}"

/* A torch runtime whose node pods have a sidecar metrics and an init container preflight,
 * after a dataset-initializer job, with envInjection targets <targets>. */
#define RT_INJECT(targets)                                                                         \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{'mlPolicy':{'torch':{"   \
	"'envInjection':{'targets':[" targets                                                      \
	"]}}},'template':{'spec':{'replicatedJobs':[{'name':"                                      \
	"'dataset-initializer','template':{'spec':{'template':{'spec':{'containers':[{'name':"     \
	"'dataset-initializer','image':'d'}]}}}}},{'name':'node','template':{'spec':{'template':{" \
	"'spec':{'initContainers':[{'name':'preflight','image':'p'}],'containers':[{'name':"       \
	"'node','image':'x'},{'name':'metrics','image':'m'}]}}}}}]}}}}"

#define INJECT(rest) "spec.mlPolicy.torch.envInjection.targets" rest

struct support_case {
	const char *name;
	const char *runtime;
	const char *want_message; /* NULL: supported */
	int want_budget;
};

#define BECAUSE(field, why)                                                                        \
	field " is not supported by this controller: " why                                         \
	      "; remove it from the runtime (crds/README.md lists what is supported)"

static const struct support_case cases[] = {
	{ "Kubeflow's torch-distributed", RT("'mlPolicy':{'numNodes':1,'torch':{}},", ""), NULL,
	  -1 },
	{ "the step graph's fields and MPI are accepted",
	  RT("'mlPolicy':{'numNodes':1,'mpi':{'mpiImplementation':'OpenMPI'}},",
	     ",'successPolicy':{'operator':'All','targetReplicatedJobs':['launcher']},"
	     "'startupPolicy':{'startupPolicyOrder':'InOrder'},'volumeClaimPolicies':[],"
	     "'network':{'publishNotReadyAddresses':true,'enableDNSHostnames':true},"
	     "'suspend':false,'ttlSecondsAfterFinished':60"),
	  NULL, -1 },
	{ "podGroupPolicy coscheduling",
	  RT("'podGroupPolicy':{'coscheduling':{'scheduleTimeoutSeconds':60}},", ""),
	  BECAUSE("spec.podGroupPolicy.coscheduling",
	          "the controller's own admission creates a job's pods only when all of them "
	          "fit, without another scheduler's PodGroups"),
	  -1 },
	{ "podGroupPolicy volcano", RT("'podGroupPolicy':{'volcano':{}},", ""),
	  BECAUSE("spec.podGroupPolicy.volcano",
	          "the controller's own admission creates a job's pods only when all of them "
	          "fit, without another scheduler's PodGroups"),
	  -1 },
	{ "mlPolicy jax", RT("'mlPolicy':{'numNodes':2,'jax':{}},", ""),
	  BECAUSE("spec.mlPolicy.jax", "only the torch and mpi policies are implemented; their "
	                               "environment wiring is what this controller reproduces"),
	  -1 },
	{ "mlPolicy xgboost", RT("'mlPolicy':{'xgboost':{}},", ""),
	  BECAUSE("spec.mlPolicy.xgboost", "only the torch and mpi policies are implemented; their "
	                                   "environment wiring is what this controller reproduces"),
	  -1 },
	{ "a torch elasticPolicy",
	  RT("'mlPolicy':{'numNodes':2,'torch':{'numProcPerNode':'auto','elasticPolicy':{"
	     "'maxNodes':4}}},",
	     ""),
	  BECAUSE("spec.mlPolicy.torch.elasticPolicy",
	          "of the torch policy only numProcPerNode and envInjection are implemented "
	          "(torchrun's static rendezvous, no elastic range of nodes)"),
	  -1 },
	{ "envInjection of a sidecar, an init container and another job's container",
	  RT_INJECT("{'jobName':'node','containerNames':['metrics','preflight']},{'jobName':"
	            "'dataset-initializer','containerNames':['dataset-initializer']}"),
	  NULL, -1 },
	{ "envInjection naming node",
	  RT_INJECT("{'jobName':'node','containerNames':['metrics','node']}"),
	  INJECT("[0].containerNames[1]: node has the PET_* variables anyway; name other "
	         "containers"),
	  -1 },
	{ "envInjection of a container the job lacks",
	  RT_INJECT("{'jobName':'dataset-initializer','containerNames':['metrics']}"),
	  INJECT("[0].containerNames[0]: not a container or init container of that replicated "
	         "job"),
	  -1 },
	{ "envInjection of a job the runtime lacks",
	  RT_INJECT("{'jobName':'launcher','containerNames':['launcher']}"),
	  INJECT("[0].containerNames[0]: not a container or init container of that replicated "
	         "job"),
	  -1 },
	{ "envInjection naming a job twice",
	  RT_INJECT("{'jobName':'node','containerNames':['metrics']},{'jobName':'node',"
	            "'containerNames':['preflight']}"),
	  INJECT("[1]: jobName names a replicated job, each in one target only"), -1 },
	{ "envInjection with no container", RT_INJECT("{'jobName':'node','containerNames':[]}"),
	  INJECT("[0]: containerNames lists 1 to 8 containers"), -1 },
	{ "envInjection with a field of its own",
	  "{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{'mlPolicy':{'torch':{"
	  "'envInjection':{'targets':[],'all':true}}},'template':{'spec':{'replicatedJobs':[{"
	  "'name':'node','template':{'spec':{'template':{'spec':{'containers':[{'name':'node',"
	  "'image':'x'}]}}}}}]}}}}",
	  BECAUSE("spec.mlPolicy.torch.envInjection.all",
	          "of envInjection only targets is implemented"),
	  -1 },
	{ "a coordinator", RT("", ",'coordinator':{'replicatedJob':'node'}"),
	  BECAUSE("spec.template.spec.coordinator", "the field is not implemented"), -1 },
	{ "a JobSet managedBy", RT("", ",'managedBy':'x'"),
	  BECAUSE("spec.template.spec.managedBy", "the field is not implemented"), -1 },
	{ "a network subdomain", RT("", ",'network':{'subdomain':'s'}"),
	  BECAUSE("spec.template.spec.network.subdomain",
	          "the pods' subdomain is the TrainJob's name, as their DNS names "
	          "(PET_MASTER_ADDR) say"),
	  -1 },
	{ "publishNotReadyAddresses false", RT("", ",'network':{'publishNotReadyAddresses':false}"),
	  BECAUSE("spec.template.spec.network.publishNotReadyAddresses: false",
	          "the pods always get DNS names through a headless Service that publishes "
	          "them before they are ready"),
	  -1 },
	{ "failurePolicy maxRestarts 0", RT("", ",'failurePolicy':{'maxRestarts':0}"), NULL, 0 },
	{ "failurePolicy maxRestarts 5 BlockingRecreate",
	  RT("", ",'failurePolicy':{'maxRestarts':5,'restartStrategy':'BlockingRecreate'}"), NULL,
	  5 },
	{ "failurePolicy without maxRestarts: JobSet's 0",
	  RT("", ",'failurePolicy':{'restartStrategy':'Recreate'}"), NULL, 0 },
	{ "a first rule FailJobSet for every failure",
	  RT("", ",'failurePolicy':{'maxRestarts':5,'rules':[{'name':'a','action':'FailJobSet'},"
	         "{'name':'b','action':'RestartJobSet'}]}"),
	  NULL, 0 },
	{ "a first rule RestartJobSet for every failure",
	  RT("", ",'failurePolicy':{'maxRestarts':2,'rules':[{'name':'a','action':'"
	         "RestartJobSet'}]}"),
	  NULL, 2 },
	{ "a rule on a Job's failure reasons",
	  RT("", ",'failurePolicy':{'maxRestarts':2,'rules':[{'name':'a','action':'FailJobSet',"
	         "'onJobFailureReasons':['PodFailurePolicy']}]}"),
	  BECAUSE("spec.template.spec.failurePolicy.rules[0]",
	          "its onJobFailureReasons and onJobFailureMessagePatterns match the failures "
	          "of Jobs, and there are no Jobs here"),
	  2 },
	{ "a rule for some replicated jobs",
	  RT("", ",'failurePolicy':{'rules':[{'name':'a','action':'FailJobSet',"
	         "'targetReplicatedJobs':['launcher']}]}"),
	  BECAUSE("spec.template.spec.failurePolicy.rules[0]",
	          "a rule limited to targetReplicatedJobs; a rule here applies to every step"),
	  0 },
	{ "RestartJobSetAndIgnoreMaxRestarts",
	  RT("", ",'failurePolicy':{'rules':[{'name':'a','action':'"
	         "RestartJobSetAndIgnoreMaxRestarts'}]}"),
	  BECAUSE("spec.template.spec.failurePolicy.rules[0]",
	          "only the actions FailJobSet and RestartJobSet are implemented"),
	  0 },
	{ "InPlaceRestart", RT("", ",'failurePolicy':{'restartStrategy':'InPlaceRestart'}"),
	  BECAUSE("spec.template.spec.failurePolicy.restartStrategy",
	          "a restart replaces every pod of the job (Recreate, BlockingRecreate)"),
	  0 },
	{ "a failurePolicy field unknown", RT("", ",'failurePolicy':{'x':1}"),
	  BECAUSE("spec.template.spec.failurePolicy.x", "the field is not implemented"), 0 },
	{ "a maxRestarts out of range", RT("", ",'failurePolicy':{'maxRestarts':5000}"), NULL, -1 },
};

static void test_support_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct support_case *c = &cases[i];
		cJSON *rt = jlit(c->runtime);
		struct tj_problem why = { "", "" };
		int r;

		print_message("# case: %s\n", c->name);
		r = tj_runtime_support_check(rt, &why);
		if (c->want_message) {
			assert_int_equal(r, -EOPNOTSUPP);
			assert_string_equal(why.reason, "UnsupportedRuntime");
			assert_string_equal(why.message, c->want_message);
		} else {
			assert_int_equal(r, 0);
		}
		assert_int_equal(tj_runtime_failure_budget(rt), c->want_budget);
		cJSON_Delete(rt);
	}
}

/* The projection keeps what the planner reads: the refusal, prefixed with the runtime, the
 * budget and the runtime's walltime. */
static void test_projection(void **state)
{
	cJSON *j = jlit(RT("'activeDeadlineSeconds':600,'podGroupPolicy':{'volcano':{}},",
	                   ",'failurePolicy':{'maxRestarts':0}"));
	struct tj_runtime *rt = NULL;

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	assert_string_equal(rt->unsupported,
	                    "ClusterTrainingRuntime r: " BECAUSE(
	                            "spec.podGroupPolicy.volcano",
	                            "the controller's own admission creates a job's pods only "
	                            "when all of them fit, without another scheduler's "
	                            "PodGroups"));
	assert_int_equal(rt->failure_budget, 0);
	assert_int_equal(rt->active_deadline_seconds, 600);
	assert_null(rt->template_metadata);
	tj_runtime_free(rt);
	cJSON_Delete(j);

	j = jlit("{'kind':'TrainingRuntime','metadata':{'name':'r','namespace':'a'},'spec':{"
	         "'template':{'metadata':{'labels':{'team':'ml'}},'spec':{'replicatedJobs':[{"
	         "'name':'node','template':{'spec':{'activeDeadlineSeconds':300,'template':{"
	         "'spec':{'containers':[{'name':'node','image':'x'}]}}}}}]}}}}");
	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	assert_null(rt->unsupported);
	assert_int_equal(rt->failure_budget, -1);
	assert_int_equal(rt->active_deadline_seconds, 300);
	assert_string_equal(rt->template_metadata, "{\"labels\":{\"team\":\"ml\"}}");
	tj_runtime_free(rt);
	cJSON_Delete(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_support_table),
		cmocka_unit_test(test_projection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
