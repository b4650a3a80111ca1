#include "controller/executor/executor.h"
#include "controller/executor/executor_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "controller/executor/mpi_key.h"
#include "kube/request.h"
#include "reconcilers/json.h"
#include "reconcilers/mpi.h"

/* One write of the current stage in flight. */
struct op {
	struct tj_execution *execution; /* borrowed */
	struct tj_action *action;       /* borrowed from the plan */
	struct tj_request *request;     /* borrowed; NULL once answered */
	bool urgent; /* counted in the gate while in flight, as urgent or as deferrable */
	bool pass;   /* sent by the gate's pass of queued jobs' status writes */
	/* A status patch sent outside the pass, counted there as its job's write in flight
	 * (tj_write_gate_status_begin) until answered. */
	bool tracked;
	bool sent;
};

struct tj_execution {
	struct tj_execute_config config;
	/* The TrainJob: namespace, name, uid, and its key "namespace/name". */
	char *namespace, *name, *uid, *key; /* owned */
	struct tj_plan *plan;               /* owned */
	int64_t now_ns;
	/* Every stage starts from this timer, so that done never runs inside tj_execute. */
	uv_timer_t timer;
	int stage;
	struct op *ops; /* owned array of n_ops: the writes of the current stage */
	size_t n_ops;
	size_t pending; /* writes of the current stage not yet answered (sent or not) */
	size_t urgent;  /* urgent writes in flight */
	struct tj_write_gate_waiter waiter;
	/* A queued job's deferrable writes wait in the gate's pass instead; in_pass while
	 * the pass counts the job's writes in flight. */
	struct tj_status_pass_waiter pass_waiter;
	bool in_pass;
	bool parked;
	bool cancelled;
	bool finished;
	struct tj_execution_result result;
	/* The API's message of result.refusal, and the status patch that records it. */
	char refusal_message[TJ_MESSAGE_MAX];
	struct tj_request *refusal_request; /* borrowed; NULL unless in flight */
};

static void execution_closed(uv_handle_t *h)
{
	struct tj_execution *e = h->data;

	tj_plan_free(e->plan);
	cJSON_Delete(e->result.trainjob);
	cJSON_Delete(e->result.refused_trainjob);
	free(e->ops);
	free(e->namespace);
	free(e->name);
	free(e->uid);
	free(e->key);
	free(e);
}

/* The writes the pass released are all answered, or will not be sent. */
static void leave_pass(struct tj_execution *e)
{
	if (!e->in_pass)
		return;
	e->in_pass = false;
	tj_write_gate_pass_done(e->config.gate, e->key);
}

/* Whether the deferrable writes of the stage wait, at the gate or in the pass. */
static bool waiting(const struct tj_execution *e)
{
	return e->waiter.waiting || e->pass_waiter.state != TJ_STATUS_PASS_IDLE;
}

static void finish(struct tj_execution *e)
{
	e->finished = true;
	leave_pass(e);
	if (!e->cancelled)
		e->config.done(&e->result, e->config.userdata);
	uv_close((uv_handle_t *)&e->timer, execution_closed);
}

/* Whether e is in its plan's last stage. */
static bool last_stage(const struct tj_execution *e)
{
	return e->stage + 1 >= e->plan->n_stages;
}

/* Nothing left of the execution needs to hold up its job: tell the owner. That is so while
 * its deferrable writes wait for the gate (nothing of it loads the API server until the gate
 * opens), and, when the owner asks, once its last stage has only deferrable writes left,
 * sent or not: the newer plan's own status patch carries the resourceVersion it was made
 * from, so the two cannot both be written. */
static void maybe_park(struct tj_execution *e)
{
	if (e->urgent == 0 && (waiting(e) || (last_stage(e) && e->config.queued)) && !e->parked) {
		e->parked = true;
		if (e->config.parked)
			e->config.parked(e->config.userdata);
	}
}

static void fail(struct tj_execution *e, const struct tj_action *a, int rc, const char *why)
{
	if (e->result.rc != 0)
		return;
	e->result.rc = rc;
	snprintf(e->result.error, sizeof(e->result.error), "%s %s: %s",
	         tj_action_kind_name(a->kind), a->name[0] ? a->name : e->name, why);
}

const struct tj_resource *tj_execute_object_resource(const cJSON *object)
{
	static const struct {
		const char *kind;
		const struct tj_resource *resource;
	} kinds[] = {
		{ "PersistentVolumeClaim", &tj_resource_persistentvolumeclaims },
		{ "Secret", &tj_resource_secrets },
		{ "ConfigMap", &tj_resource_configmaps },
	};
	const char *version =
	        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(object, "apiVersion"));
	const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(object, "kind"));

	if (!version || !kind || strcmp(version, "v1") != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i].kind) == 0)
			return kinds[i].resource;
	return NULL;
}

static void stage_done(struct tj_execution *e);
static void start_stage(struct tj_execution *e);

/* A create failed: keeps the first refusal that is the job's (reconcilers/plan/refusal.h). */
static void note_refusal(struct tj_execution *e, const struct tj_response *resp)
{
	enum tj_refusal kind;

	if (e->result.refusal != TJ_REFUSAL_NONE || resp->rc != -EREMOTEIO)
		return;
	kind = tj_refusal_classify(resp->http_status, resp->status.message);
	if (kind == TJ_REFUSAL_NONE)
		return;
	e->result.refusal = kind;
	snprintf(e->refusal_message, sizeof(e->refusal_message), "%s",
	         resp->status.message ? resp->status.message : "");
}

static void refusal_recorded(struct tj_response *resp, void *userdata)
{
	struct tj_execution *e = userdata;

	e->refusal_request = NULL;
	/* The TrainJob as recorded goes to the caller, for the next plan to read at once. */
	if (resp->rc == 0)
		e->result.refused_trainjob = tj_response_take_body(resp);
	else
		snprintf(e->result.error + strlen(e->result.error),
		         sizeof(e->result.error) - strlen(e->result.error),
		         "; the status could not record it: %s", resp->error);
	finish(e);
}

/* Tells the job's author what the API server refused: a Warning event FailedCreate
 * (aggregated by the recorder when it repeats) and the status. Returns false when there is
 * nothing to tell, or the patch could not be sent: then the caller finishes. */
static bool report_refusal(struct tj_execution *e)
{
	struct tj_event_object obj = { .namespace = e->namespace, .name = e->name, .uid = e->uid };
	struct tj_ref ref = { .resource = &tj_resource_trainjobs,
		              .namespace = e->namespace,
		              .name = e->name,
		              .subresource = "status" };
	cJSON *patch;
	char event[TJ_MESSAGE_MAX];
	int rc;

	if (e->result.refusal != TJ_REFUSAL_RETRY && e->result.refusal != TJ_REFUSAL_PERMANENT)
		return false;
	tj_refusal_event_message(e->refusal_message, event);
	if (e->config.recorder)
		tj_recorder_record(e->config.recorder, &obj, true, TJ_REASON_FAILED_CREATE, event,
		                   e->now_ns);
	if (tj_refusal_status_patch(e->result.refusal, e->refusal_message, &patch) < 0)
		return false;
	rc = tj_kube_patch(e->config.client, &ref, TJ_PATCH_MERGE, patch, NULL, refusal_recorded, e,
	                   &e->refusal_request);
	cJSON_Delete(patch);
	return rc == 0;
}

/* A write of op went out: counted in flight, as urgent (by the execution and the gate) or
 * as deferrable (by the gate). */
static void count_sent(struct tj_execution *e, struct op *op)
{
	if (op->action->kind == TJ_ACTION_PATCH_STATUS && !op->pass)
		op->tracked = tj_write_gate_status_begin(e->config.gate, e->key);
	if (op->urgent) {
		e->urgent++;
		tj_write_gate_urgent_begin(e->config.gate);
	} else if (!op->pass) {
		tj_write_gate_deferred_begin(e->config.gate);
	}
}

/* The write of op is no longer in flight: answered, not sent after all, or cancelled. */
static void count_done(struct tj_execution *e, struct op *op)
{
	if (op->tracked) {
		op->tracked = false;
		tj_write_gate_status_end(e->config.gate, e->key);
	}
	if (op->urgent) {
		e->urgent--;
		tj_write_gate_urgent_end(e->config.gate);
	} else if (!op->pass) {
		tj_write_gate_deferred_end(e->config.gate);
	}
}

static void op_done(struct tj_response *resp, void *userdata)
{
	struct op *op = userdata;
	struct tj_execution *e = op->execution;
	const struct tj_action *a = op->action;
	const struct tj_status *st = &resp->status;

	op->request = NULL;
	count_done(e, op);
	switch (a->kind) {
	case TJ_ACTION_CREATE_POD:
		if (resp->rc == 0) {
			e->result.pods_created++;
		} else if (tj_status_is_already_exists(st)) {
			e->result.pods_adopted++;
		} else {
			e->result.pods_failed++;
			e->result.pods_maybe_created += resp->maybe_done;
			fail(e, a, resp->rc, resp->error);
			note_refusal(e, resp);
		}
		break;
	case TJ_ACTION_CREATE_SERVICE:
		if (resp->rc == 0) {
			e->result.services_created++;
		} else if (!tj_status_is_already_exists(st)) {
			tj_service_memo_forget(e->config.services, e->uid);
			fail(e, a, resp->rc, resp->error);
			note_refusal(e, resp);
		}
		break;
	case TJ_ACTION_CREATE_WORKLOAD:
	case TJ_ACTION_CREATE_POD_GROUP:
		if (resp->rc != 0 && !tj_status_is_already_exists(st))
			fail(e, a, resp->rc, resp->error);
		break;
	case TJ_ACTION_DELETE_POD:
		/* A failed uid precondition (409) means the pod of that name is a newer one:
		 * the one the plan meant is gone. */
		if (resp->rc == 0)
			e->result.pods_deleted++;
		else if (!tj_status_is_not_found(st) && !tj_status_is_conflict(st))
			fail(e, a, resp->rc, resp->error);
		break;
	case TJ_ACTION_PATCH_STATUS:
		if (resp->rc == 0) {
			cJSON_Delete(e->result.trainjob);
			e->result.trainjob = tj_response_take_body(resp);
		} else {
			e->result.conflict = tj_status_is_conflict(st);
			fail(e, a, resp->rc, resp->error);
		}
		break;
	case TJ_ACTION_PATCH_POD:
		/* NotFound, or a Conflict on the uid in the body: the pod meant is gone. */
		if (resp->rc != 0 && !tj_status_is_not_found(st) && !tj_status_is_conflict(st))
			fail(e, a, resp->rc, resp->error);
		break;
	case TJ_ACTION_DELETE_SERVICE:
	case TJ_ACTION_DELETE_WORKLOAD:
	case TJ_ACTION_DELETE_POD_GROUP:
		if (resp->rc != 0 && !tj_status_is_not_found(st))
			fail(e, a, resp->rc, resp->error);
		break;
	case TJ_ACTION_CREATE_OBJECT:
		if (resp->rc == 0) {
			e->result.objects_created++;
		} else if (!tj_status_is_already_exists(st)) {
			fail(e, a, resp->rc, resp->error);
			note_refusal(e, resp);
		}
		break;
	case TJ_ACTION_EVENT:
		break;
	}
	if (--e->pending == 0)
		stage_done(e);
	else
		maybe_park(e);
}

/* A new key pair for an MPI job's Secret, made only when the Secret is about to be created
 * (an AlreadyExists answer keeps the key the job's pods already mount). */
static int set_ssh_key(cJSON *secret)
{
	struct tj_mpi_key key = { 0 };
	int r = tj_mpi_key_generate(&key);

	if (r == 0)
		r = tj_mpi_secret_set_key(secret, key.private_pem, key.authorized_key);
	tj_mpi_key_clear(&key);
	return r;
}

static int send_request(struct tj_execution *e, struct op *op)
{
	const struct tj_action *a = op->action;
	struct tj_client *client = e->config.client;
	struct tj_ref ref = { .namespace = e->namespace };
	/* Every object the plan creates has a name of its own: a create that got no answer is
	 * sent again, and an AlreadyExists then means that it was made (op_done). */
	const struct tj_write_options *named =
	        &(const struct tj_write_options){ .resend_unanswered = true };

	switch (a->kind) {
	case TJ_ACTION_CREATE_POD:
		ref.resource = &tj_resource_pods;
		return tj_kube_create(client, &ref, a->object, named, op_done, op, &op->request);
	case TJ_ACTION_CREATE_SERVICE:
		ref.resource = &tj_resource_services;
		return tj_kube_create(client, &ref, a->object, named, op_done, op, &op->request);
	case TJ_ACTION_CREATE_WORKLOAD:
		ref.resource = &tj_resource_workloads;
		return tj_kube_create(client, &ref, a->object, named, op_done, op, &op->request);
	case TJ_ACTION_CREATE_POD_GROUP:
		ref.resource = &tj_resource_podgroups;
		return tj_kube_create(client, &ref, a->object, named, op_done, op, &op->request);
	case TJ_ACTION_DELETE_POD: {
		struct tj_delete_options opts = {
			.precondition_uid = a->uid[0] ? a->uid : NULL,
			.set_grace_period = a->grace_seconds >= 0,
			.grace_period_seconds = a->grace_seconds,
		};

		ref.resource = &tj_resource_pods;
		ref.name = a->name;
		return tj_kube_delete(client, &ref, &opts, op_done, op, &op->request);
	}
	case TJ_ACTION_PATCH_STATUS:
		ref.resource = &tj_resource_trainjobs;
		ref.name = e->name;
		ref.subresource = "status";
		return tj_kube_patch(client, &ref, TJ_PATCH_MERGE, a->object, NULL, op_done, op,
		                     &op->request);
	case TJ_ACTION_PATCH_POD:
		ref.resource = &tj_resource_pods;
		ref.name = a->name;
		return tj_kube_patch(client, &ref, TJ_PATCH_MERGE, a->object, NULL, op_done, op,
		                     &op->request);
	case TJ_ACTION_DELETE_SERVICE:
	case TJ_ACTION_DELETE_WORKLOAD:
	case TJ_ACTION_DELETE_POD_GROUP:
		ref.resource = a->kind == TJ_ACTION_DELETE_SERVICE    ? &tj_resource_services
		               : a->kind == TJ_ACTION_DELETE_WORKLOAD ? &tj_resource_workloads
		                                                      : &tj_resource_podgroups;
		ref.name = a->name;
		return tj_kube_delete(client, &ref, NULL, op_done, op, &op->request);
	case TJ_ACTION_CREATE_OBJECT: {
		int r;

		ref.resource = tj_execute_object_resource(a->object);
		if (!ref.resource)
			return -EINVAL;
		r = a->ssh_key ? set_ssh_key(a->object) : 0;
		if (r < 0)
			return r;
		return tj_kube_create(client, &ref, a->object, named, op_done, op, &op->request);
	}
	case TJ_ACTION_EVENT:
		break;
	}
	return -EINVAL;
}

/* Sends one write of the stage; a write that cannot be sent fails the stage at once. */
static void send_write(struct tj_execution *e, struct op *op)
{
	int rc;

	op->sent = true;
	/* The job's Service, created, found or on its way by an earlier plan: nothing to send. */
	if (op->action->kind == TJ_ACTION_CREATE_SERVICE) {
		if (tj_service_memo_has(e->config.services, e->uid)) {
			cJSON_Delete(op->action->object);
			op->action->object = NULL;
			e->pending--;
			return;
		}
		tj_service_memo_add(e->config.services, e->uid);
	}
	count_sent(e, op);
	rc = send_request(e, op);
	/* The request holds the serialised body: the tree is of no more use (800 rendered pods
	 * of a burst would otherwise stay in memory until their jobs' executions end). */
	cJSON_Delete(op->action->object);
	op->action->object = NULL;
	if (rc < 0) {
		if (op->action->kind == TJ_ACTION_CREATE_SERVICE)
			tj_service_memo_forget(e->config.services, e->uid);
		count_done(e, op);
		fail(e, op->action, rc, "could not send the request");
		e->pending--;
	}
}

/* Sends the stage's deferrable writes that wait, the gate or the pass having let them go. */
static void send_deferred(struct tj_execution *e, bool pass)
{
	/* Hold one count while sending, as start_stage does. After a failed urgent write the
	 * stage is over: the deferred writes are dropped, not sent. */
	e->pending++;
	for (size_t i = 0; i < e->n_ops; i++) {
		if (e->ops[i].sent)
			continue;
		if (e->result.rc == 0) {
			e->ops[i].pass = pass;
			send_write(e, &e->ops[i]);
		} else {
			e->ops[i].sent = true;
			e->pending--;
		}
	}
	if (--e->pending == 0)
		stage_done(e);
}

/* Whether the stage's unsent status patch was planned from a version of the job older than
 * the cache's (tj_execute_config.outdated). */
static bool planned_from_outdated(const struct tj_execution *e)
{
	if (!e->config.outdated)
		return false;
	for (size_t i = 0; i < e->n_ops; i++) {
		const struct tj_action *a = e->ops[i].action;
		const char *rv;

		if (!e->ops[i].sent && a->kind == TJ_ACTION_PATCH_STATUS &&
		    (rv = tj_json_string(a->object, "metadata.resourceVersion")))
			return e->config.outdated(rv, e->config.userdata);
	}
	return false;
}

/* Whether the stage's status patch, not yet sent, must wait for a status write of its job in
 * flight (status_pass.h): planned before that write's answer, it could only meet a
 * conflict. */
static bool status_behind(const struct tj_execution *e)
{
	for (size_t i = 0; i < e->n_ops; i++)
		if (!e->ops[i].sent && e->ops[i].action->kind == TJ_ACTION_PATCH_STATUS)
			return tj_write_gate_status_in_flight(e->config.gate, e->key);
	return false;
}

static bool supersede(struct tj_execution *e, bool replan);
static void pass_released(struct tj_status_pass_waiter *w, void *userdata);
static void pass_stale(struct tj_status_pass_waiter *w, void *userdata);

/* The stage waits in the pass, blocked behind its job's status write in flight; once that is
 * answered it goes stale, and the job is planned again from the answer. */
static void wait_behind(struct tj_execution *e)
{
	tj_write_gate_pass_wait(e->config.gate, &e->pass_waiter, pass_released, pass_stale, e);
}

/* Whether the last stage's status patch keeps the stage's writes back: planned from an older
 * version of the job than the cache's (the answer of a status write that was in flight while
 * earlier stages went, or a newer version from the watch), the stage is dropped unsent and
 * the job planned again; behind its job's status write in flight, it waits in the pass. A
 * status stage holds only that patch and what goes with it (the runtime snapshot). An
 * earlier stage's patch goes as it is: a parked execution may be superseded, and the pod
 * writes of its later stages, which the controller expects, would then never go. */
static bool status_holds_back(struct tj_execution *e)
{
	if (!last_stage(e))
		return false;
	if (planned_from_outdated(e) && supersede(e, true))
		return true;
	if (!status_behind(e))
		return false;
	wait_behind(e);
	return true;
}

/* The gate opened for the stage's deferrable writes. */
static void gate_released(struct tj_write_gate_waiter *w, void *userdata)
{
	struct tj_execution *e = userdata;

	if (!status_holds_back(e))
		send_deferred(e, false);
}

/* The pass gave the queued job's writes their turn: the job counts there as in flight
 * until they are answered, or dropped unsent when the cache holds a newer version of the job
 * than the one they were planned from (a write of someone else's, seen by the watch). */
static void pass_released(struct tj_status_pass_waiter *w, void *userdata)
{
	struct tj_execution *e = userdata;

	e->in_pass = true;
	if (planned_from_outdated(e) && supersede(e, true))
		return;
	send_deferred(e, true);
}

/* The job's previous write was answered while these writes waited behind it: they were
 * planned from the object before that answer, and the job is planned again. Writes of the
 * stage still in flight (none, for a queued job's status) finish it as it is: its writes
 * take their turn again. */
static void pass_stale(struct tj_status_pass_waiter *w, void *userdata)
{
	struct tj_execution *e = userdata;

	if (!supersede(e, true))
		wait_behind(e);
}

/* Records the events of the stage just finished. They come after its writes, so that a
 * plan whose status patch met a conflict (a stale cache) announces nothing: the retry,
 * planned from the fresh object, announces what really happened, once. Events are best
 * effort and never hold up the job. */
static void record_events(struct tj_execution *e)
{
	struct tj_event_object obj = { .namespace = e->namespace, .name = e->name, .uid = e->uid };

	for (size_t i = 0; i < e->plan->n_actions; i++) {
		const struct tj_action *a = &e->plan->actions[i];

		if (a->stage != e->stage || a->kind != TJ_ACTION_EVENT)
			continue;
		if (e->config.recorder)
			tj_recorder_record(e->config.recorder, &obj, a->warning, a->reason,
			                   a->message, e->now_ns);
		e->result.events++;
	}
}

/* The writes of the current stage are all answered. */
static void stage_done(struct tj_execution *e)
{
	leave_pass(e);
	if (e->result.rc != 0) {
		if (!report_refusal(e))
			finish(e);
		return;
	}
	record_events(e);
	if (e->stage + 1 >= e->plan->n_stages) {
		finish(e);
		return;
	}
	e->stage++;
	start_stage(e);
}

/* Sends the writes of e->stage: the urgent ones at once, the deferrable ones when the gate
 * is open (now, or once it opens). */
static void start_stage(struct tj_execution *e)
{
	bool wait = false;

	e->n_ops = 0;
	for (size_t i = 0; i < e->plan->n_actions; i++) {
		struct tj_action *a = &e->plan->actions[i];

		if (a->stage == e->stage && a->kind != TJ_ACTION_EVENT)
			e->ops[e->n_ops++] = (struct op){ .execution = e,
				                          .action = a,
				                          .urgent = !a->deferrable };
	}
	/* Nothing of the stage is sent yet: a stage held back is all unsent. */
	e->pending = e->n_ops;
	if (status_holds_back(e)) {
		if (waiting(e))
			maybe_park(e);
		return;
	}
	/* Count every write before sending any, and hold one count until the loop below is
	 * over, so that a send that fails at once cannot end the stage early. */
	e->pending = e->n_ops + 1;
	for (size_t i = 0; i < e->n_ops; i++)
		if (e->ops[i].urgent)
			send_write(e, &e->ops[i]);
	for (size_t i = 0; i < e->n_ops; i++) {
		if (e->ops[i].urgent)
			continue;
		if ((e->config.queued && e->config.gate) || !tj_write_gate_open(e->config.gate)) {
			wait = true;
			break;
		}
		send_write(e, &e->ops[i]);
	}
	if (wait && e->config.queued)
		tj_write_gate_pass_wait(e->config.gate, &e->pass_waiter, pass_released, pass_stale,
		                        e);
	else if (wait)
		tj_write_gate_wait(e->config.gate, &e->waiter, gate_released, e);
	if (--e->pending == 0)
		stage_done(e);
	else
		maybe_park(e);
}

static void kick(uv_timer_t *t)
{
	start_stage(t->data);
}

int tj_execute(const struct tj_execute_config *config, const struct tj_event_object *job,
               struct tj_plan *plan, int64_t now_ns, struct tj_execution **ret)
{
	struct tj_execution *e = calloc(1, sizeof(*e));
	int rc = -ENOMEM;

	if (!e)
		goto free_plan;
	e->ops = calloc(plan->n_actions ? plan->n_actions : 1, sizeof(*e->ops));
	e->namespace = strdup(job->namespace);
	e->name = strdup(job->name);
	e->uid = strdup(job->uid ? job->uid : "");
	if (asprintf(&e->key, "%s/%s", job->namespace, job->name) < 0)
		e->key = NULL;
	if (!e->ops || !e->namespace || !e->name || !e->uid || !e->key)
		goto free_execution;
	e->pass_waiter.key = e->key;
	e->config = *config;
	e->plan = plan;
	e->now_ns = now_ns;
	rc = uv_timer_init(tj_client_loop(config->client), &e->timer);
	if (rc < 0)
		goto free_execution;
	e->timer.data = e;
	uv_timer_start(&e->timer, kick, 0, 0);
	if (ret)
		*ret = e;
	return 0;

free_execution:
	free(e->ops);
	free(e->namespace);
	free(e->name);
	free(e->uid);
	free(e->key);
	free(e);
free_plan:
	tj_plan_free(plan);
	return rc;
}

/* A refusal of the job's still goes into its status, though its stage's other writes were
 * dropped: the plan that supersedes this one cannot know of it, and it is what the job's
 * author must read. */
static void superseded(uv_timer_t *t)
{
	struct tj_execution *e = t->data;

	if (e->result.rc != 0 && report_refusal(e))
		return;
	finish(e);
}

/* Ends an execution whose writes all wait, unsent, and none in flight: done runs from the
 * loop, superseded. False, changing nothing, otherwise. */
static bool supersede(struct tj_execution *e, bool replan)
{
	size_t unsent = 0;

	if (!e || e->cancelled || e->finished)
		return false;
	for (size_t i = 0; i < e->n_ops; i++)
		if (!e->ops[i].sent)
			unsent++;
	if (e->pending != unsent)
		return false;
	tj_write_gate_cancel(e->config.gate, &e->waiter);
	tj_write_gate_pass_cancel(e->config.gate, &e->pass_waiter);
	e->result.superseded = true;
	e->result.replan = replan;
	uv_timer_start(&e->timer, superseded, 0, 0);
	return true;
}

bool tj_execution_supersede(struct tj_execution *e)
{
	return e && waiting(e) && supersede(e, false);
}

void tj_execution_cancel(struct tj_execution *e)
{
	if (!e || e->cancelled || e->finished)
		return;
	e->cancelled = true;
	tj_write_gate_cancel(e->config.gate, &e->waiter);
	tj_write_gate_pass_cancel(e->config.gate, &e->pass_waiter);
	leave_pass(e);
	for (size_t i = 0; i < e->n_ops; i++)
		if (e->ops[i].request) {
			count_done(e, &e->ops[i]);
			tj_request_cancel(e->ops[i].request);
		}
	if (e->refusal_request)
		tj_request_cancel(e->refusal_request);
	/* No callback of ours runs any more: the cancelled requests stay silent. */
	uv_close((uv_handle_t *)&e->timer, execution_closed);
}
