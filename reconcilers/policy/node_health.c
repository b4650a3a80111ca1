#include "reconcilers/policy/node_health.h"

#include <stdio.h>
#include <string.h>

static const char *const reasons[] = {
	[TJ_NODE_HEALTHY] = "",
	[TJ_NODE_DELETED] = "NodeDeleted",
	[TJ_NODE_UNREACHABLE] = "NodeUnreachable",
	[TJ_NODE_NOT_READY] = "NodeNotReady",
	[TJ_NODE_GPU_UNHEALTHY] = "GPUUnhealthy",
	[TJ_NODE_CORDONED_FOR_FAULT] = "NodeCordonedForFault",
};

const char *tj_node_fault_reason(enum tj_node_fault fault)
{
	return reasons[fault];
}

static const struct tj_node_taint *find_taint(const struct tj_node *node, const char *key)
{
	for (size_t i = 0; i < node->n_taints; i++)
		if (node->taints[i].key && strcmp(node->taints[i].key, key) == 0)
			return &node->taints[i];
	return NULL;
}

/* As tj_node_condition (informers/node.h), kept here so that this pure module needs
 * nothing but the struct. */
static const struct tj_node_condition *find_condition(const struct tj_node *node, const char *type)
{
	for (size_t i = 0; i < node->n_conditions; i++)
		if (node->conditions[i].type && strcmp(node->conditions[i].type, type) == 0)
			return &node->conditions[i];
	return NULL;
}

/* The first condition of the list that is True on the node. */
static const struct tj_node_condition *find_true(const struct tj_node *node, char *const *types,
                                                 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tj_node_condition *c = find_condition(node, types[i]);

		if (c && c->status == TJ_COND_TRUE)
			return c;
	}
	return NULL;
}

static const struct tj_node_taint *find_gpu_taint(const struct tj_node *node,
                                                  const struct tj_failure_policy *p)
{
	const struct tj_node_taint *t = NULL;

	for (size_t i = 0; i < p->n_gpu_taints && !t; i++)
		t = find_taint(node, p->gpu_taints[i]);
	return t;
}

static void by_condition(struct tj_node_health *h, enum tj_node_fault fault, const char *prefix,
                         const struct tj_node_condition *c)
{
	static const char *const status[] = {
		[TJ_COND_UNKNOWN] = "Unknown", [TJ_COND_TRUE] = "True", [TJ_COND_FALSE] = "False"
	};

	h->fault = fault;
	h->since = c->last_transition_time;
	snprintf(h->detail, sizeof(h->detail), "%scondition %s is %s%s%s%s", prefix, c->type,
	         status[c->status], c->reason ? " (" : "", c->reason ? c->reason : "",
	         c->reason ? ")" : "");
}

static void by_taint(struct tj_node_health *h, enum tj_node_fault fault,
                     const struct tj_node_taint *t)
{
	h->fault = fault;
	h->since = t->time_added;
	snprintf(h->detail, sizeof(h->detail), "taint %s", t->key);
}

/* Finds the first signal in the order of node_health.h. */
static void classify(const struct tj_node *node, const struct tj_failure_policy *p,
                     struct tj_node_health *h)
{
	const struct tj_node_condition *ready, *c;
	const struct tj_node_taint *t;

	if (!node) {
		h->fault = TJ_NODE_DELETED;
		snprintf(h->detail, sizeof(h->detail), "the node was deleted");
		return;
	}
	ready = find_condition(node, "Ready");
	if (ready && ready->status == TJ_COND_UNKNOWN) {
		by_condition(h, TJ_NODE_UNREACHABLE, "", ready);
	} else if ((t = find_taint(node, TJ_TAINT_UNREACHABLE))) {
		by_taint(h, TJ_NODE_UNREACHABLE, t);
	} else if (ready && ready->status == TJ_COND_FALSE) {
		by_condition(h, TJ_NODE_NOT_READY, "", ready);
	} else if ((t = find_taint(node, TJ_TAINT_NOT_READY))) {
		by_taint(h, TJ_NODE_NOT_READY, t);
	} else if ((c = find_true(node, p->gpu_conditions, p->n_gpu_conditions))) {
		by_condition(h, TJ_NODE_GPU_UNHEALTHY, "", c);
	} else if ((t = find_gpu_taint(node, p))) {
		by_taint(h, TJ_NODE_GPU_UNHEALTHY, t);
	} else if (node->unschedulable && (c = find_true(node, p->fault_cordon_conditions,
	                                                 p->n_fault_cordon_conditions))) {
		by_condition(h, TJ_NODE_CORDONED_FOR_FAULT, "cordoned, ", c);
	}
}

void tj_node_health_judge(const struct tj_node *node, const struct tj_failure_policy *policy,
                          int64_t grace_seconds, int64_t now, struct tj_node_health *ret)
{
	struct tj_node_health h = { .fault = TJ_NODE_HEALTHY };

	classify(node, policy ? policy : tj_config_failure_policy(NULL), &h);
	if (h.fault != TJ_NODE_HEALTHY) {
		/* A signal of unknown age, or one stamped in the future by a skewed clock,
		 * counts from now at the latest. */
		int64_t age = h.since > 0 ? now - h.since : grace_seconds;

		if (age >= grace_seconds)
			h.failed = true;
		else
			h.wait = grace_seconds - (age > 0 ? age : 0);
	}
	*ret = h;
}

/* Kubernetes' rule: an empty key with Exists tolerates every taint; an empty effect
 * matches every effect; Exists ignores the value. */
static bool tolerates(const struct tj_toleration *t, const struct tj_node_taint *taint)
{
	bool exists = t->operator_ && strcmp(t->operator_, "Exists") == 0;

	if (t->effect && *t->effect && strcmp(t->effect, taint->effect) != 0)
		return false;
	if (!t->key || !*t->key)
		return exists;
	if (strcmp(t->key, taint->key) != 0)
		return false;
	return exists || strcmp(t->value ? t->value : "", taint->value ? taint->value : "") == 0;
}

bool tj_node_takes_new_pods(const struct tj_node *node, const struct tj_gpu_class *cls,
                            const struct tj_failure_policy *policy, int64_t now)
{
	const struct tj_node_condition *ready = tj_node_condition(node, "Ready");
	struct tj_node_health h;

	if (node->unschedulable || !ready || ready->status != TJ_COND_TRUE)
		return false;
	tj_node_health_judge(node, policy, 0, now, &h);
	if (h.fault != TJ_NODE_HEALTHY)
		return false;
	for (size_t i = 0; i < node->n_taints; i++) {
		const struct tj_node_taint *taint = &node->taints[i];
		bool ok = false;

		if (!taint->effect || strcmp(taint->effect, "PreferNoSchedule") == 0)
			continue;
		for (size_t k = 0; cls && k < cls->n_tolerations && !ok; k++)
			ok = tolerates(&cls->tolerations[k], taint);
		if (!ok)
			return false;
	}
	return true;
}

int64_t tj_node_pod_slots(const struct tj_node *node)
{
	return node->allocatable.pods > 0 ? node->allocatable.pods : INT64_MAX;
}
