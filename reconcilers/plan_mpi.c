/* The planner's part of MPI (reconcilers/mpi.h): a job whose runtime's MPI policy it cannot
 * run as Kubeflow does is refused before any of its pods exists. */
#include <errno.h>
#include <stdio.h>

#include "reconcilers/planner.h"

bool tj_planner_mpi_refused(struct planner *p)
{
	const struct tj_runtime *rt = p->in->runtime;
	struct tj_problem why = { "", "" };
	char name[TJ_NAME_MAX + 32];

	snprintf(name, sizeof(name), "%s %s", tj_runtime_kind_name(rt->kind), rt->name);
	if (tj_mpi_validate(&rt->mpi, name,
	                    tj_step_graph_find(&rt->graph, "launcher") < rt->graph.n,
	                    rt->node_template != NULL, p->job, &why) == 0)
		return false;
	tj_planner_fail(p, why.reason, why.message);
	return true;
}
