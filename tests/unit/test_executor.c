/* The executor against the scripted API server (scripted_server.h): plans written by hand go
 * through a real client and write gate, and the tests pin down which requests go out, in
 * which order, with which bodies, and what the execution reports: stages in order, the
 * answers that count as success (AlreadyExists, NotFound), a status patch that meets 409,
 * failed creates, deferrable writes behind the gate (one execution and a burst), supersede
 * and cancel. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/executor/executor.h"
#include "controller/executor/executor_internal.h"
#include "controller/executor/write_gate.h"
#include "fixtures.h"
#include "kube/client.h"
#include "kube/request.h"
#include "reconcilers/json.h"
#include "scripted_server.h"

#define PODS     "/api/v1/namespaces/team-a/pods"
#define SERVICES "/api/v1/namespaces/team-a/services"
#define EVENTS   "/api/v1/namespaces/team-a/events"
#define STATUS   "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/vit/status"

/* 2026-11-29T10:00:00Z, the stamp of the plans' events. */
#define NOW_NS (1795946400ll * 1000000000ll)

/* A Status object of the API server; msg has no quotes. */
/* A pod create answered when the test releases it. */
static const struct reply held = {
	.method = "POST", .path = PODS, .status = 201, .body = "{}", .hold = true
};

/* A status patch answered with the TrainJob, when the test releases it, or at once. */
#define STATUS_ANSWER(held_)                                                                       \
	{                                                                                          \
		.method = "PATCH", .path = STATUS, .status = 200,                                  \
		.body = "{\"kind\":\"TrainJob\"}", .hold = (held_)                                 \
	}

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
	struct tj_write_gate *gate;       /* NULL unless the test makes one */
	struct tj_recorder *recorder;     /* NULL unless the test makes one */
	bool busy;                        /* what the gate's busy() says */
	bool queued;                      /* of the executions the test starts */
	struct tj_service_memo *services; /* NULL unless the test sets one */
	const char *cached_version;       /* the job's version in the cache; NULL: not asked */
	const char *version_at_parked;    /* when set, the cache's version once parked runs */
	int outdated_calls;
};

/* One execution, and what its callbacks saw. */
struct run {
	struct tj_execution *e;
	struct fixture *fx;
	int done_calls, parked_calls;
	int seen_at_parked;             /* requests the server had seen when parked ran */
	struct tj_execution_result res; /* a copy; res.trainjob taken from the executor */
};

static bool fx_busy(void *userdata)
{
	return ((struct fixture *)userdata)->busy;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	fx->client = server_client_new(&fx->server);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fx->recorder = tj_recorder_free(fx->recorder);
	fx->gate = tj_write_gate_free(fx->gate);
	fx->client = tj_client_free(fx->client);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	/* Every handle of the executions, the gate, the client and the server is closed. */
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

static void make_gate(struct fixture *fx)
{
	struct tj_write_gate_config gc = { .busy = fx_busy, .userdata = fx };

	assert_int_equal(tj_write_gate_new(&fx->loop, &gc, &fx->gate), 0);
}

/* One action of a plan written by hand; object is JSON with ' for ". */
struct act {
	enum tj_action_kind kind;
	int stage;
	bool deferrable;
	const char *name;
	const char *object;
	const char *uid;    /* DELETE_POD */
	bool force;         /* DELETE_POD: grace 0, else the pod's own */
	const char *reason; /* EVENT */
};

#define CREATE_POD(st, nm)                                                                         \
	{                                                                                          \
		.kind = TJ_ACTION_CREATE_POD, .stage = (st), .name = nm,                           \
		.object = "{'metadata':{'name':'" nm "'}}"                                         \
	}
#define CREATE_SERVICE(st, defer)                                                                  \
	{                                                                                          \
		.kind = TJ_ACTION_CREATE_SERVICE, .stage = (st), .deferrable = (defer),            \
		.name = "vit", .object = "{'metadata':{'name':'vit'}}"                             \
	}
#define DELETE_POD(st, nm, id, forced)                                                             \
	{                                                                                          \
		.kind = TJ_ACTION_DELETE_POD, .stage = (st), .name = nm, .uid = (id),              \
		.force = (forced)                                                                  \
	}
#define PATCH_STATUS(st, defer, patch)                                                             \
	{                                                                                          \
		.kind = TJ_ACTION_PATCH_STATUS, .stage = (st), .deferrable = (defer),              \
		.object = (patch)                                                                  \
	}
#define PATCH_POD(st, nm, patch)                                                                   \
	{                                                                                          \
		.kind = TJ_ACTION_PATCH_POD, .stage = (st), .name = nm, .object = (patch)          \
	}
#define EVENT(st, why)                                                                             \
	{                                                                                          \
		.kind = TJ_ACTION_EVENT, .stage = (st), .deferrable = true, .reason = (why)        \
	}

static struct tj_plan *plan_of(const struct act *acts, size_t n)
{
	struct tj_plan *plan = calloc(1, sizeof(*plan));

	assert_non_null(plan);
	plan->actions = calloc(n, sizeof(*plan->actions));
	assert_non_null(plan->actions);
	plan->n_actions = n;
	for (size_t i = 0; i < n; i++) {
		struct tj_action *a = &plan->actions[i];

		a->kind = acts[i].kind;
		a->stage = acts[i].stage;
		a->deferrable = acts[i].deferrable;
		snprintf(a->name, sizeof(a->name), "%s", acts[i].name ? acts[i].name : "");
		snprintf(a->uid, sizeof(a->uid), "%s", acts[i].uid ? acts[i].uid : "");
		a->grace_seconds = acts[i].force ? 0 : -1;
		a->object = acts[i].object ? jlit(acts[i].object) : NULL;
		snprintf(a->reason, sizeof(a->reason), "%s", acts[i].reason ? acts[i].reason : "");
		snprintf(a->message, sizeof(a->message), "%s", acts[i].reason ? "it happened" : "");
		if (acts[i].stage >= plan->n_stages)
			plan->n_stages = acts[i].stage + 1;
	}
	return plan;
}

static void on_done(struct tj_execution_result *res, void *userdata)
{
	struct run *r = userdata;

	r->done_calls++;
	r->res = *res;
	res->trainjob = NULL; /* taken */
	res->refused_trainjob = NULL;
}

static void on_parked(void *userdata)
{
	struct run *r = userdata;

	r->parked_calls++;
	r->seen_at_parked = r->fx->server.n_seen;
	if (r->fx->version_at_parked)
		r->fx->cached_version = r->fx->version_at_parked;
}

static bool on_outdated(const char *resource_version, void *userdata)
{
	struct run *r = userdata;

	r->fx->outdated_calls++;
	return strcmp(resource_version, r->fx->cached_version) != 0;
}

static void start(struct fixture *fx, struct run *r, const struct act *acts, size_t n)
{
	struct tj_execute_config ec = {
		.client = fx->client,
		.recorder = fx->recorder,
		.gate = fx->gate,
		.done = on_done,
		.parked = on_parked,
		.queued = fx->queued,
		.services = fx->services,
		.outdated = fx->cached_version ? on_outdated : NULL,
		.userdata = r,
	};
	const struct tj_event_object job = { "team-a", "vit", "uid-vit", NULL };

	r->fx = fx;
	assert_int_equal(tj_execute(&ec, &job, plan_of(acts, n), NOW_NS, &r->e), 0);
	assert_int_equal(r->done_calls, 0); /* never from inside the call */
}

static void run_clear(struct run *r)
{
	cJSON_Delete(r->res.trainjob);
	cJSON_Delete(r->res.refused_trainjob);
	r->res.trainjob = r->res.refused_trainjob = NULL;
}

/* The request whose body names the object name (creates of one stage go out concurrently,
 * so their order is not part of the contract). */
static int find_named(const struct server *s, const char *name)
{
	char needle[128];

	snprintf(needle, sizeof(needle), "\"name\":\"%s\"", name);
	for (int i = 0; i < s->n_seen; i++)
		if (strstr(s->seen[i].body, needle))
			return i;
	return -1;
}

static uint64_t urgent_in_flight(const struct fixture *fx)
{
	struct tj_write_gate_stats st;

	tj_write_gate_stats(fx->gate, &st);
	return st.urgent_in_flight;
}

static uint64_t gate_waiting(const struct fixture *fx)
{
	struct tj_write_gate_stats st;

	tj_write_gate_stats(fx->gate, &st);
	return st.waiting;
}

/* The gate's pass: jobs with a write of it in flight, and its waiters. */
static void assert_pass(const struct fixture *fx, uint64_t in_flight, uint64_t waiting)
{
	struct tj_write_gate_stats st;

	tj_write_gate_stats(fx->gate, &st);
	assert_int_equal(st.pass_in_flight, in_flight);
	assert_int_equal(st.pass_waiting, waiting);
}

/* ---- stages and answers ------------------------------------------------------------------- */

static void test_stages_run_in_order(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		held,
		held,
		{ .method = "PATCH",
		  .path = STATUS,
		  .status = 200,
		  .body = "{\"kind\":\"TrainJob\",\"metadata\":{\"resourceVersion\":\"43\"}}" },
	};
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		CREATE_POD(0, "vit-node-0-1"),
		PATCH_STATUS(1, false, "{'status':{'state':'Pending'}}"),
	};
	struct run r = { 0 };

	make_gate(fx); /* it counts the urgent writes in flight */
	server_script(&fx->server, replies, 3);
	start(fx, &r, acts, 3);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 2);
	server_spin(&fx->server);
	/* Stage 1 waits for every write of stage 0. */
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|POST " PODS "|");
	assert_request_body(&fx->server, find_named(&fx->server, "vit-node-0-0"),
	                    "{'metadata':{'name':'vit-node-0-0'}}");
	assert_request_body(&fx->server, find_named(&fx->server, "vit-node-0-1"),
	                    "{'metadata':{'name':'vit-node-0-1'}}");
	server_release(&fx->server, 0);
	SERVER_RUN_UNTIL(&fx->server, urgent_in_flight(fx) == 1);
	server_spin(&fx->server);
	assert_int_equal(fx->server.n_seen, 2); /* one answer is not the whole stage */
	server_release(&fx->server, 1);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "POST " PODS "|POST " PODS "|PATCH " STATUS "|");
	assert_request_body(&fx->server, 2, "{'status':{'state':'Pending'}}");
	assert_non_null(strstr(fx->server.seen[2].head,
	                       "\r\nContent-Type: application/merge-patch+json\r\n"));
	assert_int_equal(r.res.rc, 0);
	assert_string_equal(r.res.error, "");
	assert_false(r.res.conflict);
	assert_false(r.res.superseded);
	assert_int_equal(r.res.pods_created, 2);
	assert_int_equal(r.res.pods_adopted, 0);
	assert_int_equal(r.res.events, 0);
	/* The patched TrainJob comes back, for the cache. */
	assert_json_equal(r.res.trainjob,
	                  "{'kind':'TrainJob','metadata':{'resourceVersion':'43'}}");
	server_spin(&fx->server);
	assert_int_equal(r.done_calls, 1);
	run_clear(&r);
}

static void test_already_exists_and_not_found_are_success(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = PODS,
		  .status = 409,
		  .body = API_ERROR(409, "AlreadyExists", "pod exists") },
		{ .method = "POST",
		  .path = SERVICES,
		  .status = 409,
		  .body = API_ERROR(409, "AlreadyExists", "service exists") },
		{ .method = "DELETE",
		  .path = PODS "/vit-node-0-4",
		  .status = 404,
		  .body = API_ERROR(404, "NotFound", "pod not found") },
		/* The uid precondition failed: the pod of that name is a newer one. */
		{ .method = "DELETE",
		  .path = PODS "/vit-node-0-5",
		  .status = 409,
		  .body = API_ERROR(409, "Conflict", "uid precondition failed") },
		{ .method = "DELETE", .path = PODS "/vit-node-0-6", .status = 200, .body = "{}" },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
	};
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		CREATE_SERVICE(0, false),
		DELETE_POD(0, "vit-node-0-4", "uid-4", true),
		DELETE_POD(0, "vit-node-0-5", "uid-5", false),
		DELETE_POD(0, "vit-node-0-6", NULL, false),
		PATCH_STATUS(1, false, "{'status':{'state':'Running'}}"),
	};
	struct run r = { 0 };
	int i;

	server_script(&fx->server, replies, 6);
	start(fx, &r, acts, 6);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.res.rc, 0);
	assert_string_equal(r.res.error, "");
	assert_int_equal(r.res.pods_created, 0);
	assert_int_equal(r.res.pods_adopted, 1);
	assert_int_equal(r.res.services_created, 0);
	assert_int_equal(r.res.pods_deleted, 1);
	/* Every write of stage 0 answered before the patch of stage 1. */
	assert_int_equal(fx->server.n_seen, 6);
	assert_int_equal(server_find(&fx->server, 0, "PATCH", STATUS), 5);
	i = server_find(&fx->server, 0, "DELETE", PODS "/vit-node-0-4");
	assert_request_body(&fx->server, i,
	                    "{'kind':'DeleteOptions','apiVersion':'v1','gracePeriodSeconds':0,"
	                    "'preconditions':{'uid':'uid-4'}}");
	i = server_find(&fx->server, 0, "DELETE", PODS "/vit-node-0-5");
	assert_request_body(
	        &fx->server, i,
	        "{'kind':'DeleteOptions','apiVersion':'v1','preconditions':{'uid':'uid-5'}}");
	i = server_find(&fx->server, 0, "DELETE", PODS "/vit-node-0-6");
	assert_request_body(&fx->server, i, "{'kind':'DeleteOptions','apiVersion':'v1'}");
	run_clear(&r);
}

/* The API server went away with two creates in flight (their connections dropped): each is
 * sent again once it answers. The one whose first try had made its pod meets it
 * (AlreadyExists: adopted); the other is made now. Nothing failed. */
static void test_creates_that_got_no_answer_are_sent_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .request_has = "vit-node-0-0", .drop = true },
		{ .method = "POST", .path = PODS, .request_has = "vit-node-0-1", .drop = true },
		{ .method = "POST",
		  .path = PODS,
		  .request_has = "vit-node-0-0",
		  .status = 409,
		  .body = API_ERROR(409, "AlreadyExists", "pod exists") },
		{ .method = "POST",
		  .path = PODS,
		  .request_has = "vit-node-0-1",
		  .status = 201,
		  .body = "{}" },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
	};
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		CREATE_POD(0, "vit-node-0-1"),
		PATCH_STATUS(1, false, "{'status':{'state':'Pending'}}"),
	};
	struct run r = { 0 };

	server_script(&fx->server, replies, 5);
	start(fx, &r, acts, 3);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.res.rc, 0);
	assert_int_equal(r.res.pods_created, 1);
	assert_int_equal(r.res.pods_adopted, 1);
	assert_int_equal(r.res.pods_failed, 0);
	assert_int_equal(server_count(&fx->server, "POST", PODS), 4);
	assert_int_equal(server_count(&fx->server, "PATCH", STATUS), 1);
	run_clear(&r);
}

#define SCHEDULING "/apis/scheduling.k8s.io/v1alpha2/namespaces/team-a"

/* Native gang scheduling: the Workload (stage 0) before the PodGroup and the pods; a
 * Workload or PodGroup that exists already is done, a refused one ends the plan. */
static void test_workload_and_pod_group(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = SCHEDULING "/workloads",
		  .status = 409,
		  .body = API_ERROR(409, "AlreadyExists", "workload exists") },
		{ .method = "POST", .path = SCHEDULING "/podgroups", .status = 201, .body = "{}" },
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}" },
		{ .method = "POST",
		  .path = SCHEDULING "/podgroups",
		  .status = 403,
		  .body = API_ERROR(403, "Forbidden",
		                    "PodGroup rejected: Workload vit not found") },
	};
	const struct act acts[] = {
		{ .kind = TJ_ACTION_CREATE_WORKLOAD,
		  .stage = 0,
		  .name = "vit",
		  .object = "{'kind':'Workload','metadata':{'name':'vit'}}" },
		{ .kind = TJ_ACTION_CREATE_POD_GROUP,
		  .stage = 1,
		  .name = "vit",
		  .object = "{'kind':'PodGroup','metadata':{'name':'vit'}}" },
		CREATE_POD(1, "vit-node-0-0"),
	};
	struct run r = { 0 }, refused = { 0 };

	server_script(&fx->server, replies, 4);
	start(fx, &r, acts, 3);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.res.rc, 0);
	assert_int_equal(r.res.pods_created, 1);
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "POST " SCHEDULING "/workloads|POST " SCHEDULING "/podgroups|POST " PODS
	                    "|");
	assert_request_body(&fx->server, 1, "{'kind':'PodGroup','metadata':{'name':'vit'}}");
	run_clear(&r);

	start(fx, &refused, acts + 1, 1);
	SERVER_RUN_UNTIL(&fx->server, refused.done_calls == 1);
	assert_int_equal(refused.res.rc, -EREMOTEIO);
	assert_string_equal(refused.res.error,
	                    "CreatePodGroup vit: PodGroup rejected: Workload vit not found");
	run_clear(&refused);
}

/* The TTL's cleanup with native gang scheduling: DELETE of the PodGroup and the Workload of
 * the job's name; one already gone is done, a refused one ends the plan. */
static void test_workload_and_pod_group_deletes(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "DELETE",
		  .path = SCHEDULING "/podgroups/vit",
		  .status = 200,
		  .body = "{}" },
		{ .method = "DELETE",
		  .path = SCHEDULING "/workloads/vit",
		  .status = 404,
		  .body = API_ERROR(404, "NotFound", "workload not found") },
		{ .method = "DELETE",
		  .path = SCHEDULING "/podgroups/vit",
		  .status = 403,
		  .body = API_ERROR(403, "Forbidden", "no delete") },
	};
	const struct act acts[] = {
		{ .kind = TJ_ACTION_DELETE_POD_GROUP, .name = "vit", .deferrable = true },
		{ .kind = TJ_ACTION_DELETE_WORKLOAD,
		  .stage = 1,
		  .name = "vit",
		  .deferrable = true },
	};
	struct run r = { 0 }, refused = { 0 };

	server_script(&fx->server, replies, 3);
	start(fx, &r, acts, 2);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.res.rc, 0);
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "DELETE " SCHEDULING "/podgroups/vit|DELETE " SCHEDULING
	                    "/workloads/vit|");
	run_clear(&r);

	start(fx, &refused, acts, 1);
	SERVER_RUN_UNTIL(&fx->server, refused.done_calls == 1);
	assert_int_equal(refused.res.rc, -EREMOTEIO);
	assert_string_equal(refused.res.error, "DeletePodGroup vit: no delete");
	run_clear(&refused);
}

/* The deadline's warning: a merge patch of each pod; a pod that is gone needs none. */
static void test_pod_patch_is_a_merge_patch_and_not_found_is_success(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "PATCH", .path = PODS "/vit-node-0-0", .status = 200, .body = "{}" },
		{ .method = "PATCH",
		  .path = PODS "/vit-node-0-1",
		  .status = 404,
		  .body = API_ERROR(404, "NotFound", "pod not found") },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
	};
#define WARN "{'metadata':{'annotations':{'trainjob.flame.dev/deadline':'2026-11-29T12:00:00Z'}}}"
	const struct act acts[] = {
		PATCH_POD(0, "vit-node-0-0", WARN),
		PATCH_POD(0, "vit-node-0-1", WARN),
		PATCH_STATUS(1, false, "{'status':{'state':'Running'}}"),
	};
	struct run r = { 0 };
	int i;

	server_script(&fx->server, replies, 3);
	start(fx, &r, acts, 3);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.res.rc, 0);
	assert_string_equal(r.res.error, "");
	assert_int_equal(fx->server.n_seen, 3);
	assert_int_equal(server_find(&fx->server, 0, "PATCH", STATUS), 2);
	for (int k = 0; k < 2; k++) {
		i = server_find(&fx->server, 0, "PATCH",
		                k ? PODS "/vit-node-0-1" : PODS "/vit-node-0-0");
		assert_true(i >= 0);
		assert_non_null(strstr(fx->server.seen[i].head,
		                       "Content-Type: application/merge-patch+json"));
		assert_request_body(&fx->server, i, WARN);
	}
#undef WARN
	run_clear(&r);
}

/* The relabelling of a kept pod and the TTL's delete of the Service: a pod or Service that
 * is gone (NotFound), or a newer pod of that name (the uid in the body conflicts), is no
 * failure; the patch is a merge patch of the body the plan made. */
static void test_pod_patch_and_service_delete(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "PATCH", .path = PODS "/vit-node-0-1-a0", .status = 200, .body = "{}" },
		{ .method = "PATCH",
		  .path = PODS "/vit-node-0-2-a0",
		  .status = 404,
		  .body = API_ERROR(404, "NotFound", "pod not found") },
		{ .method = "PATCH",
		  .path = PODS "/vit-node-0-3-a0",
		  .status = 409,
		  .body = API_ERROR(409, "Conflict", "uid mismatch") },
		{ .method = "DELETE",
		  .path = SERVICES "/vit",
		  .status = 404,
		  .body = API_ERROR(404, "NotFound", "service not found") },
		{ .method = "PATCH",
		  .path = PODS "/vit-node-0-4-a0",
		  .status = 403,
		  .body = API_ERROR(403, "Forbidden", "no patch") },
	};
	const struct act acts[] = {
		{ .kind = TJ_ACTION_PATCH_POD,
		  .name = "vit-node-0-1-a0",
		  .object = "{'metadata':{'uid':'u1','labels':{'a':null}}}" },
		{ .kind = TJ_ACTION_PATCH_POD, .name = "vit-node-0-2-a0", .object = "{}" },
		{ .kind = TJ_ACTION_PATCH_POD, .name = "vit-node-0-3-a0", .object = "{}" },
		{ .kind = TJ_ACTION_DELETE_SERVICE, .name = "vit", .deferrable = true },
		{ .kind = TJ_ACTION_PATCH_POD,
		  .stage = 1,
		  .name = "vit-node-0-4-a0",
		  .object = "{}" },
	};
	struct run r = { 0 };
	int i;

	server_script(&fx->server, replies, 5);
	start(fx, &r, acts, 5);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(fx->server.n_seen, 5);
	i = server_find(&fx->server, 0, "PATCH", PODS "/vit-node-0-1-a0");
	assert_request_body(&fx->server, i, "{'metadata':{'uid':'u1','labels':{'a':null}}}");
	assert_int_equal(server_find(&fx->server, 0, "DELETE", SERVICES "/vit") >= 0, 1);
	/* Only the refused patch of stage 1 fails the plan. */
	assert_int_not_equal(r.res.rc, 0);
	assert_non_null(strstr(r.res.error, "PatchPod vit-node-0-4-a0"));
	run_clear(&r);
}

/* CreateObject: an owned object goes to the collection of its kind, AlreadyExists is
 * success, and a kind the executor does not create fails the write unsent. */
static void test_create_object_by_kind(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = "/api/v1/namespaces/team-a/persistentvolumeclaims",
		  .status = 201,
		  .body = "{}" },
		{ .method = "POST",
		  .path = "/api/v1/namespaces/team-a/configmaps",
		  .status = 409,
		  .body = API_ERROR(409, "AlreadyExists", "configmap exists") },
	};
	const struct act acts[] = {
		{ .kind = TJ_ACTION_CREATE_OBJECT,
		  .name = "initializer-vit",
		  .object = "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':"
		            "'initializer-vit'}}" },
		{ .kind = TJ_ACTION_CREATE_OBJECT,
		  .name = "vit-hostfile",
		  .object = "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':"
		            "'vit-hostfile'}}" },
		{ .kind = TJ_ACTION_CREATE_OBJECT,
		  .stage = 1,
		  .name = "vit",
		  .object = "{'apiVersion':'apps/"
		            "v1','kind':'Deployment','metadata':{'name':'vit'}}" },
	};
	struct run r = { 0 };
	int i;

	server_script(&fx->server, replies, 2);
	start(fx, &r, acts, 3);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(fx->server.n_seen, 2);
	i = server_find(&fx->server, 0, "POST", "/api/v1/namespaces/team-a/persistentvolumeclaims");
	assert_request_body(&fx->server, i,
	                    "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':"
	                    "'initializer-vit'}}");
	assert_int_equal(r.res.objects_created, 1);
	assert_int_not_equal(r.res.rc, 0);
	assert_non_null(strstr(r.res.error, "CreateObject vit"));
	run_clear(&r);
}

static void test_object_resources(void **state)
{
	static const struct {
		const char *object;
		const char *plural; /* NULL: not created */
	} cases[] = {
		{ "{'apiVersion':'v1','kind':'PersistentVolumeClaim'}", "persistentvolumeclaims" },
		{ "{'apiVersion':'v1','kind':'Secret'}", "secrets" },
		{ "{'apiVersion':'v1','kind':'ConfigMap'}", "configmaps" },
		{ "{'apiVersion':'v1','kind':'Pod'}", NULL },
		{ "{'apiVersion':'v2','kind':'Secret'}", NULL },
		{ "{'kind':'Secret'}", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *o = jlit(cases[i].object);
		const struct tj_resource *res = tj_execute_object_resource(o);

		if (cases[i].plural) {
			assert_non_null(res);
			assert_string_equal(res->plural, cases[i].plural);
			assert_string_equal(res->group, "");
			assert_true(res->namespaced);
		} else {
			assert_null(res);
		}
		cJSON_Delete(o);
	}
}

static void test_status_conflict_stops_the_plan(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "PATCH",
		  .path = STATUS,
		  .status = 409,
		  .body = API_ERROR(409, "Conflict", "the object has been modified") },
	};
	const struct act acts[] = {
		PATCH_STATUS(0, false,
		             "{'metadata':{'resourceVersion':'42'},'status':{'restartCount':1}}"),
		EVENT(0, "Restarting"),
		CREATE_POD(1, "vit-node-0-0"),
	};
	struct run r = { 0 };

	assert_int_equal(tj_recorder_new(fx->client, "trainjob-controller", "host", &fx->recorder),
	                 0);
	server_script(&fx->server, replies, 1);
	start(fx, &r, acts, 3);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	server_spin(&fx->server);
	assert_int_equal(r.res.rc, -EREMOTEIO);
	assert_true(r.res.conflict);
	assert_string_equal(r.res.error, "PatchStatus vit: the object has been modified");
	assert_null(r.res.trainjob);
	/* Neither the pods of stage 1 nor the event of stage 0: the plan was made from a stale
	 * cache, and the retry announces what really happens. */
	assert_string_equal(server_trace(&fx->server, NULL), "PATCH " STATUS "|");
	assert_request_body(&fx->server, 0,
	                    "{'metadata':{'resourceVersion':'42'},'status':{'restartCount':1}}");
	assert_int_equal(r.res.events, 0);
	assert_int_equal(r.res.pods_created, 0);
	run_clear(&r);
}

/* case: a create the API server refuses ends the plan with its code and message; a refusal
 * of the job's (reconcilers/plan/refusal.h) is written into its status, with a Warning event
 * FailedCreate, before done runs, and one of a namespace being deleted is not. */
struct failed_create_case {
	int http;
	const char *body;
	const char *error;
	enum tj_refusal refusal;
	const char *want_patch; /* the status patch sent, NULL: none */
	const char *want_event; /* the FailedCreate event's message, NULL: none */
	/* A 5xx says nothing of whether the pod was made: the create is sent again, and the pod
	 * may exist (tj_execution_result.pods_maybe_created). */
	bool maybe_created;
};

static const struct failed_create_case failed_create_cases[] = {
	{ 500, API_ERROR(500, "InternalError", "etcd is down"),
	  "CreatePod vit-node-0-1: etcd is down", TJ_REFUSAL_NONE, NULL, NULL, true },
	{ 429, API_ERROR(429, "TooManyRequests", "too many requests"),
	  "CreatePod vit-node-0-1: too many requests", TJ_REFUSAL_NONE, NULL, NULL, false },
	{ 403, API_ERROR(403, "Forbidden", "pods is forbidden: exceeded quota: gpu"),
	  "CreatePod vit-node-0-1: pods is forbidden: exceeded quota: gpu", TJ_REFUSAL_RETRY,
	  "{'status':{'state':'Pending','reason':'FailedCreate','message':'pods is forbidden: "
	  "exceeded quota: gpu'}}",
	  "Error creating: pods is forbidden: exceeded quota: gpu", false },
	{ 422, API_ERROR(422, "Invalid", "Pod is invalid: spec.containers[0].image: Required"),
	  "CreatePod vit-node-0-1: Pod is invalid: spec.containers[0].image: Required",
	  TJ_REFUSAL_PERMANENT,
	  "{'status':{'state':'Failed','reason':'FailedCreate','message':'Pod is invalid: "
	  "spec.containers[0].image: Required'}}",
	  "Error creating: Pod is invalid: spec.containers[0].image: Required", false },
	{ 403,
	  API_ERROR(403, "Forbidden",
	            "unable to create new content in namespace team-a because it is being "
	            "terminated"),
	  "CreatePod vit-node-0-1: unable to create new content in namespace team-a because it "
	  "is being terminated",
	  TJ_REFUSAL_NAMESPACE_TERMINATING, NULL, NULL, false },
};

static void test_failed_create_ends_the_plan(void **state)
{
	for (size_t c = 0; c < sizeof(failed_create_cases) / sizeof(failed_create_cases[0]); c++) {
		const struct failed_create_case *fc = &failed_create_cases[c];
		struct fixture *fx;
		const struct reply replies[] = {
			{ .method = "POST",
			  .path = PODS,
			  .request_has = "vit-node-0-0",
			  .status = 201,
			  .body = "{}" },
			{ .method = "POST",
			  .path = PODS,
			  .request_has = "vit-node-0-1",
			  .status = fc->http,
			  .body = fc->body,
			  .repeat = fc->maybe_created },
			{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
			{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
		};
		const struct act acts[] = {
			CREATE_POD(0, "vit-node-0-0"),
			CREATE_POD(0, "vit-node-0-1"),
			EVENT(0, "Created"),
			PATCH_STATUS(1, false, "{'status':{'state':'Pending'}}"),
		};
		struct run r = { 0 };
		int patch, event;

		print_message("# case %zu: %d\n", c, fc->http);
		setup((void **)&fx);
		assert_int_equal(
		        tj_recorder_new(fx->client, "trainjob-controller", "host", &fx->recorder),
		        0);
		server_script(&fx->server, replies, 4);
		start(fx, &r, acts, 4);
		SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
		if (fc->want_event)
			SERVER_RUN_UNTIL(&fx->server,
			                 server_count(&fx->server, "POST", EVENTS) == 1);
		server_spin(&fx->server);
		/* No patch of stage 1, no event of stage 0. */
		assert_int_equal(server_count(&fx->server, "POST", PODS),
		                 2 + (fc->maybe_created ? TJ_KUBE_RESENDS : 0));
		patch = server_find(&fx->server, 0, "PATCH", STATUS);
		event = server_find(&fx->server, 0, "POST", EVENTS);
		if (fc->want_patch) {
			assert_true(patch >= 0);
			assert_request_body(&fx->server, patch, fc->want_patch);
			assert_int_equal(server_count(&fx->server, "PATCH", STATUS), 1);
			assert_true(event >= 0);
			assert_non_null(strstr(fx->server.seen[event].body, "\"FailedCreate\""));
			assert_non_null(strstr(fx->server.seen[event].body, fc->want_event));
			assert_non_null(strstr(fx->server.seen[event].body, "\"Warning\""));
			/* What the patch returned, for the next plan to read at once. */
			assert_non_null(r.res.refused_trainjob);
		} else {
			assert_int_equal(patch, -1);
			assert_int_equal(event, -1);
			assert_null(r.res.refused_trainjob);
		}
		assert_int_equal(r.res.rc, -EREMOTEIO);
		assert_int_equal(r.res.refusal, fc->refusal);
		assert_false(r.res.conflict);
		assert_string_equal(r.res.error, fc->error);
		assert_int_equal(r.res.pods_created, 1);
		assert_int_equal(r.res.pods_failed, 1);
		assert_int_equal(r.res.pods_maybe_created, fc->maybe_created);
		assert_int_equal(r.res.events, 0);
		run_clear(&r);
		teardown((void **)&fx);
	}
}

/* ---- the write gate ----------------------------------------------------------------------- */

static void test_deferrable_writes_wait_for_the_gate(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}" },
		{ .method = "POST", .path = SERVICES, .status = 201, .body = "{}" },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
	};
	const struct act acts[] = {
		CREATE_SERVICE(0, true),
		CREATE_POD(0, "vit-node-0-0"),
		PATCH_STATUS(1, true, "{'status':{'state':'Pending'}}"),
	};
	struct run r = { 0 };

	make_gate(fx);
	fx->busy = true; /* more keys wait for a slot */
	server_script(&fx->server, replies, 3);
	start(fx, &r, acts, 3);
	/* The pod goes at once, the Service waits; once the pod is answered nothing of the
	 * execution loads the API server, and it says so once. */
	SERVER_RUN_UNTIL(&fx->server, r.parked_calls == 1);
	assert_int_equal(r.seen_at_parked, 1);
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|");
	assert_int_equal(gate_waiting(fx), 1);
	assert_int_equal(r.done_calls, 0);
	fx->busy = false;
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_string_equal(server_trace(&fx->server, NULL),
	                    "POST " PODS "|POST " SERVICES "|PATCH " STATUS "|");
	assert_request_body(&fx->server, 1, "{'metadata':{'name':'vit'}}");
	assert_int_equal(r.parked_calls, 1);
	assert_int_equal(r.res.rc, 0);
	assert_int_equal(r.res.pods_created, 1);
	assert_int_equal(r.res.services_created, 1);
	run_clear(&r);
}

/* A status patch that waited for the gate while the job's previous status write was
 * answered (the cache now holds the version that answer gave) is not sent: it could only
 * meet a conflict. The execution ends superseded, to be planned again, with nothing of its
 * stage sent; one planned from the cache's version goes. */
static void test_a_status_patch_planned_before_the_last_answer_is_planned_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}" },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
	};
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		CREATE_SERVICE(1, true),
		PATCH_STATUS(1, true,
		             "{'metadata':{'resourceVersion':'41'},'status':{'state':'Running'}}"),
		EVENT(1, "Running"),
	};
	const struct act again[] = {
		PATCH_STATUS(0, true,
		             "{'metadata':{'resourceVersion':'42'},'status':{'state':'Running'}}"),
	};
	struct run r = { 0 }, next = { 0 };

	make_gate(fx);
	assert_int_equal(tj_recorder_new(fx->client, "trainjob-controller", "host", &fx->recorder),
	                 0);
	fx->busy = true;
	fx->cached_version = "41";
	server_script(&fx->server, replies, 2);
	start(fx, &r, acts, 4);
	SERVER_RUN_UNTIL(&fx->server, r.parked_calls == 1);
	/* Meanwhile the job's previous status write was answered with version 42. */
	fx->cached_version = "42";
	fx->busy = false;
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|");
	/* Asked when the stage started (not yet outdated) and when the gate let it go. */
	assert_int_equal(fx->outdated_calls, 2);
	assert_int_equal(r.res.rc, 0);
	assert_true(r.res.superseded);
	assert_true(r.res.replan);
	assert_int_equal(r.res.pods_created, 1);
	assert_int_equal(r.res.services_created, 0);
	assert_int_equal(r.res.events, 0);
	assert_int_equal(gate_waiting(fx), 0);
	run_clear(&r);

	/* The plan made again, from version 42, goes. */
	fx->busy = true;
	start(fx, &next, again, 1);
	SERVER_RUN_UNTIL(&fx->server, next.parked_calls == 1);
	fx->busy = false;
	SERVER_RUN_UNTIL(&fx->server, next.done_calls == 1);
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|PATCH " STATUS "|");
	assert_int_equal(fx->outdated_calls, 4);
	assert_int_equal(next.res.rc, 0);
	assert_false(next.res.superseded);
	run_clear(&next);
}

/* A plan of one pod and the job's Service. */
static const struct act pod_and_service[] = {
	CREATE_POD(0, "vit-node-0-0"),
	CREATE_SERVICE(0, false),
};

/* A Service created, or found to exist, is known: the job's next plans send no create of
 * it. Another job's Service is not known. */
static void test_a_known_service_is_not_created_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = SERVICES, .status = 201, .body = "{}" },
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}" },
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}" },
	};
	struct tj_service_memo memo = { 0 };
	struct run r = { 0 }, again = { 0 };

	fx->services = &memo;
	server_script(&fx->server, replies, 3);
	start(fx, &r, pod_and_service, 2);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.res.services_created, 1);
	assert_true(tj_service_memo_has(&memo, "uid-vit"));
	assert_false(tj_service_memo_has(&memo, "uid-other"));
	/* The next plan: its pod goes, its Service does not. */
	start(fx, &again, pod_and_service, 2);
	SERVER_RUN_UNTIL(&fx->server, again.done_calls == 1);
	assert_int_equal(again.res.rc, 0);
	assert_int_equal(again.res.services_created, 0);
	assert_int_equal(fx->server.n_seen, 3);
	assert_int_equal(server_find(&fx->server, server_find(&fx->server, 0, "POST", SERVICES) + 1,
	                             "POST", SERVICES),
	                 -1);
	run_clear(&r);
	run_clear(&again);
}

/* Two plans of one job in flight at once post its Service once: the second finds the first's
 * create on its way. */
static void test_two_plans_at_once_post_the_service_once(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .repeat = true, .status = 201, .body = "{}" },
		{ .method = "POST", .path = SERVICES, .status = 201, .body = "{}", .hold = true },
	};
	struct tj_service_memo memo = { 0 };
	struct run first = { 0 }, second = { 0 };

	fx->services = &memo;
	server_script(&fx->server, replies, 2);
	start(fx, &first, pod_and_service, 2);
	SERVER_RUN_UNTIL(&fx->server, server_count(&fx->server, "POST", SERVICES) == 1);
	start(fx, &second, pod_and_service, 2);
	SERVER_RUN_UNTIL(&fx->server, second.done_calls == 1);
	assert_int_equal(second.res.rc, 0);
	assert_int_equal(second.res.services_created, 0);
	server_release(&fx->server, server_find(&fx->server, 0, "POST", SERVICES));
	SERVER_RUN_UNTIL(&fx->server, first.done_calls == 1);
	assert_int_equal(first.res.rc, 0);
	assert_int_equal(first.res.services_created, 1);
	assert_int_equal(server_count(&fx->server, "POST", SERVICES), 1);
	assert_true(tj_service_memo_has(&memo, "uid-vit"));
	run_clear(&first);
	run_clear(&second);
}

/* A Service whose create is refused is not known: the job's next plan posts it again. */
static void test_a_refused_service_is_posted_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .repeat = true, .status = 201, .body = "{}" },
		{ .method = "POST",
		  .path = SERVICES,
		  .status = 403,
		  .body = "{\"kind\":\"Status\",\"reason\":\"Forbidden\",\"code\":403}" },
		STATUS_ANSWER(false), /* the refusal, in the job's status */
		{ .method = "POST", .path = SERVICES, .status = 201, .body = "{}" },
	};
	struct tj_service_memo memo = { 0 };
	struct run r = { 0 }, again = { 0 };

	fx->services = &memo;
	server_script(&fx->server, replies, 4);
	start(fx, &r, pod_and_service, 2);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_not_equal(r.res.rc, 0);
	assert_false(tj_service_memo_has(&memo, "uid-vit"));
	start(fx, &again, pod_and_service, 2);
	SERVER_RUN_UNTIL(&fx->server, again.done_calls == 1);
	assert_int_equal(again.res.rc, 0);
	assert_int_equal(again.res.services_created, 1);
	assert_int_equal(server_count(&fx->server, "POST", SERVICES), 2);
	assert_true(tj_service_memo_has(&memo, "uid-vit"));
	run_clear(&r);
	run_clear(&again);
}

/* The memo keeps a uid once; the oldest uids make room for new ones; a forgotten one is not
 * known. */
static void test_service_memo(void **state)
{
	static struct tj_service_memo memo;
	char uid[32];

	tj_service_memo_add(&memo, "uid-0");
	assert_true(tj_service_memo_has(&memo, "uid-0"));
	tj_service_memo_add(&memo, "uid-0"); /* once */
	for (int i = 1; i < TJ_SERVICE_MEMO_SIZE; i++) {
		snprintf(uid, sizeof(uid), "uid-%d", i);
		tj_service_memo_add(&memo, uid);
	}
	assert_true(tj_service_memo_has(&memo, "uid-0"));
	tj_service_memo_add(&memo, "uid-new");
	assert_false(tj_service_memo_has(&memo, "uid-0"));
	assert_true(tj_service_memo_has(&memo, "uid-1"));
	assert_true(tj_service_memo_has(&memo, "uid-new"));
	tj_service_memo_forget(&memo, "uid-1");
	assert_false(tj_service_memo_has(&memo, "uid-1"));
	assert_true(tj_service_memo_has(&memo, "uid-2"));
	tj_service_memo_forget(NULL, "uid-2");
	tj_service_memo_forget(&memo, "");
	assert_false(tj_service_memo_has(NULL, "uid-1"));
	assert_false(tj_service_memo_has(&memo, ""));
	tj_service_memo_add(NULL, "x");
	tj_service_memo_add(&memo,
	                    "a-uid-longer-than-a-slot-of-the-memo-can-hold-0123456789abcdef-0123");
	assert_false(tj_service_memo_has(
	        &memo, "a-uid-longer-than-a-slot-of-the-memo-can-hold-0123456789abcdef-0123"));
}

#define BURST 8

static void test_a_burst_gets_its_pods_before_its_bookkeeping(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .repeat = true, .status = 201, .body = "{}" },
		{ .method = "POST", .path = SERVICES, .repeat = true, .status = 201, .body = "{}" },
	};
	struct run r[BURST] = { 0 };
	char names[BURST][2][64];
	int last_pod = -1, first_service = -1;

	make_gate(fx);
	server_script(&fx->server, replies, 2);
	for (int i = 0; i < BURST; i++) {
		snprintf(names[i][0], sizeof(names[i][0]), "{'metadata':{'name':'job%d-node-0-0'}}",
		         i);
		snprintf(names[i][1], sizeof(names[i][1]), "{'metadata':{'name':'job%d'}}", i);
		const struct act acts[] = {
			{ .kind = TJ_ACTION_CREATE_SERVICE,
			  .deferrable = true,
			  .name = "svc",
			  .object = names[i][1] },
			{ .kind = TJ_ACTION_CREATE_POD, .name = "pod", .object = names[i][0] },
		};
		start(fx, &r[i], acts, 2);
	}
	for (int i = 0; i < BURST; i++)
		SERVER_RUN_UNTIL(&fx->server, r[i].done_calls == 1);
	assert_int_equal(fx->server.n_seen, 2 * BURST);
	assert_int_equal(server_count(&fx->server, "POST", PODS), BURST);
	assert_int_equal(server_count(&fx->server, "POST", SERVICES), BURST);
	for (int i = 0; i < fx->server.n_seen; i++) {
		if (strcmp(fx->server.seen[i].path, PODS) == 0)
			last_pod = i;
		else if (first_service < 0)
			first_service = i;
	}
	/* Every pod of the burst went out before any Service. */
	assert_int_equal(last_pod, BURST - 1);
	assert_int_equal(first_service, BURST);
	for (int i = 0; i < BURST; i++) {
		assert_int_equal(r[i].res.rc, 0);
		assert_int_equal(r[i].res.pods_created, 1);
		assert_int_equal(r[i].res.services_created, 1);
		run_clear(&r[i]);
	}
}

/* A queued job's late status patch must not hold its next plan (the admitted gang's
 * creates): with queued the owner is told once the urgent writes are answered, as it
 * is for writes that wait for the gate, but a patch in flight cannot be superseded. Without
 * it the owner hears nothing until the end. */
static void test_a_last_status_patch_in_flight_frees_the_job(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}" },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}", .hold = true },
	};
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		PATCH_STATUS(1, true, "{'status':{'state':'Pending'}}"),
	};
	struct run r = { 0 };

	/* No gate: the patch goes out as soon as its stage starts. */
	server_script(&fx->server, replies, 2);
	server_script(&fx->server, replies, 2);
	start(fx, &r, acts, 2);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 2);
	server_spin(&fx->server);
	assert_int_equal(r.parked_calls, 0);
	server_release(&fx->server, 1);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.parked_calls, 0);
	run_clear(&r);

	r = (struct run){ 0 };
	fx->queued = true;
	start(fx, &r, acts, 2);
	SERVER_RUN_UNTIL(&fx->server, r.parked_calls == 1 && fx->server.n_seen == 4);
	assert_int_equal(r.done_calls, 0);
	assert_false(tj_execution_supersede(r.e));
	server_release(&fx->server, 3);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.parked_calls, 1);
	assert_int_equal(r.res.rc, 0);
	assert_int_equal(r.res.pods_created, 1);
	run_clear(&r);
}

/* A status patch that goes first (a restart decision) is urgent, and the creates after it
 * are too: the job stays held until they are answered. */
static void test_an_urgent_status_patch_holds_the_job(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}", .hold = true },
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}", .hold = true },
	};
	const struct act acts[] = {
		PATCH_STATUS(0, false, "{'status':{'state':'Restarting'}}"),
		CREATE_POD(1, "vit-node-0-0"),
	};
	struct run r = { 0 };

	make_gate(fx);
	server_script(&fx->server, replies, 2);
	start(fx, &r, acts, 2);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 1);
	server_release(&fx->server, 0);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 2);
	server_spin(&fx->server);
	assert_int_equal(r.parked_calls, 0);
	server_release(&fx->server, 1);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.parked_calls, 0);
	assert_int_equal(r.res.rc, 0);
	run_clear(&r);
}

/* A queued job's status patch goes by the pass of queued jobs' status writes, which a busy
 * queue does not hold. A newer plan of the job, made while that patch is in flight, waits
 * behind it, and once it is answered ends unsent, superseded, for the job to be planned
 * again from the answer. */
static void test_a_queued_status_goes_by_the_pass(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		STATUS_ANSWER(true),
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
	};
	const struct act acts[] = {
		PATCH_STATUS(0, true, "{'status':{'state':'Queued','queuePosition':2}}"),
		EVENT(0, "Queued"),
	};
	const struct act newer[] = {
		PATCH_STATUS(0, true, "{'status':{'state':'Queued','queuePosition':1}}"),
	};
	struct run r = { 0 }, next = { 0 };
	struct tj_write_gate_stats st;

	make_gate(fx);
	assert_int_equal(tj_recorder_new(fx->client, "trainjob-controller", "host", &fx->recorder),
	                 0);
	fx->busy = true;
	fx->queued = true;
	server_script(&fx->server, replies, 2);
	start(fx, &r, acts, 2);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 1);
	assert_int_equal(r.parked_calls, 1);
	start(fx, &next, newer, 1);
	SERVER_RUN_UNTIL(&fx->server, next.parked_calls == 1);
	server_spin(&fx->server);
	/* One write of the job in flight. */
	assert_string_equal(server_trace(&fx->server, NULL), "PATCH " STATUS "|");
	assert_pass(fx, 1, 1);
	tj_write_gate_stats(fx->gate, &st);
	assert_int_equal(st.deferred_in_flight, 0);
	server_release(&fx->server, 0);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1 && next.done_calls == 1 &&
	                                      server_count(&fx->server, "POST", EVENTS) == 1);
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "PATCH " STATUS "|POST " EVENTS "|");
	assert_request_body(&fx->server, 0, "{'status':{'state':'Queued','queuePosition':2}}");
	assert_int_equal(r.res.rc, 0);
	assert_false(r.res.superseded);
	assert_int_equal(r.res.events, 1);
	assert_int_equal(next.res.rc, 0);
	assert_true(next.res.superseded);
	assert_true(next.res.replan);
	assert_pass(fx, 0, 0);
	run_clear(&r);
	run_clear(&next);
}

/* A last stage whose status patch was planned before the answer of the job's previous status
 * write, which came while the earlier stages went, is dropped unsent though nothing holds it,
 * and the job is planned again from the answer. */
static void test_a_last_stage_planned_from_an_older_version_is_planned_again(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}", .hold = true },
	};
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		PATCH_STATUS(1, true,
		             "{'metadata':{'resourceVersion':'41'},'status':{'state':'Running'}}"),
	};
	struct run r = { 0 };

	/* No gate: the stage's writes would go as soon as it starts. */
	fx->cached_version = "41";
	server_script(&fx->server, replies, 1);
	start(fx, &r, acts, 2);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 1);
	/* The job's previous status write was answered meanwhile, with version 42. */
	fx->cached_version = "42";
	server_release(&fx->server, 0);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|");
	assert_int_equal(r.res.rc, 0);
	assert_int_equal(r.res.pods_created, 1);
	assert_true(r.res.superseded);
	assert_true(r.res.replan);
	run_clear(&r);
}

/* A queued job's status patch whose turn comes after the cache has brought a newer version of
 * the job (someone else's write, seen by the watch, while it waited in the pass) is dropped
 * unsent and the job planned again, as a held patch is at the gate; the pass no longer counts
 * it in flight. */
static void test_a_queued_status_planned_from_an_older_version_is_planned_again(void **state)
{
	struct fixture *fx = *state;
	const struct act acts[] = {
		PATCH_STATUS(0, true,
		             "{'metadata':{'resourceVersion':'41'},'status':{'state':'Queued'}}"),
		EVENT(0, "Queued"),
	};
	struct run r = { 0 };

	make_gate(fx);
	fx->queued = true;
	fx->cached_version = "41";
	fx->version_at_parked = "42";
	start(fx, &r, acts, 2);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	server_spin(&fx->server);
	assert_int_equal(r.parked_calls, 1);
	assert_string_equal(server_trace(&fx->server, NULL), "");
	assert_int_equal(fx->outdated_calls, 2);
	assert_true(r.res.superseded);
	assert_true(r.res.replan);
	assert_int_equal(r.res.events, 0);
	assert_pass(fx, 0, 0);
	run_clear(&r);
}

/* An admitted job's status patch waits for the job's status write in flight, as a queued
 * job's does in the pass: planned before that write's answer, it could only meet a conflict.
 * Once the answer is in, it ends unsent, superseded, for the job to be planned again; a plan
 * made after the answer sends its patch at once. */
static void test_a_status_patch_waits_for_the_one_in_flight(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		STATUS_ANSWER(true),
		STATUS_ANSWER(false),
	};
	const struct act acts[] = {
		PATCH_STATUS(0, true, "{'status':{'state':'Running'}}"),
	};
	const struct act newer[] = {
		PATCH_STATUS(0, true, "{'status':{'state':'Running','message':'newer'}}"),
	};
	struct run r = { 0 }, next = { 0 }, after = { 0 };

	make_gate(fx);
	server_script(&fx->server, replies, 2);
	start(fx, &r, acts, 1);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 1);
	start(fx, &next, newer, 1);
	SERVER_RUN_UNTIL(&fx->server, next.parked_calls == 1);
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "PATCH " STATUS "|");
	/* Blocked behind the write in flight, which takes no place of the pass's width. */
	assert_pass(fx, 0, 1);
	server_release(&fx->server, 0);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1 && next.done_calls == 1);
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "PATCH " STATUS "|");
	assert_int_equal(r.res.rc, 0);
	assert_false(r.res.superseded);
	assert_int_equal(next.res.rc, 0);
	assert_true(next.res.superseded);
	assert_true(next.res.replan);
	assert_pass(fx, 0, 0);
	start(fx, &after, newer, 1);
	SERVER_RUN_UNTIL(&fx->server, after.done_calls == 1);
	assert_string_equal(server_trace(&fx->server, NULL), "PATCH " STATUS "|PATCH " STATUS "|");
	assert_request_body(&fx->server, 1, "{'status':{'state':'Running','message':'newer'}}");
	assert_false(after.res.superseded);
	run_clear(&r);
	run_clear(&next);
	run_clear(&after);
}

/* A status patch that goes before its plan's pod writes (a restart decision) is sent though
 * another of its job is in flight: held, its execution could be superseded, and the pod
 * writes the controller expects from it would never go. */
static void test_a_status_patch_before_pod_writes_does_not_wait(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}", .hold = true },
		{ .method = "PATCH", .path = STATUS, .status = 200, .body = "{}" },
		{ .method = "POST", .path = PODS, .status = 201, .body = "{}" },
	};
	const struct act acts[] = {
		PATCH_STATUS(0, true, "{'status':{'state':'Running'}}"),
	};
	const struct act restart[] = {
		PATCH_STATUS(0, false, "{'status':{'state':'Restarting'}}"),
		CREATE_POD(1, "vit-node-0-0"),
	};
	struct run r = { 0 }, next = { 0 };

	make_gate(fx);
	server_script(&fx->server, replies, 3);
	start(fx, &r, acts, 1);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 1);
	start(fx, &next, restart, 2);
	SERVER_RUN_UNTIL(&fx->server, next.done_calls == 1);
	assert_int_equal(next.parked_calls, 0);
	assert_int_equal(next.res.pods_created, 1);
	server_release(&fx->server, 0);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	run_clear(&r);
	run_clear(&next);
}

/* ---- supersede and cancel ----------------------------------------------------------------- */

static void test_supersede_drops_the_waiting_writes(void **state)
{
	struct fixture *fx = *state;
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		CREATE_SERVICE(0, true),
		EVENT(0, "Created"),
		PATCH_STATUS(1, true, "{'status':{'state':'Pending'}}"),
	};
	struct run r = { 0 };

	make_gate(fx);
	fx->busy = true;
	server_script(&fx->server, &held, 1);
	assert_false(tj_execution_supersede(NULL));
	start(fx, &r, acts, 4);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 1);
	/* The pod create is in flight: a newer plan must wait for this one. */
	assert_false(tj_execution_supersede(r.e));
	assert_int_equal(r.parked_calls, 0);
	server_release(&fx->server, 0);
	SERVER_RUN_UNTIL(&fx->server, r.parked_calls == 1);
	assert_true(tj_execution_supersede(r.e));
	assert_int_equal(r.done_calls, 0); /* never from inside the call */
	assert_int_equal(gate_waiting(fx), 0);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	fx->busy = false;
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|");
	assert_true(r.res.superseded);
	assert_int_equal(r.res.rc, 0);
	assert_int_equal(r.res.pods_created, 1);
	assert_int_equal(r.res.services_created, 0);
	assert_int_equal(r.res.events, 0);
	assert_int_equal(r.done_calls, 1);
	run_clear(&r);
}

/* A gang's create refused while its Service waits for the gate: a newer plan supersedes the
 * execution, and the refusal still goes into the status, for that plan and the author. */
static void test_supersede_still_records_a_refusal(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = PODS,
		  .status = 403,
		  .body = API_ERROR(403, "Forbidden", "pods is forbidden: exceeded quota: gpu") },
		STATUS_ANSWER(false),
	};
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		CREATE_SERVICE(0, true),
		PATCH_STATUS(1, true, "{'status':{'state':'Pending'}}"),
	};
	struct run r = { 0 };

	make_gate(fx);
	fx->busy = true;
	server_script(&fx->server, replies, 2);
	start(fx, &r, acts, 3);
	SERVER_RUN_UNTIL(&fx->server, r.parked_calls == 1);
	assert_true(tj_execution_supersede(r.e));
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	fx->busy = false;
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|PATCH " STATUS "|");
	assert_request_body(&fx->server, 1,
	                    "{'status':{'state':'Pending','reason':'FailedCreate','message':'pods "
	                    "is forbidden: exceeded quota: gpu'}}");
	assert_true(r.res.superseded);
	assert_int_equal(r.res.refusal, TJ_REFUSAL_RETRY);
	assert_non_null(r.res.refused_trainjob);
	assert_int_equal(r.res.services_created, 0);
	run_clear(&r);
}

static void test_cancel_in_the_middle_of_a_stage(void **state)
{
	struct fixture *fx = *state;
	const struct act acts[] = {
		CREATE_POD(0, "vit-node-0-0"),
		CREATE_POD(0, "vit-node-0-1"),
		CREATE_SERVICE(0, true),
		PATCH_STATUS(1, false, "{'status':{'state':'Pending'}}"),
	};
	struct run r = { 0 }, early = { 0 };

	make_gate(fx);
	server_script(&fx->server, (const struct reply[]){ held, held }, 2);
	start(fx, &r, acts, 4);
	SERVER_RUN_UNTIL(&fx->server, fx->server.n_seen == 2);
	assert_int_equal(urgent_in_flight(fx), 2);
	assert_int_equal(gate_waiting(fx), 1);
	tj_execution_cancel(r.e);
	/* Its writes leave the gate's counts, its requests are closed, and it stays silent. */
	assert_int_equal(urgent_in_flight(fx), 0);
	assert_int_equal(gate_waiting(fx), 0);
	SERVER_RUN_UNTIL(&fx->server, fx->server.eofs == 2);
	server_spin(&fx->server);
	assert_int_equal(r.done_calls, 0);
	assert_int_equal(r.parked_calls, 0);
	assert_string_equal(server_trace(&fx->server, NULL), "POST " PODS "|POST " PODS "|");

	/* Cancelled before its first stage started: nothing is sent. */
	start(fx, &early, acts, 4);
	tj_execution_cancel(early.e);
	tj_execution_cancel(NULL);
	server_spin(&fx->server);
	assert_int_equal(fx->server.n_seen, 2);
	assert_int_equal(early.done_calls, 0);
	/* teardown: every handle closed, and the sanitizer finds nothing left allocated. */
}

/* An MPI job's Secret: the executor makes its key pair just before the create, so the body
 * carries a new P-521 key and its authorized_keys line. */
static void test_ssh_secret_gets_a_key_pair(void **state)
{
	struct fixture *fx = *state;
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = "/api/v1/namespaces/team-a/secrets",
		  .status = 201,
		  .body = "{}" },
	};
	struct tj_execute_config ec = { .client = fx->client,
		                        .recorder = fx->recorder,
		                        .gate = fx->gate,
		                        .done = on_done,
		                        .parked = on_parked };
	const struct tj_event_object job = { "team-a", "vit", "uid-vit", NULL };
	const struct act acts[] = {
		{ .kind = TJ_ACTION_CREATE_OBJECT,
		  .name = "vit-mpi-ssh-auth",
		  .object =
		          "{'apiVersion':'v1','kind':'Secret','metadata':{'name':"
		          "'vit-mpi-ssh-auth'},'type':'kubernetes.io/ssh-auth','immutable':true}" },
	};
	struct tj_plan *plan = plan_of(acts, 1);
	struct run r = { .fx = fx };
	cJSON *body;

	plan->actions[0].ssh_key = true;
	ec.userdata = &r;
	server_script(&fx->server, replies, 1);
	assert_int_equal(tj_execute(&ec, &job, plan, NOW_NS, &r.e), 0);
	SERVER_RUN_UNTIL(&fx->server, r.done_calls == 1);
	assert_int_equal(r.res.rc, 0);
	assert_int_equal(r.res.objects_created, 1);
	body = cJSON_Parse(fx->server.seen[0].body);
	assert_non_null(body);
	/* "-----BEGIN EC PRIVATE KEY-----" and "ecdsa-sha2-nistp521 " in base64 */
	assert_memory_equal(tj_json_string(body, "data.ssh-privatekey"),
	                    "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t", 40);
	assert_memory_equal(tj_json_string(body, "data.ssh-publickey"), "ZWNkc2Etc2hhMi1uaXN0cDUy",
	                    24);
	assert_string_equal(tj_json_string(body, "type"), "kubernetes.io/ssh-auth");
	cJSON_Delete(body);
	run_clear(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stages_run_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_creates_that_got_no_answer_are_sent_again,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_pod_patch_is_a_merge_patch_and_not_found_is_success, setup, teardown),
		cmocka_unit_test_setup_teardown(test_already_exists_and_not_found_are_success,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_pod_patch_and_service_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_and_pod_group, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_and_pod_group_deletes, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_status_conflict_stops_the_plan, setup,
		                                teardown),
		cmocka_unit_test(test_failed_create_ends_the_plan),
		cmocka_unit_test_setup_teardown(test_create_object_by_kind, setup, teardown),
		cmocka_unit_test(test_object_resources),
		cmocka_unit_test_setup_teardown(
		        test_a_status_patch_planned_before_the_last_answer_is_planned_again, setup,
		        teardown),
		cmocka_unit_test_setup_teardown(test_a_known_service_is_not_created_again, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_two_plans_at_once_post_the_service_once, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_a_refused_service_is_posted_again, setup,
		                                teardown),
		cmocka_unit_test(test_service_memo),
		cmocka_unit_test_setup_teardown(test_deferrable_writes_wait_for_the_gate, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_a_burst_gets_its_pods_before_its_bookkeeping,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_last_status_patch_in_flight_frees_the_job,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_urgent_status_patch_holds_the_job, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_a_queued_status_goes_by_the_pass, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_last_stage_planned_from_an_older_version_is_planned_again, setup,
		        teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_queued_status_planned_from_an_older_version_is_planned_again, setup,
		        teardown),
		cmocka_unit_test_setup_teardown(test_a_status_patch_waits_for_the_one_in_flight,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_status_patch_before_pod_writes_does_not_wait,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_supersede_drops_the_waiting_writes, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_supersede_still_records_a_refusal, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_cancel_in_the_middle_of_a_stage, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_ssh_secret_gets_a_key_pair, setup, teardown),
	};
	return cmocka_run_group_tests_name("executor", tests, NULL, NULL);
}
