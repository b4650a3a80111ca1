#include "cli/sshare_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/slurm_text.h"
#include "cli/table.h"

int tj_sshare_accounts(const struct tj_slurm_jobs *jobs, const struct tj_admission_policy *policy,
                       int64_t now, struct tj_fair_share_account **ret, size_t *ret_n)
{
	/* At most one account per job. */
	struct tj_fair_share_account *accounts = calloc(jobs->n + 1, sizeof(*accounts));
	size_t n = 0;

	if (!accounts)
		return -ENOMEM;
	for (size_t i = 0; i < jobs->n; i++) {
		const struct tj_trainjob *job = jobs->jobs[i].job;

		if (tj_slurm_in_queue(job) &&
		    !tj_fair_share_account_of(accounts, &n, jobs->n, job->namespace))
			goto fail;
	}
	for (size_t i = 0; i < jobs->n; i++) {
		const struct tj_trainjob *job = jobs->jobs[i].job;

		/* Its pods' GPUs since the status counted them, as held now (the controller
		 * reads them from its pods the same way). */
		int64_t tail = jobs->jobs[i].gpu_seconds - job->status.gpu_seconds;

		tj_fair_share_charge(accounts, &n, jobs->n, job->namespace, job->status.gpu_seconds,
		                     job->status.start_time, job->status.gpu_seconds_until,
		                     policy->fair_share_half_life, now);
		if (tail > 0)
			tj_fair_share_charge(
			        accounts, &n, jobs->n, job->namespace, tail,
			        tj_fair_share_uncounted_since(job->status.start_time,
			                                      job->status.gpu_seconds_until),
			        now, policy->fair_share_half_life, now);
		if ((job->status.gpu_seconds > 0 || tail > 0) &&
		    !tj_fair_share_find(accounts, n, job->namespace))
			goto fail;
	}
	tj_fair_share_settle(accounts, n, policy);
	*ret = accounts;
	*ret_n = n;
	return 0;
fail:
	tj_fair_share_accounts_free(accounts, n);
	return -ENOMEM;
}

static int cmp_row(const void *a, const void *b)
{
	return strcmp(((const struct tj_sshare_row *)a)->account,
	              ((const struct tj_sshare_row *)b)->account);
}

/* The row of ns in the n rows (unsorted), or NULL. */
static struct tj_sshare_row *find_row(struct tj_sshare_row *rows, size_t n, const char *ns)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(rows[i].account, ns) == 0)
			return &rows[i];
	return NULL;
}

/* A row for ns unless it has one: not counted, a share from policy. */
static int add_uncounted(struct tj_sshare_rows *out, const struct tj_admission_policy *policy,
                         const char *ns)
{
	struct tj_sshare_row *row;

	if (find_row(out->rows, out->n, ns))
		return 0;
	row = &out->rows[out->n];
	*row = (struct tj_sshare_row){ .account = strdup(ns),
		                       .raw_shares = tj_fair_share_share_of(policy, ns),
		                       .fair_share = 1 };
	if (!row->account)
		return -ENOMEM;
	out->n++;
	return 0;
}

int tj_sshare_rows(const struct tj_slurm_jobs *jobs, const struct tj_admission_policy *policy,
                   int64_t now, struct tj_sshare_rows *ret)
{
	struct tj_fair_share_account *accounts = NULL;
	struct tj_sshare_rows out = { 0 };
	double shares = 0, usage = 0;
	size_t n = 0;
	int r;

	if ((r = tj_sshare_accounts(jobs, policy, now, &accounts, &n)) < 0)
		return r;
	out.rows = calloc(n + jobs->n + policy->n_qos_namespaces + 1, sizeof(*out.rows));
	if (!out.rows) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		shares += accounts[i].share;
		usage += accounts[i].usage;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tj_fair_share_account *a = &accounts[i];
		struct tj_sshare_row *row = &out.rows[out.n];

		*row = (struct tj_sshare_row){ .account = strdup(a->namespace),
			                       .raw_shares = a->share,
			                       .norm_shares = shares > 0 ? a->share / shares : 0,
			                       .raw_usage = a->usage,
			                       .effective_usage = usage > 0 ? a->usage / usage : 0,
			                       .fair_share = a->factor,
			                       .counted = true };
		if (!row->account) {
			r = -ENOMEM;
			goto out;
		}
		out.n++;
	}
	for (size_t i = 0; i < jobs->n && r == 0; i++)
		r = add_uncounted(&out, policy, jobs->jobs[i].job->namespace);
	for (size_t i = 0; i < policy->n_qos_namespaces && r == 0; i++)
		if (strcmp(policy->qos_namespaces[i].namespace, "*") != 0)
			r = add_uncounted(&out, policy, policy->qos_namespaces[i].namespace);
	if (r < 0)
		goto out;
	/* What a namespace that does not count would get of the shares by counting. */
	for (size_t i = 0; i < out.n; i++)
		if (!out.rows[i].counted)
			out.rows[i].norm_shares =
			        out.rows[i].raw_shares / (shares + out.rows[i].raw_shares);
	qsort(out.rows, out.n, sizeof(*out.rows), cmp_row);
	*ret = out;
	out = (struct tj_sshare_rows){ 0 };
out:
	tj_sshare_rows_clear(&out);
	tj_fair_share_accounts_free(accounts, n);
	return r;
}

void tj_sshare_rows_clear(struct tj_sshare_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		free(rows->rows[i].account);
	free(rows->rows);
	*rows = (struct tj_sshare_rows){ 0 };
}

static int add_row(struct tj_table *t, const struct tj_sshare_row *row)
{
	char raw_shares[32], norm[32], raw_usage[32], effective[32], factor[32];
	int r;

	snprintf(raw_shares, sizeof(raw_shares), "%.0f", row->raw_shares);
	snprintf(norm, sizeof(norm), "%.6f", row->norm_shares);
	snprintf(raw_usage, sizeof(raw_usage), "%.0f", row->raw_usage);
	snprintf(effective, sizeof(effective), "%.6f", row->effective_usage);
	snprintf(factor, sizeof(factor), "%.6f", row->fair_share);
	if ((r = tj_table_add(t, row->account)) < 0 || (r = tj_table_add(t, raw_shares)) < 0 ||
	    (r = tj_table_add(t, norm)) < 0 || (r = tj_table_add(t, raw_usage)) < 0 ||
	    (r = tj_table_add(t, effective)) < 0 || (r = tj_table_add(t, factor)) < 0)
		return r;
	return 0;
}

int tj_sshare_print(FILE *out, const struct tj_sshare_rows *rows, const char *namespace)
{
	static const char *const header[] = { "Account",  "RawShares",    "NormShares",
		                              "RawUsage", "EffectvUsage", "FairShare" };
	struct tj_table *t = tj_table_new(6);
	int r = 0;

	if (!t)
		return -ENOMEM;
	for (size_t c = 0; c < 6 && r == 0; c++)
		r = tj_table_add(t, header[c]);
	for (size_t c = 1; c < 6; c++)
		tj_table_align_right(t, c);
	for (size_t i = 0; i < rows->n && r == 0; i++)
		if (!namespace || strcmp(rows->rows[i].account, namespace) == 0)
			r = add_row(t, &rows->rows[i]);
	if (r == 0)
		tj_table_print(t, out, false);
	tj_table_free(t);
	return r;
}
