/* Kueue's Workload projection (kueue.x-k8s.io/v1beta2): what Kueue says about the TrainJob
 * it stands for, so that the job's status can tell why Kueue keeps it suspended. Kueue
 * creates one Workload per job it manages, in the job's namespace, with a controller
 * ownerReference to the job; its condition QuotaReserved is False, with Kueue's reason
 * (Pending, Preempted, ...) and message ("couldn't assign flavors to pod set node:
 * insufficient unused quota for nvidia.com/gpu in flavor gh200, 8 more needed"), while the
 * job waits for quota, and True once Kueue has reserved it. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "informers/store.h"

/* What the projection keeps of a condition's reason and message (longer ones are cut at a
 * character boundary). */
#define TJ_WORKLOAD_REASON_MAX  64
#define TJ_WORKLOAD_MESSAGE_MAX 1024

struct tj_workload {
	char *namespace; /* owned; the same allocation as the struct, as the next three */
	char *name;
	/* The TrainJob that is its controller owner, and that job's uid; "" for a Workload of
	 * another kind of job. */
	char *owner;
	char *owner_uid;
	/* QuotaReserved is False: the job waits in Kueue, for the reason and message below.
	 * False before Kueue has written the condition, and once it is True. */
	bool waiting;
	/* QuotaReserved is True: Kueue has admitted the job, and resumes it next. */
	bool reserved;
	char reason[TJ_WORKLOAD_REASON_MAX];
	char message[TJ_WORKLOAD_MESSAGE_MAX];
};

/* Projects a Workload; -EINVAL without a namespace or a name, -ENOMEM. */
int tj_workload_from_json(const cJSON *obj, struct tj_workload **ret);

/* Accepts NULL; returns NULL. */
struct tj_workload *tj_workload_free(struct tj_workload *w);

/* The store (keyed "namespace/name", with TJ_WORKLOAD_INDEX_OWNER: "namespace/trainjob" of
 * the owning TrainJob) and the reflector projection. */
enum {
	TJ_WORKLOAD_INDEX_OWNER
};
extern const struct tj_store_ops tj_workload_store_ops;
int tj_workload_project(const cJSON *obj, void **ret);

/* The Workload of the TrainJob job_key ("namespace/name") whose uid is owner_uid, or NULL.
 * A Workload owned by an earlier TrainJob of the same name (another uid) is not its. */
const struct tj_workload *tj_workload_of(const struct tj_store *store, const char *job_key,
                                         const char *owner_uid);
