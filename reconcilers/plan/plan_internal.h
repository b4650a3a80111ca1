/* The planner's working state and the helpers its rules share, for the files of
 * reconcilers/plan/: plan.c (the rules in order, failures and restarts, the status) and the
 * rules in a file each (plan_gang.c: creating the gang, and waiting for its admission;
 * plan_steps.c: the steps other than node; plan_commands.c, plan_deadline.c,
 * plan_dependency.c, plan_mpi.c, plan_preempt.c, plan_retention.c, plan_stall.c,
 * plan_support.c, refusal.c). Nothing outside reconcilers/plan/ includes it; the interface is
 * plan.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "reconcilers/plan/plan.h"
#include "reconcilers/policy/node_health.h"
#include "reconcilers/policy/qos.h"
#include "reconcilers/policy/stall.h"
#include "reconcilers/policy/walltime.h"
#include "reconcilers/render/render.h"

/* Nodes a replacement pod is kept away from: the last failed node and the unhealthy nodes
 * of the job's pods. Beyond this many, the scheduler's own taint rules must do. */
#define MAX_EXCLUDED_NODES 32

/* Where an action goes when the plan is finished: mutations (creates and deletes), the
 * status patch and events are ordered by the plan's kind of decision (see plan.h). */
enum slot {
	SLOT_MUTATION,
	SLOT_STATUS,
	SLOT_EVENT,
	/* What a mutation needs to exist first, in a stage before the mutations: the Workload
	 * that the API server wants to see before it admits the PodGroup naming it. */
	SLOT_PREREQUISITE,
};

/* The health of an owned pod's node, as far as the planner needs it. */
struct pod_node {
	enum tj_node_fault fault; /* TJ_NODE_HEALTHY when unscheduled or unknown */
	bool failed;              /* unhealthy for the grace period */
};

/* A worker failure: the pod, its class and, for a node failure, the node's health. */
struct failure {
	const struct tj_pod *pod;
	const char *cls; /* WorkerFailed, Evicted, Preempted or a node fault's reason */
	struct tj_node_health node;
};

struct planner {
	const struct tj_plan_input *in;
	const struct tj_trainjob *job;
	const struct tj_failure_policy *policy;
	int64_t grace; /* the node grace period in force */
	char restart_reason[TJ_REASON_MAX];
	struct tj_trainjob_status st; /* the status being computed */
	struct tj_action *actions;    /* owned until moved into the plan */
	enum slot *slots;             /* owned; parallel to actions */
	size_t n, cap;
	bool oom;
	bool status_first;     /* the plan decided a restart or a failure */
	bool stalled;          /* plan.stalled */
	int64_t stall_timeout; /* the job's (reconcilers/policy/stall.h); 0: none */
	bool stale;            /* the cached TrainJob is older than its pods: no actions */
	bool queued; /* the gang waits for admission, or never fits: no progress from the pods */
	struct tj_gang_request request; /* plan.gang */
	const char *const *excluded;    /* borrowed; the nodes replacements avoid */
	char gpu_class[TJ_NAME_MAX];
	const char *gpu_resource; /* borrowed; the class's resource, NULL without a class */
	bool gang;                /* restart policy Gang */
	size_t n_excluded;
	int64_t requeue_after;
	/* The job's own pods and, per rank, the pod of the current attempt. */
	const struct tj_pod **owned; /* owned array (of borrowed pods) */
	bool *deleted;               /* owned; parallel to owned: a delete is planned */
	struct pod_node *nodes;      /* owned; parallel to owned */
	size_t n_owned;
	const struct tj_pod **current; /* owned array of num_nodes */
	bool *blocked;                 /* owned; the rank still has a pod of another attempt */
	int num_nodes;
	struct tj_walltime walltime; /* resolved by tj_planner_walltime */
	/* The job's QOS tier, resolved by tj_planner_walltime; NULL for a started job whose
	 * tier the config no longer allows it. */
	const struct tj_qos_tier *qos;
	/* The newest attempt of the pods kept for their logs, or to be (retention.h); -1. */
	int newest_kept;
	/* borrowed; the failed container's termination message, for the Failed event */
	const char *log_tail;
	/* The steps other than node (plan_steps.c): per step, the current pod of each slot
	 * and whether a slot still has a pod of an older attempt; NULL for the node step. */
	const struct tj_pod **step_slots[TJ_MAX_STEPS]; /* owned arrays */
	bool *step_blocked[TJ_MAX_STEPS];               /* owned arrays */
	bool *is_step; /* owned; parallel to owned: the pod is of a step other than node */
	/* Every node pod succeeded but the success policy is not met yet. */
	bool hold_completion;
};

static inline bool is_deleting(const struct tj_pod *pod)
{
	return pod->deletion_time != 0;
}

static inline bool is_finished(const struct tj_pod *pod)
{
	return pod->phase == TJ_POD_SUCCEEDED || pod->phase == TJ_POD_FAILED;
}

/* Whether pod is the one whose failure the status records (lastFailure), not a success: under
 * the restart policy Worker it is still its rank's pod after the restart was recorded, until
 * it is kept for its logs or gone (delete_recorded_failure retires it). */
static inline bool is_recorded_failure(const struct planner *p, const struct tj_pod *pod)
{
	return pod && pod->phase != TJ_POD_SUCCEEDED &&
	       strcmp(pod->name, p->job->status.last_failure.pod) == 0;
}

/* The index of pod in p->owned; p->n_owned if it is not there. */
static inline size_t owned_index(const struct planner *p, const struct tj_pod *pod)
{
	size_t i;

	for (i = 0; i < p->n_owned && p->owned[i] != pod; i++)
		;
	return i;
}

static inline void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

/* The job's last restart was a stall (plan_stall.c): every pod of the attempts before
 * restartCount was stopped, whatever the restart policy. */
static inline bool stall_restarted(const struct planner *p)
{
	return p->st.last_failure.rank >= 0 &&
	       strcmp(p->st.last_failure.reason, TJ_REASON_STALLED) == 0;
}

/* Asks to plan again after seconds; the earliest of all such wishes wins. */
static inline void requeue(struct planner *p, int64_t seconds)
{
	if (seconds > 0 && (p->requeue_after == 0 || seconds < p->requeue_after))
		p->requeue_after = seconds;
}

/* Appends an action of kind to the slot (NULL without memory: the plan fails with
 * -ENOMEM). */
struct tj_action *tj_planner_push(struct planner *p, enum tj_action_kind kind, enum slot slot);

/* Appends an event (aggregated by events.h when it repeats). */
void tj_planner_event(struct planner *p, bool warning, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

void tj_planner_set_state(struct planner *p, enum tj_state state, const char *reason,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Fails the job: the decision is recorded before the live pods are deleted. */
void tj_planner_fail(struct planner *p, const char *reason, const char *message);

/* Deletes a pod of the job (with grace 0 on a failed node), once per plan. */
void tj_planner_delete_pod(struct planner *p, const struct tj_pod *pod);

/* Deletes the pods that still run or wait; finished pods stay for their logs, and a stall's
 * are stopped and kept instead (tj_planner_stopping). */
void tj_planner_delete_live_pods(struct planner *p);

/* plan_gang.c: the plan that restarts the job (with the queue) asks it at once for the
 * replacements: every rank (gang), or the failed pod's and those of the others that failed
 * or have no pod. */
void tj_planner_want_replacements(struct planner *p, const struct tj_render *render, bool gang,
                                  const struct tj_pod *failed);

/* After a restart, whether the new pods still wait for the backoff (the plan then asks to
 * be run again when it ends); and its end (unix seconds), 0 when they do not. */
bool tj_planner_backing_off(struct planner *p);
int64_t tj_planner_backoff_end(const struct planner *p);

/* plan_deadline.c: resolves the job's walltime (p->walltime) for its GPU class and its QOS
 * tier (p->qos); a job that asks for more than the maximum or for a tier its namespace may
 * not use, before it starts, or whose warning annotation is malformed, is failed: then
 * true. */
bool tj_planner_walltime(struct planner *p, const struct tj_gpu_class *cls);

/* plan_dependency.c: a job that has not started waits while held (Queued, JobHeldUser) or
 * for its dependency (Queued, Dependency), or fails when that can never be met: then true. */
bool tj_planner_dependency(struct planner *p);

/* plan_deadline.c: the deadline of a started job. Fixes status.deadline, fails the job
 * (DeadlineExceeded) when it has passed, and returns true then; otherwise warns the pods
 * once the warning is due and asks to plan again at the warning and at the deadline. A job
 * without a start has no deadline. */
bool tj_planner_deadline(struct planner *p);

/* plan_deadline.c: writes end in the deadline annotation of the live pods of the current
 * attempt that do not show it yet (their file /etc/trainjob/deadline); how many. */
int tj_planner_warn_pods(struct planner *p, int64_t end);

/* plan_deadline.c: the node pods this plan creates carry the deadline from their create when
 * its warning is due already (a walltime shorter than the warning, a replacement late in the
 * run), as the plans after would write it at once: no patch of each pod as it starts. */
void tj_planner_warn_created(struct planner *p);

/* plan_preempt.c: the preemption of a running job (plan.h): recorded when the ticket first
 * asks for it, its pods told the stop time (unless the walltime's deadline comes first: their
 * deadline file holds the first end), and at that time stopped, the job back in the queue.
 * True when the plan is decided (the job was stopped). */
bool tj_planner_preempt(struct planner *p);

/* plan_preempt.c: the stop time of the running job's preemption, recorded in its status or
 * asked for by its ticket (which this plan records); 0 for none. */
int64_t tj_planner_stop_time(const struct planner *p);

/* plan_preempt.c: whether the run ends at its walltime's deadline before any preemption's
 * stop: the pods' deadline file then holds the deadline, else the stop time, so that it
 * never swings between the two. */
bool tj_planner_deadline_first(const struct planner *p);

/* plan_preempt.c: a job that no longer runs (it ended, or went back to the queue) is not
 * being preempted. */
void tj_planner_preempt_settle(struct planner *p);
/* refusal.c: a create the API server refused for good (422, 400) left state Failed with
 * reason FailedCreate in the status (reconcilers/plan/refusal.h): the job is failed, with the
 * API's message. Then true. One refused for now (Pending) is planned again within
 * TJ_REFUSAL_RETRY_SECONDS. */
bool tj_planner_refused(struct planner *p);

/* plan_support.c: before any pod of the job exists, a runtime field nothing implements
 * (reason UnsupportedRuntime, reconcilers/runtime_support.h), an override or patch field
 * the renderer does not apply (InvalidSpec, reconcilers/render/trainjob_support.h), or one that
 * targets a replicated job the runtime lacks or that its step cannot take (InvalidSpec,
 * reconcilers/render/overrides.h) fails the job.
 * Then true (with p->oom set when memory ran out). */
bool tj_planner_unsupported(struct planner *p);

/* plan_retention.c: the pod leaves its rank, replaced: kept for its logs when it is
 * finished (its rank's labels taken away first), else deleted. */
void tj_planner_retire_pod(struct planner *p, const struct tj_pod *pod);

/* plan_retention.c: what the kept pods and a finished job's children become: kept pods
 * deleted once the next attempt has run long enough, everything deleted once the TTL of
 * a finished job has passed. Runs after the other rules. */
void tj_planner_retain(struct planner *p);

/* plan_gang.c: creates the missing pods of the current attempt once the gang is admitted
 * (or at once without admission), or queues it; posts the Service and records the start. */
void tj_planner_create_pods(struct planner *p, const struct tj_render *render);

/* plan.c: the restart (or the failure, with the budget spent or a permanent exit code)
 * that the failure fl causes; gang retires every node pod of the attempt. */
void tj_planner_restart(struct planner *p, const struct failure *fl, bool gang, int max_restarts);

/* plan.c: charges a restart of class cls (a failure described by what) to its budget
 * (reconcilers/policy/budget.h), and writes into budget which one paid ("infrastructure
 * restart 1 of 10"). With the budget spent, fails the job ("<what>; <budget>") and returns
 * false; else cls is the plan's restart_reason. */
bool tj_planner_charge(struct planner *p, const char *cls, const char *what, int max_restarts,
                       char *budget, size_t size);

/* plan.c: retires the node pods of the current attempt (kept for their logs, stopped, or
 * deleted: plan_retention.c). */
void tj_planner_retire_attempt(struct planner *p);

/* plan.c: the state Restarting with reason cls and its Warning event Restarting, "<what>;
 * replacing <whom> in N s (<budget>)" (with the failed container's log), after the restart
 * backoff, when the plan asks to be run again. */
void tj_planner_restarting(struct planner *p, const char *cls, const char *what, const char *whom,
                           const char *budget);

/* plan_stall.c: a job found stalled (reconcilers/policy/stall.h) is restarted as class
 * Stalled, or failed with the infrastructure's budget spent: then true. Otherwise the plan
 * asks to be run again when it would be stalled. */
bool tj_planner_stalled(struct planner *p, int max_restarts);

/* plan_retention.c: whether a live pod is a stalled attempt's, kept while its kubelet stops
 * it (reconcilers/policy/retention.h): the plan that found the stall stops it (its pod keeps
 * its labels), and the plan asks to look again when the time it may take is over; false
 * when it is no such pod, or that time is over. */
bool tj_planner_stopping(struct planner *p, const struct tj_pod *pod);

/* plan_retention.c: when every rank's pod of the current attempt had started (the latest
 * status.startTime, else creation) and runs, or has succeeded unless only_running; 0 if not
 * every rank does. */
int64_t tj_planner_running_since(const struct planner *p, bool only_running);

/* plan.c: sets a condition True with reason and message. */
void tj_planner_set_condition(struct planner *p, enum tj_condition_type type, const char *reason,
                              const char *message);

/* plan_steps.c: sorts the owned pods of the steps other than node into their slots (the
 * newest attempt of a slot is its pod; a Failed pod of an attempt older than restartCount
 * was dealt with and is retired), and marks them in is_step. -ENOMEM. */
int tj_planner_collect_steps(struct planner *p);

/* plan_steps.c: the steps other than node: a failed step restarts or fails the job through
 * the failure policy (true then); the steps whose dependsOn (and startupPolicy) are met get
 * their missing pods (with the runtime's envInjection, from render). *node_may_start tells whether
 * the node step's own are met; when not, the job is Pending with reason WaitingForSteps. */
bool tj_planner_steps(struct planner *p, const struct tj_render *render, int max_restarts,
                      bool *node_may_start);

/* plan_steps.c: the success policy. When it is met the job is Complete and its live pods
 * are deleted (true); when it is not, a node step whose pods all succeeded does not
 * complete the job (hold_completion). */
bool tj_planner_steps_succeeded(struct planner *p);

/* plan_steps.c: the claims of volumeClaimPolicies: mounted in every pod the plan creates,
 * and posted (as CREATE_OBJECT) with every batch of pods. */
void tj_planner_steps_claims(struct planner *p);

/* plan_steps.c: status.jobsStatus, one entry per step. */
void tj_planner_count_steps(struct planner *p, bool suspended);

/* plan_gang.c: gives the whole gang back when a pinned pod stayed unschedulable for the
 * admission's pin timeout; true if it did. */
bool tj_planner_give_back(struct planner *p, const struct tj_render *render);

/* plan_mpi.c: fails a job whose runtime's MPI policy cannot run (another implementation than
 * OpenMPI, a TrainJob setting the MPI env, ...: tj_mpi_validate); true if it did. */
bool tj_planner_mpi_refused(struct planner *p);

struct tj_launcher_hold;

/* plan_mpi.c: whether step is the launcher step whose place the built-in admission holds
 * (an MPI runtime, the admission on, a GPU class). */
bool tj_planner_mpi_is_launcher(const struct planner *p, size_t step);

/* plan_mpi.c: the place held for the launcher (reconcilers/admission/launcher_hold.h) by a live
 * node pod of the current attempt; false if none holds one. */
bool tj_planner_mpi_hold(const struct planner *p, struct tj_launcher_hold *ret);

/* plan_mpi.c: the launcher pod of the current attempt when it must be admitted with the
 * gang: under the built-in admission, it asks for GPUs of the class (its template's, or
 * resourcesPerNode's), it does not exist yet and no node pod holds its place. *ret is NULL
 * otherwise. -ENOMEM. */
int tj_planner_mpi_launcher(struct planner *p, cJSON **ret);

/* plan_mpi.c: a pod of a step other than node labelled trainjob-ancestor-step=trainer (the
 * launcher of an MPI runtime) runs the TrainJob's trainer: Kubeflow gives its container node
 * the image, command, args, env and resources. Other pods are left alone. 0, -EINVAL with
 * why (a field the container cannot take), -ENOMEM. */
int tj_planner_mpi_trainer(const struct planner *p, cJSON *pod, const char *step,
                           struct tj_problem *why);

/* plan_commands.c: the command policy (reconcilers/policy/command_policy.h) before any pod
 * of the job exists: every container and init container of every pod the job will run, each
 * step's as the plan creates it (the launcher with the trainer's command, the initializers,
 * what the runtime, its patches and the overrides put there). -EPERM with why naming the
 * step and the container when one never exits; 0 when every command may run, the job is
 * exempt or has started already (an exemption withdrawn later does not kill it); -ENOMEM. */
int tj_planner_check_commands(const struct planner *p, const struct tj_render *render,
                              struct tj_problem *why);

/* plan_mpi.c: for an MPI runtime, the pods this plan creates get the MPI volumes, mounts and
 * launcher env, the launcher the trainer's fields, and the Secret and ConfigMap they mount
 * are posted with them (CREATE_OBJECT; the Secret's key is made by the executor). */
void tj_planner_mpi_pods(struct planner *p, const struct tj_render *render);
