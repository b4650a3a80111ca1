#include "controller/admission/admitter_queue.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "controller/admission/admitter.h"
#include "controller/admission/admitter_qos.h"
#include "informers/intern.h"
#include "informers/resources.h"
#include "reconcilers/admission/capacity.h"
#include "reconcilers/admission/launcher_hold.h"
#include "reconcilers/policy/node_health.h"
#include "reconcilers/usage/gpu_use.h"

/* ---- entries ---- */

void tj_admitter_entry_drop_nodes(struct tj_admitter_entry *e)
{
	for (size_t i = 0; i < e->n_nodes; i++)
		free(e->nodes[i]);
	free(e->nodes);
	e->nodes = NULL;
	e->n_nodes = 0;
	free(e->launcher_node);
	e->launcher_node = NULL;
}

void tj_admitter_entry_drop_excluded(struct tj_admitter_entry *e)
{
	for (size_t i = 0; i < e->n_excluded; i++)
		free(e->excluded[i]);
	free(e->excluded);
	e->excluded = NULL;
	e->n_excluded = 0;
}

void tj_admitter_entry_free(void *obj)
{
	struct tj_admitter_entry *e = obj;

	tj_admitter_entry_drop_nodes(e);
	tj_admitter_entry_drop_excluded(e);
	tj_placement_unref(e->placement);
	tj_intern_unref(e->shared_namespace);
	tj_quota_pod_free(e->quota_pod);
	tj_quota_pod_free(e->quota_launcher);
	free(e->class_requests);
	free(e);
}

static int entry_key(const void *obj, char *buf, size_t size)
{
	return tj_store_key_of(buf, size, NULL, ((const struct tj_admitter_entry *)obj)->key);
}

const struct tj_store_ops tj_admitter_entry_ops = {
	.free = tj_admitter_entry_free,
	.key = entry_key,
};

static int refusals_key(const void *obj, char *buf, size_t size)
{
	return tj_store_key_of(buf, size, NULL, ((const struct tj_admitter_refusals *)obj)->key);
}

const struct tj_store_ops tj_admitter_refusals_ops = {
	.free = free,
	.key = refusals_key,
};

void tj_admitter_refusals_add(struct tj_admitter_refusals *r, const char (*nodes)[TJ_NAME_MAX],
                              size_t n, uint64_t until_ms)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		while (k < r->n && strcmp(r->nodes[k], nodes[i]) != 0)
			k++;
		if (k == r->n && r->n < TJ_PLAN_MAX_REFUSED) {
			r->n++;
		} else if (k == r->n) {
			k = 0;
			for (size_t j = 1; j < r->n; j++)
				if (r->until_ms[j] < r->until_ms[k])
					k = j;
		}
		snprintf(r->nodes[k], sizeof(r->nodes[k]), "%s", nodes[i]);
		r->until_ms[k] = until_ms;
	}
}

/* Back into the queue, undecided: the next cycle decides it with the others. */
void tj_admitter_entry_requeue(struct tj_admitter_entry *e)
{
	e->state = TJ_ADMITTER_WAITING;
	e->decided = false;
	e->rank = SIZE_MAX;
	tj_admitter_entry_drop_nodes(e);
}

/* Whether want's pods must avoid one of the nodes e was admitted on. */
static bool avoids_admitted(const struct tj_admitter_entry *e, const struct tj_plan_want *want)
{
	for (size_t i = 0; i < want->n_excluded; i++)
		for (size_t j = 0; j < e->n_nodes; j++)
			if (e->nodes[j] && strcmp(want->excluded[i], e->nodes[j]) == 0)
				return true;
	return false;
}

bool tj_admitter_same_gang(const struct tj_admitter_entry *e, const struct tj_plan_want *want)
{
	return (size_t)want->num_pods == e->n_nodes &&
	       (want->launcher != NULL) == (e->launcher_node != NULL);
}

enum tj_admitter_again tj_admitter_created_again(const struct tj_admitter_entry *e,
                                                 const struct tj_plan_want *want, uint64_t now_ms)
{
	if (e->state != TJ_ADMITTER_CREATED || avoids_admitted(e, want))
		return TJ_ADMITTER_DECIDE_AGAIN;
	if (!e->creates_shown && now_ms - e->created_ms < TJ_ADMITTER_CREATED_PATIENCE_MS)
		return TJ_ADMITTER_WAIT_FOR_CACHE;
	if (!want->restart && tj_admitter_same_gang(e, want))
		return TJ_ADMITTER_CREATE_AGAIN;
	return TJ_ADMITTER_DECIDE_AGAIN;
}

/* ---- what the caches say ---- */

const struct tj_store *tj_admitter_store_of(const struct tj_reflector *r)
{
	return r ? tj_reflector_store(r) : NULL;
}

/* The index of the GPU class name in config, -1 for none. */
static int gpu_class_index(const struct tj_config *config, const char *name)
{
	for (size_t i = 0; config && name && *name && i < config->n_classes; i++)
		if (strcmp(config->classes[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* ---- the snapshot ---- */

static int node_ref_cmp(const void *x, const void *y)
{
	return strcmp(((const struct tj_admitter_node_ref *)x)->name,
	              ((const struct tj_admitter_node_ref *)y)->name);
}

ssize_t tj_admitter_find_node(const struct tj_admitter_node_ref *refs, size_t n, const char *name)
{
	struct tj_admitter_node_ref k = { name, 0 };
	const struct tj_admitter_node_ref *r =
	        name ? bsearch(&k, refs, n, sizeof(*refs), node_ref_cmp) : NULL;

	return r ? (ssize_t)r->index : -1;
}

void tj_admitter_snapshot_clear(struct tj_admitter_snapshot *s)
{
	free(s->nodes);
	free(s->refs);
	free(s->read_at);
	free(s->releases);
	free(s->groups);
	free(s->usage);
	free(s->claims);
	free(s->jobs);
	free(s->job_entries);
	free(s->excluded);
	free(s->quota_limits);
	free(s->charges);
	free(s->running);
	free(s->holds);
	free(s->tier_limits);
	free(s->class_names);
	free(s->quotas);
	for (size_t i = 0; i < s->n_eligibility; i++) {
		free(s->eligibility[i].allowed);
		free(s->eligibility[i].why);
	}
	free(s->eligibility);
	*s = (struct tj_admitter_snapshot){ 0 };
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

static void add_usage(struct tj_admitter_snapshot *s, const char *namespace, int cls, int64_t gpus)
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
	s->usage[s->n_usage++] = (struct tj_admission_usage){ namespace, cls, gpus };
}

static void add_release(struct tj_admitter_snapshot *s, size_t node, int64_t at,
                        const struct tj_admission_resources *r)
{
	if (!grow((void **)&s->releases, &s->cap_releases, s->n_releases, sizeof(*s->releases))) {
		s->oom = true;
		return;
	}
	s->releases[s->n_releases++] = (struct tj_admission_release){ node, at, *r };
}

static void add_used(struct tj_admission_resources *used, const struct tj_admission_resources *r)
{
	used->gpus += r->gpus;
	used->cpu_milli += r->cpu_milli;
	used->memory += r->memory;
	used->pods += r->pods;
}

/* The TrainJob whose pod this is (its label, and its controller owner), or NULL; its store
 * key into key (TJ_STORE_KEY_MAX bytes). */
static const struct tj_trainjob *owner_of(const struct tj_admitter_source *a,
                                          const struct tj_pod *pod, char *key)
{
	const struct tj_store *jobs = tj_admitter_store_of(a->informers->trainjobs);
	const struct tj_trainjob *job;

	if (!pod->trainjob || !jobs || tj_pod_trainjob_key(pod, key, TJ_STORE_KEY_MAX) != 1 ||
	    !(job = tj_store_get(jobs, key)))
		return NULL;
	return pod->owner_uid && strcmp(pod->owner_uid, job->uid) == 0 ? job : NULL;
}

/* When an admitted gang's walltime ends, from its admission: 0 when it has none. */
static int64_t admitted_end(const struct tj_admitter_entry *e)
{
	if (e->walltime <= 0)
		return 0;
	return tj_add_capped(e->admitted_at, e->walltime);
}

/* When an admitted gang whose pods the cache does not show yet gives its nodes back: its
 * walltime's end, and the grace its pods have to stop (reconcilers/admission/capacity.h); 0 when it
 * has no walltime. */
static int64_t admitted_gang_end(const struct tj_admitter_entry *e)
{
	int64_t end = admitted_end(e);

	return end && e->grace > 0 ? tj_add_capped(end, e->grace) : end;
}

/* The walltime end of the TrainJob key whose pods have the controller owner owner_uid, or 0
 * when it has none (or they are not its): its status.deadline, which the planner fixes at
 * the start from activeDeadlineSeconds or the config's defaultWalltime
 * (reconcilers/policy/walltime.h); now once its gang is ending. Until that status is in the cache,
 * the admission the queue remembers tells it: a gang just admitted is held until its
 * walltime ends, not for ever, or the head's reservation would look past it. *exact: the
 * end is the moment the pods go (a preemption's stop, a gang ending), with no grace after.
 * *ret_job: the TrainJob, if the pods are its (NULL otherwise). */
static int64_t job_end(const struct tj_admitter_source *a, const char *key, const char *owner_uid,
                       int64_t now, bool *exact, const struct tj_trainjob **ret_job)
{
	const struct tj_store *jobs = tj_admitter_store_of(a->informers->trainjobs);
	const struct tj_trainjob *job = jobs ? tj_store_get(jobs, key) : NULL;
	const struct tj_admitter_entry *e;
	const struct tj_admitter_preemption *p;
	const char *by;
	int64_t at;

	*exact = false;
	*ret_job = NULL;
	if (!job || !owner_uid || strcmp(owner_uid, job->uid) != 0)
		return 0;
	*ret_job = job;
	/* A job being preempted gives its nodes back at its stop, when its pods are deleted
	 * (reconcilers/admission/admission.h): the victims' grace is the time they were told
	 * before. */
	if (tj_admitter_preemption_of(a->preemptions, job, key, &at, &by) &&
	    (!job->status.deadline || at < job->status.deadline)) {
		*exact = true;
		return at;
	}
	if (job->status.start_time) {
		if (tj_ledger_gang_ending(a->ledger, tj_admitter_store_of(a->informers->pods), key,
		                          job->uid, job->status.restart_count)) {
			*exact = true;
			return now;
		}
		return job->status.deadline;
	}
	if ((e = tj_store_get(a->entries, key)) && e->state != TJ_ADMITTER_WAITING)
		return admitted_end(e);
	/* Back in the queue after its stop (its start cleared) while the cache still shows pods
	 * of the run that was stopped: they are being deleted, and give their nodes back at the
	 * stop too, not never (which would cost the job that preempted it its nodes). */
	if (a->preemptions && (p = tj_store_get(a->preemptions, key))) {
		*exact = true;
		return p->at;
	}
	return 0;
}

/* The same for the job a pod belongs to (its label, and its controller owner). */
static int64_t walltime_end(const struct tj_admitter_source *a, const struct tj_pod *pod,
                            int64_t now)
{
	char key[TJ_STORE_KEY_MAX];
	const struct tj_trainjob *job;
	bool exact;

	if (!pod->trainjob || tj_pod_trainjob_key(pod, key, sizeof(key)) != 1)
		return 0;
	return job_end(a, key, pod->owner_uid, now, &exact, &job);
}

/* What a pod of namespace ns holds on node k until it ends (or end, its walltime's end). */
static void hold_on(struct tj_admitter_snapshot *s, size_t k, const char *ns,
                    const struct tj_admission_resources *r, int64_t end, bool quotas)
{
	add_used(&s->nodes[k].used, r);
	if (quotas && r->gpus)
		add_usage(s, ns, s->nodes[k].class_index, r->gpus);
	if (end)
		add_release(s, k, end, r);
}

/* A TrainJob's pod that holds its launcher's place (reconcilers/admission/launcher_hold.h) holds it
 * until the launcher exists, which then counts by itself: read from the cache, so that a
 * restart between the admission and the launcher's create keeps it. The node's index,
 * with the request in *ret; -1 for none. */
static ssize_t held_node(const struct tj_admitter_source *a, struct tj_admitter_snapshot *s,
                         const struct tj_store *pods, const struct tj_pod *pod,
                         struct tj_admission_resources *ret)
{
	const struct tj_gpu_class *cls;
	struct tj_launcher_hold h;
	char key[TJ_STORE_KEY_MAX];
	int n;
	ssize_t k;

	if (!pod->launcher_hold || !owner_of(a, pod, key) ||
	    tj_launcher_hold_parse(pod->launcher_hold, &h) < 0)
		return -1;
	n = snprintf(key, sizeof(key), "%s/%s", pod->namespace, h.pod);
	if (n < 0 || (size_t)n >= sizeof(key) || tj_store_get(pods, key) ||
	    (k = tj_admitter_find_node(s->refs, s->n_nodes, h.node)) < 0)
		return -1;
	cls = s->nodes[k].class_index >= 0 ? &a->config->classes[s->nodes[k].class_index] : NULL;
	*ret = (struct tj_admission_resources){ cls ? tj_launcher_hold_extended(&h, cls->resource)
		                                    : 0,
		                                h.cpu_milli, h.memory, 1 };
	return k;
}

static int gone_cmp(const void *x, const void *y)
{
	return strcmp((*(const struct tj_admitter_gone_node *const *)x)->name,
	              (*(const struct tj_admitter_gone_node *const *)y)->name);
}

void tj_admitter_gone_add(struct tj_admitter_gone_node *gone, size_t *n,
                          const struct tj_config *config, const struct tj_node *node,
                          uint64_t now_ms)
{
	int cls = tj_gpu_class_of_node(config, node);
	const struct tj_gpu_class *gc;
	size_t at = *n;

	if (cls < 0)
		return;
	gc = &config->classes[cls];
	for (size_t i = 0; i < *n; i++)
		if (strcmp(gone[i].name, node->name) == 0) {
			at = i;
			break;
		}
	if (at == TJ_ADMITTER_MAX_GONE) {
		at = 0;
		for (size_t i = 1; i < *n; i++)
			if (gone[i].until_ms < gone[at].until_ms)
				at = i;
	}
	gone[at] = (struct tj_admitter_gone_node){
		.allocatable = { tj_node_allocatable_extended(node, gc->resource),
		                 node->allocatable.cpu_milli, node->allocatable.memory,
		                 tj_node_pod_slots(node) },
		.until_ms = now_ms + TJ_ADMITTER_GONE_MS,
	};
	snprintf(gone[at].name, sizeof(gone[at].name), "%s", node->name);
	snprintf(gone[at].gpu_class, sizeof(gone[at].gpu_class), "%s", gc->name);
	if (at == *n)
		(*n)++;
}

/* The nodes gone a short while ago that the snapshot keeps, into kept (TJ_ADMITTER_MAX_GONE), in
 * name order: those whose name no cached node has, of a class the config still has. */
static size_t gone_kept(const struct tj_admitter_source *a, const struct tj_store *nodes,
                        uint64_t now_ms, const struct tj_admitter_gone_node **kept)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n_gone && k < TJ_ADMITTER_MAX_GONE; i++) {
		const struct tj_admitter_gone_node *g = &a->gone[i];

		if (now_ms < g->until_ms && !(nodes && tj_store_get(nodes, g->name)) &&
		    gpu_class_index(a->config, g->gpu_class) >= 0)
			kept[k++] = g;
	}
	qsort(kept, k, sizeof(*kept), gone_cmp);
	return k;
}

/* The walltime end of the TrainJob last looked up for a node's pods (job_end), kept for the
 * next node: the ranks of a gang mostly lie on nodes next to each other in name order, as the
 * admission picks them, so the next node most often asks for the same job. The ledger's
 * strings are interned: the same job has the same pointers, which are compared without
 * reading the strings. */
struct last_job {
	const char *key, *owner_uid;   /* borrowed from the ledger; key NULL: none yet */
	const struct tj_trainjob *job; /* the cache's; NULL: none */
	int64_t end;
	bool exact; /* the end is the moment the pods go (job_end) */
};

static int64_t group_end(const struct tj_admitter_source *a, struct last_job *last,
                         const struct tj_ledger_group *g, int64_t now)
{
	if (!last->key || last->key != g->job_key || last->owner_uid != g->owner_uid) {
		const struct tj_trainjob *job;
		bool exact;
		int64_t end = job_end(a, g->job_key, g->owner_uid, now, &exact, &job);

		*last = (struct last_job){ g->job_key, g->owner_uid, job, end, exact };
	}
	return last->end;
}

/* What node i holds, from its entry in the ledger: its pods' use, the ends known, the ends
 * of its TrainJobs' walltimes as their statuses (or the queue) tell them now, and the places
 * its pods hold for launchers on other nodes. */
static void read_ledger(const struct tj_admitter_source *a, struct tj_admitter_snapshot *s,
                        size_t i, const struct tj_ledger_node *ln, const struct tj_store *pods,
                        bool quotas, struct last_job *last, int64_t now)
{
	add_used(&s->nodes[i].used, &ln->used);
	if (quotas)
		for (size_t k = 0; k < ln->n_usage; k++)
			add_usage(s, ln->usage[k].namespace, s->nodes[i].class_index,
			          ln->usage[k].gpus);
	for (size_t k = 0; k < ln->n_releases; k++)
		add_release(s, i, ln->releases[k].at, &ln->releases[k].held);
	for (size_t k = 0; k < ln->n_groups; k++) {
		const struct tj_ledger_group *g = &ln->groups[k];
		int64_t end = group_end(a, last, g, now);

		if (!grow((void **)&s->groups, &s->cap_groups, s->n_groups, sizeof(*s->groups))) {
			s->oom = true;
			return;
		}
		s->groups[s->n_groups++] =
		        (struct tj_admitter_group){ g->job_key, g->owner_uid, i,
			                            g->held,    g->grace,     last->job };

		if (end > 0)
			add_release(s, i, last->exact ? end : tj_add_capped(end, g->grace),
			            &g->held);
	}
	for (size_t k = 0; pods && k < ln->n_holders; k++) {
		const struct tj_pod *pod = tj_store_get(pods, ln->holders[k]);
		struct tj_admission_resources r;
		struct tj_hold h;
		ssize_t held;

		if (!pod)
			continue;
		tj_hold_of(pod, walltime_end(a, pod, now), &h);
		if (h.kind != TJ_HOLD_NONE && (held = held_node(a, s, pods, pod, &r)) >= 0)
			hold_on(s, (size_t)held, pod->namespace, &r, h.end, quotas);
	}
}

/* A cycle reads every node of the ledger in order: the nodes a few places ahead of i are
 * fetched meanwhile, and the groups of nearer ones, whose node is in by then. */
static void fetch_ahead(struct tj_ledger_node *const *order, size_t n, size_t i)
{
	if (i + TJ_ADMITTER_FETCH_AHEAD < n) {
		__builtin_prefetch(order[i + TJ_ADMITTER_FETCH_AHEAD]);
		__builtin_prefetch((const char *)order[i + TJ_ADMITTER_FETCH_AHEAD] + 64);
	}
	if (i + TJ_ADMITTER_FETCH_AHEAD / 2 < n && order[i + TJ_ADMITTER_FETCH_AHEAD / 2]->n_groups)
		__builtin_prefetch(order[i + TJ_ADMITTER_FETCH_AHEAD / 2]->groups);
}

/* The snapshot's nodes, in name order (tj_admission_input.nodes): the cached ones, as the ledger
 * judged them, and those gone a short while ago; what each holds. */
static int build_nodes(const struct tj_admitter_source *a, struct tj_admitter_snapshot *s,
                       int64_t now, uint64_t now_ms)
{
	const struct tj_config *config = a->config;
	const struct tj_store *nodes = tj_admitter_store_of(a->informers->nodes);
	const struct tj_store *pods = tj_admitter_store_of(a->informers->pods);
	const struct tj_admitter_gone_node *gone[TJ_ADMITTER_MAX_GONE];
	struct tj_ledger_node *const *order;
	size_t n_order, n_gone, n, i = 0, j = 0;
	bool quotas = tj_config_admission(config)->n_limits > 0;
	struct last_job last = { 0 };

	if (tj_ledger_read(a->ledger, config, nodes, pods, &order, &n_order) < 0)
		return -ENOMEM;
	s->read = (struct tj_eligibility_nodes){ a->ledger, order, n_order, nodes };
	n_gone = gone_kept(a, nodes, now_ms, gone);
	n = n_order + n_gone;
	/* Each node's fields are all written below; most nodes of a cluster of TrainJobs run
	 * one gang, whose walltime releases what it holds. */
	s->nodes = malloc((n + 1) * sizeof(*s->nodes));
	s->refs = malloc((n + 1) * sizeof(*s->refs));
	s->read_at = malloc((n + 1) * sizeof(*s->read_at));
	s->releases = malloc((n + 1) * sizeof(*s->releases));
	s->groups = malloc((n + 1) * sizeof(*s->groups));
	if (!s->nodes || !s->refs || !s->read_at || !s->releases || !s->groups)
		return -ENOMEM;
	s->cap_releases = s->cap_groups = n + 1;
	/* The two lists are each in name order, and no name is in both. */
	for (size_t k = 0; k < n; k++) {
		if (j == n_gone || (i < n_order && strcmp(order[i]->name, gone[j]->name) < 0)) {
			const struct tj_ledger_node *ln = order[i];

			fetch_ahead(order, n_order, i);
			s->nodes[k] = (struct tj_admission_node){
				.name = ln->name,
				.class_index = ln->class_index,
				.domain = ln->domain,
				.schedulable = ln->schedulable,
				.allocatable = ln->allocatable,
			};
			s->read_at[k] = i++;
		} else {
			const struct tj_admitter_gone_node *g = gone[j++];

			s->nodes[k] = (struct tj_admission_node){
				.name = g->name,
				.class_index = gpu_class_index(config, g->gpu_class),
				.allocatable = g->allocatable,
			};
			s->read_at[k] = SIZE_MAX;
		}
		s->refs[k] = (struct tj_admitter_node_ref){ s->nodes[k].name, k };
	}
	s->n_nodes = n;

	/* Every pod that is bound, pinned or nominated to a node holds its requests there until
	 * it ends, ours or not (reconcilers/admission/capacity.h says until when), as the ledger
	 * keeps them per node. */
	for (size_t k = 0; k < n && !s->oom; k++) {
		if (s->read_at[k] == SIZE_MAX)
			continue;
		fetch_ahead(order, n_order, s->read_at[k]);
		read_ledger(a, s, k, order[s->read_at[k]], pods, quotas, &last, now);
	}
	return s->oom ? -ENOMEM : 0;
}

/* A gang admitted but not yet in the cache (e: ADMITTED or CREATED) holds its nodes. */
static void hold_reserved(const struct tj_admitter_source *a, struct tj_admitter_snapshot *s,
                          const struct tj_admitter_entry *e)
{
	bool quotas = tj_config_admission(a->config)->n_limits > 0;

	for (size_t i = 0; i <= e->n_nodes; i++) {
		const char *name = i < e->n_nodes ? e->nodes[i] : e->launcher_node;
		const struct tj_admission_resources *r =
		        i < e->n_nodes ? &e->request : &e->launcher;
		ssize_t k = tj_admitter_find_node(s->refs, s->n_nodes, name);

		if (k >= 0)
			hold_on(s, (size_t)k, e->namespace, r, admitted_gang_end(e), quotas);
	}
}

/* The job's refusals (tj_admitter_refusals): the nodes that refused its pods, and its hold. */
static const struct tj_admitter_refusals *refusals_of(const struct tj_admitter_source *a,
                                                      const struct tj_admitter_entry *e)
{
	return a->refusals && tj_store_len(a->refusals) ? tj_store_get(a->refusals, e->key) : NULL;
}

static bool waits(const struct tj_admitter_source *a, const struct tj_admitter_entry *e,
                  uint64_t now_ms)
{
	const struct tj_admitter_refusals *r;

	if (e->state != TJ_ADMITTER_WAITING || e->unplaceable)
		return false;
	r = refusals_of(a, e);
	return !r || now_ms >= r->hold_until_ms;
}

/* One pass over the entries. The gangs admitted but not yet in the cache hold their nodes; an
 * admitted gang whose plan never came goes back to the queue (its nodes held this cycle
 * still). The waiting entries go into s->job_entries (room for every entry) in the order of
 * the last cycle, so that a queue that did not change needs no sort (tj_admission_input.jobs):
 * those it ranked at their ranks, the others after them. */
static int take_entries(const struct tj_admitter_source *a, struct tj_admitter_snapshot *s,
                        uint64_t now_ms)
{
	size_t n = tj_store_len(a->entries), n_waiting = 0, top = 0, k = 0;
	struct tj_admitter_entry *e, **waiting = malloc((n + 1) * sizeof(*waiting)), **at;
	struct tj_store_iter it;

	if (!waiting)
		return -ENOMEM;
	tj_store_iter_init(a->entries, &it);
	while ((e = (struct tj_admitter_entry *)tj_store_iter_next(&it)) && n_waiting < n) {
		if (e->state == TJ_ADMITTER_ADMITTED || e->state == TJ_ADMITTER_CREATED)
			hold_reserved(a, s, e);
		if (e->state == TJ_ADMITTER_ADMITTED &&
		    now_ms - e->admitted_ms > TJ_ADMITTER_ADMITTED_TIMEOUT_MS)
			tj_admitter_entry_requeue(e);
		if (!waits(a, e, now_ms))
			continue;
		waiting[n_waiting++] = e;
		if (e->rank < n && e->rank >= top)
			top = e->rank + 1;
	}
	if (!(at = calloc(top + 1, sizeof(*at)))) {
		free(waiting);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_waiting; i++)
		if (waiting[i]->rank < top && !at[waiting[i]->rank])
			at[waiting[i]->rank] = waiting[i];
	for (size_t i = 0; i < top; i++)
		if (at[i])
			s->job_entries[k++] = at[i];
	for (size_t i = 0; i < n_waiting; i++)
		if (!(waiting[i]->rank < top && at[waiting[i]->rank] == waiting[i]))
			s->job_entries[k++] = waiting[i];
	s->n_jobs = k;
	free(at);
	free(waiting);
	return 0;
}

/* Adds node name to job's excluded nodes (at most TJ_ADMISSION_MAX_EXCLUDED), if it is cached. */
static void exclude(struct tj_admitter_snapshot *s, struct tj_admission_job *job, size_t *x,
                    size_t cap, const char *name)
{
	ssize_t node = tj_admitter_find_node(s->refs, s->n_nodes, name);

	if (node >= 0 && *x < cap && job->n_excluded < TJ_ADMISSION_MAX_EXCLUDED) {
		s->excluded[(*x)++] = (size_t)node;
		job->n_excluded++;
	}
}

/* The nodes placement p allows, shared by every job of class cls with an equal placement (the
 * same pointer, since the jobs' placements are interned: tj_eligibility_intern), from the
 * flags the eligibility cache keeps per node between cycles; allowed NULL when it allows every
 * node of the class, as most do, which costs the decision nothing. NULL without memory. */
static const struct tj_admitter_eligibility *eligible_nodes(const struct tj_admitter_source *a,
                                                            struct tj_admitter_snapshot *s,
                                                            struct tj_placement *p, int cls)
{
	struct tj_admitter_eligibility *e;
	const bool *flags;
	size_t in_class = 0, refused = SIZE_MAX;

	for (size_t i = 0; i < s->n_eligibility; i++) {
		e = &s->eligibility[i];
		if (e->placement == p && e->class_index == cls)
			return e;
	}
	if (!grow((void **)&s->eligibility, &s->cap_eligibility, s->n_eligibility,
	          sizeof(*s->eligibility))) {
		s->oom = true;
		return NULL;
	}
	e = &s->eligibility[s->n_eligibility];
	*e = (struct tj_admitter_eligibility){ .placement = p, .class_index = cls };
	e->allowed = calloc(s->n_nodes + 1, sizeof(bool));
	e->why = calloc(1, TJ_PLACEMENT_WHY_MAX);
	s->n_eligibility++;
	if (!e->allowed || !e->why ||
	    tj_eligibility_flags(a->eligibility, p, &s->read, a->stamp, &flags) < 0) {
		s->oom = true;
		return NULL;
	}
	for (size_t k = 0; k < s->n_nodes; k++) {
		bool mine = s->nodes[k].class_index == cls;

		/* A node that is gone has no labels left to judge: see tj_admitter_gone_node. */
		e->allowed[k] = s->read_at[k] == SIZE_MAX || flags[s->read_at[k]];
		in_class += mine;
		e->n_allowed += mine && e->allowed[k];
		if (mine && !e->allowed[k] && refused == SIZE_MAX)
			refused = k;
	}
	/* Why the scheduler would refuse the first node of the class it does not allow. */
	if (refused != SIZE_MAX)
		tj_placement_allows(p, tj_store_get(s->read.nodes, s->nodes[refused].name), e->why,
		                    TJ_PLACEMENT_WHY_MAX);
	if (e->n_allowed == in_class) {
		free(e->allowed);
		e->allowed = NULL;
	}
	return e;
}

/* The class a job without one is queued in this cycle (its class_requests): the one whose
 * nodes its placement allows the most of. Its requests of that class's resource go into job
 * and e. */
static void choose_class(const struct tj_admitter_source *a, struct tj_admitter_snapshot *s,
                         struct tj_admitter_entry *e, struct tj_admission_job *job)
{
	size_t best = SIZE_MAX, most = 0;

	/* Read before a reload of the config, the requests may name more classes than it has
	 * now: those are past its end, and no class of it. */
	for (size_t c = 0; c < e->n_class_requests && c < a->config->n_classes; c++) {
		const struct tj_admitter_eligibility *el;
		size_t n;

		if (e->class_requests[2 * c].gpus <= 0)
			continue;
		el = e->placement ? eligible_nodes(a, s, e->placement, (int)c) : NULL;
		n = el ? el->n_allowed : 0;
		if (best == SIZE_MAX || n > most) {
			best = c;
			most = n;
		}
	}
	if (best == SIZE_MAX)
		return;
	job->class_index = (int)best;
	job->request.gpus = e->request.gpus = e->class_requests[2 * best].gpus;
	job->launcher.gpus = e->launcher.gpus = e->class_requests[2 * best + 1].gpus;
}

static int build_jobs(const struct tj_admitter_source *a, struct tj_admitter_snapshot *s,
                      uint64_t now_ms)
{
	size_t n = tj_store_len(a->entries), k = 0, n_excluded = 0, x = 0;
	struct tj_admitter_entry *e;

	/* Each job's fields are all written below. */
	s->jobs = malloc((n + 1) * sizeof(*s->jobs));
	s->job_entries = malloc((n + 1) * sizeof(*s->job_entries));
	if (!s->jobs || !s->job_entries || take_entries(a, s, now_ms) < 0)
		return -ENOMEM;
	for (k = 0; k < s->n_jobs; k++) {
		const struct tj_admitter_refusals *r = refusals_of(a, s->job_entries[k]);

		n_excluded += s->job_entries[k]->n_excluded + (r ? r->n : 0);
	}
	s->excluded = calloc(n_excluded + 1, sizeof(*s->excluded));
	if (!s->excluded)
		return -ENOMEM;
	for (k = 0; k < s->n_jobs; k++) {
		e = s->job_entries[k];
		/* The entries lie apart in memory: the ones ahead are fetched meanwhile. */
		if (k + TJ_ADMITTER_FETCH_AHEAD < s->n_jobs)
			for (int line = 0; line < 3; line++)
				__builtin_prefetch(
				        (const char *)s->job_entries[k + TJ_ADMITTER_FETCH_AHEAD] +
				        64 * line);
		if (!a->config_epoch || e->class_epoch != a->config_epoch) {
			e->class_epoch = a->config_epoch;
			e->class_index = gpu_class_index(a->config, e->gpu_class);
		}
		if (!e->shared_namespace)
			e->shared_namespace = tj_intern(e->namespace);
		s->jobs[k] = (struct tj_admission_job){
			.key = e->key,
			.namespace = e->shared_namespace ? e->shared_namespace : e->namespace,
			.class_index = e->class_index,
			.num_nodes = e->num_nodes,
			.num_pods = e->num_pods,
			.request = e->request,
			.priority = e->priority,
			.tier = e->tier,
			.creation_time = e->creation_time,
			.walltime = e->walltime,
			.grace = e->grace,
			.restart = e->restart,
			.not_before = e->not_before,
			.excluded = &s->excluded[x],
			.launcher = e->launcher,
			.preempts = e->preempts,
			.preempt_after = e->preempt_after,
			.backfill_reserved_nodes = e->backfill_reserved_nodes,
		};
		tj_eligibility_intern(a->eligibility, &e->placement);
		if (e->class_requests)
			choose_class(a, s, e, &s->jobs[k]);
		const struct tj_admitter_eligibility *el =
		        e->placement ? eligible_nodes(a, s, e->placement, s->jobs[k].class_index)
		                     : NULL;

		if (el && el->allowed) {
			s->jobs[k].eligible = el->allowed;
			s->jobs[k].ineligible_why = el->why;
		}
		const struct tj_admitter_refusals *r = refusals_of(a, e);

		for (size_t i = 0; i < e->n_excluded; i++)
			exclude(s, &s->jobs[k], &x, n_excluded, e->excluded[i]);
		for (size_t i = 0; r && i < r->n; i++)
			if (now_ms < r->until_ms[i])
				exclude(s, &s->jobs[k], &x, n_excluded, r->nodes[i]);
	}
	return 0;
}

/* s->input, the decision's input over the snapshot, with the config's policy. */
static int build_input(const struct tj_config *config, struct tj_admitter_snapshot *s, int64_t now)
{
	const struct tj_admission_policy *policy = tj_config_admission(config);
	size_t n_classes = config ? config->n_classes : 0, n_quotas = 0;

	s->class_names = calloc(n_classes + 1, sizeof(*s->class_names));
	s->quotas = calloc(policy->n_limits + 1, sizeof(*s->quotas));
	if (!s->class_names || !s->quotas)
		return -ENOMEM;
	for (size_t i = 0; i < n_classes; i++)
		s->class_names[i] = config->classes[i].name;
	for (size_t i = 0; i < policy->n_limits; i++) {
		int cls = gpu_class_index(config, policy->limits[i].gpu_class);

		if (cls >= 0)
			s->quotas[n_quotas++] =
			        (struct tj_admission_quota){ policy->limits[i].namespace, cls,
				                             policy->limits[i].max_gpus };
	}
	s->adm_config = (struct tj_admission_config){
		.backfill = policy->backfill,
		.reservations = policy->backfill_depth,
		.max_tries = policy->backfill_max_job_test,
		.wait_if_never_fits = policy->wait_if_never_fits,
		.quotas = s->quotas,
		.n_quotas = n_quotas,
		.defer_waiting_messages = true,
	};
	s->input = (struct tj_admission_input){
		.config = &s->adm_config,
		.class_names = s->class_names,
		.n_classes = n_classes,
		.nodes = s->nodes,
		.n_nodes = s->n_nodes,
		.nodes_by_name = true, /* build_nodes merges two lists in name order */
		.releases = s->releases,
		.n_releases = s->n_releases,
		.usage = s->usage,
		.n_usage = s->n_usage,
		.quota_limits = s->quota_limits,
		.n_quota_limits = s->n_quota_limits,
		.jobs = s->jobs,
		.n_jobs = s->n_jobs,
		.running = s->running,
		.n_running = s->n_running,
		.tier_limits = s->tier_limits,
		.n_tier_limits = s->n_tier_limits,
		.now = now,
	};
	return 0;
}

int tj_admitter_snapshot_build(const struct tj_admitter_source *src, struct tj_admitter_snapshot *s,
                               int64_t now, uint64_t now_ms)
{
	int rc = build_nodes(src, s, now, now_ms);

	if (rc == 0) {
		rc = build_jobs(src, s, now_ms);
		tj_eligibility_sweep(src->eligibility, src->stamp);
	}
	if (rc == 0 && !s->oom)
		rc = tj_admitter_quotas_build(src, s);
	if (rc == 0 && !s->oom)
		rc = tj_admitter_running_build(src, s, now);
	if (rc == 0 && !s->oom)
		rc = tj_admitter_tier_limits_build(src, s);
	if (rc == 0 && !s->oom)
		rc = build_input(src->config, s, now);
	return rc == 0 && s->oom ? -ENOMEM : rc;
}
