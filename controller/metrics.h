/* A small metrics registry rendered in the Prometheus text exposition format (version 0.0.4),
 * and the metric families the controller feeds, named as controller-runtime names them so
 * that existing dashboards work unchanged.
 *
 * A family (struct tj_metric) is a counter, gauge or histogram with a fixed list of label
 * names; each combination of label values is one series, created on first use, at most
 * max_series per family. The output is what Prometheus's Go client writes: families sorted
 * by name, label pairs sorted by label name, series sorted by their label values, numbers in
 * the shortest form that reads back exactly (Go's 'g' format: 1e-08, 0.005, 1.2345678e+07).
 * A family with labels but no series yet is not written at all, as in the Go client.
 *
 *   struct tj_series *ok;
 *   tj_metric_series(m->reconcile_total, TJ_LABELS("trainjob", "success"), &ok);
 *   tj_series_add(ok, 1);
 *
 * Everything runs on the loop's thread; nothing here locks. */
#pragma once

#include <stddef.h>

#define TJ_METRIC_MAX_SERIES_DEFAULT 1000
#define TJ_METRIC_MAX_LABELS         8
#define TJ_METRIC_MAX_BUCKETS        64
/* The rendered text never grows past this (-E2BIG). */
#define TJ_METRICS_TEXT_MAX (8u << 20)

/* Label values in the order of the family's label names. */
#define TJ_LABELS(...) ((const char *const[]){ __VA_ARGS__ })

enum tj_metric_type {
	TJ_METRIC_COUNTER,
	TJ_METRIC_GAUGE,
	TJ_METRIC_HISTOGRAM,
};

struct tj_metrics; /* the registry */
struct tj_metric;  /* one family, owned by the registry */
struct tj_series;  /* one series, owned by its family; valid as long as the registry */

struct tj_metric_desc {
	const char *name;
	const char *help;
	enum tj_metric_type type;
	const char *const *labels; /* label names, NULL-terminated; NULL for none */
	const double *buckets;     /* histograms: strictly increasing upper bounds; +Inf implied */
	size_t n_buckets;
	size_t max_series; /* 0 means TJ_METRIC_MAX_SERIES_DEFAULT */
};

int tj_metrics_new(struct tj_metrics **ret);
struct tj_metrics *tj_metrics_free(struct tj_metrics *reg);

/* Adds a family; the registry copies desc. -EEXIST if the name is taken, -EINVAL for a name
 * or label name Prometheus would reject ("le" on a histogram, a "__" prefix), buckets that do
 * not increase, or too many labels or buckets. A family without labels has its one series
 * from the start. */
int tj_metrics_register(struct tj_metrics *reg, const struct tj_metric_desc *desc,
                        struct tj_metric **ret);

/* The series for these label values (one per label name; NULL when the family has none),
 * created at 0 on first use. -E2BIG when the family already holds max_series series. */
int tj_metric_series(struct tj_metric *m, const char *const *values, struct tj_series **ret);

/* Changes a series. A counter only goes up: a negative or NaN amount is ignored. set applies to
 * gauges only, observe to histograms only; a call of the wrong kind is ignored. */
void tj_series_add(struct tj_series *s, double amount);
void tj_series_set(struct tj_series *s, double value);
void tj_series_observe(struct tj_series *s, double value);

/* tj_metric_series followed by the change; the same errors, and -EINVAL for the wrong kind. */
int tj_metric_add(struct tj_metric *m, const char *const *values, double amount);
int tj_metric_set(struct tj_metric *m, const char *const *values, double value);
int tj_metric_observe(struct tj_metric *m, const char *const *values, double value);

/* Called at the start of every render, in registration order, to refresh gauges that are
 * sampled rather than fed (process_*). At most 8 collectors. */
typedef void (*tj_metrics_collect_fn)(void *userdata);
int tj_metrics_add_collector(struct tj_metrics *reg, tj_metrics_collect_fn fn, void *userdata);

/* The exposition text, NUL-terminated, in a malloc'd buffer the caller frees. */
int tj_metrics_render(struct tj_metrics *reg, char **ret_text, size_t *ret_len);

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
	/* the write gate (controller/write_gate.h) */
	struct tj_metric *trainjob_write_gate_waiting;        /* gauge */
	struct tj_metric *trainjob_write_gate_deferred_total; /* counter */
	struct tj_metric *trainjob_write_gate_expired_total;  /* counter */
};

/* Registers every family above into reg and writes their handles into *ret.
 * trainjob_jobs starts at 0 for each state (Pending, Running, Restarting, Suspended,
 * Complete, Failed). */
int tj_std_metrics_register(struct tj_metrics *reg, struct tj_std_metrics *ret);

/* What controller-runtime does when a controller starts: every reconcile result, the error
 * counters and active_workers at 0, max_concurrent_reconciles set. */
int tj_std_metrics_init_controller(const struct tj_std_metrics *m, const char *controller,
                                   int max_concurrent_reconciles);

/* The workqueue series of one queue at 0 (name and controller labels both = name, priority
 * empty, as controller-runtime labels the queue of a controller). */
int tj_std_metrics_init_workqueue(const struct tj_std_metrics *m, const char *name);

/* Registers process_cpu_seconds_total, process_open_fds, process_max_fds,
 * process_virtual_memory_bytes, process_resident_memory_bytes and process_start_time_seconds,
 * sampled at each render from proc_root ("/proc" in production; tests pass a directory laid
 * out the same way: self/stat, self/fd/, self/limits, stat). The registry keeps proc_root. */
int tj_metrics_register_process(struct tj_metrics *reg, const char *proc_root);
