/* TrainJob planning: the pure core of the reconciler. Given a TrainJob, its resolved runtime,
 * the GPU-class config, the job's pods, node health and the time, it computes the actions
 * that move the cluster toward what the TrainJob asks for: create the Service and pods,
 * delete pods, patch the status, emit events, look again later. No I/O, no clock reads.
 *
 * The rules (DESIGN.md section 4, "Status" and "Failures"):
 * - A job being deleted, or whose spec.managedBy names another controller, gets no actions.
 * - A Complete or Failed job is final: its pods stay for their logs (pods still running
 *   when it failed are deleted); only its jobsStatus and observedGeneration follow. Once
 *   its TTL (the runtime's ttlSecondsAfterFinished, else the config's retention default)
 *   has passed since status.completionTime, its pods and Service are deleted and
 *   status.cleanupTime records it; the TrainJob and the rest of its status stay.
 * - A replaced attempt's finished pods are kept for their logs (reconcilers/policy/retention.h):
 *   they first lose the labels by which Kubeflow's SDK and the Service find a rank and get
 *   TJ_LABEL_FAILED_ATTEMPT (until then they block their rank), then stay until every pod
 *   of the current attempt has run for retention.keepFailedPodsSeconds, or the TTL. Only
 *   the newest such attempt is kept. The failed container's termination message goes into
 *   status.lastFailure.message and the Restarting or Failed event.
 * - An invalid spec, a runtime without a `node` job, or an unknown GPU class: Failed with
 *   the reason, and a Warning event. A missing runtime: Pending with reason RuntimeNotFound
 *   and an event, no pods; the job starts when the runtime appears.
 * - A field of the runtime, or of the TrainJob's overrides and patches, that nothing
 *   implements fails a job that has no pod yet (UnsupportedRuntime, InvalidSpec:
 *   reconcilers/runtime_support.h, trainjob_support.h). A create the API server refused
 *   (reconcilers/plan/refusal.h) left status.reason FailedCreate: state Failed fails the job,
 *   state Pending is planned again within TJ_REFUSAL_RETRY_SECONDS.
 * - suspend: live pods deleted, state Suspended, condition Suspended=True (a condition counts
 *   only with status True: Kubeflow writes Suspended=False on resume, which is dropped
 *   silently). Resume removes the
 *   condition (never Suspended=False, which pins Kubeflow's SDK at Created) and restarts the
 *   activeDeadlineSeconds clock (status.startTime), as batch/v1 Job does.
 *   A job of a Kueue queue whose Workload waits for quota (QuotaReserved False) is Queued
 *   instead, with the Workload's reason and its message (after "Kueue: ").
 * - Walltime (reconcilers/policy/walltime.h): a job asking for more than the maxWalltime in force
 *   is Failed with reason PolicyViolation before any pod exists; a started job's deadline
 *   (status.startTime plus activeDeadlineSeconds, else the defaultWalltime) is written to
 *   status.deadline once and kept. From the warning on, its live pods get the deadline in
 *   their annotation (PatchPod); at the deadline the job is Failed with reason
 *   DeadlineExceeded and its pods are deleted with their own grace period. The plan asks to
 *   be run again at the warning and at the deadline.
 * - Commands (reconcilers/policy/command_policy.h): before any pod exists, a container or
 *   init container of any step (node, the initializers, an MPI launcher running the
 *   trainer's command, ...) whose command never exits fails the job with reason
 *   PolicyViolation, naming the step and the container.
 * - One pod per rank, named by rank and attempt (render.h). The attempt of new pods is
 *   status.restartCount. A rank gets a new pod only when no other pod of that rank exists
 *   any more, even a terminating one, so that the SDK and DNS never see two pods of a rank.
 * - A failed worker of the current attempt triggers a restart. A worker has failed when its
 *   pod is Failed, was disrupted (evicted, preempted: DisruptionTarget), or sits on a node
 *   that has been unhealthy (reconcilers/policy/node_health.h: deleted, unreachable, NotReady,
 *   a GPU health signal, cordoned for a fault) for the grace period (annotation
 *   trainjob.flame.dev/node-grace-period-seconds, else the config's failurePolicy). Its
 *   class (WorkerFailed, Evicted, Preempted, or the node's reason, which wins when the
 *   pod's node is unhealthy at all; NodeSuspect for a WorkerFailed on a node that
 *   in.node_suspect blames, reconcilers/policy/suspect.h) is the state's reason and the plan's
 *   restart_reason;
 *   status.lastFailure records rank, node, pod, reason (the node's, else the pod's most
 *   specific one) and exit code. restartCount+1 and lastFailure are written first, then the
 *   pods are replaced (policy Gang, the default: every worker; Worker: only the failed
 *   rank). The count lives in the status and never resets.
 * - A WorkerFailed exit code listed in failurePolicy.permanentExitCodes fails the job at
 *   once (PermanentFailure). With the budget spent (trainjob.flame.dev/max-restarts on the
 *   TrainJob, else on the runtime, else failurePolicy.maxRestarts) the job is Failed with
 *   reason ReachedMaxRestarts, naming rank, node and exit code. Failures the
 *   infrastructure caused (a node's, NodeSuspect, Evicted, Preempted) are charged instead to
 *   failurePolicy.maxInfrastructureRestarts (ReachedMaxInfrastructureRestarts) and counted
 *   in status.infrastructureRestarts too (reconcilers/policy/budget.h).
 * - Stalled (reconcilers/policy/stall.h): a job whose every rank runs, whose progress has not
 *   changed for its stall timeout (in.progress_seen, and the attempt's start), is restarted
 *   as an infrastructure failure of class Stalled, whatever its restart policy: lastFailure
 *   names rank 0 (the rank that reports) with reason Stalled and what was found in its
 *   message, a Warning event Stalled says the same, and every live pod of the job is stopped
 *   and kept for its logs (retention.h), not deleted. A stall names no node: the next
 *   attempt avoids none for it. Until the next failure the new attempt is whole under
 *   either policy (every pod of an earlier attempt was stopped). The plan asks to be run
 *   again when the job would be stalled.
 * - The pods of restart n are created restartBackoff.initialSeconds * 2^(n-1) (at most
 *   maxSeconds) after lastFailure.time; the state stays Restarting meanwhile, and the plan
 *   asks to be run again then (requeue_after), so a restarted controller keeps the backoff.
 * - Replacements avoid, by required node affinity, the node of the last failure and every
 *   unhealthy node the job's pods are on; the GPU class's affinity keeps them in the class.
 * - A pod on a failed node is deleted with grace 0 (force), and so is a pod stuck
 *   Terminating there, whatever the job's state: its kubelet will never confirm it, and
 *   its rank gets no new pod while it exists. A node still within its grace period makes
 *   the plan ask to be run again when the period ends.
 * - Admission (when the input has one): missing pods are created only once the whole gang
 *   is admitted, each pinned to the node admission chose (render.h, tj_render_pin). Until
 *   then no pod is created, the plan says what it wants admitted (plan.want), and the state
 *   is Queued (Restarting for a restart's replacements) with the queue's reason, message,
 *   position and expected start; status.startTime, the start of the activeDeadlineSeconds
 *   clock, is written only when the pods are created. NeverFits fails the job. A pinned pod
 *   that stays unschedulable for pin_timeout gives the whole gang back: every live pod of
 *   the attempt is deleted, the start time cleared, and the job queued again. A restart
 *   whose replacements have waited restart_wait since the failure, while its live ranks
 *   hold their GPUs, gives those back too (GangReleased) and waits whole. An MPI
 *   launcher that asks for GPUs of the class is part of the gang (plan.want.launcher): its
 *   node is admitted with the node pods', held in an annotation of the first node pod
 *   created (reconcilers/admission/launcher_hold.h), and the launcher, created once the nodes are
 *   Ready, is pinned there.
 * - Steps (reconcilers/steps.h, plan_steps.c): the pods of the runtime's other replicated
 *   jobs are created once their dependsOn (and startupPolicy InOrder) are met; the node
 *   pods wait for theirs (state Pending, reason WaitingForSteps). A failed pod of a step is
 *   a worker failure of the attempt, restarted or failed by the same rules. When the
 *   runtime has steps besides node, its success policy decides Complete, and the pods
 *   still running are deleted then. The PVCs of volumeClaimPolicies are posted
 *   (CREATE_OBJECT) with every batch of pods, and mounted in them.
 * - Native gang scheduling (in.native_gang): every batch of pod creates also posts the job's
 *   Workload and PodGroup (reconcilers/render/native_gang.h), and each pod names the PodGroup, so
 *   that kube-scheduler binds the gang whole or not at all. The TTL's cleanup deletes them
 *   with the pods and the Service.
 * - state: Pending until every rank's pod runs (an Unschedulable pod's scheduler message in
 *   status.message), Running while every rank's pod runs or has succeeded (reason
 *   AllPodsRunning only while all of them run), Restarting from a restart until every pod
 *   runs again, Complete (condition Complete=True) when every rank's pod succeeded, Failed
 *   (condition Failed=True).
 *
 * Actions come in stages: the actions of one stage are independent and may run
 * concurrently; stage n+1 starts only after every action of stage n succeeded. When a plan
 * decides something that must not be forgotten (a restart, a failure), the status patch is
 * alone in stage 0, so that a crash cannot lose the restart count. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/node.h"
#include "informers/pod.h"
#include "informers/workload.h"
#include "reconcilers/admission/admission.h"
#include "reconcilers/runtime.h"
#include "reconcilers/runtime_snapshot.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

enum tj_action_kind {
	/* POST object (a Service) to /api/v1/namespaces/NS/services; AlreadyExists is success. */
	TJ_ACTION_CREATE_SERVICE,
	/* POST object (a Pod) to /api/v1/namespaces/NS/pods; AlreadyExists is success (the pod
	 * is adopted: its name is deterministic). */
	TJ_ACTION_CREATE_POD,
	/* DELETE pod name with preconditions.uid = uid; NotFound and a failed uid precondition
	 * (409 Conflict) are success. grace_seconds -1 means the pod's own grace period. */
	TJ_ACTION_DELETE_POD,
	/* PATCH object to the TrainJob's status subresource as application/merge-patch+json.
	 * The body carries metadata.resourceVersion, so a plan made from a stale cache gets 409
	 * Conflict and is retried; after success the executor should store the returned object
	 * in the cache, so that the next plan sees the new restartCount at once. */
	TJ_ACTION_PATCH_STATUS,
	/* Record a core/v1 Event on the TrainJob (through the aggregation of events.h). */
	TJ_ACTION_EVENT,
	/* PATCH object to pod name as application/merge-patch+json: the deadline's warning
	 * (reconcilers/policy/walltime.h), or the labels of a pod kept for its logs, whose body
	 * names the pod's uid so that a newer pod of that name is left alone. NotFound and Conflict
	 * are success (the pod meant is gone). */
	TJ_ACTION_PATCH_POD,
	/* DELETE the Service name; NotFound is success. */
	TJ_ACTION_DELETE_SERVICE,
	/* POST object, a namespaced core/v1 object the TrainJob owns (a PersistentVolumeClaim
	 * of volumeClaimPolicies, a Secret, a ConfigMap), to the collection of its kind in
	 * NS; AlreadyExists is success, as the name is deterministic. The executor knows the
	 * kinds it may create (controller/executor/executor.h); name is the object's name. */
	TJ_ACTION_CREATE_OBJECT,
	/* POST object (a Workload, native_gang.h) to
	 * /apis/scheduling.k8s.io/v1alpha2/namespaces/NS/workloads; AlreadyExists is success. */
	TJ_ACTION_CREATE_WORKLOAD,
	/* POST object (a PodGroup, native_gang.h) to .../podgroups; AlreadyExists is success. */
	TJ_ACTION_CREATE_POD_GROUP,
	/* DELETE the Workload (the PodGroup) name of native gang scheduling; NotFound is
	 * success. */
	TJ_ACTION_DELETE_WORKLOAD,
	TJ_ACTION_DELETE_POD_GROUP,
};

struct tj_action {
	enum tj_action_kind kind;
	int stage;
	/* Bookkeeping nobody waits for in the same second (controller/executor/write_gate.h): the
	 * Service, a status patch that only reports progress, an event. Pod creates and deletes,
	 * and a status patch that records a restart or a failure (stage 0 of its plan), are urgent.
	 */
	bool deferrable;
	char name[TJ_NAME_MAX]; /* CREATE_*, DELETE_*, PATCH_POD: the object's name */
	char uid[64];           /* DELETE_POD: the pod's uid, the delete's precondition */
	int grace_seconds;      /* DELETE_POD: -1 = the pod's default; 0 = force */
	cJSON *object;          /* owned; CREATE_*: the object; PATCH_*: the patch body */
	/* EVENT */
	bool warning; /* type Warning, else Normal */
	char reason[TJ_REASON_MAX];
	char message[TJ_MESSAGE_MAX];
	/* CREATE_OBJECT of an MPI job's Secret (reconcilers/mpi.h): the executor generates its
	 * key pair and sets its data just before the create, as a plan cannot make keys. */
	bool ssh_key;
	/* PATCH_POD that takes the gang's scheduling gate off the pod: expected in the pod cache
	 * before the job is planned again (controller/expectations.h). */
	bool ungate;
};

/* The admission's ticket: what the built-in admission (reconcilers/admission/admission.h) says of a
 * job's gang, gathered before the plan and taken by it as input. A plain value: the plan
 * calls nothing back; its strings are borrowed from the queue, which decides nothing while a
 * plan is being made. */
struct tj_admission_ticket {
	/* The gang may be created now: for each rank that needs a pod, in rank order, the node
	 * it is pinned to (borrowed). */
	bool admitted;
	const char *const *nodes;
	size_t n_nodes;
	/* The queue's verdict (borrowed), or NULL while the job has not been looked at yet. */
	const struct tj_admission_decision *decision;
	/* Seconds a pinned pod may stay unschedulable before the whole gang is given back; 0:
	 * never. */
	int64_t pin_timeout;
	/* Seconds a restart's replacements may wait, from the failure (last_failure.time),
	 * while the job's live ranks hold their nodes; then those are deleted too and the gang
	 * waits whole, with a reservation of its own. 0: for ever. */
	int64_t restart_wait;
	/* admitted with the place of the gang's launcher (want.launcher): its node (borrowed);
	 * NULL without. */
	const char *launcher_node;
	/* The gang's creates went out and were not refused: pods of it that the cache does not
	 * show yet are behind, not missing. Without it (and without an admission), a gang
	 * whose pods exist only in part, all still behind their gate, was refused or cut short
	 * (a controller stopped mid-creation): its pods are deleted and it queues again whole. */
	bool creating;
	/* The queue preempts the running job for a job of a higher QOS tier (admission.h,
	 * "Preemption"): its pods stop at preempt_at (unix seconds; 0: no preemption), for
	 * preempted_by ("namespace/name", borrowed). */
	int64_t preempt_at;
	const char *preempted_by;
};

/* The most nodes one give-back reports as refusing the gang's pods, and how long the
 * admission keeps the job off them: long enough for what kept the pod off (a foreign pod, a
 * taint, a quota of the node) to go, short enough that a node fixed meanwhile is not lost
 * to the job for good. */
/* The reasons of a running job sent back to the queue (Queued): preempted for a job of a
 * higher QOS tier, or requeued by kubectl scontrol requeue. */
#define TJ_REASON_PREEMPTED     "Preempted"
#define TJ_REASON_REQUEUED      "Requeued"

#define TJ_PLAN_MAX_REFUSED     16
#define TJ_PLAN_REFUSAL_MINUTES 10

/* The gang a plan waits to have admitted: the controller puts it in the queue. */
struct tj_plan_want {
	bool wanted;
	int num_nodes;
	int num_pods; /* ranks that need a pod now */
	/* The job held its gang before: a restart's replacements, or a gang created in part
	 * (a controller stopped in the middle of its creates). Ahead of every queued job. */
	bool restart;
	/* Unix seconds before which no pod of it may be created (the end of a restart's backoff):
	 * the queue keeps its place and holds its nodes from then; 0: none. */
	int64_t not_before;
	int64_t walltime;            /* the effective walltime (walltime.h); 0 for none */
	char gpu_class[TJ_NAME_MAX]; /* the runtime's class, "" for none */
	int tier;                    /* the priority of its QOS tier (qos.h) */
	/* Its tier's preemption (settings.h): the tiers it may preempt, and after how long. */
	uint32_t preempts;
	int64_t preempt_after;
	bool backfill_reserved_nodes; /* its tier's backfillReservedNodes (settings.h) */
	unsigned qos; /* the index of its tier in the policy's list (qos.h); 32 or more: none */
	/* The nodes its pods must avoid (owned array of owned names): where its last worker
	 * failed, and unhealthy nodes of its pods. */
	char **excluded;
	size_t n_excluded;
	cJSON *pod; /* owned; the first missing rank's pod, for its requests
	             * and its priorityClassName */
	/* owned; the MPI launcher pod that needs its place with the gang (it asks for GPUs of
	 * the class, and no node pod holds a place for it: reconcilers/admission/launcher_hold.h),
	 * for its requests; NULL for none */
	cJSON *launcher;
};

/* The plan's admission actions: a plain value the controller hands to the queue
 * (controller/admission/admitter.h, tj_admitter_commit) as it hands the other actions to the API
 * server. */
struct tj_gang_request {
	/* Set when the plan would create pods but its gang is not admitted (yet): the plan
	 * writes the Queued status instead, and the queue decides the gang. */
	struct tj_plan_want want;
	/* The plan creates the gang its ticket admitted (its nodes stay reserved until the
	 * cache shows its pods), ahead of a blocked head when backfilled (for the metric). */
	bool admits, backfilled;
	/* The nodes whose pinned pods the scheduler would not take within the pin timeout, as
	 * the plan gave the gang back: the admission keeps the job off them for a while, so
	 * that it is never placed on the same wrong nodes twice. */
	char refused[TJ_PLAN_MAX_REFUSED][TJ_NAME_MAX];
	size_t n_refused;
};

struct tj_plan {
	struct tj_action *actions; /* owned array of n_actions, in stage order */
	size_t n_actions;
	int n_stages;
	/* Plan again after this many seconds even if nothing changes (an activeDeadlineSeconds
	 * that will pass, a restart backoff or a node grace period that will end); 0 for none. */
	int64_t requeue_after;
	/* The status this plan arrives at (what the status patch writes, or the current status
	 * when there is no patch), for logs and metrics. */
	struct tj_trainjob_status status;
	/* The class of the failure when this plan restarts workers, "" otherwise: WorkerFailed,
	 * Evicted, Preempted, NodeDeleted, NodeUnreachable, NodeNotReady, GPUUnhealthy,
	 * NodeCordonedForFault, NodeSuspect or Stalled. The label of
	 * trainjob_worker_restarts_total{reason}, counted once the plan has been executed. */
	char restart_reason[TJ_REASON_MAX];
	/* The plan found the job stalled (restarted, or failed with its budget spent): counted
	 * in trainjob_stalled_total once the plan has been executed. */
	bool stalled;
	/* What the plan asks of the admission, which the controller hands to the queue. */
	struct tj_gang_request gang;
	/* The GPU class of the job's runtime, "" for none (the metrics' label). */
	char gpu_class[TJ_NAME_MAX];
	/* The job's QOS tier, "" when none was resolved (the metrics' label). */
	char qos[64];
};

/* Finds a node in the Node cache; NULL if there is no such node. */
typedef const struct tj_node *(*tj_node_lookup_fn)(void *ctx, const char *name);

struct tj_dependency_lookup;

struct tj_plan_input {
	const struct tj_trainjob *job;
	/* The resolved runtime (tj_runtime_resolve), or NULL with runtime_problem saying why. */
	const struct tj_runtime *runtime;
	const struct tj_problem *runtime_problem;
	/* Whether runtime is the job's snapshot (reconcilers/runtime_snapshot.h); when it is
	 * MISSING, a plan that creates pods also creates the snapshot. */
	enum tj_snapshot_state snapshot;
	const struct tj_config *config; /* GPU classes and failure policy; NULL = none, defaults */
	/* The job's pods: the controller passes those labelled
	 * trainer.kubeflow.org/trainjob-name=<job> whose controller owner is this job; any
	 * other (a namesake's leftovers) is ignored all the same. */
	const struct tj_pod *const *pods;
	size_t n_pods;
	/* The Node cache, for node health; NULL: every node counts as healthy. A node it does
	 * not find has been deleted. */
	tj_node_lookup_fn node_lookup;
	void *node_ctx;
	/* Whether a failure on that node is blamed on it (reconcilers/policy/suspect.h: the node
	 * is suspect), called with node_ctx; NULL: never. */
	bool (*node_suspect)(void *ctx, const char *node);
	/* The TrainJobs of the job's namespace, for its dependency (reconcilers/plan/dependency.h);
	 * NULL: none are known (the offline view), and a dependency holds nothing. */
	const struct tj_dependency_lookup *jobs;
	/* NULL: no built-in admission for this job (switched off, Kueue or another admitter):
	 * missing pods are created at once. */
	const struct tj_admission_ticket *ticket;
	/* Kueue's Workload of the job (informers/workload.h); NULL without one, or when the
	 * controller does not watch them. */
	const struct tj_workload *workload;
	int64_t now; /* unix seconds */
	/* When the controller last saw the progress the job reports (status.trainerStatus)
	 * change, or first saw the job with it, by its own clock (unix seconds,
	 * controller/stall_clock.h); 0: never, and the job is not judged stalled
	 * (reconcilers/policy/stall.h). */
	int64_t progress_seen;
	/* The offline view (render): every step's pods at once, as if each step's dependsOn
	 * were met, so a person sees the whole graph. The controller leaves it false. */
	bool all_steps;
	/* The API server serves the Workload API (native_gang.h): every batch of pods comes
	 * with the job's Workload and PodGroup, and each pod is a member of the PodGroup. */
	bool native_gang;
};

/* Computes the plan. Returns 0, or -ENOMEM; a job that cannot run is not an error but a
 * plan that fails it. */
int tj_plan_trainjob(const struct tj_plan_input *in, struct tj_plan **ret);

/* Accepts NULL; returns NULL. */
struct tj_plan *tj_plan_free(struct tj_plan *plan);

/* "CreateService", "CreatePod", "DeletePod", "PatchStatus", "Event", "PatchPod",
 * "DeleteService", "CreateObject", "CreateWorkload", "CreatePodGroup". */
const char *tj_action_kind_name(enum tj_action_kind kind);
