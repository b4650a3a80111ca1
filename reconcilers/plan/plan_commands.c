/* The command policy in the plan (reconcilers/policy/command_policy.h): before any pod of a
 * job exists, every pod it will run is judged as the plan will create it, in the order of
 * the runtime's steps: the node pods as the renderer makes them, and each other step's
 * (initializers, an MPI launcher with the trainer's command, any replicated job) from its
 * template, the TrainJob's overrides and patches and the initializer's fields. The pods of
 * one step differ only in their names and wiring, so the first stands for them all. */
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

	if (p->n_owned > 0 || p->st.restart_count > 0 || p->st.start_time ||
	    tj_command_exempt(in->config, in->runtime, p->job->namespace))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *step = g && g->n > 0 ? g->steps[i].name : TJ_STEP_NODE;
		/* sshd -D serves the launcher in a step that the success policy stops. */
		const struct tj_command_rules rules = {
			.walltime = p->walltime.seconds,
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
