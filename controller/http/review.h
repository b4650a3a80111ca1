/* The two reviews that guard /metrics, as the API server's delegated authentication and
 * authorization define them: a TokenReview (authentication.k8s.io/v1) says who a bearer
 * token belongs to, a SubjectAccessReview (authorization.k8s.io/v1) says whether that user
 * may "get" the non-resource URL /metrics. Pure: the bodies to send and the answers to read;
 * the calls themselves are in metrics_auth.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* Limits on what an answer may carry; beyond them the answer is refused (-E2BIG). */
#define TJ_REVIEW_MAX_STRING 1024 /* a user name, uid or group */
#define TJ_REVIEW_MAX_GROUPS 64
#define TJ_REVIEW_MAX_EXTRA  32 /* keys of user.extra */
#define TJ_REVIEW_MAX_VALUES 16 /* values of one extra key */

/* The user a token belongs to (TokenReview status.user). */
struct tj_review_user {
	char *name;    /* owned */
	char *uid;     /* owned; "" when absent */
	char **groups; /* owned, each owned */
	size_t n_groups;
	cJSON *extra; /* owned; an object of string arrays, or NULL */
};

void tj_review_user_clear(struct tj_review_user *u);

/* Copies src into *ret (which the caller clears). -ENOMEM. */
int tj_review_user_copy(const struct tj_review_user *src, struct tj_review_user *ret);

/* The bearer token of an Authorization header: "Bearer TOKEN" (scheme case-insensitive,
 * spaces around the token ignored, as the API server reads it). NULL for no header, another
 * scheme or an empty token; the result points into header. *ret_len is its length. */
const char *tj_bearer_token(const char *header, size_t *ret_len);

/* {"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":...}}, and
 * "audiences": [audience] when audience is not NULL (the token must have been issued for it).
 * NULL when out of memory. */
cJSON *tj_token_review_new(const char *token, size_t token_len, const char *audience);

/* Whether the answer to a TokenReview names audience among the token's audiences
 * (status.audiences): the API server lists there those of spec.audiences the token is
 * valid for. */
bool tj_token_review_has_audience(const cJSON *body, const char *audience);

struct tj_token_review {
	bool authenticated;
	struct tj_review_user user; /* filled when authenticated */
	char error[256];            /* status.error, truncated; "" when none */
};

/* Reads the answer to a TokenReview. -EBADMSG when it is not one (no status, fields of the
 * wrong type, an authenticated answer without a user name), -E2BIG beyond the limits above.
 * *ret is written only on success; the caller clears ret->user. */
int tj_token_review_parse(const cJSON *body, struct tj_token_review *ret);

/* A SubjectAccessReview of verb on the non-resource path for user. NULL when out of memory. */
cJSON *tj_access_review_new(const struct tj_review_user *user, const char *verb, const char *path);

struct tj_access_review {
	bool allowed;
	bool denied;      /* an authorizer said no outright (allowed is then false) */
	char reason[256]; /* status.reason, truncated */
	char error[256];  /* status.evaluationError, truncated */
};

/* Reads the answer to a SubjectAccessReview: -EBADMSG when it is not one. */
int tj_access_review_parse(const cJSON *body, struct tj_access_review *ret);
