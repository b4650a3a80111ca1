/* The per-namespace counters and histograms outlive their namespace's last TrainJob by the
 * grace period, then go (controller/metrics/namespace_series.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/metrics/namespace_series.h"
#include "controller/metrics/std_metrics.h"

#define GRACE 1000

struct fixture {
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	struct tj_namespace_series *t;
	struct tj_metric *families[2];
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	assert_int_equal(tj_metrics_new(&fx->reg), 0);
	assert_int_equal(tj_std_metrics_register(fx->reg, &fx->m), 0);
	assert_int_equal(tj_namespace_series_new(GRACE, &fx->t), 0);
	fx->families[0] = fx->m.trainjob_worker_restarts_total;
	fx->families[1] = fx->m.trainjob_time_to_running_seconds;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	tj_namespace_series_free(fx->t);
	tj_metrics_free(fx->reg);
	free(fx);
	return 0;
}

static char *render(struct fixture *fx)
{
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(tj_metrics_render(fx->reg, &text, &len), 0);
	return text;
}

/* Whether the text has a line starting with prefix. */
static bool has_line(const char *text, const char *prefix)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

static void sweep(struct fixture *fx, const char *const *live, size_t n, uint64_t now)
{
	assert_int_equal(tj_namespace_series_sweep(fx->t, live, n, now, fx->families, 2), 0);
}

static void count(struct fixture *fx, const char *key)
{
	tj_std_metrics_count_status(&fx->m, key, "gh200", "PodFailed", false,
	                            &(struct tj_gpu_seconds_outcomes){ 0, 0 }, 12);
}

#define RESTARTS_A "trainjob_worker_restarts_total{gpu_class=\"gh200\",namespace=\"a\""
#define RESTARTS_B "trainjob_worker_restarts_total{gpu_class=\"gh200\",namespace=\"b\""
#define RUNNING_B  "trainjob_time_to_running_seconds_count{gpu_class=\"gh200\",namespace=\"b\"}"

static void test_the_series_of_a_namespace_go_a_grace_period_after_its_last_job(void **state)
{
	struct fixture *fx = *state;
	const char *both[] = { "a", "b", "a" };
	const char *only_a[] = { "a" };
	char *text;

	count(fx, "a/x");
	count(fx, "b/y");
	sweep(fx, both, 3, 100);
	/* b's last job was seen at 100: its series stay while the grace period runs. */
	sweep(fx, only_a, 1, 200);
	sweep(fx, only_a, 1, 100 + GRACE);
	text = render(fx);
	assert_true(has_line(text, RESTARTS_B ",reason=\"PodFailed\"} 1"));
	assert_true(has_line(text, RUNNING_B " 1"));
	free(text);

	sweep(fx, only_a, 1, 101 + GRACE);
	text = render(fx);
	assert_false(has_line(text, RESTARTS_B));
	assert_false(has_line(text, "trainjob_time_to_running_seconds_bucket{gpu_class=\"gh200\","
	                            "namespace=\"b\""));
	assert_false(has_line(text, RUNNING_B));
	/* a still has its job: its series stay, however long. */
	assert_true(has_line(text, RESTARTS_A ",reason=\"PodFailed\"} 1"));
	free(text);

	/* A job in b again: its counter starts again from 0, as after a restart. */
	count(fx, "b/z");
	sweep(fx, both, 2, 5000);
	text = render(fx);
	assert_true(has_line(text, RESTARTS_B ",reason=\"PodFailed\"} 1"));
	free(text);
}

static void test_a_namespace_first_met_in_a_series_gets_the_grace_period(void **state)
{
	struct fixture *fx = *state;
	char *text;

	/* A job created and deleted between two sweeps: no sweep saw it live, but its
	 * increments are scraped before its series goes. */
	sweep(fx, NULL, 0, 100);
	count(fx, "b/short");
	sweep(fx, NULL, 0, 5000);
	text = render(fx);
	assert_true(has_line(text, RESTARTS_B ",reason=\"PodFailed\"} 1"));
	free(text);
	sweep(fx, NULL, 0, 5000 + GRACE);
	text = render(fx);
	assert_true(has_line(text, RESTARTS_B));
	free(text);
	sweep(fx, NULL, 0, 5001 + GRACE);
	text = render(fx);
	assert_false(has_line(text, RESTARTS_B));
	assert_false(has_line(text, RUNNING_B));
	free(text);
}

static void test_a_job_seen_again_restarts_the_grace_period(void **state)
{
	struct fixture *fx = *state;
	const char *only_b[] = { "b" };
	char *text;

	count(fx, "b/y");
	sweep(fx, only_b, 1, 100);
	sweep(fx, NULL, 0, 100 + GRACE);
	sweep(fx, only_b, 1, 200 + GRACE);
	sweep(fx, NULL, 0, 200 + 2 * GRACE);
	text = render(fx);
	assert_true(has_line(text, RESTARTS_B ",reason=\"PodFailed\"} 1"));
	free(text);
	sweep(fx, NULL, 0, 201 + 2 * GRACE);
	text = render(fx);
	assert_false(has_line(text, RESTARTS_B));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_the_series_of_a_namespace_go_a_grace_period_after_its_last_job, setup,
		        teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_namespace_first_met_in_a_series_gets_the_grace_period, setup,
		        teardown),
		cmocka_unit_test_setup_teardown(test_a_job_seen_again_restarts_the_grace_period,
		                                setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
