#include "controller/suspect_nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/log/log.h"
#include "kube/request.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/suspect.h"

/* A node's write, from the moment it is sent until the cache shows a version of the node
 * other than the one it was made from: until then the cache is behind what the controller
 * wrote (or, after a conflict, behind the API server), and judging the node again would
 * write the same again. */
struct write {
	struct write *next;
	struct tj_suspect_nodes *s; /* borrowed */
	struct tj_request *request; /* borrowed; the client frees it after the callback; NULL
	                             * once answered */
	char node[TJ_NAME_MAX];
	char base[64]; /* the resourceVersion of the node it was made from */
	/* owned; a mark's verdict, told once the mark is written (a mark that met a conflict
	 * is made again, and told then); NULL for the failures alone */
	struct tj_suspect_verdict *marked;
};

struct tj_suspect_nodes {
	struct tj_client *client;
	struct tj_recorder *recorder;
	const struct tj_std_metrics *metrics;
	tj_node_lookup_fn node_lookup;
	void *node_ctx;
	const char *(*job_uid)(void *ctx, const char *key);
	uint64_t (*clock)(void);
	const struct tj_suspect_policy *policy; /* borrowed */
	struct tj_node_failure *history; /* owned array of n, room for TJ_SUSPECT_HISTORY_MAX */
	size_t n;
	struct write *writes; /* owned list */
	long tainted;         /* nodes in the cache that carry the taint */
	bool leading;
};

static int64_t now_of(const struct tj_suspect_nodes *s)
{
	struct timespec ts;

	if (s->clock)
		return (int64_t)(s->clock() / 1000000000u);
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

int tj_suspect_nodes_new(const struct tj_suspect_nodes_config *config,
                         struct tj_suspect_nodes **ret)
{
	struct tj_suspect_nodes *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->history = calloc(TJ_SUSPECT_HISTORY_MAX, sizeof(*s->history));
	if (!s->history) {
		free(s);
		return -ENOMEM;
	}
	s->client = config->client;
	s->recorder = config->recorder;
	s->metrics = config->metrics;
	s->node_lookup = config->node_lookup;
	s->node_ctx = config->node_ctx;
	s->job_uid = config->job_uid;
	s->clock = config->clock;
	s->policy = tj_config_suspect(NULL);
	*ret = s;
	return 0;
}

/* ---- the history ---- */

static bool same_failure(const struct tj_node_failure *a, const struct tj_node_failure *b)
{
	return a->attempt == b->attempt && strcmp(a->node, b->node) == 0 &&
	       strcmp(a->job, b->job) == 0;
}

/* Adds f unless the history has it; when full, the oldest goes. Returns whether it was
 * added. */
static bool remember(struct tj_suspect_nodes *s, const struct tj_node_failure *f)
{
	size_t oldest = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (same_failure(&s->history[i], f))
			return false;
		if (s->history[i].time < s->history[oldest].time)
			oldest = i;
	}
	if (s->n == TJ_SUSPECT_HISTORY_MAX)
		s->history[oldest] = s->history[--s->n];
	s->history[s->n++] = *f;
	return true;
}

/* Drops the failures of node up to the time before. */
static void forget_node(struct tj_suspect_nodes *s, const char *node, int64_t before)
{
	for (size_t i = 0; i < s->n;)
		if (s->history[i].time <= before && strcmp(s->history[i].node, node) == 0)
			s->history[i] = s->history[--s->n];
		else
			i++;
}

/* When the operator last cleared the node, as its annotation says (0: never, or not within
 * the window, past which no failure it forgot would count anyway). */
static int64_t cleared_of(const struct tj_suspect_nodes *s, const struct tj_node *node, int64_t now)
{
	int64_t cleared;

	if (!node)
		return 0;
	tj_suspect_parse(node->name, node->failures, NULL, 0, &cleared);
	return cleared > now - s->policy->window_seconds ? cleared : 0;
}

/* ---- writes ---- */

static struct write *write_of(const struct tj_suspect_nodes *s, const char *node)
{
	for (struct write *w = s->writes; w; w = w->next)
		if (strcmp(w->node, node) == 0)
			return w;
	return NULL;
}

static void unlink_write(struct tj_suspect_nodes *s, struct write *w)
{
	struct write **pp;

	for (pp = &s->writes; *pp != w; pp = &(*pp)->next)
		;
	*pp = w->next;
	free(w->marked);
	free(w);
}

/* The answer: the write waits for its echo in the cache either way. A conflict means a
 * newer node, which the watch brings; another error is tried again at the node's next
 * change. */
static void tell_marked(struct tj_suspect_nodes *s, const char *node,
                        const struct tj_suspect_verdict *v);

static void on_written(struct tj_response *resp, void *userdata)
{
	struct write *w = userdata;

	w->request = NULL;
	if (resp->rc < 0 && resp->http_status != 409)
		tj_log_warn("suspect", "could not write the node", TJ_STR("node", w->node),
		            TJ_STR("error", resp->error));
	if (resp->rc == 0 && w->marked)
		tell_marked(w->s, w->node, w->marked);
	free(w->marked);
	w->marked = NULL;
}

/* Whether the node may be judged now: no write of it in flight, and the cache past the
 * version the last one was made from (the write is then done with). */
static bool settled(struct tj_suspect_nodes *s, const struct tj_node *node)
{
	struct write *w = write_of(s, node->name);

	if (!w)
		return true;
	if (w->request ||
	    strcmp(w->base, node->resource_version ? node->resource_version : "") == 0)
		return false;
	unlink_write(s, w);
	return true;
}

static int send_patch(struct tj_suspect_nodes *s, const struct tj_node *node, const cJSON *patch,
                      const struct tj_suspect_verdict *mark)
{
	struct tj_ref ref = { .resource = &tj_resource_nodes, .name = node->name };
	struct write *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return -ENOMEM;
	if (mark) {
		w->marked = malloc(sizeof(*w->marked));
		if (!w->marked) {
			free(w);
			return -ENOMEM;
		}
		*w->marked = *mark;
	}
	w->s = s;
	snprintf(w->node, sizeof(w->node), "%s", node->name);
	snprintf(w->base, sizeof(w->base), "%s",
	         node->resource_version ? node->resource_version : "");
	rc = tj_kube_patch(s->client, &ref, TJ_PATCH_MERGE, patch, NULL, on_written, w,
	                   &w->request);
	if (rc < 0) {
		free(w->marked);
		free(w);
		return rc;
	}
	w->next = s->writes;
	s->writes = w;
	return 0;
}

/* The node's taints as they are, and the suspect taint after them: a merge patch replaces
 * the whole list, and the resourceVersion in the patch makes a list changed meanwhile a
 * conflict rather than a loss. */
static int add_taints(cJSON *spec, const struct tj_node *node, int64_t now)
{
	cJSON *taints = cJSON_AddArrayToObject(spec, "taints");
	char when[21];

	if (!taints)
		return -ENOMEM;
	for (size_t i = 0; i <= node->n_taints; i++) {
		const struct tj_node_taint *t = i < node->n_taints ? &node->taints[i] : NULL;
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(taints, o))
			return -ENOMEM;
		cJSON_AddStringToObject(o, "key", t ? t->key : TJ_TAINT_SUSPECT);
		cJSON_AddStringToObject(o, "effect", t ? t->effect : "NoSchedule");
		if (t && t->value)
			cJSON_AddStringToObject(o, "value", t->value);
		if (!t || t->time_added) {
			tj_time_format(t ? t->time_added : now, when);
			cJSON_AddStringToObject(o, "timeAdded", when);
		}
	}
	return 0;
}

/* ---- telling ---- */

static void record(struct tj_suspect_nodes *s, const char *namespace, const char *name,
                   const char *uid, const char *kind, bool warning, const char *reason,
                   const char *message)
{
	struct tj_event_object obj = {
		.namespace = namespace, .name = name, .uid = uid, .kind = kind
	};

	if (s->recorder)
		tj_recorder_record(s->recorder, &obj, warning, reason, message,
		                   (int64_t)now_of(s) * 1000000000);
}

/* The Node's event, and each job's naming the others. */
static void tell_marked(struct tj_suspect_nodes *s, const char *node,
                        const struct tj_suspect_verdict *v)
{
	size_t named = v->n_jobs < TJ_SUSPECT_MAX_JOBS ? v->n_jobs : TJ_SUSPECT_MAX_JOBS;
	/* The description is cut to leave room for the rest of the message. */
	char text[TJ_MESSAGE_MAX / 2], msg[TJ_MESSAGE_MAX];

	tj_suspect_describe(s->policy, v, text, sizeof(text));
	snprintf(msg, sizeof(msg),
	         "%s; tainted %s:NoSchedule, new gangs avoid it until the taint is removed", text,
	         TJ_TAINT_SUSPECT);
	record(s, "default", node, NULL, "Node", true, "NodeSuspect", msg);
	for (size_t i = 0; i < named; i++) {
		char ns[TJ_KEY_MAX], others[400] = "";
		char *name;
		size_t used = 0;

		memcpy(ns, v->jobs[i], sizeof(ns));
		name = strchr(ns, '/');
		if (!name)
			continue;
		*name++ = '\0';
		for (size_t j = 0; j < named; j++) {
			int w;

			if (j == i)
				continue;
			w = snprintf(others + used, sizeof(others) - used, "%s%s", used ? ", " : "",
			             v->jobs[j]);
			if (w < 0 || (size_t)w >= sizeof(others) - used) {
				others[used] = '\0';
				break;
			}
			used += (size_t)w;
		}
		snprintf(msg, sizeof(msg),
		         "node %s is suspect: ranks of this job and of %s%s failed there within "
		         "%lld s; new gangs avoid it, and a failure there is charged to the "
		         "infrastructure",
		         node, others, v->n_jobs > named ? " and others" : "",
		         s->policy->window_seconds);
		record(s, ns, name, s->job_uid ? s->job_uid(s->node_ctx, v->jobs[i]) : NULL, NULL,
		       true, "NodeSuspect", msg);
	}
	if (s->metrics)
		tj_metric_add(s->metrics->trainjob_suspect_marks_total, NULL, 1);
	tj_log_info("suspect", "node is suspect", TJ_STR("node", node), TJ_STR("why", text));
}

/* ---- judging a node ---- */

static int write_mark(struct tj_suspect_nodes *s, const struct tj_node *node, const char *failures,
                      const struct tj_suspect_verdict *v, int64_t now)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
	cJSON *ann = cJSON_AddObjectToObject(meta, "annotations");
	cJSON *spec = cJSON_AddObjectToObject(patch, "spec");
	char mark[TJ_MESSAGE_MAX], when[21];
	int rc = -ENOMEM;

	if (!patch || !meta || !ann || !spec || add_taints(spec, node, now) < 0)
		goto out;
	if (node->resource_version)
		cJSON_AddStringToObject(meta, "resourceVersion", node->resource_version);
	tj_time_format(now, when);
	snprintf(mark, sizeof(mark), "%s ", when);
	tj_suspect_describe(s->policy, v, mark + strlen(mark), sizeof(mark) - strlen(mark));
	cJSON_AddStringToObject(ann, TJ_ANNOTATION_SUSPECT, mark);
	cJSON_AddStringToObject(ann, TJ_ANNOTATION_NODE_FAILURES, failures);
	rc = send_patch(s, node, patch, v);
out:
	cJSON_Delete(patch);
	return rc;
}

/* The node's failures; cleared: the mark goes too. */
static int write_annotations(struct tj_suspect_nodes *s, const struct tj_node *node,
                             const char *failures, bool cleared)
{
	cJSON *patch = cJSON_CreateObject();
	cJSON *meta = cJSON_AddObjectToObject(patch, "metadata");
	cJSON *ann = cJSON_AddObjectToObject(meta, "annotations");
	int rc = -ENOMEM;

	if (!patch || !meta || !ann)
		goto out;
	cJSON_AddStringToObject(ann, TJ_ANNOTATION_NODE_FAILURES, failures);
	if (cleared)
		cJSON_AddNullToObject(ann, TJ_ANNOTATION_SUSPECT);
	rc = send_patch(s, node, patch, NULL);
out:
	cJSON_Delete(patch);
	return rc;
}

static void judge_node(struct tj_suspect_nodes *s, const char *name)
{
	const struct tj_node *node = s->node_lookup ? s->node_lookup(s->node_ctx, name) : NULL;
	struct tj_node_failure kept[TJ_SUSPECT_NODE_RECORDS];
	/* Room for the longest of them: TIME:CODE:ATTEMPT:KEY, and a comma. */
	char failures[TJ_SUSPECT_NODE_RECORDS * (TJ_KEY_MAX + 48)];
	struct tj_suspect_verdict v;
	int64_t now = now_of(s);
	size_t n_kept;
	int rc = 0;

	if (!s->leading || !node)
		return;
	if (!settled(s, node))
		return;
	tj_suspect_judge(s->policy, s->history, s->n, name, now, &v);
	switch (tj_suspect_decide(s->policy, tj_node_is_suspect(node), node->suspect_mark != NULL,
	                          &v)) {
	case TJ_SUSPECT_FORGET:
		/* The time of the clear stays, so that the crashed pods still in the cluster
		 * are not counted again by a controller that restarts. */
		forget_node(s, name, INT64_MAX);
		tj_suspect_format(now, NULL, 0, failures, sizeof(failures));
		tj_log_info("suspect",
		            "the suspect taint was removed: the node's history is cleared",
		            TJ_STR("node", name));
		record(s, "default", name, NULL, "Node", false, "NodeSuspectCleared",
		       "the taint " TJ_TAINT_SUSPECT " was removed: the failures seen on the node "
		       "are forgotten");
		rc = write_annotations(s, node, failures, true);
		break;
	case TJ_SUSPECT_MARK:
		n_kept = tj_suspect_keep(s->policy, s->history, s->n, name, now, kept);
		tj_suspect_format(cleared_of(s, node, now), kept, n_kept, failures,
		                  sizeof(failures));
		rc = write_mark(s, node, failures, &v, now);
		break;
	case TJ_SUSPECT_KEEP:
		if (!s->policy->enabled)
			return;
		n_kept = tj_suspect_keep(s->policy, s->history, s->n, name, now, kept);
		tj_suspect_format(cleared_of(s, node, now), kept, n_kept, failures,
		                  sizeof(failures));
		/* Failures that left the window are dropped with the next new one, not on
		 * their own: a node's history is written when it grows. */
		if (n_kept == 0 || strcmp(failures, node->failures ? node->failures : "") == 0)
			return;
		rc = write_annotations(s, node, failures, false);
		break;
	}
	if (rc < 0)
		tj_log_warn("suspect", "could not send the node's write", TJ_STR("node", name),
		            TJ_STR("error", strerror(-rc)));
}

static void judge_all(struct tj_suspect_nodes *s)
{
	char seen[64][TJ_NAME_MAX];
	size_t n_seen = 0;

	/* The nodes with a history, each once. Past the first 64, a node is judged again at
	 * its next change. */
	for (size_t i = 0; i < s->n && n_seen < 64; i++) {
		bool dup = false;

		for (size_t j = 0; j < n_seen && !dup; j++)
			dup = strcmp(seen[j], s->history[i].node) == 0;
		if (!dup)
			memcpy(seen[n_seen++], s->history[i].node, TJ_NAME_MAX);
	}
	for (size_t i = 0; i < n_seen; i++)
		judge_node(s, seen[i]);
}

void tj_suspect_nodes_set_policy(struct tj_suspect_nodes *s, const struct tj_suspect_policy *policy)
{
	s->policy = policy ? policy : tj_config_suspect(NULL);
	judge_all(s);
}

void tj_suspect_nodes_set_leading(struct tj_suspect_nodes *s, bool leading)
{
	s->leading = leading;
	if (leading)
		judge_all(s);
}

void tj_suspect_nodes_pod_changed(struct tj_suspect_nodes *s, const struct tj_pod *old,
                                  const struct tj_pod *pod)
{
	struct tj_node_failure f;
	int64_t now = now_of(s);

	if (!pod || !tj_suspect_failure_of_pod(s->policy, pod, now, &f))
		return;
	if (old && tj_suspect_failure_of_pod(s->policy, old, now, &(struct tj_node_failure){ 0 }))
		return;
	/* A crash the operator cleared the node of: its pod stays for its logs. */
	if (s->node_lookup && f.time <= cleared_of(s, s->node_lookup(s->node_ctx, f.node), now))
		return;
	if (remember(s, &f))
		judge_node(s, f.node);
}

void tj_suspect_nodes_record(struct tj_suspect_nodes *s, const struct tj_node_failure *f)
{
	if (s->node_lookup &&
	    f->time <= cleared_of(s, s->node_lookup(s->node_ctx, f->node), now_of(s)))
		return;
	if (remember(s, f))
		judge_node(s, f->node);
}

static void count_tainted(struct tj_suspect_nodes *s, const struct tj_node *old,
                          const struct tj_node *node)
{
	s->tainted += (node && tj_node_is_suspect(node)) - (old && tj_node_is_suspect(old));
	if (s->metrics)
		tj_metric_set(s->metrics->trainjob_suspect_nodes, NULL, (double)s->tainted);
}

void tj_suspect_nodes_node_changed(struct tj_suspect_nodes *s, const struct tj_node *old,
                                   const struct tj_node *node)
{
	struct tj_node_failure read[TJ_SUSPECT_NODE_RECORDS];
	int64_t cleared;
	size_t n_read;
	bool changed = false;

	count_tainted(s, old, node);
	if (!node) {
		struct write *w = write_of(s, old->name);

		/* A write in flight keeps its entry until its answer. */
		if (w && !w->request)
			unlink_write(s, w);
		forget_node(s, old->name, INT64_MAX);
		return;
	}
	n_read = tj_suspect_parse(node->name, node->failures, read, TJ_SUSPECT_NODE_RECORDS,
	                          &cleared);
	if (cleared)
		forget_node(s, node->name, cleared);
	for (size_t i = 0; i < n_read; i++)
		changed |= remember(s, &read[i]);
	if (changed || !old || tj_node_is_suspect(old) != tj_node_is_suspect(node) ||
	    !old->suspect_mark != !node->suspect_mark || write_of(s, node->name))
		judge_node(s, node->name);
}

bool tj_suspect_nodes_blames(const struct tj_suspect_nodes *s, const char *name)
{
	const struct tj_node *node = s->node_lookup ? s->node_lookup(s->node_ctx, name) : NULL;
	struct tj_suspect_verdict v;

	if (!s->policy->enabled || !name)
		return false;
	if (node && tj_node_is_suspect(node))
		return true;
	tj_suspect_judge(s->policy, s->history, s->n, name, now_of(s), &v);
	return v.suspect;
}

struct tj_suspect_nodes *tj_suspect_nodes_free(struct tj_suspect_nodes *s)
{
	if (!s)
		return NULL;
	while (s->writes) {
		struct write *w = s->writes;

		s->writes = w->next;
		if (w->request)
			tj_request_cancel(w->request);
		free(w->marked);
		free(w);
	}
	free(s->history);
	free(s);
	return NULL;
}
