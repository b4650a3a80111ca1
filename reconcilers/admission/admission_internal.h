/* What one run of tj_admit works on, shared by its parts: admission.c (the setup, the
 * quotas and the decisions) and admission_place.c (the choice of nodes and the head's
 * reservation). Internal to the admission; nothing else includes it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/admission/admission.h"
/* The run works on "slots": the nodes that take new pods, grouped by class ("bucket": the
 * class index, with class -1 last) and sorted by name within a class, so that a class is a
 * range of slots and comparing two slots of a class compares their names. Each slot carries
 * what is free on it now, lowered by every admission of the round. */

struct slot_key {
	size_t bucket;
	const char *name;
	size_t node;
};

struct domain_key {
	const char *domain; /* NULL first: the nodes without the label form one domain */
	size_t slot;
};

struct release_key {
	int64_t at;
	size_t index; /* into releases */
};

/* The order's fields are copied in, so that the sort compares them without a pointer. */
struct job_key {
	size_t bucket;
	bool restart;
	int tier;
	bool preempting; /* its victims are on their way out: first in its tier */
	int32_t priority;
	int64_t creation_time;
	const struct tj_admission_job *job;
	size_t index;
	/* The place in time the job takes in its class's queue (admission_order.c): its
	 * creation time, or another job's of its namespace and tier, as their own priorities
	 * swap them; and its rank among those of its namespace and tier. */
	int64_t place;
	size_t own_rank;
	int64_t score; /* the fair-share priority at place: higher first */
};

/* A running gang a job may preempt, with what orders the candidates copied in. */
struct victim {
	int tier;
	int64_t start;
	const char *key;
	size_t index; /* into running */
	bool spared;  /* the gang fits without it */
};

/* A slot where a best fit looks for it (run.by_fit, run.moved): its free GPUs then. */
struct fit_key {
	int64_t gpus;
	size_t slot;
};

/* A node a placement may use, ranked by best fit. */
struct candidate {
	int64_t gpus;     /* free */
	int64_t now_gpus; /* free now, when the placement is a reservation's; else 0 */
	size_t slot;
};

/* What a topology domain of a class holds of one request. */
struct room {
	int64_t pods;
	size_t domain;
};

/* GPUs a namespace holds in a class, against its limit. */
struct account {
	int64_t limit;
	int64_t held; /* in use, plus what this round admitted */
};

/* The first job of a class that does not fit now. */
/* The blocked jobs of a class that have a reservation so far, the first at most the
 * config's reservations (Slurm's backfill depth): the jobs behind them may only backfill,
 * delaying none of them. */
struct heads {
	size_t n;
	bool unknown; /* one of them has no expected start (and reserves nothing) */
	/* The earliest expected start among the others, and the latest, with the holds of the
	 * jobs past the depth that preempt (from their victims' stop); 0: none. */
	int64_t first_start;
	int64_t last_start;
	/* The highest tier among the jobs of those holds: the jobs of lower tiers backfill off
	 * the reserved nodes (admission.c, backfill). */
	int top_tier;
};

/* What the free nodes of a class hold of one shape of gang: the jobs behind a blocked head
 * all look at the same free nodes, and most of them share a few shapes, so a queue of
 * thousands is not a scan of every node per job.
 *
 * Inside a run, what is free only shrinks (each admission takes) and the reservations only
 * grow and start earlier, but when a preemption's reservation replaces the one placed before
 * it (run.epoch); a job that avoids nodes sees them full without the memos (run.viewing).
 * So a memo lives through the epoch: its counts
 * follow each admission on the few nodes it took (tj_admission_memos_count), and what it found
 * not to fit fits no better later in the epoch; only whether a gang with a launcher fits, which
 * less room may change either way (its ranks may then leave room for it elsewhere), is judged
 * again when the era moved. */
struct shape_memo {
	uint64_t epoch; /* run's epoch when computed; 0: empty */
	uint64_t era;   /* run's era when fits was judged */
	size_t bucket;
	struct tj_admission_resources request;
	struct tj_admission_resources launcher;
	int num_pods;
	/* The pods of the shape the free nodes of the class hold, each node counted to num_pods
	 * at most, and how many nodes hold one. */
	int64_t total;
	int free_nodes;
	bool fits;          /* the gang fits in what is free now */
	int fits_elsewhere; /* fits off the reserved nodes: 0 not, or -1 not looked at yet */
	/* Backfill of a gang that gives its nodes back by a time (place_ending_by, admission.c):
	 * the earliest such time at which it was found not to fit; INT64_MAX: none yet. A later
	 * end keeps it off more reserved nodes, never fewer, so a gang without a launcher that
	 * did not fit by then fits by no later time either, and the jobs of a shape behind a
	 * blocked head are settled by one placement, not by one per job. */
	int64_t no_fit_from;
	/* Its shape's place in run.shapes plus 1; 0: none there (tj_admission_memo_of). */
	size_t shape;
};

/* A shape of gang the run met (run.shapes): the input's job that first had it, of bucket
 * bucket; the memo of it plus 1 (0: none yet), which the memo must still be of. */
struct shape_seen {
	size_t job; /* plus 1; 0: an empty place */
	size_t bucket;
	size_t memo;
};

/* The places of run.shapes: past three quarters full, a new shape's memo is found among
 * the memos by a walk of them. */
#define SHAPES_SEEN 1024

/* A queue of many shapes (1 to 8 nodes of 1, 2 or 4 GPUs are 24) keeps one each: with 8,
 * bench_admission_core's mixed queue thrashed them and took 1.5 to 1.8 times as long. */
#define SHAPE_MEMOS 64

struct run {
	const struct tj_admission_input *in;
	struct tj_admission_result *res; /* the result being built */
	size_t n_buckets;                /* n_classes + 1 */
	size_t n_slots;
	size_t *slot_node;    /* owned; slot -> index into nodes */
	size_t *bucket_slots; /* owned; n_buckets + 1: bucket b is [b], [b + 1] */
	ptrdiff_t *node_slot; /* owned; node -> slot; -1: it takes no new pods */
	size_t *domain;       /* owned; per slot: its domain, numbered in name order */
	size_t *n_domains;    /* owned; per bucket */
	size_t *class_nodes;  /* owned; every node by bucket, for NeverFits */
	size_t *bucket_nodes; /* owned; n_buckets + 1, into class_nodes */
	struct tj_admission_resources *free; /* owned; per slot: free now */
	/* owned; the slots of each bucket with GPUs free when the run began, in slot order, the
	 * bucket's from open_bucket[b] to open_bucket[b + 1] (n_buckets + 1): what is free only
	 * shrinks (but for what a job avoids, given back as it was), so no other slot holds a
	 * pod that asks for GPUs in what is free now. every: each slot at its own index. */
	size_t *open;
	size_t *open_bucket;
	size_t *every;
	/* owned; the same slots of each bucket (the same ranges) by best fit when the run began:
	 * fewer free GPUs first, then slot order. A slot whose GPUs an admission took since is
	 * in moved (owned, n_moved of at most n_slots), kept in the same order, under what it
	 * has free now; an entry of either whose GPUs are not those free now is stale. A
	 * placement in what is free now walks the two together, best fit first, and stops at
	 * the gang's last pod (tj_admission_place_gang). */
	struct fit_key *by_fit;
	struct fit_key *moved;
	size_t n_moved;
	struct tj_admission_resources *later; /* owned; per slot: free at a release time */
	int64_t *pods;                        /* owned; per slot: pods of one request it holds */
	bool *reserved; /* owned; per slot: held for a reservation of its class */
	/* owned; per slot: when the last reservation holding it gives it back (its start plus
	 * its walltime and grace); INT64_MAX: never known (a job without a walltime) */
	int64_t *reserved_until;
	/* owned; per slot: the earliest expected start of a reservation holding it (0 while
	 * reserved is false); and scratch of backfill: the reserved slots a job that ends at
	 * a given time may not use (too_soon) */
	int64_t *reserved_from;
	bool *too_soon;
	/* owned; per slot, while a reservation behind others is placed: held for one of them
	 * still (nothing of it counts for the job), and scratch of their ends by time */
	bool *locked;
	struct release_key *unlocks;
	int64_t *domain_pods;    /* owned; per domain of the bucket being placed */
	bool *chosen;            /* owned; per domain: the placement may use it */
	struct room *rooms;      /* owned; per domain, scratch of choose_domains */
	struct candidate *cands; /* owned; per slot, scratch of select_best */
	size_t *ranks;           /* owned; TJ_MAX_NODES: the slot of each rank placed */
	size_t launcher_slot;    /* the slot of the launcher placed with them */
	size_t *reserved_ranks;  /* owned; TJ_MAX_NODES: a reservation's, kept meanwhile */
	struct tj_admission_resources
	        *trial; /* owned; per slot, scratch of tj_admission_place_gang */
	/* While one job is decided: the slots it must avoid or may not use (avoiding), what is
	 * free on them for the others (kept), and which they are (n_kept of them). */
	bool *avoiding;                      /* owned; per slot */
	struct tj_admission_resources *kept; /* owned; per slot */
	size_t *kept_slots;                  /* owned; per slot */
	size_t n_kept;
	struct release_key *releases; /* owned; n_releases, by time */
	/* owned; n_jobs, scratch of tj_admission_reserve: the gangs this cycle admitted ahead of
	 * the head, by the time their walltime gives their nodes back (index: into jobs) */
	struct release_key *admitted;
	size_t *order;            /* owned; jobs in queue order, by bucket */
	size_t *bucket_jobs;      /* owned; n_buckets + 1, into order */
	struct account *accounts; /* owned */
	size_t *job_account;      /* owned; per job; SIZE_MAX: no limit */
	/* owned; per ResourceQuota limit of the input: its used, plus what this round admitted */
	int64_t *quota_used;
	/* owned; per QOS tier limit of the input: its used, plus what this round admitted */
	int64_t *tier_used;
	/* Moves on whenever free or reserved changes. */
	uint64_t era;
	/* Moves on whenever reserved shrinks, which makes every memo stale. */
	uint64_t epoch;
	/* Every memo is ignored, and every slot looked at: each job is decided from scratch
	 * (tj_admission_decide_afresh). */
	bool afresh;
	/* Per job: left untried, whatever the bound of tries (tj_admission_decide_afresh_without);
	 * NULL: as the bound says. */
	const bool *skip;
	/* The job decided now sees some slots full that are not (decide_avoiding): it reads no
	 * memo and keeps none, and the memos keep counting what is free for the others. */
	bool viewing;
	struct shape_memo memos[SHAPE_MEMOS];
	size_t next_memo; /* the one replaced next */
	/* owned; the shapes met, by a hash of the shape (SHAPES_SEEN places, n_shapes used), and
	 * per job of the input its shape's place plus 1 (0: not met yet), so that a job's memo
	 * is found without a walk of the memos */
	struct shape_seen *shapes;
	size_t n_shapes;
	size_t *job_shape;
	/* Preemption (admission_preempt.c), allocated with the run when there are running
	 * gangs: per slot, what is free once the victims chosen so far are gone, and the
	 * reserved flags of the jobs ahead; per running gang, whether a job of this run chose
	 * it, and the scratch of the candidates. */
	struct tj_admission_resources *preempt_free;
	bool *reserved_ahead;
	bool *taken;
	struct victim *victims;
	/* owned; n_jobs: the jobs of the tier being decided that wait for the nodes they claimed
	 * (decide_claimed), which may start elsewhere once the rest of their tier is decided */
	size_t *claimants;
	size_t n_claimants;
	/* The longest grace of the running gangs: the latest any victim stops, from now. */
	int64_t longest_grace;
	/* While the head's reservation is placed: between nodes that fit alike then, those
	 * that are busy now go first, so that what is free now stays out of the reservation,
	 * for backfill, as long as it can. */
	bool reserving;
};

/* A name of the input, "" where it has none. */
static inline const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* The bucket of a class index: the class, or n_classes for class -1. */
static inline size_t bucket_of_class(const struct tj_admission_input *in, int class_index)
{
	return class_index < 0 ? in->n_classes : (size_t)class_index;
}

static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t s;

	if (__builtin_add_overflow(a, b, &s))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return s;
}

/* Resources */

/* The four resources of a request or an offer, so that the rules apply to each alike. */
#define N_COMPONENTS 4
static inline void components(const struct tj_admission_resources *r, int64_t out[N_COMPONENTS])
{
	out[0] = r->gpus;
	out[1] = r->cpu_milli;
	out[2] = r->memory;
	out[3] = r->pods;
}

/* The hottest test of a run (every job looks at every node of its class): kept to plain
 * comparisons, with no copy of the resources. */
static inline bool holds_one(const struct tj_admission_resources *free,
                             const struct tj_admission_resources *req)
{
	return (req->gpus <= 0 || free->gpus >= req->gpus) &&
	       (req->cpu_milli <= 0 || free->cpu_milli >= req->cpu_milli) &&
	       (req->memory <= 0 || free->memory >= req->memory) &&
	       (req->pods <= 0 || free->pods >= req->pods);
}

/* How many pods of the request fit in `free`, counting no further than `limit`. A resource
 * the pod does not ask for limits nothing. The multiplication tries to spare the division,
 * which is most of the cost when thousands of nodes are looked at. */
static inline int64_t pods_on(const struct tj_admission_resources *free,
                              const struct tj_admission_resources *req, int64_t limit)
{
	int64_t f[N_COMPONENTS], q[N_COMPONENTS], n = limit, all;

	components(free, f);
	components(req, q);
	for (int i = 0; i < N_COMPONENTS && n > 0; i++) {
		if (q[i] <= 0)
			continue;
		if (f[i] < q[i])
			return 0;
		if (!__builtin_mul_overflow(q[i], n, &all) && all <= f[i])
			continue;
		n = f[i] / q[i];
	}
	return n;
}

static inline int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t s;

	if (__builtin_sub_overflow(a, b, &s))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return s;
}

/* What a pod of req leaves of free (a negative request takes nothing). */
static inline void take(struct tj_admission_resources *free,
                        const struct tj_admission_resources *req)
{
	free->gpus = sat_sub(free->gpus, req->gpus > 0 ? req->gpus : 0);
	free->cpu_milli = sat_sub(free->cpu_milli, req->cpu_milli > 0 ? req->cpu_milli : 0);
	free->memory = sat_sub(free->memory, req->memory > 0 ? req->memory : 0);
	free->pods = sat_sub(free->pods, req->pods > 0 ? req->pods : 0);
}

static inline void give(struct tj_admission_resources *free,
                        const struct tj_admission_resources *back)
{
	free->gpus = sat_add(free->gpus, back->gpus);
	free->cpu_milli = sat_add(free->cpu_milli, back->cpu_milli);
	free->memory = sat_add(free->memory, back->memory);
	free->pods = sat_add(free->pods, back->pods);
}

static inline bool has_launcher(const struct tj_admission_job *job)
{
	return job->launcher.pods > 0;
}

/* The GPUs of the pods that need a place now: the ranks', and the launcher's. */
static inline int64_t gang_gpus(const struct tj_admission_job *job)
{
	int64_t gpus = 0;

	if (job->request.gpus > 0 &&
	    __builtin_mul_overflow(job->request.gpus, job->num_pods, &gpus))
		return INT64_MAX;
	if (has_launcher(job) && job->launcher.gpus > 0)
		gpus = sat_add(gpus, job->launcher.gpus);
	return gpus;
}

/* Decides as tj_admit does, without any memo or shortcut: each job's fit and placement
 * looked at anew on every node of its class. What the memos and every other shortcut of
 * tj_admit must equal, for the unit tests. */
int tj_admission_decide_afresh(const struct tj_admission_input *in,
                               struct tj_admission_result **ret);

/* The same, with the jobs marked in untried left untried (rule "Tries") and every other job
 * decided: what tj_admit, bounded, must equal for the jobs it tried. */
int tj_admission_decide_afresh_without(const struct tj_admission_input *in, const bool *untried,
                                       struct tj_admission_result **ret);

/* admission_digest.c: what the decision of bucket b reads, as it stands when the bucket's turn
 * comes in the run, its tries beginning at the start of its queue (rule "Settled classes");
 * never 0. */
uint64_t tj_admission_class_digest(const struct run *r, size_t b);

/* Node choice and reservation (admission_place.c) */

/* The memo of the job's shape in bucket b, if it is still fresh. */
struct shape_memo *tj_admission_memo_of(struct run *r, size_t b,
                                        const struct tj_admission_job *job);

/* The fresh memos of bucket b take out (sign -1) or count in (+1) what the slots of the gang
 * placed in r->ranks (and r->launcher_slot) hold of their shapes: out before the gang takes
 * its place, in after. */
void tj_admission_memos_count(struct run *r, size_t b, const struct tj_admission_job *job,
                              int sign);

/* Whether the gang fits in what is free now, and how many nodes hold one of its pods. */
bool tj_admission_survey(struct run *r, size_t b, const struct tj_admission_job *job,
                         int *ret_nodes);

/* Chooses the nodes of a gang in `free`, leaving out the slots of `avoid` when given, and
 * writes the slot of each rank to r->ranks; for a gang with a launcher, its node too
 * (r->launcher_slot): in what the ranks leave, else first, with the ranks in what it
 * leaves. False if the gang does not fit. */
bool tj_admission_place_gang(struct run *r, size_t b, const struct tj_admission_resources *free,
                             const bool *avoid, const struct tj_admission_job *job);

/* The best-fit order of the slots of every bucket with GPUs free now (run.by_fit), when the
 * run begins; 0 or -ENOMEM. */
int tj_admission_fit_order(struct run *r);

/* The GPUs free on slot s changed (an admission took some): it takes its place in run.moved
 * under what it has free now. */
void tj_admission_fit_moved(struct run *r, size_t s);

/* admission_preempt.c: whether job, blocked with expected start start (0: unknown), preempts
 * now (it may, its victims of earlier cycles are gone, and its start is far enough). */
bool tj_admission_wants_victims(const struct run *r, const struct tj_admission_job *job,
                                int64_t start);

/* Chooses the victims of job j of bucket b (admission.h, "Preemption"), its gang placed off
 * the slots of ahead (the reservations of the jobs ahead of it): on success, the decision
 * holds them, r->ranks (and r->launcher_slot) the gang's nodes once they are gone, and the
 * latest of their stops is returned; 0 when no set of victims makes it fit, or when they
 * would not be gone before start, its expected start without them (0: unknown); -ENOMEM. */
int64_t tj_admission_preempt(struct run *r, size_t b, size_t j, const bool *ahead, int64_t start);

/* Sorts release keys by time, then index (in one pass when they are in order already). */
void tj_admission_sort_releases(struct release_key *keys, size_t n);

/* The same for keys given in index order (the input's releases, each cycle thousands in
 * the order of their nodes): by the digits of their times, in a pass per 11 bits of the
 * times' spread, when that takes 3 passes or fewer. */
void tj_admission_sort_releases_by_time(struct release_key *keys, size_t n);

/* Sorts n keys of size bytes by cmp, in one pass when they are in order already. */
void tj_admission_sort_keys(void *keys, size_t n, size_t size,
                            int (*cmp)(const void *, const void *));

/* admission_order.c: the key of job, the index-th of the input, in bucket (its class's). */
struct job_key tj_admission_job_key(const struct tj_admission_job *job, size_t bucket,
                                    size_t index);

/* admission_order.c: sorts the keys of the jobs (bucket, restart, tier, priority,
 * creation_time, job and index filled in) into the queue's order at now, filling place,
 * own_rank and score. 0 or -ENOMEM. */
int tj_admission_order_jobs(struct job_key *keys, size_t n, int64_t now);

/* The slots of the gang placed in r->ranks (and r->launcher_slot) are reserved. */
void tj_admission_reserve_places(struct run *r, const struct tj_admission_job *job);

/* A blocked job's expected start (0: unknown); the nodes it would take then are reserved.
 * The slots marked in r->locked hold nothing for it until their unlock (n_unlocks of them,
 * by time; a locked slot with none never frees); the marks are cleared on return. */
int64_t tj_admission_reserve(struct run *r, size_t b, const struct tj_admission_job *job,
                             const struct release_key *unlocks, size_t n_unlocks);
