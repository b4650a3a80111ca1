/* Preemption, the admitter's side (reconcilers/admission/admission.h, "Preemption", decides the
 * victims; reconcilers/plan/plan.h stops them). Each cycle that has a queued job of a tier that
 * may preempt reads the running gangs of the tiers it may preempt from the ledger (what
 * their pods hold on each node, their tier, their start), and after the decision keeps a
 * record of each victim chosen: its ticket tells its plan, which records the preemption in
 * the job's status; the job that preempts it waits for it and chooses no others while the
 * record lasts (its stop plus its grace); a victim's pods count as released at its stop.
 * After a restart or a failover the victims' statuses (status.preemption) tell the same, so
 * nothing is chosen twice. Internal to the admitter. */
#pragma once

#include <stdint.h>

#include "controller/admission/admitter_queue.h"

/* A running job the queue chose as a victim. */
struct tj_admitter_preemption {
	char key[TJ_STORE_KEY_MAX]; /* the victim */
	char by[TJ_STORE_KEY_MAX];  /* the job that preempts it */
	/* The victim's status.startTime when it was chosen: a later run of it (stopped, queued
	 * and started again) is not the one preempted. */
	int64_t start;
	int64_t at;    /* unix seconds: when its pods stop */
	int64_t until; /* unix seconds: the record goes then (the stop plus the grace) */
	/* The nodes the job that preempts it chose for its pods (tj_admission_decision.claimed),
	 * the same in each of its victims' records; owned; NULL and 0 for none. */
	char **claimed;
	size_t n_claimed;
};

/* A store of struct tj_admitter_preemption keyed by the victim, with an index by the job that
 * preempts it (TJ_ADMITTER_PREEMPTION_INDEX_BY). */
extern const struct tj_store_ops tj_admitter_preemption_ops;
#define TJ_ADMITTER_PREEMPTION_INDEX_BY 0

/* Whether the cached job (key) is being preempted: when its pods stop and the job that
 * preempts it, from its status or a record of records (NULL: none). */
bool tj_admitter_preemption_of(const struct tj_store *records, const struct tj_trainjob *job,
                               const char *key, int64_t *at, const char **by);

/* Fills the snapshot's running gangs (s->running) from the nodes it read, when a queued job
 * of it may preempt, and marks the queued jobs whose victims are still stopping
 * (preempting), with the nodes they chose (claimed, in s->claims) while their records tell
 * them. Forgets the records that are over. 0 or -ENOMEM. */
int tj_admitter_running_build(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s,
                              int64_t now);

/* Fills the snapshot's QOS tier limits (s->tier_limits) for the queued jobs whose tier
 * limits the GPUs a namespace may hold in it, with what each namespace holds in the tier
 * (its running jobs' pods on the nodes read, and its gangs admitted whose pods the cache
 * does not show yet), and points the jobs at them. 0 or -ENOMEM. */
int tj_admitter_tier_limits_build(const struct tj_admitter_source *src,
                                  struct tj_admitter_snapshot *s);

/* Records the victims of the decisions of res (over s) in src->preemptions, each stopping
 * at its stop; calls chosen for each. 0 or -ENOMEM. */
int tj_admitter_preemptions_take(const struct tj_admitter_source *src,
                                 const struct tj_admitter_snapshot *s,
                                 const struct tj_admission_result *res, int64_t now,
                                 void (*chosen)(void *userdata,
                                                const struct tj_admission_running *victim,
                                                const char *by, int64_t at),
                                 void *userdata);
