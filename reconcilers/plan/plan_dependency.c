/* What holds a job of a plan (plan.h) before it starts. A hold (the annotation
 * trainjob.flame.dev/hold: "true", kubectl scontrol hold) keeps it Queued with reason
 * JobHeldUser, out of the admission queue, until it is released. Its dependency
 * (reconcilers/plan/dependency.h) keeps it Queued with reason Dependency until the TrainJobs it
 * names have done what it asks for, and fails with DependencyNeverSatisfied once they can no longer
 * do it (a name the namespace has no TrainJob of counts as one not started for the first minute of
 * the dependent's life). A job that has started, or has pods, is past both: the annotations no
 * longer hold it. */
#include "reconcilers/plan/plan_internal.h"

#include <string.h>

#include "reconcilers/plan/dependency.h"

/* How long a name the namespace has no TrainJob of waits before the dependency on it can
 * never be met, from the dependent's creation: kubectl apply of a folder creates the jobs
 * in any order. Also the longest a waiting job goes without being planned again. */
#define ABSENT_GRACE_S 60

struct graced {
	const struct tj_dependency_lookup *jobs;
	bool absent_waits; /* an absent job counts as one not started yet */
};

static bool find_graced(void *userdata, const char *name, struct tj_dependency_job *ret)
{
	const struct graced *g = userdata;

	if (g->jobs->find(g->jobs->userdata, name, ret))
		return true;
	if (!g->absent_waits)
		return false;
	*ret = (struct tj_dependency_job){ .state = TJ_STATE_NONE };
	return true;
}

static const char *group_member(void *userdata, size_t i, struct tj_dependency_job *ret)
{
	const struct graced *g = userdata;

	return g->jobs->group_member ? g->jobs->group_member(g->jobs->userdata, i, ret) : NULL;
}

/* Whether the job has pods that are not finished. */
static bool has_live_pods(const struct planner *p)
{
	for (size_t i = 0; i < p->n_owned; i++)
		if (!tj_pod_terminal(p->owned[i]))
			return true;
	return false;
}

bool tj_planner_dependency(struct planner *p)
{
	const struct tj_trainjob *job = p->job;
	struct tj_dependency dep;
	struct tj_dependency_verdict v;
	struct tj_problem why = { "", "" };
	int64_t wake;

	if (p->st.start_time || has_live_pods(p))
		return false;
	if (job->hold && strcmp(job->hold, "true") == 0) {
		tj_planner_set_state(p, TJ_STATE_QUEUED, TJ_REASON_HELD,
		                     "held (trainjob.flame.dev/hold); kubectl scontrol release %s "
		                     "lets it queue",
		                     job->name);
		if (p->st.state != job->status.state ||
		    strcmp(p->st.reason, job->status.reason) != 0)
			tj_planner_event(p, false, TJ_REASON_HELD, "%s", p->st.message);
		p->queued = true;
		return true;
	}
	if (!job->dependency || !p->in->jobs)
		return false;
	if (tj_dependency_parse(job->dependency, &dep, &why) < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return true;
	}
	struct graced g = { p->in->jobs, p->in->now < job->creation_time + ABSENT_GRACE_S };
	struct tj_dependency_subject subject = {
		.name = job->name,
		.group = tj_dependency_singleton_group(job->job_name, job->name),
		.creation_time = job->creation_time,
		.now = p->in->now,
	};

	tj_dependency_evaluate(&dep, &subject,
	                       &(struct tj_dependency_lookup){ find_graced, group_member, &g }, &v);
	switch (v.outcome) {
	case TJ_DEPENDENCY_SATISFIED:
		return false;
	case TJ_DEPENDENCY_NEVER:
		tj_planner_fail(p, TJ_REASON_DEPENDENCY_NEVER, v.message);
		return true;
	case TJ_DEPENDENCY_WAITING:
		break;
	}
	tj_planner_set_state(p, TJ_STATE_QUEUED, TJ_REASON_DEPENDENCY, "%s", v.message);
	if (p->st.state != job->status.state || strcmp(p->st.reason, job->status.reason) != 0)
		tj_planner_event(p, false, TJ_REASON_DEPENDENCY, "%s", v.message);
	p->queued = true;
	/* The jobs' events plan it again; a delay that runs out, or a name still absent, make
	 * none. */
	wake = v.wake_at > p->in->now ? v.wake_at - p->in->now : ABSENT_GRACE_S;
	if (wake > ABSENT_GRACE_S)
		wake = ABSENT_GRACE_S;
	if (!p->requeue_after || wake < p->requeue_after)
		p->requeue_after = wake;
	return true;
}
