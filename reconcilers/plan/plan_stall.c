/* The stall of a plan (plan.h, reconcilers/policy/stall.h): a running job whose reported
 * progress has not changed for its stall timeout is restarted as an infrastructure failure,
 * its pods stopped and kept for their logs. */
#include "reconcilers/plan/plan_internal.h"

#include "reconcilers/policy/stall.h"

/* lastFailure of a stall: rank 0, the rank that reports the job's progress, with its pod
 * and node; no exit code; what was found as its message. */
static void record_stall(struct planner *p, const char *what)
{
	const struct tj_pod *pod = p->current[0];
	struct tj_failure *f = &p->st.last_failure;

	*f = (struct tj_failure){ .rank = 0, .exit_code = -1, .time = p->in->now };
	copy(f->node, sizeof(f->node), pod->node_name);
	copy(f->pod, sizeof(f->pod), pod->name);
	copy(f->reason, sizeof(f->reason), TJ_REASON_STALLED);
	copy(f->message, sizeof(f->message), what);
}

bool tj_planner_stalled(struct planner *p, int max_restarts)
{
	const struct tj_trainjob_status *old = &p->job->status;
	const struct tj_stall_input in = {
		.timeout = p->stall_timeout,
		.reported = old->progress_digest != 0,
		.running_since = tj_planner_running_since(p, true),
		.progress_seen = p->in->progress_seen,
		.now = p->in->now,
	};
	struct tj_stall_verdict v;
	char what[512], budget[128];

	tj_stall_judge(&in, &v);
	if (!v.stalled) {
		if (v.check_at)
			requeue(p, v.check_at - in.now);
		return false;
	}
	tj_stall_describe(&in, &v, old->has_progress ? old->progress_percent : -1, what,
	                  sizeof(what));
	p->stalled = true;
	p->status_first = true;
	record_stall(p, what);
	tj_planner_event(p, true, TJ_REASON_STALLED, "%s", what);
	if (!tj_planner_charge(p, TJ_REASON_STALLED, what, max_restarts, budget, sizeof(budget)))
		return true;
	tj_planner_retire_attempt(p);
	tj_planner_restarting(p, TJ_REASON_STALLED, what, "all workers", budget);
	return true;
}
