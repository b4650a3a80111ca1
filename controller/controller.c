#include "controller/controller.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/list.h"
#include "controller/admission/admitter.h"
#include "controller/executor/executor.h"
#include "controller/executor/write_gate.h"
#include "controller/expectations.h"
#include "controller/job_lookup.h"
#include "controller/log/log.h"
#include "controller/stall_clock.h"
#include "controller/stores.h"
#include "controller/suspect_nodes.h"
#include "controller/workqueue.h"
#include "informers/informers.h"
#include "informers/priority_class.h"
#include "informers/resource_quota.h"
#include "informers/workload.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/runtime.h"
#include "reconcilers/runtime_snapshot.h"
#include "reconcilers/trainjob.h"
#include "reconcilers/usage/gpu_seconds.h"

/* Pods one TrainJob may own: two attempts of its largest size, and some. A job that owns
 * more (something else creates pods in its name) is not planned: a plan from part of its
 * pods could create or delete the wrong ones. */
#define MAX_PODS_PER_JOB (2 * TJ_MAX_NODES + 64)

/* A key being reconciled. */
struct reconcile {
	struct tj_link link;                /* in the controller's in_flight */
	struct tj_controller *c;            /* borrowed */
	char key[TJ_STORE_KEY_MAX];         /* the TrainJob's "namespace/name" */
	struct tj_execution *execution;     /* borrowed; freed by the executor */
	char restart_reason[TJ_REASON_MAX]; /* the plan's, counted once its status is written */
	bool stalled;                       /* likewise */
	uint64_t start_ns;
	/* The plan creates an admitted gang: counted once its creates succeeded, or its nodes
	 * go back to the queue. */
	bool admits, backfilled, first_start;
	char gpu_class[TJ_NAME_MAX];
	char qos[64];
	/* The GPU-seconds the plan's status patch decides, counted once it is written. */
	struct tj_gpu_seconds_outcomes gpu_seconds;
	int64_t creation_time;
	unsigned creates;      /* the pod creates of its plan */
	int64_t running_after; /* trainjob_time_to_running_seconds once its status is written */
	/* The cache showed every pod write of the job's previous plan (its expectations were
	 * seen, not given up at their deadline): a pod it created and the cache lacks is gone. */
	bool writes_shown;
	/* Only its deferrable writes are left (waiting for the write gate, or in flight in the
	 * last stage): the key went back to the workqueue, and a newer reconcile may run. */
	bool parked;
};

struct tj_controller {
	uv_loop_t *loop;                      /* borrowed */
	struct tj_client *client;             /* borrowed */
	struct tj_recorder *recorder;         /* borrowed */
	const struct tj_std_metrics *metrics; /* borrowed */
	const struct tj_config *config;       /* borrowed */
	uint64_t (*clock)(void);
	struct tj_informers *informers;       /* owned */
	struct tj_workqueue *queue;           /* owned */
	struct tj_write_gate *gate;           /* owned */
	struct tj_service_memo *services;     /* owned */
	struct tj_expectations *expectations; /* owned */
	struct tj_admitter *admitter;         /* owned */
	struct tj_suspect_nodes *suspects;    /* owned */
	struct tj_stall_clock *stall_clock;   /* owned */
	struct tj_list in_flight;             /* owned, of struct reconcile */
	/* How many parked reconciles each key has (struct parked_key), so that a new reconcile
	 * looks for the ones it supersedes only when there are some: thousands park at once,
	 * and a scan of them all per reconcile was most of the controller's CPU. */
	struct tj_store *parked; /* owned */
	bool parked_untracked;   /* a count could not be kept: always scan */
	bool synced;
	bool leading;
	bool stopping;
	bool queue_drained;
	bool native_gang; /* the plans' (plan.h), as tj_controller_config says */
	void (*stopped)(void *userdata);
	void *stopped_userdata;
};

/* ---- reading the caches ---- */

static const struct tj_store *store_of(const struct tj_reflector *r)
{
	return r ? tj_reflector_store(r) : NULL;
}

static const struct tj_runtime *lookup_runtime(void *ctx, enum tj_runtime_kind kind,
                                               const char *namespace, const char *name)
{
	struct tj_controller *c = ctx;
	const struct tj_store *s;
	char key[TJ_STORE_KEY_MAX];

	if (kind == TJ_RUNTIME_CLUSTER) {
		s = store_of(c->informers->cluster_training_runtimes);
		namespace = NULL;
	} else {
		s = store_of(c->informers->training_runtimes);
	}
	if (!s || tj_store_key_of(key, sizeof(key), namespace, name) < 0)
		return NULL;
	return tj_store_get(s, key);
}

/* The runtime job runs on (reconcilers/runtime_snapshot.h): the copy its snapshot keeps once
 * it has one, else the live runtime its runtimeRef names. *snapshot says which; 0, or a
 * negative errno with why. */
static int resolve_runtime(const struct tj_controller *c, const struct tj_trainjob *job,
                           const struct tj_runtime **ret, struct tj_problem *why,
                           enum tj_snapshot_state *snapshot)
{
	const struct tj_store *s = store_of(c->informers->config_maps);
	const struct tj_runtime_snapshot *snap = NULL;
	char name[TJ_NAME_MAX], key[TJ_STORE_KEY_MAX];
	int r;

	*ret = NULL;
	*snapshot = s ? TJ_SNAPSHOT_MISSING : TJ_SNAPSHOT_OFF;
	if (s && tj_runtime_snapshot_name(job, name, sizeof(name)) == 0 &&
	    tj_store_key_of(key, sizeof(key), job->namespace, name) == 0)
		snap = tj_store_get(s, key);
	r = tj_runtime_snapshot_pick(job, snap, ret, why);
	if (r > 0)
		*snapshot = TJ_SNAPSHOT_USED;
	if (r != 0)
		return r < 0 ? r : 0;
	return tj_runtime_resolve(job, lookup_runtime, (void *)c, ret, why);
}

static const struct tj_node *lookup_node(void *ctx, const char *name)
{
	struct tj_controller *c = ctx;
	const struct tj_store *s = store_of(c->informers->nodes);

	return s && name ? tj_store_get(s, name) : NULL;
}

static const char *job_uid(void *ctx, const char *key)
{
	const struct tj_controller *c = ctx;
	const struct tj_trainjob *job =
	        tj_store_get(tj_reflector_store(c->informers->trainjobs), key);

	return job ? job->uid : NULL;
}

static bool node_suspect(void *ctx, const char *name)
{
	const struct tj_controller *c = ctx;

	return tj_suspect_nodes_blames(c->suspects, name);
}

static uint64_t now_ns(const struct tj_controller *c)
{
	struct timespec ts;

	if (c->clock)
		return c->clock();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const struct tj_gpu_class *tj_controller_job_gpu_class(const struct tj_controller *c,
                                                       const struct tj_trainjob *job)
{
	const struct tj_runtime *rt = NULL;
	const struct tj_gpu_class *cls = NULL;
	struct tj_problem why = { "", "" };
	enum tj_snapshot_state snapshot;

	if (resolve_runtime(c, job, &rt, &why, &snapshot) < 0 ||
	    tj_runtime_gpu_class(rt, c->config, &cls, &why) < 0)
		return NULL;
	return cls;
}

/* ---- GPU-seconds (reconcilers/usage/gpu_seconds.h) ---- */

/* A TrainJob deleted before it ended: what it held and no outcome counted is cancelled. The
 * pods are still in the cache (garbage collection deletes them after their owner), so the
 * seconds since its status last counted them are in. The leader counts, as it counts the
 * rest. */
static void count_cancelled(struct tj_controller *c, const struct tj_trainjob *job, const char *key)
{
	const struct tj_gpu_class *cls;
	const struct tj_pod **pods = NULL;
	size_t n_pods = 0;
	int64_t seconds;

	if (!c->metrics || !c->leading || !c->synced)
		return;
	cls = tj_controller_job_gpu_class(c, job);
	if (tj_pod_collect_owned(tj_reflector_store(c->informers->pods), key, job->uid,
	                         MAX_PODS_PER_JOB, &pods, &n_pods) < 0)
		n_pods = 0;
	seconds = tj_gpu_seconds_cancelled(
	        &(struct tj_gpu_seconds_input){ .old = &job->status,
	                                        .pods = pods,
	                                        .n_pods = n_pods,
	                                        .resource = cls ? cls->resource : NULL,
	                                        .now = (int64_t)(now_ns(c) / 1000000000ull) });
	free(pods);
	if (c->metrics && seconds > 0)
		tj_std_metrics_add_for_key(c->metrics->trainjob_gpu_seconds_total, key,
		                           cls ? cls->name : "", TJ_GPU_OUTCOME_CANCELLED, seconds);
}

/* ---- queueing ---- */

/* Queues key, ahead of every queued key when first is set. */
static void add_key(struct tj_controller *c, const char *key, bool first)
{
	int rc;

	/* Before the caches are complete a plan could delete what it merely has not seen
	 * yet; every TrainJob is queued once the caches have synced. */
	if (!c->synced || !c->leading || c->stopping)
		return;
	rc = first ? tj_workqueue_add_first(c->queue, key) : tj_workqueue_add(c->queue, key);
	if (rc < 0)
		tj_log_error("controller", "could not queue TrainJob", TJ_STR("key", key),
		             TJ_ERR(rc));
}

static void enqueue(struct tj_controller *c, const char *key)
{
	add_key(c, key, false);
}

static void enqueue_key(void *userdata, const char *key)
{
	add_key(userdata, key, false);
}

/* An admitted gang's job, ahead of the queued jobs' status refreshes. */
static void enqueue_key_first(void *userdata, const char *key)
{
	add_key(userdata, key, true);
}

/* Every TrainJob once more; with await, as the admitter becomes active: the queue it
 * rebuilds from their plans is decided once all of them have been planned
 * (tj_admitter_await). */
static void enqueue_all(struct tj_controller *c, bool await)
{
	struct tj_store_iter it;
	const struct tj_trainjob *job;
	char key[TJ_STORE_KEY_MAX];

	tj_store_iter_init(tj_reflector_store(c->informers->trainjobs), &it);
	while ((job = tj_store_iter_next(&it)))
		if (tj_trainjob_store_ops.key(job, key, sizeof(key)) == 0) {
			if (await)
				tj_admitter_await(c->admitter, key);
			enqueue(c, key);
		}
}

static void enqueue_dependent(const char *key, void *userdata)
{
	enqueue(userdata, key);
}

/* A job of job's namespace came, went or changed its state: the jobs of the namespace that
 * wait for a dependency are planned again. */
static void enqueue_dependents(struct tj_controller *c, const struct tj_trainjob *job)
{
	tj_job_lookup_dependents(tj_reflector_store(c->informers->trainjobs), job->namespace,
	                         enqueue_dependent, c);
}

static void on_trainjob(const void *obj, void *userdata)
{
	char key[TJ_STORE_KEY_MAX];

	if (tj_trainjob_store_ops.key(obj, key, sizeof(key)) == 0)
		enqueue(userdata, key);
}

/* The job's stall clock (controller/stall_clock.h) hears of every version of it the cache
 * takes, whether the controller leads or not. */
static void see_progress(struct tj_controller *c, const struct tj_trainjob *job)
{
	char key[TJ_STORE_KEY_MAX];

	if (tj_trainjob_store_ops.key(job, key, sizeof(key)) == 0)
		tj_stall_clock_see(c->stall_clock, key, job, (int64_t)(now_ns(c) / 1000000000ull));
}

/* A TrainJob the cache did not have is planned ahead of the queued keys: its first plan is
 * what puts its gang in the admission's queue, which must not wait for the reconciles that
 * the pod events of the gangs before it queue (in a burst of new TrainJobs their admissions
 * came in bunches, and the API server sat idle between them). */
static void on_trainjob_add(const void *obj, void *userdata)
{
	char key[TJ_STORE_KEY_MAX];

	see_progress(userdata, obj);
	if (tj_trainjob_store_ops.key(obj, key, sizeof(key)) == 0)
		add_key(userdata, key, true);
	enqueue_dependents(userdata, obj);
}

static void on_trainjob_update(const void *old, const void *new_obj, void *userdata)
{
	const struct tj_trainjob *was = old, *is = new_obj;

	see_progress(userdata, is);
	on_trainjob(new_obj, userdata);
	if (was->status.state != is->status.state ||
	    was->status.start_time != is->status.start_time)
		enqueue_dependents(userdata, is);
}

struct pod_lookup {
	struct tj_controller *c;
	const char *namespace;
};

static bool pod_seen(const char *name, enum tj_expected what, void *ctx)
{
	struct pod_lookup *l = ctx;
	char key[TJ_STORE_KEY_MAX];
	const struct tj_pod *pod;

	if (tj_store_key_of(key, sizeof(key), l->namespace, name) < 0)
		return false;
	pod = tj_store_get(tj_reflector_store(l->c->informers->pods), key);
	switch (what) {
	case TJ_EXPECT_CREATED:
		return pod != NULL;
	case TJ_EXPECT_UNGATED:
		return !pod || pod->deletion_time != 0 || !pod->gated;
	case TJ_EXPECT_GONE:
		break;
	}
	return !pod || pod->deletion_time != 0;
}

static void on_pod(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;
	const struct tj_pod *pod = obj;
	char key[TJ_STORE_KEY_MAX];

	if (!pod->trainjob || tj_store_key_of(key, sizeof(key), pod->namespace, pod->trainjob) < 0)
		return;
	/* Seen now, seen for good: a pod deleted again before its job's check still showed the
	 * cache caught up with its create. */
	tj_expectations_observe(c->expectations, key, pod->name, pod_seen,
	                        &(struct pod_lookup){ c, pod->namespace });
	enqueue(c, key);
}

/* A pod changed (old NULL when added, pod NULL when deleted): the admitter hears of it
 * whether the controller leads or not (its ledger of what the pods hold), and its job is
 * planned again. */
static void on_pod_add(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;

	tj_admitter_pod_changed(c->admitter, NULL, obj);
	tj_suspect_nodes_pod_changed(c->suspects, NULL, obj);
	on_pod(obj, userdata);
}

static void on_pod_delete(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;

	tj_admitter_pod_changed(c->admitter, obj, NULL);
	on_pod(obj, userdata);
}

static void on_pod_update(const void *old, const void *new_obj, void *userdata)
{
	struct tj_controller *c = userdata;

	tj_admitter_pod_changed(c->admitter, old, new_obj);
	tj_suspect_nodes_pod_changed(c->suspects, old, new_obj);
	on_pod(new_obj, userdata);
}

static void on_trainjob_delete(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;
	char key[TJ_STORE_KEY_MAX];

	if (tj_trainjob_store_ops.key(obj, key, sizeof(key)) == 0) {
		tj_admitter_forget(c->admitter, key);
		tj_stall_clock_forget(c->stall_clock, key);
		count_cancelled(c, obj, key);
		if (c->leading && c->synced && tj_trainjob_is_ours(obj))
			tj_admitter_job_deleted(c->admitter, obj);
	}
	on_trainjob(obj, userdata);
	enqueue_dependents(c, obj);
}

/* A runtime changed: the TrainJobs that name it may now be able to start (DESIGN.md: a job
 * whose runtime is missing starts by itself once the runtime appears). */
static void on_runtime(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;
	const struct tj_runtime *rt = obj;
	struct tj_store_iter it;
	const struct tj_trainjob *job;
	char key[TJ_STORE_KEY_MAX];

	if (!c->synced)
		return;
	tj_store_iter_init(tj_reflector_store(c->informers->trainjobs), &it);
	while ((job = tj_store_iter_next(&it))) {
		if (!job->runtime_name || strcmp(job->runtime_name, rt->name) != 0)
			continue;
		if (rt->kind == TJ_RUNTIME_NAMESPACED && strcmp(job->namespace, rt->namespace) != 0)
			continue;
		if (tj_trainjob_store_ops.key(job, key, sizeof(key)) == 0)
			enqueue(c, key);
	}
}

static void on_runtime_update(const void *old, const void *new_obj, void *userdata)
{
	on_runtime(new_obj, userdata);
}

/* A runtime snapshot came, changed or went: its job reads another runtime now (and makes its
 * snapshot again when it was deleted under it). */
static void on_snapshot(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;
	const struct tj_runtime_snapshot *s = obj;
	size_t n = strlen(s->name), suffix = strlen(TJ_RUNTIME_SNAPSHOT_SUFFIX);
	char key[TJ_STORE_KEY_MAX];

	if (!c->synced || n <= suffix ||
	    strcmp(s->name + n - suffix, TJ_RUNTIME_SNAPSHOT_SUFFIX) != 0 ||
	    snprintf(key, sizeof(key), "%s/%.*s", s->namespace, (int)(n - suffix), s->name) >=
	            (int)sizeof(key))
		return;
	enqueue(c, key);
}

static void on_snapshot_update(const void *old, const void *new_obj, void *userdata)
{
	on_snapshot(new_obj, userdata);
}

/* A node changed (old NULL when added, node NULL when deleted): the admitter hears of it
 * whether the controller leads or not (what the node offers, whether it takes new pods),
 * and its health may have changed, which matters to the jobs with pods on it. */
static void node_changed(struct tj_controller *c, const struct tj_node *old,
                         const struct tj_node *node)
{
	struct tj_store_iter it;
	const struct tj_pod *pod;

	tj_admitter_node_changed(c->admitter, old, node);
	tj_suspect_nodes_node_changed(c->suspects, old, node);
	if (!c->synced)
		return;
	if (!node)
		node = old;
	tj_store_iter_index(tj_reflector_store(c->informers->pods), TJ_POD_INDEX_NODE, node->name,
	                    &it);
	while ((pod = tj_store_iter_next(&it)))
		on_pod(pod, c);
}

static void on_node(const void *obj, void *userdata)
{
	node_changed(userdata, NULL, obj);
}

static void on_node_delete(const void *obj, void *userdata)
{
	node_changed(userdata, obj, NULL);
}

static void on_node_update(const void *old, const void *new_obj, void *userdata)
{
	node_changed(userdata, old, new_obj);
}

/* A list or watch failed: the reflector retries by itself, the log says why it waits. */
static void on_informer_error(const char *message, void *userdata)
{
	tj_log_warn("informer", "list or watch failed", TJ_STR("error", message));
}

/* A PriorityClass changed: the queued jobs whose pods name it are planned again, and
 * their wants carry the new value. Classes change rarely; every job is queued. */
static void on_priority_class(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;

	if (c->synced)
		enqueue_all(c, false);
}

static void on_priority_class_update(const void *old, const void *new_obj, void *userdata)
{
	on_priority_class(new_obj, userdata);
}

/* A ResourceQuota changed (its hard limits, or what it holds): the queue may move. */
static void on_resource_quota(const void *obj, void *userdata)
{
	struct tj_controller *c = userdata;

	if (c->synced)
		tj_admitter_kick(c->admitter);
}

static void on_resource_quota_update(const void *old, const void *new_obj, void *userdata)
{
	on_resource_quota(new_obj, userdata);
}

/* A Workload changed: its TrainJob is planned again, with what Kueue now says. */
static void on_workload(const void *obj, void *userdata)
{
	const struct tj_workload *w = obj;
	char key[TJ_STORE_KEY_MAX];

	if (*w->owner &&
	    snprintf(key, sizeof(key), "%s/%s", w->namespace, w->owner) < (int)sizeof(key))
		enqueue(userdata, key);
}

static void on_workload_update(const void *old, const void *new_obj, void *userdata)
{
	on_workload(new_obj, userdata);
}

static void on_synced(void *userdata)
{
	struct tj_controller *c = userdata;

	if (c->synced || !tj_informers_have_synced(c->informers))
		return;
	c->synced = true;
	tj_log_info(
	        "controller", "caches synced",
	        TJ_INT("trainjobs",
	               (long long)tj_store_len(tj_reflector_store(c->informers->trainjobs))),
	        TJ_INT("pods", (long long)tj_store_len(tj_reflector_store(c->informers->pods))),
	        TJ_INT("nodes", (long long)tj_store_len(tj_reflector_store(c->informers->nodes))));
	tj_admitter_set_active(c->admitter, c->leading && !c->stopping);
	tj_suspect_nodes_set_leading(c->suspects, c->leading && !c->stopping);
	enqueue_all(c, true);
}

/* ---- reconciling one key ---- */

static void observe(struct tj_controller *c, struct reconcile *r, const char *result)
{
	if (c->metrics)
		tj_std_metrics_observe_reconcile(c->metrics, TJ_CONTROLLER_NAME, result,
		                                 (double)(now_ns(c) - r->start_ns) / 1e9);
}

static void check_stopped(struct tj_controller *c);

struct parked_key {
	char key[TJ_STORE_KEY_MAX];
	unsigned n;
};

static int parked_key_key(const void *obj, char *buf, size_t size)
{
	const struct parked_key *p = obj;

	return snprintf(buf, size, "%s", p->key) < (int)size ? 0 : -ENAMETOOLONG;
}

static const struct tj_store_ops parked_key_ops = {
	.free = free,
	.key = parked_key_key,
};

static void count_parked(struct tj_controller *c, const char *key, bool parks)
{
	struct parked_key *p = (struct parked_key *)tj_store_get(c->parked, key);

	if (!parks) {
		if (p && --p->n == 0)
			tj_store_delete(c->parked, key, NULL);
		return;
	}
	if (p) {
		p->n++;
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p || snprintf(p->key, sizeof(p->key), "%s", key) >= (int)sizeof(p->key) ||
	    tj_store_upsert(c->parked, p, NULL) < 0) {
		free(p);
		c->parked_untracked = true;
		return;
	}
	p->n = 1;
}

static void reconcile_end(struct reconcile *r)
{
	struct tj_controller *c = r->c;

	tj_list_unlink(&c->in_flight, &r->link);
	if (!r->parked)
		tj_workqueue_done(c->queue, r->key);
	else
		count_parked(c, r->key, false);
	free(r);
	if (c->stopping)
		check_stopped(c);
}

static void requeue_after(struct tj_controller *c, const char *key, int64_t seconds)
{
	if (seconds > 0)
		tj_workqueue_add_after(c->queue, key, (uint64_t)seconds * 1000);
}

static void count_admission(struct tj_controller *c, const struct reconcile *r)
{
	const struct tj_std_metrics *m = c->metrics;

	if (!m)
		return;
	tj_metric_add(m->trainjob_admissions_total, TJ_LABELS(r->gpu_class), 1);
	if (r->backfilled)
		tj_metric_add(m->trainjob_backfills_total, NULL, 1);
	if (r->first_start && r->creation_time)
		tj_std_metrics_observe_queue_wait(
		        m, r->key, r->gpu_class, r->qos,
		        (double)((int64_t)(now_ns(c) / 1000000000ull) - r->creation_time));
}

/* What became of the creates of a plan that created its admitted gang. */
static enum tj_gang_outcome gang_outcome(const struct tj_execution_result *res)
{
	if (res->refusal != TJ_REFUSAL_NONE)
		return TJ_GANG_REFUSED;
	if (res->pods_failed > 0 && res->pods_maybe_created == 0)
		return res->pods_created + res->pods_adopted > 0 ? TJ_GANG_MADE_IN_PART
		                                                 : TJ_GANG_NOT_SENT;
	return TJ_GANG_SENT;
}

static void executed(struct tj_execution_result *res, void *userdata)
{
	struct reconcile *r = userdata;
	struct tj_controller *c = r->c;

	r->execution = NULL;
	/* The next plan starts from what the status patch wrote, even before the watch
	 * brings it. */
	if (res->trainjob && tj_reflector_write_back(c->informers->trainjobs, res->trainjob) < 0)
		tj_log_error("controller", "could not cache the patched TrainJob",
		             TJ_STR("trainjob", r->key));
	/* Likewise the refusal the executor recorded: a plan made before the watch brings it
	 * would take a gang refused in part for one still being created. */
	if (res->refused_trainjob &&
	    tj_reflector_write_back(c->informers->trainjobs, res->refused_trainjob) < 0)
		tj_log_error("controller", "could not cache the refusal's TrainJob",
		             TJ_STR("trainjob", r->key));
	/* What the status patch decided (a restart, GPU-seconds, the first Running) is counted
	 * once that patch (stage 0) succeeded, even if a later stage failed: the retry will not
	 * decide it again. */
	if (c->metrics && res->trainjob)
		tj_std_metrics_count_status(c->metrics, r->key, r->gpu_class, r->restart_reason,
		                            r->stalled, &r->gpu_seconds, r->running_after);
	/* The gang is created once its pods are (a status patch of a later stage may still
	 * meet a conflict). A gang whose creates the API server refused gives its nodes back:
	 * the pods created before the refusal wait behind their gate, and its next plan deletes
	 * them. So does a gang whose failed creates were each answered that their pod was not
	 * made (a 429 past its retries, a connection refused); it is decided again at once,
	 * unless some of its pods were made: then not before the refusal's hold, by when the
	 * cache shows them (TJ_GANG_MADE_IN_PART). Only creates that got no answer
	 * even when sent again (a timeout, a 5xx, a lost connection: the pods may exist) keep
	 * the nodes until the cache shows the pods or the patience runs out (admitter_queue.h),
	 * so that no other gang is placed on them. */
	if (r->admits)
		tj_admitter_outcome(c->admitter, r->key, gang_outcome(res));
	if (r->admits && res->refusal == TJ_REFUSAL_NONE &&
	    res->pods_created + res->pods_adopted > 0)
		count_admission(c, r);
	/* Planned while the job's previous status write was in flight: planned again from its
	 * answer, with the queue's newest verdict. */
	if (res->replan)
		enqueue(c, r->key);
	if (res->rc == 0) {
		tj_workqueue_forget(c->queue, r->key);
		observe(c, r, "success");
		if (c->metrics && res->pods_created)
			tj_metric_add(c->metrics->trainjob_pods_created_total, NULL,
			              res->pods_created);
		if (res->pods_created || res->pods_deleted || res->pods_adopted)
			tj_log_info("reconciler", "reconciled TrainJob", TJ_STR("trainjob", r->key),
			            TJ_INT("podsCreated", res->pods_created),
			            TJ_INT("podsAdopted", res->pods_adopted),
			            TJ_INT("podsDeleted", res->pods_deleted));
	} else {
		/* A conflict means the plan was made from a stale cache: the watch brings the
		 * newer object, and the retry plans from it. */
		if (!res->conflict)
			tj_log_error("reconciler", "reconcile failed", TJ_STR("trainjob", r->key),
			             TJ_STR("detail", res->error), TJ_ERR(res->rc));
		/* A create may have failed: the retry plans from the cache alone. Once the key was
		 * given back with every create answered, a newer plan's expectations stand. */
		if (!r->parked || res->pods_created + res->pods_adopted < r->creates)
			tj_expectations_forget(c->expectations, r->key);
		/* A conflict is no failure: the job is planned again, as a requeue, so that the
		 * errors counted are the ones the log names (TrainJobReconcileErrorsRising). */
		observe(c, r, res->conflict ? "requeue" : "error");
		/* A namespace being deleted refuses every create: no retry. */
		if (res->refusal != TJ_REFUSAL_NAMESPACE_TERMINATING)
			tj_workqueue_add_rate_limited(c->queue, r->key);
	}
	reconcile_end(r);
}

/* The reconcile only waits for the write gate: its key goes back to the workqueue, so that
 * the next key takes its slot and an event of its own job is not held up behind
 * bookkeeping (a failed worker's replacement must not wait for a progress report). Its
 * deferrable writes are safe to race with a newer reconcile: the Service create is
 * idempotent and the status patch carries the resourceVersion it was planned from. */
static void parked(void *userdata)
{
	struct reconcile *r = userdata;

	r->parked = true;
	count_parked(r->c, r->key, true);
	tj_workqueue_done(r->c->queue, r->key);
}

/* A new reconcile of key supersedes a parked one that still waits for the gate: its unsent
 * bookkeeping is dropped, since the new plan, made from the same or newer caches, writes
 * what is still missing (level-based). One with writes in flight finishes by itself. */
static void supersede_parked(struct tj_controller *c, const char *key)
{
	if (!c->parked_untracked && !tj_store_get(c->parked, key))
		return;
	for (struct tj_link *l = c->in_flight.head; l; l = l->next) {
		struct reconcile *r = TJ_CONTAINER_OF(l, struct reconcile, link);

		if (r->parked && r->execution && strcmp(r->key, key) == 0)
			tj_execution_supersede(r->execution);
	}
}

/* Whether the cache holds a newer version of the reconcile's job than the one its status
 * patch was planned from: the answer of the job's previous status write, written back, or a
 * newer one from the watch (a job gone from the cache counts as newer: its plan is made
 * again). */
static bool outdated(const char *resource_version, void *userdata)
{
	const struct reconcile *r = userdata;
	const struct tj_trainjob *job =
	        tj_store_get(tj_reflector_store(r->c->informers->trainjobs), r->key);

	return !job || !job->resource_version ||
	       strcmp(job->resource_version, resource_version) != 0;
}

/* The gate stays shut while keys wait for a slot: their plans may bring pods. */
static bool queue_busy(void *userdata)
{
	struct tj_controller *c = userdata;
	struct tj_workqueue_stats st;

	tj_workqueue_stats(c->queue, &st);
	return st.depth > 0;
}

/* How long the pods a plan creates may take to reach the cache before the job is planned
 * without them. */
#define EXPECTATION_TIMEOUT_MS 30000

/* How tj_expectations_start_plan() reaches the executor. */
struct execute_call {
	const struct tj_execute_config *config;
	const struct tj_event_object *job;
	int64_t now_ns;
	struct tj_execution **ret;
};

static int start_execution(struct tj_plan *plan, void *ctx)
{
	const struct execute_call *call = ctx;

	return tj_execute(call->config, call->job, plan, call->now_ns, call->ret);
}

static unsigned count_actions(const struct tj_plan *plan, enum tj_action_kind kind)
{
	unsigned n = 0;

	for (size_t i = 0; i < plan->n_actions; i++)
		n += plan->actions[i].kind == kind;
	return n;
}

/* Whether a plan writes only its status and events. */
static bool only_bookkeeping(const struct tj_plan *plan)
{
	return count_actions(plan, TJ_ACTION_PATCH_STATUS) + count_actions(plan, TJ_ACTION_EVENT) ==
	       plan->n_actions;
}

/* What a reconcile plans from: the caches' view of the job, and the admission's ticket. */
struct gathered {
	struct tj_plan_input in;
	const struct tj_pod **pods; /* owned */
	struct tj_problem why;
	struct tj_admission_ticket ticket;
	struct tj_job_lookup jobs; /* the namespace's jobs, for a dependency */
};

/* Gather: the job's runtime, its pods, its Workload and the queue's ticket, from the
 * caches. 0, or -E2BIG (more pods than a job may own), -ENOMEM. */
static int gather(struct tj_controller *c, const struct reconcile *r, const struct tj_trainjob *job,
                  uint64_t now, struct gathered *g)
{
	const struct tj_runtime *runtime = NULL;
	enum tj_snapshot_state snapshot;
	size_t n_pods = 0;
	int rc;

	g->why = (struct tj_problem){ "", "" };
	tj_job_lookup_init(&g->jobs, tj_reflector_store(c->informers->trainjobs), job);
	if (resolve_runtime(c, job, &runtime, &g->why, &snapshot) < 0)
		runtime = NULL;
	rc = tj_pod_collect_owned(tj_reflector_store(c->informers->pods), r->key, job->uid,
	                          MAX_PODS_PER_JOB, &g->pods, &n_pods);
	if (rc == -E2BIG)
		tj_log_error("reconciler", "TrainJob owns more pods than the planner takes",
		             TJ_STR("trainjob", r->key), TJ_INT("limit", MAX_PODS_PER_JOB));
	if (rc < 0)
		return rc;
	g->in = (struct tj_plan_input){
		.job = job,
		.runtime = runtime,
		.runtime_problem = runtime ? NULL : &g->why,
		.snapshot = snapshot,
		.config = c->config,
		.pods = g->pods,
		.n_pods = n_pods,
		.node_lookup = lookup_node,
		.node_ctx = c,
		.node_suspect = node_suspect,
		.jobs = &g->jobs.lookup,
		.ticket = tj_admitter_ticket(c->admitter, job, r->key, &g->ticket) ? &g->ticket
		                                                                   : NULL,
		.workload = c->informers->workloads
		                    ? tj_workload_of(tj_reflector_store(c->informers->workloads),
		                                     r->key, job->uid)
		                    : NULL,
		.now = (int64_t)(now / 1000000000ull),
		.progress_seen = tj_stall_clock_see(c->stall_clock, r->key, job,
		                                    (int64_t)(now / 1000000000ull)),
		.native_gang = c->native_gang,
	};
	return 0;
}

/* Commit: the plan's admission actions go to the queue, its API writes to the executor
 * (whose answer, executed(), tells the queue what became of an admitted gang's creates).
 * Takes the plan. 0 or a negative errno; on success the reconcile has ended or its
 * execution runs. */
static int commit(struct tj_controller *c, struct reconcile *r, const struct gathered *g,
                  uint64_t now, struct tj_plan *plan)
{
	const struct tj_trainjob *job = g->in.job;
	int rc;

	rc = tj_admitter_commit(c->admitter, job, r->key, &plan->gang, r->writes_shown);
	/* The rendered pod told the admitter the gang's requests and priority; a plan parked
	 * behind the write gate must not hold it (thousands of queued jobs park at once). */
	cJSON_Delete(plan->gang.want.pod);
	plan->gang.want.pod = NULL;
	if (rc < 0) {
		tj_plan_free(plan);
		return rc;
	}
	/* The first plan of a job that waits for admission writes nothing: the cycle that
	 * the want started decides it within milliseconds and queues it again, and that plan
	 * writes the queue's verdict. */
	if (plan->gang.want.wanted && !g->ticket.decision && only_bookkeeping(plan)) {
		tj_plan_free(plan);
		observe(c, r, "success");
		reconcile_end(r);
		return 0;
	}
	r->admits = plan->gang.admits;
	r->backfilled = plan->gang.backfilled;
	r->first_start = plan->gang.admits && !job->status.start_time;
	r->creation_time = job->creation_time;
	r->creates = count_actions(plan, TJ_ACTION_CREATE_POD);
	memcpy(r->gpu_class, plan->gpu_class, sizeof(r->gpu_class));
	memcpy(r->qos, plan->qos, sizeof(r->qos));
	tj_gpu_seconds_outcomes(&job->status, &plan->status, &r->gpu_seconds);
	r->running_after = tj_std_metrics_time_to_running(&job->status, &plan->status,
	                                                  job->creation_time, g->in.now);
	requeue_after(c, r->key, plan->requeue_after);
	if (plan->n_actions == 0) {
		tj_plan_free(plan);
		tj_workqueue_forget(c->queue, r->key);
		observe(c, r, "success");
		reconcile_end(r);
		return 0;
	}
	struct tj_event_object obj = { job->namespace, job->name, job->uid, NULL };
	struct tj_execute_config ec = {
		.client = c->client,
		.recorder = c->recorder,
		.gate = c->gate,
		.services = c->services,
		.done = executed,
		.parked = parked,
		.outdated = outdated,
		/* A queued job's verdict must not hold up the plan that creates its gang, and
		 * goes by the pass of queued jobs' status writes. */
		.queued = plan->gang.want.wanted && !plan->gang.admits,
		.userdata = r,
	};

	memcpy(r->restart_reason, plan->restart_reason, sizeof(r->restart_reason));
	r->stalled = plan->stalled;
	/* A restart the node's condition caused counts in the node's history (a plan that is
	 * made again after a failed write records it again, once). */
	if (plan->restart_reason[0]) {
		struct tj_node_failure fault;

		if (tj_suspect_failure_of_restart(r->key, plan->restart_reason, &plan->status,
		                                  &fault))
			tj_suspect_nodes_record(c->suspects, &fault);
	}
	/* The plan's pod creates and deletes are expected in the cache before the job is
	 * planned again (its expectations were met, and so forgotten, before it was planned). */
	rc = tj_expectations_start_plan(
	        c->expectations, r->key, plan, uv_now(c->loop) + EXPECTATION_TIMEOUT_MS,
	        start_execution, &(struct execute_call){ &ec, &obj, (int64_t)now, &r->execution });
	if (rc < 0 && r->admits)
		tj_admitter_outcome(c->admitter, r->key, TJ_GANG_NOT_SENT);
	return rc;
}

/* One key: gather, plan (a pure function of what was gathered), commit. */
static int reconcile(struct tj_controller *c, struct reconcile *r)
{
	const struct tj_trainjob *job =
	        tj_store_get(tj_reflector_store(c->informers->trainjobs), r->key);
	struct gathered g = { 0 };
	struct tj_plan *plan = NULL;
	uint64_t now = now_ns(c), wait_ms = 0;
	int rc;

	if (!job) {
		/* Deleted: garbage collection removes its children through their owner
		 * references. */
		tj_expectations_forget(c->expectations, r->key);
		tj_admitter_forget(c->admitter, r->key);
		tj_workqueue_forget(c->queue, r->key);
		observe(c, r, "success");
		reconcile_end(r);
		return 0;
	}
	switch (tj_expectations_check(c->expectations, r->key, uv_now(c->loop), pod_seen,
	                              &(struct pod_lookup){ c, job->namespace }, &wait_ms)) {
	case TJ_EXPECTATIONS_WAITING:
		/* The pods of its last plan are not all in the cache yet: their events queue the
		 * job again (and the deadline, should one never come). */
		tj_workqueue_add_after(c->queue, r->key, wait_ms);
		observe(c, r, "success");
		reconcile_end(r);
		return 0;
	case TJ_EXPECTATIONS_SEEN:
		r->writes_shown = true;
		break;
	case TJ_EXPECTATIONS_NONE:
	case TJ_EXPECTATIONS_EXPIRED:
		break;
	}
	rc = gather(c, r, job, now, &g);
	if (rc == 0)
		rc = tj_plan_trainjob(&g.in, &plan);
	free(g.pods);
	tj_job_lookup_clear(&g.jobs);
	if (rc < 0)
		return rc;
	return commit(c, r, &g, now, plan);
}

static void process(struct tj_workqueue *q, const char *key, void *userdata)
{
	struct tj_controller *c = userdata;
	struct reconcile *r = calloc(1, sizeof(*r));
	int rc;

	if (!r || strlen(key) >= sizeof(r->key)) {
		free(r);
		tj_workqueue_done(q, key);
		return;
	}
	supersede_parked(c, key);
	r->c = c;
	r->start_ns = now_ns(c);
	strcpy(r->key, key);
	tj_list_prepend(&c->in_flight, &r->link);
	rc = reconcile(c, r);
	if (rc < 0) {
		tj_log_error("reconciler", "could not reconcile", TJ_STR("trainjob", key),
		             TJ_ERR(rc));
		observe(c, r, "error");
		tj_workqueue_add_rate_limited(q, key);
		reconcile_end(r);
	}
}

/* ---- life cycle ---- */

int tj_controller_new(uv_loop_t *loop, const struct tj_controller_config *config,
                      struct tj_controller **ret)
{
	struct tj_controller *c = calloc(1, sizeof(*c));
	struct tj_reflector_handlers trainjobs = { on_trainjob_add,    on_trainjob_update,
		                                   on_trainjob_delete, on_synced,
		                                   on_informer_error,  NULL };
	struct tj_reflector_handlers runtimes = { on_runtime, on_runtime_update, on_runtime,
		                                  on_synced,  on_informer_error, NULL };
	struct tj_reflector_handlers pods = { on_pod_add, on_pod_update,     on_pod_delete,
		                              on_synced,  on_informer_error, NULL };
	struct tj_reflector_handlers nodes = { on_node,   on_node_update,    on_node_delete,
		                               on_synced, on_informer_error, NULL };
	/* A class's value changes the order of the queue. */
	struct tj_reflector_handlers priority_classes = {
		on_priority_class, on_priority_class_update, on_priority_class,
		on_synced,         on_informer_error,        NULL
	};
	struct tj_reflector_handlers workloads = { on_workload, on_workload_update, on_workload,
		                                   on_synced,   on_informer_error,  NULL };
	struct tj_reflector_handlers quotas = { on_resource_quota, on_resource_quota_update,
		                                on_resource_quota, on_synced,
		                                on_informer_error, NULL };
	struct tj_reflector_handlers snapshots = { on_snapshot, on_snapshot_update, on_snapshot,
		                                   on_synced,   on_informer_error,  NULL };
	int rc;

	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->client = config->client;
	c->recorder = config->recorder;
	c->metrics = config->metrics;
	c->clock = config->clock;
	c->native_gang = config->native_gang;
	trainjobs.userdata = runtimes.userdata = pods.userdata = nodes.userdata = c;
	priority_classes.userdata = workloads.userdata = quotas.userdata = snapshots.userdata = c;

	struct tj_informers_config ic = {
		.client = config->watch_client ? config->watch_client : config->client,
		.namespace = config->namespace,
		.paginated_lists = config->paginated_lists,
		.trainjobs = { tj_trainjob_store_project, &tj_trainjob_store_ops, trainjobs },
		.training_runtimes = { tj_runtime_store_project, &tj_runtime_store_ops, runtimes },
		.cluster_training_runtimes = { tj_runtime_store_project, &tj_runtime_store_ops,
		                               runtimes },
		.pods = { NULL, NULL, pods },
		.nodes = { NULL, NULL, nodes },
		.priority_classes = { tj_priority_class_project, &tj_priority_class_store_ops,
		                      priority_classes },
		.workloads = { config->kueue ? tj_workload_project : NULL, &tj_workload_store_ops,
		               workloads },
		.resource_quotas = { tj_resource_quota_project, &tj_resource_quota_store_ops,
		                     quotas },
		.config_maps = { tj_runtime_snapshot_store_project, &tj_runtime_snapshot_store_ops,
		                 snapshots },
		.config_map_selector = TJ_RUNTIME_SNAPSHOT_SELECTOR,
	};
	rc = tj_informers_new(loop, &ic, &c->informers);
	if (rc < 0)
		goto fail;

	c->expectations = tj_expectations_new();
	if (!c->expectations) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = tj_store_new(&parked_key_ops, &c->parked);
	if (rc < 0)
		goto fail;
	rc = tj_admitter_new(loop,
	                     &(struct tj_admitter_config){ .informers = c->informers,
	                                                   .metrics = c->metrics,
	                                                   .enqueue = enqueue_key,
	                                                   .enqueue_first = enqueue_key_first,
	                                                   .userdata = c,
	                                                   .kueue = config->kueue,
	                                                   .client = config->client },
	                     &c->admitter);
	if (rc < 0)
		goto fail;
	rc = tj_suspect_nodes_new(&(struct tj_suspect_nodes_config){ .client = config->client,
	                                                             .recorder = config->recorder,
	                                                             .metrics = config->metrics,
	                                                             .node_lookup = lookup_node,
	                                                             .node_ctx = c,
	                                                             .job_uid = job_uid,
	                                                             .clock = config->clock },
	                          &c->suspects);
	if (rc < 0)
		goto fail;
	rc = tj_stall_clock_new(&c->stall_clock);
	if (rc < 0)
		goto fail;
	c->services = calloc(1, sizeof(*c->services));
	if (!c->services) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = tj_write_gate_new(loop,
	                       &(struct tj_write_gate_config){ .busy = queue_busy, .userdata = c },
	                       &c->gate);
	if (rc < 0)
		goto fail;

	struct tj_workqueue_config qc = {
		.process = process,
		.userdata = c,
		.metrics = config->metrics,
		.name = TJ_CONTROLLER_NAME,
		.max_in_flight = config->max_concurrent ? config->max_concurrent
		                                        : TJ_CONTROLLER_MAX_CONCURRENT,
	};
	rc = tj_workqueue_new(loop, &qc, &c->queue);
	if (rc < 0)
		goto fail;
	*ret = c;
	return 0;

fail:
	tj_stall_clock_free(c->stall_clock);
	tj_suspect_nodes_free(c->suspects);
	tj_admitter_free(c->admitter);
	tj_store_free(c->parked);
	tj_expectations_free(c->expectations);
	tj_write_gate_free(c->gate);
	free(c->services);
	tj_informers_free(c->informers);
	free(c);
	return rc;
}

void tj_controller_set_config(struct tj_controller *c, const struct tj_config *config)
{
	c->config = config;
	tj_admitter_set_config(c->admitter, config);
	tj_suspect_nodes_set_policy(c->suspects, tj_config_suspect(config));
	enqueue_all(c, false);
}

int tj_controller_start(struct tj_controller *c)
{
	return tj_informers_start(c->informers);
}

void tj_controller_set_leading(struct tj_controller *c, bool leading)
{
	if (c->leading == leading)
		return;
	c->leading = leading;
	tj_admitter_set_active(c->admitter, leading && c->synced && !c->stopping);
	tj_suspect_nodes_set_leading(c->suspects, leading && c->synced && !c->stopping);
	if (leading)
		enqueue_all(c, true);
}

void tj_controller_queue_stats(const struct tj_controller *c, struct tj_workqueue_stats *ret)
{
	tj_workqueue_stats(c->queue, ret);
}

void tj_controller_gate_stats(const struct tj_controller *c, struct tj_write_gate_stats *ret)
{
	tj_write_gate_stats(c->gate, ret);
}

bool tj_controller_synced(const struct tj_controller *c)
{
	return c->synced;
}

const struct tj_informers *tj_controller_informers(const struct tj_controller *c)
{
	return c->informers;
}

/* Stopped once the queue has drained and the parked reconciles, whose bookkeeping the gate
 * let go at once, have finished. */
static void check_stopped(struct tj_controller *c)
{
	void (*stopped)(void *userdata) = c->stopped;

	if (!c->queue_drained || c->in_flight.head || !stopped)
		return;
	c->stopped = NULL;
	stopped(c->stopped_userdata);
}

static void queue_drained(void *userdata)
{
	struct tj_controller *c = userdata;

	c->queue_drained = true;
	check_stopped(c);
}

void tj_controller_stop(struct tj_controller *c, void (*stopped)(void *userdata), void *userdata)
{
	if (c->stopping)
		return;
	c->stopping = true;
	c->stopped = stopped;
	c->stopped_userdata = userdata;
	tj_admitter_set_active(c->admitter, false);
	tj_suspect_nodes_set_leading(c->suspects, false);
	/* Nothing urgent will come any more: the bookkeeping goes now. */
	tj_write_gate_flush(c->gate);
	tj_workqueue_shutdown(c->queue, queue_drained, c);
}

struct tj_controller *tj_controller_free(struct tj_controller *c)
{
	if (!c)
		return NULL;
	while (c->in_flight.head) {
		struct reconcile *r = TJ_CONTAINER_OF(c->in_flight.head, struct reconcile, link);

		tj_list_unlink(&c->in_flight, &r->link);
		tj_execution_cancel(r->execution);
		free(r);
	}
	tj_write_gate_free(c->gate);
	free(c->services);
	tj_stall_clock_free(c->stall_clock);
	tj_suspect_nodes_free(c->suspects);
	tj_admitter_free(c->admitter);
	tj_store_free(c->parked);
	tj_expectations_free(c->expectations);
	tj_workqueue_free(c->queue);
	tj_informers_free(c->informers);
	free(c);
	return NULL;
}
