/* Decoding of metav1.Status, and the predicates the controller branches on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/status.h"

/* The longest piece of a non-Status error body quoted in a synthesised message. */
#define BODY_QUOTE_MAX 256

static int dup_string(const cJSON *parent, const char *key, char **out)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(parent, key);

	*out = NULL;
	if (!cJSON_IsString(item))
		return 0;
	*out = strdup(item->valuestring);
	return *out ? 0 : -ENOMEM;
}

int tj_status_from_json(const cJSON *obj, struct tj_status *ret)
{
	struct tj_status s = { 0 };
	const cJSON *kind, *code, *details, *retry;
	int r;

	if (!cJSON_IsObject(obj))
		return -EINVAL;
	kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	if (kind && (!cJSON_IsString(kind) || strcmp(kind->valuestring, "Status") != 0))
		return -EINVAL;

	code = cJSON_GetObjectItemCaseSensitive(obj, "code");
	if (cJSON_IsNumber(code) && code->valuedouble >= 0 && code->valuedouble < 1000)
		s.code = (int)code->valuedouble;
	r = dup_string(obj, "status", &s.status);
	if (r < 0)
		goto out_clear;
	r = dup_string(obj, "reason", &s.reason);
	if (r < 0)
		goto out_clear;
	r = dup_string(obj, "message", &s.message);
	if (r < 0)
		goto out_clear;
	details = cJSON_GetObjectItemCaseSensitive(obj, "details");
	if (cJSON_IsObject(details)) {
		r = dup_string(details, "name", &s.details_name);
		if (r < 0)
			goto out_clear;
		r = dup_string(details, "group", &s.details_group);
		if (r < 0)
			goto out_clear;
		r = dup_string(details, "kind", &s.details_kind);
		if (r < 0)
			goto out_clear;
		retry = cJSON_GetObjectItemCaseSensitive(details, "retryAfterSeconds");
		if (cJSON_IsNumber(retry) && retry->valuedouble > 0 && retry->valuedouble < 1e6)
			s.retry_after_seconds = (int)retry->valuedouble;
	}
	*ret = s;
	return 0;

out_clear:
	tj_status_clear(&s);
	return r;
}

/* The reason the API server gives each code when it has nothing more specific
 * (apimachinery's NewGenericServerResponse). */
static const char *reason_for_code(long code)
{
	switch (code) {
	case 400:
		return "BadRequest";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "NotFound";
	case 405:
		return "MethodNotAllowed";
	case 406:
		return "NotAcceptable";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 413:
		return "RequestEntityTooLarge";
	case 415:
		return "UnsupportedMediaType";
	case 422:
		return "Invalid";
	case 429:
		return "TooManyRequests";
	case 500:
		return "InternalError";
	case 503:
		return "ServiceUnavailable";
	case 504:
		return "Timeout";
	default:
		return code >= 500 ? "InternalError" : "Unknown";
	}
}

static int synthesise(long http_code, const char *body, size_t len, struct tj_status *ret)
{
	struct tj_status s = { 0 };
	size_t quote = len < BODY_QUOTE_MAX ? len : BODY_QUOTE_MAX;
	int n;

	s.code = http_code > 0 && http_code < 1000 ? (int)http_code : 0;
	s.status = strdup("Failure");
	s.reason = strdup(reason_for_code(http_code));
	/* Strip a trailing newline so that the message stays on one line. */
	while (quote > 0 && (body[quote - 1] == '\n' || body[quote - 1] == '\r'))
		quote--;
	if (quote > 0)
		n = asprintf(&s.message, "the server answered HTTP %ld: %.*s", http_code,
		             (int)quote, body);
	else
		n = asprintf(&s.message, "the server answered HTTP %ld", http_code);
	if (n < 0)
		s.message = NULL;
	if (!s.status || !s.reason || !s.message) {
		tj_status_clear(&s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int tj_status_from_response(long http_code, const char *body, size_t len, struct tj_status *ret)
{
	struct tj_status s;
	cJSON *json = NULL;
	int r;

	if (body && len > 0)
		json = cJSON_ParseWithLength(body, len);
	if (json && tj_status_from_json(json, &s) == 0 &&
	    cJSON_GetObjectItemCaseSensitive(json, "kind")) {
		cJSON_Delete(json);
		if (s.code == 0)
			s.code = (int)http_code;
		*ret = s;
		return 0;
	}
	cJSON_Delete(json);
	r = synthesise(http_code, body ? body : "", body ? len : 0, ret);
	return r;
}

void tj_status_clear(struct tj_status *s)
{
	if (!s)
		return;
	free(s->status);
	free(s->reason);
	free(s->message);
	free(s->details_name);
	free(s->details_group);
	free(s->details_kind);
	*s = (struct tj_status){ 0 };
}

static int copy_string(const char *src, char **dst)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

int tj_status_copy(const struct tj_status *src, struct tj_status *ret)
{
	struct tj_status s = { .code = src->code, .retry_after_seconds = src->retry_after_seconds };

	if (copy_string(src->status, &s.status) < 0 || copy_string(src->reason, &s.reason) < 0 ||
	    copy_string(src->message, &s.message) < 0 ||
	    copy_string(src->details_name, &s.details_name) < 0 ||
	    copy_string(src->details_group, &s.details_group) < 0 ||
	    copy_string(src->details_kind, &s.details_kind) < 0) {
		tj_status_clear(&s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

static bool reason_is(const struct tj_status *s, const char *reason)
{
	return s && s->reason && strcmp(s->reason, reason) == 0;
}

/* A Status without a reason is judged by its code, as apimachinery's ReasonForError falls
 * back to the code for some helpers. */
static bool code_only(const struct tj_status *s, int code)
{
	return s && (!s->reason || s->reason[0] == '\0') && s->code == code;
}

bool tj_status_is_not_found(const struct tj_status *s)
{
	return reason_is(s, "NotFound") || code_only(s, 404);
}

bool tj_status_is_already_exists(const struct tj_status *s)
{
	return reason_is(s, "AlreadyExists");
}

bool tj_status_is_conflict(const struct tj_status *s)
{
	return reason_is(s, "Conflict") || code_only(s, 409);
}

bool tj_status_is_expired(const struct tj_status *s)
{
	/* Servers up to 1.17 say Gone, later ones Expired; a bare 410 means the same. */
	return reason_is(s, "Expired") || reason_is(s, "Gone") || code_only(s, 410);
}

bool tj_status_is_too_many_requests(const struct tj_status *s)
{
	return reason_is(s, "TooManyRequests") || (s && s->code == 429);
}

bool tj_status_is_unauthorized(const struct tj_status *s)
{
	return reason_is(s, "Unauthorized") || (s && s->code == 401);
}

bool tj_status_is_forbidden(const struct tj_status *s)
{
	return reason_is(s, "Forbidden") || code_only(s, 403);
}

bool tj_status_is_invalid(const struct tj_status *s)
{
	return reason_is(s, "Invalid") || code_only(s, 422);
}

bool tj_status_is_timeout(const struct tj_status *s)
{
	return reason_is(s, "Timeout") || code_only(s, 504);
}

bool tj_status_is_internal_error(const struct tj_status *s)
{
	return reason_is(s, "InternalError") || code_only(s, 500);
}
