#include "reconcilers/trainjob.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "base/rfc3339.h"
#include "informers/projection.h"
#include "reconcilers/json.h"

int tj_problem_set(struct tj_problem *p, const char *reason, const char *fmt, ...)
{
	va_list ap;

	snprintf(p->reason, sizeof(p->reason), "%s", reason);
	va_start(ap, fmt);
	vsnprintf(p->message, sizeof(p->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const char *const state_names[] = {
	[TJ_STATE_NONE] = "",
	[TJ_STATE_PENDING] = "Pending",
	[TJ_STATE_QUEUED] = "Queued",
	[TJ_STATE_RUNNING] = "Running",
	[TJ_STATE_RESTARTING] = "Restarting",
	[TJ_STATE_SUSPENDED] = "Suspended",
	[TJ_STATE_COMPLETE] = "Complete",
	[TJ_STATE_FAILED] = "Failed",
};

const char *tj_state_name(enum tj_state state)
{
	return state_names[state];
}

static enum tj_state state_from_name(const char *name)
{
	for (size_t i = 1; name && i < sizeof(state_names) / sizeof(state_names[0]); i++)
		if (strcmp(name, state_names[i]) == 0)
			return (enum tj_state)i;
	return TJ_STATE_NONE;
}

static const char *const condition_names[] = {
	[TJ_CONDITION_SUSPENDED] = "Suspended",
	[TJ_CONDITION_COMPLETE] = "Complete",
	[TJ_CONDITION_FAILED] = "Failed",
};

const char *tj_condition_type_name(enum tj_condition_type type)
{
	return condition_names[type];
}

/* Projection with a record of the first type error: the spec of a job that cannot run is
 * still projected, so that the job is failed with a reason instead of being ignored. */
struct projector {
	const cJSON *obj;
	char *spec_error;
	bool oom;
};

static void type_error(struct projector *pr, const char *path, const char *what)
{
	if (pr->spec_error)
		return;
	if (asprintf(&pr->spec_error, "%s: %s", path, what) < 0) {
		pr->spec_error = NULL;
		pr->oom = true;
	}
}

static char *dup_or_oom(struct projector *pr, const char *s)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		pr->oom = true;
	return d;
}

/* An optional string field: NULL if absent or null, a type error if it is something else. */
static char *take_string(struct projector *pr, const char *path)
{
	const cJSON *item = tj_json_path(pr->obj, path);

	if (!item || cJSON_IsNull(item))
		return NULL;
	if (!cJSON_IsString(item)) {
		type_error(pr, path, "must be a string");
		return NULL;
	}
	return dup_or_oom(pr, item->valuestring);
}

static int64_t take_int(struct projector *pr, const char *path, int64_t min, int64_t max)
{
	const cJSON *item = tj_json_path(pr->obj, path);

	if (!item || cJSON_IsNull(item))
		return 0;
	int64_t v;

	if (!cJSON_IsNumber(item) ||
	    !tj_double_to_int64(item->valuedouble, INT64_MIN, INT64_MAX, &v)) {
		type_error(pr, path, "must be an integer");
		return 0;
	}
	if (item->valuedouble < (double)min || item->valuedouble > (double)max) {
		char what[96];

		snprintf(what, sizeof(what), "must be between %lld and %lld, got %.0f",
		         (long long)min, (long long)max, item->valuedouble);
		type_error(pr, path, what);
		return 0;
	}
	return (int64_t)item->valuedouble;
}

static char *take_fragment(struct projector *pr, const char *path, bool want_array)
{
	const cJSON *item = tj_json_path(pr->obj, path);
	char *text = NULL;
	int r;

	if (!item || cJSON_IsNull(item))
		return NULL;
	if (want_array ? !cJSON_IsArray(item) : !cJSON_IsObject(item)) {
		type_error(pr, path, want_array ? "must be a list" : "must be an object");
		return NULL;
	}
	r = tj_json_print(item, TJ_MAX_FRAGMENT, &text);
	if (r == -E2BIG)
		type_error(pr, path, "is larger than 64 KiB");
	else if (r < 0)
		pr->oom = true;
	return text;
}

/* The list at path, if it is one of at most TJ_MAX_LIST_ITEMS items; NULL when it is absent
 * or null, or (with a type error naming the field) when it is not such a list. */
static const cJSON *bounded_list(struct projector *pr, const char *path, const char *shape,
                                 size_t *ret_size)
{
	const cJSON *item = tj_json_path(pr->obj, path);

	if (!item || cJSON_IsNull(item))
		return NULL;
	if (!cJSON_IsArray(item)) {
		type_error(pr, path, shape);
		return NULL;
	}
	*ret_size = (size_t)cJSON_GetArraySize(item);
	if (*ret_size > TJ_MAX_LIST_ITEMS) {
		type_error(pr, path, "has more than 128 items");
		return NULL;
	}
	return item;
}

static char **take_strings(struct projector *pr, const char *path, size_t *ret_n)
{
	const cJSON *item, *el;
	char **v;
	size_t n = 0, size;

	*ret_n = 0;
	item = bounded_list(pr, path, "must be a list of strings", &size);
	if (!item)
		return NULL;
	v = calloc(size + 1, sizeof(*v));
	if (!v) {
		pr->oom = true;
		return NULL;
	}
	cJSON_ArrayForEach(el, item)
	{
		if (!cJSON_IsString(el)) {
			type_error(pr, path, "must be a list of strings");
			break;
		}
		v[n] = dup_or_oom(pr, el->valuestring);
		if (!v[n])
			break;
		n++;
	}
	*ret_n = n;
	return v;
}

static struct tj_env_var *take_env(struct projector *pr, const char *path, size_t *ret_n)
{
	const cJSON *item, *el;
	struct tj_env_var *v;
	size_t n = 0, size;

	*ret_n = 0;
	item = bounded_list(pr, path, "must be a list of {name, value}", &size);
	if (!item)
		return NULL;
	v = calloc(size + 1, sizeof(*v));
	if (!v) {
		pr->oom = true;
		return NULL;
	}
	cJSON_ArrayForEach(el, item)
	{
		const char *name = tj_json_string(el, "name");
		const cJSON *value = cJSON_GetObjectItemCaseSensitive(el, "value");
		const cJSON *from = cJSON_GetObjectItemCaseSensitive(el, "valueFrom");

		if (!name || !*name || (value && !cJSON_IsString(value) && !cJSON_IsNull(value)) ||
		    (from && !cJSON_IsObject(from))) {
			type_error(pr, path,
			           "every item needs a name and a string value or valueFrom");
			break;
		}
		v[n].name = dup_or_oom(pr, name);
		if (cJSON_IsObject(from)) {
			if (tj_json_print(from, TJ_MAX_FRAGMENT, &v[n].value_from) < 0)
				pr->oom = true;
		} else {
			v[n].value =
			        dup_or_oom(pr, cJSON_IsString(value) ? value->valuestring : "");
		}
		n++;
		if (pr->oom)
			break;
	}
	*ret_n = n;
	return v;
}

static char *take_int_or_string(struct projector *pr, const char *path)
{
	const cJSON *item = tj_json_path(pr->obj, path);
	char buf[32];

	if (!item || cJSON_IsNull(item))
		return NULL;
	if (cJSON_IsString(item))
		return dup_or_oom(pr, item->valuestring);
	int64_t v;

	if (cJSON_IsNumber(item) &&
	    tj_double_to_int64(item->valuedouble, INT32_MIN, INT32_MAX, &v)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)v);
		return dup_or_oom(pr, buf);
	}
	type_error(pr, path, "must be an integer or one of auto, cpu, gpu");
	return NULL;
}

static int64_t take_time(const cJSON *obj, const char *path)
{
	int64_t t = 0;

	if (tj_rfc3339_parse(tj_json_string(obj, path), &t) < 0)
		return 0;
	return t;
}

static void copy_string(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "");
}

static int json_int(const cJSON *obj, const char *key, int fallback)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	int64_t v;

	return cJSON_IsNumber(item) &&
	                       tj_double_to_int64(item->valuedouble, INT32_MIN, INT32_MAX, &v)
	               ? (int)v
	               : fallback;
}

/* A count that only grows (GPU-seconds): 0 when absent, negative or not a number. */
/* A count the JSON printer writes back exactly: it keeps 15 significant digits (some 30
 * million GPU-years of GPU-seconds); past that, none. */
#define COUNT_MAX 999999999999999LL

static int64_t json_count(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
	int64_t v;

	return cJSON_IsNumber(item) && tj_double_to_int64(item->valuedouble, 0, COUNT_MAX, &v) ? v
	                                                                                       : 0;
}

/* FNV-1a, 64 bits, over len bytes more. */
static uint64_t digest_add(uint64_t h, const char *bytes, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)bytes[i];
		h *= 1099511628211u;
	}
	return h;
}

/* The digest of a report's progress: its percentage and its metrics, each metric's name and
 * value in the order given (the NUL after each string keeps "ab"+"c" and "a"+"bc" apart);
 * 0 when it has neither. */
static uint64_t progress_digest(const cJSON *ts)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(ts, "progressPercentage");
	const cJSON *m;
	uint64_t h = 14695981039346656037u;
	bool any = false;
	char buf[32];

	if (cJSON_IsNumber(p)) {
		snprintf(buf, sizeof(buf), "%%%.17g", p->valuedouble);
		h = digest_add(h, buf, strlen(buf) + 1);
		any = true;
	}
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(ts, "metrics"))
	{
		const char *name = tj_json_string(m, "name"), *value = tj_json_string(m, "value");

		h = digest_add(h, name ? name : "", name ? strlen(name) + 1 : 1);
		h = digest_add(h, value ? value : "", value ? strlen(value) + 1 : 1);
		any = true;
	}
	return !any ? 0 : h ? h : 1;
}

/* status.trainerStatus's progress and remaining time, within the CRD's bounds, and the
 * digest of its progress. */
static void trainer_report(const cJSON *ts, struct tj_trainjob_status *s)
{
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(ts, "progressPercentage");
	int64_t v;

	s->progress_digest = progress_digest(ts);
	if (cJSON_IsNumber(p) && tj_double_to_int64(p->valuedouble, 0, 100, &v)) {
		s->has_progress = true;
		s->progress_percent = (int)v;
	}
	p = cJSON_GetObjectItemCaseSensitive(ts, "estimatedRemainingSeconds");
	if (cJSON_IsNumber(p) && tj_double_to_int64(p->valuedouble, 0, INT32_MAX, &v)) {
		s->has_eta = true;
		s->eta_seconds = v;
	}
}

void tj_trainjob_status_from_json(const cJSON *status, struct tj_trainjob_status *ret)
{
	const cJSON *el, *lf, *conds, *jobs;
	struct tj_trainjob_status s = { .last_failure = { .rank = -1, .exit_code = -1 } };

	s.state = state_from_name(tj_json_string(status, "state"));
	copy_string(s.reason, sizeof(s.reason), tj_json_string(status, "reason"));
	copy_string(s.message, sizeof(s.message), tj_json_string(status, "message"));
	s.restart_count = json_int(status, "restartCount", 0);
	if (s.restart_count < 0)
		s.restart_count = 0;
	s.infrastructure_restarts = json_int(status, "infrastructureRestarts", 0);
	if (s.infrastructure_restarts < 0)
		s.infrastructure_restarts = 0;
	s.start_time = take_time(status, "startTime");
	s.completion_time = take_time(status, "completionTime");
	s.expected_start_time = take_time(status, "expectedStartTime");
	s.deadline = take_time(status, "deadline");
	s.cleanup_time = take_time(status, "cleanupTime");
	s.queue_position = json_int(status, "queuePosition", 0);
	if (s.queue_position < 0)
		s.queue_position = 0;
	s.gpu_seconds = json_count(status, "gpuSeconds");
	s.wasted_gpu_seconds = json_count(status, "wastedGpuSeconds");
	s.gpu_seconds_until = take_time(status, "gpuSecondsCountedUntil");
	el = tj_json_path(status, "preemption");
	if (cJSON_IsObject(el) && (s.preempt_at = take_time(el, "stopAt")))
		copy_string(s.preempted_by, sizeof(s.preempted_by), tj_json_string(el, "by"));
	s.preemptions = json_int(status, "preemptions", 0);
	if (s.preemptions < 0)
		s.preemptions = 0;
	s.preempted_gpu_seconds = json_count(status, "preemptedGpuSeconds");
	s.requeued_at = take_time(status, "lastRequeueTime");
	trainer_report(tj_json_path(status, "trainerStatus"), &s);
	{
		const cJSON *og = tj_json_path(status, "observedGeneration");

		if (!cJSON_IsNumber(og) ||
		    !tj_double_to_int64(og->valuedouble, 0, INT64_MAX, &s.observed_generation))
			s.observed_generation = 0;
	}
	lf = tj_json_path(status, "lastFailure");
	if (cJSON_IsObject(lf)) {
		s.last_failure.rank = json_int(lf, "rank", -1);
		copy_string(s.last_failure.node, sizeof(s.last_failure.node),
		            tj_json_string(lf, "node"));
		copy_string(s.last_failure.pod, sizeof(s.last_failure.pod),
		            tj_json_string(lf, "pod"));
		copy_string(s.last_failure.reason, sizeof(s.last_failure.reason),
		            tj_json_string(lf, "reason"));
		s.last_failure.exit_code = json_int(lf, "exitCode", -1);
		s.last_failure.time = take_time(lf, "time");
		copy_string(s.last_failure.message, sizeof(s.last_failure.message),
		            tj_json_string(lf, "message"));
	}
	jobs = tj_json_path(status, "jobsStatus");
	cJSON_ArrayForEach(el, jobs)
	{
		struct tj_jobs_status *j;
		const char *name = tj_json_string(el, "name");

		if (!name || s.n_jobs == TJ_MAX_STEPS)
			continue;
		s.has_jobs_status = true;
		j = &s.jobs[s.n_jobs++];
		copy_string(j->name, sizeof(j->name), name);
		j->active = json_int(el, "active", 0);
		j->ready = json_int(el, "ready", 0);
		j->succeeded = json_int(el, "succeeded", 0);
		j->failed = json_int(el, "failed", 0);
		j->suspended = json_int(el, "suspended", 0);
	}
	conds = tj_json_path(status, "conditions");
	cJSON_ArrayForEach(el, conds)
	{
		const char *type = tj_json_string(el, "type");
		struct tj_condition *c;
		size_t t;

		for (t = 0; type && t < TJ_MAX_CONDITIONS; t++)
			if (strcmp(type, condition_names[t]) == 0)
				break;
		/* Types we do not own (left by another controller) are dropped on the next write.
		 */
		if (!type || t == TJ_MAX_CONDITIONS || tj_trainjob_status_condition(&s, t))
			continue;
		c = &s.conditions[s.n_conditions++];
		c->type = (enum tj_condition_type)t;
		c->status = strcmp(tj_or(tj_json_string(el, "status"), ""), "True") == 0;
		copy_string(c->reason, sizeof(c->reason), tj_json_string(el, "reason"));
		copy_string(c->message, sizeof(c->message), tj_json_string(el, "message"));
		c->last_transition_time = take_time(el, "lastTransitionTime");
	}
	*ret = s;
}

/* Annotation keys contain dots, so they are read by member, not by path. */
static const char *member_string(const cJSON *obj, const char *key)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

struct tj_trainjob *tj_trainjob_free(struct tj_trainjob *job)
{
	if (!job)
		return NULL;
	free(job->namespace);
	free(job->name);
	free(job->uid);
	free(job->resource_version);
	free(job->max_restarts);
	free(job->restart_policy);
	free(job->node_grace_period);
	free(job->priority);
	free(job->qos);
	free(job->dependency);
	free(job->job_name);
	free(job->hold);
	free(job->requeue);
	free(job->submitted_by);
	free(job->partition);
	free(job->deadline_warning);
	free(job->stall_timeout);
	free(job->runtime_api_group);
	free(job->runtime_kind);
	free(job->runtime_name);
	free(job->image);
	free_strings(job->command, job->n_command);
	free_strings(job->args, job->n_args);
	for (size_t i = 0; job->env && i < job->n_env; i++) {
		free(job->env[i].name);
		free(job->env[i].value);
		free(job->env[i].value_from);
	}
	free(job->env);
	free(job->num_proc_per_node);
	free(job->resources_per_node);
	free(job->pod_template_overrides);
	free(job->pod_spec_overrides);
	free(job->runtime_patches);
	free(job->initializer);
	free(job->labels);
	free(job->annotations);
	free(job->managed_by);
	free(job->spec_error);
	free(job);
	return NULL;
}

int tj_trainjob_from_json(const cJSON *obj, struct tj_trainjob **ret)
{
	struct projector pr = { .obj = obj };
	struct tj_trainjob *job;
	const char *name = tj_json_string(obj, "metadata.name");
	const char *ns = tj_json_string(obj, "metadata.namespace");
	const cJSON *gen, *annotations, *suspend;

	if (!name || !*name || !ns || !*ns)
		return -EINVAL;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->name = dup_or_oom(&pr, name);
	job->namespace = dup_or_oom(&pr, ns);
	job->uid = dup_or_oom(&pr, tj_or(tj_json_string(obj, "metadata.uid"), ""));
	job->resource_version =
	        dup_or_oom(&pr, tj_or(tj_json_string(obj, "metadata.resourceVersion"), ""));
	gen = tj_json_path(obj, "metadata.generation");
	if (!cJSON_IsNumber(gen) ||
	    !tj_double_to_int64(gen->valuedouble, 0, INT64_MAX, &job->generation))
		job->generation = 0;
	job->creation_time = take_time(obj, "metadata.creationTimestamp");
	job->deletion_time = take_time(obj, "metadata.deletionTimestamp");
	annotations = tj_json_path(obj, "metadata.annotations");
	job->max_restarts = dup_or_oom(&pr, member_string(annotations, TJ_ANNOTATION_MAX_RESTARTS));
	job->restart_policy =
	        dup_or_oom(&pr, member_string(annotations, TJ_ANNOTATION_RESTART_POLICY));
	job->node_grace_period =
	        dup_or_oom(&pr, member_string(annotations, TJ_ANNOTATION_NODE_GRACE_PERIOD));
	job->priority = dup_or_oom(&pr, member_string(annotations, TJ_ANNOTATION_PRIORITY));
	job->qos = dup_or_oom(&pr, member_string(annotations, TJ_LABEL_PREFIX "qos"));
	job->dependency = dup_or_oom(&pr, member_string(annotations, TJ_LABEL_PREFIX "dependency"));
	job->job_name = dup_or_oom(&pr, member_string(annotations, TJ_LABEL_PREFIX "job-name"));
	job->hold = dup_or_oom(&pr, member_string(annotations, TJ_LABEL_PREFIX "hold"));
	job->requeue = dup_or_oom(&pr, member_string(annotations, TJ_ANNOTATION_REQUEUE));
	job->submitted_by =
	        dup_or_oom(&pr, member_string(annotations, TJ_LABEL_PREFIX "submitted-by"));
	job->partition = dup_or_oom(&pr, member_string(annotations, TJ_LABEL_PREFIX "partition"));
	job->deadline_warning =
	        dup_or_oom(&pr, member_string(annotations, TJ_ANNOTATION_DEADLINE_WARNING));
	job->stall_timeout =
	        dup_or_oom(&pr, member_string(annotations, TJ_ANNOTATION_STALL_TIMEOUT));
	job->kueue =
	        member_string(tj_json_path(obj, "metadata.labels"), TJ_LABEL_KUEUE_QUEUE) != NULL;

	job->runtime_api_group = take_string(&pr, "spec.runtimeRef.apiGroup");
	job->runtime_kind = take_string(&pr, "spec.runtimeRef.kind");
	job->runtime_name = take_string(&pr, "spec.runtimeRef.name");
	job->image = take_string(&pr, "spec.trainer.image");
	job->command = take_strings(&pr, "spec.trainer.command", &job->n_command);
	job->args = take_strings(&pr, "spec.trainer.args", &job->n_args);
	job->env = take_env(&pr, "spec.trainer.env", &job->n_env);
	job->num_nodes = (int)take_int(&pr, "spec.trainer.numNodes", 1, TJ_MAX_NODES);
	job->num_proc_per_node = take_int_or_string(&pr, "spec.trainer.numProcPerNode");
	job->resources_per_node = take_fragment(&pr, "spec.trainer.resourcesPerNode", false);
	job->pod_template_overrides = take_fragment(&pr, "spec.podTemplateOverrides", true);
	job->pod_spec_overrides = take_fragment(&pr, "spec.podSpecOverrides", true);
	job->runtime_patches = take_fragment(&pr, "spec.runtimePatches", true);
	job->initializer = take_fragment(&pr, "spec.initializer", false);
	job->labels = take_fragment(&pr, "spec.labels", false);
	job->annotations = take_fragment(&pr, "spec.annotations", false);
	suspend = tj_json_path(obj, "spec.suspend");
	if (cJSON_IsBool(suspend))
		job->suspend = cJSON_IsTrue(suspend);
	else if (suspend && !cJSON_IsNull(suspend))
		type_error(&pr, "spec.suspend", "must be true or false");
	job->managed_by = take_string(&pr, "spec.managedBy");
	job->active_deadline_seconds =
	        take_int(&pr, "spec.activeDeadlineSeconds", 1, (int64_t)1 << 40);
	job->spec_error = pr.spec_error;
	tj_trainjob_status_from_json(tj_json_path(obj, "status"), &job->status);
	if (pr.oom) {
		tj_trainjob_free(job);
		return -ENOMEM;
	}
	*ret = job;
	return 0;
}

bool tj_trainjob_is_ours(const struct tj_trainjob *job)
{
	return !job->managed_by || strcmp(job->managed_by, TJ_MANAGED_BY_KUBEFLOW) == 0;
}

static int decimal_digits(int n)
{
	int d = 1;

	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

static bool is_positive_int(const char *s)
{
	char *end;
	long v;

	if (!s || !*s || *s < '0' || *s > '9')
		return false;
	v = strtol(s, &end, 10);
	return *end == '\0' && v > 0 && v <= TJ_MAX_PROCS_PER_NODE;
}

int tj_trainjob_validate(const struct tj_trainjob *job, struct tj_problem *ret)
{
	size_t max_name;
	int64_t requested;

	if (job->spec_error)
		return tj_problem_set(ret, "InvalidSpec", "%s", job->spec_error);
	if (!job->runtime_name || !*job->runtime_name)
		return tj_problem_set(
		        ret, "InvalidSpec",
		        "spec.runtimeRef.name: required; name a ClusterTrainingRuntime "
		        "such as torch-gh200");
	if (job->runtime_api_group && strcmp(job->runtime_api_group, TJ_API_GROUP) != 0)
		return tj_problem_set(ret, "TrainingRuntimeNotSupported",
		                      "spec.runtimeRef.apiGroup: '%s' is not supported; use %s",
		                      job->runtime_api_group, TJ_API_GROUP);
	if (job->runtime_kind && strcmp(job->runtime_kind, "ClusterTrainingRuntime") != 0 &&
	    strcmp(job->runtime_kind, "TrainingRuntime") != 0)
		return tj_problem_set(ret, "TrainingRuntimeNotSupported",
		                      "spec.runtimeRef.kind: '%s' is not supported; use "
		                      "ClusterTrainingRuntime or TrainingRuntime",
		                      job->runtime_kind);
	/* The pod hostname J-node-0-<rank> is a DNS label: at most 63 characters. */
	max_name = 63 - strlen("-node-0-") -
	           (size_t)decimal_digits(job->num_nodes > 0 ? job->num_nodes - 1 : 0);
	if (strlen(job->name) > max_name)
		return tj_problem_set(ret, "InvalidSpec",
		                      "metadata.name: '%s' is too long: the pod hostnames "
		                      "<name>-node-0-<rank> must fit in 63 characters, so use at "
		                      "most %zu characters",
		                      job->name, max_name);
	if (job->num_proc_per_node && !is_positive_int(job->num_proc_per_node) &&
	    strcmp(job->num_proc_per_node, "auto") != 0 &&
	    strcmp(job->num_proc_per_node, "cpu") != 0 &&
	    strcmp(job->num_proc_per_node, "gpu") != 0)
		return tj_problem_set(ret, "InvalidSpec",
		                      "spec.trainer.numProcPerNode: '%s' is not a positive integer "
		                      "(at most 1024) or one of auto, cpu, gpu",
		                      job->num_proc_per_node);
	if (job->max_restarts) {
		char *end;
		long v = strtol(job->max_restarts, &end, 10);

		if (!*job->max_restarts || *end || v < 0 || v > 1000)
			return tj_problem_set(ret, "InvalidSpec",
			                      "metadata.annotations[%s]: '%s' is not an integer "
			                      "between 0 and 1000",
			                      TJ_ANNOTATION_MAX_RESTARTS, job->max_restarts);
	}
	if (job->restart_policy && strcmp(job->restart_policy, "Gang") != 0 &&
	    strcmp(job->restart_policy, "Worker") != 0)
		return tj_problem_set(ret, "InvalidSpec",
		                      "metadata.annotations[%s]: '%s' is not Gang or Worker",
		                      TJ_ANNOTATION_RESTART_POLICY, job->restart_policy);
	if (job->priority) {
		char *end;
		long long v = strtoll(job->priority, &end, 10);

		if (!*job->priority || *end || v < -1000000000LL || v > 1000000000LL)
			return tj_problem_set(ret, "InvalidSpec",
			                      "metadata.annotations[%s]: '%s' is not an integer "
			                      "between -1000000000 and 1000000000",
			                      TJ_ANNOTATION_PRIORITY, job->priority);
	}
	if (job->hold && strcmp(job->hold, "true") != 0 && strcmp(job->hold, "false") != 0)
		return tj_problem_set(ret, "InvalidSpec",
		                      "metadata.annotations[%s]: '%.80s' is not true or false",
		                      TJ_LABEL_PREFIX "hold", job->hold);
	if (job->requeue && tj_rfc3339_parse(job->requeue, &requested) < 0)
		return tj_problem_set(ret, "InvalidSpec",
		                      "metadata.annotations[%s]: '%.80s' is not an RFC 3339 time "
		                      "(kubectl scontrol requeue writes it)",
		                      TJ_ANNOTATION_REQUEUE, job->requeue);
	if (job->qos && (!*job->qos || strlen(job->qos) > 63))
		return tj_problem_set(
		        ret, "InvalidSpec",
		        "metadata.annotations[%s]: '%.80s' is not a QOS tier's name (a "
		        "DNS label)",
		        TJ_LABEL_PREFIX "qos", job->qos);
	if (job->node_grace_period) {
		char *end;
		long v = strtol(job->node_grace_period, &end, 10);

		if (!*job->node_grace_period || *end || v < 0 || v > 86400)
			return tj_problem_set(ret, "InvalidSpec",
			                      "metadata.annotations[%s]: '%s' is not an integer "
			                      "between 0 and 86400",
			                      TJ_ANNOTATION_NODE_GRACE_PERIOD,
			                      job->node_grace_period);
	}
	return 0;
}

const struct tj_condition *tj_trainjob_status_condition(const struct tj_trainjob_status *status,
                                                        enum tj_condition_type type)
{
	for (size_t i = 0; i < status->n_conditions; i++)
		if (status->conditions[i].type == type)
			return &status->conditions[i];
	return NULL;
}

bool tj_trainjob_status_is_true(const struct tj_trainjob_status *status,
                                enum tj_condition_type type)
{
	const struct tj_condition *c = tj_trainjob_status_condition(status, type);

	return c && c->status;
}

static int add_time(cJSON *obj, const char *key, int64_t t)
{
	char buf[21];

	if (!t)
		return tj_json_set(obj, key, cJSON_CreateNull());
	tj_time_format(t, buf);
	return tj_json_set_string(obj, key, buf);
}

static int add_int(cJSON *obj, const char *key, double v)
{
	return tj_json_set(obj, key, cJSON_CreateNumber(v));
}

/* Absent until the first: the count never goes down, so no patch has to clear it, and a job
 * the infrastructure never failed keeps the status it always had. */
static int add_infrastructure_restarts(cJSON *status, int n)
{
	return n > 0 ? add_int(status, "infrastructureRestarts", n) : 0;
}

static int add_last_failure(cJSON *status, const struct tj_failure *f)
{
	cJSON *lf;

	if (f->rank < 0)
		return tj_json_set(status, "lastFailure", cJSON_CreateNull());
	lf = tj_json_object(status, "lastFailure");
	if (!lf || add_int(lf, "rank", f->rank) < 0 ||
	    tj_json_set_string(lf, "node", f->node) < 0 ||
	    tj_json_set_string(lf, "pod", f->pod) < 0 ||
	    tj_json_set_string(lf, "reason", f->reason) < 0 || add_time(lf, "time", f->time) < 0)
		return -ENOMEM;
	if (f->exit_code >= 0 && add_int(lf, "exitCode", f->exit_code) < 0)
		return -ENOMEM;
	/* null clears the message of an earlier failure: a merge patch merges the object. */
	return tj_json_set(lf, "message",
	                   *f->message ? cJSON_CreateString(f->message) : cJSON_CreateNull());
}

static int add_jobs_status(cJSON *status, const struct tj_trainjob_status *s)
{
	cJSON *list;

	if (!s->has_jobs_status)
		return tj_json_set(status, "jobsStatus", cJSON_CreateNull());
	list = cJSON_CreateArray();
	if (tj_json_set(status, "jobsStatus", list) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct tj_jobs_status *j = &s->jobs[i];
		cJSON *el = cJSON_CreateObject();

		if (!el || !cJSON_AddItemToArray(list, el)) {
			cJSON_Delete(el);
			return -ENOMEM;
		}
		if (tj_json_set_string(el, "name", j->name) < 0 ||
		    add_int(el, "active", j->active) < 0 || add_int(el, "ready", j->ready) < 0 ||
		    add_int(el, "succeeded", j->succeeded) < 0 ||
		    add_int(el, "failed", j->failed) < 0 ||
		    add_int(el, "suspended", j->suspended) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_conditions(cJSON *status, const struct tj_trainjob_status *s)
{
	cJSON *list = cJSON_CreateArray();

	if (tj_json_set(status, "conditions", list) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_conditions; i++) {
		const struct tj_condition *c = &s->conditions[i];
		cJSON *el = cJSON_CreateObject();

		if (!el || !cJSON_AddItemToArray(list, el)) {
			cJSON_Delete(el);
			return -ENOMEM;
		}
		if (tj_json_set_string(el, "type", condition_names[c->type]) < 0 ||
		    tj_json_set_string(el, "status", c->status ? "True" : "False") < 0 ||
		    tj_json_set_string(el, "reason", c->reason) < 0 ||
		    tj_json_set_string(el, "message", c->message) < 0 ||
		    add_time(el, "lastTransitionTime", c->last_transition_time) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The GPU-seconds only grow and their time only advances, so a patch never has to clear
 * them: absent until there is something to count, which keeps them out of the status of a
 * job that holds no GPU. */
/* status.preemption while the job is being preempted (a patch that ends it sets it to null
 * itself), and the counts of its preemptions once there were any. */
static int add_preemption(cJSON *status, const struct tj_trainjob_status *s)
{
	cJSON *p;

	if (s->preempt_at && (!(p = tj_json_object(status, "preemption")) ||
	                      add_time(p, "stopAt", s->preempt_at) < 0 ||
	                      tj_json_set_string(p, "by", s->preempted_by) < 0))
		return -ENOMEM;
	if (s->preemptions && add_int(status, "preemptions", s->preemptions) < 0)
		return -ENOMEM;
	if (s->preempted_gpu_seconds &&
	    add_int(status, "preemptedGpuSeconds", (double)s->preempted_gpu_seconds) < 0)
		return -ENOMEM;
	if (s->requeued_at && add_time(status, "lastRequeueTime", s->requeued_at) < 0)
		return -ENOMEM;
	return 0;
}

static int add_gpu_seconds(cJSON *status, const struct tj_trainjob_status *s)
{
	if (s->gpu_seconds && add_int(status, "gpuSeconds", (double)s->gpu_seconds) < 0)
		return -ENOMEM;
	if (s->wasted_gpu_seconds &&
	    add_int(status, "wastedGpuSeconds", (double)s->wasted_gpu_seconds) < 0)
		return -ENOMEM;
	if (s->gpu_seconds_until &&
	    add_time(status, "gpuSecondsCountedUntil", s->gpu_seconds_until) < 0)
		return -ENOMEM;
	return 0;
}

cJSON *tj_trainjob_status_to_json(const struct tj_trainjob_status *s)
{
	cJSON *status = cJSON_CreateObject();

	if (!status)
		return NULL;
	if (tj_json_set_string(status, "state", tj_state_name(s->state)) < 0 ||
	    tj_json_set_string(status, "reason", s->reason) < 0 ||
	    tj_json_set_string(status, "message", s->message) < 0 ||
	    add_int(status, "restartCount", s->restart_count) < 0 ||
	    add_infrastructure_restarts(status, s->infrastructure_restarts) < 0 ||
	    add_last_failure(status, &s->last_failure) < 0 ||
	    add_time(status, "startTime", s->start_time) < 0 ||
	    add_time(status, "completionTime", s->completion_time) < 0 ||
	    add_time(status, "expectedStartTime", s->expected_start_time) < 0 ||
	    add_time(status, "deadline", s->deadline) < 0 ||
	    add_time(status, "cleanupTime", s->cleanup_time) < 0 ||
	    tj_json_set(status, "queuePosition",
	                s->queue_position > 0 ? cJSON_CreateNumber(s->queue_position)
	                                      : cJSON_CreateNull()) < 0 ||
	    add_int(status, "observedGeneration", (double)s->observed_generation) < 0 ||
	    add_jobs_status(status, s) < 0 || add_conditions(status, s) < 0 ||
	    add_gpu_seconds(status, s) < 0 || add_preemption(status, s) < 0) {
		cJSON_Delete(status);
		return NULL;
	}
	return status;
}

static bool failure_equal(const struct tj_failure *a, const struct tj_failure *b)
{
	if (a->rank < 0 || b->rank < 0)
		return a->rank == b->rank;
	return a->rank == b->rank && strcmp(a->node, b->node) == 0 && strcmp(a->pod, b->pod) == 0 &&
	       strcmp(a->reason, b->reason) == 0 && a->exit_code == b->exit_code &&
	       a->time == b->time && strcmp(a->message, b->message) == 0;
}

static bool condition_equal(const struct tj_condition *a, const struct tj_condition *b)
{
	return a->type == b->type && a->status == b->status && strcmp(a->reason, b->reason) == 0 &&
	       strcmp(a->message, b->message) == 0 &&
	       a->last_transition_time == b->last_transition_time;
}

bool tj_trainjob_status_equal(const struct tj_trainjob_status *a,
                              const struct tj_trainjob_status *b)
{
	if (a->state != b->state || strcmp(a->reason, b->reason) != 0 ||
	    strcmp(a->message, b->message) != 0 || a->restart_count != b->restart_count ||
	    a->infrastructure_restarts != b->infrastructure_restarts ||
	    !failure_equal(&a->last_failure, &b->last_failure) || a->start_time != b->start_time ||
	    a->completion_time != b->completion_time ||
	    a->expected_start_time != b->expected_start_time || a->deadline != b->deadline ||
	    a->cleanup_time != b->cleanup_time || a->queue_position != b->queue_position ||
	    a->observed_generation != b->observed_generation ||
	    a->has_jobs_status != b->has_jobs_status || a->n_conditions != b->n_conditions ||
	    a->gpu_seconds != b->gpu_seconds || a->wasted_gpu_seconds != b->wasted_gpu_seconds ||
	    a->gpu_seconds_until != b->gpu_seconds_until || a->preempt_at != b->preempt_at ||
	    strcmp(a->preempted_by, b->preempted_by) != 0 || a->preemptions != b->preemptions ||
	    a->preempted_gpu_seconds != b->preempted_gpu_seconds ||
	    a->requeued_at != b->requeued_at)
		return false;
	if (a->has_jobs_status && (a->n_jobs != b->n_jobs ||
	                           memcmp(a->jobs, b->jobs, a->n_jobs * sizeof(a->jobs[0])) != 0))
		return false;
	for (size_t i = 0; i < a->n_conditions; i++)
		if (!condition_equal(&a->conditions[i], &b->conditions[i]))
			return false;
	return true;
}

int tj_trainjob_add_owner(cJSON *meta, const struct tj_trainjob *job)
{
	cJSON *refs = cJSON_CreateArray(), *ref = cJSON_CreateObject();

	if (tj_json_append(refs, ref) < 0 || tj_json_set(meta, "ownerReferences", refs) < 0)
		return -ENOMEM;
	if (tj_json_set_string(ref, "apiVersion", TJ_API_VERSION) < 0 ||
	    tj_json_set_string(ref, "kind", "TrainJob") < 0 ||
	    tj_json_set_string(ref, "name", job->name) < 0 ||
	    tj_json_set_string(ref, "uid", job->uid) < 0 ||
	    tj_json_set(ref, "controller", cJSON_CreateTrue()) < 0 ||
	    tj_json_set(ref, "blockOwnerDeletion", cJSON_CreateTrue()) < 0)
		return -ENOMEM;
	return 0;
}
