#include "reconcilers/admission/admission.h"
#include "reconcilers/admission/admission_internal.h"

#include "reconcilers/admission/admission_text.h"
#include "reconcilers/admission/quota.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How messages name class -1. */
#define NO_CLASS_NAME "nodes without a GPU class"

static const char *class_name(const struct tj_admission_input *in, size_t bucket)
{
	return bucket == in->n_classes ? NO_CLASS_NAME : or_empty(in->class_names[bucket]);
}

static bool valid_class(const struct tj_admission_input *in, int class_index)
{
	return class_index >= -1 && (class_index < 0 || (size_t)class_index < in->n_classes);
}

/* Setup */

static int cmp_slot(const void *a, const void *b)
{
	const struct slot_key *x = a, *y = b;
	int c;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int cmp_domain_name(const char *x, const char *y)
{
	if (!x || !y)
		return x ? 1 : y ? -1 : 0;
	return strcmp(x, y);
}

static int cmp_domain(const void *a, const void *b)
{
	const struct domain_key *x = a, *y = b;
	int c = cmp_domain_name(x->domain, y->domain);

	if (c)
		return c;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int cmp_release(const void *a, const void *b)
{
	const struct release_key *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The end of the run of keys in cmp's order that starts at from (n keys of size bytes). */
static size_t run_end(const char *k, size_t from, size_t n, size_t size,
                      int (*cmp)(const void *, const void *))
{
	size_t i = from + 1;

	while (i < n && cmp(k + (i - 1) * size, k + i * size) <= 0)
		i++;
	return i;
}

/* The keys of from between lo and hi, whose runs start at lo and mid, merged into to. */
static void merge_keys(const char *from, char *to, size_t lo, size_t mid, size_t hi, size_t size,
                       int (*cmp)(const void *, const void *))
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi) {
		const char *next = cmp(from + j * size, from + i * size) < 0 ? from + j++ * size
		                                                             : from + i++ * size;

		memcpy(to + k++ * size, next, size);
	}
	memcpy(to + k * size, from + i * size, (mid - i) * size);
	k += mid - i;
	memcpy(to + k * size, from + j * size, (hi - j) * size);
}

/* The keys are sorted by merging the runs they come in: one pass when they are in order
 * already (as the admitter gives the queue), and few when they come in few runs (a queue in
 * which a few jobs moved; the creation times of a namespace's jobs in their own order, a run
 * per priority). Every order sorted with it is total but for equal values, so any sort
 * orders the keys alike; qsort sorts them when there is no memory for the merge. */
void tj_admission_sort_keys(void *keys, size_t n, size_t size,
                            int (*cmp)(const void *, const void *))
{
	size_t *starts, n_runs = 1, first = n ? run_end(keys, 0, n, size, cmp) : 0;
	char *from = keys, *to;

	if (first >= n)
		return;
	starts = malloc((n + 1) * sizeof(*starts));
	to = malloc(n * size);
	if (!starts || !to) {
		free(starts);
		free(to);
		qsort(keys, n, size, cmp);
		return;
	}
	starts[0] = 0;
	for (size_t i = first; i < n; i = run_end(keys, i, n, size, cmp))
		starts[n_runs++] = i;
	starts[n_runs] = n;
	/* Each pass merges the runs two by two; the runs' starts move down as they merge. */
	while (n_runs > 1) {
		size_t kept = 0;
		char *t = from;

		for (size_t r = 0; r < n_runs; r += 2) {
			size_t hi = starts[r + 1 < n_runs ? r + 2 : r + 1];

			merge_keys(from, to, starts[r], starts[r + 1], hi, size, cmp);
			starts[kept++] = starts[r];
		}
		starts[kept] = n;
		n_runs = kept;
		from = to;
		to = t;
	}
	if (from != keys)
		memcpy(keys, from, n * size);
	free(from == keys ? to : from);
	free(starts);
}

/* A run sorts the input's releases, which come in node order, and those of each
 * reservation. The keys are distinct (index), so any sort orders them alike. */
void tj_admission_sort_releases(struct release_key *keys, size_t n)
{
	tj_admission_sort_keys(keys, n, sizeof(*keys), cmp_release);
}

/* Radix digits of the release times, and at most how many a sort by digits takes before a
 * merge is cheaper. */
#define TIME_DIGIT_BITS 11
#define TIME_DIGITS_MAX 3

/* The digit of a release time at shift, counted from the earliest time lo. */
static size_t time_digit(int64_t at, int64_t lo, int shift)
{
	return (size_t)((((uint64_t)at - (uint64_t)lo) >> shift) &
	                (((uint64_t)1 << TIME_DIGIT_BITS) - 1));
}

void tj_admission_sort_releases_by_time(struct release_key *keys, size_t n)
{
	struct release_key *from = keys, *to, *t;
	size_t count[(1 << TIME_DIGIT_BITS) + 1];
	uint64_t span;
	int64_t lo = n ? keys[0].at : 0, hi = lo;
	int digits = 0;

	for (size_t i = 1; i < n; i++) {
		lo = keys[i].at < lo ? keys[i].at : lo;
		hi = keys[i].at > hi ? keys[i].at : hi;
	}
	for (span = (uint64_t)hi - (uint64_t)lo; span; span >>= TIME_DIGIT_BITS)
		digits++;
	if (n < 2 || digits == 0)
		return;
	if (digits > TIME_DIGITS_MAX || !(to = malloc(n * sizeof(*keys)))) {
		tj_admission_sort_releases(keys, n);
		return;
	}
	/* Least significant digit first; each pass keeps the order of equal digits, so equal
	 * times stay in index order. */
	for (int d = 0; d < digits; d++) {
		int shift = d * TIME_DIGIT_BITS;
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[time_digit(from[i].at, lo, shift)]++;
		for (size_t v = 0; v < (size_t)1 << TIME_DIGIT_BITS; v++) {
			size_t c = count[v];

			count[v] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[time_digit(from[i].at, lo, shift)]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != keys)
		memcpy(keys, from, n * sizeof(*keys));
	free(from == keys ? to : from);
}

static int validate(const struct tj_admission_input *in)
{
	if (!in->config || (in->n_classes && !in->class_names) || (in->n_nodes && !in->nodes) ||
	    (in->n_releases && !in->releases) || (in->n_usage && !in->usage) ||
	    (in->n_jobs && !in->jobs) || (in->config->n_quotas && !in->config->quotas) ||
	    (in->n_quota_limits && !in->quota_limits))
		return -EINVAL;
	for (size_t i = 0; i < in->n_nodes; i++)
		if (!valid_class(in, in->nodes[i].class_index))
			return -EINVAL;
	for (size_t i = 0; i < in->n_releases; i++)
		if (in->releases[i].node >= in->n_nodes)
			return -EINVAL;
	for (size_t i = 0; i < in->n_usage; i++)
		if (!valid_class(in, in->usage[i].class_index))
			return -EINVAL;
	for (size_t i = 0; i < in->config->n_quotas; i++)
		if (!valid_class(in, in->config->quotas[i].class_index))
			return -EINVAL;
	if (in->n_running && !in->running)
		return -EINVAL;
	for (size_t i = 0; i < in->n_running; i++) {
		const struct tj_admission_running *g = &in->running[i];

		if (!valid_class(in, g->class_index) || (g->n_holds && !g->holds))
			return -EINVAL;
		for (size_t k = 0; k < g->n_holds; k++)
			if (g->holds[k].node >= in->n_nodes)
				return -EINVAL;
	}
	if (in->n_tier_limits && !in->tier_limits)
		return -EINVAL;
	for (size_t i = 0; i < in->n_jobs; i++) {
		const struct tj_admission_job *j = &in->jobs[i];

		if (j->tier_limit > in->n_tier_limits)
			return -EINVAL;
		if (!valid_class(in, j->class_index) || j->num_pods < 1 ||
		    j->num_nodes < j->num_pods || j->num_nodes > TJ_MAX_NODES ||
		    (j->n_excluded && !j->excluded) || (j->n_charges && !j->charges))
			return -EINVAL;
		for (size_t k = 0; k < j->n_excluded; k++)
			if (j->excluded[k] >= in->n_nodes)
				return -EINVAL;
		for (size_t k = 0; k < j->n_charges; k++)
			if (j->charges[k].limit >= in->n_quota_limits)
				return -EINVAL;
	}
	return 0;
}

static void run_clear(struct run *r)
{
	free(r->slot_node);
	free(r->bucket_slots);
	free(r->node_slot);
	free(r->domain);
	free(r->n_domains);
	free(r->class_nodes);
	free(r->bucket_nodes);
	free(r->free);
	free(r->open);
	free(r->open_bucket);
	free(r->every);
	free(r->by_fit);
	free(r->moved);
	free(r->later);
	free(r->pods);
	free(r->reserved);
	free(r->reserved_until);
	free(r->reserved_from);
	free(r->too_soon);
	free(r->locked);
	free(r->unlocks);
	free(r->domain_pods);
	free(r->chosen);
	free(r->rooms);
	free(r->cands);
	free(r->ranks);
	free(r->reserved_ranks);
	free(r->trial);
	free(r->avoiding);
	free(r->kept);
	free(r->kept_slots);
	free(r->releases);
	free(r->admitted);
	free(r->order);
	free(r->bucket_jobs);
	free(r->accounts);
	free(r->job_account);
	free(r->quota_used);
	free(r->tier_used);
	free(r->preempt_free);
	free(r->reserved_ahead);
	free(r->taken);
	free(r->victims);
	free(r->claimants);
	free(r->shapes);
	free(r->job_shape);
}

/* An array of n elements of size bytes that the run writes before it reads any of them:
 * not cleared, which for a cluster of thousands of nodes would write megabytes a cycle. */
static void *scratch(size_t n, size_t size)
{
	return reallocarray(NULL, n, size);
}

static int run_alloc(struct run *r)
{
	const struct tj_admission_input *in = r->in;
	/* One more than needed, so that empty inputs still allocate. */
	size_t nb = r->n_buckets + 1, nn = in->n_nodes + 1, nj = in->n_jobs + 1;

	r->slot_node = calloc(nn, sizeof(*r->slot_node));
	r->bucket_slots = calloc(nb, sizeof(*r->bucket_slots));
	r->node_slot = calloc(nn, sizeof(*r->node_slot));
	r->domain = calloc(nn, sizeof(*r->domain));
	r->n_domains = calloc(nb, sizeof(*r->n_domains));
	r->class_nodes = calloc(nn, sizeof(*r->class_nodes));
	r->bucket_nodes = calloc(nb, sizeof(*r->bucket_nodes));
	r->free = calloc(nn, sizeof(*r->free));
	r->open = calloc(nn, sizeof(*r->open));
	r->open_bucket = calloc(nb, sizeof(*r->open_bucket));
	r->every = calloc(nn, sizeof(*r->every));
	r->later = scratch(nn, sizeof(*r->later));
	r->pods = scratch(nn, sizeof(*r->pods));
	r->reserved = calloc(nn, sizeof(*r->reserved));
	r->reserved_until = calloc(nn, sizeof(*r->reserved_until));
	r->reserved_from = calloc(nn, sizeof(*r->reserved_from));
	r->too_soon = calloc(nn, sizeof(*r->too_soon));
	r->locked = calloc(nn, sizeof(*r->locked));
	r->unlocks = scratch(nn, sizeof(*r->unlocks));
	r->domain_pods = scratch(nn, sizeof(*r->domain_pods));
	r->chosen = calloc(nn, sizeof(*r->chosen));
	r->rooms = scratch(nn, sizeof(*r->rooms));
	r->cands = scratch(nn, sizeof(*r->cands));
	r->ranks = calloc(TJ_MAX_NODES, sizeof(*r->ranks));
	r->reserved_ranks = calloc(TJ_MAX_NODES, sizeof(*r->reserved_ranks));
	r->trial = scratch(nn, sizeof(*r->trial));
	r->avoiding = calloc(nn, sizeof(*r->avoiding));
	r->kept = scratch(nn, sizeof(*r->kept));
	r->kept_slots = scratch(nn, sizeof(*r->kept_slots));
	r->releases = calloc(in->n_releases + 1, sizeof(*r->releases));
	r->admitted = scratch(nj, sizeof(*r->admitted));
	r->order = calloc(nj, sizeof(*r->order));
	r->bucket_jobs = calloc(nb, sizeof(*r->bucket_jobs));
	r->accounts = calloc(nj, sizeof(*r->accounts));
	r->job_account = calloc(nj, sizeof(*r->job_account));
	r->quota_used = calloc(in->n_quota_limits + 1, sizeof(*r->quota_used));
	r->tier_used = calloc(in->n_tier_limits + 1, sizeof(*r->tier_used));
	r->claimants = scratch(nj, sizeof(*r->claimants));
	r->shapes = calloc(SHAPES_SEEN, sizeof(*r->shapes));
	r->job_shape = calloc(nj, sizeof(*r->job_shape));
	if (!r->quota_used || !r->tier_used || !r->claimants || !r->shapes || !r->job_shape)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_tier_limits; i++)
		r->tier_used[i] = in->tier_limits[i].used;
	for (size_t i = 0; i < in->n_quota_limits; i++)
		r->quota_used[i] = in->quota_limits[i].used;
	if (!r->slot_node || !r->bucket_slots || !r->node_slot || !r->domain || !r->n_domains ||
	    !r->class_nodes || !r->bucket_nodes || !r->free || !r->later || !r->pods ||
	    !r->reserved || !r->domain_pods || !r->chosen || !r->rooms || !r->cands || !r->ranks ||
	    !r->reserved_ranks || !r->trial || !r->avoiding || !r->kept || !r->kept_slots ||
	    !r->releases || !r->admitted || !r->order || !r->bucket_jobs || !r->accounts ||
	    !r->job_account || !r->reserved_until || !r->reserved_from || !r->too_soon ||
	    !r->locked || !r->unlocks || !r->open || !r->open_bucket || !r->every)
		return -ENOMEM;
	if (!in->n_running)
		return 0;
	for (size_t v = 0; v < in->n_running; v++)
		if (in->running[v].grace > r->longest_grace)
			r->longest_grace = in->running[v].grace;
	r->preempt_free = scratch(nn, sizeof(*r->preempt_free));
	r->reserved_ahead = calloc(nn, sizeof(*r->reserved_ahead));
	r->taken = calloc(in->n_running, sizeof(*r->taken));
	r->victims = scratch(in->n_running, sizeof(*r->victims));
	return r->preempt_free && r->reserved_ahead && r->taken && r->victims ? 0 : -ENOMEM;
}

/* Numbers the topology domains of each class in name order, so that comparing two domain
 * numbers compares their names. The slots of a class whose nodes share one domain, or whose
 * domains' names sort as the nodes' names do, are in that order already, and need no sort. */
static int number_domains(struct run *r)
{
	struct domain_key *keys = calloc(r->n_slots + 1, sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	for (size_t b = 0; b < r->n_buckets; b++) {
		size_t first = r->bucket_slots[b], n = r->bucket_slots[b + 1] - first, id = 0;

		for (size_t i = 0; i < n; i++)
			keys[i] = (struct domain_key){ r->in->nodes[r->slot_node[first + i]].domain,
				                       first + i };
		tj_admission_sort_keys(keys, n, sizeof(*keys), cmp_domain);
		for (size_t i = 0; i < n; i++) {
			if (i > 0 && cmp_domain_name(keys[i - 1].domain, keys[i].domain))
				id++;
			r->domain[keys[i].slot] = id;
		}
		r->n_domains[b] = n ? id + 1 : 0;
	}
	free(keys);
	return 0;
}

/* Orders n slot keys by class, keeping the order of each class's keys, by a counting sort. */
static int partition_slots(struct slot_key *keys, size_t n, size_t n_buckets)
{
	struct slot_key *out = calloc(n + 1, sizeof(*out));
	size_t *start = calloc(n_buckets + 1, sizeof(*start));

	if (!out || !start) {
		free(out);
		free(start);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		start[keys[i].bucket + 1]++;
	for (size_t b = 1; b <= n_buckets; b++)
		start[b] += start[b - 1];
	for (size_t i = 0; i < n; i++)
		out[start[keys[i].bucket]++] = keys[i];
	memcpy(keys, out, n * sizeof(*keys));
	free(out);
	free(start);
	return 0;
}

/* The slots, their free resources and the capacity figures of each class. */
static int index_nodes(struct run *r)
{
	const struct tj_admission_input *in = r->in;
	struct slot_key *keys = calloc(in->n_nodes + 1, sizeof(*keys));
	size_t n = 0;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_nodes; i++) {
		r->node_slot[i] = -1;
		if (in->nodes[i].schedulable)
			keys[n++] =
			        (struct slot_key){ bucket_of_class(in, in->nodes[i].class_index),
				                   or_empty(in->nodes[i].name), i };
	}
	/* Nodes given in name order need only a stable partition by class: the sort finds each
	 * class in order, or skips the names' compares when the caller says they are. */
	if (partition_slots(keys, n, r->n_buckets) < 0) {
		free(keys);
		return -ENOMEM;
	}
	if (!in->nodes_by_name)
		tj_admission_sort_keys(keys, n, sizeof(*keys), cmp_slot);
	r->n_slots = n;
	for (size_t s = 0; s < n; s++) {
		const struct tj_admission_node *node = &in->nodes[keys[s].node];
		struct tj_admission_class_stats *st = &r->res->classes[keys[s].bucket];

		r->slot_node[s] = keys[s].node;
		r->node_slot[keys[s].node] = (ptrdiff_t)s;
		r->free[s] = (struct tj_admission_resources){
			sat_sub(node->allocatable.gpus, node->used.gpus),
			sat_sub(node->allocatable.cpu_milli, node->used.cpu_milli),
			sat_sub(node->allocatable.memory, node->used.memory),
			sat_sub(node->allocatable.pods, node->used.pods),
		};
		st->capacity_gpus = sat_add(st->capacity_gpus, node->allocatable.gpus);
		st->allocated_gpus = sat_add(st->allocated_gpus, node->used.gpus);
	}
	for (size_t b = 0, s = 0; b <= r->n_buckets; b++) {
		while (s < n && keys[s].bucket < b)
			s++;
		r->bucket_slots[b] = s;
	}
	free(keys);
	for (size_t b = 0, n_open = 0; b < r->n_buckets; b++) {
		r->open_bucket[b] = n_open;
		for (size_t s = r->bucket_slots[b]; s < r->bucket_slots[b + 1]; s++) {
			r->every[s] = s;
			if (r->free[s].gpus > 0)
				r->open[n_open++] = s;
		}
		r->open_bucket[b + 1] = n_open;
	}
	/* Every node of a class, taking pods or not, by a counting sort on the class: the counts
	 * become the ends of the ranges, and filling from the back turns them into the starts. */
	for (size_t i = 0; i < in->n_nodes; i++)
		r->bucket_nodes[bucket_of_class(in, in->nodes[i].class_index)]++;
	for (size_t b = 1; b <= r->n_buckets; b++)
		r->bucket_nodes[b] += r->bucket_nodes[b - 1];
	for (size_t i = in->n_nodes; i-- > 0;)
		r->class_nodes[--r->bucket_nodes[bucket_of_class(in, in->nodes[i].class_index)]] =
		        i;
	if (tj_admission_fit_order(r) < 0)
		return -ENOMEM;
	return number_domains(r);
}

static struct job_key job_key_of(const struct tj_admission_input *in, size_t i)
{
	return tj_admission_job_key(&in->jobs[i], bucket_of_class(in, in->jobs[i].class_index), i);
}

/* Every job's place in the queue of its class. */
static int order_jobs(struct run *r)
{
	const struct tj_admission_input *in = r->in;
	struct job_key *keys = calloc(in->n_jobs + 1, sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_jobs; i++)
		keys[i] = job_key_of(in, i);
	if (tj_admission_order_jobs(keys, in->n_jobs, in->now) < 0) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in->n_jobs; i++) {
		r->order[i] = keys[i].index;
		r->res->decisions[keys[i].index].rank = i;
	}
	for (size_t b = 0, i = 0; b <= r->n_buckets; b++) {
		while (i < in->n_jobs && keys[i].bucket < b)
			i++;
		r->bucket_jobs[b] = i;
	}
	free(keys);
	for (size_t i = 0; i < in->n_releases; i++)
		r->releases[i] = (struct release_key){ in->releases[i].at, i };
	tj_admission_sort_releases_by_time(r->releases, in->n_releases);
	return 0;
}

/* Quotas */

/* The namespace's own limit in the class, else the one of "*"; -1: none. */
static int64_t quota_limit(const struct tj_admission_config *cfg, const char *ns, int class_index)
{
	int64_t any = -1;

	for (size_t i = 0; i < cfg->n_quotas; i++) {
		const struct tj_admission_quota *q = &cfg->quotas[i];

		if (q->class_index != class_index)
			continue;
		if (strcmp(or_empty(q->namespace), ns) == 0)
			return q->max_gpus;
		if (strcmp(or_empty(q->namespace), "*") == 0)
			any = q->max_gpus;
	}
	return any;
}

static int64_t usage_of(const struct tj_admission_input *in, const char *ns, int class_index)
{
	int64_t gpus = 0;

	for (size_t i = 0; i < in->n_usage; i++)
		if (in->usage[i].class_index == class_index &&
		    strcmp(or_empty(in->usage[i].namespace), ns) == 0)
			gpus = sat_add(gpus, in->usage[i].gpus);
	return gpus;
}

static int cmp_account_key(const void *a, const void *b)
{
	const struct job_key *x = a, *y = b;
	int c;

	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	c = strcmp(or_empty(x->job->namespace), or_empty(y->job->namespace));
	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* One account per namespace and class that has a limit, shared by the jobs of both, so that
 * what one admits counts against the next. Limits and usage are looked up once per account,
 * not per job. */
static int open_accounts(struct run *r)
{
	const struct tj_admission_input *in = r->in;
	struct job_key *keys;
	size_t n = 0;

	for (size_t i = 0; i < in->n_jobs; i++)
		r->job_account[i] = SIZE_MAX;
	if (!in->config->n_quotas)
		return 0;
	keys = calloc(in->n_jobs + 1, sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_jobs; i++)
		keys[i] = job_key_of(in, i);
	qsort(keys, in->n_jobs, sizeof(*keys), cmp_account_key);
	for (size_t i = 0; i < in->n_jobs; i++) {
		const struct tj_admission_job *job = keys[i].job;
		const char *ns = or_empty(job->namespace);
		int64_t limit;

		if (i > 0 && keys[i - 1].bucket == keys[i].bucket &&
		    strcmp(or_empty(keys[i - 1].job->namespace), ns) == 0) {
			r->job_account[keys[i].index] = r->job_account[keys[i - 1].index];
			continue;
		}
		limit = quota_limit(in->config, ns, job->class_index);
		if (limit < 0)
			continue;
		r->accounts[n] = (struct account){ limit, usage_of(in, ns, job->class_index) };
		r->job_account[keys[i].index] = n++;
	}
	free(keys);
	return 0;
}

/* Messages */

/* Whether job may use node i of the input (its eligibility). */
static bool may_use(const struct tj_admission_job *job, size_t i)
{
	return !job->eligible || job->eligible[i];
}

/* "gh200 has 8 nodes of 4 GPUs: a job of 9 nodes x 4 GPUs never fits; at most 8". The
 * nodes counted are those of the class that hold one of its pods when empty; their size is
 * told when they are all alike, in the resource the request is described by. */
static void say_never_fits(const struct run *r, size_t b, const struct tj_admission_job *job,
                           int64_t most, struct tj_admission_decision *d)
{
	char first[64] = "", text[64];
	int n = 0;
	bool alike = true;

	for (size_t i = r->bucket_nodes[b]; i < r->bucket_nodes[b + 1]; i++) {
		const struct tj_admission_resources *alloc =
		        &r->in->nodes[r->class_nodes[i]].allocatable;

		if (!may_use(job, r->class_nodes[i]) || !holds_one(alloc, &job->request))
			continue;
		tj_admission_describe_node(text, sizeof(text), alloc, &job->request);
		if (n++ == 0)
			memcpy(first, text, sizeof(first));
		alike = alike && strcmp(first, text) == 0;
	}
	tj_admission_say_never_fits(d, class_name(r->in, b), job, most, n, alike ? first : "");
}

/* Decisions */

/* The most pods of the job the class holds when empty, every node it may use counted (a
 * cordoned node comes back), counting no further than the whole job. */
static int64_t most_pods(const struct run *r, size_t b, const struct tj_admission_job *job)
{
	int64_t total = 0, most = 0;

	if (!has_launcher(job)) {
		for (size_t i = r->bucket_nodes[b];
		     i < r->bucket_nodes[b + 1] && total < job->num_nodes; i++)
			if (may_use(job, r->class_nodes[i]))
				total += pods_on(&r->in->nodes[r->class_nodes[i]].allocatable,
				                 &job->request, job->num_nodes - total);
		return total;
	}
	/* With a launcher, on the node that loses the fewest ranks to it: the ranks each node
	 * holds alone (up to the whole job), less what the launcher's node gives up. */
	for (size_t i = r->bucket_nodes[b]; i < r->bucket_nodes[b + 1]; i++)
		if (may_use(job, r->class_nodes[i]))
			total = sat_add(total, pods_on(&r->in->nodes[r->class_nodes[i]].allocatable,
			                               &job->request, job->num_nodes));
	for (size_t i = r->bucket_nodes[b]; i < r->bucket_nodes[b + 1]; i++) {
		const struct tj_admission_resources *alloc =
		        &r->in->nodes[r->class_nodes[i]].allocatable;
		struct tj_admission_resources rest = *alloc;
		int64_t with;

		if (!may_use(job, r->class_nodes[i]) || !holds_one(alloc, &job->launcher))
			continue;
		take(&rest, &job->launcher);
		with = sat_add(sat_sub(total, pods_on(alloc, &job->request, job->num_nodes)),
		               pods_on(&rest, &job->request, job->num_nodes));
		if (with > most)
			most = with;
	}
	return most < job->num_nodes ? most : job->num_nodes;
}

/* The reasons, in the order of their numbers (tj_admission_reason_index). */
static const char *const reasons[] = {
	TJ_ADMISSION_REASON_RESOURCES, TJ_ADMISSION_REASON_PRIORITY, TJ_ADMISSION_REASON_QUOTA,
	TJ_ADMISSION_REASON_NEVER,     TJ_ADMISSION_REASON_QOS_GPUS, TJ_ADMISSION_REASON_BEGIN,
};

_Static_assert(sizeof(reasons) / sizeof(reasons[0]) ==
                       sizeof(((struct tj_admission_class_stats *)0)->waiting) /
                               sizeof(((struct tj_admission_class_stats *)0)->waiting[0]),
               "a count of waiting jobs per reason");

/* A decision's reason_number for each of them. */
enum reason_number {
	RESOURCES = 1,
	PRIORITY,
	QUOTA,
	NEVER,
	QOS_GPUS,
	BEGIN,
};

/* Every waiting job of a queue of thousands gets its reason each cycle: copied, not
 * formatted, and numbered for the walks over every decision. */
static void wait_for(struct tj_admission_decision *d, enum reason_number why)
{
	const char *reason = reasons[why - 1];
	size_t n = strlen(reason);

	if (n >= sizeof(d->reason))
		n = sizeof(d->reason) - 1;
	d->verdict = TJ_ADMISSION_WAITING;
	d->reason_number = (uint8_t)why;
	memcpy(d->reason, reason, n);
	d->reason[n] = '\0';
}

/* Admits the job on the nodes of r->ranks and takes what it needs from them. */
static int admit(struct run *r, size_t b, size_t j, bool backfilled)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];

	d->nodes = calloc((size_t)job->num_pods, sizeof(*d->nodes));
	if (!d->nodes)
		return -ENOMEM;
	d->verdict = TJ_ADMISSION_ADMITTED;
	d->backfilled = backfilled;
	d->reason_number = 0;
	d->reason[0] = '\0';
	tj_admission_memos_count(r, b, job, -1);
	for (int rank = 0; rank < job->num_pods; rank++) {
		d->nodes[rank] = r->slot_node[r->ranks[rank]];
		take(&r->free[r->ranks[rank]], &job->request);
		/* A node takes consecutive ranks: each node moves once. */
		if (job->request.gpus > 0 &&
		    (rank + 1 == job->num_pods || r->ranks[rank + 1] != r->ranks[rank]))
			tj_admission_fit_moved(r, r->ranks[rank]);
	}
	d->launcher_node = SIZE_MAX;
	if (has_launcher(job)) {
		d->launcher_node = r->slot_node[r->launcher_slot];
		take(&r->free[r->launcher_slot], &job->launcher);
		if (job->launcher.gpus > 0)
			tj_admission_fit_moved(r, r->launcher_slot);
	}
	tj_admission_memos_count(r, b, job, 1);
	r->era++;
	if (r->job_account[j] != SIZE_MAX)
		r->accounts[r->job_account[j]].held =
		        sat_add(r->accounts[r->job_account[j]].held, gang_gpus(job));
	for (size_t i = 0; i < job->n_charges; i++)
		r->quota_used[job->charges[i].limit] =
		        sat_add(r->quota_used[job->charges[i].limit], job->charges[i].now);
	if (job->tier_limit)
		r->tier_used[job->tier_limit - 1] =
		        sat_add(r->tier_used[job->tier_limit - 1], gang_gpus(job));
	r->res->classes[b].allocated_gpus =
	        sat_add(r->res->classes[b].allocated_gpus, gang_gpus(job));
	r->res->admitted++;
	r->res->backfilled += backfilled;
	return 0;
}

/* Whether the job would take its namespace past its limit; if so it waits, told why. */
static bool over_quota(struct run *r, size_t b, size_t j)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];
	const struct account *a;
	int64_t need = gang_gpus(job);

	if (r->job_account[j] == SIZE_MAX || need == 0)
		return false;
	a = &r->accounts[r->job_account[j]];
	if (sat_add(a->held, need) <= a->limit)
		return false;
	wait_for(d, QUOTA);
	snprintf(d->message, sizeof(d->message),
	         "namespace %s holds %" PRId64 " of its %" PRId64 " %s GPUs; the job needs %" PRId64
	         " more",
	         or_empty(job->namespace), a->held, a->limit, class_name(r->in, b), need);
	return true;
}

/* Whether one of the namespace's ResourceQuotas keeps the job from starting: its whole gang
 * needs more than a hard limit (NeverFits, unless it is a restart, whose live pods the quota
 * counts already), or its pods would take the quota past it now (it waits). Either way the
 * message names the quota and the resource. */
static bool over_resource_quota(struct run *r, size_t j)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];

	for (size_t i = 0; i < job->n_charges; i++) {
		const struct tj_admission_quota_charge *c = &job->charges[i];
		const struct tj_admission_quota_limit *l = &r->in->quota_limits[c->limit];
		char hard[32], used[32], need[32];

		tj_quota_format(hard, sizeof(hard), l->hard);
		if (!job->restart && c->whole > l->hard) {
			wait_for(d, QUOTA);
			if (!r->in->config->wait_if_never_fits)
				d->verdict = TJ_ADMISSION_NEVER_FITS;
			tj_quota_format(need, sizeof(need), c->whole);
			snprintf(d->message, sizeof(d->message),
			         "ResourceQuota %s of namespace %s allows %s %s in all; the job's "
			         "gang "
			         "needs %s: it never fits",
			         or_empty(l->quota), or_empty(l->namespace), hard,
			         or_empty(l->resource), need);
			return true;
		}
		if (sat_add(r->quota_used[c->limit], c->now) <= l->hard)
			continue;
		wait_for(d, QUOTA);
		tj_quota_format(used, sizeof(used), r->quota_used[c->limit]);
		tj_quota_format(need, sizeof(need), c->now);
		snprintf(d->message, sizeof(d->message),
		         "ResourceQuota %s of namespace %s: %s has %s of %s used; the job needs %s",
		         or_empty(l->quota), or_empty(l->namespace), or_empty(l->resource), used,
		         hard, need);
		return true;
	}
	return false;
}

/* Whether the job would take its namespace past its QOS tier's limit of GPUs: it waits,
 * told why; a gang larger than the limit itself never fits (a restart, whose live pods
 * count already, only waits). */
static bool over_tier_limit(struct run *r, size_t j)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];
	const struct tj_admission_tier_limit *l;
	int64_t need = gang_gpus(job), whole;

	if (!job->tier_limit || need == 0)
		return false;
	l = &r->in->tier_limits[job->tier_limit - 1];
	whole = job->num_pods == job->num_nodes
	                ? need
	                : sat_add(need, (job->num_nodes - job->num_pods) *
	                                        (job->request.gpus > 0 ? job->request.gpus : 0));
	if (!job->restart && whole > l->max_gpus) {
		wait_for(d, QOS_GPUS);
		if (!r->in->config->wait_if_never_fits)
			d->verdict = TJ_ADMISSION_NEVER_FITS;
		snprintf(d->message, sizeof(d->message),
		         "QOS %s allows namespace %s %" PRId64
		         " GPUs; the job's gang needs %" PRId64 ": it never fits",
		         or_empty(l->tier), or_empty(l->namespace), l->max_gpus, whole);
		return true;
	}
	if (sat_add(r->tier_used[job->tier_limit - 1], need) <= l->max_gpus)
		return false;
	wait_for(d, QOS_GPUS);
	snprintf(d->message, sizeof(d->message),
	         "namespace %s holds %" PRId64 " of the %" PRId64 " GPUs QOS %s allows it; the job "
	         "needs %" PRId64 " more",
	         or_empty(l->namespace), r->tier_used[job->tier_limit - 1], l->max_gpus,
	         or_empty(l->tier), need);
	return true;
}

/* Slot s of bucket b, for the job decided now, holds nothing (keep_off). */
static void keep_off(struct run *r, size_t b, ptrdiff_t s)
{
	if (s < (ptrdiff_t)r->bucket_slots[b] || s >= (ptrdiff_t)r->bucket_slots[b + 1] ||
	    r->avoiding[s])
		return;
	r->avoiding[s] = true;
	r->kept[s] = r->free[s];
	r->kept_slots[r->n_kept++] = (size_t)s;
	r->free[s] = (struct tj_admission_resources){ -1, -1, -1, -1 };
}

/* Slot s is in a reservation from start until until: the earliest start and the latest end
 * of the reservations holding it. */
static void hold_slot(struct run *r, size_t s, int64_t start, int64_t until)
{
	if (r->reserved_until[s] < until)
		r->reserved_until[s] = until;
	if (!r->reserved_from[s] || start < r->reserved_from[s])
		r->reserved_from[s] = start;
}

/* The slots of job's gang placed in r->ranks (and r->launcher_slot) are held for it from
 * start (> 0) until its walltime and grace end (for ever without a walltime). */
static void hold_gang(struct run *r, const struct tj_admission_job *job, int64_t start)
{
	int64_t until =
	        job->walltime > 0 ? sat_add(start, sat_add(job->walltime, job->grace)) : INT64_MAX;

	for (int rank = 0; rank < job->num_pods; rank++)
		hold_slot(r, r->ranks[rank], start, until);
	if (has_launcher(job))
		hold_slot(r, r->launcher_slot, start, until);
}

/* A hold from start (> 0), of a job of tier tier, widens the range of the holds' starts and
 * tiers that backfill reads. */
static void span_start(struct heads *heads, int64_t start, int tier)
{
	if (!heads->first_start || tier > heads->top_tier)
		heads->top_tier = tier;
	if (!heads->first_start || start < heads->first_start)
		heads->first_start = start;
	if (start > heads->last_start)
		heads->last_start = start;
}

/* The slots of bucket b that a gang giving its nodes back by end may not take: those with a
 * reservation that starts before end, or at a time unknown (Slurm's backfill looks at each
 * node's own plan); in r->too_soon, or NULL when there is none. */
static const bool *kept_until(struct run *r, size_t b, int64_t end, const struct heads *heads)
{
	size_t first = r->bucket_slots[b], last = r->bucket_slots[b + 1];

	if (end <= heads->first_start)
		return NULL;
	if (end > heads->last_start)
		return r->reserved;
	for (size_t s = first; s < last; s++)
		r->too_soon[s] =
		        r->reserved[s] && (!r->reserved_from[s] || r->reserved_from[s] < end);
	return r->too_soon;
}

/* A job behind a blocked head that cannot start now, but could if the gangs of lower tiers
 * on some nodes were gone: it preempts them (as Slurm's backfill scheduler preempts too),
 * its expected start their stop. It keeps off the nodes reserved for the jobs ahead as a
 * backfilled job does: off them all, or, with a walltime, off those whose reservations start
 * before it would end (from the latest stop any victim could have). It is no head (it counts
 * for no backfill depth), but the nodes it takes once they are gone are held for it from
 * then, so that no job decided after it in the cycle chooses them too, as victims' nodes or
 * free ones. */
static int backfill_preempting(struct run *r, size_t b, size_t j, struct heads *heads)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	const bool *kept = r->reserved;
	int64_t stop;

	if (!tj_admission_wants_victims(r, job, 0))
		return 0;
	if (job->walltime > 0 && heads->first_start > 0)
		kept = kept_until(r, b,
		                  sat_add(r->in->now, sat_add(r->longest_grace,
		                                              sat_add(job->walltime, job->grace))),
		                  heads);
	stop = tj_admission_preempt(r, b, j, kept, 0);
	if (stop <= 0)
		return stop < 0 ? (int)stop : 0;
	r->res->decisions[j].expected_start = stop;
	tj_admission_reserve_places(r, job);
	hold_gang(r, job, stop);
	/* Its hold counts among the reservations' starts that backfill reads (kept_until): a job
	 * that ends before the first head's start, but after this stop, stays off it. */
	span_start(heads, stop, job->tier);
	return 0;
}

/* Places a gang that gives its nodes back by end on the nodes no reservation holds and on
 * those whose reservations all start at end or later: it delays none of them. m, the memo of
 * its shape (NULL: none), says when an end that late is known not to fit already. */
static bool place_ending_by(struct run *r, size_t b, const struct tj_admission_job *job,
                            int64_t end, const struct heads *heads, struct shape_memo *m)
{
	const bool *kept;

	if (m && end >= m->no_fit_from)
		return false;
	kept = kept_until(r, b, end, heads);
	/* Every reserved node: placed off them already. */
	if (kept != r->reserved && tj_admission_place_gang(r, b, r->free, kept, job))
		return true;
	/* A launcher may fit beside fewer ranks' nodes and not beside more: no memo for it. */
	if (m && !has_launcher(job))
		m->no_fit_from = end;
	return false;
}

/* A job behind a blocked head: it starts now only if that cannot delay any job with a
 * reservation, that is if it keeps off every reserved node, or if its walltime, and the
 * grace its pods have to stop after it, end by the expected start of each reservation on
 * the nodes it takes (place_ending_by). Without a walltime nobody can tell when it ends: it may
 * still keep off the reserved nodes, but only when every job with a reservation has an expected
 * start; behind one whose start is unknown, it waits, so that a stream of such jobs cannot starve
 * it. A job of a tier below that of a job with a reservation keeps off the reserved nodes, its
 * walltime whatever: an expected start counts the walltimes of what runs, most jobs end before
 * theirs, and the job of the higher tier, ready before its expected start, would find the
 * lower one on its nodes and wait its grace to preempt it; off them, it fills what the
 * reservations leave. A tier with backfillReservedNodes takes that wait: its jobs backfill
 * behind any reservation as behind one of their own tier (for scavengers that stop within
 * moments of the notice). */
static int backfill(struct run *r, size_t b, size_t j, struct heads *heads, bool fits)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	const struct tj_admission_input *in = r->in;

	wait_for(&r->res->decisions[j], fits ? PRIORITY : RESOURCES);
	if (!in->config->backfill)
		return 0;
	if (!fits)
		return backfill_preempting(r, b, j, heads);
	if (job->walltime <= 0 && heads->unknown)
		return 0;
	struct shape_memo *m = tj_admission_memo_of(r, b, job);

	if (!m || m->fits_elsewhere != 0) {
		if (tj_admission_place_gang(r, b, r->free, r->reserved, job))
			return admit(r, b, j, true);
		if (m)
			m->fits_elsewhere = 0;
	}
	if (job->walltime > 0 && heads->first_start > 0 &&
	    (job->tier >= heads->top_tier || job->backfill_reserved_nodes) &&
	    place_ending_by(r, b, job, sat_add(in->now, sat_add(job->walltime, job->grace)), heads,
	                    m))
		return admit(r, b, j, true);
	return backfill_preempting(r, b, j, heads);
}

/* Job j is a head reserved from start (0: unknown) on the slots of r->ranks (and
 * r->launcher_slot). */
static void hold_reservation(struct run *r, size_t j, int64_t start, struct heads *heads)
{
	if (start)
		hold_gang(r, &r->in->jobs[j], start);
	r->res->decisions[j].expected_start = start;
	heads->n++;
	if (!start)
		heads->unknown = true;
	else
		span_start(heads, start, r->in->jobs[j].tier);
}

/* A job whose victims are on their way out, on the nodes it chose then (claimed): admitted
 * there if they are free now, else reserved on them from the time they are free, and a
 * claimant (start_claimants: it may start elsewhere once the rest of its tier is decided). 1
 * when the claim cannot be kept (a node of it gone, off its class, one it must avoid, or
 * reserved for a job ahead; or the nodes never free by a known time): it is then decided as
 * any job. It comes first in its tier for its claim alone: taking other free nodes then would
 * take them from the jobs of its tier ahead of it that did not preempt. */
static int decide_claimed(struct run *r, size_t b, size_t j, struct heads *heads)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	size_t first = r->bucket_slots[b], last = r->bucket_slots[b + 1];
	int64_t start;

	if (!job->claimed || job->n_claimed != (size_t)job->num_pods || has_launcher(job))
		return 1;
	for (size_t s = first; s < last; s++)
		r->too_soon[s] = true;
	for (size_t i = 0; i < job->n_claimed; i++) {
		ptrdiff_t s = job->claimed[i] < r->in->n_nodes ? r->node_slot[job->claimed[i]] : -1;

		if (s < (ptrdiff_t)first || s >= (ptrdiff_t)last || r->avoiding[s] ||
		    r->reserved[s])
			return 1;
		r->too_soon[s] = false;
	}
	if (tj_admission_place_gang(r, b, r->free, r->too_soon, job))
		return admit(r, b, j, heads->n > 0);
	/* Every other node locked: the reservation counts the releases of these alone. */
	for (size_t s = first; s < last; s++)
		r->locked[s] = r->too_soon[s];
	start = tj_admission_reserve(r, b, job, NULL, 0);
	if (!start)
		return 1;
	wait_for(&r->res->decisions[j], RESOURCES);
	hold_reservation(r, j, start, heads);
	r->claimants[r->n_claimants++] = j;
	return 0;
}

/* A claimant, once the rest of its tier is decided: it starts now wherever it fits off the
 * reserved nodes (its own claim among them), as a job backfilled there would, if its
 * namespace's limits still let it (what its tier admitted meanwhile counts); else it keeps
 * waiting for its claim, its decision as it was. */
static int start_elsewhere(struct run *r, size_t b, size_t j, struct heads *heads)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];
	struct tj_admission_decision was = *d;
	int err;

	if (over_resource_quota(r, j) || over_quota(r, b, j) || over_tier_limit(r, j)) {
		*d = was;
		return 0;
	}
	if (!tj_admission_place_gang(r, b, r->free, r->reserved, job))
		return 0;
	err = admit(r, b, j, true);
	if (err == 0) {
		d->expected_start = 0;
		r->res->classes[b].reserved_gpus -= gang_gpus(job);
	}
	return err;
}

/* The reservation of a blocked job (reason Resources or Priority already said), on what the
 * reservations of the jobs ahead of it leave: their nodes hold nothing for it until the
 * last of those jobs on each would end (never, for one without a walltime). A job that
 * preempts (admission_preempt.c) reserves instead the nodes it takes once its victims are
 * gone, from their stop on. */
static int reserve(struct run *r, size_t b, size_t j, struct heads *heads)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	size_t first = r->bucket_slots[b], last = r->bucket_slots[b + 1], n_unlocks = 0;
	bool later = job->not_before > r->in->now;
	bool may_preempt = !later && tj_admission_wants_victims(r, job, 0);
	int64_t start, stop;

	for (size_t s = first; heads->n && s < last; s++) {
		if (!r->reserved[s])
			continue;
		r->locked[s] = true;
		if (r->reserved_until[s] != INT64_MAX)
			r->unlocks[n_unlocks++] = (struct release_key){ r->reserved_until[s], s };
	}
	if (may_preempt)
		memcpy(&r->reserved_ahead[first], &r->reserved[first],
		       (last - first) * sizeof(*r->reserved));
	tj_admission_sort_releases(r->unlocks, n_unlocks);
	start = tj_admission_reserve(r, b, job, r->unlocks, n_unlocks);
	if (later && start && start < job->not_before)
		start = job->not_before;
	if (may_preempt && tj_admission_wants_victims(r, job, start)) {
		size_t launcher_slot = r->launcher_slot;

		/* The choice of victims places the gang again: the reservation's places are
		 * kept, for when it preempts nobody. */
		memcpy(r->reserved_ranks, r->ranks, (size_t)job->num_pods * sizeof(*r->ranks));
		stop = tj_admission_preempt(r, b, j, r->reserved_ahead, start);
		if (stop < 0)
			return (int)stop;
		if (stop == 0) {
			memcpy(r->ranks, r->reserved_ranks,
			       (size_t)job->num_pods * sizeof(*r->ranks));
			r->launcher_slot = launcher_slot;
		} else {
			/* Its reservation is where it goes once they are gone. */
			memcpy(&r->reserved[first], &r->reserved_ahead[first],
			       (last - first) * sizeof(*r->reserved));
			r->epoch++;
			tj_admission_reserve_places(r, job);
			if (!start)
				r->res->classes[b].reserved_gpus += gang_gpus(job);
			start = stop;
		}
	}
	hold_reservation(r, j, start, heads);
	return 0;
}

/* How many blocked jobs of a class get a reservation (the backfill depth, at least 1). */
static size_t depth(const struct run *r)
{
	return r->in->config->reservations > 1 ? (size_t)r->in->config->reservations : 1;
}

/* A job that may not start yet (job->not_before: a restart in its backoff) waits with reason
 * BeginTime in its place. Within the backfill depth it is reserved from its begin time: where
 * its gang fits now, off the nodes reserved for the jobs ahead, else as any blocked job, from the
 * later of the releases that let it fit and its begin time. */
static int wait_for_begin(struct run *r, size_t b, size_t j, struct heads *heads)
{
	const struct tj_admission_job *job = &r->in->jobs[j];

	wait_for(&r->res->decisions[j], BEGIN);
	if (heads->n >= depth(r))
		return 0;
	if (!tj_admission_place_gang(r, b, r->free, r->reserved, job))
		return reserve(r, b, j, heads);
	tj_admission_reserve_places(r, job);
	r->res->classes[b].reserved_gpus += gang_gpus(job);
	hold_reservation(r, j, job->not_before, heads);
	return 0;
}

static int decide(struct run *r, size_t b, size_t j, struct heads *heads)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];
	bool fits = tj_admission_survey(r, b, job, &d->free_nodes);
	int64_t most = 0;
	int err;

	/* A restart has held its nodes before: it waits for them rather than fail. */
	if (!job->restart && (most = most_pods(r, b, job)) < job->num_nodes) {
		wait_for(d, NEVER);
		if (!r->in->config->wait_if_never_fits)
			d->verdict = TJ_ADMISSION_NEVER_FITS;
		say_never_fits(r, b, job, most, d);
		return 0;
	}
	if (over_resource_quota(r, j) || over_quota(r, b, j) || over_tier_limit(r, j))
		return 0;
	if (job->not_before > r->in->now)
		return wait_for_begin(r, b, j, heads);
	if (job->preempting && (err = decide_claimed(r, b, j, heads)) != 1)
		return err;
	if (heads->n) {
		err = backfill(r, b, j, heads, fits);
		if (err == 0 && d->verdict == TJ_ADMISSION_WAITING && !d->n_victims &&
		    heads->n < depth(r))
			err = reserve(r, b, j, heads);
		return err;
	}
	if (fits && tj_admission_place_gang(r, b, r->free, NULL, job))
		return admit(r, b, j, false);
	wait_for(d, RESOURCES);
	return reserve(r, b, j, heads);
}

/* A job kept off some nodes (those it must avoid, those it may not use) sees them full while
 * it is decided, and no release on them counts for its reservation (give_back); they are
 * given back as they were afterwards. It reads and keeps no memo, which count what is free
 * for the others (run.viewing). */
typedef int decide_fn(struct run *r, size_t b, size_t j, struct heads *heads);

static int decide_avoiding(struct run *r, size_t b, size_t j, struct heads *heads,
                           decide_fn *decide_job)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	int err;

	r->n_kept = 0;
	for (size_t i = 0; i < job->n_excluded && i < TJ_ADMISSION_MAX_EXCLUDED; i++)
		keep_off(r, b, r->node_slot[job->excluded[i]]);
	for (size_t s = r->bucket_slots[b]; job->eligible && s < r->bucket_slots[b + 1]; s++)
		if (!job->eligible[r->slot_node[s]])
			keep_off(r, b, (ptrdiff_t)s);
	size_t changed = r->n_kept;

	r->era += changed > 0;
	r->viewing = changed > 0;
	err = decide_job(r, b, j, heads);
	for (size_t i = 0; i < changed; i++) {
		size_t s = r->kept_slots[i];

		r->free[s] = r->kept[s];
		r->avoiding[s] = false;
	}
	r->n_kept = 0;
	r->era += changed > 0;
	r->viewing = false;
	return err;
}

/* Whether the jobs at i and k of the order are of one group of a class's queue: the restarts,
 * or the jobs of one tier. */
static bool same_tier(const struct run *r, size_t i, size_t k)
{
	const struct tj_admission_job *x = &r->in->jobs[r->order[i]],
	                              *y = &r->in->jobs[r->order[k]];

	return x->restart == y->restart && (x->restart || x->tier == y->tier);
}

/* The claimants of the tier just decided, in their order, may start elsewhere now. */
static int start_claimants(struct run *r, size_t b, struct heads *heads)
{
	int err = 0;

	for (size_t i = 0; i < r->n_claimants && err == 0; i++)
		if (r->res->decisions[r->claimants[i]].verdict == TJ_ADMISSION_WAITING)
			err = decide_avoiding(r, b, r->claimants[i], heads, start_elsewhere);
	r->n_claimants = 0;
	return err;
}

/* Positions, queue lengths, the messages that tell them, and the counts by reason. */
static void number_waiting(struct run *r, size_t b)
{
	struct tj_admission_class_stats *st = &r->res->classes[b];
	int waiting = 0, position = 0;

	for (size_t i = r->bucket_jobs[b]; i < r->bucket_jobs[b + 1]; i++)
		waiting += r->res->decisions[r->order[i]].verdict == TJ_ADMISSION_WAITING;
	for (size_t i = r->bucket_jobs[b]; i < r->bucket_jobs[b + 1]; i++) {
		struct tj_admission_decision *d = &r->res->decisions[r->order[i]];

		d->queue_length = waiting;
		if (d->verdict != TJ_ADMISSION_WAITING)
			continue;
		d->position = ++position;
		if (d->reason_number)
			st->waiting[d->reason_number - 1]++;
		if (!r->in->config->defer_waiting_messages)
			tj_admission_say_deferred(r->in, r->order[i], d);
	}
}

void tj_admission_say_deferred(const struct tj_admission_input *in, size_t j,
                               struct tj_admission_decision *d)
{
	const struct tj_admission_job *job = &in->jobs[j];

	if (d->verdict != TJ_ADMISSION_WAITING ||
	    (d->reason_number != RESOURCES && d->reason_number != PRIORITY &&
	     d->reason_number != BEGIN))
		return;
	tj_admission_say_waiting(d, class_name(in, bucket_of_class(in, job->class_index)), job,
	                         in->now);
	if (d->n_victims)
		tj_admission_say_preempting(d, in->running);
	else if (job->preempting)
		tj_admission_say_preempting(d, NULL);
}

/* The texts of a decision lie together, after its other fields. */
_Static_assert(offsetof(struct tj_admission_decision, message) ==
                       offsetof(struct tj_admission_decision, reason) + TJ_REASON_MAX,
               "reason and message are adjacent");
_Static_assert(sizeof(struct tj_admission_decision) ==
                       offsetof(struct tj_admission_decision, message) + TJ_MESSAGE_MAX,
               "the texts come last");

/* n decisions not made yet: every field zero, and the texts empty. Only the first byte of
 * each text is written: a text is read only up to its end, and clearing the whole of both
 * for every job of a queue of thousands writes megabytes a cycle. NULL without memory. */
static struct tj_admission_decision *blank_decisions(size_t n)
{
	struct tj_admission_decision *ds = malloc((n + 1) * sizeof(*ds));
	const size_t texts = offsetof(struct tj_admission_decision, reason);

	for (size_t i = 0; ds && i < n; i++) {
		memset(&ds[i], 0, texts);
		ds[i].reason[0] = '\0';
		ds[i].message[0] = '\0';
	}
	return ds;
}

/* The tries of one class in a run (admission.h, "Tries"): from where in its queue, how many
 * made, and the place of the first job left untried from there on (SIZE_MAX: none). */
struct tries {
	size_t from, made, stopped;
};

/* Whether the job needs a look at the nodes of its class: no job before it in the run had
 * its shape (or what that look counted is stale), or it sees some nodes full
 * (decide_avoiding). */
static bool needs_look(struct run *r, size_t b, const struct tj_admission_job *job)
{
	return job->n_excluded > 0 || job->eligible || !tj_admission_memo_of(r, b, job);
}

/* Whether job j, at place k of class b's queue, is decided in this run; if not, it waits
 * untried. */
static bool tried(struct run *r, size_t b, size_t j, size_t k, struct tries *t,
                  const struct heads *heads)
{
	const struct tj_admission_job *job = &r->in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];
	int max = r->in->config->max_tries;

	if (r->skip) {
		if (!r->skip[j])
			return true;
	} else if (r->afresh || max <= 0 || heads->n < depth(r) || job->restart ||
	           job->preempting || !needs_look(r, b, job)) {
		return true;
	} else if (k >= t->from && t->made < (size_t)max) {
		t->made++;
		return true;
	} else if (k >= t->from && t->stopped == SIZE_MAX) {
		t->stopped = k;
	}
	wait_for(d, PRIORITY);
	d->untried = true;
	r->res->untried++;
	return false;
}

/* Bucket b is settled (rule "Settled classes"): its jobs wait, settled; its tries, which began
 * at the start of its queue, begin there again. */
static void settle(struct run *r, size_t b)
{
	r->res->settled_classes[b] = true;
	for (size_t i = r->bucket_jobs[b]; i < r->bucket_jobs[b + 1]; i++) {
		struct tj_admission_decision *d = &r->res->decisions[r->order[i]];

		d->verdict = TJ_ADMISSION_WAITING;
		d->settled = true;
		r->res->settled++;
	}
}

static int decide_queue(const struct tj_admission_input *in, bool afresh, const bool *skip,
                        struct tj_admission_result **ret)
{
	struct run r = { .in = in, .era = 1, .epoch = 1, .afresh = afresh, .skip = skip };
	size_t classes = 0; /* with jobs */
	struct tj_admission_result *res;
	int err;

	if (!in || !ret)
		return -EINVAL;
	err = validate(in);
	if (err < 0)
		return err;
	res = calloc(1, sizeof(*res));
	if (!res)
		return -ENOMEM;
	r.res = res;
	r.n_buckets = in->n_classes + 1;
	res->n_decisions = in->n_jobs;
	res->decisions = blank_decisions(in->n_jobs);
	res->classes = calloc(r.n_buckets, sizeof(*res->classes));
	res->cursors = calloc(r.n_buckets, sizeof(*res->cursors));
	res->digests = calloc(r.n_buckets, sizeof(*res->digests));
	res->settled_classes = calloc(r.n_buckets, sizeof(*res->settled_classes));
	err = !res->decisions || !res->classes || !res->cursors || !res->digests ||
	                      !res->settled_classes
	              ? -ENOMEM
	              : run_alloc(&r);
	if (err == 0)
		err = index_nodes(&r);
	if (err == 0)
		err = order_jobs(&r);
	if (err == 0)
		err = open_accounts(&r);
	/* With the jobs of one class, a cycle comes of a change to it: the digests would cost
	 * and settle nothing. */
	for (size_t b = 0; b < r.n_buckets && err == 0; b++)
		classes += r.bucket_jobs[b + 1] > r.bucket_jobs[b];
	for (size_t b = 0; b < r.n_buckets && err == 0; b++) {
		size_t first = r.bucket_jobs[b], n = r.bucket_jobs[b + 1] - first;
		struct tries t = { .from = in->cursors && in->cursors[b] < n ? in->cursors[b] : 0,
			           .stopped = SIZE_MAX };
		struct heads heads = { 0 };
		size_t acted = res->admitted + res->preempting;

		/* A class whose tries resume past its start left jobs untried last time, where its
		 * tries began elsewhere: it cannot be settled. */
		res->digests[b] =
		        classes > 1 && !afresh && !t.from ? tj_admission_class_digest(&r, b) : 0;
		if (res->digests[b] && in->digests && in->digests[b] == res->digests[b]) {
			settle(&r, b);
			continue;
		}
		for (size_t i = first; i < first + n && err == 0; i++) {
			if (tried(&r, b, r.order[i], i - first, &t, &heads))
				err = decide_avoiding(&r, b, r.order[i], &heads, decide);
			if (err == 0 && r.n_claimants &&
			    (i + 1 == first + n || !same_tier(&r, i, i + 1)))
				err = start_claimants(&r, b, &heads);
		}
		res->cursors[b] = t.stopped == SIZE_MAX ? 0 : t.stopped;
		/* A class that admitted or preempted is not settled next time: the caller acts on
		 * it, and what it admitted counts against the limits of the classes after it. */
		if (res->admitted + res->preempting != acted)
			res->digests[b] = 0;
		number_waiting(&r, b);
	}
	run_clear(&r);
	if (err < 0) {
		tj_admission_result_free(res);
		return err;
	}
	*ret = res;
	return 0;
}

int tj_admit(const struct tj_admission_input *in, struct tj_admission_result **ret)
{
	return decide_queue(in, false, NULL, ret);
}

int tj_admission_decide_afresh(const struct tj_admission_input *in,
                               struct tj_admission_result **ret)
{
	return decide_queue(in, true, NULL, ret);
}

int tj_admission_decide_afresh_without(const struct tj_admission_input *in, const bool *untried,
                                       struct tj_admission_result **ret)
{
	return decide_queue(in, true, untried, ret);
}

struct tj_admission_result *tj_admission_result_free(struct tj_admission_result *res)
{
	if (!res)
		return NULL;
	for (size_t i = 0; i < res->n_decisions && res->decisions; i++) {
		free(res->decisions[i].nodes);
		free(res->decisions[i].victims);
		free(res->decisions[i].claimed);
	}
	free(res->decisions);
	free(res->classes);
	free(res->cursors);
	free(res->digests);
	free(res->settled_classes);
	free(res);
	return NULL;
}

int tj_admission_reason_index(const char *reason)
{
	for (int i = 0; reason && i < (int)(sizeof(reasons) / sizeof(reasons[0])); i++)
		if (strcmp(reason, reasons[i]) == 0)
			return i;
	return -1;
}
