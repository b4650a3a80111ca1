#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/render/wiring.h"

struct env_case {
	const char *name;
	struct tj_wiring wiring;
	int rank;
	const char *want; /* the env appended, as a JSON list */
};

static const struct env_case env_cases[] = {
	{ "torch: torchrun's names and PyTorch's plain ones",
	  { TJ_ML_TORCH, "vit", 4, 8 },
	  2,
	  "[{'name':'PET_NNODES','value':'4'},{'name':'PET_NPROC_PER_NODE','value':'8'},"
	  "{'name':'PET_NODE_RANK','value':'2'},"
	  "{'name':'PET_MASTER_ADDR','value':'vit-node-0-0.vit'},"
	  "{'name':'PET_MASTER_PORT','value':'29500'},"
	  "{'name':'MASTER_ADDR','value':'vit-node-0-0.vit'},"
	  "{'name':'MASTER_PORT','value':'29500'},{'name':'WORLD_SIZE','value':'32'},"
	  "{'name':'NODE_RANK','value':'2'},{'name':'RANK','value':'16'},"
	  "{'name':'LOCAL_WORLD_SIZE','value':'8'}]" },
	{ "jax: a process per node, the coordinator on rank 0's port 29500",
	  { TJ_ML_JAX, "vit", 3, 1 },
	  1,
	  "[{'name':'JAX_NUM_PROCESSES','value':'3'},{'name':'JAX_PROCESS_ID','value':'1'},"
	  "{'name':'JAX_COORDINATOR_ADDRESS','value':'vit-node-0-0.vit:29500'}]" },
	{ "jax on one node",
	  { TJ_ML_JAX, "j", 1, 1 },
	  0,
	  "[{'name':'JAX_NUM_PROCESSES','value':'1'},{'name':'JAX_PROCESS_ID','value':'0'},"
	  "{'name':'JAX_COORDINATOR_ADDRESS','value':'j-node-0-0.j:29500'}]" },
	{ "xgboost without GPUs: a worker per node",
	  { TJ_ML_XGBOOST, "xgb", 2, 1 },
	  1,
	  "[{'name':'DMLC_TRACKER_URI','value':'xgb-node-0-0.xgb'},"
	  "{'name':'DMLC_TRACKER_PORT','value':'29500'},{'name':'DMLC_TASK_ID','value':'1'},"
	  "{'name':'DMLC_NUM_WORKER','value':'2'}]" },
	{ "xgboost with 4 GPUs a node: a worker per GPU",
	  { TJ_ML_XGBOOST, "xgb", 3, 4 },
	  0,
	  "[{'name':'DMLC_TRACKER_URI','value':'xgb-node-0-0.xgb'},"
	  "{'name':'DMLC_TRACKER_PORT','value':'29500'},{'name':'DMLC_TASK_ID','value':'0'},"
	  "{'name':'DMLC_NUM_WORKER','value':'12'}]" },
	{ "mpi: nothing on the node pods", { TJ_ML_MPI, "ds", 2, 4 }, 1, "[]" },
};

static void test_env_table(void **state)
{
	for (size_t i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++) {
		const struct env_case *c = &env_cases[i];
		cJSON *env = cJSON_CreateArray();

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_wiring_add_env(env, &c->wiring, c->rank), 0);
		assert_json_equal(env, c->want);
		cJSON_Delete(env);
	}
}

struct reserved_case {
	enum tj_ml_policy policy;
	const char *name;
	bool want;
};

static const struct reserved_case reserved_cases[] = {
	{ TJ_ML_TORCH, "PET_NNODES", true },
	{ TJ_ML_TORCH, "LOCAL_WORLD_SIZE", true },
	{ TJ_ML_TORCH, "LOCAL_RANK", false },
	{ TJ_ML_TORCH, "PET_RDZV_ENDPOINT", false },
	{ TJ_ML_TORCH, "JAX_PROCESS_ID", false },
	{ TJ_ML_MPI, "MASTER_ADDR", true },
	{ TJ_ML_JAX, "JAX_NUM_PROCESSES", true },
	{ TJ_ML_JAX, "JAX_PROCESS_ID", true },
	{ TJ_ML_JAX, "JAX_COORDINATOR_ADDRESS", true },
	{ TJ_ML_JAX, "JAX_PLATFORMS", false },
	{ TJ_ML_JAX, "MASTER_ADDR", false },
	{ TJ_ML_XGBOOST, "DMLC_TRACKER_URI", true },
	{ TJ_ML_XGBOOST, "DMLC_TRACKER_PORT", true },
	{ TJ_ML_XGBOOST, "DMLC_TASK_ID", true },
	{ TJ_ML_XGBOOST, "DMLC_NUM_WORKER", true },
	{ TJ_ML_XGBOOST, "DMLC_ROLE", false },
	{ TJ_ML_XGBOOST, "RANK", false },
};

static void test_reserved_table(void **state)
{
	for (size_t i = 0; i < sizeof(reserved_cases) / sizeof(reserved_cases[0]); i++) {
		const struct reserved_case *c = &reserved_cases[i];

		print_message("# case: %d %s\n", (int)c->policy, c->name);
		assert_int_equal(tj_wiring_env_reserved(c->policy, c->name), c->want);
	}
	assert_string_equal(tj_wiring_what(TJ_ML_TORCH), "torchrun wiring");
	assert_string_equal(tj_wiring_what(TJ_ML_JAX), "JAX's coordinator");
	assert_string_equal(tj_wiring_what(TJ_ML_XGBOOST), "XGBoost's tracker");
}

struct procs_case {
	const char *name;
	enum tj_ml_policy policy;
	const char *trainer;
	long gpus;
	int want; /* -1: refused with want_message */
	const char *want_message;
};

static const struct procs_case procs_cases[] = {
	{ "jax: one process per node", TJ_ML_JAX, "{'numNodes':2}", 4, 1, NULL },
	{ "xgboost without GPUs: one worker", TJ_ML_XGBOOST, "{'numNodes':2}", 0, 1, NULL },
	{ "xgboost: a worker per GPU", TJ_ML_XGBOOST, "{}", 8, 8, NULL },
	{ "jax: numProcPerNode refused", TJ_ML_JAX, "{'numProcPerNode':4}", 4, -1,
	  "spec.trainer.numProcPerNode: '4' is not read by JAX runtimes, which run one JAX "
	  "process per node; remove it from the TrainJob" },
	{ "xgboost: numProcPerNode refused", TJ_ML_XGBOOST, "{'numProcPerNode':'auto'}", 0, -1,
	  "spec.trainer.numProcPerNode: 'auto' is not read by XGBoost runtimes, which run one "
	  "worker per GPU of a node (one without GPUs); remove it from the TrainJob" },
	{ "xgboost: more workers than a node may run", TJ_ML_XGBOOST, "{}", 2000, -1,
	  "spec.trainer.resourcesPerNode: 2000 GPUs come to 2000 XGBoost workers per node; at "
	  "most 1024" },
};

static void test_procs_table(void **state)
{
	for (size_t i = 0; i < sizeof(procs_cases) / sizeof(procs_cases[0]); i++) {
		const struct procs_case *c = &procs_cases[i];
		char spec[256];
		struct tj_trainjob *job;
		struct tj_problem why = { "", "" };
		int procs = -7;

		print_message("# case: %s\n", c->name);
		snprintf(spec, sizeof(spec), "{'runtimeRef':{'name':'r'},'trainer':%s}",
		         c->trainer);
		job = make_job(spec);
		if (c->want < 0) {
			assert_int_equal(tj_wiring_procs(c->policy, job, c->gpus, &procs, &why),
			                 -EINVAL);
			assert_int_equal(procs, -7); /* untouched on error */
			assert_string_equal(why.reason, "InvalidSpec");
			assert_string_equal(why.message, c->want_message);
		} else {
			assert_int_equal(tj_wiring_procs(c->policy, job, c->gpus, &procs, &why), 0);
			assert_int_equal(procs, c->want);
		}
		tj_trainjob_free(job);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_table),
		cmocka_unit_test(test_reserved_table),
		cmocka_unit_test(test_procs_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
