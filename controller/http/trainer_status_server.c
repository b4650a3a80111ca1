#include "controller/http/trainer_status_server.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "controller/http/http_internal.h"
#include "controller/http/review.h"
#include "controller/http/review_cache.h"
#include "controller/http/status_limit.h"
#include "controller/log/log.h"
#include "kube/request.h"
#include "reconcilers/trainer_status.h"

/* As the metrics server keeps a token's answer (controller-runtime's delegating
 * authenticator); the answers of a job's pods are one token each for its lifetime. */
#define TOKEN_TTL_MS     (60 * 1000)
#define TOKEN_CACHE_SIZE 1024

static const struct tj_resource token_reviews = { "authentication.k8s.io", "v1", "tokenreviews",
	                                          false };
static const char json_type[] = "application/json";

struct tj_trainer_status_server {
	struct tj_client *client;       /* borrowed */
	struct tj_http_server *http;    /* owned; freed by its close */
	struct tj_review_cache *tokens; /* owned: digest of token and audience -> user */
	struct tj_status_limit *limit;  /* owned */
	uv_loop_t *loop;
	tj_trainer_status_refused_fn refused;
	void *refused_data;
};

/* A report from the moment its request is whole to its answer. */
struct report {
	struct tj_trainer_status_server *server;
	struct tj_http_exchange *x;
	struct tj_request *request; /* the review or the write in flight */
	char ns[64];
	char name[64];
	char audience[TJ_TRAINER_STATUS_PATH_MAX];
	uint8_t token_key[TJ_REVIEW_KEY_SIZE];
	char *body; /* owned; the request's body, read once the token is accepted */
	size_t len;
	cJSON *status; /* owned; the trainerStatus being written */
};

static void report_free(struct report *r)
{
	tj_request_cancel(r->request);
	cJSON_Delete(r->status);
	free(r->body);
	free(r);
}

static void on_abort(void *arg)
{
	report_free(arg);
}

static void answer_json(struct tj_http_exchange *x, unsigned code, cJSON *doc, unsigned retry_s)
{
	char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;

	cJSON_Delete(doc);
	tj_http_exchange_answer(x, code, json_type, text, text ? strlen(text) : 0, retry_s);
}

/* A Kubernetes Status of failure, as Kubeflow's server answers. */
static void vrefuse(struct tj_http_exchange *x, unsigned code, const char *reason, unsigned retry_s,
                    const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void vrefuse(struct tj_http_exchange *x, unsigned code, const char *reason, unsigned retry_s,
                    const char *fmt, va_list ap)
{
	cJSON *doc = cJSON_CreateObject();
	char message[512];

	vsnprintf(message, sizeof(message), fmt, ap);
	if (doc && (!cJSON_AddStringToObject(doc, "kind", "Status") ||
	            !cJSON_AddStringToObject(doc, "apiVersion", "v1") ||
	            !cJSON_AddStringToObject(doc, "status", "Failure") ||
	            !cJSON_AddStringToObject(doc, "message", message) ||
	            !cJSON_AddStringToObject(doc, "reason", reason) ||
	            !cJSON_AddNumberToObject(doc, "code", code))) {
		cJSON_Delete(doc);
		doc = NULL;
	}
	answer_json(x, code, doc, retry_s);
}

static void refuse(struct tj_http_exchange *x, unsigned code, const char *reason, unsigned retry_s,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void refuse(struct tj_http_exchange *x, unsigned code, const char *reason, unsigned retry_s,
                   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrefuse(x, code, reason, retry_s, fmt, ap);
	va_end(ap);
}

/* Answers the report's request and frees the report. */
static void finish(struct report *r)
{
	r->request = NULL; /* the request ends with the callback that called us */
	report_free(r);
}

static void refuse_report(struct report *r, unsigned code, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Refuses the report's request and frees the report. */
static void refuse_report(struct report *r, unsigned code, const char *reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vrefuse(r->x, code, reason, 0, fmt, ap);
	va_end(ap);
	finish(r);
}

/* The trainerStatus written, without the nulls that cleared the previous report's fields. */
static cJSON *written(const cJSON *status)
{
	cJSON *doc = cJSON_CreateObject(), *ts = cJSON_Duplicate(status, true), *m, *next;

	for (m = ts ? ts->child : NULL; m; m = next) {
		next = m->next;
		if (cJSON_IsNull(m))
			cJSON_Delete(cJSON_DetachItemViaPointer(ts, m));
	}
	if (!doc || !ts || !cJSON_AddItemToObject(doc, "trainerStatus", ts)) {
		cJSON_Delete(ts);
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

static void patched(struct tj_response *resp, void *userdata)
{
	struct report *r = userdata;

	if (resp->rc == 0) {
		tj_log_debug("trainer-status", "status written", TJ_STR("namespace", r->ns),
		             TJ_STR("trainjob", r->name));
		answer_json(r->x, 200, written(r->status), 0);
		finish(r);
		return;
	}
	tj_log_warn("trainer-status", "the API server refused a trainer status",
	            TJ_STR("namespace", r->ns), TJ_STR("trainjob", r->name),
	            TJ_INT("code", (int)resp->http_status), TJ_STR("error", resp->error));
	if (resp->http_status != 404 && r->server->refused)
		r->server->refused(r->server->refused_data, r->ns, r->name, resp->error);
	if (resp->http_status == 404)
		refuse_report(r, 404, "NotFound", "TrainJob %s not found", r->name);
	else if (resp->http_status == 400 || resp->http_status == 422)
		refuse_report(r, 422, "Invalid", "%s", resp->error);
	else
		refuse_report(r, 500, "InternalError", "cannot write the status: %s", resp->error);
}

/* The token is the job's: the body is read, the rate checked and the status written. */
static void write_status(struct report *r)
{
	const struct tj_ref ref = { .resource = &tj_resource_trainjobs,
		                    .namespace = r->ns,
		                    .name = r->name,
		                    .subresource = "status" };
	struct tj_problem why = { "", "" };
	char key[TJ_STATUS_LIMIT_KEY_MAX];
	uint64_t wait;
	cJSON *patch;
	int rc;

	rc = tj_trainer_status_parse(r->body, r->len, &r->status, &why);
	if (rc == -ENOMEM) {
		refuse_report(r, 500, "InternalError", "%s", "out of memory");
		return;
	}
	if (rc < 0) {
		refuse_report(r, rc == -E2BIG ? 413 : 422, why.reason, "Invalid payload: %s",
		              why.message);
		return;
	}
	if (!r->status) {
		/* No trainerStatus: nothing to write, as Kubeflow's server answers it. */
		answer_json(r->x, 200, cJSON_CreateObject(), 0);
		finish(r);
		return;
	}
	snprintf(key, sizeof(key), "%s/%s", r->ns, r->name);
	wait = tj_status_limit_take(r->server->limit, key, uv_now(r->server->loop));
	if (wait > 0) {
		refuse(r->x, 429, "TooManyRequests", (unsigned)((wait + 999) / 1000),
		       "TrainJob %s: its status was written less than %d ms ago; report again "
		       "later",
		       r->name, TJ_STATUS_LIMIT_INTERVAL_MS);
		finish(r);
		return;
	}
	patch = tj_trainer_status_patch(r->status);
	rc = patch ? tj_kube_patch(r->server->client, &ref, TJ_PATCH_MERGE, patch, NULL, patched, r,
	                           &r->request)
	           : -ENOMEM;
	cJSON_Delete(patch);
	if (rc < 0) {
		tj_log_error("trainer-status", "cannot send a status patch", TJ_ERR(rc));
		refuse_report(r, 500, "InternalError", "%s", "cannot write the status");
	}
}

static void accept_user(struct report *r, const char *user)
{
	if (!tj_trainer_status_user_allowed(user, r->ns)) {
		tj_log_debug("trainer-status", "a token of another namespace",
		             TJ_STR("namespace", r->ns), TJ_STR("user", user));
		refuse_report(r, 403, "Forbidden",
		              "Forbidden: %s is no ServiceAccount of the TrainJob's namespace",
		              user);
		return;
	}
	write_status(r);
}

static void reviewed(struct tj_response *resp, void *userdata)
{
	struct report *r = userdata;
	struct tj_trainer_status_server *s = r->server;
	struct tj_token_review tr;
	bool ok;
	int rc = resp->rc;

	r->request = NULL;
	if (rc == 0)
		rc = tj_token_review_parse(resp->body, &tr);
	if (rc < 0) {
		tj_log_error("trainer-status", "cannot review the token of a report",
		             TJ_STR("error", resp->rc < 0 ? resp->error : "not a TokenReview"));
		refuse_report(r, 500, "InternalError", "%s", "Authentication failed");
		return;
	}
	/* An authenticator that ignores spec.audiences must not let another job's token in. */
	ok = tr.authenticated && tj_token_review_has_audience(resp->body, r->audience);
	tj_review_cache_put(s->tokens, r->token_key, ok ? TJ_REVIEW_ALLOW : TJ_REVIEW_DENY,
	                    ok ? &tr.user : NULL, uv_now(s->loop), TOKEN_TTL_MS);
	if (!ok) {
		tj_log_debug("trainer-status", "a report with a token not of its job",
		             TJ_STR("namespace", r->ns), TJ_STR("trainjob", r->name),
		             TJ_STR("error", tr.error));
		if (tr.authenticated)
			tj_review_user_clear(&tr.user);
		refuse_report(r, 403, "Forbidden", "Forbidden: %s",
		              "the token is not valid for this TrainJob");
		return;
	}
	accept_user(r, tr.user.name);
	tj_review_user_clear(&tr.user);
}

static int token_key(const char *token, size_t len, const char *audience,
                     uint8_t key[TJ_REVIEW_KEY_SIZE])
{
	gnutls_hash_hd_t h;
	int r = 0;

	if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
		return -EIO;
	/* The NUL after the token keeps "ab"+"c" and "a"+"bc" apart. */
	if (gnutls_hash(h, token, len) < 0 || gnutls_hash(h, "", 1) < 0 ||
	    gnutls_hash(h, audience, strlen(audience)) < 0)
		r = -EIO;
	gnutls_hash_deinit(h, key);
	return r;
}

static void on_request(void *userdata, struct tj_http_exchange *x,
                       const struct tj_http_exchange_request *req)
{
	struct tj_trainer_status_server *s = userdata;
	const struct tj_review_user *user = NULL;
	const struct tj_ref ref = { .resource = &token_reviews };
	struct report *r;
	size_t token_len;
	const char *token;
	char ns[64], name[64];
	cJSON *review;
	int rc;

	if (req->too_large) {
		refuse(x, 413, "RequestEntityTooLarge", 0, "the body is over %d bytes",
		       TJ_TRAINER_STATUS_MAX_BODY);
		return;
	}
	if (tj_trainer_status_path_parse(req->path, ns, name) < 0) {
		refuse(x, 404, "NotFound", 0, "%s", "Not found");
		return;
	}
	if (strcmp(req->method, "POST") != 0) {
		refuse(x, 405, "MethodNotAllowed", 0, "%s is not allowed; POST a trainerStatus",
		       req->method);
		return;
	}
	token = tj_bearer_token(req->authorization, &token_len);
	if (!token) {
		refuse(x, 401, "Unauthorized", 0, "%s", "Unauthorized: no bearer token");
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r || !(r->body = malloc(req->body_len + 1))) {
		free(r);
		refuse(x, 500, "InternalError", 0, "%s", "out of memory");
		return;
	}
	memcpy(r->body, req->body, req->body_len);
	r->body[req->body_len] = '\0';
	r->len = req->body_len;
	r->server = s;
	r->x = x;
	snprintf(r->ns, sizeof(r->ns), "%s", ns);
	snprintf(r->name, sizeof(r->name), "%s", name);
	tj_trainer_status_audience(ns, name, r->audience);
	tj_http_exchange_on_abort(x, on_abort, r);
	if (token_key(token, token_len, r->audience, r->token_key) < 0) {
		refuse_report(r, 500, "InternalError", "%s", "Authentication failed");
		return;
	}
	rc = tj_review_cache_get(s->tokens, r->token_key, uv_now(s->loop), &user);
	if (rc == TJ_REVIEW_DENY) {
		refuse_report(r, 403, "Forbidden", "Forbidden: %s",
		              "the token is not valid for this TrainJob");
		return;
	}
	if (rc == TJ_REVIEW_ALLOW) {
		accept_user(r, user->name);
		return;
	}
	review = tj_token_review_new(token, token_len, r->audience);
	rc = review ? tj_kube_create(s->client, &ref, review, NULL, reviewed, r, &r->request)
	            : -ENOMEM;
	cJSON_Delete(review);
	if (rc < 0) {
		tj_log_error("trainer-status", "cannot send a TokenReview", TJ_ERR(rc));
		refuse_report(r, 500, "InternalError", "%s", "Authentication failed");
	}
}

static struct tj_trainer_status_server *server_free(struct tj_trainer_status_server *s)
{
	tj_review_cache_free(s->tokens);
	tj_status_limit_free(s->limit);
	free(s);
	return NULL;
}

int tj_trainer_status_serve(uv_loop_t *loop, const struct tj_bind_addr *addr,
                            const struct tj_serving_cert *cert, struct tj_client *client,
                            tj_trainer_status_refused_fn refused, void *userdata,
                            struct tj_trainer_status_server **ret)
{
	struct tj_trainer_status_server *s;
	int rc;

	if (addr->disabled) {
		*ret = NULL;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->client = client;
	s->loop = loop;
	s->refused = refused;
	s->refused_data = userdata;
	if ((rc = tj_review_cache_new(TOKEN_CACHE_SIZE, &s->tokens)) < 0 ||
	    (rc = tj_status_limit_new(TJ_STATUS_LIMIT_JOBS, TJ_STATUS_LIMIT_INTERVAL_MS,
	                              &s->limit)) < 0 ||
	    (rc = tj_http_serve_handler(loop, addr, "trainer-status", cert,
	                                TJ_TRAINER_STATUS_MAX_BODY, on_request, s, &s->http)) < 0) {
		server_free(s);
		return rc;
	}
	*ret = s;
	return 0;
}

int tj_trainer_status_server_port(const struct tj_trainer_status_server *s)
{
	return tj_http_server_port(s->http);
}

void tj_trainer_status_server_close(struct tj_trainer_status_server *s)
{
	if (!s)
		return;
	/* Aborts the reports in flight (on_abort), before their caches go. */
	tj_http_server_close(s->http);
	server_free(s);
}
