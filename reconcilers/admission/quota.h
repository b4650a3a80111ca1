/* What a pod counts for in a namespace's ResourceQuotas, judged before the pod exists, so that
 * the gang admission holds back a gang its quotas cannot hold instead of creating part of it
 * (the API server's quota admission refuses each create that would go past a quota). Pure.
 *
 * A quota counts a pod when the pod is in every scope the quota names (informers/
 * resource_quota.h), as the API server's pod evaluator judges it:
 * - Terminating: spec.activeDeadlineSeconds is set (>= 0); NotTerminating: it is not.
 * - BestEffort: no container, init container or pod-level resources request or limit CPU or
 *   memory (a pod that asks only for GPUs is BestEffort); NotBestEffort: the others.
 * - PriorityClass: the expression holds for spec.priorityClassName, taken as the value of a
 *   label that every pod has ("" without a class): Exists is a class named, In and NotIn
 *   compare the name, DoesNotExist holds for no pod.
 * - CrossNamespacePodAffinity: a pod (anti-)affinity term that names namespaces or has a
 *   namespace selector.
 * - Any other scope counts no pod.
 *
 * The resources a counted pod uses, in thousandths (as the quota's amounts):
 * - "pods" and "count/pods": 1 (1000);
 * - "requests.<name>", and cpu, memory, ephemeral-storage and hugepages-<size> without a
 *   prefix: the pod's request of that resource as the scheduler computes it (the larger of the
 *   containers' sum and the largest init container with the sidecars started before it, a
 *   container's limit standing for a request it lacks, pod-level CPU and memory replacing the
 *   containers', plus spec.overhead);
 * - "limits.<name>" for cpu, memory, ephemeral-storage and hugepages-<size>: the same over the
 *   limits, the overhead added only to the limits the pod has;
 * - anything else (services, persistentvolumeclaims, requests.storage, count/<other>, the limits
 *   of an extended resource such as limits.nvidia.com/gpu) is no pod's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/resource_quota.h"

/* Resources one pod's amounts may name; beyond that tj_quota_pod_of() is -E2BIG. */
#define TJ_QUOTA_POD_MAX_RESOURCES 16

struct tj_quota_amount {
	char *resource;  /* owned; "cpu", "nvidia.com/gpu" */
	int64_t request; /* thousandths */
	int64_t limit;   /* thousandths; 0 without one */
};

/* What one rendered pod counts for. */
struct tj_quota_pod {
	bool terminating, best_effort, cross_namespace;
	char *priority_class; /* owned; "" without one */
	struct tj_quota_amount amounts[TJ_QUOTA_POD_MAX_RESOURCES];
	size_t n_amounts;
};

/* Reads pod_spec (the "spec" object of a rendered pod) into a new struct tj_quota_pod, which
 * owns copies of what it keeps. -EINVAL for a quantity that is not one or is negative, -E2BIG
 * for more than TJ_QUOTA_POD_MAX_RESOURCES resources, -ENOMEM. */
int tj_quota_pod_of(const cJSON *pod_spec, struct tj_quota_pod **ret);

/* Accepts NULL; returns NULL. */
struct tj_quota_pod *tj_quota_pod_free(struct tj_quota_pod *p);

/* Whether quota q counts pod p (its scopes). */
bool tj_quota_counts(const struct tj_resource_quota *q, const struct tj_quota_pod *p);

/* What pod p uses of the quota's resource (a key of spec.hard), in thousandths; false when the
 * resource is not one a pod uses. */
bool tj_quota_usage(const struct tj_quota_pod *p, const char *resource, int64_t *ret);

/* "4", "500m", "1073741824": an amount in thousandths as a quantity, for messages. */
void tj_quota_format(char *buf, size_t size, int64_t milli);
