/* kube-get: one GET (or a short pod watch) against the API server of a kubeconfig, through
 * the controller's own client on a libuv loop. For manual checks and the e2e tests.
 *
 *   kube-get [--kubeconfig FILE] [--context NAME] PATH
 *       prints the body of GET PATH (e.g. /api/v1/namespaces) and exits 0 on a 2xx answer;
 *       otherwise prints "kube-get: ..." with the reason to stderr and exits 1.
 *   kube-get [--kubeconfig FILE] [--context NAME] --watch-pods NAMESPACE COUNT
 *       watches the pods of NAMESPACE and prints "TYPE NAME" for each of the first COUNT
 *       events (bookmarks are not shown), then stops. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/request.h"
#include "kube/watch.h"

struct state {
	struct tj_client *client;
	int exit_code;
	long want_events;
	long seen_events;
};

static void on_get_done(struct tj_response *resp, void *userdata)
{
	struct state *s = userdata;
	char *text;

	if (resp->rc < 0) {
		fprintf(stderr, "kube-get: HTTP %ld: %s\n", resp->http_status, resp->error);
		s->exit_code = 1;
	} else {
		text = resp->body ? cJSON_Print(resp->body) : NULL;
		printf("%s\n", text ? text : "");
		free(text);
		s->exit_code = 0;
	}
	s->client = tj_client_free(s->client);
}

/* A raw GET of any path: the tool parses the path back into a ref only for the common
 * shapes, so it goes through the transport instead. */
static void on_raw_done(const struct tj_http_response *resp, void *userdata)
{
	struct state *s = userdata;

	if (resp->rc < 0) {
		fprintf(stderr, "kube-get: %s\n", resp->error);
		s->exit_code = 1;
	} else if (resp->status < 200 || resp->status >= 300) {
		struct tj_status st;

		if (tj_status_from_response(resp->status, resp->body, resp->body_len, &st) == 0) {
			fprintf(stderr, "kube-get: HTTP %ld %s: %s\n", resp->status,
			        st.reason ? st.reason : "", st.message ? st.message : "");
			tj_status_clear(&st);
		}
		s->exit_code = 1;
	} else {
		fwrite(resp->body, 1, resp->body_len, stdout);
		putchar('\n');
		s->exit_code = 0;
	}
	s->client = tj_client_free(s->client);
}

static int on_event(struct tj_watch_event *ev, void *userdata)
{
	struct state *s = userdata;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->object, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");

	/* Bookmarks only move the resourceVersion on; they are not what a person watches. */
	if (ev->type == TJ_WATCH_BOOKMARK)
		return 0;
	printf("%s %s\n", tj_watch_event_type_name(ev->type),
	       cJSON_IsString(name) ? name->valuestring : "-");
	fflush(stdout);
	if (++s->seen_events >= s->want_events) {
		s->exit_code = 0;
		/* Freeing the client from inside an event cancels the watch safely. */
		s->client = tj_client_free(s->client);
	}
	return 0;
}

static void on_watch_done(struct tj_response *resp, void *userdata)
{
	struct state *s = userdata;

	fprintf(stderr, "kube-get: watch ended: rc %d, HTTP %ld: %s\n", resp->rc, resp->http_status,
	        resp->error);
	s->exit_code = resp->rc == 0 ? 0 : 1;
	s->client = tj_client_free(s->client);
}

static void usage(void)
{
	fprintf(stderr, "usage: kube-get [--kubeconfig FILE] [--context NAME] PATH\n"
	                "       kube-get [--kubeconfig FILE] [--context NAME] --watch-pods NS "
	                "COUNT\n");
}

int main(int argc, char **argv)
{
	const char *kubeconfig = NULL, *context = NULL, *path = NULL, *watch_ns = NULL;
	struct state s = { .exit_code = 2 };
	struct tj_kube_config *cfg;
	struct tj_kube_env env;
	char err[512];
	uv_loop_t loop;
	int r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc) {
			kubeconfig = argv[++i];
		} else if (strcmp(argv[i], "--context") == 0 && i + 1 < argc) {
			context = argv[++i];
		} else if (strcmp(argv[i], "--watch-pods") == 0 && i + 2 < argc) {
			watch_ns = argv[++i];
			s.want_events = strtol(argv[++i], NULL, 10);
		} else if (argv[i][0] != '-' && !path) {
			path = argv[i];
		} else {
			usage();
			return 2;
		}
	}
	if (!path == !watch_ns) {
		usage();
		return 2;
	}
	tj_kube_env_from_process(kubeconfig, &env);
	r = tj_kube_config_load(&env, context, TJ_KUBE_SA_DIR, &cfg, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "kube-get: %s\n", err);
		return 1;
	}
	uv_loop_init(&loop);
	r = tj_client_new(&loop, cfg, NULL, &s.client);
	cfg = tj_kube_config_free(cfg);
	if (r < 0) {
		fprintf(stderr, "kube-get: cannot create the client: %s\n", strerror(-r));
		return 1;
	}
	if (watch_ns) {
		struct tj_ref ref = { .resource = &tj_resource_pods, .namespace = watch_ns };
		struct tj_watch_options opts = { .timeout_seconds = 60, .allow_bookmarks = true };

		r = tj_watch_start(s.client, &ref, &opts, on_event, on_watch_done, &s, NULL);
	} else if (strncmp(path, "/api/v1/namespaces/", 19) == 0 && !strchr(path + 19, '/') &&
	           !strchr(path, '?')) {
		/* One namespace: exercise the typed request path. */
		static const struct tj_resource namespaces = { "", "v1", "namespaces", false };
		struct tj_ref ref = { .resource = &namespaces, .name = path + 19 };

		r = tj_kube_get(s.client, &ref, on_get_done, &s, NULL);
	} else {
		struct tj_http_request req = {
			.method = "GET",
			.path = path,
			.timeout_ms = 30000,
			.on_done = on_raw_done,
			.userdata = &s,
		};

		r = tj_transport_send(tj_client_transport(s.client), &req, NULL);
	}
	if (r < 0) {
		fprintf(stderr, "kube-get: cannot start: %s\n", strerror(-r));
		s.client = tj_client_free(s.client);
	}
	uv_run(&loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&loop) != 0) {
		fprintf(stderr, "kube-get: handles left open\n");
		return 3;
	}
	return s.exit_code;
}
