/* Small helpers over cJSON shared by the reconciler's projections and renderer: reading a
 * field by a dotted path without a chain of NULL checks, compact serialization with a size
 * limit, and the RFC 3339 timestamps of the Kubernetes API. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* The member at a dotted path ("spec.trainer.image"), or NULL if any step is missing or not
 * an object. Keys are matched case-sensitively, as the API server does. */
const cJSON *tj_json_path(const cJSON *obj, const char *path);

/* The string at path, or NULL if absent or not a string. Borrowed from obj. */
const char *tj_json_string(const cJSON *obj, const char *path);

/* Compact serialization of item into a new string; -E2BIG beyond max bytes, -ENOMEM. */
int tj_json_print(const cJSON *item, size_t max, char **ret);

/* Parses a compact JSON string produced by tj_json_print; -EINVAL if it does not parse. */
int tj_json_parse(const char *text, cJSON **ret);

/* Adds key to obj, or replaces it where it is, taking ownership of item (freed on failure
 * to add). -ENOMEM. */
int tj_json_set(cJSON *obj, const char *key, cJSON *item);

/* Sets key to a string value, replacing any earlier value. -ENOMEM. */
int tj_json_set_string(cJSON *obj, const char *key, const char *value);

/* Appends item to array, taking ownership of it (freed on failure; NULL, as a failed
 * cJSON_Create* gives, is -ENOMEM). -ENOMEM. */
int tj_json_append(cJSON *array, cJSON *item);

/* The object at key of obj, created empty if absent or not an object. NULL on -ENOMEM. */
cJSON *tj_json_object(cJSON *obj, const char *key);

/* The array at key of obj, created empty if absent or not an array. NULL on -ENOMEM. */
cJSON *tj_json_array(cJSON *obj, const char *key);

/* The element of array whose member key is the string value ("name": "node"), or NULL. */
cJSON *tj_json_find_by(const cJSON *array, const char *key, const char *value);

/* Replaces the element of array that tj_json_find_by finds by item (taken), or appends item
 * (a mount of ours replaces the template's at its mountPath). -ENOMEM, item freed, when item
 * is NULL or array is not one. */
int tj_json_put_by(cJSON *array, const char *key, const char *value, cJSON *item);

/* The container of a pod spec named name, else its init container of that name; NULL when
 * it has neither (or name is NULL). */
cJSON *tj_json_find_container(const cJSON *spec, const char *name);

/* tj_json_put_by by the item's own "name" (an env list, volumes). */
int tj_json_upsert_named(cJSON *array, cJSON *item);

/* Upserts every member of src into the object dst[key] (labels, nodeSelector); a src that
 * is not an object is nothing to merge. -ENOMEM. */
int tj_json_merge_map(cJSON *dst, const char *key, const cJSON *src);

/* Adds the elements of src to the list dst[key] that are not already there (tolerations).
 * -ENOMEM. */
int tj_json_union_list(cJSON *dst, const char *key, const cJSON *src);

/* a if it is set, else b: for defaults of optional strings. */
static inline const char *tj_or(const char *a, const char *b)
{
	return a ? a : b;
}

/* Timestamps are parsed by tj_rfc3339_parse (base/rfc3339.h), shared with the Pod and Node
 * projections. */

/* Formats unix seconds as "2026-01-02T03:04:05Z" into buf (at least 21 bytes). */
void tj_time_format(int64_t t, char buf[static 21]);
