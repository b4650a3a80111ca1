/* Gang admission: which waiting TrainJobs may create their pods now, and on which nodes
 * (DESIGN.md section 4, "Admission"). A pure function of the cluster's capacity, the queue,
 * the walltimes of what runs and the time: no I/O, no clock reads. The controller builds the
 * input from its caches and its ledger of reservations not yet bound, runs it after every
 * change that can move the queue, and hands each job's decision to its plan.
 *
 * The rules:
 * - Capacity. A node of a class takes new pods when the caller says so (Ready, not cordoned,
 *   no taint the class does not tolerate, healthy). What is free on it is its allocatable
 *   GPUs (the class's extended resource), CPU and memory minus what is used: the requests of
 *   every pod that holds it (reconcilers/admission/capacity.h: bound, pinned or nominated there),
 * ours or not, and the reservations of admitted gangs whose pods the cache has not shown yet. Which
 * nodes of its class a job may use at all is its eligibility (tj_admission_job.eligible).
 * - Fit. A gang fits when every one of its pods fits at once, each with the job's request,
 *   on nodes of its class that take new pods. Several pods of one job may share a node when
 *   its free resources hold them. Nothing is admitted in part: a gang is placed whole or not
 *   at all. A gang may have one pod of another shape, its launcher (an MPI launcher that
 *   asks for GPUs, created once the others are Ready): it is placed with them, on the node
 *   that fits it best in what they leave (else first, and they in what it leaves), and it
 *   counts in all a gang is judged by (quotas, the head's reservation, NeverFits).
 * - Node choice, to keep large jobs possible: with a topology domain on the nodes (the
 *   config's topology label), the gang goes into the fewest domains, preferring the one
 *   domain that holds it with the least room to spare; within that, best fit: the node with
 *   the fewest free GPUs that still holds a pod (so partly used nodes fill up first and whole
 *   nodes stay whole), then the name, so the choice is deterministic.
 * - Order. Per class: restarts of running jobs first (a failed worker's replacements), then
 *   the QOS tier's priority (higher first), then, inside a tier, the jobs whose victims are
 *   on their way out (preempting), then the fair-share priority (higher first: the
 *   namespace's fair-share points plus the job's age points, reconcilers/admission/fair_share.h),
 * then creation time (older first), then the key. A job's own priority reorders only the jobs of
 * its namespace and tier among the places their creation times gave them (admission_order.c): no
 * priority a job sets on itself takes it past another namespace's job.
 * - Reservation. The first job of a class that does not fit is the head. From the walltime
 *   ends of what runs (releases), the earliest time at which its gang fits is its expected
 *   start, and the nodes it would take then are reserved for it. Without releases that let
 *   it fit (something runs without a walltime), its expected start is unknown (0). The jobs
 *   behind it that cannot backfill get a reservation too, in the queue's order, up to the
 *   config's reservations in all (Slurm's backfill depth), each on what the reservations
 *   before it leave: no node reserved for a job ahead counts for it, ever (a conservative
 *   start: never one that would delay a job ahead).
 * - Backfill (as Slurm's backfill scheduler): a job behind a blocked head starts now only if
 *   it fits in what is free now and delays no job that has a reservation: each node it
 *   takes is reserved for nobody, or its own walltime, with the grace its pods have to stop
 *   after it, ends no later than the earliest expected start of the reservations holding
 *   that node (each node's own plan, as Slurm's). A job of a tier lower than that of a job
 *   with a reservation takes none of the reserved nodes, whatever its walltime: the job of the
 *   higher tier is ready as soon as the jobs before it end, most before their walltimes, and
 *   would then wait the lower one's grace to preempt it. A job without a walltime
 *   starts behind a blocked head only off the reserved nodes, and only when every job with
 *   a reservation has an expected start. With backfill off the queue is strict FIFO per
 *   class: nothing starts behind a blocked head.
 * - Quotas (Slurm's GrpTRES). A job whose namespace would hold more GPUs of the class than
 *   the namespace's limit waits with reason QuotaExceeded; it does not block the jobs
 *   behind it, and it is not a head.
 * - ResourceQuotas (the API server's). A job whose pods would take one of its namespace's
 *   ResourceQuotas past its hard limit on a resource waits with reason QuotaExceeded, the
 *   message naming the quota and the resource, as for the quotas above; one whose whole gang
 *   needs more than the hard limit itself can never start: it is NeverFits with reason
 *   QuotaExceeded (it fails, or waits when NeverFits jobs wait). What the jobs admitted in a
 *   cycle use counts against the next.
 * - QOS limits (Slurm's QOS MaxTRESPerAccount for GPUs). A job whose namespace would hold
 *   more GPUs in its QOS tier, of every class together, than the tier allows a namespace
 *   waits with reason QOSMaxGRESPerNamespace; it does not block the jobs behind it. One whose
 *   gang alone needs more is NeverFits with that reason. What a cycle admits counts against
 *   the next job.
 * - Never fits. A job whose gang does not fit even on an empty class (too few nodes of that
 *   size that it may use) is NeverFits, with the most nodes of that size the class has; it is
 *   not a head. Every node of the class counts, those that take no new pods now too (a
 *   cordoned or NotReady node comes back).
 * - Nodes a job must avoid (where its last worker failed) or may not use (its eligibility)
 *   are, for that job alone, nodes with nothing free: they hold none of its pods now, and no
 *   release on them counts toward its expected start.
 * - Preemption (as Slurm's QOS preemption, PreemptMode=REQUEUE). A blocked job that gets a
 *   reservation (one of the first of its class, the backfill depth) and whose tier may
 *   preempt others (tj_admission_job.preempts) preempts when its expected start is unknown or
 *   later than its tier's preempt_after: among the running gangs of its class in the tiers
 *   it may preempt (tj_admission_input.running), it chooses victims in order, lowest tier first,
 *   then the most recently started, until its whole gang fits in what is free now plus
 *   what they hold (off the nodes reserved for the jobs ahead, and those it must avoid);
 *   then it spares every victim it can still do without, the last chosen first, so that no
 *   victim is one too many. It preempts nobody when the victims would still be stopping at
 *   its expected start without them (what ends by its walltime frees the nodes first). Its expected
 * start is the latest of their stops (now plus each one's grace: they are told, then stopped); the
 * nodes it will take are reserved for it. Any job behind a blocked head that cannot be backfilled
 * tries the same first, off the nodes reserved for the jobs ahead (so it delays none of them),
 * but for those whose reservations start after it would end, as backfill allows them; one
 * that preempts so is no head (it counts for no backfill depth), but the nodes it will take are
 * held for it from its victims' stop, so no job after it in the cycle chooses them too. A job whose
 * gang does not fit even then preempts nothing. A victim is chosen once per cycle; a job whose
 * victims are still on their way out (preempting) waits for them and chooses no others, and comes
 * first in its tier, so that the nodes they give back are reserved for it, not for a job ahead that
 * did not preempt (whose reservation would leave them to short jobs backfilled meanwhile, and the
 * job to preempt again). Given the nodes it chose (claimed), it starts there as soon as they are
 * free, and until then they are its reservation, whatever else comes free first; unless one of them
 * is reserved for a job ahead (of a higher tier), or they cannot hold it by any known time, when it
 * is decided as any other job. It comes first for its claim alone: elsewhere it starts only once
 * every other job of its tier has been decided, wherever it then fits off the reserved nodes (as a
 * job backfilled there), so that it takes no free node from a job of its tier ahead of it.
 * - Begin time (Slurm's BeginTime). A job that may not start before a time (not_before: a
 *   restart in its backoff) keeps its place in the order but starts nothing before then: it
 *   waits with reason BeginTime and is reserved as a blocked job is (within the backfill
 *   depth), on what is free now off the nodes reserved for the jobs ahead if its gang fits
 *   there, else where the releases let it fit; its expected start is the later of that time
 *   and its begin time. So the jobs behind it take its nodes only when they give them back
 *   by then, and it is placed as soon as its time comes. It preempts nobody before then.
 * - Tries (Slurm's bf_max_job_test and bf_continue). Behind the reservations of its class, a
 *   job that needs a look at the class's nodes (a shape of gang no job before it in the run
 *   had, or nodes it must avoid or may not use) is a try; the jobs of a shape already looked
 *   at are decided from what that look counted. With config max_tries, a run makes at most
 *   that many tries per class: the jobs that would be tries past them are not tried
 *   (untried), as if they were not in the queue, but for their places. The tries begin at
 *   the class's cursor, the place in its queue where the last run's tries stopped: the jobs
 *   between the reservations and it that would be tries are not tried either, so that every
 *   job is tried once in a few runs however long the queue. Restarts, the jobs whose victims
 *   are on their way out, and the jobs before the backfill depth is reached are always
 *   decided.
 * - Settled classes. A run numbers what each class's decision reads (its nodes, what they
 *   hold and give back when, its queue, the running gangs its jobs may preempt, the limits
 *   its jobs count against as the classes before it leave them, the config and the time to
 *   the second) into a digest (tj_admission_result.digests). Given the digests of the
 *   last run (tj_admission_input.digests), a class whose digest is the same is settled: it
 *   would be decided exactly as then, so it is not decided again. Its jobs' decisions are
 *   WAITING and settled, with their ranks and nothing else; the caller keeps what it made of
 *   the last ones. A class whose decision admitted or preempted has the digest 0, which
 *   settles nothing: the caller acts on what it decided, and what it admitted counts against
 *   the limits of the classes decided after it. One whose tries resume past the start of its
 *   queue (a cursor) gets none either: the last run's began elsewhere. With the jobs of one
 *   class alone, no digest is made (0): a cycle then comes of a change to that class.
 * - Reasons of a waiting job: Resources (it does not fit in what is free now, or it is the
 *   head), Priority (it would fit now, but starting it would delay the head), QuotaExceeded,
 *   NeverFits, QOSMaxGRESPerNamespace, BeginTime. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/trainjob.h"

/* What one pod asks for, or one node offers. */
struct tj_admission_resources {
	int64_t gpus;      /* of the class's extended resource */
	int64_t cpu_milli; /* millicores */
	int64_t memory;    /* bytes */
	/* Pod slots: 1 in a pod's request, a node's allocatable `pods` (the kubelet's maxPods) in
	 * an offer; 0 in a request asks for none, as for the others. */
	int64_t pods;
};

struct tj_admission_node {
	const char *name;   /* borrowed */
	int class_index;    /* index into tj_admission_input.class_names; -1: no GPU class */
	const char *domain; /* borrowed; value of the topology label, NULL if none */
	bool schedulable;   /* takes new pods */
	struct tj_admission_resources allocatable;
	struct tj_admission_resources used; /* bound and pinned pods, and reservations */
};

/* Resources that come free at a known time: a pod of a running job whose walltime
 * ends then (status.deadline: the start plus activeDeadlineSeconds or the defaultWalltime,
 * reconcilers/policy/walltime.h), one being deleted, one of a gang that is ending (now:
 * reconcilers/admission/capacity.h). */
struct tj_admission_release {
	size_t node; /* index into nodes */
	int64_t at;  /* unix seconds */
	struct tj_admission_resources resources;
};

/* A namespace's GPUs in use, per class, for the quotas. */
struct tj_admission_usage {
	const char *namespace; /* borrowed */
	int class_index;
	int64_t gpus;
};

/* What a running gang holds on one node. */
struct tj_admission_hold {
	size_t node; /* index into nodes */
	struct tj_admission_resources resources;
};

/* A running gang that a queued job of a tier above it may preempt (its pods are not being
 * deleted, and it is not being preempted already: a gang on its way out is only its
 * releases, at its stop). */
struct tj_admission_running {
	const char *key; /* borrowed; "namespace/name" */
	int class_index;
	int tier; /* the priority of its QOS tier: lower tiers are preempted first */
	unsigned
	        qos; /* the index of its tier, the bit of tj_admission_job.preempts that names it */
	int64_t start; /* unix seconds: the most recently started are preempted first */
	/* The seconds it is told before its pods are stopped (their termination grace). */
	int64_t grace;
	const struct tj_admission_hold *holds; /* borrowed; n_holds */
	size_t n_holds;
};

/* The most GPUs one namespace may hold in a QOS tier, every class together. */
struct tj_admission_tier_limit {
	const char *namespace; /* borrowed */
	const char *tier;      /* borrowed; the tier's name, for messages */
	int64_t max_gpus;
	/* What the namespace's jobs of the tier hold now, and the gangs admitted before this
	 * cycle whose pods the caches do not show yet. */
	int64_t used;
};

/* The most GPUs of a class one namespace may hold; namespace "*" is every namespace
 * without a limit of its own. */
struct tj_admission_quota {
	const char *namespace; /* borrowed */
	int class_index;
	int64_t max_gpus;
};

struct tj_admission_job {
	const char *key;                       /* borrowed; "namespace/name" */
	const char *namespace;                 /* borrowed */
	int class_index;                       /* -1: no GPU class: the nodes of class -1 */
	int num_nodes;                         /* the job's ranks, for messages and NeverFits */
	int num_pods;                          /* ranks that need a pod now (1..num_nodes) */
	struct tj_admission_resources request; /* of one pod */
	int tier; /* the priority of its QOS tier (reconcilers/policy/qos.h) */
	/* Its namespace's fair-share points (reconcilers/admission/fair_share.h), 0..10000: inside
	 * a tier, with the job's age points, higher first. */
	int fair_share;
	int32_t priority;      /* its own: orders only its namespace's jobs */
	int64_t creation_time; /* unix seconds */
	int64_t walltime;      /* the effective walltime (walltime.h); 0: none */
	/* The seconds its pods may take to stop once the walltime ends (their
	 * terminationGracePeriodSeconds): it gives its nodes back that much later. */
	int64_t grace;
	/* Replacements for a job that was running (a restart) or whose gang is partly created:
	 * ahead of every queued job of its class, and never NeverFits for want of patience. */
	bool restart;
	/* Unix seconds before which it may not start (a restart in its backoff; Slurm's
	 * BeginTime); 0: none. Until then it waits with reason BeginTime, in its place, with a
	 * reservation from then on (rule "Begin time"). */
	int64_t not_before;
	/* Nodes the job's pods must avoid (indexes into nodes: where its last worker failed,
	 * which its pods' affinity excludes); at most TJ_ADMISSION_MAX_EXCLUDED are heeded. */
	const size_t *excluded;
	size_t n_excluded;
	/* The request of the gang's launcher, a pod of another shape that needs a place now
	 * with the others (created later, once they are Ready); pods 0: no launcher. */
	struct tj_admission_resources launcher;
	/* Per node of the input (borrowed; jobs that ask the same may share one): whether the
	 * job's pods may go there as the scheduler judges it (reconcilers/admission/placement.h:
	 * its node selector and affinity, its tolerations, the resources the node offers at all).
	 * NULL: every node of its class. A node it may not use is, for the job, as one it must
	 * avoid, and counts neither in its NeverFits verdict nor in its reservation. */
	const bool *eligible;
	/* With eligible: why the scheduler would refuse the nodes of the class the job may not
	 * use (the first one's reason, in the scheduler's words), for its NeverFits message;
	 * borrowed; NULL for none. */
	const char *ineligible_why;
	/* The ResourceQuota limits that count its pods (borrowed). */
	const struct tj_admission_quota_charge *charges;
	size_t n_charges;
	/* Preemption: the tiers whose running gangs it may preempt (bit i: tj_admission_running.qos
	 * i; 0: none), and how far away its expected start must be before it does. */
	uint32_t preempts;
	int64_t preempt_after;
	/* Its tier's backfillReservedNodes: behind a reservation of a higher tier it backfills as
	 * behind one of its own (when its walltime and grace end by the reservation's start),
	 * not only off the reserved nodes. */
	bool backfill_reserved_nodes;
	/* Gangs it preempted are still on their way out: it waits for them, preempting no
	 * others. */
	bool preempting;
	/* Preempting: the nodes it chose when it preempted (indexes into nodes, one per pod,
	 * tj_admission_decision.claimed of that cycle); its gang goes there, now or as its
	 * reservation once they are free, unless a job ahead holds one of them. Borrowed; NULL:
	 * none. */
	const size_t *claimed;
	size_t n_claimed;
	/* 1 + the index into tier_limits of its namespace's limit in its tier; 0: none. */
	size_t tier_limit;
};

#define TJ_ADMISSION_MAX_EXCLUDED 32

/* A limit of one of a namespace's ResourceQuotas on a resource its pods use
 * (informers/resource_quota.h, reconcilers/admission/quota.h); amounts in thousandths. */
struct tj_admission_quota_limit {
	const char *namespace, *quota, *resource; /* borrowed */
	int64_t hard;
	/* What it holds now: the quota's status.used, and what the gangs admitted before this
	 * cycle will use whose pods it may not count yet. */
	int64_t used;
};

/* What a job's pods use of one such limit. */
struct tj_admission_quota_charge {
	size_t limit;  /* index into tj_admission_input.quota_limits */
	int64_t now;   /* of the pods that need one now (num_pods, and the launcher) */
	int64_t whole; /* of the whole gang (num_nodes, and the launcher) */
};

struct tj_admission_config {
	bool backfill;
	/* A NeverFits job waits (reason NeverFits) instead of failing, for clusters that grow. */
	bool wait_if_never_fits;
	const struct tj_admission_quota *quotas;
	size_t n_quotas;
	/* The messages of jobs waiting for Resources or Priority are left empty, for the caller
	 * to write with tj_admission_say_deferred for the decisions it tells: a queue of thousands
	 * costs more to describe than to decide, and most of it is not told again. */
	bool defer_waiting_messages;
	/* How many blocked jobs of a class get a reservation and an expected start, in the
	 * queue's order (Slurm's backfill depth); 0 counts as 1, the head alone. */
	int reservations;
	/* How many jobs of a class behind its reservations a run tries at most, of those that
	 * need a look at the class's nodes (Slurm's bf_max_job_test); 0: no bound. See "Tries"
	 * above. */
	int max_tries;
};

struct tj_admission_input {
	const struct tj_admission_config *config;
	const char *const *class_names; /* for messages; n_classes */
	size_t n_classes;
	const struct tj_admission_node *nodes;
	size_t n_nodes;
	/* The nodes are given in name order (as the admitter gives them): the run keeps that
	 * order without comparing their names. false: in any order. */
	bool nodes_by_name;
	const struct tj_admission_release *releases;
	size_t n_releases;
	const struct tj_admission_usage *usage;
	size_t n_usage;
	const struct tj_admission_quota_limit *quota_limits;
	size_t n_quota_limits;
	/* The QOS tiers' limits of the jobs' namespaces (NULL: none). */
	const struct tj_admission_tier_limit *tier_limits;
	size_t n_tier_limits;
	/* The running gangs queued jobs may preempt (NULL: none). */
	const struct tj_admission_running *running;
	size_t n_running;
	/* The queue, in any order; in the ranks of the last result's decisions, a queue that did
	 * not change is not sorted again. The nodes likewise, in name order. */
	const struct tj_admission_job *jobs;
	size_t n_jobs;
	int64_t now; /* unix seconds */
	/* With max_tries: per class (n_classes + 1, the last for class -1), where in the class's
	 * queue the tries resume, the last result's cursors (Slurm's bf_continue). NULL: at the
	 * start. */
	const size_t *cursors;
	/* Per class (n_classes + 1), the last result's digests: a class whose digest is the same
	 * is settled, not decided again (rule "Settled classes"). NULL: every class is decided. */
	const uint64_t *digests;
};

enum tj_admission_verdict {
	TJ_ADMISSION_ADMITTED,
	TJ_ADMISSION_WAITING,
	TJ_ADMISSION_NEVER_FITS, /* fail the job, with the reason (config wait_if_never_fits off) */
};

#define TJ_ADMISSION_REASON_RESOURCES "Resources"
#define TJ_ADMISSION_REASON_PRIORITY  "Priority"
#define TJ_ADMISSION_REASON_QUOTA     "QuotaExceeded"
#define TJ_ADMISSION_REASON_NEVER     "NeverFits"
#define TJ_ADMISSION_REASON_QOS_GPUS  "QOSMaxGRESPerNamespace"
#define TJ_ADMISSION_REASON_BEGIN     "BeginTime"

struct tj_admission_decision {
	enum tj_admission_verdict verdict;
	bool backfilled; /* admitted ahead of a blocked head */
	/* WAITING, reason Priority: past the bound of tries (rule "Tries"), not looked at in this
	 * run; its free_nodes and expected_start are unknown (0). */
	bool untried;
	/* WAITING: its class is settled (rule "Settled classes"): not decided in this run, it is
	 * decided as in the last; nothing else is set but its rank. */
	bool settled;
	/* WAITING and NEVER_FITS: the reason's number, tj_admission_reason_index(reason) + 1,
	 * which a cycle reads of every decision instead of the text; 0: none. */
	uint8_t reason_number;
	/* ADMITTED: num_pods indexes into nodes, the node of each pod that needs one, in rank
	 * order. Owned by the result. */
	size_t *nodes;
	/* ADMITTED with a launcher: the index into nodes of its node; SIZE_MAX without. */
	size_t launcher_node;
	int position;           /* 1-based among the waiting jobs of its class; 0 if admitted */
	int queue_length;       /* waiting jobs of its class */
	int64_t expected_start; /* unix seconds; 0 if unknown or admitted */
	int free_nodes;         /* nodes of its class that could take one of its pods now */
	/* Its place in the order of all the jobs, class by class. Jobs given in this order the
	 * next time (as the admitter does) are ordered in one pass instead of a sort. */
	size_t rank;
	/* WAITING: the running gangs it preempts now (indexes into running, in the order they
	 * were chosen); owned by the result; NULL and 0 for none. */
	size_t *victims;
	size_t n_victims;
	/* With victims, for a gang without a launcher: the node of each pod once they are gone
	 * (indexes into nodes), to be given back as tj_admission_job.claimed while they stop; owned
	 * by the result; NULL and 0 for none. */
	size_t *claimed;
	size_t n_claimed;
	/* Last, after the fields a cycle reads of every decision. WAITING and NEVER_FITS: one of
	 * TJ_ADMISSION_REASON_*, and a message a person can act on:
	 * "position 3 of 7 in gh200: needs 5 nodes x 4 GPUs, 3 such nodes free; expected start
	 * 10:40Z" (or "expected start unknown"), "gh200 has 8 nodes of 4 GPUs: a job of 9 nodes
	 * x 4 GPUs never fits; at most 8", "namespace team-a holds 16 of its 16 gh200 GPUs; the
	 * job needs 8 more", "ResourceQuota gpus of namespace team-a: requests.nvidia.com/gpu has 4
	 * of 8 used; the job needs 8" (or "...allows 4 in all; the job's gang needs 8: it never
	 * fits"). */
	char reason[TJ_REASON_MAX];
	char message[TJ_MESSAGE_MAX];
};

struct tj_admission_class_stats {
	int64_t capacity_gpus;  /* allocatable of the nodes that take new pods */
	int64_t allocated_gpus; /* used on them */
	int64_t reserved_gpus;  /* held for the expected starts of the reservations */
	/* by reason: Resources, Priority, QuotaExceeded, NeverFits, QOSMaxGRESPerNamespace,
	 * BeginTime */
	size_t waiting[6];
};

struct tj_admission_result {
	struct tj_admission_decision *decisions; /* owned; parallel to the input's jobs */
	size_t n_decisions;
	struct tj_admission_class_stats *classes; /* owned; n_classes + 1: the last is class -1 */
	/* owned; n_classes + 1: where the next run's tries resume (tj_admission_input.cursors);
	 * 0 once a run's tries reached the end of its class's queue. */
	size_t *cursors;
	/* owned; n_classes + 1: what each class's decision read, for the next run's digests (0
	 * for one that admitted or preempted); and whether the class was settled (not decided: its
	 * class_stats are zero). */
	uint64_t *digests;
	bool *settled_classes;
	size_t admitted, backfilled;
	size_t untried;    /* jobs past the bound of tries */
	size_t settled;    /* jobs of the settled classes */
	size_t preempting; /* jobs that preempt in this result */
};

/* Decides every job of the queue. Returns 0, or -ENOMEM (-EINVAL for an index out of range). */
int tj_admit(const struct tj_admission_input *in, struct tj_admission_result **ret);

/* What placed one job in the queue's order (the rule "Order" above). */
struct tj_admission_rank {
	size_t job;     /* index into the jobs given */
	int64_t place;  /* the place in time it takes: its creation time, or that of another job
	                   of its namespace and tier, as their own priorities swap them */
	int age_points; /* reconcilers/admission/fair_share.h, at place */
	int64_t score;  /* its fair_share plus age_points: inside its class and tier, higher
	                   first */
};

/* The n jobs in the queue's order, as tj_admit orders them: class by class (a class_index
 * below n_classes, or -1: last), restarts, tier, score, place, then the key. ret (room for n)
 * gets the k-th job of the order at k. 0, -EINVAL for a class out of range, or -ENOMEM. */
int tj_admission_order(const struct tj_admission_job *jobs, size_t n, size_t n_classes, int64_t now,
                       struct tj_admission_rank *ret);

/* Accepts NULL; returns NULL. */
struct tj_admission_result *tj_admission_result_free(struct tj_admission_result *res);

/* Writes the message that defer_waiting_messages left out of d, the decision of
 * in->jobs[j]; any other decision is left as it is. */
void tj_admission_say_deferred(const struct tj_admission_input *in, size_t j,
                               struct tj_admission_decision *d);

/* A waiting job's status is written again when its place moved (among the first
 * TJ_ADMISSION_POSITION_NEAR, by any step; further back, by a quarter of it): a queue of thousands
 * would otherwise rewrite every status whenever its head starts, and each start costs about
 * TJ_ADMISSION_POSITION_NEAR + 4 ln(queue length) writes (40 at 5,000 jobs) instead. An expected
 * start is told again when it moved by more than TJ_ADMISSION_EXPECTED_START_SLOP seconds. */
#define TJ_ADMISSION_POSITION_NEAR       5
#define TJ_ADMISSION_POSITION_SHARE      4
#define TJ_ADMISSION_EXPECTED_START_SLOP 60

/* Whether decision d of a job is worth writing to its status, old being the one its status
 * shows: its verdict or reason changed, it was looked at for the first time (untried no
 * more), its expected start moved, or it moved in the queue where that is worth telling (the
 * head also when the queue behind it or its free nodes changed). Past the first
 * TJ_ADMISSION_POSITION_NEAR places, a reason that goes from Resources to Priority or back is
 * told with the next change worth telling, not on its own: there it follows the nodes that
 * come free for a moment before the jobs ahead take them, and every job of a long queue
 * would be written twice at each (docs/users.md, "How fresh the position is"). */
bool tj_admission_worth_telling(const struct tj_admission_decision *old,
                                const struct tj_admission_decision *d);

/* A job left untried (d->untried) keeps what the last look at it found, as its status tells
 * it (told, the decision last told: a waiting one that was tried), in its new place: d gets
 * told's reason, message, expected start and free nodes, and is no longer untried (the
 * message of a reason tj_admission_say_deferred writes is written again, with the new place).
 * Any other d is left as it is. */
void tj_admission_keep_last_look(struct tj_admission_decision *d,
                                 const struct tj_admission_decision *told);

/* "Resources" -> 0, "Priority" -> 1, "QuotaExceeded" -> 2, "NeverFits" -> 3,
 * "QOSMaxGRESPerNamespace" -> 4; -1 otherwise. */
int tj_admission_reason_index(const char *reason);
