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

/* Stops listening, drops open connections and frees the server once its libuv handles have
 * closed (the loop must run on for that). Accepts NULL. */
void tj_http_server_close(struct tj_http_server *server);
