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

/* A runtime whose node step's replicated job has <rjob> beside its name and template, and
 * whose Job spec has <job> beside its pod template; a step prepare before it has <prep> in
 * its Job spec. */
#define RT_JOBS(rjob, job, prep)                                                                   \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{'template':{'spec':{"    \
	"'replicatedJobs':[{'name':'prepare','template':{'spec':{" prep "'template':{'spec':{"     \
	"'containers':[{'name':'p','image':'p'}]}}}}},{'name':'node'," rjob "'template':{"         \
	"'metadata':{'annotations':{'a':'b'}},'spec':{" job "'template':{'spec':{'containers':[{"  \
	"'name':'node','image':'x'}]}}}}}]}}}}"

#define NODE_JOB(field) "spec.template.spec.replicatedJobs[1].template.spec." field
#define PREP_JOB(field) "spec.template.spec.replicatedJobs[0].template.spec." field
#define NO_RETRY                                                                                   \
	"a step's failed pod is not retried by itself: it fails the step, and the JobSet "         \
	"failurePolicy decides"
#define CLAIMS(policy)                                                                             \
	RT("",                                                                                     \
	   ",'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'c'},'spec':{}}]," policy    \
	   "}]")

/* RT_INJECT's node step, of two containers and an init container, with a podFailurePolicy. */
#define RT_INJECT_PFP                                                                              \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{'template':{'spec':{"    \
	"'replicatedJobs':[{'name':'prepare','template':{'spec':{'template':{'spec':{"             \
	"'containers':[{'name':'p','image':'p'}]}}}}},{'name':'node','template':{'spec':{"         \
	"'podFailurePolicy':{'rules':[]},'template':{'spec':{'containers':[{'name':'node',"        \
	"'image':'x'},{'name':'metrics','image':'m'}]}}}}}]}}}}"

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
	{ "Kubeflow's jax-distributed", RT("'mlPolicy':{'numNodes':1,'jax':{}},", ""), NULL, -1 },
	{ "Kubeflow's xgboost-distributed", RT("'mlPolicy':{'numNodes':1,'xgboost':{}},", ""), NULL,
	  -1 },
	{ "a field in jax", RT("'mlPolicy':{'numNodes':2,'jax':{'coordinatorPort':1234}},", ""),
	  BECAUSE("spec.mlPolicy.jax.coordinatorPort",
	          "Kubeflow's policy has no fields; its wiring is derived from the nodes and "
	          "their GPUs"),
	  -1 },
	{ "a field in xgboost", RT("'mlPolicy':{'xgboost':{'numWorkers':3}},", ""),
	  BECAUSE("spec.mlPolicy.xgboost.numWorkers",
	          "Kubeflow's policy has no fields; its wiring is derived from the nodes and "
	          "their GPUs"),
	  -1 },
	{ "Kubeflow's flux-distributed", RT("'mlPolicy':{'numNodes':1,'flux':{}},", ""),
	  "spec.mlPolicy.flux is not supported by this controller: it does not build Flux's "
	  "broker (the flux-installer init container, the ConfigMap <job>-flux-entrypoint that "
	  "wraps the command in flux run, the CURVE certificate Secret <job>-flux-curve); run "
	  "the program with mpirun on an MPI runtime (spec.mlPolicy.mpi, as Kubeflow's "
	  "deepspeed-distributed) instead (crds/README.md lists what is supported)",
	  -1 },
	{ "an mlPolicy source unknown", RT("'mlPolicy':{'paddle':{}},", ""),
	  BECAUSE("spec.mlPolicy.paddle",
	          "only the torch, mpi, jax and xgboost policies are implemented; their "
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
	{ "rules on the Job failure reasons of this controller and on replicated jobs",
	  RT("", ",'failurePolicy':{'maxRestarts':2,'rules':[{'name':'a','action':'FailJobSet',"
	         "'onJobFailureReasons':['PodFailurePolicy'],'targetReplicatedJobs':['node']},{"
	         "'name':'b','action':'RestartJobSet','onJobFailureReasons':["
	         "'BackoffLimitExceeded']}]}"),
	  NULL, 2 },
	{ "a rule on a Job failure reason that does not happen here",
	  RT("", ",'failurePolicy':{'maxRestarts':2,'rules':[{'name':'a','action':'FailJobSet',"
	         "'onJobFailureReasons':['PodFailurePolicy']},{'name':'b','action':'FailJobSet',"
	         "'onJobFailureReasons':['DeadlineExceeded']}]}"),
	  BECAUSE("spec.template.spec.failurePolicy.rules[1]",
	          "of onJobFailureReasons only PodFailurePolicy (a podFailurePolicy rule FailJob "
	          "matched) and BackoffLimitExceeded (any other failed pod) happen here"),
	  2 },
	{ "a rule on a Job's failure message",
	  RT("", ",'failurePolicy':{'rules':[{'name':'a','action':'FailJobSet',"
	         "'onJobFailureMessagePatterns':['.*OOM.*']}]}"),
	  BECAUSE("spec.template.spec.failurePolicy.rules[0]",
	          "its onJobFailureMessagePatterns match the messages of Jobs, and there are no "
	          "Jobs here"),
	  0 },
	{ "a rule for a replicated job the runtime lacks",
	  RT("", ",'failurePolicy':{'rules':[{'name':'a','action':'FailJobSet',"
	         "'targetReplicatedJobs':['launcher']}]}"),
	  BECAUSE("spec.template.spec.failurePolicy.rules[0]",
	          "its targetReplicatedJobs must name replicated jobs of the runtime"),
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
	{ "a maxRestarts out of range", RT("", ",'failurePolicy':{'maxRestarts':5000}"),
	  BECAUSE("spec.template.spec.failurePolicy.maxRestarts",
	          "a restart budget is a whole number from 0 to 1000 (the config's "
	          "failurePolicy.maxRestarts is never put in its place)"),
	  -1 },
	{ "the Job fields whose values are the controller's behaviour, groupName, annotations",
	  RT_JOBS("'groupName':'workers',",
	          "'parallelism':1,'completions':1,'backoffLimit':0,'completionMode':'Indexed',"
	          "'podReplacementPolicy':'Failed','activeDeadlineSeconds':600,",
	          "'backoffLimit':0,"),
	  NULL, -1 },
	{ "a backoffLimit other than 0", RT_JOBS("", "", "'backoffLimit':6,"),
	  PREP_JOB("backoffLimit") ": only 0 is supported by this controller: a step's failed "
	                           "pod is not retried by itself, it fails the step at once and "
	                           "the JobSet failurePolicy decides the restart (maxRestarts, or "
	                           "trainjob.flame.dev/max-restarts); set backoffLimit to 0 or "
	                           "remove it (crds/README.md lists what is supported)",
	  -1 },
	{ "completionMode NonIndexed", RT_JOBS("", "'completionMode':'NonIndexed',", ""),
	  NODE_JOB("completionMode") ": only Indexed is supported by this controller: every pod "
	                             "of a step has its completion index, as in JobSet's default "
	                             "Indexed Jobs; set it to Indexed or remove it (crds/README.md "
	                             "lists what is supported)",
	  -1 },
	{ "podReplacementPolicy TerminatingOrFailed",
	  RT_JOBS("", "", "'podReplacementPolicy':'TerminatingOrFailed',"),
	  PREP_JOB("podReplacementPolicy") ": only Failed is supported by this controller: a pod "
	                                   "is replaced once the pod it replaces is gone (Failed); "
	                                   "set it to Failed or remove it (crds/README.md lists "
	                                   "what is supported)",
	  -1 },
	{ "activeDeadlineSeconds of a step other than node",
	  RT_JOBS("", "", "'activeDeadlineSeconds':60,"),
	  BECAUSE(PREP_JOB("activeDeadlineSeconds"),
	          "the walltime is the node step's; a deadline of another step is not enforced"),
	  -1 },
	{ "backoffLimitPerIndex", RT_JOBS("", "'backoffLimitPerIndex':1,", ""),
	  BECAUSE(NODE_JOB("backoffLimitPerIndex"), NO_RETRY), -1 },
	{ "maxFailedIndexes", RT_JOBS("", "", "'maxFailedIndexes':1,"),
	  BECAUSE(PREP_JOB("maxFailedIndexes"), NO_RETRY), -1 },
	{ "podFailurePolicy rules FailJob and Count on exit codes",
	  RT_JOBS("",
	          "'podFailurePolicy':{'rules':[{'action':'FailJob','onExitCodes':{"
	          "'containerName':'node','operator':'In','values':[42]}},{'action':'Count',"
	          "'onExitCodes':{'operator':'NotIn','values':[0,1]}}]},",
	          ""),
	  NULL, -1 },
	{ "a podFailurePolicy rule Ignore",
	  RT_JOBS("", "",
	          "'podFailurePolicy':{'rules':[{'action':'Ignore','onExitCodes':{"
	          "'operator':'In','values':[3]}}]},"),
	  BECAUSE(PREP_JOB("podFailurePolicy.rules[0]"),
	          "only the actions FailJob and Count are implemented (a failed pod is not "
	          "replaced by itself, so Ignore and FailIndex have no meaning here)"),
	  -1 },
	{ "a podFailurePolicy rule on pod conditions",
	  RT_JOBS("",
	          "'podFailurePolicy':{'rules':[{'action':'FailJob','onPodConditions':[{"
	          "'type':'DisruptionTarget'}]}]},",
	          ""),
	  BECAUSE(NODE_JOB("podFailurePolicy.rules[0]"),
	          "onPodConditions are not read; a rule here matches onExitCodes"),
	  -1 },
	{ "a podFailurePolicy rule on another container",
	  RT_JOBS("",
	          "'podFailurePolicy':{'rules':[{'action':'FailJob','onExitCodes':{"
	          "'containerName':'sidecar','operator':'In','values':[3]}}]},",
	          ""),
	  BECAUSE(NODE_JOB("podFailurePolicy.rules[0]"),
	          "onExitCodes needs the operator In or NotIn, 1 to 255 values, and no "
	          "containerName but the pod's container"),
	  -1 },
	{ "a podFailurePolicy rule In 0",
	  RT_JOBS("",
	          "'podFailurePolicy':{'rules':[{'action':'FailJob','onExitCodes':{"
	          "'operator':'In','values':[0]}}]},",
	          ""),
	  BECAUSE(NODE_JOB("podFailurePolicy.rules[0]"),
	          "onExitCodes values are exit codes, 0 not with In"),
	  -1 },
	{ "a podFailurePolicy of a pod of two containers", RT_INJECT_PFP,
	  BECAUSE("spec.template.spec.replicatedJobs[1].template.spec.podFailurePolicy",
	          "its exit codes are matched here only for a step whose pod has one container "
	          "and no init container"),
	  -1 },
	{ "a podFailurePolicy field beside rules",
	  RT_JOBS("", "'podFailurePolicy':{'rules':[],'extra':1},", ""),
	  BECAUSE(NODE_JOB("podFailurePolicy.extra"),
	          "of podFailurePolicy only rules is implemented"),
	  -1 },
	{ "a Job successPolicy", RT_JOBS("", "", "'successPolicy':{'rules':[]},"),
	  BECAUSE(PREP_JOB("successPolicy"),
	          "a step succeeds when every pod of it succeeded; the JobSet successPolicy "
	          "decides which steps end the job"),
	  -1 },
	{ "a Job ttlSecondsAfterFinished", RT_JOBS("", "'ttlSecondsAfterFinished':5,", ""),
	  BECAUSE(NODE_JOB("ttlSecondsAfterFinished"),
	          "the pods of every step are kept until the runtime's ttlSecondsAfterFinished"),
	  -1 },
	{ "any other Job field", RT_JOBS("", "'manualSelector':true,", ""),
	  BECAUSE(NODE_JOB("manualSelector"),
	          "a step's pods are created without a Job, and this Job field's behaviour is "
	          "not reproduced"),
	  -1 },
	{ "a replicated job field unknown", RT_JOBS("'priority':1,", "", ""),
	  BECAUSE("spec.template.spec.replicatedJobs[1].priority", "the field is not implemented"),
	  -1 },
	{ "an MPI field unknown",
	  RT("'mlPolicy':{'mpi':{'mpiImplementation':'OpenMPI','slotsPerWorker':2}},", ""),
	  BECAUSE("spec.mlPolicy.mpi.slotsPerWorker",
	          "of the MPI policy only numProcPerNode, mpiImplementation, sshAuthMountPath and "
	          "runLauncherAsNode are implemented"),
	  -1 },
	{ "retentionPolicy whenDeleted Retain",
	  CLAIMS("'retentionPolicy':{'whenDeleted':'Retain'}"), NULL, -1 },
	{ "retentionPolicy whenDeleted of another value",
	  CLAIMS("'retentionPolicy':{'whenDeleted':'Keep'}"),
	  BECAUSE("spec.template.spec.volumeClaimPolicies[0].retentionPolicy.whenDeleted",
	          "its values are Delete and Retain"),
	  -1 },
	{ "retentionPolicy whenScaled", CLAIMS("'retentionPolicy':{'whenScaled':'Retain'}"),
	  BECAUSE("spec.template.spec.volumeClaimPolicies[0].retentionPolicy.whenScaled",
	          "of the retention policy only whenDeleted is implemented, as in JobSet v0.11"),
	  -1 },
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
