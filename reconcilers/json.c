#include "reconcilers/json.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const cJSON *tj_json_path(const cJSON *obj, const char *path)
{
	const char *p = path;

	while (obj && *p) {
		const char *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		char key[128];
		const cJSON *next = NULL;

		if (!cJSON_IsObject(obj) || len >= sizeof(key))
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		next = cJSON_GetObjectItemCaseSensitive(obj, key);
		obj = next;
		p += len + (dot ? 1 : 0);
	}
	return obj;
}

const char *tj_json_string(const cJSON *obj, const char *path)
{
	const cJSON *item = tj_json_path(obj, path);

	return cJSON_IsString(item) ? item->valuestring : NULL;
}

int tj_json_print(const cJSON *item, size_t max, char **ret)
{
	char *text = cJSON_PrintUnformatted(item);

	if (!text)
		return -ENOMEM;
	if (strlen(text) > max) {
		cJSON_free(text);
		return -E2BIG;
	}
	*ret = text;
	return 0;
}

int tj_json_parse(const char *text, cJSON **ret)
{
	cJSON *item = cJSON_Parse(text);

	if (!item)
		return -EINVAL;
	*ret = item;
	return 0;
}

int tj_json_set(cJSON *obj, const char *key, cJSON *item)
{
	if (!item)
		return -ENOMEM;
	/* Replacing in place keeps the member's position, so printed objects read naturally. */
	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		return cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item) ? 0 : -ENOMEM;
	if (!cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return -ENOMEM;
	}
	return 0;
}

int tj_json_set_string(cJSON *obj, const char *key, const char *value)
{
	return tj_json_set(obj, key, cJSON_CreateString(value));
}

static cJSON *json_member(cJSON *obj, const char *key, cJSON_bool (*is)(const cJSON *),
                          cJSON *(*create)(void))
{
	cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (is(item))
		return item;
	item = create();
	if (tj_json_set(obj, key, item) < 0)
		return NULL;
	return item;
}

cJSON *tj_json_object(cJSON *obj, const char *key)
{
	return json_member(obj, key, cJSON_IsObject, cJSON_CreateObject);
}

cJSON *tj_json_array(cJSON *obj, const char *key)
{
	return json_member(obj, key, cJSON_IsArray, cJSON_CreateArray);
}

int tj_json_append(cJSON *array, cJSON *item)
{
	if (!item)
		return -ENOMEM;
	if (!cJSON_AddItemToArray(array, item)) {
		cJSON_Delete(item);
		return -ENOMEM;
	}
	return 0;
}

int tj_json_upsert_named(cJSON *array, cJSON *item)
{
	const char *name = item ? tj_json_string(item, "name") : NULL;

	return tj_json_put_by(array, "name", name ? name : "", item);
}

cJSON *tj_json_find_container(const cJSON *spec, const char *name)
{
	cJSON *c;

	if (!name)
		return NULL;
	c = tj_json_find_by(tj_json_path(spec, "containers"), "name", name);
	return c ? c : tj_json_find_by(tj_json_path(spec, "initContainers"), "name", name);
}

cJSON *tj_json_find_by(const cJSON *array, const char *key, const char *value)
{
	cJSON *el;

	cJSON_ArrayForEach(el, array)
	{
		const char *v = tj_json_string(el, key);

		if (v && strcmp(v, value) == 0)
			return el;
	}
	return NULL;
}

int tj_json_put_by(cJSON *array, const char *key, const char *value, cJSON *item)
{
	cJSON *old = tj_json_find_by(array, key, value);

	if (item && cJSON_IsArray(array) &&
	    (old ? cJSON_ReplaceItemViaPointer(array, old, item)
	         : cJSON_AddItemToArray(array, item)))
		return 0;
	cJSON_Delete(item);
	return -ENOMEM;
}

int tj_json_merge_map(cJSON *dst, const char *key, const cJSON *src)
{
	const cJSON *el;
	cJSON *map;

	if (!cJSON_IsObject(src))
		return 0;
	map = tj_json_object(dst, key);
	if (!map)
		return -ENOMEM;
	cJSON_ArrayForEach(el, src)
	{
		if (tj_json_set(map, el->string, cJSON_Duplicate(el, true)) < 0)
			return -ENOMEM;
	}
	return 0;
}

int tj_json_union_list(cJSON *dst, const char *key, const cJSON *src)
{
	const cJSON *el;
	cJSON *list;

	if (!cJSON_IsArray(src) || cJSON_GetArraySize(src) == 0)
		return 0;
	list = tj_json_array(dst, key);
	if (!list)
		return -ENOMEM;
	cJSON_ArrayForEach(el, src)
	{
		const cJSON *have;
		bool found = false;

		cJSON_ArrayForEach(have, list)
		{
			if (cJSON_Compare(have, el, true))
				found = true;
		}
		if (!found && tj_json_append(list, cJSON_Duplicate(el, true)) < 0)
			return -ENOMEM;
	}
	return 0;
}

void tj_time_format(int64_t t, char buf[static 21])
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
