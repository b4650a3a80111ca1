/* What a pod holds, for the admission's ledger of capacity (DESIGN.md section 4,
 * "Admission"): on which node, why there, and until when. A pure judgement of one cached pod
 * and what the caller knows of its job; the admitter asks it for every pod of every node, so
 * that the queue sees the cluster as kube-scheduler does, whatever holds a node.
 *
 * The node, in this order:
 * - bound: spec.nodeName, where the kubelet runs it;
 * - pinned: the node our admission chose (the pin annotation), until the scheduler binds it;
 * - nominated: status.nominatedNodeName, the node kube-scheduler keeps for a pod while the
 *   pods it preempts there are leaving (it holds that node against pods of lower or equal
 *   priority, so counting it there is what the scheduler will do).
 * A pod that has Succeeded or Failed holds nothing; nor does a pod with no node at all (one
 * not scheduled yet, or held back by a scheduling gate).
 *
 * Until when, the first that applies:
 * - a pod being deleted: its metadata.deletionTimestamp, which the API server sets to the
 *   moment its grace period ends (the kubelet kills it then at the latest), whoever owns it;
 * - a pod of a job with a walltime: the job's deadline plus the pod's termination grace
 *   period, since at the deadline the pods are told to stop and may take that long;
 * - a pod of a gang that is ending (tj_gang_ending_pod: one of its ranks succeeded, so the
 *   others are finishing too): now, so that no job that would run past now is backfilled on
 *   its nodes, and the job waiting for them takes them as they come free;
 * - otherwise unknown (0): nothing says when it ends. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "informers/pod.h"

enum tj_hold_kind {
	TJ_HOLD_NONE,
	TJ_HOLD_BOUND,
	TJ_HOLD_PINNED,
	TJ_HOLD_NOMINATED,
};

struct tj_hold {
	enum tj_hold_kind kind;
	const char *node; /* borrowed from the pod; NULL with TJ_HOLD_NONE */
	int64_t end;      /* unix seconds; 0: unknown */
};

/* The hold of pod, whose job's walltime ends at job_deadline (unix seconds; 0 when it has
 * none, or the pod is not a TrainJob's). Writes every field of *ret. */
void tj_hold_of(const struct tj_pod *pod, int64_t job_deadline, struct tj_hold *ret);

/* Whether pod says that the gang of the TrainJob whose uid is job_uid, in its attempt attempt
 * (status.restartCount), is ending: it is one of that attempt's ranks (the pods of step node,
 * labelled with a rank) and it succeeded. The ranks of a gang finish together (torchrun's
 * workers leave when the training ends), so the others are on their way out, not held until
 * the walltime: the caller then counts the gang's nodes free from now. A pod of an earlier
 * attempt, one kept for its logs, another job's or a step's pod says nothing. */
bool tj_gang_ending_pod(const struct tj_pod *pod, const char *job_uid, int attempt);

/* "bound", "pinned", "nominated", "none": for logs and tests. */
const char *tj_hold_kind_name(enum tj_hold_kind kind);
