/* HTTP transport to one API server: a libcurl multi handle driven by the libuv loop (socket and
 * timer callbacks on uv_poll/uv_timer), HTTP/2 multiplexing where the server offers it, TLS
 * with the kubeconfig's CA and client certificate from memory, connection reuse, TCP
 * keepalive, bearer tokens from the credential source. Everything runs on the loop's thread;
 * no call blocks. Most code uses kube/request.h and kube/watch.h instead of this layer. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "kube/config.h"

/* "trainjob-controller/VERSION". */
#define TJ_USER_AGENT_PREFIX "trainjob-controller/"

struct tj_transport;
struct tj_http_call;

/* What a finished call produced. Everything is borrowed and valid only during the callback. */
struct tj_http_response {
	/* 0 if an HTTP response arrived (whatever its status), else a negative errno:
	 * -ETIMEDOUT (request timeout), -ECONNREFUSED, -EHOSTUNREACH (name not resolved),
	 * -ECONNRESET (connection lost or empty reply), -EPROTO (TLS handshake or certificate
	 * verification failed), -EMSGSIZE (body above max_body), -ENOMEM, -EIO (other), or the
	 * code an on_data callback returned. */
	int rc;
	long status;      /* HTTP status, 0 if none */
	const char *body; /* buffered body (NUL-terminated), "" if none or streamed */
	size_t body_len;
	const char *retry_after; /* Retry-After header value, NULL if absent */
	const char *error;       /* human-readable reason when rc < 0 (libcurl's message, naming
	                            the server), "" otherwise */
};

typedef void (*tj_http_done_fn)(const struct tj_http_response *resp, void *userdata);

/* Streaming: called with each chunk of a 2xx response body as it arrives (non-2xx bodies are
 * always buffered and given to the done callback, so a Status can be decoded). Return 0 to
 * continue or a negative errno to abort the call, which then completes with that rc. */
typedef int (*tj_http_data_fn)(const char *chunk, size_t len, void *userdata);

struct tj_http_request {
	const char *method;       /* "GET", "POST", "PUT", "PATCH", "DELETE" */
	const char *path;         /* absolute path with query, already encoded; appended to the
	                             server URL (which may carry a prefix) */
	const char *content_type; /* of the body; NULL without a body */
	const char *body;         /* borrowed; copied before tj_transport_send returns */
	size_t body_len;
	long timeout_ms;         /* whole transfer, 0 = none (watches rely on timeoutSeconds and
	                            keepalive instead; see transport.c) */
	size_t max_body;         /* limit of a buffered body; 0 = TJ_HTTP_MAX_BODY */
	tj_http_data_fn on_data; /* NULL = buffer the body */
	tj_http_done_fn on_done; /* required */
	void *userdata;
};

#define TJ_HTTP_MAX_BODY (64u << 20)

/* One finished HTTP exchange, for the client's metrics (rest_client_requests_total). Every
 * field is borrowed and valid only during the callback. */
struct tj_http_observation {
	const char *method; /* "GET", ... */
	const char *url;    /* the whole URL, query included */
	const char *host;   /* of the server URL, with its port if it names one */
	long status;        /* HTTP status, 0 when no response arrived */
	int rc;             /* as tj_http_response.rc */
	double seconds;     /* from the send (or the resend after a 401) to the end */
};

typedef void (*tj_http_observe_fn)(const struct tj_http_observation *o, void *userdata);

struct tj_transport_options {
	long connect_timeout_ms; /* 0 = 10 s */
	bool disable_http2;      /* force HTTP/1.1 (client-go's DISABLE_HTTP2) */
	/* Called once per finished exchange (a 401 answered by a fresh credential and resent
	 * counts twice, as client-go counts it), before the call's done callback; not for a
	 * cancelled call. NULL observes nothing. */
	tj_http_observe_fn observe;
	void *observe_userdata;
};

/* Creates a transport for cfg's server and credentials. cfg is copied as needed and may be
 * freed afterwards. opts may be NULL. */
int tj_transport_new(uv_loop_t *loop, const struct tj_kube_config *cfg,
                     const struct tj_transport_options *opts, struct tj_transport **ret);

/* Starts a call. The done callback runs exactly once, on a later loop iteration (never from
 * inside tj_transport_send), unless the call is cancelled first. *ret_call (may be NULL) is
 * valid until the done callback returns or the call is cancelled. */
int tj_transport_send(struct tj_transport *t, const struct tj_http_request *req,
                      struct tj_http_call **ret_call);

/* Aborts a call; its done callback is not called. Safe from inside any callback, including
 * the call's own on_data; a no-op from inside its own done callback. */
void tj_http_call_cancel(struct tj_http_call *call);

/* Cancels every call (no callbacks) and closes the libuv handles; memory is released from the
 * close callbacks, so the loop must run once more. Accepts NULL; returns NULL. */
struct tj_transport *tj_transport_free(struct tj_transport *t);

/* The host[:port] of an http(s) URL ("10.0.0.1:6443" of "https://10.0.0.1:6443/prefix"),
 * without user info; truncated to size; "" for a URL without a scheme. */
void tj_url_host(const char *url, char *buf, size_t size);
