#include "reconcilers/render/job_metadata.h"

#include <errno.h>

#include "reconcilers/json.h"

/* Upserts the string members of src[key] into merged[key]. */
static int merge_level(cJSON *merged, const char *key, const cJSON *src)
{
	const cJSON *from = cJSON_GetObjectItemCaseSensitive(src, key);
	cJSON *to;
	const cJSON *el;

	if (!cJSON_IsObject(from))
		return 0;
	to = tj_json_object(merged, key);
	if (!to)
		return -ENOMEM;
	cJSON_ArrayForEach(el, from) if (cJSON_IsString(el) && el->string &&
	                                 tj_json_set_string(to, el->string, el->valuestring) <
	                                         0) return -ENOMEM;
	return 0;
}

/* Merges a level given as compact JSON of {labels, annotations} (NULL: none). */
static int merge_json(cJSON *merged, const char *json)
{
	cJSON *level;
	int r;

	if (!json)
		return 0;
	if (tj_json_parse(json, &level) < 0)
		return -ENOMEM;
	r = merge_level(merged, "labels", level);
	if (r == 0)
		r = merge_level(merged, "annotations", level);
	cJSON_Delete(level);
	return r;
}

/* The TrainJob's spec.labels or spec.annotations (compact JSON of one map) as key. */
static int merge_map_json(cJSON *merged, const char *key, const char *json)
{
	cJSON *map, *level;
	int r;

	if (!json)
		return 0;
	if (tj_json_parse(json, &map) < 0)
		return -ENOMEM;
	level = cJSON_CreateObject();
	if (!level || tj_json_set(level, key, map) < 0) {
		cJSON_Delete(level);
		return -ENOMEM;
	}
	r = merge_level(merged, key, level);
	cJSON_Delete(level);
	return r;
}

/* The JobSet's metadata of every patch, in order; then, for a step, the Job's metadata of
 * the patches' replicated job of that name. */
static int merge_patches(cJSON *merged, const char *json, const char *step)
{
	cJSON *list;
	const cJSON *patch;
	int r = 0;

	if (!json)
		return 0;
	if (tj_json_parse(json, &list) < 0)
		return -ENOMEM;
	for (int level = 0; level < (step ? 2 : 1) && r == 0; level++)
		cJSON_ArrayForEach(patch, list)
		{
			const cJSON *meta =
			        level == 0
			                ? tj_json_path(patch,
			                               "trainingRuntimeSpec.template.metadata")
			                : tj_json_path(
			                          tj_json_find_by(
			                                  tj_json_path(patch, "trainingRuntimeSpec."
			                                                      "template.spec."
			                                                      "replicatedJobs"),
			                                  "name", step),
			                          "template.metadata");

			r = merge_level(merged, "labels", meta);
			if (r == 0)
				r = merge_level(merged, "annotations", meta);
			if (r < 0)
				break;
		}
	cJSON_Delete(list);
	return r;
}

/* Adds the members of merged[key] that meta[key] lacks. */
static int add_missing(cJSON *meta, const char *key, const cJSON *merged)
{
	const cJSON *from = cJSON_GetObjectItemCaseSensitive(merged, key);
	cJSON *to;
	const cJSON *el;

	if (!cJSON_IsObject(from) || !from->child)
		return 0;
	to = tj_json_object(meta, key);
	if (!to)
		return -ENOMEM;
	cJSON_ArrayForEach(el, from) if (!cJSON_GetObjectItemCaseSensitive(to, el->string) &&
	                                 tj_json_set_string(to, el->string, el->valuestring) <
	                                         0) return -ENOMEM;
	return 0;
}

int tj_job_metadata_apply(cJSON *meta, const struct tj_trainjob *job,
                          const struct tj_runtime *runtime, const char *step)
{
	cJSON *merged = cJSON_CreateObject();
	int r = -ENOMEM;

	if (!merged)
		return -ENOMEM;
	if (merge_json(merged, runtime ? runtime->template_metadata : NULL) < 0 ||
	    merge_map_json(merged, "labels", job->labels) < 0 ||
	    merge_map_json(merged, "annotations", job->annotations) < 0 ||
	    merge_patches(merged, job->runtime_patches, step) < 0 ||
	    add_missing(meta, "labels", merged) < 0 || add_missing(meta, "annotations", merged) < 0)
		goto out;
	r = 0;
out:
	cJSON_Delete(merged);
	return r;
}
