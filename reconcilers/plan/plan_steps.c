/* The step graph in a plan (plan.h, steps.h): the pods of the steps other than node, in the
 * order dependsOn and startupPolicy give them; a failed step through the failure policy;
 * the success policy; the claims every step mounts; jobsStatus per step.
 *
 * Admission: the node step is a gang that waits in the queue of its GPU class, with the
 * MPI launcher when it asks for GPUs (plan_gang.c): the launcher is created once its
 * dependsOn are met, pinned to the place held for it. The other steps (initializers, a
 * launcher without GPUs) are created as soon as their dependsOn are met, outside the queue,
 * as the scheduler places any pod: they hold no GPUs, and a job whose node gang waits for
 * its initializers would otherwise hold a reservation for nothing. Such a step that asks
 * for GPUs would bypass the queue, so while the built-in admission is on, its runtime is
 * refused (UnsupportedRuntime) and names the step. */
#include "reconcilers/plan/plan_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/json.h"
#include "reconcilers/render/job_metadata.h"
#include "reconcilers/render/render_step.h"
#include "reconcilers/steps.h"

static const struct tj_step_graph *graph_of(const struct planner *p)
{
	const struct tj_runtime *rt = p->in->runtime;

	return rt && !rt->graph.error && rt->graph.n > 0 ? &rt->graph : NULL;
}

static bool is_node(const struct tj_step *s)
{
	return strcmp(s->name, TJ_STEP_NODE) == 0;
}

/* A pod leaves its slot: kept for its logs or deleted (retention.h); its slot waits. */
static void retire(struct planner *p, size_t step, int slot, const struct tj_pod *pod)
{
	p->step_blocked[step][slot] = true;
	tj_planner_retire_pod(p, pod);
}

int tj_planner_collect_steps(struct planner *p)
{
	const struct tj_step_graph *g = graph_of(p);
	int attempt = p->st.restart_count;

	p->is_step = calloc(p->n_owned + 1, sizeof(*p->is_step));
	if (!p->is_step)
		return -ENOMEM;
	for (size_t i = 0; g && i < g->n; i++) {
		size_t n;

		if (is_node(&g->steps[i]))
			continue;
		n = (size_t)tj_step_pods(g, i, p->num_nodes) + 1;
		p->step_slots[i] = calloc(n, sizeof(*p->step_slots[i]));
		p->step_blocked[i] = calloc(n, sizeof(*p->step_blocked[i]));
		if (!p->step_slots[i] || !p->step_blocked[i])
			return -ENOMEM;
	}
	for (size_t i = 0; g && i < p->n_owned; i++) {
		const struct tj_pod *pod = p->owned[i], **cur;
		size_t s;
		int slot;

		if (tj_step_of_pod(g, p->job->name, pod->name, &s, &slot) < 0)
			continue;
		p->is_step[i] = true;
		if (pod->kept)
			continue;
		/* A failed pod of an older attempt was counted by the restart that followed;
		 * under Gang, or after a stall, a restart replaces what still runs too (the
		 * steps start again, as JobSet recreates its Jobs), but a step that succeeded
		 * keeps its result. */
		if (pod->attempt < attempt &&
		    (pod->phase == TJ_POD_FAILED ||
		     ((p->gang || stall_restarted(p)) && pod->phase != TJ_POD_SUCCEEDED))) {
			retire(p, s, slot, pod);
			continue;
		}
		cur = &p->step_slots[s][slot];
		if (!*cur || pod->attempt > (*cur)->attempt) {
			if (*cur)
				retire(p, s, slot, *cur);
			*cur = pod;
		} else {
			retire(p, s, slot, pod);
		}
	}
	return 0;
}

static void progress_all(const struct planner *p, const struct tj_step_graph *g,
                         struct tj_step_progress *prog)
{
	for (size_t i = 0; i < g->n; i++) {
		if (is_node(&g->steps[i]))
			tj_step_progress(p->current, p->num_nodes, &prog[i]);
		else
			tj_step_progress(p->step_slots[i], tj_step_pods(g, i, p->num_nodes),
			                 &prog[i]);
	}
}

/* The first pod of a step other than node that failed: Failed, disrupted, or on a node
 * that failed. */
static bool step_failure(const struct planner *p, const struct tj_step_graph *g,
                         struct failure *ret)
{
	for (size_t i = 0; i < g->n; i++) {
		int n = tj_step_pods(g, i, p->num_nodes);

		for (int s = 0; !is_node(&g->steps[i]) && s < n; s++) {
			const struct tj_pod *pod = p->step_slots[i][s];
			size_t k;

			if (!pod || pod->phase == TJ_POD_SUCCEEDED)
				continue;
			k = owned_index(p, pod);
			if (pod->phase != TJ_POD_FAILED && !pod->disruption_reason &&
			    !p->nodes[k].failed)
				continue;
			*ret = (struct failure){ .pod = pod, .cls = "WorkerFailed" };
			ret->node.fault = p->nodes[k].fault;
			if (p->nodes[k].fault != TJ_NODE_HEALTHY)
				ret->cls = tj_node_fault_reason(p->nodes[k].fault);
			else if (pod->disruption_reason)
				ret->cls = "Evicted";
			return true;
		}
	}
	return false;
}

static bool any_node_pod(const struct planner *p)
{
	for (int r = 0; r < p->num_nodes; r++)
		if (p->current[r])
			return true;
	return false;
}

/* Creates the missing pods of step i (render: the job's pods, for envInjection); false when
 * the job was failed instead. */
static bool create_step(struct planner *p, const struct tj_render *render, size_t i)
{
	const struct tj_step *step = &p->in->runtime->graph.steps[i];
	int n = tj_step_pods(&p->in->runtime->graph, i, p->num_nodes);
	struct tj_problem why = { "", "" };

	for (int s = 0; s < n; s++) {
		struct tj_action *a;
		cJSON *pod;
		int r;

		if (p->step_slots[i][s] || p->step_blocked[i][s])
			continue;
		r = tj_render_step_pod(p->job, step, s, p->st.restart_count, &pod, &why);
		/* The JobSet's labels and annotations go on every step's pods, as on node's; and
		 * torchrun's variables on the containers the runtime's envInjection names, with
		 * the pod's completion index for its rank. */
		if (r == 0 &&
		    (tj_job_metadata_apply(tj_json_object(pod, "metadata"), p->job, p->in->runtime,
		                           step->name) < 0 ||
		     tj_render_inject_env(render, pod, step->name, s % step->pods_per_job) < 0)) {
			cJSON_Delete(pod);
			r = -ENOMEM;
		}
		if (r == -ENOMEM) {
			p->oom = true;
			return false;
		}
		if (r < 0) {
			tj_planner_fail(p, why.reason, why.message);
			return false;
		}
		/* The launcher's place is admitted with the node pods (tj_planner_mpi_pods). */
		if (!tj_planner_mpi_is_launcher(p, i) && p->in->ticket &&
		    tj_render_pod_wants_gpus(pod, p->gpu_resource)) {
			cJSON_Delete(pod);
			tj_problem_set(
			        &why, "UnsupportedRuntime",
			        "%s %s: replicated job %s requests GPUs; only the node step is "
			        "admitted as a gang, so a step other than node must not "
			        "request GPUs",
			        tj_runtime_kind_name(p->in->runtime->kind), p->in->runtime->name,
			        step->name);
			tj_planner_fail(p, why.reason, why.message);
			return false;
		}
		a = tj_planner_push(p, TJ_ACTION_CREATE_POD, SLOT_MUTATION);
		if (!a) {
			cJSON_Delete(pod);
			return false;
		}
		a->object = pod;
		copy(a->name, sizeof(a->name), tj_json_string(pod, "metadata.name"));
	}
	return true;
}

/* Announces a step once its pods are seen: when the cache has pods of it but the recorded
 * jobsStatus counts none of its Jobs. Told from what the status recorded rather than when
 * the pods are created, so that a status patch lost to a conflict (and the events of its
 * stage with it) is followed by the event all the same, and a repeated plan tells it once. */
static void announce_step(struct planner *p, const struct tj_step *step,
                          const struct tj_step_progress *prog)
{
	const struct tj_trainjob_status *old = &p->job->status;

	if (prog->exist == 0 && prog->succeeded == 0)
		return;
	for (size_t i = 0; i < old->n_jobs; i++) {
		const struct tj_jobs_status *j = &old->jobs[i];

		if (strcmp(j->name, step->name) == 0 &&
		    j->active + j->succeeded + j->failed + j->ready > 0)
			return;
	}
	tj_planner_event(p, false, "StepStarted", "step %s started: %d of %d pods exist",
	                 step->name, prog->exist, prog->pods);
}

/* The claims must be valid before the first pod exists. */
static bool claims_valid(struct planner *p)
{
	struct tj_problem why = { "", "" };
	cJSON *list = NULL;
	int r = tj_render_claims(p->job, p->in->runtime->graph.claim_templates, &list, &why);

	cJSON_Delete(list);
	if (r == -ENOMEM)
		p->oom = true;
	else if (r < 0)
		tj_planner_fail(p, why.reason, why.message);
	return r == 0;
}

bool tj_planner_steps(struct planner *p, const struct tj_render *render, int max_restarts,
                      bool *node_may_start)
{
	const struct tj_runtime *rt = p->in->runtime;
	const struct tj_step_graph *g = graph_of(p);
	struct tj_step_progress prog[TJ_MAX_STEPS];
	struct failure fl;
	char why[TJ_MESSAGE_MAX];
	bool backing_off;
	size_t node;

	*node_may_start = true;
	if (rt->graph.error) {
		snprintf(why, sizeof(why), "%s %s: %s", tj_runtime_kind_name(rt->kind), rt->name,
		         rt->graph.error);
		tj_planner_fail(p, "InvalidRuntime", why);
		return true;
	}
	if (!g)
		return false;
	if (!claims_valid(p))
		return true;
	if (step_failure(p, g, &fl)) {
		tj_planner_restart(p, &fl, p->gang, max_restarts);
		/* Under Worker the restart retired the pod; under Gang only the node pods. */
		if (p->gang && p->st.state == TJ_STATE_RESTARTING)
			tj_planner_retire_pod(p, fl.pod);
		return true;
	}
	progress_all(p, g, prog);
	for (size_t i = 0; i < g->n; i++)
		if (!is_node(&g->steps[i]))
			announce_step(p, &g->steps[i], &prog[i]);
	backing_off = tj_planner_backing_off(p);
	for (size_t i = 0; i < g->n && !backing_off; i++) {
		if (is_node(&g->steps[i]) ||
		    (!p->in->all_steps && !tj_step_may_start(g, i, prog, why, sizeof(why))))
			continue;
		if (!create_step(p, render, i))
			return true;
	}
	node = tj_step_graph_find(g, TJ_STEP_NODE);
	if (node == g->n || p->in->all_steps || any_node_pod(p) ||
	    tj_step_may_start(g, node, prog, why, sizeof(why)))
		return false;
	*node_may_start = false;
	tj_planner_set_state(p,
	                     p->st.restart_count > 0 && p->job->status.state == TJ_STATE_RESTARTING
	                             ? TJ_STATE_RESTARTING
	                             : TJ_STATE_PENDING,
	                     "WaitingForSteps", "the node step waits for %s", why);
	if (strcmp(p->st.reason, p->job->status.reason) != 0)
		tj_planner_event(p, false, "WaitingForSteps", "%s", p->st.message);
	return false;
}

/* "dataset-initializer, node" into buf: the steps the success policy names. */
static void targets_text(const struct tj_step_graph *g, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < g->n && len < size; i++)
		if (g->steps[i].success_target)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
			                        g->steps[i].name);
}

bool tj_planner_steps_succeeded(struct planner *p)
{
	const struct tj_step_graph *g = graph_of(p);
	struct tj_step_progress prog[TJ_MAX_STEPS];
	bool all = true;
	char names[512];

	if (!g || g->n < 2)
		return false;
	progress_all(p, g, prog);
	if (!tj_step_graph_succeeded(g, prog)) {
		p->hold_completion = true;
		return false;
	}
	for (size_t i = 0; i < g->n; i++)
		all = all && g->steps[i].success_target;
	targets_text(g, names, sizeof(names));
	tj_planner_set_state(p, TJ_STATE_COMPLETE, all ? "AllStepsSucceeded" : "SuccessPolicyMet",
	                     "%s %s succeeded", all ? "every step:" : "successPolicy", names);
	tj_planner_set_condition(p, TJ_CONDITION_COMPLETE, p->st.reason, p->st.message);
	if (!p->st.completion_time)
		p->st.completion_time = p->in->now;
	/* What still runs (a worker's sshd once the launcher is done) stops: jobs exit. The
	 * completion is recorded first, alone: a plan made before it lands would see the
	 * stopped pods' ranks empty and create them again. */
	p->status_first = true;
	tj_planner_delete_live_pods(p);
	tj_planner_event(p, false, "Completed", "%s", p->st.message);
	return true;
}

void tj_planner_steps_claims(struct planner *p)
{
	const struct tj_runtime *rt = p->in->runtime;
	const char *claims = rt ? rt->graph.claim_templates : NULL;
	struct tj_problem why = { "", "" };
	cJSON *list = NULL, *pvc;
	bool created = false;

	if (!claims || p->oom)
		return;
	for (size_t i = 0; i < p->n; i++) {
		if (p->actions[i].kind != TJ_ACTION_CREATE_POD)
			continue;
		created = true;
		if (tj_render_mount_claims(p->actions[i].object, claims, p->job->name) < 0)
			p->oom = true;
	}
	if (!created || p->oom)
		return;
	if (tj_render_claims(p->job, claims, &list, &why) < 0) {
		p->oom = true;
		return;
	}
	while ((pvc = cJSON_DetachItemFromArray(list, 0))) {
		struct tj_action *a = tj_planner_push(p, TJ_ACTION_CREATE_OBJECT, SLOT_MUTATION);

		if (!a) {
			cJSON_Delete(pvc);
			break;
		}
		a->object = pvc;
		copy(a->name, sizeof(a->name), tj_json_string(pvc, "metadata.name"));
	}
	cJSON_Delete(list);
}

void tj_planner_count_steps(struct planner *p, bool suspended)
{
	const struct tj_step_graph *g = graph_of(p);
	struct tj_trainjob_status *st = &p->st;

	if (!p->current)
		return;
	memset(st->jobs, 0, sizeof(st->jobs));
	st->has_jobs_status = true;
	st->n_jobs = 0;
	if (!g || tj_step_graph_find(g, TJ_STEP_NODE) == g->n) {
		tj_step_jobs_status(TJ_STEP_NODE, p->current, p->num_nodes, p->num_nodes, suspended,
		                    &st->jobs[st->n_jobs++]);
		return;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct tj_step *s = &g->steps[i];

		if (is_node(s))
			tj_step_jobs_status(s->name, p->current, p->num_nodes, p->num_nodes,
			                    suspended, &st->jobs[st->n_jobs++]);
		else
			tj_step_jobs_status(s->name, p->step_slots[i],
			                    tj_step_pods(g, i, p->num_nodes), s->pods_per_job,
			                    suspended, &st->jobs[st->n_jobs++]);
	}
}
