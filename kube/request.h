/* Asynchronous API requests: get, list (paginated), create, update, delete, patch, on any
 * resource and on subresources such as status. Each completes through one callback with the
 * HTTP status, the parsed JSON body, or the decoded API error. 429 and 5xx answers that carry
 * Retry-After are retried a bounded number of times, as client-go does. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "kube/client.h"
#include "kube/status.h"

/* An API resource: group/version and the plural name used in URLs. */
struct tj_resource {
	const char *group;   /* "" for the core group (/api/v1) */
	const char *version; /* "v1", "v1alpha1", ... */
	const char *plural;  /* "pods", "trainjobs", ... */
	bool namespaced;
};

extern const struct tj_resource tj_resource_pods;
extern const struct tj_resource tj_resource_nodes;
extern const struct tj_resource tj_resource_resourcequotas;
extern const struct tj_resource tj_resource_priorityclasses;
extern const struct tj_resource tj_resource_services;
extern const struct tj_resource tj_resource_events;
extern const struct tj_resource tj_resource_persistentvolumeclaims;
extern const struct tj_resource tj_resource_secrets;
extern const struct tj_resource tj_resource_configmaps;
extern const struct tj_resource tj_resource_leases;                  /* coordination.k8s.io/v1 */
extern const struct tj_resource tj_resource_kueue_workloads;         /* kueue.x-k8s.io/v1beta2 */
extern const struct tj_resource tj_resource_trainjobs;               /* trainer.kubeflow.org */
extern const struct tj_resource tj_resource_trainingruntimes;        /* trainer.kubeflow.org */
extern const struct tj_resource tj_resource_clustertrainingruntimes; /* trainer.kubeflow.org */
extern const struct tj_resource tj_resource_workloads; /* scheduling.k8s.io/v1alpha2 */
extern const struct tj_resource tj_resource_podgroups; /* scheduling.k8s.io/v1alpha2 */

/* What a request addresses. All strings are borrowed for the duration of the call that takes
 * the ref (they are copied into the URL). */
struct tj_ref {
	const struct tj_resource *resource;
	const char *namespace;   /* NULL: cluster-scoped, or all namespaces for list/watch */
	const char *name;        /* NULL: the collection */
	const char *subresource; /* NULL, or "status", "scale", ... (needs a name) */
};

/* A query parameter; a NULL value leaves the parameter out. */
struct tj_query_param {
	const char *key;
	const char *value;
};

/* Builds "/api/v1/namespaces/NS/pods/NAME/status?k=v&..." (or "/apis/GROUP/VERSION/...")
 * with path segments and query values percent-encoded (RFC 3986 unreserved characters kept).
 * Returns -EINVAL if a name, namespace or subresource is empty or contains '/', or a
 * subresource is given without a name; -E2BIG beyond 8 KiB. Pure. */
int tj_kube_url(const struct tj_ref *ref, const struct tj_query_param *params, size_t n_params,
                char **ret);

/* The result of a request. */
struct tj_response {
	/* 0 for a 2xx answer; -EREMOTEIO if the server answered with an error (see http_status
	 * and status); -EBADMSG if a 2xx body is not JSON; otherwise a transport error as in
	 * tj_http_response.rc (-ETIMEDOUT, -ECONNREFUSED, -EPROTO for TLS, -EMSGSIZE, ...). */
	int rc;
	long http_status;        /* 0 if no answer */
	cJSON *body;             /* the parsed 2xx body (NULL if empty); freed after the callback
	                            returns unless taken with tj_response_take_body */
	struct tj_status status; /* the decoded API error when rc == -EREMOTEIO, zeroed otherwise;
	                            freed after the callback */
	const char *error;       /* one line for a person when rc < 0 (the Status message or the
	                            transport's reason), "" on success */
	/* rc < 0, and the write may have been done all the same: an attempt of it went out and
	 * got no answer (a lost connection, a timeout) or a 5xx. False for a GET, and for a
	 * write whose every attempt was answered 4xx or never reached the server (a refused
	 * connection): that write was not done. */
	bool maybe_done;
};

/* Takes ownership of the body; the caller frees it with cJSON_Delete. */
cJSON *tj_response_take_body(struct tj_response *resp);

/* Runs once per request, on a later loop iteration, unless the request was cancelled. */
typedef void (*tj_response_fn)(struct tj_response *resp, void *userdata);

struct tj_request;

struct tj_list_options {
	const char *label_selector;
	const char *field_selector;
	const char *resource_version;       /* NULL: most recent; "0": any (watch cache) */
	const char *resource_version_match; /* NULL, "NotOlderThan" or "Exact" */
	long limit;                         /* page size; 0 = no limit */
	const char *continue_token;         /* metadata.continue of the previous page */
};

struct tj_write_options {
	const char *field_manager; /* fieldManager, NULL = server default */
	bool dry_run;              /* dryRun=All */
	/* A create of an object that has a name of its own (not generateName): sent again
	 * when an attempt may have reached the server and no answer says whether it made the
	 * object (tj_response.maybe_done), so that the caller learns which: a 2xx, or 409
	 * AlreadyExists, which it must take for the object being there (made by the attempt
	 * that got no answer, or by another writer). The resends go on through a refused
	 * connection, a 429 and a 5xx (an API server starting again), up to TJ_KUBE_RESENDS,
	 * the first after the client's resend_first_ms (TJ_KUBE_RESEND_FIRST_MS) and each wait
	 * twice the one before, and stop once the attempts have taken the client's timeout of
	 * one request (an attempt that timed out is not sent again). */
	bool resend_unanswered;
};

#define TJ_KUBE_RESENDS 5 /* with the default first wait: 0.5, 1, 2, 4 and 8 s, 15.5 s in all */

struct tj_delete_options {
	const char *precondition_uid;              /* preconditions.uid, NULL = none */
	const char *precondition_resource_version; /* preconditions.resourceVersion, NULL = none */
	const char *propagation_policy; /* "Background", "Foreground", "Orphan"; NULL = default */
	bool set_grace_period;          /* send grace_period_seconds (0 = delete now) */
	int64_t grace_period_seconds;
	bool dry_run;
};

enum tj_patch_type {
	TJ_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
	TJ_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
	TJ_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in types only) */
	TJ_PATCH_APPLY,     /* application/apply-patch+yaml: server-side apply */
};

struct tj_patch_options {
	const char *field_manager; /* required for TJ_PATCH_APPLY (-EINVAL otherwise) */
	bool force;                /* force=true: apply takes over conflicting fields */
	bool dry_run;
};

/* The verbs. ref->name is required except for list and create (which address the collection);
 * ref->subresource "status" writes only .status. Bodies are serialised before the call
 * returns and stay the caller's. opts may be NULL. *ret (may be NULL) is valid until the
 * callback returns or the request is cancelled. Return 0, -EINVAL for a bad ref or options,
 * -ENOMEM; on failure the callback is never called. */
int tj_kube_get(struct tj_client *c, const struct tj_ref *ref, tj_response_fn fn, void *userdata,
                struct tj_request **ret);
int tj_kube_list(struct tj_client *c, const struct tj_ref *ref, const struct tj_list_options *opts,
                 tj_response_fn fn, void *userdata, struct tj_request **ret);
int tj_kube_create(struct tj_client *c, const struct tj_ref *ref, const cJSON *obj,
                   const struct tj_write_options *opts, tj_response_fn fn, void *userdata,
                   struct tj_request **ret);
/* PUT: obj should carry metadata.resourceVersion (409 Conflict when stale); -EINVAL with
 * resend_unanswered, which is for creates. */
int tj_kube_update(struct tj_client *c, const struct tj_ref *ref, const cJSON *obj,
                   const struct tj_write_options *opts, tj_response_fn fn, void *userdata,
                   struct tj_request **ret);
int tj_kube_delete(struct tj_client *c, const struct tj_ref *ref,
                   const struct tj_delete_options *opts, tj_response_fn fn, void *userdata,
                   struct tj_request **ret);
/* patch is a JSON object (merge, strategic, apply) or array (JSON patch). */
int tj_kube_patch(struct tj_client *c, const struct tj_ref *ref, enum tj_patch_type type,
                  const cJSON *patch, const struct tj_patch_options *opts, tj_response_fn fn,
                  void *userdata, struct tj_request **ret);

/* GET of a discovery document: path is "/api", "/apis", "/apis/GROUP" or
 * "/apis/GROUP/VERSION" ("/apis/scheduling.k8s.io/v1alpha2"); anything else (an object's
 * path, a query, "." or ".." segments) is refused with -EINVAL. */
int tj_kube_get_discovery(struct tj_client *c, const char *path, tj_response_fn fn, void *userdata,
                          struct tj_request **ret);

/* Cancels a request (its callback is not called) and frees it. Safe from any callback except
 * the request's own, where it is a no-op. Accepts NULL. */
void tj_request_cancel(struct tj_request *r);

/* Pure helpers, exposed for tests. */

/* The URL of a list request ("?limit=..&continue=..&labelSelector=.."). */
int tj_kube_list_url(const struct tj_ref *ref, const struct tj_list_options *opts, char **ret);

/* The DeleteOptions body for opts (kind DeleteOptions, apiVersion v1). */
int tj_delete_options_json(const struct tj_delete_options *opts, char **ret);

/* Whether and when to retry: for a 429 or 5xx answer with an integer Retry-After (seconds,
 * as client-go reads it; an HTTP date is not retried), and attempts_done < max_retries,
 * returns the wait in milliseconds (Retry-After, capped at max_delay_ms, and at least 1 s so
 * that "Retry-After: 0" cannot make a tight loop); otherwise -1. */
long tj_retry_delay_ms(long http_status, const char *retry_after, int attempts_done,
                       int max_retries, long max_delay_ms);
