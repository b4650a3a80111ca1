/* The metric families the controller feeds, named as controller-runtime and client-go name
 * them so that existing dashboards work unchanged, and the controller's own trainjob_*. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/metrics/metrics.h"
#include "informers/reflector.h"
#include "kube/transport.h"
#include "reconcilers/trainjob.h"
#include "reconcilers/usage/gpu_seconds.h"
#include "reconcilers/usage/gpu_use.h"

/* The families the controller feeds. The registry owns them. */
/* Jobs with a trainjob_progress_percent or trainjob_eta_seconds series at once; beyond them
 * tj_std_metrics_feed_jobs fails with -E2BIG (and the run logs it). */
#define TJ_STD_METRICS_MAX_REPORTING_JOBS 20000

struct tj_std_metrics {
	/* controller-runtime, pkg/internal/controller/metrics */
	struct tj_metric *reconcile_total;                 /* counter {controller, result} */
	struct tj_metric *reconcile_errors_total;          /* counter {controller} */
	struct tj_metric *terminal_reconcile_errors_total; /* counter {controller} */
	struct tj_metric *reconcile_time_seconds;          /* histogram {controller} */
	struct tj_metric *max_concurrent_reconciles;       /* gauge {controller} */
	struct tj_metric *active_workers;                  /* gauge {controller} */
	/* client-go workqueue, as controller-runtime registers it; name == controller */
	struct tj_metric *workqueue_depth;                  /* gauge {name, controller, priority} */
	struct tj_metric *workqueue_adds_total;             /* counter {name, controller} */
	struct tj_metric *workqueue_queue_duration_seconds; /* histogram {name, controller} */
	struct tj_metric *workqueue_work_duration_seconds;  /* histogram {name, controller} */
	struct tj_metric *workqueue_unfinished_work_seconds; /* gauge {name, controller} */
	struct tj_metric
	        *workqueue_longest_running_processor_seconds; /* gauge {name, controller} */
	struct tj_metric *workqueue_retries_total;            /* counter {name, controller} */
	/* client-go REST client */
	struct tj_metric *rest_client_requests_total;           /* counter {code, method, host} */
	struct tj_metric *rest_client_request_duration_seconds; /* histogram {verb, host} */
	/* leader election */
	struct tj_metric *leader_election_master_status;     /* gauge {name} */
	struct tj_metric *leader_election_slowpath_total;    /* counter {name} */
	struct tj_metric *trainjob_leader_transitions_total; /* counter {name, event} */
	/* the caches (informers/reflector.h) */
	struct tj_metric *trainjob_caches_synced;        /* gauge */
	struct tj_metric *trainjob_watch_restarts_total; /* counter {resource} */
	struct tj_metric *trainjob_relists_total;        /* counter {resource} */
	/* this controller's own */
	struct tj_metric *trainjob_pods_created_total; /* counter */
	/* counter {namespace, reason, gpu_class} */
	struct tj_metric *trainjob_worker_restarts_total;
	/* counter {namespace, gpu_class}: jobs found stalled (reconcilers/policy/stall.h) */
	struct tj_metric *trainjob_stalled_total;
	struct tj_metric *trainjob_time_to_running_seconds; /* histogram {namespace, gpu_class} */
	struct tj_metric *trainjob_jobs; /* gauge {namespace, gpu_class, state} */
	/* counter {namespace, gpu_class, outcome}: reconcilers/usage/gpu_seconds.h */
	struct tj_metric *trainjob_gpu_seconds_total;
	/* gang admission (controller/admission/admitter.h) */
	struct tj_metric *trainjob_queue_jobs; /* gauge {gpu_class, reason} */
	/* gauges {namespace, trainjob}: what the training code of an unfinished job reported */
	struct tj_metric *trainjob_progress_percent;
	struct tj_metric *trainjob_eta_seconds;
	/* histogram {namespace, gpu_class, qos} */
	struct tj_metric *trainjob_queue_wait_seconds;
	struct tj_metric *trainjob_admission_latency_seconds;        /* histogram */
	struct tj_metric *trainjob_admission_cycle_duration_seconds; /* histogram */
	struct tj_metric *trainjob_admission_decisions_total;        /* counter */
	struct tj_metric *trainjob_admission_untried_total;          /* counter */
	struct tj_metric *trainjob_gpus;                             /* gauge {gpu_class, state} */
	/* gauge {namespace, gpu_class, state}: reconcilers/usage/gpu_use.h */
	struct tj_metric *trainjob_job_gpus;
	struct tj_metric *trainjob_admissions_total; /* counter {gpu_class} */
	/* gauges {namespace}: reconcilers/admission/fair_share.h */
	struct tj_metric *trainjob_fair_share_usage_gpu_seconds;
	struct tj_metric *trainjob_fair_share_factor;
	/* counter {qos, gpu_class}: running gangs preempted, by the victim's QOS tier */
	struct tj_metric *trainjob_preemptions_total;
	struct tj_metric *trainjob_backfills_total; /* counter */
	/* suspect nodes (controller/suspect_nodes.h) */
	struct tj_metric *trainjob_suspect_nodes;       /* gauge */
	struct tj_metric *trainjob_suspect_marks_total; /* counter */
	/* the write gate (controller/executor/write_gate.h) */
	struct tj_metric *trainjob_write_gate_waiting;        /* gauge */
	struct tj_metric *trainjob_status_pass_waiting;       /* gauge */
	struct tj_metric *trainjob_status_pass_in_flight;     /* gauge */
	struct tj_metric *trainjob_write_gate_deferred_total; /* counter */
	struct tj_metric *trainjob_write_gate_expired_total;  /* counter */
};

/* Registers every family above into reg and writes their handles into *ret. */
int tj_std_metrics_register(struct tj_metrics *reg, struct tj_std_metrics *ret);

/* What controller-runtime does when a controller starts: every reconcile result, the error
 * counters and active_workers at 0, max_concurrent_reconciles set. */
int tj_std_metrics_init_controller(const struct tj_std_metrics *m, const char *controller,
                                   int max_concurrent_reconciles);

/* The workqueue series of one queue at 0 (name and controller labels both = name, priority
 * empty, as controller-runtime labels the queue of a controller). */
int tj_std_metrics_init_workqueue(const struct tj_std_metrics *m, const char *name);

/* One reconcile of the controller ended with result ("success", "error", "requeue",
 * "requeue_after") after seconds: controller_runtime_reconcile_total, _errors_total on an
 * error, and reconcile_time_seconds. */
void tj_std_metrics_observe_reconcile(const struct tj_std_metrics *m, const char *controller,
                                      const char *result, double seconds);

/* Adds amount to a family whose first label is namespace, taken from key ("namespace/name"
 * of a TrainJob; never the name, which would make a series per job), and whose other labels
 * are a and, when the family has three, b. -EINVAL for a key without a namespace. */
int tj_std_metrics_add_for_key(struct tj_metric *m, const char *key, const char *a, const char *b,
                               double amount);

/* Counts one exchange with the API server in rest_client_requests_total (code "<error>"
 * when no response arrived, as client-go labels it) and its duration in
 * rest_client_request_duration_seconds. The observer of kube/transport.h takes it with the
 * families as userdata. */
void tj_std_metrics_observe_request(const struct tj_http_observation *o, void *userdata);

/* The observation of trainjob_time_to_running_seconds that a status change makes: the
 * seconds from the job's creation (unix seconds) to now, when the new status is the job's
 * first Running (state Running, no restart yet, from a status that was not Running); -1
 * otherwise. A job that is suspended and resumed before any restart runs "first" again and is
 * observed again, from its creation. */
int64_t tj_std_metrics_time_to_running(const struct tj_trainjob_status *old,
                                       const struct tj_trainjob_status *new_status,
                                       int64_t creation_time, int64_t now);

/* trainjob_queue_wait_seconds{namespace (of key), gpu_class, qos}. */
int tj_std_metrics_observe_queue_wait(const struct tj_std_metrics *m, const char *key,
                                      const char *gpu_class, const char *qos, double value);

/* What a TrainJob's written status patch counts, once: a restart by restart_reason ("" for
 * none), a stall the plan found (stalled), the GPU-seconds that ended succeeded or wasted,
 * and running_after, the trainjob_time_to_running_seconds observation (-1 for none); each
 * under the job's namespace and gpu_class. key is "namespace/name". */
void tj_std_metrics_count_status(const struct tj_std_metrics *m, const char *key,
                                 const char *gpu_class, const char *restart_reason, bool stalled,
                                 const struct tj_gpu_seconds_outcomes *gpu_seconds,
                                 int64_t running_after);

/* One cached TrainJob as trainjob_jobs and trainjob_queue_jobs count it (strings borrowed). */
struct tj_job_series {
	const char *namespace;
	const char *gpu_class; /* "" when its runtime names no class of the config */
	enum tj_state state;   /* TJ_STATE_NONE (not written yet) counts as Pending */
	const char *reason;    /* its status.reason: why it waits when state is Queued */
	const char *name;
	/* What its training code last reported (status.trainerStatus); -1: nothing. */
	int progress_percent;
	int64_t eta_seconds;
};

/* Sets trainjob_jobs and trainjob_queue_jobs from every cached job, and nothing else: the
 * series of a namespace and class without a job are gone, and a pair with a job has every
 * state and every reason to wait, 0 where no job has it. The queue is counted from the
 * statuses, as kubectl and squeue show it, so every replica reports the same from its own
 * cache. */
int tj_std_metrics_feed_jobs(const struct tj_std_metrics *m, const struct tj_job_series *jobs,
                             size_t n_jobs);

/* Sets trainjob_job_gpus from every cached pod (reconcilers/usage/gpu_use.h counts each
 * namespace's): states requested, running and idle of each namespace and class whose pods request
 * GPUs, and no series for the others. */
int tj_std_metrics_feed_gpu_use(const struct tj_std_metrics *m, const struct tj_config *config,
                                const struct tj_pod *const *pods, size_t n_pods,
                                tj_gpu_use_node_fn node, void *ctx);

/* What a reflector's counters have been fed so far. */
struct tj_reflector_seen {
	uint64_t lists, watches;
};

/* Feeds trainjob_relists_total and trainjob_watch_restarts_total of one resource from its
 * reflector's totals: every list after the first is a relist (a 410 Gone, or a watch that
 * failed), every watch after the first a restart. */
int tj_std_metrics_feed_reflector(const struct tj_std_metrics *m, const char *resource,
                                  const struct tj_reflector_stats *st,
                                  struct tj_reflector_seen *seen);
