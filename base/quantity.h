/* Kubernetes resource quantities ("500m", "4", "1.5Gi", "1e3", "128974848"), the format of
 * resource.Quantity: a signed decimal number (digits with an optional point, at least one
 * digit) followed by one suffix: none, a decimal SI prefix (n u m k M G T P E), a binary
 * one (Ki Mi Gi Ti Pi Ei) or a decimal exponent ("e3", "E-2"). No spaces. "E" alone is
 * exa; "E" followed by digits is an exponent.
 *
 * The value is computed exactly (no floating point) and rounded up, away from zero, as
 * Kubernetes' Value() and MilliValue() do, so that a request of "0.5" bytes or "0.1m" CPU
 * counts as 1. */
#pragma once

#include <stdint.h>

#include <cjson/cJSON.h>

/* The quantity in thousandths, rounded up ("500m" -> 500, "2" -> 2000): CPU requests.
 * -EINVAL if s is not a quantity (or NULL), -ERANGE if the result does not fit an int64.
 * *ret is written only on success. */
int tj_quantity_parse_milli(const char *s, int64_t *ret);

/* The quantity in whole units, rounded up ("1Gi" -> 1073741824, "1.5" -> 2): memory bytes
 * and extended resources. Errors as tj_quantity_parse_milli(). */
int tj_quantity_parse_value(const char *s, int64_t *ret);

/* The same for a quantity in a JSON document: a string as above, or a number (which the
 * API server never writes, but a pod rendered from YAML may hold). A number is read back
 * from its shortest text of 15 significant digits, so that 0.1 is 100m and not the 101m
 * its binary double would round up to. -EINVAL for anything else. */
int tj_quantity_json_milli(const cJSON *q, int64_t *ret);
int tj_quantity_json_value(const cJSON *q, int64_t *ret);
