/* ResourceQuota projection (v1): what a namespace's quotas allow and already hold, so that the
 * gang admission waits for a gang the quota cannot hold now instead of creating part of it
 * (reconcilers/admission/quota.h says what a pod counts for).
 *
 * Every amount is in thousandths of the resource's unit, rounded up as the API server rounds
 * ("500m" CPU is 500, "4" GPUs 4000, "1Gi" 1073741824000), so that CPU, memory and counts
 * share one type. A quantity beyond what that holds counts as TJ_QUOTA_UNLIMITED. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/store.h"

/* Limits on what one quota may carry; beyond them the projection is -E2BIG (the reflector
 * then leaves the object out and says so). */
#define TJ_QUOTA_MAX_HARD   64 /* entries of spec.hard */
#define TJ_QUOTA_MAX_SCOPES 16 /* spec.scopes and scopeSelector.matchExpressions together */
#define TJ_QUOTA_MAX_VALUES 64 /* values of one expression */

#define TJ_QUOTA_UNLIMITED  INT64_MAX

enum tj_quota_scope {
	TJ_QUOTA_SCOPE_TERMINATING,     /* spec.activeDeadlineSeconds >= 0 */
	TJ_QUOTA_SCOPE_NOT_TERMINATING, /* no activeDeadlineSeconds */
	TJ_QUOTA_SCOPE_BEST_EFFORT,     /* QoS class BestEffort */
	TJ_QUOTA_SCOPE_NOT_BEST_EFFORT, /* Burstable or Guaranteed */
	TJ_QUOTA_SCOPE_PRIORITY_CLASS,  /* spec.priorityClassName, by the expression */
	TJ_QUOTA_SCOPE_CROSS_NAMESPACE, /* CrossNamespacePodAffinity */
	TJ_QUOTA_SCOPE_OTHER,           /* any other scope (VolumeAttributesClass): no pod */
};

enum tj_quota_operator {
	TJ_QUOTA_OP_EXISTS, /* also a scope of spec.scopes */
	TJ_QUOTA_OP_DOES_NOT_EXIST,
	TJ_QUOTA_OP_IN,
	TJ_QUOTA_OP_NOT_IN,
};

struct tj_quota_expression {
	enum tj_quota_scope scope;
	enum tj_quota_operator op;
	char **values; /* owned array of owned strings */
	size_t n_values;
};

struct tj_quota_limit {
	char *resource; /* owned; the key of spec.hard: "requests.nvidia.com/gpu", "pods" */
	int64_t hard;   /* thousandths */
	int64_t used;   /* thousandths; from status.used, 0 before the quota controller counted */
};

struct tj_resource_quota {
	char *namespace, *name; /* owned */
	/* The scopes a pod must be in for the quota to count it, all of them (spec.scopes as
	 * Exists, then the scope selector's expressions). */
	struct tj_quota_expression *scopes; /* owned */
	size_t n_scopes;
	struct tj_quota_limit *limits; /* owned; spec.hard, in its order */
	size_t n_limits;
};

/* A quantity as quotas and their pods count it: in thousandths, rounded up; one too large
 * for that is TJ_QUOTA_UNLIMITED. -EINVAL for one that is not a quantity or is negative;
 * *ret is written only on success. */
int tj_quota_amount_json(const cJSON *q, int64_t *ret);

/* Projects a ResourceQuota. -EINVAL without a namespace or a name, for a quantity that is not
 * one, a scope or operator the API server refuses (an operator other than Exists on Terminating,
 * NotTerminating, BestEffort, NotBestEffort or CrossNamespacePodAffinity, In or NotIn without
 * values); -E2BIG beyond a limit above; -ENOMEM. */
int tj_resource_quota_from_json(const cJSON *obj, struct tj_resource_quota **ret);

/* The store (keyed "namespace/name") and the reflector projection. */
extern const struct tj_store_ops tj_resource_quota_store_ops;
int tj_resource_quota_project(const cJSON *obj, void **ret);

/* Accepts NULL; returns NULL. */
struct tj_resource_quota *tj_resource_quota_free(struct tj_resource_quota *q);
