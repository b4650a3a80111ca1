/* Helpers shared by the projections of API objects into compact structs (pod.c, node.c and
 * the TrainJob and runtime projections): typed lookups in a cJSON tree that tolerate any
 * shape of input. Their timestamps are parsed by base/rfc3339.h. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* The member reached from obj by the NULL-terminated array of object keys, or NULL if any
 * step is missing or not an object. Keys match case-sensitively, as Kubernetes does. */
const cJSON *tj_field_path(const cJSON *obj, const char *const *keys);

/* The string reached like tj_field_path(), or NULL if it is missing or not a string. */
const char *tj_field_string_path(const cJSON *obj, const char *const *keys);

/* tj_field(obj, "status", "conditions") and tj_field_string(obj, "metadata", "name"): the
 * same with the keys as arguments. */
#define tj_field(obj, ...) tj_field_path((obj), (const char *const[]){ __VA_ARGS__, NULL })
#define tj_field_string(obj, ...)                                                                  \
	tj_field_string_path((obj), (const char *const[]){ __VA_ARGS__, NULL })

/* The boolean member key of obj; false if missing or not a boolean. */
bool tj_field_bool(const cJSON *obj, const char *key);

/* Parses a label value that must be a non-negative decimal integer that fits an int
 * ("0", "17"; no sign, no spaces, no leading zeros beyond "0"). Returns -EINVAL otherwise. */
int tj_parse_index(const char *s, int *ret);
