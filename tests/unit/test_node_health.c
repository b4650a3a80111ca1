/* Node health: every signal, its precedence, its age against the grace period, and the
 * signals the config file lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/policy/node_health.h"

#define NOW      1795953600 /* 2026-11-29T12:00:00Z */
#define GRACE    60

#define MAX_ROWS 4

struct cond_row {
	const char *type;
	enum tj_condition_status status;
	const char *reason;
	int64_t age; /* seconds before NOW; -1: lastTransitionTime unset */
};

struct taint_row {
	const char *key;
	const char *effect;
	int64_t age; /* seconds before NOW; -1: timeAdded unset */
};

struct health_case {
	const char *name;
	bool deleted;
	bool unschedulable;
	struct cond_row conditions[MAX_ROWS];
	struct taint_row taints[MAX_ROWS];
	int64_t grace;
	/* expected */
	const char *reason;
	const char *detail;
	int64_t since_age; /* seconds before NOW; -1: since 0 (unknown) */
	bool failed;
	int64_t wait;
};

#define READY_TRUE                                                                                 \
	{                                                                                          \
		"Ready", TJ_COND_TRUE, "KubeletReady", 3600                                        \
	}
#define NO_PRESSURE                                                                                \
	{                                                                                          \
		"MemoryPressure", TJ_COND_FALSE, NULL, 3600                                        \
	}

static const struct health_case cases[] = {
	{ .name = "a ready node is healthy",
	  .conditions = { READY_TRUE, NO_PRESSURE },
	  .grace = GRACE,
	  .reason = "",
	  .detail = "",
	  .since_age = -1 },
	{ .name = "a node without a Ready condition is not judged by it",
	  .conditions = { NO_PRESSURE },
	  .grace = GRACE,
	  .reason = "",
	  .detail = "",
	  .since_age = -1 },
	{ .name = "a deleted node has failed at once",
	  .deleted = true,
	  .grace = GRACE,
	  .reason = "NodeDeleted",
	  .detail = "the node was deleted",
	  .since_age = -1,
	  .failed = true },
	{ .name = "Ready Unknown within the grace period: unreachable, not failed yet",
	  .conditions = { { "Ready", TJ_COND_UNKNOWN, "NodeStatusUnknown", 20 } },
	  .grace = GRACE,
	  .reason = "NodeUnreachable",
	  .detail = "condition Ready is Unknown (NodeStatusUnknown)",
	  .since_age = 20,
	  .wait = 40 },
	{ .name = "Ready Unknown for the whole grace period: failed",
	  .conditions = { { "Ready", TJ_COND_UNKNOWN, "NodeStatusUnknown", 60 } },
	  .grace = GRACE,
	  .reason = "NodeUnreachable",
	  .detail = "condition Ready is Unknown (NodeStatusUnknown)",
	  .since_age = 60,
	  .failed = true },
	{ .name = "Ready False: not ready, without a condition reason",
	  .conditions = { { "Ready", TJ_COND_FALSE, NULL, 61 } },
	  .grace = GRACE,
	  .reason = "NodeNotReady",
	  .detail = "condition Ready is False",
	  .since_age = 61,
	  .failed = true },
	{ .name = "the unreachable taint counts from its timeAdded",
	  .conditions = { READY_TRUE },
	  .taints = { { TJ_TAINT_UNREACHABLE, "NoExecute", 30 } },
	  .grace = GRACE,
	  .reason = "NodeUnreachable",
	  .detail = "taint node.kubernetes.io/unreachable",
	  .since_age = 30,
	  .wait = 30 },
	{ .name = "the not-ready taint without timeAdded has failed at once",
	  .taints = { { TJ_TAINT_NOT_READY, "NoSchedule", -1 } },
	  .grace = GRACE,
	  .reason = "NodeNotReady",
	  .detail = "taint node.kubernetes.io/not-ready",
	  .since_age = -1,
	  .failed = true },
	{ .name = "Unknown wins over False taints and GPU signals",
	  .conditions = { { "XidError", TJ_COND_TRUE, "Xid79", 500 },
	                  { "Ready", TJ_COND_UNKNOWN, NULL, 10 } },
	  .taints = { { TJ_TAINT_NOT_READY, "NoExecute", 400 } },
	  .grace = GRACE,
	  .reason = "NodeUnreachable",
	  .detail = "condition Ready is Unknown",
	  .since_age = 10,
	  .wait = 50 },
	{ .name = "the not-ready taint wins over a GPU condition",
	  .conditions = { READY_TRUE, { "GpuUnhealthy", TJ_COND_TRUE, NULL, 500 } },
	  .taints = { { TJ_TAINT_NOT_READY, "NoExecute", 5 } },
	  .grace = GRACE,
	  .reason = "NodeNotReady",
	  .detail = "taint node.kubernetes.io/not-ready",
	  .since_age = 5,
	  .wait = 55 },
	{ .name = "a GPU condition True: GPU unhealthy",
	  .conditions = { READY_TRUE, { "XidError", TJ_COND_TRUE, "Xid79", 90 } },
	  .grace = GRACE,
	  .reason = "GPUUnhealthy",
	  .detail = "condition XidError is True (Xid79)",
	  .since_age = 90,
	  .failed = true },
	{ .name = "a GPU condition False or Unknown is no signal",
	  .conditions = { READY_TRUE,
	                  { "XidError", TJ_COND_FALSE, NULL, 90 },
	                  { "GpuUnhealthy", TJ_COND_UNKNOWN, NULL, 90 } },
	  .grace = GRACE,
	  .reason = "",
	  .detail = "",
	  .since_age = -1 },
	{ .name = "a GPU health taint of any effect, without timeAdded: failed at once",
	  .conditions = { READY_TRUE },
	  .taints = { { "nvidia.com/gpu", "NoSchedule", -1 },
	              { "nvidia.com/gpu.unhealthy", "NoSchedule", -1 } },
	  .grace = GRACE,
	  .reason = "GPUUnhealthy",
	  .detail = "taint nvidia.com/gpu.unhealthy",
	  .since_age = -1,
	  .failed = true },
	{ .name = "a GPU health NoExecute taint counts from its timeAdded",
	  .conditions = { READY_TRUE },
	  .taints = { { "nvidia.com/gpu.xid", "NoExecute", 1 } },
	  .grace = GRACE,
	  .reason = "GPUUnhealthy",
	  .detail = "taint nvidia.com/gpu.xid",
	  .since_age = 1,
	  .wait = 59 },
	{ .name = "a plain cordon is maintenance, not a fault",
	  .unschedulable = true,
	  .conditions = { READY_TRUE, { "KernelDeadlock", TJ_COND_FALSE, NULL, 100 } },
	  .taints = { { "node.kubernetes.io/unschedulable", "NoSchedule", -1 } },
	  .grace = GRACE,
	  .reason = "",
	  .detail = "",
	  .since_age = -1 },
	{ .name = "a fault condition without a cordon is no signal",
	  .conditions = { READY_TRUE, { "KernelDeadlock", TJ_COND_TRUE, NULL, 100 } },
	  .grace = GRACE,
	  .reason = "",
	  .detail = "",
	  .since_age = -1 },
	{ .name = "a cordon with a fault condition True: cordoned for a fault",
	  .unschedulable = true,
	  .conditions = { READY_TRUE,
	                  { "ReadonlyFilesystem", TJ_COND_TRUE, "FilesystemIsReadOnly", 100 } },
	  .grace = GRACE,
	  .reason = "NodeCordonedForFault",
	  .detail = "cordoned, condition ReadonlyFilesystem is True (FilesystemIsReadOnly)",
	  .since_age = 100,
	  .failed = true },
	{ .name = "grace 0: any signal has failed at once",
	  .conditions = { { "Ready", TJ_COND_FALSE, "KubeletNotReady", 0 } },
	  .grace = 0,
	  .reason = "NodeNotReady",
	  .detail = "condition Ready is False (KubeletNotReady)",
	  .since_age = 0,
	  .failed = true },
	{ .name = "a transition time in the future (clock skew) waits the whole grace period",
	  .conditions = { { "Ready", TJ_COND_FALSE, NULL, -30 } },
	  .grace = GRACE,
	  .reason = "NodeNotReady",
	  .detail = "condition Ready is False",
	  .since_age = -30,
	  .wait = 60 },
};

static void build_node(const struct health_case *c, struct tj_node *node,
                       struct tj_node_condition *conds, struct tj_node_taint *taints)
{
	memset(node, 0, sizeof(*node));
	node->name = "gh200-1";
	node->unschedulable = c->unschedulable;
	node->conditions = conds;
	node->taints = taints;
	for (size_t i = 0; i < MAX_ROWS && c->conditions[i].type; i++) {
		const struct cond_row *r = &c->conditions[i];

		conds[i] = (struct tj_node_condition){
			.type = (char *)r->type,
			.status = r->status,
			.reason = (char *)r->reason,
			.last_transition_time = r->age == -1 ? 0 : NOW - r->age,
		};
		node->n_conditions++;
	}
	for (size_t i = 0; i < MAX_ROWS && c->taints[i].key; i++) {
		const struct taint_row *r = &c->taints[i];

		taints[i] = (struct tj_node_taint){
			.key = (char *)r->key,
			.effect = (char *)r->effect,
			.time_added = r->age == -1 ? 0 : NOW - r->age,
		};
		node->n_taints++;
	}
}

static void test_health_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct health_case *c = &cases[i];
		struct tj_node_condition conds[MAX_ROWS];
		struct tj_node_taint taints[MAX_ROWS];
		struct tj_node node;
		struct tj_node_health h;

		print_message("# case: %s\n", c->name);
		build_node(c, &node, conds, taints);
		memset(&h, 0xa5, sizeof(h));
		tj_node_health_judge(c->deleted ? NULL : &node, NULL, c->grace, NOW, &h);
		assert_string_equal(tj_node_fault_reason(h.fault), c->reason);
		assert_string_equal(h.detail, c->detail);
		assert_int_equal(h.since, c->since_age == -1 ? 0 : NOW - c->since_age);
		assert_int_equal(h.failed, c->failed);
		assert_int_equal(h.wait, c->wait);
	}
}

/* The signals come from the policy: another cluster's names replace the defaults. */
static void test_policy_signals(void **state)
{
	char *conditions[] = { "example.com/GPUBroken" };
	char *taints[] = { "example.com/gpu-bad" };
	char *cordon[] = { "DiskBroken" };
	struct tj_failure_policy policy = {
		.gpu_conditions = conditions,
		.n_gpu_conditions = 1,
		.gpu_taints = taints,
		.n_gpu_taints = 1,
		.fault_cordon_conditions = cordon,
		.n_fault_cordon_conditions = 1,
	};
	struct tj_node_condition conds[] = {
		{ "Ready", TJ_COND_TRUE, NULL, NOW - 3600 },
		{ "XidError", TJ_COND_TRUE, NULL, NOW - 3600 },
		{ "KernelDeadlock", TJ_COND_TRUE, NULL, NOW - 3600 },
		{ "example.com/GPUBroken", TJ_COND_FALSE, NULL, NOW - 3600 },
	};
	struct tj_node_taint taint = { "nvidia.com/gpu.unhealthy", NULL, "NoSchedule", 0 };
	struct tj_node node = { .name = "n",
		                .conditions = conds,
		                .n_conditions = 4,
		                .taints = &taint,
		                .n_taints = 1,
		                .unschedulable = true };
	struct tj_node_health h;

	/* The default names mean nothing under this policy. */
	tj_node_health_judge(&node, &policy, GRACE, NOW, &h);
	assert_int_equal(h.fault, TJ_NODE_HEALTHY);

	conds[3].status = TJ_COND_TRUE;
	tj_node_health_judge(&node, &policy, GRACE, NOW, &h);
	assert_int_equal(h.fault, TJ_NODE_GPU_UNHEALTHY);
	assert_string_equal(h.detail, "condition example.com/GPUBroken is True");

	conds[3].status = TJ_COND_FALSE;
	taint.key = "example.com/gpu-bad";
	tj_node_health_judge(&node, &policy, GRACE, NOW, &h);
	assert_int_equal(h.fault, TJ_NODE_GPU_UNHEALTHY);
	assert_string_equal(h.detail, "taint example.com/gpu-bad");

	taint.key = "other";
	conds[2].type = "DiskBroken";
	tj_node_health_judge(&node, &policy, GRACE, NOW, &h);
	assert_int_equal(h.fault, TJ_NODE_CORDONED_FOR_FAULT);
	assert_string_equal(h.detail, "cordoned, condition DiskBroken is True");
	assert_true(h.failed);
}

static void test_reasons(void **state)
{
	assert_string_equal(tj_node_fault_reason(TJ_NODE_HEALTHY), "");
	assert_string_equal(tj_node_fault_reason(TJ_NODE_DELETED), "NodeDeleted");
	assert_string_equal(tj_node_fault_reason(TJ_NODE_UNREACHABLE), "NodeUnreachable");
	assert_string_equal(tj_node_fault_reason(TJ_NODE_NOT_READY), "NodeNotReady");
	assert_string_equal(tj_node_fault_reason(TJ_NODE_GPU_UNHEALTHY), "GPUUnhealthy");
	assert_string_equal(tj_node_fault_reason(TJ_NODE_CORDONED_FOR_FAULT),
	                    "NodeCordonedForFault");
}

/* Whether the admission may place new pods on a node: Ready, not cordoned, healthy, and
 * every NoSchedule or NoExecute taint tolerated by the class. */
struct intake_case {
	struct health_case node; /* its name, conditions, taints and cordon */
	bool want_plain;         /* without a class (no toleration) */
	bool want_gpu;           /* a class that tolerates nvidia.com/gpu (Exists, NoSchedule) */
	bool want_any;           /* a class with a toleration of no key (Exists): every taint */
};

#define GPU_TAINT                                                                                  \
	{                                                                                          \
		"nvidia.com/gpu", "NoSchedule", 100                                                \
	}

static const struct intake_case intake_cases[] = {
	{ { .name = "ready and untainted", .conditions = { READY_TRUE } }, true, true, true },
	{ { .name = "cordoned", .unschedulable = true, .conditions = { READY_TRUE } },
	  false,
	  false,
	  false },
	{ { .name = "not ready",
	    .conditions = { { "Ready", TJ_COND_FALSE, "KubeletNotReady", 10 } } },
	  false,
	  false,
	  false },
	{ { .name = "no Ready condition yet" }, false, false, false },
	{ { .name = "a GPU taint", .conditions = { READY_TRUE }, .taints = { GPU_TAINT } },
	  false,
	  true,
	  true },
	{ { .name = "a tolerated taint beside one that is not",
	    .conditions = { READY_TRUE },
	    .taints = { GPU_TAINT, { "example.com/maintenance", "NoExecute", 100 } } },
	  false,
	  false,
	  true },
	{ { .name = "PreferNoSchedule keeps no pod off",
	    .conditions = { READY_TRUE },
	    .taints = { { "example.com/busy", "PreferNoSchedule", 100 } } },
	  true,
	  true,
	  true },
	{ { .name = "unreachable, however tolerant the class",
	    .conditions = { READY_TRUE },
	    .taints = { { "node.kubernetes.io/unreachable", "NoExecute", 100 } } },
	  false,
	  false,
	  false },
};

static void test_takes_new_pods(void **state)
{
	struct tj_toleration tol = { "nvidia.com/gpu", "Exists", NULL, "NoSchedule" };
	struct tj_toleration all = { NULL, "Exists", NULL, NULL };
	struct tj_gpu_class gpu = { .tolerations = &tol, .n_tolerations = 1 };
	struct tj_gpu_class any = { .tolerations = &all, .n_tolerations = 1 };

	for (size_t i = 0; i < sizeof(intake_cases) / sizeof(intake_cases[0]); i++) {
		const struct intake_case *c = &intake_cases[i];
		struct tj_node_condition conds[MAX_ROWS];
		struct tj_node_taint taints[MAX_ROWS];
		struct tj_node node;

		print_message("# case: %s\n", c->node.name);
		build_node(&c->node, &node, conds, taints);
		assert_int_equal(tj_node_takes_new_pods(&node, NULL, NULL, NOW), c->want_plain);
		assert_int_equal(tj_node_takes_new_pods(&node, &gpu, NULL, NOW), c->want_gpu);
		assert_int_equal(tj_node_takes_new_pods(&node, &any, NULL, NOW), c->want_any);
	}
}

static void test_pod_slots(void **state)
{
	struct tj_node node = { .name = "n" };

	assert_int_equal(tj_node_pod_slots(&node), INT64_MAX);
	node.allocatable.pods = 110;
	assert_int_equal(tj_node_pod_slots(&node), 110);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_health_table), cmocka_unit_test(test_takes_new_pods),
		cmocka_unit_test(test_pod_slots),    cmocka_unit_test(test_policy_signals),
		cmocka_unit_test(test_reasons),
	};
	return cmocka_run_group_tests_name("node_health", tests, NULL, NULL);
}
