/* The retention rules of a plan (plan.h, retention.h): replaced pods kept for their logs,
 * and a finished job's children deleted once its TTL has passed. */
#include "reconcilers/plan/plan_internal.h"

#include <stdio.h>

#include "base/number.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/retention.h"

static bool job_finished(const struct tj_trainjob_status *st)
{
	return tj_trainjob_status_is_true(st, TJ_CONDITION_COMPLETE) ||
	       tj_trainjob_status_is_true(st, TJ_CONDITION_FAILED);
}

int64_t tj_planner_running_since(const struct planner *p, bool only_running)
{
	int64_t since = 0;

	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current ? p->current[r] : NULL;
		int64_t t;

		if (!pod || is_deleting(pod) ||
		    (pod->phase != TJ_POD_RUNNING &&
		     (only_running || pod->phase != TJ_POD_SUCCEEDED)))
			return 0;
		t = pod->start_time ? pod->start_time : pod->creation_time;
		if (t > since)
			since = t;
	}
	return since;
}

static void keep_input(const struct planner *p, const struct tj_pod *pod, int64_t since,
                       struct tj_keep_input *in)
{
	size_t i = owned_index(p, pod);
	const struct tj_retention_policy *policy = tj_config_retention(p->in->config);

	*in = (struct tj_keep_input){
		.finished = is_finished(pod),
		.deleting = is_deleting(pod),
		.node_failed = i < p->n_owned && p->nodes[i].failed,
		.kept = pod->kept,
		/* Created before the stall: live then, and stopped by it. */
		.stopping = !is_finished(pod) && stall_restarted(p) &&
		            pod->creation_time < p->st.last_failure.time,
		.stop_until =
		        tj_add_capped(p->st.last_failure.time,
		                      (int64_t)pod->termination_grace + TJ_STOP_SLACK_SECONDS),
		.attempt = pod->attempt,
		.newest_attempt = p->newest_kept,
		.job_finished = job_finished(&p->st),
		.running_since = since,
		.keep_seconds = policy->keep_failed_pods_seconds,
		.now = p->in->now,
	};
}

/* The patch that keeps a pod for its logs. With relabel (a replaced attempt's pod), it takes
 * the labels by which Kubeflow's SDK (jobset-name, replicatedjob-name, the completion index)
 * and the Service (jobset-name) find a rank, and labels the pod with its attempt instead. A
 * pod that still runs (a stalled attempt's) is stopped in the same patch, by an
 * activeDeadlineSeconds already past (retention.h), so that no kept pod runs unstopped. The
 * uid in the body makes the patch fail with a Conflict rather than touch a newer pod of that
 * name. */
static void keep_pod(struct planner *p, const struct tj_pod *pod, bool relabel)
{
	struct tj_action *a = tj_planner_push(p, TJ_ACTION_PATCH_POD, SLOT_MUTATION);
	cJSON *meta, *labels, *annotations;
	char attempt[16];

	if (!a)
		return;
	copy(a->name, sizeof(a->name), pod->name);
	snprintf(attempt, sizeof(attempt), "%d", pod->attempt);
	a->object = cJSON_CreateObject();
	meta = tj_json_object(a->object, "metadata");
	if (!meta || tj_json_set_string(meta, "uid", pod->uid) < 0 ||
	    (!is_finished(pod) &&
	     tj_json_set(tj_json_object(a->object, "spec"), "activeDeadlineSeconds",
	                 cJSON_CreateNumber(1)) < 0)) {
		p->oom = true;
		return;
	}
	if (!relabel)
		return;
	labels = tj_json_object(meta, "labels");
	annotations = tj_json_object(meta, "annotations");
	if (!labels || !annotations ||
	    tj_json_set(labels, TJ_LABEL_JOBSET_NAME, cJSON_CreateNull()) < 0 ||
	    tj_json_set(labels, TJ_LABEL_REPLICATED_JOB, cJSON_CreateNull()) < 0 ||
	    tj_json_set(labels, TJ_LABEL_COMPLETION_INDEX, cJSON_CreateNull()) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_FAILED_ATTEMPT, attempt) < 0 ||
	    tj_json_set(annotations, TJ_LABEL_COMPLETION_INDEX, cJSON_CreateNull()) < 0)
		p->oom = true;
}

bool tj_planner_stopping(struct planner *p, const struct tj_pod *pod)
{
	struct tj_keep_input in;

	keep_input(p, pod, 0, &in);
	if (!tj_retention_stopping(&in))
		return false;
	if (p->stalled)
		keep_pod(p, pod, false);
	requeue(p, in.stop_until - in.now);
	return true;
}

void tj_planner_retire_pod(struct planner *p, const struct tj_pod *pod)
{
	struct tj_keep_input in;
	int64_t wait;

	keep_input(p, pod, 0, &in);
	/* The pods retired by a restart are of the newest attempt there is. */
	if (tj_retention_keepable(&in) && pod->attempt > in.newest_attempt)
		in.newest_attempt = p->newest_kept = pod->attempt;
	switch (tj_retention_keep(&in, &wait)) {
	case TJ_KEEP_LABEL:
		if (!pod->uid || !*pod->uid)
			tj_planner_delete_pod(p, pod);
		else
			keep_pod(p, pod, true);
		break;
	case TJ_KEEP:
		break;
	case TJ_KEEP_DELETE:
		tj_planner_delete_pod(p, pod);
		break;
	}
}

/* Deletes the child of the job's name that kind deletes (the Service, the PodGroup, the
 * Workload). */
static void delete_child(struct planner *p, enum tj_action_kind kind)
{
	struct tj_action *a = tj_planner_push(p, kind, SLOT_MUTATION);

	if (a)
		copy(a->name, sizeof(a->name), p->job->name);
}

/* The TTL of a job that was already finished when the plan began (a job that finishes in
 * this plan waits for its status to be written: its pods are what says it finished). */
static bool clean_up(struct planner *p)
{
	const struct tj_retention_policy *policy = tj_config_retention(p->in->config);
	int ttl = tj_retention_ttl(p->in->runtime, policy);
	bool gang = p->in->native_gang;
	int64_t wait = 0;

	if (!job_finished(&p->job->status)) {
		if (job_finished(&p->st) && ttl >= 0)
			requeue(p, ttl > 0 ? ttl : 1);
		return false;
	}
	if (!tj_retention_ttl_expired(p->st.completion_time, ttl, p->in->now, &wait)) {
		requeue(p, wait);
		return false;
	}
	for (size_t i = 0; i < p->n_owned; i++)
		tj_planner_delete_pod(p, p->owned[i]);
	if (p->st.cleanup_time)
		return true;
	p->st.cleanup_time = p->in->now;
	delete_child(p, TJ_ACTION_DELETE_SERVICE);
	/* The gang's objects are the job's children as its pods are; the ownerReference would
	 * remove them only with the TrainJob, which the TTL keeps. */
	if (gang) {
		delete_child(p, TJ_ACTION_DELETE_POD_GROUP);
		delete_child(p, TJ_ACTION_DELETE_WORKLOAD);
	}
	/* No count of pods: a plan parked behind the write gate may be superseded by one made
	 * after the pods are gone. */
	tj_planner_event(p, false, "CleanedUp",
	                 "ttlSecondsAfterFinished (%d s) passed: the job's pods%s are deleted; "
	                 "the TrainJob keeps its status",
	                 ttl, gang ? ", Service, PodGroup and Workload" : " and Service");
	return true;
}

void tj_planner_retain(struct planner *p)
{
	int64_t since;

	if (clean_up(p))
		return;
	since = tj_planner_running_since(p, false);
	for (size_t i = 0; i < p->n_owned; i++) {
		const struct tj_pod *pod = p->owned[i];
		struct tj_keep_input in;
		int64_t wait;

		if (!pod->kept)
			continue;
		keep_input(p, pod, since, &in);
		switch (tj_retention_keep(&in, &wait)) {
		case TJ_KEEP:
			requeue(p, wait);
			break;
		case TJ_KEEP_LABEL:
		case TJ_KEEP_DELETE:
			tj_planner_delete_pod(p, pod);
			break;
		}
	}
}
