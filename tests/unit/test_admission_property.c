/* Properties of tj_admit over random clusters and queues, one per seed, with every rule of
 * the admission in play (classes and topology domains, releases, backfill depths, launchers,
 * nodes to avoid, eligibility, quotas, QOS limits, preemption and claims): its shortcuts
 * decide as the full decision does. Its memos of what a shape of gang holds decide every job
 * as deciding each afresh does (tj_admission_decide_afresh); a queue given in the last
 * result's order (as the admitter gives it, which the order then takes in one pass) or in any
 * other is decided alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "random_queue.h"
#include "reconcilers/admission/admission_internal.h"

#define SEEDS 600

/* The memos decide as deciding afresh does; nodes said to be in name order (the random
 * queue's are) are placed as when the run compares their names; and each decision's
 * reason_number is its reason's. */
static void test_memos_decide_as_afresh(void **state)
{
	size_t admitted = 0, backfilled = 0, preempting = 0, waiting = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct tj_random_queue q;
		struct tj_admission_result *memo = NULL, *afresh = NULL, *by_name = NULL;

		tj_random_queue_build(&q, seed);
		print_message("#   seed %llu\n", (unsigned long long)seed);
		assert_int_equal(tj_admit(&q.in, &memo), 0);
		assert_int_equal(tj_admission_decide_afresh(&q.in, &afresh), 0);
		tj_test_assert_same_result(&q.in, memo, afresh);
		q.in.nodes_by_name = true;
		assert_int_equal(tj_admit(&q.in, &by_name), 0);
		tj_test_assert_same_result(&q.in, memo, by_name);
		admitted += memo->admitted;
		backfilled += memo->backfilled;
		preempting += memo->preempting;
		for (size_t j = 0; j < memo->n_decisions; j++) {
			const struct tj_admission_decision *d = &memo->decisions[j];

			waiting += d->verdict == TJ_ADMISSION_WAITING;
			assert_int_equal(d->reason_number,
			                 d->reason[0] ? tj_admission_reason_index(d->reason) + 1
			                              : 0);
		}
		tj_admission_result_free(memo);
		tj_admission_result_free(afresh);
		tj_admission_result_free(by_name);
	}
	/* The seeds reach every outcome the memos shorten. */
	assert_true(admitted > 100);
	assert_true(backfilled > 50);
	assert_true(waiting > 1000);
	print_message("#   %zu admitted (%zu backfilled), %zu waiting, %zu preempting\n", admitted,
	              backfilled, waiting, preempting);
}

/* With more shapes than memos (SHAPE_MEMOS), a job finds its shape's memo, not the one that
 * replaced it: 64 jobs of shapes that never fit fill the memos, a 65th that fits takes the
 * first one's memo, five more go by, and a last job of the first's shape must count no node
 * that holds one of its pods, as deciding it afresh does, where the replacing memo counts
 * the node the 65th left room on. */
static void test_a_shape_finds_its_own_memo_after_it_was_replaced(void **state)
{
	enum {
		N = SHAPE_MEMOS + 7
	};
	static const char *const classes[] = { "gh200" };
	struct tj_admission_config config = { .backfill = true };
	struct tj_admission_node node = {
		.name = "n1",
		.schedulable = true,
		.allocatable = { 4, 72000, (int64_t)1000 << 30, 110 },
	};
	struct tj_admission_job jobs[N];
	char keys[N][16];
	struct tj_admission_input in = { .config = &config,
		                         .class_names = classes,
		                         .n_classes = 1,
		                         .nodes = &node,
		                         .n_nodes = 1,
		                         .jobs = jobs,
		                         .n_jobs = N,
		                         .now = TJ_RANDOM_NOW };
	struct tj_admission_result *memo = NULL, *afresh = NULL;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		snprintf(keys[i], sizeof(keys[i]), "a/job-%zu", i);
		jobs[i] = (struct tj_admission_job){
			.key = keys[i],
			.namespace = "a",
			.num_nodes = 1,
			.num_pods = 1,
			/* 8 GPUs of the node's 4: never fits; each its own memory, its own shape */
			.request = { 8, 1000, (int64_t)(i + 1) << 20, 1 },
			.creation_time = TJ_RANDOM_NOW - 1000 + (int64_t)i,
		};
	}
	jobs[SHAPE_MEMOS].request.gpus = 1;
	jobs[N - 1].request = jobs[0].request;
	assert_int_equal(tj_admit(&in, &memo), 0);
	assert_int_equal(tj_admission_decide_afresh(&in, &afresh), 0);
	assert_int_equal(memo->admitted, 1);
	assert_int_equal(memo->decisions[N - 1].free_nodes, 0);
	tj_test_assert_same_result(&in, memo, afresh);
	tj_admission_result_free(memo);
	tj_admission_result_free(afresh);
}

/* The class of q's job j, class -1 last. */
static size_t bucket_of(const struct tj_random_queue *q, size_t j)
{
	return bucket_of_class(&q->in, q->jobs[j].class_index);
}

/* Bounded by a few tries a class, from cursors anywhere in the queues (rule "Tries"), tj_admit
 * decides the jobs it tries as deciding every job afresh does with the others left untried,
 * as if they were not in the queue but for their places; restarts and jobs whose victims are
 * on their way out are always tried, no class makes more tries than the bound, and a cursor
 * left for the next run is the place of a job left untried. */
static void test_bounded_tries_decide_as_afresh_without_the_untried(void **state)
{
	size_t untried = 0, cursors_left = 0, admitted = 0;

	(void)state;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct tj_random_queue q;
		struct tj_admission_result *bounded = NULL, *afresh = NULL;
		size_t from[3] = { 0 };
		bool skip[TJ_RANDOM_JOBS] = { false };

		tj_random_queue_build(&q, seed);
		print_message("#   seed %llu\n", (unsigned long long)seed);
		assert_true(q.in.n_classes + 1 <= sizeof(from) / sizeof(from[0]));
		q.config.max_tries = (int)tj_random_pick(&q, 1, 4);
		for (size_t b = 0; b <= q.in.n_classes; b++)
			from[b] = (size_t)tj_random_pick(&q, 0, 3) *
			          (size_t)tj_random_pick(&q, 0, 10);
		q.in.cursors = from;
		assert_int_equal(tj_admit(&q.in, &bounded), 0);
		for (size_t j = 0; j < q.in.n_jobs; j++) {
			skip[j] = bounded->decisions[j].untried;
			assert_false(skip[j] && (q.jobs[j].restart || q.jobs[j].preempting));
			if (skip[j]) {
				assert_int_equal(bounded->decisions[j].verdict,
				                 TJ_ADMISSION_WAITING);
				assert_string_equal(bounded->decisions[j].reason,
				                    TJ_ADMISSION_REASON_PRIORITY);
			}
		}
		for (size_t b = 0; b <= q.in.n_classes; b++) {
			size_t cursor = bounded->cursors[b], at = SIZE_MAX;

			if (!cursor)
				continue;
			cursors_left++;
			/* The job at that place of the class's queue: as many of the class before
			 * it by rank. */
			for (size_t j = 0; j < q.in.n_jobs; j++) {
				size_t before = 0;

				if (bucket_of(&q, j) != b)
					continue;
				for (size_t k = 0; k < q.in.n_jobs; k++)
					before += bucket_of(&q, k) == b &&
					          bounded->decisions[k].rank <
					                  bounded->decisions[j].rank;
				if (before == cursor)
					at = j;
			}
			assert_true(at != SIZE_MAX);
			assert_true(bounded->decisions[at].untried);
		}
		assert_int_equal(tj_admission_decide_afresh_without(&q.in, skip, &afresh), 0);
		tj_test_assert_same_result(&q.in, bounded, afresh);
		untried += bounded->untried;
		admitted += bounded->admitted;
		tj_admission_result_free(bounded);
		tj_admission_result_free(afresh);
	}
	/* The seeds leave jobs untried and cursors for the next run, and admit others. */
	assert_true(untried > 200);
	assert_true(cursors_left > 50);
	assert_true(admitted > 100);
	print_message("#   %zu untried, %zu cursors left, %zu admitted\n", untried, cursors_left,
	              admitted);
}

/* One change to q of the kind given, at a place drawn from q's sequence: nothing, the time, a
 * node, a release, a queued job, a running gang, a limit's use, an eligibility, the config.
 * No job comes or goes, so that each keeps its index. */
static void change(struct tj_random_queue *q, int kind)
{
	size_t n = q->in.n_nodes, nj = q->in.n_jobs;
	struct tj_admission_job *job = nj ? &q->jobs[tj_random_pick(q, 0, (int64_t)nj - 1)] : NULL;
	struct tj_admission_node *node = &q->nodes[tj_random_pick(q, 0, (int64_t)n - 1)];

	switch (kind) {
	case 0:
		break;
	case 1:
		q->in.now += 1;
		break;
	case 2:
		node->used.gpus = node->used.gpus > 0 ? node->used.gpus - 1 : 1;
		break;
	case 3:
		node->schedulable = !node->schedulable;
		break;
	case 4:
		node->allocatable.memory += 1024;
		break;
	case 5:
		if (q->in.n_releases)
			q->releases[tj_random_pick(q, 0, (int64_t)q->in.n_releases - 1)].at += 7;
		break;
	case 6:
		if (job)
			job->walltime = job->walltime ? job->walltime + 30 : 60;
		break;
	case 7:
		if (job)
			job->priority += 3;
		break;
	case 8:
		if (job)
			job->not_before = job->not_before ? 0 : q->in.now + 20;
		break;
	case 9:
		if (job)
			job->fair_share = 10000 - job->fair_share;
		break;
	case 10:
		if (q->in.n_running)
			q->running[tj_random_pick(q, 0, (int64_t)q->in.n_running - 1)].start -= 5;
		break;
	case 11:
		if (q->in.n_quota_limits)
			q->quota_limits[tj_random_pick(q, 0, (int64_t)q->in.n_quota_limits - 1)]
			        .used += 4000;
		break;
	case 12:
		if (q->in.n_tier_limits)
			q->tier_limits[tj_random_pick(q, 0, (int64_t)q->in.n_tier_limits - 1)]
			        .used += 4;
		break;
	case 13: {
		bool *e = q->eligible[tj_random_pick(q, 0, TJ_RANDOM_ELIGIBLE - 1)];
		size_t i = (size_t)tj_random_pick(q, 0, (int64_t)n - 1);

		e[i] = !e[i];
		break;
	}
	case 14:
		if (job && job->n_excluded)
			job->n_excluded--;
		break;
	case 15:
		q->config.reservations = (q->config.reservations + 1) % 5;
		break;
	case 16:
		if (job)
			job->request.cpu_milli += 1000;
		break;
	case 17:
		if (q->in.n_usage)
			q->usage[tj_random_pick(q, 0, (int64_t)q->in.n_usage - 1)].gpus += 4;
		break;
	}
}

#define CHANGES 18

/* A pod of req on a node that holds used. */
static void hold(struct tj_admission_resources *used, const struct tj_admission_resources *req)
{
	used->gpus += req->gpus;
	used->cpu_milli += req->cpu_milli;
	used->memory += req->memory;
	used->pods += req->pods;
}

/* What the admitter makes of res: each admitted gang's pods hold their nodes, and the gang
 * leaves the queue. */
static void take_admissions(struct tj_random_queue *q, const struct tj_admission_result *res)
{
	size_t kept = 0;

	for (size_t j = 0; j < q->in.n_jobs; j++) {
		const struct tj_admission_decision *d = &res->decisions[j];
		const struct tj_admission_job *job = &q->jobs[j];

		if (d->verdict != TJ_ADMISSION_ADMITTED) {
			q->jobs[kept++] = *job;
			continue;
		}
		for (int p = 0; p < job->num_pods; p++)
			hold(&q->nodes[d->nodes[p]].used, &job->request);
		if (d->launcher_node != SIZE_MAX)
			hold(&q->nodes[d->launcher_node].used, &job->launcher);
	}
	q->in.n_jobs = kept;
}

/* Settled classes. The queue of a seed once its first decision's admissions are taken is
 * decided (the baseline); given its digests, a run of the same input settles every class that
 * neither admitted nor preempted. Then, for each kind of change in turn (on the same
 * baseline), a class whose input the change touched is never settled, and each class is
 * either settled, the full decision of the changed input deciding its jobs as the baseline
 * did, or decided as the full decision decides it. */
static void test_settled_classes_decide_as_the_full_decision(void **state)
{
	size_t settled = 0, decided = 0, quiet = 0;

	(void)state;
	/* Half the seeds: each makes CHANGES cases. */
	for (uint64_t seed = 1; seed <= SEEDS / 2; seed++) {
		for (int kind = 0; kind < CHANGES; kind++) {
			struct tj_random_queue q;
			struct tj_admission_result *first = NULL, *base = NULL, *again = NULL,
			                           *after = NULL, *full = NULL;

			tj_random_queue_build(&q, seed);
			print_message("#   seed %llu, change %d\n", (unsigned long long)seed, kind);
			assert_int_equal(tj_admit(&q.in, &first), 0);
			take_admissions(&q, first);
			assert_int_equal(tj_admit(&q.in, &base), 0);
			q.in.digests = base->digests;
			assert_int_equal(tj_admit(&q.in, &again), 0);
			for (size_t b = 0; b <= q.in.n_classes; b++) {
				assert_int_equal(again->settled_classes[b], base->digests[b] != 0);
				quiet += kind == 0 && base->digests[b] != 0;
			}
			q.in.digests = NULL;
			change(&q, kind);
			assert_int_equal(tj_admit(&q.in, &full), 0);
			q.in.digests = base->digests;
			assert_int_equal(tj_admit(&q.in, &after), 0);
			for (size_t j = 0; j < q.in.n_jobs; j++) {
				size_t b = bucket_of(&q, j);

				if (after->settled_classes[b]) {
					assert_true(after->decisions[j].settled);
					tj_test_assert_same_decision(&base->decisions[j],
					                             &full->decisions[j],
					                             (size_t)q.jobs[j].num_pods);
					settled++;
				} else {
					assert_false(after->decisions[j].settled);
					tj_test_assert_same_decision(&after->decisions[j],
					                             &full->decisions[j],
					                             (size_t)q.jobs[j].num_pods);
					decided++;
				}
			}
			for (size_t b = 0; b <= q.in.n_classes; b++)
				if (!after->settled_classes[b])
					assert_memory_equal(&after->classes[b], &full->classes[b],
					                    sizeof(after->classes[b]));
			tj_admission_result_free(first);
			tj_admission_result_free(base);
			tj_admission_result_free(again);
			tj_admission_result_free(after);
			tj_admission_result_free(full);
		}
	}
	/* Classes go quiet once their admissions are taken, and a change leaves some of them
	 * settled and has others decided again. */
	assert_true(quiet > 200);
	assert_true(settled > 10000);
	assert_true(decided > 10000);
	print_message("#   %zu quiet classes; after a change: %zu jobs of settled classes, %zu "
	              "decided\n",
	              quiet, settled, decided);
}

/* q's jobs in the order of perm (the k-th at perm[k]); ret_at gets each job's new index. */
static void permute(struct tj_random_queue *q, const size_t *perm, size_t *ret_at)
{
	struct tj_admission_job jobs[TJ_RANDOM_JOBS] = { 0 };

	for (size_t j = 0; j < q->in.n_jobs; j++) {
		jobs[perm[j]] = q->jobs[j];
		ret_at[j] = perm[j];
	}
	memcpy(q->jobs, jobs, q->in.n_jobs * sizeof(*jobs));
}

/* The decisions of q's jobs in res are those of the same jobs in moved, where job j went to
 * index at[j]. */
static void assert_moved_alike(const struct tj_random_queue *q,
                               const struct tj_admission_result *res,
                               const struct tj_admission_result *moved, const size_t *at)
{
	assert_int_equal(res->admitted, moved->admitted);
	assert_int_equal(res->backfilled, moved->backfilled);
	assert_memory_equal(res->classes, moved->classes,
	                    (q->in.n_classes + 1) * sizeof(*res->classes));
	for (size_t j = 0; j < res->n_decisions; j++)
		tj_test_assert_same_decision(&res->decisions[j], &moved->decisions[at[j]],
		                             (size_t)q->jobs[at[j]].num_pods);
}

static void test_any_order_decides_alike(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= SEEDS; seed++) {
		struct tj_random_queue q;
		struct tj_admission_result *res = NULL, *ranked = NULL, *shuffled = NULL;
		size_t perm[TJ_RANDOM_JOBS], at[TJ_RANDOM_JOBS], back[TJ_RANDOM_JOBS] = { 0 };

		tj_random_queue_build(&q, seed);
		print_message("#   seed %llu\n", (unsigned long long)seed);
		assert_int_equal(tj_admit(&q.in, &res), 0);
		/* In the order of the ranks: each job where its rank says. */
		for (size_t j = 0; j < q.in.n_jobs; j++)
			perm[j] = res->decisions[j].rank;
		permute(&q, perm, at);
		assert_int_equal(tj_admit(&q.in, &ranked), 0);
		assert_moved_alike(&q, res, ranked, at);
		for (size_t k = 0; k < q.in.n_jobs; k++)
			assert_int_equal(ranked->decisions[k].rank, k);
		/* Then shuffled, each job's new index followed from the first input. */
		for (size_t j = 0; j < q.in.n_jobs; j++)
			perm[j] = j;
		for (size_t j = q.in.n_jobs; j-- > 1;) {
			size_t k = (size_t)tj_random_pick(&q, 0, (int64_t)j), t = perm[j];

			perm[j] = perm[k];
			perm[k] = t;
		}
		for (size_t j = 0; j < q.in.n_jobs; j++)
			back[j] = at[j];
		permute(&q, perm, at);
		for (size_t j = 0; j < q.in.n_jobs; j++)
			at[j] = perm[back[j]];
		assert_int_equal(tj_admit(&q.in, &shuffled), 0);
		assert_moved_alike(&q, res, shuffled, at);
		tj_admission_result_free(res);
		tj_admission_result_free(ranked);
		tj_admission_result_free(shuffled);
	}
}

/* The sort of the input's releases by the digits of their times orders them as the merge
 * does (by time, then index), over spreads of one to four digits and with the extreme
 * times, where it leaves the sort to the merge. */
static void test_releases_by_time_as_merged(void **state)
{
	static const int64_t spreads[] = { 1, 7, 2048, 4000000, (int64_t)1 << 40, INT64_MAX };
	static struct tj_random_queue rnd = { .state = 0x9e3779b97f4a7c15ULL };

	(void)state;
	for (size_t sp = 0; sp < sizeof(spreads) / sizeof(spreads[0]); sp++)
		for (size_t n = 0; n < 3000; n = n * 3 + 1) {
			struct release_key *radix = calloc(n + 1, sizeof(*radix)),
			                   *merged = calloc(n + 1, sizeof(*merged));

			assert_non_null(radix);
			assert_non_null(merged);
			for (size_t i = 0; i < n; i++) {
				bool extreme =
				        spreads[sp] == INT64_MAX && tj_random_pick(&rnd, 0, 4) == 0;
				int64_t at = extreme ? (tj_random_pick(&rnd, 0, 1) ? INT64_MAX
				                                                   : INT64_MIN)
				                     : 1795953600 + tj_random_pick(&rnd, 0,
				                                                   spreads[sp] - 1);

				radix[i] = merged[i] = (struct release_key){ at, i };
			}
			tj_admission_sort_releases_by_time(radix, n);
			tj_admission_sort_releases(merged, n);
			assert_memory_equal(radix, merged, (n + 1) * sizeof(*radix));
			free(radix);
			free(merged);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memos_decide_as_afresh),
		cmocka_unit_test(test_any_order_decides_alike),
		cmocka_unit_test(test_bounded_tries_decide_as_afresh_without_the_untried),
		cmocka_unit_test(test_settled_classes_decide_as_the_full_decision),
		cmocka_unit_test(test_releases_by_time_as_merged),
		cmocka_unit_test(test_a_shape_finds_its_own_memo_after_it_was_replaced),
	};
	return cmocka_run_group_tests_name("admission_property", tests, NULL, NULL);
}
