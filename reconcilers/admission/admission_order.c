/* The queue's order (admission.h): per class, the restarts of running jobs first, then the
 * higher QOS tier, then, inside it, the jobs whose victims are on their way out, then the
 * higher fair-share priority (the namespace's fair-share points
 * and the age of the job's place, reconcilers/admission/fair_share.h), then the place in time, then
 * the key.
 *
 * A job's own priority (the annotation trainjob.flame.dev/priority, else its pods'
 * PriorityClass) reorders only the jobs of its own namespace and tier: those jobs keep the
 * places in time their creation gave them as a set, and their priorities say which of them
 * takes which place (as Slurm's `scontrol top` moves a job ahead of the user's other jobs
 * only). So a namespace puts its own urgent job first among its jobs, and no priority it
 * sets on itself takes it past a job of another namespace that came before. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission/admission_internal.h"
#include "reconcilers/admission/fair_share.h"

struct job_key tj_admission_job_key(const struct tj_admission_job *job, size_t bucket, size_t index)
{
	return (struct job_key){ .bucket = bucket,
		                 .restart = job->restart,
		                 .tier = job->tier,
		                 .preempting = job->preempting,
		                 .priority = job->priority,
		                 .creation_time = job->creation_time,
		                 .job = job,
		                 .index = index };
}

/* By class, restarts first, then the higher tier, then in it the jobs that preempted: the
 * nodes their victims give back are theirs, not the reservation of a job ahead that did not
 * preempt (which would leave them to short jobs backfilled behind it, and the preempting
 * job to preempt again). */
static int cmp_class_tier(const struct job_key *x, const struct job_key *y)
{
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	if (x->restart != y->restart)
		return x->restart ? -1 : 1;
	if (x->tier != y->tier)
		return x->tier > y->tier ? -1 : 1;
	if (x->preempting != y->preempting)
		return x->preempting ? -1 : 1;
	return 0;
}

/* Last, the key, then the place in the input. */
static int cmp_key_index(const struct job_key *x, const struct job_key *y)
{
	int c = strcmp(or_empty(x->job->key), or_empty(y->job->key));

	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The namespaces of two jobs in name order. The admitter gives the jobs of a namespace one
 * shared copy of it, whose pointer tells them equal without reading it. */
static int cmp_namespace(const struct job_key *x, const struct job_key *y)
{
	const char *a = or_empty(x->job->namespace), *b = or_empty(y->job->namespace);

	return a == b ? 0 : strcmp(a, b);
}

static bool same_group(const struct job_key *x, const struct job_key *y)
{
	return cmp_class_tier(x, y) == 0 && cmp_namespace(x, y) == 0;
}

static int cmp_time(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

/* The queue: restarts, tier (higher first), fair-share priority (higher first), place
 * (earlier first); between jobs of one place, those of a namespace in their own order,
 * then the key. */
static int cmp_queue(const void *a, const void *b)
{
	const struct job_key *x = a, *y = b;
	int c = cmp_class_tier(x, y);

	if (c)
		return c;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->place != y->place)
		return x->place < y->place ? -1 : 1;
	c = cmp_namespace(x, y);
	if (c)
		return c;
	if (x->own_rank != y->own_rank)
		return x->own_rank < y->own_rank ? -1 : 1;
	return cmp_key_index(x, y);
}

/* Whether any two jobs of one namespace and tier have different priorities: only then do
 * places move. Most queues have none. */
static bool priorities_differ(const struct job_key *keys, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (keys[i].priority != keys[0].priority)
			return true;
	return false;
}

static uint64_t group_hash(const struct job_key *k)
{
	uint64_t h = 14695981039346656037ULL;

	for (const unsigned char *c = (const unsigned char *)or_empty(k->job->namespace); *c; c++)
		h = (h ^ *c) * 1099511628211ULL;
	h ^= (uint64_t)k->bucket * 0x9e3779b97f4a7c15ULL;
	h ^= (uint64_t)(uint32_t)k->tier * 0xc2b2ae3d27d4eb4fULL;
	return h ^ ((uint64_t)k->restart << 1) ^ (uint64_t)k->preempting;
}

/* The jobs of each namespace and tier together (group), in the order they came in: the
 * group of each key numbered in the order of its first key, by a hash of the groups, then
 * a counting sort by group. A queue given in the last cycle's order (as the admitter gives
 * it) has each namespace's jobs of a tier in their own order already (cmp_own): inside a
 * namespace and tier the fair-share points are the same, so the queue's order is the order
 * of the places, which their own order gave them. Then no group needs a sort. ret (n) gets
 * the keys; start (n + 2) the first of each group, *ret_groups their count. */
static int group_keys(const struct job_key *keys, size_t n, const struct job_key **ret,
                      size_t *start, size_t *ret_groups)
{
	size_t cap = 2, mask, n_groups = 0, *slots, *group;

	while (cap < 2 * n)
		cap *= 2;
	mask = cap - 1;
	slots = malloc(cap * sizeof(*slots));
	group = malloc((n + 1) * sizeof(*group));
	if (!slots || !group) {
		free(slots);
		free(group);
		return -ENOMEM;
	}
	/* A slot holds the key that opened its group. */
	memset(slots, 0xff, cap * sizeof(*slots));
	memset(start, 0, (n + 2) * sizeof(*start));
	for (size_t i = 0; i < n; i++) {
		size_t s = (size_t)group_hash(&keys[i]) & mask;

		while (slots[s] != SIZE_MAX && !same_group(&keys[slots[s]], &keys[i]))
			s = (s + 1) & mask;
		if (slots[s] == SIZE_MAX) {
			slots[s] = i;
			group[i] = n_groups++;
		} else {
			group[i] = group[slots[s]];
		}
		start[group[i] + 1]++;
	}
	for (size_t g = 1; g <= n_groups; g++)
		start[g] += start[g - 1];
	for (size_t i = 0; i < n; i++)
		ret[start[group[i]]++] = &keys[i];
	/* Each start moved on to the next group's: one back. */
	memmove(&start[1], &start[0], n_groups * sizeof(*start));
	start[0] = 0;
	*ret_groups = n_groups;
	free(slots);
	free(group);
	return 0;
}

/* The jobs of one group (one class, namespace and tier) in the order of their own priorities
 * (higher first), then creation (older first), then the key. */
static int cmp_own(const void *a, const void *b)
{
	const struct job_key *x = *(const struct job_key *const *)a;
	const struct job_key *y = *(const struct job_key *const *)b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->creation_time != y->creation_time)
		return x->creation_time < y->creation_time ? -1 : 1;
	return cmp_key_index(x, y);
}

/* The places of the jobs of each namespace and tier: the k-th of the group in their own
 * order takes the k-th earliest of their creation times. The keys stay where they are. */
static int share_places(struct job_key *keys, size_t n)
{
	const struct job_key **own = malloc((n + 1) * sizeof(*own));
	size_t *start = malloc((n + 2) * sizeof(*start)), n_groups = 0;
	int64_t *times = malloc((n + 1) * sizeof(*times));
	int err = own && start && times ? group_keys(keys, n, own, start, &n_groups) : -ENOMEM;

	for (size_t g = 0; err == 0 && g < n_groups; g++) {
		const struct job_key **first = &own[start[g]];
		size_t len = start[g + 1] - start[g];

		tj_admission_sort_keys(first, len, sizeof(*first), cmp_own);
		for (size_t i = 0; i < len; i++)
			times[i] = first[i]->creation_time;
		tj_admission_sort_keys(times, len, sizeof(*times), cmp_time);
		for (size_t i = 0; i < len; i++) {
			struct job_key *k = &keys[first[i] - keys];

			k->place = times[i];
			k->own_rank = i;
		}
	}
	free(own);
	free(start);
	free(times);
	return err;
}

int tj_admission_order_jobs(struct job_key *keys, size_t n, int64_t now)
{
	for (size_t i = 0; i < n; i++) {
		keys[i].place = keys[i].creation_time;
		keys[i].own_rank = 0;
	}
	if (priorities_differ(keys, n) && share_places(keys, n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		keys[i].score = (int64_t)keys[i].job->fair_share +
		                tj_fair_share_age_points(keys[i].place, now);
	/* Given in the last order, and with no job whose place or score moved, one pass. */
	tj_admission_sort_keys(keys, n, sizeof(*keys), cmp_queue);
	return 0;
}

int tj_admission_order(const struct tj_admission_job *jobs, size_t n, size_t n_classes, int64_t now,
                       struct tj_admission_rank *ret)
{
	const struct tj_admission_input classes = { .n_classes = n_classes };
	struct job_key *keys;

	for (size_t i = 0; i < n; i++)
		if (jobs[i].class_index < -1 ||
		    (jobs[i].class_index >= 0 && (size_t)jobs[i].class_index >= n_classes))
			return -EINVAL;
	if (!(keys = calloc(n + 1, sizeof(*keys))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		keys[i] = tj_admission_job_key(&jobs[i],
		                               bucket_of_class(&classes, jobs[i].class_index), i);
	if (tj_admission_order_jobs(keys, n, now) < 0) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t k = 0; k < n; k++)
		ret[k] = (struct tj_admission_rank){ .job = keys[k].index,
			                             .place = keys[k].place,
			                             .age_points = tj_fair_share_age_points(
			                                     keys[k].place, now),
			                             .score = keys[k].score };
	free(keys);
	return 0;
}
