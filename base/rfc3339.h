/* RFC 3339 date-times, as the Kubernetes API writes them (metav1.Time, an ExecCredential's
 * expirationTimestamp): "2025-01-31T12:00:00Z", with optional fractional seconds and a
 * numeric offset instead of Z. */
#pragma once

#include <stdint.h>

/* Parses s into milliseconds since the Unix epoch (digits of the fraction past the third are
 * dropped). 'T' and 'Z' may be lower case, as RFC 3339 allows; a leap second (:60) folds into
 * the next second. Returns -EINVAL for NULL or anything else; *ret is written only on
 * success. */
int tj_rfc3339_parse_ms(const char *s, int64_t *ret);

/* The same in whole seconds, the fraction dropped. */
int tj_rfc3339_parse(const char *s, int64_t *ret);
