/* The executor: the thin I/O layer that turns a plan (reconcilers/plan/plan.h) into API calls.
 * Stages run in order; the actions of one stage run concurrently; a stage starts only when
 * every write of the stage before it succeeded. Create answers AlreadyExists and delete
 * answers NotFound are success: names are deterministic, so a repeated create adopts the
 * pod a crashed controller made, and a delete of a pod that is gone has done its work.
 * Within a stage, the urgent writes go at once and the deferrable ones wait for the write
 * gate (write_gate.h), so that a burst of jobs gets its pods before its bookkeeping.
 *
 * CREATE_OBJECT is the generic "create an object the TrainJob owns" write: the plan builds
 * the object whole (apiVersion v1, kind, metadata with the TrainJob as controller owner,
 * reconcilers/trainjob.h tj_trainjob_add_owner) and the executor POSTs it to the collection of
 * its kind in the job's namespace, AlreadyExists being success. The kinds it knows are the
 * core/v1 PersistentVolumeClaim, Secret and ConfigMap (tj_execute_object_resource); any
 * other fails the write. A new kind is one line there, and a line of RBAC. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "controller/executor/recorder.h"
#include "controller/executor/service_memo.h"
#include "controller/executor/write_gate.h"
#include "kube/client.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/plan/refusal.h"
#include "reconcilers/trainjob.h"

struct tj_execution_result {
	int rc;          /* 0, or the code of the first write that failed */
	char error[512]; /* that write and the API server's message, "" on success */
	/* The status patch met 409 Conflict: the plan was made from a stale cache. Not an
	 * error worth logging; the watch brings the new object and the key runs again. */
	bool conflict;
	/* Ended by tj_execution_supersede: the writes that waited for the gate were dropped
	 * unsent, and with them the events of their stage; a refusal of a write already
	 * answered is still recorded (refusal). */
	bool superseded;
	/* Superseded because the plan was made before its job's previous write, in flight
	 * then, was answered (queued, above): the job is to be planned again. */
	bool replan;
	/* The TrainJob as the status patch returned it (owned by the result; the callback may
	 * take it by setting the pointer to NULL), or NULL. */
	cJSON *trainjob;
	unsigned pods_created, pods_adopted, pods_deleted, services_created, events;
	unsigned objects_created; /* CREATE_OBJECT answered 201 */
	/* Pod creates that failed, and of those the ones that may have made their pod all the
	 * same (tj_response.maybe_done: no answer came, even to the resends). */
	unsigned pods_failed, pods_maybe_created;
	/* The first create (pod, Service, PVC, ...) the API server refused for a reason of the
	 * job's (reconcilers/plan/refusal.h), TJ_REFUSAL_NONE if none. A RETRY or PERMANENT refusal
	 * is written into the TrainJob's status, with a Warning event FailedCreate, before done
	 * runs; a NAMESPACE_TERMINATING one is not, and the caller does not retry. */
	enum tj_refusal refusal;
	/* The TrainJob as the status patch that recorded the refusal returned it (owned by the
	 * result, as trainjob), or NULL: what the next plan must read. */
	cJSON *refused_trainjob;
};

typedef void (*tj_execute_done_fn)(struct tj_execution_result *res, void *userdata);

struct tj_execution;

struct tj_execute_config {
	struct tj_client *client;     /* borrowed */
	struct tj_recorder *recorder; /* borrowed; may be NULL */
	/* Borrowed; may be NULL (nothing deferred). The deferrable writes of a stage
	 * (plan.h) wait for it; the urgent ones go at once and are counted in it. */
	struct tj_write_gate *gate;
	tj_execute_done_fn done;
	/* May be NULL. Called at most once, from the loop, when the execution has no urgent
	 * write in flight and only waits for the gate, since nothing of it loads the API server
	 * until the gate opens: the controller's callback gives the key back to the workqueue
	 * (tj_workqueue_done), so that its slot goes to the next key, and a newer reconcile of
	 * the same job may supersede the execution (tj_execution_supersede). With queued,
	 * also once the last stage has only deferrable writes left, sent or not. */
	void (*parked)(void *userdata);
	/* The plan of a job that waits in the admission queue: its late status patch must not
	 * hold up the plan that creates its gang once admitted (parked above), and its
	 * deferrable writes go by the write gate's pass of queued jobs' status writes
	 * (status_pass.h), one write of the job in flight at most. A plan made while the job's
	 * previous write was in flight ends superseded with replan set once that write is
	 * answered, unsent. */
	bool queued;
	/* May be NULL. Whether the job's cache holds a newer version than resource_version,
	 * the one its status patch was planned from. A deferrable status patch that the gate
	 * lets go after the job's previous status write was answered and written back
	 * (controller.c) could only meet a conflict: the execution then ends superseded with
	 * replan set, unsent, as a queued job's does in the pass (nothing of its stage being in
	 * flight; otherwise its writes go). */
	bool (*outdated)(const char *resource_version, void *userdata);
	/* Borrowed; may be NULL. A Service it knows is not created again; a create answered
	 * with success or AlreadyExists teaches it the job's. */
	struct tj_service_memo *services;
	void *userdata;
};

/* Starts executing plan (taken: freed by the execution) for the TrainJob job (its strings
 * are copied). done runs once, on a later loop iteration, unless the execution is
 * cancelled. now_ns stamps the events. */
int tj_execute(const struct tj_execute_config *config, const struct tj_event_object *job,
               struct tj_plan *plan, int64_t now_ns, struct tj_execution **ret);

/* Ends an execution that only waits for the write gate, with nothing in flight, because a
 * newer plan of the same job replaces it: the waiting writes are dropped unsent and done
 * runs (on a later loop iteration) with the result so far and superseded set. Returns false,
 * and changes nothing, when the execution has writes in flight or does not wait. */
bool tj_execution_supersede(struct tj_execution *e);

/* Stops an execution: requests in flight are cancelled, done is not called. Accepts NULL. */
void tj_execution_cancel(struct tj_execution *e);
