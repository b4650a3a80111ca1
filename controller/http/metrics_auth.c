#include "controller/http/metrics_auth.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "controller/http/review.h"
#include "controller/http/review_cache.h"
#include "controller/log/log.h"
#include "kube/request.h"

/* Both reviews are created, never stored: cluster-scoped collections. */
static const struct tj_resource token_reviews = { "authentication.k8s.io", "v1", "tokenreviews",
	                                          false };
static const struct tj_resource access_reviews = { "authorization.k8s.io", "v1",
	                                           "subjectaccessreviews", false };

struct tj_metrics_auth {
	struct tj_client *client;       /* borrowed */
	struct tj_review_cache *tokens; /* owned: token digest -> user */
	struct tj_review_cache *access; /* owned: digest of user, verb, path -> decision */
};

struct tj_auth_check {
	struct tj_metrics_auth *auth;
	struct tj_request *request; /* the review in flight */
	uint8_t token_key[TJ_REVIEW_KEY_SIZE];
	char verb[16];              /* the method in lower case, as RBAC names verbs */
	char *path;                 /* owned */
	struct tj_review_user user; /* owned, once the token is reviewed */
	tj_auth_fn fn;
	void *userdata;
};

int tj_metrics_auth_new(struct tj_client *client, struct tj_metrics_auth **ret)
{
	struct tj_metrics_auth *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	a->client = client;
	if ((r = tj_review_cache_new(TJ_METRICS_AUTH_CACHE_SIZE, &a->tokens)) < 0 ||
	    (r = tj_review_cache_new(TJ_METRICS_AUTH_CACHE_SIZE, &a->access)) < 0) {
		tj_metrics_auth_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

struct tj_metrics_auth *tj_metrics_auth_free(struct tj_metrics_auth *a)
{
	if (!a)
		return NULL;
	tj_review_cache_free(a->tokens);
	tj_review_cache_free(a->access);
	free(a);
	return NULL;
}

static uint64_t now_ms(const struct tj_metrics_auth *a)
{
	return uv_now(tj_client_loop(a->client));
}

static void set_result(struct tj_auth_result *r, unsigned status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void set_result(struct tj_auth_result *r, unsigned status, const char *fmt, ...)
{
	va_list ap;

	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
}

/* The key of an access decision: every field of the user and of the request, each ended by
 * a NUL so that no two different requests hash alike. */
static int access_key(const struct tj_review_user *u, const char *verb, const char *path,
                      uint8_t key[TJ_REVIEW_KEY_SIZE])
{
	gnutls_hash_hd_t h;
	char *extra = NULL;
	int r = -EIO;

	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		return -EIO;
	if (u->extra && !(extra = cJSON_PrintUnformatted(u->extra))) {
		gnutls_hash_deinit(h, NULL);
		return -ENOMEM;
	}
	const char *parts[] = { u->name, u->uid ? u->uid : "", extra ? extra : "", verb, path };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (gnutls_hash(h, parts[i], strlen(parts[i]) + 1) < 0)
			goto out;
	for (size_t i = 0; i < u->n_groups; i++)
		if (gnutls_hash(h, u->groups[i], strlen(u->groups[i]) + 1) < 0)
			goto out;
	r = 0;
out:
	gnutls_hash_deinit(h, key);
	free(extra);
	return r;
}

static struct tj_auth_check *check_free(struct tj_auth_check *c)
{
	if (!c)
		return NULL;
	tj_request_cancel(c->request);
	tj_review_user_clear(&c->user);
	free(c->path);
	free(c);
	return NULL;
}

void tj_auth_check_cancel(struct tj_auth_check *check)
{
	check_free(check);
}

/* Delivers the answer of a check that went through a review, and frees the check. */
static void finish(struct tj_auth_check *c, const struct tj_auth_result *result)
{
	tj_auth_fn fn = c->fn;
	void *userdata = c->userdata;

	c->request = NULL; /* the request ends with the callback that called us */
	check_free(c);
	fn(result, userdata);
}

static void access_done(struct tj_response *resp, void *userdata);

/* The second step: is c->user allowed? 0 with *ret when the cache knows; 1 when a review
 * was sent. */
static int authorize(struct tj_auth_check *c, struct tj_auth_result *ret)
{
	struct tj_metrics_auth *a = c->auth;
	uint8_t key[TJ_REVIEW_KEY_SIZE];
	const struct tj_ref ref = { .resource = &access_reviews };
	cJSON *body;
	int r;

	r = access_key(&c->user, c->verb, c->path, key);
	if (r < 0)
		return r;
	r = tj_review_cache_get(a->access, key, now_ms(a), NULL);
	if (r == TJ_REVIEW_ALLOW) {
		set_result(ret, 200, "OK");
		return 0;
	}
	if (r == TJ_REVIEW_DENY) {
		set_result(ret, 403, "Authorization denied for user %s", c->user.name);
		return 0;
	}
	body = tj_access_review_new(&c->user, c->verb, c->path);
	if (!body)
		return -ENOMEM;
	r = tj_kube_create(a->client, &ref, body, NULL, access_done, c, &c->request);
	cJSON_Delete(body);
	return r < 0 ? r : 1;
}

static void access_done(struct tj_response *resp, void *userdata)
{
	struct tj_auth_check *c = userdata;
	struct tj_metrics_auth *a = c->auth;
	struct tj_access_review ar;
	struct tj_auth_result result;
	uint8_t key[TJ_REVIEW_KEY_SIZE];
	int r = resp->rc;

	if (r == 0)
		r = tj_access_review_parse(resp->body, &ar);
	if (r < 0) {
		tj_log_error(
		        "http", "cannot review access to the metrics", TJ_STR("user", c->user.name),
		        TJ_STR("error", resp->rc < 0 ? resp->error : "not a SubjectAccessReview"));
		set_result(&result, 500, "Authorization for user %s failed", c->user.name);
		finish(c, &result);
		return;
	}
	if (access_key(&c->user, c->verb, c->path, key) == 0)
		tj_review_cache_put(a->access, key, ar.allowed ? TJ_REVIEW_ALLOW : TJ_REVIEW_DENY,
		                    NULL, now_ms(a),
		                    ar.allowed ? TJ_METRICS_AUTH_ALLOW_TTL_MS
		                               : TJ_METRICS_AUTH_DENY_TTL_MS);
	if (ar.allowed) {
		set_result(&result, 200, "OK");
	} else {
		tj_log_debug("http", "metrics access denied", TJ_STR("user", c->user.name),
		             TJ_STR("reason", ar.reason), TJ_STR("error", ar.error));
		set_result(&result, 403, "Authorization denied for user %s", c->user.name);
	}
	finish(c, &result);
}

static void token_done(struct tj_response *resp, void *userdata)
{
	struct tj_auth_check *c = userdata;
	struct tj_metrics_auth *a = c->auth;
	struct tj_token_review tr;
	struct tj_auth_result result;
	int r = resp->rc;

	c->request = NULL;
	if (r == 0)
		r = tj_token_review_parse(resp->body, &tr);
	if (r < 0) {
		tj_log_error("http", "cannot review the token of a metrics request",
		             TJ_STR("error", resp->rc < 0 ? resp->error : "not a TokenReview"));
		set_result(&result, 500, "Authentication failed");
		finish(c, &result);
		return;
	}
	tj_review_cache_put(
	        a->tokens, c->token_key, tr.authenticated ? TJ_REVIEW_ALLOW : TJ_REVIEW_DENY,
	        tr.authenticated ? &tr.user : NULL, now_ms(a), TJ_METRICS_AUTH_TOKEN_TTL_MS);
	if (!tr.authenticated) {
		tj_log_debug("http", "metrics request with an invalid token",
		             TJ_STR("error", tr.error));
		set_result(&result, 401, "Unauthorized");
		finish(c, &result);
		return;
	}
	c->user = tr.user;
	r = authorize(c, &result);
	if (r == 1)
		return;
	if (r < 0)
		set_result(&result, 500, "Authorization for user %s failed", c->user.name);
	finish(c, &result);
}

static int check_new(struct tj_metrics_auth *a, const char *method, const char *path, tj_auth_fn fn,
                     void *userdata, struct tj_auth_check **ret)
{
	struct tj_auth_check *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c)
		return -ENOMEM;
	c->path = strdup(path);
	if (!c->path) {
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < sizeof(c->verb) - 1 && method[i]; i++)
		c->verb[i] = (char)tolower((unsigned char)method[i]);
	c->verb[i] = '\0';
	c->auth = a;
	c->fn = fn;
	c->userdata = userdata;
	*ret = c;
	return 0;
}

int tj_metrics_auth_check(struct tj_metrics_auth *a, const char *authorization, const char *method,
                          const char *path, tj_auth_fn fn, void *userdata,
                          struct tj_auth_result *ret_result, struct tj_auth_check **ret_check)
{
	const struct tj_ref ref = { .resource = &token_reviews };
	const struct tj_review_user *user = NULL;
	struct tj_auth_check *c;
	size_t token_len;
	const char *token = tj_bearer_token(authorization, &token_len);
	cJSON *body;
	int r;

	if (!token) {
		set_result(ret_result, 401, "Unauthorized");
		return 0;
	}
	r = check_new(a, method, path, fn, userdata, &c);
	if (r < 0)
		return r;
	if (gnutls_hash_fast(GNUTLS_DIG_SHA256, token, token_len, c->token_key) < 0) {
		r = -EIO;
		goto fail_check;
	}
	r = tj_review_cache_get(a->tokens, c->token_key, now_ms(a), &user);
	if (r == TJ_REVIEW_DENY) {
		set_result(ret_result, 401, "Unauthorized");
		check_free(c);
		return 0;
	}
	if (r == TJ_REVIEW_ALLOW) {
		r = tj_review_user_copy(user, &c->user);
		if (r < 0)
			goto fail_check;
		r = authorize(c, ret_result);
		if (r < 0)
			goto fail_check;
		if (r == 0)
			check_free(c);
		else
			*ret_check = c;
		return r;
	}
	body = tj_token_review_new(token, token_len, NULL);
	if (!body) {
		r = -ENOMEM;
		goto fail_check;
	}
	r = tj_kube_create(a->client, &ref, body, NULL, token_done, c, &c->request);
	cJSON_Delete(body);
	if (r < 0)
		goto fail_check;
	*ret_check = c;
	return 1;

fail_check:
	check_free(c);
	return r;
}
