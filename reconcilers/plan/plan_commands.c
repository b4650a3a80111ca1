/* The command policy in the plan (reconcilers/policy/command_policy.h): before any pod of a
 * job exists, every pod it will run is judged as the plan will create it, in the order of
 * the runtime's steps: the node pods as the renderer makes them, and each other step's
 * (initializers, an MPI launcher with the trainer's command, any replicated job) from its
 * template, the TrainJob's overrides and patches and the initializer's fields. The pods of
 * one step differ only in their names and wiring, so the first stands for them all. A sleep
 * as long as the walltime is refused in the steps that run while it counts, not in one the
 * node pods wait for to be Complete, which ends before it starts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/plan/plan_internal.h"
#include "reconcilers/policy/command_policy.h"
#include "reconcilers/render/render_step.h"
#include "reconcilers/steps.h"

/* The first pod of step (not node) as the plan creates it; *ret NULL when it cannot be
 * rendered: creating it fails the job with the reason then. -ENOMEM. */
static int step_pod(const struct planner *p, const struct tj_step *step, cJSON **ret)
{
	struct tj_problem ignored = { "", "" };
	cJSON *pod = NULL;
	int r = tj_render_step_pod(p->job, step, 0, 0, &pod, &ignored);

	if (r == 0)
		r = tj_planner_mpi_trainer(p, pod, step->name, &ignored);
	if (r < 0) {
		cJSON_Delete(pod);
		pod = NULL;
	}
	*ret = pod;
	return r == -ENOMEM ? r : 0;
}

int tj_planner_check_commands(const struct planner *p, const struct tj_render *render,
                              struct tj_problem *why)
{
	const struct tj_plan_input *in = p->in;
	const struct tj_step_graph *g = in->runtime->graph.error ? NULL : &in->runtime->graph;
	size_t n = g && g->n > 0 ? g->n : 1;
	size_t node = g ? tj_step_graph_find(g, TJ_STEP_NODE) : 0;

	if (p->n_owned > 0 || p->st.restart_count > 0 || p->st.start_time ||
	    tj_command_exempt(in->config, in->runtime, p->job->namespace))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *step = g && g->n > 0 ? g->steps[i].name : TJ_STEP_NODE;
		/* The walltime starts with the node pods: a step they wait for to be Complete (an
		 * initializer) has ended by then. sshd -D serves the launcher in a step that the
		 * success policy stops. */
		const struct tj_command_rules rules = {
			.walltime =
			        g && tj_step_completes_before(g, i, node) ? 0 : p->walltime.seconds,
			.ended_by_success_policy = g && tj_step_ended_by_success_policy(g, i),
		};
		cJSON *pod = NULL;
		int r;

		if (strcmp(step, TJ_STEP_NODE) == 0)
			r = tj_render_pod(render, 0, 0, &pod);
		else
			r = step_pod(p, &g->steps[i], &pod);
		if (r == 0 && pod)
			r = tj_command_check_pod(pod, step, &rules, why);
		cJSON_Delete(pod);
		if (r < 0)
			return r;
	}
	return 0;
}
