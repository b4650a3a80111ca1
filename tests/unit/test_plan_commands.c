/* The command policy in the plan (reconcilers/plan/plan_commands.c): before any pod exists,
 * every container and init container of every step the job will run is judged as the plan
 * creates it, and a refusal names the step and the container. One row a kind of step or
 * container: the node's other containers, the launcher of Kubeflow's MPI runtimes
 * (deepspeed-distributed, mlx-distributed) running the TrainJob's command, the initializers,
 * init containers, and what overrides and patches could add. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/plan/plan.h"

#define NOW 1795953600

/* A replicated job: its name, what follows the name (dependsOn), its Job template's metadata
 * and its pod spec. */
#define RJOB(name, extra, job_meta, pod_spec)                                                      \
	"{'name':'" name "'" extra ",'template':{" job_meta "'spec':{'template':{'spec':" pod_spec \
	"}}}}"
#define ANCESTOR(step)                                                                             \
	"'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'" step "'}},"
#define AFTER(step, status) ",'dependsOn':[{'name':'" step "','status':'" status "'}]"
#define CTR(labels, ml_policy, jobset)                                                             \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"           \
	"'metadata':{'name':'rt','labels':{" labels "}},'spec':{'mlPolicy':" ml_policy             \
	",'template':{'spec':" jobset "}}}"

/* Kubeflow's MPI runtimes (manifests/base/runtimes of Kubeflow Trainer v2.3.0): sshd on the
 * nodes, the launcher labelled trainer and the success policy on it; fw is deepspeed or mlx,
 * launcher the launcher's pod spec. */
#define MPI_POLICY(as_node)                                                                        \
	"{'numNodes':1,'mpi':{'numProcPerNode':1,'mpiImplementation':'OpenMPI',"                   \
	"'sshAuthMountPath':'/home/mpiuser/.ssh','runLauncherAsNode':" as_node "}}"
#define SSHD_NODE(fw)                                                                              \
	"{'containers':[{'name':'node','image':'ghcr.io/kubeflow/trainer/" fw "-runtime',"         \
	"'command':['/usr/sbin/sshd'],'args':['-De','-f','/home/mpiuser/.sshd_config']}]}"
#define LAUNCHER(fw, more)                                                                         \
	"{" more "'containers':[{'name':'node','image':'ghcr.io/kubeflow/trainer/" fw "-runtime'}" \
	"]}"
#define MPI_RUNTIME_WITH(labels, fw, as_node, launcher)                                            \
	CTR("'trainer.kubeflow.org/framework':'" fw "'" labels, MPI_POLICY(as_node),               \
	    "{'network':{'publishNotReadyAddresses':true},'successPolicy':{'operator':'All',"      \
	    "'targetReplicatedJobs':['launcher']},'replicatedJobs':[" RJOB(                        \
	            "node", "", "", SSHD_NODE(fw)) "," RJOB("launcher", AFTER("node", "Ready"),    \
	                                                    ANCESTOR("trainer"), launcher) "]}")
#define MPI_RUNTIME(fw, as_node, launcher) MPI_RUNTIME_WITH("", fw, as_node, launcher)
#define DEEPSPEED                          MPI_RUNTIME("deepspeed", "true", LAUNCHER("deepspeed", ""))

/* A torch runtime of one node step whose pod spec is spec. */
#define TORCH(spec)                                                                                \
	CTR("'trainer.kubeflow.org/framework':'torch'", "{'numNodes':1,'torch':{}}",               \
	    "{'replicatedJobs':[" RJOB("node", "", ANCESTOR("trainer"), spec) "]}")
#define TRAINER_CONTAINER "{'name':'node','image':'pytorch/pytorch:2.7.1'}"

/* Kubeflow's torchtune shape: dataset-initializer, model-initializer, then node, each
 * waiting for the one before to be Complete. */
#define INITIALIZERS(dataset, model)                                                               \
	CTR("'trainer.kubeflow.org/framework':'torchtune'", "{'numNodes':1,'torch':{}}",           \
	    "{'replicatedJobs':[" RJOB(                                                            \
	            "dataset-initializer", "", ANCESTOR("dataset-initializer"),                    \
	            dataset) "," RJOB("model-initializer",                                         \
	                              AFTER("dataset-initializer", "Complete"),                    \
	                              ANCESTOR("model-initializer"),                               \
	                              model) "," RJOB("node",                                      \
	                                              AFTER("model-initializer", "Complete"),      \
	                                              ANCESTOR("trainer"),                         \
	                                              "{'containers':[" TRAINER_CONTAINER          \
	                                              "]}") "]}")
#define INITIALIZER(name, more)                                                                    \
	"{'containers':[{'name':'" name "','image':'ghcr.io/kubeflow/trainer/" name "'" more "}]}"

#define COMMAND(words) ",'command':[" words "]"
#define JOB(trainer)   "{'runtimeRef':{'name':'rt'},'trainer':{'numNodes':2" trainer "}}"
#define MPIRUN         COMMAND("'mpirun','python3','/train.py'")
#define SLEEPS_FOREVER COMMAND("'sleep','infinity'")

/* The tail of every refusal. */
#define REFUSED                                                                                    \
	"; a job must exit by itself when its work is done, so it is refused before any pod "      \
	"starts"

struct row {
	const char *name;
	const char *runtime; /* the runtime, JSON with ' for " */
	const char *spec;    /* the TrainJob's spec */
	const char *status;  /* the TrainJob's status, NULL for a new job */
	const char *reason;  /* the refusal's reason; NULL: the job runs */
	const char *message; /* the refusal's message */
};

static const struct row rows[] = {
	/* The node step: every container and init container, as before. */
	{ "the trainer's command in the node step", TORCH("{'containers':[" TRAINER_CONTAINER "]}"),
	  JOB(SLEEPS_FOREVER), NULL, "PolicyViolation",
	  "container node of step node: 'sleep infinity' never exits" REFUSED },
	{ "another container of the node step",
	  TORCH("{'containers':[" TRAINER_CONTAINER ",{'name':'keepalive','image':'busybox',"
	        "'command':['tail','-f','/dev/null']}]}"),
	  JOB(COMMAND("'torchrun','train.py'")), NULL, "PolicyViolation",
	  "container keepalive of step node: 'tail -f /dev/null' never exits (it follows "
	  "/dev/null or standard input for ever)" REFUSED },
	{ "an init container of the node step",
	  TORCH("{'initContainers':[{'name':'wait','image':'busybox','command':['cat']}],"
	        "'containers':[" TRAINER_CONTAINER "]}"),
	  JOB(""), NULL, "PolicyViolation",
	  "init container wait of step node: 'cat' never exits (cat with no input waits on "
	  "standard input, which nothing closes)" REFUSED },
	{ "a sidecar of the node step (restartPolicy Always), which Kubernetes stops",
	  TORCH("{'initContainers':[{'name':'logs','image':'busybox','restartPolicy':'Always',"
	        "'command':['sleep','infinity']}],'containers':[" TRAINER_CONTAINER "]}"),
	  JOB(""), NULL, NULL, NULL },

	/* The launcher of an MPI runtime runs the TrainJob's command. */
	{ "deepspeed: sleep infinity in the launcher", DEEPSPEED, JOB(SLEEPS_FOREVER), NULL,
	  "PolicyViolation",
	  "container node of step launcher: 'sleep infinity' never exits" REFUSED },
	{ "deepspeed without runLauncherAsNode: the launcher's script",
	  MPI_RUNTIME("deepspeed", "false", LAUNCHER("deepspeed", "")),
	  JOB(COMMAND("'bash','-c','mpirun python3 /train.py; sleep infinity'")), NULL,
	  "PolicyViolation",
	  "container node of step launcher: 'sleep infinity' never exits" REFUSED },
	{ "mlx: the launcher keeps its node after training",
	  MPI_RUNTIME("mlx", "true", LAUNCHER("mlx", "")),
	  JOB(COMMAND("'sh','-c','mpirun python3 /train.py && tail -f /dev/null'")), NULL,
	  "PolicyViolation",
	  "container node of step launcher: 'tail -f /dev/null' never exits (it follows "
	  "/dev/null or standard input for ever)" REFUSED },
	{ "the launcher's sleep as long as the walltime", DEEPSPEED,
	  "{'runtimeRef':{'name':'rt'},'activeDeadlineSeconds':600,'trainer':{'numNodes':2,"
	  "'command':['sh','-c','mpirun python3 /train.py; sleep 10m']}}",
	  NULL, "PolicyViolation",
	  "container node of step launcher: 'sleep 10m' sleeps 600 s, as long as the job's "
	  "walltime of 600 s or longer, so the job can never finish by itself" REFUSED },
	{ "deepspeed: mpirun in the launcher, sshd -D on the nodes the launcher's end stops",
	  DEEPSPEED, JOB(MPIRUN), NULL, NULL, NULL },
	{ "mlx without a command: the launcher runs its image's default, which is not read",
	  MPI_RUNTIME("mlx", "true", LAUNCHER("mlx", "")), JOB(""), NULL, NULL, NULL },
	{ "sshd -D in the launcher, the step the success policy waits for",
	  MPI_RUNTIME("deepspeed", "true",
	              "{'containers':[{'name':'node','image':'ghcr.io/kubeflow/trainer/"
	              "deepspeed-runtime','command':['/usr/sbin/sshd','-De']}]}"),
	  JOB(""), NULL, "PolicyViolation",
	  "container node of step launcher: '/usr/sbin/sshd -De' never exits (sshd -D serves "
	  "until it is stopped, and no success policy of the runtime stops this step)" REFUSED },
	{ "a container the runtime adds beside the launcher's",
	  MPI_RUNTIME("deepspeed", "true",
	              "{'containers':[{'name':'node','image':'ghcr.io/kubeflow/trainer/"
	              "deepspeed-runtime'},{'name':'metrics','image':'busybox','command':["
	              "'sh','-c','while :; do cat /proc/loadavg; sleep 5; done']}]}"),
	  JOB(MPIRUN), NULL, "PolicyViolation",
	  "container metrics of step launcher: 'while :; do cat /proc/loadavg; sleep 5; done' "
	  "never exits (its condition is always true and nothing in it breaks out or "
	  "exits)" REFUSED },
	{ "an init container of the launcher",
	  MPI_RUNTIME("deepspeed", "true",
	              LAUNCHER("deepspeed",
	                       "'initContainers':[{'name':'wait-for-workers','image':'busybox',"
	                       "'command':['sleep','inf']}],")),
	  JOB(MPIRUN), NULL, "PolicyViolation",
	  "init container wait-for-workers of step launcher: 'sleep inf' never exits" REFUSED },
	{ "an exempt runtime's launcher may run for ever",
	  MPI_RUNTIME_WITH(",'trainjob.flame.dev/allow-long-running':'true'", "deepspeed", "true",
	                   LAUNCHER("deepspeed", "")),
	  JOB(SLEEPS_FOREVER), NULL, NULL, NULL },
	{ "a job that started already is not judged again", DEEPSPEED, JOB(SLEEPS_FOREVER),
	  "{'state':'Running','restartCount':0,'startTime':'2026-11-29T11:00:00Z',"
	  "'conditions':[]}",
	  NULL, NULL },

	/* The initializers: their commands are the runtime's. */
	{ "a dataset initializer that never exits",
	  INITIALIZERS(INITIALIZER("dataset-initializer", ",'command':['sleep','infinity']"),
	               INITIALIZER("model-initializer", "")),
	  JOB(""), NULL, "PolicyViolation",
	  "container dataset-initializer of step dataset-initializer: 'sleep infinity' never "
	  "exits" REFUSED },
	{ "an init container of the model initializer",
	  INITIALIZERS(INITIALIZER("dataset-initializer", ""),
	               "{'initContainers':[{'name':'fetch','image':'busybox','command':['sh','-c',"
	               "'wget -q https://example.com/w; exec tail -f /dev/null']}],'containers':["
	               "{'name':'model-initializer','image':'ghcr.io/kubeflow/trainer/"
	               "model-initializer'}]}"),
	  JOB(""), NULL, "PolicyViolation",
	  "init container fetch of step model-initializer: 'exec tail -f /dev/null' never exits "
	  "(it follows /dev/null or standard input for ever)" REFUSED },
	{ "sshd -D in an initializer the node step waits for to be Complete",
	  INITIALIZERS(INITIALIZER("dataset-initializer", ",'command':['/usr/sbin/sshd','-D']"),
	               INITIALIZER("model-initializer", "")),
	  JOB(""), NULL, "PolicyViolation",
	  "container dataset-initializer of step dataset-initializer: '/usr/sbin/sshd -D' never "
	  "exits (sshd -D serves until it is stopped, and no success policy of the runtime stops "
	  "this step)" REFUSED },
	{ "an initializer's sleep ends before the walltime, which starts with the node pods",
	  INITIALIZERS(INITIALIZER("dataset-initializer", ",'command':['sh','-c','sleep 2h; ls']"),
	               INITIALIZER("model-initializer", "")),
	  "{'runtimeRef':{'name':'rt'},'activeDeadlineSeconds':600,'trainer':{'numNodes':2}}", NULL,
	  NULL, NULL },
	{ "the first step of the template is named first",
	  INITIALIZERS(INITIALIZER("dataset-initializer", ",'command':['cat']"),
	               INITIALIZER("model-initializer", "")),
	  JOB(SLEEPS_FOREVER), NULL, "PolicyViolation",
	  "container dataset-initializer of step dataset-initializer: 'cat' never exits (cat "
	  "with no input waits on standard input, which nothing closes)" REFUSED },
	{ "initializers that download and end",
	  INITIALIZERS(INITIALIZER("dataset-initializer", ""),
	               INITIALIZER("model-initializer",
	                           ",'command':['python','-m','model_initializer']")),
	  JOB(COMMAND("'tune','run','full_finetune_distributed'")), NULL, NULL, NULL },

	/* Overrides and patches set only env and volumeMounts of containers the runtime has:
	 * one that would add a container or a command is refused before any pod too. */
	{ "a podTemplateOverride adding a container to the launcher", DEEPSPEED,
	  "{'runtimeRef':{'name':'rt'},'trainer':{'numNodes':2,'command':['mpirun','python3',"
	  "'/train.py']},'podTemplateOverrides':[{'targetJobs':[{'name':'launcher'}],'spec':{"
	  "'containers':[{'name':'keepalive','command':['sleep','infinity']}]}}]}",
	  NULL, "InvalidSpec",
	  "spec.podTemplateOverrides[0].spec.containers[0].command is not supported by this "
	  "controller: the field is not applied to the pods; remove it (crds/README.md lists "
	  "what is supported)" },
	{ "a runtimePatch adding a container to the launcher", DEEPSPEED,
	  "{'runtimeRef':{'name':'rt'},'trainer':{'numNodes':2,'command':['mpirun','python3',"
	  "'/train.py']},'runtimePatches':[{'trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'launcher','template':{'spec':{'template':{'spec':{"
	  "'containers':[{'name':'keepalive','env':[{'name':'A','value':'1'}]}]}}}}}]}}}}]}",
	  NULL, "InvalidSpec",
	  "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template."
	  "spec.template.spec.containers[0]: the runtime's launcher pod has no container named "
	  "'keepalive'" },
};

static void test_commands_of_every_step(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *c = &rows[i];
		struct tj_trainjob *job = NULL;
		struct tj_runtime *rt = NULL;
		struct tj_plan *plan = NULL;
		size_t pods = 0;
		char buf[8192];
		cJSON *j;

		print_message("# row: %s\n", c->name);
		snprintf(buf, sizeof(buf),
		         "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
		         "'metadata':{'name':'vit','namespace':'team-a','uid':'uid-vit',"
		         "'resourceVersion':'42','generation':1,"
		         "'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':%s%s%s}",
		         c->spec, c->status ? ",'status':" : "", c->status ? c->status : "");
		j = jlit(buf);
		assert_int_equal(tj_trainjob_from_json(j, &job), 0);
		cJSON_Delete(j);
		j = jlit(c->runtime);
		assert_int_equal(tj_runtime_from_json(j, &rt), 0);
		cJSON_Delete(j);
		assert_int_equal(
		        tj_plan_trainjob(
		                &(struct tj_plan_input){ .job = job, .runtime = rt, .now = NOW },
		                &plan),
		        0);
		for (size_t k = 0; k < plan->n_actions; k++)
			pods += plan->actions[k].kind == TJ_ACTION_CREATE_POD;
		if (c->reason) {
			assert_int_equal(plan->status.state, TJ_STATE_FAILED);
			assert_string_equal(plan->status.reason, c->reason);
			assert_string_equal(plan->status.message, c->message);
			assert_int_equal(pods, 0);
		} else {
			assert_int_not_equal(plan->status.state, TJ_STATE_FAILED);
			assert_true(pods > 0);
		}
		tj_plan_free(plan);
		tj_runtime_free(rt);
		tj_trainjob_free(job);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commands_of_every_step),
	};
	return cmocka_run_group_tests_name("plan_commands", tests, NULL, NULL);
}
