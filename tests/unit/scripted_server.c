#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/log/log.h"
#include "fixtures.h"
#include "scripted_server.h"
#include "time_limit.h"

/* A request may carry a rendered pod; nothing the tests send comes near this. */
#define MAX_REQUEST (256 * 1024)
#define DEADLINE_MS 10000

struct conn {
	uv_tcp_t tcp;
	struct server *s; /* borrowed */
	char *buf;        /* owned; what came in, NUL-terminated */
	size_t len, cap;
	int seen; /* the request it carried, or -1 */
	bool closing;
	struct conn *next;
};

static void on_conn_closed(uv_handle_t *h)
{
	struct conn *c = h->data;
	struct conn **p;

	for (p = &c->s->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->seen >= 0)
		c->s->seen[c->seen].conn = NULL;
	free(c->buf);
	free(c);
}

static void close_conn(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

struct write_req {
	uv_write_t req;
	char *data; /* owned */
	bool close_after;
};

static void on_written(uv_write_t *req, int status)
{
	struct write_req *w = (struct write_req *)req;
	struct conn *c = req->handle->data;

	if (w->close_after)
		close_conn(c);
	free(w->data);
	free(w);
}

static void send_text(struct conn *c, const char *text, size_t len, bool close_after)
{
	struct write_req *w = calloc(1, sizeof(*w));
	uv_buf_t buf;

	assert_non_null(w);
	w->data = malloc(len ? len : 1);
	assert_non_null(w->data);
	memcpy(w->data, text, len);
	w->close_after = close_after;
	buf = uv_buf_init(w->data, (unsigned)len);
	assert_int_equal(uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written), 0);
}

static void send_chunk(struct conn *c, const char *text, size_t len)
{
	char head[32];
	int n = snprintf(head, sizeof(head), "%zx\r\n", len);

	send_text(c, head, (size_t)n, false);
	send_text(c, text, len, false);
	send_text(c, "\r\n", 2, false);
}

static void answer(struct conn *c, const struct reply *r)
{
	const char *body = r->body ? r->body : "";
	char head[1024];
	int n;

	if (!r->chunked) {
		n = snprintf(head, sizeof(head),
		             "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%s"
		             "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		             r->status, r->headers ? r->headers : "", strlen(body));
		send_text(c, head, (size_t)n, false);
		if (!r->hold)
			send_text(c, body, strlen(body), true);
		return;
	}
	n = snprintf(head, sizeof(head),
	             "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n%s"
	             "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
	             r->status, r->headers ? r->headers : "");
	send_text(c, head, (size_t)n, false);
	for (const char *p = body; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);

		send_chunk(c, p, len);
		p += len;
	}
	if (!r->keep_open)
		send_text(c, "0\r\n\r\n", 5, true);
}

static bool matches(const struct reply *r, const struct request_seen *seen)
{
	const char *q = strchr(seen->path, '?');
	size_t path_len = q ? (size_t)(q - seen->path) : strlen(seen->path);

	if (r->method && strcmp(r->method, seen->method) != 0)
		return false;
	if (r->path && (strlen(r->path) != path_len || strncmp(r->path, seen->path, path_len) != 0))
		return false;
	if (r->query && (!q || !strstr(q + 1, r->query)))
		return false;
	if (r->request_has && !strstr(seen->body, r->request_has))
		return false;
	return true;
}

/* Once the whole request is in: record it and answer with the first reply that fits. */
static void maybe_answer(struct conn *c)
{
	struct server *s = c->s;
	struct request_seen *seen;
	char *end, *cl;
	size_t head_len, body_len = 0;
	int i;

	end = strstr(c->buf, "\r\n\r\n");
	if (!end || c->seen >= 0)
		return;
	head_len = (size_t)(end - c->buf) + 4;
	cl = strcasestr(c->buf, "\r\nContent-Length:");
	if (cl && cl < end)
		body_len = strtoul(cl + 17, NULL, 10);
	if (c->len < head_len + body_len)
		return;
	if (s->n_seen >= SERVER_MAX_SEEN)
		fail_msg("more than %d requests", SERVER_MAX_SEEN);
	c->seen = s->n_seen++;
	seen = &s->seen[c->seen];
	sscanf(c->buf, "%15s %511s", seen->method, seen->path);
	snprintf(seen->head, sizeof(seen->head), "%.*s", (int)head_len, c->buf);
	seen->body = strndup(c->buf + head_len, body_len);
	assert_non_null(seen->body);
	seen->conn = c;
	for (i = 0; i < s->n_replies; i++)
		if ((!s->used[i] || s->replies[i].repeat) && matches(&s->replies[i], seen))
			break;
	if (i == s->n_replies)
		fail_msg("no scripted reply for %s %s", seen->method, seen->path);
	s->used[i] = true;
	seen->reply = i;
	if (s->replies[i].drop)
		close_conn(c);
	else if (!s->replies[i].hang)
		answer(c, &s->replies[i]);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct conn *c = h->data;

	if (c->cap - c->len < 4096 + 1) {
		c->cap = c->cap ? 2 * c->cap : 8192;
		if (c->cap > MAX_REQUEST)
			fail_msg("a request of more than %d bytes", MAX_REQUEST);
		c->buf = realloc(c->buf, c->cap);
		assert_non_null(c->buf);
	}
	*buf = uv_buf_init(c->buf + c->len, (unsigned)(c->cap - 1 - c->len));
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf)
{
	struct conn *c = stream->data;

	if (n < 0) {
		c->s->eofs++;
		close_conn(c);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	maybe_answer(c);
}

static void on_connection(uv_stream_t *listener, int status)
{
	struct server *s = listener->data;
	struct conn *c = calloc(1, sizeof(*c));

	assert_int_equal(status, 0);
	assert_non_null(c);
	c->s = s;
	c->seen = -1;
	uv_tcp_init(s->loop, &c->tcp);
	c->tcp.data = c;
	assert_int_equal(uv_accept(listener, (uv_stream_t *)&c->tcp), 0);
	c->next = s->conns;
	s->conns = c;
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

void server_start(struct server *s, uv_loop_t *loop)
{
	struct sockaddr_in addr;
	struct sockaddr_storage bound;
	int len = sizeof(bound);

	s->loop = loop;
	uv_ip4_addr("127.0.0.1", 0, &addr);
	uv_tcp_init(loop, &s->listener);
	s->listener.data = s;
	assert_int_equal(uv_tcp_bind(&s->listener, (const struct sockaddr *)&addr, 0), 0);
	assert_int_equal(uv_listen((uv_stream_t *)&s->listener, 64, on_connection), 0);
	uv_tcp_getsockname(&s->listener, (struct sockaddr *)&bound, &len);
	s->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
	uv_timer_init(loop, &s->deadline);
	s->deadline.data = s;
}

struct tj_client *server_client_new(struct server *s)
{
	char url[64];
	struct tj_kube_config cfg = { .server = url, .token = "t" };
	struct tj_client_options opts = { .resend_first_ms = 1 };
	struct tj_client *c;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", s->port);
	assert_int_equal(tj_client_new(s->loop, &cfg, &opts, &c), 0);
	return c;
}

void server_stop(struct server *s)
{
	tj_log_set_sink(NULL, NULL);
	for (struct conn *c = s->conns; c; c = c->next)
		close_conn(c);
	uv_close((uv_handle_t *)&s->listener, NULL);
	uv_close((uv_handle_t *)&s->deadline, NULL);
	for (int i = 0; i < s->n_seen; i++) {
		free(s->seen[i].body);
		s->seen[i].body = NULL;
	}
}

void server_script(struct server *s, const struct reply *replies, int n)
{
	if (s->n_replies + n > SERVER_MAX_REPLIES)
		fail_msg("more than %d scripted replies", SERVER_MAX_REPLIES);
	memcpy(s->replies + s->n_replies, replies, (size_t)n * sizeof(*replies));
	s->n_replies += n;
}

static struct conn *open_conn(struct server *s, int i)
{
	assert_in_range(i, 0, s->n_seen - 1);
	if (!s->seen[i].conn || s->seen[i].conn->closing)
		fail_msg("the connection of request %d is closed", i);
	return s->seen[i].conn;
}

void server_release(struct server *s, int i)
{
	struct conn *c = open_conn(s, i);
	const struct reply *r = &s->replies[s->seen[i].reply];
	const char *body = r->body ? r->body : "";

	if (!r->hold || r->chunked)
		fail_msg("request %d has no held reply", i);
	send_text(c, body, strlen(body), true);
}

void server_push(struct server *s, int i, const char *text)
{
	send_chunk(open_conn(s, i), text, strlen(text));
}

void server_end(struct server *s, int i)
{
	send_text(open_conn(s, i), "0\r\n\r\n", 5, true);
}

static bool seen_is(const struct request_seen *seen, const char *method, const char *prefix)
{
	return strcmp(seen->method, method) == 0 &&
	       strncmp(seen->path, prefix, strlen(prefix)) == 0;
}

int server_find(const struct server *s, int from, const char *method, const char *prefix)
{
	for (int i = from; i < s->n_seen; i++)
		if (seen_is(&s->seen[i], method, prefix))
			return i;
	return -1;
}

int server_count(const struct server *s, const char *method, const char *prefix)
{
	int n = 0;

	for (int i = 0; i < s->n_seen; i++)
		n += seen_is(&s->seen[i], method, prefix);
	return n;
}

const char *server_trace(const struct server *s, const char *except)
{
	static char buf[16384];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < s->n_seen && len < sizeof(buf); i++)
		if (!except || strcmp(s->seen[i].method, except) != 0)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %s|",
			                        s->seen[i].method, s->seen[i].path);
	return buf;
}

static void capture(void *userdata, const char *line, size_t len)
{
	struct server *s = userdata;
	size_t have = strlen(s->log);

	snprintf(s->log + have, sizeof(s->log) - have, "%.*s", (int)len, line);
}

void server_capture_log(struct server *s)
{
	s->log[0] = '\0';
	tj_log_set_sink(capture, s);
}

void server_spin(struct server *s)
{
	for (int i = 0; i < 10; i++)
		uv_run(s->loop, UV_RUN_NOWAIT);
}

void assert_request_body(const struct server *s, int i, const char *expected_sq)
{
	cJSON *body;

	if (i < 0 || i >= s->n_seen)
		fail_msg("no request %d", i);
	body = cJSON_Parse(s->seen[i].body);
	if (!body)
		fail_msg("the body of request %d is not JSON: %s", i, s->seen[i].body);
	assert_json_equal(body, expected_sq);
	cJSON_Delete(body);
}

static void on_deadline(uv_timer_t *t)
{
	((struct server *)t->data)->timed_out = true;
}

void server_deadline_start(struct server *s)
{
	s->timed_out = false;
	uv_timer_start(&s->deadline, on_deadline, time_limit_ms(DEADLINE_MS), 0);
}

void server_deadline_stop(struct server *s)
{
	uv_timer_stop(&s->deadline);
}
