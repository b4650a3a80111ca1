/* What kubectl sshare prints (pure): the namespaces' fair share
 * (reconcilers/admission/fair_share.h) as Slurm's sshare lists its accounts, a namespace being an
 * account, Account RawShares NormShares RawUsage EffectvUsage FairShare RawShares is the
 * namespace's share in the config (admission.namespaces[].share, "*"'s for the others, 1 unless
 * set); NormShares its part of the shares of the namespaces that count (below); RawUsage the
 * GPU-seconds its TrainJobs recorded (the deleted ones' through their accounting records,
 * reconcilers/usage/accounting.h, which the jobs given include), each decayed by its age with the
 * half-life, as Slurm's Raw Usage decays (the metric trainjob_fair_share_usage_gpu_seconds);
 * EffectvUsage its part of all that usage; FairShare the factor 2^(-EffectvUsage/NormShares)
 * (the metric trainjob_fair_share_factor), which times 10000 is the fair-share priority of
 * its queued jobs.
 *
 * The accounts are made as the controller makes them (tj_fair_share_account_of, _charge and
 * _settle): the namespaces that have a job in the queue or whose TrainJobs used GPUs count,
 * and only their shares are normalized. A namespace that has TrainJobs, or a share entry of
 * its own, but neither waits nor used GPUs still has a row: its FairShare is 1, and its
 * NormShares the part it would get by queueing a job. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/slurm_jobs.h"
#include "reconcilers/admission/fair_share.h"
#include "reconcilers/settings.h"

/* The accounts of the cluster's jobs at now, as the controller makes them, with their shares,
 * factors and points: an owned array (free with tj_fair_share_accounts_free) sorted by
 * namespace. 0 or -ENOMEM. */
int tj_sshare_accounts(const struct tj_slurm_jobs *jobs, const struct tj_admission_policy *policy,
                       int64_t now, struct tj_fair_share_account **ret, size_t *ret_n);

struct tj_sshare_row {
	char *account; /* owned; the namespace */
	double raw_shares, norm_shares;
	double raw_usage; /* decayed GPU-seconds */
	double effective_usage, fair_share;
	bool counted; /* one of the accounts: it waits or used GPUs */
};

struct tj_sshare_rows {
	struct tj_sshare_row *rows; /* owned array, by account */
	size_t n;
};

/* The rows of every namespace that has TrainJobs or a share entry of its own. 0 or -ENOMEM. */
int tj_sshare_rows(const struct tj_slurm_jobs *jobs, const struct tj_admission_policy *policy,
                   int64_t now, struct tj_sshare_rows *ret);

void tj_sshare_rows_clear(struct tj_sshare_rows *rows);

/* Prints the table of the rows of namespace (NULL: every row). 0 or -ENOMEM. */
int tj_sshare_print(FILE *out, const struct tj_sshare_rows *rows, const char *namespace);
