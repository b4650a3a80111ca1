/* TrainJob projection (trainer.kubeflow.org/v1alpha1): the fields of a TrainJob that the
 * reconciler reads, including the status this controller owns, and the validation that turns
 * a bad spec into a reason a person can act on. Arbitrary pod-spec fragments (the overrides,
 * resourcesPerNode, env valueFrom) are kept as compact JSON strings: they are only ever
 * copied into a rendered pod. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/pod.h"

/* Annotations and labels of this project read on TrainJobs and runtimes. */
#define TJ_ANNOTATION_MAX_RESTARTS   TJ_LABEL_PREFIX "max-restarts"
#define TJ_ANNOTATION_RESTART_POLICY TJ_LABEL_PREFIX "restart-policy"
/* Seconds a node may be unhealthy before the job's workers on it count as failed (0..86400);
 * overrides the config file's failurePolicy.nodeGracePeriodSeconds. */
#define TJ_ANNOTATION_NODE_GRACE_PERIOD TJ_LABEL_PREFIX "node-grace-period-seconds"
#define TJ_LABEL_GPU_CLASS              TJ_LABEL_PREFIX "gpu-class"
/* The job's place in the queue of its GPU class, an integer in [-1000000000, 1000000000]
 * (higher first); overrides the value of the pods' PriorityClass. */
#define TJ_ANNOTATION_PRIORITY TJ_LABEL_PREFIX "priority"
/* Seconds before its deadline a job's pods are warned (reconcilers/policy/walltime.h). */
#define TJ_ANNOTATION_DEADLINE_WARNING TJ_LABEL_PREFIX "deadline-warning-seconds"
/* How long the progress a running job reports may stay unchanged before it is restarted as
 * Stalled (reconcilers/policy/stall.h); on the TrainJob, else on its runtime. */
#define TJ_ANNOTATION_STALL_TIMEOUT TJ_LABEL_PREFIX "stall-timeout"
/* Kueue's queue label: a job that carries it is admitted by Kueue, not by us. */
#define TJ_LABEL_KUEUE_QUEUE "kueue.x-k8s.io/queue-name"

/* spec.managedBy values that mean this controller (unset means it too). */
#define TJ_MANAGED_BY_KUBEFLOW "trainer.kubeflow.org/trainjob-controller"

#define TJ_API_GROUP           "trainer.kubeflow.org"
#define TJ_API_VERSION         "trainer.kubeflow.org/v1alpha1"

/* Limits on what one TrainJob may carry; beyond them the spec is rejected (InvalidSpec). */
#define TJ_MAX_NODES      4096
#define TJ_MAX_LIST_ITEMS 128         /* command, args, env (the CRD's own maxItems) */
#define TJ_MAX_FRAGMENT   (64 * 1024) /* serialized overrides or resources */
#define TJ_MAX_CONDITIONS 3           /* Suspended, Complete, Failed */
#define TJ_REASON_MAX     64
#define TJ_MESSAGE_MAX    1024
/* The most processes per node (numProcPerNode, given or from the GPU or CPU count). */
#define TJ_MAX_PROCS_PER_NODE 1024
#define TJ_NAME_MAX           254 /* a DNS subdomain name and its NUL */
#define TJ_KEY_MAX            320 /* "namespace/name" and its NUL */
#define TJ_ANNOTATION_REQUEUE TJ_LABEL_PREFIX "requeue"

/* A reason (CamelCase, as metav1.Condition wants) and a message a person can act on. */
struct tj_problem {
	char reason[TJ_REASON_MAX];
	char message[TJ_MESSAGE_MAX];
};

/* Writes reason and a formatted message into *p; returns -EINVAL for `return tj_problem_set`. */
int tj_problem_set(struct tj_problem *p, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Our own status.state. TJ_STATE_NONE is a job the controller has not written yet. */
enum tj_state {
	TJ_STATE_NONE,
	TJ_STATE_PENDING,
	TJ_STATE_QUEUED, /* waiting for admission (reconcilers/admission/admission.h): no pod exists
	                  */
	TJ_STATE_RUNNING,
	TJ_STATE_RESTARTING,
	TJ_STATE_SUSPENDED,
	TJ_STATE_COMPLETE,
	TJ_STATE_FAILED,
	TJ_STATE_COUNT,
};

/* "Pending", ...; "" for TJ_STATE_NONE. */
const char *tj_state_name(enum tj_state state);

enum tj_condition_type {
	TJ_CONDITION_SUSPENDED,
	TJ_CONDITION_COMPLETE,
	TJ_CONDITION_FAILED,
};

/* "Suspended", "Complete", "Failed". */
const char *tj_condition_type_name(enum tj_condition_type type);

struct tj_condition {
	enum tj_condition_type type;
	bool status; /* True or False (Unknown is read as False) */
	char reason[TJ_REASON_MAX];
	char message[TJ_MESSAGE_MAX];
	int64_t last_transition_time; /* unix seconds */
};

/* status.lastFailure: the failure that caused the last restart, or the final one. */
struct tj_failure {
	int rank;               /* -1 when there is no failure */
	char node[TJ_NAME_MAX]; /* "" if the pod was never scheduled */
	char pod[TJ_NAME_MAX];  /* the failed pod's name */
	char reason[TJ_REASON_MAX];
	int exit_code; /* -1 if the container did not report one */
	int64_t time;  /* when the controller saw it, unix seconds */
	/* The container's termination message (with FallbackToLogsOnError, the end of its
	 * log), cut between UTF-8 sequences (reconcilers/render/termination.h); "" if none. */
	char message[TJ_MESSAGE_MAX];
};

/* The most replicated jobs (steps) a runtime may have (reconcilers/steps.h). */
#define TJ_MAX_STEPS 16

/* status.jobsStatus[]: one replicated job (step) and the counts of its child Jobs, with
 * JobSet's meaning (reconcilers/steps.h, tj_step_jobs_status). */
struct tj_jobs_status {
	char name[64];
	int active, ready, succeeded, failed, suspended;
};

/* The status this controller owns. Fixed-size strings: the planner copies it by value. */
struct tj_trainjob_status {
	enum tj_state state;
	char reason[TJ_REASON_MAX];
	char message[TJ_MESSAGE_MAX];
	int restart_count; /* every restart: the attempt of the next pods */
	/* Of restart_count, those the infrastructure caused (reconcilers/policy/budget.h). */
	int infrastructure_restarts;
	struct tj_failure last_failure;
	/* unix seconds, 0 if unset: when the gang was admitted and its pods created, so a
	 * queued job's activeDeadlineSeconds never runs while it waits */
	int64_t start_time;
	int64_t completion_time; /* unix seconds, 0 if unset */
	/* unix seconds, 0 if unset: when ttlSecondsAfterFinished passed and the job's pods and
	 * Service were deleted (reconcilers/policy/retention.h); the TrainJob stays as the record.
	 */
	int64_t cleanup_time;
	/* While Queued: the reservation's time (0 if unknown) and the place in the queue of the
	 * job's class (0 when not queued). */
	int64_t expected_start_time;
	int queue_position;
	/* unix seconds, 0 if unset: startTime plus the walltime (reconcilers/policy/walltime.h) */
	int64_t deadline;
	int64_t observed_generation;
	bool has_jobs_status;
	struct tj_jobs_status jobs[TJ_MAX_STEPS]; /* one per step, in the runtime's order */
	size_t n_jobs;
	struct tj_condition conditions[TJ_MAX_CONDITIONS];
	size_t n_conditions;
	/* GPU-seconds held by the job's pods over every attempt, the part of them spent in
	 * attempts that failed, and the moment up to which they are counted (unix seconds, 0
	 * before anything was): reconcilers/usage/gpu_seconds.h. */
	int64_t gpu_seconds;
	int64_t wasted_gpu_seconds;
	int64_t gpu_seconds_until;
	/* Preemption (reconcilers/plan/plan.h): while the running job is being preempted, when its
	 * pods stop (unix seconds; 0: it is not) and the job that preempts it ("namespace/name");
	 * then, over its life, how often it was preempted and the GPU-seconds those attempts
	 * held (status.preemption, status.preemptions, status.preemptedGpuSeconds). */
	int64_t preempt_at;
	char preempted_by[TJ_KEY_MAX];
	int preemptions;
	int64_t preempted_gpu_seconds;
	/* The request of trainjob.flame.dev/requeue last carried out (unix seconds; 0: none),
	 * status.lastRequeueTime: each request is carried out once. */
	int64_t requeued_at;
	/* What the job's training code last reported (Kubeflow's status.trainerStatus,
	 * reconcilers/trainer_status.h): percent done and seconds left, each when it has one,
	 * and a digest of its progress (progressPercentage and the metrics, names and values
	 * in order; not the remaining seconds nor lastUpdatedTime), 0 when the report has
	 * neither: what reconcilers/policy/stall.h watches change. Read only: the trainer
	 * status server writes them, never the planner. */
	bool has_progress;
	int progress_percent;
	bool has_eta;
	int64_t eta_seconds;
	uint64_t progress_digest;
};

struct tj_env_var {
	char *name;       /* owned */
	char *value;      /* owned; NULL when value_from is set */
	char *value_from; /* owned; compact JSON of valueFrom, NULL if unset */
};

struct tj_trainjob {
	char *namespace;        /* owned */
	char *name;             /* owned */
	char *uid;              /* owned */
	char *resource_version; /* owned */
	int64_t generation;
	int64_t creation_time; /* unix seconds */
	int64_t deletion_time; /* unix seconds, 0 if not being deleted */
	char *max_restarts; /* owned; annotation trainjob.flame.dev/max-restarts, NULL if absent */
	char *restart_policy; /* owned; annotation trainjob.flame.dev/restart-policy, NULL if absent
	                       */
	/* owned; annotation trainjob.flame.dev/node-grace-period-seconds, NULL if absent */
	char *node_grace_period;
	char *priority; /* owned; annotation trainjob.flame.dev/priority, NULL if absent */
	/* owned; annotation trainjob.flame.dev/qos (reconcilers/policy/qos.h), NULL if absent */
	char *qos;
	/* owned; annotations trainjob.flame.dev/dependency and job-name
	 * (reconcilers/plan/dependency.h), NULL if absent */
	char *dependency;
	char *job_name;
	/* owned; annotation trainjob.flame.dev/hold ("true": held before it starts, as
	 * scontrol hold), NULL if absent */
	char *hold;
	/* owned; annotation trainjob.flame.dev/requeue (kubectl scontrol requeue): the time of
	 * the request, RFC 3339; a run that started by then goes back to the queue. NULL if
	 * absent. */
	char *requeue;
	/* owned; the annotations trainjob.flame.dev/submitted-by and partition that kubectl
	 * sbatch writes, NULL if absent: kept in the job's accounting record
	 * (reconcilers/usage/accounting.h) */
	char *submitted_by;
	char *partition;
	bool kueue; /* labelled kueue.x-k8s.io/queue-name */
	/* owned; annotation trainjob.flame.dev/deadline-warning-seconds, NULL if absent */
	char *deadline_warning;
	/* owned; annotation trainjob.flame.dev/stall-timeout, NULL if absent */
	char *stall_timeout;

	/* spec.runtimeRef; kind and apiGroup are NULL when unset (their defaults apply). */
	char *runtime_api_group; /* owned */
	char *runtime_kind;      /* owned */
	char *runtime_name;      /* owned */

	/* spec.trainer */
	char *image;    /* owned; NULL if unset */
	char **command; /* owned array of n_command owned strings; NULL if unset */
	size_t n_command;
	char **args; /* owned array of n_args owned strings */
	size_t n_args;
	struct tj_env_var *env; /* owned array of n_env */
	size_t n_env;
	int num_nodes;            /* 0 if unset */
	char *num_proc_per_node;  /* owned; "auto", "cpu", "gpu" or a decimal integer; NULL if unset
	                           */
	char *resources_per_node; /* owned; compact JSON of the ResourceRequirements, NULL if unset
	                           */

	char *pod_template_overrides; /* owned; compact JSON array (v2.1 and later), NULL if unset
	                               */
	char *pod_spec_overrides;     /* owned; compact JSON array (v2.0), NULL if unset */
	char *runtime_patches;        /* owned; compact JSON array (the newest API, Kubeflow's SDK
	                                 RuntimePatch option), NULL if unset */
	/* owned; compact JSON of spec.initializer ({dataset, model}), NULL if unset: what the
	 * initializer steps' containers get (reconcilers/render/render_step.h) */
	char *initializer;
	/* owned; compact JSON objects of spec.labels and spec.annotations (Kubeflow v2.0/v2.1),
	 * merged over the runtime template's (reconcilers/render/job_metadata.h); NULL if unset */
	char *labels;
	char *annotations;
	bool suspend;
	char *managed_by;                /* owned; NULL if unset */
	int64_t active_deadline_seconds; /* 0 if unset */

	/* The first field whose JSON type or size was wrong while projecting
	 * ("spec.trainer.numNodes: must be an integer"), NULL if none. Reported by
	 * tj_trainjob_validate. */
	char *spec_error; /* owned */

	struct tj_trainjob_status status;
};

/* Projects a TrainJob object. -EINVAL if it has no metadata.name or namespace (it cannot
 * even be reported on); a spec of the wrong shape is projected with spec_error set instead,
 * so that the job can be failed with that reason. -ENOMEM. */
int tj_trainjob_from_json(const cJSON *obj, struct tj_trainjob **ret);

/* Accepts NULL; returns NULL. */
struct tj_trainjob *tj_trainjob_free(struct tj_trainjob *job);

/* The TrainJob cache's indexes (its store's ops: controller/stores.h): every job by namespace;
 * by namespace the jobs that name a dependency (those a change of another job of the namespace
 * may let start); and under the value TJ_TRAINJOB_STOPPING the running jobs a preemption is
 * stopping (status.preemptAt set, started, neither Complete nor Failed), which each admission
 * cycle reads. */
enum {
	TJ_TRAINJOB_INDEX_NAMESPACE,
	TJ_TRAINJOB_INDEX_DEPENDENT,
	TJ_TRAINJOB_INDEX_STOPPING,
};
#define TJ_TRAINJOB_STOPPING "stopping"

/* True unless spec.managedBy names another controller (for example MultiKueue). */
bool tj_trainjob_is_ours(const struct tj_trainjob *job);

/* The checks that need only the TrainJob: projection errors, runtimeRef, numNodes,
 * numProcPerNode, the name's length (the pod hostname J-node-0-<rank> must fit in 63
 * characters), activeDeadlineSeconds and our annotations. Returns 0, or -EINVAL with the
 * reason (InvalidSpec or TrainingRuntimeNotSupported) and a message naming the field. */
int tj_trainjob_validate(const struct tj_trainjob *job, struct tj_problem *ret);

/* The condition of that type, or NULL. */
const struct tj_condition *tj_trainjob_status_condition(const struct tj_trainjob_status *status,
                                                        enum tj_condition_type type);

/* Whether the condition of that type is present with status True. Presence alone says
 * nothing: Kubeflow Trainer writes Suspended=False (reason Resumed) on resume. */
bool tj_trainjob_status_is_true(const struct tj_trainjob_status *status,
                                enum tj_condition_type type);

/* Parses a status object into *ret (unknown fields are ignored, wrong types read as unset). */
void tj_trainjob_status_from_json(const cJSON *status, struct tj_trainjob_status *ret);

/* The status as the JSON object that goes under "status" of a merge patch: every field we
 * own, with null for the ones unset, so the patch also clears them. NULL on -ENOMEM. */
cJSON *tj_trainjob_status_to_json(const struct tj_trainjob_status *status);

/* True if a and b would serialize to the same JSON. */
bool tj_trainjob_status_equal(const struct tj_trainjob_status *a,
                              const struct tj_trainjob_status *b);

/* Makes the TrainJob the controller owner of an object: metadata.ownerReferences with
 * controller and blockOwnerDeletion, so the object goes when the TrainJob does. -ENOMEM. */
int tj_trainjob_add_owner(cJSON *meta, const struct tj_trainjob *job);
