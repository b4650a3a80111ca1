#include "reconcilers/render/trainjob_support.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "reconcilers/json.h"
#include "reconcilers/runtime_support.h"

#define PATH_MAX_LEN 256

static const char *const pod_spec_known[] = {
	"serviceAccountName", "nodeSelector",     "affinity",       "tolerations", "volumes",
	"schedulingGates",    "imagePullSecrets", "initContainers", "containers",  NULL
};
static const char *const container_known[] = { "name", "env", "volumeMounts", NULL };
static const char *const metadata_known[] = { "labels", "annotations", NULL };

static bool known(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static int refuse(struct tj_problem *why, const char *path, const char *key)
{
	tj_problem_set(why, "InvalidSpec",
	               "%s.%s is not supported by this controller: the field is not applied to "
	               "the pods; remove it (crds/README.md lists what is supported)",
	               path, key ? key : "");
	return -EOPNOTSUPP;
}

/* Every member of obj is in list; path names obj. */
static int check_members(const cJSON *obj, const char *const *list, const char *path,
                         struct tj_problem *why)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, obj) if (!known(el->string, list)) return refuse(why, path,
	                                                                        el->string);
	return 0;
}

/* A pod spec patch; extra names the member allowed beside the pod spec's (the v2.0
 * podSpecOverride's targetJobs, a runtime patch's grace period), or NULL. */
static int check_pod_spec(const cJSON *spec, const char *path, const char *extra,
                          struct tj_problem *why)
{
	static const char *const lists[] = { "containers", "initContainers" };
	const cJSON *el;
	/* Room for path (of at most PATH_MAX_LEN) and ".initContainers[<int>]". */
	char sub[PATH_MAX_LEN + 32];

	cJSON_ArrayForEach(el, spec) if (!known(el->string, pod_spec_known) &&
	                                 !(extra && el->string &&
	                                   strcmp(el->string, extra) ==
	                                           0)) return refuse(why, path, el->string);
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		const cJSON *c;
		int i = 0;

		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, lists[l]))
		{
			snprintf(sub, sizeof(sub), "%s.%s[%d]", path, lists[l], i++);
			if (check_members(c, container_known, sub, why) < 0)
				return -EOPNOTSUPP;
		}
	}
	return 0;
}

/* A runtime patch's pod spec may also set the pods' grace period (Kubeflow v2.3): a whole
 * number of seconds, 0 or more. */
#define GRACE     "terminationGracePeriodSeconds"
#define GRACE_MAX 2147483647.0

static int check_grace(const cJSON *spec, const char *path, struct tj_problem *why)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(spec, GRACE);

	if (!g || (cJSON_IsNumber(g) && g->valuedouble >= 0 && g->valuedouble <= GRACE_MAX &&
	           g->valuedouble == (double)(int64_t)g->valuedouble))
		return 0;
	tj_problem_set(why, "InvalidSpec",
	               "%s." GRACE " must be a whole number of seconds from 0 to %.0f", path,
	               GRACE_MAX);
	return -EOPNOTSUPP;
}

/* A patch's Job spec: its pod template, and the Job fields whose values are this
 * controller's behaviour, with the same fate as in a runtime
 * (tj_runtime_job_field_check). */
static int check_job_spec(const cJSON *spec, const char *path, struct tj_problem *why)
{
	const cJSON *el;
	char field[PATH_MAX_LEN + 64];
	int r;

	cJSON_ArrayForEach(el, spec)
	{
		if (!el->string || strcmp(el->string, "template") == 0 || cJSON_IsNull(el))
			continue;
		snprintf(field, sizeof(field), "%s.%s", path, el->string);
		r = tj_runtime_job_field_check(el, field, "InvalidSpec", why);
		if (r == -ENOENT)
			return refuse(why, path, el->string);
		if (r < 0)
			return r;
	}
	return 0;
}

/* runtimePatches[i].trainingRuntimeSpec: only the template, and in it the JobSet's
 * metadata and the replicated jobs' Job metadata and pod templates (whose spec may set the
 * grace period too). */
static int check_patch(const cJSON *rs, const char *path, struct tj_problem *why)
{
	static const char *const rs_known[] = { "template", NULL };
	static const char *const tmpl_known[] = { "metadata", "spec", NULL };
	static const char *const js_known[] = { "replicatedJobs", NULL };
	static const char *const rj_known[] = { "name", "template", NULL };
	const cJSON *rj;
	char sub[PATH_MAX_LEN];
	int i = 0;

	if (check_members(rs, rs_known, path, why) < 0)
		return -EOPNOTSUPP;
	snprintf(sub, sizeof(sub), "%s.template", path);
	if (check_members(tj_json_path(rs, "template"), tmpl_known, sub, why) < 0)
		return -EOPNOTSUPP;
	snprintf(sub, sizeof(sub), "%s.template.metadata", path);
	if (check_members(tj_json_path(rs, "template.metadata"), metadata_known, sub, why) < 0)
		return -EOPNOTSUPP;
	snprintf(sub, sizeof(sub), "%s.template.spec", path);
	if (check_members(tj_json_path(rs, "template.spec"), js_known, sub, why) < 0)
		return -EOPNOTSUPP;
	cJSON_ArrayForEach(rj, tj_json_path(rs, "template.spec.replicatedJobs"))
	{
		char base[PATH_MAX_LEN - 64];

		snprintf(base, sizeof(base), "%s.template.spec.replicatedJobs[%d]", path, i++);
		if (check_members(rj, rj_known, base, why) < 0)
			return -EOPNOTSUPP;
		snprintf(sub, sizeof(sub), "%s.template", base);
		if (check_members(tj_json_path(rj, "template"), tmpl_known, sub, why) < 0)
			return -EOPNOTSUPP;
		snprintf(sub, sizeof(sub), "%s.template.metadata", base);
		if (check_members(tj_json_path(rj, "template.metadata"), metadata_known, sub, why) <
		    0)
			return -EOPNOTSUPP;
		snprintf(sub, sizeof(sub), "%s.template.spec", base);
		if (check_job_spec(tj_json_path(rj, "template.spec"), sub, why) < 0)
			return -EOPNOTSUPP;
		snprintf(sub, sizeof(sub), "%s.template.spec.template", base);
		if (check_members(tj_json_path(rj, "template.spec.template"), tmpl_known, sub,
		                  why) < 0)
			return -EOPNOTSUPP;
		snprintf(sub, sizeof(sub), "%s.template.spec.template.spec", base);
		if (check_pod_spec(tj_json_path(rj, "template.spec.template.spec"), sub, GRACE,
		                   why) < 0 ||
		    check_grace(tj_json_path(rj, "template.spec.template.spec"), sub, why) < 0)
			return -EOPNOTSUPP;
	}
	return 0;
}

/* One list of the TrainJob (compact JSON, NULL if unset), each item checked by kind. */
static int check_list(const char *json, const char *field, int kind, struct tj_problem *why)
{
	cJSON *list;
	const cJSON *el;
	char path[PATH_MAX_LEN];
	int i = 0, r = 0;

	if (!json)
		return 0;
	if (tj_json_parse(json, &list) < 0)
		return -ENOMEM;
	cJSON_ArrayForEach(el, list)
	{
		snprintf(path, sizeof(path), "spec.%s[%d]", field, i++);
		if (kind == 0) {
			strncat(path, ".spec", sizeof(path) - strlen(path) - 1);
			r = check_pod_spec(cJSON_GetObjectItemCaseSensitive(el, "spec"), path, NULL,
			                   why);
		} else if (kind == 1) {
			r = check_pod_spec(el, path, "targetJobs", why);
		} else {
			strncat(path, ".trainingRuntimeSpec", sizeof(path) - strlen(path) - 1);
			r = check_patch(cJSON_GetObjectItemCaseSensitive(el, "trainingRuntimeSpec"),
			                path, why);
		}
		if (r < 0)
			break;
	}
	cJSON_Delete(list);
	return r;
}

int tj_trainjob_support_check(const struct tj_trainjob *job, struct tj_problem *why)
{
	int r = check_list(job->pod_template_overrides, "podTemplateOverrides", 0, why);

	if (r == 0)
		r = check_list(job->pod_spec_overrides, "podSpecOverrides", 1, why);
	if (r == 0)
		r = check_list(job->runtime_patches, "runtimePatches", 2, why);
	return r;
}
