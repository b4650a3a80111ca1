#include "controller/admitter_share.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/qos.h"
#include "reconcilers/trainjob.h"

static int cmp_account(const void *a, const void *b)
{
	const struct tj_fair_share_account *x = a, *y = b;

	return strcmp(x->namespace, y->namespace);
}

const struct tj_fair_share_account *tj_fair_shares_find(const struct tj_fair_shares *fs,
                                                        const char *ns)
{
	struct tj_fair_share_account key = { .namespace = ns };

	return fs->n ? bsearch(&key, fs->accounts, fs->n, sizeof(key), cmp_account) : NULL;
}

void tj_fair_shares_clear(struct tj_fair_shares *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free((char *)fs->accounts[i].namespace);
	free(fs->accounts);
	*fs = (struct tj_fair_shares){ 0 };
}

/* The account of ns in the n sorted ones of accounts (of cap), added if missing. */
static struct tj_fair_share_account *account(struct tj_fair_share_account *accounts, size_t *n,
                                             size_t cap, const char *ns)
{
	size_t lo = 0, hi = *n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(accounts[mid].namespace, ns);

		if (c == 0)
			return &accounts[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (*n >= cap)
		return NULL;
	char *name = strdup(ns);

	if (!name)
		return NULL;
	memmove(&accounts[lo + 1], &accounts[lo], (*n - lo) * sizeof(*accounts));
	accounts[lo] = (struct tj_fair_share_account){ .namespace = name };
	(*n)++;
	return &accounts[lo];
}

static int read_usage(struct tj_fair_shares *fs, const struct tj_queue_source *src,
                      const struct tj_queue_snapshot *s, int64_t now)
{
	const struct tj_admission_policy *policy = tj_config_admission(src->config);
	struct tj_fair_share_account *accounts = calloc(TJ_FAIR_SHARES_MAX, sizeof(*accounts)), *a;
	struct tj_store_iter it;
	const struct tj_trainjob *job;
	size_t n = 0;

	if (!accounts)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_jobs; i++) {
		account(accounts, &n, TJ_FAIR_SHARES_MAX, s->jobs[i].namespace);
		/* A namespace first seen since the controller leads: its records are read. */
		if (src->accounting)
			tj_accounting_want(src->accounting, s->jobs[i].namespace);
	}
	/* The deleted jobs' records count as the jobs did. */
	size_t n_records = 0;
	const struct tj_accounting_entry *records =
	        src->accounting ? tj_accounting_entries(src->accounting, &n_records) : NULL;

	for (size_t i = 0; i < n_records; i++) {
		if (records[i].gpu_seconds <= 0 ||
		    !(a = account(accounts, &n, TJ_FAIR_SHARES_MAX, records[i].namespace)))
			continue;
		a->usage += tj_fair_share_decayed(records[i].gpu_seconds, records[i].start,
		                                  records[i].counted_until, now,
		                                  policy->fair_share_half_life);
	}
	tj_store_iter_init(tj_queue_store_of(src->informers->trainjobs), &it);
	while ((job = tj_store_iter_next(&it))) {
		if (job->status.gpu_seconds <= 0 ||
		    !(a = account(accounts, &n, TJ_FAIR_SHARES_MAX, job->namespace)))
			continue;
		a->usage += tj_fair_share_decayed(job->status.gpu_seconds, job->status.start_time,
		                                  job->status.gpu_seconds_until, now,
		                                  policy->fair_share_half_life);
	}
	for (size_t i = 0; i < n; i++) {
		const struct tj_qos_namespace *rule =
		        tj_qos_namespace_rule(policy, accounts[i].namespace);

		accounts[i].share = rule && rule->share > 0 ? (double)rule->share : 1;
	}
	tj_fair_share_factors(accounts, n);
	tj_fair_shares_clear(fs);
	fs->accounts = accounts;
	fs->n = n;
	fs->read_at = now;
	return 0;
}

/* Sets the points of s's jobs from fs; whether a job's namespace was missing from fs while
 * fs has room for it. A namespace fs does not know has used nothing. */
static bool set_points(const struct tj_fair_shares *fs, struct tj_queue_snapshot *s)
{
	bool missing = false;

	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct tj_fair_share_account *a =
		        tj_fair_shares_find(fs, s->jobs[i].namespace);

		s->jobs[i].fair_share = a ? a->points : TJ_FAIR_SHARE_WEIGHT;
		missing = missing || (!a && fs->n < TJ_FAIR_SHARES_MAX);
	}
	return missing;
}

int tj_fair_shares_apply(struct tj_fair_shares *fs, const struct tj_queue_source *src,
                         struct tj_queue_snapshot *s, int64_t now)
{
	bool stale =
	        !fs->read_at || now - fs->read_at >= TJ_FAIR_SHARES_PERIOD_S || now < fs->read_at;
	int rc;

	/* Most cycles read nothing again: one lookup a job. */
	if (!stale && !set_points(fs, s))
		return 0;
	rc = read_usage(fs, src, s, now);
	set_points(fs, s);
	return rc;
}
