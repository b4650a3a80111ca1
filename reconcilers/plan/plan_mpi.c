/* The planner's part of MPI (reconcilers/mpi.h): a job whose runtime's MPI policy it cannot
 * run as Kubeflow does is refused before any of its pods exists; the launcher and node pods
 * the plan creates get what Kubeflow's MPI plugin gives them, and the Secret and ConfigMap
 * they mount are posted with them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission/launcher_hold.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/plan_internal.h"
#include "reconcilers/render/render_step.h"
#include "reconcilers/steps.h"

bool tj_planner_mpi_refused(struct planner *p)
{
	const struct tj_runtime *rt = p->in->runtime;
	struct tj_problem why = { "", "" };
	char name[TJ_NAME_MAX + 32];

	snprintf(name, sizeof(name), "%s %s", tj_runtime_kind_name(rt->kind), rt->name);
	if (tj_mpi_validate(&rt->mpi, name,
	                    tj_step_graph_find(&rt->graph, "launcher") < rt->graph.n,
	                    rt->node_template != NULL, p->job, &why) < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return true;
	}
	return false;
}

/* The launcher step of an MPI runtime under the built-in admission with a GPU class, whose
 * pods the plan tracks; g->n when there is none. */
static size_t launcher_step(const struct planner *p)
{
	const struct tj_step_graph *g = &p->in->runtime->graph;
	size_t i;

	if (!p->in->runtime->mpi.enabled || !p->in->ticket || !p->gpu_resource || g->error)
		return g->n;
	i = tj_step_graph_find(g, TJ_STEP_LAUNCHER);
	return i < g->n && p->step_slots[i] ? i : g->n;
}

bool tj_planner_mpi_is_launcher(const struct planner *p, size_t step)
{
	return step == launcher_step(p);
}

bool tj_planner_mpi_hold(const struct planner *p, struct tj_launcher_hold *ret)
{
	if (launcher_step(p) == p->in->runtime->graph.n)
		return false;
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];

		if (pod && !is_finished(pod) && !is_deleting(pod) && pod->launcher_hold &&
		    tj_launcher_hold_parse(pod->launcher_hold, ret) == 0)
			return true;
	}
	return false;
}

int tj_planner_mpi_launcher(struct planner *p, cJSON **ret)
{
	size_t i = launcher_step(p);
	struct tj_launcher_hold hold;
	struct tj_problem why = { "", "" };
	cJSON *pod = NULL, *c;
	int r;

	*ret = NULL;
	if (i == p->in->runtime->graph.n || p->step_slots[i][0] || tj_planner_mpi_hold(p, &hold))
		return 0;
	r = tj_render_step_pod(p->job, &p->in->runtime->graph.steps[i], 0, p->st.restart_count,
	                       &pod, &why);
	/* A launcher that cannot be rendered fails the job when it is created. */
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	/* Its requests as tj_planner_mpi_pods will make them: the trainer's resources merged
	 * into its container node when it runs the trainer. */
	c = tj_json_find_by(tj_json_path(pod, "spec.containers"), "name", "node");
	if (c && tj_mpi_runs_trainer(&p->in->runtime->mpi, pod))
		r = tj_render_apply_trainer(c, p->job, false, false, true, &why);
	/* A reserved env name fails the job with the node pods; a quantity that is not one,
	 * the API server refuses with the launcher. */
	if (r < 0 || !tj_render_pod_wants_gpus(pod, p->gpu_resource) ||
	    tj_pod_spec_requests(tj_json_path(pod, "spec"), &(struct tj_pod_resources){ 0 }) < 0) {
		cJSON_Delete(pod);
		return r == -ENOMEM ? r : 0;
	}
	*ret = pod;
	return 0;
}

/* The GPUs of a node pod as the renderer makes it, for the slots. */
static int node_gpus(struct planner *p, const struct tj_render *render, long *ret)
{
	cJSON *pod;
	int r = tj_render_pod(render, 0, p->st.restart_count, &pod);

	if (r < 0)
		return r;
	*ret = tj_mpi_pod_gpus(pod);
	cJSON_Delete(pod);
	return 0;
}

/* The hostfile of the graph: the node step is one Job of num_nodes pods (as Kubeflow's
 * plugins make it), the others their replicas of pods_per_job pods. */
static int hostfile(struct planner *p, int slots, char **ret)
{
	const struct tj_step_graph *g = &p->in->runtime->graph;
	struct tj_mpi_step steps[TJ_MAX_STEPS];

	for (size_t i = 0; i < g->n && i < TJ_MAX_STEPS; i++) {
		bool node = strcmp(g->steps[i].name, TJ_STEP_NODE) == 0;

		steps[i] = (struct tj_mpi_step){ .name = g->steps[i].name,
			                         .replicas = node ? 1 : g->steps[i].replicas,
			                         .pods = node ? p->num_nodes
			                                      : g->steps[i].pods_per_job };
	}
	return tj_mpi_hostfile(&p->in->runtime->mpi, p->job->name, p->job->name, steps,
	                       g->n < TJ_MAX_STEPS ? g->n : TJ_MAX_STEPS, slots, ret);
}

int tj_planner_mpi_trainer(const struct planner *p, cJSON *pod, const char *step,
                           struct tj_problem *why)
{
	cJSON *c;

	if (strcmp(step, TJ_STEP_NODE) == 0 || !tj_mpi_runs_trainer(&p->in->runtime->mpi, pod))
		return 0;
	c = tj_json_find_by(tj_json_path(pod, "spec.containers"), "name", "node");
	return c ? tj_render_apply_trainer(c, p->job, true, true, true, why) : 0;
}

/* The launcher runs the trainer (tj_planner_mpi_trainer); a field it cannot take fails the
 * job. */
static int apply_trainer(struct planner *p, cJSON *pod, const char *step)
{
	struct tj_problem why = { "", "" };
	int r = tj_planner_mpi_trainer(p, pod, step, &why);

	if (r < 0 && r != -ENOMEM)
		tj_planner_fail(p, why.reason, why.message);
	return r;
}

/* The launcher goes to the place its gang holds for it, pinned as the ranks are and in
 * their GPU class; without a hold (a gang created before holds existed) the scheduler
 * places it. */
static int place_launcher(struct planner *p, const struct tj_render *render, cJSON *pod)
{
	struct tj_launcher_hold hold;
	int r;

	if (!tj_planner_mpi_hold(p, &hold))
		return 0;
	r = tj_render_pin(pod, hold.node);
	return r < 0 ? r : tj_render_place_in_class(render, pod);
}

static void post(struct planner *p, cJSON *obj, bool ssh_key)
{
	struct tj_action *a = tj_planner_push(p, TJ_ACTION_CREATE_OBJECT, SLOT_MUTATION);

	if (!a) {
		cJSON_Delete(obj);
		return;
	}
	a->object = obj;
	a->ssh_key = ssh_key;
	copy(a->name, sizeof(a->name), tj_json_string(obj, "metadata.name"));
}

/* The MPI additions to the pods of the plan; the Secret and ConfigMap are built into *secret
 * and *cm when there is a pod. -ENOMEM, or -EINVAL when the job was failed. */
static int add_to_pods(struct planner *p, const struct tj_render *render, cJSON **secret,
                       cJSON **cm)
{
	const struct tj_mpi_policy *mpi = &p->in->runtime->mpi;
	bool created = false;
	char *text = NULL;
	long gpus = 0;
	int r, slots;

	r = node_gpus(p, render, &gpus);
	if (r < 0)
		return r;
	slots = tj_mpi_slots(mpi, p->job, gpus);
	for (size_t i = 0; i < p->n; i++) {
		cJSON *pod = p->actions[i].object;
		const char *step = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		        tj_json_path(pod, "metadata.labels"), TJ_LABEL_REPLICATED_JOB));

		if (p->actions[i].kind != TJ_ACTION_CREATE_POD || !step)
			continue;
		created = true;
		r = apply_trainer(p, pod, step);
		if (r == 0 && strcmp(step, TJ_STEP_LAUNCHER) == 0)
			r = place_launcher(p, render, pod);
		if (r == 0)
			r = tj_mpi_apply_pod(pod, step, mpi, p->job->name, slots);
		if (r < 0)
			return r;
	}
	if (!created)
		return 0;
	r = hostfile(p, slots, &text);
	if (r == 0)
		r = tj_mpi_secret(p->job, secret);
	if (r == 0)
		r = tj_mpi_config_map(p->job, text, cm);
	free(text);
	return r;
}

void tj_planner_mpi_pods(struct planner *p, const struct tj_render *render)
{
	cJSON *secret = NULL, *cm = NULL;
	int r;

	if (!p->in->runtime->mpi.enabled || p->oom)
		return;
	r = add_to_pods(p, render, &secret, &cm);
	if (r == 0 && secret && cm) {
		post(p, secret, true);
		post(p, cm, false);
		return;
	}
	if (r == -ENOMEM || r == -E2BIG)
		p->oom = true;
	cJSON_Delete(secret);
	cJSON_Delete(cm);
}
