/* The two restart budgets. A worker failure is charged either to the job or to the
 * infrastructure, by its class (plan.h, restart_reason):
 * - the job's own failures (WorkerFailed: a non-zero exit, OOMKilled) count against the
 *   job's maxRestarts (annotation trainjob.flame.dev/max-restarts on the TrainJob, else on
 *   the runtime, else the config's failurePolicy.maxRestarts);
 * - failures the infrastructure caused (NodeDeleted, NodeUnreachable, NodeNotReady,
 *   GPUUnhealthy, NodeCordonedForFault, NodeSuspect, Evicted, Preempted) count against the
 *   config's failurePolicy.maxInfrastructureRestarts, which a TrainJob cannot raise. Slurm requeues
 *   a job whose node failed without charging it; a flaky node must not fail a job that did
 *   nothing wrong, and a job's own bug must not be retried as often as a node may fail.
 *   So does a stall (Stalled, stall.h): a job that stops making progress without failing
 *   most often waits on the infrastructure (a collective on a broken link, a GPU that no
 *   longer answers, a file system that hangs); a job that loops by itself is retried up
 *   to that budget all the same, never for ever.
 * A class this module does not name is the job's own: the smaller budget is the safe one.
 *
 * The status counts every restart in restartCount (it is also the attempt of the next
 * pods, render.h) and the infrastructure's share of them in infrastructureRestarts; the
 * job's own are the difference. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "reconcilers/trainjob.h"

enum tj_budget {
	TJ_BUDGET_JOB,
	TJ_BUDGET_INFRASTRUCTURE,
};

/* The budget a failure of that class charges. */
enum tj_budget tj_budget_of(const char *failure_class);

/* What charging one restart found. */
struct tj_budget_charge {
	enum tj_budget budget;
	bool spent; /* the budget had nothing left: the job fails, nothing is counted */
	int used;   /* restarts that budget has counted, this one included unless spent */
	int limit;
	/* When spent: ReachedMaxRestarts or ReachedMaxInfrastructureRestarts (static); else
	 * NULL. */
	const char *reason;
};

/* Charges a restart for a failure of class failure_class. Unless its budget is spent,
 * counts it in status->restart_count and, for the infrastructure's, in
 * status->infrastructure_restarts. Writes *ret either way; returns true if the restart may
 * go ahead. */
bool tj_budget_charge(struct tj_trainjob_status *status, const char *failure_class,
                      int max_restarts, int max_infrastructure_restarts,
                      struct tj_budget_charge *ret);

/* For messages: "restart 2 of 3" or "infrastructure restart 2 of 10" after a charge; "the
 * restart budget of 3 is spent" or "the infrastructure restart budget of 10
 * (failurePolicy.maxInfrastructureRestarts) is spent" when it was spent. */
void tj_budget_describe(const struct tj_budget_charge *charge, char *buf, size_t size);
