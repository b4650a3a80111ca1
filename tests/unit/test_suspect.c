/* Suspect nodes: which endings count, the history's annotation, the judgement of a node by
 * the failures of every node, what is done with it, and that the admission gives a suspect
 * node no new pods. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/policy/node_health.h"
#include "reconcilers/policy/suspect.h"

#define NOW    100000
#define WINDOW 3600

static int codes[] = { 134, 135, 139 };
static const struct tj_suspect_policy policy = {
	.enabled = true,
	.jobs = 3,
	.window_seconds = WINDOW,
	.exit_codes = codes,
	.n_exit_codes = 3,
};

/* ---- endings ---- */

struct ending_case {
	const char *name;
	int code;
	const char *reason;
	bool counts;
};

static const struct ending_case endings[] = {
	{ "SIGBUS counts", 135, "Error", true },
	{ "NCCL's abort counts", 134, "Error", true },
	{ "SIGSEGV counts", 139, NULL, true },
	{ "a plain non-zero exit is the job's", 1, "Error", false },
	{ "SIGKILL is not listed", 137, "Error", false },
	{ "an OOM kill is the job's memory, whatever its code", 135, "OOMKilled", false },
	{ "success", 0, "Completed", false },
};

static void test_endings(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(endings) / sizeof(endings[0]); i++) {
		print_message("# case: %s\n", endings[i].name);
		assert_int_equal(tj_suspect_ending(&policy, endings[i].code, endings[i].reason),
		                 endings[i].counts);
	}
}

struct pod_case {
	const char *name;
	enum tj_pod_phase phase;
	int64_t deletion_time;
	const char *node;
	int attempt, exit_code;
	int64_t start;
	int32_t held;
	bool counts;
	int64_t time;
	const char *pod_reason; /* status.reason */
};

static const struct pod_case pods[] = {
	{ "a failed rank with SIGBUS", TJ_POD_FAILED, 0, "gh200-1", 2, 135, NOW - 100, 40, true,
	  NOW - 60, NULL },
	{ "no finish time: now", TJ_POD_FAILED, 0, "gh200-1", 0, 135, 0, -1, true, NOW, NULL },
	{ "a pod being deleted ended at our word", TJ_POD_FAILED, NOW - 5, "gh200-1", 0, 135,
	  NOW - 100, 40, false, 0, NULL },
	{ "still running", TJ_POD_RUNNING, 0, "gh200-1", 0, 135, NOW - 100, -1, false, 0, NULL },
	{ "never bound", TJ_POD_FAILED, 0, NULL, 0, 135, 0, -1, false, 0, NULL },
	{ "no attempt label: not a rank of ours", TJ_POD_FAILED, 0, "gh200-1", -1, 135, 0, -1,
	  false, 0, NULL },
	{ "exit code 1", TJ_POD_FAILED, 0, "gh200-1", 0, 1, NOW - 100, 40, false, 0, NULL },
	{ "stopped by its kubelet at its activeDeadlineSeconds (a stall's): ours", TJ_POD_FAILED, 0,
	  "gh200-1", 0, 134, NOW - 100, 40, false, 0, "DeadlineExceeded" },
	{ "another reason of the pod does not matter", TJ_POD_FAILED, 0, "gh200-1", 2, 134,
	  NOW - 100, 40, true, NOW - 60, "Error" },
};

static void test_failure_of_pod(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
		const struct pod_case *c = &pods[i];
		struct tj_pod pod = {
			.namespace = "team-a",
			.name = "bert-node-0-1-a2",
			.trainjob = "bert",
			.node_name = (char *)c->node,
			.phase = c->phase,
			.deletion_time = c->deletion_time,
			.attempt = c->attempt,
			.rank = 1,
			.exit_code = c->exit_code,
			.exit_reason = "Error",
			.terminated = c->phase == TJ_POD_FAILED,
			.start_time = c->start,
			.held_seconds = c->held,
			.reason = (char *)c->pod_reason,
		};
		struct tj_node_failure f = { .time = -7 };

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_suspect_failure_of_pod(&policy, &pod, NOW, &f), c->counts);
		if (!c->counts) {
			assert_int_equal(f.time, -7); /* written only on success */
			continue;
		}
		assert_string_equal(f.node, c->node);
		assert_string_equal(f.job, "team-a/bert");
		assert_int_equal(f.attempt, c->attempt);
		assert_int_equal(f.exit_code, c->exit_code);
		assert_int_equal(f.time, c->time);
	}
}

static void test_pod_without_job_label(void **state)
{
	struct tj_pod pod = { .namespace = "x",
		              .name = "p",
		              .node_name = "n",
		              .attempt = 0,
		              .phase = TJ_POD_FAILED,
		              .terminated = true,
		              .exit_code = 135 };
	struct tj_node_failure f;

	(void)state;
	assert_false(tj_suspect_failure_of_pod(&policy, &pod, NOW, &f));
}

struct restart_case {
	const char *name;
	const char *cls;
	const char *node;
	int restarts; /* the count after the restart */
	bool counts;
};

static const struct restart_case restarts[] = {
	{ "a node NotReady during the run", "NodeNotReady", "gh200-1", 2, true },
	{ "an unreachable node", "NodeUnreachable", "gh200-1", 1, true },
	{ "a GPU health signal", "GPUUnhealthy", "gh200-1", 1, true },
	{ "a cordon for a fault", "NodeCordonedForFault", "gh200-1", 1, true },
	{ "a deleted node is not there to mark", "NodeDeleted", "gh200-1", 1, false },
	{ "the job's own crash is judged by its pod", "WorkerFailed", "gh200-1", 1, false },
	{ "an eviction", "Evicted", "gh200-1", 1, false },
	{ "a crash on a suspect node is already the node's", "NodeSuspect", "gh200-1", 1, false },
	{ "a pod never bound", "NodeNotReady", "", 1, false },
	{ "no restart counted", "NodeNotReady", "gh200-1", 0, false },
};

static void test_failure_of_restart(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(restarts) / sizeof(restarts[0]); i++) {
		const struct restart_case *c = &restarts[i];
		struct tj_trainjob_status st = { .restart_count = c->restarts };
		struct tj_node_failure f = { .time = -7 };

		print_message("# case: %s\n", c->name);
		snprintf(st.last_failure.node, sizeof(st.last_failure.node), "%s", c->node);
		st.last_failure.time = NOW - 30;
		st.last_failure.exit_code = 137;
		assert_int_equal(tj_suspect_failure_of_restart("team-a/bert", c->cls, &st, &f),
		                 c->counts);
		if (!c->counts) {
			assert_int_equal(f.time, -7);
			continue;
		}
		assert_string_equal(f.node, c->node);
		assert_string_equal(f.job, "team-a/bert");
		assert_int_equal(f.attempt, c->restarts - 1);
		assert_int_equal(f.exit_code, 0); /* the node's condition, not the container's */
		assert_int_equal(f.time, NOW - 30);
	}
	assert_false(tj_suspect_failure_of_restart("team-a/bert", NULL,
	                                           &(struct tj_trainjob_status){ 0 },
	                                           &(struct tj_node_failure){ 0 }));
}

/* ---- the annotation ---- */

static void test_format_and_parse(void **state)
{
	struct tj_node_failure in[2] = {
		{ "n1", "team-a/bert", 0, 135, 1000 },
		{ "n1", "team-b/gpt.x", 12, 134, 2000 },
	};
	struct tj_node_failure out[4];
	char buf[256];

	(void)state;
	assert_int_equal(tj_suspect_format(0, in, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1000:135:0:team-a/bert,2000:134:12:team-b/gpt.x");
	assert_int_equal(tj_suspect_parse("n1", buf, out, 4, NULL), 2);
	for (size_t i = 0; i < 2; i++) {
		assert_string_equal(out[i].node, "n1");
		assert_string_equal(out[i].job, in[i].job);
		assert_int_equal(out[i].attempt, in[i].attempt);
		assert_int_equal(out[i].exit_code, in[i].exit_code);
		assert_int_equal(out[i].time, in[i].time);
	}
	assert_int_equal(tj_suspect_format(0, in, 2, buf, 20), -ENOSPC);
	assert_string_equal(buf, "");
	assert_int_equal(tj_suspect_format(0, in, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(tj_suspect_format(500, in, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "cleared:500,1000:135:0:team-a/bert,2000:134:12:team-b/gpt.x");
	assert_int_equal(tj_suspect_format(500, in, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "cleared:500");
	assert_int_equal(tj_suspect_format(500, in, 0, buf, 5), -ENOSPC);
	assert_string_equal(buf, "");
}

struct parse_case {
	const char *name;
	const char *text;
	size_t max, n;
	const char *first_job; /* of out[0] */
	int64_t cleared;
};

static const struct parse_case parses[] = {
	{ "empty", "", 4, 0, NULL, 0 },
	{ "a bad entry is skipped, the rest kept", "1:135:0:a/b,x:1:1:a/c,3:135:0:a/d", 4, 2, "a/b",
	  0 },
	{ "a key with a comma's neighbour", "1:135:0:a/b,", 4, 1, "a/b", 0 },
	{ "an upper-case name is not a key", "1:135:0:A/b", 4, 0, NULL, 0 },
	{ "no slash", "1:135:0:ab", 4, 0, NULL, 0 },
	{ "two slashes", "1:135:0:a/b/c", 4, 0, NULL, 0 },
	{ "an exit code past a byte", "1:300:0:a/b", 4, 0, NULL, 0 },
	{ "a negative time", "-1:135:0:a/b", 4, 0, NULL, 0 },
	{ "a number too long", "1234567890123456789:135:0:a/b", 4, 0, NULL, 0 },
	{ "missing fields", "1:135:a/b", 4, 0, NULL, 0 },
	{ "full: the newest stay", "5:135:0:a/old,9:135:0:a/new,7:135:0:a/mid", 2, 2, "a/new", 0 },
	{ "the failures until the clear are forgotten",
	  "1:135:0:a/b,cleared:500,600:135:0:a/c,500:139:0:a/d", 4, 1, "a/c", 500 },
	{ "the latest clear counts", "cleared:500,cleared:700,600:135:0:a/c", 4, 0, NULL, 700 },
	{ "a clear that is not one", "cleared:,cleared:x,cleared:-5,1:135:0:a/b", 4, 1, "a/b", 0 },
};

static void test_parse_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
		const struct parse_case *c = &parses[i];
		struct tj_node_failure out[4];
		int64_t cleared = -1;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_suspect_parse("n", c->text, out, c->max, &cleared), c->n);
		if (c->first_job)
			assert_string_equal(out[0].job, c->first_job);
		assert_int_equal(cleared, c->cleared);
	}
	assert_int_equal(tj_suspect_parse("n", NULL, NULL, 4, NULL), 0);
}

static void test_parse_refuses_a_long_text(void **state)
{
	size_t len = TJ_SUSPECT_FAILURES_MAX + 1;
	char *text = malloc(len + 1);
	struct tj_node_failure out[1];

	(void)state;
	assert_non_null(text);
	memset(text, '1', len);
	text[len] = '\0';
	memcpy(text, "1:135:0:a/b,", 12);
	assert_int_equal(tj_suspect_parse("n", text, out, 1, NULL), 0);
	free(text);
}

/* ---- the judgement ---- */

#define F(node, job, attempt, age)                                                                 \
	{                                                                                          \
		node, job, attempt, 135, NOW - (age)                                               \
	}

struct judge_case {
	const char *name;
	struct tj_node_failure history[8];
	size_t n;
	const char *node;
	bool suspect;
	size_t n_jobs;
	const char *jobs[4];
	int64_t first, last;
};

static const struct judge_case judges[] = {
	{ "three jobs on one node",
	  { F("n1", "a/j1", 0, 300), F("n1", "b/j2", 0, 200), F("n1", "c/j3", 1, 100) },
	  3,
	  "n1",
	  true,
	  3,
	  { "a/j1", "b/j2", "c/j3" },
	  NOW - 300,
	  NOW - 100 },
	{ "named in the order they failed",
	  { F("n1", "c/j3", 0, 100), F("n1", "a/j1", 0, 300), F("n1", "b/j2", 0, 200) },
	  3,
	  "n1",
	  true,
	  3,
	  { "a/j1", "b/j2", "c/j3" },
	  NOW - 300,
	  NOW - 100 },
	{ "two jobs are not enough",
	  { F("n1", "a/j1", 0, 300), F("n1", "b/j2", 0, 200) },
	  2,
	  "n1",
	  false,
	  2,
	  { "a/j1", "b/j2" },
	  NOW - 300,
	  NOW - 200 },
	{ "one job failing three times is one job",
	  { F("n1", "a/j1", 0, 300), F("n1", "a/j1", 1, 200), F("n1", "a/j1", 2, 100) },
	  3,
	  "n1",
	  false,
	  1,
	  { "a/j1" },
	  NOW - 300,
	  NOW - 100 },
	{ "a failure older than the window does not count",
	  { F("n1", "a/j1", 0, WINDOW), F("n1", "b/j2", 0, 200), F("n1", "c/j3", 0, 100) },
	  3,
	  "n1",
	  false,
	  2,
	  { "b/j2", "c/j3" },
	  NOW - 200,
	  NOW - 100 },
	{ "failures on another node are not this node's",
	  { F("n2", "a/j1", 0, 300), F("n2", "b/j2", 0, 200), F("n2", "c/j3", 0, 100) },
	  3,
	  "n1",
	  false,
	  0,
	  { NULL },
	  0,
	  0 },
	{ "an attempt that failed on two nodes is the job's",
	  { F("n1", "a/j1", 0, 300), F("n2", "a/j1", 0, 300), F("n1", "b/j2", 0, 200),
	    F("n1", "c/j3", 0, 100) },
	  4,
	  "n1",
	  false,
	  2,
	  { "b/j2", "c/j3" },
	  NOW - 200,
	  NOW - 100 },
	{ "the same user error on every node marks none",
	  { F("n1", "a/j1", 0, 300), F("n2", "a/j1", 0, 300), F("n1", "b/j2", 0, 200),
	    F("n2", "b/j2", 0, 200), F("n1", "c/j3", 0, 100), F("n2", "c/j3", 0, 100) },
	  6,
	  "n2",
	  false,
	  0,
	  { NULL },
	  0,
	  0 },
	{ "a job that failed so on another node in another attempt is the job's",
	  { F("n1", "a/j1", 0, 300), F("n2", "a/j1", 1, 250), F("n1", "b/j2", 0, 200),
	    F("n1", "c/j3", 0, 100) },
	  4,
	  "n1",
	  false,
	  2,
	  { "b/j2", "c/j3" },
	  NOW - 200,
	  NOW - 100 },
	{ "a job that failed twice on the node alone is still one job there",
	  { F("n1", "a/j1", 0, 300), F("n1", "a/j1", 1, 250), F("n1", "b/j2", 0, 200),
	    F("n1", "c/j3", 0, 100) },
	  4,
	  "n1",
	  true,
	  3,
	  { "a/j1", "b/j2", "c/j3" },
	  NOW - 300,
	  NOW - 100 },
	{ "a failure elsewhere outside the window clears nothing",
	  { F("n1", "a/j1", 0, 300), F("n2", "a/j1", 0, WINDOW + 1), F("n1", "b/j2", 0, 200),
	    F("n1", "c/j3", 0, 100) },
	  4,
	  "n1",
	  true,
	  3,
	  { "a/j1", "b/j2", "c/j3" },
	  NOW - 300,
	  NOW - 100 },
	{ "a job of the same name in another namespace is another job",
	  { F("n1", "a/j", 0, 300), F("n1", "b/j", 0, 200), F("n1", "c/j", 0, 100) },
	  3,
	  "n1",
	  true,
	  3,
	  { "a/j", "b/j", "c/j" },
	  NOW - 300,
	  NOW - 100 },
	{ "no history", { { "", "", 0, 0, 0 } }, 0, "n1", false, 0, { NULL }, 0, 0 },
};

static void test_judge_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(judges) / sizeof(judges[0]); i++) {
		const struct judge_case *c = &judges[i];
		struct tj_suspect_verdict v;

		print_message("# case: %s\n", c->name);
		tj_suspect_judge(&policy, c->history, c->n, c->node, NOW, &v);
		assert_int_equal(v.suspect, c->suspect);
		assert_int_equal(v.n_jobs, c->n_jobs);
		for (size_t j = 0; j < c->n_jobs; j++)
			assert_string_equal(v.jobs[j], c->jobs[j]);
		assert_int_equal(v.first, c->first);
		assert_int_equal(v.last, c->last);
	}
}

static void test_judge_other_thresholds(void **state)
{
	struct tj_suspect_policy p = policy;
	struct tj_node_failure h[] = { F("n1", "a/j1", 0, 3000), F("n1", "b/j2", 0, 100) };
	struct tj_suspect_verdict v;

	(void)state;
	p.jobs = 2;
	tj_suspect_judge(&p, h, 2, "n1", NOW, &v);
	assert_true(v.suspect);
	p.window_seconds = 600;
	tj_suspect_judge(&p, h, 2, "n1", NOW, &v);
	assert_false(v.suspect);
	assert_int_equal(v.n_jobs, 1);
}

static void test_judge_names_at_most_eight(void **state)
{
	struct tj_node_failure h[10];
	struct tj_suspect_verdict v;
	char text[512];

	(void)state;
	for (int i = 0; i < 10; i++)
		h[i] = (struct tj_node_failure){ "n1", "", 0, 135, NOW - 100 + i };
	for (int i = 0; i < 10; i++)
		snprintf(h[i].job, sizeof(h[i].job), "ns/j%d", i);
	tj_suspect_judge(&policy, h, 10, "n1", NOW, &v);
	assert_true(v.suspect);
	assert_int_equal(v.n_jobs, 10);
	assert_string_equal(v.jobs[7], "ns/j7");
	tj_suspect_describe(&policy, &v, text, sizeof(text));
	assert_string_equal(text, "ranks of 10 TrainJobs failed on it within 3600 s (ns/j0, "
	                          "ns/j1, ns/j2, ns/j3, ns/j4, ns/j5, ns/j6, ns/j7, ...)");
}

static void test_describe(void **state)
{
	struct tj_node_failure h[] = { F("n1", "a/j1", 0, 300), F("n1", "b/j2", 0, 200),
		                       F("n1", "c/j3", 1, 100) };
	struct tj_suspect_verdict v;
	char text[160];

	(void)state;
	tj_suspect_judge(&policy, h, 3, "n1", NOW, &v);
	tj_suspect_describe(&policy, &v, text, sizeof(text));
	assert_string_equal(text, "ranks of 3 TrainJobs failed on it within 3600 s (a/j1, b/j2, "
	                          "c/j3)");
	tj_suspect_describe(&policy, &v, text, 30); /* cut, still a string */
	assert_int_equal(strlen(text), 29);
}

/* ---- what the node's annotation keeps ---- */

static void test_keep(void **state)
{
	struct tj_node_failure h[TJ_SUSPECT_NODE_RECORDS + 4];
	struct tj_node_failure out[TJ_SUSPECT_NODE_RECORDS];
	size_t n = 0;

	(void)state;
	h[n++] = (struct tj_node_failure)F("n1", "a/old", 0, WINDOW + 5);
	h[n++] = (struct tj_node_failure)F("n2", "a/other", 0, 10);
	/* Newest first in the history: the kept ones come out oldest first. */
	for (int i = 0; i < TJ_SUSPECT_NODE_RECORDS + 2; i++) {
		h[n] = (struct tj_node_failure)F("n1", "", 0, i + 1);
		snprintf(h[n].job, sizeof(h[n].job), "a/j%d", i);
		n++;
	}
	assert_int_equal(tj_suspect_keep(&policy, h, n, "n1", NOW, out), TJ_SUSPECT_NODE_RECORDS);
	/* The two oldest of the window (j33, j32) left; j31 is the oldest kept. */
	assert_string_equal(out[0].job, "a/j31");
	assert_string_equal(out[TJ_SUSPECT_NODE_RECORDS - 1].job, "a/j0");
	for (size_t i = 1; i < TJ_SUSPECT_NODE_RECORDS; i++)
		assert_true(out[i - 1].time <= out[i].time);
	assert_int_equal(tj_suspect_keep(&policy, h, n, "n3", NOW, out), 0);
}

/* ---- the decision ---- */

struct decide_case {
	const char *name;
	bool enabled, tainted, marked, suspect;
	enum tj_suspect_action action;
};

static const struct decide_case decisions[] = {
	{ "suspect: marked", true, false, false, true, TJ_SUSPECT_MARK },
	{ "already tainted and marked: nothing", true, true, true, true, TJ_SUSPECT_KEEP },
	{ "tainted by hand, not by us: nothing", true, true, false, true, TJ_SUSPECT_KEEP },
	{ "the operator removed the taint: forgotten", true, false, true, true, TJ_SUSPECT_FORGET },
	{ "switched off: no new mark", false, false, false, true, TJ_SUSPECT_KEEP },
	{ "switched off, taint removed: still forgotten", false, false, true, false,
	  TJ_SUSPECT_FORGET },
	{ "healthy: nothing", true, false, false, false, TJ_SUSPECT_KEEP },
};

static void test_decide_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(decisions) / sizeof(decisions[0]); i++) {
		const struct decide_case *c = &decisions[i];
		struct tj_suspect_policy p = policy;
		struct tj_suspect_verdict v = { .suspect = c->suspect };

		print_message("# case: %s\n", c->name);
		p.enabled = c->enabled;
		assert_int_equal(tj_suspect_decide(&p, c->tainted, c->marked, &v), c->action);
	}
}

/* ---- the admission ---- */

static void test_suspect_node_takes_no_new_pods(void **state)
{
	struct tj_node_condition ready = { "Ready", TJ_COND_TRUE, NULL, 0 };
	struct tj_node_taint taint = { TJ_TAINT_SUSPECT, NULL, "NoSchedule", NOW };
	struct tj_node node = { .name = "n1", .conditions = &ready, .n_conditions = 1 };
	const struct tj_config *builtin = tj_config_builtin();

	(void)state;
	for (size_t i = 0; i < builtin->n_classes; i++)
		assert_true(tj_node_takes_new_pods(&node, &builtin->classes[i], NULL, NOW));
	assert_false(tj_node_is_suspect(&node));
	node.taints = &taint;
	node.n_taints = 1;
	assert_true(tj_node_is_suspect(&node));
	for (size_t i = 0; i < builtin->n_classes; i++)
		assert_false(tj_node_takes_new_pods(&node, &builtin->classes[i], NULL, NOW));
	/* Nor is its health judged bad: the jobs running there are left alone. */
	{
		struct tj_node_health h;

		tj_node_health_judge(&node, NULL, 0, NOW, &h);
		assert_int_equal(h.fault, TJ_NODE_HEALTHY);
	}
}

static void test_defaults(void **state)
{
	const struct tj_suspect_policy *d = tj_config_suspect(NULL);

	(void)state;
	assert_true(d->enabled);
	assert_int_equal(d->jobs, 3);
	assert_int_equal(d->window_seconds, 3600);
	assert_int_equal(d->n_exit_codes, 3);
	assert_int_equal(d->exit_codes[0], 134);
	assert_int_equal(d->exit_codes[1], 135);
	assert_int_equal(d->exit_codes[2], 139);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endings),
		cmocka_unit_test(test_failure_of_pod),
		cmocka_unit_test(test_pod_without_job_label),
		cmocka_unit_test(test_failure_of_restart),
		cmocka_unit_test(test_format_and_parse),
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_refuses_a_long_text),
		cmocka_unit_test(test_judge_table),
		cmocka_unit_test(test_judge_other_thresholds),
		cmocka_unit_test(test_judge_names_at_most_eight),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_keep),
		cmocka_unit_test(test_decide_table),
		cmocka_unit_test(test_suspect_node_takes_no_new_pods),
		cmocka_unit_test(test_defaults),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
