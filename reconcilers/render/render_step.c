#include "reconcilers/render/render_step.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "informers/pod.h"
#include "reconcilers/json.h"
#include "reconcilers/render/overrides.h"
#include "reconcilers/render/render.h"
#include "reconcilers/render/termination.h"

/* spec.initializer.<kind> into the container of that step (see render_step.h). */
static int apply_initializer(cJSON *c, const cJSON *src, const char *kind, struct tj_problem *why)
{
	const cJSON *uri = cJSON_GetObjectItemCaseSensitive(src, "storageUri");
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(src, "env");
	const char *secret = tj_json_string(src, "secretRef.name");
	const cJSON *el;
	cJSON *env, *e;
	int i = 0;

	env = tj_json_array(c, "env");
	if (!env)
		return -ENOMEM;
	if (cJSON_IsString(uri)) {
		e = cJSON_CreateObject();
		if (!e || tj_json_set_string(e, "name", "STORAGE_URI") < 0 ||
		    tj_json_set_string(e, "value", uri->valuestring) < 0) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
		if (tj_json_upsert_named(env, e) < 0)
			return -ENOMEM;
	}
	cJSON_ArrayForEach(el, list)
	{
		if (!tj_json_string(el, "name"))
			return tj_problem_set(why, "InvalidSpec",
			                      "spec.initializer.%s.env[%d].name: must be a string",
			                      kind, i);
		if (tj_json_upsert_named(env, cJSON_Duplicate(el, true)) < 0)
			return -ENOMEM;
		i++;
	}
	if (secret) {
		cJSON *from = tj_json_array(c, "envFrom");

		e = cJSON_CreateObject();
		if (!from || !e ||
		    tj_json_set_string(tj_json_object(e, "secretRef"), "name", secret) < 0 ||
		    !cJSON_AddItemToArray(from, e)) {
			cJSON_Delete(e);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Each source of spec.initializer that is set (dataset, model) with the step that takes it,
 * to fn, until fn returns non-zero. */
static int each_initializer(const struct tj_trainjob *job,
                            int (*fn)(const cJSON *src, const char *kind, const char *step,
                                      void *ctx),
                            void *ctx)
{
	static const char *const kinds[][2] = { { "dataset", "dataset-initializer" },
		                                { "model", "model-initializer" } };
	cJSON *init;
	int r = 0;

	if (!job->initializer)
		return 0;
	if (tj_json_parse(job->initializer, &init) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < 2 && r == 0; k++) {
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(init, kinds[k][0]);

		if (cJSON_IsObject(src))
			r = fn(src, kinds[k][0], kinds[k][1], ctx);
	}
	cJSON_Delete(init);
	return r;
}

struct initializer_pod {
	cJSON *spec;
	const struct tj_step *step;
	struct tj_problem *why;
};

static int initialize_pod(const cJSON *src, const char *kind, const char *step, void *ctx)
{
	struct initializer_pod *ip = ctx;
	cJSON *c;

	if (strcmp(ip->step->ancestor, step) != 0)
		return 0;
	c = tj_json_find_by(cJSON_GetObjectItemCaseSensitive(ip->spec, "containers"), "name", step);
	return c ? apply_initializer(c, src, kind, ip->why) : 0;
}

static int initializers(cJSON *spec, const struct tj_trainjob *job, const struct tj_step *step,
                        struct tj_problem *why)
{
	struct initializer_pod ip = { spec, step, why };

	return each_initializer(job, initialize_pod, &ip);
}

struct initializer_check {
	const struct tj_step_graph *g;
	struct tj_problem *why;
};

/* A source whose step the runtime lacks, or whose step lacks the container of its name, is
 * refused: it would reach no pod. */
static int check_initializer(const cJSON *src, const char *kind, const char *step, void *ctx)
{
	struct initializer_check *ic = ctx;
	bool found = false;

	(void)src;
	for (size_t i = 0; i < ic->g->n && !found; i++) {
		cJSON *tmpl;

		if (strcmp(ic->g->steps[i].ancestor, step) != 0)
			continue;
		if (tj_json_parse(ic->g->steps[i].pod_template, &tmpl) < 0)
			return -ENOMEM;
		found = tj_json_find_by(tj_json_path(tmpl, "spec.containers"), "name", step);
		cJSON_Delete(tmpl);
	}
	if (found)
		return 0;
	return tj_problem_set(ic->why, "InvalidSpec",
	                      "spec.initializer.%s: the runtime has no %s step (a replicated job "
	                      "labelled " TJ_LABEL_ANCESTOR ": %s with a container %s) to give it "
	                      "to; remove it or choose a runtime that has one",
	                      kind, step, step, step);
}

int tj_render_check_initializers(const struct tj_trainjob *job, const struct tj_step_graph *g,
                                 struct tj_problem *why)
{
	struct initializer_check ic = { g, why };

	return each_initializer(job, check_initializer, &ic);
}

static int set_labels(cJSON *meta, const struct tj_trainjob *job, const struct tj_step *step,
                      int slot, int attempt)
{
	cJSON *labels = tj_json_object(meta, "labels");
	cJSON *annotations = tj_json_object(meta, "annotations");
	char job_index[16], index[16], att[16];

	snprintf(job_index, sizeof(job_index), "%d", slot / step->pods_per_job);
	snprintf(index, sizeof(index), "%d", slot % step->pods_per_job);
	snprintf(att, sizeof(att), "%d", attempt);
	if (!labels || !annotations ||
	    tj_json_set_string(labels, TJ_LABEL_TRAINJOB, job->name) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_JOBSET_NAME, job->name) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_REPLICATED_JOB, step->name) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_JOB_INDEX, job_index) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_COMPLETION_INDEX, index) < 0 ||
	    tj_json_set_string(annotations, TJ_LABEL_COMPLETION_INDEX, index) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_ATTEMPT, att) < 0)
		return -ENOMEM;
	return 0;
}

int tj_render_step_pod(const struct tj_trainjob *job, const struct tj_step *step, int slot,
                       int attempt, cJSON **ret, struct tj_problem *why)
{
	cJSON *tmpl = NULL, *pod = NULL, *meta, *spec;
	char name[TJ_NAME_MAX];
	int r = -ENOMEM;

	if (tj_json_parse(step->pod_template, &tmpl) < 0)
		return -ENOMEM;
	spec = cJSON_DetachItemFromObjectCaseSensitive(tmpl, "spec");
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(spec, "containers")) == 0) {
		r = tj_problem_set(why, "InvalidRuntime",
		                   "replicated job %s: its pod template has no containers",
		                   step->name);
		cJSON_Delete(spec);
		goto out;
	}
	meta = cJSON_DetachItemFromObjectCaseSensitive(tmpl, "metadata");
	if (!cJSON_IsObject(meta)) {
		cJSON_Delete(meta);
		meta = cJSON_CreateObject();
	}
	pod = cJSON_CreateObject();
	if (!pod || tj_json_set_string(pod, "apiVersion", "v1") < 0 ||
	    tj_json_set_string(pod, "kind", "Pod") < 0) {
		cJSON_Delete(spec);
		cJSON_Delete(meta);
		goto out;
	}
	if (tj_json_set(pod, "metadata", meta) < 0) {
		cJSON_Delete(spec);
		goto out;
	}
	if (tj_json_set(pod, "spec", spec) < 0)
		goto out;
	/* Kubeflow merges the overrides into the template before its plugins run: the names,
	 * labels and initializer env below win over them. */
	r = tj_overrides_apply(pod, job, step->name, why);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	tj_step_pod_name(job->name, step, slot, attempt, name);
	if (tj_json_set_string(meta, "name", name) < 0 ||
	    tj_json_set_string(meta, "namespace", job->namespace) < 0 ||
	    set_labels(meta, job, step, slot, attempt) < 0 || tj_trainjob_add_owner(meta, job) < 0)
		goto out;
	tj_step_hostname(job->name, step, slot, name);
	if (tj_json_set_string(spec, "hostname", name) < 0 ||
	    tj_json_set_string(spec, "subdomain", job->name) < 0 ||
	    tj_json_set_string(spec, "restartPolicy", "Never") < 0 ||
	    tj_termination_policy_default(spec) < 0)
		goto out;
	r = initializers(spec, job, step, why);
	if (r < 0)
		goto out;
	*ret = pod;
	pod = NULL;
out:
	cJSON_Delete(pod);
	cJSON_Delete(tmpl);
	return r;
}

static bool mounts(const cJSON *spec, const char *list, const char *volume)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, list))
	{
		if (tj_json_find_by(cJSON_GetObjectItemCaseSensitive(c, "volumeMounts"), "name",
		                    volume))
			return true;
	}
	return false;
}

int tj_render_mount_claims(cJSON *pod, const char *claims, const char *job)
{
	cJSON *list, *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const cJSON *t;
	int r = 0;

	if (!claims)
		return 0;
	if (tj_json_parse(claims, &list) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(t, list)
	{
		const char *name = tj_json_string(t, "metadata.name");
		char claim[TJ_NAME_MAX];
		cJSON *volumes, *v;

		if (!name ||
		    (!mounts(spec, "containers", name) && !mounts(spec, "initContainers", name)))
			continue;
		volumes = tj_json_array(spec, "volumes");
		if (!volumes) {
			r = -ENOMEM;
			break;
		}
		if (tj_json_find_by(volumes, "name", name))
			continue;
		snprintf(claim, sizeof(claim), "%s-%s", name, job);
		v = cJSON_CreateObject();
		if (!v || !cJSON_AddItemToArray(volumes, v)) {
			cJSON_Delete(v);
			r = -ENOMEM;
			break;
		}
		if (tj_json_set_string(v, "name", name) < 0 ||
		    tj_json_set_string(tj_json_object(v, "persistentVolumeClaim"), "claimName",
		                       claim) < 0) {
			r = -ENOMEM;
			break;
		}
	}
	cJSON_Delete(list);
	return r;
}

static int claim_of(const struct tj_trainjob *job, const cJSON *t, cJSON **ret)
{
	cJSON *pvc = cJSON_CreateObject(), *meta;
	const cJSON *el;
	char name[TJ_NAME_MAX];

	if (!pvc || tj_json_set_string(pvc, "apiVersion", "v1") < 0 ||
	    tj_json_set_string(pvc, "kind", "PersistentVolumeClaim") < 0)
		goto fail;
	meta = tj_json_object(pvc, "metadata");
	snprintf(name, sizeof(name), "%s-%s", tj_json_string(t, "metadata.name"), job->name);
	if (!meta || tj_json_set_string(meta, "name", name) < 0 ||
	    tj_json_set_string(meta, "namespace", job->namespace) < 0)
		goto fail;
	/* The template's own labels and annotations, then the job's label. */
	cJSON_ArrayForEach(el, tj_json_path(t, "metadata.labels"))
	{
		if (cJSON_IsString(el) && tj_json_set_string(tj_json_object(meta, "labels"),
		                                             el->string, el->valuestring) < 0)
			goto fail;
	}
	cJSON_ArrayForEach(el, tj_json_path(t, "metadata.annotations"))
	{
		if (cJSON_IsString(el) && tj_json_set_string(tj_json_object(meta, "annotations"),
		                                             el->string, el->valuestring) < 0)
			goto fail;
	}
	/* Without an owner a retained PVC outlives the TrainJob, as JobSet's whenDeleted: Retain
	 * leaves it when the JobSet goes. */
	if (tj_json_set_string(tj_json_object(meta, "labels"), TJ_LABEL_TRAINJOB, job->name) < 0 ||
	    (!cJSON_IsTrue(tj_json_path(t, TJ_CLAIM_RETAIN)) &&
	     tj_trainjob_add_owner(meta, job) < 0) ||
	    tj_json_set(pvc, "spec",
	                cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(t, "spec"), true)) < 0)
		goto fail;
	*ret = pvc;
	return 0;
fail:
	cJSON_Delete(pvc);
	return -ENOMEM;
}

int tj_render_claims(const struct tj_trainjob *job, const char *claims, cJSON **ret,
                     struct tj_problem *why)
{
	cJSON *list = NULL, *out = cJSON_CreateArray();
	const cJSON *t;
	int i = 0, r = 0;

	if (!out)
		return -ENOMEM;
	if (claims && tj_json_parse(claims, &list) < 0) {
		cJSON_Delete(out);
		return -ENOMEM;
	}
	cJSON_ArrayForEach(t, list)
	{
		const char *name = tj_json_string(t, "metadata.name");
		cJSON *pvc;

		if (!name || !*name || strlen(name) + strlen(job->name) + 2 > TJ_NAME_MAX) {
			r = tj_problem_set(
			        why, "InvalidRuntime",
			        "spec.template.spec.volumeClaimPolicies: template %d needs "
			        "a metadata.name (the PVC is <name>-%s)",
			        i, job->name);
			break;
		}
		if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t, "spec"))) {
			r = tj_problem_set(
			        why, "InvalidRuntime",
			        "spec.template.spec.volumeClaimPolicies: template %s has "
			        "no spec",
			        name);
			break;
		}
		r = claim_of(job, t, &pvc);
		if (r < 0)
			break;
		if (!cJSON_AddItemToArray(out, pvc)) {
			cJSON_Delete(pvc);
			r = -ENOMEM;
			break;
		}
		i++;
	}
	cJSON_Delete(list);
	if (r < 0) {
		cJSON_Delete(out);
		return r;
	}
	*ret = out;
	return 0;
}

static bool gpu_name(const char *name, const char *resource)
{
	return strstr(name, "gpu") || (resource && strcmp(name, resource) == 0);
}

bool tj_render_pod_wants_gpus(const cJSON *pod, const char *resource)
{
	static const char *const lists[] = { "spec.containers", "spec.initContainers" };

	for (size_t l = 0; l < 2; l++) {
		const cJSON *c;

		cJSON_ArrayForEach(c, tj_json_path(pod, lists[l]))
		{
			const cJSON *el;

			cJSON_ArrayForEach(el, tj_json_path(c, "resources.limits"))
			{
				if (gpu_name(el->string, resource))
					return true;
			}
			cJSON_ArrayForEach(el, tj_json_path(c, "resources.requests"))
			{
				if (gpu_name(el->string, resource))
					return true;
			}
		}
	}
	return false;
}
