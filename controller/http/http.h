/* The metrics server (/metrics, default :8080) and the probe server (/healthz and /readyz,
 * default :8081), served by libmicrohttpd on the controller's one libuv loop.
 *
 * libmicrohttpd runs without threads of its own: it is started in external epoll mode, its
 * epoll descriptor is watched by a uv_poll handle and its timeouts by a uv_timer, and both
 * call MHD_run. Requests are answered from the loop's thread, so handlers read the metrics
 * registry and run health checks without locks. */
#pragma once

#include <stdbool.h>
#include <uv.h>

#include "controller/http/health.h"
#include "controller/metrics/metrics.h"

/* A listen address as controller-runtime's --metrics-bind-address and
 * --health-probe-bind-address take it: ":8080" (every interface), "127.0.0.1:8080",
 * "[::1]:8080", "localhost:8080", ":0" (a free port), or "0" (the server is disabled). */
struct tj_bind_addr {
	bool disabled;
	char host[256]; /* "" for every interface; IPv6 without brackets */
	char port[6];   /* decimal, 0..65535 */
};

/* -EINVAL for anything else (an empty text too), and a message in err (NUL-terminated when
 * errlen > 0). *ret is written only on success. */
int tj_bind_addr_parse(const char *text, struct tj_bind_addr *ret, char *err, size_t errlen);

struct tj_http_server;

struct tj_serving_cert;
struct tj_metrics_auth;

/* How /metrics is protected. */
struct tj_metrics_security {
	const struct tj_serving_cert *cert; /* borrowed; NULL: plain HTTP */
	struct tj_metrics_auth *auth;       /* borrowed; NULL: every request is served */
};

/* Starts serving reg's text format at /metrics, over HTTPS with sec->cert and answering only
 * the requests that sec->auth lets through (every path of the server: an unknown one is a 404
 * only for those who may read the metrics). Binding happens here: -EADDRINUSE, -EACCES, ...
 * from bind(2); a host name is resolved with getaddrinfo, so start the servers before the
 * loop runs. When addr is disabled, returns 0 and sets *ret to NULL. reg, cert and auth must
 * outlive the server; sec may be NULL (plain HTTP, every request served). */
int tj_http_serve_metrics_secured(uv_loop_t *loop, const struct tj_bind_addr *addr,
                                  struct tj_metrics *reg, const struct tj_metrics_security *sec,
                                  struct tj_http_server **ret);

/* Starts answering /healthz and /readyz (and /healthz/NAME, /readyz/NAME) from health. */
int tj_http_serve_probes(uv_loop_t *loop, const struct tj_bind_addr *addr, struct tj_health *health,
                         struct tj_http_server **ret);

/* A request as a handler sees it; every pointer is borrowed for the handler's call only. */
struct tj_http_exchange_request {
	const char *method;
	const char *path;
	const char *authorization; /* the Authorization header, or NULL */
	const char *body;          /* NUL-terminated, "" when none */
	size_t body_len;
	/* The body is over the server's limit (by its Content-Length, or as it came): it is not
	 * kept (body is ""), and the handler answers 413 in its own words. */
	bool too_large;
};

/* One request waiting for its answer. */
struct tj_http_exchange;

/* Called once a request's body is in, or as soon as it is known to be over the server's limit
 * (too_large). The handler answers it with tj_http_exchange_answer, at once or from a later
 * callback; until then the connection waits and the loop runs on. */
typedef void (*tj_http_handler_fn)(void *userdata, struct tj_http_exchange *x,
                                   const struct tj_http_exchange_request *req);

/* Answers x with status and body (owned from here; may be NULL for none), and a
 * Retry-After of retry_after_s seconds when not 0. x is freed once the answer is sent: it
 * must not be used after this call. */
void tj_http_exchange_answer(struct tj_http_exchange *x, unsigned status, const char *content_type,
                             char *body, size_t len, unsigned retry_after_s);

/* fn(arg) is called instead of an answer when the request goes away first (the client
 * left, or the server stops); x is freed after it. */
void tj_http_exchange_on_abort(struct tj_http_exchange *x, void (*fn)(void *arg), void *arg);

/* Starts serving every request to fn, over HTTPS with cert (borrowed; NULL: plain HTTP),
 * taking bodies of at most max_body bytes. name is for the logs. As the other servers when
 * addr is disabled. */
int tj_http_serve_handler(uv_loop_t *loop, const struct tj_bind_addr *addr, const char *name,
                          const struct tj_serving_cert *cert, size_t max_body,
                          tj_http_handler_fn fn, void *userdata, struct tj_http_server **ret);

/* Stops listening, drops open connections and frees the server once its libuv handles have
 * closed (the loop must run on for that). Accepts NULL. */
void tj_http_server_close(struct tj_http_server *server);
