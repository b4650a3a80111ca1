/* API requests: URLs, bodies, retries, and the decoding of answers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/request.h"

#define URL_MAX (8u << 10)

const struct tj_resource tj_resource_pods = { "", "v1", "pods", true };
const struct tj_resource tj_resource_nodes = { "", "v1", "nodes", false };
const struct tj_resource tj_resource_services = { "", "v1", "services", true };
const struct tj_resource tj_resource_events = { "", "v1", "events", true };
const struct tj_resource tj_resource_persistentvolumeclaims = { "", "v1", "persistentvolumeclaims",
	                                                        true };
const struct tj_resource tj_resource_secrets = { "", "v1", "secrets", true };
const struct tj_resource tj_resource_configmaps = { "", "v1", "configmaps", true };
const struct tj_resource tj_resource_resourcequotas = { "", "v1", "resourcequotas", true };
const struct tj_resource tj_resource_leases = { "coordination.k8s.io", "v1", "leases", true };
const struct tj_resource tj_resource_priorityclasses = { "scheduling.k8s.io", "v1",
	                                                 "priorityclasses", false };
const struct tj_resource tj_resource_kueue_workloads = { "kueue.x-k8s.io", "v1beta2", "workloads",
	                                                 true };
const struct tj_resource tj_resource_trainjobs = { "trainer.kubeflow.org", "v1alpha1", "trainjobs",
	                                           true };
const struct tj_resource tj_resource_trainingruntimes = { "trainer.kubeflow.org", "v1alpha1",
	                                                  "trainingruntimes", true };
const struct tj_resource tj_resource_clustertrainingruntimes = { "trainer.kubeflow.org", "v1alpha1",
	                                                         "clustertrainingruntimes", false };
const struct tj_resource tj_resource_workloads = { "scheduling.k8s.io", "v1alpha2", "workloads",
	                                           true };
const struct tj_resource tj_resource_podgroups = { "scheduling.k8s.io", "v1alpha2", "podgroups",
	                                           true };

/* ---- URLs --------------------------------------------------------------------------------- */

struct buf {
	char *data; /* owned */
	size_t len, cap;
	int error;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
	if (b->error)
		return;
	if (b->len + n + 1 > URL_MAX) {
		b->error = -E2BIG;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *d;

		while (cap < b->len + n + 1)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->error = -ENOMEM;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

/* Percent-encodes everything but RFC 3986's unreserved characters. */
static void buf_escaped(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			buf_add(b, s, 1);
		} else {
			char e[3] = { '%', hex[c >> 4], hex[c & 15] };

			buf_add(b, e, 3);
		}
	}
}

/* A path segment must be non-empty, not "." or "..", and hold no '/'. */
static bool valid_segment(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int tj_kube_url(const struct tj_ref *ref, const struct tj_query_param *params, size_t n_params,
                char **ret)
{
	const struct tj_resource *res = ref->resource;
	struct buf b = { 0 };
	bool first = true;

	if (!res || !valid_segment(res->version) || !valid_segment(res->plural) ||
	    (res->group && *res->group && !valid_segment(res->group)))
		return -EINVAL;
	if (ref->namespace && (!res->namespaced || !valid_segment(ref->namespace)))
		return -EINVAL;
	if (ref->name && !valid_segment(ref->name))
		return -EINVAL;
	if (ref->subresource && (!ref->name || !valid_segment(ref->subresource)))
		return -EINVAL;

	if (res->group && *res->group) {
		buf_str(&b, "/apis/");
		buf_str(&b, res->group);
		buf_str(&b, "/");
	} else {
		buf_str(&b, "/api/");
	}
	buf_str(&b, res->version);
	if (ref->namespace) {
		buf_str(&b, "/namespaces/");
		buf_escaped(&b, ref->namespace);
	}
	buf_str(&b, "/");
	buf_str(&b, res->plural);
	if (ref->name) {
		buf_str(&b, "/");
		buf_escaped(&b, ref->name);
	}
	if (ref->subresource) {
		buf_str(&b, "/");
		buf_escaped(&b, ref->subresource);
	}
	for (size_t i = 0; i < n_params; i++) {
		if (!params[i].value)
			continue;
		buf_str(&b, first ? "?" : "&");
		first = false;
		buf_escaped(&b, params[i].key);
		buf_str(&b, "=");
		buf_escaped(&b, params[i].value);
	}
	if (b.error) {
		free(b.data);
		return b.error;
	}
	*ret = b.data;
	return 0;
}

int tj_kube_list_url(const struct tj_ref *ref, const struct tj_list_options *opts, char **ret)
{
	static const struct tj_list_options none;
	char limit[24];

	if (!opts)
		opts = &none;
	if (ref->name || opts->limit < 0)
		return -EINVAL;
	snprintf(limit, sizeof(limit), "%ld", opts->limit);
	const struct tj_query_param params[] = {
		{ "limit", opts->limit > 0 ? limit : NULL },
		{ "continue",
		  opts->continue_token && *opts->continue_token ? opts->continue_token : NULL },
		{ "labelSelector", opts->label_selector },
		{ "fieldSelector", opts->field_selector },
		{ "resourceVersion", opts->resource_version },
		{ "resourceVersionMatch", opts->resource_version_match },
	};
	return tj_kube_url(ref, params, sizeof(params) / sizeof(params[0]), ret);
}

int tj_delete_options_json(const struct tj_delete_options *opts, char **ret)
{
	cJSON *root = cJSON_CreateObject(), *pre, *dry;
	char *json;
	int r = -ENOMEM;

	if (!root)
		return -ENOMEM;
	if (!cJSON_AddStringToObject(root, "kind", "DeleteOptions") ||
	    !cJSON_AddStringToObject(root, "apiVersion", "v1"))
		goto out_free;
	if (opts->set_grace_period) {
		if (opts->grace_period_seconds < 0) {
			r = -EINVAL;
			goto out_free;
		}
		if (!cJSON_AddNumberToObject(root, "gracePeriodSeconds",
		                             (double)opts->grace_period_seconds))
			goto out_free;
	}
	if (opts->propagation_policy) {
		if (strcmp(opts->propagation_policy, "Background") != 0 &&
		    strcmp(opts->propagation_policy, "Foreground") != 0 &&
		    strcmp(opts->propagation_policy, "Orphan") != 0) {
			r = -EINVAL;
			goto out_free;
		}
		if (!cJSON_AddStringToObject(root, "propagationPolicy", opts->propagation_policy))
			goto out_free;
	}
	if (opts->precondition_uid || opts->precondition_resource_version) {
		pre = cJSON_AddObjectToObject(root, "preconditions");
		if (!pre)
			goto out_free;
		if (opts->precondition_uid &&
		    !cJSON_AddStringToObject(pre, "uid", opts->precondition_uid))
			goto out_free;
		if (opts->precondition_resource_version &&
		    !cJSON_AddStringToObject(pre, "resourceVersion",
		                             opts->precondition_resource_version))
			goto out_free;
	}
	if (opts->dry_run) {
		dry = cJSON_AddArrayToObject(root, "dryRun");
		if (!dry || !cJSON_AddItemToArray(dry, cJSON_CreateString("All")))
			goto out_free;
	}
	json = cJSON_PrintUnformatted(root);
	if (!json)
		goto out_free;
	*ret = json;
	r = 0;

out_free:
	cJSON_Delete(root);
	return r;
}

long tj_retry_delay_ms(long http_status, const char *retry_after, int attempts_done,
                       int max_retries, long max_delay_ms)
{
	long seconds = 0, delay;
	const char *p;

	if (http_status != 429 && (http_status < 500 || http_status > 599))
		return -1;
	if (!retry_after || !*retry_after || attempts_done >= max_retries)
		return -1;
	/* client-go honours only an integer number of seconds. */
	for (p = retry_after; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (seconds > 86400)
			break; /* capped below anyway; avoid overflow */
		seconds = seconds * 10 + (*p - '0');
	}
	delay = seconds * 1000;
	if (delay < 1000)
		delay = 1000;
	if (delay > max_delay_ms)
		delay = max_delay_ms;
	return delay;
}

/* ---- requests ------------------------------------------------------------------------------ */

struct tj_request {
	struct tj_client_user link;
	struct tj_client *client; /* NULL once the client is gone */
	uv_timer_t timer;         /* waits: rate limit, Retry-After */
	struct tj_http_call *call;
	const char *method;       /* static string */
	const char *content_type; /* static string, NULL without a body */
	char *path;               /* owned */
	char *body;               /* owned; NULL without a body */
	int attempts;
	bool resend;     /* tj_write_options.resend_unanswered */
	int resends;     /* sent again so far for that */
	uint64_t since;  /* the loop's time when it was submitted */
	bool maybe_done; /* an attempt of a write may have been done (tj_response) */
	tj_response_fn fn;
	void *userdata;
	bool in_callback;
	bool closing;
};

static void on_timer_closed(uv_handle_t *h)
{
	struct tj_request *r = h->data;

	free(r->path);
	free(r->body);
	free(r);
}

/* Detaches and frees the request (after libuv closed its timer). */
static void release(struct tj_request *r)
{
	if (r->closing)
		return;
	r->closing = true;
	if (r->client)
		tj_client_detach(r->client, &r->link);
	r->client = NULL;
	uv_timer_stop(&r->timer);
	uv_close((uv_handle_t *)&r->timer, on_timer_closed);
}

static void complete(struct tj_request *r, const struct tj_http_response *http)
{
	struct tj_response resp = { .rc = http->rc, .http_status = http->status, .error = "" };

	if (http->rc < 0) {
		resp.error = http->error;
	} else if (http->status >= 200 && http->status < 300) {
		if (http->body_len > 0) {
			resp.body = cJSON_ParseWithLength(http->body, http->body_len);
			if (!resp.body) {
				resp.rc = -EBADMSG;
				resp.error = "the server's answer is not JSON";
			}
		}
	} else {
		resp.rc = tj_status_from_response(http->status, http->body, http->body_len,
		                                  &resp.status);
		if (resp.rc == 0) {
			resp.rc = -EREMOTEIO;
			resp.error = resp.status.message ? resp.status.message : "";
		} else {
			resp.error = "out of memory";
		}
	}
	resp.maybe_done = r->maybe_done && resp.rc != 0;
	r->in_callback = true;
	r->fn(&resp, r->userdata);
	r->in_callback = false;
	cJSON_Delete(resp.body);
	tj_status_clear(&resp.status);
	release(r);
}

static void start(struct tj_request *r);
static void send_now(struct tj_request *r);

static void on_wait_over(uv_timer_t *h)
{
	send_now(h->data);
}

static void on_retry_due(uv_timer_t *h)
{
	start(h->data);
}

/* Whether an attempt of a write leaves open whether the server did it: the request went out,
 * or may have, and no answer came (a lost connection, a timeout, a body cut short), or the
 * answer is a 5xx. A connection that could not be made, a name that did not resolve, a TLS
 * handshake that failed and a request the client never sent say that it was not done. */
static bool outcome_unknown(const struct tj_http_response *http)
{
	if (http->rc < 0)
		return http->rc != -ECONNREFUSED && http->rc != -EHOSTUNREACH &&
		       http->rc != -EPROTO && http->rc != -EINVAL && http->rc != -ESHUTDOWN;
	return http->status >= 500;
}

/* Whether a write that may have been done is worth sending again after this answer, which
 * says nothing of an earlier attempt: a transport error, a 5xx or a 429. Not once its
 * attempts have taken as long as one request may (the client's timeout): against an API
 * server that slow, each resend would hold the caller up to another timeout, so the caller
 * hears at once that the write may have been done. */
static bool resend_due(const struct tj_request *r, const struct tj_client_options *o,
                       const struct tj_http_response *http)
{
	return r->resend && r->maybe_done && r->resends < TJ_KUBE_RESENDS &&
	       uv_now(r->timer.loop) - r->since < (uint64_t)o->timeout_ms &&
	       (http->rc < 0 || http->status >= 500 || http->status == 429);
}

static void on_http_done(const struct tj_http_response *http, void *userdata)
{
	struct tj_request *r = userdata;
	const struct tj_client_options *o = tj_client_options(r->client);
	long delay;

	r->call = NULL;
	if (strcmp(r->method, "GET") != 0 && outcome_unknown(http))
		r->maybe_done = true;
	delay = http->rc < 0 ? -1
	                     : tj_retry_delay_ms(http->status, http->retry_after, r->attempts,
	                                         o->max_retries, o->max_retry_delay_ms);
	if (delay < 0 && resend_due(r, o, http))
		delay = o->resend_first_ms << r->resends++;
	if (delay >= 0) {
		r->attempts++;
		uv_timer_start(&r->timer, on_retry_due, (uint64_t)delay, 0);
		return;
	}
	complete(r, http);
}

static void on_send_failed(uv_timer_t *h)
{
	struct tj_request *r = h->data;
	struct tj_http_response http = {
		.rc = -ESHUTDOWN,
		.body = "",
		.error = "the client is shutting down",
	};

	complete(r, &http);
}

/* Sends, after waiting for the rate limiter if it says so. */
static void start(struct tj_request *r)
{
	uint64_t wait = tj_client_admit(r->client);

	if (wait > 0)
		uv_timer_start(&r->timer, on_wait_over, wait, 0);
	else
		send_now(r);
}

static void send_now(struct tj_request *r)
{
	const struct tj_client_options *o = tj_client_options(r->client);
	struct tj_http_request req = {
		.method = r->method,
		.path = r->path,
		.content_type = r->content_type,
		.body = r->body,
		.body_len = r->body ? strlen(r->body) : 0,
		.timeout_ms = o->timeout_ms,
		.max_body = o->max_body,
		.on_done = on_http_done,
		.userdata = r,
	};

	if (tj_transport_send(tj_client_transport(r->client), &req, &r->call) < 0)
		uv_timer_start(&r->timer, on_send_failed, 0, 0);
}

static void abort_request(struct tj_client_user *u)
{
	struct tj_request *r = (struct tj_request *)u;

	r->client = NULL;
	if (r->in_callback)
		return; /* complete() releases it when the callback returns */
	tj_http_call_cancel(r->call);
	r->call = NULL;
	release(r);
}

/* Takes ownership of path and body (both freed on failure). */
static int submit(struct tj_client *c, const char *method, char *path, char *body,
                  const char *content_type, bool resend, tj_response_fn fn, void *userdata,
                  struct tj_request **ret)
{
	struct tj_request *r;

	if (!fn) {
		free(path);
		free(body);
		return -EINVAL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(path);
		free(body);
		return -ENOMEM;
	}
	r->client = c;
	r->method = method;
	r->path = path;
	r->body = body;
	r->content_type = body ? content_type : NULL;
	r->resend = resend;
	r->fn = fn;
	r->userdata = userdata;
	r->link.abort = abort_request;
	uv_timer_init(tj_client_loop(c), &r->timer);
	r->timer.data = r;
	r->since = uv_now(tj_client_loop(c));
	tj_client_attach(c, &r->link);
	start(r);
	if (ret)
		*ret = r;
	return 0;
}

static int serialise(const cJSON *obj, char **ret)
{
	if (!obj)
		return -EINVAL;
	*ret = cJSON_PrintUnformatted(obj);
	return *ret ? 0 : -ENOMEM;
}

int tj_kube_get(struct tj_client *c, const struct tj_ref *ref, tj_response_fn fn, void *userdata,
                struct tj_request **ret)
{
	char *path;
	int r;

	if (!ref->name)
		return -EINVAL;
	r = tj_kube_url(ref, NULL, 0, &path);
	if (r < 0)
		return r;
	return submit(c, "GET", path, NULL, NULL, false, fn, userdata, ret);
}

/* "/api", "/apis", "/apis/GROUP" or "/apis/GROUP/VERSION": the documents that list what the
 * server serves, never an object. */
static bool is_discovery_path(const char *path)
{
	char seg[256];
	const char *p;
	int n = 0;

	if (strpbrk(path, "?#% "))
		return false;
	if (strcmp(path, "/api") == 0)
		return true;
	if (strncmp(path, "/apis", 5) != 0 || (path[5] != '\0' && path[5] != '/'))
		return false;
	for (p = path + 5; *p; n++) {
		size_t len = strcspn(++p, "/");

		if (len == 0 || len >= sizeof(seg) || n == 2)
			return false;
		memcpy(seg, p, len);
		seg[len] = '\0';
		if (!valid_segment(seg))
			return false;
		p += len;
	}
	return true;
}

int tj_kube_get_discovery(struct tj_client *c, const char *path, tj_response_fn fn, void *userdata,
                          struct tj_request **ret)
{
	char *copy;

	if (!path || !is_discovery_path(path))
		return -EINVAL;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	return submit(c, "GET", copy, NULL, NULL, false, fn, userdata, ret);
}

int tj_kube_list(struct tj_client *c, const struct tj_ref *ref, const struct tj_list_options *opts,
                 tj_response_fn fn, void *userdata, struct tj_request **ret)
{
	char *path;
	int r;

	r = tj_kube_list_url(ref, opts, &path);
	if (r < 0)
		return r;
	return submit(c, "GET", path, NULL, NULL, false, fn, userdata, ret);
}

static int write_url(const struct tj_ref *ref, const struct tj_write_options *opts, char **ret)
{
	const struct tj_query_param params[] = {
		{ "fieldManager", opts ? opts->field_manager : NULL },
		{ "dryRun", opts && opts->dry_run ? "All" : NULL },
	};

	return tj_kube_url(ref, params, 2, ret);
}

/* POST or PUT of a whole object as JSON: create and update differ only in the verb and in
 * which refs they accept. */
static int send_object(struct tj_client *c, const char *method, const struct tj_ref *ref,
                       const cJSON *obj, const struct tj_write_options *opts, tj_response_fn fn,
                       void *userdata, struct tj_request **ret)
{
	char *path, *body;
	int r;

	r = write_url(ref, opts, &path);
	if (r < 0)
		return r;
	r = serialise(obj, &body);
	if (r < 0) {
		free(path);
		return r;
	}
	return submit(c, method, path, body, "application/json", opts && opts->resend_unanswered,
	              fn, userdata, ret);
}

int tj_kube_create(struct tj_client *c, const struct tj_ref *ref, const cJSON *obj,
                   const struct tj_write_options *opts, tj_response_fn fn, void *userdata,
                   struct tj_request **ret)
{
	if (ref->name && !ref->subresource)
		return -EINVAL;
	return send_object(c, "POST", ref, obj, opts, fn, userdata, ret);
}

int tj_kube_update(struct tj_client *c, const struct tj_ref *ref, const cJSON *obj,
                   const struct tj_write_options *opts, tj_response_fn fn, void *userdata,
                   struct tj_request **ret)
{
	/* A PUT sent again after it was done would meet its own resourceVersion's conflict. */
	if (!ref->name || (opts && opts->resend_unanswered))
		return -EINVAL;
	return send_object(c, "PUT", ref, obj, opts, fn, userdata, ret);
}

int tj_kube_delete(struct tj_client *c, const struct tj_ref *ref,
                   const struct tj_delete_options *opts, tj_response_fn fn, void *userdata,
                   struct tj_request **ret)
{
	static const struct tj_delete_options none;
	char *path, *body;
	int r;

	if (!ref->name)
		return -EINVAL;
	r = tj_kube_url(ref, NULL, 0, &path);
	if (r < 0)
		return r;
	r = tj_delete_options_json(opts ? opts : &none, &body);
	if (r < 0) {
		free(path);
		return r;
	}
	return submit(c, "DELETE", path, body, "application/json", false, fn, userdata, ret);
}

static const char *patch_content_type(enum tj_patch_type type)
{
	switch (type) {
	case TJ_PATCH_MERGE:
		return "application/merge-patch+json";
	case TJ_PATCH_JSON:
		return "application/json-patch+json";
	case TJ_PATCH_STRATEGIC:
		return "application/strategic-merge-patch+json";
	case TJ_PATCH_APPLY:
		return "application/apply-patch+yaml";
	}
	return NULL;
}

int tj_kube_patch(struct tj_client *c, const struct tj_ref *ref, enum tj_patch_type type,
                  const cJSON *patch, const struct tj_patch_options *opts, tj_response_fn fn,
                  void *userdata, struct tj_request **ret)
{
	const char *content_type = patch_content_type(type);
	char *path, *body;
	int r;

	if (!ref->name || !content_type)
		return -EINVAL;
	if (type == TJ_PATCH_APPLY && (!opts || !opts->field_manager || !*opts->field_manager))
		return -EINVAL;
	if (type == TJ_PATCH_JSON ? !cJSON_IsArray(patch) : !cJSON_IsObject(patch))
		return -EINVAL;
	const struct tj_query_param params[] = {
		{ "fieldManager", opts ? opts->field_manager : NULL },
		{ "force", opts && opts->force && type == TJ_PATCH_APPLY ? "true" : NULL },
		{ "dryRun", opts && opts->dry_run ? "All" : NULL },
	};
	r = tj_kube_url(ref, params, 3, &path);
	if (r < 0)
		return r;
	r = serialise(patch, &body);
	if (r < 0) {
		free(path);
		return r;
	}
	return submit(c, "PATCH", path, body, content_type, false, fn, userdata, ret);
}

void tj_request_cancel(struct tj_request *r)
{
	if (!r || r->in_callback || r->closing)
		return;
	tj_http_call_cancel(r->call);
	r->call = NULL;
	release(r);
}

cJSON *tj_response_take_body(struct tj_response *resp)
{
	cJSON *body = resp->body;

	resp->body = NULL;
	return body;
}
