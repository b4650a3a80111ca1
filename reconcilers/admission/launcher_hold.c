#include "reconcilers/admission/launcher_hold.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/json.h"

/* A quantity: v and its unit suffix ("m" for millicores, "" for whole units). */
static int set_quantity(cJSON *obj, const char *name, int64_t v, const char *suffix)
{
	char text[32];

	snprintf(text, sizeof(text), "%" PRId64 "%s", v, suffix);
	return tj_json_set_string(obj, name, text);
}

int tj_launcher_hold_format(const cJSON *launcher, const char *node, char **ret)
{
	const char *name = tj_json_string(launcher, "metadata.name");
	struct tj_pod_resources req;
	cJSON *hold = NULL, *container, *requests = NULL;
	int r;

	if (!name || !node || tj_pod_spec_requests(tj_json_path(launcher, "spec"), &req) < 0)
		return -EINVAL;
	r = -ENOMEM;
	hold = cJSON_CreateObject();
	if (!hold || tj_json_set_string(hold, "pod", name) < 0 ||
	    tj_json_set_string(hold, "node", node) < 0)
		goto out;
	container = cJSON_CreateObject();
	if (tj_json_append(tj_json_array(hold, "containers"), container) == 0)
		requests = tj_json_object(tj_json_object(container, "resources"), "requests");
	if (!requests || (req.cpu_milli && set_quantity(requests, "cpu", req.cpu_milli, "m") < 0) ||
	    (req.memory && set_quantity(requests, "memory", req.memory, "") < 0))
		goto out;
	for (uint8_t i = 0; i < req.n_extended; i++)
		if (set_quantity(requests, req.extended[i].name, req.extended[i].value, "") < 0)
			goto out;
	r = tj_json_print(hold, TJ_LAUNCHER_HOLD_MAX, ret);
	if (r < 0 && r != -ENOMEM)
		r = -EINVAL;
out:
	cJSON_Delete(hold);
	return r;
}

static int copy_name(char *dst, size_t size, const char *src)
{
	if (!src || !*src || strlen(src) >= size)
		return -EINVAL;
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

int tj_launcher_hold_parse(const char *text, struct tj_launcher_hold *ret)
{
	struct tj_launcher_hold h = { 0 };
	struct tj_pod_resources req;
	cJSON *obj;
	int r = -EINVAL;

	if (!text || strlen(text) > TJ_LAUNCHER_HOLD_MAX)
		return -EINVAL;
	obj = cJSON_Parse(text);
	if (!cJSON_IsObject(obj))
		goto out;
	if (copy_name(h.pod, sizeof(h.pod), tj_json_string(obj, "pod")) < 0 ||
	    copy_name(h.node, sizeof(h.node), tj_json_string(obj, "node")) < 0 ||
	    tj_pod_spec_requests(obj, &req) < 0)
		goto out;
	h.cpu_milli = req.cpu_milli;
	h.memory = req.memory;
	for (uint8_t i = 0; i < req.n_extended; i++) {
		if (copy_name(h.extended[h.n_extended].name, TJ_RESOURCE_NAME_MAX,
		              req.extended[i].name) < 0)
			continue;
		h.extended[h.n_extended++].value = req.extended[i].value;
	}
	*ret = h;
	r = 0;
out:
	cJSON_Delete(obj);
	return r;
}

int64_t tj_launcher_hold_extended(const struct tj_launcher_hold *h, const char *name)
{
	for (uint8_t i = 0; name && i < h->n_extended; i++)
		if (strcmp(h->extended[i].name, name) == 0)
			return h->extended[i].value;
	return 0;
}
