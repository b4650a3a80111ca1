#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_fetch.h"
#include "time_limit.h"

static void on_fetch_closed(uv_handle_t *handle)
{
	struct fetch *f = handle->data;

	free(f->request);
	f->request = NULL;
	f->done = true;
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	static char chunk[65536];

	*buf = uv_buf_init(chunk, sizeof(chunk));
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
	struct fetch *f = stream->data;

	if (n > 0) {
		f->response = realloc(f->response, f->len + (size_t)n + 1);
		assert_non_null(f->response);
		memcpy(f->response + f->len, buf->base, (size_t)n);
		f->len += (size_t)n;
		f->response[f->len] = '\0';
	} else if (n < 0) {
		if (n != UV_EOF)
			f->error = (int)n;
		uv_close((uv_handle_t *)stream, on_fetch_closed);
	}
}

static void on_written(uv_write_t *req, int status)
{
	struct fetch *f = req->data;

	if (status < 0)
		f->error = status;
}

static void on_connected(uv_connect_t *req, int status)
{
	struct fetch *f = req->data;
	uv_buf_t buf = uv_buf_init(f->request, (unsigned)strlen(f->request));

	if (status < 0) {
		f->error = status;
		uv_close((uv_handle_t *)&f->tcp, on_fetch_closed);
		return;
	}
	f->write.data = f;
	assert_int_equal(uv_write(&f->write, (uv_stream_t *)&f->tcp, &buf, 1, on_written), 0);
	assert_int_equal(uv_read_start((uv_stream_t *)&f->tcp, on_alloc, on_read), 0);
}

/* Connects and sends f->request (owned, set by the caller). */
static void fetch_connect(uv_loop_t *loop, struct fetch *f, int port)
{
	struct sockaddr_in addr;

	assert_int_equal(uv_ip4_addr("127.0.0.1", port, &addr), 0);
	assert_int_equal(uv_tcp_init(loop, &f->tcp), 0);
	f->tcp.data = f;
	f->connect.data = f;
	assert_int_equal(
	        uv_tcp_connect(&f->connect, &f->tcp, (struct sockaddr *)&addr, on_connected), 0);
}

/* A request of exactly this text. */
void fetch_start_raw(uv_loop_t *loop, struct fetch *f, int port, const char *request)
{
	memset(f, 0, sizeof(*f));
	f->request = strdup(request);
	assert_non_null(f->request);
	fetch_connect(loop, f, port);
}

/* A request with a body of len bytes (none when body is NULL). */
void fetch_start_body(uv_loop_t *loop, struct fetch *f, int port, const char *method,
                      const char *target, const char *body, size_t len)
{
	int n;

	memset(f, 0, sizeof(*f));
	n = body ? asprintf(&f->request,
	                    "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
	                    "Authorization: Bearer t0k\r\nContent-Length: %zu\r\n\r\n%.*s",
	                    method, target, len, (int)len, body)
	         : asprintf(&f->request,
	                    "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
	                    method, target);
	assert_true(n > 0);
	fetch_connect(loop, f, port);
}

void fetch_start(uv_loop_t *loop, struct fetch *f, int port, const char *method, const char *target)
{
	fetch_start_body(loop, f, port, method, target, NULL, 0);
}

/* How long a test's fetches may take on a plain build. */
#define FETCH_LIMIT_MS 5000

static void on_deadline(uv_timer_t *timer)
{
	fail_msg("the fetch did not finish within %llu ms",
	         (unsigned long long)time_limit_ms(FETCH_LIMIT_MS));
}

/* Runs the loop until every fetch is done; the servers answer on the same loop. */
void run_until_done(uv_loop_t *loop, struct fetch *fetches, size_t n)
{
	uv_timer_t deadline;
	bool all;

	/* The loop's clock was last read when it last ran; setup may have taken a while. */
	uv_update_time(loop);
	uv_timer_init(loop, &deadline);
	uv_timer_start(&deadline, on_deadline, time_limit_ms(FETCH_LIMIT_MS), 0);
	do {
		uv_run(loop, UV_RUN_ONCE);
		all = true;
		for (size_t i = 0; i < n; i++)
			all = all && fetches[i].done;
	} while (!all);
	uv_close((uv_handle_t *)&deadline, NULL);
	uv_run(loop, UV_RUN_NOWAIT);
}

struct response parse(const struct fetch *f)
{
	struct response r = { 0 };
	const char *end;

	assert_int_equal(f->error, 0);
	assert_non_null(f->response);
	assert_int_equal(sscanf(f->response, "HTTP/1.1 %d ", &r.status), 1);
	end = strstr(f->response, "\r\n\r\n");
	assert_non_null(end);
	assert_true((size_t)(end - f->response) < sizeof(r.headers));
	memcpy(r.headers, f->response, (size_t)(end - f->response) + 2);
	r.body = end + 4;
	r.body_len = f->len - (size_t)(r.body - f->response);
	return r;
}

struct response get(uv_loop_t *loop, struct fetch *f, int port, const char *method,
                    const char *target)
{
	fetch_start(loop, f, port, method, target);
	run_until_done(loop, f, 1);
	return parse(f);
}
