#include "controller/http.h"

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

#include "controller/log.h"

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

struct tj_http_server {
	uv_poll_t poll;   /* watches the daemon's epoll descriptor */
	uv_timer_t timer; /* fires when the daemon wants MHD_run for a timeout */
	struct MHD_Daemon *daemon;
	route_fn route;
	void *userdata;
	const char *name; /* for logs: "metrics" or "probes" */
	int port;
	int open_handles; /* freed when the last libuv handle has closed */
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
	struct tj_http_server *s = cls;
	struct reply r = { 0 };
	struct MHD_Response *resp;
	enum MHD_Result queued;
	bool allowed = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
	int rc;

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
	if (!allowed)
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

static int serve(uv_loop_t *loop, const struct tj_bind_addr *addr, const char *name, route_fn route,
                 void *userdata, struct tj_http_server **ret)
{
	const union MHD_DaemonInfo *info;
	struct tj_http_server *s;
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
	r = open_listener(addr, &fd, &s->port);
	if (r < 0)
		goto fail_server;
	/* From here the daemon owns fd and closes it when it stops. */
	s->daemon = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request,
	                             s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
	                             MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT,
	                             (unsigned)CONNECTION_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT,
	                             (unsigned)CONNECTION_TIMEOUT, MHD_OPTION_END);
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
	            TJ_STR("host", addr->host[0] ? addr->host : "*"), TJ_INT("port", s->port));
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
	return serve(loop, addr, "metrics", route_metrics, reg, ret);
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
	return serve(loop, addr, "probes", route_probes, health, ret);
}
