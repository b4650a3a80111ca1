/* Placement: whether kube-scheduler's filters would let a pod onto a node, judged before the
 * pod exists, so that the gang admission never pins a gang to nodes the scheduler would
 * refuse. Pure: a pod spec is compiled once (tj_placement_compile), then asked of node after
 * node (tj_placement_allows).
 *
 * The filters, each with the semantics of its kube-scheduler plugin, in the order the
 * scheduler runs them (the first that refuses is reported):
 * - TaintToleration: every taint of effect NoSchedule or NoExecute must be tolerated by one
 *   of spec.tolerations (PreferNoSchedule only scores). A toleration matches a taint when
 *   its effect is empty or the taint's, its key is empty or the taint's, and it is Exists or
 *   (Equal, the default) has the taint's value; an empty key with Exists tolerates every
 *   taint. The node's own state is not judged here: the taints kube-controller-manager and
 *   the kubelet set for it (keys under node.kubernetes.io/: not-ready, unreachable,
 *   unschedulable, the pressures) come and go with the node's condition, which
 *   reconcilers/policy/node_health.h judges; a placement says whether the node can ever take the
 *   pod, so that a node that is down for a while still counts for a job that could use it
 *   (NeverFits counts such nodes, as Slurm counts a partition's DOWN nodes).
 * - NodeAffinity: every entry of spec.nodeSelector must be a label of the node with that
 *   value, and, when spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
 *   is set, one of its nodeSelectorTerms must match (terms are ORed; an empty list matches no
 *   node). Within a term, matchExpressions (on labels: In, NotIn, Exists, DoesNotExist, and
 *   Gt and Lt, which compare the label and the one value as decimal integers, so that a label
 *   that is not one never matches) and matchFields (metadata.name In or NotIn one name) are
 *   ANDed; a term with neither matches no node. NotIn and DoesNotExist match a node without
 *   the label.
 * - NodeResourcesFit, its static half: the node's allocatable of every extended resource the
 *   pod requests (informers/resources.h) is at least the request. What other pods hold is
 *   counted by the admission, not here.
 *
 * A node keeps its first TJ_NODE_MAX_LABELS labels and TJ_NODE_MAX_EXTENDED extended
 * resources (informers/node.h); a constraint on one left out judges it absent. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/node.h"

/* Limits on what one pod spec may carry; beyond them tj_placement_compile() is -E2BIG. */
#define TJ_PLACEMENT_MAX_SELECTOR    64  /* entries of spec.nodeSelector */
#define TJ_PLACEMENT_MAX_TERMS       64  /* nodeSelectorTerms */
#define TJ_PLACEMENT_MAX_EXPRESSIONS 64  /* matchExpressions, and matchFields, of one term */
#define TJ_PLACEMENT_MAX_VALUES      256 /* values of one expression */
#define TJ_PLACEMENT_MAX_TOLERATIONS 64

/* Room for a reason with the longest taint key (253 bytes) and value (63), or resource name. */
#define TJ_PLACEMENT_WHY_MAX 384
/* Room for a problem of tj_placement_compile(): the field's path, and what is wrong there. */
#define TJ_PLACEMENT_PROBLEM_MAX 384

/* The constraints of one pod spec, compiled. */
struct tj_placement;

/* Compiles pod_spec (the "spec" object of a rendered pod) into a new placement, which owns
 * copies of what it keeps: the tree may be freed after. -EINVAL for a constraint that the API
 * server would refuse (an unknown operator, In without values, Gt with a value that is not an
 * integer, matchFields on another key than metadata.name, a toleration with an empty key that
 * is not Exists, a quantity that is not one...), -E2BIG beyond a limit above or beyond the
 * TJ_RESOURCES_MAX_EXTENDED extended resources that informers/resources.h keeps, -ENOMEM.
 * On -EINVAL and -E2BIG, problem (problem_size bytes, TJ_PLACEMENT_PROBLEM_MAX; may be NULL)
 * says which field and why: "spec.tolerations[2].operator: \"Gt\" is not Equal or Exists". */
int tj_placement_compile(const cJSON *pod_spec, struct tj_placement **ret, char *problem,
                         size_t problem_size);

/* Whether every filter above lets the pod onto node. When one does not, why (why_size bytes,
 * TJ_PLACEMENT_WHY_MAX; may be NULL) gets its reason in kube-scheduler's words:
 * "node(s) had untolerated taint {nvidia.com/gpu: present}",
 * "node(s) didn't match Pod's node affinity/selector", "Insufficient nvidia.com/gpu";
 * when all do, "". */
bool tj_placement_allows(const struct tj_placement *p, const struct tj_node *node, char *why,
                         size_t why_size);

/* A hash of the compiled constraints. Two placements equal by tj_placement_equal() have the
 * same hash, so that a caller can compute one set of eligible nodes per distinct placement
 * and share it among the jobs that have it. Compiling puts the constraints in one form
 * wherever their order or spelling does not change which nodes they allow: the nodeSelector
 * sorted by key, the values of an expression sorted and without duplicates, Gt and Lt bounds
 * as numbers, tolerations sorted without duplicates and without those of PreferNoSchedule
 * only, the default operator Equal spelled out, terms with no requirement dropped, requests
 * of 0 dropped and the rest sorted by name. The order of terms and of the expressions in a
 * term is kept. */
uint64_t tj_placement_hash(const struct tj_placement *p);

/* Whether a and b are the same constraints in that form, and so allow the same nodes. */
bool tj_placement_equal(const struct tj_placement *a, const struct tj_placement *b);

/* A compiled placement is shared by reference: a new one has one, which its compiler holds;
 * tj_placement_ref takes another (and returns p); tj_placement_unref drops one and frees the
 * placement with the last. Unref accepts NULL; returns NULL. A shared placement is never
 * changed: whoever holds it reads the same constraints. */
struct tj_placement *tj_placement_ref(struct tj_placement *p);
struct tj_placement *tj_placement_unref(struct tj_placement *p);
