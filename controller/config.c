/* The controller's config file: its schema, checked while parsing with libfyaml's document
 * API. */
#include "controller/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "base/fileio.h"

/* Kubernetes' limits: a DNS-1123 subdomain (a label key's prefix) has at most 253
 * characters, a label value and a label key's name part at most 63. */
#define DNS_SUBDOMAIN_MAX 253
#define LABEL_NAME_MAX    63

struct parser {
	const char *origin;
	char *err;
	size_t errlen;
};

static int fail(const struct parser *p, int line, const char *path, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Writes "origin:LINE: path: message" into the caller's buffer; returns -EINVAL. */
static int fail(const struct parser *p, int line, const char *path, const char *fmt, ...)
{
	if (p->err && p->errlen > 0) {
		int n = snprintf(p->err, p->errlen, "%s:%d: %s%s", p->origin, line, path,
		                 path[0] ? ": " : "");
		if (n >= 0 && (size_t)n < p->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

/* The 1-based line where a node starts. libfyaml 0.7 has marks only on tokens, so a
 * collection is located by its first scalar; an empty one by fallback (its key's line). */
static int node_line(struct fy_node *node, int fallback)
{
	while (node) {
		if (fy_node_is_scalar(node)) {
			struct fy_token *token = fy_node_get_scalar_token(node);
			const struct fy_mark *mark = token ? fy_token_start_mark(token) : NULL;
			return mark ? mark->line + 1 : fallback;
		}
		void *iter = NULL;
		if (fy_node_is_mapping(node)) {
			struct fy_node_pair *pair = fy_node_mapping_iterate(node, &iter);
			node = pair ? fy_node_pair_key(pair) : NULL;
		} else {
			node = fy_node_sequence_iterate(node, &iter);
		}
	}
	return fallback;
}

/* A YAML null: no node at all (an empty value), or a plain ~ / null. */
static bool node_is_null(struct fy_node *node)
{
	if (!node)
		return true;
	if (!fy_node_is_scalar(node) || fy_node_get_style(node) != FYNS_PLAIN)
		return false;
	size_t len;
	const char *text = fy_node_get_scalar(node, &len);
	return len == 0 || (len == 1 && text[0] == '~') ||
	       (len == 4 &&
	        (!memcmp(text, "null", 4) || !memcmp(text, "Null", 4) || !memcmp(text, "NULL", 4)));
}

/* Copies a scalar of at most max bytes into a new string. */
static int scalar_dup(const struct parser *p, struct fy_node *node, int line, const char *path,
                      size_t max, char **ret)
{
	if (node && fy_node_is_alias(node))
		return fail(p, line, path, "anchors and aliases are not supported");
	if (node_is_null(node))
		return fail(p, line, path, "must not be empty");
	if (!fy_node_is_scalar(node))
		return fail(p, line, path, "must be a string, not a %s",
		            fy_node_is_mapping(node) ? "mapping" : "sequence");
	size_t len;
	const char *text = fy_node_get_scalar(node, &len);
	if (len == 0)
		return fail(p, line, path, "must not be empty");
	if (len > max)
		return fail(p, line, path, "is %zu characters long, the limit is %zu", len, max);
	if (memchr(text, '\0', len))
		return fail(p, line, path, "must not contain a NUL character");
	char *s = strndup(text, len);
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

static bool is_alnum(char c)
{
	return isascii((unsigned char)c) && isalnum((unsigned char)c);
}

/* A DNS-1123 label: lower case letters, digits and '-', alphanumeric at both ends. */
static bool valid_dns_label(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > LABEL_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		          (c == '-' && i > 0 && i + 1 < len);
		if (!ok)
			return false;
	}
	return true;
}

/* A DNS-1123 subdomain: dot-separated DNS labels, at most 253 characters. */
static bool valid_dns_subdomain(const char *s, size_t len)
{
	if (len == 0 || len > DNS_SUBDOMAIN_MAX)
		return false;
	char label[LABEL_NAME_MAX + 1];
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		size_t n = i - start;
		if (n == 0 || n > LABEL_NAME_MAX)
			return false;
		memcpy(label, s + start, n);
		label[n] = '\0';
		if (!valid_dns_label(label))
			return false;
		start = i + 1;
	}
	return true;
}

/* A label value (or a label key's name part): at most 63 of [A-Za-z0-9_.-], alphanumeric at
 * both ends. */
static bool valid_label_value(const char *s, size_t len)
{
	if (len == 0 || len > LABEL_NAME_MAX)
		return false;
	if (!is_alnum(s[0]) || !is_alnum(s[len - 1]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A qualified name as label keys and resource names use it: [prefix/]name, where the prefix
 * is a DNS subdomain. */
static bool valid_qualified_name(const char *s, bool need_prefix)
{
	const char *slash = strchr(s, '/');
	if (!slash)
		return !need_prefix && valid_label_value(s, strlen(s));
	return valid_dns_subdomain(s, (size_t)(slash - s)) &&
	       valid_label_value(slash + 1, strlen(slash + 1));
}

/* Looks a key up in a list of allowed names. */
static bool key_allowed(const char *key, size_t len, const char *const *allowed)
{
	for (; *allowed; allowed++)
		if (strlen(*allowed) == len && !memcmp(key, *allowed, len))
			return true;
	return false;
}

/* Checks that a node is a mapping whose keys are plain scalars from allowed (or any, when
 * allowed is NULL). */
static int check_mapping(const struct parser *p, struct fy_node *node, int line, const char *path,
                         const char *const *allowed, const char *expected)
{
	if (node && fy_node_is_alias(node))
		return fail(p, line, path, "anchors and aliases are not supported");
	if (!node || !fy_node_is_mapping(node))
		return fail(p, line, path, "must be a mapping");
	void *iter = NULL;
	struct fy_node_pair *pair;
	while ((pair = fy_node_mapping_iterate(node, &iter))) {
		struct fy_node *key = fy_node_pair_key(pair);
		int key_line = node_line(key, line);
		if (!key || !fy_node_is_scalar(key) || fy_node_is_alias(key))
			return fail(p, key_line, path, "keys must be plain strings");
		if (!allowed)
			continue;
		size_t len;
		const char *text = fy_node_get_scalar(key, &len);
		if (!key_allowed(text, len, allowed))
			return fail(p, key_line, path, "unknown field \"%.*s\" (expected %s)",
			            (int)(len > 64 ? 64 : len), text, expected);
	}
	return 0;
}

/* The value of key in a mapping checked by check_mapping, or NULL. */
static struct fy_node_pair *find_pair(struct fy_node *mapping, const char *key)
{
	void *iter = NULL;
	struct fy_node_pair *pair;
	size_t want = strlen(key);
	while ((pair = fy_node_mapping_iterate(mapping, &iter))) {
		size_t len;
		const char *text = fy_node_get_scalar(fy_node_pair_key(pair), &len);
		if (len == want && !memcmp(text, key, len))
			return pair;
	}
	return NULL;
}

/* Reads an optional string field: *ret stays NULL when the field is absent or null. */
static int field_string(const struct parser *p, struct fy_node *mapping, int line, const char *path,
                        const char *key, bool required, size_t max, char **ret)
{
	char sub[160];
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	struct fy_node_pair *pair = find_pair(mapping, key);
	if (!pair || (!required && node_is_null(fy_node_pair_value(pair)))) {
		if (required)
			return fail(p, line, path, "missing required field \"%s\"", key);
		return 0;
	}
	struct fy_node *value = fy_node_pair_value(pair);
	return scalar_dup(p, value, node_line(value, node_line(fy_node_pair_key(pair), line)), sub,
	                  max, ret);
}

/* The line of a field's value (or of its key, for an empty value). */
static int field_line(struct fy_node *mapping, const char *key, int fallback)
{
	struct fy_node_pair *pair = find_pair(mapping, key);
	if (!pair)
		return fallback;
	int key_line = node_line(fy_node_pair_key(pair), fallback);
	return node_line(fy_node_pair_value(pair), key_line);
}

static const char *const class_fields[] = { "name",       "resource",    "arch",
	                                    "nodeLabels", "tolerations", NULL };
static const char *const toleration_fields[] = { "key", "operator", "value", "effect", NULL };

static int parse_node_labels(const struct parser *p, struct fy_node *node, int line,
                             const char *path, struct tj_gpu_class *class)
{
	int r = check_mapping(p, node, line, path, NULL, NULL);
	if (r < 0)
		return r;
	int count = fy_node_mapping_item_count(node);
	if (count > TJ_CONFIG_MAX_NODE_LABELS)
		return fail(p, line, path, "has %d labels, the limit is %d", count,
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
		int key_line = node_line(key, line);
		r = scalar_dup(p, key, key_line, path, DNS_SUBDOMAIN_MAX + 1 + LABEL_NAME_MAX,
		               &kv->key);
		if (r < 0)
			return r;
		if (!valid_qualified_name(kv->key, false))
			return fail(p, key_line, path,
			            "\"%s\" is not a valid label key ([prefix/]name, name at most "
			            "63 characters)",
			            kv->key);
		char sub[160 + LABEL_NAME_MAX];
		snprintf(sub, sizeof(sub), "%s.%s", path, kv->key);
		struct fy_node *value = fy_node_pair_value(pair);
		int value_line = node_line(value, key_line);
		r = scalar_dup(p, value, value_line, sub, LABEL_NAME_MAX, &kv->value);
		if (r < 0)
			return r;
		if (!valid_label_value(kv->value, strlen(kv->value)))
			return fail(p, value_line, sub,
			            "\"%s\" is not a valid label value (letters, digits, '-', '_' "
			            "and '.', alphanumeric at both ends)",
			            kv->value);
	}
	return 0;
}

static int parse_toleration(const struct parser *p, struct fy_node *node, int line,
                            const char *path, struct tj_toleration *t)
{
	int r = check_mapping(p, node, line, path, toleration_fields,
	                      "key, operator, value, effect");
	if (r < 0)
		return r;
	line = node_line(node, line);
	r = field_string(p, node, line, path, "key", false, DNS_SUBDOMAIN_MAX + 1 + LABEL_NAME_MAX,
	                 &t->key);
	if (r < 0)
		return r;
	if (t->key && !valid_qualified_name(t->key, false))
		return fail(p, field_line(node, "key", line), path,
		            "key \"%s\" is not a valid taint key", t->key);
	r = field_string(p, node, line, path, "operator", false, 16, &t->operator_);
	if (r < 0)
		return r;
	if (!t->operator_) {
		/* The default of core/v1 Toleration. */
		t->operator_ = strdup("Equal");
		if (!t->operator_)
			return -ENOMEM;
	} else if (strcmp(t->operator_, "Equal") && strcmp(t->operator_, "Exists")) {
		return fail(p, field_line(node, "operator", line), path,
		            "operator must be Equal or Exists, not \"%s\"", t->operator_);
	}
	bool exists = !strcmp(t->operator_, "Exists");
	r = field_string(p, node, line, path, "value", false, LABEL_NAME_MAX, &t->value);
	if (r < 0)
		return r;
	if (t->value && exists)
		return fail(p, field_line(node, "value", line), path,
		            "value must be empty when operator is Exists");
	if (t->value && !valid_label_value(t->value, strlen(t->value)))
		return fail(p, field_line(node, "value", line), path,
		            "value \"%s\" is not a valid taint value", t->value);
	if (!t->key && !exists)
		return fail(p, line, path, "a toleration without a key must have operator Exists");
	r = field_string(p, node, line, path, "effect", false, 32, &t->effect);
	if (r < 0)
		return r;
	if (t->effect && strcmp(t->effect, "NoSchedule") && strcmp(t->effect, "PreferNoSchedule") &&
	    strcmp(t->effect, "NoExecute"))
		return fail(p, field_line(node, "effect", line), path,
		            "effect must be NoSchedule, PreferNoSchedule or NoExecute, not \"%s\"",
		            t->effect);
	return 0;
}

static int parse_tolerations(const struct parser *p, struct fy_node *node, int line,
                             const char *path, struct tj_gpu_class *class)
{
	if (node && fy_node_is_alias(node))
		return fail(p, line, path, "anchors and aliases are not supported");
	if (!node || !fy_node_is_sequence(node))
		return fail(p, line, path, "must be a sequence");
	int count = fy_node_sequence_item_count(node);
	if (count > TJ_CONFIG_MAX_TOLERATIONS)
		return fail(p, line, path, "has %d tolerations, the limit is %d", count,
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
		int r = parse_toleration(p, item, node_line(item, line), sub,
		                         &class->tolerations[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_class(const struct parser *p, struct fy_node *node, int line, const char *path,
                       struct tj_gpu_class *class)
{
	int r = check_mapping(p, node, line, path, class_fields,
	                      "name, resource, arch, nodeLabels, tolerations");
	if (r < 0)
		return r;
	line = node_line(node, line);

	r = field_string(p, node, line, path, "name", true, LABEL_NAME_MAX, &class->name);
	if (r < 0)
		return r;
	if (!valid_dns_label(class->name))
		return fail(p, field_line(node, "name", line), path,
		            "name \"%s\" is not a DNS label (lower case letters, digits and '-'); "
		            "it names the runtime torch-<name>",
		            class->name);

	r = field_string(p, node, line, path, "resource", true,
	                 DNS_SUBDOMAIN_MAX + 1 + LABEL_NAME_MAX, &class->resource);
	if (r < 0)
		return r;
	if (!valid_qualified_name(class->resource, true))
		return fail(p, field_line(node, "resource", line), path,
		            "resource \"%s\" is not an extended resource name (domain/name, like "
		            "nvidia.com/gpu)",
		            class->resource);

	r = field_string(p, node, line, path, "arch", false, LABEL_NAME_MAX, &class->arch);
	if (r < 0)
		return r;
	if (class->arch && !valid_label_value(class->arch, strlen(class->arch)))
		return fail(p, field_line(node, "arch", line), path,
		            "arch \"%s\" is not a valid kubernetes.io/arch value", class->arch);

	char sub[160];
	struct fy_node_pair *pair = find_pair(node, "nodeLabels");
	if (pair && !node_is_null(fy_node_pair_value(pair))) {
		snprintf(sub, sizeof(sub), "%s.nodeLabels", path);
		r = parse_node_labels(p, fy_node_pair_value(pair),
		                      node_line(fy_node_pair_key(pair), line), sub, class);
		if (r < 0)
			return r;
	}
	pair = find_pair(node, "tolerations");
	if (pair && !node_is_null(fy_node_pair_value(pair))) {
		snprintf(sub, sizeof(sub), "%s.tolerations", path);
		r = parse_tolerations(p, fy_node_pair_value(pair),
		                      node_line(fy_node_pair_key(pair), line), sub, class);
		if (r < 0)
			return r;
	}
	return 0;
}

static const char *const policy_fields[] = { "maxRestarts",
	                                     "nodeGracePeriodSeconds",
	                                     "restartBackoff",
	                                     "permanentExitCodes",
	                                     "gpuHealth",
	                                     "faultCordonConditions",
	                                     NULL };
static const char *const backoff_fields[] = { "initialSeconds", "maxSeconds", NULL };
static const char *const gpu_health_fields[] = { "conditions", "taints", NULL };

/* Reads a decimal integer in [min, max]. */
static int scalar_int(const struct parser *p, struct fy_node *node, int line, const char *path,
                      int min, int max, int *ret)
{
	char *text = NULL, *end;
	int r = scalar_dup(p, node, line, path, 16, &text);
	if (r < 0)
		return r;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || *end || end == text || !(isdigit((unsigned char)text[0]) || text[0] == '-') ||
	    v < min || v > max)
		r = fail(p, line, path, "\"%s\" is not an integer between %d and %d", text, min,
		         max);
	else
		*ret = (int)v;
	free(text);
	return r;
}

/* An optional integer field: *ret keeps its value when the field is absent or null. */
static int field_int(const struct parser *p, struct fy_node *mapping, int line, const char *path,
                     const char *key, int min, int max, int *ret)
{
	struct fy_node_pair *pair = find_pair(mapping, key);
	if (!pair || node_is_null(fy_node_pair_value(pair)))
		return 0;
	char sub[160];
	snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", key);
	return scalar_int(p, fy_node_pair_value(pair), field_line(mapping, key, line), sub, min,
	                  max, ret);
}

/* An optional sequence field: NULL when absent or null (the default stays), else checked to
 * be a sequence of at most max items. */
static int field_sequence(const struct parser *p, struct fy_node *mapping, int line,
                          const char *path, const char *key, int max, struct fy_node **ret,
                          int *ret_line)
{
	struct fy_node_pair *pair = find_pair(mapping, key);
	*ret = NULL;
	if (!pair || node_is_null(fy_node_pair_value(pair)))
		return 0;
	struct fy_node *seq = fy_node_pair_value(pair);
	*ret_line = node_line(fy_node_pair_key(pair), line);
	if (fy_node_is_alias(seq))
		return fail(p, *ret_line, path, "anchors and aliases are not supported");
	if (!fy_node_is_sequence(seq))
		return fail(p, *ret_line, path, "must be a sequence");
	int count = fy_node_sequence_item_count(seq);
	if (count > max)
		return fail(p, *ret_line, path, "has %d items, the limit is %d", count, max);
	*ret = seq;
	return 0;
}

/* A list of node condition types or taint keys; absent (or mapping NULL) keeps the
 * default, copied. The list is the caller's from the start, so that on an error it is freed
 * with the config that holds it. */
static int parse_names(const struct parser *p, struct fy_node *mapping, int line, const char *path,
                       const char *key, bool conditions, char **defaults, size_t n_defaults,
                       char ***ret, size_t *ret_n)
{
	char sub[160];
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	struct fy_node *seq = NULL;
	int seq_line = line, r = 0;
	if (mapping)
		r = field_sequence(p, mapping, line, sub, key, TJ_CONFIG_MAX_SIGNALS, &seq,
		                   &seq_line);
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
		int item_line = node_line(item, seq_line);
		char item_path[200];
		snprintf(item_path, sizeof(item_path), "%s[%zu]", sub, i);
		r = scalar_dup(p, item, item_line, item_path,
		               DNS_SUBDOMAIN_MAX + 1 + LABEL_NAME_MAX, &names[i]);
		if (r == 0 && !valid_qualified_name(names[i], false))
			r = fail(p, item_line, item_path, "\"%s\" is not a valid %s", names[i],
			         conditions ? "condition type" : "taint key");
		/* Ready True is the healthy state: listing it would fail every healthy node. */
		if (r == 0 && conditions && !strcmp(names[i], "Ready"))
			r = fail(p, item_line, item_path,
			         "Ready is judged by its own rule (False or Unknown is unhealthy) "
			         "and cannot be listed");
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_exit_codes(const struct parser *p, struct fy_node *mapping, int line,
                            struct tj_failure_policy *policy)
{
	const struct tj_failure_policy *defaults = tj_config_failure_policy(NULL);
	struct fy_node *seq;
	int seq_line,
	        r = field_sequence(p, mapping, line, "failurePolicy.permanentExitCodes",
	                           "permanentExitCodes", TJ_CONFIG_MAX_EXIT_CODES, &seq, &seq_line);
	if (r < 0)
		return r;
	size_t n =
	        seq ? (size_t)fy_node_sequence_item_count(seq) : defaults->n_permanent_exit_codes;
	policy->permanent_exit_codes = calloc(n + 1, sizeof(int));
	if (!policy->permanent_exit_codes)
		return -ENOMEM;
	policy->n_permanent_exit_codes = n;
	void *iter = NULL;
	for (size_t i = 0; i < n; i++) {
		if (!seq) {
			policy->permanent_exit_codes[i] = defaults->permanent_exit_codes[i];
			continue;
		}
		struct fy_node *item = fy_node_sequence_iterate(seq, &iter);
		char item_path[64];
		snprintf(item_path, sizeof(item_path), "failurePolicy.permanentExitCodes[%zu]", i);
		/* 0 is success; a container's exit code is one byte. */
		r = scalar_int(p, item, node_line(item, seq_line), item_path, 1, 255,
		               &policy->permanent_exit_codes[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_failure_policy(const struct parser *p, struct fy_node *node, int line,
                                struct tj_failure_policy *policy)
{
	const struct tj_failure_policy *defaults = tj_config_failure_policy(NULL);
	const char *path = "failurePolicy";
	int r = check_mapping(p, node, line, path, policy_fields,
	                      "maxRestarts, nodeGracePeriodSeconds, restartBackoff, "
	                      "permanentExitCodes, gpuHealth, faultCordonConditions");
	if (r < 0)
		return r;
	line = node_line(node, line);
	policy->max_restarts = defaults->max_restarts;
	policy->node_grace_period_seconds = defaults->node_grace_period_seconds;
	policy->backoff_initial_seconds = defaults->backoff_initial_seconds;
	policy->backoff_max_seconds = defaults->backoff_max_seconds;
	r = field_int(p, node, line, path, "maxRestarts", 0, 1000, &policy->max_restarts);
	if (r < 0)
		return r;
	r = field_int(p, node, line, path, "nodeGracePeriodSeconds", 0, 86400,
	              &policy->node_grace_period_seconds);
	if (r < 0)
		return r;
	struct fy_node_pair *pair = find_pair(node, "restartBackoff");
	if (pair && !node_is_null(fy_node_pair_value(pair))) {
		struct fy_node *backoff = fy_node_pair_value(pair);
		const char *sub = "failurePolicy.restartBackoff";
		int bline = node_line(fy_node_pair_key(pair), line);
		r = check_mapping(p, backoff, bline, sub, backoff_fields,
		                  "initialSeconds, maxSeconds");
		if (r < 0)
			return r;
		r = field_int(p, backoff, bline, sub, "initialSeconds", 0, 86400,
		              &policy->backoff_initial_seconds);
		if (r < 0)
			return r;
		r = field_int(p, backoff, bline, sub, "maxSeconds", 0, 86400,
		              &policy->backoff_max_seconds);
		if (r < 0)
			return r;
		if (policy->backoff_max_seconds < policy->backoff_initial_seconds)
			return fail(p, bline, sub,
			            "maxSeconds (%d) must not be less than initialSeconds (%d)",
			            policy->backoff_max_seconds, policy->backoff_initial_seconds);
	}
	r = parse_exit_codes(p, node, line, policy);
	if (r < 0)
		return r;
	struct fy_node *gpu = NULL;
	int gline = line;
	pair = find_pair(node, "gpuHealth");
	if (pair && !node_is_null(fy_node_pair_value(pair))) {
		gpu = fy_node_pair_value(pair);
		gline = node_line(fy_node_pair_key(pair), line);
		r = check_mapping(p, gpu, gline, "failurePolicy.gpuHealth", gpu_health_fields,
		                  "conditions, taints");
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
	"enabled",       "backfill",        "neverFits", "pinTimeoutSeconds",
	"topologyLabel", "namespaceLimits", NULL,
};
static const char *const limit_fields[] = { "namespace", "gpuClass", "maxGPUs", NULL };

/* An optional boolean field: *ret keeps its value when the field is absent or null. */
static int field_bool(const struct parser *p, struct fy_node *mapping, int line, const char *path,
                      const char *key, bool *ret)
{
	char sub[160], *text = NULL;
	struct fy_node_pair *pair = find_pair(mapping, key);
	int r;

	if (!pair || node_is_null(fy_node_pair_value(pair)))
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	r = field_string(p, mapping, line, path, key, true, 8, &text);
	if (r < 0)
		return r;
	if (!strcmp(text, "true"))
		*ret = true;
	else if (!strcmp(text, "false"))
		*ret = false;
	else
		r = fail(p, field_line(mapping, key, line), sub, "\"%s\" is not true or false",
		         text);
	free(text);
	return r;
}

static int parse_limit(const struct parser *p, struct fy_node *node, int line, const char *path,
                       const struct tj_config *config, struct tj_namespace_limit *limit)
{
	int r = check_mapping(p, node, line, path, limit_fields, "namespace, gpuClass, maxGPUs");
	int max = -1;

	if (r < 0)
		return r;
	line = node_line(node, line);
	r = field_string(p, node, line, path, "namespace", true, LABEL_NAME_MAX, &limit->namespace);
	if (r < 0)
		return r;
	if (strcmp(limit->namespace, "*") != 0 && !valid_dns_label(limit->namespace))
		return fail(p, field_line(node, "namespace", line), path,
		            "namespace \"%s\" is not a DNS label (or \"*\")", limit->namespace);
	r = field_string(p, node, line, path, "gpuClass", true, LABEL_NAME_MAX, &limit->gpu_class);
	if (r < 0)
		return r;
	if (!tj_config_find_class(config, limit->gpu_class))
		return fail(p, field_line(node, "gpuClass", line), path,
		            "gpuClass \"%s\" is not one of gpuClasses", limit->gpu_class);
	r = field_int(p, node, line, path, "maxGPUs", 0, 1000000, &max);
	if (r < 0)
		return r;
	if (max < 0)
		return fail(p, line, path, "missing required field \"maxGPUs\"");
	limit->max_gpus = max;
	return 0;
}

/* The admission section; read after gpuClasses, which its limits name. */
static int parse_admission(const struct parser *p, struct fy_node *node, int line,
                           const struct tj_config *config, struct tj_admission_policy *a)
{
	const char *path = "admission";
	char *never = NULL;
	struct fy_node *seq = NULL;
	int seq_line = line;
	int r = check_mapping(p, node, line, path, admission_fields,
	                      "enabled, backfill, neverFits, pinTimeoutSeconds, topologyLabel, "
	                      "namespaceLimits");

	if (r < 0)
		return r;
	line = node_line(node, line);
	*a = *tj_config_admission(NULL);
	a->topology_label = NULL;
	a->limits = NULL;
	a->n_limits = 0;
	if ((r = field_bool(p, node, line, path, "enabled", &a->enabled)) < 0 ||
	    (r = field_bool(p, node, line, path, "backfill", &a->backfill)) < 0 ||
	    (r = field_int(p, node, line, path, "pinTimeoutSeconds", 0, 86400,
	                   &a->pin_timeout_seconds)) < 0 ||
	    (r = field_string(p, node, line, path, "neverFits", false, 8, &never)) < 0)
		return r;
	if (never && strcmp(never, "Fail") != 0 && strcmp(never, "Wait") != 0)
		r = fail(p, field_line(node, "neverFits", line), "admission.neverFits",
		         "\"%s\" is not Fail or Wait", never);
	a->wait_if_never_fits = never && !strcmp(never, "Wait");
	free(never);
	if (r < 0)
		return r;
	r = field_string(p, node, line, path, "topologyLabel", false,
	                 DNS_SUBDOMAIN_MAX + 1 + LABEL_NAME_MAX, &a->topology_label);
	if (r < 0)
		return r;
	if (a->topology_label && !valid_qualified_name(a->topology_label, false))
		return fail(p, field_line(node, "topologyLabel", line), "admission.topologyLabel",
		            "\"%s\" is not a label key", a->topology_label);
	r = field_sequence(p, node, line, "admission.namespaceLimits", "namespaceLimits",
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
		r = parse_limit(p, item, node_line(item, seq_line), sub, config, l);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(a->limits[j].namespace, l->namespace) &&
			    !strcmp(a->limits[j].gpu_class, l->gpu_class))
				return fail(
				        p, node_line(item, seq_line), sub,
				        "a second limit for namespace \"%s\" and gpuClass \"%s\" "
				        "(also namespaceLimits[%zu])",
				        l->namespace, l->gpu_class, j);
	}
	return 0;
}

static int parse_admission_of(const struct parser *p, struct fy_node *root,
                              struct tj_config *config)
{
	struct fy_node_pair *pair = find_pair(root, "admission");

	if (!pair || node_is_null(fy_node_pair_value(pair)))
		return 0;
	config->admission = calloc(1, sizeof(*config->admission));
	if (!config->admission)
		return -ENOMEM;
	return parse_admission(p, fy_node_pair_value(pair), node_line(fy_node_pair_key(pair), 1),
	                       config, config->admission);
}

static int parse_root(const struct parser *p, struct fy_node *root, struct tj_config *config)
{
	static const char *const root_fields[] = { "gpuClasses", "failurePolicy", "admission",
		                                   NULL };
	int r = check_mapping(p, root, 1, "", root_fields, "gpuClasses, failurePolicy, admission");
	if (r < 0)
		return r;
	struct fy_node_pair *pair = find_pair(root, "failurePolicy");
	if (pair && !node_is_null(fy_node_pair_value(pair))) {
		config->failure_policy = calloc(1, sizeof(*config->failure_policy));
		if (!config->failure_policy)
			return -ENOMEM;
		r = parse_failure_policy(p, fy_node_pair_value(pair),
		                         node_line(fy_node_pair_key(pair), 1),
		                         config->failure_policy);
		if (r < 0)
			return r;
	}
	pair = find_pair(root, "gpuClasses");
	if (!pair)
		return fail(p, node_line(root, 1), "", "missing required field \"gpuClasses\"");
	int line = node_line(fy_node_pair_key(pair), 1);
	struct fy_node *classes = fy_node_pair_value(pair);
	if (classes && fy_node_is_alias(classes))
		return fail(p, line, "gpuClasses", "anchors and aliases are not supported");
	if (!classes || !fy_node_is_sequence(classes))
		return fail(p, line, "gpuClasses", "must be a sequence of GPU classes");
	int count = fy_node_sequence_item_count(classes);
	if (count > TJ_CONFIG_MAX_CLASSES)
		return fail(p, line, "gpuClasses", "has %d classes, the limit is %d", count,
		            TJ_CONFIG_MAX_CLASSES);
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
		int item_line = node_line(item, line);
		r = parse_class(p, item, item_line, path, &config->classes[i]);
		if (r < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(config->classes[j].name, config->classes[i].name))
				return fail(p, field_line(item, "name", item_line), path,
				            "duplicate class name \"%s\" (also gpuClasses[%zu])",
				            config->classes[i].name, j);
	}
	return parse_admission_of(p, root, config);
}

/* libfyaml reports syntax errors through its diagnostic output as
 * "<input>:LINE:COLUMN: error: MESSAGE"; the first error is kept. */
struct syntax_error {
	int line;
	char message[160];
};

static void collect_diag(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
	struct syntax_error *e = user;
	static const char marker[] = ": error: ";
	if (e->message[0])
		return;
	const char *found = memmem(buf, len, marker, sizeof(marker) - 1);
	if (!found)
		return;
	/* Back over ":COLUMN" and ":LINE" to find the line number. */
	const char *q = found;
	int colons = 0;
	while (q > buf && colons < 2)
		if (*--q == ':')
			colons++;
	e->line = colons == 2 ? atoi(q + 1) : 1;
	const char *msg = found + sizeof(marker) - 1;
	size_t n = len - (size_t)(msg - buf);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		n--;
	if (n >= sizeof(e->message))
		n = sizeof(e->message) - 1;
	memcpy(e->message, msg, n);
	e->message[n] = '\0';
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
	struct parser p = { .origin = origin ? origin : "config", .err = err, .errlen = errlen };
	struct syntax_error syntax = { 0 };
	struct fy_diag *diag = NULL;
	struct fy_document *doc = NULL;
	struct tj_config *config = NULL;
	int r;

	if (err && errlen > 0)
		err[0] = '\0';
	if (len > TJ_CONFIG_MAX_BYTES) {
		fail(&p, 1, "", "the file is %zu bytes long, the limit is %d", len,
		     TJ_CONFIG_MAX_BYTES);
		return -E2BIG;
	}
	if (all_blank(yaml, len))
		return fail(&p, 1, "", "the file is empty; it must list gpuClasses");

	struct fy_diag_cfg diag_cfg;
	fy_diag_cfg_default(&diag_cfg);
	diag_cfg.fp = NULL;
	diag_cfg.output_fn = collect_diag;
	diag_cfg.user = &syntax;
	diag_cfg.colorize = false;
	diag = fy_diag_create(&diag_cfg);
	if (!diag)
		return -ENOMEM;
	struct fy_parse_cfg parse_cfg = { .flags = FYPCF_QUIET, .diag = diag };
	doc = fy_document_build_from_string(&parse_cfg, yaml, len);
	if (!doc) {
		if (syntax.message[0])
			r = fail(&p, syntax.line, "", "%s", syntax.message);
		else
			r = fail(&p, 1, "", "not a YAML document");
		goto out_diag;
	}

	config = calloc(1, sizeof(*config));
	if (!config) {
		r = -ENOMEM;
		goto out_doc;
	}
	r = parse_root(&p, fy_document_root(doc), config);
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
