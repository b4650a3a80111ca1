#include "controller/http/http.h"
#include "controller/http/http_internal.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "controller/http/metrics_auth.h"
#include "controller/http/serving_cert.h"
#include "controller/log/log.h"

#define LISTEN_BACKLOG 64
/* Scrapers and kubelets are few; a client that opens more connections waits. */
#define CONNECTION_LIMIT 64
/* Seconds an idle keep-alive connection is kept. */
#define CONNECTION_TIMEOUT 30

struct reply {
	unsigned status;
	const char *content_type;
	char *body; /* owned; malloc'd */
	size_t len;
};

/* Answers a GET or HEAD for path; returns 0 with *out filled, or a negative errno code for
 * a 500. */
typedef int (*route_fn)(void *userdata, struct MHD_Connection *conn, const char *path,
                        struct reply *out);

struct tj_http_server;

/* A request whose answer waits for authentication and authorization. */
struct pending {
	struct pending *prev, *next; /* in the server's list */
	struct tj_http_server *server;
	struct MHD_Connection *conn;
	struct tj_auth_check *check; /* owned; NULL once the answer is in */
	struct tj_auth_result result;
	bool decided;
};

/* A request of a handler's server (tj_http_serve_handler), from its first call to its end. */
struct tj_http_exchange {
	struct tj_http_exchange *prev, *next; /* in the server's list */
	struct tj_http_server *server;
	struct MHD_Connection *conn;
	char *body; /* owned; grown up to the server's max_body, NUL-terminated */
	size_t len;
	bool too_large; /* the body went past max_body: the rest is discarded */
	bool called;    /* the handler has it */
	bool suspended; /* the connection waits for the answer */
	bool answered;
	struct reply reply; /* once answered; its body owned until queued */
	unsigned retry_after_s;
	void (*abort_fn)(void *arg);
	void *abort_arg;
};

struct tj_http_server {
	uv_poll_t poll;   /* watches the daemon's epoll descriptor */
	uv_timer_t timer; /* fires when the daemon wants MHD_run for a timeout */
	struct MHD_Daemon *daemon;
	route_fn route;
	void *userdata;
	const char *name; /* for logs: "metrics" or "probes" */
	int port;
	int open_handles;                   /* freed when the last libuv handle has closed */
	const struct tj_serving_cert *cert; /* borrowed; NULL: plain HTTP */
	struct tj_metrics_auth *auth;       /* borrowed; NULL: every request is served */
	struct pending *pending;            /* owned, each freed when its request completes */
	/* A handler's server: every request goes to handler with its body. */
	tj_http_handler_fn handler;
	void *handler_data;
	size_t max_body;
	struct tj_http_exchange *exchanges; /* owned, each freed when its request completes */
};

static const char text_plain[] = "text/plain; charset=utf-8";

int tj_bind_addr_parse(const char *text, struct tj_bind_addr *ret, char *err, size_t errlen)
{
	struct tj_bind_addr a = { 0 };
	const char *colon, *host = text, *port;
	size_t host_len;
	char *end;
	long n;

	if (errlen > 0)
		err[0] = '\0';
	if (strcmp(text, "0") == 0) {
		*ret = (struct tj_bind_addr){ .disabled = true };
		return 0;
	}
	colon = strrchr(text, ':');
	if (!colon) {
		snprintf(err, errlen, "'%s': missing port (use HOST:PORT, :PORT, or 0 to disable)",
		         text);
		return -EINVAL;
	}
	host_len = (size_t)(colon - text);
	if (host_len > 0 && text[0] == '[') {
		if (text[host_len - 1] != ']' || host_len < 3) {
			snprintf(err, errlen, "'%s': bad IPv6 address", text);
			return -EINVAL;
		}
		host = text + 1;
		host_len -= 2;
	} else if (memchr(text, ':', host_len)) {
		snprintf(err, errlen, "'%s': too many colons (IPv6 addresses go in brackets)",
		         text);
		return -EINVAL;
	}
	if (host_len >= sizeof(a.host)) {
		snprintf(err, errlen, "host of '%.32s...' is too long", text);
		return -EINVAL;
	}
	memcpy(a.host, host, host_len);
	a.host[host_len] = '\0';
	if (memchr(a.host, '[', host_len) || memchr(a.host, ']', host_len)) {
		snprintf(err, errlen, "'%s': bad IPv6 address", text);
		return -EINVAL;
	}
	port = colon + 1;
	n = -1;
	if (port[0] >= '0' && port[0] <= '9' && strlen(port) <= 5) {
		n = strtol(port, &end, 10);
		if (*end != '\0')
			n = -1;
	}
	if (n < 0 || n > 65535) {
		snprintf(err, errlen, "'%s': port must be a number from 0 to 65535", text);
		return -EINVAL;
	}
	snprintf(a.port, sizeof(a.port), "%ld", n);
	*ret = a;
	return 0;
}

static int bind_listen(int family, const struct sockaddr *sa, socklen_t salen, bool dual_stack,
                       int *ret_fd)
{
	int fd, one = 1, zero = 0, r;

	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail_socket;
	/* ":8080" means every interface, IPv4 and IPv6 alike, as Go's net.Listen reads it. */
	if (dual_stack && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) < 0)
		goto fail_socket;
	if (bind(fd, sa, salen) < 0 || listen(fd, LISTEN_BACKLOG) < 0)
		goto fail_socket;
	*ret_fd = fd;
	return 0;

fail_socket:
	r = -errno;
	close(fd);
	return r;
}

static int open_listener(const struct tj_bind_addr *a, int *ret_fd, int *ret_port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	};
	struct addrinfo *list;
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	int r = -EADDRNOTAVAIL, fd = -1;

	if (a->host[0] == '\0') {
		struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_addr = in6addr_any };
		struct sockaddr_in any4 = { .sin_family = AF_INET, .sin_addr.s_addr = INADDR_ANY };

		any6.sin6_port = htons((uint16_t)atoi(a->port));
		any4.sin_port = any6.sin6_port;
		r = bind_listen(AF_INET6, (struct sockaddr *)&any6, sizeof(any6), true, &fd);
		if (r == -EAFNOSUPPORT)
			r = bind_listen(AF_INET, (struct sockaddr *)&any4, sizeof(any4), false,
			                &fd);
	} else {
		int gai = getaddrinfo(a->host, a->port, &hints, &list);

		if (gai != 0)
			return gai == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
		for (struct addrinfo *ai = list; ai; ai = ai->ai_next) {
			r = bind_listen(ai->ai_family, ai->ai_addr, ai->ai_addrlen, false, &fd);
			if (r == 0)
				break;
		}
		freeaddrinfo(list);
	}
	if (r < 0)
		return r;
	if (getsockname(fd, (struct sockaddr *)&bound, &bound_len) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	*ret_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
	                                              : ((struct sockaddr_in *)&bound)->sin_port);
	*ret_fd = fd;
	return 0;
}

static int text_reply(struct reply *out, unsigned status, const char *text)
{
	out->body = strdup(text);
	if (!out->body)
		return -ENOMEM;
	out->status = status;
	out->content_type = text_plain;
	out->len = strlen(text);
	return 0;
}

static void drive(struct tj_http_server *s);

static int refusal_reply(struct reply *out, const struct tj_auth_result *result)
{
	char text[sizeof(result->message) + 1];

	snprintf(text, sizeof(text), "%s\n", result->message);
	return text_reply(out, result->status, text);
}

static void unlink_pending(struct pending *p)
{
	if (p->prev)
		p->prev->next = p->next;
	else
		p->server->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->prev = p->next = NULL;
}

/* The answer is in: the request goes on where it stopped. */
static void on_auth_done(const struct tj_auth_result *result, void *userdata)
{
	struct pending *p = userdata;

	p->check = NULL;
	p->result = *result;
	p->decided = true;
	MHD_resume_connection(p->conn);
	drive(p->server);
}

/* The first call for a request: its headers are in. A request whose answer is not known yet
 * is suspended (it holds no thread and the loop runs on) until on_auth_done. */
static enum MHD_Result start_auth(struct tj_http_server *s, struct MHD_Connection *conn,
                                  const char *url, const char *method, void **req_cls)
{
	struct pending *p = calloc(1, sizeof(*p));
	const char *header;
	int rc;

	if (!p)
		return MHD_NO;
	p->server = s;
	p->conn = conn;
	p->next = s->pending;
	if (s->pending)
		s->pending->prev = p;
	s->pending = p;
	*req_cls = p;
	header = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	rc = tj_metrics_auth_check(s->auth, header, method, url, on_auth_done, p, &p->result,
	                           &p->check);
	if (rc < 0) {
		tj_log_error("http", "cannot check a metrics request", TJ_ERR(rc));
		p->result = (struct tj_auth_result){ .status = MHD_HTTP_INTERNAL_SERVER_ERROR,
			                             .message = "Authentication failed" };
	}
	if (rc == 1) {
		MHD_suspend_connection(conn);
		return MHD_YES;
	}
	p->decided = true;
	/* Answered on the next call, as every request without a body is. */
	return MHD_YES;
}

static void exchange_completed(struct tj_http_exchange *x);

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
	const struct tj_http_server *s = cls;
	struct pending *p = *req_cls;

	if (s->handler && *req_cls) {
		exchange_completed(*req_cls);
		*req_cls = NULL;
		return;
	}
	if (!p)
		return;
	unlink_pending(p);
	tj_auth_check_cancel(p->check);
	free(p);
	*req_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		*socket_context = cls;
}

/* GnuTLS asks which certificate to present; the session's pointer is libmicrohttpd's
 * connection, whose socket context is the server (on_connection). */
static int retrieve_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                         const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length,
                         gnutls_pcert_st **pcert, unsigned int *pcert_length,
                         gnutls_privkey_t *pkey)
{
	struct MHD_Connection *conn = gnutls_session_get_ptr(session);
	const union MHD_ConnectionInfo *info =
	        conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
	const struct tj_http_server *s = info ? info->socket_context : NULL;

	if (!s || !s->cert)
		return -1;
	tj_serving_cert_current(s->cert, pcert, pcert_length, pkey);
	return 0;
}

/* ---- a handler's requests ---- */

static void exchange_unlink(struct tj_http_exchange *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		x->server->exchanges = x->next;
	if (x->next)
		x->next->prev = x->prev;
	x->prev = x->next = NULL;
}

/* The request has ended, answered or not. */
static void exchange_completed(struct tj_http_exchange *x)
{
	exchange_unlink(x);
	if (!x->answered && x->abort_fn)
		x->abort_fn(x->abort_arg);
	free(x->reply.body);
	free(x->body);
	free(x);
}

void tj_http_exchange_on_abort(struct tj_http_exchange *x, void (*fn)(void *arg), void *arg)
{
	x->abort_fn = fn;
	x->abort_arg = arg;
}

void tj_http_exchange_answer(struct tj_http_exchange *x, unsigned status, const char *content_type,
                             char *body, size_t len, unsigned retry_after_s)
{
	x->reply = (struct reply){
		.status = status, .content_type = content_type, .body = body, .len = body ? len : 0
	};
	x->retry_after_s = retry_after_s;
	x->answered = true;
	/* An answer from the handler's own call is queued as that call returns. */
	if (x->suspended) {
		x->suspended = false;
		MHD_resume_connection(x->conn);
		drive(x->server);
	}
}

/* Appends a piece of the body, or drops it once the body is too large (the whole body is
 * still read, so that the answer reaches a client that is still sending). */
static void exchange_take(struct tj_http_exchange *x, const char *data, size_t size)
{
	char *grown;

	if (x->too_large)
		return;
	if (size > x->server->max_body - x->len) {
		x->too_large = true;
		return;
	}
	grown = realloc(x->body, x->len + size + 1);
	if (!grown) {
		x->too_large = true; /* refused as well: the body cannot be kept */
		return;
	}
	memcpy(grown + x->len, data, size);
	x->len += size;
	grown[x->len] = '\0';
	x->body = grown;
}

static enum MHD_Result queue_exchange(struct tj_http_exchange *x)
{
	struct MHD_Response *resp;
	enum MHD_Result queued;
	char retry[16];

	resp = MHD_create_response_from_buffer(x->reply.len, x->reply.body, MHD_RESPMEM_MUST_FREE);
	if (!resp)
		return MHD_NO;
	x->reply.body = NULL; /* the response's now */
	if (x->reply.content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, x->reply.content_type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (x->retry_after_s) {
		snprintf(retry, sizeof(retry), "%u", x->retry_after_s);
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, retry);
	}
	queued = MHD_queue_response(x->conn, x->reply.status, resp);
	MHD_destroy_response(resp);
	return queued;
}

/* Hands the request to the handler, once. */
static void call_handler(struct tj_http_server *s, struct tj_http_exchange *x,
                         struct MHD_Connection *conn, const char *url, const char *method)
{
	const struct tj_http_exchange_request req = {
		.method = method,
		.path = url,
		.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		                                             MHD_HTTP_HEADER_AUTHORIZATION),
		.body = x->body && !x->too_large ? x->body : "",
		.body_len = x->too_large ? 0 : x->len,
		.too_large = x->too_large,
	};

	x->called = true;
	s->handler(s->handler_data, x, &req);
}

/* A body declared this many times over the limit is refused before it comes; a smaller one
 * over the limit is read and dropped, then refused: a client that sends its body before it
 * reads would otherwise lose the answer to the closed connection. */
#define READ_PAST_LIMIT 4

/* A Content-Length over READ_PAST_LIMIT times the limit is known before any of the body
 * comes. */
static bool declared_too_large(const struct tj_http_server *s, struct MHD_Connection *conn)
{
	const char *text =
	        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	char *end;
	unsigned long long n;

	if (!text || !*text)
		return false;
	errno = 0;
	n = strtoull(text, &end, 10);
	return *end == '\0' && (errno == ERANGE || n / READ_PAST_LIMIT > s->max_body);
}

static enum MHD_Result on_exchange(struct tj_http_server *s, struct MHD_Connection *conn,
                                   const char *url, const char *method, const char *upload_data,
                                   size_t *upload_data_size, void **req_cls)
{
	struct tj_http_exchange *x = *req_cls;

	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x)
			return MHD_NO;
		x->server = s;
		x->conn = conn;
		x->next = s->exchanges;
		if (s->exchanges)
			s->exchanges->prev = x;
		s->exchanges = x;
		*req_cls = x;
		if (!declared_too_large(s, conn))
			return MHD_YES;
		/* Refused before its body is read: libmicrohttpd sends the answer and closes
		 * the connection instead of reading what the client would send. */
		x->too_large = true;
		call_handler(s, x, conn, url, method);
		goto answer;
	}
	if (*upload_data_size > 0) {
		exchange_take(x, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!x->called)
		call_handler(s, x, conn, url, method);
answer:
	if (!x->answered) {
		x->suspended = true;
		MHD_suspend_connection(conn);
		return MHD_YES;
	}
	return queue_exchange(x);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
	struct tj_http_server *s = cls;
	struct reply r = { 0 };
	struct MHD_Response *resp;
	enum MHD_Result queued;
	bool allowed = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	const struct tj_auth_result *denied = NULL;
	int rc;

	if (s->handler)
		return on_exchange(s, conn, url, method, upload_data, upload_data_size, req_cls);
	if (s->auth) {
		struct pending *p = *req_cls;

		if (!p)
			return start_auth(s, conn, url, method, req_cls);
		if (!p->decided)
			return MHD_YES;
		if (p->result.status != MHD_HTTP_OK)
			denied = &p->result;
	}
	if (denied)
		rc = refusal_reply(&r, denied);
	else
		rc = allowed ? s->route(s->userdata, conn, url, &r)
		             : text_reply(&r, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (rc < 0) {
		tj_log_error("http", "request failed", TJ_STR("server", s->name),
		             TJ_STR("path", url), TJ_ERR(rc));
		free(r.body);
		r = (struct reply){ 0 };
		if (text_reply(&r, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal server error\n") < 0)
			return MHD_NO; /* out of memory: drop the connection */
	}
	resp = MHD_create_response_from_buffer(r.len, r.body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(r.body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type);
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (!allowed && !denied)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	queued = MHD_queue_response(conn, r.status, resp);
	MHD_destroy_response(resp);
	return queued;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
        __attribute__((format(printf, 2, 0)));

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	const struct tj_http_server *s = cls;
	char msg[512];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	tj_log_warn("http", msg, TJ_STR("server", s->name));
}

static void on_timer(uv_timer_t *timer);

/* Lets the daemon do whatever is ready, then arms the timer for its next deadline. */
static void drive(struct tj_http_server *s)
{
	MHD_UNSIGNED_LONG_LONG timeout;

	MHD_run(s->daemon);
	if (MHD_get_timeout(s->daemon, &timeout) == MHD_YES)
		uv_timer_start(&s->timer, on_timer, timeout, 0);
	else
		uv_timer_stop(&s->timer);
}

static void on_timer(uv_timer_t *timer)
{
	drive(timer->data);
}

static void on_poll(uv_poll_t *poll, int status, int events)
{
	drive(poll->data);
}

static void on_handle_closed(uv_handle_t *handle)
{
	struct tj_http_server *s = handle->data;

	if (--s->open_handles == 0)
		free(s);
}

/* What a handler's server is given besides the route's. */
struct handler_opts {
	tj_http_handler_fn fn;
	void *userdata;
	size_t max_body;
};

static int serve(uv_loop_t *loop, const struct tj_bind_addr *addr, const char *name, route_fn route,
                 void *userdata, const struct tj_metrics_security *sec,
                 const struct handler_opts *handler, struct tj_http_server **ret)
{
	const union MHD_DaemonInfo *info;
	struct tj_http_server *s;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	/* TLS 1.2 and 1.3 only, as Go's crypto/tls serves by default. */
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)(intptr_t)retrieve_cert },
		{ MHD_OPTION_HTTPS_PRIORITIES, 0,
		  (void *)"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2" },
		{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, NULL },
		{ MHD_OPTION_END, 0, NULL },
	};
	int fd = -1, r;

	if (addr->disabled) {
		*ret = NULL;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->route = route;
	s->userdata = userdata;
	s->name = name;
	if (sec) {
		s->cert = sec->cert;
		s->auth = sec->auth;
	}
	if (handler) {
		s->handler = handler->fn;
		s->handler_data = handler->userdata;
		s->max_body = handler->max_body;
	}
	if (s->cert)
		flags |= MHD_USE_TLS;
	else
		tls[0] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	if (s->auth || s->handler)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	tls[2].ptr_value = s;
	r = open_listener(addr, &fd, &s->port);
	if (r < 0)
		goto fail_server;
	/* From here the daemon owns fd and closes it when it stops. */
	s->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s,
	                             MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
	                             MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
	                             (unsigned)CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
	                             (unsigned)CONNECTION_TIMEOUT, MHD_OPTION_NOTIFY_COMPLETED,
	                             on_completed, s, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	if (!s->daemon) {
		close(fd);
		r = -EIO;
		goto fail_server;
	}
	info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info) {
		r = -EIO;
		goto fail_daemon;
	}
	r = uv_poll_init(loop, &s->poll, info->epoll_fd);
	if (r < 0)
		goto fail_daemon;
	uv_timer_init(loop, &s->timer);
	s->poll.data = s;
	s->timer.data = s;
	s->open_handles = 2;
	uv_poll_start(&s->poll, UV_READABLE, on_poll);
	drive(s);
	tj_log_info("http", "serving", TJ_STR("server", s->name),
	            TJ_STR("host", addr->host[0] ? addr->host : "*"), TJ_INT("port", s->port),
	            TJ_STR("scheme", s->cert ? "https" : "http"),
	            TJ_STR("authentication", s->auth || s->handler ? "TokenReview" : "none"));
	*ret = s;
	return 0;

fail_daemon:
	MHD_stop_daemon(s->daemon);
fail_server:
	free(s);
	return r;
}

void tj_http_server_close(struct tj_http_server *server)
{
	if (!server)
		return;
	/* Closing the poll handle takes the epoll descriptor out of the loop's own epoll set
	 * right away, before MHD_stop_daemon closes it. */
	uv_close((uv_handle_t *)&server->poll, on_handle_closed);
	uv_close((uv_handle_t *)&server->timer, on_handle_closed);
	/* libmicrohttpd refuses to stop with suspended connections: the requests still waiting
	 * for a review are answered as the process goes away. */
	for (struct pending *p = server->pending; p; p = p->next) {
		if (p->decided)
			continue;
		tj_auth_check_cancel(p->check);
		p->check = NULL;
		p->result = (struct tj_auth_result){ .status = MHD_HTTP_SERVICE_UNAVAILABLE,
			                             .message = "shutting down" };
		p->decided = true;
		MHD_resume_connection(p->conn);
	}
	for (struct tj_http_exchange *x = server->exchanges; x; x = x->next) {
		if (x->answered)
			continue;
		if (x->abort_fn)
			x->abort_fn(x->abort_arg);
		x->abort_fn = NULL;
		tj_http_exchange_answer(x, MHD_HTTP_SERVICE_UNAVAILABLE, text_plain,
		                        strdup("shutting down\n"), strlen("shutting down\n"), 0);
	}
	MHD_stop_daemon(server->daemon);
	server->daemon = NULL;
}

int tj_http_server_port(const struct tj_http_server *server)
{
	return server->port;
}

/* ---- /metrics ---- */

static int route_metrics(void *userdata, struct MHD_Connection *conn, const char *path,
                         struct reply *out)
{
	struct tj_metrics *reg = userdata;
	int r;

	if (strcmp(path, "/metrics") != 0)
		return text_reply(out, MHD_HTTP_NOT_FOUND, "404 page not found\n");
	r = tj_metrics_render(reg, &out->body, &out->len);
	if (r < 0)
		return r;
	out->status = MHD_HTTP_OK;
	out->content_type = "text/plain; version=0.0.4; charset=utf-8";
	return 0;
}

int tj_http_serve_metrics(uv_loop_t *loop, const struct tj_bind_addr *addr, struct tj_metrics *reg,
                          struct tj_http_server **ret)
{
	return tj_http_serve_metrics_secured(loop, addr, reg, NULL, ret);
}

int tj_http_serve_metrics_secured(uv_loop_t *loop, const struct tj_bind_addr *addr,
                                  struct tj_metrics *reg, const struct tj_metrics_security *sec,
                                  struct tj_http_server **ret)
{
	return serve(loop, addr, "metrics", route_metrics, reg, sec, NULL, ret);
}

/* ---- /healthz, /readyz ---- */

struct probe_query {
	bool verbose;
	const char *excludes[TJ_HEALTH_MAX_EXCLUDES]; /* borrowed from the connection */
	size_t n_excludes;
};

static enum MHD_Result on_query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	struct probe_query *q = cls;

	if (strcmp(key, "verbose") == 0)
		q->verbose = true;
	else if (strcmp(key, "exclude") == 0 && value && q->n_excludes < TJ_HEALTH_MAX_EXCLUDES)
		q->excludes[q->n_excludes++] = value;
	return MHD_YES;
}

static int route_probes(void *userdata, struct MHD_Connection *conn, const char *path,
                        struct reply *out)
{
	struct tj_health *health = userdata;
	struct probe_query q = { 0 };
	struct tj_health_reply hr;
	int r;

	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_query_arg, &q);
	r = tj_health_handle(health, path, q.verbose, q.excludes, q.n_excludes, &hr);
	if (r < 0)
		return r;
	if (hr.status == MHD_HTTP_INTERNAL_SERVER_ERROR)
		tj_log_debug("http", "probe failed", TJ_STR("path", path), TJ_STR("body", hr.body));
	*out = (struct reply){
		.status = hr.status,
		.content_type = text_plain,
		.body = hr.body,
		.len = hr.len,
	};
	return 0;
}

int tj_http_serve_probes(uv_loop_t *loop, const struct tj_bind_addr *addr, struct tj_health *health,
                         struct tj_http_server **ret)
{
	return serve(loop, addr, "probes", route_probes, health, NULL, NULL, ret);
}

/* ---- a handler's server ---- */

int tj_http_serve_handler(uv_loop_t *loop, const struct tj_bind_addr *addr, const char *name,
                          const struct tj_serving_cert *cert, size_t max_body,
                          tj_http_handler_fn fn, void *userdata, struct tj_http_server **ret)
{
	const struct tj_metrics_security sec = { .cert = cert };
	const struct handler_opts h = { .fn = fn, .userdata = userdata, .max_body = max_body };

	return serve(loop, addr, name, NULL, NULL, &sec, &h, ret);
}
