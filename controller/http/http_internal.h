/* Internal to controller/http/http.c: the plain /metrics server and the port a server listens on,
 * declared for it and for its unit test (tests/unit/test_http.c) only. The rest of the tree uses
 * the public header. */
#pragma once

#include "controller/http/http.h"

/* tj_http_serve_metrics_secured without security: plain HTTP, every request served. */
int tj_http_serve_metrics(uv_loop_t *loop, const struct tj_bind_addr *addr, struct tj_metrics *reg,
                          struct tj_http_server **ret);

/* The port the server listens on (useful after ":0"). */
int tj_http_server_port(const struct tj_http_server *server);
