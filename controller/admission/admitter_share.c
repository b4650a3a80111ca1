#include "controller/admission/admitter_share.h"

#include <errno.h>
#include <stdlib.h>

#include "reconcilers/trainjob.h"

const struct tj_fair_share_account *tj_admitter_shares_find(const struct tj_admitter_shares *fs,
                                                            const char *ns)
{
	return tj_fair_share_find(fs->accounts, fs->n, ns);
}

void tj_admitter_shares_clear(struct tj_admitter_shares *fs)
{
	tj_fair_share_accounts_free(fs->accounts, fs->n);
	*fs = (struct tj_admitter_shares){ 0 };
}

/* What the running jobs' pods on the snapshot's nodes held since their statuses counted
 * last (tj_fair_share_charge_running), read from the ledger's groups as the snapshot kept
 * them, each with its TrainJob if the pods are its: a long run counts as it runs. */
static void charge_running(struct tj_fair_share_account *accounts, size_t *n,
                           const struct tj_admitter_snapshot *s, int64_t half_life, int64_t now)
{
	for (size_t i = 0; i < s->n_groups; i++) {
		const struct tj_admitter_group *g = &s->groups[i];
		const struct tj_trainjob *job = g->held.gpus > 0 ? g->job : NULL;

		if (!job || job->status.state == TJ_STATE_COMPLETE ||
		    job->status.state == TJ_STATE_FAILED)
			continue;
		tj_fair_share_charge_running(accounts, n, TJ_ADMITTER_SHARES_MAX, job->namespace,
		                             g->held.gpus, job->status.start_time,
		                             job->status.gpu_seconds_until, half_life, now);
	}
}

static int read_usage(struct tj_admitter_shares *fs, const struct tj_admitter_source *src,
                      const struct tj_admitter_snapshot *s, int64_t now)
{
	const struct tj_admission_policy *policy = tj_config_admission(src->config);
	struct tj_fair_share_account *accounts = calloc(TJ_ADMITTER_SHARES_MAX, sizeof(*accounts));
	int64_t half_life = policy->fair_share_half_life;
	struct tj_store_iter it;
	const struct tj_trainjob *job;
	size_t n = 0;

	if (!accounts)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_jobs; i++) {
		tj_fair_share_account_of(accounts, &n, TJ_ADMITTER_SHARES_MAX,
		                         s->jobs[i].namespace);
		/* A namespace first seen since the controller leads: its records are read. */
		if (src->accounting)
			tj_accounting_want(src->accounting, s->jobs[i].namespace);
	}
	/* The deleted jobs' records count as the jobs did. */
	size_t n_records = 0;
	const struct tj_accounting_entry *records =
	        src->accounting ? tj_accounting_entries(src->accounting, &n_records) : NULL;

	for (size_t i = 0; i < n_records; i++)
		tj_fair_share_charge(accounts, &n, TJ_ADMITTER_SHARES_MAX, records[i].namespace,
		                     records[i].gpu_seconds, records[i].start,
		                     records[i].counted_until, half_life, now);
	tj_store_iter_init(tj_admitter_store_of(src->informers->trainjobs), &it);
	while ((job = tj_store_iter_next(&it)))
		tj_fair_share_charge(accounts, &n, TJ_ADMITTER_SHARES_MAX, job->namespace,
		                     job->status.gpu_seconds, job->status.start_time,
		                     job->status.gpu_seconds_until, half_life, now);
	charge_running(accounts, &n, s, half_life, now);
	tj_fair_share_settle(accounts, n, policy);
	tj_admitter_shares_clear(fs);
	fs->accounts = accounts;
	fs->n = n;
	fs->read_at = now;
	return 0;
}

/* Sets the points of s's jobs from fs; whether a job's namespace was missing from fs while
 * fs has room for it. A namespace fs does not know has used nothing. */
static bool set_points(const struct tj_admitter_shares *fs, struct tj_admitter_snapshot *s)
{
	bool missing = false;

	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct tj_fair_share_account *a =
		        tj_admitter_shares_find(fs, s->jobs[i].namespace);

		s->jobs[i].fair_share = a ? a->points : TJ_FAIR_SHARE_WEIGHT;
		missing = missing || (!a && fs->n < TJ_ADMITTER_SHARES_MAX);
	}
	return missing;
}

int tj_admitter_shares_apply(struct tj_admitter_shares *fs, const struct tj_admitter_source *src,
                             struct tj_admitter_snapshot *s, int64_t now)
{
	bool stale = !fs->read_at || now - fs->read_at >= TJ_ADMITTER_SHARES_PERIOD_S ||
	             now < fs->read_at;
	int rc;

	/* Most cycles read nothing again: one lookup a job. */
	if (!stale && !set_points(fs, s))
		return 0;
	rc = read_usage(fs, src, s, now);
	set_points(fs, s);
	return rc;
}
