#include "informers/priority_class.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "informers/projection.h"

int tj_priority_class_from_json(const cJSON *obj, struct tj_priority_class **ret)
{
	const char *name = tj_field_string(obj, "metadata", "name");
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(obj, "value");
	struct tj_priority_class *pc;
	size_t len;

	int64_t v;

	if (!name || !*name || !cJSON_IsNumber(value) ||
	    !tj_double_to_int64(value->valuedouble, TJ_PRIORITY_MIN, TJ_PRIORITY_MAX, &v))
		return -EINVAL;
	len = strlen(name);
	pc = malloc(sizeof(*pc) + len + 1);
	if (!pc)
		return -ENOMEM;
	pc->name = (char *)(pc + 1);
	memcpy(pc->name, name, len + 1);
	pc->value = (int32_t)v;
	pc->global_default = tj_field_bool(obj, "globalDefault");
	*ret = pc;
	return 0;
}

struct tj_priority_class *tj_priority_class_free(struct tj_priority_class *pc)
{
	free(pc);
	return NULL;
}

static void priority_class_free(void *obj)
{
	tj_priority_class_free(obj);
}

static int priority_class_key(const void *obj, char *buf, size_t size)
{
	return tj_store_key_of(buf, size, NULL, ((const struct tj_priority_class *)obj)->name);
}

const struct tj_store_ops tj_priority_class_store_ops = {
	.free = priority_class_free,
	.key = priority_class_key,
};

int tj_priority_class_project(const cJSON *obj, void **ret)
{
	struct tj_priority_class *pc;
	int r = tj_priority_class_from_json(obj, &pc);

	if (r == 0)
		*ret = pc;
	return r;
}

int32_t tj_priority_of(const struct tj_store *classes, const char *name)
{
	const struct tj_priority_class *pc;
	struct tj_store_iter it;

	if (!classes)
		return 0;
	if (name && *name) {
		pc = tj_store_get(classes, name);
		return pc ? pc->value : 0;
	}
	/* At most one class is the global default; the API server enforces it. */
	tj_store_iter_init(classes, &it);
	while ((pc = tj_store_iter_next(&it)))
		if (pc->global_default)
			return pc->value;
	return 0;
}
