#include "reconcilers/render/wiring.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "reconcilers/json.h"
#include "reconcilers/render/render.h"

static const char *const torch_env[] = {
	"PET_NNODES",      "PET_NPROC_PER_NODE", "PET_NODE_RANK",
	"PET_MASTER_ADDR", "PET_MASTER_PORT",    "MASTER_ADDR",
	"MASTER_PORT",     "WORLD_SIZE",         "RANK",
	"NODE_RANK",       "LOCAL_WORLD_SIZE",   NULL,
};

static const char *const jax_env[] = { "JAX_NUM_PROCESSES", "JAX_PROCESS_ID",
	                               "JAX_COORDINATOR_ADDRESS", NULL };

static const char *const xgboost_env[] = { "DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID",
	                                   "DMLC_NUM_WORKER", NULL };

static const char *const *names_of(enum tj_ml_policy policy)
{
	switch (policy) {
	case TJ_ML_JAX:
		return jax_env;
	case TJ_ML_XGBOOST:
		return xgboost_env;
	case TJ_ML_TORCH:
	case TJ_ML_MPI:
		break;
	}
	return torch_env;
}

bool tj_wiring_env_reserved(enum tj_ml_policy policy, const char *name)
{
	for (const char *const *n = names_of(policy); *n; n++)
		if (strcmp(name, *n) == 0)
			return true;
	return false;
}

const char *tj_wiring_what(enum tj_ml_policy policy)
{
	switch (policy) {
	case TJ_ML_JAX:
		return "JAX's coordinator";
	case TJ_ML_XGBOOST:
		return "XGBoost's tracker";
	case TJ_ML_TORCH:
	case TJ_ML_MPI:
		break;
	}
	return "torchrun wiring";
}

int tj_wiring_procs(enum tj_ml_policy policy, const struct tj_trainjob *job, long gpus, int *ret,
                    struct tj_problem *why)
{
	if (job->num_proc_per_node)
		return tj_problem_set(
		        why, "InvalidSpec",
		        "spec.trainer.numProcPerNode: '%s' is not read by %s runtimes, which run "
		        "%s; "
		        "remove it from the TrainJob",
		        job->num_proc_per_node, policy == TJ_ML_JAX ? "JAX" : "XGBoost",
		        policy == TJ_ML_JAX ? "one JAX process per node"
		                            : "one worker per GPU of a node (one without GPUs)");
	if (policy == TJ_ML_XGBOOST && gpus > TJ_MAX_PROCS_PER_NODE)
		return tj_problem_set(why, "InvalidSpec",
		                      "spec.trainer.resourcesPerNode: %ld GPUs come to %ld XGBoost "
		                      "workers per node; at most %d",
		                      gpus, gpus, TJ_MAX_PROCS_PER_NODE);
	*ret = policy == TJ_ML_XGBOOST && gpus > 0 ? (int)gpus : 1;
	return 0;
}

static int add(cJSON *env, const char *name, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int add(cJSON *env, const char *name, const char *fmt, ...)
{
	char value[TJ_NAME_MAX * 2 + 32];
	cJSON *e = cJSON_CreateObject();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	if (!e || tj_json_set_string(e, "name", name) < 0 ||
	    tj_json_set_string(e, "value", value) < 0) {
		cJSON_Delete(e);
		return -ENOMEM;
	}
	return tj_json_upsert_named(env, e);
}

int tj_wiring_add_torchrun_env(cJSON *env, const struct tj_wiring *w, int index)
{
	const char *j = w->job;

	if (add(env, "PET_NNODES", "%d", w->num_nodes) < 0 ||
	    add(env, "PET_NPROC_PER_NODE", "%d", w->procs) < 0 ||
	    add(env, "PET_NODE_RANK", "%d", index) < 0 ||
	    add(env, "PET_MASTER_ADDR", "%s-node-0-0.%s", j, j) < 0 ||
	    add(env, "PET_MASTER_PORT", "%d", TJ_TORCH_PORT) < 0)
		return -ENOMEM;
	return 0;
}

static int add_torch(cJSON *env, const struct tj_wiring *w, int rank)
{
	const char *j = w->job;

	if (tj_wiring_add_torchrun_env(env, w, rank) < 0 ||
	    add(env, "MASTER_ADDR", "%s-node-0-0.%s", j, j) < 0 ||
	    add(env, "MASTER_PORT", "%d", TJ_TORCH_PORT) < 0 ||
	    add(env, "WORLD_SIZE", "%lld", (long long)w->num_nodes * w->procs) < 0 ||
	    add(env, "NODE_RANK", "%d", rank) < 0 ||
	    add(env, "RANK", "%lld", (long long)rank * w->procs) < 0 ||
	    add(env, "LOCAL_WORLD_SIZE", "%d", w->procs) < 0)
		return -ENOMEM;
	return 0;
}

/* Kubeflow's JAX plugin: one process per pod, the coordinator on rank 0. */
static int add_jax(cJSON *env, const struct tj_wiring *w, int rank)
{
	if (add(env, "JAX_NUM_PROCESSES", "%d", w->num_nodes) < 0 ||
	    add(env, "JAX_PROCESS_ID", "%d", rank) < 0 ||
	    add(env, "JAX_COORDINATOR_ADDRESS", "%s-node-0-0.%s:%d", w->job, w->job,
	        TJ_TORCH_PORT) < 0)
		return -ENOMEM;
	return 0;
}

/* Kubeflow's XGBoost plugin: rank 0 runs the tracker (DMLC's collective, Rabit). */
static int add_xgboost(cJSON *env, const struct tj_wiring *w, int rank)
{
	if (add(env, "DMLC_TRACKER_URI", "%s-node-0-0.%s", w->job, w->job) < 0 ||
	    add(env, "DMLC_TRACKER_PORT", "%d", TJ_TORCH_PORT) < 0 ||
	    add(env, "DMLC_TASK_ID", "%d", rank) < 0 ||
	    add(env, "DMLC_NUM_WORKER", "%lld", (long long)w->num_nodes * w->procs) < 0)
		return -ENOMEM;
	return 0;
}

int tj_wiring_add_env(cJSON *env, const struct tj_wiring *w, int rank)
{
	switch (w->policy) {
	case TJ_ML_TORCH:
		return add_torch(env, w, rank);
	case TJ_ML_JAX:
		return add_jax(env, w, rank);
	case TJ_ML_XGBOOST:
		return add_xgboost(env, w, rank);
	case TJ_ML_MPI:
		break;
	}
	return 0;
}
