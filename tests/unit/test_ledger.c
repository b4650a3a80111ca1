/* The admitter's ledger of holds per node (controller/admission/ledger.h): what a node's pods hold
 * and until when, counted once and again only when a pod of the node changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/admission/ledger.h"
#include "controller/admission/ledger_internal.h"

#define GPU "nvidia.com/gpu"

/* A pod of namespace ns: its name, node (bound), TrainJob (NULL: none) and owner, its
 * GPUs and millicores, phase, deletionTimestamp (NULL: none), grace, and more (JSON, may be
 * empty, starting with a comma) in its metadata. */
static void put_pod(struct tj_store *pods, const char *ns, const char *name, const char *node,
                    const char *job, int gpus, int cpu, const char *phase, const char *deleting,
                    int grace, const char *more)
{
	char text[2048];
	cJSON *obj;
	void *pod;

	snprintf(text, sizeof(text),
	         "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"u-%s\"%s%s%s%s%s"
	         "%s%s%s},"
	         "\"spec\":{\"nodeName\":\"%s\",\"terminationGracePeriodSeconds\":%d,"
	         "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"" GPU
	         "\":\"%d\",\"cpu\":\"%dm\"}}}]},\"status\":{\"phase\":\"%s\"}}",
	         ns, name, name,
	         job ? ",\"labels\":{\"trainer.kubeflow.org/trainjob-name\":\"" : "",
	         job ? job : "",
	         job ? "\"},\"ownerReferences\":[{\"controller\":true,\"uid\":\"uid-" : "",
	         job ? job : "",
	         job ? "\",\"kind\":\"TrainJob\",\"name\":\"x\",\"apiVersion\":\"v\"}]" : "",
	         deleting ? ",\"deletionTimestamp\":\"" : "", deleting ? deleting : "",
	         deleting ? "\"" : "", node, grace, gpus, cpu, phase);
	if (more && *more) {
		/* more goes into the metadata: before its closing brace */
		char *end = strstr(text, "},\"spec\"");
		char tail[2048];

		snprintf(tail, sizeof(tail), "%s", end);
		snprintf(end, sizeof(text) - (size_t)(end - text), "%s%s", more, tail);
	}
	obj = cJSON_Parse(text);
	assert_non_null(obj);
	assert_int_equal(tj_pod_project(obj, &pod), 0);
	cJSON_Delete(obj);
	assert_int_equal(tj_store_upsert(pods, pod, NULL), 0);
}

static const struct tj_pod *pod_of(const struct tj_store *pods, const char *key)
{
	const struct tj_pod *p = tj_store_get(pods, key);

	assert_non_null(p);
	return p;
}

/* Every kind of pod on one node, counted once. */
static void test_a_node_counts_what_its_pods_hold(void **state)
{
	struct tj_store *pods;
	struct tj_ledger *l;
	const struct tj_ledger_node *n;

	assert_int_equal(tj_store_new(&tj_pod_store_ops, &pods), 0);
	assert_int_equal(tj_ledger_new(&l), 0);
	/* two ranks of one TrainJob: one group, ended by the job's walltime */
	put_pod(pods, "a", "j-0", "gh-1", "j", 2, 1000, "Running", NULL, 30, NULL);
	put_pod(pods, "a", "j-1", "gh-1", "j", 2, 1000, "Running", NULL, 30, NULL);
	/* a pod being deleted: free at its deletionTimestamp */
	put_pod(pods, "b", "k-0", "gh-1", "k", 0, 500, "Running", "2026-11-29T12:05:00Z", 300,
	        NULL);
	/* a pod of no TrainJob: used, no end */
	put_pod(pods, "c", "notebook", "gh-1", NULL, 0, 250, "Running", NULL, 30, NULL);
	/* a pod that has ended holds nothing */
	put_pod(pods, "a", "done", "gh-1", "old", 4, 1000, "Succeeded", NULL, 30, NULL);
	/* a pod of another node */
	put_pod(pods, "a", "elsewhere", "gh-2", "j", 4, 1000, "Running", NULL, 30, NULL);

	n = tj_ledger_get(l, "gh-1", GPU, pods);
	assert_non_null(n);
	assert_string_equal(n->name, "gh-1");
	assert_false(n->stale);
	assert_int_equal(n->used.gpus, 4);
	assert_int_equal(n->used.cpu_milli, 2750);
	assert_int_equal(n->used.pods, 4);
	assert_int_equal(n->n_releases, 1);
	assert_int_equal(n->releases[0].at, 1795953900);
	assert_int_equal(n->releases[0].held.cpu_milli, 500);
	assert_int_equal(n->n_groups, 1);
	assert_string_equal(n->groups[0].job_key, "a/j");
	assert_string_equal(n->groups[0].owner_uid, "uid-j");
	assert_int_equal(n->groups[0].grace, 30);
	assert_int_equal(n->groups[0].held.gpus, 4);
	assert_int_equal(n->groups[0].held.pods, 2);
	assert_int_equal(n->n_usage, 1);
	assert_string_equal(n->usage[0].namespace, "a");
	assert_int_equal(n->usage[0].gpus, 4);
	assert_int_equal(n->n_holders, 0);
	/* Without a class, no GPUs count. */
	n = tj_ledger_get(l, "gh-1", NULL, pods);
	assert_int_equal(n->used.gpus, 0);
	assert_int_equal(n->used.cpu_milli, 2750);
	assert_int_equal(n->n_usage, 0);
	tj_ledger_free(l);
	tj_store_free(pods);
}

/* A node is counted again only when a pod of it was touched, or all were invalidated; a node
 * the node cache does not have is forgotten. */
static void test_a_node_is_counted_again_only_when_touched(void **state)
{
	struct tj_store *pods;
	struct tj_ledger *l;
	const struct tj_ledger_node *n;
	struct tj_ledger_node *const *order;
	size_t n_order;
	void *old = NULL;

	assert_int_equal(tj_store_new(&tj_pod_store_ops, &pods), 0);
	assert_int_equal(tj_ledger_new(&l), 0);
	put_pod(pods, "a", "p", "gh-1", NULL, 4, 1000, "Running", NULL, 30, NULL);
	n = tj_ledger_get(l, "gh-1", GPU, pods);
	assert_int_equal(n->used.gpus, 4);
	assert_non_null(tj_ledger_get(l, "gh-2", GPU, pods));
	assert_int_equal(tj_ledger_len(l), 2);

	/* The pod ends; unheard, the count stays. */
	put_pod(pods, "a", "p", "gh-1", NULL, 4, 1000, "Succeeded", NULL, 30, NULL);
	assert_int_equal(tj_ledger_get(l, "gh-1", GPU, pods)->used.gpus, 4);
	/* Heard: counted again. */
	tj_ledger_touch_pod(l, pod_of(pods, "a/p"));
	assert_true(n->stale);
	assert_int_equal(tj_ledger_get(l, "gh-1", GPU, pods)->used.gpus, 0);

	/* A pod moves from gh-1 to gh-3: both nodes it used are touched. */
	put_pod(pods, "a", "q", "gh-1", NULL, 1, 0, "Running", NULL, 30, NULL);
	tj_ledger_touch_pod(l, pod_of(pods, "a/q"));
	assert_int_equal(tj_ledger_get(l, "gh-1", GPU, pods)->used.gpus, 1);
	assert_int_equal(tj_ledger_get(l, "gh-3", GPU, pods)->used.gpus, 0);
	assert_int_equal(tj_store_delete(pods, "a/q", &old), 0);
	put_pod(pods, "a", "q", "gh-3", NULL, 1, 0, "Running", NULL, 30, NULL);
	tj_ledger_touch_pod(l, old);
	tj_ledger_touch_pod(l, pod_of(pods, "a/q"));
	tj_pod_store_ops.free(old);
	assert_int_equal(tj_ledger_get(l, "gh-1", GPU, pods)->used.gpus, 0);
	assert_int_equal(tj_ledger_get(l, "gh-3", GPU, pods)->used.gpus, 1);

	/* Invalidated: everything is counted again. */
	put_pod(pods, "a", "r", "gh-3", NULL, 2, 0, "Running", NULL, 30, NULL);
	assert_int_equal(tj_ledger_get(l, "gh-3", GPU, pods)->used.gpus, 1);
	tj_ledger_invalidate(l);
	assert_int_equal(tj_ledger_get(l, "gh-3", GPU, pods)->used.gpus, 3);

	/* Counted in another resource: counted again. */
	assert_int_equal(tj_ledger_get(l, "gh-3", "amd.com/gpu", pods)->used.gpus, 0);

	/* A read forgets the nodes the node cache does not have: here, none. */
	assert_int_equal(tj_ledger_read(l, NULL, NULL, pods, &order, &n_order), 0);
	assert_int_equal(n_order, 0);
	assert_int_equal(tj_ledger_len(l), 0);
	tj_ledger_touch_pod(l, NULL);
	tj_ledger_free(l);
	tj_store_free(pods);
	assert_null(tj_ledger_free(NULL));
}

/* A rank of job j (uid "uid-j") on node, of attempt, in phase. */
static void put_rank(struct tj_store *pods, const char *name, const char *node, int rank,
                     int attempt, const char *phase)
{
	char more[512];

	snprintf(more, sizeof(more),
	         ",\"labels\":{\"trainer.kubeflow.org/trainjob-name\":\"j\","
	         "\"" TJ_LABEL_RANK "\":\"%d\",\"" TJ_LABEL_ATTEMPT "\":\"%d\"},"
	         "\"ownerReferences\":[{\"controller\":true,\"uid\":\"uid-j\","
	         "\"kind\":\"TrainJob\",\"name\":\"j\",\"apiVersion\":\"v\"}]",
	         rank, attempt);
	put_pod(pods, "a", name, node, NULL, 4, 1000, phase, NULL, 30, more);
}

/* Whether a gang is ending is worked out from the job's pods once, and again only when one
 * of them changed (or for another attempt or uid). */
static void test_a_gang_ending_is_kept_until_a_pod_changes(void **state)
{
	struct tj_store *pods;
	struct tj_ledger *l;

	assert_int_equal(tj_store_new(&tj_pod_store_ops, &pods), 0);
	assert_int_equal(tj_ledger_new(&l), 0);
	put_rank(pods, "j-0", "gh-1", 0, 1, "Running");
	put_rank(pods, "j-1", "gh-2", 1, 1, "Running");
	assert_false(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 1));

	/* Rank 1 succeeds; unheard, the answer stays. */
	put_rank(pods, "j-1", "gh-2", 1, 1, "Succeeded");
	assert_false(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 1));
	/* Another attempt or another uid is worked out anew. */
	assert_false(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 2));
	assert_false(tj_ledger_gang_ending(l, pods, "a/j", "uid-k", 1));
	assert_true(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 1));
	/* Heard: worked out again. */
	put_rank(pods, "j-1", "gh-2", 1, 2, "Running");
	assert_true(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 1));
	tj_ledger_touch_pod(l, pod_of(pods, "a/j-1"));
	assert_false(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 1));
	/* Invalidated: worked out again. */
	put_rank(pods, "j-0", "gh-1", 0, 1, "Succeeded");
	assert_false(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 1));
	tj_ledger_invalidate(l);
	assert_true(tj_ledger_gang_ending(l, pods, "a/j", "uid-j", 1));
	/* No pod cache or no uid: not ending. */
	assert_false(tj_ledger_gang_ending(l, NULL, "a/j", "uid-j", 1));
	assert_false(tj_ledger_gang_ending(l, pods, "a/j", NULL, 1));
	assert_false(tj_ledger_gang_ending(l, pods, "a/none", "uid-j", 1));
	tj_ledger_free(l);
	tj_store_free(pods);
}

/* A pod that holds an MPI launcher's place is named for the cycle to judge. */
static void test_a_launcher_hold_is_named(void **state)
{
	struct tj_store *pods;
	struct tj_ledger *l;
	const struct tj_ledger_node *n;

	assert_int_equal(tj_store_new(&tj_pod_store_ops, &pods), 0);
	assert_int_equal(tj_ledger_new(&l), 0);
	put_pod(pods, "a", "m-0", "gh-1", "m", 4, 0, "Running", NULL, 30,
	        ",\"annotations\":{\"trainjob.flame.dev/launcher-hold\":\"x\"}");
	n = tj_ledger_get(l, "gh-1", GPU, pods);
	assert_int_equal(n->n_holders, 1);
	assert_string_equal(n->holders[0], "a/m-0");
	tj_ledger_free(l);
	tj_store_free(pods);
}

/* A Ready node of class gh (label product=gh), cordoned or not, into nodes; the ledger hears
 * of it. */
static void put_node(struct tj_ledger *l, struct tj_store *nodes, const char *name, bool cordoned)
{
	char text[512];
	void *node, *old = NULL;
	cJSON *obj;

	snprintf(text, sizeof(text),
	         "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"product\":\"gh\"}},"
	         "\"spec\":{\"unschedulable\":%s},\"status\":{\"allocatable\":{\"" GPU
	         "\":\"4\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
	         name, cordoned ? "true" : "false");
	obj = cJSON_Parse(text);
	assert_non_null(obj);
	assert_int_equal(tj_node_project(obj, &node), 0);
	cJSON_Delete(obj);
	assert_int_equal(tj_store_upsert(nodes, node, &old), 0);
	tj_ledger_node_changed(l, old, node);
	tj_node_store_ops.free(old);
}

/* The nodes are read in name order, each judged once and again only after it changed; the
 * order is made again only when a node came or went. */
static void test_nodes_are_judged_again_only_when_changed(void **state)
{
	static struct tj_kv labels[] = { { "product", "gh" } };
	static struct tj_gpu_class classes[] = {
		{ .name = "gh", .resource = GPU, .node_labels = labels, .n_node_labels = 1 },
	};
	const struct tj_config config = { .classes = classes, .n_classes = 1 };
	struct tj_store *nodes, *pods;
	struct tj_ledger *l;
	struct tj_ledger_node *const *order;
	size_t n;
	uint64_t layout, judged[2];

	assert_int_equal(tj_store_new(&tj_node_store_ops, &nodes), 0);
	assert_int_equal(tj_store_new(&tj_pod_store_ops, &pods), 0);
	assert_int_equal(tj_ledger_new(&l), 0);
	put_node(l, nodes, "gh-2", false);
	put_node(l, nodes, "gh-1", false);
	put_pod(pods, "a", "p", "gh-2", NULL, 4, 1000, "Running", NULL, 30, NULL);
	assert_int_equal(tj_ledger_read(l, &config, nodes, pods, &order, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(order[0]->name, "gh-1");
	assert_string_equal(order[1]->name, "gh-2");
	assert_int_equal(order[1]->class_index, 0);
	assert_true(order[1]->schedulable);
	assert_int_equal(order[1]->allocatable.gpus, 4);
	assert_int_equal(order[1]->used.gpus, 4);
	layout = tj_ledger_layout(l);
	judged[0] = order[0]->judged_at;
	judged[1] = order[1]->judged_at;

	/* Nothing changed: nothing judged again, the same order. */
	assert_int_equal(tj_ledger_read(l, &config, nodes, pods, &order, &n), 0);
	assert_int_equal(order[0]->judged_at, judged[0]);
	assert_int_equal(order[1]->judged_at, judged[1]);
	assert_int_equal(tj_ledger_layout(l), layout);

	/* gh-2 cordoned: judged again alone, in the same order. */
	put_node(l, nodes, "gh-2", true);
	assert_int_equal(tj_ledger_read(l, &config, nodes, pods, &order, &n), 0);
	assert_int_equal(order[0]->judged_at, judged[0]);
	assert_true(order[1]->judged_at > judged[1]);
	assert_true(order[1]->judged_at <= tj_ledger_judgements(l));
	assert_false(order[1]->schedulable);
	assert_int_equal(tj_ledger_layout(l), layout);

	/* A node comes: the order is made again. */
	put_node(l, nodes, "gh-0", false);
	assert_int_equal(tj_ledger_read(l, &config, nodes, pods, &order, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(order[0]->name, "gh-0");
	assert_true(tj_ledger_layout(l) > layout);

	/* Another config: every node judged again, here of no class. */
	const struct tj_config none = { 0 };

	assert_int_equal(tj_ledger_read(l, &none, nodes, pods, &order, &n), 0);
	assert_int_equal(order[2]->class_index, -1);
	assert_int_equal(order[2]->used.gpus, 0);
	assert_int_equal(order[2]->used.cpu_milli, 1000);
	tj_ledger_free(l);
	tj_store_free(pods);
	tj_store_free(nodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_node_counts_what_its_pods_hold),
		cmocka_unit_test(test_a_node_is_counted_again_only_when_touched),
		cmocka_unit_test(test_a_gang_ending_is_kept_until_a_pod_changes),
		cmocka_unit_test(test_a_launcher_hold_is_named),
		cmocka_unit_test(test_nodes_are_judged_again_only_when_changed),
	};

	return cmocka_run_group_tests_name("ledger", tests, NULL, NULL);
}
