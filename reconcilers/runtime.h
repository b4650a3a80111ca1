/* ClusterTrainingRuntime / TrainingRuntime projection, resolution of a TrainJob's runtimeRef,
 * and the GPU class a runtime selects. Runtimes are few, so the pod template of every
 * replicated job is kept whole, as compact JSON, for the renderer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "reconcilers/mpi.h"
#include "reconcilers/settings.h"
#include "reconcilers/steps.h"
#include "reconcilers/trainjob.h"

enum tj_runtime_kind {
	TJ_RUNTIME_CLUSTER,    /* ClusterTrainingRuntime (cluster-scoped) */
	TJ_RUNTIME_NAMESPACED, /* TrainingRuntime (same namespace as the TrainJob) */
};

/* The ClusterTrainingRuntime label by which a cluster operator lets its jobs run commands
 * that never exit (services, interactive sessions): reconcilers/policy/command_policy.h. Read on
 * ClusterTrainingRuntimes only: whoever may create a TrainingRuntime or a TrainJob in a
 * namespace cannot exempt it. */
#define TJ_LABEL_ALLOW_LONG_RUNNING TJ_LABEL_PREFIX "allow-long-running"

/* The runtime's spec.mlPolicy source: which wiring its pods get (reconcilers/render/wiring.h).
 * A runtime with none gets torch's, as it always has here. Flux is refused
 * (reconcilers/runtime_support.h) and has no value. */
enum tj_ml_policy {
	TJ_ML_TORCH,   /* mlPolicy.torch, or no source */
	TJ_ML_MPI,     /* mlPolicy.mpi */
	TJ_ML_JAX,     /* mlPolicy.jax */
	TJ_ML_XGBOOST, /* mlPolicy.xgboost */
};

struct tj_runtime {
	enum tj_runtime_kind kind;
	enum tj_ml_policy ml_policy;
	char *namespace;      /* owned; "" for a ClusterTrainingRuntime */
	char *name;           /* owned */
	char *gpu_class;      /* owned; label trainjob.flame.dev/gpu-class, NULL if absent */
	char *restart_policy; /* owned; label or annotation trainjob.flame.dev/restart-policy */
	char *max_restarts;   /* owned; label or annotation trainjob.flame.dev/max-restarts */
	char *stall_timeout;  /* owned; label or annotation trainjob.flame.dev/stall-timeout */
	int num_nodes;        /* spec.mlPolicy.numNodes, 1 if unset */
	/* spec.ttlSecondsAfterFinished (Kubeflow's runtime field), else the JobSet template's
	 * spec.template.spec.ttlSecondsAfterFinished; -1 if neither is a number >= 0. */
	int ttl_seconds_after_finished;
	char *num_proc_per_node; /* owned; spec.mlPolicy.torch.numProcPerNode, "auto" if unset */
	/* owned; compact JSON of spec.mlPolicy.torch.envInjection.targets ([{jobName,
	 * containerNames}]: the containers that also get the PET_* variables,
	 * reconcilers/render/render.h), NULL if none */
	char *env_targets;
	/* The pod template ({metadata, spec}) of the replicatedJob named "node", with the Job
	 * template's labels (trainjob-ancestor-step), compact JSON; NULL if the runtime has no
	 * such job. */
	char *node_template; /* owned */
	/* A ClusterTrainingRuntime labelled trainjob.flame.dev/allow-long-running: "true"
	 * (reconcilers/policy/command_policy.h); false for a TrainingRuntime whatever its labels.
	 */
	bool allow_long_running;
	/* spec.mlPolicy.mpi (reconcilers/mpi.h); not enabled for other runtimes. */
	struct tj_mpi_policy mpi;
	/* Every replicated job of spec.template.spec, in order (reconcilers/steps.h). */
	struct tj_step_graph graph; /* owned */
	/* The restart budget of the JobSet template's failurePolicy
	 * (reconcilers/runtime_support.h), -1 if it sets none; the max-restarts annotation
	 * wins. */
	int failure_budget;
	/* owned; compact JSON of spec.template.spec.failurePolicy.rules, which decide each of
	 * the job's own failures (reconcilers/failure_rules.h); NULL if none */
	char *failure_rules;
	/* spec.activeDeadlineSeconds, else the node job's template.spec.activeDeadlineSeconds:
	 * the walltime of its jobs that set none; 0 if neither is a number >= 1. */
	int64_t active_deadline_seconds;
	/* owned; compact JSON {labels, annotations} of spec.template.metadata, the JobSet's
	 * (reconcilers/render/job_metadata.h); NULL if it has none */
	char *template_metadata;
	/* owned; the copy of the runtime object a job's snapshot keeps
	 * (reconcilers/runtime_snapshot.h), NULL when the runtime is too large to copy */
	char *snapshot;
	/* owned; why a field of it is refused (reconcilers/runtime_support.h: reason
	 * UnsupportedRuntime), NULL when every field is supported */
	char *unsupported;
};

/* Projects a runtime object (either kind). -EINVAL if it is neither kind or has no name;
 * -E2BIG if the node template is larger than 256 KiB (or an MPI string than 4096 bytes);
 * -ENOMEM. */
int tj_runtime_from_json(const cJSON *obj, struct tj_runtime **ret);

/* Accepts NULL; returns NULL. */
struct tj_runtime *tj_runtime_free(struct tj_runtime *runtime);

/* "ClusterTrainingRuntime" or "TrainingRuntime". */
const char *tj_runtime_kind_name(enum tj_runtime_kind kind);

/* The kind of runtime job's runtimeRef names: ClusterTrainingRuntime unless its kind says
 * TrainingRuntime. */
enum tj_runtime_kind tj_runtime_ref_kind(const struct tj_trainjob *job);

/* Finds a runtime in a cache. namespace is "" for cluster runtimes. */
typedef const struct tj_runtime *(*tj_runtime_lookup_fn)(void *ctx, enum tj_runtime_kind kind,
                                                         const char *namespace, const char *name);

/* Resolves job's runtimeRef (kind ClusterTrainingRuntime by default; a TrainingRuntime is
 * looked up in the job's namespace). On success writes the runtime (borrowed from the cache)
 * into *ret. When it is missing returns -ENOENT with reason RuntimeNotFound and a message
 * naming it; the job waits for it. Call tj_trainjob_validate first: the kind must be valid. */
int tj_runtime_resolve(const struct tj_trainjob *job, tj_runtime_lookup_fn lookup, void *ctx,
                       const struct tj_runtime **ret, struct tj_problem *why);

/* The GPU class the runtime selects: its label trainjob.flame.dev/gpu-class, else <class> of
 * a runtime named torch-<class> when config has that class, else none (*ret = NULL: a generic
 * runtime such as torch-distributed gets no GPU placement). A label naming a class that the
 * config lacks is -ENOENT with reason UnknownGPUClass. */
int tj_runtime_gpu_class(const struct tj_runtime *runtime, const struct tj_config *config,
                         const struct tj_gpu_class **ret, struct tj_problem *why);
