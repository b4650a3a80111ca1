/* The stall clock of every TrainJob that reports progress: when this controller last saw the
 * progress it reports change (reconcilers/policy/stall.h: its progressPercentage and metrics,
 * the digest of the TrainJob's projection), by the controller's own clock, never by the
 * report's lastUpdatedTime, which the client writes.
 *
 * The TrainJob cache's handlers feed it on every replica (a report may be written by any
 * replica's trainer status server, and comes back to all of them through the watch), so that
 * a new leader judges with what it saw itself. It lives in memory only: a controller that
 * starts sees every job for the first time, and starts each job's clock then, so that no job
 * is judged stalled earlier than a full timeout after the controller started; that is the
 * most a restart of the controller delays a verdict. A job without progress, and a finished
 * one (Complete or Failed), has no entry. */
#pragma once

#include <stdint.h>

#include "reconcilers/trainjob.h"

struct tj_stall_clock;

int tj_stall_clock_new(struct tj_stall_clock **ret);

/* Accepts NULL; returns NULL. */
struct tj_stall_clock *tj_stall_clock_free(struct tj_stall_clock *c);

/* The job, cached under key ("namespace/name"), as it is now, seen at now (unix seconds):
 * its clock starts at now when its progress differs from the progress last seen under that
 * key (a new job, a changed report, another job of that name), and its entry goes when it
 * reports none or has finished. Returns when its progress last changed, 0 for a job without
 * progress or finished (and when memory runs out: such a job is not judged, which errs
 * towards leaving it alone). */
int64_t tj_stall_clock_see(struct tj_stall_clock *c, const char *key, const struct tj_trainjob *job,
                           int64_t now);

/* A deleted job: its entry goes. */
void tj_stall_clock_forget(struct tj_stall_clock *c, const char *key);
