#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/runtime.h"

static void test_projection(void **state)
{
	struct tj_runtime *rt = make_runtime("torch-gh200");

	assert_int_equal(rt->kind, TJ_RUNTIME_CLUSTER);
	assert_string_equal(rt->namespace, "");
	assert_string_equal(rt->name, "torch-gh200");
	assert_null(rt->gpu_class);
	assert_null(rt->restart_policy);
	assert_null(rt->max_restarts);
	assert_null(rt->stall_timeout);
	assert_int_equal(rt->num_nodes, 1);
	assert_string_equal(rt->num_proc_per_node, "auto");
	assert_int_equal(rt->ttl_seconds_after_finished, -1);
	assert_non_null(rt->node_template);
	{
		cJSON *t = cJSON_Parse(rt->node_template);

		assert_json_equal(
		        t, "{'metadata':{'labels':{'team':'ml','trainer.kubeflow.org/"
		           "trainjob-ancestor-step':'trainer'}},'spec':{'containers':["
		           "{'name':'node','image':'pytorch/pytorch:2.7.1','command':['torchrun'],"
		           "'args':['train.py'],'env':[{'name':'NCCL_DEBUG','value':'WARN'},"
		           "{'name':'PET_NNODES','value':'99'}]},{'name':'sidecar','image':'"
		           "busybox'}],"
		           "'volumes':[{'name':'shm','emptyDir':{'medium':'Memory'}}]}}");
		cJSON_Delete(t);
	}
	tj_runtime_free(rt);
}

/* Our settings as labels or annotations (the label wins); a namespaced runtime; numbers. */
static void test_settings_and_policy(void **state)
{
	cJSON *j = jlit("{'kind':'TrainingRuntime','metadata':{'name':'mine','namespace':'team-a',"
	                "'labels':{'trainjob.flame.dev/gpu-class':'h100',"
	                "'trainjob.flame.dev/max-restarts':'5'},"
	                "'annotations':{'trainjob.flame.dev/max-restarts':'9',"
	                "'trainjob.flame.dev/restart-policy':'Worker',"
	                "'trainjob.flame.dev/stall-timeout':'45m'}},"
	                "'spec':{'mlPolicy':{'numNodes':8,'torch':{'numProcPerNode':4}},"
	                "'template':{'spec':{'replicatedJobs':[{'name':'launcher'}]}}}}");
	struct tj_runtime *rt = NULL;

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	assert_int_equal(rt->kind, TJ_RUNTIME_NAMESPACED);
	assert_string_equal(rt->namespace, "team-a");
	assert_string_equal(rt->gpu_class, "h100");
	assert_string_equal(rt->max_restarts, "5");
	assert_string_equal(rt->restart_policy, "Worker");
	assert_string_equal(rt->stall_timeout, "45m");
	assert_int_equal(rt->num_nodes, 8);
	assert_string_equal(rt->num_proc_per_node, "4");
	assert_null(rt->node_template);
	tj_runtime_free(rt);
}

/* The command policy's exemption: a ClusterTrainingRuntime's label "true" (not an
 * annotation, not a TrainingRuntime's label). */
static void test_command_policy_inputs(void **state)
{
	static const struct {
		const char *json;
		bool allow_long_running;
	} cases[] = {
		{ "{'kind':'ClusterTrainingRuntime','metadata':{'name':'svc','labels':{"
		  "'trainjob.flame.dev/allow-long-running':'true'}}}",
		  true },
		{ "{'kind':'ClusterTrainingRuntime','metadata':{'name':'svc','labels':{"
		  "'trainjob.flame.dev/allow-long-running':'yes'}}}",
		  false },
		{ "{'kind':'ClusterTrainingRuntime','metadata':{'name':'svc','annotations':{"
		  "'trainjob.flame.dev/allow-long-running':'true'}}}",
		  false },
		{ "{'kind':'TrainingRuntime','metadata':{'name':'svc','namespace':'team-a',"
		  "'labels':{'trainjob.flame.dev/allow-long-running':'true'}}}",
		  false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *j = jlit(cases[i].json);
		struct tj_runtime *rt = NULL;

		assert_int_equal(tj_runtime_from_json(j, &rt), 0);
		cJSON_Delete(j);
		assert_int_equal(rt->allow_long_running, cases[i].allow_long_running);
		tj_runtime_free(rt);
	}
}

/* ttlSecondsAfterFinished: the runtime's own field wins over the JobSet template's; what is
 * not a number from 0 to 2^31-1 is none. */
static void test_ttl(void **state)
{
	static const struct {
		const char *spec;
		int want;
	} cases[] = {
		{ "{'ttlSecondsAfterFinished':3600}", 3600 },
		{ "{'template':{'spec':{'ttlSecondsAfterFinished':0}}}", 0 },
		{ "{'ttlSecondsAfterFinished':60,'template':{'spec':{'ttlSecondsAfterFinished':5}}"
		  "}",
		  60 },
		{ "{'ttlSecondsAfterFinished':-1,'template':{'spec':{'ttlSecondsAfterFinished':5}}"
		  "}",
		  5 },
		{ "{'ttlSecondsAfterFinished':'60'}", -1 },
		{ "{'ttlSecondsAfterFinished':1.5}", -1 },
		{ "{'ttlSecondsAfterFinished':1e12}", -1 },
		{ "{}", -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];
		struct tj_runtime *rt = NULL;
		cJSON *j;

		snprintf(buf, sizeof(buf),
		         "{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':%s}",
		         cases[i].spec);
		print_message("# case: %s\n", cases[i].spec);
		j = jlit(buf);
		assert_int_equal(tj_runtime_from_json(j, &rt), 0);
		cJSON_Delete(j);
		assert_int_equal(rt->ttl_seconds_after_finished, cases[i].want);
		tj_runtime_free(rt);
	}
}

static void test_not_a_runtime(void **state)
{
	const char *objs[] = {
		"{'kind':'TrainJob','metadata':{'name':'a','namespace':'b'}}",
		"{'kind':'ClusterTrainingRuntime','metadata':{}}",
		"{'kind':'TrainingRuntime','metadata':{'name':'a'}}", /* no namespace */
		"{'metadata':{'name':'a'}}",
	};

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		cJSON *j = jlit(objs[i]);
		struct tj_runtime *rt = (struct tj_runtime *)0x1;

		assert_int_equal(tj_runtime_from_json(j, &rt), -EINVAL);
		assert_ptr_equal(rt, (struct tj_runtime *)0x1);
		cJSON_Delete(j);
	}
}

/* A cache of two runtimes with the same name: one cluster-wide, one in team-a. */
struct cache {
	struct tj_runtime *cluster, *namespaced;
	char last[128];
};

static const struct tj_runtime *lookup(void *ctx, enum tj_runtime_kind kind, const char *ns,
                                       const char *name)
{
	struct cache *c = ctx;

	snprintf(c->last, sizeof(c->last), "%s/%s/%s", tj_runtime_kind_name(kind), ns, name);
	if (strcmp(name, "torch-gh200") != 0)
		return NULL;
	if (kind == TJ_RUNTIME_CLUSTER)
		return c->cluster;
	return strcmp(ns, "team-a") == 0 ? c->namespaced : NULL;
}

struct resolve_case {
	const char *ref;
	const char *want_lookup;
	bool want_namespaced;     /* when found */
	const char *want_message; /* NULL: found */
};

static const struct resolve_case resolve_cases[] = {
	{ "{'name':'torch-gh200'}", "ClusterTrainingRuntime//torch-gh200", false, NULL },
	{ "{'name':'torch-gh200','kind':'ClusterTrainingRuntime'}",
	  "ClusterTrainingRuntime//torch-gh200", false, NULL },
	{ "{'name':'torch-gh200','kind':'TrainingRuntime'}", "TrainingRuntime/team-a/torch-gh200",
	  true, NULL },
	{ "{'name':'torch-x'}", "ClusterTrainingRuntime//torch-x", false,
	  "ClusterTrainingRuntime torch-x not found; the job starts when it is created" },
	{ "{'name':'torch-x','kind':'TrainingRuntime'}", "TrainingRuntime/team-a/torch-x", false,
	  "TrainingRuntime torch-x not found in namespace team-a; the job starts when it is "
	  "created" },
};

static void test_resolve_table(void **state)
{
	cJSON *j = jlit("{'kind':'TrainingRuntime','metadata':{'name':'torch-gh200','namespace':'"
	                "team-a'}}");
	struct cache c = { .cluster = make_runtime("torch-gh200") };

	assert_int_equal(tj_runtime_from_json(j, &c.namespaced), 0);
	cJSON_Delete(j);
	for (size_t i = 0; i < sizeof(resolve_cases) / sizeof(resolve_cases[0]); i++) {
		const struct resolve_case *rc = &resolve_cases[i];
		char spec[256];
		struct tj_trainjob *job;
		const struct tj_runtime *rt = NULL;
		struct tj_problem why = { "", "" };

		print_message("# case: %s\n", rc->ref);
		snprintf(spec, sizeof(spec), "{'runtimeRef':%s}", rc->ref);
		job = make_job(spec);
		assert_int_equal(tj_runtime_resolve(job, lookup, &c, &rt, &why),
		                 rc->want_message ? -ENOENT : 0);
		assert_string_equal(c.last, rc->want_lookup);
		if (rc->want_message) {
			assert_null(rt);
			assert_string_equal(why.reason, "RuntimeNotFound");
			assert_string_equal(why.message, rc->want_message);
		} else {
			assert_ptr_equal(rt, rc->want_namespaced ? c.namespaced : c.cluster);
		}
		tj_trainjob_free(job);
	}
	tj_runtime_free(c.cluster);
	tj_runtime_free(c.namespaced);
}

struct class_case {
	const char *runtime; /* name */
	const char *label;   /* trainjob.flame.dev/gpu-class, or NULL */
	bool with_config;
	int want_rc;
	const char *want_class; /* NULL: none */
};

static const struct class_case class_cases[] = {
	{ "torch-gh200", NULL, true, 0, "gh200" },      { "torch-h100", NULL, true, 0, "h100" },
	{ "torch-distributed", NULL, true, 0, NULL },   { "torch-gh200", NULL, false, 0, NULL },
	{ "my-runtime", "h100", true, 0, "h100" },      { "torch-gh200", "h100", true, 0, "h100" },
	{ "torch-gh200", "b200", true, -ENOENT, NULL },
};

static void test_gpu_class_table(void **state)
{
	for (size_t i = 0; i < sizeof(class_cases) / sizeof(class_cases[0]); i++) {
		const struct class_case *c = &class_cases[i];
		char buf[512];
		struct tj_runtime *rt = NULL;
		const struct tj_gpu_class *cls = (const struct tj_gpu_class *)0x1;
		struct tj_problem why = { "", "" };
		cJSON *j;

		print_message("# case: %s %s\n", c->runtime, c->label ? c->label : "-");
		snprintf(buf, sizeof(buf),
		         "{'kind':'ClusterTrainingRuntime','metadata':{'name':'%s','labels':{%s%s%"
		         "s}}}",
		         c->runtime, c->label ? "'trainjob.flame.dev/gpu-class':'" : "",
		         c->label ? c->label : "", c->label ? "'" : "");
		j = jlit(buf);
		assert_int_equal(tj_runtime_from_json(j, &rt), 0);
		cJSON_Delete(j);
		assert_int_equal(
		        tj_runtime_gpu_class(rt, c->with_config ? &test_config : NULL, &cls, &why),
		        c->want_rc);
		if (c->want_rc) {
			assert_ptr_equal(cls, (const struct tj_gpu_class *)0x1);
			assert_string_equal(why.reason, "UnknownGPUClass");
			assert_string_equal(
			        why.message,
			        "ClusterTrainingRuntime torch-gh200: label "
			        "trainjob.flame.dev/gpu-class names GPU class 'b200', which "
			        "the controller's config does not define; fix the label or "
			        "add the class");
		} else if (c->want_class) {
			assert_non_null(cls);
			assert_string_equal(cls->name, c->want_class);
		} else {
			assert_null(cls);
		}
		tj_runtime_free(rt);
	}
}

/* spec.mlPolicy.mpi of Kubeflow's deepspeed-distributed, and a launcher step. */
static void test_mpi_policy(void **state)
{
	cJSON *j =
	        jlit("{'kind':'ClusterTrainingRuntime','metadata':{'name':'deepspeed-distributed'},"
	             "'spec':{'mlPolicy':{'numNodes':1,'mpi':{'numProcPerNode':1,"
	             "'mpiImplementation':'OpenMPI','sshAuthMountPath':'/home/mpiuser/.ssh',"
	             "'runLauncherAsNode':true}},'template':{'spec':{'replicatedJobs':["
	             "{'name':'node'},{'name':'launcher'}]}}}}");
	struct tj_runtime *rt = NULL;

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	assert_true(rt->mpi.enabled);
	assert_string_equal(rt->mpi.implementation, "OpenMPI");
	assert_string_equal(rt->mpi.ssh_auth_mount_path, "/home/mpiuser/.ssh");
	assert_int_equal(rt->mpi.num_proc_per_node, 1);
	assert_true(rt->mpi.run_launcher_as_node);
	assert_true(tj_step_graph_find(&rt->graph, "launcher") < rt->graph.n);
	tj_runtime_free(rt);

	rt = make_runtime("torch-distributed");
	assert_false(rt->mpi.enabled);
	assert_true(tj_step_graph_find(&rt->graph, "launcher") == rt->graph.n);
	tj_runtime_free(rt);
}

/* The mlPolicy source a runtime's pods are wired for (reconcilers/render/wiring.h). */
struct ml_policy_case {
	const char *ml_policy;
	enum tj_ml_policy want;
	bool want_unsupported;
};

static const struct ml_policy_case ml_policy_cases[] = {
	{ "{'numNodes':1,'torch':{}}", TJ_ML_TORCH, false },
	{ "{'numNodes':2}", TJ_ML_TORCH, false },
	{ "{'mpi':{'numProcPerNode':1}}", TJ_ML_MPI, false },
	{ "{'numNodes':1,'jax':{}}", TJ_ML_JAX, false },
	{ "{'numNodes':1,'xgboost':{}}", TJ_ML_XGBOOST, false },
	{ "{'numNodes':1,'flux':{'numProcPerNode':1}}", TJ_ML_TORCH, true },
};

static void test_ml_policy_table(void **state)
{
	for (size_t i = 0; i < sizeof(ml_policy_cases) / sizeof(ml_policy_cases[0]); i++) {
		const struct ml_policy_case *c = &ml_policy_cases[i];
		char buf[512];
		struct tj_runtime *rt = NULL;
		cJSON *j;

		print_message("# case: %s\n", c->ml_policy);
		snprintf(buf, sizeof(buf),
		         "{'kind':'ClusterTrainingRuntime','metadata':{'name':'r'},'spec':{"
		         "'mlPolicy':%s,'template':{'spec':{'replicatedJobs':[{'name':'node'}]}}}}",
		         c->ml_policy);
		j = jlit(buf);
		assert_int_equal(tj_runtime_from_json(j, &rt), 0);
		cJSON_Delete(j);
		assert_int_equal(rt->ml_policy, c->want);
		assert_int_equal(rt->unsupported != NULL, c->want_unsupported);
		tj_runtime_free(rt);
	}
}

/* A node step refused before its template is read (too many replicas here, as a fuzzer
 * found) leaves the runtime without a node template and with the graph's error, which
 * fails its jobs; the projection itself must not read the missing template. */
static void test_node_step_refused_before_its_template(void **state)
{
	cJSON *j = jlit("{'kind':'ClusterTrainingRuntime','metadata':{'name':'bad'},"
	                "'spec':{'template':{'spec':{'replicatedJobs':["
	                "{'name':'node','replicas':-1,'template':{'spec':{'template':{'spec':"
	                "{'containers':[{'name':'node','image':'x'}]}}}}}]}}}}");
	struct tj_runtime *rt = NULL;

	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	assert_non_null(rt->graph.error);
	assert_non_null(strstr(rt->graph.error, "replicatedJobs[0] (node)"));
	assert_null(rt->node_template);
	tj_runtime_free(rt);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_settings_and_policy),
		cmocka_unit_test(test_ttl),
		cmocka_unit_test(test_mpi_policy),
		cmocka_unit_test(test_ml_policy_table),
		cmocka_unit_test(test_node_step_refused_before_its_template),
		cmocka_unit_test(test_not_a_runtime),
		cmocka_unit_test(test_resolve_table),
		cmocka_unit_test(test_gpu_class_table),
		cmocka_unit_test(test_command_policy_inputs),
	};
	return cmocka_run_group_tests_name("runtime", tests, NULL, NULL);
}
