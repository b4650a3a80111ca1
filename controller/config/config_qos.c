#include "controller/config/config_qos_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config/config_walltime_internal.h"
#include "reconcilers/admission/fair_share.h"
#include "reconcilers/policy/qos.h"

static const char *const tier_fields[] = { "name",
	                                   "priority",
	                                   "maxWalltime",
	                                   "preempts",
	                                   "preemptAfterSeconds",
	                                   "maxGPUsPerNamespace",
	                                   "backfillReservedNodes",
	                                   NULL };
static const char *const namespace_fields[] = { "namespace", "allowed", "default", "share", NULL };

static int parse_tier(const struct tj_config_parser *p, struct fy_node *node, int line,
                      const char *path, struct tj_qos_tier *t)
{
	int r = tj_config_check_mapping(
	        p, node, line, path, tier_fields,
	        "name, priority, maxWalltime, preempts, preemptAfterSeconds, "
	        "maxGPUsPerNamespace, backfillReservedNodes");
	int after = 0, max_gpus = 0;

	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	r = tj_config_field_string(p, node, line, path, "name", true, TJ_LABEL_NAME_MAX, &t->name);
	if (r < 0)
		return r;
	if (!tj_config_valid_dns_label(t->name))
		return tj_config_fail(p, tj_config_field_line(node, "name", line), path,
		                      "name \"%s\" is not a DNS label", t->name);
	if (!tj_config_find_pair(node, "priority"))
		return tj_config_fail(p, line, path, "missing required field \"priority\"");
	r = tj_config_field_int(p, node, line, path, "priority", -1000000000, 1000000000,
	                        &t->priority);
	if (r < 0)
		return r;
	r = tj_config_field_int(p, node, line, path, "preemptAfterSeconds", 0, 366 * 86400, &after);
	t->preempt_after_seconds = after;
	if (r < 0)
		return r;
	r = tj_config_field_int(p, node, line, path, "maxGPUsPerNamespace", 0, 1000000, &max_gpus);
	t->max_gpus_per_namespace = max_gpus;
	if (r < 0)
		return r;
	r = tj_config_field_bool(p, node, line, path, "backfillReservedNodes",
	                         &t->backfill_reserved_nodes);
	if (r < 0)
		return r;
	return tj_config_field_walltime(p, node, line, path, "maxWalltime",
	                                &t->max_walltime_seconds);
}

/* The tiers of t's preempts, each a tier of a other than t itself, as a mask (settings.h). */
static int parse_preempts(const struct tj_config_parser *p, struct fy_node *node, int line,
                          const char *path, const struct tj_admission_policy *a,
                          struct tj_qos_tier *t)
{
	char sub[64], item_path[80], *name = NULL;
	struct fy_node *seq = NULL, *item;
	int seq_line = line, r;
	void *iter = NULL;

	snprintf(sub, sizeof(sub), "%s.preempts", path);
	r = tj_config_field_sequence(p, node, line, sub, "preempts", TJ_CONFIG_MAX_QOS_TIERS, &seq,
	                             &seq_line);
	for (size_t i = 0; r == 0 && seq && (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		int item_line = tj_config_line(item, seq_line);
		const struct tj_qos_tier *victim;

		snprintf(item_path, sizeof(item_path), "%s[%zu]", sub, i);
		r = tj_config_scalar_dup(p, item, item_line, item_path, TJ_LABEL_NAME_MAX, &name);
		if (r < 0)
			break;
		victim = tj_qos_find(a, name);
		if (!victim)
			r = tj_config_fail(p, item_line, item_path, "\"%s\" is not a tier of qos",
			                   name);
		else if (victim == t)
			r = tj_config_fail(p, item_line, item_path, "a tier cannot preempt itself");
		else
			t->preempts |= 1u << (victim - a->tiers);
		free(name);
		name = NULL;
	}
	return r;
}

static int parse_tiers(const struct tj_config_parser *p, struct fy_node *seq, int seq_line,
                       struct tj_admission_policy *a)
{
	struct fy_node *item;
	void *iter = NULL;
	int r;

	a->tiers = calloc((size_t)fy_node_sequence_item_count(seq) + 1, sizeof(*a->tiers));
	if (!a->tiers)
		return -ENOMEM;
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		int item_line = tj_config_line(item, seq_line);
		char sub[48];

		snprintf(sub, sizeof(sub), "admission.qos[%zu]", i);
		a->n_tiers = i + 1;
		r = parse_tier(p, item, item_line, sub, &a->tiers[i]);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(a->tiers[j].name, a->tiers[i].name))
				return tj_config_fail(p, item_line, sub,
				                      "a second tier \"%s\" (also qos[%zu])",
				                      a->tiers[i].name, j);
	}
	if (!a->n_tiers)
		return tj_config_fail(p, seq_line, "admission.qos", "names no tier");
	/* Once every tier is named, the tiers each may preempt. */
	iter = NULL;
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		char sub[48];

		snprintf(sub, sizeof(sub), "admission.qos[%zu]", i);
		r = parse_preempts(p, item, tj_config_line(item, seq_line), sub, a, &a->tiers[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The tier names of an entry's allowed, each a tier of a. */
static int parse_allowed(const struct tj_config_parser *p, struct fy_node *node, int line,
                         const char *path, const struct tj_admission_policy *a,
                         struct tj_qos_namespace *q)
{
	char sub[96];
	struct fy_node *seq = NULL, *item;
	int seq_line = line, r;
	void *iter = NULL;

	snprintf(sub, sizeof(sub), "%s.allowed", path);
	r = tj_config_field_sequence(p, node, line, sub, "allowed", TJ_CONFIG_MAX_QOS_TIERS, &seq,
	                             &seq_line);
	if (r < 0)
		return r;
	if (!seq)
		return tj_config_fail(p, line, path, "missing required field \"allowed\"");
	q->allowed = calloc((size_t)fy_node_sequence_item_count(seq) + 1, sizeof(*q->allowed));
	if (!q->allowed)
		return -ENOMEM;
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		int item_line = tj_config_line(item, seq_line);
		char item_path[112];

		snprintf(item_path, sizeof(item_path), "%s[%zu]", sub, i);
		r = tj_config_scalar_dup(p, item, item_line, item_path, TJ_LABEL_NAME_MAX,
		                         &q->allowed[i]);
		if (r < 0)
			return r;
		q->n_allowed = i + 1;
		if (!tj_qos_find(a, q->allowed[i]))
			return tj_config_fail(p, item_line, item_path,
			                      "\"%s\" is not a tier of qos", q->allowed[i]);
	}
	return 0;
}

static int parse_namespace(const struct tj_config_parser *p, struct fy_node *node, int line,
                           const char *path, const struct tj_admission_policy *a,
                           struct tj_qos_namespace *q)
{
	int r = tj_config_check_mapping(p, node, line, path, namespace_fields,
	                                "namespace, allowed, default, share");
	bool allowed = false;
	int share = 1;

	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	r = tj_config_field_string(p, node, line, path, "namespace", true, TJ_LABEL_NAME_MAX,
	                           &q->namespace);
	if (r < 0)
		return r;
	if (strcmp(q->namespace, "*") != 0 && !tj_config_valid_dns_label(q->namespace))
		return tj_config_fail(p, tj_config_field_line(node, "namespace", line), path,
		                      "namespace \"%s\" is not a DNS label (or \"*\")",
		                      q->namespace);
	r = parse_allowed(p, node, line, path, a, q);
	if (r < 0)
		return r;
	r = tj_config_field_string(p, node, line, path, "default", true, TJ_LABEL_NAME_MAX,
	                           &q->default_tier);
	if (r < 0)
		return r;
	for (size_t i = 0; i < q->n_allowed; i++)
		allowed = allowed || !strcmp(q->allowed[i], q->default_tier);
	if (!allowed)
		return tj_config_fail(p, tj_config_field_line(node, "default", line), path,
		                      "default \"%s\" is not one of allowed", q->default_tier);
	r = tj_config_field_int(p, node, line, path, "share", 1, TJ_FAIR_SHARE_MAX_SHARE, &share);
	q->share = share;
	return r;
}

static int parse_namespaces(const struct tj_config_parser *p, struct fy_node *seq, int seq_line,
                            struct tj_admission_policy *a)
{
	struct fy_node *item;
	void *iter = NULL;
	int r;

	a->qos_namespaces =
	        calloc((size_t)fy_node_sequence_item_count(seq) + 1, sizeof(*a->qos_namespaces));
	if (!a->qos_namespaces)
		return -ENOMEM;
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		int item_line = tj_config_line(item, seq_line);
		char sub[48];

		snprintf(sub, sizeof(sub), "admission.namespaces[%zu]", i);
		a->n_qos_namespaces = i + 1;
		r = parse_namespace(p, item, item_line, sub, a, &a->qos_namespaces[i]);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(a->qos_namespaces[j].namespace, a->qos_namespaces[i].namespace))
				return tj_config_fail(p, item_line, sub,
				                      "a second entry for namespace \"%s\" (also "
				                      "namespaces[%zu])",
				                      a->qos_namespaces[i].namespace, j);
	}
	return 0;
}

int tj_config_parse_qos(const struct tj_config_parser *p, struct fy_node *node, int line,
                        struct tj_admission_policy *a)
{
	struct fy_node *tiers = NULL, *namespaces = NULL;
	int tiers_line = line, namespaces_line = line, r;

	r = tj_config_field_sequence(p, node, line, "admission.qos", "qos", TJ_CONFIG_MAX_QOS_TIERS,
	                             &tiers, &tiers_line);
	if (r == 0)
		r = tj_config_field_sequence(p, node, line, "admission.namespaces", "namespaces",
		                             TJ_CONFIG_MAX_QOS_NAMESPACES, &namespaces,
		                             &namespaces_line);
	if (r < 0)
		return r;
	/* Tiers of its own leave the built-in rule (normal and low) nothing to name. */
	if (tiers && !namespaces)
		return tj_config_fail(
		        p, tiers_line, "admission.namespaces",
		        "is required with admission.qos: which tiers each namespace may "
		        "use, and its default");
	if (tiers && (r = parse_tiers(p, tiers, tiers_line, a)) < 0)
		return r;
	return namespaces ? parse_namespaces(p, namespaces, namespaces_line, a) : 0;
}
