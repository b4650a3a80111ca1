/* The admitter's ledger, per node: what each node of the node cache offers (its GPU class,
 * whether it takes new pods, its allocatable, its topology domain), and what the pods that
 * use it hold on it (reconcilers/admission/capacity.h judges each pod), with the nodes kept in name
 * order. All of it is kept between admission cycles and worked out again only where
 * something changed, so that a cycle reads every node without sorting thousands of names,
 * judging every node's health and class, or walking every pod of the cluster (thousands of
 * nodes each run tens of pods of no TrainJob, and most cycles follow the change of one of
 * them).
 *
 * What a node's entry keeps depends on the node and its pods alone: what it offers, judged
 * from its object and the config; what its pods use; the ends already known (a pod being
 * deleted ends at its deletionTimestamp); and, per TrainJob, what its pods there hold until
 * the job's walltime ends, which the cycle reads from the job's status (or the queue) each
 * time, since a job's start moves it without any pod changing. The controller tells the
 * ledger of every node and every pod it hears of (tj_ledger_node_changed; tj_ledger_touch_pod,
 * the node the pod used and the one it uses now); a node the node cache no longer has is
 * forgotten. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "informers/node.h"
#include "informers/pod.h"
#include "informers/store.h"
#include "reconcilers/admission/admission.h"
#include "reconcilers/settings.h"

/* Pods of one TrainJob on the node whose end is its walltime's (none is being deleted). */
struct tj_ledger_group {
	/* Interned (informers/intern.h), one reference each: two groups name the same job and
	 * owner exactly when their pointers are equal. */
	char *job_key;   /* "namespace/name" */
	char *owner_uid; /* the pods' controller owner, NULL if none */
	int64_t grace;   /* their termination grace, seconds */
	struct tj_admission_resources held;
};

/* Pods being deleted: free at their deletionTimestamp. */
struct tj_ledger_release {
	int64_t at;
	struct tj_admission_resources held;
};

/* GPUs of the class held by the pods of one namespace, for the config's namespace limits. */
struct tj_ledger_usage {
	char *namespace; /* owned */
	int64_t gpus;
};

struct tj_ledger_node {
	char *name; /* owned */
	/* What the node offers, judged from its object and the config; judged again only once
	 * the node or the config changed. */
	bool judged;
	uint64_t judged_at; /* the ledger's count of judgements then (tj_ledger_judgements) */
	int class_index;    /* its GPU class in the config, -1 for none */
	bool schedulable;   /* it takes new pods (tj_node_takes_new_pods) */
	struct tj_admission_resources allocatable; /* gpus of its class's resource */
	char *domain; /* owned; the value of the admission's topology label, NULL without */
	/* What its pods hold: */
	char *resource; /* owned; the GPU class's resource it was counted in, NULL for none */
	bool stale;     /* a pod of it changed since it was counted */
	uint64_t seen;  /* the ledger's count of orderings when the node cache last had it */
	struct tj_admission_resources used;
	struct tj_ledger_release *releases; /* owned */
	size_t n_releases;
	struct tj_ledger_group *groups; /* owned */
	size_t n_groups;
	struct tj_ledger_usage *usage; /* owned */
	size_t n_usage;
	/* owned array of owned "namespace/name": pods that hold an MPI launcher's place on
	 * another node (reconcilers/admission/launcher_hold.h), which the cycle judges itself */
	char **holders;
	size_t n_holders;
};

struct tj_ledger;

int tj_ledger_new(struct tj_ledger **ret);

/* Accepts NULL; returns NULL. */
struct tj_ledger *tj_ledger_free(struct tj_ledger *l);

/* pod (a version of it in the pod cache, before or after a change) uses a node: that node
 * is counted again when next read, and what is known of its TrainJob's gang is forgotten. */
void tj_ledger_touch_pod(struct tj_ledger *l, const struct tj_pod *pod);

/* Whether the running gang of attempt `attempt` of the TrainJob key ("namespace/name") whose
 * uid is uid is ending: a pod of the pod cache (pods, its TrainJob index) ends it
 * (tj_gang_ending_pod, reconcilers/admission/capacity.h). The answer is kept until a pod of
 * the job changes (tj_ledger_touch_pod) or the ledger is invalidated, so that a cycle asks in
 * O(1) for a job none of whose pods changed. false without pods or uid. */
bool tj_ledger_gang_ending(struct tj_ledger *l, const struct tj_store *pods, const char *key,
                           const char *uid, int attempt);

/* A node of the node cache changed (old: before, NULL when added; node: after, NULL when
 * deleted): it is judged again when next read, and the name order is made again when a node
 * came or went. */
void tj_ledger_node_changed(struct tj_ledger *l, const struct tj_node *old,
                            const struct tj_node *node);

/* Every node is judged and counted again, and the order made again, when next read (the
 * caches or the config may have changed unheard). */
void tj_ledger_invalidate(struct tj_ledger *l);

/* The nodes of the node cache (nodes; NULL: none), in name order, into *ret (an array the
 * ledger keeps until the next read, n of them in *ret_n): each judged with config when it
 * changed (a node event; config another than the last read's; a node missing from the
 * entries), and counted from pods when one of its pods changed. The entries of nodes the
 * cache no longer has are forgotten. 0 or -ENOMEM. */
int tj_ledger_read(struct tj_ledger *l, const struct tj_config *config,
                   const struct tj_store *nodes, const struct tj_store *pods,
                   struct tj_ledger_node *const **ret, size_t *ret_n);

/* Counts the times the order was made again: while it stays, the nodes of two reads are at
 * the same places of the array. */
uint64_t tj_ledger_layout(const struct tj_ledger *l);

/* Counts the judgements of nodes so far: a node judged after the count was n has a
 * judged_at greater than n. */
uint64_t tj_ledger_judgements(const struct tj_ledger *l);
