#include "reconcilers/runtime_snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/json.h"

/* What of the runtime's metadata the copy keeps: who it is and the settings the controller
 * reads from labels and annotations; not its managedFields, finalizers or owners. */
static const char *const kept_metadata[] = {
	"name", "namespace", "uid", "resourceVersion", "generation", "labels", "annotations"
};

static int copy_member(cJSON *to, const cJSON *from, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(from, key);
	cJSON *dup;

	if (!item)
		return 0;
	dup = cJSON_Duplicate(item, true);
	return dup ? tj_json_set(to, key, dup) : -ENOMEM;
}

int tj_runtime_snapshot_copy(const cJSON *runtime_obj, char **ret)
{
	cJSON *copy = cJSON_CreateObject(), *meta = NULL;
	const cJSON *from_meta = cJSON_GetObjectItemCaseSensitive(runtime_obj, "metadata");
	int r = -ENOMEM;

	*ret = NULL;
	if (!copy || copy_member(copy, runtime_obj, "apiVersion") < 0 ||
	    copy_member(copy, runtime_obj, "kind") < 0 ||
	    !(meta = tj_json_object(copy, "metadata")))
		goto out;
	for (size_t i = 0; i < sizeof(kept_metadata) / sizeof(*kept_metadata); i++)
		if (copy_member(meta, from_meta, kept_metadata[i]) < 0)
			goto out;
	if (copy_member(copy, runtime_obj, "spec") < 0)
		goto out;
	r = tj_json_print(copy, TJ_RUNTIME_SNAPSHOT_MAX, ret);
out:
	cJSON_Delete(copy);
	return r;
}

int tj_runtime_snapshot_name(const struct tj_trainjob *job, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s", job->name, TJ_RUNTIME_SNAPSHOT_SUFFIX);

	return n >= 0 && (size_t)n < size ? 0 : -ENAMETOOLONG;
}

int tj_runtime_snapshot_config_map(const struct tj_trainjob *job, const struct tj_runtime *runtime,
                                   cJSON **ret)
{
	char name[TJ_NAME_MAX + sizeof(TJ_RUNTIME_SNAPSHOT_SUFFIX)];
	cJSON *cm, *meta, *labels;

	if (!runtime->snapshot)
		return -EINVAL;
	if (tj_runtime_snapshot_name(job, name, sizeof(name)) < 0)
		return -EINVAL;
	cm = cJSON_CreateObject();
	if (!cm || tj_json_set_string(cm, "apiVersion", "v1") < 0 ||
	    tj_json_set_string(cm, "kind", "ConfigMap") < 0 ||
	    !(meta = tj_json_object(cm, "metadata")) ||
	    tj_json_set_string(meta, "name", name) < 0 ||
	    tj_json_set_string(meta, "namespace", job->namespace) < 0 ||
	    !(labels = tj_json_object(meta, "labels")) ||
	    tj_json_set_string(labels, TJ_LABEL_TRAINJOB, job->name) < 0 ||
	    tj_json_set_string(labels, TJ_LABEL_RUNTIME_SNAPSHOT, "true") < 0 ||
	    tj_trainjob_add_owner(meta, job) < 0 ||
	    tj_json_set_string(tj_json_object(cm, "data"), TJ_RUNTIME_SNAPSHOT_KEY,
	                       runtime->snapshot) < 0) {
		cJSON_Delete(cm);
		return -ENOMEM;
	}
	*ret = cm;
	return 0;
}

/* The uid of obj's controller owner (ownerReferences[] with controller true), or NULL. */
static const char *controller_uid(const cJSON *obj)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, tj_json_path(obj, "metadata.ownerReferences"))
	{
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")))
			return tj_json_string(ref, "uid");
	}
	return NULL;
}

static int dup_opt(const char *s, char **ret)
{
	*ret = NULL;
	return s && !(*ret = strdup(s)) ? -ENOMEM : 0;
}

/* The copy of the ConfigMap's data into s->runtime, or s->problem saying why it cannot be
 * read. -ENOMEM only. */
static int read_copy(const cJSON *config_map, struct tj_runtime_snapshot *s)
{
	const char *text = tj_json_string(config_map, "data." TJ_RUNTIME_SNAPSHOT_KEY);
	const char *why = NULL;
	cJSON *obj = NULL;
	int r;

	if (!text)
		why = "it has no data key \"" TJ_RUNTIME_SNAPSHOT_KEY "\"";
	else if (strlen(text) > TJ_RUNTIME_SNAPSHOT_MAX)
		why = "its runtime is larger than the controller reads";
	else if (!(obj = cJSON_ParseWithLength(text, strlen(text))))
		why = "its runtime is not JSON";
	else if ((r = tj_runtime_from_json(obj, &s->runtime)) == -ENOMEM)
		goto oom;
	else if (r < 0)
		why = "its runtime is not a ClusterTrainingRuntime or TrainingRuntime with a name";
	cJSON_Delete(obj);
	return dup_opt(why, &s->problem);
oom:
	cJSON_Delete(obj);
	return -ENOMEM;
}

int tj_runtime_snapshot_from_json(const cJSON *config_map, struct tj_runtime_snapshot **ret)
{
	const char *ns = tj_json_string(config_map, "metadata.namespace");
	const char *name = tj_json_string(config_map, "metadata.name");
	struct tj_runtime_snapshot *s;

	if (!ns || !*ns || !name || !*name)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (dup_opt(ns, &s->namespace) < 0 || dup_opt(name, &s->name) < 0 ||
	    dup_opt(controller_uid(config_map), &s->owner_uid) < 0 ||
	    dup_opt(tj_json_string(config_map, "metadata.resourceVersion"), &s->resource_version) <
	            0 ||
	    read_copy(config_map, s) < 0) {
		tj_runtime_snapshot_free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

struct tj_runtime_snapshot *tj_runtime_snapshot_free(struct tj_runtime_snapshot *s)
{
	if (s) {
		free(s->namespace);
		free(s->name);
		free(s->owner_uid);
		free(s->resource_version);
		tj_runtime_free(s->runtime);
		free(s->problem);
		free(s);
	}
	return NULL;
}

int tj_runtime_snapshot_pick(const struct tj_trainjob *job, const struct tj_runtime_snapshot *s,
                             const struct tj_runtime **ret, struct tj_problem *why)
{
	enum tj_runtime_kind kind = tj_runtime_ref_kind(job);
	const struct tj_runtime *rt;

	if (!s || !s->owner_uid || !job->uid || strcmp(s->owner_uid, job->uid) != 0)
		return 0;
	if (!s->runtime)
		return tj_problem_set(
		        why, "InvalidRuntimeSnapshot",
		        "the runtime snapshot ConfigMap %s cannot be read: %s; delete it "
		        "and the job's next pods are made from the live runtime",
		        s->name, s->problem ? s->problem : "it holds no runtime");
	rt = s->runtime;
	if (rt->kind != kind || !job->runtime_name || strcmp(rt->name, job->runtime_name) != 0)
		return tj_problem_set(
		        why, "InvalidRuntimeSnapshot",
		        "the runtime snapshot ConfigMap %s holds %s %s, not the %s %s "
		        "that spec.runtimeRef names",
		        s->name, tj_runtime_kind_name(rt->kind), rt->name,
		        tj_runtime_kind_name(kind), job->runtime_name ? job->runtime_name : "");
	*ret = rt;
	return 1;
}
