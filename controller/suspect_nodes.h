/* Suspect nodes at the edge: the failure history of every node, fed by the pod and node
 * caches, judged by reconcilers/policy/suspect.h, and what the judgement writes: the node's
 * failures annotation, and for a node found suspect its taint and mark, an Event on the
 * Node, one on each TrainJob involved naming the others, and the metrics.
 *
 * Every replica keeps the history, from the pods it sees fail and from the nodes'
 * annotations, so that a new leader, or a restarted controller, judges with the whole of it;
 * only the leader writes. A node's writes go out one at a time: a change seen while one is
 * in flight is written after it. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "controller/executor/recorder.h"
#include "controller/metrics/std_metrics.h"
#include "informers/node.h"
#include "informers/pod.h"
#include "kube/client.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/policy/suspect.h"
#include "reconcilers/settings.h"

/* The most failures kept in memory for every node together; the oldest go first. */
#define TJ_SUSPECT_HISTORY_MAX 4096

struct tj_suspect_nodes_config {
	struct tj_client *client;             /* borrowed */
	struct tj_recorder *recorder;         /* borrowed; NULL records no events */
	const struct tj_std_metrics *metrics; /* borrowed; NULL keeps no metrics */
	tj_node_lookup_fn node_lookup;        /* the Node cache */
	void *node_ctx;
	/* The uid of the TrainJob "namespace/name" (NULL if it is not cached), called with
	 * node_ctx, for its events: kubectl describe finds a job's events by uid too. NULL: the
	 * events name no uid. */
	const char *(*job_uid)(void *ctx, const char *key);
	uint64_t (*clock)(void); /* unix nanoseconds; NULL reads CLOCK_REALTIME */
};

struct tj_suspect_nodes;

int tj_suspect_nodes_new(const struct tj_suspect_nodes_config *config,
                         struct tj_suspect_nodes **ret);

/* The policy (borrowed until the next call or the free); NULL: the defaults. Every node
 * with a history is judged again. */
void tj_suspect_nodes_set_policy(struct tj_suspect_nodes *s,
                                 const struct tj_suspect_policy *policy);

/* Only the leader writes; on becoming it, every node with a history is judged again. */
void tj_suspect_nodes_set_leading(struct tj_suspect_nodes *s, bool leading);

/* A pod changed (old NULL when added, pod NULL when deleted): a pod that now stands for a
 * failure (tj_suspect_failure_of_pod) joins the history, and its node is judged. */
void tj_suspect_nodes_pod_changed(struct tj_suspect_nodes *s, const struct tj_pod *old,
                                  const struct tj_pod *pod);

/* A failure seen otherwise (tj_suspect_failure_of_restart): it joins the history, and its
 * node is judged. */
void tj_suspect_nodes_record(struct tj_suspect_nodes *s, const struct tj_node_failure *f);

/* A node changed (old NULL when added, node NULL when deleted): its annotation joins the
 * history, a removed taint clears its mark, and it is judged. */
void tj_suspect_nodes_node_changed(struct tj_suspect_nodes *s, const struct tj_node *old,
                                   const struct tj_node *node);

/* Whether a failure on node is blamed on the node: it carries the suspect taint, or the
 * history makes it suspect already (its taint may still be on its way). False while the
 * policy is off. */
bool tj_suspect_nodes_blames(const struct tj_suspect_nodes *s, const char *node);

/* Cancels the writes in flight and frees. Accepts NULL; returns NULL. */
struct tj_suspect_nodes *tj_suspect_nodes_free(struct tj_suspect_nodes *s);
