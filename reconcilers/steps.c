#include "reconcilers/steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "reconcilers/json.h"

void tj_step_graph_clear(struct tj_step_graph *g)
{
	for (size_t i = 0; g->steps && i < g->n; i++) {
		free(g->steps[i].pod_template);
		free(g->steps[i].pod_failure_rules);
	}
	free(g->steps);
	free(g->claim_templates);
	free(g->error);
	*g = (struct tj_step_graph){ 0 };
}

size_t tj_step_graph_find(const struct tj_step_graph *g, const char *name)
{
	size_t i;

	for (i = 0; i < g->n && strcmp(g->steps[i].name, name) != 0; i++)
		;
	return i;
}

int tj_step_pods(const struct tj_step_graph *g, size_t i, int node_pods)
{
	const struct tj_step *s = &g->steps[i];

	return strcmp(s->name, TJ_STEP_NODE) == 0 ? node_pods : s->replicas * s->pods_per_job;
}

/* Records why the graph cannot run; only the first reason is kept. */
static int graph_error(struct tj_step_graph *g, const char *msg)
{
	if (!g->error && !(g->error = strdup(msg)))
		return -ENOMEM;
	return 0;
}

/* A count field of the JobSet or Job spec: def when absent, -1 when not an integer in
 * 1..TJ_STEP_MAX_PODS. */
static int count_of(const cJSON *obj, const char *path, int def)
{
	const cJSON *v = tj_json_path(obj, path);
	int64_t n;

	if (!v)
		return def;
	if (!cJSON_IsNumber(v) || !tj_double_to_int64(v->valuedouble, 1, TJ_STEP_MAX_PODS, &n))
		return -1;
	return (int)n;
}

/* Upserts every string member of src into dst[key] that dst[key] lacks. */
static int merge_under(cJSON *dst, const char *key, const cJSON *src)
{
	cJSON *map;
	const cJSON *el;

	if (!cJSON_IsObject(src) || !src->child)
		return 0;
	if (!(map = tj_json_object(dst, key)))
		return -ENOMEM;
	cJSON_ArrayForEach(el, src)
	{
		if (cJSON_IsString(el) && !cJSON_GetObjectItemCaseSensitive(map, el->string) &&
		    tj_json_set_string(map, el->string, el->valuestring) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The pod template with the Job template's labels and annotations merged under its own,
 * and the replicated job's groupName, if it has one, as the label and annotation JobSet
 * gives its pods (JobSet writes its default group "default" too; that one is left out). */
static int pod_template_of(const cJSON *rjob, const char *group, size_t max, char **ret)
{
	const cJSON *tmpl = tj_json_path(rjob, "template.spec.template");
	cJSON *copy, *meta;
	int r = -ENOMEM;

	copy = cJSON_IsObject(tmpl) ? cJSON_Duplicate(tmpl, true) : cJSON_CreateObject();
	if (!copy)
		return -ENOMEM;
	meta = tj_json_object(copy, "metadata");
	if (!meta || !tj_json_object(meta, "labels") ||
	    merge_under(meta, "labels", tj_json_path(rjob, "template.metadata.labels")) < 0 ||
	    merge_under(meta, "annotations", tj_json_path(rjob, "template.metadata.annotations")) <
	            0 ||
	    (group &&
	     (tj_json_set_string(tj_json_object(meta, "labels"), TJ_LABEL_GROUP_NAME, group) < 0 ||
	      tj_json_set_string(tj_json_object(meta, "annotations"), TJ_LABEL_GROUP_NAME, group) <
	              0)))
		goto out;
	r = tj_json_print(copy, max, ret);
out:
	cJSON_Delete(copy);
	return r;
}

/* A groupName that can be a label's value: a DNS label, as JobSet's webhook requires. */
static bool group_name_valid(const char *g)
{
	size_t n = strlen(g);

	return n > 0 && n <= 63 && strspn(g, "abcdefghijklmnopqrstuvwxyz0123456789-") == n &&
	       g[0] != '-' && g[n - 1] != '-';
}

static int project_deps(struct tj_step_graph *g, size_t i, const cJSON *deps)
{
	struct tj_step *s = &g->steps[i];
	const cJSON *d;
	char msg[TJ_MESSAGE_MAX];

	cJSON_ArrayForEach(d, deps)
	{
		const char *name = tj_json_string(d, "name");
		const char *status = tj_json_string(d, "status");
		size_t k = name ? tj_step_graph_find(g, name) : g->n;

		/* JobSet admits only earlier replicated jobs, so the graph has no cycle. */
		if (k >= i) {
			snprintf(msg, sizeof(msg),
			         "spec.template.spec.replicatedJobs[%zu].dependsOn: '%s' is not a "
			         "replicated job listed before %s",
			         i, name ? name : "", s->name);
			return graph_error(g, msg);
		}
		if (!status || (strcmp(status, "Complete") != 0 && strcmp(status, "Ready") != 0)) {
			snprintf(msg, sizeof(msg),
			         "spec.template.spec.replicatedJobs[%zu].dependsOn[%s].status: "
			         "must be Complete or Ready",
			         i, name);
			return graph_error(g, msg);
		}
		if (s->n_deps == TJ_MAX_STEP_DEPS)
			return graph_error(g, "dependsOn: too many entries");
		s->deps[s->n_deps++] = (struct tj_step_dep){
			.step = k,
			.need = strcmp(status, "Ready") == 0 ? TJ_STEP_NEED_READY
			                                     : TJ_STEP_NEED_COMPLETE,
		};
	}
	return 0;
}

static int project_step(struct tj_step_graph *g, size_t i, const cJSON *rjob, size_t max)
{
	struct tj_step *s = &g->steps[i];
	const char *name = tj_json_string(rjob, "name");
	const char *ancestor = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        tj_json_path(rjob, "template.metadata.labels"), TJ_LABEL_ANCESTOR));
	const cJSON *group, *rules;
	int parallelism, completions;
	char msg[TJ_MESSAGE_MAX];
	int r;

	if (!name || !*name || strlen(name) >= sizeof(s->name)) {
		snprintf(msg, sizeof(msg),
		         "spec.template.spec.replicatedJobs[%zu].name: must be a DNS label", i);
		return graph_error(g, msg);
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	if (ancestor && strlen(ancestor) < sizeof(s->ancestor))
		snprintf(s->ancestor, sizeof(s->ancestor), "%s", ancestor);
	s->replicas = count_of(rjob, "replicas", 1);
	parallelism = count_of(rjob, "template.spec.parallelism", 1);
	completions = count_of(rjob, "template.spec.completions", parallelism);
	if (s->replicas < 0 || parallelism < 0 || completions < 0 ||
	    (long)s->replicas * (completions < parallelism ? completions : parallelism) >
	            TJ_STEP_MAX_PODS) {
		snprintf(msg, sizeof(msg),
		         "spec.template.spec.replicatedJobs[%zu] (%s): replicas, parallelism and "
		         "completions must be integers of at most %d pods in all",
		         i, name, TJ_STEP_MAX_PODS);
		return graph_error(g, msg);
	}
	s->pods_per_job = completions < parallelism ? completions : parallelism;
	/* Kubeflow's plugins run the initializer and trainer steps as one Job, whatever the
	 * runtime says of their replicas. */
	if (strcmp(s->ancestor, "dataset-initializer") == 0 ||
	    strcmp(s->ancestor, "model-initializer") == 0 || strcmp(s->ancestor, "trainer") == 0)
		s->replicas = 1;
	group = cJSON_GetObjectItemCaseSensitive(rjob, "groupName");
	if (group && !cJSON_IsNull(group) &&
	    !(cJSON_IsString(group) && group_name_valid(group->valuestring))) {
		snprintf(msg, sizeof(msg),
		         "spec.template.spec.replicatedJobs[%zu].groupName: must be a DNS label",
		         i);
		return graph_error(g, msg);
	}
	r = pod_template_of(rjob, cJSON_IsString(group) ? group->valuestring : NULL, max,
	                    &s->pod_template);
	if (r < 0)
		return r;
	rules = tj_json_path(rjob, "template.spec.podFailurePolicy.rules");
	if (cJSON_IsArray(rules) && cJSON_GetArraySize(rules) > 0 &&
	    (r = tj_json_print(rules, max, &s->pod_failure_rules)) < 0)
		return r;
	return project_deps(g, i, cJSON_GetObjectItemCaseSensitive(rjob, "dependsOn"));
}

/* Every PVC template of every volumeClaimPolicy, in order, as one array; the templates of a
 * policy whose retentionPolicy.whenDeleted is Retain marked TJ_CLAIM_RETAIN. */
static int claim_templates_of(const cJSON *policies, size_t max, char **ret)
{
	const cJSON *pol, *t;
	cJSON *all;
	int r = 0;

	*ret = NULL;
	if (cJSON_GetArraySize(policies) == 0)
		return 0;
	all = cJSON_CreateArray();
	if (!all)
		return -ENOMEM;
	cJSON_ArrayForEach(pol, policies)
	{
		const char *when = tj_json_string(pol, "retentionPolicy.whenDeleted");
		bool retain = when && strcmp(when, "Retain") == 0;

		cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(pol, "templates"))
		{
			cJSON *c = cJSON_Duplicate(t, true);

			if (c && retain &&
			    tj_json_set(c, TJ_CLAIM_RETAIN, cJSON_CreateTrue()) < 0) {
				cJSON_Delete(c);
				c = NULL;
			}
			if (!c || !cJSON_AddItemToArray(all, c)) {
				cJSON_Delete(c);
				r = -ENOMEM;
				goto out;
			}
		}
	}
	if (cJSON_GetArraySize(all) > 0)
		r = tj_json_print(all, max, ret);
out:
	cJSON_Delete(all);
	return r;
}

int tj_step_graph_from_json(const cJSON *spec, size_t max, struct tj_step_graph *g)
{
	const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(spec, "replicatedJobs");
	const cJSON *targets = tj_json_path(spec, "successPolicy.targetReplicatedJobs");
	const cJSON *rjob, *t;
	const char *order = tj_json_string(spec, "startupPolicy.startupPolicyOrder");
	const char *op = tj_json_string(spec, "successPolicy.operator");
	size_t n = (size_t)cJSON_GetArraySize(jobs), i = 0;
	int r;

	*g = (struct tj_step_graph){ 0 };
	g->in_order = order && strcmp(order, "InOrder") == 0;
	g->success_any = op && strcmp(op, "Any") == 0;
	r = claim_templates_of(cJSON_GetObjectItemCaseSensitive(spec, "volumeClaimPolicies"), max,
	                       &g->claim_templates);
	if (r < 0)
		goto fail;
	if (n > TJ_MAX_STEPS) {
		r = graph_error(g, "spec.template.spec.replicatedJobs: more than 16 steps");
		if (r < 0)
			goto fail;
		return 0;
	}
	g->steps = calloc(n + 1, sizeof(*g->steps));
	if (!g->steps) {
		r = -ENOMEM;
		goto fail;
	}
	cJSON_ArrayForEach(rjob, jobs)
	{
		g->n = i + 1;
		r = project_step(g, i, rjob, max);
		if (r < 0)
			goto fail;
		if (g->error)
			return 0;
		if (tj_step_graph_find(g, g->steps[i].name) < i) {
			char msg[TJ_MESSAGE_MAX];

			snprintf(msg, sizeof(msg),
			         "spec.template.spec.replicatedJobs[%zu].name: %s is listed twice",
			         i, g->steps[i].name);
			r = graph_error(g, msg);
			if (r < 0)
				goto fail;
			return 0;
		}
		i++;
	}
	for (i = 0; i < g->n; i++) {
		bool named = false;

		cJSON_ArrayForEach(t, targets)
		{
			if (cJSON_IsString(t) && strcmp(t->valuestring, g->steps[i].name) == 0)
				named = true;
		}
		g->steps[i].success_target = named || cJSON_GetArraySize(targets) == 0;
	}
	return 0;
fail:
	tj_step_graph_clear(g);
	return r;
}

void tj_step_hostname(const char *job, const struct tj_step *step, int slot,
                      char buf[static TJ_NAME_MAX])
{
	snprintf(buf, TJ_NAME_MAX, "%s-%s-%d-%d", job, step->name, slot / step->pods_per_job,
	         slot % step->pods_per_job);
}

void tj_step_pod_name(const char *job, const struct tj_step *step, int slot, int attempt,
                      char buf[static TJ_NAME_MAX])
{
	snprintf(buf, TJ_NAME_MAX, "%s-%s-%d-%d-a%d", job, step->name, slot / step->pods_per_job,
	         slot % step->pods_per_job, attempt);
}

/* A decimal number without sign or leading zero at *s, up to the character stop; -1 if not. */
static long number_at(const char **s, char stop)
{
	const char *p = *s;
	long v = 0;

	if (*p < '0' || *p > '9' || (*p == '0' && p[1] != stop))
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > TJ_STEP_MAX_PODS)
			return -1;
	}
	if (*p != stop)
		return -1;
	*s = p + 1;
	return v;
}

int tj_step_of_pod(const struct tj_step_graph *g, const char *job, const char *pod_name,
                   size_t *ret_step, int *ret_slot)
{
	size_t jl = strlen(job);

	if (strncmp(pod_name, job, jl) != 0 || pod_name[jl] != '-')
		return -ENOENT;
	for (size_t i = 0; i < g->n; i++) {
		const struct tj_step *s = &g->steps[i];
		size_t sl = strlen(s->name);
		const char *p = pod_name + jl + 1;
		long j, k;

		if (strcmp(s->name, TJ_STEP_NODE) == 0 || strncmp(p, s->name, sl) != 0 ||
		    p[sl] != '-')
			continue;
		p += sl + 1;
		j = number_at(&p, '-');
		k = j < 0 ? -1 : number_at(&p, '-');
		/* The attempt itself is the pod's label; the name must only end in "a<digits>". */
		if (k < 0 || j >= s->replicas || k >= s->pods_per_job || *p != 'a' || !p[1] ||
		    strspn(p + 1, "0123456789") != strlen(p + 1))
			continue;
		*ret_step = i;
		*ret_slot = (int)(j * s->pods_per_job + k);
		return 0;
	}
	return -ENOENT;
}

void tj_step_progress(const struct tj_pod *const *slots, int n, struct tj_step_progress *ret)
{
	*ret = (struct tj_step_progress){ .pods = n };
	for (int i = 0; i < n; i++) {
		const struct tj_pod *pod = slots[i];

		if (!pod)
			continue;
		/* A pod that succeeded did its work, even if it is being deleted now. */
		if (pod->phase == TJ_POD_SUCCEEDED)
			ret->succeeded++;
		if (pod->deletion_time)
			continue;
		ret->exist++;
		if (pod->phase == TJ_POD_SUCCEEDED || (pod->phase == TJ_POD_RUNNING && pod->ready))
			ret->ready++;
		if (pod->phase == TJ_POD_FAILED && !ret->failed)
			ret->failed = pod;
	}
}

bool tj_step_may_start(const struct tj_step_graph *g, size_t i,
                       const struct tj_step_progress *progress, char *why, size_t size)
{
	const struct tj_step *s = &g->steps[i];

	for (size_t d = 0; d < s->n_deps; d++) {
		const struct tj_step_dep *dep = &s->deps[d];
		const struct tj_step_progress *p = &progress[dep->step];
		bool met =
		        dep->need == TJ_STEP_NEED_COMPLETE ? tj_step_complete(p) : tj_step_ready(p);

		if (!met) {
			snprintf(why, size, "%s to be %s (%d of %d pods %s)",
			         g->steps[dep->step].name,
			         dep->need == TJ_STEP_NEED_COMPLETE ? "Complete" : "Ready",
			         dep->need == TJ_STEP_NEED_COMPLETE ? p->succeeded : p->ready,
			         p->pods,
			         dep->need == TJ_STEP_NEED_COMPLETE ? "succeeded" : "ready");
			return false;
		}
	}
	for (size_t k = 0; g->in_order && k < i; k++)
		if (!tj_step_ready(&progress[k])) {
			snprintf(why, size,
			         "%s to be Ready (startupPolicy InOrder; %d of %d pods ready)",
			         g->steps[k].name, progress[k].ready, progress[k].pods);
			return false;
		}
	return true;
}

bool tj_step_graph_succeeded(const struct tj_step_graph *g, const struct tj_step_progress *progress)
{
	bool any = false, all = true;

	for (size_t i = 0; i < g->n; i++) {
		if (!g->steps[i].success_target)
			continue;
		if (tj_step_complete(&progress[i]))
			any = true;
		else
			all = false;
	}
	return g->success_any ? any : all && g->n > 0;
}

bool tj_step_ended_by_success_policy(const struct tj_step_graph *g, size_t i)
{
	bool targets = false;

	if (i >= g->n || g->steps[i].success_target)
		return false;
	for (size_t k = 0; k < g->n; k++)
		targets = targets || g->steps[k].success_target;
	if (!targets) /* a policy that names no step of the graph is never met */
		return false;
	for (size_t k = 0; k < g->n; k++)
		for (size_t d = 0; d < g->steps[k].n_deps; d++)
			if (g->steps[k].deps[d].step == i &&
			    g->steps[k].deps[d].need == TJ_STEP_NEED_COMPLETE)
				return false;
	return true;
}

bool tj_step_completes_before(const struct tj_step_graph *g, size_t i, size_t j)
{
	bool waits[TJ_MAX_STEPS] = { false };

	if (i >= j || j >= g->n || g->n > TJ_MAX_STEPS)
		return false;
	/* A dependsOn names an earlier step only (the graph is refused otherwise), so one pass
	 * from j towards the first step marks every step j waits for through Complete. */
	waits[j] = true;
	for (size_t k = j + 1; k-- > i;)
		for (size_t d = 0; waits[k] && d < g->steps[k].n_deps; d++)
			if (g->steps[k].deps[d].need == TJ_STEP_NEED_COMPLETE &&
			    g->steps[k].deps[d].step < k)
				waits[g->steps[k].deps[d].step] = true;
	return waits[i];
}

void tj_step_jobs_status(const char *name, const struct tj_pod *const *slots, int n,
                         int pods_per_job, bool suspended, struct tj_jobs_status *ret)
{
	memset(ret, 0, sizeof(*ret));
	snprintf(ret->name, sizeof(ret->name), "%s", name);
	if (pods_per_job < 1)
		pods_per_job = 1;
	for (int first = 0; first < n; first += pods_per_job) {
		int end = first + pods_per_job < n ? first + pods_per_job : n;
		struct tj_step_progress p;

		tj_step_progress(slots + first, end - first, &p);
		if (suspended)
			ret->suspended++;
		else if (p.failed)
			ret->failed++;
		else if (tj_step_complete(&p))
			ret->succeeded++;
		else {
			if (tj_step_ready(&p))
				ret->ready++;
			if (p.exist > p.succeeded)
				ret->active++;
		}
	}
}
