#include "informers/projection.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

const cJSON *tj_field_path(const cJSON *obj, const char *const *keys)
{
	for (; *keys; keys++) {
		if (!cJSON_IsObject(obj))
			return NULL;
		obj = cJSON_GetObjectItemCaseSensitive(obj, *keys);
	}
	return obj;
}

const char *tj_field_string_path(const cJSON *obj, const char *const *keys)
{
	obj = tj_field_path(obj, keys);
	return cJSON_IsString(obj) ? obj->valuestring : NULL;
}

bool tj_field_bool(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return false;
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

int tj_parse_index(const char *s, int *ret)
{
	long v = 0;

	if (!s || !*s || (s[0] == '0' && s[1] != '\0'))
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return -EINVAL;
	}
	*ret = (int)v;
	return 0;
}
