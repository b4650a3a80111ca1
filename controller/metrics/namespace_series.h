/* The per-namespace series of counters and histograms (restarts, GPU-seconds, time to
 * Running, queue wait) once a namespace has no TrainJob left. Kept for ever, they would pile
 * up with every namespace a cluster has ever had (CI namespaces come and go by the hundred)
 * until a family's series limit refuses the new ones. Removed the moment the last job goes,
 * the increments of that job's last moments (its cancelled GPU-seconds are counted as it is
 * deleted) would never be scraped. So the series of a namespace go once it has had no
 * TrainJob for a grace period longer than any scraper's interval: every scraper has read
 * their last value by then, and a counter that comes back later starts again from 0, which
 * rate() and increase() take as a reset.
 *
 * Gauges that describe the present (trainjob_jobs, trainjob_job_gpus) are not kept here:
 * they are rebuilt from the caches at every scrape. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "controller/metrics/metrics.h"

/* Ten minutes: several times the 30 s of the shipped ServiceMonitor, and above the 1 to 5
 * minutes of the scrape intervals people set. */
#define TJ_NAMESPACE_SERIES_GRACE_MS (10u * 60u * 1000u)

/* At most this many namespaces are tracked (-E2BIG beyond): the families' own series limit
 * is lower. */
#define TJ_NAMESPACE_SERIES_MAX 100000

struct tj_namespace_series;

int tj_namespace_series_new(uint64_t grace_ms, struct tj_namespace_series **ret);
struct tj_namespace_series *tj_namespace_series_free(struct tj_namespace_series *t);

/* At now_ms (a monotonic clock): the namespaces of live (any order, repeats allowed) have
 * TrainJobs. Every series of families (whose first label is namespace) of a namespace that
 * has had none for longer than the grace period is removed; a namespace first met in a series
 * (a job created and deleted between two sweeps) starts its grace period now. -ENOMEM or
 * -E2BIG when a namespace could not be tracked: nothing is removed when it is one of live,
 * else the series of the untracked namespaces are kept and the rest swept. */
int tj_namespace_series_sweep(struct tj_namespace_series *t, const char *const *live, size_t n_live,
                              uint64_t now_ms, struct tj_metric *const *families,
                              size_t n_families);
