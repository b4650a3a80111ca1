/* The controller's config file: its schema, checked while parsing with libfyaml's document
 * API. */
#include "controller/config/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "base/fileio.h"
#include "base/yaml_guard.h"
#include "controller/config/config_fields_internal.h"
#include "controller/config/config_qos_internal.h"
#include "controller/config/config_suspect_internal.h"
#include "controller/config/config_walltime_internal.h"

static const char *const class_fields[] = { "name",       "resource",    "arch",
	                                    "nodeLabels", "tolerations", NULL };
static const char *const toleration_fields[] = { "key", "operator", "value", "effect", NULL };

static int parse_node_labels(const struct tj_config_parser *p, struct fy_node *node, int line,
                             const char *path, struct tj_gpu_class *class)
{
	int r = tj_config_check_mapping(p, node, line, path, NULL, NULL);
	if (r < 0)
		return r;
	int count = fy_node_mapping_item_count(node);
	if (count > TJ_CONFIG_MAX_NODE_LABELS)
		return tj_config_fail(p, line, path, "has %d labels, the limit is %d", count,
		                      TJ_CONFIG_MAX_NODE_LABELS);
	if (count == 0)
		return 0;
	class->node_labels = calloc((size_t)count, sizeof(*class->node_labels));
	if (!class->node_labels)
		return -ENOMEM;
	class->n_node_labels = (size_t)count;

	void *iter = NULL;
	struct fy_node_pair *pair;
	for (size_t i = 0; (pair = fy_node_mapping_iterate(node, &iter)); i++) {
		struct tj_kv *kv = &class->node_labels[i];
		struct fy_node *key = fy_node_pair_key(pair);
		int key_line = tj_config_line(key, line);
		r = tj_config_scalar_dup(p, key, key_line, path,
		                         TJ_DNS_SUBDOMAIN_MAX + 1 + TJ_LABEL_NAME_MAX, &kv->key);
		if (r < 0)
			return r;
		if (!tj_config_valid_qualified_name(kv->key, false))
			return tj_config_fail(
			        p, key_line, path,
			        "\"%s\" is not a valid label key ([prefix/]name, name at most "
			        "63 characters)",
			        kv->key);
		char sub[160 + TJ_LABEL_NAME_MAX];
		snprintf(sub, sizeof(sub), "%s.%s", path, kv->key);
		struct fy_node *value = fy_node_pair_value(pair);
		int value_line = tj_config_line(value, key_line);
		r = tj_config_scalar_dup(p, value, value_line, sub, TJ_LABEL_NAME_MAX, &kv->value);
		if (r < 0)
			return r;
		if (!tj_config_valid_label_value(kv->value, strlen(kv->value)))
			return tj_config_fail(
			        p, value_line, sub,
			        "\"%s\" is not a valid label value (letters, digits, '-', '_' "
			        "and '.', alphanumeric at both ends)",
			        kv->value);
	}
	return 0;
}

static int parse_toleration(const struct tj_config_parser *p, struct fy_node *node, int line,
                            const char *path, struct tj_toleration *t)
{
	int r = tj_config_check_mapping(p, node, line, path, toleration_fields,
	                                "key, operator, value, effect");
	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	r = tj_config_field_string(p, node, line, path, "key", false,
	                           TJ_DNS_SUBDOMAIN_MAX + 1 + TJ_LABEL_NAME_MAX, &t->key);
	if (r < 0)
		return r;
	if (t->key && !tj_config_valid_qualified_name(t->key, false))
		return tj_config_fail(p, tj_config_field_line(node, "key", line), path,
		                      "key \"%s\" is not a valid taint key", t->key);
	r = tj_config_field_string(p, node, line, path, "operator", false, 16, &t->operator_);
	if (r < 0)
		return r;
	if (!t->operator_) {
		/* The default of core/v1 Toleration. */
		t->operator_ = strdup("Equal");
		if (!t->operator_)
			return -ENOMEM;
	} else if (strcmp(t->operator_, "Equal") && strcmp(t->operator_, "Exists")) {
		return tj_config_fail(p, tj_config_field_line(node, "operator", line), path,
		                      "operator must be Equal or Exists, not \"%s\"", t->operator_);
	}
	bool exists = !strcmp(t->operator_, "Exists");
	r = tj_config_field_string(p, node, line, path, "value", false, TJ_LABEL_NAME_MAX,
	                           &t->value);
	if (r < 0)
		return r;
	if (t->value && exists)
		return tj_config_fail(p, tj_config_field_line(node, "value", line), path,
		                      "value must be empty when operator is Exists");
	if (t->value && !tj_config_valid_label_value(t->value, strlen(t->value)))
		return tj_config_fail(p, tj_config_field_line(node, "value", line), path,
		                      "value \"%s\" is not a valid taint value", t->value);
	if (!t->key && !exists)
		return tj_config_fail(p, line, path,
		                      "a toleration without a key must have operator Exists");
	r = tj_config_field_string(p, node, line, path, "effect", false, 32, &t->effect);
	if (r < 0)
		return r;
	if (t->effect && strcmp(t->effect, "NoSchedule") && strcmp(t->effect, "PreferNoSchedule") &&
	    strcmp(t->effect, "NoExecute"))
		return tj_config_fail(
		        p, tj_config_field_line(node, "effect", line), path,
		        "effect must be NoSchedule, PreferNoSchedule or NoExecute, not \"%s\"",
		        t->effect);
	return 0;
}

static int parse_tolerations(const struct tj_config_parser *p, struct fy_node *node, int line,
                             const char *path, struct tj_gpu_class *class)
{
	if (node && fy_node_is_alias(node))
		return tj_config_fail(p, line, path, "anchors and aliases are not supported");
	if (!node || !fy_node_is_sequence(node))
		return tj_config_fail(p, line, path, "must be a sequence");
	int count = fy_node_sequence_item_count(node);
	if (count > TJ_CONFIG_MAX_TOLERATIONS)
		return tj_config_fail(p, line, path, "has %d tolerations, the limit is %d", count,
		                      TJ_CONFIG_MAX_TOLERATIONS);
	if (count == 0)
		return 0;
	class->tolerations = calloc((size_t)count, sizeof(*class->tolerations));
	if (!class->tolerations)
		return -ENOMEM;
	class->n_tolerations = (size_t)count;

	void *iter = NULL;
	struct fy_node *item;
	for (size_t i = 0; (item = fy_node_sequence_iterate(node, &iter)); i++) {
		char sub[200];
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		int r = parse_toleration(p, item, tj_config_line(item, line), sub,
		                         &class->tolerations[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_class(const struct tj_config_parser *p, struct fy_node *node, int line,
                       const char *path, struct tj_gpu_class *class)
{
	int r = tj_config_check_mapping(p, node, line, path, class_fields,
	                                "name, resource, arch, nodeLabels, tolerations");
	if (r < 0)
		return r;
	line = tj_config_line(node, line);

	r = tj_config_field_string(p, node, line, path, "name", true, TJ_LABEL_NAME_MAX,
	                           &class->name);
	if (r < 0)
		return r;
	if (!tj_config_valid_dns_label(class->name))
		return tj_config_fail(
		        p, tj_config_field_line(node, "name", line), path,
		        "name \"%s\" is not a DNS label (lower case letters, digits and '-'); "
		        "it names the runtime torch-<name>",
		        class->name);

	r = tj_config_field_string(p, node, line, path, "resource", true,
	                           TJ_DNS_SUBDOMAIN_MAX + 1 + TJ_LABEL_NAME_MAX, &class->resource);
	if (r < 0)
		return r;
	if (!tj_config_valid_qualified_name(class->resource, true))
		return tj_config_fail(
		        p, tj_config_field_line(node, "resource", line), path,
		        "resource \"%s\" is not an extended resource name (domain/name, like "
		        "nvidia.com/gpu)",
		        class->resource);

	r = tj_config_field_string(p, node, line, path, "arch", false, TJ_LABEL_NAME_MAX,
	                           &class->arch);
	if (r < 0)
		return r;
	if (class->arch && !tj_config_valid_label_value(class->arch, strlen(class->arch)))
		return tj_config_fail(p, tj_config_field_line(node, "arch", line), path,
		                      "arch \"%s\" is not a valid kubernetes.io/arch value",
		                      class->arch);

	char sub[160];
	struct fy_node_pair *pair = tj_config_find_pair(node, "nodeLabels");
	if (pair && !tj_config_is_null(fy_node_pair_value(pair))) {
		snprintf(sub, sizeof(sub), "%s.nodeLabels", path);
		r = parse_node_labels(p, fy_node_pair_value(pair),
		                      tj_config_line(fy_node_pair_key(pair), line), sub, class);
		if (r < 0)
			return r;
	}
	pair = tj_config_find_pair(node, "tolerations");
	if (pair && !tj_config_is_null(fy_node_pair_value(pair))) {
		snprintf(sub, sizeof(sub), "%s.tolerations", path);
		r = parse_tolerations(p, fy_node_pair_value(pair),
		                      tj_config_line(fy_node_pair_key(pair), line), sub, class);
		if (r < 0)
			return r;
	}
	return 0;
}

static const char *const policy_fields[] = { "maxRestarts",
	                                     "maxInfrastructureRestarts",
	                                     "nodeGracePeriodSeconds",
	                                     "restartBackoff",
	                                     "permanentExitCodes",
	                                     "gpuHealth",
	                                     "faultCordonConditions",
	                                     NULL };
static const char *const backoff_fields[] = { "initialSeconds", "maxSeconds", NULL };
static const char *const gpu_health_fields[] = { "conditions", "taints", NULL };

/* A list of node condition types or taint keys; absent (or mapping NULL) keeps the
 * default, copied. The list is the caller's from the start, so that on an error it is freed
 * with the config that holds it. */
static int parse_names(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                       const char *path, const char *key, bool conditions, char **defaults,
                       size_t n_defaults, char ***ret, size_t *ret_n)
{
	char sub[160];
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	struct fy_node *seq = NULL;
	int seq_line = line, r = 0;
	if (mapping)
		r = tj_config_field_sequence(p, mapping, line, sub, key, TJ_CONFIG_MAX_SIGNALS,
		                             &seq, &seq_line);
	if (r < 0)
		return r;
	size_t n = seq ? (size_t)fy_node_sequence_item_count(seq) : n_defaults;
	char **names = calloc(n + 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	*ret = names;
	*ret_n = n;
	void *iter = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!seq) {
			names[i] = strdup(defaults[i]);
			if (!names[i])
				return -ENOMEM;
			continue;
		}
		struct fy_node *item = fy_node_sequence_iterate(seq, &iter);
		int item_line = tj_config_line(item, seq_line);
		char item_path[200];
		snprintf(item_path, sizeof(item_path), "%s[%zu]", sub, i);
		r = tj_config_scalar_dup(p, item, item_line, item_path,
		                         TJ_DNS_SUBDOMAIN_MAX + 1 + TJ_LABEL_NAME_MAX, &names[i]);
		if (r == 0 && !tj_config_valid_qualified_name(names[i], false))
			r = tj_config_fail(p, item_line, item_path, "\"%s\" is not a valid %s",
			                   names[i], conditions ? "condition type" : "taint key");
		/* Ready True is the healthy state: listing it would fail every healthy node. */
		if (r == 0 && conditions && !strcmp(names[i], "Ready"))
			r = tj_config_fail(
			        p, item_line, item_path,
			        "Ready is judged by its own rule (False or Unknown is unhealthy) "
			        "and cannot be listed");
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_exit_codes(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                            struct tj_failure_policy *policy)
{
	const struct tj_failure_policy *defaults = tj_config_failure_policy(NULL);

	return tj_config_field_exit_codes(
	        p, mapping, line, "failurePolicy.permanentExitCodes", "permanentExitCodes",
	        defaults->permanent_exit_codes, defaults->n_permanent_exit_codes,
	        &policy->permanent_exit_codes, &policy->n_permanent_exit_codes);
}

static int parse_failure_policy(const struct tj_config_parser *p, struct fy_node *node, int line,
                                struct tj_failure_policy *policy)
{
	const struct tj_failure_policy *defaults = tj_config_failure_policy(NULL);
	const char *path = "failurePolicy";
	int r = tj_config_check_mapping(
	        p, node, line, path, policy_fields,
	        "maxRestarts, maxInfrastructureRestarts, nodeGracePeriodSeconds, "
	        "restartBackoff, permanentExitCodes, gpuHealth, faultCordonConditions");
	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	policy->max_restarts = defaults->max_restarts;
	policy->node_grace_period_seconds = defaults->node_grace_period_seconds;
	policy->backoff_initial_seconds = defaults->backoff_initial_seconds;
	policy->backoff_max_seconds = defaults->backoff_max_seconds;
	r = tj_config_field_int(p, node, line, path, "maxRestarts", 0, 1000, &policy->max_restarts);
	if (r < 0)
		return r;
	policy->max_infrastructure_restarts = defaults->max_infrastructure_restarts;
	r = tj_config_field_int(p, node, line, path, "maxInfrastructureRestarts", 0, 1000,
	                        &policy->max_infrastructure_restarts);
	if (r < 0)
		return r;
	r = tj_config_field_int(p, node, line, path, "nodeGracePeriodSeconds", 0, 86400,
	                        &policy->node_grace_period_seconds);
	if (r < 0)
		return r;
	struct fy_node_pair *pair = tj_config_find_pair(node, "restartBackoff");
	if (pair && !tj_config_is_null(fy_node_pair_value(pair))) {
		struct fy_node *backoff = fy_node_pair_value(pair);
		const char *sub = "failurePolicy.restartBackoff";
		int bline = tj_config_line(fy_node_pair_key(pair), line);
		r = tj_config_check_mapping(p, backoff, bline, sub, backoff_fields,
		                            "initialSeconds, maxSeconds");
		if (r < 0)
			return r;
		r = tj_config_field_int(p, backoff, bline, sub, "initialSeconds", 0, 86400,
		                        &policy->backoff_initial_seconds);
		if (r < 0)
			return r;
		r = tj_config_field_int(p, backoff, bline, sub, "maxSeconds", 0, 86400,
		                        &policy->backoff_max_seconds);
		if (r < 0)
			return r;
		if (policy->backoff_max_seconds < policy->backoff_initial_seconds)
			return tj_config_fail(
			        p, bline, sub,
			        "maxSeconds (%d) must not be less than initialSeconds (%d)",
			        policy->backoff_max_seconds, policy->backoff_initial_seconds);
	}
	r = parse_exit_codes(p, node, line, policy);
	if (r < 0)
		return r;
	struct fy_node *gpu = NULL;
	int gline = line;
	pair = tj_config_find_pair(node, "gpuHealth");
	if (pair && !tj_config_is_null(fy_node_pair_value(pair))) {
		gpu = fy_node_pair_value(pair);
		gline = tj_config_line(fy_node_pair_key(pair), line);
		r = tj_config_check_mapping(p, gpu, gline, "failurePolicy.gpuHealth",
		                            gpu_health_fields, "conditions, taints");
		if (r < 0)
			return r;
	}
	r = parse_names(p, gpu, gline, "failurePolicy.gpuHealth", "conditions", true,
	                defaults->gpu_conditions, defaults->n_gpu_conditions,
	                &policy->gpu_conditions, &policy->n_gpu_conditions);
	if (r < 0)
		return r;
	r = parse_names(p, gpu, gline, "failurePolicy.gpuHealth", "taints", false,
	                defaults->gpu_taints, defaults->n_gpu_taints, &policy->gpu_taints,
	                &policy->n_gpu_taints);
	if (r < 0)
		return r;
	return parse_names(p, node, line, "failurePolicy", "faultCordonConditions", true,
	                   defaults->fault_cordon_conditions, defaults->n_fault_cordon_conditions,
	                   &policy->fault_cordon_conditions, &policy->n_fault_cordon_conditions);
}

static const char *const admission_fields[] = {
	"enabled",
	"backfill",
	"neverFits",
	"pinTimeoutSeconds",
	"topologyLabel",
	"namespaceLimits",
	"restartWaitSeconds",
	"qos",
	"namespaces",
	"backfillDepth",
	"backfillMaxJobTest",
	"fairShareHalfLife",
	"accountingRetention",
	NULL,
};
static const char *const limit_fields[] = { "namespace", "gpuClass", "maxGPUs", NULL };

static int parse_limit(const struct tj_config_parser *p, struct fy_node *node, int line,
                       const char *path, const struct tj_config *config,
                       struct tj_namespace_limit *limit)
{
	int r = tj_config_check_mapping(p, node, line, path, limit_fields,
	                                "namespace, gpuClass, maxGPUs");
	int max = -1;

	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	r = tj_config_field_string(p, node, line, path, "namespace", true, TJ_LABEL_NAME_MAX,
	                           &limit->namespace);
	if (r < 0)
		return r;
	if (strcmp(limit->namespace, "*") != 0 && !tj_config_valid_dns_label(limit->namespace))
		return tj_config_fail(p, tj_config_field_line(node, "namespace", line), path,
		                      "namespace \"%s\" is not a DNS label (or \"*\")",
		                      limit->namespace);
	r = tj_config_field_string(p, node, line, path, "gpuClass", true, TJ_LABEL_NAME_MAX,
	                           &limit->gpu_class);
	if (r < 0)
		return r;
	if (!tj_config_find_class(config, limit->gpu_class))
		return tj_config_fail(p, tj_config_field_line(node, "gpuClass", line), path,
		                      "gpuClass \"%s\" is not one of gpuClasses", limit->gpu_class);
	r = tj_config_field_int(p, node, line, path, "maxGPUs", 0, 1000000, &max);
	if (r < 0)
		return r;
	if (max < 0)
		return tj_config_fail(p, line, path, "missing required field \"maxGPUs\"");
	limit->max_gpus = max;
	return 0;
}

/* The admission section; read after gpuClasses, which its limits name. */
static int parse_admission(const struct tj_config_parser *p, struct fy_node *node, int line,
                           const struct tj_config *config, struct tj_admission_policy *a)
{
	const char *path = "admission";
	char *never = NULL;
	struct fy_node *seq = NULL;
	int seq_line = line;
	int r = tj_config_check_mapping(
	        p, node, line, path, admission_fields,
	        "enabled, backfill, neverFits, pinTimeoutSeconds, topologyLabel, "
	        "namespaceLimits, restartWaitSeconds, qos, namespaces, backfillDepth, "
	        "backfillMaxJobTest, fairShareHalfLife, accountingRetention");

	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	*a = *tj_config_admission(NULL);
	a->topology_label = NULL;
	a->limits = NULL;
	a->n_limits = 0;
	if ((r = tj_config_parse_qos(p, node, line, a)) < 0 ||
	    (r = tj_config_field_walltime(p, node, line, path, "fairShareHalfLife",
	                                  &a->fair_share_half_life)) < 0 ||
	    (r = tj_config_field_walltime(p, node, line, path, "accountingRetention",
	                                  &a->accounting_retention)) < 0)
		return r;
	if ((r = tj_config_field_bool(p, node, line, path, "enabled", &a->enabled)) < 0 ||
	    (r = tj_config_field_bool(p, node, line, path, "backfill", &a->backfill)) < 0 ||
	    (r = tj_config_field_int(p, node, line, path, "backfillDepth", 1, 1000,
	                             &a->backfill_depth)) < 0 ||
	    (r = tj_config_field_int(p, node, line, path, "backfillMaxJobTest", 0, 1000000,
	                             &a->backfill_max_job_test)) < 0 ||
	    (r = tj_config_field_int(p, node, line, path, "pinTimeoutSeconds", 0, 86400,
	                             &a->pin_timeout_seconds)) < 0 ||
	    (r = tj_config_field_int(p, node, line, path, "restartWaitSeconds", 0, 604800,
	                             &a->restart_wait_seconds)) < 0 ||
	    (r = tj_config_field_string(p, node, line, path, "neverFits", false, 8, &never)) < 0)
		return r;
	if (never && strcmp(never, "Fail") != 0 && strcmp(never, "Wait") != 0)
		r = tj_config_fail(p, tj_config_field_line(node, "neverFits", line),
		                   "admission.neverFits", "\"%s\" is not Fail or Wait", never);
	a->wait_if_never_fits = never && !strcmp(never, "Wait");
	free(never);
	if (r < 0)
		return r;
	r = tj_config_field_string(p, node, line, path, "topologyLabel", false,
	                           TJ_DNS_SUBDOMAIN_MAX + 1 + TJ_LABEL_NAME_MAX,
	                           &a->topology_label);
	if (r < 0)
		return r;
	if (a->topology_label && !tj_config_valid_qualified_name(a->topology_label, false))
		return tj_config_fail(p, tj_config_field_line(node, "topologyLabel", line),
		                      "admission.topologyLabel", "\"%s\" is not a label key",
		                      a->topology_label);
	r = tj_config_field_sequence(p, node, line, "admission.namespaceLimits", "namespaceLimits",
	                             TJ_CONFIG_MAX_NAMESPACE_LIMITS, &seq, &seq_line);
	if (r < 0 || !seq)
		return r;
	a->limits = calloc((size_t)fy_node_sequence_item_count(seq) + 1, sizeof(*a->limits));
	if (!a->limits)
		return -ENOMEM;
	void *iter = NULL;
	struct fy_node *item;
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		char sub[48];
		struct tj_namespace_limit *l = &a->limits[i];

		snprintf(sub, sizeof(sub), "admission.namespaceLimits[%zu]", i);
		a->n_limits = i + 1;
		r = parse_limit(p, item, tj_config_line(item, seq_line), sub, config, l);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(a->limits[j].namespace, l->namespace) &&
			    !strcmp(a->limits[j].gpu_class, l->gpu_class))
				return tj_config_fail(
				        p, tj_config_line(item, seq_line), sub,
				        "a second limit for namespace \"%s\" and gpuClass \"%s\" "
				        "(also namespaceLimits[%zu])",
				        l->namespace, l->gpu_class, j);
	}
	return 0;
}

static int parse_admission_of(const struct tj_config_parser *p, struct fy_node *root,
                              struct tj_config *config)
{
	int line;
	struct fy_node *node = tj_config_section(root, "admission", &line);

	if (!node)
		return 0;
	config->admission = calloc(1, sizeof(*config->admission));
	if (!config->admission)
		return -ENOMEM;
	return parse_admission(p, node, line, config, config->admission);
}

/* commandPolicy.exemptNamespaces: namespaces (DNS labels, no duplicates) whose jobs the
 * command policy leaves alone. */
static int parse_command_policy(const struct tj_config_parser *p, struct fy_node *root,
                                struct tj_config *config)
{
	static const char *const fields[] = { "exemptNamespaces", NULL };
	struct fy_node *node, *seq = NULL, *item;
	int line, seq_line, r;
	void *iter = NULL;

	if (!(node = tj_config_section(root, "commandPolicy", &line)))
		return 0;
	r = tj_config_check_mapping(p, node, line, "commandPolicy", fields, "exemptNamespaces");
	if (r < 0)
		return r;
	r = tj_config_field_sequence(p, node, line, "commandPolicy.exemptNamespaces",
	                             "exemptNamespaces", TJ_CONFIG_MAX_EXEMPT_NAMESPACES, &seq,
	                             &seq_line);
	if (r < 0 || !seq)
		return r;
	config->command_exempt_namespaces =
	        calloc((size_t)fy_node_sequence_item_count(seq) + 1, sizeof(char *));
	if (!config->command_exempt_namespaces)
		return -ENOMEM;
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		char **names = config->command_exempt_namespaces;
		int item_line = tj_config_line(item, seq_line);
		char path[64];

		snprintf(path, sizeof(path), "commandPolicy.exemptNamespaces[%zu]", i);
		r = tj_config_scalar_dup(p, item, item_line, path, TJ_LABEL_NAME_MAX, &names[i]);
		if (r < 0)
			return r;
		config->n_command_exempt_namespaces = i + 1;
		if (!tj_config_valid_dns_label(names[i]))
			return tj_config_fail(p, item_line, path, "\"%s\" is not a namespace name",
			                      names[i]);
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[j], names[i]) == 0)
				return tj_config_fail(
				        p, item_line, path,
				        "namespace \"%s\" is listed twice (also [%zu])", names[i],
				        j);
	}
	return 0;
}

/* The retention section: how long finished jobs' pods and replaced attempts' pods stay. */
static int parse_retention_of(const struct tj_config_parser *p, struct fy_node *root,
                              struct tj_config *config)
{
	static const char *const fields[] = { "ttlSecondsAfterFinished", "keepFailedPodsSeconds",
		                              NULL };
	struct fy_node *node;
	int line, r;

	if (!(node = tj_config_section(root, "retention", &line)))
		return 0;
	r = tj_config_check_mapping(p, node, line, "retention", fields,
	                            "ttlSecondsAfterFinished, keepFailedPodsSeconds");
	if (r < 0)
		return r;
	config->retention = malloc(sizeof(*config->retention));
	if (!config->retention)
		return -ENOMEM;
	*config->retention = *tj_config_retention(NULL);
	line = tj_config_line(node, line);
	/* A week at most, as the CRDs' int32 allows far more than anyone keeps pods for. */
	r = tj_config_field_int(p, node, line, "retention", "ttlSecondsAfterFinished", 0, 604800,
	                        &config->retention->ttl_seconds_after_finished);
	if (r < 0)
		return r;
	return tj_config_field_int(p, node, line, "retention", "keepFailedPodsSeconds", 0, 604800,
	                           &config->retention->keep_failed_pods_seconds);
}

/* trainerStatus: where the pods report their progress (docs/operators.md). */
static int parse_trainer_status(const struct tj_config_parser *p, struct fy_node *root,
                                struct tj_config *config)
{
	static const char *const fields[] = { "url", "caConfigMap", NULL };
	struct fy_node *node;
	const char *host, *end;
	int line, r;

	if (!(node = tj_config_section(root, "trainerStatus", &line)))
		return 0;
	r = tj_config_check_mapping(p, node, line, "trainerStatus", fields, "url, caConfigMap");
	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	r = tj_config_field_string(p, node, line, "trainerStatus", "url", true, 256,
	                           &config->trainer_status_url);
	if (r < 0)
		return r;
	/* The pods append Kubeflow's path to it: a scheme, a host, a port, and nothing else. */
	host = strncmp(config->trainer_status_url, "https://", 8) == 0
	               ? config->trainer_status_url + 8
	               : NULL;
	end = host ? host + strcspn(host, "/?#") : NULL;
	if (!host || end == host || *end != '\0')
		return tj_config_fail(
		        p, tj_config_field_line(node, "url", line), "trainerStatus.url",
		        "\"%s\" is not https://HOST[:PORT] (no path)", config->trainer_status_url);
	r = tj_config_field_string(p, node, line, "trainerStatus", "caConfigMap", false,
	                           TJ_LABEL_NAME_MAX, &config->trainer_status_ca_config_map);
	if (r < 0 || !config->trainer_status_ca_config_map)
		return r;
	if (!tj_config_valid_dns_label(config->trainer_status_ca_config_map))
		return tj_config_fail(p, tj_config_field_line(node, "caConfigMap", line),
		                      "trainerStatus.caConfigMap", "\"%s\" is not a ConfigMap name",
		                      config->trainer_status_ca_config_map);
	return 0;
}

static int parse_root(const struct tj_config_parser *p, struct fy_node *root,
                      struct tj_config *config)
{
	static const char *const root_fields[] = { "gpuClasses",   "failurePolicy", "admission",
		                                   "walltime",     "commandPolicy", "retention",
		                                   "suspectNodes", "trainerStatus", NULL };
	int r = tj_config_check_mapping(p, root, 1, "", root_fields,
	                                "gpuClasses, failurePolicy, admission, walltime, "
	                                "commandPolicy, retention, suspectNodes, trainerStatus");
	if (r < 0)
		return r;
	r = parse_trainer_status(p, root, config);
	if (r < 0)
		return r;
	r = tj_config_parse_suspect(p, root, config);
	if (r < 0)
		return r;
	r = parse_command_policy(p, root, config);
	if (r < 0)
		return r;
	r = parse_retention_of(p, root, config);
	if (r < 0)
		return r;
	int section_line;
	struct fy_node *section = tj_config_section(root, "failurePolicy", &section_line);
	if (section) {
		config->failure_policy = calloc(1, sizeof(*config->failure_policy));
		if (!config->failure_policy)
			return -ENOMEM;
		r = parse_failure_policy(p, section, section_line, config->failure_policy);
		if (r < 0)
			return r;
	}
	struct fy_node_pair *pair = tj_config_find_pair(root, "gpuClasses");
	if (!pair)
		return tj_config_fail(p, tj_config_line(root, 1), "",
		                      "missing required field \"gpuClasses\"");
	int line = tj_config_line(fy_node_pair_key(pair), 1);
	struct fy_node *classes = fy_node_pair_value(pair);
	if (classes && fy_node_is_alias(classes))
		return tj_config_fail(p, line, "gpuClasses",
		                      "anchors and aliases are not supported");
	if (!classes || !fy_node_is_sequence(classes))
		return tj_config_fail(p, line, "gpuClasses", "must be a sequence of GPU classes");
	int count = fy_node_sequence_item_count(classes);
	if (count > TJ_CONFIG_MAX_CLASSES)
		return tj_config_fail(p, line, "gpuClasses", "has %d classes, the limit is %d",
		                      count, TJ_CONFIG_MAX_CLASSES);
	if (count == 0)
		return parse_admission_of(p, root, config);
	config->classes = calloc((size_t)count, sizeof(*config->classes));
	if (!config->classes)
		return -ENOMEM;
	config->n_classes = (size_t)count;

	void *iter = NULL;
	struct fy_node *item;
	for (size_t i = 0; (item = fy_node_sequence_iterate(classes, &iter)); i++) {
		char path[32];
		snprintf(path, sizeof(path), "gpuClasses[%zu]", i);
		int item_line = tj_config_line(item, line);
		r = parse_class(p, item, item_line, path, &config->classes[i]);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(config->classes[j].name, config->classes[i].name))
				return tj_config_fail(
				        p, tj_config_field_line(item, "name", item_line), path,
				        "duplicate class name \"%s\" (also gpuClasses[%zu])",
				        config->classes[i].name, j);
	}
	return parse_admission_of(p, root, config);
}

static bool all_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

int tj_config_parse(const char *yaml, size_t len, const char *origin, struct tj_config **ret,
                    char *err, size_t errlen)
{
	struct tj_config_parser p = { .origin = origin ? origin : "config",
		                      .err = err,
		                      .errlen = errlen };
	struct fy_diag *diag = NULL;
	struct fy_document *doc = NULL;
	struct tj_config *config = NULL;
	int r;

	if (err && errlen > 0)
		err[0] = '\0';
	if (len > TJ_CONFIG_MAX_BYTES) {
		tj_config_fail(&p, 1, "", "the file is %zu bytes long, the limit is %d", len,
		               TJ_CONFIG_MAX_BYTES);
		return -E2BIG;
	}
	if (all_blank(yaml, len))
		return tj_config_fail(&p, 1, "", "the file is empty; it must list gpuClasses");
	/* What would hang or crash libfyaml (a reload would block or kill the controller) is
	 * refused before it reads the text. */
	const char *why;
	size_t bad = tj_yaml_refused_at(yaml, len, &why);
	if (bad < len) {
		int line = 1;

		for (size_t i = 0; i < bad; i++)
			line += yaml[i] == '\n';
		return tj_config_fail(&p, line, "", "%s (byte %zu)", why, bad);
	}

	/* Errors are collected, never formatted: libfyaml 0.7.12 crashes while it draws the
	 * source line of an error under lines of many tabs (fuzz_config). */
	struct fy_diag_cfg diag_cfg;
	fy_diag_cfg_default(&diag_cfg);
	diag_cfg.fp = NULL;
	diag_cfg.colorize = false;
	diag = fy_diag_create(&diag_cfg);
	if (!diag)
		return -ENOMEM;
	fy_diag_set_collect_errors(diag, true);
	struct fy_parse_cfg parse_cfg = { .flags = FYPCF_QUIET, .diag = diag };
	doc = fy_document_build_from_string(&parse_cfg, yaml, len);
	if (!doc) {
		struct fy_diag_error *e = tj_yaml_first_error(diag);

		if (e)
			r = tj_config_fail(&p, e->line, "", "%s", e->msg);
		else
			r = tj_config_fail(&p, 1, "", "not a YAML document");
		goto out_diag;
	}

	config = calloc(1, sizeof(*config));
	if (!config) {
		r = -ENOMEM;
		goto out_doc;
	}
	r = parse_root(&p, fy_document_root(doc), config);
	if (r == 0)
		r = tj_config_parse_walltime(&p, fy_document_root(doc), config);
	if (r < 0)
		goto out_config;
	*ret = config;
	config = NULL;
out_config:
	tj_config_free(config);
out_doc:
	fy_document_destroy(doc);
out_diag:
	fy_diag_destroy(diag);
	return r;
}

int tj_config_read_file(const char *path, char **ret, size_t *ret_len, char *err, size_t errlen)
{
	/* The reader refuses anything but a regular file, so that a FIFO at that path cannot
	 * block the loop on a reload. */
	int r = tj_read_file(path, TJ_CONFIG_MAX_BYTES, 0, ret, ret_len);

	if (r == -E2BIG)
		snprintf(err, errlen, "%s:1: the file is larger than %d bytes", path,
		         TJ_CONFIG_MAX_BYTES);
	else if (r == -EINVAL)
		snprintf(err, errlen, "%s: not a regular file", path);
	else if (r < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	return r;
}

int tj_config_load_file(const char *path, struct tj_config **ret, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int r = tj_config_read_file(path, &buf, &len, err, errlen);
	if (r < 0)
		return r;
	r = tj_config_parse(buf, len, path, ret, err, errlen);
	free(buf);
	return r;
}
