/* The API client: one transport to one API server, the retry policy and the optional
 * client-side rate limit shared by every request and watch made through it. */
#pragma once

#include <stddef.h>

#include <uv.h>

#include "kube/config.h"
#include "kube/transport.h"

struct tj_client;

struct tj_client_options {
	/* Client-side token bucket over all requests (watches count when opened). qps <= 0
	 * (the default) turns it off; the server's priority and fairness then decide. */
	double qps;
	int burst;
	/* Retries of a 429 or 5xx response that carries Retry-After (client-go: 10). -1 = none,
	 * 0 = default. */
	int max_retries;
	long max_retry_delay_ms; /* cap of one Retry-After wait; 0 = 30 s */
	long timeout_ms;         /* per request (not watches); 0 = 60 s */
	size_t max_body;         /* response body limit; 0 = TJ_HTTP_MAX_BODY */
	struct tj_transport_options transport;
};

/* Creates a client for cfg (copied as needed; may be freed afterwards). opts may be NULL. */
int tj_client_new(uv_loop_t *loop, const struct tj_kube_config *cfg,
                  const struct tj_client_options *opts, struct tj_client **ret);

/* The loop the client runs on. */
uv_loop_t *tj_client_loop(const struct tj_client *c);

/* The namespace of the configuration's context (or of the pod, in-cluster). */
const char *tj_client_namespace(const struct tj_client *c);

/* Cancels every request and watch (no callbacks) and releases the client; handles close on the
 * next loop iteration, so run the loop once more. Accepts NULL; returns NULL. */
struct tj_client *tj_client_free(struct tj_client *c);
