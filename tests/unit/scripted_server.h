/* A scripted HTTP/1.1 API server for the unit tests, on 127.0.0.1 and on the test's own libuv
 * loop, so that a client, an informer or a whole controller runs against it end to end.
 *
 * The test scripts replies; each request is answered with the first reply not yet used whose
 * method, path, query and body match it (a reply that names none of them matches any request, so a
 * list of such replies answers requests in the order they come). A repeated reply is never
 * used up. Every request is recorded, in order of arrival, with the reply that answered it.
 * A reply may hang (never answer), drop the connection, hold its body back until the test
 * releases it (the write stays in flight as long as the test wants), or keep a chunked
 * response open (the test sends more of it with server_push), which is how a watch stays
 * open and brings events when the test wants them.
 *
 * Every response says "Connection: close": one request per connection, so the order of the
 * recorded requests is the order in which the client sent them. Included after <cmocka.h>. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

#include "kube/client.h"

/* A Status object as the API server answers a failed request; msg has no quotes. */
#define API_ERROR(code, reason, msg)                                                               \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"" msg     \
	"\",\"reason\":\"" reason "\",\"code\":" #code "}"

#define SERVER_MAX_REPLIES 64
#define SERVER_MAX_SEEN    128

struct reply {
	/* What it answers; NULL matches anything. path is compared with the request's path
	 * up to its '?', query is a substring of what follows the '?', request_has one of the
	 * request's body. */
	const char *method;
	const char *path;
	const char *query;
	const char *request_has;
	bool repeat; /* answers every request it matches, never used up */
	int status;
	const char *headers; /* extra header lines, each ending in \r\n */
	const char *body;
	bool chunked;   /* send the body as one chunk per line */
	bool keep_open; /* never finish the response (a watch that stays open) */
	bool hang;      /* never answer at all */
	/* Send the status line and headers at once, the body when server_release says. (A
	 * request that has no answer at all makes libcurl hold the next ones back: with
	 * CURLOPT_PIPEWAIT it waits to learn whether the connection can multiplex.) */
	bool hold;
	/* Close the connection without a word once the request is in: what the client sees of
	 * an API server killed while the request was in flight. */
	bool drop;
};

struct request_seen {
	char method[16];
	char path[512];    /* with its query */
	char head[4096];   /* the request line and the header lines */
	char *body;        /* owned; "" when there is none */
	int reply;         /* index in the script of the reply that answered it */
	struct conn *conn; /* borrowed; NULL once the connection is closed */
};

struct server {
	uv_loop_t *loop; /* borrowed */
	uv_tcp_t listener;
	uv_timer_t deadline; /* bounds server_run_until */
	bool timed_out;
	int port;
	struct reply replies[SERVER_MAX_REPLIES];
	bool used[SERVER_MAX_REPLIES];
	int n_replies;
	struct request_seen seen[SERVER_MAX_SEEN];
	int n_seen;
	struct conn *conns; /* owned list */
	int eofs;           /* connections the client closed */
	char log[65536];    /* the lines logged since server_capture_log */
};

/* Listens on an ephemeral port of 127.0.0.1 (s->port). */
void server_start(struct server *s, uv_loop_t *loop);

/* A client of the server, with a bearer token "t" and default options, but for a first
 * resend of an unanswered create after 1 ms (tj_client_options.resend_first_ms). */
struct tj_client *server_client_new(struct server *s);

/* Closes every connection and the listener; run the loop afterwards to finish closing. */
void server_stop(struct server *s);

/* Appends replies to the script (copied; their strings are borrowed). */
void server_script(struct server *s, const struct reply *replies, int n);

/* Sends the body of the held reply to request i. */
void server_release(struct server *s, int i);

/* Sends text as one more chunk of the open response to request i. */
void server_push(struct server *s, int i, const char *text);

/* Ends the open chunked response to request i, and closes its connection. */
void server_end(struct server *s, int i);

/* The index of the first request at or after from whose method is method and whose path
 * (with its query) starts with prefix, or -1. */
int server_find(const struct server *s, int from, const char *method, const char *prefix);

/* How many requests match as server_find does. */
int server_count(const struct server *s, const char *method, const char *prefix);

/* "METHOD path|" for every request seen, in order, but those of the method except (NULL:
 * none); a static buffer. */
const char *server_trace(const struct server *s, const char *except);

/* The log lines written from now until server_stop go to s->log. */
void server_capture_log(struct server *s);

/* Turns the loop a few times without blocking, so that anything already due happens. */
void server_spin(struct server *s);

/* Fails unless request i has a JSON body equal to expected_sq (JSON with ' for "). */
void assert_request_body(const struct server *s, int i, const char *expected_sq);

/* Runs s->loop until cond holds (the listener keeps the loop alive, so running it to
 * completion would never return). Fails the test if it takes more than a generous bound
 * (10 s, scaled by TJ_TEST_TIME_FACTOR: see time_limit.h): a scripted exchange needs milliseconds.
 */
#define SERVER_RUN_UNTIL(s, cond)                                                                  \
	do {                                                                                       \
		server_deadline_start(s);                                                          \
		while (!(cond)) {                                                                  \
			uv_run((s)->loop, UV_RUN_ONCE);                                            \
			if ((s)->timed_out)                                                        \
				fail_msg("timed out waiting for %s", #cond);                       \
		}                                                                                  \
		server_deadline_stop(s);                                                           \
	} while (0)

void server_deadline_start(struct server *s);
void server_deadline_stop(struct server *s);
