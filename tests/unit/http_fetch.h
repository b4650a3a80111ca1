/* A small HTTP/1.1 client for the unit tests, on the test's own libuv loop and thread, so that
 * a server of controller/http answers it on the same loop: what a kubelet, Prometheus or a
 * training script would get. Included after <cmocka.h>. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

struct fetch {
	uv_tcp_t tcp;
	uv_connect_t connect;
	uv_write_t write;
	char *request;  /* owned; freed when the connection closes */
	char *response; /* owned */
	size_t len;
	bool done;
	int error;
};

struct response {
	int status;
	char headers[2048];
	const char *body; /* points into the fetch's response */
	size_t body_len;
};

/* A request of exactly this text. */
void fetch_start_raw(uv_loop_t *loop, struct fetch *f, int port, const char *request);

/* A request with the bearer token "t0k" and a body of len bytes (none, and no token, when
 * body is NULL). */
void fetch_start_body(uv_loop_t *loop, struct fetch *f, int port, const char *method,
                      const char *target, const char *body, size_t len);

void fetch_start(uv_loop_t *loop, struct fetch *f, int port, const char *method,
                 const char *target);

/* Runs the loop until every fetch is done, failing the test after a generous bound. */
void run_until_done(uv_loop_t *loop, struct fetch *fetches, size_t n);

/* The answer of a fetch that is done. */
struct response parse(const struct fetch *f);

/* fetch_start, run_until_done and parse. */
struct response get(uv_loop_t *loop, struct fetch *f, int port, const char *method,
                    const char *target);
