/* Preemption (reconcilers/admission/admission.h, "Preemption"): the victims a blocked job of a tier
 * that may preempt chooses among the running gangs of its class. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission/admission_internal.h"

/* Lowest tier first, then the most recently started, then the key (deterministic). */
static int victim_cmp(const void *a, const void *b)
{
	const struct victim *x = a, *y = b;

	if (x->tier != y->tier)
		return x->tier < y->tier ? -1 : 1;
	if (x->start != y->start)
		return x->start > y->start ? -1 : 1;
	return strcmp(or_empty(x->key), or_empty(y->key));
}

bool tj_admission_wants_victims(const struct run *r, const struct tj_admission_job *job,
                                int64_t start)
{
	if (!job->preempts || job->preempting || !r->in->n_running || !r->taken)
		return false;
	return start == 0 || start > sat_add(r->in->now, job->preempt_after);
}

/* What gang v holds on the slots of bucket b that the job decided now may use, given to
 * (add) or taken from what is free in r->preempt_free. */
static void count(struct run *r, size_t b, const struct tj_admission_running *v, bool add)
{
	for (size_t i = 0; i < v->n_holds; i++) {
		ptrdiff_t s = r->node_slot[v->holds[i].node];

		if (s < (ptrdiff_t)r->bucket_slots[b] || s >= (ptrdiff_t)r->bucket_slots[b + 1] ||
		    r->avoiding[s])
			continue;
		if (add)
			give(&r->preempt_free[s], &v->holds[i].resources);
		else
			take(&r->preempt_free[s], &v->holds[i].resources);
	}
}

static bool fits(struct run *r, size_t b, const struct tj_admission_job *job, const bool *ahead)
{
	return tj_admission_place_gang(r, b, r->preempt_free, ahead, job);
}

int64_t tj_admission_preempt(struct run *r, size_t b, size_t j, const bool *ahead, int64_t start)
{
	const struct tj_admission_input *in = r->in;
	const struct tj_admission_job *job = &in->jobs[j];
	struct tj_admission_decision *d = &r->res->decisions[j];
	size_t first = r->bucket_slots[b], last = r->bucket_slots[b + 1], n = 0, k = 0, kept = 0;
	int64_t stop = 0;
	bool found = false;

	for (size_t v = 0; v < in->n_running; v++) {
		const struct tj_admission_running *g = &in->running[v];

		if (r->taken[v] || bucket_of_class(in, g->class_index) != b || g->qos >= 32 ||
		    !(job->preempts >> g->qos & 1u))
			continue;
		r->victims[n++] = (struct victim){ g->tier, g->start, g->key, v, false };
	}
	if (!n)
		return 0;
	/* Most blocked jobs would not fit even with every candidate gone: one placement tells
	 * that, where choosing them one by one would place the gang once per candidate. (A gang
	 * with a launcher may fit in less room and not in more: it is placed one by one.) */
	if (!r->afresh && !has_launcher(job)) {
		memcpy(&r->preempt_free[first], &r->free[first], (last - first) * sizeof(*r->free));
		for (size_t i = 0; i < n; i++)
			count(r, b, &in->running[r->victims[i].index], true);
		if (!fits(r, b, job, ahead))
			return 0;
	}
	qsort(r->victims, n, sizeof(*r->victims), victim_cmp);
	memcpy(&r->preempt_free[first], &r->free[first], (last - first) * sizeof(*r->free));
	while (k < n && !found) {
		count(r, b, &in->running[r->victims[k++].index], true);
		found = fits(r, b, job, ahead);
	}
	if (!found)
		return 0;
	/* No victim one too many: the last chosen (the highest tier, the longest running) is
	 * spared first, if the gang still fits without it. */
	for (size_t i = k; i-- > 0;) {
		count(r, b, &in->running[r->victims[i].index], false);
		if (fits(r, b, job, ahead))
			r->victims[i].spared = true;
		else
			count(r, b, &in->running[r->victims[i].index], true);
	}
	for (size_t i = 0; i < k; i++) {
		const struct tj_admission_running *g = &in->running[r->victims[i].index];
		int64_t at = sat_add(in->now, g->grace > 0 ? g->grace : 0);

		if (!r->victims[i].spared && at > stop)
			stop = at;
	}
	/* Victims that would still be stopping when the job starts anyway (those ahead of it
	 * end first: the nodes come free by their walltimes) win it nothing. */
	if (start && stop >= start)
		return 0;
	d->victims = calloc(k, sizeof(*d->victims));
	if (!d->victims)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++) {
		if (r->victims[i].spared)
			continue;
		d->victims[kept++] = r->victims[i].index;
		r->taken[r->victims[i].index] = true;
	}
	d->n_victims = kept;
	r->res->preempting++;
	/* The placement once they are gone, in r->ranks, kept for the next cycles. */
	fits(r, b, job, ahead);
	if (!has_launcher(job)) {
		d->claimed = calloc((size_t)job->num_pods, sizeof(*d->claimed));
		if (!d->claimed)
			return -ENOMEM;
		for (int rank = 0; rank < job->num_pods; rank++)
			d->claimed[rank] = r->slot_node[r->ranks[rank]];
		d->n_claimed = (size_t)job->num_pods;
	}
	return stop > in->now ? stop : in->now;
}
