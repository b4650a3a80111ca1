/* Pod and Service rendering: what the controller creates for a TrainJob (DESIGN.md section 4,
 * "Child objects" and "Pod contents").
 *
 * A pod is built in layers, later layers winning, as Kubeflow Trainer orders them: the
 * runtime's pod template of the `node` replicated job; the TrainJob's podSpecOverrides (v2.0),
 * podTemplateOverrides (v2.1) and runtimePatches that target `node` (overrides.h); the
 * TrainJob's trainer fields; then the
 * fields the controller owns (placement, the wiring of the runtime's mlPolicy
 * (reconcilers/render/wiring.h: torchrun's, JAX's or XGBoost's env; an MPI runtime's nodes get
 * none, its launcher starts the processes with mpirun), names, labels, owner).
 *
 * Naming: pod `<J>-node-0-<rank>-a<attempt>`, that is the hostname `<J>-node-0-<rank>` (what
 * JobSet would give it) followed by the restart attempt, so that a create repeated after a
 * controller crash gets AlreadyExists, and each restart gets new names. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "reconcilers/runtime.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

#define TJ_TORCH_PORT 29500

/* Labels Kubeflow's SDK and JobSet users select pods by. */
#define TJ_LABEL_JOBSET_NAME      "jobset.sigs.k8s.io/jobset-name"
#define TJ_LABEL_REPLICATED_JOB   "jobset.sigs.k8s.io/replicatedjob-name"
#define TJ_LABEL_COMPLETION_INDEX "batch.kubernetes.io/job-completion-index"

struct tj_render_input {
	const struct tj_trainjob *job;
	const struct tj_runtime *runtime;
	const struct tj_gpu_class *gpu_class; /* NULL: no GPU placement */
	/* Nodes the pods must avoid (where a rank failed): matchFields metadata.name NotIn. */
	const char *const *excluded_nodes;
	size_t n_excluded_nodes;
	/* The trainer status server (the config's trainerStatus): NULL, or the base URL the
	 * node container reports its progress to and the ConfigMap of the CA it trusts (NULL:
	 * none); reconcilers/trainer_status.h. */
	const char *trainer_status_url;
	const char *trainer_status_ca_config_map;
};

/* The rank-independent part of a job's pods, prepared once per plan. */
struct tj_render;

/* Builds the layers above into a base pod. Returns 0, or -EINVAL with reason InvalidRuntime
 * (no `node` job or container), InvalidSpec (a reserved env name, an override naming a
 * container that does not exist, numProcPerNode gpu without GPUs, ...) and a message naming
 * the field; -ENOMEM. */
int tj_render_prepare(const struct tj_render_input *in, struct tj_render **ret,
                      struct tj_problem *why);

/* Number of nodes (pods) and processes per node, as resolved by tj_render_prepare. */
int tj_render_num_nodes(const struct tj_render *r);
int tj_render_procs_per_node(const struct tj_render *r);

/* A new Pod object for rank (0..num_nodes-1) and attempt. -ENOMEM. */
int tj_render_pod(const struct tj_render *r, int rank, int attempt, cJSON **ret);

/* mlPolicy.torch.envInjection (Kubeflow v2.3): torchrun's PET_* variables (PET_NNODES,
 * PET_NPROC_PER_NODE, PET_NODE_RANK = index, PET_MASTER_ADDR, PET_MASTER_PORT) upserted into
 * the containers and init containers the runtime's targets name in the pods of replicated
 * job `step`, index being the pod's completion index (tj_render_pod does it for node). A
 * runtime without targets, or of a policy other than torch, changes nothing. -ENOMEM. */
int tj_render_inject_env(const struct tj_render *r, cJSON *pod, const char *step, int index);

/* The GPU class the pods are placed in (the input's), or NULL. */
const struct tj_gpu_class *tj_render_gpu_class(const struct tj_render *r);

/* Pins a rendered pod to one node, chosen by admission: required node affinity
 * matchFields metadata.name In [node] (the node's name, as the DaemonSet controller pins its
 * pods: the kubernetes.io/hostname label may differ from it), ANDed into every term, so the
 * scheduler stays the final check but cannot move the pod elsewhere; and the annotation
 * TJ_ANNOTATION_PINNED_NODE naming the node, by which the capacity counts the pod on its
 * node before it is bound. -ENOMEM. */
int tj_render_pin(cJSON *pod, const char *node);

/* Places a pod of another step in the job's GPU class as the node pods are: the class's
 * (and the excluded nodes') node affinity ANDed into every term, and the class's
 * tolerations; for the launcher that admission placed with the gang. -ENOMEM. */
int tj_render_place_in_class(const struct tj_render *r, cJSON *pod);

/* Accepts NULL; returns NULL. */
struct tj_render *tj_render_free(struct tj_render *r);

/* The pod name for rank and attempt: "<job>-node-0-<rank>-a<attempt>". */
void tj_render_pod_name(const char *job, int rank, int attempt, char buf[static TJ_NAME_MAX]);

/* Applies the TrainJob's trainer fields to container c: resourcesPerNode when with_resources
 * is set, merged over the container's resources as Kubeflow merges them (limits and
 * requests per resource name, claims by name; a GPU set on one side only replaces the
 * template's count on the other too); env when with_env is set (a name the controller sets
 * for policy, reconcilers/render/wiring.h, is -EINVAL with reason InvalidSpec either way); and when
 * program is set image, command and args (Kubeflow gives those to the step labelled
 * trainjob-ancestor-step=trainer only: tj_mpi_runs_trainer). -ENOMEM. */
int tj_render_apply_trainer(cJSON *c, const struct tj_trainjob *job, enum tj_ml_policy policy,
                            bool program, bool with_env, bool with_resources,
                            struct tj_problem *why);

/* The headless Service <J> that gives the pods their DNS names. -ENOMEM. */
int tj_render_service(const struct tj_trainjob *job, cJSON **ret);
