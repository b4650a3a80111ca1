/* What a rank's node container is told of its job by the runtime's mlPolicy, as Kubeflow
 * Trainer's plugins tell it (pkg/runtime/framework/plugins/{torch,jax,xgboost}), every name a
 * plain value of its own pod (rank 0's DNS name is `<J>-node-0-0.<J>`, the headless Service's):
 *
 * - torch (and a runtime with no policy): torchrun's PET_NNODES, PET_NPROC_PER_NODE,
 *   PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT (29500), and the plain MASTER_ADDR,
 *   MASTER_PORT, WORLD_SIZE, RANK, NODE_RANK, LOCAL_WORLD_SIZE that PyTorch reads without
 *   torchrun;
 * - jax: JAX_NUM_PROCESSES (the nodes: one JAX process per pod), JAX_PROCESS_ID (the rank)
 *   and JAX_COORDINATOR_ADDRESS (rank 0's name and port 29500), what a script passes to
 *   jax.distributed.initialize();
 * - xgboost: DMLC_TRACKER_URI (rank 0's name, which runs the tracker), DMLC_TRACKER_PORT
 *   (29500), DMLC_TASK_ID (the rank) and DMLC_NUM_WORKER (the nodes times the workers of a
 *   node: its GPUs, or 1 without GPUs);
 * - mpi: none on the node pods; the launcher starts the processes (reconcilers/mpi.h).
 *
 * The names a policy sets are the controller's: the runtime template's are replaced, and a
 * TrainJob's trainer.env naming one is refused (InvalidSpec), as Kubeflow's webhook refuses
 * PET_* and DMLC_* names. jax and xgboost run a process count of their own: a TrainJob's
 * trainer.numProcPerNode, which Kubeflow's JAX and XGBoost plugins never read, is refused
 * (InvalidSpec) rather than ignored. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "reconcilers/runtime.h"
#include "reconcilers/trainjob.h"

/* The rank-independent facts the env of a policy is made of. */
struct tj_wiring {
	enum tj_ml_policy policy;
	const char *job; /* borrowed; the TrainJob's name */
	int num_nodes;
	int procs; /* processes (torch) or workers (xgboost) of a node; 1 for jax */
};

/* True for the env names policy sets (torch's for a runtime with none, and for mpi, whose
 * jobs keep torchrun's names out of trainer.env). */
bool tj_wiring_env_reserved(enum tj_ml_policy policy, const char *name);

/* What sets the names, for messages: "torchrun wiring", "JAX's coordinator", ... */
const char *tj_wiring_what(enum tj_ml_policy policy);

/* The processes of a node for jax (1) and xgboost (the node's gpus, else 1). A TrainJob's
 * numProcPerNode is -EINVAL with reason InvalidSpec naming spec.trainer.numProcPerNode.
 * Call it for those two policies only: torch resolves numProcPerNode itself. */
int tj_wiring_procs(enum tj_ml_policy policy, const struct tj_trainjob *job, long gpus, int *ret,
                    struct tj_problem *why);

/* Upserts the env of w's policy for rank into env (an array, by name); nothing for mpi.
 * -ENOMEM. */
int tj_wiring_add_env(cJSON *env, const struct tj_wiring *w, int rank);

/* Upserts torchrun's PET_* variables alone (PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK =
 * index, PET_MASTER_ADDR, PET_MASTER_PORT) into env: what mlPolicy.torch.envInjection gives the
 * containers it names (reconcilers/render/render.h). -ENOMEM. */
int tj_wiring_add_torchrun_env(cJSON *env, const struct tj_wiring *w, int index);
