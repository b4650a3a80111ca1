/* API errors: the metav1.Status object that the API server returns with every failed request
 * and inside watch ERROR events, decoded into a plain struct. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

struct tj_status {
	int code;      /* HTTP code the Status carries (Status.code), 0 if absent */
	char *status;  /* owned; "Success" or "Failure", NULL if absent */
	char *reason;  /* owned; StatusReason: NotFound, AlreadyExists, Conflict, Expired, Gone,
	                  TooManyRequests, Invalid, Forbidden, Unauthorized, ...; NULL if absent */
	char *message; /* owned; human-readable message, NULL if absent */
	char *details_name;      /* owned; details.name, NULL if absent */
	char *details_group;     /* owned; details.group, NULL if absent */
	char *details_kind;      /* owned; details.kind, NULL if absent */
	int retry_after_seconds; /* details.retryAfterSeconds, 0 if absent */
};

/* Decodes a Status object. Accepts any JSON object (missing fields stay empty); returns -EINVAL
 * if obj is not an object or is not of kind Status (a "kind" other than "Status" present). */
int tj_status_from_json(const cJSON *obj, struct tj_status *ret);

/* Decodes the body of a failed HTTP response. If the body is a Status it is decoded and its
 * code defaults to http_code; otherwise a Status is synthesised from the HTTP code, as
 * client-go does: the reason is the one the API server uses for that code (404 NotFound,
 * 409 Conflict, 410 Gone, 429 TooManyRequests, 500 InternalError, ...) and the message
 * quotes up to 256 bytes of the body. Returns 0 or -ENOMEM. */
int tj_status_from_response(long http_code, const char *body, size_t len, struct tj_status *ret);

/* Frees the fields and zeroes the struct; accepts NULL. */
void tj_status_clear(struct tj_status *s);

/* Deep copy; returns 0 or -ENOMEM. */
int tj_status_copy(const struct tj_status *src, struct tj_status *ret);

/* Predicates on reason (and code where the reason alone is ambiguous). All accept NULL and
 * then return false. */
bool tj_status_is_not_found(const struct tj_status *s);      /* 404 NotFound */
bool tj_status_is_already_exists(const struct tj_status *s); /* 409 AlreadyExists */
bool tj_status_is_conflict(const struct tj_status *s);       /* 409 Conflict (not AlreadyExists) */
bool tj_status_is_expired(const struct tj_status *s); /* 410, reason Expired or Gone: relist */
bool tj_status_is_too_many_requests(const struct tj_status *s); /* 429 */
bool tj_status_is_unauthorized(const struct tj_status *s);      /* 401 */
bool tj_status_is_forbidden(const struct tj_status *s);         /* 403 */
bool tj_status_is_invalid(const struct tj_status *s);           /* 422 Invalid */
bool tj_status_is_timeout(const struct tj_status *s);           /* 504 Timeout or reason Timeout */
bool tj_status_is_internal_error(const struct tj_status *s);    /* 500 */
