#include "reconcilers/render/render.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "informers/pod.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/walltime.h"
#include "reconcilers/render/job_metadata.h"
#include "reconcilers/render/overrides.h"
#include "reconcilers/render/termination.h"
#include "reconcilers/render/wiring.h"
#include "reconcilers/steps.h"
#include "reconcilers/trainer_status.h"

struct tj_render {
	cJSON *pod;              /* owned; the base pod, without the per-rank fields */
	char *job_name;          /* owned */
	struct tj_wiring wiring; /* its job is job_name */
	/* owned; the runtime's envInjection targets ([{jobName, containerNames}]), NULL */
	cJSON *env_targets;
	const struct tj_gpu_class *gpu_class; /* borrowed from the input */
	cJSON *placement; /* owned; the class's (and the exclusions') node selector term */
};

void tj_render_pod_name(const char *job, int rank, int attempt, char buf[static TJ_NAME_MAX])
{
	snprintf(buf, TJ_NAME_MAX, "%s-node-0-%d-a%d", job, rank, attempt);
}

int tj_render_num_nodes(const struct tj_render *r)
{
	return r->wiring.num_nodes;
}

int tj_render_procs_per_node(const struct tj_render *r)
{
	return r->wiring.procs;
}

struct tj_render *tj_render_free(struct tj_render *r)
{
	if (!r)
		return NULL;
	cJSON_Delete(r->pod);
	cJSON_Delete(r->placement);
	cJSON_Delete(r->env_targets);
	free(r->job_name);
	free(r);
	return NULL;
}

static int add_dup(cJSON *array, const cJSON *item)
{
	return tj_json_append(array, cJSON_Duplicate(item, true));
}

static cJSON *string_array(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++)
		if (tj_json_append(a, cJSON_CreateString(v[i])) < 0) {
			cJSON_Delete(a);
			return NULL;
		}
	return a;
}

static cJSON *env_var(const char *name, const char *value, const char *value_from)
{
	cJSON *e = cJSON_CreateObject();
	cJSON *from = NULL;

	if (!e || tj_json_set_string(e, "name", name) < 0)
		goto fail;
	if (value_from) {
		if (tj_json_parse(value_from, &from) < 0 || tj_json_set(e, "valueFrom", from) < 0)
			goto fail;
	} else if (tj_json_set_string(e, "value", value) < 0) {
		goto fail;
	}
	return e;
fail:
	cJSON_Delete(e);
	return NULL;
}

/* True for the resources the GPU rules apply to: the class's resource, or any name with
 * "gpu" in it (nvidia.com/gpu, amd.com/gpu) when no class is known. */
static bool is_gpu_resource(const char *name, const struct tj_gpu_class *cls)
{
	if (cls && cls->resource && strcmp(name, cls->resource) == 0)
		return true;
	return strstr(name, "gpu") != NULL;
}

/* One side (limits, requests) of resourcesPerNode over the container's: per resource. A GPU
 * the TrainJob sets on this side only leaves the template's other side, so that
 * gpus_both_ways makes both sides the TrainJob's count: Kubeflow's merge would keep the
 * template's other count there, a pod the API server refuses (an extended resource's
 * request must equal its limit). */
static int merge_side(cJSON *res, const cJSON *over, const char *side, const char *other)
{
	const cJSON *from = cJSON_GetObjectItemCaseSensitive(over, side), *el;
	const cJSON *over_other = cJSON_GetObjectItemCaseSensitive(over, other);

	if (!cJSON_IsObject(from))
		return 0;
	if (tj_json_merge_map(res, side, from) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(el, from)
	{
		if (is_gpu_resource(el->string, NULL) &&
		    !cJSON_GetObjectItemCaseSensitive(over_other, el->string))
			cJSON_DeleteItemFromObjectCaseSensitive(
			        cJSON_GetObjectItemCaseSensitive(res, other), el->string);
	}
	return 0;
}

/* resourcesPerNode over the container's resources as Kubeflow Trainer merges them (a
 * strategic merge patch, MergeResourceRequirements in its pkg/util/trainingruntime): limits
 * and requests per resource name, claims by name; what the TrainJob does not name keeps
 * the template's value. */
static int merge_resources(cJSON *c, const char *resources_per_node)
{
	cJSON *over = NULL, *res, *claims;
	const cJSON *el;
	int r = -ENOMEM;

	if (!resources_per_node)
		return 0;
	if (tj_json_parse(resources_per_node, &over) < 0)
		return -ENOMEM;
	res = tj_json_object(c, "resources");
	if (!res)
		goto out;
	if (merge_side(res, over, "limits", "requests") < 0 ||
	    merge_side(res, over, "requests", "limits") < 0)
		goto out;
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(over, "claims"))) {
		if (!(claims = tj_json_array(res, "claims")))
			goto out;
		cJSON_ArrayForEach(el, cJSON_GetObjectItemCaseSensitive(over, "claims"))
		{
			const char *name = tj_json_string(el, "name");
			cJSON *old = name ? tj_json_find_by(claims, "name", name) : NULL;
			cJSON *dup = cJSON_Duplicate(el, true);

			if (!dup || (old ? !cJSON_ReplaceItemViaPointer(claims, old, dup)
			                 : !cJSON_AddItemToArray(claims, dup))) {
				cJSON_Delete(dup);
				goto out;
			}
		}
	}
	r = 0;
out:
	cJSON_Delete(over);
	return r;
}

int tj_render_apply_trainer(cJSON *c, const struct tj_trainjob *job, enum tj_ml_policy policy,
                            bool program, bool with_env, bool with_resources,
                            struct tj_problem *why)
{
	cJSON *env;

	if (program && job->image && tj_json_set_string(c, "image", job->image) < 0)
		return -ENOMEM;
	if (program && job->command &&
	    tj_json_set(c, "command", string_array(job->command, job->n_command)) < 0)
		return -ENOMEM;
	if (program && job->n_args > 0) {
		/* Kubeflow's order: the TrainJob's args first, then the runtime's. */
		cJSON *args = string_array(job->args, job->n_args);
		const cJSON *el;

		if (!args)
			return -ENOMEM;
		cJSON_ArrayForEach(el, cJSON_GetObjectItemCaseSensitive(c, "args"))
		{
			if (add_dup(args, el) < 0) {
				cJSON_Delete(args);
				return -ENOMEM;
			}
		}
		if (tj_json_set(c, "args", args) < 0)
			return -ENOMEM;
	}
	/* The names are checked on every pod of the trainer, so that a job is refused before
	 * its first pod even when that pod takes no env. */
	for (size_t i = 0; i < job->n_env; i++)
		if (tj_wiring_env_reserved(policy, job->env[i].name))
			return tj_problem_set(
			        why, "InvalidSpec",
			        "spec.trainer.env[%zu].name: %s is set by the controller "
			        "(%s); remove it from the TrainJob",
			        i, job->env[i].name, tj_wiring_what(policy));
	env = with_env ? tj_json_array(c, "env") : NULL;
	if (with_env && !env)
		return -ENOMEM;
	for (size_t i = 0; with_env && i < job->n_env; i++) {
		const struct tj_env_var *v = &job->env[i];
		cJSON *e, *old;

		e = env_var(v->name, v->value, v->value_from);
		if (!e)
			return -ENOMEM;
		old = tj_json_find_by(env, "name", v->name);
		if (old ? !cJSON_ReplaceItemViaPointer(env, old, e)
		        : !cJSON_AddItemToArray(env, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
	}
	return with_resources ? merge_resources(c, job->resources_per_node) : 0;
}

/* A whole-number quantity ("4", 4); -1 if it is not one. */
static long quantity_int(const cJSON *q)
{
	char *end;
	long v;

	if (cJSON_IsNumber(q)) {
		int64_t n;

		return tj_double_to_int64(q->valuedouble, 0, LONG_MAX, &n) ? (long)n : -1;
	}
	if (!cJSON_IsString(q))
		return -1;
	v = strtol(q->valuestring, &end, 10);
	return *end == '\0' && end != q->valuestring && v >= 0 ? v : -1;
}

/* CPUs of a quantity ("8", "500m", 2), rounded down; -1 if unparsable. */
static long quantity_cpus(const cJSON *q)
{
	char *end;
	double v;
	int64_t n;

	/* Whole CPUs, rounded down; past a billion nobody counts. */
	if (cJSON_IsNumber(q))
		return tj_double_to_int64(floor(q->valuedouble), 0, 1000000000, &n) ? (long)n : -1;
	if (!cJSON_IsString(q))
		return -1;
	v = strtod(q->valuestring, &end);
	if (end == q->valuestring)
		return -1;
	if (strcmp(end, "m") == 0)
		v /= 1000;
	else if (*end)
		return -1;
	return tj_double_to_int64(floor(v), 0, 1000000000, &n) ? (long)n : -1;
}

/* Makes the GPU requests and limits of the container equal, as extended resources require,
 * and returns the GPU count (0 if none). A GPU count that is not a whole number ("0.5",
 * "500m") is the TrainJob's mistake: the API server would refuse every pod. The CRD cannot
 * reject it, because no CEL rule may read a quantity there (see resourcesPerNode in
 * crds/trainer.kubeflow.org_trainjobs.yaml). */
static int gpus_both_ways(cJSON *c, const struct tj_gpu_class *cls, long *ret,
                          struct tj_problem *why)
{
	cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "resources");
	const char *sides[2] = { "limits", "requests" };
	long gpus = 0;

	if (!cJSON_IsObject(res)) {
		*ret = 0;
		return 0;
	}
	for (int s = 0; s < 2; s++) {
		const cJSON *from = cJSON_GetObjectItemCaseSensitive(res, sides[s]);
		const cJSON *el;

		cJSON_ArrayForEach(el, from)
		{
			cJSON *to;

			if (!is_gpu_resource(el->string, cls))
				continue;
			if (quantity_int(el) < 0) {
				char *v = cJSON_PrintUnformatted(el);
				int rc = v ? tj_problem_set(
				                     why, "InvalidSpec",
				                     "resources.%s of container node: %s %s is "
				                     "not a whole number of GPUs "
				                     "(spec.trainer.resourcesPerNode)",
				                     sides[s], el->string, v)
				           : -ENOMEM;

				free(v);
				return rc;
			}
			if (quantity_int(el) > gpus)
				gpus = quantity_int(el);
			to = tj_json_object(res, sides[1 - s]);
			if (!to)
				return -ENOMEM;
			if (!cJSON_GetObjectItemCaseSensitive(to, el->string) &&
			    tj_json_set(to, el->string, cJSON_Duplicate(el, true)) < 0)
				return -ENOMEM;
		}
	}
	*ret = gpus;
	return 0;
}

static long container_cpus(const cJSON *c)
{
	const cJSON *q = tj_json_path(c, "resources.limits.cpu");

	if (!q)
		q = tj_json_path(c, "resources.requests.cpu");
	return q ? quantity_cpus(q) : -1;
}

/* numProcPerNode: an integer as is; gpu = the GPU count; cpu = the CPU count (at least 1);
 * auto = the GPU count when GPUs are requested, else as cpu. At most TJ_MAX_PROCS_PER_NODE,
 * as the TrainJob's own value: a GPU or CPU quantity in the billions would make no sense. */
static int resolve_procs(const char *spec, long gpus, long cpus, int *ret, struct tj_problem *why)
{
	long n;
	char *end;

	if (strcmp(spec, "gpu") == 0) {
		if (gpus <= 0)
			return tj_problem_set(
			        why, "InvalidSpec",
			        "spec.trainer.numProcPerNode: gpu, but the node container "
			        "requests no GPUs (spec.trainer.resourcesPerNode)");
		n = gpus;
	} else if (strcmp(spec, "auto") == 0 && gpus > 0) {
		n = gpus;
	} else if (strcmp(spec, "auto") == 0 || strcmp(spec, "cpu") == 0) {
		n = cpus > 0 ? cpus : 1;
	} else {
		errno = 0;
		n = strtol(spec, &end, 10);
		if (errno || end == spec || *end || n <= 0)
			return tj_problem_set(
			        why, "InvalidSpec",
			        "numProcPerNode: '%s' is not a positive integer or one of "
			        "auto, cpu, gpu",
			        spec);
	}
	if (n > TJ_MAX_PROCS_PER_NODE)
		return tj_problem_set(
		        why, "InvalidSpec",
		        "numProcPerNode: %s comes to %ld processes per node; at most %d", spec, n,
		        TJ_MAX_PROCS_PER_NODE);
	*ret = (int)n;
	return 0;
}

static cJSON *match_expression(const char *key, const char *op, const char *const *values, size_t n)
{
	cJSON *e = cJSON_CreateObject();
	cJSON *v = cJSON_CreateArray();

	if (!e || !v || tj_json_set_string(e, "key", key) < 0 ||
	    tj_json_set_string(e, "operator", op) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (tj_json_append(v, cJSON_CreateString(values[i])) < 0)
			goto fail;
	if (tj_json_set(e, "values", v) < 0) {
		v = NULL;
		goto fail;
	}
	return e;
fail:
	cJSON_Delete(v);
	cJSON_Delete(e);
	return NULL;
}

/* The placement requirements as a node selector term: the class's node labels and its
 * architecture (matchExpressions), and the excluded nodes by name (a matchFields
 * metadata.name NotIn for each, as the DaemonSet controller names nodes: a node's hostname label
 * may differ from its name, and need not be unique). */
static int placement_term(const struct tj_render_input *in, cJSON **ret)
{
	const struct tj_gpu_class *cls = in->gpu_class;
	cJSON *term = cJSON_CreateObject(),
	      *exprs = term ? tj_json_array(term, "matchExpressions") : NULL;

	if (!exprs)
		goto fail;
	for (size_t i = 0; cls && i < cls->n_node_labels; i++) {
		const char *v = cls->node_labels[i].value;

		if (tj_json_append(exprs, match_expression(cls->node_labels[i].key, "In", &v, 1)) <
		    0)
			goto fail;
	}
	if (cls && cls->arch) {
		const char *v = cls->arch;

		if (tj_json_append(exprs, match_expression("kubernetes.io/arch", "In", &v, 1)) < 0)
			goto fail;
	}
	/* The API server takes one value per requirement on a node's field: one NotIn each. */
	for (size_t i = 0; i < in->n_excluded_nodes; i++)
		if (tj_json_append(tj_json_array(term, "matchFields"),
		                   match_expression("metadata.name", "NotIn",
		                                    &in->excluded_nodes[i], 1)) < 0)
			goto fail;
	*ret = term;
	return 0;
fail:
	cJSON_Delete(term);
	return -ENOMEM;
}

/* Appends a copy of every requirement of list `name` of `from` to that list of `to`. */
static int and_list(cJSON *to, const cJSON *from, const char *name)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(from, name), *e;
	cJSON *into;

	if (cJSON_GetArraySize(list) == 0)
		return 0;
	if (!(into = tj_json_array(to, name)))
		return -ENOMEM;
	cJSON_ArrayForEach(e, list)
	{
		if (add_dup(into, e) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Required node affinity: the terms of a nodeSelector are ORed, so the requirements of
 * `and` (a term: matchExpressions and matchFields) are ANDed into every term the template
 * or overrides brought, or form the only term. */
static int and_into_terms(cJSON *spec, const cJSON *and)
{
	cJSON *required, *terms, *term;

	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(and, "matchExpressions")) == 0 &&
	    cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(and, "matchFields")) == 0)
		return 0;
	required = tj_json_object(tj_json_object(tj_json_object(spec, "affinity"), "nodeAffinity"),
	                          "requiredDuringSchedulingIgnoredDuringExecution");
	terms = required ? tj_json_array(required, "nodeSelectorTerms") : NULL;
	if (!terms)
		return -ENOMEM;
	if (cJSON_GetArraySize(terms) == 0 && tj_json_append(terms, cJSON_CreateObject()) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(term, terms)
	{
		if (and_list(term, and, "matchExpressions") < 0 ||
		    and_list(term, and, "matchFields") < 0)
			return -ENOMEM;
	}
	return 0;
}

int tj_render_pin(cJSON *pod, const char *node)
{
	cJSON *term = cJSON_CreateObject();
	int r = -ENOMEM;

	if (!term || tj_json_append(tj_json_array(term, "matchFields"),
	                            match_expression("metadata.name", "In", &node, 1)) < 0)
		goto out;
	r = and_into_terms(tj_json_object(pod, "spec"), term);
	if (r == 0)
		r = tj_json_set_string(
		        tj_json_object(tj_json_object(pod, "metadata"), "annotations"),
		        TJ_ANNOTATION_PINNED_NODE, node);
out:
	cJSON_Delete(term);
	return r;
}

const struct tj_gpu_class *tj_render_gpu_class(const struct tj_render *r)
{
	return r->gpu_class;
}

static int apply_tolerations(cJSON *spec, const struct tj_gpu_class *cls)
{
	cJSON *list;
	int r = -ENOMEM;

	if (!cls || cls->n_tolerations == 0)
		return 0;
	list = cJSON_CreateArray();
	for (size_t i = 0; list && i < cls->n_tolerations; i++) {
		const struct tj_toleration *t = &cls->tolerations[i];
		cJSON *o = cJSON_CreateObject();

		if (tj_json_append(list, o) < 0)
			goto out;
		if ((t->key && tj_json_set_string(o, "key", t->key) < 0) ||
		    (t->operator_ && tj_json_set_string(o, "operator", t->operator_) < 0) ||
		    (t->value && tj_json_set_string(o, "value", t->value) < 0) ||
		    (t->effect && tj_json_set_string(o, "effect", t->effect) < 0))
			goto out;
	}
	r = tj_json_union_list(spec, "tolerations", list);
out:
	cJSON_Delete(list);
	return r;
}

int tj_render_place_in_class(const struct tj_render *r, cJSON *pod)
{
	cJSON *spec = tj_json_object(pod, "spec");

	if (!spec || and_into_terms(spec, r->placement) < 0)
		return -ENOMEM;
	return apply_tolerations(spec, r->gpu_class);
}

/* Removes the reserved names a runtime template may carry; ours are appended per rank. */
static void drop_reserved_env(cJSON *c, enum tj_ml_policy policy)
{
	cJSON *env = cJSON_GetObjectItemCaseSensitive(c, "env");
	cJSON *el = env ? env->child : NULL;

	while (el) {
		cJSON *next = el->next;
		const char *name = tj_json_string(el, "name");

		if (name && tj_wiring_env_reserved(policy, name))
			cJSON_Delete(cJSON_DetachItemViaPointer(env, el));
		el = next;
	}
}

static int add_port(cJSON *c)
{
	cJSON *ports = tj_json_array(c, "ports"), *p;
	const cJSON *el;

	if (!ports)
		return -ENOMEM;
	cJSON_ArrayForEach(el, ports)
	{
		if (quantity_int(cJSON_GetObjectItemCaseSensitive(el, "containerPort")) ==
		    TJ_TORCH_PORT)
			return 0;
	}
	p = cJSON_CreateObject();
	if (tj_json_append(ports, p) < 0 ||
	    tj_json_set(p, "containerPort", cJSON_CreateNumber(TJ_TORCH_PORT)) < 0 ||
	    tj_json_set_string(p, "protocol", "TCP") < 0)
		return -ENOMEM;
	return 0;
}

/* Starts the pod from the runtime's template: its labels, annotations and spec. */
static int start_pod(const struct tj_render_input *in, cJSON **ret, struct tj_problem *why)
{
	const struct tj_runtime *rt = in->runtime;
	cJSON *tmpl = NULL, *pod = NULL, *meta, *spec;
	int r = -ENOMEM;

	if (!rt->node_template)
		return tj_problem_set(why, "InvalidRuntime",
		                      "%s %s has no replicatedJob named node "
		                      "(spec.template.spec.replicatedJobs[].name); this controller "
		                      "runs the node job's pod template once per node",
		                      tj_runtime_kind_name(rt->kind), rt->name);
	if (tj_json_parse(rt->node_template, &tmpl) < 0)
		return -ENOMEM;
	pod = cJSON_CreateObject();
	if (!pod || tj_json_set_string(pod, "apiVersion", "v1") < 0 ||
	    tj_json_set_string(pod, "kind", "Pod") < 0)
		goto out;
	meta = tj_json_object(pod, "metadata");
	if (!meta || tj_json_set_string(meta, "name", "") < 0 ||
	    tj_json_set_string(meta, "namespace", in->job->namespace) < 0 ||
	    tj_json_merge_map(meta, "labels", tj_json_path(tmpl, "metadata.labels")) < 0 ||
	    tj_json_merge_map(meta, "annotations", tj_json_path(tmpl, "metadata.annotations")) <
	            0 ||
	    tj_job_metadata_apply(meta, in->job, rt, "node") < 0)
		goto out;
	spec = cJSON_DetachItemFromObjectCaseSensitive(tmpl, "spec");
	if (!cJSON_IsObject(spec)) {
		cJSON_Delete(spec);
		spec = cJSON_CreateObject();
	}
	if (tj_json_set(pod, "spec", spec) < 0)
		goto out;
	if (!tj_json_find_by(cJSON_GetObjectItemCaseSensitive(spec, "containers"), "name",
	                     "node")) {
		r = tj_problem_set(why, "InvalidRuntime",
		                   "%s %s: the node job's pod template has no container named node",
		                   tj_runtime_kind_name(rt->kind), rt->name);
		goto out;
	}
	*ret = pod;
	pod = NULL;
	r = 0;
out:
	cJSON_Delete(pod);
	cJSON_Delete(tmpl);
	return r;
}

static int set_labels(cJSON *meta, const char *job)
{
	cJSON *labels = tj_json_object(meta, "labels");

	if (!labels || tj_json_set_string(labels, TJ_LABEL_TRAINJOB, job) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_JOBSET_NAME, job) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_REPLICATED_JOB, "node") < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_JOB_INDEX, "0") < 0)
		return -ENOMEM;
	return 0;
}

int tj_render_prepare(const struct tj_render_input *in, struct tj_render **ret,
                      struct tj_problem *why)
{
	const struct tj_trainjob *job = in->job;
	struct tj_render *r = NULL;
	cJSON *pod = NULL, *spec, *node, *placement = NULL;
	enum tj_ml_policy policy = in->runtime->ml_policy;
	long gpus = 0;
	int rc, procs = 1;
	bool program;

	rc = start_pod(in, &pod, why);
	if (rc < 0)
		return rc;
	rc = tj_overrides_apply(pod, job, TJ_STEP_NODE, why);
	if (rc < 0)
		goto fail;
	spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	node = tj_json_find_by(cJSON_GetObjectItemCaseSensitive(spec, "containers"), "name",
	                       "node");
	/* Kubeflow gives the trainer's env to the step labelled trainjob-ancestor-step=trainer,
	 * and with MPI's runLauncherAsNode to the node step too: without it, MPI nodes run the
	 * runtime's sshd and get none. resourcesPerNode goes the same way (Kubeflow's
	 * runtime info, pkg/runtime/core/trainingruntime.go): without runLauncherAsNode an
	 * MPI runtime's nodes keep their template's resources and the launcher gets the
	 * TrainJob's. */
	program = tj_mpi_runs_trainer(&in->runtime->mpi, pod);
	rc = tj_render_apply_trainer(node, job, policy, program,
	                             program || in->runtime->mpi.run_launcher_as_node,
	                             program || in->runtime->mpi.run_launcher_as_node, why);
	if (rc < 0)
		goto fail;
	rc = gpus_both_ways(node, in->gpu_class, &gpus, why);
	if (rc < 0)
		goto fail;
	if (policy == TJ_ML_JAX || policy == TJ_ML_XGBOOST)
		rc = tj_wiring_procs(policy, job, gpus, &procs, why);
	else
		rc = resolve_procs(tj_or(job->num_proc_per_node,
		                         tj_or(in->runtime->num_proc_per_node, "auto")),
		                   gpus, container_cpus(node), &procs, why);
	if (rc < 0)
		goto fail;
	rc = -ENOMEM;
	drop_reserved_env(node, policy);
	if ((!in->runtime->mpi.enabled && add_port(node) < 0) ||
	    placement_term(in, &placement) < 0 || and_into_terms(spec, placement) < 0 ||
	    apply_tolerations(spec, in->gpu_class) < 0 ||
	    tj_json_set_string(spec, "restartPolicy", "Never") < 0 ||
	    tj_walltime_add_volume(spec) < 0 || tj_termination_policy_default(spec) < 0 ||
	    tj_json_set_string(spec, "subdomain", job->name) < 0 ||
	    set_labels(tj_json_object(pod, "metadata"), job->name) < 0 ||
	    tj_trainjob_add_owner(tj_json_object(pod, "metadata"), job) < 0)
		goto fail;
	if (in->trainer_status_url &&
	    tj_trainer_status_add_to_pod(spec, "node", job->namespace, job->name,
	                                 in->trainer_status_url,
	                                 in->trainer_status_ca_config_map) < 0)
		goto fail;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->job_name = strdup(job->name)) ||
	    (policy == TJ_ML_TORCH && in->runtime->env_targets &&
	     tj_json_parse(in->runtime->env_targets, &r->env_targets) < 0))
		goto fail;
	r->pod = pod;
	r->placement = placement;
	r->wiring = (struct tj_wiring){
		.policy = policy,
		.job = r->job_name,
		.num_nodes = job->num_nodes > 0 ? job->num_nodes : in->runtime->num_nodes,
		.procs = procs,
	};
	r->gpu_class = in->gpu_class;
	*ret = r;
	return 0;
fail:
	tj_render_free(r);
	cJSON_Delete(pod);
	cJSON_Delete(placement);
	return rc;
}

int tj_render_inject_env(const struct tj_render *r, cJSON *pod, const char *step, int index)
{
	const cJSON *target = tj_json_find_by(r->env_targets, "jobName", step), *name;
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");

	cJSON_ArrayForEach(name, tj_json_path(target, "containerNames"))
	{
		cJSON *c = tj_json_find_container(spec, cJSON_GetStringValue(name));

		/* The runtime's check found each in the template; an override cannot remove one. */
		if (c && tj_wiring_add_torchrun_env(tj_json_array(c, "env"), &r->wiring, index) < 0)
			return -ENOMEM;
	}
	return 0;
}

int tj_render_pod(const struct tj_render *r, int rank, int attempt, cJSON **ret)
{
	cJSON *pod = cJSON_Duplicate(r->pod, true);
	cJSON *meta, *labels, *annotations, *spec, *node, *env;
	char name[TJ_NAME_MAX], buf[32];

	if (!pod)
		return -ENOMEM;
	meta = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	node = tj_json_find_by(cJSON_GetObjectItemCaseSensitive(spec, "containers"), "name",
	                       "node");
	labels = tj_json_object(meta, "labels");
	annotations = tj_json_object(meta, "annotations");
	env = tj_json_array(node, "env");
	if (!labels || !annotations || !env)
		goto fail;
	tj_render_pod_name(r->job_name, rank, attempt, name);
	if (tj_json_set_string(meta, "name", name) < 0)
		goto fail;
	snprintf(buf, sizeof(buf), "%d", rank);
	if (tj_json_set_string(labels, TJ_LABEL_RANK, buf) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_COMPLETION_INDEX, buf) < 0 ||
	    tj_json_set_string(annotations, TJ_LABEL_COMPLETION_INDEX, buf) < 0)
		goto fail;
	snprintf(buf, sizeof(buf), "%d", attempt);
	if (tj_json_set_string(labels, TJ_LABEL_ATTEMPT, buf) < 0)
		goto fail;
	snprintf(name, sizeof(name), "%s-node-0-%d", r->job_name, rank);
	if (tj_json_set_string(spec, "hostname", name) < 0)
		goto fail;
	if (tj_wiring_add_env(env, &r->wiring, rank) < 0 ||
	    tj_render_inject_env(r, pod, "node", rank) < 0)
		goto fail;
	*ret = pod;
	return 0;
fail:
	cJSON_Delete(pod);
	return -ENOMEM;
}

int tj_render_service(const struct tj_trainjob *job, cJSON **ret)
{
	cJSON *svc = cJSON_CreateObject(), *meta, *spec, *ports, *port, *sel;

	if (!svc || tj_json_set_string(svc, "apiVersion", "v1") < 0 ||
	    tj_json_set_string(svc, "kind", "Service") < 0)
		goto fail;
	meta = tj_json_object(svc, "metadata");
	if (!meta || tj_json_set_string(meta, "name", job->name) < 0 ||
	    tj_json_set_string(meta, "namespace", job->namespace) < 0 ||
	    tj_json_set_string(tj_json_object(meta, "labels"), TJ_LABEL_TRAINJOB, job->name) < 0 ||
	    tj_trainjob_add_owner(meta, job) < 0)
		goto fail;
	spec = tj_json_object(svc, "spec");
	if (!spec || tj_json_set_string(spec, "clusterIP", "None") < 0 ||
	    tj_json_set(spec, "publishNotReadyAddresses", cJSON_CreateTrue()) < 0)
		goto fail;
	sel = tj_json_object(spec, "selector");
	ports = tj_json_array(spec, "ports");
	port = cJSON_CreateObject();
	/* As JobSet's headless Service: the pods of a replaced attempt kept for their logs lose
	 * this label, so DNS never names two pods for one rank. */
	if (!sel || !ports || tj_json_set_string(sel, TJ_LABEL_JOBSET_NAME, job->name) < 0 ||
	    tj_json_append(ports, port) < 0 || tj_json_set_string(port, "name", "torch") < 0 ||
	    tj_json_set(port, "port", cJSON_CreateNumber(TJ_TORCH_PORT)) < 0 ||
	    tj_json_set(port, "targetPort", cJSON_CreateNumber(TJ_TORCH_PORT)) < 0 ||
	    tj_json_set_string(port, "protocol", "TCP") < 0)
		goto fail;
	*ret = svc;
	return 0;
fail:
	cJSON_Delete(svc);
	return -ENOMEM;
}
