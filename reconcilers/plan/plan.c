#include "reconcilers/plan/plan.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/failure_rules.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/budget.h"
#include "reconcilers/policy/node_health.h"
#include "reconcilers/policy/suspect.h"
#include "reconcilers/render/render.h"
#include "reconcilers/render/termination.h"
#include "reconcilers/usage/gpu_seconds.h"

#include "reconcilers/plan/plan_internal.h"

/* Between a failure's text and the end of its log in an event. */
#define LOG_TAIL_SEP "; the log ends:\n"

static const char *const action_names[] = {
	[TJ_ACTION_CREATE_SERVICE] = "CreateService",
	[TJ_ACTION_CREATE_POD] = "CreatePod",
	[TJ_ACTION_DELETE_POD] = "DeletePod",
	[TJ_ACTION_PATCH_STATUS] = "PatchStatus",
	[TJ_ACTION_EVENT] = "Event",
	[TJ_ACTION_PATCH_POD] = "PatchPod",
	[TJ_ACTION_DELETE_SERVICE] = "DeleteService",
	[TJ_ACTION_CREATE_OBJECT] = "CreateObject",
	[TJ_ACTION_CREATE_WORKLOAD] = "CreateWorkload",
	[TJ_ACTION_CREATE_POD_GROUP] = "CreatePodGroup",
	[TJ_ACTION_DELETE_WORKLOAD] = "DeleteWorkload",
	[TJ_ACTION_DELETE_POD_GROUP] = "DeletePodGroup",
};

const char *tj_action_kind_name(enum tj_action_kind kind)
{
	return action_names[kind];
}

struct tj_action *tj_planner_push(struct planner *p, enum tj_action_kind kind, enum slot slot)
{
	struct tj_action *a;

	if (p->oom)
		return NULL;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 8;
		struct tj_action *actions = realloc(p->actions, cap * sizeof(*actions));
		enum slot *slots;

		if (!actions) {
			p->oom = true;
			return NULL;
		}
		p->actions = actions;
		slots = realloc(p->slots, cap * sizeof(*slots));
		if (!slots) {
			p->oom = true;
			return NULL;
		}
		p->slots = slots;
		p->cap = cap;
	}
	a = &p->actions[p->n];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->grace_seconds = -1;
	p->slots[p->n++] = slot;
	return a;
}

void tj_planner_event(struct planner *p, bool warning, const char *reason, const char *fmt, ...)
{
	struct tj_action *a = tj_planner_push(p, TJ_ACTION_EVENT, SLOT_EVENT);
	va_list ap;

	if (!a)
		return;
	a->warning = warning;
	snprintf(a->reason, sizeof(a->reason), "%s", reason);
	va_start(ap, fmt);
	vsnprintf(a->message, sizeof(a->message), fmt, ap);
	va_end(ap);
}

/* The health of the node a pod is bound to; healthy when it is not bound or the plan has
 * no Node cache. */
static void judge(const struct planner *p, const struct tj_pod *pod, struct tj_node_health *h)
{
	const struct tj_plan_input *in = p->in;

	if (!in->node_lookup || !pod->node_name || !*pod->node_name) {
		*h = (struct tj_node_health){ .fault = TJ_NODE_HEALTHY };
		return;
	}
	tj_node_health_judge(in->node_lookup(in->node_ctx, pod->node_name), p->policy, p->grace,
	                     in->now, h);
}

/* Deletes a pod. A pod on a node that has failed (deleted, or unhealthy for the grace
 * period) is force-deleted, with grace 0, even when it is already being deleted: its
 * kubelet will never confirm the deletion, and its rank gets no replacement while it
 * exists. The price is the one every force deletion pays: should the node come back, its
 * container may run on for a moment next to the replacement. */
static void delete_pod(struct planner *p, const struct tj_pod *pod)
{
	struct tj_action *a;
	size_t i = owned_index(p, pod);
	bool force;

	if (i == p->n_owned || p->deleted[i])
		return;
	force = p->nodes[i].failed;
	if (is_deleting(pod) && !force)
		return;
	p->deleted[i] = true;
	a = tj_planner_push(p, TJ_ACTION_DELETE_POD, SLOT_MUTATION);
	if (!a)
		return;
	snprintf(a->name, sizeof(a->name), "%s", pod->name);
	snprintf(a->uid, sizeof(a->uid), "%s", pod->uid ? pod->uid : "");
	a->grace_seconds = force ? 0 : -1;
}

void tj_planner_delete_pod(struct planner *p, const struct tj_pod *pod)
{
	delete_pod(p, pod);
}

/* Pods stuck Terminating on a failed node are force-deleted, whatever the job's state. */
static void delete_stuck_pods(struct planner *p)
{
	for (size_t i = 0; i < p->n_owned; i++)
		if (is_deleting(p->owned[i]) && p->nodes[i].failed)
			delete_pod(p, p->owned[i]);
}

/* Deletes the pods that still run or wait: a failed or suspended job releases its GPUs.
 * Finished pods stay for their logs, and so do a stall's, which are stopped instead. */
void tj_planner_delete_live_pods(struct planner *p)
{
	for (size_t i = 0; i < p->n_owned; i++)
		if (!is_finished(p->owned[i]) && !tj_planner_stopping(p, p->owned[i]))
			delete_pod(p, p->owned[i]);
}

void tj_planner_set_condition(struct planner *p, enum tj_condition_type type, const char *reason,
                              const char *message)
{
	struct tj_trainjob_status *st = &p->st;
	struct tj_condition *c = (struct tj_condition *)tj_trainjob_status_condition(st, type);

	if (!c) {
		c = &st->conditions[st->n_conditions++];
		c->type = type;
		c->status = false;
	}
	/* lastTransitionTime changes only when the status flips (metav1.Condition). */
	if (!c->status)
		c->last_transition_time = p->in->now;
	c->status = true;
	copy(c->reason, sizeof(c->reason), reason);
	copy(c->message, sizeof(c->message), message);
}

static void remove_condition(struct tj_trainjob_status *st, enum tj_condition_type type)
{
	for (size_t i = 0; i < st->n_conditions; i++)
		if (st->conditions[i].type == type) {
			memmove(&st->conditions[i], &st->conditions[i + 1],
			        (st->n_conditions - i - 1) * sizeof(st->conditions[0]));
			st->n_conditions--;
			return;
		}
}

void tj_planner_set_state(struct planner *p, enum tj_state state, const char *reason,
                          const char *fmt, ...)
{
	va_list ap;

	p->st.state = state;
	copy(p->st.reason, sizeof(p->st.reason), reason);
	va_start(ap, fmt);
	vsnprintf(p->st.message, sizeof(p->st.message), fmt, ap);
	va_end(ap);
}

static bool state_changed(const struct planner *p)
{
	return p->st.state != p->job->status.state ||
	       strcmp(p->st.reason, p->job->status.reason) != 0;
}

/* Fails the job: the decision is recorded before the live pods are deleted. */
void tj_planner_fail(struct planner *p, const char *reason, const char *message)
{
	char ev[TJ_MESSAGE_MAX];

	tj_planner_set_state(p, TJ_STATE_FAILED, reason, "%s", message);
	tj_planner_set_condition(p, TJ_CONDITION_FAILED, reason, message);
	if (!p->st.completion_time)
		p->st.completion_time = p->in->now;
	p->status_first = true;
	tj_planner_delete_live_pods(p);
	snprintf(ev, sizeof(ev), "%s: %s", reason, message);
	tj_termination_append(ev, sizeof(ev), LOG_TAIL_SEP, p->log_tail);
	tj_planner_event(p, true, "Failed", "%s", ev);
}

/* Collects the job's own pods, and per rank the pod of the current attempt: with policy
 * Gang the attempt is restartCount; with Worker each rank's newest pod. Pods of another
 * attempt, or of a rank the job does not have, are retired (deleted, or kept for their
 * logs), and block their rank until they are gone or kept; kept pods are no rank's. */
static int collect_pods(struct planner *p, bool gang)
{
	const struct tj_plan_input *in = p->in;
	int attempt = p->st.restart_count;

	int newest = -1;

	p->owned = calloc(in->n_pods + 1, sizeof(*p->owned));
	p->deleted = calloc(in->n_pods + 1, sizeof(*p->deleted));
	p->nodes = calloc(in->n_pods + 1, sizeof(*p->nodes));
	p->current = calloc((size_t)p->num_nodes + 1, sizeof(*p->current));
	p->blocked = calloc((size_t)p->num_nodes + 1, sizeof(*p->blocked));
	if (!p->owned || !p->deleted || !p->nodes || !p->current || !p->blocked)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_pods; i++) {
		const struct tj_pod *pod = in->pods[i];

		if (!pod->owner_uid || strcmp(pod->owner_uid, p->job->uid) != 0)
			continue;
		p->owned[p->n_owned++] = pod;
		if (pod->attempt > newest)
			newest = pod->attempt;
	}
	for (size_t i = 0; i < p->n_owned; i++) {
		const struct tj_pod *pod = p->owned[i];
		struct tj_node_health h;

		judge(p, pod, &h);
		p->nodes[i] = (struct pod_node){ h.fault, h.failed };
		/* A node that may still fail a live pod, or free a stuck one: look again when
		 * its grace period is over. */
		if (h.wait && (!is_finished(pod) || is_deleting(pod)))
			requeue(p, h.wait);
	}
	/* Pods are created only after the status with their attempt was written, so a newer
	 * pod means the cached TrainJob is behind: plan nothing until it catches up. */
	if (newest > attempt)
		return -EAGAIN;
	if (tj_planner_collect_steps(p) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_owned; i++) {
		const struct tj_pod *pod = p->owned[i];
		int r = pod->rank;

		if (r < 0 || r >= p->num_nodes || pod->attempt < 0 || pod->kept || p->is_step[i])
			continue;
		if (gang ? pod->attempt == attempt
		         : !p->current[r] || pod->attempt > p->current[r]->attempt)
			p->current[r] = pod;
	}
	/* The newest attempt kept for its logs, before any pod is retired (retention.h). */
	for (size_t i = 0; i < p->n_owned; i++) {
		const struct tj_pod *pod = p->owned[i];
		int r = pod->rank;
		bool current = r >= 0 && r < p->num_nodes && pod == p->current[r];

		if (!current && !p->is_step[i] && is_finished(pod) && !is_deleting(pod) &&
		    !p->nodes[i].failed && pod->attempt > p->newest_kept)
			p->newest_kept = pod->attempt;
	}
	for (size_t i = 0; i < p->n_owned; i++) {
		const struct tj_pod *pod = p->owned[i];
		int r = pod->rank;

		if ((r >= 0 && r < p->num_nodes && pod == p->current[r]) || pod->kept ||
		    p->is_step[i])
			continue;
		if (r >= 0 && r < p->num_nodes)
			p->blocked[r] = true;
		tj_planner_retire_pod(p, pod);
	}
	return 0;
}

/* The class of a pod's own failure. The DisruptionTarget reasons are Kubernetes':
 * PreemptionByScheduler (PreemptionByKubeScheduler before 1.27) for the scheduler's
 * preemption; EvictionByEvictionAPI, TerminationByKubelet, DeletionByTaintManager and
 * DeletionByPodGC for the rest. The kubelet's own evictions and preemptions set
 * status.reason Evicted or Preempting. */
static const char *pod_class(const struct tj_pod *pod)
{
	const char *d = pod->disruption_reason;

	if (d && (strcmp(d, "PreemptionByScheduler") == 0 ||
	          strcmp(d, "PreemptionByKubeScheduler") == 0))
		return "Preempted";
	if (d || (pod->reason && strcmp(pod->reason, "Evicted") == 0))
		return "Evicted";
	if (pod->reason && strcmp(pod->reason, "Preempting") == 0)
		return "Preempted";
	return "WorkerFailed";
}

/* The first failed worker of the current attempt: its pod is Failed, disrupted (evicted,
 * preempted), or on a node that has failed. A pod that is being deleted and failed is ours
 * (a replaced or suspended attempt), not a new failure, unless it was disrupted. Under
 * Worker, the pod already recorded as the last failure is not counted twice. A failure on
 * a node that is unhealthy, even within its grace period, is the node's: its exit code is
 * a symptom. */
static bool find_failure(const struct planner *p, bool gang, struct failure *ret)
{
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];
		bool pod_failed;

		if (!pod || pod->phase == TJ_POD_SUCCEEDED)
			continue;
		if (!gang && strcmp(pod->name, p->job->status.last_failure.pod) == 0)
			continue;
		pod_failed = (pod->phase == TJ_POD_FAILED && !is_deleting(pod)) ||
		             pod->disruption_reason;
		if (!pod_failed && !p->nodes[owned_index(p, pod)].failed)
			continue;
		ret->pod = pod;
		judge(p, pod, &ret->node);
		ret->cls = ret->node.fault != TJ_NODE_HEALTHY
		                   ? tj_node_fault_reason(ret->node.fault)
		                   : pod_class(pod);
		/* A crash on a suspect node is the node's: the infrastructure pays for it. */
		if (strcmp(ret->cls, "WorkerFailed") == 0 && pod->node_name &&
		    p->in->node_suspect && p->in->node_suspect(p->in->node_ctx, pod->node_name))
			ret->cls = TJ_REASON_NODE_SUSPECT;
		return true;
	}
	return false;
}

/* Under Worker, a pod recorded as the last failure is the replaced one (the controller
 * may have stopped between recording and replacing it): retire it now. Under Gang it is of
 * an older attempt, which collect_pods retires. */
static void delete_recorded_failure(struct planner *p)
{
	for (int r = 0; r < p->num_nodes; r++)
		if (is_recorded_failure(p, p->current[r]))
			tj_planner_retire_pod(p, p->current[r]);
}

/* status.lastFailure: a node failure gives the node's reason; a pod's own failure the most
 * specific reason the pod has (the disruption, the container's, the pod's). */
static void describe_failure(const struct failure *fl, struct tj_failure *f, int64_t now)
{
	const struct tj_pod *pod = fl->pod;
	const char *reason = tj_or(pod->disruption_reason,
	                           tj_or(pod->exit_reason, tj_or(pod->reason, "Failed")));

	if (fl->node.fault != TJ_NODE_HEALTHY)
		reason = fl->cls;
	f->rank = pod->rank;
	copy(f->node, sizeof(f->node), pod->node_name);
	copy(f->pod, sizeof(f->pod), pod->name);
	copy(f->reason, sizeof(f->reason), reason);
	f->exit_code = pod->terminated ? pod->exit_code : -1;
	f->time = now;
	f->message[0] = '\0';
	tj_termination_append(f->message, sizeof(f->message), "", pod->termination_message);
}

/* "rank 1 on node gh200-2 failed (exit code 1, Error)", with the node's signal for a node
 * failure: "(NodeNotReady: condition Ready is False)". */
static void failure_text(const struct tj_failure *f, const struct failure *fl, char *buf,
                         size_t size)
{
	char code[32] = "";

	if (f->exit_code >= 0)
		snprintf(code, sizeof(code), "exit code %d, ", f->exit_code);
	if (f->rank < 0) /* a pod of a step other than node */
		snprintf(buf, size, "pod %s on node %s failed (%s%s)", f->pod,
		         *f->node ? f->node : "(none)", code, f->reason);
	else
		snprintf(buf, size, "rank %d on node %s failed (%s%s%s%s)", f->rank,
		         *f->node ? f->node : "(none)", code, f->reason,
		         fl->node.fault != TJ_NODE_HEALTHY ? ": " : "",
		         fl->node.fault != TJ_NODE_HEALTHY ? fl->node.detail : "");
}

/* The delay before the pods of restart n (1, 2, ...): initial * 2^(n-1), at most max. */
static int64_t backoff_of(const struct tj_failure_policy *policy, int restart)
{
	int64_t d = policy->backoff_initial_seconds;

	for (int i = 1; i < restart && d < policy->backoff_max_seconds; i++)
		d *= 2;
	return d < policy->backoff_max_seconds ? d : policy->backoff_max_seconds;
}

static bool is_permanent(const struct tj_failure_policy *policy, int exit_code)
{
	for (size_t i = 0; i < policy->n_permanent_exit_codes; i++)
		if (policy->permanent_exit_codes[i] == exit_code)
			return true;
	return false;
}

/* Whether the runtime's failure rules fail the job at this failure of its own
 * (reconcilers/failure_rules.h): the reason the pod's step's Job fails with, by its
 * podFailurePolicy, and the JobSet failurePolicy rule that matches it. */
static bool rules_fail(const struct planner *p, const struct tj_pod *pod, int exit_code,
                       char why[static 256])
{
	const struct tj_runtime *rt = p->in->runtime;
	const struct tj_step *step;
	size_t i;
	int slot;

	if (!rt->failure_rules)
		return false;
	if (pod->rank >= 0)
		i = tj_step_graph_find(&rt->graph, TJ_STEP_NODE);
	else if (tj_step_of_pod(&rt->graph, p->job->name, pod->name, &i, &slot) < 0)
		return false;
	if (i >= rt->graph.n)
		return false;
	step = &rt->graph.steps[i];
	return tj_failure_rules_fail(rt->failure_rules, step->name,
	                             tj_failure_job_reason(step->pod_failure_rules, exit_code), why,
	                             256);
}

bool tj_planner_charge(struct planner *p, const char *cls, const char *what, int max_restarts,
                       char *budget, size_t size)
{
	char msg[TJ_MESSAGE_MAX];
	struct tj_budget_charge charge;
	bool charged = tj_budget_charge(&p->st, cls, max_restarts,
	                                p->policy->max_infrastructure_restarts, &charge);

	tj_budget_describe(&charge, budget, size);
	if (!charged) {
		snprintf(msg, sizeof(msg), "%s; %s", what, budget);
		tj_planner_fail(p, charge.reason, msg);
		return false;
	}
	copy(p->restart_reason, sizeof(p->restart_reason), cls);
	return true;
}

void tj_planner_retire_attempt(struct planner *p)
{
	for (int r = 0; r < p->num_nodes; r++)
		if (p->current[r])
			tj_planner_retire_pod(p, p->current[r]);
}

void tj_planner_restarting(struct planner *p, const char *cls, const char *what, const char *whom,
                           const char *budget)
{
	char msg[TJ_MESSAGE_MAX], after[32] = "";
	int64_t backoff = backoff_of(p->policy, p->st.restart_count);

	if (backoff > 0) {
		snprintf(after, sizeof(after), " in %lld s", (long long)backoff);
		requeue(p, backoff);
	}
	tj_planner_set_state(p, TJ_STATE_RESTARTING, cls, "%s; replacing %s%s (%s)", what, whom,
	                     after, budget);
	snprintf(msg, sizeof(msg), "%s", p->st.message);
	tj_termination_append(msg, sizeof(msg), LOG_TAIL_SEP, p->log_tail);
	tj_planner_event(p, true, "Restarting", "%s", msg);
}

void tj_planner_restart(struct planner *p, const struct failure *fl, bool gang, int max_restarts)
{
	struct tj_failure f;
	/* Room for the longest node name and signal; the messages around it fit in
	 * TJ_MESSAGE_MAX. */
	char what[640], msg[TJ_MESSAGE_MAX], budget[128], rule[256];

	describe_failure(fl, &f, p->in->now);
	failure_text(&f, fl, what, sizeof(what));
	p->st.last_failure = f;
	p->log_tail = fl->pod->termination_message;
	p->status_first = true;
	if (strcmp(fl->cls, "WorkerFailed") == 0 && rules_fail(p, fl->pod, f.exit_code, rule)) {
		snprintf(msg, sizeof(msg), "%s; %s, so the job is not restarted", what, rule);
		tj_planner_fail(p, TJ_REASON_FAIL_JOBSET_ACTION, msg);
		return;
	}
	if (strcmp(fl->cls, "WorkerFailed") == 0 && f.exit_code > 0 &&
	    is_permanent(p->policy, f.exit_code)) {
		snprintf(msg, sizeof(msg),
		         "%s; exit code %d is permanent (failurePolicy.permanentExitCodes), so the "
		         "job is not restarted",
		         what, f.exit_code);
		tj_planner_fail(p, "PermanentFailure", msg);
		return;
	}
	if (!tj_planner_charge(p, fl->cls, what, max_restarts, budget, sizeof(budget)))
		return;
	if (gang)
		tj_planner_retire_attempt(p);
	else
		tj_planner_retire_pod(p, fl->pod);
	tj_planner_restarting(p, fl->cls, what, gang ? "all workers" : "that worker", budget);
}

/* After a restart, the new pods wait for the backoff, counted from the failure's time in
 * the status (so that a restarted controller keeps it): its end, or 0 once it is over. */
int64_t tj_planner_backoff_end(const struct planner *p)
{
	const struct tj_failure *f = &p->st.last_failure;
	int64_t ready_at;

	if (p->st.restart_count == 0 || f->rank < 0 || f->time == 0)
		return 0;
	ready_at = f->time + backoff_of(p->policy, p->st.restart_count);
	return p->in->now < ready_at ? ready_at : 0;
}

bool tj_planner_backing_off(struct planner *p)
{
	int64_t ready_at = tj_planner_backoff_end(p);

	if (!ready_at)
		return false;
	requeue(p, ready_at - p->in->now);
	return true;
}

/* Running, Pending, Restarting or Complete, from the pods of the current attempt. */
static void progress(struct planner *p)
{
	const struct tj_pod *unschedulable = NULL;
	int running = 0, succeeded = 0, n = p->num_nodes;
	bool restarting = p->job->status.state == TJ_STATE_RESTARTING && p->st.restart_count > 0;

	for (int r = 0; r < n; r++) {
		const struct tj_pod *pod = p->current[r];

		if (!pod || is_deleting(pod))
			continue;
		if (pod->phase == TJ_POD_SUCCEEDED)
			succeeded++;
		else if (pod->phase == TJ_POD_RUNNING)
			running++;
		else if (pod->unschedulable && !unschedulable)
			unschedulable = pod;
	}
	if (succeeded == n && !p->hold_completion) {
		tj_planner_set_state(p, TJ_STATE_COMPLETE, "AllPodsSucceeded",
		                     "all %d pods succeeded", n);
		tj_planner_set_condition(p, TJ_CONDITION_COMPLETE, "AllPodsSucceeded",
		                         p->st.message);
		if (!p->st.completion_time)
			p->st.completion_time = p->in->now;
		/* The end is written at once, not behind the queue's bookkeeping at the write
		 * gate: a later plan, past the deadline, would otherwise supersede it. */
		p->status_first = true;
		tj_planner_event(p, false, "Completed", "%s", p->st.message);
		return;
	}
	if (running == n) {
		tj_planner_set_state(p, TJ_STATE_RUNNING, "AllPodsRunning", "%d of %d pods running",
		                     running, n);
		if (state_changed(p))
			tj_planner_event(p, false, "Running", "%s", p->st.message);
		return;
	}
	if (running + succeeded == n) {
		/* Some ranks are done, the others still run: the job runs, but not every pod. */
		tj_planner_set_state(p, TJ_STATE_RUNNING, "PodsCompleting",
		                     "%d of %d pods running, %d succeeded", running, n, succeeded);
		if (p->job->status.state != TJ_STATE_RUNNING)
			tj_planner_event(p, false, "Running", "%s", p->st.message);
		return;
	}
	if (unschedulable) {
		tj_planner_set_state(
		        p, restarting ? TJ_STATE_RESTARTING : TJ_STATE_PENDING, "Unschedulable",
		        "rank %d: %s", unschedulable->rank,
		        tj_or(unschedulable->unschedulable_message, "the pod cannot be scheduled"));
		if (state_changed(p))
			tj_planner_event(p, true, "Unschedulable", "%s", p->st.message);
		return;
	}
	if (restarting) {
		/* Keep the reason of the restart in view until every pod runs again. */
		if (strcmp(p->job->status.reason, "Unschedulable") != 0) {
			copy(p->st.reason, sizeof(p->st.reason), p->job->status.reason);
			copy(p->st.message, sizeof(p->st.message), p->job->status.message);
		} else {
			tj_planner_set_state(p, TJ_STATE_RESTARTING, "PodsStarting",
			                     "%d of %d pods running", running, n);
		}
		p->st.state = TJ_STATE_RESTARTING;
		return;
	}
	tj_planner_set_state(p, TJ_STATE_PENDING, "PodsStarting", "%d of %d pods running", running,
	                     n);
}

static int max_restarts_of(const struct tj_trainjob *job, const struct tj_runtime *rt,
                           const struct tj_failure_policy *policy, struct tj_problem *why)
{
	const char *v = job->max_restarts;
	char *end;
	long n;

	if (v) /* checked by tj_trainjob_validate */
		return atoi(v);
	if (!rt->max_restarts)
		return rt->failure_budget >= 0 ? rt->failure_budget : policy->max_restarts;
	n = strtol(rt->max_restarts, &end, 10);
	if (!*rt->max_restarts || *end || n < 0 || n > 1000)
		return tj_problem_set(why, "InvalidRuntime",
		                      "%s %s: %s '%s' is not an integer between 0 and 1000",
		                      tj_runtime_kind_name(rt->kind), rt->name,
		                      TJ_ANNOTATION_MAX_RESTARTS, rt->max_restarts);
	return (int)n;
}

static int gang_policy_of(const struct tj_trainjob *job, const struct tj_runtime *rt,
                          struct tj_problem *why)
{
	const char *v = tj_or(job->restart_policy, tj_or(rt->restart_policy, "Gang"));

	if (strcmp(v, "Gang") == 0)
		return 1;
	if (strcmp(v, "Worker") == 0)
		return 0;
	return tj_problem_set(why, "InvalidRuntime", "%s %s: %s '%s' is not Gang or Worker",
	                      tj_runtime_kind_name(rt->kind), rt->name,
	                      TJ_ANNOTATION_RESTART_POLICY, v);
}

/* The node grace period: the TrainJob's annotation, else the config file's. */
static int64_t grace_of(const struct tj_trainjob *job, const struct tj_failure_policy *policy)
{
	char *end;
	long v;

	if (!job->node_grace_period)
		return policy->node_grace_period_seconds;
	/* A bad value fails the job in tj_trainjob_validate; until then the default holds. */
	v = strtol(job->node_grace_period, &end, 10);
	if (!*job->node_grace_period || *end || v < 0 || v > 86400)
		return policy->node_grace_period_seconds;
	return v;
}

/* Appends node to the n names unless they hold it already, or hold MAX_EXCLUDED_NODES. */
static void add_excluded(const char **names, size_t *n, const char *node)
{
	size_t k;

	if (*n >= MAX_EXCLUDED_NODES)
		return;
	for (k = 0; k < *n && strcmp(names[k], node) != 0; k++)
		;
	if (k == *n)
		names[(*n)++] = node;
}

/* The nodes replacements avoid: the node of the last failure, and the unhealthy nodes the
 * job's pods are on (the scheduler avoids nodes tainted NoSchedule by itself, but not a
 * node whose GPU health is only a condition). At most MAX_EXCLUDED_NODES. */
static size_t excluded_nodes(const struct planner *p, const char **names)
{
	size_t n = 0;

	/* A stall names rank 0's node only to say where the job ran: it is no node's fault. */
	if (*p->job->status.last_failure.node && !stall_restarted(p))
		names[n++] = p->job->status.last_failure.node;
	for (size_t i = 0; i < p->n_owned && n < MAX_EXCLUDED_NODES; i++)
		if (p->nodes[i].fault != TJ_NODE_HEALTHY && p->owned[i]->node_name)
			add_excluded(names, &n, p->owned[i]->node_name);
	return n;
}

/* The node of the failure the plan restarts the job for is avoided from now on (as the later
 * plans read it from the status, excluded_nodes): names, the plan's list, gains it. */
static void avoid_failed_node(struct planner *p, const char **names)
{
	if (*p->st.last_failure.node)
		add_excluded(names, &p->n_excluded, p->st.last_failure.node);
}

/* Takes out of status the fields whose value was's are already: what is left is what the
 * merge patch changes. */
static void keep_changed(cJSON *status, const cJSON *was)
{
	cJSON *next;

	for (cJSON *f = status->child; f; f = next) {
		const cJSON *old = cJSON_GetObjectItemCaseSensitive(was, f->string);

		next = f->next;
		if (old && cJSON_Compare(f, old, true))
			cJSON_Delete(cJSON_DetachItemViaPointer(status, f));
	}
}

/* The body of the status patch, conditional on the version the plan was made from: the
 * whole status we own for its first write, then only the fields the plan changes (the
 * version's status is the one the job was read with, and holds every field of a first write,
 * so the merge gives the whole status the plan made). */
static int status_patch(struct planner *p)
{
	struct tj_action *a;
	cJSON *body, *status, *was;

	if (tj_trainjob_status_equal(&p->st, &p->job->status))
		return 0;
	a = tj_planner_push(p, TJ_ACTION_PATCH_STATUS, SLOT_STATUS);
	if (!a)
		return -ENOMEM;
	copy(a->name, sizeof(a->name), p->job->name);
	body = cJSON_CreateObject();
	status = tj_trainjob_status_to_json(&p->st);
	a->object = body;
	/* A status never written (no state) gets every field: the ones it lacks read as unset. */
	if (status && p->job->status.state != TJ_STATE_NONE) {
		was = tj_trainjob_status_to_json(&p->job->status);
		if (was)
			keep_changed(status, was);
		else {
			cJSON_Delete(status);
			status = NULL;
		}
		cJSON_Delete(was);
	}
	/* A preemption that ended (the job stopped, or ran to its end first) goes. */
	if (status && !p->st.preempt_at && p->job->status.preempt_at &&
	    tj_json_set(status, "preemption", cJSON_CreateNull()) < 0) {
		cJSON_Delete(status);
		status = NULL;
	}
	if (!body || !status || tj_json_set(body, "status", status) < 0 ||
	    tj_json_set_string(tj_json_object(body, "metadata"), "resourceVersion",
	                       p->job->resource_version) < 0)
		return -ENOMEM;
	return 0;
}

/* A plan that creates pods of a job without a snapshot of its runtime makes one
 * (reconcilers/runtime_snapshot.h): the job's first start, or the first restart of a job that
 * started before snapshots were kept. A restart's goes in the stage of its pods. A first
 * start's is bookkeeping no pod waits for: it goes with the status patch that records the
 * start (records_start), after the pods and behind the write gate with the rest of the
 * bookkeeping, so that a burst of new jobs gets its pods first; and every plan that records
 * the start makes it, as it makes the Service, so that a plan superseded before its
 * bookkeeping went out loses nothing. An AlreadyExists answer is success, so a plan made
 * before the informer saw it makes it again harmlessly. */
static void snapshot(struct planner *p, bool records_start)
{
	struct tj_action *a;
	bool creates = false;
	cJSON *cm;
	int r;

	if (p->in->snapshot != TJ_SNAPSHOT_MISSING || p->oom || !p->in->runtime->snapshot)
		return;
	for (size_t i = 0; i < p->n && !creates; i++)
		creates = p->actions[i].kind == TJ_ACTION_CREATE_POD;
	if (!creates && !records_start)
		return;
	r = tj_runtime_snapshot_config_map(p->job, p->in->runtime, &cm);
	if (r < 0) {
		p->oom = r == -ENOMEM;
		return;
	}
	a = tj_planner_push(p, TJ_ACTION_CREATE_OBJECT,
	                    records_start ? SLOT_STATUS : SLOT_MUTATION);
	if (!a) {
		cJSON_Delete(cm);
		return;
	}
	a->object = cm;
	copy(a->name, sizeof(a->name), tj_json_string(cm, "metadata.name"));
}

/* Runs the rules of plan.h in order; each returns after the first that decides. */
static int decide(struct planner *p)
{
	const struct tj_plan_input *in = p->in;
	const struct tj_trainjob *job = p->job;
	const struct tj_gpu_class *cls = NULL;
	struct failure failed;
	struct tj_render *render = NULL;
	struct tj_problem why = { "", "" };
	const char *excluded[MAX_EXCLUDED_NODES];
	size_t n_excluded;
	int max_restarts, gang, r;
	bool was_suspended, had_start, node_may_start;

	p->num_nodes = job->num_nodes > 0 ? job->num_nodes
	               : in->runtime      ? in->runtime->num_nodes
	                                  : 1;
	if (in->runtime) /* an MPI launcher run as a node is one of them */
		p->num_nodes = tj_mpi_node_pods(&in->runtime->mpi, p->num_nodes);
	p->policy = tj_config_failure_policy(in->config);
	p->grace = grace_of(job, p->policy);
	/* The queue's fields hold only while the job is queued: the plan that queues it sets
	 * them again. */
	p->st.expected_start_time = 0;
	p->st.queue_position = 0;
	gang = in->runtime ? gang_policy_of(job, in->runtime, &why) : 1;
	p->gang = gang != 0;
	/* After a stall the attempt is whole, whatever the policy: every pod of an earlier
	 * one was stopped. */
	r = collect_pods(p, gang != 0 || stall_restarted(p));
	if (r == -EAGAIN) {
		p->stale = true;
		return 0;
	}
	if (r < 0)
		return r;
	delete_stuck_pods(p);
	if (tj_trainjob_status_is_true(&job->status, TJ_CONDITION_COMPLETE) ||
	    tj_trainjob_status_is_true(&job->status, TJ_CONDITION_FAILED)) {
		if (tj_trainjob_status_is_true(&job->status, TJ_CONDITION_FAILED))
			tj_planner_delete_live_pods(p);
		return 0;
	}
	if (tj_trainjob_validate(job, &why) < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return 0;
	}
	if (tj_planner_refused(p))
		return 0;
	if (!in->runtime) {
		const struct tj_problem *rp = in->runtime_problem;

		tj_planner_set_state(p, TJ_STATE_PENDING, rp ? rp->reason : "RuntimeNotFound", "%s",
		                     rp ? rp->message : "the runtime was not found");
		if (state_changed(p) || strcmp(p->st.message, job->status.message) != 0)
			tj_planner_event(p, true, p->st.reason, "%s", p->st.message);
		return 0;
	}
	if (gang < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return 0;
	}
	if (tj_planner_unsupported(p))
		return p->oom ? -ENOMEM : 0;
	max_restarts = max_restarts_of(job, in->runtime, p->policy, &why);
	if (max_restarts < 0 || tj_stall_timeout(job, in->runtime, &p->stall_timeout, &why) < 0 ||
	    tj_runtime_gpu_class(in->runtime, in->config, &cls, &why) < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return 0;
	}
	copy(p->gpu_class, sizeof(p->gpu_class), cls ? cls->name : NULL);
	p->gpu_resource = cls ? cls->resource : NULL;
	if (tj_planner_walltime(p, cls) || tj_planner_mpi_refused(p))
		return 0;
	n_excluded = excluded_nodes(p, excluded);
	p->excluded = excluded;
	p->n_excluded = n_excluded;
	r = tj_render_prepare(
	        &(struct tj_render_input){
	                .job = job,
	                .runtime = in->runtime,
	                .gpu_class = cls,
	                .excluded_nodes = excluded,
	                .n_excluded_nodes = n_excluded,
	                .trainer_status_url = in->config ? in->config->trainer_status_url : NULL,
	                .trainer_status_ca_config_map =
	                        in->config ? in->config->trainer_status_ca_config_map : NULL },
	        &render, &why);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return 0;
	}
	r = tj_planner_check_commands(p, render, &why);
	if (r == -ENOMEM)
		p->oom = true;
	else if (r < 0)
		tj_planner_fail(p, why.reason, why.message);
	if (r < 0)
		goto out;

	was_suspended = tj_trainjob_status_is_true(&job->status, TJ_CONDITION_SUSPENDED);
	if (job->suspend) {
		const struct tj_workload *w = in->workload;

		/* Kueue has admitted the job it held and is resuming it: the status keeps
		 * Kueue's last words, and the generation it observed, until the resume. Kueue
		 * resumes in two updates (the pod sets' placement into runtimePatches, then
		 * spec.suspend); a status written between them, for the new generation the first
		 * made, changes the object under the second, made from the version before, which
		 * then meets a conflict and waits for Kueue's retry; with thousands of
		 * admissions at once those retries never caught up (docs/benchmarks.md, "Side
		 * by side with Kueue"). */
		bool resuming = job->kueue && w && w->reserved &&
		                job->status.state == TJ_STATE_QUEUED && !p->n_owned;

		tj_planner_delete_live_pods(p);
		/* Kueue holds it until it has quota: the state says so in Kueue's words, the
		 * condition keeps Kubeflow's meaning (spec.suspend is true). */
		if (job->kueue && w && w->waiting)
			tj_planner_set_state(p, TJ_STATE_QUEUED, *w->reason ? w->reason : "Pending",
			                     "Kueue: %s",
			                     *w->message ? w->message : "waiting for quota");
		else if (!resuming)
			tj_planner_set_state(p, TJ_STATE_SUSPENDED, "Suspended",
			                     "TrainJob is suspended");
		if (resuming)
			p->st.observed_generation = job->status.observed_generation;
		tj_planner_set_condition(p, TJ_CONDITION_SUSPENDED, "Suspended",
		                         "TrainJob is suspended");
		if (!was_suspended)
			tj_planner_event(p, false, "Suspended",
			                 "TrainJob is suspended; its pods are deleted");
		goto out;
	}
	/* A Suspended=False that Kubeflow Trainer left on resume goes silently: it would pin
	 * Kubeflow's SDK at Created, and the resume it records has happened. */
	remove_condition(&p->st, TJ_CONDITION_SUSPENDED);
	if (was_suspended) {
		/* As batch/v1 Job: the activeDeadlineSeconds clock starts again on resume. */
		p->st.start_time = 0;
		tj_planner_event(p, false, "Resumed", "TrainJob is resumed");
	}
	if (tj_planner_dependency(p) || tj_planner_deadline(p) || tj_planner_preempt(p))
		goto out;
	if (find_failure(p, gang, &failed)) {
		tj_planner_restart(p, &failed, gang, max_restarts);
		if (p->st.state == TJ_STATE_RESTARTING && in->ticket) {
			avoid_failed_node(p, excluded);
			tj_planner_want_replacements(p, render, gang, failed.pod);
		}
		goto out;
	}
	if (!gang)
		delete_recorded_failure(p);
	if (tj_planner_stalled(p, max_restarts))
		goto out;
	if (tj_planner_give_back(p, render) ||
	    tj_planner_steps(p, render, max_restarts, &node_may_start))
		goto out;
	had_start = p->st.start_time != 0;
	if (node_may_start)
		tj_planner_create_pods(p, render);
	tj_planner_steps_claims(p);
	tj_planner_mpi_pods(p, render);
	snapshot(p, !had_start && p->st.start_time);
	if (!had_start && p->st.start_time)
		tj_planner_deadline(p);
	tj_planner_warn_created(p);
	if (!p->queued && node_may_start && !tj_planner_steps_succeeded(p))
		progress(p);
out:
	tj_render_free(render);
	return p->oom ? -ENOMEM : 0;
}

static bool deferrable(const struct planner *p, const struct tj_action *a, enum slot slot)
{
	switch (a->kind) {
	case TJ_ACTION_CREATE_SERVICE:
	case TJ_ACTION_DELETE_SERVICE:
	case TJ_ACTION_DELETE_WORKLOAD:
	case TJ_ACTION_DELETE_POD_GROUP:
	case TJ_ACTION_EVENT:
		return true;
	case TJ_ACTION_PATCH_STATUS:
		return !p->status_first;
	case TJ_ACTION_CREATE_OBJECT:
		/* The pods that mount a claim wait for it; a first start's runtime snapshot goes
		 * with the status. */
		return slot == SLOT_STATUS && !p->status_first;
	case TJ_ACTION_CREATE_POD:
	case TJ_ACTION_DELETE_POD:
	case TJ_ACTION_CREATE_WORKLOAD:  /* the scheduler holds the pods until their */
	case TJ_ACTION_CREATE_POD_GROUP: /* PodGroup exists */
	case TJ_ACTION_PATCH_POD:        /* a kept pod blocks its rank until it is relabelled */
		break;
	}
	return false;
}

/* Moves the actions into the plan in stage order. */
static int finish(struct planner *p, struct tj_plan *plan)
{
	enum slot order[4] = { SLOT_PREREQUISITE, SLOT_MUTATION, SLOT_STATUS, SLOT_EVENT };
	int stage_of[4];
	bool present[4] = { false, false, false, false };
	size_t k = 0;
	int stage = 0;

	if (p->status_first) {
		order[0] = SLOT_STATUS;
		order[1] = SLOT_PREREQUISITE;
		order[2] = SLOT_MUTATION;
	}
	for (size_t i = 0; i < p->n; i++)
		present[p->slots[i]] = true;
	/* Events go with the last stage; a stage holds prerequisites, mutations or the status
	 * patch. */
	for (int o = 0; o < 3; o++) {
		stage_of[order[o]] = stage;
		if (present[order[o]])
			stage++;
	}
	stage_of[SLOT_EVENT] = stage > 0 ? stage - 1 : 0;
	plan->n_stages = stage > 0 ? stage : present[SLOT_EVENT] ? 1 : 0;
	plan->actions = calloc(p->n + 1, sizeof(*plan->actions));
	if (!plan->actions)
		return -ENOMEM;
	for (int o = 0; o < 4; o++)
		for (size_t i = 0; i < p->n; i++)
			if (p->slots[i] == order[o]) {
				plan->actions[k] = p->actions[i];
				plan->actions[k].stage = stage_of[order[o]];
				plan->actions[k].deferrable =
				        deferrable(p, &p->actions[i], p->slots[i]);
				p->actions[i].object = NULL;
				k++;
			}
	plan->n_actions = k;
	plan->requeue_after = p->requeue_after;
	memcpy(plan->restart_reason, p->restart_reason, sizeof(plan->restart_reason));
	plan->stalled = p->stalled;
	plan->status = p->st;
	plan->gang = p->request;
	p->request.want = (struct tj_plan_want){ 0 };
	memcpy(plan->gpu_class, p->gpu_class, sizeof(plan->gpu_class));
	copy(plan->qos, sizeof(plan->qos), p->qos ? p->qos->name : NULL);
	return 0;
}

static void want_clear(struct tj_plan_want *w)
{
	cJSON_Delete(w->pod);
	cJSON_Delete(w->launcher);
	for (size_t i = 0; i < w->n_excluded; i++)
		free(w->excluded[i]);
	free(w->excluded);
	*w = (struct tj_plan_want){ 0 };
}

struct tj_plan *tj_plan_free(struct tj_plan *plan)
{
	if (!plan)
		return NULL;
	for (size_t i = 0; i < plan->n_actions; i++)
		cJSON_Delete(plan->actions[i].object);
	free(plan->actions);
	want_clear(&plan->gang.want);
	free(plan);
	return NULL;
}

int tj_plan_trainjob(const struct tj_plan_input *in, struct tj_plan **ret)
{
	struct planner p = { .in = in, .job = in->job, .st = in->job->status, .newest_kept = -1 };
	struct tj_plan *plan = calloc(1, sizeof(*plan));
	int r = -ENOMEM;

	if (!plan)
		return -ENOMEM;
	if (in->job->deletion_time || !tj_trainjob_is_ours(in->job)) {
		plan->status = in->job->status;
		*ret = plan;
		return 0;
	}
	p.st.observed_generation = in->job->generation;
	r = decide(&p);
	if (r < 0)
		goto out;
	if (p.stale) {
		plan->status = in->job->status;
		plan->requeue_after = 1;
		goto out;
	}
	tj_planner_preempt_settle(&p);
	tj_planner_retain(&p);
	/* After the TTL the pods are gone; the counts they had stay the job's record. */
	if (!p.st.cleanup_time)
		tj_planner_count_steps(&p,
		                       p.st.state == TJ_STATE_SUSPENDED ||
		                               (p.st.state == TJ_STATE_QUEUED && in->job->suspend));
	/* The seconds of a pod this plan deletes are recorded before it goes. */
	if (tj_gpu_seconds_count(&(struct tj_gpu_seconds_input){ .old = &in->job->status,
	                                                         .pods = p.owned,
	                                                         .n_pods = p.n_owned,
	                                                         .deletes = p.deleted,
	                                                         .resource = p.gpu_resource,
	                                                         .gang = p.gang,
	                                                         .now = in->now },
	                         &p.st))
		p.status_first = true;
	r = status_patch(&p);
	if (r < 0 || p.oom) {
		r = -ENOMEM;
		goto out;
	}
	r = finish(&p, plan);
out:
	for (size_t i = 0; i < p.n; i++)
		cJSON_Delete(p.actions[i].object);
	free(p.actions);
	free(p.slots);
	free(p.owned);
	free(p.deleted);
	free(p.nodes);
	free(p.current);
	free(p.blocked);
	free(p.is_step);
	for (size_t i = 0; i < TJ_MAX_STEPS; i++) {
		free(p.step_slots[i]);
		free(p.step_blocked[i]);
	}
	want_clear(&p.request.want);
	if (r < 0) {
		tj_plan_free(plan);
		return r;
	}
	*ret = plan;
	return 0;
}
