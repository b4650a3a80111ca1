#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "reconcilers/plan/plan.h"
#include "reconcilers/usage/gpu_seconds.h"

#include "fixtures.h"

#define NOW      1795953600 /* 2026-11-29T12:00:00Z */
#define MAX_PODS 4
#define OPEN     -1

/* A pod of the table: its GPUs, when it started (seconds before NOW, 0: never), how long it
 * held them (OPEN: still does), whether it is being deleted or the plan deletes it. */
struct pod_row {
	const char *name;
	int64_t gpus;
	int64_t started_ago;
	int32_t held;
	bool deleting, plan_deletes;
	const char *resource; /* NULL: nvidia.com/gpu */
	int attempt;
};

struct count_case {
	const char *name;
	struct pod_row pods[MAX_PODS];
	size_t n_pods;
	bool gang;
	const char *resource;
	/* The old status's counts and mark (seconds before NOW, -1: unset), its state and
	 * restart count. */
	int64_t old_total, old_wasted, old_until_ago;
	enum tj_state old_state, new_state;
	int old_restarts, new_restarts;
	const char *failed_pod; /* the new status's lastFailure.pod */
	bool other_change;      /* the plan changes the status otherwise */
	struct {
		int64_t total, wasted, until_ago; /* until_ago -1: unset */
		bool first;
	} want;
};

static const struct count_case count_cases[] = {
	{ .name = "a running pod is counted from its start with the plan's patch",
	  .pods = { { "a-0", 4, 100, OPEN } },
	  .n_pods = 1,
	  .gang = true,
	  .old_until_ago = -1,
	  .old_state = TJ_STATE_PENDING,
	  .new_state = TJ_STATE_RUNNING,
	  .other_change = true,
	  .want = { 400, 0, 0, false } },
	{ .name = "nothing else changes: the counts wait, the window grows",
	  .pods = { { "a-0", 4, 100, OPEN } },
	  .n_pods = 1,
	  .gang = true,
	  .old_total = 200,
	  .old_until_ago = 50,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_RUNNING,
	  .want = { 200, 0, 50, false } },
	{ .name = "only the seconds after the mark are added",
	  .pods = { { "a-0", 4, 100, OPEN }, { "a-1", 4, 100, 70 } },
	  .n_pods = 2,
	  .gang = true,
	  .old_total = 400,
	  .old_until_ago = 50,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_RUNNING,
	  .other_change = true,
	  /* a-0: 50 s x 4; a-1 stopped 30 s ago: 20 s x 4 */
	  .want = { 680, 0, 0, false } },
	{ .name = "a pod being deleted by someone else forces the write before it vanishes",
	  .pods = { { "a-0", 4, 100, 90, true } },
	  .n_pods = 1,
	  .gang = true,
	  .old_total = 200,
	  .old_until_ago = 50,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_RUNNING,
	  .want = { 360, 0, 0, false } },
	{ .name = "a pod deleted before the mark forces nothing",
	  .pods = { { "a-0", 4, 100, 20, true } },
	  .n_pods = 1,
	  .gang = true,
	  .old_total = 320,
	  .old_until_ago = 50,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_RUNNING,
	  .want = { 320, 0, 50, false } },
	{ .name = "a pod the plan deletes is counted, and the status goes first",
	  .pods = { { "a-0", 4, 100, OPEN, false, true } },
	  .n_pods = 1,
	  .gang = true,
	  .old_total = 200,
	  .old_until_ago = 50,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_RUNNING,
	  .want = { 400, 0, 0, true } },
	{ .name = "Gang restart: every second so far was spent in failed attempts",
	  .pods = { { "a-0", 4, 100, 60 }, { "a-1", 4, 100, OPEN, false, true } },
	  .n_pods = 2,
	  .gang = true,
	  .old_total = 1000, /* an earlier attempt and 50 s of each pod */
	  .old_until_ago = 50,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_RESTARTING,
	  .new_restarts = 1,
	  .failed_pod = "a-0",
	  .other_change = true,
	  .want = { 1240, 1240, 0, true } },
	{ .name = "after a Gang restart, the failed attempt's pods waste what they hold as they "
	          "stop",
	  .pods = { { "a-0", 4, 100, 95, true, false, NULL, 0 },
	            { "b-0", 4, 3, OPEN, false, false, NULL, 1 } },
	  .n_pods = 2,
	  .gang = true,
	  .old_total = 1000,
	  .old_wasted = 1000,
	  .old_until_ago = 10,
	  .old_state = TJ_STATE_RESTARTING,
	  .new_state = TJ_STATE_RESTARTING,
	  .old_restarts = 1,
	  .new_restarts = 1,
	  /* a-0 stopped 5 s ago: 5 s x 4 past the mark, wasted; b-0's 3 s x 4 are not */
	  .want = { 1032, 1020, 0, false } },
	{ .name = "Worker restart: only the failed pod's own seconds are wasted",
	  .pods = { { "a-0", 4, 300, 200 }, { "a-1", 4, 300, OPEN } },
	  .n_pods = 2,
	  .gang = false,
	  .old_total = 1600,
	  .old_wasted = 100,
	  .old_until_ago = 100,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_RESTARTING,
	  .old_restarts = 1,
	  .new_restarts = 2,
	  .failed_pod = "a-0",
	  .other_change = true,
	  .want = { 2000, 900, 0, false } },
	{ .name = "a Failed job wasted all it held",
	  .pods = { { "a-0", 8, 10, 5 } },
	  .n_pods = 1,
	  .gang = true,
	  .old_total = 0,
	  .old_until_ago = -1,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_FAILED,
	  .other_change = true,
	  .want = { 40, 40, 0, false } },
	{ .name = "a Complete job's pods counted to their end, nothing wasted",
	  .pods = { { "a-0", 4, 600, 500 }, { "a-1", 4, 600, 510 } },
	  .n_pods = 2,
	  .gang = true,
	  .old_total = 2000,
	  .old_wasted = 300,
	  .old_until_ago = 300,
	  .old_state = TJ_STATE_RUNNING,
	  .new_state = TJ_STATE_COMPLETE,
	  .other_change = true,
	  /* a-0 to 100 s ago, a-1 to 90 s ago: 200 + 210 s past the mark, x 4 */
	  .want = { 3640, 300, 0, false } },
	{ .name = "pods that never started, or hold no GPU, count nothing and move no mark",
	  .pods = { { "a-0", 4, 0, OPEN }, { "a-1", 0, 100, OPEN } },
	  .n_pods = 2,
	  .gang = true,
	  .old_until_ago = -1,
	  .old_state = TJ_STATE_PENDING,
	  .new_state = TJ_STATE_PENDING,
	  .other_change = true,
	  .want = { 0, 0, -1, false } },
	{ .name = "the class's resource is counted, other extended resources are not",
	  .pods = { { "a-0", 8, 100, OPEN, false, false, "amd.com/gpu" }, { "a-1", 4, 100, OPEN } },
	  .n_pods = 2,
	  .gang = true,
	  .resource = "amd.com/gpu",
	  .old_until_ago = -1,
	  .old_state = TJ_STATE_PENDING,
	  .new_state = TJ_STATE_RUNNING,
	  .other_change = true,
	  .want = { 800, 0, 0, false } },
};

static void build_pods(const struct pod_row *rows, size_t n, struct tj_pod *pods,
                       const struct tj_pod **ptrs, bool *deletes)
{
	for (size_t i = 0; i < n; i++) {
		const struct pod_row *row = &rows[i];

		pods[i] = (struct tj_pod){
			.name = (char *)row->name,
			.start_time = row->started_ago ? NOW - row->started_ago : 0,
			.held_seconds = row->started_ago ? row->held : -1,
			.deletion_time = row->deleting ? NOW + 30 : 0,
			.phase = TJ_POD_RUNNING,
			.attempt = row->attempt,
		};
		if (row->gpus) {
			pods[i].requests.n_extended = 1;
			pods[i].requests.extended[0] = (struct tj_extended_resource){
				row->resource ? row->resource : "nvidia.com/gpu", row->gpus
			};
		}
		ptrs[i] = &pods[i];
		deletes[i] = row->plan_deletes;
	}
}

static void test_count(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(count_cases) / sizeof(count_cases[0]); i++) {
		const struct count_case *c = &count_cases[i];
		struct tj_pod pods[MAX_PODS];
		const struct tj_pod *ptrs[MAX_PODS];
		bool deletes[MAX_PODS];
		struct tj_trainjob_status old = {
			.state = c->old_state,
			.restart_count = c->old_restarts,
			.last_failure = { .rank = -1, .exit_code = -1 },
			.gpu_seconds = c->old_total,
			.wasted_gpu_seconds = c->old_wasted,
			.gpu_seconds_until = c->old_until_ago < 0 ? 0 : NOW - c->old_until_ago
		};
		struct tj_trainjob_status st = old;
		bool first;

		print_message("# case: %s\n", c->name);
		build_pods(c->pods, c->n_pods, pods, ptrs, deletes);
		st.state = c->new_state;
		st.restart_count = c->new_restarts;
		if (c->failed_pod) {
			st.last_failure.rank = 0;
			snprintf(st.last_failure.pod, sizeof(st.last_failure.pod), "%s",
			         c->failed_pod);
		}
		if (c->other_change)
			snprintf(st.message, sizeof(st.message), "changed");
		first = tj_gpu_seconds_count(
		        &(struct tj_gpu_seconds_input){ .old = &old,
		                                        .pods = ptrs,
		                                        .n_pods = c->n_pods,
		                                        .deletes = deletes,
		                                        .resource = c->resource,
		                                        .gang = c->gang,
		                                        .now = NOW },
		        &st);
		assert_int_equal(st.gpu_seconds, c->want.total);
		assert_int_equal(st.wasted_gpu_seconds, c->want.wasted);
		assert_int_equal(st.gpu_seconds_until,
		                 c->want.until_ago < 0 ? 0 : NOW - c->want.until_ago);
		assert_int_equal(first, c->want.first);
		/* The rest of the status is the plan's. */
		assert_int_equal(st.state, c->new_state);
		assert_int_equal(st.restart_count, c->new_restarts);
	}
}

/* Counting twice from the status the first count wrote adds nothing: a plan made again
 * (a retry, a new leader) starts from the patched status. */
static void test_count_is_idempotent(void **state)
{
	struct pod_row rows[] = { { "a-0", 4, 100, OPEN, false, false, NULL, 0 },
		                  { "a-1", 4, 100, 40, true, false, NULL, 0 } };
	struct tj_pod pods[2];
	const struct tj_pod *ptrs[2];
	bool deletes[2];
	struct tj_trainjob_status old = { .state = TJ_STATE_RUNNING,
		                          .last_failure = { .rank = -1 } };
	struct tj_trainjob_status st = old, again;
	struct tj_gpu_seconds_input in = {
		.old = &old, .pods = ptrs, .n_pods = 2, .deletes = deletes, .gang = true, .now = NOW
	};

	(void)state;
	build_pods(rows, 2, pods, ptrs, deletes);
	tj_gpu_seconds_count(&in, &st);
	assert_int_equal(st.gpu_seconds, 400 + 160);
	again = st;
	in.old = &st;
	tj_gpu_seconds_count(&in, &again);
	assert_true(tj_trainjob_status_equal(&again, &st));
	/* Ten seconds later, with a status change: only a-0's ten seconds. */
	snprintf(again.message, sizeof(again.message), "later");
	in.now = NOW + 10;
	tj_gpu_seconds_count(&in, &again);
	assert_int_equal(again.gpu_seconds, 560 + 40);
	assert_int_equal(again.gpu_seconds_until, NOW + 10);
}

struct outcome_case {
	const char *name;
	enum tj_state old_state, new_state;
	int64_t old_total, old_wasted, new_total, new_wasted;
	int64_t want_succeeded, want_wasted;
};

static const struct outcome_case outcome_cases[] = {
	{ "running: nothing is decided yet", TJ_STATE_RUNNING, TJ_STATE_RUNNING, 100, 0, 300, 0, 0,
	  0 },
	{ "a restart wastes its attempt", TJ_STATE_RUNNING, TJ_STATE_RESTARTING, 100, 0, 300, 300,
	  0, 300 },
	{ "complete: the seconds that were not wasted", TJ_STATE_RUNNING, TJ_STATE_COMPLETE, 500,
	  300, 900, 300, 600, 0 },
	{ "complete again: only what was added since", TJ_STATE_COMPLETE, TJ_STATE_COMPLETE, 900,
	  300, 904, 300, 4, 0 },
	{ "failed: the rest is wasted", TJ_STATE_RUNNING, TJ_STATE_FAILED, 500, 300, 600, 600, 0,
	  300 },
	{ "unchanged", TJ_STATE_COMPLETE, TJ_STATE_COMPLETE, 900, 300, 900, 300, 0, 0 },
};

static void test_outcomes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(outcome_cases) / sizeof(outcome_cases[0]); i++) {
		const struct outcome_case *c = &outcome_cases[i];
		struct tj_trainjob_status old = { .state = c->old_state,
			                          .gpu_seconds = c->old_total,
			                          .wasted_gpu_seconds = c->old_wasted };
		struct tj_trainjob_status st = { .state = c->new_state,
			                         .gpu_seconds = c->new_total,
			                         .wasted_gpu_seconds = c->new_wasted };
		struct tj_gpu_seconds_outcomes o;

		print_message("# case: %s\n", c->name);
		tj_gpu_seconds_outcomes(&old, &st, &o);
		assert_int_equal(o.succeeded, c->want_succeeded);
		assert_int_equal(o.wasted, c->want_wasted);
	}
}

static void test_cancelled(void **state)
{
	struct pod_row rows[] = { { "a-0", 4, 100, OPEN, false, false, NULL, 0 } };
	struct tj_pod pods[1];
	const struct tj_pod *ptrs[1];
	bool deletes[1];
	struct tj_trainjob_status old = { .state = TJ_STATE_RUNNING,
		                          .gpu_seconds = 1000,
		                          .wasted_gpu_seconds = 600,
		                          .gpu_seconds_until = NOW - 50 };
	struct tj_gpu_seconds_input in = { .old = &old, .pods = ptrs, .n_pods = 1, .now = NOW };

	(void)state;
	build_pods(rows, 1, pods, ptrs, deletes);
	assert_int_equal(tj_gpu_seconds_cancelled(&in), 1000 + 200 - 600);
	old.state = TJ_STATE_COMPLETE;
	assert_int_equal(tj_gpu_seconds_cancelled(&in), 0);
	old.state = TJ_STATE_FAILED;
	assert_int_equal(tj_gpu_seconds_cancelled(&in), 0);
}

/* Through the planner: a Gang restart of a 2-node job records the seconds of the failed
 * attempt, all wasted, in the status patch of stage 0, before its pods are deleted. */
static void test_plan_records_before_deleting(void **state)
{
	struct tj_runtime *rt = make_runtime("torch-gh200");
	struct tj_trainjob *job = NULL;
	struct tj_plan *plan = NULL;
	struct tj_pod pods[2];
	const struct tj_pod *ptrs[2] = { &pods[0], &pods[1] };
	const cJSON *status;
	cJSON *j = jlit("{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
	                "'metadata':{'name':'vit','namespace':'team-a','uid':'uid-vit',"
	                "'resourceVersion':'42','generation':1,"
	                "'creationTimestamp':'2026-11-29T10:00:00Z'},"
	                "'spec':{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2,"
	                "'resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}}},"
	                "'status':{'state':'Running','reason':'AllPodsRunning','restartCount':0,"
	                "'startTime':'2026-11-29T11:00:00Z','gpuSeconds':28800,"
	                "'gpuSecondsCountedUntil':'2026-11-29T11:00:00Z'}}");

	(void)state;
	assert_int_equal(tj_trainjob_from_json(j, &job), 0);
	cJSON_Delete(j);
	assert_int_equal(job->status.gpu_seconds, 28800);
	for (int r = 0; r < 2; r++) {
		pods[r] = (struct tj_pod){
			.namespace = "team-a",
			.name = r ? "vit-node-0-1-a0" : "vit-node-0-0-a0",
			.uid = r ? "u1" : "u0",
			.owner_uid = "uid-vit",
			.trainjob = "vit",
			.rank = r,
			.attempt = 0,
			.node_name = r ? "gh200-2" : "gh200-1",
			.phase = r ? TJ_POD_RUNNING : TJ_POD_FAILED,
			.ready = r != 0,
			.terminated = r == 0,
			.exit_code = r ? 0 : 1,
			.exit_reason = r ? NULL : "Error",
			.start_time = NOW - 3600,
			/* rank 0 failed 10 minutes ago */
			.held_seconds = r ? -1 : 3000,
			.requests = { .n_extended = 1, .extended = { { "nvidia.com/gpu", 4 } } },
		};
	}
	assert_int_equal(tj_plan_trainjob(&(struct tj_plan_input){ .job = job,
	                                                           .runtime = rt,
	                                                           .config = &test_config,
	                                                           .pods = ptrs,
	                                                           .n_pods = 2,
	                                                           .now = NOW },
	                                  &plan),
	                 0);
	assert_true(plan->n_actions >= 3);
	assert_int_equal(plan->actions[0].kind, TJ_ACTION_PATCH_STATUS);
	assert_int_equal(plan->actions[0].stage, 0);
	status = cJSON_GetObjectItem(plan->actions[0].object, "status");
	/* 28800 before 11:00, then 3000 s x 4 for rank 0 and 3600 s x 4 for rank 1. */
	assert_int_equal(cJSON_GetObjectItem(status, "gpuSeconds")->valuedouble, 55200);
	assert_int_equal(cJSON_GetObjectItem(status, "wastedGpuSeconds")->valuedouble, 55200);
	assert_string_equal(cJSON_GetObjectItem(status, "gpuSecondsCountedUntil")->valuestring,
	                    "2026-11-29T12:00:00Z");
	assert_int_equal(cJSON_GetObjectItem(status, "restartCount")->valuedouble, 1);
	for (size_t i = 1; i < plan->n_actions; i++)
		if (plan->actions[i].kind == TJ_ACTION_DELETE_POD)
			assert_int_equal(plan->actions[i].stage, 1);
	tj_plan_free(plan);
	tj_trainjob_free(job);
	tj_runtime_free(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_count_is_idempotent),
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_cancelled),
		cmocka_unit_test(test_plan_records_before_deleting),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
