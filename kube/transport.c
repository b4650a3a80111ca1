/* HTTP transport: libcurl's multi-socket interface on the libuv loop.
 *
 * libcurl tells us which sockets to watch (CURLMOPT_SOCKETFUNCTION: one uv_poll_t per socket)
 * and when to call it back (CURLMOPT_TIMERFUNCTION: one uv_timer_t); we tell it what happened
 * with curl_multi_socket_action and then collect finished transfers with
 * curl_multi_info_read. Every transfer goes through one multi handle, so its connection pool
 * is shared: with HTTP/2 (negotiated by ALPN, CURL_HTTP_VERSION_2TLS) all requests and
 * watches to the API server are streams of one connection (CURLPIPE_MULTIPLEX, and
 * CURLOPT_PIPEWAIT so a new transfer waits for a connection being set up rather than open a
 * second one).
 *
 * Dead connections. A watch may sit idle for minutes, so a connection whose peer vanished
 * without a FIN or RST (a control-plane node gone, a NAT that dropped its state) must be
 * noticed without traffic of our own. client-go sends HTTP/2 PINGs after 30 s idle; libcurl
 * 7.88 can only send those from curl_easy_upkeep, which services the connection cache of the
 * easy interface and not a multi handle's, so it cannot help here. Instead:
 *  - TCP keepalive: probes after 30 s idle, every 10 s, and the connection is dropped after
 *    3 unanswered probes (TCP_KEEPCNT), so an idle dead connection fails within a minute;
 *  - TCP_USER_TIMEOUT of 45 s: data that stays unacknowledged that long (a request written
 *    into a dead connection) fails the connection too, where the kernel would otherwise
 *    retransmit for about 15 minutes;
 *  - watches carry timeoutSeconds and a client-side transfer timeout above it (watch.c), an
 *    upper bound whatever the network does;
 *  - other requests have a whole-transfer timeout (client.c, 60 s by default). */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "kube/credentials.h"
#include "kube/transport.h"
#include "tj-version.h"

#define KEEPALIVE_IDLE_S     30
#define KEEPALIVE_INTERVAL_S 10
#define KEEPALIVE_PROBES     3
#define USER_TIMEOUT_MS      45000
#define CONNECT_TIMEOUT_MS   10000
#define RETRY_AFTER_MAX      64 /* bytes of a Retry-After value we keep */

struct sock_ctx {
	uv_poll_t poll;
	curl_socket_t fd;
	struct tj_transport *t;
};

struct tj_http_call {
	struct tj_transport *t;
	struct tj_http_call *prev, *next; /* in t->calls */
	struct tj_http_call *done_next;   /* in t->done, while finished */
	CURL *easy;                       /* owned; NULL until the credential is at hand */
	struct curl_slist *headers;       /* owned */
	char *url;                        /* owned */
	char *method;                     /* owned */
	char *content_type;               /* owned; NULL without a body */
	char *body;                       /* owned copy of the request body */
	size_t body_len;
	long timeout_ms;
	size_t max_body;
	tj_http_data_fn on_data;
	tj_http_done_fn on_done;
	void *userdata;

	char *resp; /* owned; the buffered response body */
	size_t resp_len, resp_cap;
	char retry_after[RETRY_AFTER_MAX]; /* "" if absent */
	long status;
	int result;  /* the outcome once finished: 0 or a negative errno */
	int data_rc; /* why the write callback stopped the transfer, 0 if it did not */
	char error[CURL_ERROR_SIZE];

	bool waiting_credentials; /* a credential get is pending */
	bool pending_add;         /* ready, but libcurl was on the stack: add it afterwards */
	bool in_multi;            /* easy is added to the multi handle */
	bool finished;            /* on t->done, its callback not yet run */
	bool cancelled;           /* no callback; free at the next safe point */
	bool in_done;             /* its done callback is running */
	bool streamed;            /* on_data has seen part of the body */
	bool auth_retried;        /* a 401 already made us fetch a fresh credential */
	uint64_t sent_ns;         /* uv_hrtime() of the send, for the observer */
};

struct tj_transport {
	uv_loop_t *loop;
	CURLM *multi;                 /* owned */
	uv_timer_t timer;             /* libcurl's timeout */
	uv_timer_t defer;             /* runs completions that did not come out of libcurl */
	struct tj_credentials *creds; /* owned */
	char *base_url;               /* owned; the server URL (host replaced by tls-server-name) */
	struct curl_slist *connect_to; /* owned; maps tls-server-name to the real host, or NULL */
	char *ca_pem;                  /* owned; NULL: the system's trust store */
	size_t ca_pem_len;
	char *cert_pem, *key_pem; /* owned; the kubeconfig's client certificate and key */
	size_t cert_pem_len, key_pem_len;
	bool insecure;
	bool http2;
	long connect_timeout_ms;
	char user_agent[64];
	char host[256]; /* the server URL's host[:port], for the observer */
	tj_http_observe_fn observe;
	void *observe_userdata;

	struct tj_http_call *calls; /* owned list of live calls */
	/* The finished calls whose callbacks are still to run, in the order they finished, and
	 * how many calls wait for after_curl to add or free them: with thousands of requests
	 * in flight, a look at every call after each socket event was most of the CPU. */
	struct tj_http_call *done_head, *done_tail;
	size_t n_attention;
	int open_handles; /* uv handles not yet closed (timers, polls) */
	bool in_curl;     /* inside curl_multi_socket_action: no removes now */
	int dispatching;  /* depth of done-callback dispatch */
	bool freeing;     /* tj_transport_free was called; tear down when safe */
	bool torn_down;
};

static void after_curl(struct tj_transport *t);
static void on_defer(uv_timer_t *h);

/* Errno-style code for a libcurl result (CURLE_*), as used in tj_http_response.rc. */
static int curl_errno(int code)
{
	switch ((CURLcode)code) {
	case CURLE_OK:
		return 0;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -EHOSTUNREACH;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ENGINE_NOTFOUND:
	case CURLE_SSL_ENGINE_SETFAILED:
	case CURLE_SSL_ENGINE_INITFAILED:
	case CURLE_SSL_CLIENTCERT:
		return -EPROTO;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return -ECONNRESET;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_WRITE_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
		return -ECANCELED;
	case CURLE_URL_MALFORMAT:
	case CURLE_UNSUPPORTED_PROTOCOL:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* ---- libcurl <-> libuv ------------------------------------------------------------------- */

static void maybe_release(struct tj_transport *t)
{
	if (t->torn_down && t->open_handles == 0)
		free(t);
}

static void on_handle_closed(uv_handle_t *h)
{
	struct tj_transport *t = h->data;

	t->open_handles--;
	maybe_release(t);
}

static void on_sock_closed(uv_handle_t *h)
{
	struct sock_ctx *ctx = h->data;
	struct tj_transport *t = ctx->t;

	free(ctx);
	t->open_handles--;
	maybe_release(t);
}

static void drive(struct tj_transport *t, curl_socket_t fd, int flags)
{
	int running;

	t->in_curl = true;
	curl_multi_socket_action(t->multi, fd, flags, &running);
	t->in_curl = false;
	after_curl(t);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
	struct sock_ctx *ctx = h->data;
	int flags = 0;

	if (status < 0)
		flags = CURL_CSELECT_ERR;
	if (events & UV_READABLE)
		flags |= CURL_CSELECT_IN;
	if (events & UV_WRITABLE)
		flags |= CURL_CSELECT_OUT;
	drive(ctx->t, ctx->fd, flags);
}

static void on_timer(uv_timer_t *h)
{
	drive(h->data, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_SOCKETFUNCTION. libcurl tells us before it closes a socket (CURL_POLL_REMOVE),
 * so the poll handle is stopped while the fd is still open (libuv must never poll a closed
 * fd). */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct tj_transport *t = userp;
	struct sock_ctx *ctx = socketp;
	int events = 0;

	if (what == CURL_POLL_REMOVE) {
		if (ctx) {
			curl_multi_assign(t->multi, fd, NULL);
			uv_poll_stop(&ctx->poll);
			uv_close((uv_handle_t *)&ctx->poll, on_sock_closed);
		}
		return 0;
	}
	if (!ctx) {
		ctx = calloc(1, sizeof(*ctx));
		if (!ctx)
			return -1;
		if (uv_poll_init_socket(t->loop, &ctx->poll, fd) < 0) {
			free(ctx);
			return -1;
		}
		ctx->fd = fd;
		ctx->t = t;
		ctx->poll.data = ctx;
		t->open_handles++;
		curl_multi_assign(t->multi, fd, ctx);
	}
	if (what & CURL_POLL_IN)
		events |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		events |= UV_WRITABLE;
	return uv_poll_start(&ctx->poll, events, on_poll) < 0 ? -1 : 0;
}

/* CURLMOPT_TIMERFUNCTION: -1 removes the timer, 0 means "as soon as possible". libcurl must
 * not be called from here, so the timer always fires from the loop. */
static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
	struct tj_transport *t = userp;

	if (timeout_ms < 0)
		uv_timer_stop(&t->timer);
	else
		uv_timer_start(&t->timer, on_timer, (uint64_t)timeout_ms, 0);
	return 0;
}

/* CURLOPT_SOCKOPTFUNCTION: the parts of dead-peer detection libcurl has no option for. */
static int on_sockopt(void *clientp, curl_socket_t fd, curlsocktype purpose)
{
	int probes = KEEPALIVE_PROBES;
	unsigned int user_timeout = USER_TIMEOUT_MS;

	if (purpose != CURLSOCKTYPE_IPCXN)
		return CURL_SOCKOPT_OK;
	/* Best effort: a kernel without these options still has keepalive. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
	return CURL_SOCKOPT_OK;
}

/* ---- calls ------------------------------------------------------------------------------- */

static void unlink_call(struct tj_http_call *call)
{
	struct tj_transport *t = call->t;

	if (call->prev)
		call->prev->next = call->next;
	else if (t->calls == call)
		t->calls = call->next;
	if (call->next)
		call->next->prev = call->prev;
	call->prev = call->next = NULL;
}

static void on_credentials(int rc, const struct tj_credential *cred, const char *error,
                           void *userdata);

static void mark_finished(struct tj_http_call *call)
{
	struct tj_transport *t = call->t;

	call->finished = true;
	call->done_next = NULL;
	if (t->done_tail)
		t->done_tail->done_next = call;
	else
		t->done_head = call;
	t->done_tail = call;
}

static void free_call(struct tj_http_call *call)
{
	struct tj_transport *t = call->t;

	if (call->waiting_credentials)
		tj_credentials_cancel(t->creds, on_credentials, call);
	if (call->in_multi)
		curl_multi_remove_handle(t->multi, call->easy);
	unlink_call(call);
	curl_easy_cleanup(call->easy);
	curl_slist_free_all(call->headers);
	free(call->url);
	free(call->method);
	free(call->content_type);
	free(call->body);
	free(call->resp);
	free(call);
}

/* Marks a call finished (outside libcurl) and arranges for its callback to run from the
 * loop, never from inside the function that started it. */
static void finish_later(struct tj_http_call *call, int result, const char *error)
{
	call->result = result;
	snprintf(call->error, sizeof(call->error), "%s", error);
	mark_finished(call);
	uv_timer_start(&call->t->defer, on_defer, 0, 0);
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct tj_http_call *call = userdata;
	size_t n = size * nmemb;

	if (call->cancelled || call->t->freeing)
		return 0;
	if (call->status == 0)
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &call->status);
	if (call->on_data && call->status >= 200 && call->status < 300) {
		int r;

		call->streamed = true;
		r = call->on_data(ptr, n, call->userdata);
		if (r < 0) {
			call->data_rc = r;
			return 0;
		}
		return call->cancelled || call->t->freeing ? 0 : n;
	}
	if (n > call->max_body - call->resp_len) {
		call->data_rc = -EMSGSIZE;
		return 0;
	}
	if (call->resp_len + n + 1 > call->resp_cap) {
		size_t cap = call->resp_cap ? call->resp_cap : 16384;
		char *buf;

		while (cap < call->resp_len + n + 1)
			cap *= 2;
		buf = realloc(call->resp, cap);
		if (!buf) {
			call->data_rc = -ENOMEM;
			return 0;
		}
		call->resp = buf;
		call->resp_cap = cap;
	}
	memcpy(call->resp + call->resp_len, ptr, n);
	call->resp_len += n;
	call->resp[call->resp_len] = '\0';
	return n;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *userdata)
{
	struct tj_http_call *call = userdata;
	size_t n = size * nitems, len;
	const char *v;

	if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
		/* A new response (after a 100 Continue, say): forget the previous headers. */
		call->retry_after[0] = '\0';
		return n;
	}
	if (n < 12 || strncasecmp(buf, "retry-after:", 12) != 0)
		return n;
	v = buf + 12;
	len = n - 12;
	while (len > 0 && (*v == ' ' || *v == '\t')) {
		v++;
		len--;
	}
	while (len > 0 && (v[len - 1] == '\r' || v[len - 1] == '\n' || v[len - 1] == ' '))
		len--;
	if (len >= sizeof(call->retry_after))
		len = sizeof(call->retry_after) - 1;
	memcpy(call->retry_after, v, len);
	call->retry_after[len] = '\0';
	return n;
}

static int add_header(struct curl_slist **list, const char *name, const char *value)
{
	struct curl_slist *l;
	char *line;

	if (asprintf(&line, "%s%s", name, value) < 0)
		return -ENOMEM;
	l = curl_slist_append(*list, line);
	free(line);
	if (!l)
		return -ENOMEM;
	*list = l;
	return 0;
}

static int build_easy(struct tj_http_call *call, const struct tj_credential *cred)
{
	struct tj_transport *t = call->t;
	const char *cert = t->cert_pem, *key = t->key_pem;
	size_t cert_len = t->cert_pem_len, key_len = t->key_pem_len;
	CURL *e;

	curl_slist_free_all(call->headers);
	call->headers = NULL;
	if (add_header(&call->headers, "Accept: ", "application/json") < 0 ||
	    add_header(&call->headers, "Expect:", "") < 0)
		return -ENOMEM;
	if (cred->token && add_header(&call->headers, "Authorization: Bearer ", cred->token) < 0)
		return -ENOMEM;
	if (call->content_type &&
	    add_header(&call->headers, "Content-Type: ", call->content_type) < 0)
		return -ENOMEM;
	if (cred->client_cert_pem) {
		cert = cred->client_cert_pem;
		cert_len = cred->client_cert_pem_len;
		key = cred->client_key_pem;
		key_len = cred->client_key_pem_len;
	}

	if (!call->easy) {
		call->easy = curl_easy_init();
		if (!call->easy)
			return -ENOMEM;
	} else {
		curl_easy_reset(call->easy);
	}
	e = call->easy;
	curl_easy_setopt(e, CURLOPT_URL, call->url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, call);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https,http");
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, call->error);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, call);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->headers);
	curl_easy_setopt(e, CURLOPT_USERAGENT, t->user_agent);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); /* gzip: lists compress well */
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
	                 t->http2 ? (long)CURL_HTTP_VERSION_2TLS : (long)CURL_HTTP_VERSION_1_1);
	/* Only a TLS connection can turn out to multiplex (HTTP/2 comes by ALPN). Over plain
	 * HTTP (kubectl proxy) or with HTTP/2 off, a transfer that waited for the connection
	 * being set up would wait until some transfer ends, behind a request still unanswered. */
	curl_easy_setopt(e, CURLOPT_PIPEWAIT,
	                 t->http2 && strncmp(call->url, "https://", 8) == 0 ? 1L : 0L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, (long)KEEPALIVE_IDLE_S);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, (long)KEEPALIVE_INTERVAL_S);
	curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, t->connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, call->timeout_ms);
	if (t->connect_to)
		curl_easy_setopt(e, CURLOPT_CONNECT_TO, t->connect_to);

	if (t->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	} else if (t->ca_pem) {
		struct curl_blob ca = { .data = t->ca_pem,
			                .len = t->ca_pem_len,
			                .flags = CURL_BLOB_COPY };

		/* Only the configured CA, not the system's store too, as client-go. */
		curl_easy_setopt(e, CURLOPT_CAINFO, NULL);
		curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
		curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &ca);
	}
	if (cert && key) {
		struct curl_blob cb = { .data = (void *)cert,
			                .len = cert_len,
			                .flags = CURL_BLOB_COPY };
		struct curl_blob kb = { .data = (void *)key,
			                .len = key_len,
			                .flags = CURL_BLOB_COPY };

		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &cb);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &kb);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	}

	if (strcmp(call->method, "GET") == 0) {
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, call->method);
		if (call->body || strcmp(call->method, "POST") == 0) {
			curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->body ? call->body : "");
			curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
			                 (curl_off_t)call->body_len);
		}
	}
	return 0;
}

static void add_to_multi(struct tj_http_call *call)
{
	CURLMcode mc;

	call->pending_add = false;
	mc = curl_multi_add_handle(call->t->multi, call->easy);
	if (mc != CURLM_OK) {
		finish_later(call, -EIO, curl_multi_strerror(mc));
		return;
	}
	call->in_multi = true;
}

static void on_credentials(int rc, const struct tj_credential *cred, const char *error,
                           void *userdata)
{
	struct tj_http_call *call = userdata;
	int r;

	call->waiting_credentials = false;
	if (rc < 0) {
		finish_later(call, rc, error);
		return;
	}
	r = build_easy(call, cred);
	if (r < 0) {
		finish_later(call, r, "out of memory");
		return;
	}
	/* A request started from inside a libcurl callback (a watch event handler that writes
	 * something) cannot be added now: libcurl refuses recursive calls. after_curl adds it
	 * once libcurl has returned. */
	if (call->t->in_curl) {
		call->pending_add = true;
		call->t->n_attention++;
		return;
	}
	add_to_multi(call);
}

/* Asks for the credential; the call enters libcurl once it is there. */
static void submit(struct tj_http_call *call)
{
	int r;

	call->waiting_credentials = true;
	r = tj_credentials_get(call->t->creds, on_credentials, call);
	if (r < 0) {
		call->waiting_credentials = false;
		finish_later(call, r, "cannot get a credential");
	}
}

static void observe(const struct tj_http_call *call)
{
	const struct tj_transport *t = call->t;
	struct tj_http_observation o = {
		.method = call->method,
		.url = call->url,
		.host = t->host,
		.status = call->result == 0 ? call->status : 0,
		.rc = call->result,
		.seconds = (double)(uv_hrtime() - call->sent_ns) / 1e9,
	};

	if (t->observe)
		t->observe(&o, t->observe_userdata);
}

/* Runs a finished call's callback, or starts it over once after a 401 when the credential
 * source can produce a different credential (a re-read token file, a re-run plugin). */
static void dispatch(struct tj_http_call *call)
{
	struct tj_transport *t = call->t;
	struct tj_http_response resp;
	const char *error = call->error;
	char msg[CURL_ERROR_SIZE + 256];
	int rc = call->result;

	call->finished = false;
	if (call->cancelled || t->freeing) {
		free_call(call);
		return;
	}
	observe(call);
	if (rc == 0 && call->status == 401 && !call->auth_retried && !call->streamed &&
	    tj_credentials_invalidate(t->creds)) {
		call->auth_retried = true;
		call->sent_ns = uv_hrtime();
		call->resp_len = 0;
		call->status = 0;
		call->retry_after[0] = '\0';
		submit(call);
		return;
	}
	if (rc < 0) {
		snprintf(msg, sizeof(msg), "%s %s: %s", call->method, call->url,
		         error[0] ? error : strerror(-rc));
		error = msg;
	}
	resp = (struct tj_http_response){
		.rc = rc,
		.status = call->status,
		.body = call->resp ? call->resp : "",
		.body_len = call->resp_len,
		.retry_after = call->retry_after[0] ? call->retry_after : NULL,
		.error = rc < 0 ? error : "",
	};
	call->in_done = true;
	t->dispatching++;
	call->on_done(&resp, call->userdata);
	t->dispatching--;
	free_call(call);
}

static void tear_down(struct tj_transport *t);

/* Collects what libcurl finished, then runs the callbacks of every finished call. Called
 * whenever libcurl returned control to us, so removing handles is allowed. */
static void after_curl(struct tj_transport *t)
{
	struct tj_http_call *call, *next;
	CURLMsg *msg;
	int left;

	/* Calls cancelled while libcurl was on the stack leave now; calls started then enter. */
	if (t->n_attention) {
		t->n_attention = 0;
		for (call = t->calls; call; call = next) {
			next = call->next;
			if (call->cancelled && !call->finished)
				free_call(call);
			else if (call->pending_add && !t->freeing)
				add_to_multi(call);
		}
	}
	while ((msg = curl_multi_info_read(t->multi, &left))) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&call);
		call->result = call->data_rc ? call->data_rc : curl_errno((int)msg->data.result);
		curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &call->status);
		/* msg is invalid after this. */
		curl_multi_remove_handle(t->multi, call->easy);
		call->in_multi = false;
		mark_finished(call);
	}
	/* A callback may cancel or start other calls, or free the transport. */
	while ((call = t->done_head) && !t->freeing) {
		t->done_head = call->done_next;
		if (!t->done_head)
			t->done_tail = NULL;
		call->done_next = NULL;
		dispatch(call);
	}
	if (t->freeing && t->dispatching == 0 && !t->in_curl)
		tear_down(t);
}

static void on_defer(uv_timer_t *h)
{
	after_curl(h->data);
}

int tj_transport_send(struct tj_transport *t, const struct tj_http_request *req,
                      struct tj_http_call **ret_call)
{
	struct tj_http_call *call;
	int r = -ENOMEM;

	if (!req->method || !req->path || req->path[0] != '/' || !req->on_done)
		return -EINVAL;
	if (t->freeing)
		return -ESHUTDOWN;
	call = calloc(1, sizeof(*call));
	if (!call)
		return -ENOMEM;
	call->t = t;
	call->timeout_ms = req->timeout_ms;
	call->max_body = req->max_body ? req->max_body : TJ_HTTP_MAX_BODY;
	call->on_data = req->on_data;
	call->on_done = req->on_done;
	call->userdata = req->userdata;
	call->method = strdup(req->method);
	if (!call->method || asprintf(&call->url, "%s%s", t->base_url, req->path) < 0)
		goto out_free;
	if (req->content_type && !(call->content_type = strdup(req->content_type)))
		goto out_free;
	if (req->body) {
		call->body = malloc(req->body_len + 1);
		if (!call->body)
			goto out_free;
		memcpy(call->body, req->body, req->body_len);
		call->body[req->body_len] = '\0';
		call->body_len = req->body_len;
	}
	call->next = t->calls;
	if (t->calls)
		t->calls->prev = call;
	t->calls = call;
	call->sent_ns = uv_hrtime();
	submit(call);
	if (ret_call)
		*ret_call = call;
	return 0;

out_free:
	free(call->method);
	free(call->url);
	free(call->content_type);
	free(call);
	return r;
}

void tj_http_call_cancel(struct tj_http_call *call)
{
	if (!call || call->in_done || call->cancelled)
		return;
	call->cancelled = true;
	/* libcurl forbids removing a handle from inside its own callbacks; then the call is
	 * only marked, its write callback refuses further data, and after_curl frees it. */
	if (call->finished)
		return;
	if (call->t->in_curl) {
		call->t->n_attention++;
		return;
	}
	free_call(call);
}

/* ---- setup and teardown ------------------------------------------------------------------- */

/* With tls-server-name, the URL names that host (it is what TLS sends as SNI and verifies)
 * and CURLOPT_CONNECT_TO sends the connection to the server's real address. */
static int setup_server(struct tj_transport *t, const struct tj_kube_config *cfg)
{
	CURLU *u = NULL;
	char *host = NULL, *port = NULL, *entry = NULL;
	struct curl_slist *l;
	int r = -EINVAL;

	if (!cfg->tls_server_name) {
		t->base_url = strdup(cfg->server);
		return t->base_url ? 0 : -ENOMEM;
	}
	u = curl_url();
	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, cfg->server, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK)
		goto out_free;
	if (asprintf(&entry, "%s:%s:%s:%s", cfg->tls_server_name, port, host, port) < 0) {
		entry = NULL;
		r = -ENOMEM;
		goto out_free;
	}
	l = curl_slist_append(NULL, entry);
	if (!l) {
		r = -ENOMEM;
		goto out_free;
	}
	t->connect_to = l;
	if (curl_url_set(u, CURLUPART_HOST, cfg->tls_server_name, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_URL, &t->base_url, 0) != CURLUE_OK)
		goto out_free;
	/* curl_url_get adds a "/" path to a bare server; paths are appended to it. */
	for (size_t n = strlen(t->base_url); n > 0 && t->base_url[n - 1] == '/'; n--)
		t->base_url[n - 1] = '\0';
	r = 0;

out_free:
	curl_free(host);
	curl_free(port);
	free(entry);
	curl_url_cleanup(u);
	return r;
}

static int copy_blob(const char *src, size_t len, char **dst, size_t *dst_len)
{
	*dst = NULL;
	*dst_len = 0;
	if (!src)
		return 0;
	*dst = malloc(len + 1);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, len);
	(*dst)[len] = '\0';
	*dst_len = len;
	return 0;
}

/* The authority of an http(s) URL without its user info: "10.0.0.1:6443" of
 * "https://10.0.0.1:6443/prefix". Truncated to the buffer; "" for a URL without "://". */
void tj_url_host(const char *url, char *buf, size_t size)
{
	const char *start = strstr(url, "://");
	const char *end, *at;
	size_t len;

	buf[0] = '\0';
	if (!start || size == 0)
		return;
	start += 3;
	end = start + strcspn(start, "/?#");
	at = memchr(start, '@', (size_t)(end - start));
	if (at)
		start = at + 1;
	len = (size_t)(end - start);
	if (len >= size)
		len = size - 1;
	memcpy(buf, start, len);
	buf[len] = '\0';
}

int tj_transport_new(uv_loop_t *loop, const struct tj_kube_config *cfg,
                     const struct tj_transport_options *opts, struct tj_transport **ret)
{
	static bool curl_ready;
	struct tj_transport *t;
	int r;

	/* curl_global_init is not thread-safe; the whole process runs on one thread. */
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -EIO;
		curl_ready = true;
	}
	if (!cfg->server)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->loop = loop;
	t->insecure = cfg->insecure_skip_tls_verify;
	t->http2 = !(opts && opts->disable_http2);
	t->connect_timeout_ms = opts && opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms
	                                                             : CONNECT_TIMEOUT_MS;
	snprintf(t->user_agent, sizeof(t->user_agent), "%s%s", TJ_USER_AGENT_PREFIX, TJ_VERSION);
	if (opts) {
		t->observe = opts->observe;
		t->observe_userdata = opts->observe_userdata;
	}
	r = setup_server(t, cfg);
	if (r < 0)
		goto out_free;
	tj_url_host(t->base_url, t->host, sizeof(t->host));
	r = copy_blob(cfg->ca_pem, cfg->ca_pem_len, &t->ca_pem, &t->ca_pem_len);
	if (r == 0)
		r = copy_blob(cfg->client_cert_pem, cfg->client_cert_pem_len, &t->cert_pem,
		              &t->cert_pem_len);
	if (r == 0)
		r = copy_blob(cfg->client_key_pem, cfg->client_key_pem_len, &t->key_pem,
		              &t->key_pem_len);
	if (r < 0)
		goto out_free;
	r = tj_credentials_new(loop, cfg, &t->creds);
	if (r < 0)
		goto out_free;
	t->multi = curl_multi_init();
	if (!t->multi) {
		r = -ENOMEM;
		goto out_free;
	}
	curl_multi_setopt(t->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(t->multi, CURLMOPT_SOCKETDATA, t);
	curl_multi_setopt(t->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
	curl_multi_setopt(t->multi, CURLMOPT_TIMERDATA, t);
	curl_multi_setopt(t->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
	uv_timer_init(loop, &t->timer);
	uv_timer_init(loop, &t->defer);
	t->timer.data = t;
	t->defer.data = t;
	t->open_handles = 2;
	*ret = t;
	return 0;

out_free:
	tj_credentials_free(t->creds);
	curl_slist_free_all(t->connect_to);
	free(t->base_url);
	free(t->ca_pem);
	free(t->cert_pem);
	free(t->key_pem);
	free(t);
	return r;
}

static void tear_down(struct tj_transport *t)
{
	t->done_head = t->done_tail = NULL;
	while (t->calls)
		free_call(t->calls);
	/* Closing the pooled connections makes libcurl remove their sockets through
	 * on_socket, which closes the poll handles. */
	curl_multi_cleanup(t->multi);
	t->multi = NULL;
	t->creds = tj_credentials_free(t->creds);
	curl_slist_free_all(t->connect_to);
	free(t->base_url);
	free(t->ca_pem);
	free(t->cert_pem);
	free(t->key_pem);
	t->torn_down = true;
	uv_close((uv_handle_t *)&t->timer, on_handle_closed);
	uv_close((uv_handle_t *)&t->defer, on_handle_closed);
}

struct tj_transport *tj_transport_free(struct tj_transport *t)
{
	if (!t || t->freeing)
		return NULL;
	t->freeing = true;
	if (t->in_curl || t->dispatching > 0)
		return NULL; /* after_curl tears down once the stack unwinds */
	tear_down(t);
	return NULL;
}
