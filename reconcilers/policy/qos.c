#include "reconcilers/policy/qos.h"

#include <stdio.h>
#include <string.h>

/* normal and high preempt low, the scavenger tier; high preempts normal too, for a start
 * more than 5 minutes away. */
static const struct tj_qos_tier builtin_tiers[] = {
	{ .name = (char *)"normal", .priority = 0, .preempts = 1u << 1 },
	{ .name = (char *)"low", .priority = -1000 },
	{ .name = (char *)"high",
	  .priority = 1000,
	  .preempts = 1u << 0 | 1u << 1,
	  .preempt_after_seconds = 300 },
};

static char *const builtin_allowed[] = { (char *)"normal", (char *)"low" };

static const struct tj_qos_namespace builtin_namespaces[] = {
	{ .namespace = (char *)"*",
	  .allowed = (char **)builtin_allowed,
	  .n_allowed = 2,
	  .default_tier = (char *)"normal",
	  .share = 1 },
};

const struct tj_qos_tier *tj_qos_tiers(const struct tj_admission_policy *policy, size_t *n)
{
	if (policy && policy->tiers) {
		*n = policy->n_tiers;
		return policy->tiers;
	}
	*n = sizeof(builtin_tiers) / sizeof(builtin_tiers[0]);
	return builtin_tiers;
}

unsigned tj_qos_index(const struct tj_admission_policy *policy, const struct tj_qos_tier *tier)
{
	size_t n;
	const struct tj_qos_tier *tiers = tj_qos_tiers(policy, &n);

	return tier && tier >= tiers && tier < tiers + n ? (unsigned)(tier - tiers) : 32;
}

const struct tj_qos_tier *tj_qos_find(const struct tj_admission_policy *policy, const char *name)
{
	size_t n;
	const struct tj_qos_tier *tiers = tj_qos_tiers(policy, &n);

	for (size_t i = 0; name && i < n; i++)
		if (strcmp(tiers[i].name, name) == 0)
			return &tiers[i];
	return NULL;
}

const struct tj_qos_namespace *tj_qos_namespace_rule(const struct tj_admission_policy *policy,
                                                     const char *namespace)
{
	const struct tj_qos_namespace *rules = builtin_namespaces, *any = NULL;
	size_t n = sizeof(builtin_namespaces) / sizeof(builtin_namespaces[0]);

	if (policy && policy->qos_namespaces) {
		rules = policy->qos_namespaces;
		n = policy->n_qos_namespaces;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rules[i].namespace, namespace) == 0)
			return &rules[i];
		if (strcmp(rules[i].namespace, "*") == 0)
			any = &rules[i];
	}
	return any;
}

static bool allows(const struct tj_qos_namespace *rule, const char *name)
{
	for (size_t i = 0; rule && i < rule->n_allowed; i++)
		if (strcmp(rule->allowed[i], name) == 0)
			return true;
	return false;
}

/* "normal, low", or "none". */
static void list_allowed(const struct tj_qos_namespace *rule, char *buf, size_t size)
{
	size_t used = 0;

	snprintf(buf, size, "none");
	for (size_t i = 0; rule && i < rule->n_allowed && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "",
		                         rule->allowed[i]);
}

const struct tj_qos_tier *tj_qos_resolve(const struct tj_admission_policy *policy,
                                         const char *namespace, const char *asked,
                                         struct tj_problem *why)
{
	const struct tj_qos_namespace *rule = tj_qos_namespace_rule(policy, namespace);
	const struct tj_qos_tier *tier;
	const char *name = asked ? asked : rule ? rule->default_tier : NULL;
	char allowed[256];

	if (!name) {
		tj_problem_set(
		        why, "PolicyViolation",
		        "namespace %s may use no QOS tier (admission.namespaces has no entry "
		        "for it and none for \"*\")",
		        namespace);
		return NULL;
	}
	tier = tj_qos_find(policy, name);
	if (!tier || !allows(rule, name)) {
		list_allowed(rule, allowed, sizeof(allowed));
		tj_problem_set(why, "PolicyViolation",
		               "%s%s%sQOS \"%s\" is %s; namespace %s may use: %s",
		               asked ? "metadata.annotations[" : "", asked ? TJ_ANNOTATION_QOS : "",
		               asked ? "]: " : "", name,
		               tier ? "not allowed there" : "not a tier of this cluster", namespace,
		               allowed);
		return NULL;
	}
	return tier;
}

int tj_qos_walltime(const struct tj_qos_tier *tier, struct tj_walltime *w, struct tj_problem *why)
{
	long long max = tier ? tier->max_walltime_seconds : 0;
	char limit[32];

	if (!max)
		return 0;
	if (w->seconds > max && !w->from_default) {
		tj_walltime_format(max, limit);
		return tj_problem_set(why, "PolicyViolation",
		                      "spec.activeDeadlineSeconds (%lld s) is longer than the "
		                      "maxWalltime of QOS %s, %s (%lld s); ask for at most "
		                      "%lld s",
		                      (long long)w->seconds, tier->name, limit, max, max);
	}
	if (!w->max_seconds || max < w->max_seconds)
		w->max_seconds = max;
	if (!w->seconds || w->seconds > max) {
		w->seconds = max;
		w->from_default = true;
		snprintf(w->source, sizeof(w->source), "the maxWalltime of QOS %s", tier->name);
	}
	return 0;
}
