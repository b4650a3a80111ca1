#include "controller/admission/admitter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/number.h"
#include "base/time_share.h"
#include "controller/admission/accounting.h"
#include "controller/admission/admitter_qos.h"
#include "controller/admission/admitter_queue.h"
#include "controller/admission/admitter_share.h"
#include "controller/log/log.h"
#include "informers/intern.h"
#include "informers/priority_class.h"
#include "informers/resources.h"
#include "reconcilers/admission/admission.h"
#include "reconcilers/admission/launcher_hold.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/node_health.h"
#include "reconcilers/policy/qos.h"
#include "reconcilers/usage/gpu_use.h"

/* Cycles follow each other at least this far apart, so that a burst of pod events is
 * decided once; and they may take a third of the loop's wall clock over time (in CPU time:
 * a cycle the machine's other processes held up took no more from the loop's other work
 * than its CPU), so that deciding a long queue never starves the reconciles that create the
 * pods it admits. The share is a budget with a burst, not a gap after each cycle: a cycle
 * answers a freed node at once unless the cycles before it have spent the third (a fixed
 * gap of twice the last cycle made most answers wait for it; docs/benchmarks.md, "Admission
 * at scale"). */
#define CYCLE_GAP_MS   10
#define CYCLE_SHARE    (1.0 / 3)
#define CYCLE_BURST_MS 150
/* How far the cycle after freed GPUs may run ahead of the share: one long cycle's worth. A
 * stream of ends still has its cycles held to the share, once the credit is spent. */
#define CYCLE_CREDIT_MS 100

struct tj_admitter {
	uv_loop_t *loop;                      /* borrowed */
	struct tj_informers *informers;       /* borrowed */
	const struct tj_std_metrics *metrics; /* borrowed */
	const struct tj_config *config;       /* borrowed */
	void (*enqueue)(void *userdata, const char *key);
	void (*enqueue_first)(void *userdata, const char *key);
	void *userdata;
	bool kueue;                         /* Kueue admits the jobs labelled for it */
	struct tj_store *entries;           /* owned */
	struct tj_store *refusals;          /* owned; struct tj_admitter_refusals */
	struct tj_store *preemptions;       /* owned; struct tj_admitter_preemption */
	struct tj_accounting *accounting;   /* owned; the deleted jobs' records */
	uint64_t active_since_ms;           /* when it last became active */
	struct tj_ledger *ledger;           /* owned; what each node offers and its pods hold */
	struct tj_eligibility *eligibility; /* owned; the nodes the queue's placements allow */
	/* The jobs awaited before the first cycle (tj_admitter_await), since when, and how
	 * many there were. */
	struct tj_store *awaiting; /* owned; struct awaited */
	uint64_t awaiting_since_ms;
	size_t awaited;
	/* The jobs one of whose pods failed and gave its node back, not planned since
	 * (await_failed), and since when the first of them is awaited. */
	struct tj_store *failed; /* owned; struct awaited */
	uint64_t failed_since_ms;
	uv_timer_t timer;  /* the next cycle */
	uv_timer_t period; /* the cycle without events */
	int open_handles;
	bool active;
	bool scheduled;
	bool stopping;
	uint64_t last_cycle_ms;
	struct tj_time_share share; /* of the loop's wall clock the cycles may take */
	unsigned long cycles;
	/* Counts the configs it was given: the entries' classes are looked up once per config
	 * (tj_admitter_source.config_epoch). */
	uint64_t config_epoch;
	/* uv_hrtime of the event the next cycle answers: the first kick since the last cycle
	 * started that freed room (trigger_freed), else the kick that scheduled it; and of the
	 * running cycle's own trigger and start. */
	uint64_t trigger_ns, cycle_trigger_ns, cycle_start_ns;
	bool trigger_freed;
	uint64_t trigger_cpu_ns, cycle_trigger_cpu_ns; /* the loop thread's CPU clock then */
	/* and its run-queue wait then (thread_wait_ns) */
	uint64_t trigger_wait_ns, cycle_trigger_wait_ns;
	/* The running cycle's parts: when it had read the caches and when it had decided
	 * (uv_hrtime), and the loop thread's CPU clock at its start. */
	uint64_t cycle_snapshot_ns, cycle_decided_ns, cycle_cpu_ns;
	uint64_t held_ns, cycle_held_ns; /* the delay the next cycle was given, in ns */
	uint64_t due_ms;                 /* uv_now at which the scheduled cycle runs */
	struct tj_admitter_gone_node
	        gone[TJ_ADMITTER_MAX_GONE]; /* nodes deleted a short while ago */
	size_t n_gone;
	struct tj_admitter_shares shares; /* the namespaces' usage, read now and then */
	/* Of the last result, per class (n_last: the classes then, and class -1): where the next
	 * cycle's tries resume in its queue (tj_admission_input.cursors), and what its decision
	 * read (tj_admission_input.digests: a class whose input is the same is settled). */
	size_t *cursors;
	uint64_t *digests;
	size_t n_last;
};

/* ---- the rebuild of the queue ---- */

static void on_timer(uv_timer_t *t);
static void kick(struct tj_admitter *a, bool freed);

struct awaited {
	char key[TJ_STORE_KEY_MAX];
};

static int awaited_key(const void *obj, char *buf, size_t size)
{
	const struct awaited *w = obj;

	return snprintf(buf, size, "%s", w->key) < (int)size ? 0 : -ENAMETOOLONG;
}

static const struct tj_store_ops awaited_ops = {
	.free = free,
	.key = awaited_key,
};

/* Empties a store of awaited jobs. Without memory for an empty store the keys stay. */
static void drop_awaited(struct tj_store *s)
{
	struct tj_store *empty;

	if (tj_store_len(s) && tj_store_new(&awaited_ops, &empty) == 0) {
		tj_store_swap(s, empty);
		tj_store_free(empty);
	}
}

static void clear_awaiting(struct tj_admitter *a)
{
	/* Keys left without memory stay, but nothing waits for them. */
	drop_awaited(a->awaiting);
	a->awaited = 0;
}

static void stop_awaiting(struct tj_admitter *a, bool done)
{
	uint64_t took = uv_now(a->loop) - a->awaiting_since_ms;

	if (!a->awaited)
		return;
	if (done)
		tj_log_info("admitter", "the queue is rebuilt: every cached job was planned",
		            TJ_INT("jobs", (long long)a->awaited), TJ_INT("ms", (long long)took));
	else
		tj_log_warn("admitter", "the queue is decided before every cached job was planned",
		            TJ_INT("jobs", (long long)a->awaited),
		            TJ_INT("notPlanned", (long long)tj_store_len(a->awaiting)),
		            TJ_INT("ms", (long long)took));
	clear_awaiting(a);
}

/* A job awaited for the rebuild, or after a pod's failure, has been planned (or is gone). */
static void planned(struct tj_admitter *a, const char *key)
{
	/* The cycle held back for it (awaiting_failed) runs now. */
	if (tj_store_len(a->failed) && tj_store_delete(a->failed, key, NULL) == 0 &&
	    tj_store_len(a->failed) == 0 && a->scheduled)
		kick(a, true);
	if (a->awaited && tj_store_delete(a->awaiting, key, NULL) == 0 &&
	    tj_store_len(a->awaiting) == 0) {
		stop_awaiting(a, true);
		tj_admitter_kick(a);
	}
}

/* Whether cycles wait for the rebuild (the cached jobs planned once, the accounting records
 * loaded); past its bound, they wait no more. */
static bool rebuilding(struct tj_admitter *a)
{
	if (!tj_accounting_loaded(a->accounting) &&
	    uv_now(a->loop) - a->active_since_ms < TJ_ADMITTER_REBUILD_MAX_MS)
		return true;
	if (!a->awaited)
		return false;
	if (uv_now(a->loop) - a->awaiting_since_ms < TJ_ADMITTER_REBUILD_MAX_MS)
		return true;
	stop_awaiting(a, false);
	return false;
}

/* A pod of a TrainJob failed (a crash, an eviction) and gave its node back: the job's next
 * plan may want its replacement, which goes ahead of every queued job of its class. Until that
 * plan has told the queue, cycles wait (awaiting_failed): one before it would find the room
 * the failure freed with the job wanting nothing, and could give it, with the nodes the
 * replacement needs, to the jobs behind. The plan goes ahead of the other keys, as capacity
 * waits on it. A job being preempted is not awaited: a failure before its stop ends its run
 * (its script saved its state on the notice), and it goes back to the queue in its order. */
static void await_failed(struct tj_admitter *a, const struct tj_pod *pod)
{
	struct awaited *w = calloc(1, sizeof(*w));

	if (!w || tj_store_key_of(w->key, sizeof(w->key), pod->namespace, pod->trainjob) < 0 ||
	    tj_store_get(a->preemptions, w->key) || tj_store_upsert(a->failed, w, NULL) < 0) {
		free(w);
		return;
	}
	if (tj_store_len(a->failed) == 1)
		a->failed_since_ms = uv_now(a->loop);
	a->enqueue_first(a->userdata, w->key);
}

/* Whether the cycle waits for the plans of jobs whose pods failed; if so it runs when the last
 * of them is planned, or TJ_ADMITTER_FAILED_WAIT_MS after the first failed, when it waits no
 * more (a plan held back by its expectations, a job no longer cached). */
static bool awaiting_failed(struct tj_admitter *a)
{
	uint64_t waited;

	if (!tj_store_len(a->failed))
		return false;
	waited = uv_now(a->loop) - a->failed_since_ms;
	if (waited >= TJ_ADMITTER_FAILED_WAIT_MS) {
		tj_log_info("admitter",
		            "the queue is decided before the plans of the jobs whose pods failed",
		            TJ_INT("jobs", (long long)tj_store_len(a->failed)),
		            TJ_INT("ms", (long long)waited));
		drop_awaited(a->failed);
		return false;
	}
	a->scheduled = true;
	a->due_ms = a->failed_since_ms + TJ_ADMITTER_FAILED_WAIT_MS;
	uv_timer_start(&a->timer, on_timer, TJ_ADMITTER_FAILED_WAIT_MS - waited, 0);
	return true;
}

/* The accounting records of every namespace that has TrainJobs are read (a namespace
 * without any has no job to order). */
static void want_records(struct tj_admitter *a)
{
	const struct tj_store *jobs = tj_admitter_store_of(a->informers->trainjobs);
	const struct tj_trainjob *job;
	struct tj_store_iter it;
	const char *last = NULL;

	if (!jobs)
		return;
	tj_store_iter_init(jobs, &it);
	while ((job = tj_store_iter_next(&it)))
		if (!last || strcmp(last, job->namespace) != 0)
			tj_accounting_want(a->accounting, last = job->namespace);
}

/* The records of the deleted jobs are in: the cycles that waited for them may run. */
static void accounting_loaded(void *userdata)
{
	struct tj_admitter *a = userdata;

	a->shares.read_at = 0; /* the usage is read again, records included */
	tj_admitter_kick(a);
}

/* ---- entries ---- */

static struct tj_admitter_entry *entry_get(struct tj_admitter *a, const char *key)
{
	return (struct tj_admitter_entry *)tj_store_get(a->entries, key);
}

/* ---- the clocks ---- */

static int64_t now_seconds(void)
{
	return (int64_t)time(NULL);
}

/* The CPU time of the calling thread, in ns. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The time the calling thread has spent runnable but waiting for a CPU, in ns: the second
 * field of its schedstat, the part of its wall time that other processes of the machine
 * took. 0 where the kernel does not keep it. */
static uint64_t thread_wait_ns(void)
{
	char buf[96];
	unsigned long long run, wait;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? (uint64_t)wait : 0;
}

/* ---- one cycle ---- */

/* A created gang's pods once more, on the nodes it was admitted on (TJ_ADMITTER_CREATE_AGAIN):
 * its next plan creates them, and adopts those that exist. */
static void create_again(struct tj_admitter *a, struct tj_admitter_entry *e)
{
	e->state = TJ_ADMITTER_ADMITTED;
	e->admitted_ms = uv_now(a->loop);
	e->trigger_ns = 0;
	a->enqueue_first(a->userdata, e->key);
}

/* The created gangs that a plan wanted again while the cache did not show their pods, and
 * that the cache still does not show past the patience: planned again, as they come. */
static void plan_lagging(struct tj_admitter *a, uint64_t now_ms)
{
	struct tj_store_iter it;
	struct tj_admitter_entry *e;

	tj_store_iter_init(a->entries, &it);
	while ((e = (struct tj_admitter_entry *)tj_store_iter_next(&it)))
		if (e->state == TJ_ADMITTER_CREATED && e->lagging &&
		    now_ms - e->created_ms >= TJ_ADMITTER_CREATED_PATIENCE_MS) {
			e->lagging = false;
			a->enqueue(a->userdata, e->key);
		}
}

static int take_admission(const struct tj_admitter *a, struct tj_admitter_entry *e,
                          const struct tj_admitter_snapshot *s,
                          const struct tj_admission_decision *d, int64_t now, uint64_t now_ms)
{
	e->nodes = calloc((size_t)e->num_pods, sizeof(*e->nodes));
	if (!e->nodes)
		goto oom;
	for (int i = 0; i < e->num_pods; i++) {
		e->nodes[i] = strdup(s->nodes[d->nodes[i]].name);
		e->n_nodes = (size_t)i + 1;
		if (!e->nodes[i])
			goto oom;
	}
	if (d->launcher_node != SIZE_MAX &&
	    !(e->launcher_node = strdup(s->nodes[d->launcher_node].name)))
		goto oom;
	e->state = TJ_ADMITTER_ADMITTED;
	e->admitted_at = now;
	e->admitted_ms = now_ms;
	e->trigger_ns = a->cycle_trigger_ns;
	e->trigger_cpu_ns = a->cycle_trigger_cpu_ns;
	e->trigger_wait_ns = a->cycle_trigger_wait_ns;
	e->held_ns = a->cycle_held_ns;
	e->cycle_ns = a->cycle_start_ns;
	e->admitted_ns = uv_hrtime();
	e->snapshot_ns = a->cycle_snapshot_ns - a->cycle_start_ns;
	e->decide_ns = a->cycle_decided_ns - a->cycle_snapshot_ns;
	e->cpu_ns = thread_cpu_ns() - a->cycle_cpu_ns;
	e->decision = *d;
	e->decision.nodes = NULL;
	e->decided = true;
	return 0;
oom:
	tj_admitter_entry_requeue(e);
	return -ENOMEM;
}

/* The GPUs of every class; the queue's counts are read from the jobs' statuses at each
 * scrape (tj_std_metrics_feed_jobs), by namespace as well. */
static void publish_stats(struct tj_admitter *a, const struct tj_admission_result *res)
{
	const struct tj_std_metrics *m = a->metrics;
	size_t n = a->config ? a->config->n_classes : 0;

	if (!m)
		return;
	for (size_t c = 0; c < n; c++) {
		const struct tj_admission_class_stats *st = &res->classes[c];
		const char *name = a->config->classes[c].name;

		if (res->settled_classes[c])
			continue; /* its figures are those of the last cycle */
		tj_metric_set(m->trainjob_gpus, TJ_LABELS(name, "capacity"),
		              (double)st->capacity_gpus);
		tj_metric_set(m->trainjob_gpus, TJ_LABELS(name, "allocated"),
		              (double)st->allocated_gpus);
		tj_metric_set(m->trainjob_gpus, TJ_LABELS(name, "reserved"),
		              (double)st->reserved_gpus);
	}
}

/* Forgets the last result's cursors and digests: the next cycle decides every class, its
 * tries from the start of each queue. */
static void forget_last(struct tj_admitter *a)
{
	free(a->cursors);
	free(a->digests);
	a->cursors = NULL;
	a->digests = NULL;
	a->n_last = 0;
}

/* The cursors and digests of the result (n classes), for the next cycle; without memory, the
 * next cycle decides every class from the start of its queue. */
static void keep_last(struct tj_admitter *a, const struct tj_admission_result *res, size_t n)
{
	if (n != a->n_last) {
		forget_last(a);
		a->cursors = calloc(n, sizeof(*a->cursors));
		a->digests = calloc(n, sizeof(*a->digests));
		if (!a->cursors || !a->digests) {
			forget_last(a);
			return;
		}
		a->n_last = n;
	}
	memcpy(a->cursors, res->cursors, n * sizeof(*a->cursors));
	memcpy(a->digests, res->digests, n * sizeof(*a->digests));
}

/* The last result's digests, but none for a class that has a job its status does not show
 * decided yet (new, or put back into the queue): that class is decided, to tell it. */
static uint64_t *digests_to_give(const struct tj_admitter *a, const struct tj_admitter_snapshot *s)
{
	uint64_t *d;

	if (a->n_last != s->input.n_classes + 1 || !(d = malloc(a->n_last * sizeof(*d))))
		return NULL;
	memcpy(d, a->digests, a->n_last * sizeof(*d));
	for (size_t i = 0; i < s->n_jobs; i++) {
		int cls = s->input.jobs[i].class_index;

		if (!s->job_entries[i]->decided)
			d[cls < 0 ? s->input.n_classes : (size_t)cls] = 0;
	}
	return d;
}

static bool has_account(const char *const *values, void *ctx)
{
	return tj_admitter_shares_find(ctx, values[0]) != NULL;
}

/* The namespaces' fair share, as just read; the series of namespaces gone go too. */
static void publish_shares(const struct tj_admitter *a)
{
	const struct tj_std_metrics *m = a->metrics;

	if (!m)
		return;
	tj_metric_remove_series(m->trainjob_fair_share_usage_gpu_seconds, has_account,
	                        (void *)&a->shares);
	tj_metric_remove_series(m->trainjob_fair_share_factor, has_account, (void *)&a->shares);
	for (size_t i = 0; i < a->shares.n; i++) {
		const struct tj_fair_share_account *acc = &a->shares.accounts[i];

		tj_metric_set(m->trainjob_fair_share_usage_gpu_seconds, TJ_LABELS(acc->namespace),
		              acc->usage);
		tj_metric_set(m->trainjob_fair_share_factor, TJ_LABELS(acc->namespace),
		              acc->factor);
	}
}

/* A running job chosen as a victim (controller/admission/admitter_qos.h): its plan, which tells
 * its pods and records the preemption, goes first. */
static void preempted(void *userdata, const struct tj_admission_running *victim, const char *by,
                      int64_t at)
{
	struct tj_admitter *a = userdata;
	const struct tj_admission_policy *policy = tj_config_admission(a->config);
	size_t n_tiers;
	const struct tj_qos_tier *tiers = tj_qos_tiers(policy, &n_tiers);
	const char *tier = victim->qos < n_tiers ? tiers[victim->qos].name : "";
	const char *cls = victim->class_index >= 0 && a->config &&
	                                  (size_t)victim->class_index < a->config->n_classes
	                          ? a->config->classes[victim->class_index].name
	                          : "";

	tj_log_info("admitter", "preempting a running gang", TJ_STR("trainjob", victim->key),
	            TJ_STR("by", by), TJ_STR("qos", tier),
	            TJ_INT("stopIn", (int)(at - now_seconds())));
	if (a->metrics)
		tj_metric_add(a->metrics->trainjob_preemptions_total, TJ_LABELS(tier, cls), 1);
	a->enqueue_first(a->userdata, victim->key);
}

static size_t cycle(struct tj_admitter *a)
{
	/* The cycle's number (a->cycles once counted) stamps the placements it asks for. */
	const struct tj_admitter_source src = {
		.config = a->config,
		.informers = a->informers,
		.entries = a->entries,
		.refusals = a->refusals,
		.gone = a->gone,
		.n_gone = a->n_gone,
		.ledger = a->ledger,
		.eligibility = a->eligibility,
		.stamp = a->cycles + 1,
		.config_epoch = a->config_epoch,
		.preemptions = a->preemptions,
		.accounting = a->accounting,
	};
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admission_result *res = NULL;
	uint64_t now_ms = uv_now(a->loop);
	int64_t now = now_seconds();
	size_t decided = 0;
	uint64_t *given = NULL;
	int rc;

	a->cycles++;
	a->last_cycle_ms = now_ms;
	plan_lagging(a, now_ms);
	rc = tj_admitter_snapshot_build(&src, &s, now, now_ms);
	if (rc == 0 && tj_admitter_shares_apply(&a->shares, &src, &s, now) < 0)
		tj_log_warn("admitter",
		            "no memory for the fair share: the queue is ordered by age");
	if (rc == 0 && a->shares.read_at == now)
		publish_shares(a);
	if (rc < 0)
		goto out;
	a->cycle_snapshot_ns = uv_hrtime();
	if (a->n_last == s.input.n_classes + 1)
		s.input.cursors = a->cursors;
	s.input.digests = given = digests_to_give(a, &s);
	rc = tj_admit(&s.input, &res);
	if (rc < 0)
		goto out;
	a->cycle_decided_ns = uv_hrtime();
	if (res->preempting && tj_admitter_preemptions_take(&src, &s, res, now, preempted, a) < 0)
		tj_log_error("admitter", "no memory to record the victims of a preemption");
	/* The admitted gangs first, so that their creates wait for no message of the others. */
	for (size_t i = 0; i < s.n_jobs; i++) {
		struct tj_admitter_entry *e = s.job_entries[i];
		struct tj_admission_decision *d = &res->decisions[i];

		e->rank = d->rank;

		if (d->verdict == TJ_ADMISSION_ADMITTED &&
		    take_admission(a, e, &s, d, now, now_ms) == 0) {
			tj_log_info("admitter", "admitted a gang", TJ_STR("trainjob", e->key),
			            TJ_INT("pods", e->num_pods), TJ_STR("gpuClass", e->gpu_class),
			            TJ_BOOL("backfilled", d->backfilled));
			a->enqueue_first(a->userdata, e->key);
		}
	}
	for (size_t i = 0; i < s.n_jobs; i++) {
		struct tj_admitter_entry *e = s.job_entries[i];
		struct tj_admission_decision *d = &res->decisions[i];

		if (i + TJ_ADMITTER_FETCH_AHEAD < s.n_jobs)
			tj_admitter_entry_fetch_told(s.job_entries[i + TJ_ADMITTER_FETCH_AHEAD]);
		/* A settled class is decided as in the last cycle, which told what was worth it. */
		if (d->settled)
			continue;
		if (e->decided)
			tj_admission_keep_last_look(d, &e->decision);
		/* The entry keeps the decision last told, which its status shows, so that a job
		 * drifting back one place a cycle is told once the drift is worth it. */
		if (d->verdict == TJ_ADMISSION_ADMITTED ||
		    (e->decided && !tj_admission_worth_telling(&e->decision, d)))
			continue;
		tj_admission_say_deferred(&s.input, i, d);
		e->decision = *d;
		e->decision.nodes = NULL;
		e->decided = true;
		a->enqueue(a->userdata, e->key);
	}
	publish_stats(a, res);
	keep_last(a, res, s.input.n_classes + 1);
	if (a->metrics)
		tj_metric_add(a->metrics->trainjob_admission_untried_total, NULL,
		              (double)res->untried);
	decided = s.n_jobs - res->untried - res->settled;
out:
	if (rc < 0)
		tj_log_error("admitter", "could not decide the queue", TJ_ERR(rc));
	tj_admission_result_free(res);
	tj_admitter_snapshot_clear(&s);
	free(given);
	return decided;
}

/* ---- scheduling cycles ---- */

static void on_timer(uv_timer_t *t)
{
	struct tj_admitter *a = t->data;
	uint64_t start, took, cpu;
	size_t decided;

	a->scheduled = false;
	if (!a->active || a->stopping)
		return;
	if (rebuilding(a)) {
		/* The last awaited plan kicks the cycle; the bound, the period's kick. */
		return;
	}
	if (awaiting_failed(a))
		return;
	start = uv_hrtime();
	a->trigger_freed = false;
	a->cycle_trigger_ns = a->trigger_ns;
	a->cycle_trigger_cpu_ns = a->trigger_cpu_ns;
	a->cycle_trigger_wait_ns = a->trigger_wait_ns;
	a->cycle_held_ns = a->held_ns;
	a->cycle_start_ns = start;
	a->cycle_snapshot_ns = a->cycle_decided_ns = start;
	a->cycle_cpu_ns = thread_cpu_ns();
	decided = cycle(a);
	took = uv_hrtime() - start;
	cpu = thread_cpu_ns() - a->cycle_cpu_ns;
	/* What the cycle took from the loop's other work is its CPU time: while other processes
	 * of the machine have the CPU, the rest of the loop waits as well. */
	tj_time_share_spend(&a->share, cpu, start + took);
	if (a->metrics) {
		tj_metric_observe(a->metrics->trainjob_admission_cycle_duration_seconds, NULL,
		                  (double)took / 1e9);
		tj_metric_add(a->metrics->trainjob_admission_decisions_total, NULL,
		              (double)decided);
	}
	tj_log_debug(
	        "admitter", "decided the queue", TJ_INT("jobs", (long long)decided),
	        TJ_INT("microseconds", (long long)(took / 1000)),
	        TJ_INT("snapshotUs", (long long)(a->cycle_snapshot_ns - start) / 1000),
	        TJ_INT("decideUs", (long long)(a->cycle_decided_ns - a->cycle_snapshot_ns) / 1000),
	        TJ_INT("cpuUs", (long long)cpu / 1000));
}

static void on_period(uv_timer_t *t)
{
	tj_admitter_kick(t->data);
}

static void kick(struct tj_admitter *a, bool freed)
{
	uint64_t now, delay = 0, owed_ms, credit = freed ? CYCLE_CREDIT_MS * 1000000ULL : 0;

	/* A cycle already scheduled answers a plain kick as well. */
	if (!a->active || a->stopping || (a->scheduled && !freed))
		return;
	now = uv_now(a->loop);
	if (a->cycles && now - a->last_cycle_ms < CYCLE_GAP_MS)
		delay = CYCLE_GAP_MS - (now - a->last_cycle_ms);
	owed_ms = (tj_time_share_wait_credit(&a->share, uv_hrtime(), credit) + 999999) / 1000000;
	if (owed_ms > delay)
		delay = owed_ms;
	/* One due no later answers freed GPUs too; one due later is brought forward. The event
	 * it answers is this one, unless an earlier one since the last cycle freed room too (a
	 * cycle held back for the plan of a job whose pod failed answers that failure). */
	if (a->scheduled && a->due_ms <= now + delay)
		return;
	a->scheduled = true;
	a->due_ms = now + delay;
	if (!a->trigger_freed) {
		a->trigger_ns = uv_hrtime();
		a->trigger_cpu_ns = thread_cpu_ns();
		a->trigger_wait_ns = thread_wait_ns();
		a->trigger_freed = freed;
	}
	a->held_ns = delay * 1000000;
	uv_timer_start(&a->timer, on_timer, delay, 0);
}

void tj_admitter_kick(struct tj_admitter *a)
{
	kick(a, false);
}

/* Whether a pod holds resources on a node. */
static const char *holds_node(const struct tj_pod *pod)
{
	return tj_pod_terminal(pod) ? NULL : tj_pod_node_of(pod);
}

void tj_admitter_pod_changed(struct tj_admitter *a, const struct tj_pod *old,
                             const struct tj_pod *pod)
{
	const char *was = old ? holds_node(old) : NULL, *is = pod ? holds_node(pod) : NULL;

	tj_ledger_touch_pod(a->ledger, old);
	tj_ledger_touch_pod(a->ledger, pod);
	if (!was)
		return;
	if (a->active && pod && pod->trainjob && pod->phase == TJ_POD_FAILED)
		await_failed(a, pod);
	/* Only what frees room can let a gang in: a pod that comes to hold a node takes room,
	 * which the next cycle reads anyway (an admitted gang's pods were counted on their
	 * nodes from the admission). A pod told to stop frees nothing yet, but its end is now
	 * known, which moves the head's expected start and reservation. */
	if (!is || strcmp(was, is) != 0)
		kick(a, true);
	else if (memcmp(&old->requests, &pod->requests, sizeof(pod->requests)) != 0 ||
	         old->deletion_time != pod->deletion_time)
		kick(a, false);
}

void tj_admitter_node_changed(struct tj_admitter *a, const struct tj_node *old,
                              const struct tj_node *node)
{
	/* What the node offers is judged again, whether the controller leads or not. */
	tj_ledger_node_changed(a->ledger, old, node);
	/* A status report that changes nothing the queue reads is not worth a cycle: with
	 * thousands of nodes, their periodic reports alone would have the admission decide
	 * the whole queue again several times a second, and hold back the cycles of the
	 * events that free GPUs. */
	if (old && node && tj_node_same_placement(old, node))
		return;
	if (!node && a->config)
		tj_admitter_gone_add(a->gone, &a->n_gone, a->config, old, uv_now(a->loop));
	kick(a, false);
}

/* ---- the interface ---- */

int tj_admitter_new(uv_loop_t *loop, const struct tj_admitter_config *config,
                    struct tj_admitter **ret)
{
	struct tj_admitter *a = calloc(1, sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = tj_store_new(&tj_admitter_entry_ops, &a->entries);
	if (rc == 0)
		rc = tj_store_new(&tj_admitter_refusals_ops, &a->refusals);
	if (rc == 0)
		rc = tj_store_new(&awaited_ops, &a->awaiting);
	if (rc == 0)
		rc = tj_store_new(&awaited_ops, &a->failed);
	if (rc == 0)
		rc = tj_store_new(&tj_admitter_preemption_ops, &a->preemptions);
	if (rc == 0)
		rc = tj_accounting_new(loop, config->client, &a->accounting);
	if (rc == 0)
		rc = tj_ledger_new(&a->ledger);
	if (rc == 0)
		rc = tj_eligibility_new(&a->eligibility);
	if (rc < 0) {
		tj_store_free(a->entries);
		tj_store_free(a->refusals);
		tj_store_free(a->awaiting);
		tj_store_free(a->failed);
		tj_store_free(a->preemptions);
		tj_ledger_free(a->ledger);
		tj_accounting_free(a->accounting);
		free(a);
		return rc;
	}
	a->loop = loop;
	a->informers = config->informers;
	a->metrics = config->metrics;
	a->enqueue = config->enqueue;
	a->enqueue_first = config->enqueue_first ? config->enqueue_first : config->enqueue;
	a->userdata = config->userdata;
	a->kueue = config->kueue;
	tj_accounting_on_loaded(a->accounting, accounting_loaded, a);
	tj_time_share_init(&a->share, CYCLE_SHARE, CYCLE_BURST_MS * 1000000ULL, uv_hrtime());
	uv_timer_init(loop, &a->timer);
	uv_timer_init(loop, &a->period);
	a->timer.data = a->period.data = a;
	a->open_handles = 2;
	*ret = a;
	return 0;
}

static void on_closed(uv_handle_t *h)
{
	struct tj_admitter *a = h->data;

	if (--a->open_handles == 0) {
		tj_store_free(a->entries);
		tj_store_free(a->refusals);
		tj_store_free(a->awaiting);
		tj_store_free(a->failed);
		tj_store_free(a->preemptions);
		tj_ledger_free(a->ledger);
		tj_accounting_free(a->accounting);
		tj_admitter_shares_clear(&a->shares);
		tj_eligibility_free(a->eligibility);
		forget_last(a);
		free(a);
	}
}

/* Stops the timers; the admitter is freed after the loop has closed them. */
static void stop_timers(struct tj_admitter *a)
{
	if (!a || a->stopping)
		return;
	a->stopping = true;
	uv_close((uv_handle_t *)&a->timer, on_closed);
	uv_close((uv_handle_t *)&a->period, on_closed);
}

struct tj_admitter *tj_admitter_free(struct tj_admitter *a)
{
	/* The memory goes with the close callbacks of the timers. */
	stop_timers(a);
	return NULL;
}

void tj_admitter_set_config(struct tj_admitter *a, const struct tj_config *config)
{
	a->config = config;
	a->config_epoch++;
	forget_last(a);
	tj_accounting_set_retention(a->accounting,
	                            tj_config_admission(config)->accounting_retention);
	/* Every node is judged again by the new classes and policies. */
	tj_ledger_invalidate(a->ledger);
	tj_admitter_kick(a);
}

void tj_admitter_set_active(struct tj_admitter *a, bool active)
{
	if (a->stopping || a->active == active)
		return;
	a->active = active;
	tj_accounting_set_active(a->accounting, active);
	forget_last(a);
	if (active) {
		a->active_since_ms = uv_now(a->loop);
		want_records(a);
		/* Pods changed unheard while another replica led, or before the caches synced. */
		tj_ledger_invalidate(a->ledger);
		uv_timer_start(&a->period, on_period, TJ_ADMITTER_PERIOD_MS, TJ_ADMITTER_PERIOD_MS);
		tj_admitter_kick(a);
	} else {
		uv_timer_stop(&a->period);
		uv_timer_stop(&a->timer);
		a->scheduled = false;
		a->trigger_freed = false;
		clear_awaiting(a);
		drop_awaited(a->failed);
	}
}

void tj_admitter_await(struct tj_admitter *a, const char *key)
{
	struct awaited *w;

	if (!a->active || a->stopping || strlen(key) >= sizeof(w->key) ||
	    !(w = calloc(1, sizeof(*w))))
		return;
	strcpy(w->key, key);
	if (!a->awaited)
		a->awaiting_since_ms = uv_now(a->loop);
	if (tj_store_upsert(a->awaiting, w, NULL) < 0) {
		free(w);
		return;
	}
	a->awaited = tj_store_len(a->awaiting);
}

bool tj_admitter_ticket(struct tj_admitter *a, const struct tj_trainjob *job, const char *key,
                        struct tj_admission_ticket *ret)
{
	const struct tj_admission_policy *policy = tj_config_admission(a->config);
	const struct tj_admitter_entry *e;

	if (!policy->enabled || (job->kueue && a->kueue) || !tj_trainjob_is_ours(job))
		return false;
	*ret = (struct tj_admission_ticket){ .pin_timeout = policy->pin_timeout_seconds,
		                             .restart_wait = policy->restart_wait_seconds };
	tj_admitter_preemption_of(a->preemptions, job, key, &ret->preempt_at, &ret->preempted_by);
	e = entry_get(a, key);
	if (!e)
		return true;
	if (e->unplaceable)
		return false;
	if (e->state == TJ_ADMITTER_ADMITTED) {
		ret->admitted = true;
		ret->nodes = (const char *const *)e->nodes;
		ret->n_nodes = e->n_nodes;
		ret->launcher_node = e->launcher_node;
		ret->decision = &e->decision;
	} else if (e->decided) {
		/* Waiting: the queue's verdict. Created: the admission's, for the plan that
		 * records the start when the one that created the pods lost its status patch. */
		ret->decision = &e->decision;
	}
	ret->creating = e->state == TJ_ADMITTER_CREATED;
	return true;
}

/* What one pod of spec asks for, with the requests as read in *r. A quantity the API server
 * would refuse fails the create; until then, nothing. */
static struct tj_admission_resources pod_request(const struct tj_gpu_class *cls, const cJSON *spec,
                                                 const char *key, struct tj_pod_resources *r)
{
	if (tj_pod_spec_requests(spec, r) < 0)
		tj_log_debug("admitter", "pod requests not fully read", TJ_STR("trainjob", key));
	return (struct tj_admission_resources){ cls ? tj_pod_resources_extended(r, cls->resource)
		                                    : 0,
		                                r->cpu_milli, r->memory, 1 };
}

/* For a job without a GPU class (config: the classes; NULL for a job of a class) whose pods
 * ask for extended resources: what one pod (and the launcher) asks of each class's
 * resource, into e->class_requests (NULL when they ask for no class's: the job is left to
 * the scheduler, e->unplaceable). r and lr are the pod's and the launcher's requests, whose
 * names are still the rendered pods'. */
static void read_class_requests(const struct tj_config *config, const struct tj_pod_resources *r,
                                const struct tj_pod_resources *lr, struct tj_admitter_entry *e)
{
	size_t n = config ? config->n_classes : 0;
	bool any = false;

	free(e->class_requests);
	e->class_requests = NULL;
	e->n_class_requests = 0;
	e->unplaceable = false;
	if (!config || r->n_extended == 0)
		return;
	e->class_requests = calloc(2 * n + 1, sizeof(*e->class_requests));
	for (size_t c = 0; e->class_requests && c < n; c++) {
		const char *res = config->classes[c].resource;

		e->class_requests[2 * c].gpus = tj_pod_resources_extended(r, res);
		e->class_requests[2 * c + 1].gpus = tj_pod_resources_extended(lr, res);
		any = any || e->class_requests[2 * c].gpus > 0;
	}
	if (!any) {
		free(e->class_requests);
		e->class_requests = NULL;
		e->unplaceable = true;
		return;
	}
	e->n_class_requests = n;
}

/* What one pod (spec) and the launcher (NULL without) count for in ResourceQuotas. A spec
 * the API server would refuse counts for nothing: its create fails anyway. */
static void read_quota_use(const cJSON *spec, const cJSON *launcher, struct tj_admitter_entry *e)
{
	e->quota_pod = tj_quota_pod_free(e->quota_pod);
	e->quota_launcher = tj_quota_pod_free(e->quota_launcher);
	if (tj_quota_pod_of(spec, &e->quota_pod) < 0 ||
	    (launcher && tj_quota_pod_of(launcher, &e->quota_launcher) < 0))
		tj_log_info("admitter", "what the pods count for in ResourceQuotas is not read",
		            TJ_STR("trainjob", e->key));
}

/* The request of one pod (and of the launcher with it) and its priority, from the rendered
 * pods. */
static void read_want(struct tj_admitter *a, const struct tj_trainjob *job,
                      const struct tj_plan_want *want, struct tj_admitter_entry *e)
{
	const struct tj_gpu_class *cls = tj_config_find_class(a->config, want->gpu_class);
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(want->pod, "spec");
	const cJSON *prio = cJSON_GetObjectItemCaseSensitive(spec, "priority");
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(spec, "priorityClassName");
	struct tj_pod_resources r = { 0 }, lr = { 0 };

	e->request = pod_request(cls, spec, e->key, &r);
	e->launcher = want->launcher
	                      ? pod_request(cls, tj_json_path(want->launcher, "spec"), e->key, &lr)
	                      : (struct tj_admission_resources){ 0 };
	/* As the scheduler will order the pods: spec.priority when the template sets it, else
	 * the value of its PriorityClass (or of the global default); the TrainJob's annotation
	 * wins over both. */
	int64_t v;

	if (cJSON_IsNumber(prio) && tj_double_to_int64(prio->valuedouble, INT32_MIN, INT32_MAX, &v))
		e->priority = (int32_t)v;
	else
		e->priority = tj_priority_of(tj_admitter_store_of(a->informers->priority_classes),
		                             cJSON_IsString(pc) ? pc->valuestring : NULL);
	if (job->priority)
		e->priority = (int32_t)strtol(job->priority, NULL, 10);
	e->tier = want->tier;
	e->preempts = want->preempts;
	e->preempt_after = want->preempt_after;
	e->backfill_reserved_nodes = want->backfill_reserved_nodes;
	e->qos = want->qos;
	snprintf(e->gpu_class, sizeof(e->gpu_class), "%s", want->gpu_class);
	e->class_epoch = 0;
	snprintf(e->namespace, sizeof(e->namespace), "%s", job->namespace);
	if (e->shared_namespace && strcmp(e->shared_namespace, e->namespace) != 0)
		e->shared_namespace = tj_intern_unref(e->shared_namespace);
	read_class_requests(cls ? NULL : a->config, &r, &lr, e);
	e->placement = tj_placement_unref(e->placement);
	char problem[TJ_PLACEMENT_PROBLEM_MAX] = "";

	if (tj_placement_compile(spec, &e->placement, problem, sizeof(problem)) < 0)
		tj_log_info("admitter",
		            "the pods' placement is not read; every node of the class "
		            "counts for it",
		            TJ_STR("trainjob", e->key), TJ_STR("problem", problem));
	/* Shared with the jobs of an equal placement, which the cycle finds by its pointer. */
	tj_eligibility_intern(a->eligibility, &e->placement);
	read_quota_use(spec, tj_json_path(want->launcher, "spec"), e);
	tj_admitter_entry_drop_excluded(e);
	e->excluded = calloc(want->n_excluded + 1, sizeof(*e->excluded));
	for (size_t i = 0; e->excluded && i < want->n_excluded; i++)
		if ((e->excluded[e->n_excluded] = strdup(want->excluded[i])))
			e->n_excluded++;
	e->num_nodes = want->num_nodes;
	e->num_pods = want->num_pods;
	e->walltime = want->walltime;
	e->grace = tj_pod_spec_termination_grace(spec);
	e->restart = want->restart;
	e->not_before = want->not_before;
	e->creation_time = job->creation_time;
}

/* The gang's creates go out now: the controller's share of the time from the event that let
 * it in to its pods, in three parts for the log (the wait for the cycle, the cycle, and the
 * wait for the plan that creates it), the loop thread's CPU time over the same span
 * (busyUs: the controller's own work in it, without the time other processes of the
 * machine had the CPU), and the time in it the thread was ready to run but waited for a CPU
 * (runQueueUs: latencyUs less it is the controller's time on a machine of its own). */
static void observe_latency(const struct tj_admitter *a, const struct tj_admitter_entry *e)
{
	uint64_t now = uv_hrtime(), wait;

	if (!e->trigger_ns || now < e->trigger_ns)
		return;
	wait = thread_wait_ns();
	if (a->metrics)
		tj_metric_observe(a->metrics->trainjob_admission_latency_seconds, NULL,
		                  (double)(now - e->trigger_ns) / 1e9);
	tj_log_info("admitter", "creating an admitted gang", TJ_STR("trainjob", e->key),
	            TJ_INT("latencyUs", (long long)(now - e->trigger_ns) / 1000),
	            TJ_INT("waitedForCycleUs", (long long)(e->cycle_ns - e->trigger_ns) / 1000),
	            TJ_INT("heldForShareUs", (long long)e->held_ns / 1000),
	            TJ_INT("cycleUs", (long long)(e->admitted_ns - e->cycle_ns) / 1000),
	            TJ_INT("cycleSnapshotUs", (long long)e->snapshot_ns / 1000),
	            TJ_INT("cycleDecideUs", (long long)e->decide_ns / 1000),
	            TJ_INT("cycleCpuUs", (long long)e->cpu_ns / 1000),
	            TJ_INT("waitedForPlanUs", (long long)(now - e->admitted_ns) / 1000),
	            TJ_INT("busyUs", (long long)(thread_cpu_ns() - e->trigger_cpu_ns) / 1000),
	            TJ_INT("runQueueUs", wait > e->trigger_wait_ns
	                                         ? (long long)(wait - e->trigger_wait_ns) / 1000
	                                         : 0));
}

/* What the job's new plan wants: a gang admitted (want->wanted), or nothing. admits: the
 * plan creates the admitted gang, whose nodes stay reserved until a later plan no longer
 * wants anything (its pods are in the cache by then). 0 or -ENOMEM. */
static int want_gang(struct tj_admitter *a, const struct tj_trainjob *job, const char *key,
                     const struct tj_plan_want *want, bool admits)
{
	struct tj_admitter_entry *e = entry_get(a, key);
	int rc;

	planned(a, key);
	if (admits) {
		if (e && e->state == TJ_ADMITTER_ADMITTED) {
			e->state = TJ_ADMITTER_CREATED;
			e->created_ms = uv_now(a->loop);
			e->lagging = false;
			e->creates_judged = e->creates_shown = false;
			observe_latency(a, e);
		}
		return 0;
	}
	if (!want->wanted) {
		if (e && e->state == TJ_ADMITTER_CREATED && !job->status.start_time) {
			tj_admitter_entry_drop_nodes(e);
			e->state = TJ_ADMITTER_STARTING;
			tj_admitter_kick(a);
		} else if (e && (e->state != TJ_ADMITTER_STARTING || job->status.start_time)) {
			tj_store_delete(a->entries, key, NULL);
			tj_admitter_kick(a);
		}
		return 0;
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || strlen(key) >= sizeof(e->key)) {
			free(e);
			return -ENOMEM;
		}
		strcpy(e->key, key);
		e->rank = SIZE_MAX;
		read_want(a, job, want, e);
		rc = tj_store_upsert(a->entries, e, NULL);
		if (rc < 0) {
			tj_admitter_entry_free(e);
			return rc;
		}
		/* Its next plan creates the pods at once. */
		if (e->unplaceable)
			a->enqueue(a->userdata, key);
		else
			tj_admitter_kick(a);
		return 0;
	}
	switch (e->state == TJ_ADMITTER_CREATED
	                ? tj_admitter_created_again(e, want, uv_now(a->loop))
	                : TJ_ADMITTER_DECIDE_AGAIN) {
	case TJ_ADMITTER_WAIT_FOR_CACHE:
		/* The pods' events plan the job again; a cycle past the patience, should none
		 * come (create_again). */
		e->lagging = true;
		return 0;
	case TJ_ADMITTER_CREATE_AGAIN:
		create_again(a, e);
		return 0;
	case TJ_ADMITTER_DECIDE_AGAIN:
		break;
	}
	if (e->state == TJ_ADMITTER_CREATED || e->state == TJ_ADMITTER_STARTING ||
	    (e->state == TJ_ADMITTER_ADMITTED && !tj_admitter_same_gang(e, want))) {
		/* More pods are missing than were admitted (creates that failed, a gang that
		 * changed): the job is decided again. */
		tj_admitter_entry_requeue(e);
		read_want(a, job, want, e);
		tj_admitter_kick(a);
		return 0;
	}
	/* A shallow copy, for the scalars only: read_want frees what the entry owns. */
	struct tj_admitter_entry before = *e;
	uint64_t placed = e->placement ? tj_placement_hash(e->placement) : 0;

	read_want(a, job, want, e);
	/* The plans of a queued job repeat the same want: only a change is worth a cycle. */
	if (e->state == TJ_ADMITTER_WAITING &&
	    (before.num_pods != e->num_pods || before.priority != e->priority ||
	     before.tier != e->tier || before.restart != e->restart ||
	     before.not_before != e->not_before || before.preempts != e->preempts ||
	     before.preempt_after != e->preempt_after ||
	     before.backfill_reserved_nodes != e->backfill_reserved_nodes || before.qos != e->qos ||
	     before.walltime != e->walltime ||
	     memcmp(&before.request, &e->request, sizeof(e->request)) != 0 ||
	     memcmp(&before.launcher, &e->launcher, sizeof(e->launcher)) != 0 ||
	     strcmp(before.gpu_class, e->gpu_class) != 0 || !e->decided ||
	     placed != (e->placement ? tj_placement_hash(e->placement) : 0)))
		tj_admitter_kick(a);
	return 0;
}

/* The job's refusals, made when it has none; NULL without memory. */
static struct tj_admitter_refusals *refusals_for(struct tj_admitter *a, const char *key)
{
	struct tj_admitter_refusals *r =
	        (struct tj_admitter_refusals *)tj_store_get(a->refusals, key);

	if (r)
		return r;
	if (!(r = calloc(1, sizeof(*r))) || strlen(key) >= sizeof(r->key)) {
		free(r);
		return NULL;
	}
	strcpy(r->key, key);
	if (tj_store_upsert(a->refusals, r, NULL) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* The nodes that refused the pinned pods of the job's gang, as its plan gave the gang back:
 * the job's gangs keep off them for TJ_PLAN_REFUSAL_MINUTES. */
static void keep_off(struct tj_admitter *a, const char *key, const char (*nodes)[TJ_NAME_MAX],
                     size_t n)
{
	struct tj_admitter_refusals *r;

	if (n == 0 || !(r = refusals_for(a, key)))
		return;
	tj_admitter_refusals_add(r, nodes, n, uv_now(a->loop) + TJ_PLAN_REFUSAL_MINUTES * 60000ULL);
	for (size_t i = 0; i < n; i++)
		tj_log_info("admitter", "a node refused a pinned pod: the job keeps off it",
		            TJ_STR("trainjob", key), TJ_STR("node", nodes[i]),
		            TJ_INT("minutes", TJ_PLAN_REFUSAL_MINUTES));
}

/* The creates of an admitted gang failed: its nodes go back to the queue, and the job is
 * decided again, not before hold_seconds. */
static void release(struct tj_admitter *a, const char *key, int64_t hold_seconds)
{
	struct tj_admitter_entry *e = entry_get(a, key);
	struct tj_admitter_refusals *r;

	if (hold_seconds > 0 && (r = refusals_for(a, key)))
		r->hold_until_ms = uv_now(a->loop) + (uint64_t)hold_seconds * 1000;

	if (e && e->state != TJ_ADMITTER_WAITING) {
		tj_admitter_entry_requeue(e);
		tj_admitter_kick(a);
	}
}

int tj_admitter_commit(struct tj_admitter *a, const struct tj_trainjob *job, const char *key,
                       const struct tj_gang_request *gang, bool writes_shown)
{
	struct tj_admitter_entry *e = entry_get(a, key);

	/* The first plan after the one that created the gang: its creates are what the cache
	 * showed, or gave up waiting for. */
	if (e && e->state == TJ_ADMITTER_CREATED && !e->creates_judged) {
		e->creates_judged = true;
		e->creates_shown = writes_shown;
	}
	keep_off(a, key, (const char(*)[TJ_NAME_MAX])gang->refused, gang->n_refused);
	return want_gang(a, job, key, &gang->want, gang->admits);
}

void tj_admitter_outcome(struct tj_admitter *a, const char *key, enum tj_gang_outcome outcome)
{
	switch (outcome) {
	case TJ_GANG_SENT:
		break;
	case TJ_GANG_REFUSED:
	case TJ_GANG_MADE_IN_PART:
		release(a, key, TJ_ADMITTER_REFUSED_HOLD_S);
		break;
	case TJ_GANG_NOT_SENT:
		release(a, key, 0);
		break;
	}
}

void tj_admitter_job_deleted(struct tj_admitter *a, const struct tj_trainjob *job)
{
	if (a->active)
		tj_accounting_job_deleted(a->accounting, job, now_seconds());
}

void tj_admitter_forget(struct tj_admitter *a, const char *key)
{
	tj_store_delete(a->refusals, key, NULL);
	planned(a, key);
	if (tj_store_delete(a->entries, key, NULL) == 0)
		tj_admitter_kick(a);
}
