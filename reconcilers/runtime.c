#include "reconcilers/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "reconcilers/json.h"
#include "reconcilers/runtime_snapshot.h"
#include "reconcilers/runtime_support.h"

#define MAX_TEMPLATE (256 * 1024)

const char *tj_runtime_kind_name(enum tj_runtime_kind kind)
{
	return kind == TJ_RUNTIME_CLUSTER ? "ClusterTrainingRuntime" : "TrainingRuntime";
}

struct tj_runtime *tj_runtime_free(struct tj_runtime *rt)
{
	if (!rt)
		return NULL;
	free(rt->namespace);
	free(rt->name);
	free(rt->gpu_class);
	free(rt->restart_policy);
	free(rt->max_restarts);
	free(rt->stall_timeout);
	free(rt->num_proc_per_node);
	free(rt->env_targets);
	free(rt->failure_rules);
	free(rt->node_template);
	tj_mpi_policy_clear(&rt->mpi);
	tj_step_graph_clear(&rt->graph);
	free(rt->template_metadata);
	free(rt->unsupported);
	free(rt->snapshot);
	free(rt);
	return NULL;
}

/* A setting of ours may be a label (selectable) or an annotation (free-form); the label wins. */
static const char *setting(const cJSON *obj, const char *key)
{
	const char *v = cJSON_GetStringValue(
	        cJSON_GetObjectItemCaseSensitive(tj_json_path(obj, "metadata.labels"), key));

	return v ? v
	         : cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	                   tj_json_path(obj, "metadata.annotations"), key));
}

static int dup_opt(const char *s, char **ret)
{
	*ret = NULL;
	if (s && !(*ret = strdup(s)))
		return -ENOMEM;
	return 0;
}

/* The runtime's TTL, from its own field or from the JobSet template, where a runtime written
 * for JobSet carries it. */
static int ttl_of(const cJSON *obj)
{
	static const char *const paths[] = { "spec.ttlSecondsAfterFinished",
		                             "spec.template.spec.ttlSecondsAfterFinished" };
	int64_t v;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const cJSON *ttl = tj_json_path(obj, paths[i]);

		if (cJSON_IsNumber(ttl) && tj_double_to_int64(ttl->valuedouble, 0, INT32_MAX, &v))
			return (int)v;
	}
	return -1;
}

/* The walltime a runtime gives its jobs: its own field, else the node Job's. */
static int64_t deadline_of(const cJSON *obj, const cJSON *node_job)
{
	const cJSON *v = tj_json_path(obj, "spec.activeDeadlineSeconds");
	int64_t n;

	if (!v)
		v = tj_json_path(node_job, "template.spec.activeDeadlineSeconds");
	return cJSON_IsNumber(v) && tj_double_to_int64(v->valuedouble, 1, (int64_t)1 << 40, &n) ? n
	                                                                                        : 0;
}

/* The schema lets a runtime name one source at most. */
static enum tj_ml_policy ml_policy_of(const cJSON *ml, const struct tj_mpi_policy *mpi)
{
	if (mpi->enabled)
		return TJ_ML_MPI;
	if (cJSON_IsObject(tj_json_path(ml, "jax")))
		return TJ_ML_JAX;
	if (cJSON_IsObject(tj_json_path(ml, "xgboost")))
		return TJ_ML_XGBOOST;
	return TJ_ML_TORCH;
}

/* What the runtime's fields beyond the node template say (reconcilers/runtime_support.h,
 * reconcilers/render/job_metadata.h). */
static int project_support(const cJSON *obj, const cJSON *node_job, struct tj_runtime *rt)
{
	const cJSON *meta = tj_json_path(obj, "spec.template.metadata");
	const cJSON *targets = tj_json_path(obj, "spec.mlPolicy.torch.envInjection.targets");
	const cJSON *rules = tj_json_path(obj, "spec.template.spec.failurePolicy.rules");
	struct tj_problem why;
	int r;

	rt->failure_budget = tj_runtime_failure_budget(obj);
	rt->active_deadline_seconds = deadline_of(obj, node_job);
	if (cJSON_IsObject(meta) && meta->child) {
		r = tj_json_print(meta, MAX_TEMPLATE, &rt->template_metadata);
		if (r < 0)
			return r;
	}
	if (cJSON_GetArraySize(targets) > 0 &&
	    (r = tj_json_print(targets, MAX_TEMPLATE, &rt->env_targets)) < 0)
		return r;
	if (cJSON_IsArray(rules) && cJSON_GetArraySize(rules) > 0 &&
	    (r = tj_json_print(rules, MAX_TEMPLATE, &rt->failure_rules)) < 0)
		return r;
	if (tj_runtime_support_check(obj, &why) < 0 &&
	    asprintf(&rt->unsupported, "%s %s: %s", tj_runtime_kind_name(rt->kind), rt->name,
	             why.message) < 0) {
		rt->unsupported = NULL;
		return -ENOMEM;
	}
	return 0;
}

int tj_runtime_from_json(const cJSON *obj, struct tj_runtime **ret)
{
	const char *kind = tj_json_string(obj, "kind");
	const char *name = tj_json_string(obj, "metadata.name");
	const char *ns = tj_json_string(obj, "metadata.namespace");
	const cJSON *nodes, *procs;
	const char *long_running;
	struct tj_runtime *rt;
	char buf[32];
	size_t node;
	int64_t n;
	int r;

	if (!kind || !name || !*name)
		return -EINVAL;
	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	if (strcmp(kind, "ClusterTrainingRuntime") == 0) {
		rt->kind = TJ_RUNTIME_CLUSTER;
		ns = "";
	} else if (strcmp(kind, "TrainingRuntime") == 0 && ns && *ns) {
		rt->kind = TJ_RUNTIME_NAMESPACED;
	} else {
		r = -EINVAL;
		goto fail;
	}
	nodes = tj_json_path(obj, "spec.mlPolicy.numNodes");
	rt->num_nodes = cJSON_IsNumber(nodes) && nodes->valuedouble >= 1 &&
	                                nodes->valuedouble <= TJ_MAX_NODES
	                        ? (int)nodes->valuedouble
	                        : 1;
	rt->ttl_seconds_after_finished = ttl_of(obj);
	procs = tj_json_path(obj, "spec.mlPolicy.torch.numProcPerNode");
	if (cJSON_IsNumber(procs) &&
	    tj_double_to_int64(procs->valuedouble, INT32_MIN, INT32_MAX, &n)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)n);
	} else {
		snprintf(buf, sizeof(buf), "%s",
		         cJSON_IsString(procs) && strlen(procs->valuestring) < sizeof(buf)
		                 ? procs->valuestring
		                 : "auto");
	}
	r = -ENOMEM;
	if (dup_opt(name, &rt->name) < 0 || dup_opt(ns, &rt->namespace) < 0 ||
	    dup_opt(buf, &rt->num_proc_per_node) < 0 ||
	    dup_opt(setting(obj, TJ_LABEL_GPU_CLASS), &rt->gpu_class) < 0 ||
	    dup_opt(setting(obj, TJ_ANNOTATION_RESTART_POLICY), &rt->restart_policy) < 0 ||
	    dup_opt(setting(obj, TJ_ANNOTATION_MAX_RESTARTS), &rt->max_restarts) < 0 ||
	    dup_opt(setting(obj, TJ_ANNOTATION_STALL_TIMEOUT), &rt->stall_timeout) < 0)
		goto fail;
	/* A label, not an annotation, and on the cluster's runtimes only: what an operator
	 * allows, selectable (kubectl get ctr -l ...). */
	long_running = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	        tj_json_path(obj, "metadata.labels"), TJ_LABEL_ALLOW_LONG_RUNNING));
	rt->allow_long_running =
	        rt->kind == TJ_RUNTIME_CLUSTER && long_running && strcmp(long_running, "true") == 0;
	r = tj_step_graph_from_json(tj_json_path(obj, "spec.template.spec"), MAX_TEMPLATE,
	                            &rt->graph);
	if (r < 0)
		goto fail;
	/* A graph that cannot run may stop at a node step before its template: jobs of such a
	 * runtime fail with the graph's error, and no template is needed. */
	node = tj_step_graph_find(&rt->graph, TJ_STEP_NODE);
	if (node < rt->graph.n && rt->graph.steps[node].pod_template &&
	    !(rt->node_template = strdup(rt->graph.steps[node].pod_template))) {
		r = -ENOMEM;
		goto fail;
	}
	r = tj_mpi_policy_from_json(tj_json_path(obj, "spec.mlPolicy.mpi"), &rt->mpi);
	if (r < 0)
		goto fail;
	rt->ml_policy = ml_policy_of(tj_json_path(obj, "spec.mlPolicy"), &rt->mpi);
	r = project_support(obj,
	                    tj_json_find_by(tj_json_path(obj, "spec.template.spec.replicatedJobs"),
	                                    "name", "node"),
	                    rt);
	if (r < 0)
		goto fail;
	r = tj_runtime_snapshot_copy(obj, &rt->snapshot);
	if (r == -ENOMEM)
		goto fail;
	*ret = rt;
	return 0;
fail:
	tj_runtime_free(rt);
	return r;
}

enum tj_runtime_kind tj_runtime_ref_kind(const struct tj_trainjob *job)
{
	return job->runtime_kind && strcmp(job->runtime_kind, "TrainingRuntime") == 0
	               ? TJ_RUNTIME_NAMESPACED
	               : TJ_RUNTIME_CLUSTER;
}

int tj_runtime_resolve(const struct tj_trainjob *job, tj_runtime_lookup_fn lookup, void *ctx,
                       const struct tj_runtime **ret, struct tj_problem *why)
{
	enum tj_runtime_kind kind = tj_runtime_ref_kind(job);
	const struct tj_runtime *rt;

	rt = lookup(ctx, kind, kind == TJ_RUNTIME_CLUSTER ? "" : job->namespace, job->runtime_name);
	if (!rt) {
		if (kind == TJ_RUNTIME_CLUSTER)
			tj_problem_set(
			        why, "RuntimeNotFound",
			        "ClusterTrainingRuntime %s not found; the job starts when it "
			        "is created",
			        job->runtime_name);
		else
			tj_problem_set(
			        why, "RuntimeNotFound",
			        "TrainingRuntime %s not found in namespace %s; the job starts "
			        "when it is created",
			        job->runtime_name, job->namespace);
		return -ENOENT;
	}
	*ret = rt;
	return 0;
}

/* The config's classes are searched here rather than through the config module, so that
 * this module needs only the config's data, not its parser. */
static const struct tj_gpu_class *find_class(const struct tj_config *config, const char *name)
{
	for (size_t i = 0; config && i < config->n_classes; i++)
		if (strcmp(config->classes[i].name, name) == 0)
			return &config->classes[i];
	return NULL;
}

int tj_runtime_gpu_class(const struct tj_runtime *rt, const struct tj_config *config,
                         const struct tj_gpu_class **ret, struct tj_problem *why)
{
	const struct tj_gpu_class *cls;

	if (rt->gpu_class) {
		cls = find_class(config, rt->gpu_class);
		if (!cls) {
			tj_problem_set(
			        why, "UnknownGPUClass",
			        "%s %s: label %s names GPU class '%s', which the controller's "
			        "config does not define; fix the label or add the class",
			        tj_runtime_kind_name(rt->kind), rt->name, TJ_LABEL_GPU_CLASS,
			        rt->gpu_class);
			return -ENOENT;
		}
		*ret = cls;
		return 0;
	}
	cls = NULL;
	if (strncmp(rt->name, "torch-", 6) == 0)
		cls = find_class(config, rt->name + 6);
	*ret = cls;
	return 0;
}
