/* A small metrics registry rendered in the Prometheus text exposition format (version 0.0.4).
 * The families the controller feeds are controller/metrics/std_metrics.h's, the process_* ones
 * controller/metrics/process_metrics.h's.
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

#include <stdbool.h>
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

/* A counter whose total is counted elsewhere (the CPU time the kernel counts) and sampled,
 * not fed: sets that total. Ignored for gauges and histograms. */
void tj_series_set_total(struct tj_series *s, double total);

/* tj_metric_series followed by the change; the same errors, and -EINVAL for the wrong kind. */
int tj_metric_add(struct tj_metric *m, const char *const *values, double amount);
int tj_metric_set(struct tj_metric *m, const char *const *values, double value);
int tj_metric_observe(struct tj_metric *m, const char *const *values, double value);

/* Removes the series of m for which keep(values, ctx) is false (values in the order of the
 * family's label names), or every series when keep is NULL, and returns how many went: the
 * series of something that no longer exists (a namespace without jobs) must not linger. The
 * removed series' pointers are invalid afterwards. A family without labels keeps its one
 * series. */
typedef bool (*tj_metric_keep_fn)(const char *const *values, void *ctx);
size_t tj_metric_remove_series(struct tj_metric *m, tj_metric_keep_fn keep, void *ctx);

/* Called at the start of every render, in registration order, to refresh gauges that are
 * sampled rather than fed (process_*). At most 8 collectors (-E2BIG). When free_fn is not
 * NULL, the registry owns userdata once this succeeds and frees it with free_fn. */
typedef void (*tj_metrics_collect_fn)(void *userdata);
typedef void (*tj_metrics_collector_free_fn)(void *userdata);
int tj_metrics_add_collector(struct tj_metrics *reg, tj_metrics_collect_fn fn,
                             tj_metrics_collector_free_fn free_fn, void *userdata);

/* Initialisers of struct tj_metric_desc. */
#define TJ_COUNTER(n, h, l)                                                                        \
	{                                                                                          \
		.name = (n), .help = (h), .type = TJ_METRIC_COUNTER, .labels = (l)                 \
	}
#define TJ_GAUGE(n, h, l)                                                                          \
	{                                                                                          \
		.name = (n), .help = (h), .type = TJ_METRIC_GAUGE, .labels = (l)                   \
	}
#define TJ_HISTOGRAM(n, h, l, b)                                                                   \
	{                                                                                          \
		.name = (n), .help = (h), .type = TJ_METRIC_HISTOGRAM, .labels = (l),              \
		.buckets = (b), .n_buckets = sizeof(b) / sizeof((b)[0])                            \
	}

/* The exposition text, NUL-terminated, in a malloc'd buffer the caller frees. */
int tj_metrics_render(struct tj_metrics *reg, char **ret_text, size_t *ret_len);
