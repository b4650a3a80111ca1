/* The runtime snapshot, as Kubeflow Trainer v2.3 keeps it: a job runs on the runtime it
 * started with, whatever happens to the runtime afterwards.
 *
 * When a job's first pods are created, the runtime they are made from is copied into the
 * ConfigMap "<job>-runtime-snapshot" (key "runtime": the runtime object as JSON, which is
 * YAML too), owned by the TrainJob as its controller. From then on every plan of the job
 * reads the snapshot instead of the live runtime, so a runtime edited or deleted under a
 * running job changes nothing for it: its restarts, its later steps and its walltime come
 * from the copy. A job that waits in the queue reads the live runtime until it starts (where
 * Kubeflow copies at the first reconcile): an operator who fixes a runtime fixes the jobs
 * that have not started yet, and the queue reads what Kueue reads.
 *
 * The ConfigMaps carry the label trainjob.flame.dev/runtime-snapshot, by which the
 * controller's informer watches them and nothing else. A snapshot that is not the job's (its
 * controller owner has another uid: a namesake's leftover) is not used; one that is the
 * job's but cannot be read, or names another runtime than the job's runtimeRef, is a problem
 * the job reports (reason InvalidRuntimeSnapshot) while its pods are left alone. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "reconcilers/runtime.h"
#include "reconcilers/trainjob.h"

#define TJ_RUNTIME_SNAPSHOT_SUFFIX "-runtime-snapshot"
#define TJ_RUNTIME_SNAPSHOT_KEY    "runtime"
#define TJ_LABEL_RUNTIME_SNAPSHOT  TJ_LABEL_PREFIX "runtime-snapshot"
/* The informer's selector: the ConfigMaps the controller made as snapshots. */
#define TJ_RUNTIME_SNAPSHOT_SELECTOR TJ_LABEL_RUNTIME_SNAPSHOT "=true"
/* A ConfigMap holds at most 1 MiB; the copy of a runtime larger than this is not made. */
#define TJ_RUNTIME_SNAPSHOT_MAX (900 * 1024)

/* What a plan knows of its job's snapshot. */
enum tj_snapshot_state {
	TJ_SNAPSHOT_OFF,     /* snapshots are not kept (an offline plan): none is made */
	TJ_SNAPSHOT_MISSING, /* the job has none: the runtime is the live one */
	TJ_SNAPSHOT_USED,    /* the runtime is the job's snapshot */
};

/* A snapshot ConfigMap as the informer keeps it. */
struct tj_runtime_snapshot {
	char *namespace, *name;     /* owned; the ConfigMap's */
	char *owner_uid;            /* owned; its controller owner's uid, NULL if none */
	char *resource_version;     /* owned */
	struct tj_runtime *runtime; /* owned; the copy, NULL when it cannot be read */
	char *problem;              /* owned; why the copy cannot be read, NULL when it can */
};

/* The copy of a runtime object the snapshot keeps, compact JSON (*ret owned): its apiVersion,
 * kind, metadata (name, namespace, uid, resourceVersion, generation, labels, annotations) and
 * spec. -E2BIG beyond TJ_RUNTIME_SNAPSHOT_MAX, -ENOMEM. */
int tj_runtime_snapshot_copy(const cJSON *runtime_obj, char **ret);

/* The ConfigMap of job's snapshot of runtime (whose copy is runtime->snapshot), owned by the
 * job. -EINVAL when the runtime has no copy, -ENOMEM. */
int tj_runtime_snapshot_config_map(const struct tj_trainjob *job, const struct tj_runtime *runtime,
                                   cJSON **ret);

/* Projects a snapshot ConfigMap. A copy that does not read is kept with its problem; -EINVAL
 * only when the ConfigMap has no name or namespace, -ENOMEM. */
int tj_runtime_snapshot_from_json(const cJSON *config_map, struct tj_runtime_snapshot **ret);

/* Accepts NULL; returns NULL. */
struct tj_runtime_snapshot *tj_runtime_snapshot_free(struct tj_runtime_snapshot *s);

/* The name of job's snapshot ConfigMap, in buf; -ENAMETOOLONG. */
int tj_runtime_snapshot_name(const struct tj_trainjob *job, char *buf, size_t size);

/* Which runtime job runs on, given its snapshot s (NULL when none is cached):
 * 1 and *ret the snapshot's copy when s is the job's and reads as the runtime its
 * runtimeRef names; 0 when s is NULL or not the job's (the live runtime applies); -EINVAL
 * with why (reason InvalidRuntimeSnapshot) when s is the job's but unusable. */
int tj_runtime_snapshot_pick(const struct tj_trainjob *job, const struct tj_runtime_snapshot *s,
                             const struct tj_runtime **ret, struct tj_problem *why);
