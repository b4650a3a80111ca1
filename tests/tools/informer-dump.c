/* informer-dump: runs the pod and node informers against the API server of a kubeconfig,
 * waits for them to sync and for the watch to go quiet, and prints the caches as JSON. For
 * the e2e tests (the cache must equal a fresh `kubectl get -o json`) and the benchmark.
 *
 *   informer-dump [--kubeconfig FILE] [--context NAME] [--namespace NS] [--quiet-ms N]
 *                 [--wait-signal] [--paginated-lists]
 *
 * stderr gets "synced pods=N nodes=M list_ms=T cpu_ms=C max_rss_kib=P rss_kib=R heap_kib=H"
 * once both caches have synced: the time since start, the CPU time used, the peak and current
 * resident size, and the heap in use (mallinfo2). Without
 * --wait-signal the caches are printed once no event has arrived for --quiet-ms (default
 * 2000) after the sync; with it, only after SIGUSR1 and then the same quiet period. Either
 * way, also only once both informers have been watching for that long: a reflector waiting
 * out a backoff before a relist (up to a minute after a run of failures) hears of no event,
 * yet its cache is behind the server; stderr says so while it waits. stdout
 * gets {"pods": [...], "nodes": [...], "stats": {...}}; exit 0. The caches fill from
 * streaming lists where the server offers them, or from paginated lists only with
 * --paginated-lists (the controller's flag of the same name). */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <uv.h>

#include "informers/informers.h"
#include "informers/intern.h"
#include "kube/client.h"
#include "kube/config.h"

struct state {
	uv_loop_t loop;
	uv_timer_t tick;
	uv_signal_t sigusr1;
	struct tj_client *client;
	struct tj_informers *inf;
	uint64_t start_ms, synced_ms, last_event_ms, quiet_ms;
	uint64_t pod_events_at_sync; /* a streaming list's initial events are watch events too */
	uint64_t events;
	bool wait_signal, signalled, synced_reported, told_behind;
	int exit_code;
};

static void on_event_seen(struct state *s)
{
	s->events++;
	s->last_event_ms = uv_now(&s->loop);
}

static void on_add(const void *obj, void *ud)
{
	on_event_seen(ud);
}

static void on_update(const void *old, const void *new_obj, void *ud)
{
	on_event_seen(ud);
}

static void on_delete(const void *obj, void *ud)
{
	on_event_seen(ud);
}

static cJSON *time_or_null(int64_t t)
{
	return t ? cJSON_CreateNumber((double)t) : cJSON_CreateNull();
}

static cJSON *string_or_null(const char *s)
{
	return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static const char *phase_name(enum tj_pod_phase p)
{
	static const char *const names[] = { "Pending", "Running", "Succeeded", "Failed",
		                             "Unknown" };

	return names[p];
}

/* Resources as {"cpu": millis, "memory": bytes, <extended name>: units, ...}. */
static cJSON *resources_json(int64_t cpu_milli, int64_t memory, const int64_t *pods,
                             const struct tj_extended_resource *extended, size_t n)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "cpu", (double)cpu_milli);
	cJSON_AddNumberToObject(o, "memory", (double)memory);
	if (pods)
		cJSON_AddNumberToObject(o, "pods", (double)*pods);
	for (size_t i = 0; i < n; i++)
		cJSON_AddNumberToObject(o, extended[i].name, (double)extended[i].value);
	return o;
}

static cJSON *pod_json(const struct tj_pod *p)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "namespace", string_or_null(p->namespace));
	cJSON_AddItemToObject(o, "name", string_or_null(p->name));
	cJSON_AddItemToObject(o, "uid", string_or_null(p->uid));
	cJSON_AddItemToObject(o, "resourceVersion", string_or_null(p->resource_version));
	cJSON_AddItemToObject(o, "ownerUid", string_or_null(p->owner_uid));
	cJSON_AddItemToObject(o, "trainjob", string_or_null(p->trainjob));
	cJSON_AddNumberToObject(o, "rank", p->rank);
	cJSON_AddNumberToObject(o, "attempt", p->attempt);
	cJSON_AddItemToObject(o, "nodeName", string_or_null(p->node_name));
	cJSON_AddItemToObject(o, "pinnedNode", string_or_null(p->pinned_node));
	cJSON_AddItemToObject(o, "requests",
	                      resources_json(p->requests.cpu_milli, p->requests.memory, NULL,
	                                     p->requests.extended, p->requests.n_extended));
	cJSON_AddStringToObject(o, "phase", phase_name(p->phase));
	cJSON_AddBoolToObject(o, "ready", p->ready);
	cJSON_AddBoolToObject(o, "unschedulable", p->unschedulable);
	cJSON_AddItemToObject(o, "creationTime", time_or_null(p->creation_time));
	cJSON_AddItemToObject(o, "startTime", time_or_null(p->start_time));
	cJSON_AddItemToObject(o, "deletionTime", time_or_null(p->deletion_time));
	cJSON_AddItemToObject(o, "reason", string_or_null(p->reason));
	cJSON_AddBoolToObject(o, "terminated", p->terminated);
	cJSON_AddNumberToObject(o, "exitCode", p->exit_code);
	cJSON_AddItemToObject(o, "exitReason", string_or_null(p->exit_reason));
	cJSON_AddItemToObject(o, "disruptionReason", string_or_null(p->disruption_reason));
	return o;
}

static cJSON *node_json(const struct tj_node *n)
{
	static const char *const status[] = { "Unknown", "True", "False" };
	cJSON *o = cJSON_CreateObject(), *conds = cJSON_CreateArray(),
	      *taints = cJSON_CreateArray(), *labels = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "name", string_or_null(n->name));
	cJSON_AddItemToObject(o, "uid", string_or_null(n->uid));
	cJSON_AddItemToObject(o, "resourceVersion", string_or_null(n->resource_version));
	cJSON_AddItemToObject(o, "arch", string_or_null(n->arch));
	cJSON_AddBoolToObject(o, "unschedulable", n->unschedulable);
	for (size_t i = 0; i < n->n_conditions; i++) {
		cJSON *c = cJSON_CreateObject();

		cJSON_AddStringToObject(c, "type", n->conditions[i].type);
		cJSON_AddStringToObject(c, "status", status[n->conditions[i].status]);
		cJSON_AddItemToObject(c, "reason", string_or_null(n->conditions[i].reason));
		cJSON_AddItemToArray(conds, c);
	}
	for (size_t i = 0; i < n->n_taints; i++) {
		cJSON *t = cJSON_CreateObject();

		cJSON_AddStringToObject(t, "key", n->taints[i].key);
		cJSON_AddItemToObject(t, "value", string_or_null(n->taints[i].value));
		cJSON_AddStringToObject(t, "effect", n->taints[i].effect);
		cJSON_AddItemToArray(taints, t);
	}
	cJSON_AddItemToObject(o, "conditions", conds);
	cJSON_AddItemToObject(o, "taints", taints);
	for (size_t i = 0; i < n->n_labels; i++)
		cJSON_AddStringToObject(labels, n->labels[i].key, n->labels[i].value);
	cJSON_AddItemToObject(o, "labels", labels);
	cJSON_AddItemToObject(o, "allocatable",
	                      resources_json(n->allocatable.cpu_milli, n->allocatable.memory,
	                                     &n->allocatable.pods, n->allocatable.extended,
	                                     n->allocatable.n_extended));
	return o;
}

/* The resident size now (VmRSS), in KiB, 0 if unknown. */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, resident = 0;

	if (f) {
		if (fscanf(f, "%ld %ld", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* CPU time (user + system) used so far, and the peak resident size. */
static double cpu_ms(long *ret_max_rss_kib)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*ret_max_rss_kib = ru.ru_maxrss;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
}

static void add_stats(cJSON *root, struct state *s)
{
	struct tj_reflector_stats ps, ns;
	cJSON *st = cJSON_CreateObject();
	long rss;
	double cpu = cpu_ms(&rss);

	tj_reflector_stats(s->inf->pods, &ps);
	tj_reflector_stats(s->inf->nodes, &ns);
	cJSON_AddNumberToObject(st, "listMs", (double)(s->synced_ms - s->start_ms));
	cJSON_AddNumberToObject(st, "podEvents", (double)ps.events);
	cJSON_AddNumberToObject(st, "podEventsAfterSync",
	                        (double)(ps.events - s->pod_events_at_sync));
	cJSON_AddNumberToObject(st, "nodeEvents", (double)ns.events);
	cJSON_AddNumberToObject(st, "podLists", (double)ps.lists);
	cJSON_AddNumberToObject(st, "podWatches", (double)ps.watches);
	cJSON_AddNumberToObject(st, "streamedLists",
	                        (double)(ps.streamed_lists + ns.streamed_lists));
	cJSON_AddNumberToObject(st, "streamFallbacks",
	                        (double)(ps.stream_fallbacks + ns.stream_fallbacks));
	cJSON_AddNumberToObject(st, "maxRssKiB", (double)rss);
	cJSON_AddNumberToObject(st, "cpuMs", cpu);
	cJSON_AddNumberToObject(st, "internedStrings", (double)tj_intern_count());
	cJSON_AddStringToObject(st, "podLastError", tj_reflector_last_error(s->inf->pods));
	cJSON_AddItemToObject(root, "stats", st);
}

static void dump(struct state *s)
{
	cJSON *root = cJSON_CreateObject(), *pods = cJSON_CreateArray(),
	      *nodes = cJSON_CreateArray();
	struct tj_store_iter it;
	const void *obj;
	char *text;

	/* The stats first: building the dump of a large cache costs CPU of its own. */
	add_stats(root, s);
	tj_store_iter_init(tj_reflector_store(s->inf->pods), &it);
	while ((obj = tj_store_iter_next(&it)))
		cJSON_AddItemToArray(pods, pod_json(obj));
	tj_store_iter_init(tj_reflector_store(s->inf->nodes), &it);
	while ((obj = tj_store_iter_next(&it)))
		cJSON_AddItemToArray(nodes, node_json(obj));
	cJSON_AddItemToObject(root, "pods", pods);
	cJSON_AddItemToObject(root, "nodes", nodes);
	text = cJSON_PrintUnformatted(root);
	if (text)
		printf("%s\n", text);
	fflush(stdout);
	cJSON_free(text);
	cJSON_Delete(root);
}

static void stop(struct state *s, int code)
{
	s->exit_code = code;
	s->inf = tj_informers_free(s->inf);
	s->client = tj_client_free(s->client);
	uv_close((uv_handle_t *)&s->tick, NULL);
	uv_close((uv_handle_t *)&s->sigusr1, NULL);
}

/* Whether reflector r has been watching for the quiet period (tj_reflector_watching). */
static bool watching_long_enough(const struct state *s, const struct tj_reflector *r, uint64_t now)
{
	uint64_t since;

	return tj_reflector_watching(r, &since) && now - since >= s->quiet_ms;
}

static void on_tick(uv_timer_t *t)
{
	struct state *s = t->data;
	uint64_t now = uv_now(&s->loop);

	if (!tj_informers_have_synced(s->inf))
		return;
	if (!s->synced_reported) {
		struct tj_reflector_stats ps;
		long rss;
		double cpu = cpu_ms(&rss);

		tj_reflector_stats(s->inf->pods, &ps);
		s->pod_events_at_sync = ps.events;
		s->synced_reported = true;
		s->synced_ms = now;
		s->last_event_ms = now;
		malloc_trim(0);
		fprintf(stderr,
		        "synced pods=%zu nodes=%zu list_ms=%llu cpu_ms=%.0f max_rss_kib=%ld "
		        "rss_kib=%ld heap_kib=%zu\n",
		        tj_store_len(tj_reflector_store(s->inf->pods)),
		        tj_store_len(tj_reflector_store(s->inf->nodes)),
		        (unsigned long long)(now - s->start_ms), cpu, rss, rss_kib(),
		        mallinfo2().uordblks / 1024);
		fflush(stderr);
	}
	if (s->wait_signal && !s->signalled)
		return;
	if (now - s->last_event_ms < s->quiet_ms)
		return;
	if (!watching_long_enough(s, s->inf->pods, now) ||
	    !watching_long_enough(s, s->inf->nodes, now)) {
		if (!s->told_behind) {
			fprintf(stderr, "waiting for the informers to watch again (pods: %s)\n",
			        tj_reflector_last_error(s->inf->pods));
			fflush(stderr);
			s->told_behind = true;
		}
		return;
	}
	dump(s);
	stop(s, 0);
}

static void on_sigusr1(uv_signal_t *sig, int signum)
{
	struct state *s = sig->data;

	s->signalled = true;
	s->last_event_ms = uv_now(&s->loop);
}

int main(int argc, char **argv)
{
	const char *kubeconfig = NULL, *context = NULL, *ns = NULL;
	struct state s = { .exit_code = 1, .quiet_ms = 2000 };
	struct tj_informers_config ic = { 0 };
	struct tj_reflector_handlers h = { on_add, on_update, on_delete, NULL, NULL, &s };
	struct tj_kube_config *cfg;
	struct tj_kube_env env;
	char err[512];
	int r;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--kubeconfig") == 0 && i + 1 < argc)
			kubeconfig = argv[++i];
		else if (strcmp(argv[i], "--context") == 0 && i + 1 < argc)
			context = argv[++i];
		else if (strcmp(argv[i], "--namespace") == 0 && i + 1 < argc)
			ns = argv[++i];
		else if (strcmp(argv[i], "--quiet-ms") == 0 && i + 1 < argc)
			s.quiet_ms = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--wait-signal") == 0)
			s.wait_signal = true;
		else if (strcmp(argv[i], "--paginated-lists") == 0)
			ic.paginated_lists = true;
		else {
			fprintf(stderr, "usage: informer-dump [--kubeconfig FILE] [--context NAME] "
			                "[--namespace NS] [--quiet-ms N] [--wait-signal] "
			                "[--paginated-lists]\n");
			return 2;
		}
	}
	tj_kube_env_from_process(kubeconfig, &env);
	r = tj_kube_config_load(&env, context, TJ_KUBE_SA_DIR, &cfg, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "informer-dump: %s\n", err);
		return 1;
	}
	uv_loop_init(&s.loop);
	r = tj_client_new(&s.loop, cfg, NULL, &s.client);
	tj_kube_config_free(cfg);
	if (r < 0) {
		fprintf(stderr, "informer-dump: client: %s\n", strerror(-r));
		return 1;
	}
	ic.client = s.client;
	ic.namespace = ns;
	ic.pods.handlers = h;
	ic.nodes.handlers = h;
	r = tj_informers_new(&s.loop, &ic, &s.inf);
	if (r < 0) {
		fprintf(stderr, "informer-dump: informers: %s\n", strerror(-r));
		return 1;
	}
	uv_timer_init(&s.loop, &s.tick);
	s.tick.data = &s;
	uv_signal_init(&s.loop, &s.sigusr1);
	s.sigusr1.data = &s;
	uv_signal_start(&s.sigusr1, on_sigusr1, SIGUSR1);
	uv_update_time(&s.loop);
	s.start_ms = uv_now(&s.loop);
	tj_informers_start(s.inf);
	uv_timer_start(&s.tick, on_tick, 50, 50);
	uv_run(&s.loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&s.loop) != 0) {
		fprintf(stderr, "informer-dump: handles left open\n");
		return 3;
	}
	return s.exit_code;
}
