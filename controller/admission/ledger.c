#include "controller/admission/ledger.h"
#include "controller/admission/ledger_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "informers/intern.h"
#include "reconcilers/admission/capacity.h"
#include "reconcilers/policy/node_health.h"
#include "reconcilers/usage/gpu_use.h"

struct tj_ledger {
	struct tj_store *nodes; /* owned; struct tj_ledger_node by name */
	/* owned array of the entries (the store's) of the nodes of the node cache, by name */
	struct tj_ledger_node **order;
	size_t n_order, cap_order;
	bool reorder;                   /* a node came or went since the order was made */
	const struct tj_config *config; /* borrowed: what the nodes were judged with */
	uint64_t layout, judgements;
	/* owned; struct gang_mark by TrainJob key: whether its running gang is ending, as last
	 * worked out, until one of its pods changes (tj_ledger_gang_ending); NULL without memory,
	 * when every question walks the job's pods */
	struct tj_store *gangs;
};

/* Whether the gang of attempt of the TrainJob key whose uid is uid is ending. */
struct gang_mark {
	char *key, *uid; /* owned */
	int attempt;
	bool ending;
};

static void gang_free(void *obj)
{
	struct gang_mark *m = obj;

	free(m->key);
	free(m->uid);
	free(m);
}

static int gang_key(const void *obj, char *buf, size_t size)
{
	return tj_store_key_of(buf, size, NULL, ((const struct gang_mark *)obj)->key);
}

static const struct tj_store_ops gang_ops = {
	.free = gang_free,
	.key = gang_key,
};

static void node_clear(struct tj_ledger_node *n)
{
	for (size_t i = 0; i < n->n_groups; i++) {
		tj_intern_unref(n->groups[i].job_key);
		tj_intern_unref(n->groups[i].owner_uid);
	}
	for (size_t i = 0; i < n->n_usage; i++)
		free(n->usage[i].namespace);
	for (size_t i = 0; i < n->n_holders; i++)
		free(n->holders[i]);
	free(n->releases);
	free(n->groups);
	free(n->usage);
	free(n->holders);
	free(n->resource);
	n->releases = NULL;
	n->groups = NULL;
	n->usage = NULL;
	n->holders = NULL;
	n->resource = NULL;
	n->n_releases = n->n_groups = n->n_usage = n->n_holders = 0;
	n->used = (struct tj_admission_resources){ 0 };
}

static void node_free(void *obj)
{
	struct tj_ledger_node *n = obj;

	node_clear(n);
	free(n->name);
	free(n->domain);
	free(n);
}

static int node_key(const void *obj, char *buf, size_t size)
{
	return tj_store_key_of(buf, size, NULL, ((const struct tj_ledger_node *)obj)->name);
}

static const struct tj_store_ops node_ops = {
	.free = node_free,
	.key = node_key,
};

int tj_ledger_new(struct tj_ledger **ret)
{
	struct tj_ledger *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	if ((r = tj_store_new(&node_ops, &l->nodes)) < 0) {
		free(l);
		return r;
	}
	if ((r = tj_store_new(&gang_ops, &l->gangs)) < 0) {
		tj_ledger_free(l);
		return r;
	}
	*ret = l;
	return 0;
}

struct tj_ledger *tj_ledger_free(struct tj_ledger *l)
{
	if (!l)
		return NULL;
	free(l->order);
	tj_store_free(l->nodes);
	tj_store_free(l->gangs);
	free(l);
	return NULL;
}

/* The ledger's own entries, which it alone changes. */
static struct tj_ledger_node *entry(struct tj_ledger *l, const char *name)
{
	return (struct tj_ledger_node *)tj_store_get(l->nodes, name);
}

/* Forgets what is known of TrainJob key's gang. */
static void forget_gang(struct tj_ledger *l, const char *key)
{
	if (l->gangs)
		tj_store_delete(l->gangs, key, NULL);
}

void tj_ledger_touch_pod(struct tj_ledger *l, const struct tj_pod *pod)
{
	const char *name = pod ? tj_pod_node_of(pod) : NULL;
	struct tj_ledger_node *n = name ? entry(l, name) : NULL;
	char key[TJ_STORE_KEY_MAX];

	if (n)
		n->stale = true;
	if (pod && pod->trainjob && tj_pod_trainjob_key(pod, key, sizeof(key)) == 1)
		forget_gang(l, key);
}

/* Whether a pod of the cache (its TrainJob index) ends the gang: walks the job's pods. */
static bool walk_gang(const struct tj_store *pods, const char *key, const char *uid, int attempt)
{
	struct tj_store_iter it;
	const struct tj_pod *pod;

	tj_store_iter_index(pods, TJ_POD_INDEX_TRAINJOB, key, &it);
	while ((pod = tj_store_iter_next(&it)))
		if (tj_gang_ending_pod(pod, uid, attempt))
			return true;
	return false;
}

bool tj_ledger_gang_ending(struct tj_ledger *l, const struct tj_store *pods, const char *key,
                           const char *uid, int attempt)
{
	const struct gang_mark *known = l->gangs ? tj_store_get(l->gangs, key) : NULL;
	struct gang_mark *m;
	bool ending;

	if (!pods || !uid)
		return false;
	if (known && known->attempt == attempt && strcmp(known->uid, uid) == 0)
		return known->ending;
	ending = walk_gang(pods, key, uid, attempt);
	/* Without memory for the mark, the next question walks the pods again. */
	if (!l->gangs || !(m = calloc(1, sizeof(*m))))
		return ending;
	*m = (struct gang_mark){ strdup(key), strdup(uid), attempt, ending };
	if (!m->key || !m->uid || tj_store_upsert(l->gangs, m, NULL) < 0)
		gang_free(m);
	return ending;
}

void tj_ledger_node_changed(struct tj_ledger *l, const struct tj_node *old,
                            const struct tj_node *node)
{
	const struct tj_node *any = node ? node : old;
	struct tj_ledger_node *n = any ? entry(l, any->name) : NULL;

	if (!old || !node)
		l->reorder = true;
	if (n)
		n->judged = false;
}

void tj_ledger_invalidate(struct tj_ledger *l)
{
	struct tj_store_iter it;
	struct tj_ledger_node *n;

	tj_store_iter_init(l->nodes, &it);
	while ((n = (struct tj_ledger_node *)tj_store_iter_next(&it))) {
		n->stale = true;
		n->judged = false;
	}
	l->reorder = true;
	tj_store_free(l->gangs);
	if (tj_store_new(&gang_ops, &l->gangs) < 0)
		l->gangs = NULL;
}

static void add_resources(struct tj_admission_resources *to, const struct tj_admission_resources *r)
{
	to->gpus = tj_add_capped(to->gpus, r->gpus);
	to->cpu_milli = tj_add_capped(to->cpu_milli, r->cpu_milli);
	to->memory = tj_add_capped(to->memory, r->memory);
	to->pods = tj_add_capped(to->pods, r->pods);
}

/* Grows *array (of *n elements of size) by one zeroed element; NULL without memory. */
static void *append(void **array, size_t *n, size_t size)
{
	char *p = realloc(*array, (*n + 1) * size);

	if (!p)
		return NULL;
	*array = p;
	memset(p + *n * size, 0, size);
	return p + (*n)++ * size;
}

static int add_group(struct tj_ledger_node *n, const struct tj_pod *pod,
                     const struct tj_admission_resources *r)
{
	char key[TJ_STORE_KEY_MAX];
	int64_t grace = pod->termination_grace > 0 ? pod->termination_grace : 0;
	struct tj_ledger_group *g;

	if (tj_pod_trainjob_key(pod, key, sizeof(key)) != 1)
		return 0;
	for (size_t i = 0; i < n->n_groups; i++) {
		g = &n->groups[i];
		if (g->grace == grace && strcmp(g->job_key, key) == 0 &&
		    (g->owner_uid && pod->owner_uid ? strcmp(g->owner_uid, pod->owner_uid) == 0
		                                    : g->owner_uid == pod->owner_uid)) {
			add_resources(&g->held, r);
			return 0;
		}
	}
	if (!(g = append((void **)&n->groups, &n->n_groups, sizeof(*g))))
		return -ENOMEM;
	g->grace = grace;
	g->held = *r;
	if (!(g->job_key = tj_intern(key)) ||
	    (pod->owner_uid && !(g->owner_uid = tj_intern(pod->owner_uid))))
		return -ENOMEM;
	return 0;
}

static int add_usage(struct tj_ledger_node *n, const char *ns, int64_t gpus)
{
	struct tj_ledger_usage *u;

	for (size_t i = 0; i < n->n_usage; i++)
		if (strcmp(n->usage[i].namespace, ns) == 0) {
			n->usage[i].gpus = tj_add_capped(n->usage[i].gpus, gpus);
			return 0;
		}
	if (!(u = append((void **)&n->usage, &n->n_usage, sizeof(*u))))
		return -ENOMEM;
	u->gpus = gpus;
	return (u->namespace = strdup(ns)) ? 0 : -ENOMEM;
}

static int add_holder(struct tj_ledger_node *n, const struct tj_pod *pod)
{
	char key[TJ_STORE_KEY_MAX], **h;

	if (tj_pod_key(pod, key, sizeof(key)) < 0)
		return 0;
	if (!(h = append((void **)&n->holders, &n->n_holders, sizeof(*h))))
		return -ENOMEM;
	return (*h = strdup(key)) ? 0 : -ENOMEM;
}

/* What one pod holds on the node: counted in, with its end if it is known now, else with its
 * TrainJob's group (or nothing: its end is unknown). */
static int count_pod(struct tj_ledger_node *n, const struct tj_pod *pod, const char *resource)
{
	struct tj_hold h;
	struct tj_admission_resources r;
	struct tj_ledger_release *rel;

	tj_hold_of(pod, 0, &h);
	if (h.kind == TJ_HOLD_NONE)
		return 0;
	r = (struct tj_admission_resources){
		resource ? tj_pod_resources_extended(&pod->requests, resource) : 0,
		pod->requests.cpu_milli, pod->requests.memory, 1
	};
	add_resources(&n->used, &r);
	if (r.gpus && add_usage(n, pod->namespace, r.gpus) < 0)
		return -ENOMEM;
	if (pod->launcher_hold && add_holder(n, pod) < 0)
		return -ENOMEM;
	if (h.end > 0) {
		if (!(rel = append((void **)&n->releases, &n->n_releases, sizeof(*rel))))
			return -ENOMEM;
		*rel = (struct tj_ledger_release){ h.end, r };
		return 0;
	}
	return add_group(n, pod, &r);
}

static int count_node(struct tj_ledger_node *n, const char *resource, const struct tj_store *pods)
{
	struct tj_store_iter it;
	const struct tj_pod *pod;

	node_clear(n);
	if (resource && !(n->resource = strdup(resource)))
		return -ENOMEM;
	if (pods) {
		tj_store_iter_index(pods, TJ_POD_INDEX_NODE, n->name, &it);
		while ((pod = tj_store_iter_next(&it)))
			if (count_pod(n, pod, resource) < 0)
				return -ENOMEM;
	}
	n->stale = false;
	return 0;
}

static bool same_resource(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

/* The entry of node name, new (stale, not judged) if the ledger has none; NULL without
 * memory. */
static struct tj_ledger_node *entry_for(struct tj_ledger *l, const char *name)
{
	struct tj_ledger_node *n = entry(l, name);

	if (n)
		return n;
	if (!(n = calloc(1, sizeof(*n))) || !(n->name = strdup(name))) {
		free(n);
		return NULL;
	}
	if (tj_store_upsert(l->nodes, n, NULL) < 0) {
		node_free(n);
		return NULL;
	}
	n->stale = true;
	return n;
}

/* Counts n again from pods if it is stale or was counted in another resource. */
static int count(struct tj_ledger_node *n, const char *resource, const struct tj_store *pods)
{
	if (!n->stale && same_resource(n->resource, resource))
		return 0;
	if (count_node(n, resource, pods) < 0) {
		n->stale = true;
		return -ENOMEM;
	}
	return 0;
}

const struct tj_ledger_node *tj_ledger_get(struct tj_ledger *l, const char *name,
                                           const char *resource, const struct tj_store *pods)
{
	struct tj_ledger_node *n = entry_for(l, name);

	return n && count(n, resource, pods) == 0 ? n : NULL;
}

/* What node offers, into n. Whether it takes new pods does not depend on the time: a health
 * signal of any age refuses them (tj_node_takes_new_pods judges with no grace). */
static int judge(struct tj_ledger *l, struct tj_ledger_node *n, const struct tj_node *node)
{
	const struct tj_config *config = l->config;
	const char *label = tj_config_admission(config)->topology_label;
	const char *domain = label ? tj_node_label(node, label) : NULL;
	int cls = tj_gpu_class_of_node(config, node);
	const struct tj_gpu_class *gc = cls >= 0 ? &config->classes[cls] : NULL;

	free(n->domain);
	if (!(n->domain = domain ? strdup(domain) : NULL) && domain)
		return -ENOMEM;
	n->class_index = cls;
	n->schedulable = tj_node_takes_new_pods(node, gc, tj_config_failure_policy(config), 0);
	n->allocatable = (struct tj_admission_resources){
		gc ? tj_node_allocatable_extended(node, gc->resource) : 0,
		node->allocatable.cpu_milli, node->allocatable.memory, tj_node_pod_slots(node)
	};
	n->judged = true;
	n->judged_at = ++l->judgements;
	return 0;
}

static int by_name(const void *x, const void *y)
{
	return strcmp((*(struct tj_ledger_node *const *)x)->name,
	              (*(struct tj_ledger_node *const *)y)->name);
}

/* Forgets the entries whose node the last ordering did not find. */
static void sweep(struct tj_ledger *l)
{
	struct tj_store_iter it;
	const struct tj_ledger_node *n;
	char **gone = NULL;
	size_t n_gone = 0, cap = 0;

	tj_store_iter_init(l->nodes, &it);
	while ((n = tj_store_iter_next(&it))) {
		if (n->seen == l->layout)
			continue;
		if (n_gone == cap) {
			char **p = realloc(gone, (cap = cap ? 2 * cap : 16) * sizeof(*gone));

			if (!p)
				break;
			gone = p;
		}
		gone[n_gone++] = n->name;
	}
	/* The names are the entries' own: each is copied before its entry goes. */
	for (size_t i = 0; i < n_gone; i++) {
		char key[TJ_STORE_KEY_MAX];

		if (snprintf(key, sizeof(key), "%s", gone[i]) < (int)sizeof(key))
			tj_store_delete(l->nodes, key, NULL);
	}
	free(gone);
}

/* Makes the order again from the node cache: an entry for each of its nodes (judged now if it
 * is new or changed), sorted by name; the others forgotten. */
static int make_order(struct tj_ledger *l, const struct tj_store *nodes)
{
	size_t n = nodes ? tj_store_len(nodes) : 0, k = 0;
	struct tj_store_iter it;
	const struct tj_node *node;

	if (n > l->cap_order) {
		struct tj_ledger_node **p = realloc(l->order, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->order = p;
		l->cap_order = n;
	}
	l->layout++;
	l->n_order = 0;
	if (nodes)
		tj_store_iter_init(nodes, &it);
	while (nodes && k < n && (node = tj_store_iter_next(&it))) {
		struct tj_ledger_node *e = entry_for(l, node->name);

		if (!e || (!e->judged && judge(l, e, node) < 0))
			return -ENOMEM;
		e->seen = l->layout;
		l->order[k++] = e;
	}
	if (k > 1)
		qsort(l->order, k, sizeof(*l->order), by_name);
	sweep(l);
	l->n_order = k;
	l->reorder = false;
	return 0;
}

/* How many nodes ahead a read fetches the ones it comes to. */
#define READ_AHEAD 8

int tj_ledger_read(struct tj_ledger *l, const struct tj_config *config,
                   const struct tj_store *nodes, const struct tj_store *pods,
                   struct tj_ledger_node *const **ret, size_t *ret_n)
{
	uint64_t before;

	if (config != l->config) {
		tj_ledger_invalidate(l);
		l->config = config;
	}
	before = l->judgements;
	/* A count that differs means a node came or went unheard. */
	if ((l->reorder || l->n_order != (nodes ? tj_store_len(nodes) : 0)) &&
	    make_order(l, nodes) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < l->n_order; i++) {
		struct tj_ledger_node *n = l->order[i];
		const struct tj_gpu_class *gc;

		/* The nodes lie apart in memory: those ahead are fetched meanwhile. */
		if (i + READ_AHEAD < l->n_order)
			__builtin_prefetch(l->order[i + READ_AHEAD]);
		if (!n->judged) {
			const struct tj_node *node = nodes ? tj_store_get(nodes, n->name) : NULL;

			/* Gone unheard: the order is made again, which judges every node it keeps,
			 * and read from its start. */
			if (!node) {
				if (make_order(l, nodes) < 0)
					return -ENOMEM;
				i = (size_t)-1;
				continue;
			}
			if (judge(l, n, node) < 0)
				return -ENOMEM;
		}
		/* Its class, and so the resource its pods' GPUs count in, changes only with a
		 * judgement. */
		if (!n->stale && n->judged_at <= before)
			continue;
		gc = n->class_index >= 0 ? &config->classes[n->class_index] : NULL;
		if (count(n, gc ? gc->resource : NULL, pods) < 0)
			return -ENOMEM;
	}
	*ret = l->order;
	*ret_n = l->n_order;
	return 0;
}

uint64_t tj_ledger_layout(const struct tj_ledger *l)
{
	return l->layout;
}

uint64_t tj_ledger_judgements(const struct tj_ledger *l)
{
	return l->judgements;
}

size_t tj_ledger_len(const struct tj_ledger *l)
{
	return tj_store_len(l->nodes);
}
