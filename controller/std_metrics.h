/* The metric families the controller feeds, named as controller-runtime and client-go name
 * them so that existing dashboards work unchanged, and the controller's own trainjob_*. */
#pragma once

#include "controller/metrics.h"

/* The families the controller feeds. The registry owns them. */
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
	struct tj_metric *rest_client_request_duration_seconds; /* histogram {verb, host, path} */
	/* leader election */
	struct tj_metric *leader_election_master_status;  /* gauge {name} */
	struct tj_metric *leader_election_slowpath_total; /* counter {name} */
	/* this controller's own */
	struct tj_metric *trainjob_pods_created_total;      /* counter */
	struct tj_metric *trainjob_worker_restarts_total;   /* counter {reason} */
	struct tj_metric *trainjob_time_to_running_seconds; /* histogram */
	struct tj_metric *trainjob_jobs;                    /* gauge {state} */
	/* counter {namespace, gpu_class, outcome}: reconcilers/gpu_seconds.h */
	struct tj_metric *trainjob_gpu_seconds_total;
	/* gang admission (controller/admitter.h) */
	struct tj_metric *trainjob_queue_jobs;                       /* gauge {gpu_class, reason} */
	struct tj_metric *trainjob_queue_wait_seconds;               /* histogram */
	struct tj_metric *trainjob_admission_latency_seconds;        /* histogram */
	struct tj_metric *trainjob_admission_cycle_duration_seconds; /* histogram */
	struct tj_metric *trainjob_admission_decisions_total;        /* counter */
	struct tj_metric *trainjob_gpus;                             /* gauge {gpu_class, state} */
	struct tj_metric *trainjob_admissions_total;                 /* counter {gpu_class} */
	struct tj_metric *trainjob_backfills_total;                  /* counter */
	/* the write gate (controller/write_gate.h) */
	struct tj_metric *trainjob_write_gate_waiting;        /* gauge */
	struct tj_metric *trainjob_write_gate_deferred_total; /* counter */
	struct tj_metric *trainjob_write_gate_expired_total;  /* counter */
};

/* Registers every family above into reg and writes their handles into *ret.
 * trainjob_jobs starts at 0 for each state (Pending, Queued, Running, Restarting, Suspended,
 * Complete, Failed). */
int tj_std_metrics_register(struct tj_metrics *reg, struct tj_std_metrics *ret);

/* What controller-runtime does when a controller starts: every reconcile result, the error
 * counters and active_workers at 0, max_concurrent_reconciles set. */
int tj_std_metrics_init_controller(const struct tj_std_metrics *m, const char *controller,
                                   int max_concurrent_reconciles);

/* The workqueue series of one queue at 0 (name and controller labels both = name, priority
 * empty, as controller-runtime labels the queue of a controller). */
int tj_std_metrics_init_workqueue(const struct tj_std_metrics *m, const char *name);
