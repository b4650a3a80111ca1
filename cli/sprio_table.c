#include "cli/sprio_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/slurm_text.h"
#include "cli/sshare_table.h"
#include "cli/table.h"
#include "reconcilers/admission/admission.h"
#include "reconcilers/policy/qos.h"

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The index of partition among the n sorted names. */
static int partition_index(const char *const *names, size_t n, const char *partition)
{
	const char *const *at = bsearch(&partition, names, n, sizeof(*names), cmp_name);

	return at ? (int)(at - names) : -1;
}

/* The jobs in the queue whose tier resolves: into queued (their jobs and tiers) and the
 * partitions' sorted names (the distinct ones first *n_names). */
static size_t take_queued(const struct tj_slurm_jobs *jobs,
                          const struct tj_admission_policy *policy, struct tj_sprio_row *queued,
                          const char **names, size_t *n_names)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < jobs->n; i++) {
		const struct tj_slurm_job *j = &jobs->jobs[i];
		struct tj_problem why = { "", "" };
		const struct tj_qos_tier *tier;

		if (!tj_slurm_in_queue(j->job) ||
		    !(tier = tj_qos_resolve(policy, j->job->namespace, j->job->qos, &why)))
			continue;
		queued[n] = (struct tj_sprio_row){
			.job = j,
			.qos = tier->name,
			.tier = tier->priority,
			.own = j->job->priority ? (int32_t)strtol(j->job->priority, NULL, 10) : 0,
		};
		names[n++] = j->partition;
	}
	qsort(names, n, sizeof(*names), cmp_name);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || strcmp(names[k - 1], names[i]) != 0)
			names[k++] = names[i];
	*n_names = k;
	return n;
}

int tj_sprio_rows(const struct tj_slurm_jobs *jobs, const struct tj_admission_policy *policy,
                  int64_t now, struct tj_sprio_rows *ret)
{
	struct tj_fair_share_account *accounts = NULL;
	struct tj_sprio_row *queued = calloc(jobs->n + 1, sizeof(*queued));
	const char **names = calloc(jobs->n + 1, sizeof(*names));
	struct tj_admission_job *adm = calloc(jobs->n + 1, sizeof(*adm));
	struct tj_admission_rank *ranks = calloc(jobs->n + 1, sizeof(*ranks));
	struct tj_sprio_rows out = { 0 };
	size_t n_accounts = 0, n_names, n;
	int r = -ENOMEM;

	out.rows = calloc(jobs->n + 1, sizeof(*out.rows));
	if (!queued || !names || !adm || !ranks || !out.rows ||
	    tj_sshare_accounts(jobs, policy, now, &accounts, &n_accounts) < 0)
		goto out;
	n = take_queued(jobs, policy, queued, names, &n_names);
	for (size_t i = 0; i < n; i++) {
		const struct tj_trainjob *job = queued[i].job->job;
		const struct tj_fair_share_account *a =
		        tj_fair_share_find(accounts, n_accounts, job->namespace);

		queued[i].fair_share = a ? a->points : TJ_FAIR_SHARE_WEIGHT;
		adm[i] = (struct tj_admission_job){
			.key = queued[i].job->job->name,
			.namespace = job->namespace,
			.class_index = partition_index(names, n_names, queued[i].job->partition),
			.tier = queued[i].tier,
			.fair_share = queued[i].fair_share,
			.priority = queued[i].own,
			.creation_time = job->creation_time,
		};
	}
	if ((r = tj_admission_order(adm, n, n_names, now, ranks)) < 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		struct tj_sprio_row *row = &out.rows[out.n++];

		*row = queued[ranks[k].job];
		row->age = ranks[k].age_points;
		row->priority = ranks[k].score;
	}
	*ret = out;
	out = (struct tj_sprio_rows){ 0 };
out:
	tj_sprio_rows_clear(&out);
	tj_fair_share_accounts_free(accounts, n_accounts);
	free(ranks);
	free(adm);
	free(names);
	free(queued);
	return r;
}

void tj_sprio_rows_clear(struct tj_sprio_rows *rows)
{
	free(rows->rows);
	*rows = (struct tj_sprio_rows){ 0 };
}

static int add_row(struct tj_table *t, const struct tj_sprio_row *row)
{
	const struct tj_trainjob *job = row->job->job;
	char tier[16], priority[24], fair_share[16], age[16], own[16];
	int r;

	snprintf(tier, sizeof(tier), "%d", row->tier);
	snprintf(priority, sizeof(priority), "%lld", (long long)row->priority);
	snprintf(fair_share, sizeof(fair_share), "%d", row->fair_share);
	snprintf(age, sizeof(age), "%d", row->age);
	if (job->priority)
		snprintf(own, sizeof(own), "%d", (int)row->own);
	else
		snprintf(own, sizeof(own), "-");
	if ((r = tj_table_add(t, job->name)) < 0 ||
	    (r = tj_table_add(t, row->job->partition)) < 0 ||
	    (r = tj_table_add(t, job->namespace)) < 0 || (r = tj_table_add(t, row->qos)) < 0 ||
	    (r = tj_table_add(t, tier)) < 0 || (r = tj_table_add(t, priority)) < 0 ||
	    (r = tj_table_add(t, fair_share)) < 0 || (r = tj_table_add(t, age)) < 0 ||
	    (r = tj_table_add(t, own)) < 0)
		return r;
	return 0;
}

int tj_sprio_print(FILE *out, const struct tj_sprio_rows *rows, const char *namespace)
{
	static const char *const header[] = { "JOBID",    "PARTITION", "ACCOUNT", "QOS", "TIER",
		                              "PRIORITY", "FAIRSHARE", "AGE",     "OWN" };
	struct tj_table *t = tj_table_new(9);
	int r = 0;

	if (!t)
		return -ENOMEM;
	for (size_t c = 0; c < 9 && r == 0; c++)
		r = tj_table_add(t, header[c]);
	for (size_t c = 4; c < 9; c++)
		tj_table_align_right(t, c);
	for (size_t i = 0; i < rows->n && r == 0; i++)
		if (!namespace || strcmp(rows->rows[i].job->job->namespace, namespace) == 0)
			r = add_row(t, &rows->rows[i]);
	if (r == 0)
		tj_table_print(t, out, false);
	tj_table_free(t);
	return r;
}
