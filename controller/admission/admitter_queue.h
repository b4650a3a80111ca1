/* The admitter's queue (controller/admission/admitter.c runs its cycles): its entries, one per job
 * that waits for its gang or was admitted, and the snapshot of the caches that a cycle
 * decides on (reconcilers/admission/admission.h: the nodes in name order, what every pod holds on
 * them, the gangs admitted whose pods the cache does not show yet, and the waiting jobs in
 * the order of the last cycle). Internal to the admitter. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "controller/admission/accounting.h"
#include "controller/admission/eligibility.h"
#include "controller/admission/ledger.h"
#include "controller/config/config.h"
#include "informers/informers.h"
#include "reconcilers/admission/admission.h"
#include "reconcilers/admission/placement.h"
#include "reconcilers/admission/quota.h"
#include "reconcilers/plan/plan.h"

enum tj_admitter_state {
	TJ_ADMITTER_WAITING,  /* in the queue */
	TJ_ADMITTER_ADMITTED, /* admitted, waiting for the plan that creates the gang */
	TJ_ADMITTER_CREATED,  /* the gang's creates were sent; its nodes stay reserved until the
	                       * job's next plan, by when its pods are in the cache */
	TJ_ADMITTER_STARTING, /* its pods exist, but no status has recorded the start yet: the plan
	                       * that will (a newer plan can supersede the one that created the
	                       * pods, and drop its bookkeeping) still announces the admission as it
	                       * was */
};

/* One job of the queue, keyed "namespace/name". */
struct tj_admitter_entry {
	/* From here to gpu_class, what each cycle reads of every entry, together in memory at
	 * the start of it, which an iteration of the store fetches ahead (informers/store.h). */
	enum tj_admitter_state state;
	int num_nodes, num_pods;
	struct tj_admission_resources request; /* of one pod; gpus of the class's resource */
	int32_t priority;
	int tier; /* the priority of its QOS tier */
	/* Its tier's preemption: the tiers it may preempt (settings.h), after how long. */
	uint32_t preempts;
	int64_t preempt_after;
	bool backfill_reserved_nodes; /* its tier's (settings.h) */
	unsigned qos;                 /* its tier's index (qos.h); 32 or more: none */
	int64_t creation_time;
	int64_t walltime;
	int64_t grace; /* its pods' terminationGracePeriodSeconds */
	bool restart;
	int64_t not_before; /* unix seconds: no start before (a restart's backoff); 0: none */
	bool decided;       /* decision holds the last cycle's verdict */
	size_t rank; /* its place in the last cycle's order (SIZE_MAX: none): the next cycle's */
	struct tj_admission_resources
	        launcher; /* of the launcher admitted with the gang; pods 0: none */
	char **excluded;  /* owned array of owned names: nodes its pods must avoid */
	size_t n_excluded;
	/* A job without a GPU class whose pods ask for a class's extended resource (GPUs under
	 * a generic runtime such as Kubeflow's torch-distributed): per class of the config, what
	 * one pod and the launcher ask of its resource (0: nothing); owned; NULL for a job of
	 * a class, or asking for no class's resource. Each cycle queues it in the class where
	 * its placement allows the most nodes (the first of the config on a tie). */
	struct tj_admission_resources *class_requests; /* n_classes pairs: request, launcher */
	size_t n_class_requests;
	/* A job without a GPU class that asks for an extended resource no class offers: no
	 * class says which nodes offer it, so the scheduler alone places it. */
	bool unplaceable;
	/* The nodes its pods may go to as the scheduler judges them (its rendered pod's node
	 * selector, affinity, tolerations and extended requests); owned; NULL: every node of
	 * its class (a spec the placement could not read, which the API server refuses). */
	struct tj_placement *placement;
	/* namespace, interned (informers/intern.h) by the first cycle that reads the entry: the
	 * jobs of a namespace share one copy, which the order of the queue finds in cache and
	 * compares by pointer. NULL: not yet, or no memory (the cycle reads namespace). */
	char *shared_namespace;
	/* gpu_class's index in the config (-1: none there) of the epoch class_epoch
	 * (tj_admitter_source.config_epoch); 0: not looked up since gpu_class was written. */
	uint64_t class_epoch;
	int class_index;
	/* Its namespace (a DNS label: its first 64 bytes hold it), which the order of the queue
	 * compares, next to what is read with it. */
	char namespace[TJ_NAME_MAX];
	char gpu_class[TJ_NAME_MAX]; /* "" for none */
	char key[TJ_STORE_KEY_MAX];
	struct tj_admission_decision decision; /* nodes always NULL: the names are below */
	/* ADMITTED and CREATED: per pod, its node. */
	char **nodes; /* owned array of owned strings */
	size_t n_nodes;
	/* ADMITTED, CREATED: the node of the launcher admitted with the gang. */
	char *launcher_node; /* owned; NULL without */
	uint64_t admitted_ms;
	/* ADMITTED, CREATED, STARTING: the cycle's clock (unix seconds) at the admission. The
	 * job's walltime counts from about then, and until its status says so, the admission
	 * is what tells when the gang gives its nodes back (for the head's reservation). */
	int64_t admitted_at;
	/* CREATED: when the plan that creates the gang started; and whether a later plan
	 * wanted its pods again before the cache showed them (tj_admitter_created_again). */
	uint64_t created_ms;
	bool lagging;
	/* CREATED: the job's first plan after the creates was made once the cache had shown
	 * every pod they made (creates_shown), or once the wait for them had ended without it
	 * (a deadline, a failed write): judged. */
	bool creates_judged, creates_shown;
	/* ADMITTED: when the event that started its cycle came, when the cycle started, and
	 * when it was admitted (uv_hrtime), for the latency of the admission. */
	uint64_t trigger_ns, cycle_ns, admitted_ns;
	/* Of that cycle: the time it took to read the caches and to decide, and the CPU time
	 * of the loop's thread until the admission (the rest of the wall time, other processes
	 * had the CPU). */
	uint64_t snapshot_ns, decide_ns, cpu_ns;
	/* The loop thread's CPU clock at the event: from it to the creates, the controller's
	 * own work (its wall time less the time other processes had the CPU). */
	uint64_t trigger_cpu_ns;
	/* Its run-queue wait then: from it to the creates, the time other processes of the
	 * machine kept the ready thread from a CPU. */
	uint64_t trigger_wait_ns;
	uint64_t held_ns; /* of the wait for the cycle, what the cycles' share held it back */
	/* What one pod and the launcher count for in the namespace's ResourceQuotas (owned;
	 * NULL: nothing read, or no launcher). */
	struct tj_quota_pod *quota_pod, *quota_launcher;
};

extern const struct tj_store_ops tj_admitter_entry_ops;

/* The nodes that refused a job's pinned pods, each until a time (reconcilers/plan/plan.h,
 * plan.refused), keyed "namespace/name" as the entries; kept apart from the entry, which a
 * given-back gang's plan drops before the next one queues it again. */
struct tj_admitter_refusals {
	char key[TJ_STORE_KEY_MAX];
	char nodes[TJ_PLAN_MAX_REFUSED][TJ_NAME_MAX];
	uint64_t until_ms[TJ_PLAN_MAX_REFUSED]; /* the loop's clock */
	size_t n;
	/* The API server refused the gang's creates: it waits, undecided, until then. */
	uint64_t hold_until_ms;
};

extern const struct tj_store_ops tj_admitter_refusals_ops;

/* Adds the nodes to r (a node already there has its time renewed; when r is full, the
 * refusal that ends first makes room), each refused until until_ms. */
void tj_admitter_refusals_add(struct tj_admitter_refusals *r, const char (*nodes)[TJ_NAME_MAX],
                              size_t n, uint64_t until_ms);

/* Frees an entry and what it owns (the store's free). */
void tj_admitter_entry_free(void *obj);
void tj_admitter_entry_drop_nodes(struct tj_admitter_entry *e);
void tj_admitter_entry_drop_excluded(struct tj_admitter_entry *e);

/* Back into the queue, undecided: the next cycle decides it with the others. */
void tj_admitter_entry_requeue(struct tj_admitter_entry *e);

/* A cycle compares each entry's decision last told with its new one
 * (tj_admission_worth_telling): the entries lie apart in memory, so a walk over them in
 * order fetches the told decision's fields (those before its texts, and the reason) of the
 * entry a few places ahead meanwhile, with this. */
static inline void tj_admitter_entry_fetch_told(const struct tj_admitter_entry *e)
{
	const char *d = (const char *)&e->decision;

	for (size_t at = 0; at < offsetof(struct tj_admission_decision, message); at += 64)
		__builtin_prefetch(d + at);
}

/* How many places ahead a walk over items that lie apart in memory (the ledger's nodes, the
 * queue's entries) fetches the ones it comes to. */
#define TJ_ADMITTER_FETCH_AHEAD 8

/* How long a created gang's pods may take to show in the cache before a plan that wants
 * them again has the job decided again: a watch far behind an API server under load, or a
 * relist after it failed, shows them tens of seconds after their creates were answered. */
#define TJ_ADMITTER_CREATED_PATIENCE_MS 120000

enum tj_admitter_again {
	TJ_ADMITTER_WAIT_FOR_CACHE, /* the pods exist: wait until the cache shows them */
	TJ_ADMITTER_CREATE_AGAIN,   /* the same pods again, on the same nodes */
	TJ_ADMITTER_DECIDE_AGAIN,   /* back into the queue */
};

/* What a plan at now_ms that wants want of the job of e, whose gang was created (its
 * creates all answered; TJ_ADMITTER_CREATED), leads to. Within the patience after the
 * creates, unless want's pods must avoid one of the gang's nodes (a failure there) or the
 * cache has shown every pod the creates made (e->creates_shown: those it lacks now were
 * deleted since), the cache is behind: wait for it. Deciding again could place a second
 * gang where the first one's pods, not in the cache yet, already are. Otherwise the whole
 * gang missing is created again on its nodes, which are still held for it; anything else
 * (a restart's replacements, part of the gang) is decided again. */
/* Whether want asks for the gang e was admitted with: as many pods, and a launcher's place
 * if and only if one was admitted. */
bool tj_admitter_same_gang(const struct tj_admitter_entry *e, const struct tj_plan_want *want);

enum tj_admitter_again tj_admitter_created_again(const struct tj_admitter_entry *e,
                                                 const struct tj_plan_want *want, uint64_t now_ms);

/* The store of a reflector, NULL without one. */
const struct tj_store *tj_admitter_store_of(const struct tj_reflector *r);

/* A node by name, through a sorted index. */
struct tj_admitter_node_ref {
	const char *name;
	size_t index;
};

/* The index of the node named name in refs (n, sorted by name), -1 if none. */
ssize_t tj_admitter_find_node(const struct tj_admitter_node_ref *refs, size_t n, const char *name);

/* A TrainJob's pods on a node of the snapshot, as the ledger groups them. */
struct tj_admitter_group {
	const char *job_key, *owner_uid; /* the ledger's (interned) */
	size_t node;                     /* into the snapshot's nodes */
	struct tj_admission_resources held;
	int64_t grace;
	/* The cache's of job_key, if these pods are its (their owner's uid is its uid); NULL:
	 * none, or another of the same name. */
	const struct tj_trainjob *job;
};

/* What a cycle builds from the caches; freed at its end. */
struct tj_admitter_snapshot {
	struct tj_admission_node *nodes; /* their names and domains borrowed from the ledger */
	struct tj_admitter_node_ref *refs;
	size_t n_nodes;
	/* The ledger's nodes it read, and per node of the snapshot its place among them
	 * (SIZE_MAX for a node that is gone, tj_admitter_gone_node). */
	struct tj_eligibility_nodes read;
	size_t *read_at;
	struct tj_admission_release *releases;
	size_t n_releases, cap_releases;
	/* The groups of the ledger's nodes read (tj_ledger_group), node by node, each with its
	 * node and its TrainJob as the walltime ends looked them up: the running gangs
	 * (admitter_qos.h) are read from them, without the ledger's nodes or the cache. */
	struct tj_admitter_group *groups;
	size_t n_groups, cap_groups;
	struct tj_admission_usage *usage;
	size_t n_usage, cap_usage;
	struct tj_admission_job *jobs;
	struct tj_admitter_entry **job_entries;
	size_t n_jobs;
	size_t *excluded; /* the jobs' excluded nodes, as indexes */
	/* The distinct placements of the jobs, each with the nodes it allows (a flag per
	 * node; NULL where it allows every node of its class), which the jobs share. */
	struct tj_admitter_eligibility *eligibility;
	size_t n_eligibility, cap_eligibility;
	/* The limits of the ResourceQuotas of the jobs' namespaces, and what each job's pods
	 * use of them (the jobs' charges point into it). */
	struct tj_admission_quota_limit *quota_limits;
	size_t n_quota_limits;
	struct tj_admission_quota_charge *charges;
	size_t n_charges, cap_charges;
	/* The running gangs a queued job may preempt, and what they hold on each node
	 * (controller/admission/admitter_qos.h). */
	struct tj_admission_running *running;
	size_t n_running;
	struct tj_admission_hold *holds;
	/* The nodes the preempting jobs chose (their claimed point into it). */
	size_t *claims;
	/* The QOS tiers' GPU limits of the queued jobs' namespaces (admitter_qos.h). */
	struct tj_admission_tier_limit *tier_limits;
	size_t n_tier_limits;
	/* The decision's input over all of the above (tj_admit; the waiting messages deferred),
	 * and what it holds of the config: the class names, and the namespace limits of the
	 * classes it has. It points into the snapshot, which must not move once built. */
	const char **class_names;
	struct tj_admission_quota *quotas;
	struct tj_admission_config adm_config;
	struct tj_admission_input input;
	bool oom;
};

struct tj_admitter_eligibility {
	const struct tj_placement *placement; /* borrowed from an entry; shared by equal ones */
	int class_index;
	bool *allowed;    /* owned; per node of the snapshot; NULL: every node of the class */
	size_t n_allowed; /* nodes of the class it allows */
	/* owned, TJ_PLACEMENT_WHY_MAX bytes (apart from the array, which grows): why the
	 * scheduler would refuse the first node of the class it does not allow */
	char *why;
};

/* A node of a GPU class deleted a short while ago, as a node being replaced is: until
 * TJ_ADMITTER_GONE_MS after its deletion (or until a node of its name is back) the snapshot
 * keeps it as a node that takes no new pods, so that NeverFits still counts it, as Slurm
 * counts a partition's DOWN nodes. Its labels are gone with it: every job of its class may
 * use it, for NeverFits, which at worst lets a job with a node selector wait that long
 * before it fails. */
#define TJ_ADMITTER_GONE_MS  (10 * 60 * 1000)
#define TJ_ADMITTER_MAX_GONE 256

struct tj_admitter_gone_node {
	char name[TJ_NAME_MAX];
	char gpu_class[TJ_NAME_MAX];
	struct tj_admission_resources allocatable; /* gpus of the class's resource */
	uint64_t until_ms;                         /* the loop's clock */
};

/* Remembers node, which the node cache has just dropped, in gone (n of TJ_ADMITTER_MAX_GONE),
 * if it is of a GPU class of config; when gone is full, the node remembered longest ago
 * makes room. */
void tj_admitter_gone_add(struct tj_admitter_gone_node *gone, size_t *n,
                          const struct tj_config *config, const struct tj_node *node,
                          uint64_t now_ms);

/* What the snapshot reads. */
struct tj_admitter_source {
	const struct tj_config *config;
	struct tj_informers *informers;           /* TrainJob, Pod and Node caches */
	struct tj_store *entries;                 /* the queue's entries */
	struct tj_store *refusals;                /* struct tj_admitter_refusals; NULL: none */
	const struct tj_admitter_gone_node *gone; /* nodes deleted a short while ago */
	size_t n_gone;
	/* What each node offers and what the pods hold on it, kept between cycles
	 * (controller/admission/ledger.h), and the nodes the jobs' placements allow
	 * (controller/admission/eligibility.h), whose placements the snapshot shares among equal
	 * ones; the placements it asks for are marked with stamp, a number no earlier snapshot
	 * used, and the others forgotten. */
	struct tj_ledger *ledger;
	struct tj_eligibility *eligibility;
	uint64_t stamp;
	/* The number of the config among those the queue was given, counted from 1: the
	 * entries' classes looked up under it hold until the next; 0: looked up every cycle. */
	uint64_t config_epoch;
	/* The victims chosen by earlier cycles (admitter_qos.h); NULL: none. */
	struct tj_store *preemptions;
	/* The deleted jobs' accounting records (controller/admission/accounting.h); NULL: none. */
	struct tj_accounting *accounting;
};

/* Builds *s (zeroed) from src at now (unix seconds; now_ms: the loop's clock, for the
 * admitted gangs whose plan never came: they go back to the queue). 0 or -ENOMEM; either
 * way, tj_admitter_snapshot_clear frees it (and zeroes it for the next build). */
int tj_admitter_snapshot_build(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s,
                               int64_t now, uint64_t now_ms);

void tj_admitter_snapshot_clear(struct tj_admitter_snapshot *s);

/* The ResourceQuota limits of the jobs of s (built by tj_admitter_snapshot_build) and their
 * charges, from src's quota cache (admitter_quota.c); the gangs admitted whose pods the
 * quotas may not count yet count as used. 0 or -ENOMEM. */
int tj_admitter_quotas_build(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s);
