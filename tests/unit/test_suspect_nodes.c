/* Suspect nodes at the edge, against the scripted API server (scripted_server.h): what the
 * leader writes as failures come (the node's failures annotation, then the taint and the
 * mark with the node's other taints kept), the events on the Node and on each job, the wait
 * for the write's echo in the cache, a conflict made again from the newer node, a replica
 * that does not lead, and the taint removed by the operator. The decisions themselves are
 * test_suspect.c's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/executor/recorder.h"
#include "controller/log/log.h"
#include "controller/suspect_nodes.h"
#include "reconcilers/policy/suspect.h"
#include "scripted_server.h"

#define NOW   INT64_C(1796126400) /* 2026-12-01T12:00:00Z */
#define NODE  "/api/v1/nodes/gh200-1"
#define EVENT "/api/v1/namespaces/"

static uint64_t clock_now(void)
{
	return (uint64_t)NOW * 1000000000u;
}

/* The node as the cache has it: one version after another. */
struct cached_node {
	struct tj_node node;
	struct tj_node_taint taints[2];
	struct tj_node_condition ready;
	char rv[16];
	char failures[1024];
	char mark[1024];
};

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
	struct tj_recorder *recorder;
	struct tj_suspect_nodes *s;
	struct cached_node versions[8];
	int current; /* the index of the version the cache has */
};

static const struct tj_node *lookup(void *ctx, const char *name)
{
	struct fixture *fx = ctx;

	return strcmp(name, "gh200-1") == 0 ? &fx->versions[fx->current].node : NULL;
}

/* The jobs' uids, as the TrainJob cache has them: "team-a/a" is "uid-a". */
static const char *job_uid(void *ctx, const char *key)
{
	static char uid[64];

	(void)ctx;
	snprintf(uid, sizeof(uid), "uid-%s", strchr(key, '/') + 1);
	return uid;
}

/* Version v of the node: resourceVersion v, the GPU taint, and as said the suspect taint, the
 * failures annotation and the mark. */
static struct tj_node *version(struct fixture *fx, int v, bool tainted, const char *failures,
                               const char *mark)
{
	struct cached_node *c = &fx->versions[v];

	snprintf(c->rv, sizeof(c->rv), "%d", v);
	c->ready = (struct tj_node_condition){ "Ready", TJ_COND_TRUE, NULL, NOW - 3600 };
	c->taints[0] = (struct tj_node_taint){ "nvidia.com/gpu", "present", "NoSchedule", 0 };
	c->taints[1] = (struct tj_node_taint){ TJ_TAINT_SUSPECT, NULL, "NoSchedule", NOW };
	snprintf(c->failures, sizeof(c->failures), "%s", failures ? failures : "");
	snprintf(c->mark, sizeof(c->mark), "%s", mark ? mark : "");
	c->node = (struct tj_node){
		.name = "gh200-1",
		.resource_version = c->rv,
		.conditions = &c->ready,
		.n_conditions = 1,
		.taints = c->taints,
		.n_taints = tainted ? 2 : 1,
		.failures = failures ? c->failures : NULL,
		.suspect_mark = mark ? c->mark : NULL,
	};
	return &c->node;
}

/* The cache moves to version v: the watch's update. */
static void moves_to(struct fixture *fx, int v)
{
	int was = fx->current;

	fx->current = v;
	tj_suspect_nodes_node_changed(fx->s, &fx->versions[was].node, &fx->versions[v].node);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	static const struct reply replies[] = {
		{ .method = "POST", .path = NULL, .repeat = true, .status = 201, .body = "{}" },
	};

	assert_non_null(fx);
	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	fx->client = server_client_new(&fx->server);
	assert_int_equal(
	        tj_recorder_new(fx->client, "trainjob-controller", "ctrl-0", &fx->recorder), 0);
	assert_int_equal(
	        tj_suspect_nodes_new(&(struct tj_suspect_nodes_config){ .client = fx->client,
	                                                                .recorder = fx->recorder,
	                                                                .node_lookup = lookup,
	                                                                .node_ctx = fx,
	                                                                .job_uid = job_uid,
	                                                                .clock = clock_now },
	                             &fx->s),
	        0);
	version(fx, 0, false, NULL, NULL);
	tj_suspect_nodes_node_changed(fx->s, NULL, &fx->versions[0].node);
	server_script(&fx->server, replies, 1);
	server_capture_log(&fx->server);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fx->s = tj_suspect_nodes_free(fx->s);
	fx->recorder = tj_recorder_free(fx->recorder);
	fx->client = tj_client_free(fx->client);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

/* A rank of job name in team-a that ended on gh200-1 with SIGBUS, 10 s before now. */
static void crash(struct fixture *fx, const char *name)
{
	struct tj_pod running = {
		.namespace = "team-a",
		.name = "p",
		.trainjob = (char *)name,
		.node_name = "gh200-1",
		.attempt = 0,
		.rank = 0,
		.phase = TJ_POD_RUNNING,
		.start_time = NOW - 100,
		.held_seconds = -1,
	};
	struct tj_pod failed = running;

	failed.phase = TJ_POD_FAILED;
	failed.terminated = true;
	failed.exit_code = 135;
	failed.exit_reason = "Error";
	failed.held_seconds = 90;
	tj_suspect_nodes_pod_changed(fx->s, &running, &failed);
}

static int patches(const struct fixture *fx)
{
	return server_count(&fx->server, "PATCH", NODE);
}

static void answer_patches(struct fixture *fx, int status, const char *body)
{
	const struct reply r = { .method = "PATCH", .path = NODE, .status = status, .body = body };

	server_script(&fx->server, &r, 1);
}

static void test_three_jobs_mark_the_node_until_the_taint_is_removed(void **state)
{
	struct fixture *fx = *state;
	int i;

	tj_suspect_nodes_set_leading(fx->s, true);
	answer_patches(fx, 200, "{}");
	crash(fx, "a");
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 1);
	i = server_find(&fx->server, 0, "PATCH", NODE);
	assert_request_body(&fx->server, i,
	                    "{'metadata':{'annotations':{'trainjob.flame.dev/failures':"
	                    "'1796126390:135:0:team-a/a'}}}");
	server_spin(&fx->server);
	/* A second crash before the cache shows the first write waits for it. */
	crash(fx, "b");
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 1);
	assert_false(tj_suspect_nodes_blames(fx->s, "gh200-1"));
	version(fx, 1, false, "1796126390:135:0:team-a/a", NULL);
	answer_patches(fx, 200, "{}");
	moves_to(fx, 1);
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 2);
	i = server_find(&fx->server, i + 1, "PATCH", NODE);
	assert_request_body(&fx->server, i,
	                    "{'metadata':{'annotations':{'trainjob.flame.dev/failures':"
	                    "'1796126390:135:0:team-a/a,1796126390:135:0:team-a/b'}}}");
	server_spin(&fx->server);
	version(fx, 2, false, "1796126390:135:0:team-a/a,1796126390:135:0:team-a/b", NULL);
	moves_to(fx, 2);

	/* The third job: the taint after the node's own, the mark, with the version it was
	 * made from; blamed at once, before the cache shows the taint. */
	answer_patches(fx, 200, "{}");
	crash(fx, "c");
	assert_true(tj_suspect_nodes_blames(fx->s, "gh200-1"));
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 3);
	i = server_find(&fx->server, i + 1, "PATCH", NODE);
	assert_request_body(
	        &fx->server, i,
	        "{'metadata':{'annotations':{'trainjob.flame.dev/suspect':'2026-12-01T12:00:00Z "
	        "ranks of 3 TrainJobs failed on it within 3600 s (team-a/a, team-a/b, team-a/c)',"
	        "'trainjob.flame.dev/failures':'1796126390:135:0:team-a/a,1796126390:135:0:team-a/"
	        "b,1796126390:135:0:team-a/c'},'resourceVersion':'2'},"
	        "'spec':{'taints':[{'key':'nvidia.com/"
	        "gpu','effect':'NoSchedule','value':'present'},"
	        "{'key':'trainjob.flame.dev/suspect','effect':'NoSchedule',"
	        "'timeAdded':'2026-12-01T12:00:00Z'}]}}");
	/* The Node's event and each job's. */
	SERVER_RUN_UNTIL(&fx->server,
	                 server_count(&fx->server, "POST", EVENT "default/events") == 1 &&
	                         server_count(&fx->server, "POST", EVENT "team-a/events") == 3);
	i = server_find(&fx->server, 0, "POST", EVENT "team-a/events");
	assert_non_null(strstr(fx->server.seen[i].body,
	                       "node gh200-1 is suspect: ranks of this job and of team-a/b, "
	                       "team-a/c failed there within 3600 s"));
	/* kubectl describe finds a job's events by its uid. */
	assert_non_null(strstr(fx->server.seen[i].body, "\"uid\":\"uid-a\""));
	assert_non_null(strstr(fx->server.log, "node is suspect"));

	/* The echo: nothing more to write. */
	version(fx, 3, true,
	        "1796126390:135:0:team-a/a,1796126390:135:0:team-a/b,1796126390:135:0:team-a/c",
	        "2026-12-01T12:00:00Z ranks of 3 TrainJobs failed on it");
	moves_to(fx, 3);
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 3);
	assert_true(tj_suspect_nodes_blames(fx->s, "gh200-1"));

	/* The operator removes the taint: the mark and the failures go, and the node is blamed
	 * for nothing. */
	answer_patches(fx, 200, "{}");
	version(fx, 4, false,
	        "1796126390:135:0:team-a/a,1796126390:135:0:team-a/b,1796126390:135:0:team-a/c",
	        "2026-12-01T12:00:00Z ranks of 3 TrainJobs failed on it");
	moves_to(fx, 4);
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 4);
	i = server_find(&fx->server, i + 1, "PATCH", NODE);
	assert_request_body(&fx->server, i,
	                    "{'metadata':{'annotations':{'trainjob.flame.dev/failures':"
	                    "'cleared:1796126400','trainjob.flame.dev/suspect':null}}}");
	assert_false(tj_suspect_nodes_blames(fx->s, "gh200-1"));
	SERVER_RUN_UNTIL(&fx->server,
	                 server_count(&fx->server, "POST", EVENT "default/events") == 2);
	version(fx, 5, false, "cleared:1796126400", NULL);
	moves_to(fx, 5);
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 4);
}

/* After a restart, the crashed pods still in the cluster from before the operator cleared
 * the node count no more; a crash after the clear does. */
static void test_a_cleared_node_forgets_the_pods_that_stay(void **state)
{
	struct fixture *fx = *state;

	version(fx, 1, false, "cleared:1796126395", NULL);
	moves_to(fx, 1);
	tj_suspect_nodes_set_leading(fx->s, true);
	crash(fx, "a"); /* at NOW - 10, before the clear */
	crash(fx, "b");
	crash(fx, "c");
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 0);
	assert_false(tj_suspect_nodes_blames(fx->s, "gh200-1"));
	/* The annotation keeps the clear with the failures after it. */
	answer_patches(fx, 200, "{}");
	tj_suspect_nodes_pod_changed(fx->s, NULL,
	                             &(struct tj_pod){ .namespace = "team-a",
	                                               .name = "p",
	                                               .trainjob = "d",
	                                               .node_name = "gh200-1",
	                                               .phase = TJ_POD_FAILED,
	                                               .terminated = true,
	                                               .exit_code = 135,
	                                               .held_seconds = -1 });
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 1);
	assert_request_body(&fx->server, server_find(&fx->server, 0, "PATCH", NODE),
	                    "{'metadata':{'annotations':{'trainjob.flame.dev/failures':"
	                    "'cleared:1796126395,1796126400:135:0:team-a/d'}}}");
}

/* A mark that meets a newer node (a heartbeat) is made again from the next version. */
static void test_a_conflict_is_written_again_from_the_newer_node(void **state)
{
	struct fixture *fx = *state;
	int i;

	version(fx, 1, false, "1796126390:135:0:team-a/a,1796126390:135:0:team-a/b", NULL);
	moves_to(fx, 1);
	answer_patches(fx, 409, API_ERROR(409, "Conflict", "the object has been modified"));
	tj_suspect_nodes_set_leading(fx->s, true);
	crash(fx, "c");
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 1);
	server_spin(&fx->server);
	/* Nothing again until the cache moves. */
	crash(fx, "d");
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 1);
	answer_patches(fx, 200, "{}");
	version(fx, 2, false, "1796126390:135:0:team-a/a,1796126390:135:0:team-a/b", NULL);
	moves_to(fx, 2);
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 2);
	i = server_find(&fx->server, 0, "PATCH", NODE);
	i = server_find(&fx->server, i + 1, "PATCH", NODE);
	assert_non_null(strstr(fx->server.seen[i].body, "\"resourceVersion\":\"2\""));
	assert_non_null(strstr(fx->server.seen[i].body, "team-a/d"));
	/* Told once, for the mark that was written. */
	SERVER_RUN_UNTIL(&fx->server,
	                 server_count(&fx->server, "POST", EVENT "team-a/events") == 4);
	server_spin(&fx->server);
	assert_int_equal(server_count(&fx->server, "POST", EVENT "default/events"), 1);
}

/* A restart the node's condition caused joins the history (exit code 0) and is written. */
static void test_a_node_condition_during_the_run_is_recorded(void **state)
{
	struct fixture *fx = *state;
	struct tj_node_failure f = { "gh200-1", "team-a/e", 1, 0, NOW - 5 };

	tj_suspect_nodes_set_leading(fx->s, true);
	answer_patches(fx, 200, "{}");
	tj_suspect_nodes_record(fx->s, &f);
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 1);
	assert_request_body(&fx->server, server_find(&fx->server, 0, "PATCH", NODE),
	                    "{'metadata':{'annotations':{'trainjob.flame.dev/failures':"
	                    "'1796126395:0:1:team-a/e'}}}");
	/* Recorded again (a plan made again after a failed write): nothing new. */
	version(fx, 1, false, "1796126395:0:1:team-a/e", NULL);
	moves_to(fx, 1);
	tj_suspect_nodes_record(fx->s, &f);
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 1);
}

/* A replica that does not lead keeps the history and writes nothing; leading, it writes. */
static void test_only_the_leader_writes(void **state)
{
	struct fixture *fx = *state;

	crash(fx, "a");
	crash(fx, "b");
	crash(fx, "c");
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 0);
	assert_true(tj_suspect_nodes_blames(fx->s, "gh200-1"));
	answer_patches(fx, 200, "{}");
	tj_suspect_nodes_set_leading(fx->s, true);
	SERVER_RUN_UNTIL(&fx->server, patches(fx) == 1);
	assert_non_null(strstr(fx->server.seen[server_find(&fx->server, 0, "PATCH", NODE)].body,
	                       TJ_TAINT_SUSPECT));
}

/* Switched off: no mark, no write, and nothing is blamed. */
static void test_switched_off(void **state)
{
	struct fixture *fx = *state;
	static int codes[] = { 135 };
	const struct tj_suspect_policy off = { .enabled = false,
		                               .jobs = 3,
		                               .window_seconds = 3600,
		                               .exit_codes = codes,
		                               .n_exit_codes = 1 };

	tj_suspect_nodes_set_policy(fx->s, &off);
	tj_suspect_nodes_set_leading(fx->s, true);
	crash(fx, "a");
	crash(fx, "b");
	crash(fx, "c");
	server_spin(&fx->server);
	assert_int_equal(patches(fx), 0);
	assert_false(tj_suspect_nodes_blames(fx->s, "gh200-1"));
}

/* The history comes back from the node's annotation, as after a restart. */
static void test_history_from_the_annotation(void **state)
{
	struct fixture *fx = *state;

	version(fx, 1, false,
	        "1796126390:135:0:team-a/a,1796126391:135:0:team-a/b,1796126392:139:2:team-b/c",
	        NULL);
	moves_to(fx, 1);
	assert_true(tj_suspect_nodes_blames(fx->s, "gh200-1"));
	/* A deleted node's history goes with it. */
	tj_suspect_nodes_node_changed(fx->s, &fx->versions[1].node, NULL);
	fx->current = 0;
	assert_false(tj_suspect_nodes_blames(fx->s, "gh200-1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		        test_three_jobs_mark_the_node_until_the_taint_is_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_conflict_is_written_again_from_the_newer_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_cleared_node_forgets_the_pods_that_stay,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_node_condition_during_the_run_is_recorded,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_the_leader_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_switched_off, setup, teardown),
		cmocka_unit_test_setup_teardown(test_history_from_the_annotation, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
