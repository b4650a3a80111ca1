/* What a class's decision reads, as one number (admission.h, rule "Settled classes"): equal
 * numbers in two runs mean, but for a collision of the hash (one in 2^64), that the class is
 * decided alike in both, so a run given the number of the last one decides it no more. The
 * time is in the number to the second: a collision would keep a class's decision at most until
 * the next second's cycle. */
#include "reconcilers/admission/admission_internal.h"

#include <string.h>

/* One word into the hash: a multiply and a shift of a 64-bit state (a mixer in the manner of
 * splitmix64), word by word. */
static void mix(uint64_t *h, uint64_t v)
{
	uint64_t x = (*h ^ v) * 0x9e3779b97f4a7c15ULL;

	*h = x ^ (x >> 29);
}

static void mix_int(uint64_t *h, int64_t v)
{
	mix(h, (uint64_t)v);
}

static void mix_bool(uint64_t *h, bool v)
{
	mix(h, v ? 0x5bd1e995ULL : 0x27d4eb2fULL);
}

/* A string's bytes, eight at a time, then its length; NULL unlike "". */
static void mix_string(uint64_t *h, const char *s)
{
	size_t n;

	if (!s) {
		mix(h, 0xfeedfacecafef00dULL);
		return;
	}
	n = strlen(s);
	for (size_t i = 0; i < n; i += 8) {
		uint64_t w = 0;

		memcpy(&w, s + i, n - i < 8 ? n - i : 8);
		mix(h, w);
	}
	mix(h, (uint64_t)n);
}

static void mix_resources(uint64_t *h, const struct tj_admission_resources *res)
{
	int64_t c[N_COMPONENTS];

	components(res, c);
	for (int i = 0; i < N_COMPONENTS; i++)
		mix_int(h, c[i]);
}

/* Which nodes of bucket b the job may use: its eligibility over them. Jobs share an array, so
 * the number of one is kept for the next job with it (*last, *last_digest). */
static uint64_t eligibility_of(const struct run *r, size_t b, const bool *eligible,
                               const bool **last, uint64_t *last_digest)
{
	uint64_t h = 0x6a09e667f3bcc908ULL;

	if (!eligible)
		return 0;
	if (eligible == *last)
		return *last_digest;
	for (size_t i = r->bucket_nodes[b]; i < r->bucket_nodes[b + 1]; i++)
		mix_bool(&h, eligible[r->class_nodes[i]]);
	*last = eligible;
	*last_digest = h;
	return h;
}

/* What one queued job brings to its class's decision, with the limits it counts against as
 * they stand when the class is decided (the classes before it may have admitted into them). */
static void mix_job(const struct run *r, size_t b, size_t j, uint64_t *h, const bool **last,
                    uint64_t *last_digest)
{
	const struct tj_admission_input *in = r->in;
	const struct tj_admission_job *job = &in->jobs[j];

	/* Not its key: a job of another key at the same place is a new job, which the caller
	 * decides (admission.h, "Settled classes"). */
	mix_string(h, job->namespace);
	mix_int(h, job->num_nodes);
	mix_int(h, job->num_pods);
	mix_resources(h, &job->request);
	mix_resources(h, &job->launcher);
	mix_int(h, job->tier);
	mix_int(h, job->fair_share);
	mix_int(h, job->priority);
	mix_int(h, job->creation_time);
	mix_int(h, job->walltime);
	mix_int(h, job->grace);
	mix_bool(h, job->restart);
	mix_int(h, job->not_before);
	mix(h, job->preempts);
	mix_int(h, job->preempt_after);
	mix_bool(h, job->backfill_reserved_nodes);
	mix_bool(h, job->preempting);
	mix(h, job->n_excluded);
	for (size_t i = 0; i < job->n_excluded; i++)
		mix(h, job->excluded[i]);
	mix(h, job->n_claimed);
	for (size_t i = 0; job->claimed && i < job->n_claimed; i++)
		mix(h, job->claimed[i]);
	mix(h, eligibility_of(r, b, job->eligible, last, last_digest));
	mix_string(h, job->ineligible_why);
	mix(h, job->n_charges);
	for (size_t i = 0; i < job->n_charges; i++) {
		const struct tj_admission_quota_charge *c = &job->charges[i];
		const struct tj_admission_quota_limit *l = &in->quota_limits[c->limit];

		mix(h, c->limit);
		mix_int(h, c->now);
		mix_int(h, c->whole);
		mix_string(h, l->namespace);
		mix_string(h, l->quota);
		mix_string(h, l->resource);
		mix_int(h, l->hard);
		mix_int(h, r->quota_used[c->limit]);
	}
	if (r->job_account[j] != SIZE_MAX) {
		mix_int(h, r->accounts[r->job_account[j]].limit);
		mix_int(h, r->accounts[r->job_account[j]].held);
	}
	mix(h, job->tier_limit);
	if (job->tier_limit) {
		const struct tj_admission_tier_limit *l = &in->tier_limits[job->tier_limit - 1];

		mix_string(h, l->namespace);
		mix_string(h, l->tier);
		mix_int(h, l->max_gpus);
		mix_int(h, r->tier_used[job->tier_limit - 1]);
	}
}

uint64_t tj_admission_class_digest(const struct run *r, size_t b)
{
	const struct tj_admission_input *in = r->in;
	const struct tj_admission_config *cfg = in->config;
	uint64_t h = 0xcbf29ce484222325ULL, last_digest = 0;
	const bool *last = NULL;

	mix_int(&h, in->now);
	mix(&h, b);
	mix(&h, in->n_classes);
	mix_string(&h, b < in->n_classes ? in->class_names[b] : NULL);
	mix_bool(&h, cfg->backfill);
	mix_bool(&h, cfg->wait_if_never_fits);
	mix_bool(&h, cfg->defer_waiting_messages);
	mix_int(&h, cfg->reservations);
	mix_int(&h, cfg->max_tries);
	mix_int(&h, r->longest_grace);
	/* The nodes that take new pods, what is free on each and its domain... */
	for (size_t s = r->bucket_slots[b]; s < r->bucket_slots[b + 1]; s++) {
		mix(&h, r->slot_node[s]);
		mix_resources(&h, &r->free[s]);
		mix(&h, r->domain[s]);
	}
	/* ...every node of the class, for NeverFits... */
	for (size_t i = r->bucket_nodes[b]; i < r->bucket_nodes[b + 1]; i++) {
		const struct tj_admission_node *node = &in->nodes[r->class_nodes[i]];

		/* Not its name: a decision names nodes by their index, and the names' order is
		 * the order of the slots above. */
		mix(&h, r->class_nodes[i]);
		mix_bool(&h, node->schedulable);
		mix_resources(&h, &node->allocatable);
	}
	/* ...what comes free on them and when... */
	for (size_t i = 0; i < in->n_releases; i++) {
		const struct tj_admission_release *rel = &in->releases[r->releases[i].index];

		if (bucket_of_class(in, in->nodes[rel->node].class_index) != b)
			continue;
		mix(&h, rel->node);
		mix_int(&h, rel->at);
		mix_resources(&h, &rel->resources);
	}
	/* ...the running gangs its jobs may preempt... */
	for (size_t v = 0; v < in->n_running; v++) {
		const struct tj_admission_running *g = &in->running[v];

		if (bucket_of_class(in, g->class_index) != b)
			continue;
		mix(&h, v);
		mix_string(&h, g->key);
		mix_int(&h, g->tier);
		mix(&h, g->qos);
		mix_int(&h, g->start);
		mix_int(&h, g->grace);
		for (size_t k = 0; k < g->n_holds; k++) {
			mix(&h, g->holds[k].node);
			mix_resources(&h, &g->holds[k].resources);
		}
	}
	/* ...and the queue, in its order. */
	for (size_t i = r->bucket_jobs[b]; i < r->bucket_jobs[b + 1]; i++) {
		mix(&h, r->order[i]);
		mix_job(r, b, r->order[i], &h, &last, &last_digest);
	}
	/* 0 stands for "none" in the input. */
	return h ? h : 1;
}
