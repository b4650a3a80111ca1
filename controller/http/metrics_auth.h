/* Who may read /metrics: the bearer token of a request is reviewed by the API server
 * (TokenReview), and its user must be allowed the request's verb on the non-resource URL
 * (SubjectAccessReview), as controller-runtime's WithAuthenticationAndAuthorization filter
 * does it: 401 without a valid token, 403 when the user is not allowed, 500 when a review
 * cannot be made. Answers are cached (review_cache.h). The reviews are asynchronous requests
 * through the controller's own client, so a scrape never blocks the loop. */
#pragma once

#include <stddef.h>

#include "kube/client.h"

/* How long answers are kept, as controller-runtime configures the delegating
 * authenticator (1 minute for a token) and authorizer (5 minutes for an allow, 30 seconds
 * for a deny). Failed reviews are not kept. */
#define TJ_METRICS_AUTH_TOKEN_TTL_MS (60 * 1000)
#define TJ_METRICS_AUTH_ALLOW_TTL_MS (5 * 60 * 1000)
#define TJ_METRICS_AUTH_DENY_TTL_MS  (30 * 1000)
/* Distinct tokens and users remembered (scrapers are few; an attacker's random tokens
 * cannot grow memory beyond this). */
#define TJ_METRICS_AUTH_CACHE_SIZE 256

struct tj_metrics_auth;

/* The client makes the reviews and must outlive the checker. -ENOMEM. */
int tj_metrics_auth_new(struct tj_client *client, struct tj_metrics_auth **ret);

/* Accepts NULL; returns NULL. No check may be in flight. */
struct tj_metrics_auth *tj_metrics_auth_free(struct tj_metrics_auth *a);

/* The answer to a request: 200 (go on and serve it), 401, 403 or 500, and a line for the
 * response body. */
struct tj_auth_result {
	unsigned status;
	char message[192];
};

/* Called once, on a later loop iteration, unless the check is cancelled. */
typedef void (*tj_auth_fn)(const struct tj_auth_result *result, void *userdata);

struct tj_auth_check;

/* Checks a request of method (GET, HEAD, ...) for path with the given Authorization header
 * (NULL when none). Returns 0 with *ret_result written when the answer is known now (no
 * token, or cached answers); returns 1 with *ret_check set when a review is in flight: fn
 * then brings the answer. Negative errno (-ENOMEM) when neither could be done. */
int tj_metrics_auth_check(struct tj_metrics_auth *a, const char *authorization, const char *method,
                          const char *path, tj_auth_fn fn, void *userdata,
                          struct tj_auth_result *ret_result, struct tj_auth_check **ret_check);

/* Stops a check in flight; its callback is not called. Accepts NULL. */
void tj_auth_check_cancel(struct tj_auth_check *check);
