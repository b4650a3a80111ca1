#include "reconcilers/render/overrides.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "reconcilers/json.h"
#include "reconcilers/render/render_step.h"
#include "reconcilers/steps.h"

/* Upserts every element of src into the list dst[key], matching elements by the string
 * member merge_key (volumes and env by name, volumeMounts by mountPath): a strategic merge
 * patch's list semantics. */
static int merge_list(cJSON *dst, const char *key, const cJSON *src, const char *merge_key)
{
	const cJSON *el;
	cJSON *list;

	if (!cJSON_IsArray(src))
		return 0;
	list = tj_json_array(dst, key);
	if (!list)
		return -ENOMEM;
	cJSON_ArrayForEach(el, src)
	{
		const char *k = tj_json_string(el, merge_key);
		cJSON *old = k ? tj_json_find_by(list, merge_key, k) : NULL;
		cJSON *copy = cJSON_Duplicate(el, true);

		if (!copy)
			return -ENOMEM;
		if (old) {
			if (!cJSON_ReplaceItemViaPointer(list, old, copy)) {
				cJSON_Delete(copy);
				return -ENOMEM;
			}
		} else if (tj_json_append(list, copy) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

/* Merges objects recursively; lists and scalars of src replace those of dst (affinity). */
static int merge_deep(cJSON *dst, const cJSON *src)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, src)
	{
		cJSON *old = cJSON_GetObjectItemCaseSensitive(dst, el->string);

		if (cJSON_IsObject(el) && cJSON_IsObject(old)) {
			if (merge_deep(old, el) < 0)
				return -ENOMEM;
		} else if (tj_json_set(dst, el->string, cJSON_Duplicate(el, true)) < 0) {
			return -ENOMEM;
		}
	}
	return 0;
}

static bool targets(const cJSON *override, const char *step)
{
	return tj_json_find_by(cJSON_GetObjectItemCaseSensitive(override, "targetJobs"), "name",
	                       step) != NULL;
}

/* The TrainJob field that sets the env of container name, for the containers whose env
 * Kubeflow keeps out of overrides; NULL for any other container. */
static const char *env_field_of(const char *name)
{
	static const char *const fields[][2] = {
		{ "node", "spec.trainer.env" },
		{ "dataset-initializer", "spec.initializer.dataset.env" },
		{ "model-initializer", "spec.initializer.model.env" },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcmp(name, fields[i][0]) == 0)
			return fields[i][1];
	return NULL;
}

static int override_containers(cJSON *spec, const char *list_key, const cJSON *src,
                               const char *path, const char *step, struct tj_problem *why)
{
	const cJSON *el;
	cJSON *list = cJSON_GetObjectItemCaseSensitive(spec, list_key);
	int i = 0;

	cJSON_ArrayForEach(el, src)
	{
		const char *name = tj_json_string(el, "name");
		cJSON *c = name ? tj_json_find_by(list, "name", name) : NULL;
		const cJSON *env = cJSON_GetObjectItemCaseSensitive(el, "env");

		if (!c)
			return tj_problem_set(
			        why, "InvalidSpec",
			        "%s.%s[%d]: the runtime's %s pod has no %s named '%s'", path,
			        list_key, i, step,
			        strcmp(list_key, "containers") == 0 ? "container"
			                                            : "init container",
			        name ? name : "");
		/* Kubeflow forbids env overrides of the trainer and initializer containers: their
		 * env belongs in spec.trainer.env and spec.initializer, where the names the
		 * controller sets are checked. */
		if (env_field_of(name) && cJSON_GetArraySize(env) > 0)
			return tj_problem_set(why, "InvalidSpec",
			                      "%s.%s[%d].env: the env of container %s is set "
			                      "through %s, not through overrides",
			                      path, list_key, i, name, env_field_of(name));
		if (merge_list(c, "env", env, "name") < 0 ||
		    merge_list(c, "volumeMounts",
		               cJSON_GetObjectItemCaseSensitive(el, "volumeMounts"),
		               "mountPath") < 0)
			return -ENOMEM;
		i++;
	}
	return 0;
}

/* Applies one override's pod-spec part (a v2.0 PodSpecOverride or a v2.1 override's spec). */
static int override_spec(cJSON *spec, const cJSON *o, const char *path, const char *step,
                         struct tj_problem *why)
{
	const char *sa = tj_json_string(o, "serviceAccountName");
	const cJSON *affinity = cJSON_GetObjectItemCaseSensitive(o, "affinity");
	const cJSON *grace = cJSON_GetObjectItemCaseSensitive(o, "terminationGracePeriodSeconds");
	int r;

	if (sa && tj_json_set_string(spec, "serviceAccountName", sa) < 0)
		return -ENOMEM;
	/* Only a runtime patch may carry it (reconcilers/render/trainjob_support.h). */
	if (cJSON_IsNumber(grace) && tj_json_set(spec, "terminationGracePeriodSeconds",
	                                         cJSON_CreateNumber(grace->valuedouble)) < 0)
		return -ENOMEM;
	if (cJSON_IsObject(affinity)) {
		cJSON *a = tj_json_object(spec, "affinity");

		if (!a || merge_deep(a, affinity) < 0)
			return -ENOMEM;
	}
	if (tj_json_merge_map(spec, "nodeSelector",
	                      cJSON_GetObjectItemCaseSensitive(o, "nodeSelector")) < 0 ||
	    tj_json_union_list(spec, "tolerations",
	                       cJSON_GetObjectItemCaseSensitive(o, "tolerations")) < 0 ||
	    merge_list(spec, "volumes", cJSON_GetObjectItemCaseSensitive(o, "volumes"), "name") <
	            0 ||
	    merge_list(spec, "schedulingGates",
	               cJSON_GetObjectItemCaseSensitive(o, "schedulingGates"), "name") < 0 ||
	    merge_list(spec, "imagePullSecrets",
	               cJSON_GetObjectItemCaseSensitive(o, "imagePullSecrets"), "name") < 0)
		return -ENOMEM;
	r = override_containers(spec, "initContainers",
	                        cJSON_GetObjectItemCaseSensitive(o, "initContainers"), path, step,
	                        why);
	if (r < 0)
		return r;
	return override_containers(spec, "containers",
	                           cJSON_GetObjectItemCaseSensitive(o, "containers"), path, step,
	                           why);
}

/* Applies a pod template patch ({metadata: {labels, annotations}, spec}) to the pod; path
 * names the patch's spec in messages. */
static int patch_pod_template(cJSON *pod, const cJSON *patch, const char *path, const char *step,
                              struct tj_problem *why)
{
	cJSON *meta = tj_json_object(pod, "metadata");
	cJSON *spec = tj_json_object(pod, "spec");
	const cJSON *from = cJSON_GetObjectItemCaseSensitive(patch, "spec");

	if (!meta || !spec ||
	    tj_json_merge_map(meta, "labels", tj_json_path(patch, "metadata.labels")) < 0 ||
	    tj_json_merge_map(meta, "annotations", tj_json_path(patch, "metadata.annotations")) < 0)
		return -ENOMEM;
	return cJSON_IsObject(from) ? override_spec(spec, from, path, step, why) : 0;
}

static int apply_overrides(cJSON *pod, const char *json, bool v21, const char *step,
                           struct tj_problem *why)
{
	cJSON *list, *o;
	int i = 0, r = 0;

	if (!json)
		return 0;
	if (tj_json_parse(json, &list) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(o, list)
	{
		char path[64];

		snprintf(path, sizeof(path), "spec.%s[%d]%s",
		         v21 ? "podTemplateOverrides" : "podSpecOverrides", i, v21 ? ".spec" : "");
		i++;
		if (!targets(o, step))
			continue;
		if (v21)
			r = patch_pod_template(pod, o, path, step, why);
		else if (!tj_json_object(pod, "spec"))
			r = -ENOMEM;
		else
			r = override_spec(tj_json_object(pod, "spec"), o, path, step, why);
		if (r < 0)
			break;
	}
	cJSON_Delete(list);
	return r;
}

/* runtimePatches (the newest Kubeflow API; the SDK's RuntimePatch option): each patch's
 * trainingRuntimeSpec.template.spec.replicatedJobs[] entry named after the step carries the
 * patch of that job's pod template in template.spec.template, applied in the order of the
 * list. The JobSet's metadata goes on every pod and the Service, a Job's on the pods of its
 * step (reconcilers/render/job_metadata.h). */
static int apply_runtime_patches(cJSON *pod, const char *json, const char *step,
                                 struct tj_problem *why)
{
	cJSON *list, *patch;
	int i = 0, r = 0;

	if (!json)
		return 0;
	if (tj_json_parse(json, &list) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(patch, list)
	{
		const cJSON *jobs =
		        tj_json_path(patch, "trainingRuntimeSpec.template.spec.replicatedJobs");
		const cJSON *job;
		int j = 0;

		cJSON_ArrayForEach(job, jobs)
		{
			char path[128];

			snprintf(path, sizeof(path),
			         "spec.runtimePatches[%d].trainingRuntimeSpec.template.spec."
			         "replicatedJobs[%d].template.spec.template.spec",
			         i, j);
			j++;
			if (strcmp(tj_or(tj_json_string(job, "name"), ""), step) != 0)
				continue;
			r = patch_pod_template(pod, tj_json_path(job, "template.spec.template"),
			                       path, step, why);
			if (r < 0)
				goto done;
		}
		i++;
	}
done:
	cJSON_Delete(list);
	return r;
}

int tj_overrides_apply(cJSON *pod, const struct tj_trainjob *job, const char *step,
                       struct tj_problem *why)
{
	int r = apply_overrides(pod, job->pod_spec_overrides, false, step, why);

	if (r == 0)
		r = apply_overrides(pod, job->pod_template_overrides, true, step, why);
	if (r == 0)
		r = apply_runtime_patches(pod, job->runtime_patches, step, why);
	return r;
}

/* "node, launcher": the names of the graph's steps, cut to fit buf. */
static void step_names(const struct tj_step_graph *g, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < g->n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
		                        g->steps[i].name);
}

/* A target (field names it) must be a replicated job of the runtime. */
static int known_step(const struct tj_runtime *rt, const char *name, const char *field,
                      struct tj_problem *why)
{
	char names[256];

	if (name && tj_step_graph_find(&rt->graph, name) < rt->graph.n)
		return 0;
	step_names(&rt->graph, names, sizeof(names));
	return tj_problem_set(why, "InvalidSpec",
	                      "%s: %s %s has no replicated job '%s' (its replicated jobs: %s); "
	                      "an override or patch must name one of them",
	                      field, tj_runtime_kind_name(rt->kind), rt->name, name ? name : "",
	                      names);
}

/* The targets of one list of the TrainJob (compact JSON, NULL if unset): targetJobs[].name
 * of an override, or replicatedJobs[].name of a runtime patch. */
static int check_targets(const char *json, const char *field, bool patches,
                         const struct tj_runtime *rt, struct tj_problem *why)
{
	cJSON *list;
	const cJSON *o, *t;
	int i = 0, r = 0;

	if (!json)
		return 0;
	if (tj_json_parse(json, &list) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(o, list)
	{
		const cJSON *entries =
		        patches ? tj_json_path(o,
		                               "trainingRuntimeSpec.template.spec.replicatedJobs")
		                : cJSON_GetObjectItemCaseSensitive(o, "targetJobs");
		int k = 0;

		cJSON_ArrayForEach(t, entries)
		{
			char path[160];

			snprintf(path, sizeof(path), "spec.%s[%d].%s[%d].name", field, i,
			         patches ? "trainingRuntimeSpec.template.spec.replicatedJobs"
			                 : "targetJobs",
			         k++);
			r = known_step(rt, tj_json_string(t, "name"), path, why);
			if (r < 0)
				goto out;
		}
		i++;
	}
out:
	cJSON_Delete(list);
	return r;
}

int tj_overrides_check(const struct tj_trainjob *job, const struct tj_runtime *rt,
                       struct tj_problem *why)
{
	const struct tj_step_graph *g = &rt->graph;
	int r;

	if (g->error || g->n == 0)
		return 0;
	r = check_targets(job->pod_spec_overrides, "podSpecOverrides", false, rt, why);
	if (r == 0)
		r = check_targets(job->pod_template_overrides, "podTemplateOverrides", false, rt,
		                  why);
	if (r == 0)
		r = check_targets(job->runtime_patches, "runtimePatches", true, rt, why);
	if (r == 0)
		r = tj_render_check_initializers(job, g, why);
	/* Each step's template takes its overrides now, so that a step whose pods come later
	 * (a launcher, a trainer after its initializers) cannot fail the job halfway. */
	for (size_t i = 0; r == 0 && i < g->n; i++) {
		cJSON *tmpl;

		if (tj_json_parse(g->steps[i].pod_template, &tmpl) < 0)
			return -ENOMEM;
		r = tj_overrides_apply(tmpl, job, g->steps[i].name, why);
		cJSON_Delete(tmpl);
	}
	return r;
}
