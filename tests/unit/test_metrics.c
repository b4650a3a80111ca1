#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/metrics/process_metrics.h"
#include "controller/metrics/std_metrics.h"

static char *render(struct tj_metrics *reg)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(tj_metrics_render(reg, &text, &len), 0);
	assert_int_equal(len, strlen(text));
	return text;
}

static void test_exposition_text(void **state)
{
	static const char *const code_method[] = { "method", "code", NULL };
	static const char *const path[] = { "path", NULL };
	static const char *const x[] = { "x", NULL };
	static const double buckets[] = { 0.5, 1, 10 };
	static const double one[] = { 1 };
	struct tj_metrics *reg;
	struct tj_metric *requests, *gauge, *latency, *unused, *empty_hist;
	char *text;

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "http_requests_total",
	                                             .help = "Requests.\nBy code \\ method",
	                                             .type = TJ_METRIC_COUNTER,
	                                             .labels = code_method,
	                                     },
	                                     &requests),
	                 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "a_gauge",
	                                             .help = "A gauge.",
	                                             .type = TJ_METRIC_GAUGE,
	                                     },
	                                     &gauge),
	                 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "latency_seconds",
	                                             .help = "Latency.",
	                                             .type = TJ_METRIC_HISTOGRAM,
	                                             .labels = path,
	                                             .buckets = buckets,
	                                             .n_buckets = 3,
	                                     },
	                                     &latency),
	                 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "unused_by_label",
	                                             .help = "Never set.",
	                                             .type = TJ_METRIC_GAUGE,
	                                             .labels = x,
	                                     },
	                                     &unused),
	                 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "z_hist",
	                                             .help = "Empty.",
	                                             .type = TJ_METRIC_HISTOGRAM,
	                                             .buckets = one,
	                                             .n_buckets = 1,
	                                     },
	                                     &empty_hist),
	                 0);

	assert_int_equal(tj_metric_add(requests, TJ_LABELS("POST", "500"), 1), 0);
	assert_int_equal(tj_metric_add(requests, TJ_LABELS("GET", "404"), 2), 0);
	assert_int_equal(tj_metric_add(requests, TJ_LABELS("GET", "200"), 1), 0);
	assert_int_equal(tj_metric_add(requests, TJ_LABELS("GET", "200"), 2), 0);
	assert_int_equal(tj_metric_add(requests, TJ_LABELS("DELETE", "a\"b\\c\nd"), 1), 0);
	assert_int_equal(tj_metric_set(gauge, NULL, -2.5), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(tj_metric_observe(latency, TJ_LABELS("/x"),
		                                   (double[]){ 0.25, 0.5, 4, 100 }[i]),
		                 0);

	text = render(reg);
	assert_string_equal(text,
	                    "# HELP a_gauge A gauge.\n"
	                    "# TYPE a_gauge gauge\n"
	                    "a_gauge -2.5\n"
	                    "# HELP http_requests_total Requests.\\nBy code \\\\ method\n"
	                    "# TYPE http_requests_total counter\n"
	                    "http_requests_total{code=\"200\",method=\"GET\"} 3\n"
	                    "http_requests_total{code=\"404\",method=\"GET\"} 2\n"
	                    "http_requests_total{code=\"500\",method=\"POST\"} 1\n"
	                    "http_requests_total{code=\"a\\\"b\\\\c\\nd\",method=\"DELETE\"} 1\n"
	                    "# HELP latency_seconds Latency.\n"
	                    "# TYPE latency_seconds histogram\n"
	                    "latency_seconds_bucket{path=\"/x\",le=\"0.5\"} 2\n"
	                    "latency_seconds_bucket{path=\"/x\",le=\"1\"} 2\n"
	                    "latency_seconds_bucket{path=\"/x\",le=\"10\"} 3\n"
	                    "latency_seconds_bucket{path=\"/x\",le=\"+Inf\"} 4\n"
	                    "latency_seconds_sum{path=\"/x\"} 104.75\n"
	                    "latency_seconds_count{path=\"/x\"} 4\n"
	                    "# HELP z_hist Empty.\n"
	                    "# TYPE z_hist histogram\n"
	                    "z_hist_bucket{le=\"1\"} 0\n"
	                    "z_hist_bucket{le=\"+Inf\"} 0\n"
	                    "z_hist_sum 0\n"
	                    "z_hist_count 0\n");
	free(text);
	tj_metrics_free(reg);
}

struct number_case {
	double v;
	const char *want;
};

/* What Go's strconv.FormatFloat(v, 'g', -1, 64) writes. */
static const struct number_case numbers[] = {
	{ 0, "0" },
	{ 1, "1" },
	{ -1, "-1" },
	{ 0.005, "0.005" },
	{ 1e-08, "1e-08" },
	{ 9.999999999999999e-06, "9.999999999999999e-06" },
	{ 0.0001, "0.0001" },
	{ 1e-05, "1e-05" },
	{ 2.5e-05, "2.5e-05" },
	{ 100000, "100000" },
	{ 123456.7, "123456.7" },
	{ 1e6, "1e+06" },
	{ 1234567, "1.234567e+06" },
	{ 12345678, "1.2345678e+07" },
	{ 1.7e9, "1.7e+09" },
	{ 3e21, "3e+21" },
	{ 1e100, "1e+100" },
	{ 0.1 + 0.2, "0.30000000000000004" },
	{ -0.0625, "-0.0625" },
	{ 1.5, "1.5" },
	{ 10.25, "10.25" },
	{ NAN, "NaN" },
	{ INFINITY, "+Inf" },
	{ -INFINITY, "-Inf" },
};

static void test_number_format(void **state)
{
	struct tj_metrics *reg;
	struct tj_metric *g;

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "g",
	                                             .help = "h",
	                                             .type = TJ_METRIC_GAUGE,
	                                     },
	                                     &g),
	                 0);
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		char want[128], *text;

		print_message("# case: %s\n", numbers[i].want);
		assert_int_equal(tj_metric_set(g, NULL, numbers[i].v), 0);
		text = render(reg);
		snprintf(want, sizeof(want), "# HELP g h\n# TYPE g gauge\ng %s\n", numbers[i].want);
		assert_string_equal(text, want);
		free(text);
	}
	tj_metrics_free(reg);
}

struct desc_case {
	const char *what;
	struct tj_metric_desc desc;
	int want;
};

static const char *const l_ok[] = { "a", "b_2", NULL };
static const char *const l_digit[] = { "2a", NULL };
static const char *const l_colon[] = { "a:b", NULL };
static const char *const l_reserved[] = { "__name", NULL };
static const char *const l_le[] = { "le", NULL };
static const char *const l_dup[] = { "a", "a", NULL };
static const char *const l_many[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", NULL };
static const double b_ok[] = { 1, 2 };
static const double b_flat[] = { 1, 1 };
static const double b_down[] = { 2, 1 };
static const double b_inf[] = { 1, INFINITY };

static const struct desc_case descs[] = {
	{ "plain counter", { "ok_total", "h", TJ_METRIC_COUNTER, l_ok, NULL, 0, 0 }, 0 },
	{ "colon in a metric name", { "ns:ok", "h", TJ_METRIC_GAUGE, NULL, NULL, 0, 0 }, 0 },
	{ "le on a gauge", { "g_le", "h", TJ_METRIC_GAUGE, l_le, NULL, 0, 0 }, 0 },
	{ "histogram", { "h_ok", "h", TJ_METRIC_HISTOGRAM, l_ok, b_ok, 2, 0 }, 0 },
	{ "duplicate name", { "ok_total", "h", TJ_METRIC_GAUGE, NULL, NULL, 0, 0 }, -EEXIST },
	{ "empty name", { "", "h", TJ_METRIC_GAUGE, NULL, NULL, 0, 0 }, -EINVAL },
	{ "name with dash", { "a-b", "h", TJ_METRIC_GAUGE, NULL, NULL, 0, 0 }, -EINVAL },
	{ "name starts with digit", { "1a", "h", TJ_METRIC_GAUGE, NULL, NULL, 0, 0 }, -EINVAL },
	{ "no help", { "nohelp", NULL, TJ_METRIC_GAUGE, NULL, NULL, 0, 0 }, -EINVAL },
	{ "label starts with digit", { "x1", "h", TJ_METRIC_GAUGE, l_digit, NULL, 0, 0 }, -EINVAL },
	{ "colon in a label", { "x2", "h", TJ_METRIC_GAUGE, l_colon, NULL, 0, 0 }, -EINVAL },
	{ "reserved label", { "x3", "h", TJ_METRIC_GAUGE, l_reserved, NULL, 0, 0 }, -EINVAL },
	{ "le on a histogram", { "x4", "h", TJ_METRIC_HISTOGRAM, l_le, b_ok, 2, 0 }, -EINVAL },
	{ "duplicate label", { "x5", "h", TJ_METRIC_GAUGE, l_dup, NULL, 0, 0 }, -EINVAL },
	{ "nine labels", { "x6", "h", TJ_METRIC_GAUGE, l_many, NULL, 0, 0 }, -EINVAL },
	{ "histogram without buckets",
	  { "x7", "h", TJ_METRIC_HISTOGRAM, NULL, NULL, 0, 0 },
	  -EINVAL },
	{ "flat buckets", { "x8", "h", TJ_METRIC_HISTOGRAM, NULL, b_flat, 2, 0 }, -EINVAL },
	{ "falling buckets", { "x9", "h", TJ_METRIC_HISTOGRAM, NULL, b_down, 2, 0 }, -EINVAL },
	{ "infinite bucket", { "x10", "h", TJ_METRIC_HISTOGRAM, NULL, b_inf, 2, 0 }, -EINVAL },
	{ "buckets on a counter", { "x11", "h", TJ_METRIC_COUNTER, NULL, b_ok, 2, 0 }, -EINVAL },
};

static void test_register_checks(void **state)
{
	struct tj_metrics *reg;

	assert_int_equal(tj_metrics_new(&reg), 0);
	for (size_t i = 0; i < sizeof(descs) / sizeof(descs[0]); i++) {
		struct tj_metric *m = (struct tj_metric *)&reg; /* a sentinel: untouched on error */
		int r;

		print_message("# case: %s\n", descs[i].what);
		r = tj_metrics_register(reg, &descs[i].desc, &m);
		assert_int_equal(r, descs[i].want);
		if (r < 0)
			assert_ptr_equal(m, (struct tj_metric *)&reg);
		else
			assert_ptr_not_equal(m, (struct tj_metric *)&reg);
	}
	tj_metrics_free(reg);
}

static void test_series_limits_and_kinds(void **state)
{
	static const char *const l[] = { "k", NULL };
	struct tj_metrics *reg;
	struct tj_metric *c, *g, *h;
	struct tj_series *s1, *s2, *again;
	char *text;

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "c_total",
	                                             .help = "h",
	                                             .type = TJ_METRIC_COUNTER,
	                                             .labels = l,
	                                             .max_series = 2,
	                                     },
	                                     &c),
	                 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "g",
	                                             .help = "h",
	                                             .type = TJ_METRIC_GAUGE,
	                                     },
	                                     &g),
	                 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "h",
	                                             .help = "h",
	                                             .type = TJ_METRIC_HISTOGRAM,
	                                             .buckets = (const double[]){ 1 },
	                                             .n_buckets = 1,
	                                     },
	                                     &h),
	                 0);

	assert_int_equal(tj_metric_series(c, TJ_LABELS("a"), &s1), 0);
	assert_int_equal(tj_metric_series(c, TJ_LABELS("b"), &s2), 0);
	assert_int_equal(tj_metric_series(c, TJ_LABELS("a"), &again), 0);
	assert_ptr_equal(again, s1);
	again = NULL;
	assert_int_equal(tj_metric_series(c, TJ_LABELS("c"), &again), -E2BIG);
	assert_null(again);
	assert_int_equal(tj_metric_add(c, TJ_LABELS("c"), 1), -E2BIG);
	assert_int_equal(tj_metric_series(c, NULL, &again), -EINVAL);
	assert_int_equal(tj_metric_series(c, TJ_LABELS(NULL), &again), -EINVAL);

	/* A counter never goes down; set and observe are for other kinds. */
	tj_series_add(s1, 2);
	tj_series_add(s1, -1);
	tj_series_add(s1, NAN);
	tj_series_set(s1, 100);
	tj_series_observe(s1, 100);
	assert_int_equal(tj_metric_set(c, TJ_LABELS("a"), 5), -EINVAL);
	assert_int_equal(tj_metric_observe(c, TJ_LABELS("a"), 5), -EINVAL);
	/* A gauge goes both ways. */
	assert_int_equal(tj_metric_add(g, NULL, 3), 0);
	assert_int_equal(tj_metric_add(g, NULL, -5), 0);
	/* A histogram only observes, and ignores NaN. */
	assert_int_equal(tj_metric_add(h, NULL, 1), -EINVAL);
	assert_int_equal(tj_metric_set(h, NULL, 1), -EINVAL);
	assert_int_equal(tj_metric_observe(h, NULL, NAN), 0);
	assert_int_equal(tj_metric_observe(h, NULL, 1), 0);
	/* A sampled counter takes its total as it is read; other kinds ignore that. */
	tj_series_set_total(s2, 7);
	assert_int_equal(tj_metric_series(g, NULL, &again), 0);
	tj_series_set_total(again, 100);
	assert_int_equal(tj_metric_series(h, NULL, &again), 0);
	tj_series_set_total(again, 100);

	text = render(reg);
	assert_string_equal(text, "# HELP c_total h\n"
	                          "# TYPE c_total counter\n"
	                          "c_total{k=\"a\"} 2\n"
	                          "c_total{k=\"b\"} 7\n"
	                          "# HELP g h\n"
	                          "# TYPE g gauge\n"
	                          "g -2\n"
	                          "# HELP h h\n"
	                          "# TYPE h histogram\n"
	                          "h_bucket{le=\"1\"} 1\n"
	                          "h_bucket{le=\"+Inf\"} 1\n"
	                          "h_sum 1\n"
	                          "h_count 1\n");
	free(text);
	tj_metrics_free(reg);
}

static bool keep_odd(const char *const *values, void *ctx)
{
	int *calls = ctx;

	(*calls)++;
	return (values[0][0] - '0') % 2 == 1;
}

/* Series removed by a predicate or all at once; the index still finds the others, and the
 * room they left takes new ones. */
static void test_remove_series(void **state)
{
	static const char *const l[] = { "k", NULL };
	struct tj_metrics *reg;
	struct tj_metric *c, *g;
	struct tj_series *s, *again;
	char name[2] = "0";
	int calls = 0;
	char *text;

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "c_total",
	                                             .help = "h",
	                                             .type = TJ_METRIC_COUNTER,
	                                             .labels = l,
	                                             .max_series = 10,
	                                     },
	                                     &c),
	                 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "g",
	                                             .help = "h",
	                                             .type = TJ_METRIC_GAUGE,
	                                     },
	                                     &g),
	                 0);
	for (char d = '0'; d <= '9'; d++) {
		name[0] = d;
		assert_int_equal(tj_metric_add(c, TJ_LABELS(name), d - '0'), 0);
	}
	assert_int_equal(tj_metric_add(c, TJ_LABELS("x"), 1), -E2BIG);
	assert_int_equal(tj_metric_remove_series(c, keep_odd, &calls), 5);
	assert_int_equal(calls, 10);
	for (char d = '1'; d <= '9'; d += 2) {
		name[0] = d;
		assert_int_equal(tj_metric_series(c, TJ_LABELS(name), &s), 0);
		assert_int_equal(tj_metric_series(c, TJ_LABELS(name), &again), 0);
		assert_ptr_equal(s, again);
	}
	/* A removed series comes back at 0. */
	assert_int_equal(tj_metric_add(c, TJ_LABELS("2"), 1), 0);
	assert_int_equal(tj_metric_add(c, TJ_LABELS("x"), 1), 0);
	/* A family without labels keeps its one series. */
	assert_int_equal(tj_metric_set(g, NULL, 4), 0);
	assert_int_equal(tj_metric_remove_series(g, NULL, NULL), 0);
	text = render(reg);
	assert_string_equal(text, "# HELP c_total h\n"
	                          "# TYPE c_total counter\n"
	                          "c_total{k=\"1\"} 1\n"
	                          "c_total{k=\"2\"} 1\n"
	                          "c_total{k=\"3\"} 3\n"
	                          "c_total{k=\"5\"} 5\n"
	                          "c_total{k=\"7\"} 7\n"
	                          "c_total{k=\"9\"} 9\n"
	                          "c_total{k=\"x\"} 1\n"
	                          "# HELP g h\n"
	                          "# TYPE g gauge\n"
	                          "g 4\n");
	free(text);
	/* Every series at once: the family is not written until it has one again. */
	assert_int_equal(tj_metric_remove_series(c, NULL, NULL), 7);
	text = render(reg);
	assert_string_equal(text, "# HELP g h\n"
	                          "# TYPE g gauge\n"
	                          "g 4\n");
	free(text);
	tj_metrics_free(reg);
}

static void test_render_limit(void **state)
{
	static const char *const l[] = { "v", NULL };
	static char value[64 * 1024];
	struct tj_metrics *reg;
	struct tj_metric *g;
	char *text = (char *)"untouched";
	size_t len = 7;

	memset(value, 'v', sizeof(value) - 1);
	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "big",
	                                             .help = "h",
	                                             .type = TJ_METRIC_GAUGE,
	                                             .labels = l,
	                                     },
	                                     &g),
	                 0);
	/* 200 series of 64 KiB labels are 12.5 MiB of text, past the 8 MiB limit. */
	for (int i = 0; i < 200; i++) {
		value[0] = (char)('A' + i % 26);
		value[1] = (char)('A' + i / 26);
		assert_int_equal(tj_metric_set(g, TJ_LABELS(value), i), 0);
	}
	assert_int_equal(tj_metrics_render(reg, &text, &len), -E2BIG);
	assert_string_equal(text, "untouched");
	assert_int_equal(len, 7);
	tj_metrics_free(reg);
}

static int count_lines_starting(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			n++;
	return n;
}

static void test_std_families(void **state)
{
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	char *text, types[4096] = { 0 };

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), 0);
	assert_int_equal(tj_std_metrics_init_controller(&m, "trainjob", 4), 0);
	assert_int_equal(tj_std_metrics_init_workqueue(&m, "trainjob"), 0);
	assert_int_equal(tj_metric_set(m.leader_election_master_status, TJ_LABELS("tjc-lease"), 1),
	                 0);
	assert_int_equal(tj_metric_add(m.rest_client_requests_total,
	                               TJ_LABELS("201", "POST", "127.0.0.1:6443"), 1),
	                 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), -EEXIST);

	text = render(reg);
	/* Every family, sorted by name; the unfed vectors (restarts by reason, request
	 * durations, slow path) are not written until they have a series. */
	/* GCC 12 at -O3 takes p for a pointer to a dead compound literal of TJ_LABELS above
	 * (a false -Wdangling-pointer); text is alive until the free below. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif
	for (const char *p = strstr(text, "# TYPE "); p; p = strstr(p + 1, "# TYPE ")) {
		size_t n = strcspn(p, "\n") + 1;

		strncat(types, p + 7, n - 7);
	}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic pop
#endif
	assert_string_equal(types, "controller_runtime_active_workers gauge\n"
	                           "controller_runtime_max_concurrent_reconciles gauge\n"
	                           "controller_runtime_reconcile_errors_total counter\n"
	                           "controller_runtime_reconcile_time_seconds histogram\n"
	                           "controller_runtime_reconcile_total counter\n"
	                           "controller_runtime_terminal_reconcile_errors_total counter\n"
	                           "leader_election_master_status gauge\n"
	                           "rest_client_requests_total counter\n"
	                           "trainjob_admission_cycle_duration_seconds histogram\n"
	                           "trainjob_admission_decisions_total counter\n"
	                           "trainjob_admission_latency_seconds histogram\n"
	                           "trainjob_admission_untried_total counter\n"
	                           "trainjob_backfills_total counter\n"
	                           "trainjob_caches_synced gauge\n"
	                           "trainjob_pods_created_total counter\n"
	                           "trainjob_status_pass_in_flight gauge\n"
	                           "trainjob_status_pass_waiting gauge\n"
	                           "trainjob_suspect_marks_total counter\n"
	                           "trainjob_suspect_nodes gauge\n"
	                           "trainjob_write_gate_deferred_total counter\n"
	                           "trainjob_write_gate_expired_total counter\n"
	                           "trainjob_write_gate_waiting gauge\n"
	                           "workqueue_adds_total counter\n"
	                           "workqueue_depth gauge\n"
	                           "workqueue_longest_running_processor_seconds gauge\n"
	                           "workqueue_queue_duration_seconds histogram\n"
	                           "workqueue_retries_total counter\n"
	                           "workqueue_unfinished_work_seconds gauge\n"
	                           "workqueue_work_duration_seconds histogram\n");

	assert_non_null(strstr(text, "# TYPE controller_runtime_reconcile_total counter\n"
	                             "controller_runtime_reconcile_total{controller=\"trainjob\","
	                             "result=\"error\"} 0\n"
	                             "controller_runtime_reconcile_total{controller=\"trainjob\","
	                             "result=\"requeue\"} 0\n"
	                             "controller_runtime_reconcile_total{controller=\"trainjob\","
	                             "result=\"requeue_after\"} 0\n"
	                             "controller_runtime_reconcile_total{controller=\"trainjob\","
	                             "result=\"success\"} 0\n"));
	assert_non_null(strstr(text, "controller_runtime_max_concurrent_reconciles{controller="
	                             "\"trainjob\"} 4\n"));
	assert_non_null(
	        strstr(text, "controller_runtime_active_workers{controller=\"trainjob\"} 0\n"));
	assert_non_null(strstr(text, "controller_runtime_reconcile_errors_total{controller="
	                             "\"trainjob\"} 0\n"));
	assert_non_null(strstr(text, "workqueue_depth{controller=\"trainjob\",name=\"trainjob\","
	                             "priority=\"\"} 0\n"));
	assert_non_null(strstr(
	        text, "workqueue_adds_total{controller=\"trainjob\",name=\"trainjob\"} 0\n"));
	assert_non_null(strstr(
	        text, "workqueue_retries_total{controller=\"trainjob\",name=\"trainjob\"} 0\n"));
	assert_non_null(strstr(text, "leader_election_master_status{name=\"tjc-lease\"} 1\n"));
	assert_non_null(strstr(text,
	                       "rest_client_requests_total{code=\"201\",host=\"127.0.0.1:6443\","
	                       "method=\"POST\"} 1\n"));
	/* The families by namespace have no series before a job is there. */
	assert_null(strstr(text, "trainjob_jobs"));
	assert_null(strstr(text, "trainjob_time_to_running_seconds"));
	assert_non_null(strstr(text, "trainjob_pods_created_total 0\n"));

	/* The bucket bounds, exactly as controller-runtime and client-go write them. */
	assert_non_null(strstr(text, "controller_runtime_reconcile_time_seconds_bucket{controller="
	                             "\"trainjob\",le=\"0.005\"} 0\n"));
	assert_int_equal(
	        count_lines_starting(text, "controller_runtime_reconcile_time_seconds_bucket{"),
	        41);
	{
		static const char *const les[] = {
			"0.005", "0.01", "0.025", "0.05", "0.1",  "0.15", "0.2", "0.25", "0.3",
			"0.35",  "0.4",  "0.45",  "0.5",  "0.6",  "0.7",  "0.8", "0.9",  "1",
			"1.25",  "1.5",  "1.75",  "2",    "2.5",  "3",    "3.5", "4",    "4.5",
			"5",     "6",    "7",     "8",    "9",    "10",   "15",  "20",   "25",
			"30",    "40",   "50",    "60",   "+Inf",
		};
		const char *p = text;

		for (size_t i = 0; i < sizeof(les) / sizeof(les[0]); i++) {
			char line[160];

			snprintf(line, sizeof(line),
			         "controller_runtime_reconcile_time_seconds_bucket{controller="
			         "\"trainjob\",le=\"%s\"} 0\n",
			         les[i]);
			p = strstr(p, line);
			assert_non_null(p);
		}
	}
	assert_non_null(strstr(text,
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"1e-08\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"1e-07\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"1e-06\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"9.999999999999999e-06\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"9.999999999999999e-05\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"0.001\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"0.01\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"0.1\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"1\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"10\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"100\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"1000\"} 0\n"
	                       "workqueue_queue_duration_seconds_bucket{controller=\"trainjob\","
	                       "name=\"trainjob\",le=\"+Inf\"} 0\n"
	                       "workqueue_queue_duration_seconds_sum{controller=\"trainjob\",name="
	                       "\"trainjob\"} 0\n"
	                       "workqueue_queue_duration_seconds_count{controller=\"trainjob\","
	                       "name=\"trainjob\"} 0\n"));
	free(text);

	/* Observations land in the right cumulative buckets. */
	assert_int_equal(tj_metric_observe(m.reconcile_time_seconds, TJ_LABELS("trainjob"), 0.012),
	                 0);
	assert_int_equal(tj_metric_observe(m.rest_client_request_duration_seconds,
	                                   TJ_LABELS("GET", "h"), 70),
	                 0);
	text = render(reg);
	assert_non_null(strstr(text, "{controller=\"trainjob\",le=\"0.01\"} 0\n"
	                             "controller_runtime_reconcile_time_seconds_bucket{controller="
	                             "\"trainjob\",le=\"0.025\"} 1\n"));
	assert_non_null(strstr(text, "rest_client_request_duration_seconds_bucket{host=\"h\","
	                             "verb=\"GET\",le=\"60\"} 0\n"
	                             "rest_client_request_duration_seconds_bucket{host=\"h\","
	                             "verb=\"GET\",le=\"+Inf\"} 1\n"
	                             "rest_client_request_duration_seconds_sum{host=\"h\","
	                             "verb=\"GET\"} 70\n"));
	free(text);
	tj_metrics_free(reg);
}

static struct tj_kv gh200_labels[] = { { "gpu", "GH200" } };
static struct tj_kv h100_labels[] = { { "gpu", "H100" } };
static struct tj_gpu_class two_classes[] = {
	{ .name = "gh200",
	  .resource = "nvidia.com/gpu",
	  .node_labels = gh200_labels,
	  .n_node_labels = 1 },
	{ .name = "h100",
	  .resource = "nvidia.com/gpu",
	  .node_labels = h100_labels,
	  .n_node_labels = 1 },
};
static const struct tj_config two_class_config = { .classes = two_classes, .n_classes = 2 };
static struct tj_node_label gh_label[] = { { "gpu", "GH200" } };
static struct tj_node_label h_label[] = { { "gpu", "H100" } };
static const struct tj_node gpu_nodes[] = {
	{ .name = "gh-0", .labels = gh_label, .n_labels = 1 },
	{ .name = "gh-1", .labels = gh_label, .n_labels = 1 },
	{ .name = "h-0", .labels = h_label, .n_labels = 1 },
};

static const struct tj_node *gpu_node(const char *name, void *ctx)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(gpu_nodes) / sizeof(gpu_nodes[0]); i++)
		if (strcmp(gpu_nodes[i].name, name) == 0)
			return &gpu_nodes[i];
	return NULL;
}

/* trainjob_job_gpus from the first n of: team-a's gang of two on gh200 of which one runs
 * (4 GPUs idle), then team-b's two jobs, 4 GPUs on gh200 and 8 on h100, both running. */
static int feed_gpu_use(const struct tj_std_metrics *m, size_t n)
{
	static const struct {
		const char *namespace, *job, *node, *pinned;
		enum tj_pod_phase phase;
		int64_t gpus;
	} rows[] = {
		{ "team-a", "a", "gh-0", NULL, TJ_POD_RUNNING, 4 },
		{ "team-a", "a", NULL, "gh-1", TJ_POD_PENDING, 4 },
		{ "team-b", "b", "gh-1", NULL, TJ_POD_RUNNING, 4 },
		{ "team-b", "c", "h-0", NULL, TJ_POD_RUNNING, 8 },
	};
	struct tj_pod pods[4];
	const struct tj_pod *ptrs[4];

	memset(pods, 0, sizeof(pods));
	for (size_t i = 0; i < 4; i++) {
		pods[i].namespace = (char *)rows[i].namespace;
		pods[i].name = "p";
		pods[i].trainjob = (char *)rows[i].job;
		pods[i].node_name = (char *)rows[i].node;
		pods[i].pinned_node = (char *)rows[i].pinned;
		pods[i].phase = rows[i].phase;
		pods[i].requests.n_extended = 1;
		pods[i].requests.extended[0].name = "nvidia.com/gpu";
		pods[i].requests.extended[0].value = rows[i].gpus;
		/* Newest last, so that the feeder's own grouping is what is tested. */
		ptrs[3 - i] = &pods[i];
	}
	return tj_std_metrics_feed_gpu_use(m, &two_class_config, ptrs + (4 - n), n, gpu_node, NULL);
}

/* trainjob_jobs and trainjob_job_gpus are what the caches hold now: a namespace whose last
 * job (or last pod) is gone has no series left, not a series at 0 for ever. */
static void test_series_of_a_namespace_go_with_its_last_job(void **state)
{
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	char *text;
	const struct tj_job_series jobs[] = {
		{ "team-a", "gh200", TJ_STATE_RUNNING, "AllPodsRunning", "j", -1, -1 },
		{ "team-a", "gh200", TJ_STATE_NONE, "", "j", -1, -1 },
		{ "team-a", "gh200", TJ_STATE_RUNNING, "AllPodsRunning", "j", -1, -1 },
		{ "team-b", "", TJ_STATE_FAILED, "ReachedMaxRestarts", "j", -1, -1 },
	};

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), 0);
	assert_int_equal(tj_std_metrics_feed_jobs(&m, jobs, 4), 0);
	assert_int_equal(feed_gpu_use(&m, 4), 0);
	text = render(reg);
	assert_non_null(strstr(text, "# TYPE trainjob_jobs gauge\n"
	                             "trainjob_jobs{gpu_class=\"\",namespace=\"team-b\",state="
	                             "\"Complete\"} 0\n"
	                             "trainjob_jobs{gpu_class=\"\",namespace=\"team-b\",state="
	                             "\"Failed\"} 1\n"
	                             "trainjob_jobs{gpu_class=\"\",namespace=\"team-b\",state="
	                             "\"Pending\"} 0\n"));
	assert_non_null(strstr(text, "trainjob_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"Failed\"} 0\n"
	                             "trainjob_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"Pending\"} 1\n"
	                             "trainjob_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"Queued\"} 0\n"
	                             "trainjob_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"Restarting\"} 0\n"
	                             "trainjob_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"Running\"} 2\n"
	                             "trainjob_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"Suspended\"} 0\n"
	                             "# HELP"));
	assert_int_equal(count_lines_starting(text, "trainjob_jobs{"), 14);
	assert_non_null(strstr(text, "namespace=\"team-b\",state=\"running\"} 8\n"));
	free(text);

	/* team-b's last job and pods are gone; team-a's second Running job too. */
	assert_int_equal(tj_std_metrics_feed_jobs(&m, jobs, 2), 0);
	assert_int_equal(feed_gpu_use(&m, 2), 0);
	text = render(reg);
	assert_null(strstr(text, "team-b"));
	assert_int_equal(count_lines_starting(text, "trainjob_jobs{"), 7);
	assert_non_null(strstr(text, "trainjob_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"Running\"} 1\n"));
	assert_int_equal(count_lines_starting(text, "trainjob_job_gpus{"), 3);
	assert_non_null(strstr(text, "trainjob_job_gpus{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"idle\"} 4\n"));
	free(text);

	/* No job and no pod left at all: neither family is written. */
	assert_int_equal(tj_std_metrics_feed_jobs(&m, NULL, 0), 0);
	assert_int_equal(feed_gpu_use(&m, 0), 0);
	text = render(reg);
	assert_null(strstr(text, "trainjob_jobs"));
	assert_null(strstr(text, "trainjob_job_gpus"));
	free(text);
	tj_metrics_free(reg);
}

/* trainjob_progress_percent and trainjob_eta_seconds: what the training code of each job that
 * has not finished reported, and nothing for the others. */
static void test_progress_of_jobs_that_report(void **state)
{
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	char *text;
	const struct tj_job_series jobs[] = {
		{ "team-a", "gh200", TJ_STATE_RUNNING, "AllPodsRunning", "llama", 42, 5400 },
		{ "team-a", "gh200", TJ_STATE_RUNNING, "AllPodsRunning", "vit", 7, -1 },
		{ "team-a", "gh200", TJ_STATE_RUNNING, "AllPodsRunning", "quiet", -1, -1 },
		{ "team-b", "h100", TJ_STATE_COMPLETE, "AllPodsSucceeded", "done", 100, 0 },
	};

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), 0);
	assert_int_equal(tj_std_metrics_feed_jobs(&m, jobs, 4), 0);
	text = render(reg);
	assert_non_null(strstr(text, "trainjob_progress_percent{namespace=\"team-a\",trainjob="
	                             "\"llama\"} 42\n"
	                             "trainjob_progress_percent{namespace=\"team-a\",trainjob="
	                             "\"vit\"} 7\n"));
	assert_non_null(strstr(text, "trainjob_eta_seconds{namespace=\"team-a\",trainjob="
	                             "\"llama\"} 5400\n"));
	assert_int_equal(count_lines_starting(text, "trainjob_progress_percent{"), 2);
	assert_int_equal(count_lines_starting(text, "trainjob_eta_seconds{"), 1);
	free(text);
	/* Once llama is gone, its series are too. */
	assert_int_equal(tj_std_metrics_feed_jobs(&m, jobs + 1, 3), 0);
	text = render(reg);
	assert_null(strstr(text, "llama"));
	free(text);
	tj_metrics_free(reg);
}

/* trainjob_queue_jobs counts the Queued jobs of each namespace and class by the reason their
 * status gives; every pair with a job has the nine reasons (the queue's five, and held,
 * dependency, preempted and requeued), and a job that runs counts in none. */
static void test_queue_counts_queued_jobs_by_namespace_and_reason(void **state)
{
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	char *text;
	const struct tj_job_series jobs[] = {
		{ "team-a", "gh200", TJ_STATE_QUEUED, "Resources", "j", -1, -1 },
		{ "team-a", "gh200", TJ_STATE_QUEUED, "Resources", "j", -1, -1 },
		{ "team-a", "gh200", TJ_STATE_QUEUED, "Priority", "j", -1, -1 },
		{ "team-a", "gh200", TJ_STATE_QUEUED, "Preempted", "j", -1, -1 },
		{ "team-a", "gh200", TJ_STATE_QUEUED, "JobHeldUser", "j", -1, -1 },
		{ "team-a", "gh200", TJ_STATE_RUNNING, "AllPodsRunning", "j", -1, -1 },
		{ "team-b", "h100", TJ_STATE_QUEUED, "QuotaExceeded", "j", -1, -1 },
		{ "team-b", "h100", TJ_STATE_FAILED, "NeverFits", "j", -1, -1 },
		{ "team-c", "h100", TJ_STATE_RUNNING, "AllPodsRunning", "j", -1, -1 },
	};

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), 0);
	assert_int_equal(tj_std_metrics_feed_jobs(&m, jobs, 9), 0);
	text = render(reg);
	assert_non_null(strstr(text, "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"Dependency\"} 0\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"JobHeldUser\"} 1\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"NeverFits\"} 0\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"Preempted\"} 1\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"Priority\"} 1\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"QOSMaxGRESPerNamespace\"} 0\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"QuotaExceeded\"} 0\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"Requeued\"} 0\n"
	                             "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"Resources\"} 2\n"));
	assert_non_null(strstr(text, "trainjob_queue_jobs{gpu_class=\"h100\",namespace=\"team-b\","
	                             "reason=\"NeverFits\"} 0\n"));
	assert_non_null(strstr(text, "trainjob_queue_jobs{gpu_class=\"h100\",namespace=\"team-b\","
	                             "reason=\"QuotaExceeded\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_queue_jobs{gpu_class=\"h100\",namespace=\"team-c\","
	                             "reason=\"Resources\"} 0\n"));
	assert_int_equal(count_lines_starting(text, "trainjob_queue_jobs{"), 27);
	free(text);

	/* The queue drained and team-b's jobs gone: team-a's series read 0, team-b has none. */
	const struct tj_job_series later[] = {
		{ "team-a", "gh200", TJ_STATE_RUNNING, "AllPodsRunning", "j", -1, -1 },
	};
	assert_int_equal(tj_std_metrics_feed_jobs(&m, later, 1), 0);
	text = render(reg);
	assert_null(strstr(text, "namespace=\"team-b\""));
	assert_int_equal(count_lines_starting(text, "trainjob_queue_jobs{"), 9);
	assert_non_null(strstr(text, "trainjob_queue_jobs{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "reason=\"Resources\"} 0\n"));
	free(text);
	tj_metrics_free(reg);
}

/* The helpers that feed the families from what the client, the caches and the reconciles
 * report. */
static void test_std_feeders(void **state)
{
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	struct tj_reflector_seen seen = { 0 };
	struct tj_reflector_stats st = { 0 };
	char *text;

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), 0);

	/* Requests: by status code, "<error>" when no response came. */
	tj_std_metrics_observe_request(
	        &(struct tj_http_observation){ "POST", "https://10.0.0.1:6443/api/v1/pods",
	                                       "10.0.0.1:6443", 201, 0, 0.02 },
	        &m);
	tj_std_metrics_observe_request(
	        &(struct tj_http_observation){ "POST", "https://10.0.0.1:6443/api/v1/pods",
	                                       "10.0.0.1:6443", 201, 0, 0.5 },
	        &m);
	tj_std_metrics_observe_request(
	        &(struct tj_http_observation){ "GET", "https://10.0.0.1:6443/api/v1/pods",
	                                       "10.0.0.1:6443", 0, -ECONNREFUSED, 0.001 },
	        &m);

	/* Per namespace, never per job. */
	assert_int_equal(tj_std_metrics_add_for_key(m.trainjob_worker_restarts_total, "team-a/llm",
	                                            "PodFailed", "gh200", 1),
	                 0);
	assert_int_equal(tj_std_metrics_add_for_key(m.trainjob_worker_restarts_total,
	                                            "team-a/other", "PodFailed", "gh200", 1),
	                 0);
	assert_int_equal(tj_std_metrics_add_for_key(m.trainjob_gpu_seconds_total, "team-b/x",
	                                            "gh200", "wasted", 40),
	                 0);
	assert_int_equal(tj_std_metrics_add_for_key(m.trainjob_worker_restarts_total, "no-slash",
	                                            "PodFailed", "gh200", 1),
	                 -EINVAL);
	assert_int_equal(tj_std_metrics_add_for_key(m.trainjob_worker_restarts_total, "/name",
	                                            "PodFailed", "gh200", 1),
	                 -EINVAL);
	assert_int_equal(tj_std_metrics_observe_queue_wait(&m, "no-slash", "gh200", "normal", 1),
	                 -EINVAL);
	assert_int_equal(tj_std_metrics_observe_queue_wait(&m, "team-d/waited", "gh200", "low", 90),
	                 0);
	/* A family of three labels needs both. */
	assert_int_equal(tj_std_metrics_add_for_key(m.trainjob_gpu_seconds_total, "team-b/x",
	                                            "gh200", NULL, 1),
	                 -EINVAL);

	/* A written status: a restart, the GPU-seconds that ended, the first Running; then a
	 * stall that restarted the job, and one that failed it. */
	tj_std_metrics_count_status(&m, "team-c/j", "h100", "NodeNotReady", false,
	                            &(struct tj_gpu_seconds_outcomes){ 30, 16 }, 12);
	tj_std_metrics_count_status(&m, "team-c/j", "h100", "", false,
	                            &(struct tj_gpu_seconds_outcomes){ 0, 0 }, -1);
	tj_std_metrics_count_status(&m, "team-c/k", "h100", "Stalled", true,
	                            &(struct tj_gpu_seconds_outcomes){ 0, 0 }, -1);
	tj_std_metrics_count_status(&m, "team-c/k", "h100", "", true,
	                            &(struct tj_gpu_seconds_outcomes){ 0, 0 }, -1);

	/* GPUs of TrainJobs' pods, per namespace and class of the config. */
	assert_int_equal(feed_gpu_use(&m, 4), 0);

	/* Reconciles. */
	tj_std_metrics_observe_reconcile(&m, "trainjob", "error", 0.2);
	tj_std_metrics_observe_reconcile(&m, "trainjob", "success", 0.01);

	/* Caches: the first list and watch are no restart; what follows is. */
	st.lists = 1, st.watches = 1;
	assert_int_equal(tj_std_metrics_feed_reflector(&m, "pods", &st, &seen), 0);
	text = render(reg);
	assert_non_null(strstr(text, "trainjob_relists_total{resource=\"pods\"} 0\n"));
	assert_non_null(strstr(text, "trainjob_watch_restarts_total{resource=\"pods\"} 0\n"));
	free(text);
	st.lists = 3, st.watches = 6;
	assert_int_equal(tj_std_metrics_feed_reflector(&m, "pods", &st, &seen), 0);
	assert_int_equal(tj_std_metrics_feed_reflector(&m, "pods", &st, &seen), 0);
	/* A reflector first seen with several lists behind it. */
	struct tj_reflector_seen late = { 0 };

	st.lists = 2, st.watches = 4;
	assert_int_equal(tj_std_metrics_feed_reflector(&m, "nodes", &st, &late), 0);

	text = render(reg);
	assert_non_null(strstr(text,
	                       "rest_client_requests_total{code=\"201\",host=\"10.0.0.1:6443\","
	                       "method=\"POST\"} 2\n"));
	assert_non_null(strstr(text, "rest_client_requests_total{code=\"<error>\",host="
	                             "\"10.0.0.1:6443\",method=\"GET\"} 1\n"));
	assert_non_null(strstr(text, "rest_client_request_duration_seconds_count{host="
	                             "\"10.0.0.1:6443\",verb=\"POST\"} 2\n"));
	assert_non_null(strstr(text, "rest_client_request_duration_seconds_sum{host="
	                             "\"10.0.0.1:6443\",verb=\"POST\"} 0.52\n"));
	assert_non_null(strstr(text, "trainjob_worker_restarts_total{gpu_class=\"gh200\","
	                             "namespace=\"team-a\",reason=\"PodFailed\"} 2\n"));
	assert_null(strstr(text, "llm"));
	assert_non_null(strstr(text, "trainjob_gpu_seconds_total{gpu_class=\"gh200\",namespace="
	                             "\"team-b\",outcome=\"wasted\"} 40\n"));
	assert_non_null(strstr(text, "controller_runtime_reconcile_total{controller=\"trainjob\","
	                             "result=\"error\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_worker_restarts_total{gpu_class=\"h100\","
	                             "namespace=\"team-c\",reason=\"NodeNotReady\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_worker_restarts_total{gpu_class=\"h100\","
	                             "namespace=\"team-c\",reason=\"Stalled\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_stalled_total{gpu_class=\"h100\","
	                             "namespace=\"team-c\"} 2\n"));
	assert_non_null(strstr(text, "trainjob_gpu_seconds_total{gpu_class=\"h100\",namespace="
	                             "\"team-c\",outcome=\"succeeded\"} 30\n"));
	assert_non_null(strstr(text, "trainjob_gpu_seconds_total{gpu_class=\"h100\",namespace="
	                             "\"team-c\",outcome=\"wasted\"} 16\n"));
	assert_non_null(strstr(text, "trainjob_time_to_running_seconds_bucket{gpu_class=\"h100\","
	                             "namespace=\"team-c\",le=\"10\"} 0\n"
	                             "trainjob_time_to_running_seconds_bucket{gpu_class=\"h100\","
	                             "namespace=\"team-c\",le=\"15\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_time_to_running_seconds_count{gpu_class=\"h100\","
	                             "namespace=\"team-c\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_queue_wait_seconds_bucket{gpu_class=\"gh200\","
	                             "namespace=\"team-d\",qos=\"low\",le=\"60\"} 0\n"
	                             "trainjob_queue_wait_seconds_bucket{gpu_class=\"gh200\","
	                             "namespace=\"team-d\",qos=\"low\",le=\"120\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_job_gpus{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"idle\"} 4\n"
	                             "trainjob_job_gpus{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"requested\"} 8\n"
	                             "trainjob_job_gpus{gpu_class=\"gh200\",namespace=\"team-a\","
	                             "state=\"running\"} 4\n"
	                             "trainjob_job_gpus{gpu_class=\"gh200\",namespace=\"team-b\","
	                             "state=\"idle\"} 0\n"
	                             "trainjob_job_gpus{gpu_class=\"gh200\",namespace=\"team-b\","
	                             "state=\"requested\"} 4\n"
	                             "trainjob_job_gpus{gpu_class=\"gh200\",namespace=\"team-b\","
	                             "state=\"running\"} 4\n"
	                             "trainjob_job_gpus{gpu_class=\"h100\",namespace=\"team-b\","
	                             "state=\"idle\"} 0\n"
	                             "trainjob_job_gpus{gpu_class=\"h100\",namespace=\"team-b\","
	                             "state=\"requested\"} 8\n"
	                             "trainjob_job_gpus{gpu_class=\"h100\",namespace=\"team-b\","
	                             "state=\"running\"} 8\n"
	                             "# HELP"));
	/* No series of a class whose GPUs a namespace's pods do not request. */
	assert_null(strstr(text, "trainjob_job_gpus{gpu_class=\"h100\",namespace=\"team-a\""));
	assert_non_null(strstr(text, "controller_runtime_reconcile_errors_total{controller="
	                             "\"trainjob\"} 1\n"));
	assert_non_null(strstr(text, "controller_runtime_reconcile_time_seconds_count{controller="
	                             "\"trainjob\"} 2\n"));
	assert_non_null(strstr(text, "trainjob_relists_total{resource=\"pods\"} 2\n"));
	assert_non_null(strstr(text, "trainjob_watch_restarts_total{resource=\"pods\"} 5\n"));
	assert_non_null(strstr(text, "trainjob_relists_total{resource=\"nodes\"} 1\n"));
	assert_non_null(strstr(text, "trainjob_watch_restarts_total{resource=\"nodes\"} 3\n"));
	free(text);
	tj_metrics_free(reg);
}

/* The first Running of a job is observed, from its creation; nothing else is. */
static void test_time_to_running(void **state)
{
	static const struct {
		enum tj_state old, new_state;
		int restarts;
		int64_t creation, now, want;
	} cases[] = {
		{ TJ_STATE_PENDING, TJ_STATE_RUNNING, 0, 1000, 1042, 42 },
		{ TJ_STATE_QUEUED, TJ_STATE_RUNNING, 0, 1000, 1000, 0 },
		/* Still Running, or not yet. */
		{ TJ_STATE_RUNNING, TJ_STATE_RUNNING, 0, 1000, 1042, -1 },
		{ TJ_STATE_PENDING, TJ_STATE_PENDING, 0, 1000, 1042, -1 },
		/* Running again after a restart is not the first time. */
		{ TJ_STATE_RESTARTING, TJ_STATE_RUNNING, 1, 1000, 1042, -1 },
		/* No creation time, or a clock behind it. */
		{ TJ_STATE_PENDING, TJ_STATE_RUNNING, 0, 0, 1042, -1 },
		{ TJ_STATE_PENDING, TJ_STATE_RUNNING, 0, 1000, 999, -1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_trainjob_status old = { .state = cases[i].old };
		struct tj_trainjob_status new_status = { .state = cases[i].new_state,
			                                 .restart_count = cases[i].restarts };

		assert_int_equal(tj_std_metrics_time_to_running(&old, &new_status,
		                                                cases[i].creation, cases[i].now),
		                 cases[i].want);
	}
}

static void write_text(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_process_metrics(void **state)
{
	char dir[] = "/tmp/tj-proc-XXXXXX", path[512], want[1024], *text;
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct tj_metrics *reg;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/self", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/self/fd", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	write_text(dir, "self/fd/0", "");
	write_text(dir, "self/fd/1", "");
	write_text(dir, "self/fd/7", "");
	/* A command name with a space and a parenthesis; utime 250 + stime 50 ticks;
	 * starttime 0 ticks after boot; vsize 123456789; rss 10 pages. */
	write_text(dir, "self/stat",
	           "4242 (tj c) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 0 "
	           "123456789 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
	write_text(
	        dir, "self/limits",
	        "Limit                     Soft Limit           Hard Limit           Units     \n"
	        "Max cpu time              unlimited            unlimited            seconds   \n"
	        "Max open files            1024                 524288               files     \n");
	write_text(dir, "stat", "cpu  1 2 3 4\nintr 5\nctxt 6\nbtime 1700000000\nprocesses 7\n");

	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register_process(reg, dir), 0);
	assert_int_equal(tj_metrics_register_process(reg, dir), -EEXIST);
	text = render(reg);
	snprintf(
	        want, sizeof(want),
	        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds\n"
	        "# TYPE process_cpu_seconds_total counter\n"
	        "process_cpu_seconds_total %g\n"
	        "# HELP process_max_fds Maximum number of open file descriptors\n"
	        "# TYPE process_max_fds gauge\n"
	        "process_max_fds 1024\n"
	        "# HELP process_open_fds Number of open file descriptors\n"
	        "# TYPE process_open_fds gauge\n"
	        "process_open_fds 3\n"
	        "# HELP process_resident_memory_bytes Resident memory size in bytes\n"
	        "# TYPE process_resident_memory_bytes gauge\n"
	        "process_resident_memory_bytes %ld\n"
	        "# HELP process_start_time_seconds Start time of the process since the Unix "
	        "epoch in seconds\n"
	        "# TYPE process_start_time_seconds gauge\n"
	        "process_start_time_seconds 1.7e+09\n"
	        "# HELP process_virtual_memory_bytes Virtual memory size in bytes\n"
	        "# TYPE process_virtual_memory_bytes gauge\n"
	        "process_virtual_memory_bytes 1.23456789e+08\n",
	        300.0 / (double)ticks, 10 * page);
	assert_string_equal(text, want);
	free(text);
	tj_metrics_free(reg);

	/* The real /proc of this test process gives plausible numbers. */
	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register_process(reg, "/proc"), 0);
	text = render(reg);
	assert_null(strstr(text, "process_open_fds 0\n"));
	assert_null(strstr(text, "process_resident_memory_bytes 0\n"));
	assert_null(strstr(text, "process_start_time_seconds 0\n"));
	free(text);
	tj_metrics_free(reg);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exposition_text),
		cmocka_unit_test(test_number_format),
		cmocka_unit_test(test_register_checks),
		cmocka_unit_test(test_series_limits_and_kinds),
		cmocka_unit_test(test_remove_series),
		cmocka_unit_test(test_render_limit),
		cmocka_unit_test(test_std_families),
		cmocka_unit_test(test_std_feeders),
		cmocka_unit_test(test_series_of_a_namespace_go_with_its_last_job),
		cmocka_unit_test(test_queue_counts_queued_jobs_by_namespace_and_reason),
		cmocka_unit_test(test_progress_of_jobs_that_report),
		cmocka_unit_test(test_time_to_running),
		cmocka_unit_test(test_process_metrics),
	};
	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
