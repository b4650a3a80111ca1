/* The preemption of a running job (plan.h, "Preemption"), as Slurm's PreemptMode=REQUEUE
 * with a GraceTime: the queue chose the job as a victim of a job of a higher tier
 * (reconcilers/admission/admission.h) and its ticket says when its pods stop. The plan that first
 * reads it records it in the status (status.preemption: the stop time and the job that
 * preempts it), so that the stop holds across restarts of the controller; the pods get the
 * stop time in their deadline file, as for a walltime warning, so that a training script
 * can checkpoint; at the stop time the pods are deleted and the job goes back to the queue,
 * Queued with reason Preempted. A script that saved its state on the notice and exits with a
 * failure (143, as a process stopped by SIGTERM) stops the job then, not at the stop time:
 * its nodes go to the job that preempts it at once. A job whose ranks all succeed before the
 * stop time is Complete, as without the notice. Nothing of it is a failure: the restart count and
 * the budgets stay as they were, the walltime clock starts again at the next admission, and the
 * GPU-seconds of the stopped attempt are counted as preempted. kubectl scontrol requeue (the
 * annotation trainjob.flame.dev/requeue, the time of the request) stops a running job the same way,
 * at once, with reason Requeued; each request once (status.lastRequeueTime). */
#include "reconcilers/plan/plan_internal.h"

#include <string.h>

#include "base/rfc3339.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/walltime.h"
#include "reconcilers/usage/gpu_seconds.h"

void tj_planner_preempt_settle(struct planner *p)
{
	if (p->st.start_time && p->st.state != TJ_STATE_COMPLETE && p->st.state != TJ_STATE_FAILED)
		return;
	p->st.preempt_at = 0;
	p->st.preempted_by[0] = '\0';
}

/* The GPU-seconds the pods of the current attempt held since the job started. */
static int64_t attempt_gpu_seconds(const struct planner *p)
{
	int64_t total = 0;

	for (int r = 0; r < p->num_nodes; r++)
		if (p->current[r])
			total += tj_gpu_seconds_of_pod(p->current[r], p->gpu_resource,
			                               p->st.start_time, p->in->now);
	return total;
}

/* Stops the running job and queues it again (reason, and the message already in
 * p->st.message's place, made by the caller): its pods are deleted, nothing of it is a
 * failure, and its walltime clock starts again at its next admission. */
static void stop(struct planner *p, const char *reason)
{
	tj_planner_delete_live_pods(p);
	tj_planner_event(p, false, reason, "%s; its pods are deleted", p->st.message);
	/* As a resume: nothing of the stopped attempt's deadline is waited for. */
	p->requeue_after = 0;
	p->st.start_time = 0;
	p->st.deadline = 0;
	p->st.preempt_at = 0;
	p->st.preempted_by[0] = '\0';
}

/* kubectl scontrol requeue: a request made once the run had started, and not carried out
 * yet, stops it now. */
static bool requeue_asked(struct planner *p)
{
	int64_t asked;
	char when[21];

	if (!p->job->requeue || tj_rfc3339_parse(p->job->requeue, &asked) < 0 ||
	    asked < p->st.start_time || asked <= p->st.requeued_at)
		return false;
	p->st.requeued_at = asked;
	tj_time_format(asked, when);
	tj_planner_set_state(p, TJ_STATE_QUEUED, TJ_REASON_REQUEUED,
	                     "requeued at %s (%s): back in the queue, to start again from the "
	                     "beginning or its last checkpoint; not a restart",
	                     when, TJ_ANNOTATION_REQUEUE);
	stop(p, TJ_REASON_REQUEUED);
	return true;
}

/* A rank of the current attempt whose pod failed (its script, told of the stop time, saved
 * its state and exited): -1 for none. */
static int stopped_rank(const struct planner *p)
{
	for (int r = 0; r < p->num_nodes; r++)
		if (p->current[r] && p->current[r]->phase == TJ_POD_FAILED &&
		    !is_deleting(p->current[r]))
			return r;
	return -1;
}

int64_t tj_planner_stop_time(const struct planner *p)
{
	const struct tj_admission_ticket *t = p->in->ticket;

	if (p->st.preempt_at || !p->st.start_time)
		return p->st.preempt_at;
	return t ? t->preempt_at : 0;
}

bool tj_planner_deadline_first(const struct planner *p)
{
	int64_t stop = tj_planner_stop_time(p);

	return p->st.deadline && (!stop || p->st.deadline < stop);
}

bool tj_planner_preempt(struct planner *p)
{
	const struct tj_admission_ticket *t = p->in->ticket;
	char when[21], now[21];
	int rank;

	if (!p->st.start_time)
		return false;
	if (requeue_asked(p))
		return true;
	if (!p->st.preempt_at && t && t->preempt_at) {
		p->st.preempt_at = t->preempt_at;
		copy(p->st.preempted_by, sizeof(p->st.preempted_by), t->preempted_by);
		tj_time_format(p->st.preempt_at, when);
		if (tj_planner_deadline_first(p)) {
			tj_time_format(p->st.deadline, now);
			tj_planner_event(
			        p, true, TJ_REASON_PREEMPTED,
			        "preempted by %s, of a higher QOS tier: stopped at %s unless "
			        "it ends first; its walltime's deadline %s comes before, "
			        "and its pods have that in %s/%s",
			        p->st.preempted_by, when, now, TJ_DEADLINE_MOUNT_PATH,
			        TJ_DEADLINE_FILE);
		} else {
			tj_planner_event(p, true, TJ_REASON_PREEMPTED,
			                 "preempted by %s, of a higher QOS tier: its pods have the "
			                 "stop time %s in %s/%s and are stopped then; the job goes "
			                 "back to the queue, its restart count unchanged",
			                 p->st.preempted_by, when, TJ_DEADLINE_MOUNT_PATH,
			                 TJ_DEADLINE_FILE);
		}
	}
	if (!p->st.preempt_at)
		return false;
	rank = p->in->now < p->st.preempt_at ? stopped_rank(p) : -1;
	if (p->in->now < p->st.preempt_at && rank < 0) {
		if (!tj_planner_deadline_first(p))
			tj_planner_warn_pods(p, p->st.preempt_at);
		requeue(p, p->st.preempt_at - p->in->now);
		return false;
	}
	tj_time_format(p->st.preempt_at, when);
	p->st.preempted_gpu_seconds += attempt_gpu_seconds(p);
	p->st.preemptions++;
	if (rank >= 0) {
		tj_time_format(p->in->now, now);
		tj_planner_set_state(p, TJ_STATE_QUEUED, TJ_REASON_PREEMPTED,
		                     "preempted by %s at %s, when rank %d exited (code %d) before "
		                     "the stop time %s: back in the queue, to start again from "
		                     "the beginning or its last checkpoint",
		                     p->st.preempted_by, now, rank, p->current[rank]->exit_code,
		                     when);
	} else {
		tj_planner_set_state(p, TJ_STATE_QUEUED, TJ_REASON_PREEMPTED,
		                     "preempted by %s at %s: back in the queue, to start again "
		                     "from the beginning or its last checkpoint",
		                     p->st.preempted_by, when);
	}
	stop(p, TJ_REASON_PREEMPTED);
	/* The next attempt has the same names (a preemption is not a restart): the pods that
	 * stopped go too. */
	for (int r = 0; rank >= 0 && r < p->num_nodes; r++)
		if (p->current[r] && p->current[r]->phase == TJ_POD_FAILED)
			tj_planner_delete_pod(p, p->current[r]);
	return true;
}
