#include "controller/admitter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/number.h"
#include "base/time_share.h"
#include "controller/log.h"
#include "informers/priority_class.h"
#include "informers/resources.h"
#include "reconcilers/admission.h"
#include "reconcilers/gpu_use.h"
#include "reconcilers/json.h"
#include "reconcilers/launcher_hold.h"
#include "reconcilers/node_health.h"

/* Cycles follow each other at least this far apart, so that a burst of pod events is
 * decided once; and they may take a third of the loop's wall clock over time, so that
 * deciding a long queue never starves the reconciles that create the pods it admits. The
 * share is a budget with a burst, not a gap after each cycle: a cycle answers a freed node
 * at once unless the cycles before it have spent the third (a fixed gap of twice the last
 * cycle made most answers wait for it, 100 ms at p99 with 5,000 jobs queued). */
#define CYCLE_GAP_MS   10
#define CYCLE_SHARE    (1.0 / 3)
#define CYCLE_BURST_MS 150
/* How far the cycle after freed GPUs may run ahead of the share: one long cycle's worth. A
 * stream of ends still has its cycles held to the share, once the credit is spent. */
#define CYCLE_CREDIT_MS 100

enum entry_state {
	ENTRY_WAITING,  /* in the queue */
	ENTRY_ADMITTED, /* admitted, waiting for the plan that creates the gang */
	ENTRY_CREATED,  /* the gang's creates were sent; its nodes stay reserved until the
	                 * job's next plan, by when its pods are in the cache */
	ENTRY_STARTING, /* its pods exist, but no status has recorded the start yet: the plan
	                 * that will (a newer plan can supersede the one that created the pods,
	                 * and drop its bookkeeping) still announces the admission as it was */
};

/* One job of the queue, keyed "namespace/name". */
struct entry {
	char key[TJ_STORE_KEY_MAX];
	char namespace[TJ_NAME_MAX];
	char gpu_class[TJ_NAME_MAX]; /* "" for none */
	enum entry_state state;
	int num_nodes, num_pods;
	struct tj_adm_resources request; /* of one pod; gpus of the class's resource */
	int32_t priority;
	int64_t creation_time;
	int64_t walltime;
	bool restart;
	bool decided;                    /* decision holds the last cycle's verdict */
	struct tj_adm_decision decision; /* nodes always NULL: the names are below */
	/* ADMITTED and CREATED: per pod, its node and that node's hostname label. */
	char **nodes;     /* owned array of owned strings */
	char **hostnames; /* owned array of owned strings */
	size_t n_nodes;
	/* The launcher admitted with the gang (pods 0: none); ADMITTED, CREATED: its node. */
	struct tj_adm_resources launcher;
	char *launcher_node;     /* owned; NULL without */
	char *launcher_hostname; /* owned; NULL without */
	uint64_t admitted_ms;
	/* ADMITTED: when the event that started its cycle came, when the cycle started, and
	 * when it was admitted (uv_hrtime), for the latency of the admission. */
	uint64_t trigger_ns, cycle_ns, admitted_ns;
	uint64_t held_ns; /* of the wait for the cycle, what the cycles' share held it back */
	char **excluded;  /* owned array of owned names: nodes its pods must avoid */
	size_t n_excluded;
	/* A job without a GPU class that asks for extended resources (GPUs under a generic
	 * runtime): no class says which nodes offer them, so the scheduler alone places it. */
	bool unplaceable;
};

struct tj_admitter {
	uv_loop_t *loop;                      /* borrowed */
	struct tj_informers *informers;       /* borrowed */
	const struct tj_std_metrics *metrics; /* borrowed */
	const struct tj_config *config;       /* borrowed */
	void (*enqueue)(void *userdata, const char *key);
	void (*enqueue_first)(void *userdata, const char *key);
	void *userdata;
	struct tj_store *entries; /* owned */
	uv_timer_t timer;         /* the next cycle */
	uv_timer_t period;        /* the cycle without events */
	int open_handles;
	bool active;
	bool scheduled;
	bool stopping;
	uint64_t last_cycle_ms;
	struct tj_time_share share; /* of the loop's wall clock the cycles may take */
	unsigned long cycles;
	/* uv_hrtime of the first kick since the last cycle started (the event the next cycle
	 * answers), and of the running cycle's own first kick and start. */
	uint64_t trigger_ns, cycle_trigger_ns, cycle_start_ns;
	uint64_t held_ns, cycle_held_ns; /* the delay the next cycle was given, in ns */
	uint64_t due_ms;                 /* uv_now at which the scheduled cycle runs */
};

/* ---- entries ---- */

static void entry_drop_nodes(struct entry *e)
{
	for (size_t i = 0; i < e->n_nodes; i++) {
		free(e->nodes[i]);
		free(e->hostnames[i]);
	}
	free(e->nodes);
	free(e->hostnames);
	e->nodes = e->hostnames = NULL;
	e->n_nodes = 0;
	free(e->launcher_node);
	free(e->launcher_hostname);
	e->launcher_node = e->launcher_hostname = NULL;
}

static void entry_drop_excluded(struct entry *e)
{
	for (size_t i = 0; i < e->n_excluded; i++)
		free(e->excluded[i]);
	free(e->excluded);
	e->excluded = NULL;
	e->n_excluded = 0;
}

static void entry_free(void *obj)
{
	struct entry *e = obj;

	entry_drop_nodes(e);
	entry_drop_excluded(e);
	free(e);
}

static int entry_key(const void *obj, char *buf, size_t size)
{
	const struct entry *e = obj;
	size_t n = strlen(e->key);

	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(buf, e->key, n + 1);
	return 0;
}

static const struct tj_store_ops entry_ops = {
	.free = entry_free,
	.key = entry_key,
};

static struct entry *entry_get(struct tj_admitter *a, const char *key)
{
	return (struct entry *)tj_store_get(a->entries, key);
}

/* Back into the queue, undecided: the next cycle decides it with the others. */
static void entry_requeue(struct entry *e)
{
	e->state = ENTRY_WAITING;
	e->decided = false;
	entry_drop_nodes(e);
}

/* ---- what the caches say ---- */

static int64_t now_seconds(void)
{
	return (int64_t)time(NULL);
}

static const struct tj_store *store_of(const struct tj_reflector *r)
{
	return r ? tj_reflector_store(r) : NULL;
}

static int class_index(const struct tj_config *config, const char *name)
{
	for (size_t i = 0; config && name && *name && i < config->n_classes; i++)
		if (strcmp(config->classes[i].name, name) == 0)
			return (int)i;
	return -1;
}

static bool is_terminal(const struct tj_pod *pod)
{
	return pod->phase == TJ_POD_SUCCEEDED || pod->phase == TJ_POD_FAILED;
}

/* ---- one cycle ---- */

/* A node by name, through a sorted index. */
struct node_ref {
	const char *name;
	size_t index;
};

static int node_ref_cmp(const void *x, const void *y)
{
	return strcmp(((const struct node_ref *)x)->name, ((const struct node_ref *)y)->name);
}

static ssize_t find_node(const struct node_ref *refs, size_t n, const char *name)
{
	struct node_ref k = { name, 0 };
	const struct node_ref *r = name ? bsearch(&k, refs, n, sizeof(*refs), node_ref_cmp) : NULL;

	return r ? (ssize_t)r->index : -1;
}

/* What a cycle builds from the caches; freed at its end. */
struct snapshot {
	struct tj_adm_node *nodes;
	const struct tj_node **node_objs;
	struct node_ref *refs;
	size_t n_nodes;
	struct tj_adm_release *releases;
	size_t n_releases, cap_releases;
	struct tj_adm_usage *usage;
	size_t n_usage, cap_usage;
	struct tj_adm_job *jobs;
	struct entry **job_entries;
	size_t n_jobs;
	size_t *excluded; /* the jobs' excluded nodes, as indexes */
	bool oom;
};

static void snapshot_clear(struct snapshot *s)
{
	free(s->nodes);
	free(s->node_objs);
	free(s->refs);
	free(s->releases);
	free(s->usage);
	free(s->jobs);
	free(s->job_entries);
	free(s->excluded);
}

static bool grow(void **array, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 64;
	p = realloc(*array, c * size);
	if (!p)
		return false;
	*array = p;
	*cap = c;
	return true;
}

static void add_usage(struct snapshot *s, const char *namespace, int cls, int64_t gpus)
{
	for (size_t i = 0; i < s->n_usage; i++)
		if (s->usage[i].class_index == cls &&
		    strcmp(s->usage[i].namespace, namespace) == 0) {
			s->usage[i].gpus += gpus;
			return;
		}
	if (!grow((void **)&s->usage, &s->cap_usage, s->n_usage, sizeof(*s->usage))) {
		s->oom = true;
		return;
	}
	s->usage[s->n_usage++] = (struct tj_adm_usage){ namespace, cls, gpus };
}

static void add_release(struct snapshot *s, size_t node, int64_t at,
                        const struct tj_adm_resources *r)
{
	if (!grow((void **)&s->releases, &s->cap_releases, s->n_releases, sizeof(*s->releases))) {
		s->oom = true;
		return;
	}
	s->releases[s->n_releases++] = (struct tj_adm_release){ node, at, *r };
}

static void add_used(struct tj_adm_resources *used, const struct tj_adm_resources *r)
{
	used->gpus += r->gpus;
	used->cpu_milli += r->cpu_milli;
	used->memory += r->memory;
	used->pods += r->pods;
}

/* The TrainJob whose pod this is (its label, and its controller owner), or NULL. */
static const struct tj_trainjob *owner_of(struct tj_admitter *a, const struct tj_pod *pod)
{
	const struct tj_store *jobs = store_of(a->informers->trainjobs);
	const struct tj_trainjob *job;
	char key[TJ_STORE_KEY_MAX];

	if (!pod->trainjob || !jobs || tj_pod_trainjob_key(pod, key, sizeof(key)) != 1 ||
	    !(job = tj_store_get(jobs, key)))
		return NULL;
	return pod->owner_uid && strcmp(pod->owner_uid, job->uid) == 0 ? job : NULL;
}

/* The walltime end of the job a pod belongs to, or 0 when it has none (or is not ours):
 * its status.deadline, which the planner fixes at the start from activeDeadlineSeconds or
 * the config's defaultWalltime (reconcilers/walltime.h). */
static int64_t walltime_end(struct tj_admitter *a, const struct tj_pod *pod)
{
	const struct tj_trainjob *job = owner_of(a, pod);

	return job && job->status.start_time ? job->status.deadline : 0;
}

/* What a pod of namespace ns holds on node k until it ends (or end, its walltime's end). */
static void hold_on(struct snapshot *s, size_t k, const char *ns, const struct tj_adm_resources *r,
                    int64_t end, bool quotas)
{
	add_used(&s->nodes[k].used, r);
	if (quotas && r->gpus)
		add_usage(s, ns, s->nodes[k].class_index, r->gpus);
	if (end)
		add_release(s, k, end, r);
}

/* A TrainJob's pod that holds its launcher's place (reconcilers/launcher_hold.h) holds it
 * until the launcher exists, which then counts by itself: read from the cache, so that a
 * restart between the admission and the launcher's create keeps it. The node's index,
 * with the request in *ret; -1 for none. */
static ssize_t held_node(struct tj_admitter *a, struct snapshot *s, const struct tj_store *pods,
                         const struct tj_pod *pod, struct tj_adm_resources *ret)
{
	const struct tj_gpu_class *cls;
	struct tj_launcher_hold h;
	char key[TJ_STORE_KEY_MAX];
	int n;
	ssize_t k;

	if (!pod->launcher_hold || !owner_of(a, pod) ||
	    tj_launcher_hold_parse(pod->launcher_hold, &h) < 0)
		return -1;
	n = snprintf(key, sizeof(key), "%s/%s", pod->namespace, h.pod);
	if (n < 0 || (size_t)n >= sizeof(key) || tj_store_get(pods, key) ||
	    (k = find_node(s->refs, s->n_nodes, h.node)) < 0)
		return -1;
	cls = s->nodes[k].class_index >= 0 ? &a->config->classes[s->nodes[k].class_index] : NULL;
	*ret = (struct tj_adm_resources){ cls ? tj_launcher_hold_extended(&h, cls->resource) : 0,
		                          h.cpu_milli, h.memory, 1 };
	return k;
}

static int build_nodes(struct tj_admitter *a, struct snapshot *s, int64_t now)
{
	const struct tj_config *config = a->config;
	const struct tj_admission_policy *policy = tj_config_admission(config);
	const struct tj_failure_policy *fp = tj_config_failure_policy(config);
	const struct tj_store *nodes = store_of(a->informers->nodes);
	const struct tj_store *pods = store_of(a->informers->pods);
	size_t n = nodes ? tj_store_len(nodes) : 0, k = 0;
	bool quotas = policy->n_limits > 0;
	struct tj_store_iter it;
	const struct tj_node *node;

	s->nodes = calloc(n + 1, sizeof(*s->nodes));
	s->node_objs = calloc(n + 1, sizeof(*s->node_objs));
	s->refs = calloc(n + 1, sizeof(*s->refs));
	if (!s->nodes || !s->node_objs || !s->refs)
		return -ENOMEM;
	if (nodes)
		tj_store_iter_init(nodes, &it);
	while (nodes && k < n && (node = tj_store_iter_next(&it))) {
		int cls = tj_gpu_class_of_node(config, node);
		const struct tj_gpu_class *gc = cls >= 0 ? &config->classes[cls] : NULL;
		struct tj_adm_node *an = &s->nodes[k];

		*an = (struct tj_adm_node){
			.name = node->name,
			.class_index = cls,
			.domain = policy->topology_label
			                  ? tj_node_label(node, policy->topology_label)
			                  : NULL,
			.schedulable = tj_node_takes_new_pods(node, gc, fp, now),
			.allocatable = { gc ? tj_node_allocatable_extended(node, gc->resource) : 0,
			                 node->allocatable.cpu_milli, node->allocatable.memory,
			                 tj_node_pod_slots(node) },
		};
		s->node_objs[k] = node;
		s->refs[k] = (struct node_ref){ node->name, k };
		k++;
	}
	s->n_nodes = k;
	qsort(s->refs, k, sizeof(*s->refs), node_ref_cmp);

	/* Every pod that is bound or pinned to a node holds its requests there until it ends,
	 * ours or not; ours come free at their job's walltime end. */
	for (size_t i = 0; pods && i < s->n_nodes; i++) {
		struct tj_adm_node *an = &s->nodes[i];
		const struct tj_gpu_class *gc =
		        an->class_index >= 0 ? &config->classes[an->class_index] : NULL;
		const struct tj_pod *pod;

		tj_store_iter_index(pods, TJ_POD_INDEX_NODE, an->name, &it);
		while ((pod = tj_store_iter_next(&it))) {
			struct tj_adm_resources r;
			int64_t end;
			ssize_t held;

			if (is_terminal(pod))
				continue;
			r = (struct tj_adm_resources){
				gc ? tj_pod_resources_extended(&pod->requests, gc->resource) : 0,
				pod->requests.cpu_milli, pod->requests.memory, 1
			};
			end = walltime_end(a, pod);
			hold_on(s, i, pod->namespace, &r, end, quotas);
			if ((held = held_node(a, s, pods, pod, &r)) >= 0)
				hold_on(s, (size_t)held, pod->namespace, &r, end, quotas);
		}
	}
	return s->oom ? -ENOMEM : 0;
}

/* The gangs admitted but not yet in the cache hold their nodes. */
static void add_reservations(struct tj_admitter *a, struct snapshot *s)
{
	const struct tj_admission_policy *policy = tj_config_admission(a->config);
	struct tj_store_iter it;
	const struct entry *e;

	tj_store_iter_init(a->entries, &it);
	while ((e = tj_store_iter_next(&it))) {
		if (e->state == ENTRY_WAITING || e->state == ENTRY_STARTING)
			continue;
		for (size_t i = 0; i <= e->n_nodes; i++) {
			const char *name = i < e->n_nodes ? e->nodes[i] : e->launcher_node;
			const struct tj_adm_resources *r =
			        i < e->n_nodes ? &e->request : &e->launcher;
			ssize_t k = find_node(s->refs, s->n_nodes, name);

			if (k >= 0)
				hold_on(s, (size_t)k, e->namespace, r, 0, policy->n_limits > 0);
		}
	}
}

static int build_jobs(struct tj_admitter *a, struct snapshot *s, uint64_t now_ms)
{
	size_t n = tj_store_len(a->entries), k = 0, n_excluded = 0, x = 0;
	struct tj_store_iter it;
	struct entry *e;

	tj_store_iter_init(a->entries, &it);
	while ((e = (struct entry *)tj_store_iter_next(&it)))
		n_excluded += e->n_excluded;
	s->jobs = calloc(n + 1, sizeof(*s->jobs));
	s->job_entries = calloc(n + 1, sizeof(*s->job_entries));
	s->excluded = calloc(n_excluded + 1, sizeof(*s->excluded));
	if (!s->jobs || !s->job_entries || !s->excluded)
		return -ENOMEM;
	tj_store_iter_init(a->entries, &it);
	while ((e = (struct entry *)tj_store_iter_next(&it)) && k < n) {
		/* An admitted gang whose plan never came gives its nodes back. */
		if (e->state == ENTRY_ADMITTED &&
		    now_ms - e->admitted_ms > TJ_ADMITTER_ADMITTED_TIMEOUT_MS)
			entry_requeue(e);
		if (e->state != ENTRY_WAITING || e->unplaceable)
			continue;
		s->jobs[k] = (struct tj_adm_job){
			.key = e->key,
			.namespace = e->namespace,
			.class_index = class_index(a->config, e->gpu_class),
			.num_nodes = e->num_nodes,
			.num_pods = e->num_pods,
			.request = e->request,
			.priority = e->priority,
			.creation_time = e->creation_time,
			.walltime = e->walltime,
			.restart = e->restart,
			.excluded = &s->excluded[x],
			.launcher = e->launcher,
		};
		for (size_t i = 0; i < e->n_excluded && x < n_excluded; i++) {
			ssize_t node = find_node(s->refs, s->n_nodes, e->excluded[i]);

			if (node >= 0) {
				s->excluded[x++] = (size_t)node;
				s->jobs[k].n_excluded++;
			}
		}
		s->job_entries[k++] = e;
	}
	s->n_jobs = k;
	return 0;
}

/* The node's kubernetes.io/hostname label, its name without one; NULL without memory. */
static char *dup_hostname(const struct tj_node *node)
{
	const char *h = tj_node_label(node, "kubernetes.io/hostname");

	return strdup(h && *h ? h : node->name);
}

static int take_admission(const struct tj_admitter *a, struct entry *e, const struct snapshot *s,
                          const struct tj_adm_decision *d, uint64_t now_ms)
{
	e->nodes = calloc((size_t)e->num_pods, sizeof(*e->nodes));
	e->hostnames = calloc((size_t)e->num_pods, sizeof(*e->hostnames));
	if (!e->nodes || !e->hostnames)
		goto oom;
	for (int i = 0; i < e->num_pods; i++) {
		const struct tj_node *node = s->node_objs[d->nodes[i]];

		e->nodes[i] = strdup(node->name);
		e->hostnames[i] = dup_hostname(node);
		e->n_nodes = (size_t)i + 1;
		if (!e->nodes[i] || !e->hostnames[i])
			goto oom;
	}
	if (d->launcher_node != SIZE_MAX &&
	    (!(e->launcher_node = strdup(s->node_objs[d->launcher_node]->name)) ||
	     !(e->launcher_hostname = dup_hostname(s->node_objs[d->launcher_node]))))
		goto oom;
	e->state = ENTRY_ADMITTED;
	e->admitted_ms = now_ms;
	e->trigger_ns = a->cycle_trigger_ns;
	e->held_ns = a->cycle_held_ns;
	e->cycle_ns = a->cycle_start_ns;
	e->admitted_ns = uv_hrtime();
	e->decision = *d;
	e->decision.nodes = NULL;
	e->decided = true;
	return 0;
oom:
	entry_requeue(e);
	return -ENOMEM;
}

/* The GPUs of every class; the queue's counts are read from the jobs' statuses at each
 * scrape (tj_std_metrics_feed_jobs), by namespace as well. */
static void publish_stats(struct tj_admitter *a, const struct tj_adm_result *res)
{
	const struct tj_std_metrics *m = a->metrics;
	size_t n = a->config ? a->config->n_classes : 0;

	if (!m)
		return;
	for (size_t c = 0; c < n; c++) {
		const struct tj_adm_class_stats *st = &res->classes[c];
		const char *name = a->config->classes[c].name;

		tj_metric_set(m->trainjob_gpus, TJ_LABELS(name, "capacity"),
		              (double)st->capacity_gpus);
		tj_metric_set(m->trainjob_gpus, TJ_LABELS(name, "allocated"),
		              (double)st->allocated_gpus);
		tj_metric_set(m->trainjob_gpus, TJ_LABELS(name, "reserved"),
		              (double)st->reserved_gpus);
	}
}

/* Returns the jobs it decided. */
static size_t cycle(struct tj_admitter *a)
{
	struct snapshot s = { 0 };
	struct tj_adm_result *res = NULL;
	const char **class_names = NULL;
	const struct tj_admission_policy *policy = tj_config_admission(a->config);
	size_t n_classes = a->config ? a->config->n_classes : 0;
	uint64_t now_ms = uv_now(a->loop);
	int64_t now = now_seconds();
	struct tj_adm_quota *quotas = NULL;
	size_t decided = 0;
	int rc;

	a->cycles++;
	a->last_cycle_ms = now_ms;
	class_names = calloc(n_classes + 1, sizeof(*class_names));
	quotas = calloc(policy->n_limits + 1, sizeof(*quotas));
	rc = class_names && quotas ? build_nodes(a, &s, now) : -ENOMEM;
	if (rc == 0) {
		add_reservations(a, &s);
		rc = s.oom ? -ENOMEM : build_jobs(a, &s, now_ms);
	}
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < n_classes; i++)
		class_names[i] = a->config->classes[i].name;
	size_t n_quotas = 0;
	for (size_t i = 0; i < policy->n_limits; i++) {
		int cls = class_index(a->config, policy->limits[i].gpu_class);

		if (cls >= 0)
			quotas[n_quotas++] =
			        (struct tj_adm_quota){ policy->limits[i].namespace, cls,
				                       policy->limits[i].max_gpus };
	}
	struct tj_adm_config ac = {
		.backfill = policy->backfill,
		.wait_if_never_fits = policy->wait_if_never_fits,
		.quotas = quotas,
		.n_quotas = n_quotas,
		.defer_waiting_messages = true,
	};
	struct tj_adm_input in = {
		.config = &ac,
		.class_names = class_names,
		.n_classes = n_classes,
		.nodes = s.nodes,
		.n_nodes = s.n_nodes,
		.releases = s.releases,
		.n_releases = s.n_releases,
		.usage = s.usage,
		.n_usage = s.n_usage,
		.jobs = s.jobs,
		.n_jobs = s.n_jobs,
		.now = now,
	};
	rc = tj_admit(&in, &res);
	if (rc < 0)
		goto out;
	for (size_t i = 0; i < s.n_jobs; i++) {
		struct entry *e = s.job_entries[i];
		struct tj_adm_decision *d = &res->decisions[i];
		bool tell;

		if (d->verdict == TJ_ADM_ADMITTED) {
			if (take_admission(a, e, &s, d, now_ms) == 0) {
				tj_log_info("admitter", "admitted a gang",
				            TJ_STR("trainjob", e->key), TJ_INT("pods", e->num_pods),
				            TJ_STR("gpuClass", e->gpu_class),
				            TJ_BOOL("backfilled", d->backfilled));
				a->enqueue_first(a->userdata, e->key);
			}
			continue;
		}
		/* The entry keeps the decision last told, which its status shows, so that a job
		 * drifting back one place a cycle is told once the drift is worth it. */
		tell = !e->decided || tj_adm_worth_telling(&e->decision, d);
		if (!tell)
			continue;
		tj_adm_say_deferred(&in, i, d);
		e->decision = *d;
		e->decision.nodes = NULL;
		e->decided = true;
		a->enqueue(a->userdata, e->key);
	}
	publish_stats(a, res);
	decided = s.n_jobs;
out:
	if (rc < 0)
		tj_log_error("admitter", "could not decide the queue", TJ_ERR(rc));
	tj_adm_result_free(res);
	snapshot_clear(&s);
	free(class_names);
	free(quotas);
	return decided;
}

/* ---- scheduling cycles ---- */

static void on_timer(uv_timer_t *t)
{
	struct tj_admitter *a = t->data;
	uint64_t start, took;
	size_t decided;

	a->scheduled = false;
	if (!a->active || a->stopping)
		return;
	start = uv_hrtime();
	a->cycle_trigger_ns = a->trigger_ns;
	a->cycle_held_ns = a->held_ns;
	a->cycle_start_ns = start;
	decided = cycle(a);
	took = uv_hrtime() - start;
	tj_time_share_spend(&a->share, took, start + took);
	if (a->metrics) {
		tj_metric_observe(a->metrics->trainjob_admission_cycle_duration_seconds, NULL,
		                  (double)took / 1e9);
		tj_metric_add(a->metrics->trainjob_admission_decisions_total, NULL,
		              (double)decided);
	}
	tj_log_debug("admitter", "decided the queue", TJ_INT("jobs", (long long)decided),
	             TJ_INT("microseconds", (long long)(took / 1000)));
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
	/* One due no later answers freed GPUs too; one due later is brought forward, and the
	 * event it answers is this one. */
	if (a->scheduled && a->due_ms <= now + delay)
		return;
	a->scheduled = true;
	a->due_ms = now + delay;
	a->trigger_ns = uv_hrtime();
	a->held_ns = delay * 1000000;
	uv_timer_start(&a->timer, on_timer, delay, 0);
}

void tj_admitter_kick(struct tj_admitter *a)
{
	kick(a, false);
}

void tj_admitter_kick_freed(struct tj_admitter *a)
{
	kick(a, true);
}

/* ---- the interface ---- */

int tj_admitter_new(uv_loop_t *loop, const struct tj_admitter_config *config,
                    struct tj_admitter **ret)
{
	struct tj_admitter *a = calloc(1, sizeof(*a));
	int rc;

	if (!a)
		return -ENOMEM;
	rc = tj_store_new(&entry_ops, &a->entries);
	if (rc < 0) {
		free(a);
		return rc;
	}
	a->loop = loop;
	a->informers = config->informers;
	a->metrics = config->metrics;
	a->enqueue = config->enqueue;
	a->enqueue_first = config->enqueue_first ? config->enqueue_first : config->enqueue;
	a->userdata = config->userdata;
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
		free(a);
	}
}

void tj_admitter_stop(struct tj_admitter *a)
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
	tj_admitter_stop(a);
	return NULL;
}

void tj_admitter_set_config(struct tj_admitter *a, const struct tj_config *config)
{
	a->config = config;
	tj_admitter_kick(a);
}

void tj_admitter_set_active(struct tj_admitter *a, bool active)
{
	if (a->stopping || a->active == active)
		return;
	a->active = active;
	if (active) {
		uv_timer_start(&a->period, on_period, TJ_ADMITTER_PERIOD_MS, TJ_ADMITTER_PERIOD_MS);
		tj_admitter_kick(a);
	} else {
		uv_timer_stop(&a->period);
		uv_timer_stop(&a->timer);
		a->scheduled = false;
	}
}

bool tj_admitter_admission(struct tj_admitter *a, const struct tj_trainjob *job, const char *key,
                           struct tj_plan_admission *ret)
{
	const struct tj_admission_policy *policy = tj_config_admission(a->config);
	const struct entry *e;

	if (!policy->enabled || job->kueue || !tj_trainjob_is_ours(job))
		return false;
	*ret = (struct tj_plan_admission){ .pin_timeout = policy->pin_timeout_seconds };
	e = entry_get(a, key);
	if (!e)
		return true;
	if (e->unplaceable)
		return false;
	if (e->state == ENTRY_ADMITTED) {
		ret->admitted = true;
		ret->nodes = (const char *const *)e->nodes;
		ret->hostnames = (const char *const *)e->hostnames;
		ret->n_nodes = e->n_nodes;
		ret->launcher_node = e->launcher_node;
		ret->launcher_hostname = e->launcher_hostname;
		ret->decision = &e->decision;
	} else if (e->decided) {
		/* Waiting: the queue's verdict. Created: the admission's, for the plan that
		 * records the start when the one that created the pods lost its status patch. */
		ret->decision = &e->decision;
	}
	return true;
}

/* What one pod of spec asks for, with the requests as read in *r. A quantity the API server
 * would refuse fails the create; until then, nothing. */
static struct tj_adm_resources pod_request(const struct tj_gpu_class *cls, const cJSON *spec,
                                           const char *key, struct tj_pod_resources *r)
{
	if (tj_pod_spec_requests(spec, r) < 0)
		tj_log_debug("admitter", "pod requests not fully read", TJ_STR("trainjob", key));
	return (struct tj_adm_resources){ cls ? tj_pod_resources_extended(r, cls->resource) : 0,
		                          r->cpu_milli, r->memory, 1 };
}

/* The request of one pod (and of the launcher with it) and its priority, from the rendered
 * pods. */
static void read_want(struct tj_admitter *a, const struct tj_trainjob *job,
                      const struct tj_plan_want *want, struct entry *e)
{
	const struct tj_gpu_class *cls = tj_config_find_class(a->config, want->gpu_class);
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(want->pod, "spec");
	const cJSON *prio = cJSON_GetObjectItemCaseSensitive(spec, "priority");
	const cJSON *pc = cJSON_GetObjectItemCaseSensitive(spec, "priorityClassName");
	struct tj_pod_resources r = { 0 }, lr = { 0 };

	e->request = pod_request(cls, spec, e->key, &r);
	e->launcher = want->launcher
	                      ? pod_request(cls, tj_json_path(want->launcher, "spec"), e->key, &lr)
	                      : (struct tj_adm_resources){ 0 };
	/* As the scheduler will order the pods: spec.priority when the template sets it, else
	 * the value of its PriorityClass (or of the global default); the TrainJob's annotation
	 * wins over both. */
	int64_t v;

	if (cJSON_IsNumber(prio) && tj_double_to_int64(prio->valuedouble, INT32_MIN, INT32_MAX, &v))
		e->priority = (int32_t)v;
	else
		e->priority = tj_priority_of(store_of(a->informers->priority_classes),
		                             cJSON_IsString(pc) ? pc->valuestring : NULL);
	if (job->priority)
		e->priority = (int32_t)strtol(job->priority, NULL, 10);
	snprintf(e->gpu_class, sizeof(e->gpu_class), "%s", want->gpu_class);
	snprintf(e->namespace, sizeof(e->namespace), "%s", job->namespace);
	e->unplaceable = !cls && r.n_extended > 0;
	entry_drop_excluded(e);
	e->excluded = calloc(want->n_excluded + 1, sizeof(*e->excluded));
	for (size_t i = 0; e->excluded && i < want->n_excluded; i++)
		if ((e->excluded[e->n_excluded] = strdup(want->excluded[i])))
			e->n_excluded++;
	e->num_nodes = want->num_nodes;
	e->num_pods = want->num_pods;
	e->walltime = want->walltime;
	e->restart = want->restart;
	e->creation_time = job->creation_time;
}

/* The gang's creates go out now: the controller's share of the time from the event that let
 * it in to its pods, in three parts for the log (the wait for the cycle, the cycle, and the
 * wait for the plan that creates it). */
static void observe_latency(const struct tj_admitter *a, const struct entry *e)
{
	uint64_t now = uv_hrtime();

	if (!e->trigger_ns || now < e->trigger_ns)
		return;
	if (a->metrics)
		tj_metric_observe(a->metrics->trainjob_admission_latency_seconds, NULL,
		                  (double)(now - e->trigger_ns) / 1e9);
	tj_log_info("admitter", "creating an admitted gang", TJ_STR("trainjob", e->key),
	            TJ_INT("latencyUs", (long long)(now - e->trigger_ns) / 1000),
	            TJ_INT("waitedForCycleUs", (long long)(e->cycle_ns - e->trigger_ns) / 1000),
	            TJ_INT("heldForShareUs", (long long)e->held_ns / 1000),
	            TJ_INT("cycleUs", (long long)(e->admitted_ns - e->cycle_ns) / 1000),
	            TJ_INT("waitedForPlanUs", (long long)(now - e->admitted_ns) / 1000));
}

int tj_admitter_want(struct tj_admitter *a, const struct tj_trainjob *job, const char *key,
                     const struct tj_plan_want *want, bool admits)
{
	struct entry *e = entry_get(a, key);
	int rc;

	if (admits) {
		if (e && e->state == ENTRY_ADMITTED) {
			e->state = ENTRY_CREATED;
			observe_latency(a, e);
		}
		return 0;
	}
	if (!want->wanted) {
		if (e && e->state == ENTRY_CREATED && !job->status.start_time) {
			entry_drop_nodes(e);
			e->state = ENTRY_STARTING;
			tj_admitter_kick(a);
		} else if (e && (e->state != ENTRY_STARTING || job->status.start_time)) {
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
		read_want(a, job, want, e);
		rc = tj_store_upsert(a->entries, e, NULL);
		if (rc < 0) {
			entry_free(e);
			return rc;
		}
		/* Its next plan creates the pods at once. */
		if (e->unplaceable)
			a->enqueue(a->userdata, key);
		else
			tj_admitter_kick(a);
		return 0;
	}
	if (e->state == ENTRY_CREATED || e->state == ENTRY_STARTING ||
	    (e->state == ENTRY_ADMITTED &&
	     ((size_t)want->num_pods != e->n_nodes ||
	      (want->launcher != NULL) != (e->launcher_node != NULL)))) {
		/* More pods are missing than were admitted (creates that failed, a gang that
		 * changed): the job is decided again. */
		entry_requeue(e);
		read_want(a, job, want, e);
		tj_admitter_kick(a);
		return 0;
	}
	/* A shallow copy, for the scalars only: read_want frees what the entry owns. */
	struct entry before = *e;

	read_want(a, job, want, e);
	/* The plans of a queued job repeat the same want: only a change is worth a cycle. */
	if (e->state == ENTRY_WAITING &&
	    (before.num_pods != e->num_pods || before.priority != e->priority ||
	     before.restart != e->restart || before.walltime != e->walltime ||
	     memcmp(&before.request, &e->request, sizeof(e->request)) != 0 ||
	     memcmp(&before.launcher, &e->launcher, sizeof(e->launcher)) != 0 ||
	     strcmp(before.gpu_class, e->gpu_class) != 0 || !e->decided))
		tj_admitter_kick(a);
	return 0;
}

void tj_admitter_release(struct tj_admitter *a, const char *key)
{
	struct entry *e = entry_get(a, key);

	if (e && e->state != ENTRY_WAITING) {
		entry_requeue(e);
		tj_admitter_kick(a);
	}
}

void tj_admitter_forget(struct tj_admitter *a, const char *key)
{
	if (tj_store_delete(a->entries, key, NULL) == 0)
		tj_admitter_kick(a);
}

unsigned long tj_admitter_cycles(const struct tj_admitter *a)
{
	return a->cycles;
}
