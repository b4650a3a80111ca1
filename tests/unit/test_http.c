/* The servers on a real libuv loop, fetched by a small HTTP client on the same loop and
 * thread: what a kubelet or Prometheus would get. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/http/health.h"
#include "controller/http/http.h"
#include "controller/http/http_internal.h"
#include "controller/log/log.h"
#include "controller/metrics/std_metrics.h"
#include "http_fetch.h"

/* ---- tests ---- */

struct bind_case {
	const char *text;
	int want_rc;
	bool disabled;
	const char *host;
	const char *port;
	const char *want_err;
};

static const struct bind_case binds[] = {
	{ ":8080", 0, false, "", "8080", "" },
	{ "0", 0, true, "", "", "" },
	{ ":0", 0, false, "", "0", "" },
	{ "127.0.0.1:8081", 0, false, "127.0.0.1", "8081", "" },
	{ "localhost:9090", 0, false, "localhost", "9090", "" },
	{ "[::1]:8080", 0, false, "::1", "8080", "" },
	{ "[::]:65535", 0, false, "::", "65535", "" },
	{ ":00080", 0, false, "", "80", "" },
	{ "", -EINVAL, false, "", "", "'': missing port (use HOST:PORT, :PORT, or 0 to disable)" },
	{ "8080", -EINVAL, false, "", "",
	  "'8080': missing port (use HOST:PORT, :PORT, or 0 to disable)" },
	{ ":", -EINVAL, false, "", "", "':': port must be a number from 0 to 65535" },
	{ ":65536", -EINVAL, false, "", "", "':65536': port must be a number from 0 to 65535" },
	{ ":http", -EINVAL, false, "", "", "':http': port must be a number from 0 to 65535" },
	{ ":-1", -EINVAL, false, "", "", "':-1': port must be a number from 0 to 65535" },
	{ ":80x", -EINVAL, false, "", "", "':80x': port must be a number from 0 to 65535" },
	{ ":000080", -EINVAL, false, "", "", "':000080': port must be a number from 0 to 65535" },
	{ "::1:8080", -EINVAL, false, "", "",
	  "'::1:8080': too many colons (IPv6 addresses go in brackets)" },
	{ "[::1:8080", -EINVAL, false, "", "", "'[::1:8080': bad IPv6 address" },
	{ "[]:8080", -EINVAL, false, "", "", "'[]:8080': bad IPv6 address" },
	{ "a]:8080", -EINVAL, false, "", "", "'a]:8080': bad IPv6 address" },
	{ "[a]b]:8080", -EINVAL, false, "", "", "'[a]b]:8080': bad IPv6 address" },
};

static void test_bind_addr_parse(void **state)
{
	for (size_t i = 0; i < sizeof(binds) / sizeof(binds[0]); i++) {
		const struct bind_case *c = &binds[i];
		struct tj_bind_addr a = { .host = "untouched" };
		char err[128];

		print_message("# case: '%s'\n", c->text);
		assert_int_equal(tj_bind_addr_parse(c->text, &a, err, sizeof(err)), c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc < 0) {
			assert_string_equal(a.host, "untouched");
			continue;
		}
		assert_int_equal(a.disabled, c->disabled);
		assert_string_equal(a.host, c->host);
		assert_string_equal(a.port, c->port);
	}
}

static struct tj_bind_addr addr(const char *text)
{
	struct tj_bind_addr a;
	char err[128];

	assert_int_equal(tj_bind_addr_parse(text, &a, err, sizeof(err)), 0);
	return a;
}

static int failing(void *userdata, char *reason, size_t reason_len)
{
	const bool *fails = userdata;

	if (!*fails)
		return 0;
	snprintf(reason, reason_len, "not synced");
	return -EAGAIN;
}

static void quiet_sink(void *userdata, const char *line, size_t len)
{
}

static void close_and_drain(uv_loop_t *loop, struct tj_http_server *s)
{
	tj_http_server_close(s);
	assert_int_equal(uv_run(loop, UV_RUN_DEFAULT), 0);
}

static void test_probes(void **state)
{
	uv_loop_t loop;
	struct tj_health *health;
	struct tj_http_server *s;
	struct tj_bind_addr a = addr("127.0.0.1:0");
	struct fetch f;
	struct response r;
	bool informers_fail = true;
	int port;

	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tj_health_new(&health), 0);
	assert_int_equal(tj_health_add(health, TJ_READYZ, "informers", failing, &informers_fail),
	                 0);
	assert_int_equal(tj_http_serve_probes(&loop, &a, health, &s), 0);
	port = tj_http_server_port(s);
	assert_in_range(port, 1, 65535);

	r = get(&loop, &f, port, "GET", "/healthz");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "ok");
	assert_non_null(strstr(r.headers, "\r\nContent-Type: text/plain; charset=utf-8\r\n"));
	assert_non_null(strstr(r.headers, "\r\nX-Content-Type-Options: nosniff\r\n"));
	free(f.response);

	r = get(&loop, &f, port, "GET", "/readyz");
	assert_int_equal(r.status, 500);
	assert_string_equal(r.body, "[-]informers failed: reason withheld\nhealthz check failed\n");
	free(f.response);

	r = get(&loop, &f, port, "GET", "/readyz/informers");
	assert_int_equal(r.status, 500);
	assert_string_equal(r.body, "internal server error: not synced\n");
	free(f.response);

	r = get(&loop, &f, port, "GET", "/readyz?verbose&exclude=informers&exclude=nope");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "[+]informers excluded: ok\n"
	                            "warn: some health checks cannot be excluded: no matches for "
	                            "\"nope\"\nhealthz check passed\n");
	free(f.response);

	informers_fail = false;
	r = get(&loop, &f, port, "GET", "/readyz");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "ok");
	free(f.response);

	r = get(&loop, &f, port, "GET", "/readyz?verbose=1");
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "[+]informers ok\nhealthz check passed\n");
	free(f.response);

	r = get(&loop, &f, port, "GET", "/metrics");
	assert_int_equal(r.status, 404);
	assert_string_equal(r.body, "404 page not found\n");
	free(f.response);

	r = get(&loop, &f, port, "POST", "/healthz");
	assert_int_equal(r.status, 405);
	assert_non_null(strstr(r.headers, "\r\nAllow: GET, HEAD\r\n"));
	free(f.response);

	r = get(&loop, &f, port, "HEAD", "/healthz");
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body_len, 0);
	free(f.response);

	close_and_drain(&loop, s);
	tj_health_free(health);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_metrics(void **state)
{
	uv_loop_t loop;
	struct tj_metrics *reg;
	struct tj_std_metrics m;
	struct tj_http_server *s;
	struct tj_bind_addr a = addr(":0");
	struct fetch f;
	struct response r;
	char *want;
	size_t want_len;

	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_std_metrics_register(reg, &m), 0);
	assert_int_equal(tj_std_metrics_init_controller(&m, "trainjob", 1), 0);
	assert_int_equal(tj_http_serve_metrics(&loop, &a, reg, &s), 0);

	r = get(&loop, &f, tj_http_server_port(s), "GET", "/metrics");
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.headers,
	                       "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	assert_int_equal(tj_metrics_render(reg, &want, &want_len), 0);
	assert_int_equal(r.body_len, want_len);
	assert_string_equal(r.body, want);
	free(want);
	free(f.response);

	r = get(&loop, &f, tj_http_server_port(s), "GET", "/healthz");
	assert_int_equal(r.status, 404);
	free(f.response);

	close_and_drain(&loop, s);
	tj_metrics_free(reg);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* A body far larger than a socket buffer arrives whole: the server resumes writing when the
 * socket drains, which only works if the epoll descriptor is driven correctly. Several
 * clients at once share the one thread. */
static void test_large_body_and_concurrent_clients(void **state)
{
	static const char *const l[] = { "i", NULL };
	uv_loop_t loop;
	struct tj_metrics *reg;
	struct tj_metric *g;
	struct tj_http_server *s;
	struct tj_bind_addr a = addr("127.0.0.1:0");
	struct fetch f[4];
	char *want, value[16];
	size_t want_len;

	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tj_metrics_new(&reg), 0);
	assert_int_equal(tj_metrics_register(reg,
	                                     &(struct tj_metric_desc){
	                                             .name = "many",
	                                             .help = "h",
	                                             .type = TJ_METRIC_GAUGE,
	                                             .labels = l,
	                                             .max_series = 100000,
	                                     },
	                                     &g),
	                 0);
	for (int i = 0; i < 60000; i++) {
		snprintf(value, sizeof(value), "%06d", i);
		assert_int_equal(tj_metric_set(g, TJ_LABELS(value), i), 0);
	}
	assert_int_equal(tj_metrics_render(reg, &want, &want_len), 0);
	assert_true(want_len > 1000000);
	assert_int_equal(tj_http_serve_metrics(&loop, &a, reg, &s), 0);

	for (size_t i = 0; i < 4; i++)
		fetch_start(&loop, &f[i], tj_http_server_port(s), "GET", "/metrics");
	run_until_done(&loop, f, 4);
	for (size_t i = 0; i < 4; i++) {
		struct response r = parse(&f[i]);

		assert_int_equal(r.status, 200);
		assert_int_equal(r.body_len, want_len);
		assert_memory_equal(r.body, want, want_len);
		free(f[i].response);
	}
	free(want);
	close_and_drain(&loop, s);
	tj_metrics_free(reg);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* A handler's server: the handler sees the method, path, token and body, answers at once or
 * from a later callback; a body over the limit is refused without a call. */
struct echo {
	uv_timer_t timer;
	struct tj_http_exchange *later; /* answered when the timer fires */
	int calls;
	char seen[256];
};

static void answer_later(uv_timer_t *timer)
{
	struct echo *e = timer->data;

	tj_http_exchange_answer(e->later, 202, "text/plain", strdup("later"), 5, 7);
	e->later = NULL;
}

static void on_echo(void *userdata, struct tj_http_exchange *x,
                    const struct tj_http_exchange_request *req)
{
	struct echo *e = userdata;
	char *text = NULL;
	int n;

	if (req->too_large) {
		assert_string_equal(req->body, "");
		tj_http_exchange_answer(x, 413, "text/plain", strdup("too large"), 9, 0);
		return;
	}
	e->calls++;
	snprintf(e->seen, sizeof(e->seen), "%s %s %s %zu", req->method, req->path,
	         req->authorization ? req->authorization : "-", req->body_len);
	if (strcmp(req->path, "/later") == 0) {
		e->later = x;
		uv_timer_start(&e->timer, answer_later, 10, 0);
		return;
	}
	n = asprintf(&text, "%s", req->body);
	tj_http_exchange_answer(x, 200, "text/plain", text, (size_t)n, 0);
}

static void test_handler(void **state)
{
	uv_loop_t loop;
	struct tj_http_server *s;
	struct tj_bind_addr a = addr("127.0.0.1:0");
	struct echo e = { .calls = 0 };
	struct fetch f;
	struct response r;
	char big[101];
	int port;

	assert_int_equal(uv_loop_init(&loop), 0);
	uv_timer_init(&loop, &e.timer);
	e.timer.data = &e;
	assert_int_equal(tj_http_serve_handler(&loop, &a, "echo", NULL, 100, on_echo, &e, &s), 0);
	port = tj_http_server_port(s);

	fetch_start_body(&loop, &f, port, "POST", "/now", "{\"a\":1}", 7);
	run_until_done(&loop, &f, 1);
	r = parse(&f);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.body, "{\"a\":1}");
	assert_string_equal(e.seen, "POST /now Bearer t0k 7");
	assert_non_null(strstr(r.headers, "\r\nContent-Type: text/plain\r\n"));
	free(f.response);

	fetch_start_body(&loop, &f, port, "POST", "/later", "x", 1);
	run_until_done(&loop, &f, 1);
	r = parse(&f);
	assert_int_equal(r.status, 202);
	assert_string_equal(r.body, "later");
	assert_non_null(strstr(r.headers, "\r\nRetry-After: 7\r\n"));
	free(f.response);

	/* 100 bytes are taken, 101 are not: the handler is told so, without them. */
	memset(big, 'b', sizeof(big));
	fetch_start_body(&loop, &f, port, "POST", "/now", big, 100);
	run_until_done(&loop, &f, 1);
	assert_int_equal(parse(&f).status, 200);
	free(f.response);
	assert_int_equal(e.calls, 3);
	fetch_start_body(&loop, &f, port, "POST", "/now", big, 101);
	run_until_done(&loop, &f, 1);
	r = parse(&f);
	assert_int_equal(r.status, 413);
	assert_string_equal(r.body, "too large");
	free(f.response);
	assert_int_equal(e.calls, 3);

	/* A Content-Length far over the limit is refused before the body comes: this client
	 * never sends more than its 4 bytes of a declared megabyte, and gets its answer. (The
	 * 101 bytes above, declared too, were read and dropped before the answer.) */
	fetch_start_raw(&loop, &f, port,
	                "POST /now HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
	                "Content-Length: 1000000\r\n\r\nbbbb");
	run_until_done(&loop, &f, 1);
	r = parse(&f);
	assert_int_equal(r.status, 413);
	free(f.response);
	assert_int_equal(e.calls, 3);

	/* A chunked body, whose size is known only as it comes, is refused once past it. */
	{
		char chunked[512];

		snprintf(chunked, sizeof(chunked),
		         "POST /now HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
		         "Transfer-Encoding: chunked\r\n\r\n65\r\n%.101s\r\n0\r\n\r\n",
		         big);
		fetch_start_raw(&loop, &f, port, chunked);
	}
	run_until_done(&loop, &f, 1);
	r = parse(&f);
	assert_int_equal(r.status, 413);
	free(f.response);
	assert_int_equal(e.calls, 3);

	r = get(&loop, &f, port, "GET", "/now");
	assert_int_equal(r.status, 200);
	assert_string_equal(e.seen, "GET /now - 0");
	free(f.response);

	uv_close((uv_handle_t *)&e.timer, NULL);
	close_and_drain(&loop, s);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_disabled_busy_and_reuse(void **state)
{
	uv_loop_t loop;
	struct tj_health *health;
	struct tj_http_server *s, *other = (struct tj_http_server *)&loop;
	struct tj_bind_addr a = addr("0"), fixed;
	char text[32];
	int port;

	assert_int_equal(uv_loop_init(&loop), 0);
	assert_int_equal(tj_health_new(&health), 0);

	assert_int_equal(tj_http_serve_probes(&loop, &a, health, &s), 0);
	assert_null(s);
	tj_http_server_close(NULL);

	a = addr("127.0.0.1:0");
	assert_int_equal(tj_http_serve_probes(&loop, &a, health, &s), 0);
	port = tj_http_server_port(s);
	snprintf(text, sizeof(text), "127.0.0.1:%d", port);
	fixed = addr(text);
	assert_int_equal(tj_http_serve_probes(&loop, &fixed, health, &other), -EADDRINUSE);
	assert_ptr_equal(other, (struct tj_http_server *)&loop);

	/* Once closed, the port is free again: the listening socket went with the server. */
	close_and_drain(&loop, s);
	assert_int_equal(tj_http_serve_probes(&loop, &fixed, health, &s), 0);
	assert_int_equal(tj_http_server_port(s), port);
	close_and_drain(&loop, s);

	tj_health_free(health);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static int setup(void **state)
{
	tj_log_set_sink(quiet_sink, NULL);
	return 0;
}

static int teardown(void **state)
{
	tj_log_set_sink(NULL, NULL);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bind_addr_parse),
		cmocka_unit_test(test_probes),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_large_body_and_concurrent_clients),
		cmocka_unit_test(test_handler),
		cmocka_unit_test(test_disabled_busy_and_reuse),
	};
	return cmocka_run_group_tests_name("http", tests, setup, teardown);
}
