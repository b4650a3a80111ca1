#include "controller/run.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <uv.h>

#include "controller/config/config_watch.h"
#include "controller/controller.h"
#include "controller/discovery.h"
#include "controller/executor/recorder.h"
#include "controller/http/health.h"
#include "controller/http/http.h"
#include "controller/http/metrics_auth.h"
#include "controller/http/serving_cert.h"
#include "controller/http/trainer_status_server.h"
#include "controller/job_series.h"
#include "controller/leader/leader.h"
#include "controller/log/log.h"
#include "controller/metrics/namespace_series.h"
#include "controller/metrics/process_metrics.h"
#include "controller/metrics/std_metrics.h"
#include "controller/signals.h"
#include "informers/informers.h"
#include "kube/client.h"
#include "kube/config.h"
#include "tj-version.h"

/* Everything the running process holds, torn down in reverse order on shutdown. */
struct run {
	uv_loop_t loop;
	struct tj_kube_config *kube;          /* owned */
	struct tj_client *client;             /* owned */
	struct tj_client *watch_client;       /* owned: the caches' (load_kube) */
	struct tj_config_watch *config;       /* owned; NULL without --config */
	struct tj_metrics *metrics;           /* owned */
	struct tj_std_metrics std;            /* families owned by metrics */
	struct tj_health *health;             /* owned */
	struct tj_http_server *metrics_http;  /* owned; NULL if disabled */
	struct tj_http_server *probes_http;   /* owned; NULL if disabled */
	struct tj_serving_cert *metrics_cert; /* owned; NULL for plain HTTP */
	struct tj_metrics_auth *metrics_auth; /* owned; NULL for plain HTTP */
	/* owned; NULL if disabled; presents metrics_cert */
	struct tj_trainer_status_server *trainer_status;
	struct tj_recorder *recorder;     /* owned */
	struct tj_controller *controller; /* owned */
	struct tj_leader *leader;         /* owned; NULL without --leader-elect */
	struct tj_signals *signals;       /* owned */
	/* What the counters fed from the queue's and the gate's totals have been given. */
	uint64_t adds_seen, retries_seen, deferred_seen, expired_seen;
	struct tj_reflector_seen reflectors_seen[7];
	struct tj_namespace_series *namespaces; /* owned */
	const struct tj_config *classes;        /* borrowed: the built-in ones or config's */
	int exit_status;
};

static int check_synced(void *userdata, char *reason, size_t len)
{
	struct run *r = userdata;

	if (r->controller && tj_controller_synced(r->controller))
		return 0;
	snprintf(reason, len, "the informers have not listed every resource yet");
	return -EAGAIN;
}

/* Adds to a counter what a running total has grown by since the last scrape. */
static void feed_counter(struct tj_metric *m, const char *const *labels, uint64_t total,
                         uint64_t *seen)
{
	tj_metric_add(m, labels, (double)(total - *seen));
	*seen = total;
}

static void collect_reflectors(struct run *r)
{
	const struct tj_informers *inf = tj_controller_informers(r->controller);
	const struct {
		const char *resource;
		const struct tj_reflector *reflector;
	} caches[] = {
		{ "trainjobs", inf->trainjobs },
		{ "trainingruntimes", inf->training_runtimes },
		{ "clustertrainingruntimes", inf->cluster_training_runtimes },
		{ "pods", inf->pods },
		{ "nodes", inf->nodes },
		{ "priorityclasses", inf->priority_classes },
		{ "resourcequotas", inf->resource_quotas },
	};
	struct tj_reflector_stats st;

	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		if (!caches[i].reflector)
			continue;
		tj_reflector_stats(caches[i].reflector, &st);
		tj_std_metrics_feed_reflector(&r->std, caches[i].resource, &st,
		                              &r->reflectors_seen[i]);
	}
}

static const struct tj_node *node_by_name(const char *name, void *ctx)
{
	return tj_store_get(ctx, name);
}

/* trainjob_job_gpus from the pod cache. A scrape every few seconds over the pods of a large
 * cluster costs a sort of their pointers, well under the render of the text. */
static void collect_gpu_use(struct run *r)
{
	const struct tj_informers *inf = tj_controller_informers(r->controller);
	const struct tj_store *pods = tj_reflector_store(inf->pods);
	size_t n = 0, cap = tj_store_len(pods);
	const struct tj_pod **all = malloc((cap ? cap : 1) * sizeof(*all));
	struct tj_store_iter it;
	const struct tj_pod *p;

	if (!all)
		return;
	tj_store_iter_init(pods, &it);
	while (n < cap && (p = tj_store_iter_next(&it)))
		all[n++] = p;
	tj_std_metrics_feed_gpu_use(&r->std, r->classes, all, n, node_by_name,
	                            (void *)tj_reflector_store(inf->nodes));
	free(all);
}

/* trainjob_jobs from the TrainJob cache, and the counters and histograms of the namespaces
 * without a job any more swept (controller/metrics/namespace_series.h). */
static void collect_jobs(struct run *r)
{
	struct tj_metric *const per_namespace[] = {
		r->std.trainjob_worker_restarts_total, r->std.trainjob_stalled_total,
		r->std.trainjob_gpu_seconds_total,     r->std.trainjob_time_to_running_seconds,
		r->std.trainjob_queue_wait_seconds,
	};
	struct tj_job_series *jobs;
	const char **live;
	size_t n;
	int rc;

	if (tj_controller_job_series(r->controller, &jobs, &n) < 0)
		return;
	tj_std_metrics_feed_jobs(&r->std, jobs, n);
	live = malloc((n ? n : 1) * sizeof(*live));
	rc = live ? 0 : -ENOMEM;
	for (size_t i = 0; live && i < n; i++)
		live[i] = jobs[i].namespace;
	if (live)
		rc = tj_namespace_series_sweep(r->namespaces, live, n, uv_now(&r->loop),
		                               per_namespace,
		                               sizeof(per_namespace) / sizeof(per_namespace[0]));
	if (rc < 0)
		tj_log_error("metrics", "could not sweep the series of namespaces without jobs",
		             TJ_ERR(rc));
	free(live);
	free(jobs);
}

static void collect_queue(void *userdata)
{
	struct run *r = userdata;
	struct tj_workqueue_stats st;
	const char *name[] = { TJ_CONTROLLER_NAME, TJ_CONTROLLER_NAME, "" };

	if (!r->controller)
		return;
	tj_controller_queue_stats(r->controller, &st);
	tj_metric_set(r->std.workqueue_depth, name, (double)st.depth);
	tj_metric_set(r->std.active_workers, name, (double)st.in_flight);
	feed_counter(r->std.workqueue_adds_total, name, st.adds, &r->adds_seen);
	feed_counter(r->std.workqueue_retries_total, name, st.retries, &r->retries_seen);
	tj_metric_set(r->std.workqueue_unfinished_work_seconds, name, st.unfinished_seconds);
	tj_metric_set(r->std.workqueue_longest_running_processor_seconds, name, st.longest_seconds);
	tj_metric_set(r->std.trainjob_caches_synced, NULL, tj_controller_synced(r->controller));
	collect_reflectors(r);
	collect_gpu_use(r);
	collect_jobs(r);

	struct tj_write_gate_stats gs;

	tj_controller_gate_stats(r->controller, &gs);
	tj_metric_set(r->std.trainjob_write_gate_waiting, NULL, (double)gs.waiting);
	tj_metric_set(r->std.trainjob_status_pass_waiting, NULL, (double)gs.pass_waiting);
	tj_metric_set(r->std.trainjob_status_pass_in_flight, NULL, (double)gs.pass_in_flight);
	feed_counter(r->std.trainjob_write_gate_deferred_total, NULL, gs.deferred_total,
	             &r->deferred_seen);
	feed_counter(r->std.trainjob_write_gate_expired_total, NULL, gs.expired_total,
	             &r->expired_seen);
}

static void config_reloaded(const struct tj_config *config, int error, const char *message,
                            void *userdata)
{
	struct run *r = userdata;

	if (error < 0) {
		tj_log_error("config", "kept the previous GPU classes: the new file is broken",
		             TJ_STR("problem", message));
		return;
	}
	tj_log_info("config", "reloaded the GPU classes",
	            TJ_INT("classes", (long long)config->n_classes));
	r->classes = config;
	tj_controller_set_config(r->controller, config);
}

/* After the metrics server has closed (which cancels the reviews still in flight). The
 * certificate's poll timer would keep the loop running. */
static void close_metrics_security(struct run *r)
{
	r->metrics_auth = tj_metrics_auth_free(r->metrics_auth);
	tj_serving_cert_free(r->metrics_cert);
	r->metrics_cert = NULL;
}

/* The last step of the shutdown: every write has stopped and the lease is released. */
static void released(void *userdata)
{
	struct run *r = userdata;

	tj_http_server_close(r->metrics_http);
	tj_http_server_close(r->probes_http);
	tj_trainer_status_server_close(r->trainer_status);
	r->trainer_status = NULL;
	close_metrics_security(r);
	tj_config_watch_stop(r->config);
	r->metrics_http = r->probes_http = NULL;
	r->config = NULL;
	r->controller = tj_controller_free(r->controller);
	r->recorder = tj_recorder_free(r->recorder);
	tj_leader_close(r->leader);
	r->leader = NULL;
	r->client = tj_client_free(r->client);
	r->watch_client = tj_client_free(r->watch_client);
	tj_signals_close(r->signals);
}

static void controller_stopped(void *userdata)
{
	struct run *r = userdata;

	tj_log_info("controller", "stopped");
	/* ReleaseOnCancel: only now that no reconcile writes any more may another replica
	 * take over. */
	if (r->leader)
		tj_leader_release(r->leader, released, r);
	else
		released(r);
}

static void started_leading(void *userdata)
{
	struct run *r = userdata;

	tj_controller_set_leading(r->controller, true);
}

/* controller-runtime ends the process when it loses the lease ("leader election lost"),
 * and the pod restarts as a follower: no state of the old term survives. A loss during a
 * shutdown a signal began leaves that shutdown's status. */
static void stopped_leading(void *userdata)
{
	struct run *r = userdata;

	tj_controller_set_leading(r->controller, false);
	r->exit_status = tj_leader_lost_exit_status(tj_signals_stopping(r->signals));
	tj_signals_shutdown(r->signals);
}

static void shutdown_requested(void *userdata, int signum)
{
	struct run *r = userdata;

	tj_log_info("controller", "shutting down", TJ_INT("signal", signum));
	tj_controller_stop(r->controller, controller_stopped, r);
}

/* Every answered request counts in the metrics and, at the debug level, has a line of its own
 * (client-go's request log at -v=6): which writes went out, and how long each took. */
static void observe_request(const struct tj_http_observation *o, void *userdata)
{
	tj_std_metrics_observe_request(o, userdata);
	if (tj_log_enabled(TJ_LOG_DEBUG))
		tj_log_debug("kube", "request", TJ_STR("verb", o->method), TJ_STR("url", o->url),
		             TJ_INT("status", o->status), TJ_DOUBLE("seconds", o->seconds));
}

static int load_kube(struct run *r, const struct tj_flags *flags)
{
	struct tj_kube_env env;
	char err[512];
	int rc;

	tj_kube_env_from_process(flags->run.kubeconfig[0] ? flags->run.kubeconfig : NULL, &env);
	rc = tj_kube_config_load(&env, flags->run.context[0] ? flags->run.context : NULL,
	                         TJ_KUBE_SA_DIR, &r->kube, err, sizeof(err));
	if (rc < 0) {
		tj_log_error("kube", "no usable cluster configuration", TJ_STR("problem", err));
		return rc;
	}
	tj_log_info("kube", "using cluster", TJ_STR("server", r->kube->server),
	            TJ_STR("from", r->kube->origin), TJ_STR("context", r->kube->context));
	struct tj_client_options opts = {
		.qps = flags->run.qps,
		.burst = flags->run.burst ? flags->run.burst : (int)(flags->run.qps * 2 + 1),
		/* The families are registered before the loop runs the first request. */
		.transport = { .observe = observe_request, .observe_userdata = &r->std },
	};

	/* Two clients, each with its own connections. On one HTTP/2 connection shared with a
	 * burst's writes, the watches' events (thousands a second) were read late, and the API
	 * server ended the watches, which were listed again (5,000 TrainJobs, seconds each). */
	rc = tj_client_new(&r->loop, r->kube, &opts, &r->watch_client);
	return rc < 0 ? rc : tj_client_new(&r->loop, r->kube, &opts, &r->client);
}

/* The in-cluster namespace, as controller-runtime finds it; outside a cluster "default"
 * (controller-runtime refuses to start there without the flag). */
static const char *lease_namespace(const struct run *r, const struct tj_flags *flags)
{
	if (flags->run.leader_election_namespace[0])
		return flags->run.leader_election_namespace;
	if (strcmp(r->kube->origin, "in-cluster") == 0 && r->kube->namespace)
		return r->kube->namespace;
	return "default";
}

static int start_leader_election(struct run *r, const struct tj_flags *flags, const char *host)
{
	uint8_t random[16];
	char identity[TJ_LEASE_HOLDER_MAX];
	int rc;

	if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random))
		return -errno;
	rc = tj_leader_identity(host, random, identity, sizeof(identity));
	if (rc < 0)
		return rc;
	struct tj_leader_config lc = {
		.client = r->client,
		.namespace = lease_namespace(r, flags),
		.name = flags->run.leader_election_id,
		.identity = identity,
		.timings = flags->run.leader_timings,
		.metrics = &r->std,
		.on_started_leading = started_leading,
		.on_stopped_leading = stopped_leading,
		.userdata = r,
	};
	return tj_leader_start(&r->loop, &lc, &r->leader);
}

static const struct tj_config *load_gpu_classes(struct run *r, const struct tj_flags *flags)
{
	char err[512];
	int rc;

	if (!flags->run.config[0]) {
		tj_log_info("config", "no --config: using the built-in GPU classes gh200 and h100");
		return tj_config_builtin();
	}
	rc = tj_config_watch_start(&r->loop, flags->run.config, 200, config_reloaded, r, &r->config,
	                           err, sizeof(err));
	if (rc < 0) {
		tj_log_error("config", "cannot load the config file", TJ_STR("problem", err));
		return NULL;
	}
	return tj_config_watch_config(r->config);
}

static int serving_cert(struct run *r, const struct tj_flags *flags, const char *host)
{
	const char *names[] = { host, "localhost", "127.0.0.1", "::1" };
	char cert_path[PATH_MAX + 16], key_path[PATH_MAX + 16], err[512];
	char *cert = NULL, *key = NULL;
	int rc;

	if (flags->run.metrics_cert_path[0]) {
		snprintf(cert_path, sizeof(cert_path), "%s/tls.crt", flags->run.metrics_cert_path);
		snprintf(key_path, sizeof(key_path), "%s/tls.key", flags->run.metrics_cert_path);
		rc = tj_serving_cert_watch(&r->loop, cert_path, key_path, TJ_SERVING_CERT_POLL_MS,
		                           &r->metrics_cert, err, sizeof(err));
		if (rc < 0)
			tj_log_error("http", "no usable serving certificate",
			             TJ_STR("problem", err));
		return rc;
	}
	rc = tj_serving_cert_self_signed(names, sizeof(names) / sizeof(names[0]),
	                                 (int64_t)time(NULL), &cert, &key);
	if (rc == 0)
		rc = tj_serving_cert_from_pem(cert, strlen(cert), key, strlen(key),
		                              &r->metrics_cert, err, sizeof(err));
	if (key)
		explicit_bzero(key, strlen(key));
	free(cert);
	free(key);
	if (rc < 0)
		tj_log_error("http", "cannot make a self-signed serving certificate", TJ_ERR(rc));
	else
		tj_log_info("http", "serving metrics with a self-signed certificate",
		            TJ_STR("name", host));
	return rc;
}

static int serve_metrics(struct run *r, const struct tj_flags *flags, const char *host)
{
	bool in_cluster = strcmp(r->kube->origin, "in-cluster") == 0;
	bool secure = tj_flags_metrics_secure(&flags->run, in_cluster);
	struct tj_metrics_security sec = { 0 };
	int rc;

	if (secure && !flags->metrics_addr.disabled) {
		if ((rc = serving_cert(r, flags, host)) < 0 ||
		    (rc = tj_metrics_auth_new(r->client, &r->metrics_auth)) < 0)
			return rc;
		sec = (struct tj_metrics_security){ .cert = r->metrics_cert,
			                            .auth = r->metrics_auth };
	} else if (in_cluster && !flags->metrics_addr.disabled) {
		tj_log_warn("http",
		            "serving metrics over plain HTTP to anyone (--metrics-secure=false)");
	}
	return tj_http_serve_metrics_secured(&r->loop, &flags->metrics_addr, r->metrics, &sec,
	                                     &r->metrics_http);
}

/* A report whose status write the API server refused shows on its TrainJob as a Warning
 * Event, beside the answer its pod got. */
static void trainer_status_refused(void *userdata, const char *ns, const char *name,
                                   const char *message)
{
	struct run *r = userdata;
	const struct tj_store *jobs =
	        tj_reflector_store(tj_controller_informers(r->controller)->trainjobs);
	const struct tj_trainjob *job;
	char key[TJ_KEY_MAX], text[TJ_MESSAGE_MAX];
	struct timespec ts;

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	job = tj_store_get(jobs, key);
	if (!job)
		return;
	snprintf(text, sizeof(text), "the API server refused the trainerStatus a pod reported: %s",
	         message);
	clock_gettime(CLOCK_REALTIME, &ts);
	tj_recorder_record(
	        r->recorder,
	        &(struct tj_event_object){ .namespace = ns, .name = name, .uid = job->uid }, true,
	        "TrainerStatusRefused", text, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

static int serve(struct run *r, const struct tj_flags *flags, const char *host)
{
	int rc;

	rc = serve_metrics(r, flags, host);
	if (rc < 0) {
		tj_log_error("http", "cannot serve metrics",
		             TJ_STR("port", flags->metrics_addr.port), TJ_ERR(rc));
		return rc;
	}
	/* Always HTTPS: the pods send their tokens. It presents the metrics' certificate. */
	if (!flags->trainer_status_addr.disabled) {
		rc = r->metrics_cert ? 0 : serving_cert(r, flags, host);
		if (rc == 0)
			rc = tj_trainer_status_serve(&r->loop, &flags->trainer_status_addr,
			                             r->metrics_cert, r->client,
			                             trainer_status_refused, r, &r->trainer_status);
		if (rc < 0) {
			tj_log_error("http", "cannot serve the trainer status API",
			             TJ_STR("port", flags->trainer_status_addr.port), TJ_ERR(rc));
			return rc;
		}
	}
	rc = tj_http_serve_probes(&r->loop, &flags->probe_addr, r->health, &r->probes_http);
	if (rc < 0)
		tj_log_error("http", "cannot serve probes", TJ_STR("port", flags->probe_addr.port),
		             TJ_ERR(rc));
	return rc;
}

static int setup(struct run *r, const struct tj_flags *flags)
{
	const struct tj_config *classes;
	char host[256] = "localhost";
	bool native_gang = false;
	int rc;

	rc = load_kube(r, flags);
	if (rc < 0)
		return rc;
	classes = load_gpu_classes(r, flags);
	if (!classes)
		return -EINVAL;
	if ((rc = tj_metrics_new(&r->metrics)) < 0 ||
	    (rc = tj_std_metrics_register(r->metrics, &r->std)) < 0 ||
	    (rc = tj_namespace_series_new(TJ_NAMESPACE_SERIES_GRACE_MS, &r->namespaces)) < 0 ||
	    (rc = tj_std_metrics_init_controller(&r->std, TJ_CONTROLLER_NAME,
	                                         TJ_CONTROLLER_MAX_CONCURRENT)) < 0 ||
	    (rc = tj_std_metrics_init_workqueue(&r->std, TJ_CONTROLLER_NAME)) < 0 ||
	    (rc = tj_metrics_register_process(r->metrics, "/proc")) < 0 ||
	    (rc = tj_metrics_add_collector(r->metrics, collect_queue, NULL, r)) < 0)
		return rc;
	/* Before anything else is on the loop, which the discovery runs until it has its
	 * answer; after the metrics, which count its request. */
	rc = tj_discover_native_gang(r->client, &native_gang);
	if (rc < 0)
		return rc;
	if ((rc = tj_health_new(&r->health)) < 0 ||
	    (rc = tj_health_add(r->health, TJ_READYZ, "informers-synced", check_synced, r)) < 0)
		return rc;
	gethostname(host, sizeof(host) - 1);
	if ((rc = tj_recorder_new(r->client, "trainjob-controller", host, &r->recorder)) < 0)
		return rc;

	struct tj_controller_config cc = {
		.client = r->client,
		.watch_client = r->watch_client,
		.recorder = r->recorder,
		.metrics = &r->std,
		.namespace = flags->run.namespace[0] ? flags->run.namespace : NULL,
		.paginated_lists = flags->run.paginated_lists,
		.native_gang = native_gang,
		.kueue = flags->run.kueue,
	};
	if ((rc = tj_controller_new(&r->loop, &cc, &r->controller)) < 0)
		return rc;
	r->classes = classes;
	tj_controller_set_config(r->controller, classes);
	if ((rc = serve(r, flags, host)) < 0)
		return rc;
	if ((rc = tj_signals_new(&r->loop, TJ_SHUTDOWN_GRACE_MS_DEFAULT, &r->signals)) < 0 ||
	    (rc = tj_signals_on_shutdown(r->signals, shutdown_requested, r)) < 0)
		return rc;
	if ((rc = tj_controller_start(r->controller)) < 0)
		return rc;
	/* The caches fill on every replica; only the leader reconciles. Without leader
	 * election this process is the only writer. */
	if (flags->run.leader_elect)
		return start_leader_election(r, flags, host);
	tj_controller_set_leading(r->controller, true);
	return 0;
}

static void teardown(struct run *r)
{
	tj_http_server_close(r->metrics_http);
	tj_http_server_close(r->probes_http);
	tj_trainer_status_server_close(r->trainer_status);
	r->trainer_status = NULL;
	close_metrics_security(r);
	tj_config_watch_stop(r->config);
	tj_controller_free(r->controller);
	tj_recorder_free(r->recorder);
	tj_leader_close(r->leader);
	tj_client_free(r->client);
	tj_client_free(r->watch_client);
	if (r->signals)
		tj_signals_close(r->signals);
	/* Let the close callbacks of every handle run before the memory goes. */
	uv_run(&r->loop, UV_RUN_DEFAULT);
	tj_health_free(r->health);
	tj_metrics_free(r->metrics);
	tj_namespace_series_free(r->namespaces);
	tj_kube_config_free(r->kube);
}

int tj_run(const struct tj_flags *flags)
{
	struct run *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return EXIT_FAILURE;
	tj_log_set_level(flags->log_level);
	rc = uv_loop_init(&r->loop);
	if (rc < 0) {
		free(r);
		return EXIT_FAILURE;
	}
	tj_log_info("controller", "starting", TJ_STR("version", TJ_VERSION));
	rc = setup(r, flags);
	if (rc < 0) {
		tj_log_error("controller", "could not start", TJ_ERR(rc));
		teardown(r);
		uv_loop_close(&r->loop);
		free(r);
		return EXIT_FAILURE;
	}
	uv_run(&r->loop, UV_RUN_DEFAULT);
	r->signals = NULL; /* closed by controller_stopped */
	teardown(r);
	uv_loop_close(&r->loop);
	rc = r->exit_status;
	free(r);
	return rc;
}
