/* Named health checks and the answers of /healthz and /readyz, as controller-runtime's
 * pkg/healthz gives them, so that the same probes and scripts work:
 *
 *   GET /readyz             200 "ok", or 500 listing every check and "healthz check failed"
 *   GET /readyz?verbose     200 "[+]informers ok\n...healthz check passed\n"
 *   GET /readyz?exclude=x   x is skipped and reported as "[+]x excluded: ok"
 *   GET /readyz/informers   that one check: 200 "ok" or 500 "internal server error: REASON"
 *
 * Liveness (/healthz) and readiness (/readyz) have separate check sets; a set with no checks
 * answers as if it held one "ping" check that always passes. Checks are registered by the
 * modules that know (informers synced, leader election renewing) and run on the loop's
 * thread when a probe arrives, so they must be quick and must not block. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TJ_HEALTH_MAX_CHECKS   32
#define TJ_HEALTH_MAX_EXCLUDES 32

enum tj_health_kind {
	TJ_HEALTHZ, /* liveness: is the process working at all */
	TJ_READYZ,  /* readiness: is it ready to do its job */
};

/* Returns 0 when healthy; otherwise a negative errno code and, optionally, a reason written
 * into reason (NUL-terminated, reason_len bytes at most). */
typedef int (*tj_health_check_fn)(void *userdata, char *reason, size_t reason_len);

struct tj_health;

int tj_health_new(struct tj_health **ret);
struct tj_health *tj_health_free(struct tj_health *health);

/* Adds a check. name is copied; it is what the probe output and /healthz/NAME use, so it
 * must be non-empty, at most 63 characters of [A-Za-z0-9-_.]. -EEXIST if the kind already has
 * a check of that name, -E2BIG past TJ_HEALTH_MAX_CHECKS, -EINVAL for a bad name. */
int tj_health_add(struct tj_health *health, enum tj_health_kind kind, const char *name,
                  tj_health_check_fn check, void *userdata);

struct tj_health_reply {
	unsigned status; /* 200, 404 or 500 */
	char *body;      /* owned; malloc'd, NUL-terminated */
	size_t len;
};

/* Answers a probe. path is the URL path ("/readyz", "/readyz/", "/readyz/NAME", the same under
 * /healthz); verbose is whether the query has "verbose"; excludes are the query's "exclude"
 * values. A path that names no check gets 404. *ret is written only on success (0); the
 * caller frees ret->body. -ENOMEM only. */
int tj_health_handle(struct tj_health *health, const char *path, bool verbose,
                     const char *const *excludes, size_t n_excludes, struct tj_health_reply *ret);
