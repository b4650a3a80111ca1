/* The walltime of a plan (plan.h): the limits a job is held to before it starts, its
 * deadline once it has, the warning its pods get before the end, and the end itself. */
#include "reconcilers/plan/plan_internal.h"

#include <stdio.h>
#include <string.h>

#include "reconcilers/json.h"

bool tj_planner_walltime(struct planner *p, const struct tj_gpu_class *cls)
{
	struct tj_problem why = { "", "" };
	int r;

	if (tj_walltime_validate_warning(p->job->deadline_warning, &why) < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return true;
	}
	/* The runtime's activeDeadlineSeconds is the walltime its jobs ask for by default. */
	r = tj_walltime_resolve(p->in->config, p->job->namespace, cls,
	                        p->job->active_deadline_seconds
	                                ? p->job->active_deadline_seconds
	                                : p->in->runtime->active_deadline_seconds,
	                        &p->walltime, &why);
	/* A job whose deadline is fixed keeps it, as Slurm keeps a running job's time limit:
	 * a maxWalltime lowered while it runs holds for the jobs that start after. */
	if (r < 0 && !(p->st.start_time && p->st.deadline)) {
		tj_planner_fail(p, why.reason, why.message);
		return true;
	}
	/* Its QOS tier likewise: a tier taken from its namespace while it runs holds for the
	 * jobs that start after. */
	p->qos = tj_qos_resolve(tj_config_admission(p->in->config), p->job->namespace, p->job->qos,
	                        &why);
	if (!p->st.start_time && (!p->qos || tj_qos_walltime(p->qos, &p->walltime, &why) < 0)) {
		tj_planner_fail(p, why.reason, why.message);
		return true;
	}
	return false;
}

/* Why the job ended: the limit that set its deadline, when the config still says so. */
static void deadline_message(const struct planner *p, char *buf, size_t size)
{
	const struct tj_walltime *w = &p->walltime;
	int64_t seconds = p->st.deadline - p->st.start_time;
	char when[21], human[32];

	if (!w->from_default && p->job->active_deadline_seconds == seconds) {
		snprintf(buf, size, "the job ran longer than spec.activeDeadlineSeconds (%lld s)",
		         (long long)seconds);
		return;
	}
	if (w->from_default && w->seconds == seconds) {
		tj_walltime_format(seconds, human);
		snprintf(buf, size,
		         "the job ran longer than its walltime of %s (%lld s), %s for jobs without "
		         "spec.activeDeadlineSeconds",
		         human, (long long)seconds, w->source);
		return;
	}
	tj_time_format(p->st.deadline, when);
	snprintf(buf, size, "the job ran past its deadline (status.deadline %s)", when);
}

int tj_planner_warn_pods(struct planner *p, int64_t end)
{
	char when[21];
	int warned = 0;

	tj_time_format(end, when);
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];
		struct tj_action *a;
		cJSON *annotations;

		if (!pod || is_finished(pod) || is_deleting(pod) || pod->deadline == end)
			continue;
		a = tj_planner_push(p, TJ_ACTION_PATCH_POD, SLOT_MUTATION);
		if (!a)
			return warned;
		copy(a->name, sizeof(a->name), pod->name);
		a->object = cJSON_CreateObject();
		annotations = a->object ? tj_json_object(tj_json_object(a->object, "metadata"),
		                                         "annotations")
		                        : NULL;
		if (!annotations ||
		    tj_json_set_string(annotations, TJ_ANNOTATION_DEADLINE, when) < 0) {
			p->oom = true;
			return warned;
		}
		warned++;
	}
	return warned;
}

/* The words of the walltime's warning: the same at every plan that warns (a pod seen before
 * its patch is in the cache is warned twice), so that the events aggregate into one. */
static void warning_event(struct planner *p)
{
	char when[21];

	tj_time_format(p->st.deadline, when);
	tj_planner_event(p, false, "DeadlineWarning",
	                 "the job ends at %s: its pods have the deadline in %s/%s", when,
	                 TJ_DEADLINE_MOUNT_PATH, TJ_DEADLINE_FILE);
}

/* Writes the deadline on the live pods of the current attempt that do not show it yet. */
static void warn_pods(struct planner *p)
{
	if (tj_planner_warn_pods(p, p->st.deadline))
		warning_event(p);
}

static int64_t warning_at(const struct planner *p)
{
	return tj_walltime_warning_at(
	        p->st.start_time, p->st.deadline,
	        tj_walltime_warning_seconds(p->job->deadline_warning, p->in->config));
}

void tj_planner_warn_created(struct planner *p)
{
	char when[21], name[TJ_NAME_MAX];
	bool warned = false;

	if (!tj_planner_deadline_first(p) || p->in->now < warning_at(p))
		return;
	tj_time_format(p->st.deadline, when);
	for (int r = 0; r < p->num_nodes; r++) {
		tj_render_pod_name(p->job->name, r, p->st.restart_count, name);
		for (size_t i = 0; i < p->n; i++) {
			struct tj_action *a = &p->actions[i];
			cJSON *annotations;

			if (a->kind != TJ_ACTION_CREATE_POD || !a->object ||
			    strcmp(a->name, name) != 0)
				continue;
			annotations = tj_json_object(tj_json_object(a->object, "metadata"),
			                             "annotations");
			if (!annotations ||
			    tj_json_set_string(annotations, TJ_ANNOTATION_DEADLINE, when) < 0) {
				p->oom = true;
				return;
			}
			warned = true;
		}
	}
	if (warned)
		warning_event(p);
}

/* Whether every rank of the current attempt succeeded, each by the deadline (its container's
 * finishedAt): the job met its walltime, however late the plan that sees it comes (a busy
 * controller, or a slow watch, may plan it after the deadline has passed). Only for a job of
 * the node step alone: with other steps, the success policy decides what completes it. */
static bool succeeded_in_time(const struct planner *p)
{
	const struct tj_runtime *rt = p->in->runtime;

	if (p->num_nodes < 1 || (rt && rt->graph.n > 1))
		return false;
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];

		if (!pod || pod->phase != TJ_POD_SUCCEEDED || !pod->start_time ||
		    pod->held_seconds < 0 || pod->start_time + pod->held_seconds > p->st.deadline)
			return false;
	}
	return true;
}

bool tj_planner_deadline(struct planner *p)
{
	const struct tj_plan_input *in = p->in;
	char msg[TJ_MESSAGE_MAX];
	int64_t warn_at;

	if (!p->st.start_time) {
		p->st.deadline = 0;
		return false;
	}
	if (!p->st.deadline && p->walltime.seconds)
		p->st.deadline = p->st.start_time + p->walltime.seconds;
	if (!p->st.deadline)
		return false;
	if (in->now >= p->st.deadline) {
		if (succeeded_in_time(p))
			return false; /* the completion below says Complete */
		deadline_message(p, msg, sizeof(msg));
		tj_planner_fail(p, "DeadlineExceeded", msg);
		return true;
	}
	requeue(p, p->st.deadline - in->now);
	warn_at = warning_at(p);
	if (in->now < warn_at)
		requeue(p, warn_at - in->now);
	else if (tj_planner_deadline_first(p))
		warn_pods(p); /* unless a preemption stops it first, and its warning is the one */
	return false;
}
