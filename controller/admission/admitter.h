/* The admitter: the controller's side of gang admission (reconcilers/admission/admission.h holds
 * the decisions). It keeps the queue, the jobs whose plans wait for their gang to be admitted, and
 * the capacity ledger: what the pods hold on each node, and the gangs admitted whose pods the pod
 * cache does not show yet, counted on their nodes so that nothing is promised twice.
 *
 * It is a loop of its own beside the reconciles, and the two meet through plain values.
 * A reconcile gathers the job's ticket (tj_admitter_ticket: the queue's verdict, and for an
 * admitted gang the node of each rank), plans from it (reconcilers/plan/plan.h, a pure
 * function), and commits: the plan's API writes go to the executor, its admission actions
 * (struct tj_gang_request: the gang it wants admitted, the gang it creates, the nodes that
 * refused its pods) to the admitter (tj_admitter_commit), and once the writes are answered,
 * what became of the creates (tj_admitter_outcome). The admitter hears every pod and node
 * event (what they hold, what they free) and decides the whole queue in a cycle soon after
 * a want or a change of capacity; the jobs whose verdict changed are queued for planning,
 * an admitted one ahead of the rest. Nothing lives only here: after a restart
 * the queue is rebuilt from the plans of the cached TrainJobs, and the pods already created
 * are counted on their nodes through the pin annotation (and an MPI launcher admitted with
 * its gang, until it is created, through the hold annotation of its first node pod:
 * reconcilers/admission/launcher_hold.h), so the order and the reservations come back as they
 * were. */
#pragma once

#include <stdbool.h>

#include <uv.h>

#include "controller/config/config.h"
#include "controller/metrics/std_metrics.h"
#include "informers/informers.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/trainjob.h"

/* How long an admitted gang may wait for the plan that creates it before its nodes go back
 * to the queue (a plan that keeps failing, a job that was changed meanwhile). */
#define TJ_ADMITTER_ADMITTED_TIMEOUT_MS 60000
/* How often the queue is decided again without any event: backfill windows and expected
 * starts move with the clock. */
#define TJ_ADMITTER_PERIOD_MS 15000
/* How long a gang whose creates the API server refused waits before it is admitted again
 * (TJ_GANG_REFUSED, and TJ_GANG_MADE_IN_PART): long enough that a refusal that holds (a full quota,
 * a missing ServiceAccount) costs a few writes a minute, short enough that its fix is seen within
 * the next cycles (the period's cycle retries it, so 10 to 25 s after the refusal). */
#define TJ_ADMITTER_REFUSED_HOLD_S 10

struct tj_admitter;

struct tj_admitter_config {
	struct tj_informers *informers;       /* borrowed: TrainJob, Pod and Node caches */
	const struct tj_std_metrics *metrics; /* borrowed; may be NULL */
	/* Queues a job for planning (its decision changed); an admitted job ahead of every
	 * other, since the GPUs it was given stay idle until its plan creates the pods. */
	void (*enqueue)(void *userdata, const char *key);
	void (*enqueue_first)(void *userdata, const char *key);
	void *userdata;
	/* Kueue admits the jobs that carry its queue label (--kueue). Without it the label
	 * means nothing here: such a job is queued by the built-in admission as any other, so
	 * that no label walks past the queue on a cluster without Kueue. */
	bool kueue;
	/* Where the accounting records of deleted jobs are read and written
	 * (controller/admission/accounting.h); NULL: nowhere. */
	struct tj_client *client;
};

int tj_admitter_new(uv_loop_t *loop, const struct tj_admitter_config *config,
                    struct tj_admitter **ret);

/* Accepts NULL; returns NULL. The admitter must have been stopped first. */
struct tj_admitter *tj_admitter_free(struct tj_admitter *a);

/* The GPU classes and the admission policy; borrowed until the next call. */
void tj_admitter_set_config(struct tj_admitter *a, const struct tj_config *config);

/* Cycles run only while active (the controller leads and its caches have synced). */
void tj_admitter_set_active(struct tj_admitter *a, bool active);

/* The longest the first cycle after the admitter becomes active waits for the jobs it awaits
 * (tj_admitter_await): a plan that keeps failing must not hold the queue for good. */
#define TJ_ADMITTER_REBUILD_MAX_MS 30000

/* The longest a cycle waits for the plan of a job one of whose pods has failed, so that its
 * replacement, wanted by that plan, goes ahead of the jobs behind it (admitter.c,
 * await_failed). */
#define TJ_ADMITTER_FAILED_WAIT_MS 2000

/* The queue is being rebuilt: key, a job cached when the admitter became active, has not been
 * planned yet. No cycle runs until every awaited job has been planned once (its want told,
 * or it is forgotten) or TJ_ADMITTER_REBUILD_MAX_MS have passed since the first awaited, so
 * that the first cycles after a restart or a failover decide the whole queue in its order,
 * not whatever was planned first, and a head not planned yet keeps its reservation. */
void tj_admitter_await(struct tj_admitter *a, const char *key);

/* Gather: whether the built-in admission applies to job (it is on in the config, the job
 * is ours, no other admitter owns it: Kueue's queue label, with the Kueue integration on;
 * and its pods can be placed). If so, fills *ret with the job's ticket (its strings are
 * valid until the next cycle, which never runs during a reconcile) and returns true. */
bool tj_admitter_ticket(struct tj_admitter *a, const struct tj_trainjob *job, const char *key,
                        struct tj_admission_ticket *ret);

/* Commit: what the job's new plan asks of the queue (plan.gang). The nodes that refused
 * its pinned pods are kept off for TJ_PLAN_REFUSAL_MINUTES; the gang it wants is queued
 * or updated (one that changed nothing the queue reads starts no cycle), or taken off the
 * queue when it wants none; the gang it creates (gang->admits) keeps its nodes until the
 * cache shows its pods. writes_shown: the cache showed every pod write of the job's
 * previous plan (controller/expectations.h); after the plan that created the gang, the
 * gang's pods it lacks are gone, not late (tj_admitter_created_again). 0 or -ENOMEM. */
int tj_admitter_commit(struct tj_admitter *a, const struct tj_trainjob *job, const char *key,
                       const struct tj_gang_request *gang, bool writes_shown);

/* What became of the creates of a plan that created its admitted gang (gang->admits). */
enum tj_gang_outcome {
	/* They went out, and were not refused: made, or some of them answered with nothing
	 * that says whether they were (a timeout, a 5xx, a lost connection, even when sent
	 * again: the pods may exist). The nodes stay the gang's until the cache shows its pods
	 * or the patience runs out (admitter_queue.h). */
	TJ_GANG_SENT,
	/* The API server refused one: the nodes go back to the queue, and the job is decided
	 * again no sooner than TJ_ADMITTER_REFUSED_HOLD_S (the refusal, a quota, a webhook, most
	 * often still holds). */
	TJ_GANG_REFUSED,
	/* The plan's execution could not start, or every pod create failed, each answered that
	 * its pod was not made (a 429 past its retries, a connection refused), none refused:
	 * the nodes go back to the queue, and the job is decided again at once. */
	TJ_GANG_NOT_SENT,
	/* As TJ_GANG_NOT_SENT, but some of the gang's pods were made: they wait behind their
	 * gate, pinned to the nodes this admission gave them, until the next plan that sees
	 * them deletes them. The nodes go back to the queue at once (a gated pod holds no node
	 * for the scheduler), and the job is decided again no sooner than
	 * TJ_ADMITTER_REFUSED_HOLD_S, as after a refusal: admitted again before the cache
	 * shows those pods, its plan would take a pod pinned to the old nodes for one of the
	 * new gang's (AlreadyExists) and lift its gate there. */
	TJ_GANG_MADE_IN_PART,
};

void tj_admitter_outcome(struct tj_admitter *a, const char *key, enum tj_gang_outcome outcome);

/* The job is gone. */
void tj_admitter_forget(struct tj_admitter *a, const char *key);

/* The TrainJob job was deleted: while active, its accounting record is written, so that its
 * GPU-seconds still count for its namespace's fair share (reconcilers/usage/accounting.h). */
void tj_admitter_job_deleted(struct tj_admitter *a, const struct tj_trainjob *job);

/* A pod of the cache changed (old: before, NULL when added; pod: after, NULL when deleted):
 * what it holds is counted again on the nodes it used and uses. Called for every pod event,
 * whether the controller leads or not. When room was freed (a pod that held a node ended or
 * left it), the cycle that may start the next gang runs as soon as the loop allows,
 * borrowing ahead of the cycles' share of the loop up to a bound; when a pod's requests or
 * its end changed, a cycle runs soon. */
void tj_admitter_pod_changed(struct tj_admitter *a, const struct tj_pod *old,
                             const struct tj_pod *pod);

/* A node of the cache changed (old: before, NULL when added; node: after, NULL when deleted):
 * what it offers is judged again, and the nodes put in order again when one came or went.
 * Called for every node event, whether the controller leads or not. A cycle runs soon,
 * unless nothing the queue reads changed; a node deleted still counts for NeverFits for a
 * while (a node being replaced comes back). */
void tj_admitter_node_changed(struct tj_admitter *a, const struct tj_node *old,
                              const struct tj_node *node);

/* Something else the queue reads changed (a ResourceQuota): a cycle runs soon (several
 * calls share one cycle). */
void tj_admitter_kick(struct tj_admitter *a);
