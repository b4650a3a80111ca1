#include "reconcilers/render/native_gang.h"

#include <errno.h>
#include <string.h>

#include "informers/pod.h"
#include "reconcilers/json.h"

static bool can_create(const cJSON *resources, const char *name)
{
	const cJSON *res = tj_json_find_by(resources, "name", name);
	const cJSON *verbs = cJSON_GetObjectItemCaseSensitive(res, "verbs"), *verb;

	cJSON_ArrayForEach(verb, verbs) if (cJSON_IsString(verb) &&
	                                    strcmp(verb->valuestring, "create") == 0) return true;
	return false;
}

bool tj_native_gang_served(const cJSON *resource_list)
{
	const char *gv = tj_json_string(resource_list, "groupVersion");

	if (!gv || strcmp(gv, TJ_NATIVE_GANG_GROUP "/" TJ_NATIVE_GANG_VERSION) != 0)
		return false;
	const cJSON *resources = cJSON_GetObjectItemCaseSensitive(resource_list, "resources");

	return cJSON_IsArray(resources) && can_create(resources, "workloads") &&
	       can_create(resources, "podgroups");
}

/* apiVersion, kind and the metadata every child of the job carries: its name, namespace,
 * the TrainJob label and the owner. */
static cJSON *new_child(const struct tj_trainjob *job, const char *kind)
{
	cJSON *obj = cJSON_CreateObject(), *meta;

	if (!obj ||
	    tj_json_set_string(obj, "apiVersion", TJ_NATIVE_GANG_GROUP "/" TJ_NATIVE_GANG_VERSION) <
	            0 ||
	    tj_json_set_string(obj, "kind", kind) < 0 ||
	    !(meta = tj_json_object(obj, "metadata")) ||
	    tj_json_set_string(meta, "name", job->name) < 0 ||
	    tj_json_set_string(meta, "namespace", job->namespace) < 0 ||
	    tj_json_set_string(tj_json_object(meta, "labels"), TJ_LABEL_TRAINJOB, job->name) < 0 ||
	    tj_trainjob_add_owner(meta, job) < 0) {
		cJSON_Delete(obj);
		return NULL;
	}
	return obj;
}

/* spec.schedulingPolicy (of a Workload's template, or of a PodGroup): a gang of n. */
static int set_gang(cJSON *parent, int num_nodes)
{
	cJSON *gang = tj_json_object(tj_json_object(parent, "schedulingPolicy"), "gang");

	return gang ? tj_json_set(gang, "minCount", cJSON_CreateNumber(num_nodes)) : -ENOMEM;
}

int tj_native_gang_workload(const struct tj_trainjob *job, int num_nodes, cJSON **ret)
{
	cJSON *obj, *spec, *ref, *templates, *tmpl;

	if (num_nodes < 1)
		return -EINVAL;
	if (!(obj = new_child(job, "Workload")))
		return -ENOMEM;
	spec = tj_json_object(obj, "spec");
	ref = tj_json_object(spec, "controllerRef");
	templates = tj_json_array(spec, "podGroupTemplates");
	tmpl = cJSON_CreateObject();
	if (!ref || !templates || !tmpl || !cJSON_AddItemToArray(templates, tmpl)) {
		cJSON_Delete(tmpl);
		goto fail;
	}
	if (tj_json_set_string(ref, "apiGroup", "trainer.kubeflow.org") < 0 ||
	    tj_json_set_string(ref, "kind", "TrainJob") < 0 ||
	    tj_json_set_string(ref, "name", job->name) < 0 ||
	    tj_json_set_string(tmpl, "name", TJ_NATIVE_GANG_TEMPLATE) < 0 ||
	    set_gang(tmpl, num_nodes) < 0)
		goto fail;
	*ret = obj;
	return 0;
fail:
	cJSON_Delete(obj);
	return -ENOMEM;
}

int tj_native_gang_pod_group(const struct tj_trainjob *job, int num_nodes, cJSON **ret)
{
	cJSON *obj, *spec, *ref;

	if (num_nodes < 1)
		return -EINVAL;
	if (!(obj = new_child(job, "PodGroup")))
		return -ENOMEM;
	spec = tj_json_object(obj, "spec");
	ref = tj_json_object(tj_json_object(spec, "podGroupTemplateRef"), "workload");
	if (!ref || tj_json_set_string(ref, "workloadName", job->name) < 0 ||
	    tj_json_set_string(ref, "podGroupTemplateName", TJ_NATIVE_GANG_TEMPLATE) < 0 ||
	    set_gang(spec, num_nodes) < 0) {
		cJSON_Delete(obj);
		return -ENOMEM;
	}
	*ret = obj;
	return 0;
}

int tj_native_gang_attach(cJSON *pod, const struct tj_trainjob *job)
{
	return tj_json_set_string(tj_json_object(tj_json_object(pod, "spec"), "schedulingGroup"),
	                          "podGroupName", job->name);
}
