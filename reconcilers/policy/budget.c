#include "reconcilers/policy/budget.h"

#include <stdio.h>
#include <string.h>

#include "reconcilers/policy/node_health.h"
#include "reconcilers/policy/stall.h"
#include "reconcilers/policy/suspect.h"

/* The failure classes of plan.h that the infrastructure causes: every node fault of
 * node_health.h, a crash on a suspect node (suspect.h), the pod's disruptions (an eviction,
 * the scheduler's preemption), and a stall (stall.h). */
enum tj_budget tj_budget_of(const char *failure_class)
{
	if (!failure_class)
		return TJ_BUDGET_JOB;
	if (strcmp(failure_class, "Evicted") == 0 || strcmp(failure_class, "Preempted") == 0 ||
	    strcmp(failure_class, TJ_REASON_NODE_SUSPECT) == 0 ||
	    strcmp(failure_class, TJ_REASON_STALLED) == 0)
		return TJ_BUDGET_INFRASTRUCTURE;
	for (enum tj_node_fault f = TJ_NODE_DELETED; f <= TJ_NODE_CORDONED_FOR_FAULT; f++)
		if (strcmp(failure_class, tj_node_fault_reason(f)) == 0)
			return TJ_BUDGET_INFRASTRUCTURE;
	return TJ_BUDGET_JOB;
}

bool tj_budget_charge(struct tj_trainjob_status *status, const char *failure_class,
                      int max_restarts, int max_infrastructure_restarts,
                      struct tj_budget_charge *ret)
{
	struct tj_budget_charge c = { .budget = tj_budget_of(failure_class) };
	/* A status edited by hand may claim more infrastructure restarts than restarts: the
	 * job's own count never goes below zero. */
	int infra = status->infrastructure_restarts < status->restart_count
	                    ? status->infrastructure_restarts
	                    : status->restart_count;

	if (c.budget == TJ_BUDGET_INFRASTRUCTURE) {
		c.used = infra;
		c.limit = max_infrastructure_restarts;
	} else {
		c.used = status->restart_count - infra;
		c.limit = max_restarts;
	}
	c.spent = c.used >= c.limit;
	if (c.spent) {
		c.reason = c.budget == TJ_BUDGET_INFRASTRUCTURE ? "ReachedMaxInfrastructureRestarts"
		                                                : "ReachedMaxRestarts";
		*ret = c;
		return false;
	}
	c.used++;
	status->restart_count++;
	if (c.budget == TJ_BUDGET_INFRASTRUCTURE)
		status->infrastructure_restarts = infra + 1;
	*ret = c;
	return true;
}

void tj_budget_describe(const struct tj_budget_charge *charge, char *buf, size_t size)
{
	bool infra = charge->budget == TJ_BUDGET_INFRASTRUCTURE;

	if (charge->spent)
		snprintf(buf, size, "the %srestart budget of %d%s is spent",
		         infra ? "infrastructure " : "", charge->limit,
		         infra ? " (failurePolicy.maxInfrastructureRestarts)" : "");
	else
		snprintf(buf, size, "%srestart %d of %d", infra ? "infrastructure " : "",
		         charge->used, charge->limit);
}
