#include "controller/config/config_fields_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/settings.h"

/* Writes "origin:LINE: path: message" into the caller's buffer; returns -EINVAL. */
int tj_config_fail(const struct tj_config_parser *p, int line, const char *path, const char *fmt,
                   ...)
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
int tj_config_line(struct fy_node *node, int fallback)
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
bool tj_config_is_null(struct fy_node *node)
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
int tj_config_scalar_dup(const struct tj_config_parser *p, struct fy_node *node, int line,
                         const char *path, size_t max, char **ret)
{
	if (node && fy_node_is_alias(node))
		return tj_config_fail(p, line, path, "anchors and aliases are not supported");
	if (tj_config_is_null(node))
		return tj_config_fail(p, line, path, "must not be empty");
	if (!fy_node_is_scalar(node))
		return tj_config_fail(p, line, path, "must be a string, not a %s",
		                      fy_node_is_mapping(node) ? "mapping" : "sequence");
	size_t len;
	const char *text = fy_node_get_scalar(node, &len);
	if (len == 0)
		return tj_config_fail(p, line, path, "must not be empty");
	if (len > max)
		return tj_config_fail(p, line, path, "is %zu characters long, the limit is %zu",
		                      len, max);
	if (memchr(text, '\0', len))
		return tj_config_fail(p, line, path, "must not contain a NUL character");
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
bool tj_config_valid_dns_label(const char *s)
{
	size_t len = strlen(s);
	if (len == 0 || len > TJ_LABEL_NAME_MAX)
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
	if (len == 0 || len > TJ_DNS_SUBDOMAIN_MAX)
		return false;
	char label[TJ_LABEL_NAME_MAX + 1];
	size_t start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '.')
			continue;
		size_t n = i - start;
		if (n == 0 || n > TJ_LABEL_NAME_MAX)
			return false;
		memcpy(label, s + start, n);
		label[n] = '\0';
		if (!tj_config_valid_dns_label(label))
			return false;
		start = i + 1;
	}
	return true;
}

/* A label value (or a label key's name part): at most 63 of [A-Za-z0-9_.-], alphanumeric at
 * both ends. */
bool tj_config_valid_label_value(const char *s, size_t len)
{
	if (len == 0 || len > TJ_LABEL_NAME_MAX)
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
bool tj_config_valid_qualified_name(const char *s, bool need_prefix)
{
	const char *slash = strchr(s, '/');
	if (!slash)
		return !need_prefix && tj_config_valid_label_value(s, strlen(s));
	return valid_dns_subdomain(s, (size_t)(slash - s)) &&
	       tj_config_valid_label_value(slash + 1, strlen(slash + 1));
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
int tj_config_check_mapping(const struct tj_config_parser *p, struct fy_node *node, int line,
                            const char *path, const char *const *allowed, const char *expected)
{
	if (node && fy_node_is_alias(node))
		return tj_config_fail(p, line, path, "anchors and aliases are not supported");
	if (!node || !fy_node_is_mapping(node))
		return tj_config_fail(p, line, path, "must be a mapping");
	void *iter = NULL;
	struct fy_node_pair *pair;
	while ((pair = fy_node_mapping_iterate(node, &iter))) {
		struct fy_node *key = fy_node_pair_key(pair);
		int key_line = tj_config_line(key, line);
		if (!key || !fy_node_is_scalar(key) || fy_node_is_alias(key))
			return tj_config_fail(p, key_line, path, "keys must be plain strings");
		if (!allowed)
			continue;
		size_t len;
		const char *text = fy_node_get_scalar(key, &len);
		if (!key_allowed(text, len, allowed))
			return tj_config_fail(p, key_line, path,
			                      "unknown field \"%.*s\" (expected %s)",
			                      (int)(len > 64 ? 64 : len), text, expected);
	}
	return 0;
}

/* The value of key in a mapping checked by check_mapping, or NULL. */
struct fy_node_pair *tj_config_find_pair(struct fy_node *mapping, const char *key)
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

struct fy_node *tj_config_section(struct fy_node *root, const char *name, int *line)
{
	struct fy_node_pair *pair = tj_config_find_pair(root, name);

	if (!pair || tj_config_is_null(fy_node_pair_value(pair)))
		return NULL;
	*line = tj_config_line(fy_node_pair_key(pair), 1);
	return fy_node_pair_value(pair);
}

/* Reads an optional string field: *ret stays NULL when the field is absent or null. */
int tj_config_field_string(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                           const char *path, const char *key, bool required, size_t max, char **ret)
{
	char sub[160];
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	struct fy_node_pair *pair = tj_config_find_pair(mapping, key);
	if (!pair || (!required && tj_config_is_null(fy_node_pair_value(pair)))) {
		if (required)
			return tj_config_fail(p, line, path, "missing required field \"%s\"", key);
		return 0;
	}
	struct fy_node *value = fy_node_pair_value(pair);
	return tj_config_scalar_dup(
	        p, value, tj_config_line(value, tj_config_line(fy_node_pair_key(pair), line)), sub,
	        max, ret);
}

/* The line of a field's value (or of its key, for an empty value). */
int tj_config_field_line(struct fy_node *mapping, const char *key, int fallback)
{
	struct fy_node_pair *pair = tj_config_find_pair(mapping, key);
	if (!pair)
		return fallback;
	int key_line = tj_config_line(fy_node_pair_key(pair), fallback);
	return tj_config_line(fy_node_pair_value(pair), key_line);
}

/* Reads a decimal integer in [min, max]. */
int tj_config_scalar_int(const struct tj_config_parser *p, struct fy_node *node, int line,
                         const char *path, int min, int max, int *ret)
{
	char *text = NULL, *end;
	int r = tj_config_scalar_dup(p, node, line, path, 16, &text);
	if (r < 0)
		return r;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || *end || end == text || !(isdigit((unsigned char)text[0]) || text[0] == '-') ||
	    v < min || v > max)
		r = tj_config_fail(p, line, path, "\"%s\" is not an integer between %d and %d",
		                   text, min, max);
	else
		*ret = (int)v;
	free(text);
	return r;
}

/* An optional integer field: *ret keeps its value when the field is absent or null. */
int tj_config_field_int(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                        const char *path, const char *key, int min, int max, int *ret)
{
	struct fy_node_pair *pair = tj_config_find_pair(mapping, key);
	if (!pair || tj_config_is_null(fy_node_pair_value(pair)))
		return 0;
	char sub[160];
	snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", key);
	return tj_config_scalar_int(p, fy_node_pair_value(pair),
	                            tj_config_field_line(mapping, key, line), sub, min, max, ret);
}

/* An optional sequence field: NULL when absent or null (the default stays), else checked to
 * be a sequence of at most max items. */
int tj_config_field_sequence(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                             const char *path, const char *key, int max, struct fy_node **ret,
                             int *ret_line)
{
	struct fy_node_pair *pair = tj_config_find_pair(mapping, key);
	*ret = NULL;
	if (!pair || tj_config_is_null(fy_node_pair_value(pair)))
		return 0;
	struct fy_node *seq = fy_node_pair_value(pair);
	*ret_line = tj_config_line(fy_node_pair_key(pair), line);
	if (fy_node_is_alias(seq))
		return tj_config_fail(p, *ret_line, path, "anchors and aliases are not supported");
	if (!fy_node_is_sequence(seq))
		return tj_config_fail(p, *ret_line, path, "must be a sequence");
	int count = fy_node_sequence_item_count(seq);
	if (count > max)
		return tj_config_fail(p, *ret_line, path, "has %d items, the limit is %d", count,
		                      max);
	*ret = seq;
	return 0;
}

int tj_config_field_exit_codes(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                               const char *path, const char *key, const int *defaults,
                               size_t n_defaults, int **ret, size_t *ret_n)
{
	struct fy_node *seq, *item;
	void *iter = NULL;
	int seq_line, r = tj_config_field_sequence(p, mapping, line, path, key,
	                                           TJ_CONFIG_MAX_EXIT_CODES, &seq, &seq_line);
	size_t n;

	if (r < 0)
		return r;
	n = seq ? (size_t)fy_node_sequence_item_count(seq) : n_defaults;
	*ret = calloc(n + 1, sizeof(int));
	if (!*ret)
		return -ENOMEM;
	*ret_n = n;
	if (!seq) {
		memcpy(*ret, defaults, n * sizeof(int));
		return 0;
	}
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		char item_path[160];

		snprintf(item_path, sizeof(item_path), "%s[%zu]", path, i);
		/* 0 is success; a container's exit code is one byte. */
		r = tj_config_scalar_int(p, item, tj_config_line(item, seq_line), item_path, 1, 255,
		                         &(*ret)[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* An optional boolean field: *ret keeps its value when the field is absent or null. */
int tj_config_field_bool(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                         const char *path, const char *key, bool *ret)
{
	char sub[160], *text = NULL;
	struct fy_node_pair *pair = tj_config_find_pair(mapping, key);
	int r;

	if (!pair || tj_config_is_null(fy_node_pair_value(pair)))
		return 0;
	snprintf(sub, sizeof(sub), "%s.%s", path, key);
	r = tj_config_field_string(p, mapping, line, path, key, true, 8, &text);
	if (r < 0)
		return r;
	if (!strcmp(text, "true"))
		*ret = true;
	else if (!strcmp(text, "false"))
		*ret = false;
	else
		r = tj_config_fail(p, tj_config_field_line(mapping, key, line), sub,
		                   "\"%s\" is not true or false", text);
	free(text);
	return r;
}
