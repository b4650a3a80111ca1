/* Stalled jobs: a running job whose reported progress has not changed for its stall timeout
 * is restarted as an infrastructure failure, reason Stalled (reconcilers/plan/plan.h says how
 * the plan restarts it). Pure functions of the job, its runtime and the times the controller
 * saw.
 *
 * - Timeout. The TrainJob's annotation trainjob.flame.dev/stall-timeout, else its runtime's
 *   label or annotation of that name, written as walltimes are ("30m", "1h30m", "600s", or
 *   a number of seconds; 1 s to 366 d), or "0" for none (on a TrainJob, it switches its
 *   runtime's off). Neither set: the job is never judged. There is no cluster-wide default: a
 * timeout fits a kind of training (how long a step, an evaluation or a checkpoint may take), which
 * is what a runtime stands for.
 * - Progress. What the training code reports through Kubeflow's trainer status API
 *   (status.trainerStatus): progressPercentage and the metrics (names and values, in order).
 *   A report that repeats them is no progress, whatever else it changes:
 *   estimatedRemainingSeconds may move while nothing advances, and lastUpdatedTime is the
 *   client's clock. A job whose reports never carried either has not reported progress,
 *   and is never judged.
 * - The clock. The controller keeps, by its own clock, when it last saw a job's progress
 *   change (controller/stall_clock.h); a controller that starts, or a new leader, starts
 *   from when it first sees the job, so that no job is judged stalled earlier than a full
 *   timeout after the controller started. The clock of an attempt starts no earlier than
 *   the moment every rank's pod of it runs (the last pod's status.startTime): time spent
 *   queued, suspended or restarting never counts, and each new attempt, whose first report
 *   may come only after its start-up, gets a full timeout.
 * - Judged: a job that has reported progress (in this attempt or an earlier one), while
 *   every rank's pod of its attempt runs; not once a rank has succeeded (the job is
 *   finishing), nor while it waits or restarts. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/runtime.h"
#include "reconcilers/trainjob.h"

/* The state's reason, lastFailure.reason, the restart's class (budget.h: the
 * infrastructure's) and the event's reason. */
#define TJ_REASON_STALLED "Stalled"

/* The job's stall timeout in seconds, 0 for none (above). A value that is not a duration:
 * -EINVAL with reason InvalidSpec naming the TrainJob's annotation, or InvalidRuntime naming
 * the runtime (rt may be NULL: the TrainJob's alone counts). *ret is written only on
 * success. */
int tj_stall_timeout(const struct tj_trainjob *job, const struct tj_runtime *rt, int64_t *ret,
                     struct tj_problem *why);

struct tj_stall_input {
	int64_t timeout; /* seconds; 0: none */
	bool reported;   /* status.trainerStatus holds progress (trainjob.h, progress_digest) */
	/* When every rank's pod of the attempt ran: the latest status.startTime among them
	 * (unix seconds); 0 while not every rank runs (or one has succeeded). */
	int64_t running_since;
	/* The controller's clock (unix seconds): when it last saw the progress change, or
	 * first saw the job with it; 0: never (the job is not judged). */
	int64_t progress_seen;
	int64_t now;
};

struct tj_stall_verdict {
	bool stalled;
	/* The start of the clock, the later of progress_seen and running_since; 0 when the job
	 * is not judged. from_start: it is running_since (the attempt has not changed its
	 * progress since its pods started). */
	int64_t since;
	bool from_start;
	/* Judged and not stalled: when it will be unless its progress changes first
	 * (since + timeout); 0 otherwise. */
	int64_t check_at;
};

void tj_stall_judge(const struct tj_stall_input *in, struct tj_stall_verdict *ret);

/* What was found, for the status, the events and lastFailure.message: "the progress it
 * reports (42%) has not changed since 2026-11-29T11:40:00Z, longer than its stall timeout
 * of 20m"; "since its pods started at ..." when the clock began with the attempt; without
 * the percentage when the report has none (percent < 0). */
void tj_stall_describe(const struct tj_stall_input *in, const struct tj_stall_verdict *v,
                       int percent, char *buf, size_t size);
