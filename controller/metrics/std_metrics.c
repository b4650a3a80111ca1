/* The metric families the controller feeds, as controller-runtime and client-go name them. */
#include "controller/metrics/std_metrics.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informers/store.h"
#include "reconcilers/admission/admission.h"
#include "reconcilers/plan/dependency.h"
#include "reconcilers/plan/plan.h"

/* controller-runtime's reconcile_time_seconds buckets; rest_client_request_duration_seconds
 * uses the same. */
static const double reconcile_buckets[] = {
	0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
	0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
	6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60,
};

/* From pending to running is seconds on a warm cluster and minutes when images are pulled
 * or nodes are scaled up. */
static const double time_to_running_buckets[] = {
	1, 2, 5, 10, 15, 30, 60, 120, 180, 300, 600, 900, 1800, 3600,
};

/* A queue's wait is seconds when a cluster has room and hours when it is full. */
static const double queue_wait_buckets[] = {
	1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 28800, 86400,
};

/* The controller's own part of an admission: milliseconds when it keeps up. */
static const double admission_latency_buckets[] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5,
};

static const char *const job_states[] = {
	"Pending", "Queued", "Running", "Restarting", "Suspended", "Complete", "Failed",
};

static const char *const reconcile_results[] = {
	"success",
	"error",
	"requeue",
	"requeue_after",
};

static const char *const l_controller[] = { "controller", NULL };
static const char *const l_controller_result[] = { "controller", "result", NULL };
static const char *const l_queue[] = { "name", "controller", NULL };
static const char *const l_queue_depth[] = { "name", "controller", "priority", NULL };
static const char *const l_rest[] = { "code", "method", "host", NULL };
static const char *const l_rest_duration[] = { "verb", "host", NULL };
static const char *const l_name[] = { "name", NULL };
static const char *const l_namespace_reason_class[] = { "namespace", "reason", "gpu_class", NULL };
static const char *const l_name_event[] = { "name", "event", NULL };
static const char *const l_resource[] = { "resource", NULL };
static const char *const l_class[] = { "gpu_class", NULL };
static const char *const l_namespace[] = { "namespace", NULL };
static const char *const l_qos_class[] = { "qos", "gpu_class", NULL };
static const char *const l_namespace_class_qos[] = { "namespace", "gpu_class", "qos", NULL };
static const char *const l_namespace_class_reason[] = { "namespace", "gpu_class", "reason", NULL };
static const char *const l_namespace_trainjob[] = { "namespace", "trainjob", NULL };

/* A gauge of a series per TrainJob that reports its progress, for as long as it has not
 * finished: as many as run at once. */
#define REPORT_GAUGE(n, h)                                                                         \
	{                                                                                          \
		.name = (n), .help = (h), .type = TJ_METRIC_GAUGE, .labels = l_namespace_trainjob, \
		.max_series = TJ_STD_METRICS_MAX_REPORTING_JOBS                                    \
	}
static const char *const l_class_state[] = { "gpu_class", "state", NULL };
static const char *const l_namespace_class[] = { "namespace", "gpu_class", NULL };
static const char *const l_namespace_class_state[] = { "namespace", "gpu_class", "state", NULL };
static const char *const l_namespace_class_outcome[] = { "namespace", "gpu_class", "outcome",
	                                                 NULL };

int tj_std_metrics_register(struct tj_metrics *reg, struct tj_std_metrics *ret)
{
	/* client-go's workqueue buckets: prometheus.ExponentialBuckets(10e-9, 10, 12), built
	 * by repeated multiplication exactly as there, so that the le labels match to the last
	 * digit (1e-06, then 9.999999999999999e-06). */
	double queue_buckets[12];
	struct tj_std_metrics m = { 0 };
	const struct {
		struct tj_metric_desc desc;
		struct tj_metric **out;
	} families[] = {
		{ TJ_COUNTER("controller_runtime_reconcile_total",
		             "Total number of reconciliations per controller", l_controller_result),
		  &m.reconcile_total },
		{ TJ_COUNTER("controller_runtime_reconcile_errors_total",
		             "Total number of reconciliation errors per controller", l_controller),
		  &m.reconcile_errors_total },
		{ TJ_COUNTER("controller_runtime_terminal_reconcile_errors_total",
		             "Total number of terminal reconciliation errors per controller",
		             l_controller),
		  &m.terminal_reconcile_errors_total },
		{ TJ_HISTOGRAM("controller_runtime_reconcile_time_seconds",
		               "Length of time per reconciliation per controller", l_controller,
		               reconcile_buckets),
		  &m.reconcile_time_seconds },
		{ TJ_GAUGE("controller_runtime_max_concurrent_reconciles",
		           "Maximum number of concurrent reconciles per controller", l_controller),
		  &m.max_concurrent_reconciles },
		{ TJ_GAUGE("controller_runtime_active_workers",
		           "Number of currently used workers per controller", l_controller),
		  &m.active_workers },
		{ TJ_GAUGE("workqueue_depth", "Current depth of workqueue", l_queue_depth),
		  &m.workqueue_depth },
		{ TJ_COUNTER("workqueue_adds_total", "Total number of adds handled by workqueue",
		             l_queue),
		  &m.workqueue_adds_total },
		{ TJ_HISTOGRAM(
		          "workqueue_queue_duration_seconds",
		          "How long in seconds an item stays in workqueue before being requested",
		          l_queue, queue_buckets),
		  &m.workqueue_queue_duration_seconds },
		{ TJ_HISTOGRAM("workqueue_work_duration_seconds",
		               "How long in seconds processing an item from workqueue takes",
		               l_queue, queue_buckets),
		  &m.workqueue_work_duration_seconds },
		{ TJ_GAUGE("workqueue_unfinished_work_seconds",
		           "Seconds of work in progress that work_duration has not observed yet; "
		           "a steady rise means a stuck worker",
		           l_queue),
		  &m.workqueue_unfinished_work_seconds },
		{ TJ_GAUGE(
		          "workqueue_longest_running_processor_seconds",
		          "How many seconds the longest running processor of the workqueue has run",
		          l_queue),
		  &m.workqueue_longest_running_processor_seconds },
		{ TJ_COUNTER("workqueue_retries_total",
		             "Total number of retries handled by workqueue", l_queue),
		  &m.workqueue_retries_total },
		{ TJ_COUNTER(
		          "rest_client_requests_total",
		          "Number of HTTP requests, partitioned by status code, method, and host",
		          l_rest),
		  &m.rest_client_requests_total },
		{ TJ_HISTOGRAM("rest_client_request_duration_seconds",
		               "Request latency in seconds, by verb and host", l_rest_duration,
		               reconcile_buckets),
		  &m.rest_client_request_duration_seconds },
		{ TJ_GAUGE(
		          "leader_election_master_status",
		          "1 while this process holds the lease named by 'name', 0 while it stands "
		          "by",
		          l_name),
		  &m.leader_election_master_status },
		{ TJ_COUNTER("leader_election_slowpath_total",
		             "Lease renewals that had to read the lease first, by lease name",
		             l_name),
		  &m.leader_election_slowpath_total },
		{ TJ_COUNTER("trainjob_leader_transitions_total",
		             "Times this process took (event acquired) or lost (event lost) the "
		             "lease named by 'name'",
		             l_name_event),
		  &m.trainjob_leader_transitions_total },
		{ TJ_GAUGE("trainjob_caches_synced",
		           "1 once every informer cache has listed its resource, 0 before (what "
		           "/readyz waits for)",
		           NULL),
		  &m.trainjob_caches_synced },
		{ TJ_COUNTER("trainjob_watch_restarts_total",
		             "Watches started again after the first, by resource: a stream the "
		             "server ended, broke or refused",
		             l_resource),
		  &m.trainjob_watch_restarts_total },
		{ TJ_COUNTER(
		          "trainjob_relists_total",
		          "Full lists after the first, by resource: after a 410 Gone or a failed "
		          "watch; a steady rise means the cache cannot keep up",
		          l_resource),
		  &m.trainjob_relists_total },
		{ TJ_COUNTER("trainjob_pods_created_total", "Worker pods created for TrainJobs",
		             NULL),
		  &m.trainjob_pods_created_total },
		{ TJ_COUNTER("trainjob_worker_restarts_total",
		             "Workers replaced after a failure, by namespace, the reason of the "
		             "failure and the job's GPU class",
		             l_namespace_reason_class),
		  &m.trainjob_worker_restarts_total },
		{ TJ_COUNTER(
		          "trainjob_stalled_total",
		          "TrainJobs found stalled (running, with no change of the progress they "
		          "report for their stall timeout) and restarted or, with the "
		          "infrastructure's restart budget spent, failed, by namespace and GPU "
		          "class",
		          l_namespace_class),
		  &m.trainjob_stalled_total },
		{ TJ_HISTOGRAM("trainjob_time_to_running_seconds",
		               "Seconds from a TrainJob's creation until all its workers run, by "
		               "namespace and GPU class",
		               l_namespace_class, time_to_running_buckets),
		  &m.trainjob_time_to_running_seconds },
		{ TJ_GAUGE("trainjob_jobs",
		           "TrainJobs by namespace, GPU class (\"\" when their runtime names none "
		           "the config knows) and state",
		           l_namespace_class_state),
		  &m.trainjob_jobs },
		{ TJ_COUNTER("trainjob_gpu_seconds_total",
		             "GPU-seconds held by TrainJobs' pods, by namespace, GPU class and "
		             "outcome: succeeded (attempts that completed their job), wasted "
		             "(attempts that failed), cancelled (jobs deleted before they ended)",
		             l_namespace_class_outcome),
		  &m.trainjob_gpu_seconds_total },
		{ TJ_GAUGE(
		          "trainjob_queue_jobs",
		          "TrainJobs waiting for admission, by namespace, GPU class and the reason "
		          "they wait (their status.reason)",
		          l_namespace_class_reason),
		  &m.trainjob_queue_jobs },
		{ REPORT_GAUGE(
		          "trainjob_progress_percent",
		          "Percent done, as the training code of a TrainJob that has not "
		          "finished last reported it (status.trainerStatus.progressPercentage)"),
		  &m.trainjob_progress_percent },
		{ REPORT_GAUGE("trainjob_eta_seconds",
		               "Seconds of training left, as the training code of a TrainJob that "
		               "has not finished last reported it "
		               "(status.trainerStatus.estimatedRemainingSeconds)"),
		  &m.trainjob_eta_seconds },
		{ TJ_HISTOGRAM("trainjob_queue_wait_seconds",
		               "Seconds from a TrainJob's creation until its gang was admitted, by "
		               "namespace, GPU class and QOS tier",
		               l_namespace_class_qos, queue_wait_buckets),
		  &m.trainjob_queue_wait_seconds },
		{ TJ_HISTOGRAM(
		          "trainjob_admission_latency_seconds",
		          "Seconds from the event that let a gang in (a pod that ended, a node "
		          "that changed, a job that arrived) until the creates of its pods were "
		          "sent: the controller's own share of starting a queued job",
		          NULL, admission_latency_buckets),
		  &m.trainjob_admission_latency_seconds },
		{ TJ_HISTOGRAM("trainjob_admission_cycle_duration_seconds",
		               "Seconds an admission cycle took to decide the whole queue from the "
		               "caches",
		               NULL, admission_latency_buckets),
		  &m.trainjob_admission_cycle_duration_seconds },
		{ TJ_COUNTER("trainjob_admission_decisions_total",
		             "Jobs decided by admission cycles (each cycle decides every waiting "
		             "job but those it leaves untried and those of classes whose input did "
		             "not change)",
		             NULL),
		  &m.trainjob_admission_decisions_total },
		{ TJ_COUNTER(
		          "trainjob_admission_untried_total",
		          "Jobs an admission cycle left untried, past admission.backfillMaxJobTest "
		          "tries of their class (a later cycle goes on from there)",
		          NULL),
		  &m.trainjob_admission_untried_total },
		{ TJ_GAUGE("trainjob_gpus",
		           "GPUs of the nodes that take new pods, by class: their capacity, what "
		           "pods hold (allocated), and what the head of the queue has reserved",
		           l_class_state),
		  &m.trainjob_gpus },
		{ TJ_GAUGE("trainjob_fair_share_usage_gpu_seconds",
		           "A namespace's GPU-seconds for fair share: its TrainJobs' recorded "
		           "GPU-seconds, each decayed by its age with admission.fairShareHalfLife",
		           l_namespace),
		  &m.trainjob_fair_share_usage_gpu_seconds },
		{ TJ_GAUGE("trainjob_fair_share_factor",
		           "A namespace's fair-share factor, 2^(-usage/share), both normalized: 1 "
		           "for one that used nothing, 0.5 for one that used its share",
		           l_namespace),
		  &m.trainjob_fair_share_factor },
		{ TJ_COUNTER(
		          "trainjob_preemptions_total",
		          "Running TrainJobs preempted for a queued job of a higher QOS tier, by "
		          "the preempted job's tier and GPU class",
		          l_qos_class),
		  &m.trainjob_preemptions_total },
		{ TJ_GAUGE("trainjob_job_gpus",
		           "GPUs of TrainJobs' pods by namespace and the class of their node: "
		           "requested (held or waited for), running, and idle (running in a gang "
		           "whose other pods do not all run yet)",
		           l_namespace_class_state),
		  &m.trainjob_job_gpus },
		{ TJ_COUNTER("trainjob_admissions_total", "Gangs admitted, by GPU class", l_class),
		  &m.trainjob_admissions_total },
		{ TJ_COUNTER("trainjob_backfills_total",
		             "Gangs admitted ahead of the blocked head of their queue", NULL),
		  &m.trainjob_backfills_total },
		{ TJ_GAUGE(
		          "trainjob_suspect_nodes",
		          "Nodes that carry the taint trainjob.flame.dev/suspect: ranks of several "
		          "TrainJobs failed there with an ending like the hardware's",
		          NULL),
		  &m.trainjob_suspect_nodes },
		{ TJ_COUNTER("trainjob_suspect_marks_total",
		             "Nodes the controller found suspect and tainted", NULL),
		  &m.trainjob_suspect_marks_total },
		{ TJ_GAUGE("trainjob_write_gate_waiting",
		           "Reconciles whose bookkeeping writes (Service, status, events) wait "
		           "while "
		           "pod writes go first",
		           NULL),
		  &m.trainjob_write_gate_waiting },
		{ TJ_GAUGE("trainjob_status_pass_waiting",
		           "TrainJobs whose status write waits: a queued job's (position, "
		           "expected start) for its turn, any job's for the answer of its write "
		           "in flight",
		           NULL),
		  &m.trainjob_status_pass_waiting },
		{ TJ_GAUGE("trainjob_status_pass_in_flight",
		           "Queued TrainJobs whose status write is in flight", NULL),
		  &m.trainjob_status_pass_in_flight },
		{ TJ_COUNTER("trainjob_write_gate_deferred_total",
		             "Times a reconcile's bookkeeping writes waited for pod writes", NULL),
		  &m.trainjob_write_gate_deferred_total },
		{ TJ_COUNTER("trainjob_write_gate_expired_total",
		             "Waits that ended by their time limit rather than by the pod writes "
		             "ending; a steady rise means endless load",
		             NULL),
		  &m.trainjob_write_gate_expired_total },
	};
	double b = 10e-9;
	int r;

	for (size_t i = 0; i < 12; i++, b *= 10)
		queue_buckets[i] = b;
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		r = tj_metrics_register(reg, &families[i].desc, families[i].out);
		if (r < 0)
			return r;
	}
	*ret = m;
	return 0;
}

int tj_std_metrics_init_controller(const struct tj_std_metrics *m, const char *controller,
                                   int max_concurrent_reconciles)
{
	const char *const *c = TJ_LABELS(controller);
	struct tj_series *s;
	int r;

	for (size_t i = 0; i < sizeof(reconcile_results) / sizeof(reconcile_results[0]); i++) {
		r = tj_metric_add(m->reconcile_total, TJ_LABELS(controller, reconcile_results[i]),
		                  0);
		if (r < 0)
			return r;
	}
	r = tj_metric_add(m->reconcile_errors_total, c, 0);
	if (r >= 0)
		r = tj_metric_add(m->terminal_reconcile_errors_total, c, 0);
	if (r >= 0)
		r = tj_metric_series(m->reconcile_time_seconds, c, &s);
	if (r >= 0)
		r = tj_metric_set(m->active_workers, c, 0);
	if (r >= 0)
		r = tj_metric_set(m->max_concurrent_reconciles, c, max_concurrent_reconciles);
	return r < 0 ? r : 0;
}

int tj_std_metrics_init_workqueue(const struct tj_std_metrics *m, const char *name)
{
	const char *const *q = TJ_LABELS(name, name);
	struct tj_series *s;
	int r;

	r = tj_metric_set(m->workqueue_depth, TJ_LABELS(name, name, ""), 0);
	if (r >= 0)
		r = tj_metric_add(m->workqueue_adds_total, q, 0);
	if (r >= 0)
		r = tj_metric_series(m->workqueue_queue_duration_seconds, q, &s);
	if (r >= 0)
		r = tj_metric_series(m->workqueue_work_duration_seconds, q, &s);
	if (r >= 0)
		r = tj_metric_set(m->workqueue_unfinished_work_seconds, q, 0);
	if (r >= 0)
		r = tj_metric_set(m->workqueue_longest_running_processor_seconds, q, 0);
	if (r >= 0)
		r = tj_metric_add(m->workqueue_retries_total, q, 0);
	return r < 0 ? r : 0;
}

void tj_std_metrics_observe_reconcile(const struct tj_std_metrics *m, const char *controller,
                                      const char *result, double seconds)
{
	const char *const *c = TJ_LABELS(controller);

	tj_metric_add(m->reconcile_total, TJ_LABELS(controller, result), 1);
	if (strcmp(result, "error") == 0)
		tj_metric_add(m->reconcile_errors_total, c, 1);
	tj_metric_observe(m->reconcile_time_seconds, c, seconds);
}

/* The namespace of a key "namespace/name". */
static int key_namespace(const char *key, char namespace[static TJ_STORE_KEY_MAX])
{
	const char *slash = strchr(key, '/');

	if (!slash || slash == key || (size_t)(slash - key) >= TJ_STORE_KEY_MAX)
		return -EINVAL;
	memcpy(namespace, key, (size_t)(slash - key));
	namespace[slash - key] = '\0';
	return 0;
}

int tj_std_metrics_add_for_key(struct tj_metric *m, const char *key, const char *a, const char *b,
                               double amount)
{
	char namespace[TJ_STORE_KEY_MAX];
	int r = key_namespace(key, namespace);

	return r < 0 ? r : tj_metric_add(m, (const char *[]){ namespace, a, b }, amount);
}

/* Observes value in a histogram labelled {namespace, gpu_class}, the namespace taken from key
 * as tj_std_metrics_add_for_key takes it. -EINVAL for a key without a namespace. */
static int observe_for_key(struct tj_metric *m, const char *key, const char *gpu_class,
                           double value)
{
	char namespace[TJ_STORE_KEY_MAX];
	int r = key_namespace(key, namespace);

	return r < 0 ? r : tj_metric_observe(m, TJ_LABELS(namespace, gpu_class), value);
}

int tj_std_metrics_observe_queue_wait(const struct tj_std_metrics *m, const char *key,
                                      const char *gpu_class, const char *qos, double value)
{
	char namespace[TJ_STORE_KEY_MAX];
	int r = key_namespace(key, namespace);

	return r < 0 ? r
	             : tj_metric_observe(m->trainjob_queue_wait_seconds,
	                                 TJ_LABELS(namespace, gpu_class, qos), value);
}

void tj_std_metrics_observe_request(const struct tj_http_observation *o, void *userdata)
{
	const struct tj_std_metrics *m = userdata;
	char code[24] = "<error>";

	if (o->status > 0)
		snprintf(code, sizeof(code), "%ld", o->status);
	tj_metric_add(m->rest_client_requests_total, TJ_LABELS(code, o->method, o->host), 1);
	tj_metric_observe(m->rest_client_request_duration_seconds, TJ_LABELS(o->method, o->host),
	                  o->seconds);
}

int64_t tj_std_metrics_time_to_running(const struct tj_trainjob_status *old,
                                       const struct tj_trainjob_status *new_status,
                                       int64_t creation_time, int64_t now)
{
	if (new_status->state != TJ_STATE_RUNNING || old->state == TJ_STATE_RUNNING ||
	    new_status->restart_count > 0 || creation_time <= 0 || now < creation_time)
		return -1;
	return now - creation_time;
}

void tj_std_metrics_count_status(const struct tj_std_metrics *m, const char *key,
                                 const char *gpu_class, const char *restart_reason, bool stalled,
                                 const struct tj_gpu_seconds_outcomes *gpu_seconds,
                                 int64_t running_after)
{
	if (restart_reason[0])
		tj_std_metrics_add_for_key(m->trainjob_worker_restarts_total, key, restart_reason,
		                           gpu_class, 1);
	if (stalled)
		tj_std_metrics_add_for_key(m->trainjob_stalled_total, key, gpu_class, NULL, 1);
	if (gpu_seconds->succeeded > 0)
		tj_std_metrics_add_for_key(m->trainjob_gpu_seconds_total, key, gpu_class,
		                           TJ_GPU_OUTCOME_SUCCEEDED,
		                           (double)gpu_seconds->succeeded);
	if (gpu_seconds->wasted > 0)
		tj_std_metrics_add_for_key(m->trainjob_gpu_seconds_total, key, gpu_class,
		                           TJ_GPU_OUTCOME_WASTED, (double)gpu_seconds->wasted);
	if (running_after >= 0)
		observe_for_key(m->trainjob_time_to_running_seconds, key, gpu_class,
		                (double)running_after);
}

/* The reasons a Queued job waits for: the queue's, in tj_admission_reason_index's order, then
 * those of a job the queue does not consider yet (held, waiting for a dependency) or that
 * was sent back to it (preempted, requeued). */
static const char *const queue_reasons[] = {
	TJ_ADMISSION_REASON_RESOURCES, TJ_ADMISSION_REASON_PRIORITY, TJ_ADMISSION_REASON_QUOTA,
	TJ_ADMISSION_REASON_NEVER,     TJ_ADMISSION_REASON_QOS_GPUS, TJ_REASON_HELD,
	TJ_REASON_DEPENDENCY,          TJ_REASON_PREEMPTED,          TJ_REASON_REQUEUED,
};

static int queue_reason_index(const char *reason)
{
	for (size_t k = 0; reason && k < sizeof(queue_reasons) / sizeof(queue_reasons[0]); k++)
		if (strcmp(reason, queue_reasons[k]) == 0)
			return (int)k;
	return -1;
}

static int feed_queue(const struct tj_std_metrics *m, const struct tj_job_series *j)
{
	int reason = j->state == TJ_STATE_QUEUED ? queue_reason_index(j->reason) : -1;
	int r = 0;

	for (size_t k = 0; r >= 0 && k < sizeof(queue_reasons) / sizeof(queue_reasons[0]); k++)
		r = tj_metric_add(m->trainjob_queue_jobs,
		                  TJ_LABELS(j->namespace, j->gpu_class, queue_reasons[k]),
		                  (int)k == reason ? 1 : 0);
	return r;
}

static int feed_report(const struct tj_std_metrics *m, const struct tj_job_series *j)
{
	int r = 0;

	if (j->progress_percent >= 0)
		r = tj_metric_set(m->trainjob_progress_percent, TJ_LABELS(j->namespace, j->name),
		                  j->progress_percent);
	if (r >= 0 && j->eta_seconds >= 0)
		r = tj_metric_set(m->trainjob_eta_seconds, TJ_LABELS(j->namespace, j->name),
		                  (double)j->eta_seconds);
	return r;
}

int tj_std_metrics_feed_jobs(const struct tj_std_metrics *m, const struct tj_job_series *jobs,
                             size_t n_jobs)
{
	int r = 0;

	tj_metric_remove_series(m->trainjob_jobs, NULL, NULL);
	tj_metric_remove_series(m->trainjob_queue_jobs, NULL, NULL);
	tj_metric_remove_series(m->trainjob_progress_percent, NULL, NULL);
	tj_metric_remove_series(m->trainjob_eta_seconds, NULL, NULL);
	for (size_t i = 0; r >= 0 && i < n_jobs; i++) {
		const struct tj_job_series *j = &jobs[i];
		enum tj_state state = j->state == TJ_STATE_NONE ? TJ_STATE_PENDING : j->state;

		/* Every state of the pair is there, at 0 when no job has it: a panel or an alert
		 * on Failed jobs of a namespace reads 0, not nothing. */
		for (size_t k = 0; r >= 0 && k < sizeof(job_states) / sizeof(job_states[0]); k++)
			r = tj_metric_add(m->trainjob_jobs,
			                  TJ_LABELS(j->namespace, j->gpu_class, job_states[k]), 0);
		if (r >= 0)
			r = tj_metric_add(
			        m->trainjob_jobs,
			        TJ_LABELS(j->namespace, j->gpu_class, tj_state_name(state)), 1);
		if (r >= 0)
			r = feed_queue(m, j);
		if (r >= 0 && state != TJ_STATE_COMPLETE && state != TJ_STATE_FAILED)
			r = feed_report(m, j);
	}
	return r < 0 ? r : 0;
}

static int by_namespace(const void *a, const void *b)
{
	const struct tj_pod *x = *(const struct tj_pod *const *)a;
	const struct tj_pod *y = *(const struct tj_pod *const *)b;

	return strcmp(x->namespace, y->namespace);
}

/* The series of one namespace: the classes its pods request GPUs of. */
static int set_gpu_use(const struct tj_std_metrics *m, const struct tj_config *config,
                       const char *namespace, const struct tj_gpu_use *use)
{
	int r = 0;

	for (size_t i = 0; r >= 0 && i < config->n_classes; i++) {
		const char *name = config->classes[i].name;

		if (use[i].requested == 0)
			continue;
		r = tj_metric_set(m->trainjob_job_gpus, TJ_LABELS(namespace, name, "requested"),
		                  (double)use[i].requested);
		if (r >= 0)
			r = tj_metric_set(m->trainjob_job_gpus,
			                  TJ_LABELS(namespace, name, "running"),
			                  (double)use[i].running);
		if (r >= 0)
			r = tj_metric_set(m->trainjob_job_gpus, TJ_LABELS(namespace, name, "idle"),
			                  (double)use[i].idle);
	}
	return r;
}

int tj_std_metrics_feed_gpu_use(const struct tj_std_metrics *m, const struct tj_config *config,
                                const struct tj_pod *const *pods, size_t n_pods,
                                tj_gpu_use_node_fn node, void *ctx)
{
	const struct tj_pod **sorted = malloc((n_pods ? n_pods : 1) * sizeof(*sorted));
	struct tj_gpu_use *use = calloc(config->n_classes ? config->n_classes : 1, sizeof(*use));
	int r = -ENOMEM;

	if (!sorted || !use)
		goto out;
	if (n_pods)
		memcpy(sorted, pods, n_pods * sizeof(*sorted));
	qsort(sorted, n_pods, sizeof(*sorted), by_namespace);
	tj_metric_remove_series(m->trainjob_job_gpus, NULL, NULL);
	r = 0;
	for (size_t start = 0, end; r >= 0 && start < n_pods; start = end) {
		for (end = start;
		     end < n_pods && strcmp(sorted[start]->namespace, sorted[end]->namespace) == 0;
		     end++)
			;
		r = tj_gpu_use_count(config, sorted + start, end - start, node, ctx, use);
		if (r >= 0)
			r = set_gpu_use(m, config, sorted[start]->namespace, use);
	}
out:
	free(sorted);
	free(use);
	return r < 0 ? r : 0;
}

/* The number of starts after the first that a total of starts has grown by since seen. */
static double restarts_since(uint64_t total, uint64_t *seen)
{
	uint64_t before = *seen;

	*seen = total;
	if (total <= before)
		return 0;
	return (double)(total - (before ? before : 1));
}

int tj_std_metrics_feed_reflector(const struct tj_std_metrics *m, const char *resource,
                                  const struct tj_reflector_stats *st,
                                  struct tj_reflector_seen *seen)
{
	const char *const *r = TJ_LABELS(resource);
	int rc;

	rc = tj_metric_add(m->trainjob_relists_total, r, restarts_since(st->lists, &seen->lists));
	if (rc >= 0)
		rc = tj_metric_add(m->trainjob_watch_restarts_total, r,
		                   restarts_since(st->watches, &seen->watches));
	return rc < 0 ? rc : 0;
}
