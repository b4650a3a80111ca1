#include "cli/sinfo_table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/rfc3339.h"
#include "cli/slurm_text.h"
#include "cli/table.h"
#include "reconcilers/policy/node_health.h"
#include "reconcilers/policy/suspect.h"
#include "reconcilers/policy/walltime.h"
#include "reconcilers/usage/gpu_use.h"

static const char *const state_names[] = {
	[TJ_SINFO_IDLE] = "idle",           [TJ_SINFO_MIXED] = "mixed",
	[TJ_SINFO_ALLOCATED] = "allocated", [TJ_SINFO_DRAINING] = "draining",
	[TJ_SINFO_DRAINED] = "drained",     [TJ_SINFO_DOWN] = "down",
	[TJ_SINFO_SUSPECT] = "suspect",
};

const char *tj_sinfo_state_name(enum tj_sinfo_state state)
{
	return state < TJ_SINFO_STATE_COUNT ? state_names[state] : "unknown";
}

/* ---- judging the nodes ---- */

static void add_reason(struct tj_sinfo_node *e, const char *source, int64_t time, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));

static void add_reason(struct tj_sinfo_node *e, const char *source, int64_t time, const char *fmt,
                       ...)
{
	struct tj_sinfo_reason *r;
	va_list ap;

	if (e->n_reasons == TJ_SINFO_MAX_REASONS)
		return;
	r = &e->reasons[e->n_reasons++];
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
	r->source = source;
	r->time = time;
}

static const struct tj_node_taint *find_taint(const struct tj_node *node, const char *key)
{
	for (size_t i = 0; i < node->n_taints; i++)
		if (node->taints[i].key && strcmp(node->taints[i].key, key) == 0)
			return &node->taints[i];
	return NULL;
}

/* Down: the kubelet says NotReady, or the node lifecycle controller that it stopped
 * reporting (Ready Unknown, which Slurm calls not responding). */
static bool judge_down(struct tj_sinfo_node *e)
{
	const struct tj_node_condition *ready = tj_node_condition(e->node, "Ready");

	if (!ready)
		add_reason(e, "kubelet", 0, "NotReady: no Ready condition");
	else if (ready->status == TJ_COND_UNKNOWN)
		add_reason(e, "node-lifecycle", ready->last_transition_time, "Not responding%s%s",
		           ready->reason ? ": " : "", ready->reason ? ready->reason : "");
	else if (ready->status == TJ_COND_FALSE)
		add_reason(e, "kubelet", ready->last_transition_time, "NotReady%s%s",
		           ready->reason ? ": " : "", ready->reason ? ready->reason : "");
	else
		return false;
	return true;
}

/* Suspect: the controller's taint, with what its mark says (after the mark's time). */
static bool judge_suspect(struct tj_sinfo_node *e)
{
	const struct tj_node_taint *t = find_taint(e->node, TJ_TAINT_SUSPECT);
	const char *mark = e->node->suspect_mark;
	const char *why = mark ? strchr(mark, ' ') : NULL;
	int64_t since = t ? t->time_added : 0;
	char when[32] = "";

	if (!t)
		return false;
	if (why && (size_t)(why - mark) < sizeof(when)) {
		memcpy(when, mark, (size_t)(why - mark));
		if (!since && tj_rfc3339_parse(when, &since) < 0)
			since = 0;
	}
	add_reason(e, "trainjob-controller", since, "suspect: %s",
	           why && why[1] ? why + 1 : "ranks of several TrainJobs failed on it");
	return true;
}

/* Why a node that is up takes no new pods: a cordon, a GPU health signal, or a taint its
 * class does not tolerate (the admission's own rule, tj_node_takes_new_pods). */
static void judge_drain(struct tj_sinfo_node *e, const struct tj_gpu_class *cls,
                        const struct tj_failure_policy *policy, int64_t now)
{
	const struct tj_node *node = e->node;
	struct tj_node_health h;

	tj_node_health_judge(node, policy, 0, now, &h);
	if (node->unschedulable) {
		const struct tj_node_taint *t =
		        find_taint(node, "node.kubernetes.io/unschedulable");

		add_reason(e, "cordon", t ? t->time_added : 0, "cordoned%s%s%s",
		           h.fault == TJ_NODE_CORDONED_FOR_FAULT ? " (" : "",
		           h.fault == TJ_NODE_CORDONED_FOR_FAULT ? h.detail : "",
		           h.fault == TJ_NODE_CORDONED_FOR_FAULT ? ")" : "");
	}
	if (h.fault == TJ_NODE_GPU_UNHEALTHY)
		add_reason(e, "gpu-health", h.since, "GPU: %s", h.detail);
	for (size_t i = 0; i < node->n_taints; i++) {
		const struct tj_node_taint *t = &node->taints[i];
		struct tj_node probe = *node;

		if (!t->effect || strcmp(t->effect, "PreferNoSchedule") == 0 ||
		    strcmp(t->key, "node.kubernetes.io/unschedulable") == 0 ||
		    strcmp(t->key, TJ_TAINT_SUSPECT) == 0 ||
		    (h.fault == TJ_NODE_GPU_UNHEALTHY && strstr(h.detail, t->key)))
			continue;
		/* The taint alone, on an otherwise plain node: does the class tolerate it? */
		probe.unschedulable = false;
		probe.taints = (struct tj_node_taint *)t;
		probe.n_taints = 1;
		if (!tj_node_takes_new_pods(&probe, cls, NULL, now))
			add_reason(e, "taint", t->time_added, "taint %s:%s", t->key, t->effect);
	}
	if (e->n_reasons == 0)
		add_reason(e, "trainjob-controller", 0, "takes no new pods");
}

static enum tj_sinfo_state state_of(struct tj_sinfo_node *e, const struct tj_gpu_class *cls,
                                    const struct tj_failure_policy *policy, int64_t now)
{
	bool down = judge_down(e);
	bool suspect = judge_suspect(e);

	if (down)
		return TJ_SINFO_DOWN;
	if (suspect)
		return TJ_SINFO_SUSPECT;
	if (!tj_node_takes_new_pods(e->node, cls, policy, now)) {
		judge_drain(e, cls, policy, now);
		return e->gpus_allocated > 0 ? TJ_SINFO_DRAINING : TJ_SINFO_DRAINED;
	}
	if (e->gpus_allocated == 0)
		return TJ_SINFO_IDLE;
	return e->gpus_allocated >= e->gpus_total ? TJ_SINFO_ALLOCATED : TJ_SINFO_MIXED;
}

static int by_name(const void *a, const void *b)
{
	const struct tj_sinfo_node *x = a, *y = b;

	return strcmp(x->node->name, y->node->name);
}

static int by_partition(const void *a, const void *b)
{
	const struct tj_sinfo_node *x = a, *y = b;

	if (x->partition != y->partition)
		return x->partition < y->partition ? -1 : 1;
	return by_name(a, b);
}

/* Adds what each live pod requests of its node's class's GPUs; entries sorted by name. */
static void count_pods(const struct tj_config *config, struct tj_sinfo_node *entries, size_t n,
                       const struct tj_pod *const *pods, size_t n_pods)
{
	for (size_t i = 0; i < n_pods; i++) {
		const struct tj_pod *pod = pods[i];
		const char *name = tj_pod_node_of(pod);
		struct tj_node key_node = { .name = (char *)name };
		struct tj_sinfo_node key = { .node = &key_node }, *e;

		if (!name || tj_pod_terminal(pod))
			continue;
		e = bsearch(&key, entries, n, sizeof(*entries), by_name);
		if (e)
			e->gpus_allocated += tj_pod_resources_extended(
			        &pod->requests, config->classes[e->partition].resource);
	}
}

int tj_sinfo_build(const struct tj_config *config, const struct tj_node *const *nodes,
                   size_t n_nodes, const struct tj_pod *const *pods, size_t n_pods, int64_t now,
                   struct tj_sinfo *ret)
{
	const struct tj_failure_policy *policy = tj_config_failure_policy(config);
	struct tj_sinfo_node *entries = calloc(n_nodes + 1, sizeof(*entries));
	size_t n = 0;

	if (!entries)
		return -ENOMEM;
	for (size_t i = 0; i < n_nodes; i++) {
		int cls = tj_gpu_class_of_node(config, nodes[i]);

		if (cls < 0)
			continue;
		entries[n] = (struct tj_sinfo_node){
			.node = nodes[i],
			.partition = (size_t)cls,
			.gpus_total = tj_node_allocatable_extended(nodes[i],
			                                           config->classes[cls].resource),
		};
		n++;
	}
	qsort(entries, n, sizeof(*entries), by_name);
	count_pods(config, entries, n, pods, n_pods);
	for (size_t i = 0; i < n; i++)
		entries[i].state =
		        state_of(&entries[i], &config->classes[entries[i].partition], policy, now);
	qsort(entries, n, sizeof(*entries), by_partition);
	*ret = (struct tj_sinfo){ .config = config, .nodes = entries, .n = n };
	return 0;
}

void tj_sinfo_clear(struct tj_sinfo *s)
{
	free(s->nodes);
	*s = (struct tj_sinfo){ 0 };
}

/* ---- printing ---- */

/* GPUs allocated, idle (on a node that takes new pods), other, total, summed over nodes. */
struct gpus {
	int64_t a, i, o, t;
};

static void add_gpus(struct gpus *g, const struct tj_sinfo_node *e)
{
	int64_t alloc = e->gpus_allocated < e->gpus_total ? e->gpus_allocated : e->gpus_total;
	bool usable = e->state == TJ_SINFO_IDLE || e->state == TJ_SINFO_MIXED ||
	              e->state == TJ_SINFO_ALLOCATED;
	int64_t idle = usable ? e->gpus_total - alloc : 0;

	g->a += alloc;
	g->i += idle;
	g->o += e->gpus_total - alloc - idle;
	g->t += e->gpus_total;
}

static int add_gpus_cell(struct tj_table *t, const struct gpus *g)
{
	char cell[96];

	snprintf(cell, sizeof(cell), "%lld/%lld/%lld/%lld", (long long)g->a, (long long)g->i,
	         (long long)g->o, (long long)g->t);
	return tj_table_add(t, cell);
}

static int add_count(struct tj_table *t, size_t n)
{
	char cell[32];

	snprintf(cell, sizeof(cell), "%zu", n);
	return tj_table_add(t, cell);
}

/* The host list of names[0..n) as a new string. */
static char *hostlist(const char *const *names, size_t n)
{
	size_t size = 16;
	char *buf;

	for (size_t i = 0; i < n; i++)
		size += strlen(names[i]) + 1;
	buf = malloc(size);
	if (buf && tj_slurm_hostlist(names, n, buf, size) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int add_hostlist(struct tj_table *t, const char *const *names, size_t n)
{
	char *list = hostlist(names, n);
	int r;

	if (!list)
		return -ENOMEM;
	r = tj_table_add(t, n ? list : "");
	free(list);
	return r;
}

static bool shown(const struct tj_sinfo *s, size_t partition, const char *only)
{
	return !only || strcmp(s->config->classes[partition].name, only) == 0;
}

static int add_partition_cell(struct tj_table *t, const struct tj_sinfo *s, size_t partition)
{
	char cell[TJ_CONFIG_MAX_CLASSES + 80];

	snprintf(cell, sizeof(cell), "%s%s", s->config->classes[partition].name,
	         partition == 0 ? "*" : "");
	return tj_table_add(t, cell);
}

static int add_timelimit(struct tj_table *t, const struct tj_sinfo *s, size_t partition)
{
	struct tj_walltime w;
	struct tj_problem why = { "", "" };
	char cell[32] = "infinite";

	if (tj_walltime_resolve(s->config, NULL, &s->config->classes[partition], 0, &w, &why) ==
	            0 &&
	    w.max_seconds > 0)
		tj_slurm_duration(w.max_seconds, cell, sizeof(cell));
	return tj_table_add(t, cell);
}

static int print_summary(struct tj_table *t, const struct tj_sinfo *s, const char *only,
                         const char **names)
{
	static const char *const header[] = { "PARTITION", "AVAIL",         "TIMELIMIT", "NODES",
		                              "STATE",     "GPUS(A/I/O/T)", "NODELIST" };
	int r = 0;

	for (size_t c = 0; c < 7; c++)
		r |= tj_table_add(t, header[c]);
	tj_table_align_right(t, 2);
	tj_table_align_right(t, 3);
	for (size_t p = 0; p < s->config->n_classes && r == 0; p++) {
		bool any = false;

		if (!shown(s, p, only))
			continue;
		for (int st = 0; st < TJ_SINFO_STATE_COUNT && r == 0; st++) {
			struct gpus g = { 0 };
			size_t n = 0;

			for (size_t i = 0; i < s->n; i++)
				if (s->nodes[i].partition == p &&
				    s->nodes[i].state == (unsigned)st) {
					add_gpus(&g, &s->nodes[i]);
					names[n++] = s->nodes[i].node->name;
				}
			if (n == 0)
				continue;
			any = true;
			if ((r = add_partition_cell(t, s, p)) < 0 ||
			    (r = tj_table_add(t, "up")) < 0 || (r = add_timelimit(t, s, p)) < 0 ||
			    (r = add_count(t, n)) < 0 ||
			    (r = tj_table_add(t, tj_sinfo_state_name(st))) < 0 ||
			    (r = add_gpus_cell(t, &g)) < 0 || (r = add_hostlist(t, names, n)) < 0)
				break;
		}
		/* A partition without nodes, as sinfo shows one. */
		if (!any && r == 0 &&
		    ((r = add_partition_cell(t, s, p)) < 0 || (r = tj_table_add(t, "up")) < 0 ||
		     (r = add_timelimit(t, s, p)) < 0 || (r = add_count(t, 0)) < 0 ||
		     (r = tj_table_add(t, "n/a")) < 0 ||
		     (r = add_gpus_cell(t, &(struct gpus){ 0 })) < 0 ||
		     (r = tj_table_add(t, "")) < 0))
			break;
	}
	return r;
}

static int print_nodes(struct tj_table *t, const struct tj_sinfo *s, const char *only)
{
	static const char *const header[] = { "NODELIST", "NODES", "PARTITION", "STATE",
		                              "GPUS(A/I/O/T)" };
	int r = 0;

	for (size_t c = 0; c < 5; c++)
		r |= tj_table_add(t, header[c]);
	tj_table_align_right(t, 1);
	for (size_t i = 0; i < s->n && r == 0; i++) {
		const struct tj_sinfo_node *e = &s->nodes[i];
		struct gpus g = { 0 };

		if (!shown(s, e->partition, only))
			continue;
		add_gpus(&g, e);
		if ((r = tj_table_add(t, e->node->name)) < 0 || (r = add_count(t, 1)) < 0 ||
		    (r = add_partition_cell(t, s, e->partition)) < 0 ||
		    (r = tj_table_add(t, tj_sinfo_state_name(e->state))) < 0 ||
		    (r = add_gpus_cell(t, &g)) < 0)
			break;
	}
	return r;
}

static bool same_reason(const struct tj_sinfo_reason *a, const struct tj_sinfo_reason *b)
{
	return a->time == b->time && strcmp(a->source, b->source) == 0 &&
	       strcmp(a->text, b->text) == 0;
}

/* One line per reason, its nodes joined: the first node that gives it starts the line. */
static int print_reasons(struct tj_table *t, const struct tj_sinfo *s, const char *only,
                         const char **names)
{
	static const char *const header[] = { "REASON", "USER", "TIMESTAMP", "NODELIST" };
	int r = 0;

	for (size_t c = 0; c < 4; c++)
		r |= tj_table_add(t, header[c]);
	for (size_t i = 0; i < s->n && r == 0; i++) {
		for (size_t k = 0; k < s->nodes[i].n_reasons && r == 0; k++) {
			const struct tj_sinfo_reason *reason = &s->nodes[i].reasons[k];
			bool earlier = false;
			char when[32] = "Unknown";
			size_t n = 0;

			if (!shown(s, s->nodes[i].partition, only))
				continue;
			for (size_t j = 0; j < s->n && !earlier; j++)
				for (size_t m = 0; m < s->nodes[j].n_reasons; m++) {
					if (!shown(s, s->nodes[j].partition, only) ||
					    !same_reason(&s->nodes[j].reasons[m], reason))
						continue;
					if (j < i)
						earlier = true;
					else if (n == 0 || names[n - 1] != s->nodes[j].node->name)
						names[n++] = s->nodes[j].node->name;
				}
			if (earlier)
				continue;
			if (reason->time)
				tj_slurm_time(reason->time, when, sizeof(when));
			if ((r = tj_table_add(t, reason->text)) < 0 ||
			    (r = tj_table_add(t, reason->source)) < 0 ||
			    (r = tj_table_add(t, when)) < 0 || (r = add_hostlist(t, names, n)) < 0)
				break;
		}
	}
	return r;
}

int tj_sinfo_print(FILE *out, const struct tj_sinfo *s, enum tj_sinfo_view view,
                   const char *partition)
{
	static const size_t columns[] = {
		[TJ_SINFO_SUMMARY] = 7, [TJ_SINFO_NODES] = 5, [TJ_SINFO_REASONS] = 4
	};
	struct tj_table *t = tj_table_new(columns[view]);
	const char **names = calloc(s->n + 1, sizeof(*names));
	int r = -ENOMEM;

	if (!t || !names)
		goto out;
	if (view == TJ_SINFO_SUMMARY)
		r = print_summary(t, s, partition, names);
	else if (view == TJ_SINFO_NODES)
		r = print_nodes(t, s, partition);
	else
		r = print_reasons(t, s, partition, names);
	if (r == 0)
		tj_table_print(t, out, false);
out:
	free(names);
	tj_table_free(t);
	return r < 0 ? r : 0;
}
