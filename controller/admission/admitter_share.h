/* The fair share of the admitter's queue (reconcilers/admission/fair_share.h): each namespace's
 * usage, read from the GPU-seconds its TrainJobs recorded, its deleted jobs' accounting records and
 * what its running jobs' pods held since (the same numbers kubectl sshare makes), and the
 * fair-share points its queued jobs are ordered by. It is read again at most every
 * TJ_ADMITTER_SHARES_PERIOD_S (a walk of the TrainJobs and of the nodes' pods), or when a
 * namespace it does not know queues a job. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "controller/admission/admitter_queue.h"
#include "reconcilers/admission/fair_share.h"

#define TJ_ADMITTER_SHARES_PERIOD_S 10
/* The most namespaces accounted; past it, those read last count as having used nothing. */
#define TJ_ADMITTER_SHARES_MAX 4096

struct tj_admitter_shares {
	struct tj_fair_share_account *accounts; /* owned, by namespace; names owned */
	size_t n;
	int64_t read_at; /* unix seconds; 0: never */
};

/* Reads the usage again from src's TrainJob cache if it is older than the period or a job of
 * s is of a namespace it does not know, then sets the fair-share points of s's jobs. 0 or
 * -ENOMEM (the points stay 0: the queue is ordered by age alone). */
int tj_admitter_shares_apply(struct tj_admitter_shares *fs, const struct tj_admitter_source *src,
                             struct tj_admitter_snapshot *s, int64_t now);

/* The account of namespace ns, or NULL. */
const struct tj_fair_share_account *tj_admitter_shares_find(const struct tj_admitter_shares *fs,
                                                            const char *ns);

void tj_admitter_shares_clear(struct tj_admitter_shares *fs);
