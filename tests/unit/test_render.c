#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/json.h"
#include "reconcilers/render/render.h"

/* Every pod gets the deadline file (reconcilers/policy/walltime.h), in every container (\u0027 is
 * the quote the literals cannot hold). */
#define DEADLINE_MOUNT  "{'name':'trainjob-deadline','mountPath':'/etc/trainjob','readOnly':true}"
#define DEADLINE_MOUNTS "'volumeMounts':[" DEADLINE_MOUNT "]"
#define DEADLINE_VOLUME                                                                            \
	"{'name':'trainjob-deadline','downwardAPI':{'items':[{'path':'deadline','fieldRef':{"      \
	"'fieldPath':'metadata.annotations[\\u0027trainjob.flame.dev/deadline\\u0027]'}}]}}"

#define VIT_SPEC                                                                                   \
	"{'runtimeRef':{'name':'torch-gh200'},'trainer':{'image':'ghcr.io/x/vit:1',"               \
	"'args':['--epochs','3'],'env':[{'name':'NCCL_DEBUG','value':'INFO'},"                     \
	"{'name':'HF_TOKEN','valueFrom':{'secretKeyRef':{'name':'hf','key':'token'}}}],"           \
	"'numNodes':4,'resourcesPerNode':{'limits':{'nvidia.com/gpu':4,'memory':'200Gi'}}}}"

static cJSON *render_one(const char *spec, const char *runtime, const struct tj_gpu_class *cls,
                         const char *const *excluded, size_t n_excluded, int rank, int attempt)
{
	struct tj_trainjob *job = make_job(spec);
	struct tj_runtime *rt = make_runtime(runtime);
	struct tj_render *r = NULL;
	struct tj_problem why = { "", "" };
	cJSON *pod = NULL;

	assert_int_equal(
	        tj_render_prepare(&(struct tj_render_input){ .job = job,
	                                                     .runtime = rt,
	                                                     .gpu_class = cls,
	                                                     .excluded_nodes = excluded,
	                                                     .n_excluded_nodes = n_excluded },
	                          &r, &why),
	        0);
	assert_int_equal(tj_render_pod(r, rank, attempt, &pod), 0);
	tj_render_free(r);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
	return pod;
}

/* Every field of a pod of the Vision Transformer job: the runtime's template, the trainer
 * fields, and every field the controller owns. */
static void test_full_pod(void **state)
{
	const char *excluded[] = { "gh200-7" };
	cJSON *pod = render_one(VIT_SPEC, "torch-gh200", &test_classes[0], excluded, 1, 2, 1);

	assert_json_equal(
	        pod,
	        "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'vit-node-0-2-a1',"
	        "'namespace':'team-a','labels':{'team':'ml',"
	        "'trainer.kubeflow.org/trainjob-ancestor-step':'trainer','jobset.sigs.k8s.io/"
	        "job-index':'0',"
	        "'trainer.kubeflow.org/trainjob-name':'vit','jobset.sigs.k8s.io/jobset-name':'vit',"
	        "'jobset.sigs.k8s.io/replicatedjob-name':'node','trainjob.flame.dev/rank':'2',"
	        "'batch.kubernetes.io/job-completion-index':'2','trainjob.flame.dev/attempt':'1'},"
	        "'annotations':{'batch.kubernetes.io/job-completion-index':'2'},"
	        "'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/"
	        "v1alpha1','kind':'TrainJob',"
	        "'name':'vit','uid':'uid-vit','controller':true,'blockOwnerDeletion':true}]},"
	        "'spec':{'containers':[{'name':'node','image':'ghcr.io/x/vit:1',"
	        "'command':['torchrun'],'args':['--epochs','3','train.py'],"
	        "'env':[{'name':'NCCL_DEBUG','value':'INFO'},"
	        "{'name':'HF_TOKEN','valueFrom':{'secretKeyRef':{'name':'hf','key':'token'}}},"
	        "{'name':'PET_NNODES','value':'4'},{'name':'PET_NPROC_PER_NODE','value':'4'},"
	        "{'name':'PET_NODE_RANK','value':'2'},"
	        "{'name':'PET_MASTER_ADDR','value':'vit-node-0-0.vit'},"
	        "{'name':'PET_MASTER_PORT','value':'29500'},"
	        "{'name':'MASTER_ADDR','value':'vit-node-0-0.vit'},"
	        "{'name':'MASTER_PORT','value':'29500'},{'name':'WORLD_SIZE','value':'16'},"
	        "{'name':'NODE_RANK','value':'2'},{'name':'RANK','value':'8'},"
	        "{'name':'LOCAL_WORLD_SIZE','value':'4'}],"
	        "'resources':{'limits':{'nvidia.com/gpu':4,'memory':'200Gi'},"
	        "'requests':{'nvidia.com/gpu':4}},"
	        "'ports':[{'containerPort':29500,'protocol':'TCP'}]," DEADLINE_MOUNTS
	        ",'terminationMessagePolicy':'FallbackToLogsOnError'},"
	        "{'name':'sidecar','image':'busybox'," DEADLINE_MOUNTS
	        ",'terminationMessagePolicy':'FallbackToLogsOnError'}],"
	        "'volumes':[{'name':'shm','emptyDir':{'medium':'Memory'}}," DEADLINE_VOLUME "],"
	        "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
	        "'nodeSelectorTerms':[{'matchExpressions':["
	        "{'key':'nvidia.com/gpu.product','operator':'In','values':['NVIDIA-GH200-480GB']},"
	        "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}],"
	        "'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['gh200-7']}]}]}"
	        "}},"
	        "'tolerations':[{'key':'nvidia.com/"
	        "gpu','operator':'Exists','effect':'NoSchedule'}],"
	        "'restartPolicy':'Never','subdomain':'vit','hostname':'vit-node-0-2'}}");
	cJSON_Delete(pod);
}

/* A generic runtime (no GPU class) and no excluded node: no affinity, no tolerations. */
static void test_no_class_no_placement(void **state)
{
	cJSON *pod = render_one("{'runtimeRef':{'name':'torch-distributed'}}", "torch-distributed",
	                        NULL, NULL, 0, 0, 0);
	const cJSON *spec = cJSON_GetObjectItem(pod, "spec");

	assert_null(cJSON_GetObjectItem(spec, "affinity"));
	assert_null(cJSON_GetObjectItem(spec, "tolerations"));
	assert_string_equal(tj_json_string(pod, "metadata.name"), "vit-node-0-0-a0");
	assert_string_equal(tj_json_string(spec, "hostname"), "vit-node-0-0");
	assert_json_equal(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 0),
	                            "env"),
	        "[{'name':'NCCL_DEBUG','value':'WARN'},{'name':'PET_NNODES','value':'1'},"
	        "{'name':'PET_NPROC_PER_NODE','value':'1'},{'name':'PET_NODE_RANK','value':'0'},"
	        "{'name':'PET_MASTER_ADDR','value':'vit-node-0-0.vit'},"
	        "{'name':'PET_MASTER_PORT','value':'29500'},"
	        "{'name':'MASTER_ADDR','value':'vit-node-0-0.vit'},"
	        "{'name':'MASTER_PORT','value':'29500'},{'name':'WORLD_SIZE','value':'1'},"
	        "{'name':'NODE_RANK','value':'0'},{'name':'RANK','value':'0'},"
	        "{'name':'LOCAL_WORLD_SIZE','value':'1'}]");
	cJSON_Delete(pod);
}

struct procs_case {
	const char *name;
	const char *trainer; /* the JSON of spec.trainer */
	int want_procs;
	const char *want_requests; /* the JSON of the node container's resources.requests */
};

static const struct procs_case procs_cases[] = {
	{ "auto with GPUs in limits",
	  "{'numNodes':2,'resourcesPerNode':{'limits':{'nvidia.com/gpu':'2'}}}", 2,
	  "{'nvidia.com/gpu':'2'}" },
	{ "auto with GPUs in requests only",
	  "{'numNodes':2,'resourcesPerNode':{'requests':{'nvidia.com/gpu':3,'cpu':'8'}}}", 3,
	  "{'nvidia.com/gpu':3,'cpu':'8'}" },
	{ "auto without GPUs uses the CPUs", "{'resourcesPerNode':{'limits':{'cpu':'6'}}}", 6,
	  NULL },
	{ "auto with millicpus rounds down to at least 1",
	  "{'resourcesPerNode':{'requests':{'cpu':'500m'}}}", 1, "{'cpu':'500m'}" },
	{ "auto without resources is 1", "{}", 1, NULL },
	{ "an integer is used as is",
	  "{'numProcPerNode':2,'resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}}", 2,
	  "{'nvidia.com/gpu':4}" },
	{ "gpu is the GPU count",
	  "{'numProcPerNode':'gpu','resourcesPerNode':{'limits':{'nvidia.com/gpu':8}}}", 8,
	  "{'nvidia.com/gpu':8}" },
	{ "cpu is the CPU count",
	  "{'numProcPerNode':'cpu','resourcesPerNode':{'limits':{'nvidia.com/gpu':1,'cpu':4}}}", 4,
	  "{'nvidia.com/gpu':1}" },
};

static void test_procs_table(void **state)
{
	for (size_t i = 0; i < sizeof(procs_cases) / sizeof(procs_cases[0]); i++) {
		const struct procs_case *c = &procs_cases[i];
		char spec[1024];
		struct tj_trainjob *job;
		struct tj_runtime *rt = make_runtime("torch-gh200");
		struct tj_render *r = NULL;
		struct tj_problem why = { "", "" };
		cJSON *pod = NULL;
		const cJSON *node;

		print_message("# case: %s\n", c->name);
		snprintf(spec, sizeof(spec), "{'runtimeRef':{'name':'torch-gh200'},'trainer':%s}",
		         c->trainer);
		job = make_job(spec);
		assert_int_equal(tj_render_prepare(
		                         &(struct tj_render_input){ .job = job,
		                                                    .runtime = rt,
		                                                    .gpu_class = &test_classes[0] },
		                         &r, &why),
		                 0);
		assert_int_equal(tj_render_procs_per_node(r), c->want_procs);
		assert_int_equal(tj_render_num_nodes(r), job->num_nodes ? job->num_nodes : 1);
		assert_int_equal(tj_render_pod(r, 0, 0, &pod), 0);
		node = cJSON_GetArrayItem(tj_json_path(pod, "spec.containers"), 0);
		if (c->want_requests)
			assert_json_equal(tj_json_path(node, "resources.requests"),
			                  c->want_requests);
		else
			assert_null(tj_json_path(node, "resources.requests"));
		cJSON_Delete(pod);
		tj_render_free(r);
		tj_runtime_free(rt);
		tj_trainjob_free(job);
	}
}

/* resourcesPerNode over the node container's resources, as Kubeflow Trainer merges them
 * (MergeResourceRequirements, a strategic merge patch): limits and requests per resource,
 * claims by name, the rest of the template's kept. */
#define RESOURCES_RUNTIME                                                                          \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"           \
	"'metadata':{'name':'torch-gh200'},'spec':{'mlPolicy':{'numNodes':1,'torch':{}},"          \
	"'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"   \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':{'spec':{"  \
	"'containers':[{'name':'node','image':'x','resources':{'limits':{'nvidia.com/gpu':'4',"    \
	"'memory':'200Gi'},'requests':{'nvidia.com/gpu':'4','cpu':'8'},'claims':[{'name':'a'}]}}"  \
	"]}}}}}]}}}}"

struct merge_case {
	const char *name;
	const char *resources_per_node; /* NULL: unset */
	const char *want;               /* the node container's resources */
};

static const struct merge_case merge_cases[] = {
	{ "unset: the template's resources", NULL,
	  "{'limits':{'nvidia.com/gpu':'4','memory':'200Gi'},'requests':{'nvidia.com/gpu':'4',"
	  "'cpu':'8'},'claims':[{'name':'a'}]}" },
	{ "a limit the TrainJob names replaces the template's; the others stay",
	  "{'limits':{'memory':'300Gi'}}",
	  "{'limits':{'nvidia.com/gpu':'4','memory':'300Gi'},'requests':{'nvidia.com/gpu':'4',"
	  "'cpu':'8'},'claims':[{'name':'a'}]}" },
	{ "a request merges per name", "{'requests':{'cpu':'16','memory':'64Gi'}}",
	  "{'limits':{'nvidia.com/gpu':'4','memory':'200Gi'},'requests':{'nvidia.com/gpu':'4',"
	  "'cpu':'16','memory':'64Gi'},'claims':[{'name':'a'}]}" },
	{ "GPUs in limits only: the request follows the TrainJob's count, not the template's",
	  "{'limits':{'nvidia.com/gpu':2}}",
	  "{'limits':{'nvidia.com/gpu':2,'memory':'200Gi'},'requests':{'cpu':'8',"
	  "'nvidia.com/gpu':2},'claims':[{'name':'a'}]}" },
	{ "GPUs on both sides", "{'limits':{'nvidia.com/gpu':1},'requests':{'nvidia.com/gpu':1}}",
	  "{'limits':{'nvidia.com/gpu':1,'memory':'200Gi'},'requests':{'nvidia.com/gpu':1,"
	  "'cpu':'8'},'claims':[{'name':'a'}]}" },
	{ "claims merge by name", "{'claims':[{'name':'b'},{'name':'a','request':'r'}]}",
	  "{'limits':{'nvidia.com/gpu':'4','memory':'200Gi'},'requests':{'nvidia.com/gpu':'4',"
	  "'cpu':'8'},'claims':[{'name':'a','request':'r'},{'name':'b'}]}" },
};

static void test_resources_merge_table(void **state)
{
	for (size_t i = 0; i < sizeof(merge_cases) / sizeof(merge_cases[0]); i++) {
		const struct merge_case *c = &merge_cases[i];
		char spec[1024];
		struct tj_trainjob *job;
		struct tj_runtime *rt = NULL;
		struct tj_render *r = NULL;
		struct tj_problem why = { "", "" };
		cJSON *pod = NULL, *j = jlit(RESOURCES_RUNTIME);

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_runtime_from_json(j, &rt), 0);
		cJSON_Delete(j);
		if (c->resources_per_node)
			snprintf(spec, sizeof(spec),
			         "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'"
			         "resourcesPerNode':%s}}",
			         c->resources_per_node);
		else
			snprintf(spec, sizeof(spec), "{'runtimeRef':{'name':'torch-gh200'}}");
		job = make_job(spec);
		assert_int_equal(tj_render_prepare(
		                         &(struct tj_render_input){ .job = job,
		                                                    .runtime = rt,
		                                                    .gpu_class = &test_classes[0] },
		                         &r, &why),
		                 0);
		assert_int_equal(tj_render_pod(r, 0, 0, &pod), 0);
		assert_json_equal(
		        tj_json_path(cJSON_GetArrayItem(tj_json_path(pod, "spec.containers"), 0),
		                     "resources"),
		        c->want);
		cJSON_Delete(pod);
		tj_render_free(r);
		tj_runtime_free(rt);
		tj_trainjob_free(job);
	}
}

struct error_case {
	const char *name;
	const char *spec;
	const char *runtime_sq; /* NULL: the standard runtime torch-gh200 */
	const char *want_reason;
	const char *want_message;
};

static const struct error_case error_cases[] = {
	{ "reserved env name",
	  "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'env':[{'name':'A','value':'1'},{'name':"
	  "'WORLD_SIZE','value':'8'}]}}",
	  NULL, "InvalidSpec",
	  "spec.trainer.env[1].name: WORLD_SIZE is set by the controller (torchrun wiring); "
	  "remove it from the TrainJob" },
	{ "PET_ name is reserved too",
	  "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'env':[{'name':'PET_MASTER_PORT','value'"
	  ":'1'}]}}",
	  NULL, "InvalidSpec",
	  "spec.trainer.env[0].name: PET_MASTER_PORT is set by the controller (torchrun wiring); "
	  "remove it from the TrainJob" },
	{ "numProcPerNode gpu without GPUs",
	  "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numProcPerNode':'gpu'}}", NULL,
	  "InvalidSpec",
	  "spec.trainer.numProcPerNode: gpu, but the node container requests no GPUs "
	  "(spec.trainer.resourcesPerNode)" },
	{ "numProcPerNode auto with billions of GPUs (found by fuzz_trainjob: WORLD_SIZE "
	  "overflowed)",
	  "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'resourcesPerNode':{'limits':{'nvidia."
	  "com/gpu':'3340530688'}}}}",
	  NULL, "InvalidSpec",
	  "numProcPerNode: auto comes to 3340530688 processes per node; at most 1024" },
	{ "fractional GPUs",
	  "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'resourcesPerNode':{'limits':{'nvidia."
	  "com/gpu':'0.5'}}}}",
	  NULL, "InvalidSpec",
	  "resources.limits of container node: nvidia.com/gpu \"0.5\" is not a whole number of "
	  "GPUs (spec.trainer.resourcesPerNode)" },
	{ "GPUs in milli-units, as a request",
	  "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'resourcesPerNode':{'requests':{'nvidia."
	  "com/gpu':'500m'},'limits':{'nvidia.com/gpu':'4'}}}}",
	  NULL, "InvalidSpec",
	  "resources.requests of container node: nvidia.com/gpu \"500m\" is not a whole number "
	  "of GPUs (spec.trainer.resourcesPerNode)" },
	{ "a fractional number of GPUs",
	  "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'resourcesPerNode':{'limits':{'nvidia."
	  "com/gpu':1.5}}}}",
	  NULL, "InvalidSpec",
	  "resources.limits of container node: nvidia.com/gpu 1.5 is not a whole number of GPUs "
	  "(spec.trainer.resourcesPerNode)" },
	{ "runtime patch of a container that does not exist",
	  "{'runtimeRef':{'name':'torch-gh200'},'runtimePatches':[{'manager':'a'},{'manager':'b',"
	  "'trainingRuntimeSpec':{'template':{'spec':{'replicatedJobs':[{'name':'launcher'},"
	  "{'name':'node','template':{'spec':{'template':{'spec':{'containers':[{'name':'"
	  "logger'}]}}}}}]}}}}]}",
	  NULL, "InvalidSpec",
	  "spec.runtimePatches[1].trainingRuntimeSpec.template.spec.replicatedJobs[1].template."
	  "spec.template.spec.containers[0]: the runtime's node pod has no container named "
	  "'logger'" },
	{ "override of a container that does not exist",
	  "{'runtimeRef':{'name':'torch-gh200'},'podTemplateOverrides':[{'targetJobs':[{'name':'"
	  "node'}],"
	  "'spec':{'containers':[{'name':'sidecar'},{'name':'logger','env':[{'name':'A','value':'1'"
	  "}]}]}}]}",
	  NULL, "InvalidSpec",
	  "spec.podTemplateOverrides[0].spec.containers[1]: the runtime's node pod has no "
	  "container named 'logger'" },
	{ "override of the node container's env",
	  "{'runtimeRef':{'name':'torch-gh200'},'podSpecOverrides':[{'targetJobs':[{'name':'node'}]"
	  ","
	  "'containers':[{'name':'node','env':[{'name':'A','value':'1'}]}]}]}",
	  NULL, "InvalidSpec",
	  "spec.podSpecOverrides[0].containers[0].env: the env of container node is set through "
	  "spec.trainer.env, not through overrides" },
	{ "runtime without a node job", "{'runtimeRef':{'name':'mpi'}}",
	  "{'kind':'ClusterTrainingRuntime','metadata':{'name':'mpi'},'spec':{'template':{'spec':"
	  "{'replicatedJobs':[{'name':'launcher','template':{'spec':{'template':{'spec':{}}}}}]}}}"
	  "}",
	  "InvalidRuntime",
	  "ClusterTrainingRuntime mpi has no replicatedJob named node "
	  "(spec.template.spec.replicatedJobs[].name); this controller runs the node job's pod "
	  "template once per node" },
	{ "runtime without a node container",
	  "{'runtimeRef':{'name':'odd','kind':'TrainingRuntime'}}",
	  "{'kind':'TrainingRuntime','metadata':{'name':'odd','namespace':'team-a'},'spec':{'"
	  "template':"
	  "{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':"
	  "{'containers':[{'name':'trainer','image':'x'}]}}}}}]}}}}",
	  "InvalidRuntime",
	  "TrainingRuntime odd: the node job's pod template has no container named node" },
};

static void test_errors_table(void **state)
{
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const struct error_case *c = &error_cases[i];
		struct tj_trainjob *job = make_job(c->spec);
		struct tj_runtime *rt = NULL;
		struct tj_render *r = (struct tj_render *)0x1;
		struct tj_problem why = { "", "" };

		print_message("# case: %s\n", c->name);
		if (c->runtime_sq) {
			cJSON *j = jlit(c->runtime_sq);

			assert_int_equal(tj_runtime_from_json(j, &rt), 0);
			cJSON_Delete(j);
		} else {
			rt = make_runtime("torch-gh200");
		}
		assert_int_equal(tj_render_prepare(
		                         &(struct tj_render_input){ .job = job,
		                                                    .runtime = rt,
		                                                    .gpu_class = &test_classes[0] },
		                         &r, &why),
		                 -EINVAL);
		assert_ptr_equal(r, (struct tj_render *)0x1); /* untouched on error */
		assert_string_equal(why.reason, c->want_reason);
		assert_string_equal(why.message, c->want_message);
		tj_runtime_free(rt);
		tj_trainjob_free(job);
	}
}

/* podSpecOverrides (v2.0) then podTemplateOverrides (v2.1), later entries winning: maps
 * merged, lists merged by their keys, tolerations added, affinity terms kept and ANDed with
 * the class placement; entries that target other jobs are skipped. */
static void test_overrides(void **state)
{
	const char *spec =
	        "{'runtimeRef':{'name':'torch-gh200'},"
	        "'podSpecOverrides':[{'targetJobs':[{'name':'node'}],'serviceAccountName':'old',"
	        "'nodeSelector':{'zone':'a','rack':'1'}}],"
	        "'podTemplateOverrides':["
	        "{'targetJobs':[{'name':'dataset-initializer'}],'spec':{'serviceAccountName':'no'}}"
	        ","
	        "{'targetJobs':[{'name':'node'}],'metadata':{'labels':{'kueue.x-k8s.io/"
	        "queue-name':'q',"
	        "'team':'vision'},'annotations':{'note':'x'}},"
	        "'spec':{'serviceAccountName':'trainer','nodeSelector':{'zone':'b'},"
	        "'tolerations':[{'key':'dedicated','operator':'Equal','value':'ml','effect':'"
	        "NoSchedule'},"
	        "{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoSchedule'}],"
	        "'volumes':[{'name':'shm','emptyDir':{'medium':'Memory','sizeLimit':'8Gi'}},"
	        "{'name':'data','persistentVolumeClaim':{'claimName':'imagenet'}}],"
	        "'containers':[{'name':'node','volumeMounts':[{'name':'data','mountPath':'/"
	        "data'}]},"
	        "{'name':'sidecar','env':[{'name':'MODE','value':'tail'}]}],"
	        "'schedulingGates':[{'name':'example.com/wait'}],"
	        "'imagePullSecrets':[{'name':'regcred'}],"
	        "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
	        "'nodeSelectorTerms':[{'matchExpressions':[{'key':'pool','operator':'In','values':["
	        "'a']}]},"
	        "{'matchExpressions':[{'key':'pool','operator':'In','values':['b']}]}]}}}}}]}";
	cJSON *pod = render_one(spec, "torch-gh200", &test_classes[0], NULL, 0, 0, 0);
	const cJSON *pspec = cJSON_GetObjectItem(pod, "spec");
	const cJSON *containers = cJSON_GetObjectItem(pspec, "containers");

	assert_json_equal(
	        tj_json_path(pod, "metadata.labels"),
	        "{'team':'vision','kueue.x-k8s.io/queue-name':'q',"
	        "'trainer.kubeflow.org/trainjob-ancestor-step':'trainer','jobset.sigs.k8s.io/"
	        "job-index':'0',"
	        "'trainer.kubeflow.org/trainjob-name':'vit','jobset.sigs.k8s.io/jobset-name':'vit',"
	        "'jobset.sigs.k8s.io/replicatedjob-name':'node','trainjob.flame.dev/rank':'0',"
	        "'batch.kubernetes.io/job-completion-index':'0','trainjob.flame.dev/attempt':'0'}");
	assert_json_equal(tj_json_path(pod, "metadata.annotations"),
	                  "{'note':'x','batch.kubernetes.io/job-completion-index':'0'}");
	assert_string_equal(tj_json_string(pspec, "serviceAccountName"), "trainer");
	assert_json_equal(cJSON_GetObjectItem(pspec, "nodeSelector"), "{'zone':'b','rack':'1'}");
	assert_json_equal(
	        cJSON_GetObjectItem(pspec, "tolerations"),
	        "[{'key':'dedicated','operator':'Equal','value':'ml','effect':'NoSchedule'},"
	        "{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoSchedule'}]");
	assert_json_equal(
	        cJSON_GetObjectItem(pspec, "volumes"),
	        "[{'name':'shm','emptyDir':{'medium':'Memory','sizeLimit':'8Gi'}},"
	        "{'name':'data','persistentVolumeClaim':{'claimName':'imagenet'}}," DEADLINE_VOLUME
	        "]");
	assert_json_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(containers, 0), "volumeMounts"),
	                  "[{'name':'data','mountPath':'/data'}," DEADLINE_MOUNT "]");
	assert_json_equal(cJSON_GetArrayItem(containers, 1),
	                  "{'name':'sidecar','image':'busybox','env':[{'name':'MODE','value':'tail'"
	                  "}]," DEADLINE_MOUNTS
	                  ",'terminationMessagePolicy':'FallbackToLogsOnError'}");
	assert_json_equal(cJSON_GetObjectItem(pspec, "schedulingGates"),
	                  "[{'name':'example.com/wait'}]");
	assert_json_equal(cJSON_GetObjectItem(pspec, "imagePullSecrets"), "[{'name':'regcred'}]");
	assert_json_equal(
	        cJSON_GetObjectItem(pspec, "affinity"),
	        "{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{'"
	        "nodeSelectorTerms':["
	        "{'matchExpressions':[{'key':'pool','operator':'In','values':['a']},"
	        "{'key':'nvidia.com/gpu.product','operator':'In','values':['NVIDIA-GH200-480GB']},"
	        "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}]},"
	        "{'matchExpressions':[{'key':'pool','operator':'In','values':['b']},"
	        "{'key':'nvidia.com/gpu.product','operator':'In','values':['NVIDIA-GH200-480GB']},"
	        "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}]}]}}}");
	cJSON_Delete(pod);
}

/* Reserved names in the runtime's own env are replaced, not duplicated; a containerPort
 * 29500 already there is kept once. */
/* runtimePatches (Kubeflow's SDK RuntimePatch option): the node job's pod template patch of
 * each patch, in list order and after podTemplateOverrides; other jobs' patches are
 * skipped; the JobSet's and the node Job's labels go on the pod (job_metadata.h). */
static void test_runtime_patches(void **state)
{
	const char *spec =
	        "{'runtimeRef':{'name':'torch-gh200'},"
	        "'podTemplateOverrides':[{'targetJobs':[{'name':'node'}],"
	        "'spec':{'nodeSelector':{'zone':'a','rack':'1'}}}],"
	        "'runtimePatches':[{'manager':'trainer.kubeflow.org/kubeflow-sdk',"
	        "'trainingRuntimeSpec':{'template':{'metadata':{'labels':{'jobset':'x'}},"
	        "'spec':{'replicatedJobs':["
	        "{'name':'launcher','template':{'spec':{'template':{'metadata':{'annotations':{"
	        "'launcher':'y'}},'spec':{'serviceAccountName':'no'}}}}},"
	        "{'name':'node','template':{'metadata':{'labels':{'job':'x'}},'spec':{'template':{"
	        "'metadata':{'labels':{'team':'sdk'},'annotations':{'sim.trainjob.flame.dev/"
	        "run-time':'3s'}},"
	        "'spec':{'serviceAccountName':'sdk','nodeSelector':{'zone':'b'}}}}}}]}}}},"
	        "{'manager':'kueue.x-k8s.io/manager','trainingRuntimeSpec':{'template':{'spec':{"
	        "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
	        "'serviceAccountName':'kueue'}}}}}]}}}}]}";
	cJSON *pod = render_one(spec, "torch-gh200", &test_classes[0], NULL, 0, 0, 0);
	const cJSON *pspec = cJSON_GetObjectItem(pod, "spec");

	assert_json_equal(
	        tj_json_path(pod, "metadata.labels"),
	        "{'team':'sdk','jobset':'x','job':'x','trainer.kubeflow.org/trainjob-name':'vit',"
	        "'trainer.kubeflow.org/trainjob-ancestor-step':'trainer','jobset.sigs.k8s.io/"
	        "job-index':'0',"
	        "'jobset.sigs.k8s.io/jobset-name':'vit','jobset.sigs.k8s.io/replicatedjob-name':'"
	        "node',"
	        "'trainjob.flame.dev/rank':'0','batch.kubernetes.io/job-completion-index':'0',"
	        "'trainjob.flame.dev/attempt':'0'}");
	assert_json_equal(tj_json_path(pod, "metadata.annotations"),
	                  "{'sim.trainjob.flame.dev/run-time':'3s',"
	                  "'batch.kubernetes.io/job-completion-index':'0'}");
	assert_string_equal(tj_json_string(pspec, "serviceAccountName"), "kueue");
	assert_json_equal(cJSON_GetObjectItem(pspec, "nodeSelector"), "{'zone':'b','rack':'1'}");
	cJSON_Delete(pod);
}

static void test_runtime_env_and_port_not_duplicated(void **state)
{
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'r'}}");
	cJSON *j = jlit(
	        "{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{'template':"
	        "{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':"
	        "{'containers':[{'name':'node','image':'x','ports':[{'containerPort':29500}],"
	        "'env':[{'name':'RANK','value':'7'},{'name':'KEEP','value':'1'}]}]}}}}}]}}}}");
	struct tj_runtime *rt = NULL;
	struct tj_render *r = NULL;
	struct tj_problem why = { "", "" };
	cJSON *pod = NULL;
	const cJSON *node;
	int n_rank = 0;
	const cJSON *e;

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	assert_int_equal(
	        tj_render_prepare(&(struct tj_render_input){ .job = job, .runtime = rt }, &r, &why),
	        0);
	assert_int_equal(tj_render_pod(r, 0, 3, &pod), 0);
	node = cJSON_GetArrayItem(tj_json_path(pod, "spec.containers"), 0);
	assert_json_equal(cJSON_GetObjectItem(node, "ports"), "[{'containerPort':29500}]");
	assert_string_equal(
	        tj_json_string(cJSON_GetArrayItem(cJSON_GetObjectItem(node, "env"), 0), "name"),
	        "KEEP");
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(node, "env"))
	{
		if (strcmp(tj_json_string(e, "name"), "RANK") == 0) {
			n_rank++;
			assert_string_equal(tj_json_string(e, "value"), "0");
		}
	}
	assert_int_equal(n_rank, 1);
	assert_string_equal(tj_json_string(pod, "metadata.name"), "vit-node-0-0-a3");
	cJSON_Delete(pod);
	cJSON_Delete(j);
	tj_render_free(r);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
}

/* A node pod of an MPI runtime (Kubeflow's deepspeed-distributed): the trainer's env but not
 * its image, command or args; no torchrun wiring and no torch port, as Kubeflow's MPI runtimes have
 * no torch plugin; mpirun on the launcher starts the processes. */
static void test_mpi_node_has_no_torchrun_wiring(void **state)
{
	struct tj_trainjob *job = make_job(
	        "{'runtimeRef':{'name':'deepspeed-distributed'},'trainer':{'image':'mine',"
	        "'command':['mpirun'],'args':['python3'],'env':[{'name':'E','value':'2'}]}}");
	cJSON *j = jlit(
	        "{'kind':'ClusterTrainingRuntime','metadata':{'name':'deepspeed-distributed'},"
	        "'spec':{'mlPolicy':{'numNodes':1,'mpi':{'numProcPerNode':1,'runLauncherAsNode':"
	        "true}},"
	        "'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{"
	        "'template':{'spec':{'containers':[{'name':'node','image':'ds','command':["
	        "'/usr/sbin/sshd'],'args':['-De'],'env':[{'name':'KEEP','value':'1'}]}]}}}}}]}}}}");
	struct tj_runtime *rt = NULL;
	struct tj_render *r = NULL;
	struct tj_problem why = { "", "" };
	cJSON *pod = NULL;
	const cJSON *node;

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	assert_int_equal(
	        tj_render_prepare(&(struct tj_render_input){ .job = job, .runtime = rt }, &r, &why),
	        0);
	assert_int_equal(tj_render_pod(r, 0, 0, &pod), 0);
	node = cJSON_GetArrayItem(tj_json_path(pod, "spec.containers"), 0);
	assert_json_equal(cJSON_GetObjectItem(node, "env"),
	                  "[{'name':'KEEP','value':'1'},{'name':'E','value':'2'}]");
	assert_null(cJSON_GetObjectItem(node, "ports"));
	/* The trainer's program is the launcher's; the nodes run the template's sshd. */
	assert_json_equal(cJSON_GetObjectItem(node, "command"), "['/usr/sbin/sshd']");
	assert_json_equal(cJSON_GetObjectItem(node, "args"), "['-De']");
	assert_string_equal(tj_json_string(node, "image"), "ds");
	cJSON_Delete(pod);
	cJSON_Delete(j);
	tj_render_free(r);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
}

#define PET(rank)                                                                                  \
	"[{'name':'PET_NNODES','value':'2'},{'name':'PET_NPROC_PER_NODE','value':'1'},{'name':"    \
	"'PET_NODE_RANK','value':'" rank "'},{'name':'PET_MASTER_ADDR','value':'vit-node-0-0.vit'" \
	"},{'name':'PET_MASTER_PORT','value':'29500'}]"

/* mlPolicy.torch.envInjection: the node pods' sidecar and init container get torchrun's
 * variables, and so does another step's container, with its own index for the rank; the
 * containers not named get none. */
static void test_env_injection(void **state)
{
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'torch'},'trainer':{'numNodes':2,"
	                                   "'numProcPerNode':1}}");
	cJSON *j = jlit(
	        "{'kind':'ClusterTrainingRuntime','metadata':{'name':'torch'},'spec':{'mlPolicy':{"
	        "'torch':{'envInjection':{'targets':[{'jobName':'node','containerNames':['metrics',"
	        "'preflight']},{'jobName':'prepare','containerNames':['fetch']}]}}},'template':{"
	        "'spec':{'replicatedJobs':[{'name':'prepare','template':{'spec':{'template':{"
	        "'spec':{'containers':[{'name':'fetch','image':'f'},{'name':'log','image':'l'}]}}}"
	        "}},{'name':'node','template':{'spec':{'template':{'spec':{"
	        "'initContainers':[{'name':'preflight','image':'p'}],'containers':[{'name':'node',"
	        "'image':'x'},{'name':'metrics','image':'m','env':[{'name':'PET_NNODES','value':"
	        "'9'}]},{'name':'other','image':'o'}]}}}}}]}}}}");
	cJSON *step = jlit("{'spec':{'containers':[{'name':'fetch','image':'f'},{'name':'log',"
	                   "'image':'l'}]}}");
	struct tj_runtime *rt = NULL;
	struct tj_render *r = NULL;
	struct tj_problem why = { "", "" };
	cJSON *pod = NULL;

	(void)state;
	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	assert_null(rt->unsupported);
	assert_int_equal(
	        tj_render_prepare(&(struct tj_render_input){ .job = job, .runtime = rt }, &r, &why),
	        0);
	assert_int_equal(tj_render_pod(r, 1, 0, &pod), 0);
	assert_json_equal(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(tj_json_path(pod, "spec.initContainers"), 0),
	                            "env"),
	        PET("1"));
	/* The template's own PET_NNODES is replaced, as Kubeflow upserts. */
	assert_json_equal(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(tj_json_path(pod, "spec.containers"), 1),
	                            "env"),
	        PET("1"));
	assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(tj_json_path(pod, "spec.containers"), 2),
	                                "env"));
	cJSON_Delete(pod);
	assert_int_equal(tj_render_inject_env(r, step, "prepare", 0), 0);
	assert_json_equal(
	        cJSON_GetObjectItem(cJSON_GetArrayItem(tj_json_path(step, "spec.containers"), 0),
	                            "env"),
	        PET("0"));
	assert_null(cJSON_GetObjectItem(
	        cJSON_GetArrayItem(tj_json_path(step, "spec.containers"), 1), "env"));
	/* A step no target names changes nothing. */
	assert_int_equal(tj_render_inject_env(r, step, "other", 0), 0);
	cJSON_Delete(step);
	cJSON_Delete(j);
	tj_render_free(r);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
}

/* Kubeflow's jax-distributed and xgboost-distributed (manifests/base/runtimes of v2.3.0), with
 * an env of the template's that the policy's names replace: the node container gets the
 * policy's env and the port 29500, and no torchrun wiring. */
#define FRAMEWORK_RUNTIME(policy, image)                                                           \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"           \
	"'metadata':{'name':'" policy                                                              \
	"-distributed','labels':{'trainer.kubeflow.org/framework':'" policy                        \
	"'}},'spec':{'mlPolicy':{'numNodes':1,'" policy "':{}},'template':{'spec':{"               \
	"'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':{"                      \
	"'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':{'spec':{"   \
	"'containers':[{'name':'node','image':'" image "','env':[{'name':'KEEP','value':'1'},"     \
	"{'name':'JAX_PROCESS_ID','value':'9'},{'name':'DMLC_TASK_ID','value':'9'}]}]}}}}}]}}}}"

struct framework_case {
	const char *name;
	const char *runtime;
	const char *trainer;
	int rank;
	const char *want_env;     /* NULL: refused with want_message */
	const char *want_message; /* reason InvalidSpec */
};

static const struct framework_case framework_cases[] = {
	{ "jax-distributed on 2 nodes", FRAMEWORK_RUNTIME("jax", "nvcr.io/nvidia/jax:25.10-py3"),
	  "{'numNodes':2,'env':[{'name':'MASTER_ADDR','value':'mine'}]}", 1,
	  "[{'name':'KEEP','value':'1'},{'name':'DMLC_TASK_ID','value':'9'},"
	  "{'name':'MASTER_ADDR','value':'mine'},{'name':'JAX_NUM_PROCESSES','value':'2'},"
	  "{'name':'JAX_PROCESS_ID','value':'1'},"
	  "{'name':'JAX_COORDINATOR_ADDRESS','value':'vit-node-0-0.vit:29500'}]",
	  NULL },
	{ "xgboost-distributed on 3 nodes of 2 GPUs",
	  FRAMEWORK_RUNTIME("xgboost", "ghcr.io/kubeflow/trainer/xgboost-runtime"),
	  "{'numNodes':3,'resourcesPerNode':{'limits':{'nvidia.com/gpu':2}}}", 2,
	  "[{'name':'KEEP','value':'1'},{'name':'JAX_PROCESS_ID','value':'9'},"
	  "{'name':'DMLC_TRACKER_URI','value':'vit-node-0-0.vit'},"
	  "{'name':'DMLC_TRACKER_PORT','value':'29500'},{'name':'DMLC_TASK_ID','value':'2'},"
	  "{'name':'DMLC_NUM_WORKER','value':'6'}]",
	  NULL },
	{ "xgboost-distributed without GPUs",
	  FRAMEWORK_RUNTIME("xgboost", "ghcr.io/kubeflow/trainer/xgboost-runtime"),
	  "{'numNodes':2,'resourcesPerNode':{'requests':{'cpu':4}}}", 0,
	  "[{'name':'KEEP','value':'1'},{'name':'JAX_PROCESS_ID','value':'9'},"
	  "{'name':'DMLC_TRACKER_URI','value':'vit-node-0-0.vit'},"
	  "{'name':'DMLC_TRACKER_PORT','value':'29500'},{'name':'DMLC_TASK_ID','value':'0'},"
	  "{'name':'DMLC_NUM_WORKER','value':'2'}]",
	  NULL },
	{ "jax: a JAX name in trainer.env",
	  FRAMEWORK_RUNTIME("jax", "nvcr.io/nvidia/jax:25.10-py3"),
	  "{'env':[{'name':'A','value':'1'},{'name':'JAX_COORDINATOR_ADDRESS','value':'x:1'}]}", 0,
	  NULL,
	  "spec.trainer.env[1].name: JAX_COORDINATOR_ADDRESS is set by the controller (JAX's "
	  "coordinator); remove it from the TrainJob" },
	{ "xgboost: a DMLC name in trainer.env, as Kubeflow's webhook refuses it",
	  FRAMEWORK_RUNTIME("xgboost", "ghcr.io/kubeflow/trainer/xgboost-runtime"),
	  "{'env':[{'name':'DMLC_NUM_WORKER','value':'8'}]}", 0, NULL,
	  "spec.trainer.env[0].name: DMLC_NUM_WORKER is set by the controller (XGBoost's "
	  "tracker); remove it from the TrainJob" },
	{ "jax: numProcPerNode", FRAMEWORK_RUNTIME("jax", "nvcr.io/nvidia/jax:25.10-py3"),
	  "{'numProcPerNode':8}", 0, NULL,
	  "spec.trainer.numProcPerNode: '8' is not read by JAX runtimes, which run one JAX "
	  "process per node; remove it from the TrainJob" },
};

static void test_framework_runtimes_table(void **state)
{
	for (size_t i = 0; i < sizeof(framework_cases) / sizeof(framework_cases[0]); i++) {
		const struct framework_case *c = &framework_cases[i];
		char spec[1024];
		struct tj_trainjob *job;
		struct tj_runtime *rt = NULL;
		struct tj_render *r = NULL;
		struct tj_problem why = { "", "" };
		cJSON *j = jlit(c->runtime), *pod = NULL;
		const cJSON *node;

		print_message("# case: %s\n", c->name);
		snprintf(spec, sizeof(spec), "{'runtimeRef':{'name':'x'},'trainer':%s}",
		         c->trainer);
		job = make_job(spec);
		assert_int_equal(tj_runtime_from_json(j, &rt), 0);
		if (!c->want_env) {
			assert_int_equal(
			        tj_render_prepare(
			                &(struct tj_render_input){ .job = job, .runtime = rt }, &r,
			                &why),
			        -EINVAL);
			assert_string_equal(why.reason, "InvalidSpec");
			assert_string_equal(why.message, c->want_message);
			goto next;
		}
		assert_int_equal(
		        tj_render_prepare(&(struct tj_render_input){ .job = job, .runtime = rt },
		                          &r, &why),
		        0);
		assert_int_equal(tj_render_pod(r, c->rank, 0, &pod), 0);
		node = cJSON_GetArrayItem(tj_json_path(pod, "spec.containers"), 0);
		assert_json_equal(cJSON_GetObjectItem(node, "env"), c->want_env);
		assert_json_equal(cJSON_GetObjectItem(node, "ports"),
		                  "[{'containerPort':29500,'protocol':'TCP'}]");
		assert_string_equal(tj_json_string(pod, "spec.hostname"),
		                    c->rank == 0   ? "vit-node-0-0"
		                    : c->rank == 1 ? "vit-node-0-1"
		                                   : "vit-node-0-2");
		cJSON_Delete(pod);
		tj_render_free(r);
	next:
		cJSON_Delete(j);
		tj_runtime_free(rt);
		tj_trainjob_free(job);
	}
}

static void test_service(void **state)
{
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'torch-gh200'}}");
	cJSON *svc = NULL;

	assert_int_equal(tj_render_service(job, &svc), 0);
	assert_json_equal(
	        svc,
	        "{'apiVersion':'v1','kind':'Service','metadata':{'name':'vit','namespace':'team-a',"
	        "'labels':{'trainer.kubeflow.org/trainjob-name':'vit'},"
	        "'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/"
	        "v1alpha1','kind':'TrainJob',"
	        "'name':'vit','uid':'uid-vit','controller':true,'blockOwnerDeletion':true}]},"
	        "'spec':{'clusterIP':'None','publishNotReadyAddresses':true,"
	        "'selector':{'jobset.sigs.k8s.io/jobset-name':'vit'},"
	        "'ports':[{'name':'torch','port':29500,'targetPort':29500,'protocol':'TCP'}]}}");
	cJSON_Delete(svc);
	tj_trainjob_free(job);
}

static void test_names(void **state)
{
	char buf[TJ_NAME_MAX];

	tj_render_pod_name("llama", 15, 2, buf);
	assert_string_equal(buf, "llama-node-0-15-a2");
}

/* With the config's trainerStatus, the node container gets Kubeflow's wiring for reporting
 * progress: its env and the projected token of the job's audience. */
static void test_trainer_status_wiring(void **state)
{
	struct tj_trainjob *job = make_job(VIT_SPEC);
	struct tj_runtime *rt = make_runtime("torch-gh200");
	struct tj_render *r = NULL;
	struct tj_problem why = { "", "" };
	cJSON *pod = NULL, *node, *vol;

	assert_int_equal(tj_render_prepare(
	                         &(struct tj_render_input){
	                                 .job = job,
	                                 .runtime = rt,
	                                 .gpu_class = &test_classes[0],
	                                 .trainer_status_url = "https://tjc.sys.svc:10443",
	                                 .trainer_status_ca_config_map = "trainjob-ca" },
	                         &r, &why),
	                 0);
	assert_int_equal(tj_render_pod(r, 1, 0, &pod), 0);
	node = tj_json_find_by(tj_json_path(pod, "spec.containers"), "name", "node");
	assert_string_equal(tj_json_string(tj_json_find_by(tj_json_path(node, "env"), "name",
	                                                   "KUBEFLOW_TRAINER_SERVER_URL"),
	                                   "value"),
	                    "https://tjc.sys.svc:10443/apis/trainer.kubeflow.org/v1alpha1/"
	                    "namespaces/team-a/trainjobs/vit/status");
	vol = tj_json_find_by(tj_json_path(pod, "spec.volumes"), "name", "kubeflow-trainer-token");
	assert_non_null(vol);
	assert_string_equal(
	        tj_json_string(cJSON_GetArrayItem(tj_json_path(vol, "projected.sources"), 0),
	                       "serviceAccountToken.audience"),
	        "trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/vit/status");
	cJSON_Delete(pod);
	tj_render_free(r);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_pod),
		cmocka_unit_test(test_trainer_status_wiring),
		cmocka_unit_test(test_no_class_no_placement),
		cmocka_unit_test(test_procs_table),
		cmocka_unit_test(test_resources_merge_table),
		cmocka_unit_test(test_errors_table),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_runtime_patches),
		cmocka_unit_test(test_runtime_env_and_port_not_duplicated),
		cmocka_unit_test(test_mpi_node_has_no_torchrun_wiring),
		cmocka_unit_test(test_env_injection),
		cmocka_unit_test(test_framework_runtimes_table),
		cmocka_unit_test(test_service),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("render", tests, NULL, NULL);
}
