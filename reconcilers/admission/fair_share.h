/* Fair share between namespaces, as Slurm's classic fair-share factor: inside a QOS tier
 * (reconcilers/policy/qos.h) the queue puts first the jobs of the namespaces that have used the
 * least of what their share entitles them to. Pure functions of the TrainJobs' recorded
 * GPU-seconds, the shares and the time.
 *
 * - Usage. A namespace's usage is the GPU-seconds its TrainJobs hold (status.gpuSeconds,
 *   reconcilers/usage/gpu_seconds.h, counted as they run), each job's decayed by its age with a
 *   half-life (admission.fairShare.halfLife, 7 days unless set): a job's seconds count as
 *   used at the middle of the time it held GPUs (from its startTime to the moment they are
 *   counted until). They are read from the TrainJobs themselves, so a restarted controller
 *   or a new leader sees the same usage and orders the queue as the old one did.
 * - Share. The config's admission.namespaces[].share (1 unless set; "*"'s for the others).
 *   A namespace's normalized share is its share over the sum of the shares of the
 *   namespaces that have used GPUs or wait for them.
 * - Factor. F = 2^(-U/S), U the namespace's usage over all the namespaces' usage, S its
 *   normalized share: 1 for a namespace that used nothing, 0.5 for one that used exactly
 *   its share, towards 0 past it.
 * - Priority inside a tier: 10000 x F plus up to 1000 for age (the time the job has waited,
 *   growing linearly to a cap of 7 days, as Slurm's PriorityWeightAge and PriorityMaxAge),
 *   higher first. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "reconcilers/settings.h"

#define TJ_FAIR_SHARE_WEIGHT     10000
#define TJ_FAIR_SHARE_AGE_WEIGHT 1000
#define TJ_FAIR_SHARE_MAX_AGE    (7 * 86400)
#define TJ_FAIR_SHARE_HALF_LIFE  (7 * 86400) /* the default */
#define TJ_FAIR_SHARE_MAX_SHARE  1000000

/* The GPU-seconds a job held, decayed to now: gpu_seconds held between start and until
 * (unix seconds; until 0 or before start: at start). */
double tj_fair_share_decayed(int64_t gpu_seconds, int64_t start, int64_t until, int64_t now,
                             int64_t half_life);

struct tj_fair_share_account {
	/* borrowed; owned when tj_fair_share_account_of made the account */
	const char *namespace;
	double usage;  /* decayed GPU-seconds */
	double share;  /* the configured share, > 0 */
	double factor; /* out: 2^(-U/S) */
	int points;    /* out: factor x TJ_FAIR_SHARE_WEIGHT, rounded */
};

/* Fills factor and points of each of the n accounts from their usage and share. */
void tj_fair_share_factors(struct tj_fair_share_account *accounts, size_t n);

/* The age points of a job that has waited since place (unix seconds). */
int tj_fair_share_age_points(int64_t place, int64_t now);

/* The accounts of a whole cluster, as the controller and the plugins (kubectl sshare, sprio)
 * make them, so that both show the same numbers: an account for every namespace that waits
 * for GPUs (tj_fair_share_account_of) or whose TrainJobs used some (tj_fair_share_charge),
 * then their shares and factors (tj_fair_share_settle). */

/* The account of namespace ns among the n accounts (sorted by namespace; room for cap),
 * added with nothing used (its name a copy it owns) when missing. NULL when there is no
 * room, or -ENOMEM. */
struct tj_fair_share_account *tj_fair_share_account_of(struct tj_fair_share_account *accounts,
                                                       size_t *n, size_t cap, const char *ns);

/* The account of ns among the n sorted accounts, or NULL. */
const struct tj_fair_share_account *tj_fair_share_find(const struct tj_fair_share_account *accounts,
                                                       size_t n, const char *ns);

/* Adds what a job of namespace ns used to the account of ns: gpu_seconds held from start to
 * until (its status.gpuSeconds, startTime and gpuSecondsCountedUntil, or its accounting
 * record's), decayed with half_life to now (tj_fair_share_decayed). A job that used nothing
 * adds no account. */
void tj_fair_share_charge(struct tj_fair_share_account *accounts, size_t *n, size_t cap,
                          const char *ns, int64_t gpu_seconds, int64_t start, int64_t until,
                          int64_t half_life, int64_t now);

/* When what a running job's status has not counted yet begins: its gpuSecondsCountedUntil,
 * or its start when that is later (unix seconds; 0: it has not started). */
int64_t tj_fair_share_uncounted_since(int64_t start, int64_t counted_until);

/* Adds what a running job's pods held since its status last counted them: gpus (the GPUs
 * they hold) from tj_fair_share_uncounted_since to now, so that a job counts as it runs,
 * not only at its status's next count. Nothing when that is not before now or gpus is not
 * positive. */
void tj_fair_share_charge_running(struct tj_fair_share_account *accounts, size_t *n, size_t cap,
                                  const char *ns, int64_t gpus, int64_t start,
                                  int64_t counted_until, int64_t half_life, int64_t now);

/* The share of namespace ns in policy: its rule's (its own, else "*"'s), else 1. */
double tj_fair_share_share_of(const struct tj_admission_policy *policy, const char *ns);

/* Sets the share of each of the n accounts from policy, then their factors and points. */
void tj_fair_share_settle(struct tj_fair_share_account *accounts, size_t n,
                          const struct tj_admission_policy *policy);

/* Frees the names of the n accounts that tj_fair_share_account_of made, and the array. */
void tj_fair_share_accounts_free(struct tj_fair_share_account *accounts, size_t n);
