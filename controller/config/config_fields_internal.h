/* Reading the controller's config file (controller/config/config.h): typed fields of a libfyaml
 * mapping, each error naming the file's line and the field's path ("config.yaml:12:
 * admission.backfill: ..."), and the Kubernetes name rules the schema checks values by.
 * The schema itself is in config.c. Shared by the files of controller/config/ alone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <libfyaml.h>

/* Kubernetes' limits: a DNS-1123 subdomain (a label key's prefix) has at most 253
 * characters, a label value and a label key's name part at most 63. */
#define TJ_DNS_SUBDOMAIN_MAX 253
#define TJ_LABEL_NAME_MAX    63

/* Where errors go: the file's name and the caller's buffer. */
struct tj_config_parser {
	const char *origin;
	char *err;
	size_t errlen;
};

/* Writes "origin:LINE: path: message" into the caller's buffer; returns -EINVAL. */
int tj_config_fail(const struct tj_config_parser *p, int line, const char *path, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

/* The 1-based line where a node starts. libfyaml 0.7 has marks only on tokens, so a
 * collection is located by its first scalar; an empty one by fallback (its key's line). */
int tj_config_line(struct fy_node *node, int fallback);

/* A YAML null: no node at all (an empty value), or a plain ~ / null. */
bool tj_config_is_null(struct fy_node *node);

/* Copies a scalar of at most max bytes into a new string. */
int tj_config_scalar_dup(const struct tj_config_parser *p, struct fy_node *node, int line,
                         const char *path, size_t max, char **ret);

/* A DNS-1123 label: lower case letters, digits and '-', alphanumeric at both ends. */
bool tj_config_valid_dns_label(const char *s);

/* A label value (or a label key's name part): at most 63 of [A-Za-z0-9_.-], alphanumeric at
 * both ends. */
bool tj_config_valid_label_value(const char *s, size_t len);

/* A qualified name as label keys and resource names use it: [prefix/]name, where the prefix
 * is a DNS subdomain. */
bool tj_config_valid_qualified_name(const char *s, bool need_prefix);

/* Checks that a node is a mapping whose keys are plain scalars from allowed (or any, when
 * allowed is NULL). */
int tj_config_check_mapping(const struct tj_config_parser *p, struct fy_node *node, int line,
                            const char *path, const char *const *allowed, const char *expected);

/* The value of key in a mapping checked by tj_config_check_mapping, or NULL. */
struct fy_node_pair *tj_config_find_pair(struct fy_node *mapping, const char *key);

/* The value of the top-level section name of root (a mapping), with the line of its key in
 * *line; NULL when it is absent or null (the section's defaults hold). */
struct fy_node *tj_config_section(struct fy_node *root, const char *name, int *line);

/* Reads an optional string field: *ret stays NULL when the field is absent or null. */
int tj_config_field_string(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                           const char *path, const char *key, bool required, size_t max,
                           char **ret);

/* The line of a field's value (or of its key, for an empty value). */
int tj_config_field_line(struct fy_node *mapping, const char *key, int fallback);

/* Reads a decimal integer in [min, max]. */
int tj_config_scalar_int(const struct tj_config_parser *p, struct fy_node *node, int line,
                         const char *path, int min, int max, int *ret);

/* An optional integer field: *ret keeps its value when the field is absent or null. */
int tj_config_field_int(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                        const char *path, const char *key, int min, int max, int *ret);

/* An optional sequence field: NULL when absent or null (the default stays), else checked to
 * be a sequence of at most max items. */
int tj_config_field_sequence(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                             const char *path, const char *key, int max, struct fy_node **ret,
                             int *ret_line);

/* An optional list of exit codes (1..255, at most TJ_CONFIG_MAX_EXIT_CODES) into a new array
 * *ret of *ret_n; absent or null: a copy of defaults. The array is the caller's from the
 * start, so that on an error it is freed with what holds it. */
int tj_config_field_exit_codes(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                               const char *path, const char *key, const int *defaults,
                               size_t n_defaults, int **ret, size_t *ret_n);

/* An optional boolean field: *ret keeps its value when the field is absent or null. */
int tj_config_field_bool(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                         const char *path, const char *key, bool *ret);
