/* Gang admission: fit, node choice, queue order, reservation, backfill, quotas, NeverFits,
 * the messages and the figures per class. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/admission/admission.h"

/* The time of every case: 2026-11-29T10:00:00Z. */
#define NOW          1795946400
#define GIB          (1024LL * 1024 * 1024)

#define MAX_NODES    12
#define MAX_RELEASES 6
#define MAX_JOBS     6
#define MAX_PODS     8
#define MAX_QUOTAS   3

/* Class 0 is gh200, class 1 l40s, -1 the nodes without a GPU class. */
static const char *const class_names[] = { "gh200", "l40s" };

struct node_row {
	const char *name;
	int cls;
	const char *domain;
	bool down; /* takes no new pods */
	int64_t gpus, cpu, mem;
	int64_t used_gpus, used_cpu, used_mem;
	int64_t pod_slots, used_pods; /* allocatable pods and pods bound; 0, 0: not counted */
};

/* A node of gh200 as the local cluster has them: 4 GPUs, 72 CPUs, 480 GiB. */
#define GH(n, ...)                                                                                 \
	{                                                                                          \
		.name = n, .gpus = 4, .cpu = 72000, .mem = 480 * GIB, __VA_ARGS__                  \
	}

struct release_row {
	const char *node;
	int64_t in; /* seconds after NOW */
	int64_t gpus;
};

/* A running gang a job may preempt: its pods hold `gpus` GPUs on each of its nodes (added
 * to what those nodes use). */
struct running_row {
	const char *key;
	int tier;        /* its tier's priority */
	unsigned qos;    /* its tier's index */
	int64_t started; /* seconds before NOW */
	int64_t grace;
	const char *on[3];
	int64_t gpus;
};

#define MAX_RUNNING 4

struct job_row {
	const char *key; /* "namespace/name" */
	int cls;
	int nodes, pods; /* pods 0: all of its nodes */
	int64_t gpus, cpu, mem;
	int64_t slots; /* pod slots per pod: 1 as the admitter asks, 0 asks none */
	int32_t prio;
	int tier; /* its QOS tier's priority */
	int fs;   /* its namespace's fair-share points */
	int64_t created;
	int64_t walltime;
	int64_t grace; /* its pods' termination grace */
	bool restart;
	/* Its begin time (not_before), in seconds after NOW: a restart in its backoff; negative:
	 * passed; 0: none. */
	int64_t begin;
	const char *avoid[3]; /* nodes the job's pods must avoid */
	const char *only[4];  /* the nodes its pods may use (its eligibility); none: every node */
	const char *why;      /* why not the others, for its NeverFits message */
	/* What its pods use of the case's ResourceQuota limits. */
	struct tj_admission_quota_charge charges[2];
	size_t n_charges;
	/* A launcher placed with the gang: its GPUs and millicores. */
	bool launcher;
	int64_t launcher_gpus, launcher_cpu;
	/* The tiers it may preempt (bits of running_row.qos), after how long, and whether its
	 * victims of earlier cycles are still stopping. */
	uint32_t preempts;
	int64_t preempt_after;
	bool preempting;
	bool backfill_reserved_nodes; /* its tier's backfillReservedNodes */
	const char *claims[MAX_PODS]; /* the nodes it chose when it preempted */
	size_t tier_limit;            /* 1 + index into the case's tier_limits; 0: none */
	/* expected */
	const char *victims[MAX_RUNNING]; /* the keys of the gangs it preempts, in order */
	const char *claimed[MAX_PODS];    /* with victims: its nodes once they are gone */
	const char *launcher_on;          /* the launcher's node when admitted with one */
	enum tj_admission_verdict verdict;
	const char *reason; /* NULL: "" */
	const char *on[MAX_PODS];
	int position, queue;
	int64_t start;
	int free;
	bool backfilled;
	bool untried;        /* past the bound of tries */
	const char *message; /* NULL: "" */
};

struct adm_case {
	const char *name;
	bool fifo;        /* backfill off */
	int reservations; /* the backfill depth; 0: the head alone */
	bool wait_if_never_fits;
	/* gh200 nodes gh-1..gh-N of GH(); the first `busy` of them fully used, until NOW +
	 * busy_for when set; the last `down` of them take no new pods. */
	int gh200, busy, down;
	int64_t busy_for;
	struct node_row nodes[MAX_NODES]; /* after the gh200 ones */
	struct release_row releases[MAX_RELEASES];
	struct tj_admission_quota quotas[MAX_QUOTAS];
	struct tj_admission_usage usage[MAX_QUOTAS];
	struct tj_admission_quota_limit
	        limits[MAX_QUOTAS]; /* ResourceQuotas; up to the first unnamed */
	struct job_row jobs[MAX_JOBS];
	struct running_row running[MAX_RUNNING];
	struct tj_admission_tier_limit tier_limits[2]; /* up to the first unnamed */
	size_t admitted, backfilled;
	/* The bound of tries per class (0: none), where gh200's tries resume, and where the next
	 * run's would. */
	int max_tries;
	size_t cursor, next_cursor;
	bool check_stats; /* of gh200 */
	struct tj_admission_class_stats stats;
};

#define POS(p, q) .position = p, .queue = q

/* A head of 2 nodes on two GH200 nodes, one of them busy for 1000 s (busy_for): it waits,
 * its expected start in 1000 s, its reservation on both. */
#define HEAD_AT_1000(k, t, p, q)                                                                   \
	{                                                                                          \
		.key = k, .nodes = 2, .gpus = 4, .created = 1, .tier = t,                          \
		.verdict = TJ_ADMISSION_WAITING, .reason = "Resources", POS(p, q),                 \
		.start = NOW + 1000, .free = 1,                                                    \
		.message = "position " #p " of " #q " in gh200: needs 2 nodes x 4 GPUs, 1 such "   \
		           "node free; expected start 10:16Z"                                      \
	}

/* A job of the tier low, of one node, 30 s of walltime and 10 s of grace. */
#define LOW_30S                                                                                    \
	.key = "scavenger/low", .nodes = 1, .gpus = 4, .tier = -1000, .walltime = 30, .grace = 10

/* The jobs of the cases on tries: behind a head of 2 nodes, jobs of three shapes, the last of the
 * first one's shape again. */
#define TRY_HEAD  .key = "team-a/head", .nodes = 2, .gpus = 4, .created = 1
#define TRY_FOUR  .key = "team-a/four", .nodes = 1, .gpus = 4, .created = 2, .walltime = 2000
#define TRY_TWO   .key = "team-a/two", .nodes = 1, .gpus = 2, .created = 3, .walltime = 2000
#define TRY_SHORT .key = "team-a/short", .nodes = 1, .gpus = 1, .created = 4, .walltime = 100
/* The job of its tier ahead of a claimant (a job whose victims are on their way out), and the
 * claimant's own fields. */
#define CLAIM_HEAD                                                                                 \
	.key = "team-a/head", .nodes = 2, .gpus = 4, .created = 1, .walltime = 3600,               \
	.verdict = TJ_ADMISSION_ADMITTED, .backfilled = true, .on = { "n-1", "n-2" }
#define CLAIMANT                                                                                   \
	.key = "team-b/claimant", .gpus = 4, .created = 2, .walltime = 3600, .preempts = 1u << 1,  \
	.preempting = true
#define TRY_FOUR_AGAIN                                                                             \
	.key = "team-a/four-again", .nodes = 1, .gpus = 4, .created = 5, .walltime = 2000

static const struct adm_case cases[] = {
	/* Pod slots: a node takes no more pods than its kubelet's maxPods, GPUs or not */
	{ .name = "a node with one pod slot left takes one rank, the next rank goes elsewhere",
	  .nodes = { { .name = "p-1",
	               .gpus = 4,
	               .cpu = 72000,
	               .mem = 480 * GIB,
	               .pod_slots = 110,
	               .used_pods = 109 },
	             { .name = "p-2",
	               .gpus = 4,
	               .cpu = 72000,
	               .mem = 480 * GIB,
	               .pod_slots = 110 } },
	  .jobs = { { .key = "team-a/two",
	              .nodes = 2,
	              .gpus = 1,
	              .slots = 1,
	              .created = 1,
	              .on = { "p-1", "p-2" },
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "a node whose pod slots are all taken holds no rank, though its GPUs are free",
	  .nodes = { { .name = "p-1",
	               .gpus = 4,
	               .cpu = 72000,
	               .mem = 480 * GIB,
	               .pod_slots = 110,
	               .used_pods = 110 },
	             { .name = "p-2",
	               .gpus = 4,
	               .cpu = 72000,
	               .mem = 480 * GIB,
	               .pod_slots = 110,
	               .used_pods = 110 } },
	  .jobs = { { .key = "team-a/one",
	              .nodes = 1,
	              .gpus = 1,
	              .slots = 1,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .message = "position 1 of 1 in gh200: needs 1 node x 1 GPU, 0 such nodes "
	                         "free; expected start unknown" } },
	  .admitted = 0 },
	/* Nodes a job must avoid */
	{ .name = "a node a restart must avoid gives its reservation nothing back (R1): its "
	          "expected start is when another node frees, and a job that ends by then is "
	          "backfilled",
	  .gh200 = 2,
	  .busy = 1,
	  .nodes = { { .name = "gh-big",
	               .gpus = 8,
	               .cpu = 72000,
	               .mem = 480 * GIB,
	               .used_gpus = 8 } },
	  .releases = { { "gh-big", 100, 4 }, { "gh-big", 100, 4 }, { "gh-1", 1000, 4 } },
	  .jobs = { { .key = "team-a/again",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .avoid = { "gh-big" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 1000,
	              .free = 1,
	              .message = "position 1 of 1 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start 10:16Z" },
	            { .key = "team-a/short",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 500,
	              .on = { "gh-2" },
	              .queue = 1,
	              .free = 1,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	/* Eligibility: the nodes a job's selectors, affinity, tolerations and resources allow */
	{ .name = "a job whose selector allows two nodes goes there, not where best fit would "
	          "put it",
	  .gh200 = 4,
	  .jobs = { { .key = "team-a/rack2",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .only = { "gh-3", "gh-4" },
	              .on = { "gh-3", "gh-4" },
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "a job whose selector allows fewer nodes than it needs never fits, and says "
	          "how many it may use",
	  .gh200 = 4,
	  .jobs = { { .key = "team-a/rack2",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .only = { "gh-3", "gh-4" },
	              .why = "node(s) didn't match Pod's node affinity/selector",
	              .verdict = TJ_ADMISSION_NEVER_FITS,
	              .reason = "NeverFits",
	              POS(0, 0),
	              .free = 2,
	              .message = "gh200 has 2 nodes of 4 GPUs that its pods may use (not the "
	                         "others: node(s) didn't match Pod's node affinity/selector): a "
	                         "job of 3 nodes x 4 GPUs never fits; at most 2" } },
	  .admitted = 0 },
	{ .name = "a head that may use only some nodes is reserved there, and only their "
	          "releases count for its start; a job behind it uses the others",
	  .gh200 = 4,
	  .busy = 4,
	  .releases = { { "gh-1", 100, 4 },
	                { "gh-2", 100, 4 },
	                { "gh-3", 2000, 4 },
	                { "gh-4", 2000, 4 } },
	  .jobs = { { .key = "team-a/rack2",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .only = { "gh-3", "gh-4" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 2000,
	              .message = "position 1 of 2 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:33Z" },
	            { .key = "team-a/any",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 5000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .message = "position 2 of 2 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } },
	  .admitted = 0 },
	/* The grace a job's pods have to stop counts in backfill (F11) */
	{ .name = "a job whose walltime ends just before the head's start, but whose pods' grace "
	          "runs past it, is not backfilled onto the head's nodes",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .jobs = { HEAD_AT_1000("team-a/head", 0, 1, 2),
	            { .key = "team-a/graceful",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 990,
	              .grace = 30,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .free = 1,
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } },
	  .admitted = 0 },
	{ .name = "the same job with a grace that ends by the head's start is backfilled",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .jobs = { HEAD_AT_1000("team-a/head", 0, 1, 1),
	            { .key = "team-a/graceful",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 970,
	              .grace = 30,
	              .on = { "gh-2" },
	              .queue = 1,
	              .free = 1,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	/* A job of a lower tier backfills off the nodes reserved for a job of a higher tier */
	{ .name = "a job of a lower tier than the head's stays off the head's nodes, though its "
	          "walltime and grace end by the head's start",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .jobs = { HEAD_AT_1000("team-a/head", 0, 1, 2),
	            { LOW_30S, .created = 0, .verdict = TJ_ADMISSION_WAITING, .reason = "Priority",
	              POS(2, 2), .free = 1,
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } },
	  .admitted = 0 },
	{ .name = "a job of a tier with backfillReservedNodes backfills onto the head's nodes "
	          "when its walltime and grace end by the head's start, as behind its own tier",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .jobs = { HEAD_AT_1000("team-a/head", 0, 1, 1),
	            { LOW_30S, .backfill_reserved_nodes = true, .created = 0, .on = { "gh-2" },
	              .queue = 1, .free = 1, .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "but not when its walltime and grace end after the head's start",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .jobs = { HEAD_AT_1000("team-a/head", 0, 1, 2),
	            { .key = "scavenger/low",
	              .nodes = 1,
	              .gpus = 4,
	              .tier = -1000,
	              .walltime = 995,
	              .grace = 10,
	              .backfill_reserved_nodes = true,
	              .created = 0,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .free = 1,
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } },
	  .admitted = 0 },
	{ .name = "the same job starts on a node no reservation holds",
	  .gh200 = 4,
	  .busy = 1,
	  .busy_for = 1000,
	  .jobs = { { .key = "team-a/head",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .only = { "gh-1", "gh-2", "gh-3" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 1000,
	              .free = 2,
	              .message = "position 1 of 1 in gh200: needs 3 nodes x 4 GPUs, 2 such nodes "
	                         "free; expected start 10:16Z" },
	            { LOW_30S, .created = 0, .on = { "gh-4" }, .queue = 1, .free = 3,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "behind a head of its own tier, a job backfills onto the head's nodes when its "
	          "walltime and grace end by the head's start",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .jobs = { HEAD_AT_1000("scavenger/head", -1000, 1, 1),
	            { LOW_30S, .created = 2, .on = { "gh-2" }, .queue = 1, .free = 1,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	/* A job without a walltime behind a blocked head (R5) */
	{ .name = "a job without a walltime starts off the nodes the head has reserved",
	  .gh200 = 4,
	  .busy = 2,
	  .busy_for = 1000,
	  .jobs = { { .key = "team-a/wide",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 1000,
	              .free = 2,
	              .message = "position 1 of 1 in gh200: needs 3 nodes x 4 GPUs, 2 such nodes "
	                         "free; expected start 10:16Z" },
	            { .key = "team-a/open-ended",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .on = { "gh-4" },
	              .queue = 1,
	              .free = 2,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "a restart keeps off the node of its last failure",
	  .gh200 = 3,
	  .jobs = { { .key = "team-a/again",
	              .nodes = 2,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .avoid = { "gh-1" },
	              .on = { "gh-2" },
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "a gang that fits only on a node it must avoid waits, and the node stays for "
	          "the next job",
	  .gh200 = 2,
	  .jobs = { { .key = "team-a/picky",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .avoid = { "gh-2", "gh-2" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .free = 1,
	              .message = "position 1 of 1 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { .key = "team-a/small",
	              .nodes = 2,
	              .gpus = 2,
	              .created = 2,
	              .walltime = 60,
	              .on = { "gh-1", "gh-1" },
	              .queue = 1,
	              .free = 2,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "a job of the same shape behind one that must avoid a node sees that node free",
	  .gh200 = 2,
	  .jobs = { { .key = "team-a/picky",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .avoid = { "gh-2" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .free = 1,
	              .message = "position 1 of 2 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { .key = "team-a/twin",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 60,
	              .on = { "gh-1", "gh-2" },
	              .queue = 2,
	              .free = 2,
	              .backfilled = true },
	            { .key = "team-a/triplet",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 60,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .free = 0,
	              .message = "position 2 of 2 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } },
	  .admitted = 1,
	  .backfilled = 1 },
	/* Fit */
	{ .name = "a gang that fits whole is admitted, on the first nodes by name",
	  .gh200 = 8,
	  .jobs = { { .key = "team-a/fit",
	              .nodes = 5,
	              .gpus = 4,
	              .created = 1,
	              .on = { "gh-1", "gh-2", "gh-3", "gh-4", "gh-5" },
	              .free = 8 } },
	  .admitted = 1 },
	{ .name = "a gang that does not fit whole waits, none of it started",
	  .gh200 = 8,
	  .busy = 5,
	  .jobs = { { .key = "team-a/wide",
	              .nodes = 5,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .free = 3,
	              .message = "position 1 of 1 in gh200: needs 5 nodes x 4 GPUs, 3 such "
	                         "nodes free; expected start unknown" } } },
	{ .name = "pods of one job share a node that holds them",
	  .gh200 = 2,
	  .jobs = { { .key = "team-a/halves",
	              .nodes = 4,
	              .gpus = 2,
	              .created = 1,
	              .on = { "gh-1", "gh-1", "gh-2", "gh-2" },
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "CPU limits the pods a node holds",
	  .nodes = { { .name = "c-1", .gpus = 8, .cpu = 16000, .mem = 480 * GIB },
	             { .name = "c-2", .gpus = 8, .cpu = 16000, .mem = 480 * GIB } },
	  .jobs = { { .key = "team-a/cpu",
	              .nodes = 3,
	              .gpus = 1,
	              .cpu = 8000,
	              .created = 1,
	              .on = { "c-1", "c-1", "c-2" },
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "memory limits the pods a node holds",
	  .nodes = { { .name = "m-1", .gpus = 8, .cpu = 72000, .mem = 100 * GIB },
	             { .name = "m-2", .gpus = 8, .cpu = 72000, .mem = 100 * GIB } },
	  .jobs = { { .key = "team-a/mem",
	              .nodes = 3,
	              .gpus = 1,
	              .mem = 40 * GIB,
	              .created = 1,
	              .on = { "m-1", "m-1", "m-2" },
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "nodes that take no new pods are not counted",
	  .gh200 = 8,
	  .down = 4,
	  .jobs = { { .key = "team-a/wide",
	              .nodes = 5,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .free = 4,
	              .message = "position 1 of 1 in gh200: needs 5 nodes x 4 GPUs, 4 such "
	                         "nodes free; expected start unknown" } } },
	{ .name = "the nodes of another class are not counted",
	  .gh200 = 4,
	  .busy = 2,
	  .nodes = { GH("l-1", .cls = 1), GH("l-2", .cls = 1), GH("l-3", .cls = 1),
	             GH("l-4", .cls = 1) },
	  .jobs = { { .key = "team-a/gh",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .free = 2,
	              .message = "position 1 of 1 in gh200: needs 3 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start unknown" },
	            { .key = "team-a/l40s",
	              .cls = 1,
	              .nodes = 3,
	              .gpus = 4,
	              .created = 2,
	              .on = { "l-1", "l-2", "l-3" },
	              .free = 4 } },
	  .admitted = 1 },

	/* Node choice */
	{ .name = "best fit: the partly used nodes fill first",
	  .nodes = { GH("p-1"), GH("p-2", .used_gpus = 2), GH("p-3", .used_gpus = 3) },
	  .jobs = { { .key = "team-a/one",
	              .nodes = 1,
	              .gpus = 1,
	              .created = 1,
	              .on = { "p-3" },
	              .free = 3 },
	            { .key = "team-a/two",
	              .nodes = 1,
	              .gpus = 2,
	              .created = 2,
	              .on = { "p-2" },
	              .free = 2 },
	            { .key = "team-a/three",
	              .nodes = 1,
	              .gpus = 1,
	              .created = 3,
	              .on = { "p-1" },
	              .free = 1 } },
	  .admitted = 3 },
	{ .name = "whole-node requests take the empty nodes, small ones the partly used",
	  .nodes = { GH("e-1"), GH("e-2"), GH("e-3", .used_gpus = 1), GH("e-4", .used_gpus = 2) },
	  .jobs = { { .key = "team-a/small",
	              .nodes = 1,
	              .gpus = 2,
	              .created = 1,
	              .on = { "e-4" },
	              .free = 4 },
	            { .key = "team-a/whole",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .on = { "e-1", "e-2" },
	              .free = 2 } },
	  .admitted = 2 },
	{ .name = "topology: the one domain that holds the gang with the least room to spare",
	  .nodes = { GH("a-1", .domain = "rack-a"), GH("a-2", .domain = "rack-a"),
	             GH("a-3", .domain = "rack-a"), GH("a-4", .domain = "rack-a"),
	             GH("b-1", .domain = "rack-b"), GH("b-2", .domain = "rack-b"),
	             GH("c-1", .domain = "rack-c"), GH("c-2", .domain = "rack-c"),
	             GH("c-3", .domain = "rack-c") },
	  .jobs = { { .key = "team-a/three",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .on = { "c-1", "c-2", "c-3" },
	              .free = 9 } },
	  .admitted = 1 },
	{ .name = "topology: the fewest domains when none holds the gang, the last the tightest",
	  .nodes = { GH("a-1", .domain = "rack-a"), GH("a-2", .domain = "rack-a"),
	             GH("a-3", .domain = "rack-a"), GH("a-4", .domain = "rack-a"),
	             GH("b-1", .domain = "rack-b"), GH("b-2", .domain = "rack-b"),
	             GH("c-1", .domain = "rack-c"), GH("c-2", .domain = "rack-c"),
	             GH("c-3", .domain = "rack-c") },
	  .jobs = { { .key = "team-a/six",
	              .nodes = 6,
	              .gpus = 4,
	              .created = 1,
	              .on = { "a-1", "a-2", "a-3", "a-4", "b-1", "b-2" },
	              .free = 9 } },
	  .admitted = 1 },
	{ .name = "topology: equal domains go by the domain's name",
	  .nodes = { GH("y-1", .domain = "rack-y"), GH("y-2", .domain = "rack-y"),
	             GH("x-2", .domain = "rack-x"), GH("x-1", .domain = "rack-x") },
	  .jobs = { { .key = "team-a/pair",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .on = { "x-1", "x-2" },
	              .free = 4 } },
	  .admitted = 1 },
	{ .name = "topology: the tightest domain, and in it the partly used node first",
	  .nodes = { GH("y-1", .domain = "rack-y"), GH("y-2", .domain = "rack-y"),
	             GH("x-2", .domain = "rack-x", .used_gpus = 2), GH("x-1", .domain = "rack-x") },
	  .jobs = { { .key = "team-a/pair",
	              .nodes = 2,
	              .gpus = 2,
	              .created = 1,
	              .on = { "x-2", "x-1" },
	              .free = 4 } },
	  .admitted = 1 },
	{ .name = "ties go to the node name, not to the order of the input",
	  .nodes = { GH("gh-3"), GH("gh-1"), GH("gh-2") },
	  .jobs = { { .key = "team-a/two",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .on = { "gh-1", "gh-2" },
	              .free = 3 } },
	  .admitted = 1 },

	/* Order */
	{ .name = "order: the QOS tier first; a job's own priority only among its namespace's jobs",
	  .gh200 = 1,
	  .busy = 1,
	  .jobs = { { .key = "team-a/old",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 10,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 5),
	              .message = "position 2 of 5 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-b/self",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 20,
	              .prio = 1000000000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(3, 5),
	              .message = "position 3 of 5 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-b/early",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 15,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(4, 5),
	              .message = "position 4 of 5 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-c/high",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 30,
	              .tier = 1000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 5),
	              .message = "position 1 of 5 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-d/low",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .tier = -1000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(5, 5),
	              .message = "position 5 of 5 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } } },
	{ .name = "order: inside a tier, the namespace that used less of its share first",
	  .gh200 = 1,
	  .busy = 1,
	  .jobs = { { .key = "team-a/backlog",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 10,
	              .fs = 2500,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 3),
	              .message = "position 2 of 3 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-b/newcomer",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 20,
	              .fs = 10000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 3),
	              .message = "position 1 of 3 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-b/low",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 5,
	              .fs = 10000,
	              .tier = -1000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(3, 3),
	              .message = "position 3 of 3 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } } },
	{ .name = "order: restarts, then priority, then creation time, then the key",
	  .gh200 = 1,
	  .jobs = { { .key = "team-a/e",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 100,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(4, 4),
	              .message = "position 4 of 4 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-a/d",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 50,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(3, 4),
	              .message = "position 3 of 4 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-a/c",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 50,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 4),
	              .message = "position 2 of 4 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-a/b",
	              .nodes = 1,
	              .gpus = 4,
	              .prio = 10,
	              .created = 200,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 4),
	              .message = "position 1 of 4 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-a/a",
	              .nodes = 1,
	              .gpus = 4,
	              .prio = -5,
	              .created = 300,
	              .restart = true,
	              .on = { "gh-1" },
	              POS(0, 4),
	              .free = 1 } },
	  .admitted = 1 },

	/* Reservation */
	{ .name = "reservation: the first release at which the head's gang fits",
	  .gh200 = 8,
	  .busy = 4,
	  .releases = { { "gh-1", 30, 4 },
	                { "gh-2", 60, 4 },
	                { "gh-3", 90, 4 },
	                { "gh-4", 120, 4 } },
	  .jobs = { { .key = "team-a/six",
	              .nodes = 6,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 60,
	              .free = 4,
	              .message = "position 1 of 1 in gh200: needs 6 nodes x 4 GPUs, 4 such "
	                         "nodes free; expected start 10:01Z" } },
	  .check_stats = true,
	  .stats = { .capacity_gpus = 32,
	             .allocated_gpus = 16,
	             .reserved_gpus = 24,
	             .waiting = { 1, 0, 0, 0 } } },
	{ .name = "reservation: a gang admitted ahead of the head in the same cycle gives its "
	          "nodes back at its walltime's end, and a later job that would hold the head's "
	          "last node past then waits",
	  .gh200 = 4,
	  .jobs = { { .key = "team-a/first",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 120,
	              .on = { "gh-1", "gh-2", "gh-3" },
	              POS(0, 2),
	              .free = 4 },
	            { .key = "team-a/head",
	              .nodes = 4,
	              .gpus = 4,
	              .created = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 120,
	              .free = 1,
	              .message = "position 1 of 2 in gh200: needs 4 nodes x 4 GPUs, 1 such node "
	                         "free; expected start 10:02Z" },
	            { .key = "team-a/later",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .free = 1,
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } },
	  .admitted = 1 },
	{ .name = "reservation: unknown when no release makes the gang fit",
	  .gh200 = 8,
	  .busy = 6,
	  .busy_for = 60,
	  .down = 1,
	  .jobs = { { .key = "team-a/eight",
	              .nodes = 8,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .free = 1,
	              .message = "position 1 of 1 in gh200: needs 8 nodes x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } },
	  .check_stats = true,
	  .stats = { .capacity_gpus = 28, .allocated_gpus = 24, .waiting = { 1, 0, 0, 0 } } },
	{ .name = "reservation: the head holds the nodes it will take; others may backfill",
	  .nodes = { { .name = "big-1", .gpus = 8, .used_gpus = 8 },
	             { .name = "big-2", .gpus = 8 },
	             GH("s-1"),
	             GH("s-2") },
	  .releases = { { "big-1", 60, 8 } },
	  .jobs = { { .key = "team-a/head",
	              .nodes = 2,
	              .gpus = 8,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 60,
	              .free = 1,
	              .message = "position 1 of 2 in gh200: needs 2 nodes x 8 GPUs, 1 such node "
	                         "free; expected start 10:01Z" },
	            { .key = "team-a/long",
	              .nodes = 1,
	              .gpus = 8,
	              .created = 2,
	              .walltime = 3600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .free = 1,
	              .message = "position 2 of 2 in gh200: needs 1 node x 8 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { .key = "team-a/short",
	              .nodes = 1,
	              .gpus = 8,
	              .created = 3,
	              .walltime = 60,
	              .on = { "big-2" },
	              POS(0, 2),
	              .free = 1,
	              .backfilled = true },
	            { .key = "team-a/aside",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 4,
	              .walltime = 3600,
	              .on = { "s-1" },
	              POS(0, 2),
	              .free = 2,
	              .backfilled = true } },
	  .admitted = 2,
	  .backfilled = 2,
	  .check_stats = true,
	  .stats = { .capacity_gpus = 24,
	             .allocated_gpus = 20,
	             .reserved_gpus = 16,
	             .waiting = { 1, 1, 0, 0 } } },

	{ .name = "reservation: the nodes a running job gives back go first, and what is free now "
	          "stays for backfill",
	  .nodes = { GH("a-1"), GH("a-2"), GH("z-1", .used_gpus = 4), GH("z-2", .used_gpus = 4) },
	  .releases = { { "z-1", 60, 4 }, { "z-2", 60, 4 } },
	  .jobs = { { .key = "team-a/head",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 60,
	              .free = 2,
	              .message = "position 1 of 1 in gh200: needs 3 nodes x 4 GPUs, 2 such nodes "
	                         "free; expected start 10:01Z" },
	            { .key = "team-a/long",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 3600,
	              .on = { "a-2" },
	              POS(0, 1),
	              .free = 2,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1,
	  .check_stats = true,
	  .stats = { .capacity_gpus = 16,
	             .allocated_gpus = 12,
	             .reserved_gpus = 12,
	             .waiting = { 1, 0, 0, 0 } } },

	/* Reservation: what moves a start */
	{ .name = "a release on another class's node is no time to start a job: behind a head "
	          "whose start is unknown, a job without a walltime that fits now has no known "
	          "start, not the GH200 node's release",
	  .gh200 = 1,
	  .busy = 1,
	  .busy_for = 100,
	  .reservations = 2,
	  .nodes = { { .name = "cpu-1",
	               .cls = -1,
	               .cpu = 72000,
	               .mem = 256 * GIB,
	               .used_cpu = 72000 },
	             { .name = "cpu-2", .cls = -1, .cpu = 72000, .mem = 256 * GIB } },
	  .jobs = { { .key = "team-a/wide",
	              .cls = -1,
	              .nodes = 2,
	              .cpu = 72000,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .free = 1,
	              .message = "position 1 of 2 in nodes without a GPU class: needs 2 nodes x "
	                         "72 CPUs, 1 such node free; expected start unknown" },
	            { .key = "team-a/small",
	              .cls = -1,
	              .nodes = 1,
	              .cpu = 16000,
	              .created = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .free = 1,
	              .message = "position 2 of 2 in nodes without a GPU class: needs 1 node x "
	                         "16 CPUs, 1 such node free; expected start unknown" } } },
	/* Tries: a bound on the jobs behind the reservations that need a look at the nodes */
	{ .name = "past 2 tries, a job of a shape not looked at waits untried, though it would "
	          "backfill; one of a shape looked at is decided; the next tries resume at it",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .max_tries = 2,
	  .next_cursor = 3,
	  .jobs = { { TRY_HEAD, .verdict = TJ_ADMISSION_WAITING, .reason = "Resources", POS(1, 5),
	              .start = NOW + 1000, .free = 1,
	              .message = "position 1 of 5 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start 10:16Z" },
	            { TRY_FOUR, .verdict = TJ_ADMISSION_WAITING, .reason = "Priority", POS(2, 5),
	              .free = 1,
	              .message = "position 2 of 5 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { TRY_TWO, .verdict = TJ_ADMISSION_WAITING, .reason = "Priority", POS(3, 5),
	              .free = 1,
	              .message = "position 3 of 5 in gh200: needs 1 node x 2 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { TRY_SHORT, .verdict = TJ_ADMISSION_WAITING, .reason = "Priority", POS(4, 5),
	              .untried = true,
	              .message = "position 4 of 5 in gh200: needs 1 node x 1 GPU; not looked at "
	                         "yet: the queue is tried a part at a time "
	                         "(admission.backfillMaxJobTest)" },
	            { TRY_FOUR_AGAIN, .verdict = TJ_ADMISSION_WAITING, .reason = "Priority",
	              POS(5, 5), .free = 1,
	              .message = "position 5 of 5 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } },
	  .admitted = 0 },
	{ .name = "the tries resume at the cursor: the jobs between the head and it that need a "
	          "look wait untried, the one there is backfilled, and the tries reach the end "
	          "(the next resume at the start)",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .max_tries = 2,
	  .cursor = 3,
	  .jobs = { { TRY_HEAD, .verdict = TJ_ADMISSION_WAITING, .reason = "Resources", POS(1, 4),
	              .start = NOW + 1000, .free = 1,
	              .message = "position 1 of 4 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start 10:16Z" },
	            { TRY_FOUR, .verdict = TJ_ADMISSION_WAITING, .reason = "Priority", POS(2, 4),
	              .untried = true,
	              .message = "position 2 of 4 in gh200: needs 1 node x 4 GPUs; not looked at "
	                         "yet: the queue is tried a part at a time "
	                         "(admission.backfillMaxJobTest)" },
	            { TRY_TWO, .verdict = TJ_ADMISSION_WAITING, .reason = "Priority", POS(3, 4),
	              .untried = true,
	              .message = "position 3 of 4 in gh200: needs 1 node x 2 GPUs; not looked at "
	                         "yet: the queue is tried a part at a time "
	                         "(admission.backfillMaxJobTest)" },
	            { TRY_SHORT, .on = { "gh-2" }, .queue = 4, .free = 1, .backfilled = true },
	            { TRY_FOUR_AGAIN, .verdict = TJ_ADMISSION_WAITING, .reason = "Resources",
	              POS(4, 4),
	              .message = "position 4 of 4 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "restarts and the jobs before the backfill depth is reached are tried past the "
	          "bound, and a cursor past the end of the queue starts at the front",
	  .gh200 = 2,
	  .busy = 1,
	  .busy_for = 1000,
	  .max_tries = 1,
	  .cursor = 9,
	  .reservations = 2,
	  .next_cursor = 4,
	  .jobs = { { .key = "team-a/again",
	              .nodes = 1,
	              .gpus = 1,
	              .created = 9,
	              .walltime = 500,
	              .restart = true,
	              .on = { "gh-2" },
	              .queue = 4,
	              .free = 1 },
	            { TRY_HEAD, .verdict = TJ_ADMISSION_WAITING, .reason = "Resources", POS(1, 4),
	              .start = NOW + 1000,
	              .message = "position 1 of 4 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:16Z" },
	            { .key = "team-a/second",
	              .nodes = 1,
	              .gpus = 2,
	              .created = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 4),
	              .free = 1,
	              .message = "position 2 of 4 in gh200: needs 1 node x 2 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { .key = "team-a/third",
	              .nodes = 1,
	              .gpus = 3,
	              .created = 3,
	              .walltime = 2000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(3, 4),
	              .free = 1,
	              .message = "position 3 of 4 in gh200: needs 1 node x 3 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { .key = "team-a/fourth",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 4,
	              .walltime = 2000,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(4, 4),
	              .untried = true,
	              .message = "position 4 of 4 in gh200: needs 1 node x 4 GPUs; not looked at "
	                         "yet: the queue is tried a part at a time "
	                         "(admission.backfillMaxJobTest)" } },
	  .admitted = 1 },
	/* Backfill */
	{ .name = "backfill: B waits at the head for A; C (20 s) starts; D without a walltime "
	          "or with 300 s waits",
	  .gh200 = 8,
	  .busy = 6,
	  .busy_for = 60,
	  .jobs = { { .key = "team-a/b",
	              .nodes = 8,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 3),
	              .start = NOW + 60,
	              .free = 2,
	              .message = "position 1 of 3 in gh200: needs 8 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start 10:01Z" },
	            { .key = "team-a/d",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 3),
	              .free = 2,
	              .message = "position 2 of 3 in gh200: needs 2 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start unknown" },
	            { .key = "team-a/d300",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 300,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(3, 3),
	              .free = 2,
	              .message = "position 3 of 3 in gh200: needs 2 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start unknown" },
	            { .key = "team-a/c",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 4,
	              .walltime = 20,
	              .on = { "gh-7", "gh-8" },
	              POS(0, 3),
	              .free = 2,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1,
	  .check_stats = true,
	  .stats = { .capacity_gpus = 32,
	             .allocated_gpus = 32,
	             .reserved_gpus = 32,
	             .waiting = { 1, 2, 0, 0 } } },
	{ .name = "backfill: a job that keeps off the reserved nodes starts with a long walltime",
	  .gh200 = 9,
	  .busy = 6,
	  .busy_for = 60,
	  .jobs = { { .key = "team-a/b",
	              .nodes = 8,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 60,
	              .free = 3,
	              .message = "position 1 of 2 in gh200: needs 8 nodes x 4 GPUs, 3 such "
	                         "nodes free; expected start 10:01Z" },
	            { .key = "team-a/e",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 3600,
	              .on = { "gh-9" },
	              POS(0, 2),
	              .free = 3,
	              .backfilled = true },
	            { .key = "team-a/f",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 3600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .free = 2,
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 2 such nodes "
	                         "free; expected start unknown" } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "backfill depth 2: the second blocked job gets a reservation after the first's "
	          "end, and a job that would delay it waits; one that ends after the first's start "
	          "but before the second's takes a node only the second has reserved",
	  .gh200 = 4,
	  .busy = 2,
	  .busy_for = 100,
	  .reservations = 2,
	  .jobs = { { .key = "team-a/a",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 100,
	              .only = { "gh-1", "gh-2" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 3),
	              .start = NOW + 100,
	              .message = "position 1 of 3 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:01Z" },
	            { .key = "team-a/b",
	              .nodes = 4,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 100,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 3),
	              .start = NOW + 200,
	              .free = 2,
	              .message = "position 2 of 3 in gh200: needs 4 nodes x 4 GPUs, 2 such nodes "
	                         "free; expected start 10:03Z" },
	            { .key = "team-a/c",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 500,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(3, 3),
	              .free = 2,
	              .message = "position 3 of 3 in gh200: needs 1 node x 4 GPUs, 2 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-a/d",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 4,
	              .walltime = 150,
	              .verdict = TJ_ADMISSION_ADMITTED,
	              .on = { "gh-3" },
	              .queue = 3,
	              .free = 2,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1,
	  .check_stats = true,
	  .stats = { .capacity_gpus = 16,
	             .allocated_gpus = 12,
	             .reserved_gpus = 24,
	             .waiting = { 2, 1, 0, 0 } } },
	{ .name = "backfill depth 1: the same queue; only the head is protected, and the job "
	          "behind "
	          "it backfills where the second would go",
	  .gh200 = 4,
	  .busy = 2,
	  .busy_for = 100,
	  .reservations = 1,
	  .jobs = { { .key = "team-a/a",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 100,
	              .only = { "gh-1", "gh-2" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 100,
	              .message = "position 1 of 2 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:01Z" },
	            { .key = "team-a/b",
	              .nodes = 4,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 100,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .free = 2,
	              .message = "position 2 of 2 in gh200: needs 4 nodes x 4 GPUs, 2 such nodes "
	                         "free; expected start unknown" },
	            { .key = "team-a/c",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 500,
	              .on = { "gh-3" },
	              POS(0, 2),
	              .free = 2,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "backfill off: strict FIFO, nothing starts behind a blocked head",
	  .fifo = true,
	  .gh200 = 8,
	  .busy = 6,
	  .busy_for = 60,
	  .jobs = { { .key = "team-a/b",
	              .nodes = 8,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 3),
	              .start = NOW + 60,
	              .free = 2,
	              .message = "position 1 of 3 in gh200: needs 8 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start 10:01Z" },
	            { .key = "team-a/c",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 20,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 3),
	              .free = 2,
	              .message = "position 2 of 3 in gh200: needs 2 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start unknown" },
	            { .key = "team-a/g",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 20,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(3, 3),
	              .free = 2,
	              .message = "position 3 of 3 in gh200: needs 3 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start unknown" } } },

	/* Quotas */
	{ .name = "quota: the namespace's own limit; a job past it blocks nobody",
	  .gh200 = 8,
	  .quotas = { { "team-a", 0, 8 } },
	  .usage = { { "team-a", 0, 4 } },
	  .jobs = { { .key = "team-a/big",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 1),
	              .free = 8,
	              .message = "namespace team-a holds 4 of its 8 gh200 GPUs; the job needs 8 "
	                         "more" },
	            { .key = "team-b/other",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .on = { "gh-1", "gh-2" },
	              POS(0, 1),
	              .free = 8 },
	            { .key = "team-a/small",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .on = { "gh-3" },
	              POS(0, 1),
	              .free = 6 } },
	  .admitted = 2,
	  .check_stats = true,
	  .stats = { .capacity_gpus = 32, .allocated_gpus = 12, .waiting = { 0, 0, 1, 0 } } },
	{ .name = "quota: \"*\" limits every namespace without a limit of its own",
	  .gh200 = 8,
	  .quotas = { { "*", 0, 4 }, { "team-a", 0, 16 } },
	  .jobs = { { .key = "team-c/x",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 1),
	              .free = 8,
	              .message = "namespace team-c holds 0 of its 4 gh200 GPUs; the job needs 8 "
	                         "more" },
	            { .key = "team-a/y",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .on = { "gh-1", "gh-2" },
	              POS(0, 1),
	              .free = 8 },
	            { .key = "team-c/cpu",
	              .nodes = 1,
	              .cpu = 1000,
	              .created = 3,
	              .on = { "gh-1" },
	              POS(0, 1),
	              .free = 8 } },
	  .admitted = 2 },
	{ .name = "quota: what this round admits counts against the next job",
	  .gh200 = 8,
	  .quotas = { { "team-a", 0, 8 } },
	  .jobs = { { .key = "team-a/p",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .on = { "gh-1" },
	              POS(0, 1),
	              .free = 8 },
	            { .key = "team-a/q",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 1),
	              .free = 7,
	              .message = "namespace team-a holds 4 of its 8 gh200 GPUs; the job needs 8 "
	                         "more" },
	            { .key = "team-a/r",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .on = { "gh-2" },
	              POS(0, 1),
	              .free = 7 } },
	  .admitted = 2 },

	/* ResourceQuotas */
	{ .name = "ResourceQuota: a gang its quota cannot hold now waits, naming it; it blocks "
	          "nobody",
	  .gh200 = 8,
	  .limits = { { "team-a", "gpus", "requests.nvidia.com/gpu", 8000, 4000 } },
	  .jobs = { { .key = "team-a/big",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .charges = { { 0, 8000, 8000 } },
	              .n_charges = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 1),
	              .free = 8,
	              .message = "ResourceQuota gpus of namespace team-a: requests.nvidia.com/gpu "
	                         "has 4 of 8 used; the job needs 8" },
	            { .key = "team-b/other",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .on = { "gh-1", "gh-2" },
	              POS(0, 1),
	              .free = 8 },
	            { .key = "team-a/small",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .charges = { { 0, 4000, 4000 } },
	              .n_charges = 1,
	              .on = { "gh-3" },
	              POS(0, 1),
	              .free = 6 } },
	  .admitted = 2 },
	{ .name = "ResourceQuota: what this round admits counts against the next job, limit by "
	          "limit",
	  .gh200 = 8,
	  .limits = { { "team-a", "gpus", "requests.nvidia.com/gpu", 8000, 0 },
	              { "team-a", "pods", "pods", 2000, 0 } },
	  .jobs = { { .key = "team-a/p",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .charges = { { 0, 4000, 4000 }, { 1, 1000, 1000 } },
	              .n_charges = 2,
	              .on = { "gh-1" },
	              POS(0, 2),
	              .free = 8 },
	            { .key = "team-a/q",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .charges = { { 0, 8000, 8000 }, { 1, 2000, 2000 } },
	              .n_charges = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 2),
	              .free = 7,
	              .message = "ResourceQuota gpus of namespace team-a: requests.nvidia.com/gpu "
	                         "has 4 of 8 used; the job needs 8" },
	            { .key = "team-a/r",
	              .nodes = 2,
	              .gpus = 0,
	              .cpu = 500,
	              .created = 3,
	              .charges = { { 1, 2000, 2000 } },
	              .n_charges = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(2, 2),
	              .free = 8,
	              .message = "ResourceQuota pods of namespace team-a: pods has 1 of 2 used; "
	                         "the job needs 2" } },
	  .admitted = 1 },
	{ .name = "ResourceQuota: a gang larger than the hard limit never fits, and blocks nobody",
	  .gh200 = 8,
	  .limits = { { "team-a", "gpus", "requests.nvidia.com/gpu", 4000, 0 } },
	  .jobs = { { .key = "team-a/split",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .charges = { { 0, 8000, 8000 } },
	              .n_charges = 1,
	              .verdict = TJ_ADMISSION_NEVER_FITS,
	              .reason = "QuotaExceeded",
	              .free = 8,
	              .message = "ResourceQuota gpus of namespace team-a allows 4 "
	                         "requests.nvidia.com/gpu in all; the job's gang needs 8: it "
	                         "never fits" },
	            { .key = "team-a/one",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .charges = { { 0, 4000, 4000 } },
	              .n_charges = 1,
	              .on = { "gh-1" },
	              .free = 8 } },
	  .admitted = 1 },
	{ .name = "ResourceQuota: with NeverFits jobs waiting, a gang larger than the hard limit "
	          "waits",
	  .gh200 = 8,
	  .wait_if_never_fits = true,
	  .limits = { { "team-a", "gpus", "requests.nvidia.com/gpu", 4000, 0 } },
	  .jobs = { { .key = "team-a/split",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .charges = { { 0, 8000, 8000 } },
	              .n_charges = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 1),
	              .free = 8,
	              .message = "ResourceQuota gpus of namespace team-a allows 4 "
	                         "requests.nvidia.com/gpu in all; the job's gang needs 8: it "
	                         "never fits" } } },
	{ .name = "ResourceQuota: a restart past the quota waits for it, never fails",
	  .gh200 = 8,
	  .limits = { { "team-a", "gpus", "requests.nvidia.com/gpu", 4000, 4000 } },
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 2,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .charges = { { 0, 4000, 8000 } },
	              .n_charges = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 1),
	              .free = 8,
	              .message = "ResourceQuota gpus of namespace team-a: requests.nvidia.com/gpu "
	                         "has 4 of 4 used; the job needs 4" } } },

	/* NeverFits */
	{ .name = "never fits: more nodes than the class has fails, and blocks nobody",
	  .gh200 = 8,
	  .jobs = { { .key = "team-a/huge",
	              .nodes = 9,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_NEVER_FITS,
	              .reason = "NeverFits",
	              .free = 8,
	              .message = "gh200 has 8 nodes of 4 GPUs: a job of 9 nodes x 4 GPUs never "
	                         "fits; at most 8" },
	            { .key = "team-a/next",
	              .nodes = 8,
	              .gpus = 4,
	              .created = 2,
	              .on = { "gh-1", "gh-2", "gh-3", "gh-4", "gh-5", "gh-6", "gh-7", "gh-8" },
	              .free = 8 } },
	  .admitted = 1 },
	{ .name = "never fits: waits instead when the config says so",
	  .wait_if_never_fits = true,
	  .gh200 = 8,
	  .jobs = { { .key = "team-a/huge",
	              .nodes = 9,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "NeverFits",
	              POS(1, 2),
	              .free = 8,
	              .message = "gh200 has 8 nodes of 4 GPUs: a job of 9 nodes x 4 GPUs never "
	                         "fits; at most 8" },
	            { .key = "team-a/wide",
	              .nodes = 1,
	              .gpus = 8,
	              .created = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "NeverFits",
	              POS(2, 2),
	              .message = "gh200 has no node that holds such a pod: a job of 1 node x 8 "
	                         "GPUs never fits; at most 0" } },
	  .check_stats = true,
	  .stats = { .capacity_gpus = 32, .waiting = { 0, 0, 0, 2 } } },
	{ .name = "never fits: not a restart, and not for nodes that take no pods for now",
	  .gh200 = 8,
	  .down = 2,
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 9,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .free = 6,
	              .message = "position 1 of 2 in gh200: needs 9 nodes x 4 GPUs, 6 such "
	                         "nodes free; expected start unknown" },
	            { .key = "team-a/seven",
	              .nodes = 7,
	              .gpus = 4,
	              .created = 2,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .free = 6,
	              .message = "position 2 of 2 in gh200: needs 7 nodes x 4 GPUs, 6 such "
	                         "nodes free; expected start unknown" } } },
	{ .name = "never fits: the size of mixed nodes is not told",
	  .nodes = { GH("gh-1"), { .name = "gh-2", .gpus = 8 } },
	  .jobs = { { .key = "team-a/four",
	              .nodes = 4,
	              .gpus = 4,
	              .created = 1,
	              .verdict = TJ_ADMISSION_NEVER_FITS,
	              .reason = "NeverFits",
	              .free = 2,
	              .message = "gh200 has 2 nodes that hold such a pod: a job of 4 nodes x 4 "
	                         "GPUs never fits; at most 3" } } },

	/* Begin time: a restart in its backoff */
	{ .name = "begin time: a restart in its backoff waits in its place, its node held from its "
	          "end; a later job that fits now but would hold the node longer waits",
	  .gh200 = 3,
	  .busy = 1,
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 2,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .begin = 10,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "BeginTime",
	              POS(1, 2),
	              .start = NOW + 10,
	              .free = 2,
	              .message = "position 1 of 2 in gh200: needs 1 of 2 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start 10:00Z" },
	            { .key = "team-b/later",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 3600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .free = 2,
	              .message = "position 2 of 2 in gh200: needs 2 nodes x 4 GPUs, 2 such nodes "
	                         "free; expected start unknown" } },
	  .check_stats = true,
	  .stats = { .capacity_gpus = 12,
	             .allocated_gpus = 4,
	             .reserved_gpus = 4,
	             .waiting = { 0, 1, 0, 0, 0, 1 } } },
	{ .name = "begin time: a later job that gives the node back by then is backfilled there",
	  .gh200 = 3,
	  .busy = 1,
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 2,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .begin = 10,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "BeginTime",
	              POS(1, 1),
	              .start = NOW + 10,
	              .free = 2,
	              .message = "position 1 of 1 in gh200: needs 1 of 2 nodes x 4 GPUs, 2 such "
	                         "nodes free; expected start 10:00Z" },
	            { .key = "team-b/short",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 5,
	              .grace = 5,
	              .on = { "gh-2", "gh-3" },
	              .free = 2,
	              .queue = 1,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "begin time: a later job without a walltime takes the nodes its reservation "
	          "leaves",
	  .gh200 = 4,
	  .busy = 1,
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 2,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .begin = 10,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "BeginTime",
	              POS(1, 1),
	              .start = NOW + 10,
	              .free = 3,
	              .message = "position 1 of 1 in gh200: needs 1 of 2 nodes x 4 GPUs, 3 such "
	                         "nodes free; expected start 10:00Z" },
	            { .key = "team-b/open",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .on = { "gh-3", "gh-4" },
	              .free = 3,
	              .queue = 1,
	              .backfilled = true } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "begin time: once it has passed, the restart is admitted at once",
	  .gh200 = 3,
	  .busy = 1,
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 2,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .begin = -1,
	              .on = { "gh-2" },
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "begin time: a restart with nothing free reserves what frees first after it, "
	          "from the later of the two",
	  .gh200 = 2,
	  .busy = 2,
	  .busy_for = 5,
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 3,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .begin = 10,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "BeginTime",
	              POS(1, 1),
	              .start = NOW + 10,
	              .message = "position 1 of 1 in gh200: needs 1 of 3 nodes x 4 GPUs, 0 such "
	                         "nodes free; expected start 10:00Z" } } },
	{ .name = "begin time: a restart in its backoff preempts nobody before it",
	  .gh200 = 1,
	  .running = { { .key = "low/scavenger",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 10,
	                 .grace = 10,
	                 .on = { "gh-1" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/restart",
	              .nodes = 2,
	              .pods = 1,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .begin = 10,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "BeginTime",
	              POS(1, 1),
	              .message = "position 1 of 1 in gh200: needs 1 of 2 nodes x 4 GPUs, 0 such "
	                         "nodes free; expected start unknown" } } },

	/* Messages */
	{ .name = "messages: the nodes without a GPU class, in CPUs",
	  .nodes = { { .name = "cpu-1",
	               .cls = -1,
	               .cpu = 16000,
	               .mem = 64 * GIB,
	               .used_cpu = 12000 } },
	  .jobs = { { .key = "team-a/cpu",
	              .cls = -1,
	              .nodes = 2,
	              .cpu = 8000,
	              .created = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .message = "position 1 of 1 in nodes without a GPU class: needs 2 nodes x "
	                         "8 CPUs, 0 such nodes free; expected start unknown" } } },
	{ .name = "messages: a start on another day, and a restart's missing ranks",
	  .gh200 = 4,
	  .busy = 4,
	  .busy_for = 86400,
	  .jobs = { { .key = "team-a/r",
	              .nodes = 5,
	              .pods = 2,
	              .gpus = 4,
	              .created = 1,
	              .restart = true,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 86400,
	              .message = "position 1 of 1 in gh200: needs 2 of 5 nodes x 4 GPUs, 0 such "
	                         "nodes free; expected start 2026-11-30T10:00Z" } } },

	/* A launcher (an MPI launcher with GPUs) is placed with its gang */
	{ .name = "launcher: a node of its own when the ranks fill theirs",
	  .gh200 = 3,
	  .jobs = { { .key = "team-a/ds",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .launcher = true,
	              .launcher_gpus = 4,
	              .on = { "gh-1", "gh-2" },
	              .launcher_on = "gh-3",
	              .free = 3 } },
	  .admitted = 1,
	  .check_stats = true,
	  .stats = { .capacity_gpus = 12, .allocated_gpus = 12 } },
	{ .name = "launcher: shares a rank's node when the rank leaves room for it",
	  .gh200 = 2,
	  .jobs = { { .key = "team-a/ds",
	              .nodes = 2,
	              .gpus = 2,
	              .created = 1,
	              .launcher = true,
	              .launcher_gpus = 2,
	              .on = { "gh-1", "gh-1" },
	              .launcher_on = "gh-2",
	              .free = 2 },
	            { .key = "team-a/next",
	              .nodes = 1,
	              .gpus = 2,
	              .created = 2,
	              .on = { "gh-2" },
	              .free = 1 } },
	  .admitted = 2 },
	{ .name = "launcher: placed first when the ranks would take the only node it fits on",
	  .nodes = { { .name = "a",
	               .gpus = 4,
	               .cpu = 72000,
	               .mem = 480 * GIB,
	               .used_gpus = 3,
	               .pod_slots = 110 },
	             { .name = "b", .gpus = 4, .cpu = 8000, .mem = 480 * GIB, .pod_slots = 110 } },
	  .jobs = { { .key = "team-a/ds",
	              .nodes = 1,
	              .gpus = 1,
	              .cpu = 1000,
	              .created = 1,
	              .launcher = true,
	              .launcher_gpus = 1,
	              .launcher_cpu = 64000,
	              .on = { "b" },
	              .launcher_on = "a",
	              .free = 2 } },
	  .admitted = 1 },
	{ .name = "launcher: no room for it keeps the whole gang queued, nothing in part",
	  .gh200 = 3,
	  .busy = 1,
	  .jobs = { { .key = "team-a/ds",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .launcher = true,
	              .launcher_gpus = 4,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .free = 2,
	              .message = "position 1 of 1 in gh200: needs 2 nodes x 4 GPUs and a launcher "
	                         "of 4 GPUs, 2 such nodes free; expected start unknown" } },
	  .check_stats = true,
	  .stats = { .capacity_gpus = 12, .allocated_gpus = 4, .waiting = { 1, 0, 0, 0 } } },
	{ .name = "launcher: the head's reservation holds its node too",
	  .gh200 = 3,
	  .busy = 3,
	  .busy_for = 600,
	  .jobs = { { .key = "team-a/ds",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .launcher = true,
	              .launcher_gpus = 4,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 600,
	              .message = "position 1 of 1 in gh200: needs 2 nodes x 4 GPUs and a launcher "
	                         "of 4 GPUs, 0 such nodes free; expected start 10:10Z" } },
	  .check_stats = true,
	  .stats = { .capacity_gpus = 12,
	             .allocated_gpus = 12,
	             .reserved_gpus = 12,
	             .waiting = { 1, 0, 0, 0 } } },
	{ .name = "launcher: never fits when no node holds it beside the ranks",
	  .gh200 = 2,
	  .jobs = { { .key = "team-a/ds",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .launcher = true,
	              .launcher_gpus = 4,
	              .verdict = TJ_ADMISSION_NEVER_FITS,
	              .reason = "NeverFits",
	              .free = 2,
	              .message = "gh200 has 2 nodes of 4 GPUs: a job of 2 nodes x 4 GPUs and a "
	                         "launcher of 4 GPUs never fits; at most 1" } } },
	{ .name = "launcher: its GPUs count against the namespace's quota",
	  .gh200 = 4,
	  .quotas = { { "team-a", 0, 8 } },
	  .jobs = { { .key = "team-a/ds",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .launcher = true,
	              .launcher_gpus = 4,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QuotaExceeded",
	              POS(1, 1),
	              .free = 4,
	              .message = "namespace team-a holds 0 of its 8 gh200 GPUs; the job needs 12 "
	                         "more" } } },
	/* QOS tier limits */
	{ .name = "a namespace at its QOS tier's GPU limit waits, QOSMaxGRESPerNamespace, without "
	          "blocking the jobs behind it; a gang larger than the limit never fits",
	  .gh200 = 4,
	  .tier_limits = { { .namespace = "team-a", .tier = "high", .max_gpus = 8, .used = 4 } },
	  .jobs = { { .key = "team-a/big",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .tier_limit = 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "QOSMaxGRESPerNamespace",
	              POS(1, 1),
	              .free = 4,
	              .message = "namespace team-a holds 4 of the 8 GPUs QOS high allows it; the "
	                         "job needs 8 more" },
	            { .key = "team-a/small",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .tier_limit = 1,
	              .on = { "gh-1" },
	              .queue = 1,
	              .free = 4 },
	            { .key = "team-a/huge",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 3,
	              .tier_limit = 1,
	              .verdict = TJ_ADMISSION_NEVER_FITS,
	              .reason = "QOSMaxGRESPerNamespace",
	              .queue = 1,
	              .free = 3,
	              .message = "QOS high allows namespace team-a 8 GPUs; the job's gang needs "
	                         "12: it never fits" } },
	  .admitted = 1 },
	/* Preemption */
	{ .name = "a normal job preempts the most recently started gang of the lowest tier, and "
	          "no more than it needs; its expected start is the victim's stop",
	  .gh200 = 4,
	  .running = { { .key = "low/old",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 500,
	                 .grace = 120,
	                 .on = { "gh-1" },
	                 .gpus = 4 },
	               { .key = "low/new",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 100,
	                 .grace = 120,
	                 .on = { "gh-2" },
	                 .gpus = 4 },
	               { .key = "team-b/normal",
	                 .tier = 0,
	                 .qos = 0,
	                 .started = 50,
	                 .grace = 30,
	                 .on = { "gh-3", "gh-4" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/urgent",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 120,
	              .victims = { "low/new" },
	              .message = "position 1 of 1 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:02Z; preempting 1 job of lower tiers: "
	                         "low/new" } } },
	{ .name = "a victim the gang can do without is spared: the recent gang that frees too "
	          "little is left running, the older one that makes room is preempted",
	  .nodes = { GH("n-1", .used_gpus = 2), GH("n-2") },
	  .running = { { .key = "low/half",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 10,
	                 .grace = 60,
	                 .on = { "n-1" },
	                 .gpus = 2 },
	               { .key = "low/whole",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 200,
	                 .grace = 60,
	                 .on = { "n-2" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/one",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 60,
	              .victims = { "low/whole" },
	              .message = "position 1 of 1 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:01Z; preempting 1 job of lower tiers: "
	                         "low/whole" } } },
	{ .name = "nothing is preempted when the gangs of the tiers a job may preempt cannot make "
	          "room for its whole gang, nor is a gang of another tier",
	  .gh200 = 2,
	  .running = { { .key = "team-b/normal",
	                 .tier = 0,
	                 .qos = 0,
	                 .started = 10,
	                 .grace = 30,
	                 .on = { "gh-1" },
	                 .gpus = 4 },
	               { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 20,
	                 .grace = 30,
	                 .on = { "gh-2" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/two",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .message = "position 1 of 1 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } } },
	{ .name = "an expected start within preemptAfter preempts nothing; the job behind it, "
	          "whose start is unknown, preempts off the nodes reserved for the first",
	  .reservations = 2,
	  .nodes = { GH("n-1"), GH("n-2") },
	  .releases = { { "n-1", 100, 4 } },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 300,
	                 .grace = 30,
	                 .on = { "n-1" },
	                 .gpus = 4 },
	               { .key = "low/b",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 400,
	                 .grace = 30,
	                 .on = { "n-2" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/patient",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .preempt_after = 300,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 100,
	              .message = "position 1 of 2 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:01Z" },
	            { .key = "team-a/hurried",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .preempt_after = 60,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .start = NOW + 30,
	              .victims = { "low/b" },
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:00Z; preempting 1 job of lower tiers: "
	                         "low/b" } } },
	{ .name = "a job whose victims are still stopping waits for them and preempts no more",
	  .nodes = { GH("n-1"), GH("n-2", .used_gpus = 4) },
	  .releases = { { "n-2", 20, 4 } },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 300,
	                 .grace = 30,
	                 .on = { "n-1" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/waiting",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .preempts = 1u << 1,
	              .preempting = true,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 20,
	              .message = "position 1 of 1 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:00Z; waiting for the jobs it preempted "
	                         "to stop" } } },
	{ .name = "a job whose victims are gone comes first in its tier: it takes the node they "
	          "gave "
	          "back, the head reserves the others, and no short job is backfilled there "
	          "meanwhile",
	  .nodes = { GH("n-1", .used_gpus = 4), GH("n-2"), GH("n-3", .used_gpus = 4) },
	  .releases = { { "n-1", 600, 4 }, { "n-3", 600, 4 } },
	  .jobs = { { .key = "team-a/head",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 600,
	              .message = "position 1 of 2 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:10Z" },
	            { .key = "team-b/preempted-for",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .preempting = true,
	              .verdict = TJ_ADMISSION_ADMITTED,
	              .queue = 2,
	              .free = 1,
	              .on = { "n-2" } },
	            { .key = "low/short",
	              .nodes = 1,
	              .gpus = 4,
	              .tier = -1000,
	              .created = 3,
	              .walltime = 100,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } },
	  .admitted = 1 },
	{ .name = "a job whose victims are on their way out starts on the nodes it chose, though "
	          "others are free that best fit would take first",
	  .nodes = { GH("n-1"), GH("n-2"), GH("n-3") },
	  .jobs = { { .key = "team-a/claimant",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .preempts = 1u << 1,
	              .preempting = true,
	              .claims = { "n-3" },
	              .verdict = TJ_ADMISSION_ADMITTED,
	              .free = 3,
	              .on = { "n-3" } } },
	  .admitted = 1 },
	{ .name = "a job whose victims are on their way out reserves the nodes it chose from their "
	          "stop, though another node frees first; a low job that would outlast the stop "
	          "may not take the one of them that is free",
	  .nodes = { GH("n-1", .used_gpus = 4), GH("n-2", .used_gpus = 4), GH("n-3") },
	  .releases = { { "n-1", 5, 4 }, { "n-2", 10, 4 } },
	  .jobs = { { .key = "team-a/claimant",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .preempting = true,
	              .claims = { "n-2", "n-3" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 10,
	              .free = 1,
	              .message = "position 1 of 2 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start 10:00Z; waiting for the jobs it preempted "
	                         "to stop" },
	            { .key = "low/short",
	              .nodes = 1,
	              .gpus = 4,
	              .tier = -1000,
	              .created = 2,
	              .walltime = 60,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(2, 2),
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown",
	              .free = 1 } } },
	{ .name = "a job whose victims are on their way out takes no free node from a job of its "
	          "tier ahead of it: the head starts on the free nodes, the claimant waits for its "
	          "claim",
	  .nodes = { GH("n-1"), GH("n-2"), GH("n-3", .used_gpus = 4), GH("n-4", .used_gpus = 4) },
	  .releases = { { "n-3", 10, 4 }, { "n-4", 10, 4 } },
	  .jobs = { { CLAIM_HEAD, .queue = 1, .free = 2 },
	            { CLAIMANT, .nodes = 2, .claims = { "n-3", "n-4" },
	              .verdict = TJ_ADMISSION_WAITING, .reason = "Resources", POS(1, 1),
	              .start = NOW + 10, .free = 2,
	              .message = "position 1 of 1 in gh200: needs 2 nodes x 4 GPUs, 2 such nodes "
	                         "free; expected start 10:00Z; waiting for the jobs it preempted "
	                         "to stop" } },
	  .admitted = 1,
	  .backfilled = 1 },
	{ .name = "a job whose victims are on their way out starts elsewhere on what the jobs of "
	          "its tier leave free, after them",
	  .nodes = { GH("n-1"), GH("n-2"), GH("n-3"), GH("n-4", .used_gpus = 4) },
	  .releases = { { "n-4", 10, 4 } },
	  .jobs = { { CLAIM_HEAD, .free = 3 },
	            { CLAIMANT, .nodes = 1, .claims = { "n-4" }, .verdict = TJ_ADMISSION_ADMITTED,
	              .backfilled = true, .free = 3, .on = { "n-3" } } },
	  .admitted = 2,
	  .backfilled = 2 },
	{ .name = "a job that starts before its victims would be gone preempts nobody: it waits "
	          "for the node a walltime frees",
	  .nodes = { GH("n-1", .used_gpus = 4), GH("n-2") },
	  .releases = { { "n-1", 5, 4 }, { "n-2", 300, 4 } },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 100,
	                 .grace = 10,
	                 .on = { "n-2" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/soon",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 1),
	              .start = NOW + 5,
	              .message = "position 1 of 1 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:00Z" } } },
	{ .name = "two preemptors of one cycle never share a victim: the first takes the most "
	          "recent, the second the next",
	  .reservations = 2,
	  .nodes = { GH("n-1"), GH("n-2") },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 300,
	                 .grace = 30,
	                 .on = { "n-1" },
	                 .gpus = 4 },
	               { .key = "low/b",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 100,
	                 .grace = 30,
	                 .on = { "n-2" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/x",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 30,
	              .victims = { "low/b" },
	              .claimed = { "n-2" },
	              .message = "position 1 of 2 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:00Z; preempting 1 job of lower tiers: "
	                         "low/b" },
	            { .key = "team-a/y",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .start = NOW + 30,
	              .victims = { "low/a" },
	              .claimed = { "n-1" },
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:00Z; preempting 1 job of lower tiers: "
	                         "low/a" } } },
	{ .name = "two jobs past the backfill depth that preempt in one cycle never claim the same "
	          "free node: the second finds it held for the first, and preempts nobody",
	  .nodes = { GH("n-1", .used_gpus = 4), GH("n-2"), GH("n-3"), GH("n-4") },
	  .releases = { { "n-1", 600, 4 } },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 300,
	                 .grace = 30,
	                 .on = { "n-3" },
	                 .gpus = 4 },
	               { .key = "low/b",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 100,
	                 .grace = 30,
	                 .on = { "n-4" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/head",
	              .nodes = 4,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 3),
	              .free = 1,
	              .message = "position 1 of 3 in gh200: needs 4 nodes x 4 GPUs, 1 such node "
	                         "free; expected start unknown" },
	            { .key = "team-a/x",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 3),
	              .start = NOW + 30,
	              .free = 1,
	              .victims = { "low/b" },
	              .claimed = { "n-2", "n-4" },
	              .message = "position 2 of 3 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start 10:00Z; preempting 1 job of lower tiers: "
	                         "low/b" },
	            { .key = "team-a/y",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(3, 3),
	              .free = 1,
	              .message = "position 3 of 3 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } } },
	{ .name = "a free node a job past the backfill depth claims when it preempts is held from "
	          "its victims' stop: a job that would end before the head's start, but after that "
	          "stop, is not backfilled there",
	  .nodes = { GH("n-1", .used_gpus = 4), GH("n-2", .used_gpus = 4),
	             GH("n-3", .used_gpus = 4), GH("n-4"), GH("n-5") },
	  .releases = { { "n-1", 600, 4 }, { "n-2", 600, 4 }, { "n-3", 600, 4 } },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 300,
	                 .grace = 10,
	                 .on = { "n-5" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/head",
	              .nodes = 3,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .only = { "n-1", "n-2", "n-3" },
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 3),
	              .start = NOW + 600,
	              .message = "position 1 of 3 in gh200: needs 3 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:10Z" },
	            { .key = "team-a/x",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 3),
	              .start = NOW + 10,
	              .free = 1,
	              .victims = { "low/a" },
	              .claimed = { "n-4", "n-5" },
	              .message = "position 2 of 3 in gh200: needs 2 nodes x 4 GPUs, 1 such node "
	                         "free; expected start 10:00Z; preempting 1 job of lower tiers: "
	                         "low/a" },
	            { .key = "low/l",
	              .nodes = 1,
	              .gpus = 4,
	              .tier = -1000,
	              .created = 3,
	              .walltime = 60,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Priority",
	              POS(3, 3),
	              .free = 1,
	              .message = "position 3 of 3 in gh200: needs 1 node x 4 GPUs, 1 such node "
	                         "free; expected start unknown" } } },
	{ .name = "a job past the backfill depth preempts a gang on a node reserved for the head "
	          "when it would be gone before the head's start, as it could be backfilled there; "
	          "a "
	          "longer one does not",
	  .nodes = { GH("n-1", .used_gpus = 4), GH("n-2") },
	  .releases = { { "n-1", 600, 4 }, { "n-2", 600, 4 } },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 300,
	                 .grace = 10,
	                 .on = { "n-2" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/head",
	              .nodes = 2,
	              .gpus = 4,
	              .created = 1,
	              .walltime = 3600,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 3),
	              .start = NOW + 600,
	              .message = "position 1 of 3 in gh200: needs 2 nodes x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:10Z" },
	            { .key = "team-a/short",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .walltime = 60,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 3),
	              .start = NOW + 10,
	              .victims = { "low/a" },
	              .claimed = { "n-2" },
	              .message =
	                      "position 2 of 3 in gh200: needs 1 node x 4 GPUs, 0 such nodes free; "
	                      "expected start 10:00Z; preempting 1 job of lower tiers: low/a" },
	            { .key = "team-a/long",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 3,
	              .walltime = 3600,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(3, 3),
	              .message = "position 3 of 3 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start unknown" } } },
	{ .name = "a job past the backfill depth preempts too, but only off the nodes reserved "
	          "for the jobs ahead: the head takes low/b's node, the second low/a's",
	  .nodes = { GH("n-1"), GH("n-2") },
	  .running = { { .key = "low/a",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 300,
	                 .grace = 30,
	                 .on = { "n-1" },
	                 .gpus = 4 },
	               { .key = "low/b",
	                 .tier = -1000,
	                 .qos = 1,
	                 .started = 100,
	                 .grace = 30,
	                 .on = { "n-2" },
	                 .gpus = 4 } },
	  .jobs = { { .key = "team-a/x",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 1,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(1, 2),
	              .start = NOW + 30,
	              .victims = { "low/b" },
	              .message = "position 1 of 2 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:00Z; preempting 1 job of lower tiers: "
	                         "low/b" },
	            { .key = "team-a/y",
	              .nodes = 1,
	              .gpus = 4,
	              .created = 2,
	              .preempts = 1u << 1,
	              .verdict = TJ_ADMISSION_WAITING,
	              .reason = "Resources",
	              POS(2, 2),
	              .start = NOW + 30,
	              .victims = { "low/a" },
	              .message = "position 2 of 2 in gh200: needs 1 node x 4 GPUs, 0 such nodes "
	                         "free; expected start 10:00Z; preempting 1 job of lower tiers: "
	                         "low/a" } } },
};

/* The input of a case, in storage the test owns. */
struct built {
	struct tj_admission_config config;
	struct tj_admission_node nodes[MAX_NODES * 2];
	char names[MAX_NODES][16];
	size_t n_nodes;
	struct tj_admission_release releases[MAX_NODES + MAX_RELEASES];
	size_t n_releases;
	struct tj_admission_job jobs[MAX_JOBS];
	size_t excluded[MAX_JOBS][3];
	size_t claims[MAX_JOBS][MAX_PODS];
	bool eligible[MAX_JOBS][MAX_NODES * 2];
	char namespaces[MAX_JOBS][32];
	struct tj_admission_running running[MAX_RUNNING];
	struct tj_admission_hold holds[MAX_RUNNING][3];
	size_t cursors[3]; /* per class, class -1 last */
	struct tj_admission_input in;
};

static size_t node_index(const struct built *b, const char *name)
{
	for (size_t i = 0; i < b->n_nodes; i++)
		if (strcmp(b->nodes[i].name, name) == 0)
			return i;
	fail_msg("no node %s", name);
	return 0;
}

static void add_node(struct built *b, const struct node_row *r)
{
	b->nodes[b->n_nodes++] = (struct tj_admission_node){
		.name = r->name,
		.class_index = r->cls,
		.domain = r->domain,
		.schedulable = !r->down,
		.allocatable = { r->gpus, r->cpu, r->mem, r->pod_slots },
		.used = { r->used_gpus, r->used_cpu, r->used_mem, r->used_pods },
	};
}

static void build(const struct adm_case *c, struct built *b)
{
	size_t n, n_running = 0;

	bool launcher = false;

	memset(b, 0, sizeof(*b));
	for (size_t j = 0; j < MAX_JOBS; j++)
		launcher = launcher || c->jobs[j].launcher;
	for (int i = 0; i < c->gh200; i++) {
		struct node_row r = GH(b->names[i], .down = i >= c->gh200 - c->down);

		/* A launcher asks for a pod slot, as the admitter's requests do. */
		if (launcher)
			r.pod_slots = 110;

		snprintf(b->names[i], sizeof(b->names[i]), "gh-%d", i + 1);
		if (i < c->busy)
			r.used_gpus = 4;
		add_node(b, &r);
		if (i < c->busy && c->busy_for)
			b->releases[b->n_releases++] =
			        (struct tj_admission_release){ .node = (size_t)i,
				                               .at = NOW + c->busy_for,
				                               .resources = { .gpus = 4 } };
	}
	for (size_t i = 0; i < MAX_NODES && c->nodes[i].name; i++)
		add_node(b, &c->nodes[i]);
	for (size_t i = 0; i < MAX_RELEASES && c->releases[i].node; i++)
		b->releases[b->n_releases++] = (struct tj_admission_release){
			.node = node_index(b, c->releases[i].node),
			.at = NOW + c->releases[i].in,
			.resources = { .gpus = c->releases[i].gpus },
		};
	for (n = 0; n < MAX_JOBS && c->jobs[n].key; n++) {
		const struct job_row *r = &c->jobs[n];
		const char *slash = strchr(r->key, '/');

		snprintf(b->namespaces[n], sizeof(b->namespaces[n]), "%.*s", (int)(slash - r->key),
		         r->key);
		b->jobs[n] = (struct tj_admission_job){
			.key = r->key,
			.namespace = b->namespaces[n],
			.class_index = r->cls,
			.num_nodes = r->nodes,
			.num_pods = r->pods ? r->pods : r->nodes,
			.request = { r->gpus, r->cpu, r->mem, r->slots },
			.priority = r->prio,
			.tier = r->tier,
			.fair_share = r->fs,
			.creation_time = r->created,
			.walltime = r->walltime,
			.grace = r->grace,
			.restart = r->restart,
			.not_before = r->begin ? NOW + r->begin : 0,
			.excluded = b->excluded[n],
			.launcher = { r->launcher_gpus, r->launcher_cpu, 0, r->launcher ? 1 : 0 },
			.charges = r->n_charges ? r->charges : NULL,
			.n_charges = r->n_charges,
			.preempts = r->preempts,
			.preempt_after = r->preempt_after,
			.backfill_reserved_nodes = r->backfill_reserved_nodes,
			.preempting = r->preempting,
			.tier_limit = r->tier_limit,
		};
		for (size_t k = 0; k < 4 && r->only[k]; k++) {
			b->eligible[n][node_index(b, r->only[k])] = true;
			b->jobs[n].eligible = b->eligible[n];
		}
		b->jobs[n].ineligible_why = r->why;
		while (b->jobs[n].n_claimed < MAX_PODS && r->claims[b->jobs[n].n_claimed]) {
			b->claims[n][b->jobs[n].n_claimed] =
			        node_index(b, r->claims[b->jobs[n].n_claimed]);
			b->jobs[n].claimed = b->claims[n];
			b->jobs[n].n_claimed++;
		}
		while (b->jobs[n].n_excluded < 3 && r->avoid[b->jobs[n].n_excluded]) {
			b->excluded[n][b->jobs[n].n_excluded] =
			        node_index(b, r->avoid[b->jobs[n].n_excluded]);
			b->jobs[n].n_excluded++;
		}
	}
	for (size_t v = 0; v < MAX_RUNNING && c->running[v].key; v++) {
		const struct running_row *r = &c->running[v];
		struct tj_admission_running *g = &b->running[v];

		*g = (struct tj_admission_running){ .key = r->key,
			                            .tier = r->tier,
			                            .qos = r->qos,
			                            .start = NOW - r->started,
			                            .grace = r->grace,
			                            .holds = b->holds[v] };
		for (size_t k = 0; k < 3 && r->on[k]; k++) {
			size_t i = node_index(b, r->on[k]);

			b->holds[v][g->n_holds++] =
			        (struct tj_admission_hold){ i, { .gpus = r->gpus, .pods = 1 } };
			b->nodes[i].used.gpus += r->gpus;
		}
		n_running = v + 1;
	}
	b->config = (struct tj_admission_config){
		.backfill = !c->fifo,
		.wait_if_never_fits = c->wait_if_never_fits,
		.reservations = c->reservations,
		.quotas = c->quotas,
		.max_tries = c->max_tries,
	};
	while (b->config.n_quotas < MAX_QUOTAS && c->quotas[b->config.n_quotas].namespace)
		b->config.n_quotas++;
	b->in = (struct tj_admission_input){
		.config = &b->config,
		.class_names = class_names,
		.n_classes = 2,
		.nodes = b->nodes,
		.n_nodes = b->n_nodes,
		.releases = b->releases,
		.n_releases = b->n_releases,
		.usage = c->usage,
		.jobs = b->jobs,
		.n_jobs = n,
		.now = NOW,
		.running = b->running,
		.n_running = n_running,
	};
	while (b->in.n_usage < MAX_QUOTAS && c->usage[b->in.n_usage].namespace)
		b->in.n_usage++;
	b->in.quota_limits = c->limits;
	while (b->in.n_quota_limits < MAX_QUOTAS && c->limits[b->in.n_quota_limits].namespace)
		b->in.n_quota_limits++;
	b->in.tier_limits = c->tier_limits;
	while (b->in.n_tier_limits < 2 && c->tier_limits[b->in.n_tier_limits].namespace)
		b->in.n_tier_limits++;
	b->cursors[0] = c->cursor;
	b->in.cursors = b->cursors;
}

static void check_decision(const struct built *b, const struct job_row *r,
                           const struct tj_admission_decision *d)
{
	int pods = r->pods ? r->pods : r->nodes;

	print_message("#   job %s\n", r->key);
	assert_int_equal(d->verdict, r->verdict);
	assert_string_equal(d->reason, r->reason ? r->reason : "");
	assert_string_equal(d->message, r->message ? r->message : "");
	assert_int_equal(d->backfilled, r->backfilled);
	assert_int_equal(d->untried, r->untried);
	assert_int_equal(d->position, r->position);
	assert_int_equal(d->queue_length, r->queue);
	assert_int_equal(d->expected_start, r->start);
	assert_int_equal(d->free_nodes, r->free);
	for (size_t v = 0; v < MAX_RUNNING; v++) {
		if (!r->victims[v]) {
			assert_int_equal(d->n_victims, v);
			break;
		}
		assert_true(v < d->n_victims);
		assert_string_equal(b->running[d->victims[v]].key, r->victims[v]);
	}
	if (!d->n_victims)
		assert_int_equal(d->n_claimed, 0);
	for (size_t i = 0; r->claimed[0] && i < MAX_PODS; i++) {
		if (!r->claimed[i]) {
			assert_int_equal(d->n_claimed, i);
			break;
		}
		assert_true(i < d->n_claimed);
		assert_string_equal(b->nodes[d->claimed[i]].name, r->claimed[i]);
	}
	if (r->verdict != TJ_ADMISSION_ADMITTED) {
		assert_null(d->nodes);
		return;
	}
	assert_non_null(d->nodes);
	for (int i = 0; i < pods; i++)
		assert_string_equal(b->nodes[d->nodes[i]].name, r->on[i]);
	if (!r->launcher_on) {
		assert_int_equal(d->launcher_node, SIZE_MAX);
		return;
	}
	assert_true(d->launcher_node < b->n_nodes);
	assert_string_equal(b->nodes[d->launcher_node].name, r->launcher_on);
}

/* Given in the order of res's ranks, as the admitter gives them, the same decisions, and the
 * ranks are that order: a permutation of the jobs. */
static void check_in_rank_order(const struct adm_case *c, const struct built *b,
                                const struct tj_admission_result *res)
{
	struct tj_admission_job jobs[MAX_JOBS];
	const struct job_row *rows[MAX_JOBS];
	bool seen[MAX_JOBS] = { false };
	struct tj_admission_input in = b->in;
	struct tj_admission_result *again = NULL;

	for (size_t j = 0; j < b->in.n_jobs; j++) {
		size_t rank = res->decisions[j].rank;

		assert_true(rank < b->in.n_jobs);
		assert_false(seen[rank]);
		seen[rank] = true;
		jobs[rank] = b->jobs[j];
		rows[rank] = &c->jobs[j];
	}
	in.jobs = jobs;
	assert_int_equal(tj_admit(&in, &again), 0);
	for (size_t i = 0; i < in.n_jobs; i++) {
		assert_int_equal(again->decisions[i].rank, i);
		check_decision(b, rows[i], &again->decisions[i]);
	}
	assert_int_equal(again->admitted, res->admitted);
	tj_admission_result_free(again);
}

static void test_admission_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct adm_case *c = &cases[i];
		struct tj_admission_result *res = NULL;
		struct built b;

		print_message("# case: %s\n", c->name);
		build(c, &b);
		assert_int_equal(tj_admit(&b.in, &res), 0);
		assert_int_equal(res->n_decisions, b.in.n_jobs);
		for (size_t j = 0; j < b.in.n_jobs; j++)
			check_decision(&b, &c->jobs[j], &res->decisions[j]);
		assert_int_equal(res->admitted, c->admitted);
		assert_int_equal(res->backfilled, c->backfilled);
		assert_int_equal(res->cursors[0], c->next_cursor);
		check_in_rank_order(c, &b, res);
		/* With the waiting messages deferred, the same decisions, whose messages the
		 * caller writes afterwards. */
		struct tj_admission_result *deferred = NULL;

		b.config.defer_waiting_messages = true;
		assert_int_equal(tj_admit(&b.in, &deferred), 0);
		for (size_t j = 0; j < b.in.n_jobs; j++) {
			struct tj_admission_decision *d = &deferred->decisions[j];

			if (d->verdict == TJ_ADMISSION_WAITING &&
			    (strcmp(d->reason, "Resources") == 0 ||
			     strcmp(d->reason, "Priority") == 0))
				assert_string_equal(d->message, "");
			tj_admission_say_deferred(&b.in, j, d);
			check_decision(&b, &c->jobs[j], d);
		}
		tj_admission_result_free(deferred);
		if (c->check_stats) {
			const struct tj_admission_class_stats *st = &res->classes[0];

			assert_int_equal(st->capacity_gpus, c->stats.capacity_gpus);
			assert_int_equal(st->allocated_gpus, c->stats.allocated_gpus);
			assert_int_equal(st->reserved_gpus, c->stats.reserved_gpus);
			for (int k = 0; k < 4; k++)
				assert_int_equal(st->waiting[k], c->stats.waiting[k]);
		}
		tj_admission_result_free(res);
	}
}

/* The figures of every class, class -1 last, from one input with all three. */
static void test_stats_per_class(void **state)
{
	const struct tj_admission_config config = { .backfill = true };
	const struct tj_admission_node nodes[] = {
		{ "gh-1", 0, NULL, true, { 4, 72000, 480 * GIB, 0 }, { 1, 0, 0, 0 } },
		{ "gh-2", 0, NULL, false, { 4, 72000, 480 * GIB, 0 }, { 4, 0, 0, 0 } },
		{ "l-1", 1, NULL, true, { 4, 72000, 480 * GIB, 0 }, { 0, 0, 0, 0 } },
		{ "cpu-1", -1, NULL, true, { 0, 16000, 64 * GIB, 0 }, { 0, 0, 0, 0 } },
	};
	const struct tj_admission_job jobs[] = {
		{ .key = "a/l",
		  .namespace = "a",
		  .class_index = 1,
		  .num_nodes = 1,
		  .num_pods = 1,
		  .request = { 2, 0, 0, 0 },
		  .creation_time = 1 },
		{ .key = "a/l2",
		  .namespace = "a",
		  .class_index = 1,
		  .num_nodes = 1,
		  .num_pods = 1,
		  .request = { 4, 0, 0, 0 },
		  .creation_time = 2 },
		{ .key = "a/cpu",
		  .namespace = "a",
		  .class_index = -1,
		  .num_nodes = 1,
		  .num_pods = 1,
		  .request = { 0, 4000, 0, 0 },
		  .creation_time = 3 },
	};
	const struct tj_admission_input in = {
		.config = &config,
		.class_names = class_names,
		.n_classes = 2,
		.nodes = nodes,
		.n_nodes = 4,
		.jobs = jobs,
		.n_jobs = 3,
		.now = NOW,
	};
	struct tj_admission_result *res = NULL;

	assert_int_equal(tj_admit(&in, &res), 0);
	/* gh-2 takes no new pods: neither its capacity nor its use counts. */
	assert_int_equal(res->classes[0].capacity_gpus, 4);
	assert_int_equal(res->classes[0].allocated_gpus, 1);
	assert_int_equal(res->classes[1].capacity_gpus, 4);
	assert_int_equal(res->classes[1].allocated_gpus, 2);
	assert_int_equal(res->classes[1].waiting[0], 1);
	assert_int_equal(res->classes[2].capacity_gpus, 0);
	assert_int_equal(res->classes[2].waiting[0], 0);
	assert_int_equal(res->decisions[2].verdict, TJ_ADMISSION_ADMITTED);
	assert_int_equal(res->decisions[2].nodes[0], 3);
	assert_int_equal(res->admitted, 2);
	assert_int_equal(res->backfilled, 0);
	tj_admission_result_free(res);
}

static void test_empty_input(void **state)
{
	const struct tj_admission_config config = { .backfill = true };
	const struct tj_admission_input in = { .config = &config, .now = NOW };
	struct tj_admission_result *res = NULL;

	assert_int_equal(tj_admit(&in, &res), 0);
	assert_int_equal(res->n_decisions, 0);
	assert_int_equal(res->admitted, 0);
	assert_int_equal(res->backfilled, 0);
	assert_int_equal(res->classes[0].capacity_gpus, 0);
	assert_int_equal(res->classes[0].waiting[0], 0);
	assert_null(tj_admission_result_free(res));
	assert_null(tj_admission_result_free(NULL));
}

enum breakage {
	BAD_RELEASE_NODE,
	BAD_NODE_CLASS,
	BAD_JOB_CLASS,
	BAD_JOB_CLASS_NEGATIVE,
	BAD_NO_PODS,
	BAD_MORE_PODS_THAN_NODES,
	BAD_QUOTA_CLASS,
	BAD_CHARGE_LIMIT,
	BAD_CHARGES_NULL,
	BAD_NO_CONFIG,
};

/* Each index out of range is refused, and nothing is returned. */
static void test_invalid_input(void **state)
{
	for (int k = BAD_RELEASE_NODE; k <= BAD_NO_CONFIG; k++) {
		struct tj_admission_quota quota = { "team-a", 0, 8 };
		struct tj_admission_config config = { .backfill = true,
			                              .quotas = &quota,
			                              .n_quotas = 1 };
		struct tj_admission_node node = { "gh-1",        0, NULL, true, { 4, 1000, GIB, 0 },
			                          { 0, 0, 0, 0 } };
		struct tj_admission_release rel = { 0, NOW + 60, { 4, 0, 0, 0 } };
		struct tj_admission_quota_limit limit = { "team-a", "gpus",
			                                  "requests.nvidia.com/gpu", 8000, 0 };
		struct tj_admission_quota_charge charge = { 0, 4000, 4000 };
		struct tj_admission_job job = { .key = "team-a/j",
			                        .namespace = "team-a",
			                        .num_nodes = 1,
			                        .num_pods = 1,
			                        .request = { 4, 0, 0, 0 },
			                        .creation_time = 1,
			                        .charges = &charge,
			                        .n_charges = 1 };
		struct tj_admission_input in = {
			.config = &config,
			.class_names = class_names,
			.n_classes = 2,
			.nodes = &node,
			.n_nodes = 1,
			.releases = &rel,
			.n_releases = 1,
			.quota_limits = &limit,
			.n_quota_limits = 1,
			.jobs = &job,
			.n_jobs = 1,
			.now = NOW,
		};
		struct tj_admission_result *res = NULL;

		assert_int_equal(tj_admit(&in, &res), 0);
		res = tj_admission_result_free(res);
		switch ((enum breakage)k) {
		case BAD_RELEASE_NODE:
			rel.node = 1;
			break;
		case BAD_NODE_CLASS:
			node.class_index = 2;
			break;
		case BAD_JOB_CLASS:
			job.class_index = 2;
			break;
		case BAD_JOB_CLASS_NEGATIVE:
			job.class_index = -2;
			break;
		case BAD_NO_PODS:
			job.num_pods = 0;
			break;
		case BAD_MORE_PODS_THAN_NODES:
			job.num_pods = 2;
			break;
		case BAD_QUOTA_CLASS:
			quota.class_index = 5;
			break;
		case BAD_CHARGE_LIMIT:
			charge.limit = 1;
			break;
		case BAD_CHARGES_NULL:
			job.charges = NULL;
			break;
		case BAD_NO_CONFIG:
			in.config = NULL;
			break;
		}
		print_message("# breakage %d\n", k);
		assert_int_equal(tj_admit(&in, &res), -EINVAL);
		assert_null(res);
	}
	assert_int_equal(tj_admit(NULL, NULL), -EINVAL);
}

static void test_reason_index(void **state)
{
	assert_int_equal(tj_admission_reason_index(TJ_ADMISSION_REASON_RESOURCES), 0);
	assert_int_equal(tj_admission_reason_index(TJ_ADMISSION_REASON_PRIORITY), 1);
	assert_int_equal(tj_admission_reason_index(TJ_ADMISSION_REASON_QUOTA), 2);
	assert_int_equal(tj_admission_reason_index(TJ_ADMISSION_REASON_NEVER), 3);
	assert_int_equal(tj_admission_reason_index("Other"), -1);
	assert_int_equal(tj_admission_reason_index(""), -1);
	assert_int_equal(tj_admission_reason_index(NULL), -1);
}

/* When a waiting job's status is written again. */
static void test_worth_telling(void **state)
{
	static const struct {
		const char *name;
		int old_position, position, old_length, length, old_free, free;
		int64_t old_start, start;
		const char *old_reason, *reason;
		bool tell;
	} tells[] = {
		{ "nothing moved", 7, 7, 20, 20, 1, 1, 1000, 1000, "Priority", "Priority", false },
		{ "the reason changed", 7, 7, 20, 20, 1, 1, 1000, 1000, "Priority", "QuotaExceeded",
		  true },
		{ "Priority to Resources near the head", 5, 5, 20, 20, 1, 0, 0, 0, "Priority",
		  "Resources", true },
		{ "Resources to Priority into the first places", 6, 5, 20, 20, 0, 1, 0, 0,
		  "Resources", "Priority", true },
		{ "Priority to Resources far back", 7, 7, 20, 20, 1, 0, 1000, 1000, "Priority",
		  "Resources", false },
		{ "Resources to Priority far back, one step", 8, 7, 20, 20, 0, 1, 0, 0, "Resources",
		  "Priority", false },
		{ "Resources to Priority far back, a quarter of its place", 40, 30, 60, 60, 0, 1, 0,
		  0, "Resources", "Priority", true },
		{ "Priority far back to Preempted", 7, 7, 20, 20, 1, 1, 0, 0, "Priority",
		  "Preempted", true },
		{ "the start moved within the slop", 7, 7, 20, 20, 1, 1, 1000, 1060, "Priority",
		  "Priority", false },
		{ "the start moved past it", 7, 7, 20, 20, 1, 1, 1000, 1061, "Priority", "Priority",
		  true },
		{ "the start became unknown", 7, 7, 20, 20, 1, 1, 1000, 0, "Priority", "Priority",
		  true },
		{ "one step near the head", 5, 4, 20, 20, 1, 1, 0, 0, "Priority", "Priority",
		  true },
		{ "one step far back", 41, 40, 60, 60, 1, 1, 0, 0, "Priority", "Priority", false },
		{ "a quarter of its place", 50, 40, 60, 60, 1, 1, 0, 0, "Priority", "Priority",
		  true },
		{ "the head sees the queue grow", 1, 1, 20, 21, 1, 1, 0, 0, "Resources",
		  "Resources", true },
		{ "the head sees a node free", 1, 1, 20, 20, 1, 2, 0, 0, "Resources", "Resources",
		  true },
		{ "a job behind sees the queue grow", 3, 3, 20, 21, 1, 2, 0, 0, "Priority",
		  "Priority", false },
	};

	for (size_t i = 0; i < sizeof(tells) / sizeof(tells[0]); i++) {
		struct tj_admission_decision old = { .verdict = TJ_ADMISSION_WAITING,
			                             .position = tells[i].old_position,
			                             .queue_length = tells[i].old_length,
			                             .free_nodes = tells[i].old_free,
			                             .expected_start = tells[i].old_start };
		struct tj_admission_decision d = old;

		d.position = tells[i].position;
		d.queue_length = tells[i].length;
		d.free_nodes = tells[i].free;
		d.expected_start = tells[i].start;
		snprintf(old.reason, sizeof(old.reason), "%s", tells[i].old_reason);
		snprintf(d.reason, sizeof(d.reason), "%s", tells[i].reason);
		if (tj_admission_worth_telling(&old, &d) != tells[i].tell)
			fail_msg("case %s: want %d", tells[i].name, tells[i].tell);
	}
	/* A job left untried, looked at for the first time far back: told, whatever its reason. */
	{
		struct tj_admission_decision old = { .verdict = TJ_ADMISSION_WAITING,
			                             .position = 30,
			                             .queue_length = 60,
			                             .untried = true,
			                             .reason = TJ_ADMISSION_REASON_PRIORITY };
		struct tj_admission_decision d = old;

		d.untried = false;
		assert_true(tj_admission_worth_telling(&old, &d));
		d.untried = true;
		assert_false(tj_admission_worth_telling(&old, &d));
	}
}

/* An untried job keeps what the last look at it found, in its new place; one tried, or one whose
 * status tells no look (admitted, or untried itself), is left as it is. */
static void test_keep_last_look(void **state)
{
	static const struct {
		const char *name;
		bool untried, told_untried;
		enum tj_admission_verdict told_verdict;
		const char *reason; /* after */
		int64_t start;
		int free;
		bool still_untried;
	} looks[] = {
		{ "untried, the last look told", true, false, TJ_ADMISSION_WAITING, "Resources",
		  NOW + 600, 2, false },
		{ "tried", false, false, TJ_ADMISSION_WAITING, "Priority", 0, 0, false },
		{ "untried, told untried", true, true, TJ_ADMISSION_WAITING, "Priority", 0, 0,
		  true },
		{ "untried, told admitted", true, false, TJ_ADMISSION_ADMITTED, "Priority", 0, 0,
		  true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(looks) / sizeof(looks[0]); i++) {
		struct tj_admission_decision told = { .verdict = looks[i].told_verdict,
			                              .untried = looks[i].told_untried,
			                              .position = 3,
			                              .queue_length = 9,
			                              .expected_start = NOW + 600,
			                              .free_nodes = 2 };
		struct tj_admission_decision d = { .verdict = TJ_ADMISSION_WAITING,
			                           .untried = looks[i].untried,
			                           .position = 7,
			                           .queue_length = 12 };

		print_message("# case: %s\n", looks[i].name);
		snprintf(told.reason, sizeof(told.reason), "Resources");
		snprintf(told.message, sizeof(told.message), "told");
		snprintf(d.reason, sizeof(d.reason), "Priority");
		snprintf(d.message, sizeof(d.message), "not told");
		tj_admission_keep_last_look(&d, &told);
		assert_string_equal(d.reason, looks[i].reason);
		assert_string_equal(d.message,
		                    d.untried || !looks[i].untried ? "not told" : "told");
		assert_int_equal(d.expected_start, looks[i].start);
		assert_int_equal(d.free_nodes, looks[i].free);
		assert_int_equal(d.untried, looks[i].still_untried);
		assert_int_equal(d.position, 7);
		assert_int_equal(d.queue_length, 12);
	}
}

/* tj_admission_order: the order tj_admit decides in, with what placed each job. */
static void test_order(void **state)
{
	/* In class 0 the restart goes first whatever its tier, then c's job of the high tier
	 * whatever its fair share, then the others by fair share plus age: a/late (its own
	 * priority 5) takes the place in time of a/early, a week old, and its age, and a/early
	 * moves to late's. Class -1 comes last. */
	const struct tj_admission_job jobs[] = {
		{ .key = "a/early",
		  .namespace = "a",
		  .class_index = 0,
		  .fair_share = 5000,
		  .creation_time = NOW - 7 * 86400 },
		{ .key = "a/late",
		  .namespace = "a",
		  .class_index = 0,
		  .fair_share = 5000,
		  .priority = 5,
		  .creation_time = NOW - 3600 },
		{ .key = "b/fresh",
		  .namespace = "b",
		  .class_index = 0,
		  .fair_share = 10000,
		  .creation_time = NOW },
		{ .key = "c/vip",
		  .namespace = "c",
		  .class_index = 0,
		  .fair_share = 100,
		  .tier = 1000,
		  .creation_time = NOW },
		{ .key = "c/cpu",
		  .namespace = "c",
		  .class_index = -1,
		  .fair_share = 100,
		  .creation_time = NOW },
		{ .key = "d/restart",
		  .namespace = "d",
		  .class_index = 0,
		  .restart = true,
		  .tier = -1000,
		  .creation_time = NOW },
	};
	static const struct {
		size_t job;
		int64_t place;
		int age_points;
		int64_t score;
	} want[] = {
		{ 5, NOW, 0, 0 },           { 3, NOW, 0, 100 },
		{ 2, NOW, 0, 10000 },       { 1, NOW - 7 * 86400, 1000, 6000 },
		{ 0, NOW - 3600, 5, 5005 }, { 4, NOW, 0, 100 },
	};
	struct tj_admission_rank ranks[6];

	(void)state;
	assert_int_equal(tj_admission_order(jobs, 6, 1, NOW, ranks), 0);
	for (size_t k = 0; k < 6; k++) {
		print_message("#   rank %zu\n", k);
		assert_int_equal(ranks[k].job, want[k].job);
		assert_int_equal(ranks[k].place, want[k].place);
		assert_int_equal(ranks[k].age_points, want[k].age_points);
		assert_int_equal(ranks[k].score, want[k].score);
	}
	/* A class the input does not have. */
	assert_int_equal(tj_admission_order(jobs, 6, 0, NOW, ranks), -EINVAL);
	assert_int_equal(tj_admission_order(NULL, 0, 0, NOW, ranks), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admission_table), cmocka_unit_test(test_stats_per_class),
		cmocka_unit_test(test_empty_input),     cmocka_unit_test(test_invalid_input),
		cmocka_unit_test(test_reason_index),    cmocka_unit_test(test_worth_telling),
		cmocka_unit_test(test_order),           cmocka_unit_test(test_keep_last_look),
	};
	return cmocka_run_group_tests_name("admission", tests, NULL, NULL);
}
