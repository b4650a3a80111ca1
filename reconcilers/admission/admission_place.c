/* The choice of nodes for a gang and the reservation of the blocked head (admission.h). */
#include "reconcilers/admission/admission_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Node choice */

/* The slots of bucket b that may hold a pod of req in free, from the first to *ret_end: with
 * GPUs asked of what is free now, those that had GPUs free when the run began (run.open);
 * else every slot of the bucket. In slot order either way. */
static const size_t *slots_for(const struct run *r, size_t b,
                               const struct tj_admission_resources *free,
                               const struct tj_admission_resources *req, const size_t **ret_end)
{
	if (!r->afresh && free == r->free && req->gpus > 0) {
		*ret_end = &r->open[r->open_bucket[b + 1]];
		return &r->open[r->open_bucket[b]];
	}
	*ret_end = &r->every[r->bucket_slots[b + 1]];
	return &r->every[r->bucket_slots[b]];
}

static bool same_shape(const struct tj_admission_job *x, const struct tj_admission_job *y)
{
	return x->num_pods == y->num_pods &&
	       memcmp(&x->request, &y->request, sizeof(x->request)) == 0 &&
	       memcmp(&x->launcher, &y->launcher, sizeof(x->launcher)) == 0;
}

static uint64_t shape_hash(size_t b, const struct tj_admission_job *job)
{
	int64_t w[10] = { (int64_t)b, job->num_pods };
	uint64_t h = 14695981039346656037ULL;

	components(&job->request, &w[2]);
	components(&job->launcher, &w[6]);
	for (size_t i = 0; i < 10; i++)
		h = (h ^ (uint64_t)w[i]) * 1099511628211ULL;
	return h ^ h >> 29;
}

/* The place in r->shapes of the shape of job (of bucket b), added if new; SIZE_MAX for a job
 * that is not the input's, or when the places are three quarters full. */
static size_t shape_of(struct run *r, size_t b, const struct tj_admission_job *job)
{
	const struct tj_admission_job *jobs = r->in->jobs;
	/* Compared as addresses: a pointer into another array has no place in this one. */
	uintptr_t from = (uintptr_t)jobs, to = (uintptr_t)job;
	size_t j = to >= from ? (to - from) / sizeof(*jobs) : SIZE_MAX, at;

	if (!r->shapes || j >= r->in->n_jobs || &jobs[j] != job)
		return SIZE_MAX;
	if (r->job_shape[j])
		return r->job_shape[j] - 1;
	for (at = shape_hash(b, job) & (SHAPES_SEEN - 1); r->shapes[at].job;
	     at = (at + 1) & (SHAPES_SEEN - 1)) {
		const struct shape_seen *seen = &r->shapes[at];

		if (seen->bucket == b && same_shape(&jobs[seen->job - 1], job)) {
			r->job_shape[j] = at + 1;
			return at;
		}
	}
	if (4 * (r->n_shapes + 1) > 3 * SHAPES_SEEN)
		return SIZE_MAX;
	r->shapes[at] = (struct shape_seen){ j + 1, b, 0 };
	r->n_shapes++;
	r->job_shape[j] = at + 1;
	return at;
}

struct shape_memo *tj_admission_memo_of(struct run *r, size_t b, const struct tj_admission_job *job)
{
	size_t at;

	if (r->afresh || r->viewing)
		return NULL;
	if ((at = shape_of(r, b, job)) != SIZE_MAX) {
		size_t m = r->shapes[at].memo;

		return m && r->memos[m - 1].shape == at + 1 && r->memos[m - 1].epoch == r->epoch
		               ? &r->memos[m - 1]
		               : NULL;
	}
	for (size_t i = 0; i < SHAPE_MEMOS; i++) {
		struct shape_memo *m = &r->memos[i];

		if (m->epoch == r->epoch && m->bucket == b && m->num_pods == job->num_pods &&
		    memcmp(&m->request, &job->request, sizeof(m->request)) == 0 &&
		    memcmp(&m->launcher, &job->launcher, sizeof(m->launcher)) == 0)
			return m;
	}
	return NULL;
}

/* What free, a slot's, holds of m's shape, counted into m (sign 1) or out of it (-1). */
static void count_slot(struct shape_memo *m, const struct tj_admission_resources *free, int sign)
{
	if (!holds_one(free, &m->request))
		return;
	m->free_nodes += sign;
	m->total += sign * pods_on(free, &m->request, m->num_pods);
}

void tj_admission_memos_count(struct run *r, size_t b, const struct tj_admission_job *job, int sign)
{
	for (size_t i = 0; i < SHAPE_MEMOS; i++) {
		struct shape_memo *m = &r->memos[i];
		bool launcher_counted = !has_launcher(job);

		if (m->epoch != r->epoch || m->bucket != b)
			continue;
		/* A node takes consecutive ranks: each node once. */
		for (int rank = 0; rank < job->num_pods; rank++) {
			if (rank > 0 && r->ranks[rank] == r->ranks[rank - 1])
				continue;
			count_slot(m, &r->free[r->ranks[rank]], sign);
			launcher_counted = launcher_counted || r->ranks[rank] == r->launcher_slot;
		}
		if (!launcher_counted)
			count_slot(m, &r->free[r->launcher_slot], sign);
	}
}

/* Whether the gang fits in what is free now, and how many nodes hold one of its pods. */
bool tj_admission_survey(struct run *r, size_t b, const struct tj_admission_job *job,
                         int *ret_nodes)
{
	struct shape_memo *m = tj_admission_memo_of(r, b, job), own;

	if (!m) {
		m = &own;
		size_t at = SIZE_MAX;

		if (!r->afresh && !r->viewing) {
			at = shape_of(r, b, job);
			if (at != SIZE_MAX)
				r->shapes[at].memo = r->next_memo + 1;
			m = &r->memos[r->next_memo];
			r->next_memo = (r->next_memo + 1) % SHAPE_MEMOS;
		}
		*m = (struct shape_memo){ .shape = at == SIZE_MAX ? 0 : at + 1,
			                  .epoch = r->epoch,
			                  .era = r->era - 1,
			                  .bucket = b,
			                  .request = job->request,
			                  .launcher = job->launcher,
			                  .num_pods = job->num_pods,
			                  .fits_elsewhere = -1,
			                  .no_fit_from = INT64_MAX };
		const size_t *end, *p = slots_for(r, b, r->free, &job->request, &end);

		for (; p < end; p++)
			count_slot(m, &r->free[*p], 1);
	}
	if (m->era != r->era) {
		/* A launcher needs a node in what the ranks leave: only a placement tells. */
		m->fits = m->total >= job->num_pods &&
		          (!has_launcher(job) || tj_admission_place_gang(r, b, r->free, NULL, job));
		if (has_launcher(job))
			m->fits_elsewhere = -1;
		m->era = r->era;
	}
	*ret_nodes = m->free_nodes;
	return m->fits;
}

static int cmp_room(const void *a, const void *b)
{
	const struct room *x = a, *y = b;

	if (x->pods != y->pods)
		return x->pods > y->pods ? -1 : 1;
	return x->domain < y->domain ? -1 : x->domain > y->domain;
}

/* Marks the domains a gang of k pods goes into: as few as can hold it. They are the largest
 * ones, except the last, which is the tightest that holds the rest (with a single domain,
 * the tightest that holds the whole gang), so that large domains stay whole for large
 * gangs. Ties go to the domain whose name sorts first. */
static void choose_domains(struct run *r, size_t nd, int64_t k)
{
	size_t n = 0, m = 0, best;
	int64_t sum = 0;

	memset(r->chosen, 0, nd * sizeof(*r->chosen));
	for (size_t d = 0; d < nd; d++)
		if (r->domain_pods[d] > 0)
			r->rooms[n++] = (struct room){ r->domain_pods[d], d };
	qsort(r->rooms, n, sizeof(*r->rooms), cmp_room);
	while (sat_add(sum, r->rooms[m].pods) < k) {
		sum += r->rooms[m].pods;
		r->chosen[r->rooms[m++].domain] = true;
	}
	best = m;
	for (size_t i = m + 1; i < n && r->rooms[i].pods >= k - sum; i++)
		if (r->rooms[i].pods < r->rooms[best].pods)
			best = i;
	r->chosen[r->rooms[best].domain] = true;
}

/* Best fit: fewer free GPUs first; for a reservation, then fewer free now (the node a
 * running job gives back before one that backfill could use meanwhile); then the name (slot
 * order is name order). */
static bool fits_better(const struct candidate *x, const struct candidate *y)
{
	if (x->gpus != y->gpus)
		return x->gpus < y->gpus;
	if (x->now_gpus != y->now_gpus)
		return x->now_gpus < y->now_gpus;
	return x->slot < y->slot;
}

static struct candidate candidate(const struct run *r, const struct tj_admission_resources *free,
                                  size_t s)
{
	return (struct candidate){ free[s].gpus, r->reserving ? r->free[s].gpus : 0, s };
}

static int cmp_candidate(const void *a, const void *b)
{
	return fits_better(a, b) ? -1 : fits_better(b, a);
}

/* Restores the heap below i: the worst fit of the heap is at its top. */
static void sift_down(struct candidate *heap, size_t n, size_t i)
{
	for (;;) {
		size_t worst = i, l = 2 * i + 1, rt = l + 1;
		struct candidate t;

		if (l < n && fits_better(&heap[worst], &heap[l]))
			worst = l;
		if (rt < n && fits_better(&heap[worst], &heap[rt]))
			worst = rt;
		if (worst == i)
			return;
		t = heap[i];
		heap[i] = heap[worst];
		heap[worst] = t;
		i = worst;
	}
}

static void sift_up(struct candidate *heap, size_t i)
{
	while (i > 0 && fits_better(&heap[(i - 1) / 2], &heap[i])) {
		struct candidate t = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/* Keeps slot s among the k best fits found so far, the *n of r->cands. Every candidate holds
 * at least one pod, so no gang needs more than k of them; a heap of k keeps the choice linear
 * in the nodes of the class, where sorting them all would not be. */
static void keep_best(struct run *r, const struct tj_admission_resources *free, size_t s, int64_t k,
                      size_t *n)
{
	struct candidate c = candidate(r, free, s);

	if (*n < (size_t)k) {
		r->cands[*n] = c;
		sift_up(r->cands, (*n)++);
	} else if (fits_better(&c, &r->cands[0])) {
		r->cands[0] = c;
		sift_down(r->cands, *n, 0);
	}
}

/* The k best-fitting nodes of the chosen domains, in r->cands; their count. */
static size_t select_best(struct run *r, size_t b, const struct tj_admission_resources *free,
                          const struct tj_admission_job *job, int64_t k)
{
	const size_t *end, *p = slots_for(r, b, free, &job->request, &end);
	size_t n = 0;

	for (; p < end; p++)
		if (r->pods[*p] > 0 && r->chosen[r->domain[*p]])
			keep_best(r, free, *p, k, &n);
	return n;
}

/* Whether the gang fits in `free`, leaving out the slots of `avoid` when given: the cheap
 * first look of a placement, which stops as soon as the gang is whole and counts no node
 * past it (most backfill candidates do not fit off the head's reserved nodes). */
static bool fits_in(const struct run *r, size_t b, const struct tj_admission_resources *free,
                    const bool *avoid, const struct tj_admission_job *job)
{
	const size_t *end, *p = slots_for(r, b, free, &job->request, &end);
	int64_t total = 0;

	for (; p < end && total < job->num_pods; p++)
		if ((!avoid || !avoid[*p]) && holds_one(&free[*p], &job->request))
			total += pods_on(&free[*p], &job->request, job->num_pods - total);
	return total >= job->num_pods;
}

/* Best fit in order */

static int cmp_fit(const void *a, const void *b)
{
	const struct fit_key *x = a, *y = b;

	if (x->gpus != y->gpus)
		return x->gpus < y->gpus ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

int tj_admission_fit_order(struct run *r)
{
	size_t n = r->open_bucket[r->n_buckets];

	r->by_fit = calloc(n + 1, sizeof(*r->by_fit));
	r->moved = calloc(r->n_slots + 1, sizeof(*r->moved));
	if (!r->by_fit || !r->moved)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		r->by_fit[i] = (struct fit_key){ r->free[r->open[i]].gpus, r->open[i] };
	for (size_t b = 0; b < r->n_buckets; b++)
		tj_admission_sort_keys(&r->by_fit[r->open_bucket[b]],
		                       r->open_bucket[b + 1] - r->open_bucket[b],
		                       sizeof(*r->by_fit), cmp_fit);
	return 0;
}

/* Whether an entry of by_fit or moved is the slot's place now. */
static bool fit_current(const struct run *r, const struct fit_key *k)
{
	return r->free[k->slot].gpus == k->gpus;
}

void tj_admission_fit_moved(struct run *r, size_t s)
{
	struct fit_key k = { r->free[s].gpus, s };
	size_t lo = 0, hi;

	if (k.gpus <= 0)
		return; /* no pod that asks for GPUs goes there any more */
	if (r->n_moved == r->n_slots) {
		/* Full: only stale entries are left out, and each slot has one place now. */
		size_t kept = 0;

		for (size_t i = 0; i < r->n_moved; i++)
			if (fit_current(r, &r->moved[i]))
				r->moved[kept++] = r->moved[i];
		r->n_moved = kept;
	}
	hi = r->n_moved;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_fit(&r->moved[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&r->moved[lo + 1], &r->moved[lo], (r->n_moved - lo) * sizeof(*r->moved));
	r->moved[lo] = k;
	r->n_moved++;
}

/* place_ranks in what is free now, with one domain: the slots of bucket b best fit first
 * (fewer free GPUs, then slot order), each taking as many ranks as it holds, until the gang
 * is whole, as the heap of place_ranks would choose them; the walk stops there. */
static bool place_in_order(struct run *r, size_t b, const bool *avoid,
                           const struct tj_admission_job *job)
{
	const struct fit_key *x = &r->by_fit[r->open_bucket[b]],
	                     *x_end = &r->by_fit[r->open_bucket[b + 1]], *y = r->moved,
	                     *y_end = &r->moved[r->n_moved];
	size_t first = r->bucket_slots[b], last = r->bucket_slots[b + 1];
	int64_t k = job->num_pods, rank = 0;

	while (rank < k) {
		const struct fit_key *next;

		/* Stale entries, and moved slots of other buckets, are passed over. */
		while (x < x_end && !fit_current(r, x))
			x++;
		while (y < y_end && (y->slot < first || y->slot >= last || !fit_current(r, y)))
			y++;
		if (x == x_end && y == y_end)
			return false;
		if (y == y_end || (x < x_end && cmp_fit(x, y) < 0))
			next = x++;
		else
			next = y++;
		if (avoid && avoid[next->slot])
			continue;
		for (int64_t pods = pods_on(&r->free[next->slot], &job->request, k - rank);
		     pods > 0; pods--)
			r->ranks[rank++] = next->slot;
	}
	return true;
}

/* Chooses the nodes of a gang in `free`, leaving out the slots of `avoid` when given, and
 * writes the slot of each rank to r->ranks; false if the gang does not fit. A node takes as
 * many consecutive ranks as it holds. */
static bool place_ranks(struct run *r, size_t b, const struct tj_admission_resources *free,
                        const bool *avoid, const struct tj_admission_job *job)
{
	size_t nd = r->n_domains[b], n = 0;
	int64_t k = job->num_pods, rank = 0;

	if (nd <= 1 && !r->afresh && free == r->free && job->request.gpus > 0)
		return place_in_order(r, b, avoid, job);
	if (!fits_in(r, b, free, avoid, job))
		return false;
	const size_t *end, *p = slots_for(r, b, free, &job->request, &end);

	if (nd > 1) {
		/* What a domain holds is counted in full, so that the tightest one wins. */
		memset(r->domain_pods, 0, nd * sizeof(*r->domain_pods));
		for (; p < end; p++) {
			size_t s = *p;

			r->pods[s] =
			        avoid && avoid[s] ? 0 : pods_on(&free[s], &job->request, INT64_MAX);
			r->domain_pods[r->domain[s]] =
			        sat_add(r->domain_pods[r->domain[s]], r->pods[s]);
		}
		choose_domains(r, nd, k);
		n = select_best(r, b, free, job, k);
	} else {
		/* One domain, which holds the gang (it fits): every node that holds a pod is a
		 * candidate, kept as it is counted, and none is counted past the gang. */
		for (; p < end; p++) {
			size_t s = *p;

			r->pods[s] = avoid && avoid[s] ? 0 : pods_on(&free[s], &job->request, k);
			if (r->pods[s] > 0)
				keep_best(r, free, s, k, &n);
		}
	}
	qsort(r->cands, n, sizeof(*r->cands), cmp_candidate);
	for (size_t i = 0; i < n && rank < k; i++) {
		size_t s = r->cands[i].slot;

		for (int64_t pod = 0; pod < r->pods[s] && rank < k; pod++)
			r->ranks[rank++] = s;
	}
	return true;
}

/* The launcher's node in `free` less what the ranks of r->ranks (k of them) take there when
 * ranked: best fit among the slots that hold it; false if none does. */
static bool place_launcher(struct run *r, size_t b, const struct tj_admission_resources *free,
                           const bool *avoid, const struct tj_admission_job *job, int64_t ranked)
{
	size_t first = r->bucket_slots[b], last = r->bucket_slots[b + 1], best = SIZE_MAX;

	memcpy(&r->trial[first], &free[first], (last - first) * sizeof(*r->trial));
	for (int64_t rank = 0; rank < ranked; rank++)
		take(&r->trial[r->ranks[rank]], &job->request);
	for (size_t s = first; s < last; s++) {
		struct candidate c = candidate(r, r->trial, s);

		if ((avoid && avoid[s]) || !holds_one(&r->trial[s], &job->launcher))
			continue;
		if (best == SIZE_MAX) {
			best = s;
			continue;
		}
		struct candidate cur = candidate(r, r->trial, best);
		if (fits_better(&c, &cur))
			best = s;
	}
	if (best == SIZE_MAX)
		return false;
	r->launcher_slot = best;
	return true;
}

bool tj_admission_place_gang(struct run *r, size_t b, const struct tj_admission_resources *free,
                             const bool *avoid, const struct tj_admission_job *job)
{
	size_t s;

	if (!has_launcher(job))
		return place_ranks(r, b, free, avoid, job);
	if (place_ranks(r, b, free, avoid, job) &&
	    place_launcher(r, b, free, avoid, job, job->num_pods))
		return true;
	/* The ranks took the nodes the launcher fits on: the launcher first, where it fits
	 * best, and the ranks in what it leaves (place_launcher left `free` in trial). */
	if (!place_launcher(r, b, free, avoid, job, 0))
		return false;
	s = r->launcher_slot;
	take(&r->trial[s], &job->launcher);
	if (!place_ranks(r, b, r->trial, avoid, job))
		return false;
	r->launcher_slot = s;
	return true;
}

/* Reservation */

/* The gangs of bucket b this cycle admitted ahead of its head that have a walltime, into
 * r->admitted by the time it ends and their pods have stopped: they run from now, and give
 * their nodes back then, as the running jobs' releases do. Their count. */
static size_t admitted_releases(struct run *r, size_t b, const struct tj_admission_job *head)
{
	size_t n = 0, h = (size_t)(head - r->in->jobs);

	for (size_t i = r->bucket_jobs[b]; i < r->bucket_jobs[b + 1] && r->order[i] != h; i++) {
		size_t j = r->order[i];
		const struct tj_admission_job *job = &r->in->jobs[j];

		if (r->res->decisions[j].verdict == TJ_ADMISSION_ADMITTED && job->walltime > 0)
			r->admitted[n++] = (struct release_key){
				sat_add(r->in->now, sat_add(job->walltime, job->grace)), j
			};
	}
	tj_admission_sort_releases(r->admitted, n);
	return n;
}

/* Whether slot s (-1: a node that takes no new pods) is one of [first, last). */
static bool in_slots(ptrdiff_t s, size_t first, size_t last)
{
	return s >= (ptrdiff_t)first && s < (ptrdiff_t)last;
}

/* What comes back to slot s (if it is of the bucket [first, last)) at a release, with the
 * count of the head's pods the bucket could hold kept up to date. */
static void give_back(struct run *r, size_t first, size_t last, ptrdiff_t s,
                      const struct tj_admission_resources *back,
                      const struct tj_admission_job *head, int64_t *total)
{
	/* A node the head must avoid or may not use gives it nothing back. */
	if (!in_slots(s, first, last) || r->avoiding[s])
		return;
	/* One a job ahead holds counts once it gives it back (unlock). */
	if (r->locked[s]) {
		give(&r->later[s], back);
		return;
	}
	*total -= r->pods[s];
	give(&r->later[s], back);
	r->pods[s] = pods_on(&r->later[s], &head->request, head->num_pods);
	*total += r->pods[s];
}

/* A blocked job's expected start: the first release time after which its gang fits in what
 * is free now plus what the releases until then give back; 0 if no release makes it fit. The
 * releases are the running jobs' (the input's), those of the gangs this cycle admitted ahead
 * of it, and the ends of the reservations ahead of it (unlocks). The nodes it would take then are
 * reserved for it. Each release changes one node, so the count of pods the class holds is kept up
 * to date node by node instead of recounted. */
void tj_admission_reserve_places(struct run *r, const struct tj_admission_job *job)
{
	for (int rank = 0; rank < job->num_pods; rank++)
		r->reserved[r->ranks[rank]] = true;
	if (has_launcher(job))
		r->reserved[r->launcher_slot] = true;
	r->era++;
}

int64_t tj_admission_reserve(struct run *r, size_t b, const struct tj_admission_job *job,
                             const struct release_key *unlocks, size_t n_unlocks)
{
	size_t first = r->bucket_slots[b], last = r->bucket_slots[b + 1];
	size_t n_admitted = admitted_releases(r, b, job), i = 0, a = 0, u = 0;
	int64_t k = job->num_pods, total = 0, start = 0;
	bool locks = false;

	memcpy(&r->later[first], &r->free[first], (last - first) * sizeof(*r->later));
	for (size_t s = first; s < last; s++) {
		locks = locks || r->locked[s];
		r->pods[s] = r->locked[s] ? 0 : pods_on(&r->later[s], &job->request, k);
		total += r->pods[s];
	}
	while (i < r->in->n_releases || a < n_admitted || u < n_unlocks) {
		int64_t at;

		/* Only what comes back to the class's nodes moves its start: the times of the
		 * other classes' releases are no times to look at it again. */
		while (i < r->in->n_releases &&
		       !in_slots(r->node_slot[r->in->releases[r->releases[i].index].node], first,
		                 last))
			i++;
		at = i < r->in->n_releases ? r->releases[i].at : INT64_MAX;

		if (a < n_admitted && r->admitted[a].at < at)
			at = r->admitted[a].at;
		if (u < n_unlocks && unlocks[u].at < at)
			at = unlocks[u].at;
		if (at == INT64_MAX)
			break; /* only other classes' releases were left */
		for (; i < r->in->n_releases && r->releases[i].at == at; i++) {
			const struct tj_admission_release *rel =
			        &r->in->releases[r->releases[i].index];

			give_back(r, first, last, r->node_slot[rel->node], &rel->resources, job,
			          &total);
		}
		for (; a < n_admitted && r->admitted[a].at == at; a++) {
			const struct tj_admission_job *done = &r->in->jobs[r->admitted[a].index];
			const struct tj_admission_decision *d =
			        &r->res->decisions[r->admitted[a].index];

			for (int rank = 0; rank < done->num_pods; rank++)
				give_back(r, first, last, r->node_slot[d->nodes[rank]],
				          &done->request, job, &total);
			if (d->launcher_node != SIZE_MAX)
				give_back(r, first, last, r->node_slot[d->launcher_node],
				          &done->launcher, job, &total);
		}
		for (; u < n_unlocks && unlocks[u].at == at; u++) {
			size_t s = unlocks[u].index;

			r->locked[s] = false;
			if (!r->avoiding[s]) {
				r->pods[s] = pods_on(&r->later[s], &job->request, k);
				total += r->pods[s];
			}
		}
		r->reserving = true;
		bool fits = total >= k &&
		            tj_admission_place_gang(r, b, r->later, locks ? r->locked : NULL, job);
		r->reserving = false;
		if (fits) {
			tj_admission_reserve_places(r, job);
			r->res->classes[b].reserved_gpus += gang_gpus(job);
			start = at > r->in->now ? at : r->in->now;
			break;
		}
	}
	for (size_t s = first; locks && s < last; s++)
		r->locked[s] = false;
	return start;
}
