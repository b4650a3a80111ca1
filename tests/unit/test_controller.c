/* The controller loop end to end against the scripted API server (scripted_server.h): its
 * informers list and watch scripted TrainJobs, runtimes, pods and nodes, the workqueue hands
 * the key to a reconcile, the plan goes through the executor, the write gate and the event
 * recorder, and the tests pin down the writes that reach the server: a new TrainJob's pods
 * (one adopted after AlreadyExists), a status patch that meets 409 and is retried from the
 * object the watch brings, a stop in the middle of a plan, and a controller that does not
 * lead. controller-runtime's own controller tests drive its loop the same way. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/controller.h"
#include "controller/executor/recorder.h"
#include "controller/job_series.h"
#include "controller/log/log.h"
#include "controller/metrics/metrics.h"
#include "fixtures.h"
#include "scripted_server.h"

#define TRAINJOBS       "/apis/trainer.kubeflow.org/v1alpha1/trainjobs"
#define RUNTIMES        "/apis/trainer.kubeflow.org/v1alpha1/trainingruntimes"
#define CLUSTERRUNTIMES "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes"
#define ALL_PODS        "/api/v1/pods"
#define NODES           "/api/v1/nodes"
#define PRIORITYCLASSES "/apis/scheduling.k8s.io/v1/priorityclasses"
#define RESOURCEQUOTAS  "/api/v1/resourcequotas"
#define CONFIGMAPS      "/api/v1/configmaps"
#define PODS            "/api/v1/namespaces/team-a/pods"
#define SERVICES        "/api/v1/namespaces/team-a/services"
#define SNAPSHOTS       "/api/v1/namespaces/team-a/configmaps"
#define EVENTS          "/api/v1/namespaces/team-a/events"
#define STATUS          "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/vit/status"

/* The controller's clock: 2026-11-29T12:00:00Z. */
#define NOW   1795953600
#define NOW_S "2026-11-29T12:00:00Z"

/* A TrainJob "vit" of two nodes on torch-gh200; %s is its resourceVersion, %s its status. */
#define TRAINJOB_FMT                                                                               \
	"{'apiVersion':'trainer.kubeflow.org/"                                                     \
	"v1alpha1','kind':'TrainJob','metadata':{'name':'vit',"                                    \
	"'namespace':'team-a','uid':'uid-vit','resourceVersion':'%s','generation':2,"              \
	"'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':{'runtimeRef':{'name':'torch-gh200'}," \
	"'trainer':{'numNodes':2,'resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}}},"            \
	"'status':%s}"

/* A pod of vit of rank %d, attempt 0, Running and Ready on gh200-%d. */
#define POD_FMT                                                                                    \
	"{'kind':'Pod','metadata':{'name':'vit-node-0-%d-a0','namespace':'team-a',"                \
	"'uid':'uid-pod-%d','resourceVersion':'7',"                                                \
	"'labels':{'trainer.kubeflow.org/trainjob-name':'vit','trainjob.flame.dev/rank':'%d',"     \
	"'trainjob.flame.dev/attempt':'0'},'ownerReferences':[{'apiVersion':"                      \
	"'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'vit','uid':'uid-vit',"          \
	"'controller':true}]},'spec':{'nodeName':'gh200-%d'},'status':{'phase':'%s',"              \
	"'conditions':[{'type':'Ready','status':'%s'}]}}"

/* The nodes of the pods: Ready GH200 nodes. */
#define NODE_FMT                                                                                   \
	"{'kind':'Node','metadata':{'name':'gh200-%d','uid':'uid-node-%d','resourceVersion':'3',"  \
	"'labels':{'kubernetes.io/arch':'arm64','nvidia.com/gpu.product':'NVIDIA-GH200-480GB'}},"  \
	"'status':{'allocatable':{'nvidia.com/gpu':'4','cpu':'72','memory':'480Gi'},"              \
	"'conditions':[{'type':'Ready','status':'True',"                                           \
	"'lastTransitionTime':'2026-11-29T09:00:00Z'}]}}"

/* A notebook's pod, not a TrainJob's, holding the 4 GPUs of gh200-0. */
#define NOTEBOOK_POD                                                                               \
	"{'kind':'Pod','metadata':{'name':'notebook','namespace':'team-b','uid':'uid-nb',"         \
	"'resourceVersion':'8'},'spec':{'nodeName':'gh200-0','containers':[{'name':'lab',"         \
	"'resources':{'requests':{'nvidia.com/gpu':'4'},'limits':{'nvidia.com/gpu':'4'}}}]},"      \
	"'status':{'phase':'Running'}}"

#define MAX_BODY 16384

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
	struct tj_recorder *recorder;
	struct tj_controller *controller;
	struct tj_metrics *registry;
	struct tj_std_metrics metrics;
	unsigned max_concurrent; /* the controller's reconciles at once; 0: its default */
	int stopped_calls;
	int writes_at_stopped; /* the writes the server had seen when stopped ran */
	bool admission;        /* run with the built-in admission (off for the loop's mechanics) */
	struct tj_config config;
	char log[65536]; /* the lines logged */
	/* Bodies of the scripted replies, which the script borrows. */
	char bodies[24][MAX_BODY];
	int n_bodies;
};

static uint64_t fixed_clock(void)
{
	return (uint64_t)NOW * 1000000000ull;
}

/* A body for the script, written as JSON with ' for " (printf-style). */
__attribute__((format(printf, 2, 3))) static const char *body(struct fixture *fx, const char *fmt,
                                                              ...)
{
	char *b;
	va_list ap;
	int n;

	assert_true(fx->n_bodies < 24);
	b = fx->bodies[fx->n_bodies++];
	va_start(ap, fmt);
	n = vsnprintf(b, MAX_BODY, fmt, ap);
	va_end(ap);
	assert_in_range(n, 0, MAX_BODY - 1);
	for (char *p = b; *p; p++)
		if (*p == '\'')
			*p = '"';
	return b;
}

static const char *list_of(struct fixture *fx, const char *items)
{
	return body(fx, "{'kind':'List','metadata':{'resourceVersion':'100'},'items':[%s]}", items);
}

static const char *trainjob(struct fixture *fx, const char *rv, const char *status_sq)
{
	return body(fx, TRAINJOB_FMT, rv, status_sq);
}

static const char *pod(struct fixture *fx, int rank, bool running)
{
	return body(fx, POD_FMT, rank, rank, rank, rank, running ? "Running" : "Pending",
	            running ? "True" : "False");
}

/* The lists of the informers (the TrainJobs and pods given, the runtime torch-gh200, and the
 * nodes given, NULL for gh200-0 and gh200-1 as NODE_FMT makes them) and their watches, which
 * stay open. */
static void script_informers(struct fixture *fx, const char *trainjobs, const char *pods,
                             const char *given_nodes)
{
	char runtime[4096], nodes[2048];

	snprintf(runtime, sizeof(runtime), RUNTIME_FMT, "torch-gh200");
	if (given_nodes)
		snprintf(nodes, sizeof(nodes), "%s", given_nodes);
	else
		snprintf(nodes, sizeof(nodes), NODE_FMT "," NODE_FMT, 0, 0, 1, 1);
	const struct reply replies[] = {
		{ .method = "GET",
		  .path = TRAINJOBS,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, trainjobs) },
		{ .method = "GET",
		  .path = RUNTIMES,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, "") },
		{ .method = "GET",
		  .path = CLUSTERRUNTIMES,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, runtime) },
		{ .method = "GET",
		  .path = ALL_PODS,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, pods) },
		{ .method = "GET",
		  .path = NODES,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, nodes) },
		{ .method = "GET",
		  .path = PRIORITYCLASSES,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, "") },
		{ .method = "GET",
		  .path = RESOURCEQUOTAS,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, "") },
		/* The runtime snapshots: none yet. */
		{ .method = "GET",
		  .path = CONFIGMAPS,
		  .query = "limit=",
		  .status = 200,
		  .body = list_of(fx, "") },
		/* The accounting records of the jobs' namespaces, read once the controller leads:
		 * none yet. */
		{ .method = "GET",
		  .path = "/api/v1/namespaces/team-a/configmaps/trainjob-accounting",
		  .repeat = true,
		  .status = 404,
		  .body = "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}" },
		{ .method = "GET",
		  .path = "/api/v1/namespaces/team-b/configmaps/trainjob-accounting",
		  .repeat = true,
		  .status = 404,
		  .body = "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}" },
		{ .method = "GET",
		  .path = TRAINJOBS,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
		{ .method = "GET",
		  .path = RUNTIMES,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
		{ .method = "GET",
		  .path = CLUSTERRUNTIMES,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
		{ .method = "GET",
		  .path = ALL_PODS,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
		{ .method = "GET",
		  .path = NODES,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
		{ .method = "GET",
		  .path = PRIORITYCLASSES,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
		{ .method = "GET",
		  .path = RESOURCEQUOTAS,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
		{ .method = "GET",
		  .path = CONFIGMAPS,
		  .query = "watch=1",
		  .status = 200,
		  .chunked = true,
		  .keep_open = true },
	};

	server_script(&fx->server, replies, sizeof(replies) / sizeof(replies[0]));
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	fx->client = server_client_new(&fx->server);
	assert_int_equal(
	        tj_recorder_new(fx->client, "trainjob-controller", "ctrl-0", &fx->recorder), 0);
	assert_int_equal(tj_metrics_new(&fx->registry), 0);
	assert_int_equal(tj_std_metrics_register(fx->registry, &fx->metrics), 0);
	server_capture_log(&fx->server);
	*state = fx;
	return 0;
}

static int n_writes(const struct server *s);

static void on_stopped(void *userdata)
{
	struct fixture *fx = userdata;

	fx->stopped_calls++;
	fx->writes_at_stopped = n_writes(&fx->server);
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	if (fx->controller && fx->stopped_calls == 0) {
		tj_controller_stop(fx->controller, on_stopped, fx);
		SERVER_RUN_UNTIL(&fx->server, fx->stopped_calls == 1);
	}
	fx->controller = tj_controller_free(fx->controller);
	fx->recorder = tj_recorder_free(fx->recorder);
	fx->client = tj_client_free(fx->client);
	fx->registry = tj_metrics_free(fx->registry);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

/* Starts the controller; it lists, watches and, when leading, reconciles. */
static void start(struct fixture *fx, bool leading)
{
	struct tj_controller_config cc = {
		.client = fx->client,
		.recorder = fx->recorder,
		.metrics = &fx->metrics,
		.clock = fixed_clock,
		/* The script answers lists (the reflector's own tests cover streaming lists). */
		.paginated_lists = true,
		.max_concurrent = fx->max_concurrent,
	};

	static const struct tj_admission_policy off = { .enabled = false };

	fx->config = test_config;
	if (!fx->admission)
		fx->config.admission = (struct tj_admission_policy *)&off;
	assert_int_equal(tj_controller_new(&fx->loop, &cc, &fx->controller), 0);
	tj_controller_set_config(fx->controller, &fx->config);
	tj_controller_set_leading(fx->controller, leading);
	assert_int_equal(tj_controller_start(fx->controller), 0);
	SERVER_RUN_UNTIL(&fx->server, tj_controller_synced(fx->controller));
}

/* The index of the nth write (0-based). */
static int write_index(const struct server *s, int nth)
{
	for (int i = 0; i < s->n_seen; i++)
		if (strcmp(s->seen[i].method, "GET") != 0 && nth-- == 0)
			return i;
	fail_msg("no write %d", nth);
	return -1;
}

static int n_writes(const struct server *s)
{
	int n = 0;

	for (int i = 0; i < s->n_seen; i++)
		n += strcmp(s->seen[i].method, "GET") != 0;
	return n;
}

/* The status of a job whose pods were created at 11:00 and do not run yet. */
#define STARTED_STATUS                                                                             \
	"{'state':'Pending','reason':'PodsStarting','message':'0 of 2 pods running',"              \
	"'restartCount':0,'startTime':'2026-11-29T11:00:00Z','observedGeneration':2,"              \
	"'jobsStatus':[{'name':'node','active':1,'ready':0,'succeeded':0,'failed':0,"              \
	"'suspended':0}],'conditions':[]}"

/* What the plan of a new job writes to its status, and the status it then has. */
#define NEW_JOB_STATUS                                                                             \
	"'state':'Pending','reason':'PodsStarting','message':'0 of 2 pods running',"               \
	"'restartCount':0,'lastFailure':null,'startTime':'" NOW_S                                  \
	"','completionTime':null,'expectedStartTime':null,'deadline':null,'cleanupTime':null,"     \
	"'queuePosition':null,"                                                                    \
	"'observedGeneration':2,'jobsStatus':[{'name':'node','active':0,'ready':0,'succeeded':0,"  \
	"'failed':0,'suspended':0}],'conditions':[]"

/* What the plan of a job whose pods all run writes, and the status it then has. */
#define RUNNING_STATUS                                                                             \
	"'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods running',"             \
	"'restartCount':0,'lastFailure':null,'startTime':'2026-11-29T11:00:00Z',"                  \
	"'completionTime':null,'expectedStartTime':null,'deadline':null,'cleanupTime':null,"       \
	"'queuePosition':null,'"                                                                   \
	"observedGeneration'"                                                                      \
	":2,'jobsStatus':[{'name':'node','active':1,"                                              \
	"'ready':1,'succeeded':0,'failed':0,'suspended':0}],'conditions':[]"

/* The patch that takes STARTED_STATUS to RUNNING_STATUS: the fields that change. */
#define RUNNING_CHANGES                                                                            \
	"'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods running',"             \
	"'jobsStatus':[{'name':'node','active':1,'ready':1,'succeeded':0,'failed':0,'suspended':"  \
	"0}]"

#define OWNER                                                                                      \
	"\"ownerReferences\":[{\"apiVersion\":\"trainer.kubeflow.org/v1alpha1\",\"kind\":"         \
	"\"TrainJob\",\"name\":\"vit\",\"uid\":\"uid-vit\",\"controller\":true,"                   \
	"\"blockOwnerDeletion\":true}]"

/* The Event the controller's clock names. */
#define EVENT_NAME "vit.18ec8248a9158000"

static struct tj_workqueue_stats queue_stats(const struct fixture *fx)
{
	struct tj_workqueue_stats st;

	tj_controller_queue_stats(fx->controller, &st);
	return st;
}

static uint64_t gate_waiting(const struct fixture *fx)
{
	struct tj_write_gate_stats st;

	tj_controller_gate_stats(fx->controller, &st);
	return st.waiting;
}

/* Nothing queued, waiting or being reconciled. */
static bool quiet(const struct fixture *fx)
{
	struct tj_workqueue_stats st = queue_stats(fx);

	return st.depth == 0 && st.in_flight == 0 && st.waiting == 0;
}

/* The answer to the create of the pod named name_. */
#define POD_CREATED(name_, status_, body_)                                                         \
	{                                                                                          \
		.method = "POST", .path = PODS, .request_has = "\"name\":\"" name_ "\"",           \
		.status = (status_), .body = (body_)                                               \
	}

/* The API server's answer to a write it throttled. */
#define THROTTLED API_ERROR(429, "TooManyRequests", "too many requests")

/* The informers' view of a new job "vit", and the answers to its writes: rank 0's pod is
 * created, rank 1's exists already (a create repeated after a crash); pod_hold holds both
 * answers back. */
static void script_new_job(struct fixture *fx, bool pod_hold)
{
	script_informers(fx, trainjob(fx, "42", "{}"), "", NULL);
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = PODS,
		  .request_has = "\"name\":\"vit-node-0-0-a0\"",
		  .hold = pod_hold,
		  .status = 201,
		  .body = "{}" },
		{ .method = "POST",
		  .path = PODS,
		  .request_has = "\"name\":\"vit-node-0-1-a0\"",
		  .hold = pod_hold,
		  .status = 409,
		  .body = API_ERROR(409, "AlreadyExists", "pods vit-node-0-1-a0 already exists") },
		{ .method = "POST",
		  .path = SNAPSHOTS,
		  .request_has = "\"name\":\"vit-runtime-snapshot\"",
		  .status = 201,
		  .body = "{}" },
		{ .method = "POST", .path = SERVICES, .status = 201, .body = "{}" },
		{ .method = "PATCH",
		  .path = STATUS,
		  .status = 200,
		  .body = trainjob(fx, "43", "{" NEW_JOB_STATUS "}") },
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
	};
	server_script(&fx->server, replies, 6);
}

/* The writes of a new job's plan, in order: its pods (in either order: they go out at
 * once), then the Service, then its runtime snapshot and the status (deferrable, the
 * bookkeeping of the start), then the Created event. */
static void assert_new_job_writes(const struct fixture *fx)
{
	const struct server *s = &fx->server;
	int p0 = write_index(s, 0), p1 = write_index(s, 1);
	const char *b;

	assert_string_equal(server_trace(s, "GET"),
	                    "POST " PODS "|POST " PODS "|POST " SERVICES "|POST " SNAPSHOTS
	                    "|PATCH " STATUS "|POST " EVENTS "|");
	if (s->seen[p0].reply > s->seen[p1].reply) {
		int t = p0;

		p0 = p1;
		p1 = t;
	}
	assert_non_null(strstr(s->seen[p0].body, "\"name\":\"vit-node-0-0-a0\""));
	assert_non_null(strstr(s->seen[p1].body, "\"name\":\"vit-node-0-1-a0\""));
	for (int i = 0; i < 2; i++) {
		b = s->seen[i == 0 ? p0 : p1].body;
		assert_non_null(strstr(b, OWNER));
		assert_non_null(strstr(b, i == 0 ? "\"trainjob.flame.dev/rank\":\"0\""
		                                 : "\"trainjob.flame.dev/rank\":\"1\""));
		assert_non_null(strstr(b, "\"trainjob.flame.dev/attempt\":\"0\""));
	}
	/* The snapshot: the runtime as the informer listed it, owned by the job. */
	b = s->seen[write_index(s, 3)].body;
	assert_non_null(strstr(b, "\"labels\":{\"trainer.kubeflow.org/trainjob-name\":\"vit\","
	                          "\"trainjob.flame.dev/runtime-snapshot\":\"true\"}"));
	assert_non_null(strstr(b, OWNER));
	assert_non_null(strstr(b, "\"data\":{\"runtime\":\"{\\\"apiVersion\\\":"));
	assert_non_null(strstr(b, "\\\"name\\\":\\\"torch-gh200\\\""));
	assert_request_body(
	        s, write_index(s, 2),
	        "{'apiVersion':'v1','kind':'Service','metadata':{'name':'vit','namespace':'team-a',"
	        "'labels':{'trainer.kubeflow.org/trainjob-name':'vit'},'ownerReferences':[{"
	        "'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'vit',"
	        "'uid':'uid-vit','controller':true,'blockOwnerDeletion':true}]},'spec':{"
	        "'clusterIP':'None','publishNotReadyAddresses':true,'selector':{"
	        "'jobset.sigs.k8s.io/jobset-name':'vit'},'ports':[{'name':'torch','port':29500,"
	        "'targetPort':29500,'protocol':'TCP'}]}}");
	assert_request_body(s, write_index(s, 4),
	                    "{'status':{" NEW_JOB_STATUS "},'metadata':{'resourceVersion':'42'}}");
	assert_request_body(
	        s, write_index(s, 5),
	        "{'apiVersion':'v1','kind':'Event','metadata':{'name':'" EVENT_NAME "',"
	        "'namespace':'team-a'},'involvedObject':{'apiVersion':"
	        "'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','namespace':'team-a',"
	        "'name':'vit','uid':'uid-vit'},'source':{'component':'trainjob-controller'},"
	        "'type':'Normal','reason':'Created','message':'creating 2 pods from "
	        "ClusterTrainingRuntime torch-gh200','firstTimestamp':'" NOW_S "',"
	        "'lastTimestamp':'" NOW_S "','count':1,'reportingComponent':'trainjob-controller',"
	        "'reportingInstance':'ctrl-0'}");
}

/* ---- a new TrainJob ----------------------------------------------------------------------- */

static void test_a_new_trainjob_gets_its_pods(void **state)
{
	struct fixture *fx = *state;

	script_new_job(fx, false);
	start(fx, true);
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 6 && quiet(fx));
	server_spin(&fx->server);
	assert_new_job_writes(fx);
	/* The pod that existed is adopted, not an error. */
	assert_non_null(strstr(fx->server.log,
	                       "\"msg\":\"reconciled TrainJob\",\"trainjob\":\"team-a/vit\","
	                       "\"podsCreated\":1,\"podsAdopted\":1,\"podsDeleted\":0}\n"));
	assert_null(strstr(fx->server.log, "\"level\":\"error\""));
	assert_null(strstr(fx->server.log, "\"level\":\"warn\""));
	assert_int_equal(queue_stats(fx).adds, 1);
	assert_int_equal(queue_stats(fx).retries, 0);
	assert_int_equal(n_writes(&fx->server), 6);
}

/* ---- a new TrainJob ahead of the queued ones ---------------------------------------------- */

/* A TrainJob of two nodes named %s (its uid uid-%s), of resourceVersion %s, with no status. */
#define NAMED_TRAINJOB_FMT                                                                         \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{'name':'%s'," \
	"'namespace':'team-a','uid':'uid-%s','resourceVersion':'%s','generation':2,"               \
	"'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':{'runtimeRef':{'name':'torch-gh200'}," \
	"'trainer':{'numNodes':2,'resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}}},"            \
	"'status':{}}"

static const char *named_trainjob(struct fixture *fx, const char *name, const char *rv)
{
	return body(fx, NAMED_TRAINJOB_FMT, name, name, rv);
}

/* The answer to a status patch of the TrainJob name: the job at resourceVersion rv. */
static struct reply status_reply(struct fixture *fx, const char *name, const char *rv)
{
	return (struct reply){
		.method = "PATCH",
		.path = body(
		        fx,
		        "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team-a/trainjobs/%s/status",
		        name),
		.status = 200,
		.body = named_trainjob(fx, name, rv),
	};
}

/* The TrainJob whose pod the nth pod create (0-based) makes: its name's start. */
static const char *nth_pod_job(const struct server *s, int nth)
{
	for (int i = 0; i < s->n_seen; i++)
		if (strcmp(s->seen[i].method, "POST") == 0 &&
		    strncmp(s->seen[i].path, PODS, strlen(PODS)) == 0 && nth-- == 0)
			return strstr(s->seen[i].body, "\"name\":\"gpt-") ? "gpt" : "other";
	return "none";
}

/* A TrainJob created while others wait in the queue is planned before them: its plan is what
 * puts its gang in the admission's queue, which must not wait for the reconciles that the
 * pod events of the gangs before it queue (in a burst of new TrainJobs, their creates then
 * keep the API server busy instead of coming in bunches). One reconcile at a time: vit's and
 * bert's plans are queued when the caches sync, the first one's pod creates are held, gpt is
 * created, and the pod creates after the first job's are gpt's. */
static void test_a_new_trainjob_is_planned_ahead_of_the_queued_ones(void **state)
{
	struct fixture *fx = *state;
	char jobs[2048];
	int watch, released = 0;

	fx->max_concurrent = 1;
	snprintf(jobs, sizeof(jobs), "%s,%s", named_trainjob(fx, "vit", "40"),
	         named_trainjob(fx, "bert", "41"));
	script_informers(fx, jobs, "", NULL);
	const struct reply replies[] = {
		{ .method = "POST",
		  .path = PODS,
		  .repeat = true,
		  .hold = true,
		  .status = 201,
		  .body = "{}" },
		{ .method = "POST", .path = SERVICES, .repeat = true, .status = 201, .body = "{}" },
		{ .method = "POST",
		  .path = SNAPSHOTS,
		  .repeat = true,
		  .status = 201,
		  .body = "{}" },
		{ .method = "POST", .path = EVENTS, .repeat = true, .status = 201, .body = "{}" },
		status_reply(fx, "vit", "50"),
		status_reply(fx, "bert", "51"),
		status_reply(fx, "gpt", "52"),
	};
	server_script(&fx->server, replies, sizeof(replies) / sizeof(replies[0]));
	start(fx, true);
	/* The first job's two creates are out and held; the other job waits for the slot. */
	SERVER_RUN_UNTIL(&fx->server, server_count(&fx->server, "POST", PODS) == 2);
	assert_int_equal(queue_stats(fx).depth, 1);
	watch = server_find(&fx->server, 0, "GET", TRAINJOBS "?watch=1");
	server_push(&fx->server, watch,
	            body(fx, "{'type':'ADDED','object':%s}\n", named_trainjob(fx, "gpt", "45")));
	SERVER_RUN_UNTIL(&fx->server, queue_stats(fx).depth == 2);
	/* Every pod create is answered as it comes, in its turn. */
	while (released < 6) {
		int i = -1;

		SERVER_RUN_UNTIL(&fx->server, server_count(&fx->server, "POST", PODS) > released);
		for (int k = 0; k <= released; k++)
			i = server_find(&fx->server, i + 1, "POST", PODS);
		server_release(&fx->server, i);
		released++;
	}
	SERVER_RUN_UNTIL(&fx->server, quiet(fx));
	assert_string_equal(nth_pod_job(&fx->server, 0), "other");
	assert_string_equal(nth_pod_job(&fx->server, 1), "other");
	assert_string_equal(nth_pod_job(&fx->server, 2), "gpt");
	assert_string_equal(nth_pod_job(&fx->server, 3), "gpt");
	assert_string_equal(nth_pod_job(&fx->server, 4), "other");
	assert_string_equal(nth_pod_job(&fx->server, 5), "other");
}

/* ---- a status patch that meets 409 -------------------------------------------------------- */

#define RECONCILES "controller_runtime_reconcile_total{controller=\"trainjob\","

/* The value of a series of the rendered metrics; 0 for one not there (none counted). */
static long counted(const char *text, const char *series)
{
	const char *at = strstr(text, series);

	return at ? strtol(at + strlen(series), NULL, 10) : 0;
}

static void test_status_conflict_is_retried_from_the_watched_object(void **state)
{
	struct fixture *fx = *state;
	char pods[4096];
	int watch, first;

	snprintf(pods, sizeof(pods), "%s,%s", pod(fx, 0, true), pod(fx, 1, true));
	script_informers(fx, trainjob(fx, "42", STARTED_STATUS), pods, NULL);
	const struct reply replies[] = {
		{ .method = "PATCH",
		  .path = STATUS,
		  .request_has = "\"resourceVersion\":\"42\"",
		  .hold = true,
		  .status = 409,
		  .body = API_ERROR(409, "Conflict", "the object has been modified") },
		{ .method = "PATCH",
		  .path = STATUS,
		  .request_has = "\"resourceVersion\":\"43\"",
		  .status = 200,
		  .body = trainjob(fx, "44", "{" RUNNING_STATUS "}") },
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}" },
	};
	server_script(&fx->server, replies, 3);
	start(fx, true);
	/* Every pod runs: the plan reports it, from the TrainJob of resourceVersion 42. */
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 1);
	first = write_index(&fx->server, 0);
	/* Meanwhile someone else wrote the TrainJob: the watch brings version 43, and the key
	 * is marked to run again once the reconcile in flight is done. */
	watch = server_find(&fx->server, 0, "GET", TRAINJOBS "?watch=1");
	server_push(
	        &fx->server, watch,
	        body(fx, "{'type':'MODIFIED','object':%s}\n", trainjob(fx, "43", STARTED_STATUS)));
	SERVER_RUN_UNTIL(&fx->server, queue_stats(fx).adds == 2);
	server_release(&fx->server, first);
	/* The retry plans from version 43; the backoff's own retry then finds nothing to do. */
	SERVER_RUN_UNTIL(&fx->server,
	                 n_writes(&fx->server) == 3 && queue_stats(fx).retries == 1 && quiet(fx));
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, "GET"),
	                    "PATCH " STATUS "|PATCH " STATUS "|POST " EVENTS "|");
	assert_request_body(&fx->server, first,
	                    "{'status':{" RUNNING_CHANGES "},'metadata':{'resourceVersion':'42'}}");
	assert_request_body(&fx->server, write_index(&fx->server, 1),
	                    "{'status':{" RUNNING_CHANGES "},'metadata':{'resourceVersion':'43'}}");
	/* One Running event, from the plan that was written; the conflict announced nothing. */
	assert_non_null(strstr(fx->server.seen[write_index(&fx->server, 2)].body,
	                       "\"reason\":\"Running\""));
	/* A conflict is not a failure worth a log line. */
	assert_null(strstr(fx->server.log, "\"level\":\"error\""));
	assert_null(strstr(fx->server.log, "reconcile failed"));
	/* One backoff for the one conflict, counted as a requeue, not as an error. */
	assert_int_equal(queue_stats(fx).retries, 1);
	char *text;
	size_t len;

	assert_int_equal(tj_metrics_render(fx->registry, &text, &len), 0);
	assert_int_equal(counted(text, RECONCILES "result=\"requeue\"}"), 1);
	assert_int_equal(counted(text, RECONCILES "result=\"error\"}"), 0);
	assert_int_equal(counted(text, "controller_runtime_reconcile_errors_total{"
	                               "controller=\"trainjob\"}"),
	                 0);
	free(text);
}

/* ---- stopping ----------------------------------------------------------------------------- */

static void test_stop_in_the_middle_of_a_plan(void **state)
{
	struct fixture *fx = *state;
	int p0, p1;

	script_new_job(fx, true);
	start(fx, true);
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 2);
	p0 = write_index(&fx->server, 0);
	p1 = write_index(&fx->server, 1);
	/* Stopped while the pod creates are in flight: the reconcile runs to its end first. */
	tj_controller_stop(fx->controller, on_stopped, fx);
	server_spin(&fx->server);
	assert_int_equal(fx->stopped_calls, 0);
	server_release(&fx->server, p0);
	server_release(&fx->server, p1);
	SERVER_RUN_UNTIL(&fx->server, fx->stopped_calls == 1);
	/* The rest of the plan went out before: the gate lets the bookkeeping go at once, and
	 * the Created event is sent as the reconcile ends. */
	assert_int_equal(fx->writes_at_stopped, 5);
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 6);
	assert_new_job_writes(fx);
	/* No new reconcile once stopping, whatever the watches bring. */
	server_push(&fx->server, server_find(&fx->server, 0, "GET", TRAINJOBS "?watch=1"),
	            body(fx, "{'type':'MODIFIED','object':%s}\n", trainjob(fx, "45", "{}")));
	server_spin(&fx->server);
	assert_int_equal(fx->stopped_calls, 1);
	assert_int_equal(queue_stats(fx).adds, 1);
	tj_controller_stop(fx->controller, on_stopped, fx); /* a second stop changes nothing */
	server_spin(&fx->server);
	assert_int_equal(fx->stopped_calls, 1);
}

static void test_stop_while_the_bookkeeping_waits_for_the_gate(void **state)
{
	struct fixture *fx = *state;

	script_new_job(fx, false);
	start(fx, true);
	/* The pods are answered; the Service waits for the gate, and the reconcile has given
	 * its key back to the queue. */
	SERVER_RUN_UNTIL(&fx->server, gate_waiting(fx) == 1 && queue_stats(fx).in_flight == 0);
	assert_string_equal(server_trace(&fx->server, "GET"), "POST " PODS "|POST " PODS "|");
	tj_controller_stop(fx->controller, on_stopped, fx);
	/* The queue has drained, but stopped waits for the reconcile that gave its key back. */
	SERVER_RUN_UNTIL(&fx->server, fx->stopped_calls == 1);
	assert_int_equal(fx->writes_at_stopped, 5);
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 6);
	assert_new_job_writes(fx);
	server_spin(&fx->server);
	assert_int_equal(fx->stopped_calls, 1);
}

/* ---- leading ------------------------------------------------------------------------------ */

static void test_only_the_leader_writes(void **state)
{
	struct fixture *fx = *state;

	script_new_job(fx, false);
	start(fx, false);
	/* Synced, with a TrainJob to run, but not leading: nothing is queued, nothing written. */
	server_spin(&fx->server);
	assert_int_equal(queue_stats(fx).adds, 0);
	assert_int_equal(n_writes(&fx->server), 0);
	/* Leading: every TrainJob is queued at once. */
	tj_controller_set_leading(fx->controller, true);
	assert_int_equal(queue_stats(fx).adds, 1);
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 6 && quiet(fx));
	assert_new_job_writes(fx);
}

/* ---- admission ---------------------------------------------------------------------------- */

/* The writes of an admitted job's plan, after its first plan wrote nothing and the cycle
 * admitted it: its pods pinned to the nodes admission chose, then as a new job's. */
static void assert_admitted_writes(const struct fixture *fx, int first)
{
	const struct server *s = &fx->server;

	for (int i = 0; i < 2; i++) {
		const char *b = s->seen[write_index(s, first + i)].body;
		int rank = strstr(b, "\"trainjob.flame.dev/rank\":\"1\"") != NULL;

		assert_non_null(strstr(b, rank ? "\"trainjob.flame.dev/node\":\"gh200-1\""
		                               : "\"trainjob.flame.dev/node\":\"gh200-0\""));
		assert_non_null(strstr(b, rank ? "\"matchFields\":[{\"key\":\"metadata.name\","
		                                 "\"operator\":\"In\",\"values\":[\"gh200-1\"]}]"
		                               : "\"matchFields\":[{\"key\":\"metadata.name\","
		                                 "\"operator\":\"In\",\"values\":[\"gh200-0\"]}]"));
	}
	assert_non_null(
	        strstr(s->seen[write_index(s, first + 4)].body, "\"startTime\":\"" NOW_S "\""));
	assert_non_null(strstr(s->seen[write_index(s, first + 5)].body,
	                       "\"reason\":\"Admitted\",\"message\":\"2 pods pinned to gh200-0, "
	                       "gh200-1\""));
}

static void test_a_new_trainjob_is_admitted_whole(void **state)
{
	struct fixture *fx = *state;

	const struct reply admitted_event = {
		.method = "POST", .path = EVENTS, .status = 201, .body = "{}"
	};

	fx->admission = true;
	script_new_job(fx, false);
	server_script(&fx->server, &admitted_event, 1);
	start(fx, true);
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 7 && quiet(fx));
	server_spin(&fx->server);
	/* The first plan waited for the cycle, which admitted the gang and queued the job
	 * again; nothing was written before the pods. */
	assert_string_equal(server_trace(&fx->server, "GET"),
	                    "POST " PODS "|POST " PODS "|POST " SERVICES "|POST " SNAPSHOTS
	                    "|PATCH " STATUS "|POST " EVENTS "|POST " EVENTS "|");
	assert_admitted_writes(fx, 0);
	assert_int_equal(queue_stats(fx).adds, 2);
	/* The status the patch returned is the cached one: the job counts as Pending, under
	 * its namespace and the GPU class of its runtime. */
	struct tj_job_series *jobs;
	size_t n_jobs;

	assert_int_equal(tj_controller_job_series(fx->controller, &jobs, &n_jobs), 0);
	assert_int_equal(n_jobs, 1);
	assert_string_equal(jobs[0].namespace, "team-a");
	assert_string_equal(jobs[0].gpu_class, "gh200");
	assert_true(jobs[0].state == TJ_STATE_PENDING || jobs[0].state == TJ_STATE_NONE);
	free(jobs);
	assert_null(strstr(fx->server.log, "\"level\":\"error\""));
}

/* Appends to replies (n of them so far) the answers to the writes of a gang's plans besides
 * its pods: the runtime snapshot, the Service, the status patches and the Events, however
 * many. The count of replies. */
static int with_the_gangs_other_writes(struct fixture *fx, struct reply *replies, int n)
{
	const struct reply others[] = {
		{ .method = "POST",
		  .path = SNAPSHOTS,
		  .status = 201,
		  .body = "{}",
		  .repeat = true },
		{ .method = "POST", .path = SERVICES, .status = 201, .body = "{}", .repeat = true },
		{ .method = "PATCH",
		  .path = STATUS,
		  .status = 200,
		  .body = trainjob(fx, "43", "{" NEW_JOB_STATUS "}"),
		  .repeat = true },
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}", .repeat = true },
	};

	memcpy(replies + n, others, sizeof(others));
	return n + (int)(sizeof(others) / sizeof(others[0]));
}

/* The gang's creates were all answered 429 Too Many Requests (past the client's retries):
 * no pod was made, so the nodes go back to the queue at once, and the gang is admitted and
 * created again whole. Were its nodes kept for the cache to show its pods, it would wait for
 * the patience (TJ_ADMITTER_CREATED_PATIENCE_MS). */
static void test_a_gang_whose_creates_were_throttled_is_created_again(void **state)
{
	struct fixture *fx = *state;

	fx->admission = true;
	script_informers(fx, trainjob(fx, "42", "{}"), "", NULL);
	struct reply replies[8] = {
		POD_CREATED("vit-node-0-0-a0", 429, THROTTLED),
		POD_CREATED("vit-node-0-1-a0", 429, THROTTLED),
		POD_CREATED("vit-node-0-0-a0", 201, "{}"),
		POD_CREATED("vit-node-0-1-a0", 201, "{}"),
	};
	server_script(&fx->server, replies, with_the_gangs_other_writes(fx, replies, 4));
	start(fx, true);
	SERVER_RUN_UNTIL(&fx->server,
	                 strstr(fx->server.log, "\"podsCreated\":2,\"podsAdopted\":0"));
	server_spin(&fx->server);
	assert_int_equal(server_count(&fx->server, "POST", PODS), 4);
	assert_int_equal(server_count(&fx->server, "DELETE", PODS), 0);
	assert_non_null(strstr(fx->server.log, "too many requests"));
}

/* Rank 0's pod of vit, made by a create whose gang's other create failed: behind the gang's
 * gate, pinned to gh200-0, not bound. */
#define GATED_POD                                                                                  \
	"{'kind':'Pod','metadata':{'name':'vit-node-0-0-a0','namespace':'team-a',"                 \
	"'uid':'uid-pod-0','resourceVersion':'50',"                                                \
	"'labels':{'trainer.kubeflow.org/trainjob-name':'vit','trainjob.flame.dev/rank':'0',"      \
	"'trainjob.flame.dev/attempt':'0'},'annotations':{'trainjob.flame.dev/node':'gh200-0'},"   \
	"'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"      \
	"'name':'vit','uid':'uid-vit','controller':true}]},"                                       \
	"'spec':{'schedulingGates':[{'name':'trainjob.flame.dev/gang'}]},"                         \
	"'status':{'phase':'Pending'}}"

/* Rank 0's create made its pod, rank 1's was answered 429 past its retries: the gang is made
 * in part. Its nodes go back, but the job is not admitted again before the hold
 * (TJ_ADMITTER_REFUSED_HOLD_S): until the cache shows rank 0's pod, the plan of a new
 * admission would take that pod, pinned to the old node, for one of the new gang's
 * (AlreadyExists). The pod's event plans the job, which deletes it and waits whole. */
static void test_a_gang_made_in_part_is_not_admitted_before_its_pods_show(void **state)
{
	struct fixture *fx = *state;

	fx->admission = true;
	script_informers(fx, trainjob(fx, "42", "{}"), "", NULL);
	struct reply replies[7] = {
		POD_CREATED("vit-node-0-0-a0", 201, "{}"),
		POD_CREATED("vit-node-0-1-a0", 429, THROTTLED),
		{ .method = "DELETE",
		  .path = PODS "/vit-node-0-0-a0",
		  .status = 200,
		  .body = "{}",
		  .repeat = true },
	};
	server_script(&fx->server, replies, with_the_gangs_other_writes(fx, replies, 3));
	start(fx, true);
	SERVER_RUN_UNTIL(&fx->server, strstr(fx->server.log, "too many requests"));
	server_spin(&fx->server);
	/* Held: no second admission, so no create of either rank again. */
	assert_int_equal(server_count(&fx->server, "POST", PODS), 2);
	server_push(&fx->server, server_find(&fx->server, 0, "GET", ALL_PODS "?watch=1"),
	            body(fx, "{'type':'ADDED','object':%s}\n", GATED_POD));
	SERVER_RUN_UNTIL(&fx->server, server_count(&fx->server, "DELETE", PODS) == 1);
	server_spin(&fx->server);
	assert_int_equal(server_count(&fx->server, "POST", PODS), 2);
	assert_int_equal(server_count(&fx->server, "DELETE", PODS), 1);
	int said = 0;

	for (int i = 0; i < fx->server.n_seen; i++)
		said += strcmp(fx->server.seen[i].path, EVENTS) == 0 &&
		        strstr(fx->server.seen[i].body, "\"reason\":\"GangIncomplete\"");
	assert_int_equal(said, 1);
}

#define QUEUED_MSG                                                                                 \
	"position 1 of 1 in gh200: needs 2 nodes x 4 GPUs, 1 such node free; expected start "      \
	"unknown"

/* How one of the two GH200 nodes is kept from a new job: a pod in the cache (pods; of one of
 * other_jobs, "" for none) or the node itself (nodes, NULL for NODE_FMT's); and the watch
 * event that ends it (on the watch of path). */
struct blocker {
	const char *other_jobs, *pods, *nodes;
	const char *path, *event;
};

/* A new job of 2 nodes x 4 GPUs waits whole while b keeps one of the two GH200 nodes, and is
 * admitted whole once b's event comes. */
static void wait_until_the_blocker_goes(struct fixture *fx, const struct blocker *b)
{
	fx->admission = true;
	script_informers(fx, body(fx, "%s%s", trainjob(fx, "42", "{}"), b->other_jobs), b->pods,
	                 b->nodes);
	const struct reply replies[] = {
		{ .method = "PATCH",
		  .path = STATUS,
		  .request_has = "\"state\":\"Queued\"",
		  .status = 200,
		  .body = trainjob(fx, "43",
		                   "{'state':'Queued','reason':'Resources','message':'" QUEUED_MSG
		                   "','queuePosition':1}") },
		POD_CREATED("vit-node-0-0-a0", 201, "{}"),
		POD_CREATED("vit-node-0-1-a0", 201, "{}"),
		{ .method = "POST", .path = SNAPSHOTS, .status = 201, .body = "{}" },
		{ .method = "POST", .path = SERVICES, .status = 201, .body = "{}" },
		{ .method = "PATCH",
		  .path = STATUS,
		  .request_has = "\"state\":\"Pending\"",
		  .status = 200,
		  .body = trainjob(fx, "44", "{" NEW_JOB_STATUS "}") },
		{ .method = "POST", .path = EVENTS, .status = 201, .body = "{}", .repeat = true },
	};
	server_script(&fx->server, replies, sizeof(replies) / sizeof(replies[0]));
	start(fx, true);
	/* One node free: the gang of two waits, no pod. */
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 2 && quiet(fx));
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, "GET"), "PATCH " STATUS "|POST " EVENTS "|");
	assert_request_body(
	        &fx->server, write_index(&fx->server, 0),
	        "{'status':{'state':'Queued','reason':'Resources','message':'" QUEUED_MSG "',"
	        "'restartCount':0,'lastFailure':null,'startTime':null,'completionTime':null,"
	        "'expectedStartTime':null,'deadline':null,'cleanupTime':null,'queuePosition':1,"
	        "'observedGeneration':2,"
	        "'jobsStatus':[{'name':'node','active':0,'ready':0,'succeeded':0,'failed':0,"
	        "'suspended':0}],'conditions':[]},'metadata':{'resourceVersion':'42'}}");
	assert_non_null(strstr(fx->server.seen[write_index(&fx->server, 1)].body,
	                       "\"reason\":\"Queued\",\"message\":\"" QUEUED_MSG "\""));
	/* The blocker goes: the next cycle admits the whole gang. */
	server_push(&fx->server, server_find(&fx->server, 0, "GET", b->path),
	            body(fx, "%s\n", b->event));
	SERVER_RUN_UNTIL(&fx->server, n_writes(&fx->server) == 9 && quiet(fx));
	server_spin(&fx->server);
	assert_string_equal(server_trace(&fx->server, "GET"),
	                    "PATCH " STATUS "|POST " EVENTS "|POST " PODS "|POST " PODS
	                    "|POST " SERVICES "|POST " SNAPSHOTS "|PATCH " STATUS "|POST " EVENTS
	                    "|POST " EVENTS "|");
	assert_admitted_writes(fx, 2);
}

/* gh200-0's GPUs are a notebook's. */
static void test_a_job_waits_whole_until_its_gang_fits(void **state)
{
	struct fixture *fx = *state;

	const struct blocker notebook = { "", NOTEBOOK_POD, NULL, ALL_PODS "?watch=1",
		                          "{'type':'DELETED','object':" NOTEBOOK_POD "}" };

	wait_until_the_blocker_goes(fx, &notebook);
	/* The notebook's end was the event that let the gang in: one latency observed. */
	char *text;
	size_t len;

	assert_int_equal(tj_metrics_render(fx->registry, &text, &len), 0);
	assert_non_null(strstr(text, "trainjob_admission_latency_seconds_count 1\n"));
	/* Both cycles decided the job: once to wait, once to admit. */
	assert_true(counted(text, "\ntrainjob_admission_decisions_total ") >= 2);
	assert_non_null(strstr(text, "trainjob_admission_cycle_duration_seconds_count "));
	free(text);
	assert_null(strstr(fx->server.log, "\"level\":\"error\""));
}

/* A node pod of an MPI job, on gh200-0 without GPUs, that holds its launcher's place on
 * gh200-1 (reconcilers/admission/launcher_hold.h) while the launcher does not exist yet: read from
 * the cache, as after a restart, the hold keeps gh200-1 as a bound pod would. Its job is
 * managed by another controller here, so that it plans nothing of its own. */
#define HOLDER_JOB                                                                                 \
	",{'apiVersion':'trainer.kubeflow.org/"                                                    \
	"v1alpha1','kind':'TrainJob','metadata':{'name':'ds',"                                     \
	"'namespace':'team-b','uid':'uid-ds-job','resourceVersion':'7','generation':1,"            \
	"'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':{'runtimeRef':{'name':'torch-gh200'}," \
	"'managedBy':'example.com/other'}}"
#define HOLDER_POD                                                                                 \
	"{'kind':'Pod','metadata':{'name':'ds-node-0-0-a0','namespace':'team-b','uid':'uid-ds',"   \
	"'resourceVersion':'9','labels':{'trainer.kubeflow.org/trainjob-name':'ds'},"              \
	"'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"      \
	"'name':'ds','uid':'uid-ds-job','controller':true}],'annotations':{'trainjob.flame.dev/"   \
	"launcher-hold':'{\\\"pod\\\":"                                                            \
	"\\\"ds-launcher-0-0-a0\\\",\\\"node\\\":\\\"gh200-1\\\",\\\"hostname\\\":\\\"gh200-"      \
	"1\\\","                                                                                   \
	"\\\"containers\\\":[{\\\"resources\\\":{\\\"requests\\\":{\\\"nvidia.com/"                \
	"gpu\\\":\\\"4\\\"}}}]}'}},"                                                               \
	"'spec':{'nodeName':'gh200-0','containers':[{'name':'node'}]},'status':{'phase':'Running'" \
	"}}"

static void test_a_launchers_held_place_is_counted_from_the_cache(void **state)
{
	const struct blocker holder = { HOLDER_JOB, HOLDER_POD, NULL, ALL_PODS "?watch=1",
		                        "{'type':'DELETED','object':" HOLDER_POD "}" };

	wait_until_the_blocker_goes(*state, &holder);
}

/* gh200-0 cordoned, as a watch event then uncordons it: the admission's ledger hears of the
 * node's change and judges it again, and the next cycle admits the gang. */
#define CORDONED_NODE                                                                              \
	"{'kind':'Node','metadata':{'name':'gh200-0','uid':'uid-node-0','resourceVersion':'3',"    \
	"'labels':{'kubernetes.io/arch':'arm64','nvidia.com/gpu.product':'NVIDIA-GH200-480GB'}},"  \
	"'spec':{'unschedulable':true},"                                                           \
	"'status':{'allocatable':{'nvidia.com/gpu':'4','cpu':'72','memory':'480Gi'},"              \
	"'conditions':[{'type':'Ready','status':'True',"                                           \
	"'lastTransitionTime':'2026-11-29T09:00:00Z'}]}}"
#define UNCORDONED_NODE                                                                            \
	"{'kind':'Node','metadata':{'name':'gh200-0','uid':'uid-node-0','resourceVersion':'4',"    \
	"'labels':{'kubernetes.io/arch':'arm64','nvidia.com/gpu.product':'NVIDIA-GH200-480GB'}},"  \
	"'status':{'allocatable':{'nvidia.com/gpu':'4','cpu':'72','memory':'480Gi'},"              \
	"'conditions':[{'type':'Ready','status':'True',"                                           \
	"'lastTransitionTime':'2026-11-29T09:00:00Z'}]}}"

static void test_a_job_waits_until_a_cordoned_node_comes_back(void **state)
{
	struct fixture *fx = *state;
	char nodes[2048];

	snprintf(nodes, sizeof(nodes), CORDONED_NODE "," NODE_FMT, 1, 1);
	const struct blocker cordon = { "", "", nodes, NODES "?watch=1",
		                        "{'type':'MODIFIED','object':" UNCORDONED_NODE "}" };

	wait_until_the_blocker_goes(fx, &cordon);
	assert_null(strstr(fx->server.log, "\"level\":\"error\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_a_new_trainjob_gets_its_pods, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_new_trainjob_is_planned_ahead_of_the_queued_ones, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_status_conflict_is_retried_from_the_watched_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_in_the_middle_of_a_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_while_the_bookkeeping_waits_for_the_gate,
		                                setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_the_leader_writes, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_gang_whose_creates_were_throttled_is_created_again, setup, teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_gang_made_in_part_is_not_admitted_before_its_pods_show, setup,
		        teardown),
		cmocka_unit_test_setup_teardown(test_a_new_trainjob_is_admitted_whole, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(
		        test_a_launchers_held_place_is_counted_from_the_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_job_waits_whole_until_its_gang_fits, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_a_job_waits_until_a_cordoned_node_comes_back,
		                                setup, teardown),
	};
	return cmocka_run_group_tests_name("controller", tests, NULL, NULL);
}
