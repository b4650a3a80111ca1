/* A small cache of review answers, so that a scraper every 15 s does not cost a TokenReview
 * and a SubjectAccessReview each time. The API server's delegating authenticator and
 * authorizer, as controller-runtime configures them, keep a token's answer 1 minute, an
 * allow 5 minutes and a deny 30 seconds; the callers pass those as TTLs. Entries are keyed by
 * a digest (of the token, or of the user and the request), never by the token itself. Pure:
 * the time is an input. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "controller/http/review.h"

#define TJ_REVIEW_KEY_SIZE 32 /* a SHA-256 digest */

enum tj_review_decision {
	TJ_REVIEW_ALLOW = 1, /* authenticated, or authorized */
	TJ_REVIEW_DENY = 2,  /* not authenticated, or not authorized */
};

struct tj_review_cache;

/* A cache of at most capacity entries (at least 1). -EINVAL, -ENOMEM. */
int tj_review_cache_new(size_t capacity, struct tj_review_cache **ret);

/* Accepts NULL; returns NULL. */
struct tj_review_cache *tj_review_cache_free(struct tj_review_cache *c);

/* The decision stored under key if it has not expired at now_ms (an entry expires at its
 * deadline), else -ENOENT. *ret_user (may be NULL) is the stored user, borrowed until the
 * next put; NULL when none was stored. */
int tj_review_cache_get(const struct tj_review_cache *c, const uint8_t key[TJ_REVIEW_KEY_SIZE],
                        uint64_t now_ms, const struct tj_review_user **ret_user);

/* Stores decision (and a copy of user, which may be NULL) under key until now_ms + ttl_ms,
 * replacing what was there. A full cache first forgets the expired entries, then the one
 * closest to expiring. -EINVAL for a bad decision, -ENOMEM. */
int tj_review_cache_put(struct tj_review_cache *c, const uint8_t key[TJ_REVIEW_KEY_SIZE],
                        enum tj_review_decision decision, const struct tj_review_user *user,
                        uint64_t now_ms, uint64_t ttl_ms);
