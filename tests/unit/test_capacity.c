/* What a pod holds for the admission's ledger: the node, why there, and until when, for every
 * kind of hold (reconcilers/admission/capacity.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/admission/capacity.h"

#define NOW      1795953600 /* 2026-11-29T12:00:00Z */
#define DEADLINE (NOW + 36000)

struct hold_case {
	const char *name;
	/* the pod */
	const char *node_name, *pinned_node, *nominated_node;
	enum tj_pod_phase phase;
	int64_t deletion_time;
	int32_t grace;
	int64_t job_deadline;
	/* expected */
	enum tj_hold_kind kind;
	const char *node;
	int64_t end;
};

static const struct hold_case cases[] = {
	{ .name = "a bound pod of a job with a walltime holds its node until the deadline and "
	          "its grace",
	  .node_name = "gh-1",
	  .phase = TJ_POD_RUNNING,
	  .grace = 30,
	  .job_deadline = DEADLINE,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1",
	  .end = DEADLINE + 30 },
	{ .name = "a long grace period is part of the hold",
	  .node_name = "gh-1",
	  .phase = TJ_POD_RUNNING,
	  .grace = 300,
	  .job_deadline = DEADLINE,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1",
	  .end = DEADLINE + 300 },
	{ .name = "a bound pod without a walltime holds its node for an unknown time",
	  .node_name = "gh-1",
	  .phase = TJ_POD_RUNNING,
	  .grace = 30,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1" },
	{ .name = "the binding wins over the pin",
	  .node_name = "gh-1",
	  .pinned_node = "gh-2",
	  .phase = TJ_POD_PENDING,
	  .grace = 30,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1" },
	{ .name = "a pinned pod not yet bound holds the node it was pinned to",
	  .pinned_node = "gh-2",
	  .nominated_node = "gh-3",
	  .phase = TJ_POD_PENDING,
	  .grace = 30,
	  .job_deadline = DEADLINE,
	  .kind = TJ_HOLD_PINNED,
	  .node = "gh-2",
	  .end = DEADLINE + 30 },
	{ .name = "a pod nominated by the scheduler holds that node (S2)",
	  .nominated_node = "gh-2",
	  .phase = TJ_POD_PENDING,
	  .grace = 30,
	  .kind = TJ_HOLD_NOMINATED,
	  .node = "gh-2" },
	{ .name = "a pod of a deleted job in its grace period ends at its deletion (S1)",
	  .node_name = "gh-1",
	  .phase = TJ_POD_RUNNING,
	  .deletion_time = NOW + 30,
	  .grace = 30,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1",
	  .end = NOW + 30 },
	{ .name = "a pod of a failed attempt being deleted ends at its deletion, not at the "
	          "job's deadline (S3)",
	  .node_name = "gh-1",
	  .phase = TJ_POD_RUNNING,
	  .deletion_time = NOW + 30,
	  .grace = 30,
	  .job_deadline = DEADLINE,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1",
	  .end = NOW + 30 },
	{ .name = "a nominated pod being deleted ends at its deletion",
	  .nominated_node = "gh-4",
	  .phase = TJ_POD_PENDING,
	  .deletion_time = NOW + 5,
	  .kind = TJ_HOLD_NOMINATED,
	  .node = "gh-4",
	  .end = NOW + 5 },
	{ .name = "a succeeded pod holds nothing",
	  .node_name = "gh-1",
	  .phase = TJ_POD_SUCCEEDED,
	  .grace = 30,
	  .job_deadline = DEADLINE,
	  .kind = TJ_HOLD_NONE },
	{ .name = "a failed pod being deleted holds nothing",
	  .node_name = "gh-1",
	  .phase = TJ_POD_FAILED,
	  .deletion_time = NOW + 30,
	  .kind = TJ_HOLD_NONE },
	{ .name = "a pod without a node (not scheduled, or gated) holds nothing",
	  .phase = TJ_POD_PENDING,
	  .grace = 30,
	  .job_deadline = DEADLINE,
	  .kind = TJ_HOLD_NONE },
	{ .name = "a grace of zero adds nothing",
	  .node_name = "gh-1",
	  .phase = TJ_POD_RUNNING,
	  .job_deadline = DEADLINE,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1",
	  .end = DEADLINE },
	{ .name = "a deadline at the end of time does not overflow",
	  .node_name = "gh-1",
	  .phase = TJ_POD_RUNNING,
	  .grace = 30,
	  .job_deadline = INT64_MAX - 10,
	  .kind = TJ_HOLD_BOUND,
	  .node = "gh-1",
	  .end = INT64_MAX },
};

static void test_holds(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct hold_case *c = &cases[i];
		struct tj_pod pod = {
			.namespace = "team-a",
			.name = "p",
			.node_name = (char *)c->node_name,
			.pinned_node = (char *)c->pinned_node,
			.nominated_node = (char *)c->nominated_node,
			.phase = c->phase,
			.deletion_time = c->deletion_time,
			.termination_grace = c->grace,
		};
		struct tj_hold h;

		print_message("# %s\n", c->name);
		memset(&h, 0xa5, sizeof(h));
		tj_hold_of(&pod, c->job_deadline, &h);
		assert_string_equal(tj_hold_kind_name(h.kind), tj_hold_kind_name(c->kind));
		if (c->node)
			assert_string_equal(h.node, c->node);
		else
			assert_null(h.node);
		assert_int_equal(h.end, c->end);
	}
}

struct ending_case {
	const char *name;
	enum tj_pod_phase phase;
	int rank, attempt;
	bool kept;
	const char *owner_uid;
	bool ending;
};

/* The job's uid is "uid-1", its attempt 2. */
static const struct ending_case ending_cases[] = {
	{ "a rank of the attempt that succeeded: the gang is ending", TJ_POD_SUCCEEDED, 3, 2, false,
	  "uid-1", true },
	{ "a rank still running says nothing", TJ_POD_RUNNING, 3, 2, false, "uid-1", false },
	{ "a rank that failed is replaced, the gang goes on", TJ_POD_FAILED, 3, 2, false, "uid-1",
	  false },
	{ "a rank of an earlier attempt", TJ_POD_SUCCEEDED, 3, 1, false, "uid-1", false },
	{ "a rank kept for its logs", TJ_POD_SUCCEEDED, 3, 2, true, "uid-1", false },
	{ "a step's pod (no rank): an initializer that succeeded", TJ_POD_SUCCEEDED, -1, 2, false,
	  "uid-1", false },
	{ "a pod of an earlier job of the same name", TJ_POD_SUCCEEDED, 3, 2, false, "uid-0",
	  false },
	{ "a pod with no controller owner", TJ_POD_SUCCEEDED, 3, 2, false, NULL, false },
};

static void test_gang_ending(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ending_cases) / sizeof(ending_cases[0]); i++) {
		const struct ending_case *c = &ending_cases[i];
		struct tj_pod pod = {
			.namespace = "team-a",
			.name = "p",
			.owner_uid = (char *)c->owner_uid,
			.node_name = "gh-1",
			.phase = c->phase,
			.rank = c->rank,
			.attempt = c->attempt,
			.kept = c->kept,
		};

		print_message("# %s\n", c->name);
		assert_int_equal(tj_gang_ending_pod(&pod, "uid-1", 2), c->ending);
	}
	/* A job with no uid yet owns nothing. */
	struct tj_pod pod = { .owner_uid = "uid-1", .phase = TJ_POD_SUCCEEDED, .attempt = 2 };

	assert_false(tj_gang_ending_pod(&pod, NULL, 2));
}

static void test_kind_names(void **state)
{
	(void)state;
	assert_string_equal(tj_hold_kind_name(TJ_HOLD_NONE), "none");
	assert_string_equal(tj_hold_kind_name(TJ_HOLD_BOUND), "bound");
	assert_string_equal(tj_hold_kind_name(TJ_HOLD_PINNED), "pinned");
	assert_string_equal(tj_hold_kind_name(TJ_HOLD_NOMINATED), "nominated");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_gang_ending),
		cmocka_unit_test(test_kind_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
