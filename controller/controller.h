/* The TrainJob controller: informers feed keys ("namespace/name" of a TrainJob) into the
 * workqueue; each key is reconciled level-based: read the caches, plan (a pure function),
 * execute the plan's writes, and queue the key again on failure with backoff. The result of
 * the writes comes back through the watches. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "controller/config/config.h"
#include "controller/executor/recorder.h"
#include "controller/executor/write_gate.h"
#include "controller/metrics/std_metrics.h"
#include "controller/workqueue.h"
#include "kube/client.h"
#include "reconcilers/trainjob.h"

/* The name of the controller in metrics and logs, as controller-runtime would name it. */
#define TJ_CONTROLLER_NAME "trainjob"

/* TrainJobs reconciled at once by default. Each holds a stage of writes in flight (its
 * Service and pods, then its status patch), so this bounds the requests in flight. Chosen
 * with the expansion benchmark (docs/benchmarks.md, "Expansion"): with fewer, the last pod
 * exists later; with more, later again, as the API server on the same cores slows down and
 * the controller spends more CPU. */
#define TJ_CONTROLLER_MAX_CONCURRENT 20

struct tj_controller_config {
	struct tj_client *client;             /* borrowed: the writes */
	struct tj_client *watch_client;       /* borrowed: the caches'; NULL is client */
	struct tj_recorder *recorder;         /* borrowed; NULL records no events */
	const struct tj_std_metrics *metrics; /* borrowed; NULL keeps no metrics */
	const char *namespace;                /* watch one namespace; NULL watches all; copied */
	unsigned max_concurrent;              /* 0 means TJ_CONTROLLER_MAX_CONCURRENT */
	bool paginated_lists; /* the caches never try streaming lists (informers.h) */
	/* The wall clock in unix nanoseconds, which plans, events and reconcile durations read;
	 * NULL reads CLOCK_REALTIME. Tests fix it, so that what the controller writes is exact. */
	uint64_t (*clock)(void);
	/* The API server serves the Workload API (reconcilers/render/native_gang.h, discovered with
	 * controller/discovery.h): pods are gang-scheduled by kube-scheduler itself. */
	bool native_gang;
	/* Watch Kueue's Workloads (kueue.x-k8s.io/v1beta2), so that the status of a TrainJob
	 * Kueue holds gives Kueue's reason; the API must serve them, or the caches never sync. */
	bool kueue;
};

struct tj_controller;

int tj_controller_new(uv_loop_t *loop, const struct tj_controller_config *config,
                      struct tj_controller **ret);

/* The GPU classes; borrowed until the next call or tj_controller_free. Every TrainJob is
 * queued again, so a reloaded config takes effect at once. */
void tj_controller_set_config(struct tj_controller *c, const struct tj_config *config);

/* Starts the informers; reconciling starts once every cache has synced and the controller
 * leads (tj_controller_set_leading). */
int tj_controller_start(struct tj_controller *c);

/* Only the leader writes. Caches stay warm either way, so a new leader starts at once. */
void tj_controller_set_leading(struct tj_controller *c, bool leading);

/* The workqueue's counters, for the workqueue_* metrics. */
void tj_controller_queue_stats(const struct tj_controller *c, struct tj_workqueue_stats *ret);

/* The counters of its write gate. */
void tj_controller_gate_stats(const struct tj_controller *c, struct tj_write_gate_stats *ret);

/* The GPU class job's runtime selects (borrowed from the config); NULL when it selects none,
 * or the runtime is missing or names a class the config lacks. */
const struct tj_gpu_class *tj_controller_job_gpu_class(const struct tj_controller *c,
                                                       const struct tj_trainjob *job);

/* Every informer has listed once. */
bool tj_controller_synced(const struct tj_controller *c);

/* The caches, for their counters (tj_reflector_stats); read-only. */
const struct tj_informers *tj_controller_informers(const struct tj_controller *c);

/* Orderly stop: no new keys, reconciles in flight finish, then stopped(userdata) runs. */
void tj_controller_stop(struct tj_controller *c, void (*stopped)(void *userdata), void *userdata);

/* Frees a stopped controller. Accepts NULL; returns NULL. */
struct tj_controller *tj_controller_free(struct tj_controller *c);
