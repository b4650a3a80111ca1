/* The caches of the objects the reconciler projects itself (reconcilers/trainjob.h,
 * runtime.h and runtime_snapshot.h): how the informers project a TrainJob, a runtime or a
 * runtime snapshot, key it and free it. Pods, nodes and priority classes bring their own
 * (informers/). */
#pragma once

#include <cjson/cJSON.h>

#include "informers/store.h"
#include "reconcilers/trainjob.h"

extern const struct tj_store_ops tj_trainjob_store_ops;
/* Its indexes: TJ_TRAINJOB_INDEX_* (reconcilers/trainjob.h). */
extern const struct tj_store_ops tj_runtime_store_ops;
/* The runtime snapshots (reconcilers/runtime_snapshot.h), keyed by their ConfigMap's
 * namespace and name. */
extern const struct tj_store_ops tj_runtime_snapshot_store_ops;

/* Projections for the reflector: 0 and *ret, or a negative errno. */
int tj_trainjob_store_project(const cJSON *obj, void **ret);
int tj_runtime_store_project(const cJSON *obj, void **ret);
int tj_runtime_snapshot_store_project(const cJSON *obj, void **ret);
