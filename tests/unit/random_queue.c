/* A random cluster and queue for the admission's property tests (random_queue.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "random_queue.h"

#define GIB (1024LL * 1024 * 1024)

static const char *const class_names[] = { "gh200", "h100" };
static const char *const domains[] = { "rack-a", "rack-b", "rack-c" };
static const char *const namespaces[] = { "team-a", "team-b", "team-c", "team-d" };

int64_t tj_random_pick(struct tj_random_queue *q, int64_t lo, int64_t hi)
{
	q->state ^= q->state << 13;
	q->state ^= q->state >> 7;
	q->state ^= q->state << 17;
	return lo + (int64_t)(q->state % (uint64_t)(hi - lo + 1));
}

static bool chance(struct tj_random_queue *q, int percent)
{
	return tj_random_pick(q, 1, 100) <= percent;
}

/* A node's allocatable: 4 or 8 GPUs, or none for the nodes without a class. */
static struct tj_admission_resources offer(struct tj_random_queue *q, int cls)
{
	int64_t gpus = cls < 0 ? 0 : chance(q, 70) ? 4 : 8;

	return (struct tj_admission_resources){ gpus, 72000, 480 * GIB,
		                                chance(q, 20) ? tj_random_pick(q, 2, 6) : 110 };
}

/* What a pod of g GPUs asks (1 pod slot, most of the time). */
static struct tj_admission_resources pod_of(struct tj_random_queue *q, int64_t g)
{
	int64_t share = g > 0 ? g : 1;

	return (struct tj_admission_resources){ g, share * 16000, share * 100 * GIB,
		                                chance(q, 90) ? 1 : 0 };
}

static void build_nodes(struct tj_random_queue *q, size_t n)
{
	int n_domains = (int)tj_random_pick(q, 0, 3);

	for (size_t i = 0; i < n; i++) {
		struct tj_admission_node *node = &q->nodes[i];
		int cls = (int)tj_random_pick(q, -1, (int64_t)q->in.n_classes - 1);
		int64_t used_gpus;

		snprintf(q->node_names[i], TJ_RANDOM_LABEL, "node-%02zu", i);
		*node = (struct tj_admission_node){
			.name = q->node_names[i],
			.class_index = cls,
			.domain = n_domains ? domains[tj_random_pick(q, 0, n_domains - 1)] : NULL,
			.schedulable = chance(q, 92),
			.allocatable = offer(q, cls),
		};
		if (chance(q, 35))
			continue;
		used_gpus = tj_random_pick(q, 0, node->allocatable.gpus);
		node->used =
		        (struct tj_admission_resources){ used_gpus, used_gpus * 16000,
			                                 used_gpus * 100 * GIB, used_gpus ? 1 : 0 };
		if (chance(q, 75))
			q->releases[q->in.n_releases++] = (struct tj_admission_release){
				.node = i,
				.at = TJ_RANDOM_NOW + tj_random_pick(q, -5, 3600),
				.resources = node->used,
			};
	}
}

/* Running gangs of tiers 0 and 10 on nodes of their class, what they hold added to what
 * those nodes use. */
static void build_running(struct tj_random_queue *q)
{
	size_t n = (size_t)tj_random_pick(q, 0, TJ_RANDOM_RUNNING);

	for (size_t v = 0; v < n; v++) {
		struct tj_admission_running *g = &q->running[q->in.n_running];
		size_t n_holds = 0;
		int cls = (int)tj_random_pick(q, 0, (int64_t)q->in.n_classes - 1);

		for (size_t i = 0; i < q->in.n_nodes && n_holds < 3; i++) {
			struct tj_admission_node *node = &q->nodes[i];
			int64_t g_free = node->allocatable.gpus - node->used.gpus;

			if (node->class_index != cls || g_free <= 0 || chance(q, 50))
				continue;
			q->holds[q->in.n_running][n_holds++] =
			        (struct tj_admission_hold){ i, { g_free, 0, 0, 1 } };
			node->used.gpus += g_free;
			node->used.pods += 1;
		}
		if (!n_holds)
			continue;
		snprintf(q->running_keys[q->in.n_running], TJ_RANDOM_LABEL, "team-z/run-%zu", v);
		bool high = chance(q, 30);
		*g = (struct tj_admission_running){
			.key = q->running_keys[q->in.n_running],
			.class_index = cls,
			.tier = high ? 10 : 0,
			.qos = high ? 1 : 0,
			.start = TJ_RANDOM_NOW - tj_random_pick(q, 10, 7200),
			.grace = tj_random_pick(q, 0, 120),
			.holds = q->holds[q->in.n_running],
			.n_holds = n_holds,
		};
		q->in.n_running++;
	}
}

static void build_limits(struct tj_random_queue *q)
{
	if (chance(q, 30)) {
		q->quotas[0] = (struct tj_admission_quota){ "*", 0, tj_random_pick(q, 4, 40) };
		q->quotas[1] = (struct tj_admission_quota){ "team-b", 0, tj_random_pick(q, 0, 16) };
		q->config.quotas = q->quotas;
		q->config.n_quotas = 2;
		q->usage[0] = (struct tj_admission_usage){ "team-a", 0, tj_random_pick(q, 0, 8) };
		q->usage[1] = (struct tj_admission_usage){ "team-b", 0, tj_random_pick(q, 0, 8) };
		q->in.usage = q->usage;
		q->in.n_usage = 2;
	}
	if (chance(q, 30)) {
		for (size_t i = 0; i < 2; i++)
			q->quota_limits[i] = (struct tj_admission_quota_limit){
				namespaces[i], "gpus", "requests.nvidia.com/gpu",
				tj_random_pick(q, 4, 48) * 1000, tj_random_pick(q, 0, 8) * 1000
			};
		q->in.quota_limits = q->quota_limits;
		q->in.n_quota_limits = 2;
	}
	if (chance(q, 30)) {
		for (size_t i = 0; i < 2; i++)
			q->tier_limits[i] =
			        (struct tj_admission_tier_limit){ namespaces[2 + i], "normal",
				                                  tj_random_pick(q, 4, 40),
				                                  tj_random_pick(q, 0, 8) };
		q->in.tier_limits = q->tier_limits;
		q->in.n_tier_limits = 2;
	}
}

/* A node of class cls (SIZE_MAX: none). */
static size_t node_of_class(struct tj_random_queue *q, int cls)
{
	size_t start = (size_t)tj_random_pick(q, 0, (int64_t)q->in.n_nodes - 1);

	for (size_t k = 0; k < q->in.n_nodes; k++) {
		size_t i = (start + k) % q->in.n_nodes;

		if (q->nodes[i].class_index == cls)
			return i;
	}
	return SIZE_MAX;
}

static void build_job(struct tj_random_queue *q, size_t j)
{
	static const int64_t gpus[] = { 1, 2, 4, 4 };
	struct tj_admission_job *job = &q->jobs[j];
	const char *ns = namespaces[tj_random_pick(q, 0, 3)];
	int cls = (int)tj_random_pick(q, -1, (int64_t)q->in.n_classes - 1);
	int64_t g = cls < 0 ? 0 : q->uniform ? 4 : gpus[tj_random_pick(q, 0, 3)];
	bool high = chance(q, 15);
	int most_nodes = q->uniform ? 2 : chance(q, 10) ? 12 : 4;

	snprintf(q->job_keys[j], TJ_RANDOM_LABEL, "%s/job-%02zu", ns, j);
	*job = (struct tj_admission_job){
		.key = q->job_keys[j],
		.namespace = ns,
		.class_index = cls,
		.num_nodes = (int)tj_random_pick(q, 1, most_nodes),
		.request = pod_of(q, g),
		.tier = high ? 10 : 0,
		.fair_share = (int)tj_random_pick(q, 0, 3) * 2500,
		.priority = chance(q, 20) ? (int32_t)tj_random_pick(q, -10, 10) : 0,
		.creation_time = TJ_RANDOM_NOW - tj_random_pick(q, 0, 10 * 86400),
		.walltime = chance(q, 80) ? tj_random_pick(q, 20, chance(q, 50) ? 900 : 7200) : 0,
		.grace = chance(q, 50) ? tj_random_pick(q, 0, 60) : 0,
		.restart = chance(q, 5),
		.preempts = high && chance(q, 60) ? 1u : 0,
		.preempt_after = tj_random_pick(q, 0, 1800),
	};
	job->backfill_reserved_nodes = !high && chance(q, 30);
	job->num_pods = job->restart ? (int)tj_random_pick(q, 1, job->num_nodes) : job->num_nodes;
	/* A restart in its backoff, or one whose backoff has just ended. */
	if (job->restart && chance(q, 50))
		job->not_before = TJ_RANDOM_NOW + tj_random_pick(q, -5, 300);
	if (chance(q, 8))
		job->launcher = pod_of(q, chance(q, 50) ? 1 : 0);
	if (chance(q, 10)) {
		for (size_t k = 0; k < 2; k++) {
			size_t i = node_of_class(q, cls);

			if (i != SIZE_MAX)
				q->excluded[j][job->n_excluded++] = i;
		}
		job->excluded = q->excluded[j];
	}
	if (chance(q, 15)) {
		job->eligible = q->eligible[tj_random_pick(q, 0, TJ_RANDOM_ELIGIBLE - 1)];
		job->ineligible_why = "node(s) didn't match Pod's node affinity/selector";
	}
	if (q->in.n_quota_limits && chance(q, 50)) {
		size_t l = (size_t)tj_random_pick(q, 0, 1);
		int64_t per = (g > 0 ? g : 0) * 1000;

		q->charges[j] = (struct tj_admission_quota_charge){ l, per * job->num_pods,
			                                            per * job->num_nodes };
		job->charges = &q->charges[j];
		job->n_charges = 1;
	}
	if (q->in.n_tier_limits && (strcmp(ns, "team-c") == 0 || strcmp(ns, "team-d") == 0))
		job->tier_limit = strcmp(ns, "team-c") == 0 ? 1 : 2;
	/* Its victims on their way out, on the nodes it claimed then. */
	if (job->preempts && job->launcher.pods == 0 && chance(q, 30)) {
		job->preempting = true;
		if (chance(q, 70) && job->num_pods <= 4) {
			for (int p = 0; p < job->num_pods; p++) {
				size_t i = node_of_class(q, cls);

				if (i == SIZE_MAX)
					break;
				q->claimed[j][job->n_claimed++] = i;
			}
			job->claimed = q->claimed[j];
		}
	}
}

void tj_random_queue_build(struct tj_random_queue *q, uint64_t seed)
{
	memset(q, 0, sizeof(*q));
	q->state = seed * 0x9e3779b97f4a7c15ULL;
	tj_random_pick(q, 0, 1);
	q->uniform = chance(q, 40);
	q->config = (struct tj_admission_config){
		.backfill = chance(q, 85),
		.wait_if_never_fits = chance(q, 50),
		.defer_waiting_messages = chance(q, 30),
		.reservations = (int)tj_random_pick(q, 0, 4),
	};
	q->in = (struct tj_admission_input){
		.config = &q->config,
		.class_names = class_names,
		.n_classes = (size_t)tj_random_pick(q, 1, 2),
		.n_nodes = (size_t)tj_random_pick(q, 1, TJ_RANDOM_NODES),
		.nodes = q->nodes,
		.releases = q->releases,
		.running = q->running,
		.jobs = q->jobs,
		.now = TJ_RANDOM_NOW,
	};
	build_nodes(q, q->in.n_nodes);
	build_running(q);
	build_limits(q);
	for (size_t e = 0; e < TJ_RANDOM_ELIGIBLE; e++)
		for (size_t i = 0; i < q->in.n_nodes; i++)
			q->eligible[e][i] = chance(q, 75);
	q->in.n_jobs = (size_t)tj_random_pick(q, 0, TJ_RANDOM_JOBS);
	for (size_t j = 0; j < q->in.n_jobs; j++)
		build_job(q, j);
}

void tj_test_assert_same_decision(const struct tj_admission_decision *x,
                                  const struct tj_admission_decision *y, size_t n_pods)
{
	assert_int_equal(x->verdict, y->verdict);
	assert_int_equal(x->backfilled, y->backfilled);
	assert_int_equal(x->untried, y->untried);
	assert_int_equal(x->nodes != NULL, y->nodes != NULL);
	if (x->nodes)
		assert_memory_equal(x->nodes, y->nodes, n_pods * sizeof(*x->nodes));
	if (x->verdict == TJ_ADMISSION_ADMITTED)
		assert_int_equal(x->launcher_node, y->launcher_node);
	assert_string_equal(x->reason, y->reason);
	assert_int_equal(x->reason_number, y->reason_number);
	assert_string_equal(x->message, y->message);
	assert_int_equal(x->position, y->position);
	assert_int_equal(x->queue_length, y->queue_length);
	assert_int_equal(x->expected_start, y->expected_start);
	assert_int_equal(x->free_nodes, y->free_nodes);
	assert_int_equal(x->rank, y->rank);
	assert_int_equal(x->n_victims, y->n_victims);
	if (x->n_victims)
		assert_memory_equal(x->victims, y->victims, x->n_victims * sizeof(*x->victims));
	assert_int_equal(x->n_claimed, y->n_claimed);
	if (x->n_claimed)
		assert_memory_equal(x->claimed, y->claimed, x->n_claimed * sizeof(*x->claimed));
}

void tj_test_assert_same_result(const struct tj_admission_input *in,
                                const struct tj_admission_result *x,
                                const struct tj_admission_result *y)
{
	assert_int_equal(x->n_decisions, y->n_decisions);
	assert_int_equal(x->admitted, y->admitted);
	assert_int_equal(x->backfilled, y->backfilled);
	assert_int_equal(x->preempting, y->preempting);
	assert_int_equal(x->untried, y->untried);
	assert_memory_equal(x->classes, y->classes, (in->n_classes + 1) * sizeof(*x->classes));
	for (size_t j = 0; j < x->n_decisions; j++)
		tj_test_assert_same_decision(&x->decisions[j], &y->decisions[j],
		                             (size_t)in->jobs[j].num_pods);
}
