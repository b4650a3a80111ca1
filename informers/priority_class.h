/* PriorityClass projection (scheduling.k8s.io/v1): the value a pod's priorityClassName stands
 * for, so that the queue orders TrainJobs as the scheduler orders their pods. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/store.h"

/* The range of a PriorityClass's value: user classes go up to one billion; the system
 * classes (system-cluster-critical, system-node-critical) above it. */
#define TJ_PRIORITY_MIN (-2147483647 - 1)
#define TJ_PRIORITY_MAX 2147483647

struct tj_priority_class {
	char *name; /* owned; the same allocation as the struct */
	int32_t value;
	bool global_default; /* globalDefault: the priority of pods that name no class */
};

/* Projects a PriorityClass; -EINVAL if it has no name or its value is not an int32. */
int tj_priority_class_from_json(const cJSON *obj, struct tj_priority_class **ret);

/* The store (keyed by name) and the reflector projection. */
extern const struct tj_store_ops tj_priority_class_store_ops;
int tj_priority_class_project(const cJSON *obj, void **ret);

/* The priority of a pod that names class name (NULL or "" for none), as the Priority
 * admission plugin gives it: the named class's value, else the global default's, else 0.
 * A name the store lacks gives 0 (the API server refuses such a pod). */
int32_t tj_priority_of(const struct tj_store *classes, const char *name);

/* Accepts NULL; returns NULL. */
struct tj_priority_class *tj_priority_class_free(struct tj_priority_class *pc);
