/* The API client: one transport to one API server, the retry policy and the optional
 * client-side rate limit shared by every request and watch made through it. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "kube/config.h"
#include "kube/transport.h"

struct tj_client;

#define TJ_KUBE_RESEND_FIRST_MS 500

struct tj_client_options {
	/* Client-side token bucket over all requests (watches count when opened). qps <= 0
	 * (the default) turns it off; the server's priority and fairness then decide. */
	double qps;
	int burst;
	/* Retries of a 429 or 5xx response that carries Retry-After (client-go: 10). -1 = none,
	 * 0 = default. */
	int max_retries;
	long max_retry_delay_ms; /* cap of one Retry-After wait; 0 = 30 s */
	/* The first wait before a create is sent again (tj_write_options.resend_unanswered);
	 * 0 = TJ_KUBE_RESEND_FIRST_MS. */
	long resend_first_ms;
	long timeout_ms; /* per request (not watches); 0 = 60 s */
	size_t max_body; /* response body limit; 0 = TJ_HTTP_MAX_BODY */
	struct tj_transport_options transport;
};

/* Creates a client for cfg (copied as needed; may be freed afterwards). opts may be NULL. */
int tj_client_new(uv_loop_t *loop, const struct tj_kube_config *cfg,
                  const struct tj_client_options *opts, struct tj_client **ret);

/* The loop the client runs on. */
uv_loop_t *tj_client_loop(const struct tj_client *c);

/* The namespace of the configuration's context (or of the pod, in-cluster). */
const char *tj_client_namespace(const struct tj_client *c);

/* For the modules built on the client (request.c, watch.c). */

/* Something in flight on the client. tj_client_free calls abort, which must stop it without
 * calling its callbacks and release it (possibly after libuv closes its handles). */
struct tj_client_user {
	struct tj_client_user *prev, *next;
	void (*abort)(struct tj_client_user *u);
};

void tj_client_attach(struct tj_client *c, struct tj_client_user *u);
void tj_client_detach(struct tj_client *c, struct tj_client_user *u);

struct tj_transport *tj_client_transport(const struct tj_client *c);

/* The options with every default filled in. */
const struct tj_client_options *tj_client_options(const struct tj_client *c);

/* Takes a token from the client-side rate limiter; returns how many milliseconds to wait
 * before sending (always 0 when the limiter is off). */
uint64_t tj_client_admit(struct tj_client *c);

/* Cancels every request and watch (no callbacks) and releases the client; handles close on the
 * next loop iteration, so run the loop once more. Accepts NULL; returns NULL. */
struct tj_client *tj_client_free(struct tj_client *c);
