/* What of a runtime and of a TrainJob's overrides the controller does not implement, as a
 * rule of the plan (plan.h): before any pod of the job exists, a runtime field nothing
 * implements (reconcilers/runtime_support.h), an override or patch field the renderer does not
 * apply (reconcilers/render/trainjob_support.h), or one that targets a step the runtime lacks or
 * that cannot take it (reconcilers/render/overrides.h) fails the job. */
#include "reconcilers/plan/plan_internal.h"

#include <errno.h>

#include "reconcilers/render/overrides.h"
#include "reconcilers/render/trainjob_support.h"
#include "reconcilers/runtime_support.h"

bool tj_planner_unsupported(struct planner *p)
{
	struct tj_problem why = { "", "" };
	int r;

	/* A job that runs is left alone: a runtime changed under it does not kill it. */
	if (p->n_owned > 0 || p->st.start_time)
		return false;
	if (p->in->runtime->unsupported) {
		tj_planner_fail(p, TJ_REASON_UNSUPPORTED_RUNTIME, p->in->runtime->unsupported);
		return true;
	}
	r = tj_trainjob_support_check(p->job, &why);
	if (r == 0)
		r = tj_overrides_check(p->job, p->in->runtime, &why);
	if (r == -ENOMEM)
		p->oom = true;
	else if (r < 0)
		tj_planner_fail(p, why.reason, why.message);
	return r < 0;
}
