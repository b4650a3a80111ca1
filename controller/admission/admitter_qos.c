#include "controller/admission/admitter_qos.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/policy/qos.h"
#include "reconcilers/trainjob.h"

static int preemption_key(const void *obj, char *buf, size_t size)
{
	const struct tj_admitter_preemption *p = obj;

	return snprintf(buf, size, "%s", p->key) < (int)size ? 0 : -ENAMETOOLONG;
}

static int preemption_by(const void *obj, char *buf, size_t size)
{
	const struct tj_admitter_preemption *p = obj;

	return snprintf(buf, size, "%s", p->by) < (int)size ? 1 : -ENAMETOOLONG;
}

static void preemption_free(void *obj)
{
	struct tj_admitter_preemption *p = obj;

	for (size_t i = 0; p && i < p->n_claimed; i++)
		free(p->claimed[i]);
	if (p)
		free(p->claimed);
	free(p);
}

const struct tj_store_ops tj_admitter_preemption_ops = {
	.free = preemption_free,
	.key = preemption_key,
	.index = { preemption_by },
	.n_indexes = 1,
};

bool tj_admitter_preemption_of(const struct tj_store *records, const struct tj_trainjob *job,
                               const char *key, int64_t *at, const char **by)
{
	const struct tj_admitter_preemption *p;

	if (!job->status.start_time)
		return false;
	if (job->status.preempt_at) {
		*at = job->status.preempt_at;
		*by = job->status.preempted_by;
		return true;
	}
	p = records ? tj_store_get(records, key) : NULL;
	if (!p || p->start != job->status.start_time)
		return false;
	*at = p->at;
	*by = p->by;
	return true;
}

/* The records whose time is over, or whose victim is gone or runs again, go. */
static int forget_over(const struct tj_admitter_source *src, int64_t now)
{
	const struct tj_store *jobs = tj_admitter_store_of(src->informers->trainjobs);
	char(*keys)[TJ_STORE_KEY_MAX];
	struct tj_store_iter it;
	const struct tj_admitter_preemption *p;
	size_t n = 0;

	if (!src->preemptions || !tj_store_len(src->preemptions))
		return 0;
	keys = calloc(tj_store_len(src->preemptions), sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	tj_store_iter_init(src->preemptions, &it);
	while ((p = tj_store_iter_next(&it))) {
		const struct tj_trainjob *job = jobs ? tj_store_get(jobs, p->key) : NULL;

		if (now >= p->until || !job ||
		    (job->status.start_time && job->status.start_time != p->start))
			memcpy(keys[n++], p->key, sizeof(keys[0]));
	}
	for (size_t i = 0; i < n; i++)
		tj_store_delete(src->preemptions, keys[i], NULL);
	free(keys);
	return 0;
}

/* What one job's pods hold on one node, before the gangs are put together. */
struct part {
	const char *key; /* borrowed from the ledger (interned: one pointer per key) */
	size_t node;
	struct tj_admission_resources held;
	int64_t grace;
	const struct tj_trainjob *job;  /* the cache's */
	const struct tj_qos_tier *tier; /* job's, as candidate resolved it */
};

static int part_cmp(const void *a, const void *b)
{
	const struct part *x = a, *y = b;
	int c = x->key == y->key ? 0 : strcmp(x->key, y->key);

	if (c)
		return c;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* A record of the victims of job (NULL: none) that names the nodes it chose. */
static const struct tj_admitter_preemption *claim_of(const struct tj_admitter_source *src,
                                                     const struct tj_admission_job *job)
{
	struct tj_store_iter it;
	const struct tj_admitter_preemption *p;

	if (!src->preemptions)
		return NULL;
	tj_store_iter_index(src->preemptions, TJ_ADMITTER_PREEMPTION_INDEX_BY, job->key, &it);
	while ((p = tj_store_iter_next(&it)))
		if (p->n_claimed == (size_t)job->num_pods)
			return p;
	return NULL;
}

/* Points each preempting job of s at the nodes its record says it chose (s->claims), those
 * the snapshot still has; a job with one of them gone has none. 0 or -ENOMEM. */
static int set_claims(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s)
{
	size_t total = 0, used = 0;

	/* Room for every preempting job's pods: a claim names one node per pod. */
	for (size_t k = 0; k < s->n_jobs; k++)
		total += s->jobs[k].preempting ? (size_t)s->jobs[k].num_pods : 0;
	if (!total || !src->preemptions || !tj_store_len(src->preemptions))
		return 0;
	s->claims = calloc(total, sizeof(*s->claims));
	if (!s->claims)
		return -ENOMEM;
	for (size_t k = 0; k < s->n_jobs; k++) {
		struct tj_admission_job *job = &s->jobs[k];
		const struct tj_admitter_preemption *p =
		        job->preempting ? claim_of(src, job) : NULL;
		size_t i = 0;

		for (; p && i < p->n_claimed; i++) {
			ssize_t at = tj_admitter_find_node(s->refs, s->n_nodes, p->claimed[i]);

			if (at < 0)
				break;
			s->claims[used + i] = (size_t)at;
		}
		if (!p || i < p->n_claimed)
			continue;
		job->claimed = &s->claims[used];
		job->n_claimed = p->n_claimed;
		used += p->n_claimed;
	}
	return 0;
}

/* The tiers the queue's jobs may preempt now; the jobs whose victims are still stopping
 * (a record names them, or a victim's status) are marked preempting and count for none. */
static uint32_t wanted_tiers(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s,
                             const struct tj_store *stopping)
{
	uint32_t mask = 0;
	/* Most cycles preempt nobody: no job's key is hashed to look in empty records. */
	const struct tj_store *records =
	        src->preemptions && tj_store_len(src->preemptions) ? src->preemptions : NULL;

	if (stopping && !tj_store_len(stopping))
		stopping = NULL;
	for (size_t k = 0; k < s->n_jobs; k++) {
		struct tj_admission_job *job = &s->jobs[k];

		if (!job->preempts)
			continue;
		job->preempting =
		        (records && tj_store_index_count(records, TJ_ADMITTER_PREEMPTION_INDEX_BY,
		                                         job->key) > 0) ||
		        (stopping && tj_store_index_count(stopping, TJ_ADMITTER_PREEMPTION_INDEX_BY,
		                                          job->key) > 0);
		if (!job->preempting)
			mask |= job->preempts;
	}
	return mask;
}

/* The job of a group, if it is a running gang: ours, started, not ended; with ret_tier, of
 * a tier it resolves to (*ret_tier). */
static const struct tj_trainjob *candidate(const struct tj_admitter_source *src,
                                           const struct tj_admitter_group *g,
                                           const struct tj_qos_tier **ret_tier)
{
	const struct tj_trainjob *job = g->job;
	struct tj_problem why = { 0 };

	if (!job || !job->status.start_time || job->deletion_time || !tj_trainjob_is_ours(job) ||
	    job->status.state == TJ_STATE_COMPLETE || job->status.state == TJ_STATE_FAILED)
		return NULL;
	if (!ret_tier)
		return job;
	*ret_tier =
	        tj_qos_resolve(tj_config_admission(src->config), job->namespace, job->qos, &why);
	return *ret_tier ? job : NULL;
}

/* The candidate of the group looked at last, for the next: a gang's pods lie on nodes next to
 * each other in name order, so the next node most often holds the same job, which has the
 * same pointers (the ledger's strings are interned). */
struct last_candidate {
	const char *key, *owner_uid; /* borrowed from the ledger; key NULL: none yet */
	const struct tj_trainjob *job;
	const struct tj_qos_tier *tier;
};

static const struct tj_trainjob *candidate_cached(const struct tj_admitter_source *src,
                                                  const struct tj_admitter_group *g,
                                                  struct last_candidate *last,
                                                  const struct tj_qos_tier **ret_tier)
{
	if (!last->key || last->key != g->job_key || last->owner_uid != g->owner_uid) {
		last->key = g->job_key;
		last->owner_uid = g->owner_uid;
		last->tier = NULL;
		last->job = candidate(src, g, &last->tier);
	}
	*ret_tier = last->tier;
	return last->job;
}

/* Puts the parts (sorted by job) together into s->running, one gang per job. */
static int gather(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s,
                  struct part *parts, size_t n)
{
	const struct tj_admission_policy *policy = tj_config_admission(src->config);
	size_t n_tiers, g = 0;
	const struct tj_qos_tier *tiers = tj_qos_tiers(policy, &n_tiers);

	qsort(parts, n, sizeof(*parts), part_cmp);
	s->running = calloc(n + 1, sizeof(*s->running));
	s->holds = calloc(n + 1, sizeof(*s->holds));
	if (!s->running || !s->holds)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct tj_admission_running *r = &s->running[g];

		s->holds[i] = (struct tj_admission_hold){ parts[i].node, parts[i].held };
		if (i > 0 && parts[i - 1].key == parts[i].key) {
			s->running[g - 1].n_holds++;
			continue;
		}
		const struct tj_trainjob *job = parts[i].job;
		const struct tj_qos_tier *tier = parts[i].tier;

		*r = (struct tj_admission_running){
			.key = parts[i].key,
			.class_index = s->nodes[parts[i].node].class_index,
			.tier = tier ? tier->priority : 0,
			.qos = tier ? (unsigned)(tier - tiers) : 32,
			.start = job->status.start_time,
			.grace = parts[i].grace,
			.holds = &s->holds[i],
			.n_holds = 1,
		};
		g++;
	}
	s->n_running = g;
	return 0;
}

int tj_admitter_running_build(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s,
                              int64_t now)
{
	const struct tj_admission_policy *policy = tj_config_admission(src->config);
	const struct tj_store *jobs = tj_admitter_store_of(src->informers->trainjobs);
	struct tj_store *stopping = NULL;
	struct part *parts = NULL;
	size_t n = 0, cap = 0, n_tiers;
	const struct tj_qos_tier *tiers = tj_qos_tiers(policy, &n_tiers);
	uint32_t mask = 0;
	int rc = forget_over(src, now);

	if (rc < 0)
		return rc;
	for (size_t k = 0; k < s->n_jobs && !mask; k++)
		mask |= s->jobs[k].preempts;
	if (!mask)
		return 0; /* no queued job may preempt */
	/* The victims being preempted by their statuses, for the jobs that preempt them (after
	 * a restart the records are gone; the statuses stay). */
	rc = tj_store_new(&tj_admitter_preemption_ops, &stopping);
	if (rc == 0 && jobs) {
		struct tj_store_iter it;
		const struct tj_trainjob *job;

		tj_store_iter_index(jobs, TJ_TRAINJOB_INDEX_STOPPING, TJ_TRAINJOB_STOPPING, &it);
		while (rc == 0 && (job = tj_store_iter_next(&it))) {
			struct tj_admitter_preemption *p;

			if (!(p = calloc(1, sizeof(*p)))) {
				rc = -ENOMEM;
				break;
			}
			snprintf(p->by, sizeof(p->by), "%s", job->status.preempted_by);
			rc = tj_store_key_of(p->key, sizeof(p->key), job->namespace, job->name);
			if (rc == 0)
				rc = tj_store_upsert(stopping, p, NULL);
			if (rc < 0)
				free(p);
		}
	}
	mask = rc == 0 ? wanted_tiers(src, s, stopping) : 0;
	if (rc == 0)
		rc = set_claims(src, s);
	struct last_candidate last = { 0 };

	for (size_t i = 0; rc == 0 && mask && i < s->n_groups; i++) {
		const struct tj_admitter_group *g = &s->groups[i];
		const struct tj_qos_tier *tier;
		const struct tj_trainjob *job = candidate_cached(src, g, &last, &tier);
		int64_t at;
		const char *by;
		size_t q;

		if (!job || tj_admitter_preemption_of(src->preemptions, job, g->job_key, &at, &by))
			continue;
		q = (size_t)(tier - tiers);
		if (q >= 32 || !(mask >> q & 1u))
			continue;
		if (n == cap) {
			struct part *grown = realloc(parts, (cap * 2 + 16) * sizeof(*parts));

			if (!grown) {
				rc = -ENOMEM;
				break;
			}
			parts = grown;
			cap = cap * 2 + 16;
		}
		parts[n++] = (struct part){ g->job_key, g->node, g->held, g->grace, job, tier };
	}
	if (rc == 0 && n)
		rc = gather(src, s, parts, n);
	free(parts);
	tj_store_free(stopping);
	return rc;
}

/* The names of the nodes d claimed, into p. 0 or -ENOMEM. */
static int copy_claims(struct tj_admitter_preemption *p, const struct tj_admitter_snapshot *s,
                       const struct tj_admission_decision *d)
{
	p->claimed = calloc(d->n_claimed, sizeof(*p->claimed));
	if (!p->claimed)
		return -ENOMEM;
	for (size_t i = 0; i < d->n_claimed; i++) {
		p->claimed[i] = strdup(s->nodes[d->claimed[i]].name);
		if (!p->claimed[i])
			return -ENOMEM;
		p->n_claimed++;
	}
	return 0;
}

int tj_admitter_preemptions_take(const struct tj_admitter_source *src,
                                 const struct tj_admitter_snapshot *s,
                                 const struct tj_admission_result *res, int64_t now,
                                 void (*chosen)(void *userdata,
                                                const struct tj_admission_running *victim,
                                                const char *by, int64_t at),
                                 void *userdata)
{
	for (size_t j = 0; src->preemptions && j < res->n_decisions; j++) {
		const struct tj_admission_decision *d = &res->decisions[j];

		for (size_t v = 0; v < d->n_victims; v++) {
			const struct tj_admission_running *g = &s->running[d->victims[v]];
			struct tj_admitter_preemption *p = calloc(1, sizeof(*p));
			int64_t grace = g->grace > 0 ? g->grace : 0;

			if (!p)
				return -ENOMEM;
			snprintf(p->key, sizeof(p->key), "%s", g->key);
			snprintf(p->by, sizeof(p->by), "%s", s->jobs[j].key);
			p->start = g->start;
			p->at = now + grace;
			p->until = p->at + grace + 5;
			if (d->n_claimed && copy_claims(p, s, d) < 0) {
				preemption_free(p);
				return -ENOMEM;
			}
			if (tj_store_upsert(src->preemptions, p, NULL) < 0) {
				preemption_free(p);
				return -ENOMEM;
			}
			if (chosen)
				chosen(userdata, g, p->by, p->at);
		}
	}
	return 0;
}

/* The limit of namespace ns in tier qos among s's, or SIZE_MAX. */
static size_t find_limit(const struct tj_admitter_snapshot *s, const char *ns, unsigned qos,
                         const char *const *tier_names)
{
	for (size_t i = 0; i < s->n_tier_limits; i++)
		if (s->tier_limits[i].tier == tier_names[qos] &&
		    strcmp(s->tier_limits[i].namespace, ns) == 0)
			return i;
	return SIZE_MAX;
}

int tj_admitter_tier_limits_build(const struct tj_admitter_source *src,
                                  struct tj_admitter_snapshot *s)
{
	const struct tj_admission_policy *policy = tj_config_admission(src->config);
	const struct tj_store *jobs = tj_admitter_store_of(src->informers->trainjobs);
	const char *names[TJ_CONFIG_MAX_QOS_TIERS + 1] = { NULL };
	size_t n_tiers, n = 0;
	const struct tj_qos_tier *tiers = tj_qos_tiers(policy, &n_tiers);
	struct tj_store_iter it;
	const struct tj_admitter_entry *e;
	bool any = false;

	for (size_t t = 0; t < n_tiers && t < TJ_CONFIG_MAX_QOS_TIERS; t++) {
		names[t] = tiers[t].name;
		any = any || tiers[t].max_gpus_per_namespace > 0;
	}
	if (!any)
		return 0;
	s->tier_limits = calloc(s->n_jobs + 1, sizeof(*s->tier_limits));
	if (!s->tier_limits)
		return -ENOMEM;
	for (size_t k = 0; k < s->n_jobs; k++) {
		const struct tj_admitter_entry *q = s->job_entries[k];
		size_t i;

		if (q->qos >= n_tiers || tiers[q->qos].max_gpus_per_namespace <= 0)
			continue;
		i = find_limit(s, q->namespace, q->qos, names);
		if (i == SIZE_MAX) {
			i = n++;
			s->tier_limits[i] = (struct tj_admission_tier_limit){
				.namespace = q->namespace,
				.tier = names[q->qos],
				.max_gpus = tiers[q->qos].max_gpus_per_namespace,
			};
			s->n_tier_limits = n;
		}
		s->jobs[k].tier_limit = i + 1;
	}
	if (!n)
		return 0;
	/* What the namespaces' running jobs of those tiers hold, every class together. */
	for (size_t k = 0; k < s->n_nodes; k++) {
		const struct tj_ledger_node *ln =
		        s->read_at[k] != SIZE_MAX ? s->read.order[s->read_at[k]] : NULL;

		for (size_t g = 0; ln && g < ln->n_groups; g++) {
			const struct tj_trainjob *job =
			        jobs ? tj_store_get(jobs, ln->groups[g].job_key) : NULL;
			struct tj_problem why = { 0 };
			const struct tj_qos_tier *tier;
			size_t i;

			if (!job)
				continue;
			tier = tj_qos_resolve(policy, job->namespace, job->qos, &why);
			if (!tier || tier->max_gpus_per_namespace <= 0 ||
			    (i = find_limit(s, job->namespace, tj_qos_index(policy, tier),
			                    names)) == SIZE_MAX)
				continue;
			s->tier_limits[i].used += ln->groups[g].held.gpus;
		}
	}
	/* The gangs admitted whose pods the cache does not show yet. */
	tj_store_iter_init(src->entries, &it);
	while ((e = tj_store_iter_next(&it))) {
		size_t i;
		int64_t gpus;

		if ((e->state != TJ_ADMITTER_ADMITTED && e->state != TJ_ADMITTER_CREATED) ||
		    e->qos >= n_tiers ||
		    (i = find_limit(s, e->namespace, e->qos, names)) == SIZE_MAX)
			continue;
		gpus = (int64_t)e->n_nodes * (e->request.gpus > 0 ? e->request.gpus : 0);
		if (e->launcher_node && e->launcher.gpus > 0)
			gpus += e->launcher.gpus;
		s->tier_limits[i].used += gpus;
	}
	return 0;
}
