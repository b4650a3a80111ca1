/* libFuzzer target: the pod, node, PriorityClass, ResourceQuota and Kueue Workload projections
 * (and the RFC 3339 parser they use) on arbitrary JSON. A projected object also goes through its
 * store, so that keys and index values made from hostile strings are exercised too. A pod's
 * launcher hold annotation, and the input as such an annotation's text, go through its parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/rfc3339.h"
#include "informers/node.h"
#include "informers/pod.h"
#include "informers/priority_class.h"
#include "informers/projection.h"
#include "informers/resource_quota.h"
#include "informers/store.h"
#include "informers/workload.h"
#include "reconcilers/admission/launcher_hold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void through_store(const struct tj_store_ops *ops, void *obj)
{
	struct tj_store *store;

	if (tj_store_new(ops, &store) < 0) {
		ops->free(obj);
		return;
	}
	if (tj_store_upsert(store, obj, NULL) < 0)
		ops->free(obj);
	tj_store_free(store);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
	struct tj_launcher_hold hold;
	char *text;
	int64_t t;
	void *p;

	if (obj) {
		if (tj_pod_project(obj, &p) == 0) {
			if (((struct tj_pod *)p)->launcher_hold)
				tj_launcher_hold_parse(((struct tj_pod *)p)->launcher_hold, &hold);
			through_store(&tj_pod_store_ops, p);
		}
		if (tj_node_project(obj, &p) == 0)
			through_store(&tj_node_store_ops, p);
		if (tj_priority_class_project(obj, &p) == 0)
			through_store(&tj_priority_class_store_ops, p);
		if (tj_resource_quota_project(obj, &p) == 0)
			through_store(&tj_resource_quota_store_ops, p);
		if (tj_workload_project(obj, &p) == 0)
			through_store(&tj_workload_store_ops, p);
		cJSON_Delete(obj);
	}
	text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
		tj_rfc3339_parse(text, &t);
		tj_launcher_hold_parse(text, &hold);
		free(text);
	}
	return 0;
}
