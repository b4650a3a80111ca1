/* The planner's part of MPI (reconcilers/mpi.h): a job whose runtime's MPI policy it cannot
 * run as Kubeflow does is refused before any of its pods exists; the launcher and node pods
 * the plan creates get what Kubeflow's MPI plugin gives them, and the Secret and ConfigMap
 * they mount are posted with them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/json.h"
#include "reconcilers/planner.h"
#include "reconcilers/render_step.h"
#include "reconcilers/steps.h"

/* Whether the trainer's fields give GPUs to a step other than node that runs the trainer
 * (the launcher): Kubeflow gives it resourcesPerNode as it gives the node step. A template
 * that asks for GPUs by itself is create_step's refusal (plan_steps.c). 1, 0, or -ENOMEM. */
static int trainer_gives_launcher_gpus(const struct planner *p)
{
	const struct tj_step_graph *g = &p->in->runtime->graph;
	struct tj_problem why = { "", "" };

	for (size_t i = 0; i < g->n; i++) {
		const struct tj_step *s = &g->steps[i];
		cJSON *tmpl, *c;
		int r = 0;

		if (strcmp(s->name, TJ_STEP_NODE) == 0 || strcmp(s->ancestor, "trainer") != 0)
			continue;
		if (tj_json_parse(s->pod_template, &tmpl) < 0)
			return -ENOMEM;
		c = tj_json_find_by(tj_json_path(tmpl, "spec.containers"), "name", "node");
		if (c && !tj_render_pod_wants_gpus(tmpl, p->gpu_resource)) {
			r = tj_render_apply_trainer(c, p->job, false, false, &why);
			if (r == 0)
				r = tj_render_pod_wants_gpus(tmpl, p->gpu_resource);
			else if (r != -ENOMEM)
				r = 0; /* a reserved env name: refused with the node pods */
		}
		cJSON_Delete(tmpl);
		if (r != 0)
			return r;
	}
	return 0;
}

bool tj_planner_mpi_refused(struct planner *p)
{
	const struct tj_runtime *rt = p->in->runtime;
	struct tj_problem why = { "", "" };
	char name[TJ_NAME_MAX + 32];
	int r;

	snprintf(name, sizeof(name), "%s %s", tj_runtime_kind_name(rt->kind), rt->name);
	if (tj_mpi_validate(&rt->mpi, name,
	                    tj_step_graph_find(&rt->graph, "launcher") < rt->graph.n,
	                    rt->node_template != NULL, p->job, &why) < 0) {
		tj_planner_fail(p, why.reason, why.message);
		return true;
	}
	/* Only the node step is a gang the queue admits: a launcher with GPUs would hold them
	 * outside its reservation. Checked before the first pod, as the launcher comes last. */
	if (!rt->mpi.enabled || !p->in->admission || p->n_owned > 0 || p->st.start_time)
		return false;
	r = trainer_gives_launcher_gpus(p);
	if (r == -ENOMEM)
		p->oom = true;
	if (r <= 0)
		return r < 0;
	tj_problem_set(&why, "InvalidSpec",
	               "spec.trainer.resourcesPerNode: requests GPUs, which Kubeflow Trainer gives "
	               "to the launcher of %s as well as to its nodes; only the node step is "
	               "admitted as a gang here, so the launcher's GPUs would bypass the queue "
	               "(request the GPUs in the node template of a runtime instead)",
	               name);
	tj_planner_fail(p, why.reason, why.message);
	return true;
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

/* A pod of a step other than node labelled trainjob-ancestor-step=trainer (the launcher)
 * runs the TrainJob's trainer: Kubeflow gives that step its image, command, args, env and
 * resources. */
static int apply_trainer(struct planner *p, cJSON *pod, const char *step)
{
	struct tj_problem why = { "", "" };
	cJSON *c;
	int r;

	if (strcmp(step, TJ_STEP_NODE) == 0 || !tj_mpi_runs_trainer(&p->in->runtime->mpi, pod))
		return 0;
	c = tj_json_find_by(tj_json_path(pod, "spec.containers"), "name", "node");
	if (!c)
		return 0;
	r = tj_render_apply_trainer(c, p->job, true, true, &why);
	if (r < 0 && r != -ENOMEM)
		tj_planner_fail(p, why.reason, why.message);
	return r;
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
