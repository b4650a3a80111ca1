/* kubectl sinfo's tables: the state of each node (down, suspect, draining, drained,
 * allocated, mixed, idle, in that precedence), the GPUs counted, and the three views, as
 * golden text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/sinfo_table.h"
#include "reconcilers/policy/suspect.h"

#define NOW 1796126400 /* 2026-12-01T12:00:00Z */

static struct tj_kv gh200_labels[] = { { "gpu", "gh200" } };
static struct tj_kv h100_labels[] = { { "gpu", "h100" } };
static struct tj_kv b200_labels[] = { { "gpu", "b200" } };
static struct tj_gpu_class classes[] = {
	{ "gh200", "nvidia.com/gpu", NULL, gh200_labels, 1, NULL, 0 },
	{ "h100", "nvidia.com/gpu", NULL, h100_labels, 1, NULL, 0 },
	{ "empty", "example.com/gpu", NULL, b200_labels, 1, NULL, 0 },
};
static struct tj_walltime_override overrides[] = {
	{ NULL, "gh200", { 0, 2 * 86400 } },
};
static struct tj_walltime_policy walltime = { .overrides = overrides, .n_overrides = 1 };
static const struct tj_config config = { .classes = classes,
	                                 .n_classes = 3,
	                                 .walltime = &walltime };

/* One node: its class's label, 4 GPUs, Ready unless said, and what makes it special. */
struct node_row {
	const char *name, *gpu;
	enum tj_condition_status ready;
	const char *ready_reason;
	bool cordoned;
	const char *taint;
	int64_t taint_time;
	const char *mark;
};

static const struct node_row node_rows[] = {
	{ "gh200-1", "gh200", TJ_COND_TRUE, NULL, false, NULL, 0, NULL },
	{ "gh200-2", "gh200", TJ_COND_TRUE, NULL, false, NULL, 0, NULL },
	{ "gh200-3", "gh200", TJ_COND_TRUE, NULL, false, NULL, 0, NULL },
	{ "gh200-4", "gh200", TJ_COND_TRUE, NULL, false, TJ_TAINT_SUSPECT, NOW - 600,
	  "2026-12-01T11:50:00Z ranks of 3 TrainJobs failed on it within 3600 s (a/j1, b/j2, "
	  "c/j3)" },
	{ "gh200-5", "gh200", TJ_COND_FALSE, "KubeletNotReady", false, NULL, 0, NULL },
	{ "gh200-6", "gh200", TJ_COND_TRUE, NULL, true, NULL, 0, NULL },
	{ "gh200-7", "gh200", TJ_COND_TRUE, NULL, false, "nvidia.com/gpu.unhealthy", NOW - 3600,
	  NULL },
	{ "gh200-8", "gh200", TJ_COND_TRUE, NULL, false, "nvidia.com/gpu.unhealthy", NOW - 3600,
	  NULL },
	{ "gh200-10", "gh200", TJ_COND_TRUE, NULL, false, NULL, 0, NULL },
	{ "h100-1", "h100", TJ_COND_UNKNOWN, "NodeStatusUnknown", false, NULL, 0, NULL },
	{ "h100-2", "h100", TJ_COND_TRUE, NULL, false, "example.com/maintenance", 0, NULL },
	{ "cpu-1", NULL, TJ_COND_TRUE, NULL, false, NULL, 0, NULL },
};
#define N_NODES (sizeof(node_rows) / sizeof(node_rows[0]))

struct pod_row {
	const char *node;
	int64_t gpus;
	enum tj_pod_phase phase;
};

static const struct pod_row pod_rows[] = {
	{ "gh200-2", 4, TJ_POD_RUNNING }, { "gh200-3", 2, TJ_POD_RUNNING },
	{ "gh200-6", 4, TJ_POD_RUNNING }, { "gh200-1", 4, TJ_POD_SUCCEEDED },
	{ "gh200-4", 1, TJ_POD_RUNNING }, { "nowhere", 4, TJ_POD_RUNNING },
	{ "cpu-1", 0, TJ_POD_RUNNING },
};
#define N_PODS (sizeof(pod_rows) / sizeof(pod_rows[0]))

struct fixture {
	struct tj_node nodes[N_NODES];
	const struct tj_node *node_ptrs[N_NODES];
	struct tj_node_condition ready[N_NODES];
	struct tj_node_taint taints[N_NODES];
	struct tj_node_label labels[N_NODES];
	struct tj_pod pods[N_PODS];
	const struct tj_pod *pod_ptrs[N_PODS];
	struct tj_sinfo info;
};

static struct fixture *build(void)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	for (size_t i = 0; i < N_NODES; i++) {
		const struct node_row *r = &node_rows[i];

		f->ready[i] = (struct tj_node_condition){ "Ready", r->ready,
			                                  (char *)r->ready_reason, NOW - 120 };
		f->taints[i] = (struct tj_node_taint){ (char *)r->taint, NULL, "NoSchedule",
			                               r->taint_time };
		f->labels[i] = (struct tj_node_label){ "gpu", (char *)r->gpu };
		f->nodes[i] = (struct tj_node){
			.name = (char *)r->name,
			.unschedulable = r->cordoned,
			.conditions = &f->ready[i],
			.n_conditions = 1,
			.taints = &f->taints[i],
			.n_taints = r->taint ? 1 : 0,
			.labels = &f->labels[i],
			.n_labels = r->gpu ? 1 : 0,
			.allocatable = { .pods = 110,
			                 .n_extended = r->gpu ? 1 : 0,
			                 .extended = { { "nvidia.com/gpu", 4 } } },
			.suspect_mark = (char *)r->mark,
		};
		f->node_ptrs[i] = &f->nodes[i];
	}
	for (size_t i = 0; i < N_PODS; i++) {
		f->pods[i] = (struct tj_pod){
			.namespace = "team-a",
			.name = "p",
			.node_name = (char *)pod_rows[i].node,
			.phase = pod_rows[i].phase,
			.requests = { .n_extended = 1,
			              .extended = { { "nvidia.com/gpu", pod_rows[i].gpus } } },
		};
		f->pod_ptrs[i] = &f->pods[i];
	}
	assert_int_equal(
	        tj_sinfo_build(&config, f->node_ptrs, N_NODES, f->pod_ptrs, N_PODS, NOW, &f->info),
	        0);
	return f;
}

static void release(struct fixture *f)
{
	tj_sinfo_clear(&f->info);
	assert_null(f->info.nodes);
	free(f);
}

static char *print(const struct fixture *f, enum tj_sinfo_view view, const char *partition)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(tj_sinfo_print(out, &f->info, view, partition), 0);
	fclose(out);
	return text;
}

struct state_case {
	const char *node;
	enum tj_sinfo_state state;
	int64_t allocated;
};

static const struct state_case states[] = {
	{ "gh200-1", TJ_SINFO_IDLE, 0 }, /* its pod has ended */
	{ "gh200-2", TJ_SINFO_ALLOCATED, 4 }, { "gh200-3", TJ_SINFO_MIXED, 2 },
	{ "gh200-4", TJ_SINFO_SUSPECT, 1 }, /* suspect wins over mixed */
	{ "gh200-5", TJ_SINFO_DOWN, 0 },      { "gh200-6", TJ_SINFO_DRAINING, 4 },
	{ "gh200-7", TJ_SINFO_DRAINED, 0 },   { "gh200-10", TJ_SINFO_IDLE, 0 },
	{ "h100-1", TJ_SINFO_DOWN, 0 },       { "h100-2", TJ_SINFO_DRAINED, 0 },
};

static void test_states(void **state)
{
	struct fixture *f = build();

	(void)state;
	/* cpu-1 is of no class: not listed. */
	assert_int_equal(f->info.n, N_NODES - 1);
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		const struct tj_sinfo_node *e = NULL;

		print_message("# case: %s\n", states[i].node);
		for (size_t j = 0; j < f->info.n; j++)
			if (strcmp(f->info.nodes[j].node->name, states[i].node) == 0)
				e = &f->info.nodes[j];
		assert_non_null(e);
		assert_string_equal(tj_sinfo_state_name(e->state),
		                    tj_sinfo_state_name(states[i].state));
		assert_int_equal(e->gpus_allocated, states[i].allocated);
		assert_int_equal(e->gpus_total, 4);
	}
	release(f);
}

static void test_summary(void **state)
{
	struct fixture *f = build();
	char *text = print(f, TJ_SINFO_SUMMARY, NULL);

	(void)state;
	assert_string_equal(text,
	                    "PARTITION AVAIL  TIMELIMIT NODES STATE     GPUS(A/I/O/T) NODELIST\n"
	                    "gh200*    up    2-00:00:00     2 idle      0/8/0/8       "
	                    "gh200-1,gh200-10\n"
	                    "gh200*    up    2-00:00:00     1 mixed     2/2/0/4       gh200-3\n"
	                    "gh200*    up    2-00:00:00     1 allocated 4/0/0/4       gh200-2\n"
	                    "gh200*    up    2-00:00:00     1 draining  4/0/0/4       gh200-6\n"
	                    "gh200*    up    2-00:00:00     2 drained   0/0/8/8       "
	                    "gh200-[7-8]\n"
	                    "gh200*    up    2-00:00:00     1 down      0/0/4/4       gh200-5\n"
	                    "gh200*    up    2-00:00:00     1 suspect   1/0/3/4       gh200-4\n"
	                    "h100      up      infinite     1 drained   0/0/4/4       h100-2\n"
	                    "h100      up      infinite     1 down      0/0/4/4       h100-1\n"
	                    "empty     up      infinite     0 n/a       0/0/0/0       \n");
	free(text);
	text = print(f, TJ_SINFO_SUMMARY, "h100");
	assert_string_equal(text, "PARTITION AVAIL TIMELIMIT NODES STATE   GPUS(A/I/O/T) NODELIST\n"
	                          "h100      up     infinite     1 drained 0/0/4/4       h100-2\n"
	                          "h100      up     infinite     1 down    0/0/4/4       h100-1\n");
	free(text);
	release(f);
}

static void test_nodes(void **state)
{
	struct fixture *f = build();
	char *text = print(f, TJ_SINFO_NODES, "gh200");

	(void)state;
	assert_string_equal(text, "NODELIST NODES PARTITION STATE     GPUS(A/I/O/T)\n"
	                          "gh200-1      1 gh200*    idle      0/4/0/4\n"
	                          "gh200-10     1 gh200*    idle      0/4/0/4\n"
	                          "gh200-2      1 gh200*    allocated 4/0/0/4\n"
	                          "gh200-3      1 gh200*    mixed     2/2/0/4\n"
	                          "gh200-4      1 gh200*    suspect   1/0/3/4\n"
	                          "gh200-5      1 gh200*    down      0/0/4/4\n"
	                          "gh200-6      1 gh200*    draining  4/0/0/4\n"
	                          "gh200-7      1 gh200*    drained   0/0/4/4\n"
	                          "gh200-8      1 gh200*    drained   0/0/4/4\n");
	free(text);
	release(f);
}

static void test_reasons(void **state)
{
	struct fixture *f = build();
	char *text = print(f, TJ_SINFO_REASONS, NULL);

	(void)state;
	assert_string_equal(text,
	                    "REASON                                                                "
	                    "      USER                TIMESTAMP           NODELIST\n"
	                    "suspect: ranks of 3 TrainJobs failed on it within 3600 s (a/j1, b/j2, "
	                    "c/j3) trainjob-controller 2026-12-01T11:50:00 gh200-4\n"
	                    "NotReady: KubeletNotReady                                             "
	                    "      kubelet             2026-12-01T11:58:00 gh200-5\n"
	                    "cordoned                                                              "
	                    "      cordon              Unknown             gh200-6\n"
	                    "GPU: taint nvidia.com/gpu.unhealthy                                   "
	                    "      gpu-health          2026-12-01T11:00:00 gh200-[7-8]\n"
	                    "Not responding: NodeStatusUnknown                                     "
	                    "      node-lifecycle      2026-12-01T11:58:00 h100-1\n"
	                    "taint example.com/maintenance:NoSchedule                              "
	                    "      taint               Unknown             h100-2\n");
	free(text);
	release(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_nodes),
		cmocka_unit_test(test_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
