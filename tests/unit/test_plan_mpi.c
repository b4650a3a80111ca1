/* The plan of a job of Kubeflow's deepspeed-distributed runtime (MPI, runLauncherAsNode, the
 * launcher depending on the nodes being Ready, the success policy on the launcher): node
 * pods first with the Secret and ConfigMap, the launcher once they are Ready, the job
 * Complete when the launcher succeeded and its sshd nodes deleted. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/json.h"
#include "reconcilers/plan.h"

#define NOW 1795953600

/* manifests/base/runtimes/deepspeed_distributed.yaml of Kubeflow Trainer v2.3.0, as JSON;
 * DEEPSPEED_AS_NODE(false) is the same without runLauncherAsNode. */
#define DEEPSPEED DEEPSPEED_AS_NODE(true)
#define DEEPSPEED_AS_NODE(as_node)                                                                 \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"           \
	"'metadata':{'name':'deepspeed-distributed','labels':{'trainer.kubeflow.org/framework':"   \
	"'deepspeed'}},'spec':{'mlPolicy':{'numNodes':1,'mpi':{'numProcPerNode':1,"                \
	"'mpiImplementation':'OpenMPI','sshAuthMountPath':'/home/mpiuser/.ssh',"                   \
	"'runLauncherAsNode':" #as_node                                                            \
	"}},'template':{'spec':{'network':{'publishNotReadyAddresses':"                            \
	"true},'successPolicy':{'operator':'All','targetReplicatedJobs':['launcher']},"            \
	"'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"                \
	"'securityContext':{'fsGroup':1000},'containers':[{'name':'node','image':"                 \
	"'ghcr.io/kubeflow/trainer/deepspeed-runtime','securityContext':{'runAsUser':1000},"       \
	"'command':['/usr/sbin/sshd'],'args':['-De','-f','/home/mpiuser/.sshd_config'],"           \
	"'readinessProbe':{'tcpSocket':{'port':2222},'initialDelaySeconds':5}}]}}}}},"             \
	"{'name':'launcher','dependsOn':[{'name':'node','status':'Ready'}],'template':{"           \
	"'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},"         \
	"'spec':{'template':{'spec':{'securityContext':{'fsGroup':1000},'containers':[{'name':"    \
	"'node','image':'ghcr.io/kubeflow/trainer/deepspeed-runtime','securityContext':{"          \
	"'runAsUser':1000}}]}}}}}]}}}}"

#define JOB_SPEC                                                                                   \
	"{'runtimeRef':{'name':'deepspeed-distributed'},'trainer':{'numNodes':3,'command':["       \
	"'mpirun','python3','/train.py'],'env':[{'name':'E','value':'1'}]}}"
#define STARTED                                                                                    \
	"{'state':'Pending','restartCount':0,'observedGeneration':2,"                              \
	"'startTime':'2026-11-29T11:00:00Z','conditions':[]}"

struct fixture {
	struct tj_trainjob *job;
	struct tj_runtime *runtime;
	struct tj_pod pods[4];
	const struct tj_pod *ptrs[4];
	size_t n;
	struct tj_plan *plan;
};

static void setup_with(struct fixture *f, const char *runtime_sq, const char *spec_sq,
                       const char *status_sq)
{
	char buf[4096];
	cJSON *j;

	memset(f, 0, sizeof(*f));
	snprintf(buf, sizeof(buf),
	         "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
	         "'metadata':{'name':'vit','namespace':'team-a','uid':'uid-vit',"
	         "'resourceVersion':'42','generation':2,"
	         "'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':%s%s%s}",
	         spec_sq, status_sq ? ",'status':" : "", status_sq ? status_sq : "");
	j = jlit(buf);
	assert_int_equal(tj_trainjob_from_json(j, &f->job), 0);
	cJSON_Delete(j);
	j = jlit(runtime_sq);
	assert_int_equal(tj_runtime_from_json(j, &f->runtime), 0);
	cJSON_Delete(j);
}

static void setup(struct fixture *f, const char *status_sq)
{
	setup_with(f, DEEPSPEED, JOB_SPEC, status_sq);
}

static void add_pod(struct fixture *f, const char *name, int rank, enum tj_pod_phase phase,
                    bool ready)
{
	struct tj_pod *p = &f->pods[f->n];

	*p = (struct tj_pod){ .namespace = "team-a",
		              .name = (char *)name,
		              .uid = (char *)name,
		              .owner_uid = "uid-vit",
		              .trainjob = "vit",
		              .rank = rank,
		              .attempt = 0,
		              .node_name = "cpu-1",
		              .phase = phase,
		              .ready = ready,
		              .creation_time = NOW - 60,
		              .start_time = NOW - 50 };
	f->ptrs[f->n++] = p;
}

static void plan_admitted(struct fixture *f, const struct tj_plan_admission *adm)
{
	assert_int_equal(tj_plan_trainjob(&(struct tj_plan_input){ .job = f->job,
	                                                           .runtime = f->runtime,
	                                                           .pods = f->ptrs,
	                                                           .n_pods = f->n,
	                                                           .now = NOW,
	                                                           .admission = adm },
	                                  &f->plan),
	                 0);
}

static void plan(struct fixture *f)
{
	plan_admitted(f, NULL);
}

static void teardown(struct fixture *f)
{
	tj_plan_free(f->plan);
	tj_runtime_free(f->runtime);
	tj_trainjob_free(f->job);
}

static const struct tj_action *find(const struct tj_plan *p, enum tj_action_kind kind,
                                    const char *name)
{
	for (size_t i = 0; i < p->n_actions; i++)
		if (p->actions[i].kind == kind && strcmp(p->actions[i].name, name) == 0)
			return &p->actions[i];
	return NULL;
}

static size_t count(const struct tj_plan *p, enum tj_action_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_actions; i++)
		n += p->actions[i].kind == kind;
	return n;
}

static const cJSON *container(const cJSON *pod)
{
	return tj_json_find_by(tj_json_path(pod, "spec.containers"), "name", "node");
}

#define SSH_VOLUME                                                                                 \
	"{'name':'mpi-ssh-auth','secret':{'secretName':'vit-mpi-ssh-auth','defaultMode':256,"      \
	"'items':[{'key':'ssh-privatekey','path':'id_rsa','mode':416},"                            \
	"{'key':'ssh-publickey','path':'id_rsa.pub','mode':420},"                                  \
	"{'key':'ssh-publickey','path':'authorized_keys','mode':420}]}}"

/* Three nodes with runLauncherAsNode: two node pods now, the launcher later; the Secret (its
 * key made by the executor) and the hostfile naming all three go with them. */
static void test_new_job_creates_nodes_and_objects(void **state)
{
	struct fixture f;
	const struct tj_action *secret, *cm;
	const cJSON *node;

	setup(&f, NULL);
	plan(&f);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 2);
	assert_non_null(find(f.plan, TJ_ACTION_CREATE_POD, "vit-node-0-0-a0"));
	assert_non_null(find(f.plan, TJ_ACTION_CREATE_POD, "vit-node-0-1-a0"));
	node = container(find(f.plan, TJ_ACTION_CREATE_POD, "vit-node-0-1-a0")->object);
	assert_json_equal(cJSON_GetObjectItem(node, "command"), "['/usr/sbin/sshd']");
	assert_json_equal(
	        tj_json_find_by(
	                tj_json_path(find(f.plan, TJ_ACTION_CREATE_POD, "vit-node-0-1-a0")->object,
	                             "spec.volumes"),
	                "name", "mpi-ssh-auth"),
	        SSH_VOLUME);
	assert_json_equal(
	        tj_json_find_by(cJSON_GetObjectItem(node, "volumeMounts"), "name", "mpi-ssh-auth"),
	        "{'name':'mpi-ssh-auth','mountPath':'/home/mpiuser/.ssh'}");
	secret = find(f.plan, TJ_ACTION_CREATE_OBJECT, "vit-mpi-ssh-auth");
	cm = find(f.plan, TJ_ACTION_CREATE_OBJECT, "vit-mpi-hostfile");
	assert_non_null(secret);
	assert_non_null(cm);
	assert_true(secret->ssh_key);
	assert_false(cm->ssh_key);
	assert_string_equal(tj_json_string(secret->object, "type"), "kubernetes.io/ssh-auth");
	assert_null(cJSON_GetObjectItem(secret->object, "data"));
	assert_json_equal(cJSON_GetObjectItem(cm->object, "data"),
	                  "{'hostfile':'vit-node-0-0.vit slots=1\\nvit-node-0-1.vit slots=1\\n"
	                  "vit-launcher-0-0.vit slots=1\\n'}");
	assert_int_equal(secret->stage,
	                 find(f.plan, TJ_ACTION_CREATE_POD, "vit-node-0-0-a0")->stage);
	assert_null(find(f.plan, TJ_ACTION_CREATE_POD, "vit-launcher-0-0-a0"));
	teardown(&f);
}

/* The node pods run but one is not Ready yet: no launcher, and no object posted again. */
static void test_no_launcher_before_nodes_ready(void **state)
{
	struct fixture f;

	setup(&f, STARTED);
	add_pod(&f, "vit-node-0-0-a0", 0, TJ_POD_RUNNING, true);
	add_pod(&f, "vit-node-0-1-a0", 1, TJ_POD_RUNNING, false);
	plan(&f);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 0);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_OBJECT), 0);
	teardown(&f);
}

/* Both node pods Ready: the launcher, with the trainer's program, the hostfile and the
 * OpenMPI env. */
static void test_launcher_once_nodes_ready(void **state)
{
	struct fixture f;
	const struct tj_action *launcher;
	const cJSON *c;

	setup(&f, STARTED);
	add_pod(&f, "vit-node-0-0-a0", 0, TJ_POD_RUNNING, true);
	add_pod(&f, "vit-node-0-1-a0", 1, TJ_POD_RUNNING, true);
	plan(&f);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 1);
	launcher = find(f.plan, TJ_ACTION_CREATE_POD, "vit-launcher-0-0-a0");
	assert_non_null(launcher);
	c = container(launcher->object);
	assert_json_equal(cJSON_GetObjectItem(c, "command"), "['mpirun','python3','/train.py']");
	assert_json_equal(cJSON_GetObjectItem(c, "env"),
	                  "[{'name':'E','value':'1'},"
	                  "{'name':'OMPI_MCA_orte_default_hostfile','value':'/etc/mpi/hostfile'},"
	                  "{'name':'OMPI_MCA_orte_keep_fqdn_hostnames','value':'true'},"
	                  "{'name':'OMPI_MCA_orte_set_default_slots','value':'1'},"
	                  "{'name':'OMPI_MCA_plm_rsh_args','value':'-o ConnectionAttempts=10'}]");
	assert_json_equal(cJSON_GetObjectItem(c, "volumeMounts"),
	                  "[{'name':'mpi-ssh-auth','mountPath':'/home/mpiuser/.ssh'},"
	                  "{'name':'mpi-hostfile','mountPath':'/etc/mpi'}]");
	assert_json_equal(tj_json_find_by(tj_json_path(launcher->object, "spec.volumes"), "name",
	                                  "mpi-hostfile"),
	                  "{'name':'mpi-hostfile','configMap':{'name':'vit-mpi-hostfile','items':["
	                  "{'key':'hostfile','path':'hostfile','mode':292}]}}");
	assert_non_null(find(f.plan, TJ_ACTION_CREATE_OBJECT, "vit-mpi-ssh-auth"));
	assert_non_null(find(f.plan, TJ_ACTION_CREATE_OBJECT, "vit-mpi-hostfile"));
	teardown(&f);
}

/* The launcher succeeded: Complete, and the node pods' sshd is stopped. */
static void test_launcher_success_completes_and_stops_nodes(void **state)
{
	struct fixture f;

	setup(&f, STARTED);
	add_pod(&f, "vit-node-0-0-a0", 0, TJ_POD_RUNNING, true);
	add_pod(&f, "vit-node-0-1-a0", 1, TJ_POD_RUNNING, true);
	add_pod(&f, "vit-launcher-0-0-a0", -1, TJ_POD_SUCCEEDED, false);
	plan(&f);
	assert_int_equal(f.plan->status.state, TJ_STATE_COMPLETE);
	/* Complete is written alone, before the nodes are stopped. */
	assert_int_equal(find(f.plan, TJ_ACTION_PATCH_STATUS, "vit")->stage, 0);
	assert_int_equal(find(f.plan, TJ_ACTION_DELETE_POD, "vit-node-0-0-a0")->stage, 1);
	assert_int_equal(find(f.plan, TJ_ACTION_DELETE_POD, "vit-node-0-1-a0")->stage, 1);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 0);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_OBJECT), 0);
	teardown(&f);
}

/* Kubeflow gives spec.trainer.env to the trainer step (the launcher) and, with
 * runLauncherAsNode, to the node step too; without it the nodes run sshd and get none. */
struct env_case {
	const char *name;
	const char *runtime;
	int node_pods;
	const char *want_node_env; /* of each node pod's container node */
};

static const struct env_case env_cases[] = {
	{ "runLauncherAsNode: the nodes run the trainer too", DEEPSPEED_AS_NODE(true), 2,
	  "[{'name':'E','value':'1'}]" },
	{ "without it: the nodes only serve ssh", DEEPSPEED_AS_NODE(false), 3, "[]" },
};

static void test_trainer_env_of_node_pods(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++) {
		const struct env_case *c = &env_cases[i];
		struct fixture f;
		char pod[32];

		print_message("# case: %s\n", c->name);
		setup_with(&f, c->runtime, JOB_SPEC, NULL);
		plan(&f);
		assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), c->node_pods);
		for (int r = 0; r < c->node_pods; r++) {
			snprintf(pod, sizeof(pod), "vit-node-0-%d-a0", r);
			assert_json_equal(
			        cJSON_GetObjectItem(
			                container(find(f.plan, TJ_ACTION_CREATE_POD, pod)->object),
			                "env"),
			        c->want_node_env);
		}
		teardown(&f);
	}
}

/* Without runLauncherAsNode the launcher still gets the trainer's env, once the three
 * nodes are Ready. */
static void test_launcher_gets_env_without_launcher_as_node(void **state)
{
	struct fixture f;

	(void)state;
	setup_with(&f, DEEPSPEED_AS_NODE(false), JOB_SPEC, STARTED);
	add_pod(&f, "vit-node-0-0-a0", 0, TJ_POD_RUNNING, true);
	add_pod(&f, "vit-node-0-1-a0", 1, TJ_POD_RUNNING, true);
	add_pod(&f, "vit-node-0-2-a0", 2, TJ_POD_RUNNING, true);
	plan(&f);
	assert_string_equal(
	        tj_json_string(
	                cJSON_GetArrayItem(
	                        cJSON_GetObjectItem(container(find(f.plan, TJ_ACTION_CREATE_POD,
	                                                           "vit-launcher-0-0-a0")
	                                                              ->object),
	                                            "env"),
	                        0),
	                "name"),
	        "E");
	teardown(&f);
}

/* resourcesPerNode with GPUs reaches the launcher as Kubeflow gives it; with the queue's
 * admission on that is refused before any pod, naming the field. Without GPUs, or without
 * the admission, the job goes ahead. */
struct gpu_case {
	const char *name;
	const char *resources; /* spec.trainer.resourcesPerNode */
	bool admission;
	const char *want_message; /* NULL: node pods created */
};

#define GPU_REFUSAL                                                                                \
	"spec.trainer.resourcesPerNode: requests GPUs, which Kubeflow Trainer gives to the "       \
	"launcher of ClusterTrainingRuntime deepspeed-distributed as well as to its nodes; only "  \
	"the node step is admitted as a gang here, so the launcher's GPUs would bypass the queue " \
	"(request the GPUs in the node template of a runtime instead)"

static const struct gpu_case gpu_cases[] = {
	{ "GPUs under the admission", "{'limits':{'nvidia.com/gpu':4}}", true, GPU_REFUSAL },
	{ "GPUs as requests", "{'requests':{'nvidia.com/gpu':'2'}}", true, GPU_REFUSAL },
	{ "CPUs only", "{'limits':{'cpu':'8','memory':'16Gi'}}", true, NULL },
	{ "GPUs without the admission", "{'limits':{'nvidia.com/gpu':4}}", false, NULL },
};

static void test_launcher_gpus(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(gpu_cases) / sizeof(gpu_cases[0]); i++) {
		const struct gpu_case *c = &gpu_cases[i];
		const struct tj_plan_admission adm = { 0 };
		struct fixture f;
		char spec[1024];

		print_message("# case: %s\n", c->name);
		snprintf(spec, sizeof(spec),
		         "{'runtimeRef':{'name':'deepspeed-distributed'},'trainer':{'numNodes':3,"
		         "'command':['mpirun','python3','/train.py'],'resourcesPerNode':%s}}",
		         c->resources);
		setup_with(&f, DEEPSPEED, spec, NULL);
		plan_admitted(&f, c->admission ? &adm : NULL);
		if (c->want_message) {
			assert_int_equal(f.plan->status.state, TJ_STATE_FAILED);
			assert_string_equal(f.plan->status.reason, "InvalidSpec");
			assert_string_equal(f.plan->status.message, c->want_message);
			assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 0);
		} else {
			assert_int_not_equal(f.plan->status.state, TJ_STATE_FAILED);
		}
		teardown(&f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_job_creates_nodes_and_objects),
		cmocka_unit_test(test_no_launcher_before_nodes_ready),
		cmocka_unit_test(test_launcher_once_nodes_ready),
		cmocka_unit_test(test_launcher_success_completes_and_stops_nodes),
		cmocka_unit_test(test_trainer_env_of_node_pods),
		cmocka_unit_test(test_launcher_gets_env_without_launcher_as_node),
		cmocka_unit_test(test_launcher_gpus),
	};
	return cmocka_run_group_tests_name("plan_mpi", tests, NULL, NULL);
}
