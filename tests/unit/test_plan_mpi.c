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
#include "reconcilers/admission/launcher_hold.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/plan.h"

#define NOW 1795953600

/* manifests/base/runtimes/deepspeed_distributed.yaml of Kubeflow Trainer v2.3.0, as JSON;
 * DEEPSPEED_AS_NODE(false) is the same without runLauncherAsNode. */
#define DEEPSPEED                  DEEPSPEED_AS_NODE(true)
#define DEEPSPEED_AS_NODE(as_node) DEEPSPEED_WITH(#as_node, "")
/* The same labelled with a GPU class, as a cluster operator labels Kubeflow's runtime. */
#define GH200_LABEL ",'trainjob.flame.dev/gpu-class':'gh200'"
#define DEEPSPEED_WITH(as_node, labels)                                                            \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"           \
	"'metadata':{'name':'deepspeed-distributed','labels':{'trainer.kubeflow.org/framework':"   \
	"'deepspeed'" labels "}},'spec':{'mlPolicy':{'numNodes':1,'mpi':{'numProcPerNode':1,"      \
	"'mpiImplementation':'OpenMPI','sshAuthMountPath':'/home/mpiuser/.ssh',"                   \
	"'runLauncherAsNode':" as_node                                                             \
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

static void plan_in(struct fixture *f, const struct tj_admission_ticket *adm,
                    const struct tj_config *config)
{
	assert_int_equal(tj_plan_trainjob(&(struct tj_plan_input){ .job = f->job,
	                                                           .runtime = f->runtime,
	                                                           .config = config,
	                                                           .pods = f->ptrs,
	                                                           .n_pods = f->n,
	                                                           .now = NOW,
	                                                           .ticket = adm },
	                                  &f->plan),
	                 0);
}

static void plan_admitted(struct fixture *f, const struct tj_admission_ticket *adm)
{
	plan_in(f, adm, NULL);
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

/* resourcesPerNode with GPUs reaches the launcher as Kubeflow gives it (and the nodes with
 * runLauncherAsNode); under the built-in admission, with a GPU class, the launcher is part
 * of the gang the plan wants admitted. Without a class no admission applies to GPUs (the
 * scheduler places them): the pods go ahead. */
struct gpu_case {
	const char *name;
	const char *runtime;
	const char *resources;     /* spec.trainer.resourcesPerNode */
	bool admission;            /* the built-in admission, with the class gh200 */
	int want_pods;             /* node pods wanted (queued), or created without admission */
	const char *want_node;     /* the node container's resources in the want; NULL: none */
	const char *want_launcher; /* the launcher container's resources; NULL: no launcher */
};

static const struct gpu_case gpu_cases[] = {
	{ "GPUs in limits: the launcher is wanted with the gang",
	  DEEPSPEED_WITH("true", GH200_LABEL), "{'limits':{'nvidia.com/gpu':4}}", true, 2,
	  "{'limits':{'nvidia.com/gpu':4},'requests':{'nvidia.com/gpu':4}}",
	  "{'limits':{'nvidia.com/gpu':4}}" },
	{ "GPUs as requests", DEEPSPEED_WITH("true", GH200_LABEL),
	  "{'requests':{'nvidia.com/gpu':'2'}}", true, 2,
	  "{'requests':{'nvidia.com/gpu':'2'},'limits':{'nvidia.com/gpu':'2'}}",
	  "{'requests':{'nvidia.com/gpu':'2'}}" },
	{ "CPUs only: the launcher stays outside the queue", DEEPSPEED_WITH("true", GH200_LABEL),
	  "{'limits':{'cpu':'8'}}", true, 2, "{'limits':{'cpu':'8'}}", NULL },
	{ "without runLauncherAsNode the nodes keep their template's resources",
	  DEEPSPEED_WITH("false", GH200_LABEL), "{'limits':{'nvidia.com/gpu':4}}", true, 3, NULL,
	  "{'limits':{'nvidia.com/gpu':4}}" },
	{ "GPUs without a class: no admission, the pods go ahead", DEEPSPEED,
	  "{'limits':{'nvidia.com/gpu':4}}", false, 2, NULL, NULL },
};

static void test_launcher_gpus(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(gpu_cases) / sizeof(gpu_cases[0]); i++) {
		const struct gpu_case *c = &gpu_cases[i];
		const struct tj_admission_ticket adm = { 0 };
		const struct tj_plan_want *w;
		struct fixture f;
		char spec[1024];

		print_message("# case: %s\n", c->name);
		snprintf(spec, sizeof(spec),
		         "{'runtimeRef':{'name':'deepspeed-distributed'},'trainer':{'numNodes':3,"
		         "'command':['mpirun','python3','/train.py'],'resourcesPerNode':%s}}",
		         c->resources);
		setup_with(&f, c->runtime, spec, NULL);
		plan_in(&f, c->admission ? &adm : NULL, &test_config);
		w = &f.plan->gang.want;
		assert_int_not_equal(f.plan->status.state, TJ_STATE_FAILED);
		if (!c->admission) {
			assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), c->want_pods);
			assert_false(w->wanted);
			teardown(&f);
			continue;
		}
		assert_int_equal(f.plan->status.state, TJ_STATE_QUEUED);
		assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 0);
		assert_true(w->wanted);
		assert_int_equal(w->num_pods, c->want_pods);
		if (c->want_node)
			assert_json_equal(tj_json_path(container(w->pod), "resources"),
			                  c->want_node);
		else
			assert_null(tj_json_path(container(w->pod), "resources"));
		if (c->want_launcher) {
			assert_non_null(w->launcher);
			assert_string_equal(tj_json_string(w->launcher, "metadata.name"),
			                    "vit-launcher-0-0-a0");
			assert_json_equal(tj_json_path(container(w->launcher), "resources"),
			                  c->want_launcher);
		} else {
			assert_null(w->launcher);
		}
		teardown(&f);
	}
}

#define GPU_JOB                                                                                    \
	"{'runtimeRef':{'name':'deepspeed-distributed'},'trainer':{'numNodes':3,"                  \
	"'command':['mpirun','python3','/train.py'],'resourcesPerNode':{'limits':{"                \
	"'nvidia.com/gpu':4}}}}"

static const char *const admitted_nodes[] = { "gh-1", "gh-2" };

/* The admitted gang: its node pods pinned, the first of them holding the launcher's place
 * with what the launcher will request; the launcher itself not yet. */
static void test_admitted_gang_holds_the_launchers_place(void **state)
{
	const struct tj_admission_ticket adm = {
		.admitted = true, .nodes = admitted_nodes, .n_nodes = 2, .launcher_node = "gh-3"
	};
	const struct tj_action *rank0, *rank1, *ev = NULL;
	struct tj_launcher_hold hold;
	struct fixture f;

	(void)state;
	setup_with(&f, DEEPSPEED_WITH("true", GH200_LABEL), GPU_JOB, NULL);
	plan_in(&f, &adm, &test_config);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 2);
	assert_null(find(f.plan, TJ_ACTION_CREATE_POD, "vit-launcher-0-0-a0"));
	rank0 = find(f.plan, TJ_ACTION_CREATE_POD, "vit-node-0-0-a0");
	rank1 = find(f.plan, TJ_ACTION_CREATE_POD, "vit-node-0-1-a0");
	assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
	                            tj_json_path(rank0->object, "metadata.annotations"),
	                            "trainjob.flame.dev/node")),
	                    "gh-1");
	assert_int_equal(
	        tj_launcher_hold_parse(cJSON_GetStringValue(cJSON_GetObjectItem(
	                                       tj_json_path(rank0->object, "metadata.annotations"),
	                                       "trainjob.flame.dev/launcher-hold")),
	                               &hold),
	        0);
	assert_string_equal(hold.pod, "vit-launcher-0-0-a0");
	assert_string_equal(hold.node, "gh-3");
	assert_int_equal(tj_launcher_hold_extended(&hold, "nvidia.com/gpu"), 4);
	assert_null(cJSON_GetObjectItem(tj_json_path(rank1->object, "metadata.annotations"),
	                                "trainjob.flame.dev/launcher-hold"));
	for (size_t i = 0; i < f.plan->n_actions; i++)
		if (f.plan->actions[i].kind == TJ_ACTION_EVENT &&
		    strcmp(f.plan->actions[i].reason, "Admitted") == 0)
			ev = &f.plan->actions[i];
	assert_non_null(ev);
	assert_string_equal(ev->message,
	                    "2 pods pinned to gh-1, gh-2, the launcher's place on gh-3");
	teardown(&f);
}

/* An admission of the node pods alone is not this gang's: it waits for one with the
 * launcher's place, and creates nothing. */
static void test_admission_without_the_launcher_is_not_taken(void **state)
{
	const struct tj_admission_ticket adm = { .admitted = true,
		                                 .nodes = admitted_nodes,
		                                 .n_nodes = 2 };
	struct fixture f;

	(void)state;
	setup_with(&f, DEEPSPEED_WITH("true", GH200_LABEL), GPU_JOB, NULL);
	plan_in(&f, &adm, &test_config);
	assert_int_equal(count(f.plan, TJ_ACTION_CREATE_POD), 0);
	assert_true(f.plan->gang.want.wanted);
	assert_non_null(f.plan->gang.want.launcher);
	teardown(&f);
}

/* The nodes Ready, the first holding the launcher's place: the launcher goes there, pinned
 * as the ranks are, and nothing more is wanted. Without the hold (a gang created before it),
 * the launcher is created for the scheduler to place. */
static void test_launcher_pinned_to_its_held_place(void **state)
{
	const struct tj_admission_ticket adm = { 0 };
	const struct tj_action *launcher;
	char *hold = NULL, *affinity;
	cJSON *lp = jlit("{'metadata':{'name':'vit-launcher-0-0-a0'},'spec':{'containers':["
	                 "{'name':'node','resources':{'limits':{'nvidia.com/gpu':4}}}]}}");
	struct fixture f;

	(void)state;
	assert_int_equal(tj_launcher_hold_format(lp, "gh-3", &hold), 0);
	cJSON_Delete(lp);
	for (int held = 1; held >= 0; held--) {
		setup_with(&f, DEEPSPEED_WITH("true", GH200_LABEL), GPU_JOB, STARTED);
		add_pod(&f, "vit-node-0-0-a0", 0, TJ_POD_RUNNING, true);
		add_pod(&f, "vit-node-0-1-a0", 1, TJ_POD_RUNNING, true);
		if (held)
			f.pods[0].launcher_hold = hold;
		plan_in(&f, &adm, &test_config);
		assert_false(f.plan->gang.want.wanted);
		launcher = find(f.plan, TJ_ACTION_CREATE_POD, "vit-launcher-0-0-a0");
		assert_non_null(launcher);
		assert_json_equal(tj_json_path(container(launcher->object), "resources"),
		                  "{'limits':{'nvidia.com/gpu':4}}");
		if (held) {
			assert_string_equal(
			        cJSON_GetStringValue(cJSON_GetObjectItem(
			                tj_json_path(launcher->object, "metadata.annotations"),
			                "trainjob.flame.dev/node")),
			        "gh-3");
			affinity = cJSON_PrintUnformatted(
			        tj_json_path(launcher->object, "spec.affinity"));
			assert_non_null(affinity);
			assert_non_null(strstr(affinity, "{\"key\":\"metadata.name\",\"operator\":"
			                                 "\"In\",\"values\":[\"gh-3\"]}"));
			free(affinity);
		} else {
			assert_null(cJSON_GetObjectItem(
			        tj_json_path(launcher->object, "metadata.annotations"),
			        "trainjob.flame.dev/node"));
		}
		teardown(&f);
	}
	free(hold);
}

/* The pods exist but no status recorded the start (the plan that created them lost its
 * patch): the Admitted event is told again from the pods, the launcher's place from the
 * hold. */
static void test_admission_told_again_from_the_hold(void **state)
{
	const struct tj_admission_ticket adm = { 0 };
	const struct tj_action *ev = NULL;
	char *hold = NULL;
	cJSON *lp = jlit("{'metadata':{'name':'vit-launcher-0-0-a0'},'spec':{'containers':["
	                 "{'name':'node','resources':{'limits':{'nvidia.com/gpu':4}}}]}}");
	struct fixture f;

	(void)state;
	assert_int_equal(tj_launcher_hold_format(lp, "gh-3", &hold), 0);
	cJSON_Delete(lp);
	setup_with(&f, DEEPSPEED_WITH("true", GH200_LABEL), GPU_JOB, NULL);
	add_pod(&f, "vit-node-0-0-a0", 0, TJ_POD_PENDING, false);
	add_pod(&f, "vit-node-0-1-a0", 1, TJ_POD_PENDING, false);
	f.pods[0].node_name = f.pods[1].node_name = NULL;
	f.pods[0].pinned_node = "gh-1";
	f.pods[1].pinned_node = "gh-2";
	f.pods[0].launcher_hold = hold;
	plan_in(&f, &adm, &test_config);
	for (size_t i = 0; i < f.plan->n_actions; i++)
		if (f.plan->actions[i].kind == TJ_ACTION_EVENT &&
		    strcmp(f.plan->actions[i].reason, "Admitted") == 0)
			ev = &f.plan->actions[i];
	assert_non_null(ev);
	assert_string_equal(ev->message,
	                    "2 pods pinned to gh-1, gh-2, the launcher's place on gh-3");
	assert_false(f.plan->gang.want.wanted);
	teardown(&f);
	free(hold);
}

/* The annotation's text: what format writes, parse reads back; anything else holds
 * nothing. */
static void test_launcher_hold_text(void **state)
{
	cJSON *lp = jlit("{'metadata':{'name':'ds-launcher-0-0-a1'},'spec':{'containers':["
	                 "{'name':'node','resources':{'requests':{'cpu':'1500m','memory':'2Gi',"
	                 "'nvidia.com/gpu':'2'}}},{'name':'side','resources':{'requests':{"
	                 "'cpu':'500m'}}}]}}");
	struct tj_launcher_hold h;
	char *text = NULL, long_text[TJ_LAUNCHER_HOLD_MAX + 16];
	static const char *const bad[] = {
		"", "not json", "[]", "{'pod':'p'}", "{'pod':'','node':'n'}",
	};

	(void)state;
	assert_int_equal(tj_launcher_hold_format(lp, "gh-1", &text), 0);
	assert_int_equal(tj_launcher_hold_parse(text, &h), 0);
	assert_string_equal(h.pod, "ds-launcher-0-0-a1");
	assert_string_equal(h.node, "gh-1");
	assert_int_equal(h.cpu_milli, 2000);
	assert_int_equal(h.memory, 2LL * 1024 * 1024 * 1024);
	assert_int_equal(tj_launcher_hold_extended(&h, "nvidia.com/gpu"), 2);
	assert_int_equal(tj_launcher_hold_extended(&h, "amd.com/gpu"), 0);
	free(text);
	cJSON_Delete(lp);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char dq[128];

		snprintf(dq, sizeof(dq), "%s", bad[i]);
		for (char *c = dq; *c; c++)
			if (*c == '\'')
				*c = '"';
		assert_int_equal(tj_launcher_hold_parse(dq, &h), -EINVAL);
	}
	memset(long_text, ' ', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	assert_int_equal(tj_launcher_hold_parse(long_text, &h), -EINVAL);
	lp = jlit("{'spec':{}}");
	assert_int_equal(tj_launcher_hold_format(lp, "gh-1", &text), -EINVAL);
	cJSON_Delete(lp);
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
		cmocka_unit_test(test_admitted_gang_holds_the_launchers_place),
		cmocka_unit_test(test_admission_without_the_launcher_is_not_taken),
		cmocka_unit_test(test_launcher_pinned_to_its_held_place),
		cmocka_unit_test(test_admission_told_again_from_the_hold),
		cmocka_unit_test(test_launcher_hold_text),
	};
	return cmocka_run_group_tests_name("plan_mpi", tests, NULL, NULL);
}
