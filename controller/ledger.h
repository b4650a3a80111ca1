/* The admitter's ledger of holds, per node: what the pods that use a node hold on it
 * (reconcilers/capacity.h judges each pod), kept between admission cycles and rebuilt for a
 * node only when one of its pods changed, so that a cycle reads what every node holds
 * without walking every pod of the cluster (thousands of nodes each run tens of pods of no
 * TrainJob, and most cycles follow the change of one of them).
 *
 * What a node's entry keeps depends on its pods alone: what they use; the ends already
 * known (a pod being deleted ends at its deletionTimestamp); and, per TrainJob, what its
 * pods there hold until the job's walltime ends, which the cycle reads from the job's status
 * (or the queue) each time, since a job's start moves it without any pod changing. The
 * controller tells the ledger of every pod it hears of (tj_ledger_touch_pod, the node the
 * pod used and the one it uses now); a node no cycle asked for again is forgotten. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "informers/pod.h"
#include "informers/store.h"
#include "reconcilers/admission.h"

/* Pods of one TrainJob on the node whose end is its walltime's (none is being deleted). */
struct tj_ledger_group {
	char *job_key;   /* owned; "namespace/name" */
	char *owner_uid; /* owned; the pods' controller owner, NULL if none */
	int64_t grace;   /* their termination grace, seconds */
	struct tj_adm_resources held;
};

/* Pods being deleted: free at their deletionTimestamp. */
struct tj_ledger_release {
	int64_t at;
	struct tj_adm_resources held;
};

/* GPUs of the class held by the pods of one namespace, for the config's namespace limits. */
struct tj_ledger_usage {
	char *namespace; /* owned */
	int64_t gpus;
};

struct tj_ledger_node {
	char *name;     /* owned */
	char *resource; /* owned; the GPU class's resource it was counted in, NULL for none */
	bool stale;     /* a pod of it changed since it was counted */
	uint64_t seen;  /* the stamp of the last cycle that read it */
	struct tj_adm_resources used;
	struct tj_ledger_release *releases; /* owned */
	size_t n_releases;
	struct tj_ledger_group *groups; /* owned */
	size_t n_groups;
	struct tj_ledger_usage *usage; /* owned */
	size_t n_usage;
	/* owned array of owned "namespace/name": pods that hold an MPI launcher's place on
	 * another node (reconcilers/launcher_hold.h), which the cycle judges itself */
	char **holders;
	size_t n_holders;
};

struct tj_ledger;

int tj_ledger_new(struct tj_ledger **ret);

/* Accepts NULL; returns NULL. */
struct tj_ledger *tj_ledger_free(struct tj_ledger *l);

/* pod (a version of it in the pod cache, before or after a change) uses a node: that node
 * is counted again when next read. */
void tj_ledger_touch_pod(struct tj_ledger *l, const struct tj_pod *pod);

/* Every node is counted again when next read (the caches may have changed unheard). */
void tj_ledger_invalidate(struct tj_ledger *l);

/* The entry of node name, counted from pods (the pod cache and its node index) when it is
 * stale, new, or was counted in another resource (gpus of resource; NULL: no GPUs); marked
 * seen at stamp. NULL without memory. */
const struct tj_ledger_node *tj_ledger_get(struct tj_ledger *l, const char *name,
                                           const char *resource, const struct tj_store *pods,
                                           uint64_t stamp);

/* Forgets the nodes not read at stamp. */
void tj_ledger_sweep(struct tj_ledger *l, uint64_t stamp);

/* Nodes it keeps, for tests. */
size_t tj_ledger_len(const struct tj_ledger *l);
