/* Node health: whether the node a worker runs on has failed it (DESIGN.md section 4,
 * "Failures"). A pure judgement of one cached Node, the failure policy of the config file,
 * a grace period and the time; the planner asks it for the node of every live worker.
 *
 * A node is unhealthy, in this order of precedence (the first that applies is reported):
 * - NodeDeleted: it is not in the Node cache any more (the caller passes NULL).
 * - NodeUnreachable: condition Ready is Unknown (the node lifecycle controller's verdict
 *   when the kubelet stops reporting), or the taint node.kubernetes.io/unreachable.
 * - NodeNotReady: condition Ready is False (the kubelet says so), or the taint
 *   node.kubernetes.io/not-ready.
 * - GPUUnhealthy: a condition of policy->gpu_conditions is True, or the node carries a taint
 *   whose key is in policy->gpu_taints (any value, any effect).
 * - NodeCordonedForFault: spec.unschedulable together with a condition of
 *   policy->fault_cordon_conditions that is True. A cordon alone is maintenance (a drain
 *   that is planned, an upgrade): new pods avoid the node, but a running job is left alone,
 *   since killing a gang of GPUs for a planned drain would cost more than it saves; the
 *   drain's own evictions, if any, are failures in their own right.
 * A node without a Ready condition (a kubelet that has not reported yet) is not judged by
 * it.
 *
 * The signal's age decides: the node's workers count as failed once it has been unhealthy
 * for grace_seconds. The age comes from the condition's lastTransitionTime or the taint's
 * timeAdded. A signal of unknown age (a deleted node; a taint without timeAdded, which the
 * API server writes only for NoExecute taints) counts as older than any grace period: there
 * is no later moment at which it would become more certain.
 *
 * The admission asks the same judgement of a node it would place new pods on
 * (tj_node_takes_new_pods), with the node's taints against the class's tolerations. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "informers/node.h"
#include "reconcilers/settings.h"

#define TJ_TAINT_NOT_READY   "node.kubernetes.io/not-ready"
#define TJ_TAINT_UNREACHABLE "node.kubernetes.io/unreachable"

enum tj_node_fault {
	TJ_NODE_HEALTHY,
	TJ_NODE_DELETED,
	TJ_NODE_UNREACHABLE,
	TJ_NODE_NOT_READY,
	TJ_NODE_GPU_UNHEALTHY,
	TJ_NODE_CORDONED_FOR_FAULT,
};

#define TJ_NODE_DETAIL_MAX 192

struct tj_node_health {
	enum tj_node_fault fault;
	int64_t since; /* unix seconds the signal began; 0 if unknown */
	/* What was seen, for messages: "condition Ready is Unknown (NodeStatusUnknown)",
	 * "taint nvidia.com/gpu.unhealthy", "the node was deleted"; "" when healthy. */
	char detail[TJ_NODE_DETAIL_MAX];
	bool failed;  /* unhealthy for at least the grace period */
	int64_t wait; /* unhealthy, not failed yet: seconds until it will be; else 0 */
};

/* The reason a person and the metric see: "NodeDeleted", "NodeUnreachable", "NodeNotReady",
 * "GPUUnhealthy", "NodeCordonedForFault"; "" for TJ_NODE_HEALTHY. */
const char *tj_node_fault_reason(enum tj_node_fault fault);

/* Judges node (NULL: deleted) at time now. policy NULL means the defaults. Writes every
 * field of *ret. */
void tj_node_health_judge(const struct tj_node *node, const struct tj_failure_policy *policy,
                          int64_t grace_seconds, int64_t now, struct tj_node_health *ret);

/* Whether the admission may place new pods of class cls (NULL: no class) on node: Ready, not
 * cordoned, healthy (tj_node_health_judge), and no NoSchedule or NoExecute taint that the
 * class does not tolerate (an empty key with Exists tolerates every taint, an empty effect
 * matches every effect, Exists ignores the value, as Kubernetes rules). */
bool tj_node_takes_new_pods(const struct tj_node *node, const struct tj_gpu_class *cls,
                            const struct tj_failure_policy *policy, int64_t now);

/* The pods a node takes: its allocatable `pods`, which every kubelet reports (110 by
 * default); INT64_MAX for a node that reports none, which the scheduler's own check does not
 * limit either. */
int64_t tj_node_pod_slots(const struct tj_node *node);
