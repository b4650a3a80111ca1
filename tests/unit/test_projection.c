/* Projections of real API objects (the files in tests/unit/data: full Pod and Node objects as the
 * API server returns them, managedFields included) into the compact structs, the JSON helpers
 * they use, and the interned-string table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "informers/intern.h"
#include "informers/node.h"
#include "informers/pod.h"
#include "informers/projection.h"

#include "fixtures.h"

static cJSON *load(const char *name)
{
	char path[512];
	FILE *f;
	char *buf;
	long len;
	cJSON *obj;

	snprintf(path, sizeof(path), "%s/%s", TJ_TEST_DATA, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	obj = cJSON_Parse(buf);
	free(buf);
	assert_non_null(obj);
	return obj;
}

static void assert_string_or_null(const char *got, const char *want)
{
	if (!want)
		assert_null(got);
	else
		assert_string_equal(got, want);
}

struct pod_case {
	const char *file;
	struct {
		const char *namespace, *name, *uid, *resource_version, *owner_uid, *trainjob;
		int rank, attempt;
		const char *node_name;
		enum tj_pod_phase phase;
		bool ready, unschedulable;
		const char *unschedulable_message;
		int64_t creation_time, start_time, deletion_time;
		const char *reason, *message;
		bool terminated;
		int exit_code;
		const char *exit_reason, *disruption_reason;
		int64_t cpu_milli, memory, gpus;
	} want;
};

#define JOB_UID "9a8b7c6d-5e4f-4321-8765-0fedcba98765"

static const struct pod_case pod_cases[] = {
	{ "pod-running.json",
	  { "team-a",
	    "llama-ft-node-0-1-a0",
	    "4f1e3c2a-9b7d-4e15-8a3c-1d2e3f405162",
	    "184467",
	    JOB_UID,
	    "llama-ft",
	    1,
	    0,
	    "gh200-007",
	    TJ_POD_RUNNING,
	    true,
	    false,
	    NULL,
	    1795947302,
	    1795947303,
	    0,
	    NULL,
	    NULL,
	    false,
	    0,
	    NULL,
	    NULL,
	    0,
	    0,
	    4 } },
	/* The container "node" wins over an earlier terminated sidecar; fractional seconds and
	 * a numeric offset in the timestamps. */
	{ "pod-oomkilled.json",
	  { "team-a",
	    "llama-ft-node-0-0-a2",
	    "0c2d4e6f-8a1b-4c3d-9e5f-a0b1c2d3e4f5",
	    "190001",
	    JOB_UID,
	    "llama-ft",
	    0,
	    2,
	    "gh200-003",
	    TJ_POD_FAILED,
	    false,
	    false,
	    NULL,
	    1795950000,
	    1795950001,
	    1795948245,
	    NULL,
	    NULL,
	    true,
	    137,
	    "OOMKilled",
	    "TerminationByKubelet",
	    0,
	    0,
	    4 } },
	{ "pod-evicted.json",
	  { "team-a",
	    "llama-ft-node-0-3-a0",
	    "11111111-2222-4333-8444-555555555555",
	    "190777",
	    JOB_UID,
	    "llama-ft",
	    3,
	    0,
	    "gh200-011",
	    TJ_POD_FAILED,
	    false,
	    false,
	    NULL,
	    1795947302,
	    1795947303,
	    0,
	    "Evicted",
	    "The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, "
	    "available: 2Gi. Container node was using 40Gi, request is 0, has larger "
	    "consumption of ephemeral-storage. ",
	    true,
	    137,
	    "ContainerStatusUnknown",
	    "TerminationByKubelet",
	    0,
	    0,
	    4 } },
	/* Not scheduled; malformed rank ("01") and attempt ("-1"); an owner that is not the
	 * controller. */
	{ "pod-unschedulable.json",
	  { "team-b",
	    "bert-node-0-0-a0",
	    "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
	    "200100",
	    NULL,
	    "bert",
	    -1,
	    -1,
	    NULL,
	    TJ_POD_PENDING,
	    false,
	    true,
	    "0/12 nodes are available: 4 node(s) didn't match Pod's node affinity/selector, 8 "
	    "Insufficient nvidia.com/gpu. preemption: 0/12 nodes are available: 12 No "
	    "preemption victims found for incoming pod.",
	    1795947302,
	    0,
	    0,
	    NULL,
	    NULL,
	    false,
	    0,
	    NULL,
	    NULL,
	    0,
	    0,
	    4 } },
	/* Not a TrainJob's pod: a notebook holds a GPU too. Its init container (4 CPUs) needs
	 * more CPU than the notebook and its sidecar together (1.6), its memory is theirs (32 Gi
	 * + 64 Mi), and the runtime class adds its overhead (250m, 120 Mi). */
	{ "pod-notebook.json",
	  { "team-b",
	    "notebook-alice-0",
	    "5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e",
	    "201442",
	    "77a8b9c0-d1e2-4f3a-8b4c-5d6e7f8a9b0c",
	    NULL,
	    -1,
	    -1,
	    "gh200-005",
	    TJ_POD_RUNNING,
	    true,
	    false,
	    NULL,
	    1795942800,
	    1795942801,
	    0,
	    NULL,
	    NULL,
	    false,
	    0,
	    NULL,
	    NULL,
	    4250,
	    34552676352,
	    1 } },
};

/* How long a pod held its requests: to its container's finishedAt, else to the moment its
 * deletion was asked for; open (-1) while it runs, and for a pod that never started. */
static void test_pod_held_seconds(void **state)
{
	static const struct {
		const char *file;
		int32_t held;
	} files[] = {
		{ "pod-running.json", -1 },
		{ "pod-oomkilled.json", 298 }, /* finishedAt 11:04:59, started 11:00:01 */
		{ "pod-evicted.json", -1 },    /* terminated without a finishedAt */
		{ "pod-unschedulable.json", -1 },
	};
	static const struct {
		const char *json;
		int32_t held;
	} objects[] = {
		/* asked to stop at 12:00:00 with 30 s of grace */
		{ "{'metadata':{'name':'p','namespace':'n','deletionTimestamp':'2026-11-29T12:00:"
		  "30Z',"
		  "'deletionGracePeriodSeconds':30},'status':{'phase':'Running',"
		  "'startTime':'2026-11-29T11:00:00Z'}}",
		  3600 },
		/* deleted before it started: nothing held */
		{ "{'metadata':{'name':'p','namespace':'n','deletionTimestamp':'2026-11-29T10:00:"
		  "30Z',"
		  "'deletionGracePeriodSeconds':30},'status':{'phase':'Running',"
		  "'startTime':'2026-11-29T11:00:00Z'}}",
		  0 },
		/* the container's own end wins over the deletion */
		{ "{'metadata':{'name':'p','namespace':'n','deletionTimestamp':'2026-11-29T12:00:"
		  "30Z',"
		  "'deletionGracePeriodSeconds':30},'status':{'phase':'Failed',"
		  "'startTime':'2026-11-29T11:00:00Z','containerStatuses':[{'name':'node','state':{"
		  "'terminated':{'exitCode':1,'finishedAt':'2026-11-29T11:00:10Z'}}}]}}",
		  10 },
		/* a deletion without its grace period counts from the timestamp itself */
		{ "{'metadata':{'name':'p','namespace':'n','deletionTimestamp':'2026-11-29T11:01:"
		  "00Z'},"
		  "'status':{'phase':'Running','startTime':'2026-11-29T11:00:00Z'}}",
		  60 },
		/* never started */
		{ "{'metadata':{'name':'p','namespace':'n','deletionTimestamp':'2026-11-29T11:01:"
		  "00Z'},"
		  "'status':{'phase':'Pending'}}",
		  -1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		cJSON *obj = load(files[i].file);
		struct tj_pod *p = NULL;

		print_message("# case: %s\n", files[i].file);
		assert_int_equal(tj_pod_from_json(obj, &p), 0);
		assert_int_equal(p->held_seconds, files[i].held);
		tj_pod_free(p);
		cJSON_Delete(obj);
	}
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		cJSON *obj = jlit(objects[i].json);
		struct tj_pod *p = NULL;

		print_message("# case: object %zu\n", i);
		assert_int_equal(tj_pod_from_json(obj, &p), 0);
		assert_int_equal(p->held_seconds, objects[i].held);
		tj_pod_free(p);
		cJSON_Delete(obj);
	}
}

static void test_pod_fixtures(void **state)
{
	for (size_t i = 0; i < sizeof(pod_cases) / sizeof(pod_cases[0]); i++) {
		const struct pod_case *c = &pod_cases[i];
		cJSON *obj = load(c->file);
		struct tj_pod *p = NULL;
		char key[128];

		print_message("# case: %s\n", c->file);
		assert_int_equal(tj_pod_from_json(obj, &p), 0);
		cJSON_Delete(obj); /* the projection keeps nothing of the tree */
		assert_true(p->packed);
		assert_string_equal(p->namespace, c->want.namespace);
		assert_string_equal(p->name, c->want.name);
		assert_string_equal(p->uid, c->want.uid);
		assert_string_equal(p->resource_version, c->want.resource_version);
		assert_string_or_null(p->owner_uid, c->want.owner_uid);
		assert_string_or_null(p->trainjob, c->want.trainjob);
		assert_int_equal(p->rank, c->want.rank);
		assert_int_equal(p->attempt, c->want.attempt);
		assert_string_or_null(p->node_name, c->want.node_name);
		assert_int_equal(p->phase, c->want.phase);
		assert_int_equal(p->ready, c->want.ready);
		assert_int_equal(p->unschedulable, c->want.unschedulable);
		assert_string_or_null(p->unschedulable_message, c->want.unschedulable_message);
		assert_int_equal(p->creation_time, c->want.creation_time);
		assert_int_equal(p->start_time, c->want.start_time);
		assert_int_equal(p->deletion_time, c->want.deletion_time);
		assert_string_or_null(p->reason, c->want.reason);
		assert_string_or_null(p->message, c->want.message);
		assert_int_equal(p->terminated, c->want.terminated);
		assert_int_equal(p->exit_code, c->want.exit_code);
		assert_string_or_null(p->exit_reason, c->want.exit_reason);
		assert_string_or_null(p->disruption_reason, c->want.disruption_reason);
		assert_int_equal(p->requests.cpu_milli, c->want.cpu_milli);
		assert_int_equal(p->requests.memory, c->want.memory);
		assert_int_equal(p->requests.n_extended, 1);
		assert_string_equal(p->requests.extended[0].name, "nvidia.com/gpu");
		assert_int_equal(tj_pod_resources_extended(&p->requests, "nvidia.com/gpu"),
		                 c->want.gpus);
		assert_null(p->pinned_node);
		assert_int_equal(tj_pod_terminal(p), c->want.phase == TJ_POD_FAILED);
		assert_int_equal(tj_pod_key(p, key, sizeof(key)), 0);
		assert_int_equal(strncmp(key, c->want.namespace, strlen(c->want.namespace)), 0);
		assert_null(tj_pod_free(p));
	}
	assert_int_equal(tj_intern_count(), 0);
}

struct invalid_case {
	const char *name;
	const char *json;
	int want;
};

static const struct invalid_case pod_invalid[] = {
	{ "not an object", "[1,2]", -EINVAL },
	{ "another kind",
	  "{\"kind\":\"Service\",\"metadata\":{\"namespace\":\"a\",\"name\":\"b\"}}", -EINVAL },
	{ "no namespace", "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}", -EINVAL },
	{ "empty name", "{\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"a\",\"name\":\"\"}}",
	  -EINVAL },
	{ "name not a string", "{\"metadata\":{\"namespace\":\"a\",\"name\":7}}", -EINVAL },
	{ "metadata not an object", "{\"metadata\":\"x\"}", -EINVAL },
	/* A list item has no kind; everything but the identity may be missing or mistyped. */
	{ "minimal list item", "{\"metadata\":{\"namespace\":\"a\",\"name\":\"b\"}}", 0 },
	{ "mistyped fields",
	  "{\"metadata\":{\"namespace\":\"a\",\"name\":\"b\",\"labels\":[],\"ownerReferences\":{}},"
	  "\"spec\":{\"nodeName\":1},\"status\":{\"phase\":\"Weird\",\"conditions\":[1,{},"
	  "{\"type\":\"Ready\"}],\"containerStatuses\":[{\"state\":{\"terminated\":{"
	  "\"exitCode\":1e300}}}]}}",
	  0 },
};

static void test_pod_invalid_and_odd_input(void **state)
{
	for (size_t i = 0; i < sizeof(pod_invalid) / sizeof(pod_invalid[0]); i++) {
		cJSON *obj = cJSON_Parse(pod_invalid[i].json);
		struct tj_pod *p = (struct tj_pod *)0x1;

		print_message("# case: %s\n", pod_invalid[i].name);
		assert_non_null(obj);
		assert_int_equal(tj_pod_from_json(obj, &p), pod_invalid[i].want);
		if (pod_invalid[i].want < 0)
			assert_ptr_equal(p, (struct tj_pod *)0x1); /* untouched */
		else
			tj_pod_free(p);
		cJSON_Delete(obj);
	}
	assert_int_equal(tj_intern_count(), 0);
}

static void test_pod_odd_values(void **state)
{
	cJSON *obj = cJSON_Parse(pod_invalid[7].json);
	struct tj_pod *p;

	assert_int_equal(tj_pod_from_json(obj, &p), 0);
	assert_null(p->node_name);
	assert_null(p->uid);
	assert_null(p->trainjob);
	assert_int_equal(p->rank, -1);
	assert_int_equal(p->phase, TJ_POD_UNKNOWN);
	assert_false(p->ready);
	assert_true(p->terminated);
	assert_int_equal(p->exit_code, 2147483647);
	assert_null(p->exit_reason);
	tj_pod_free(p);
	cJSON_Delete(obj);
}

static void test_pod_strings_are_interned(void **state)
{
	cJSON *a = load("pod-running.json"), *b = load("pod-oomkilled.json");
	struct tj_pod *pa, *pb;

	assert_int_equal(tj_pod_from_json(a, &pa), 0);
	assert_int_equal(tj_pod_from_json(b, &pb), 0);
	assert_ptr_equal(pa->namespace, pb->namespace);
	assert_ptr_equal(pa->trainjob, pb->trainjob);
	assert_ptr_not_equal(pa->node_name, pb->node_name);
	assert_ptr_equal(pa->owner_uid, pb->owner_uid);
	assert_ptr_equal(pa->requests.extended[0].name, pb->requests.extended[0].name);
	/* team-a, the TrainJob's uid, llama-ft, gh200-007, gh200-003, nvidia.com/gpu,
	 * OOMKilled, TerminationByKubelet */
	assert_int_equal(tj_intern_count(), 8);
	tj_pod_free(pa);
	assert_int_equal(tj_intern_count(), 7);
	tj_pod_free(pb);
	assert_int_equal(tj_intern_count(), 0);
	cJSON_Delete(a);
	cJSON_Delete(b);
}

/* The node admission pinned a pod to, and requests: interned, and never a reason to drop
 * the pod from the cache. */
static void test_pod_pinned_node_and_requests(void **state)
{
	cJSON *a = cJSON_Parse(
	        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\",\"annotations\":{"
	        "\"trainjob.flame.dev/node\":\"gh200-001\"}},\"spec\":{\"containers\":[{"
	        "\"resources\":{\"limits\":{\"cpu\":\"2\",\"nvidia.com/gpu\":\"4\"}}}]}}");
	cJSON *b = cJSON_Parse(
	        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"q\",\"annotations\":{"
	        "\"trainjob.flame.dev/node\":7}},\"spec\":{\"containers\":[{\"resources\":{"
	        "\"requests\":{\"cpu\":\"2\",\"nvidia.com/gpu\":\"four\"}}}]}}");
	struct tj_pod *pa, *pb;
	char *node;

	assert_int_equal(tj_pod_from_json(a, &pa), 0);
	cJSON_Delete(a);
	node = tj_intern("gh200-001");
	assert_ptr_equal(pa->pinned_node, node);
	tj_intern_unref(node);
	assert_null(pa->node_name);
	assert_int_equal(pa->requests.cpu_milli, 2000);
	assert_int_equal(pa->requests.n_extended, 1);
	assert_int_equal(tj_pod_resources_extended(&pa->requests, "nvidia.com/gpu"), 4);
	/* a, gh200-001, nvidia.com/gpu */
	assert_int_equal(tj_intern_count(), 3);

	/* A mistyped annotation is no pin; a spec the API server would refuse counts nothing. */
	assert_int_equal(tj_pod_from_json(b, &pb), 0);
	cJSON_Delete(b);
	assert_null(pb->pinned_node);
	assert_int_equal(pb->requests.cpu_milli, 0);
	assert_int_equal(pb->requests.n_extended, 0);
	tj_pod_free(pa);
	tj_pod_free(pb);
	assert_int_equal(tj_intern_count(), 0);
}

/* The node kube-scheduler nominated a pod for, and its termination grace: what the
 * admission's ledger reads of a pod that is not ours (reconcilers/admission/capacity.h). */
static void test_pod_nominated_node_and_grace(void **state)
{
	cJSON *a = cJSON_Parse("{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\"},"
	                       "\"spec\":{\"terminationGracePeriodSeconds\":600},"
	                       "\"status\":{\"phase\":\"Pending\","
	                       "\"nominatedNodeName\":\"gh200-002\"}}");
	cJSON *b = cJSON_Parse("{\"metadata\":{\"namespace\":\"a\",\"name\":\"q\"},"
	                       "\"status\":{\"nominatedNodeName\":\"\"}}");
	cJSON *c = cJSON_Parse("{\"metadata\":{\"namespace\":\"a\",\"name\":\"r\"},"
	                       "\"spec\":{\"nodeName\":\"gh200-001\","
	                       "\"terminationGracePeriodSeconds\":1e12},"
	                       "\"status\":{\"nominatedNodeName\":\"gh200-002\"}}");
	struct tj_pod *pa, *pb, *pc;
	char key[64];

	assert_int_equal(tj_pod_from_json(a, &pa), 0);
	assert_int_equal(tj_pod_from_json(b, &pb), 0);
	assert_int_equal(tj_pod_from_json(c, &pc), 0);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
	assert_string_equal(pa->nominated_node, "gh200-002");
	assert_string_equal(tj_pod_node_of(pa), "gh200-002");
	assert_int_equal(pa->termination_grace, 600);
	assert_int_equal(tj_pod_store_ops.index[TJ_POD_INDEX_NODE](pa, key, sizeof(key)), 1);
	assert_string_equal(key, "gh200-002");
	/* An empty nomination is none; an unset grace is the API's default of 30 s. */
	assert_null(pb->nominated_node);
	assert_null(tj_pod_node_of(pb));
	assert_int_equal(pb->termination_grace, 30);
	assert_int_equal(tj_pod_store_ops.index[TJ_POD_INDEX_NODE](pb, key, sizeof(key)), 0);
	/* A bound pod is indexed by its node, whatever it was nominated for. */
	assert_string_equal(tj_pod_node_of(pc), "gh200-001");
	assert_int_equal(pc->termination_grace, INT32_MAX);
	tj_pod_free(pa);
	tj_pod_free(pb);
	tj_pod_free(pc);
	assert_int_equal(tj_intern_count(), 0);
}

/* The termination message: its last TJ_POD_TERMINATION_MAX bytes, cut between UTF-8
 * sequences; and the label of a pod kept for its logs. */
static void test_pod_termination_message_and_kept(void **state)
{
	char msg[3000], obj[4096];
	struct tj_pod *p;
	cJSON *j;

	/* 2998 bytes: "x" then 999 euro signs of 3 bytes, so that the bound of 1024 falls
	 * inside one. */
	msg[0] = 'x';
	for (size_t i = 1; i < 2998; i++)
		msg[i] = "\xe2\x82\xac"[(i - 1) % 3];
	msg[2998] = '\0';
	snprintf(obj, sizeof(obj),
	         "{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\",\"labels\":{"
	         "\"trainjob.flame.dev/failed-attempt\":\"0\"}},\"status\":{\"phase\":"
	         "\"Failed\",\"containerStatuses\":[{\"name\":\"node\",\"state\":{"
	         "\"terminated\":{\"exitCode\":1,\"message\":\"%s\"}}}]}}",
	         msg);
	j = cJSON_Parse(obj);
	assert_non_null(j);
	assert_int_equal(tj_pod_from_json(j, &p), 0);
	cJSON_Delete(j);
	assert_true(p->kept);
	assert_non_null(p->termination_message);
	/* 1024 bytes would begin on a continuation byte: 1023 are kept, from a lead byte. */
	assert_int_equal(strlen(p->termination_message), 1023);
	assert_int_equal((unsigned char)p->termination_message[0], 0xe2);
	assert_string_equal(p->termination_message, msg + 2998 - 1023);
	tj_pod_free(p);

	j = cJSON_Parse("{\"metadata\":{\"namespace\":\"a\",\"name\":\"q\"},\"status\":{"
	                "\"containerStatuses\":[{\"name\":\"node\",\"state\":{"
	                "\"terminated\":{\"exitCode\":0}}}]}}");
	assert_int_equal(tj_pod_from_json(j, &p), 0);
	cJSON_Delete(j);
	assert_false(p->kept);
	assert_null(p->termination_message);
	tj_pod_free(p);
}

static void test_pod_built_by_hand_is_freed(void **state)
{
	struct tj_pod *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->namespace = strdup("ns");
	p->name = strdup("n");
	p->node_name = strdup("node-1");
	p->exit_reason = strdup("Error");
	p->pinned_node = strdup("node-2");
	p->nominated_node = strdup("node-3");
	p->owner_uid = strdup("u");
	/* Names of extended requests are borrowed in a pod built by hand. */
	p->requests.n_extended = 1;
	p->requests.extended[0] = (struct tj_extended_resource){ "nvidia.com/gpu", 4 };
	assert_null(tj_pod_free(p)); /* the sanitizers check that nothing leaks */
	assert_null(tj_pod_free(NULL));
}

struct node_case {
	const char *file;
	const char *name, *uid, *rv, *arch;
	bool unschedulable;
	size_t n_conditions;
	struct tj_node_condition conditions[4];
	size_t n_taints;
	struct tj_node_taint taints[4];
	size_t n_labels;
	const char *hostname, *product; /* two of the labels */
	struct tj_node_allocatable allocatable;
};

static const struct node_case node_cases[] = {
	{ "node-ready.json",
	  "gh200-007",
	  "e0e1e2e3-e4e5-4e6e-8e7e-e8e9eaebecdd",
	  "183002",
	  "arm64",
	  false,
	  4,
	  { { "MemoryPressure", TJ_COND_FALSE, "KubeletHasSufficientMemory", 1795852800 },
	    { "DiskPressure", TJ_COND_FALSE, "KubeletHasNoDiskPressure", 1795852800 },
	    { "PIDPressure", TJ_COND_FALSE, "KubeletHasSufficientPID", 1795852800 },
	    { "Ready", TJ_COND_TRUE, "KubeletReady", 1795852801 } },
	  1,
	  { { "nvidia.com/gpu", "present", "NoSchedule", 0 } },
	  9,
	  "gh200-007",
	  "NVIDIA-GH200-480GB",
	  { 72000, 515396075520, 110, 1, { { "nvidia.com/gpu", 4 } } } },
	{ "node-unreachable.json",
	  "gh200-003",
	  "d0d1d2d3-d4d5-4d6d-8d7d-d8d9dadbdcdd",
	  "190050",
	  NULL,
	  true,
	  4,
	  { { "MemoryPressure", TJ_COND_UNKNOWN, "NodeStatusUnknown", 1795950360 },
	    { "DiskPressure", TJ_COND_UNKNOWN, "NodeStatusUnknown", 1795950360 },
	    { "PIDPressure", TJ_COND_UNKNOWN, "NodeStatusUnknown", 1795950360 },
	    { "Ready", TJ_COND_UNKNOWN, "NodeStatusUnknown", 1795950360 } },
	  4,
	  { { "nvidia.com/gpu", "present", "NoSchedule", 0 },
	    { "node.kubernetes.io/unreachable", NULL, "NoExecute", 1795950370 },
	    { "node.kubernetes.io/unreachable", NULL, "NoSchedule", 1795950365 },
	    { "node.kubernetes.io/unschedulable", NULL, "NoSchedule", 1795950600 } },
	  8,
	  "gh200-007",
	  "NVIDIA-GH200-480GB",
	  { 72000, 515396075520, 110, 1, { { "nvidia.com/gpu", 4 } } } },
};

static void test_node_fixtures(void **state)
{
	for (size_t i = 0; i < sizeof(node_cases) / sizeof(node_cases[0]); i++) {
		const struct node_case *c = &node_cases[i];
		cJSON *obj = load(c->file);
		struct tj_node *n;

		print_message("# case: %s\n", c->file);
		assert_int_equal(tj_node_from_json(obj, &n), 0);
		cJSON_Delete(obj);
		assert_string_equal(n->name, c->name);
		assert_string_equal(n->uid, c->uid);
		assert_string_equal(n->resource_version, c->rv);
		assert_string_or_null(n->arch, c->arch);
		assert_int_equal(n->unschedulable, c->unschedulable);
		assert_int_equal(n->n_conditions, c->n_conditions);
		for (size_t j = 0; j < c->n_conditions; j++) {
			assert_string_equal(n->conditions[j].type, c->conditions[j].type);
			assert_int_equal(n->conditions[j].status, c->conditions[j].status);
			assert_string_or_null(n->conditions[j].reason, c->conditions[j].reason);
			assert_int_equal(n->conditions[j].last_transition_time,
			                 c->conditions[j].last_transition_time);
		}
		assert_int_equal(n->n_taints, c->n_taints);
		for (size_t j = 0; j < c->n_taints; j++) {
			assert_string_equal(n->taints[j].key, c->taints[j].key);
			assert_string_or_null(n->taints[j].value, c->taints[j].value);
			assert_string_equal(n->taints[j].effect, c->taints[j].effect);
			assert_int_equal(n->taints[j].time_added, c->taints[j].time_added);
		}
		assert_int_equal(n->n_labels, c->n_labels);
		assert_string_equal(tj_node_label(n, "kubernetes.io/hostname"), c->hostname);
		assert_string_equal(tj_node_label(n, "nvidia.com/gpu.product"), c->product);
		assert_string_equal(tj_node_label(n, "node-role.kubernetes.io/agent"), "");
		assert_null(tj_node_label(n, "topology.kubernetes.io/zone"));
		assert_int_equal(n->allocatable.cpu_milli, c->allocatable.cpu_milli);
		assert_int_equal(n->allocatable.memory, c->allocatable.memory);
		assert_int_equal(n->allocatable.pods, c->allocatable.pods);
		assert_int_equal(n->allocatable.n_extended, c->allocatable.n_extended);
		for (uint8_t j = 0; j < c->allocatable.n_extended; j++) {
			assert_string_equal(n->allocatable.extended[j].name,
			                    c->allocatable.extended[j].name);
			assert_int_equal(n->allocatable.extended[j].value,
			                 c->allocatable.extended[j].value);
		}
		assert_int_equal(tj_node_allocatable_extended(n, "nvidia.com/gpu"), 4);
		assert_int_equal(tj_node_allocatable_extended(n, "amd.com/gpu"), 0);
		assert_ptr_equal(tj_node_condition(n, "Ready"), &n->conditions[3]);
		assert_null(tj_node_condition(n, "NetworkUnavailable"));
		assert_null(tj_node_free(n));
	}
	assert_int_equal(tj_intern_count(), 0);
}

/* Labels and allocatable resources: interned, bounded, and never a reason to drop a node. */
static void test_node_labels_and_allocatable(void **state)
{
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"1\","
	                         "\"b\":7}},\"status\":{\"allocatable\":{\"cpu\":\"lots\","
	                         "\"memory\":\"1e30\",\"pods\":-3,\"hugepages-1Gi\":\"0\"}}}");
	cJSON *labels = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "labels");
	cJSON *alloc = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "allocatable");
	struct tj_node *n, *m;
	char key[32];

	/* A label that is not a string is skipped; allocatable amounts that are not quantities
	 * are none, one past int64 is the most there is, and native resources are not
	 * extended ones. */
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_int_equal(n->n_labels, 1);
	assert_string_equal(tj_node_label(n, "a"), "1");
	assert_null(tj_node_label(n, "b"));
	assert_int_equal(n->allocatable.cpu_milli, 0);
	assert_int_equal(n->allocatable.memory, INT64_MAX);
	assert_int_equal(n->allocatable.pods, 0);
	assert_int_equal(n->allocatable.n_extended, 0);
	tj_node_free(n);

	/* Beyond the limits, the first labels and extended resources are kept. */
	for (int i = 0; i < TJ_NODE_MAX_LABELS + 10; i++) {
		snprintf(key, sizeof(key), "feature.node/l%03d", i);
		cJSON_AddStringToObject(labels, key, "true");
	}
	for (int i = 0; i < TJ_NODE_MAX_EXTENDED + 2; i++) {
		snprintf(key, sizeof(key), "example.com/r%d", i);
		cJSON_AddNumberToObject(alloc, key, i);
	}
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_int_equal(tj_node_from_json(obj, &m), 0);
	assert_int_equal(n->n_labels, TJ_NODE_MAX_LABELS);
	assert_string_equal(tj_node_label(n, "a"), "1");
	assert_string_equal(tj_node_label(n, "feature.node/l254"), "true");
	assert_null(tj_node_label(n, "feature.node/l255"));
	assert_int_equal(n->allocatable.n_extended, TJ_NODE_MAX_EXTENDED);
	assert_int_equal(tj_node_allocatable_extended(n, "example.com/r7"), 7);
	assert_int_equal(tj_node_allocatable_extended(n, "example.com/r8"), 0);
	/* Two nodes share their label strings and resource names. */
	assert_ptr_equal(n->labels[5].key, m->labels[5].key);
	assert_ptr_equal(n->labels[5].value, m->labels[5].value);
	assert_ptr_equal(n->allocatable.extended[3].name, m->allocatable.extended[3].name);
	/* a, 1, true, the 255 feature labels kept, the 8 resources */
	assert_int_equal(tj_intern_count(), 3 + 255 + 8);
	tj_node_free(n);
	tj_node_free(m);
	assert_int_equal(tj_intern_count(), 0);

	/* Labels that are not an object are none. */
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(obj, "metadata"), "labels",
	                          cJSON_Parse("[\"a\",\"b\"]"));
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_int_equal(n->n_labels, 0);
	assert_null(n->labels);
	tj_node_free(n);
	cJSON_Delete(obj);
}

/* The node of one row of test_node_same_placement's table. */
struct placement_row {
	const char *rv, *label, *unschedulable, *effect, *gpus, *ready, *heartbeat;
	bool same; /* as the first row's node */
};

static struct tj_node *placement_node(const struct placement_row *row)
{
	static const char *const base =
	        "{\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"%s\",\"labels\":{\"a\":"
	        "\"%s\"}},\"spec\":{\"unschedulable\":%s,\"taints\":[{\"key\":\"k\",\"effect\":"
	        "\"%s\"}]},\"status\":{\"allocatable\":{\"nvidia.com/gpu\":\"%s\"},\"conditions\":"
	        "[{\"type\":\"Ready\",\"status\":\"%s\",\"lastHeartbeatTime\":\"%s\","
	        "\"lastTransitionTime\":\"2026-12-01T10:00:00Z\"}]}}";
	char text[1024];
	struct tj_node *n = NULL;
	cJSON *obj;

	snprintf(text, sizeof(text), base, row->rv, row->label, row->unschedulable, row->effect,
	         row->gpus, row->ready, row->heartbeat);
	obj = cJSON_Parse(text);
	assert_non_null(obj);
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	cJSON_Delete(obj);
	return n;
}

/* A node's periodic status report (a new resourceVersion and heartbeat) leaves it the same
 * for placement; a change of anything the queue or the health judge reads does not. */
/* The suspect nodes' annotations (reconcilers/policy/suspect.h): kept as they are; a failures
 * annotation too long to be the controller's is left out, and so is the text of a mark
 * too long, though the mark itself counts. */
static void test_node_suspect_annotations(void **state)
{
	cJSON *obj = cJSON_Parse("{\"metadata\":{\"name\":\"n\",\"annotations\":{"
	                         "\"trainjob.flame.dev/failures\":\"1:135:0:a/b\","
	                         "\"trainjob.flame.dev/suspect\":\"2026-12-04T10:00:00Z why\"}}}");
	cJSON *ann = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "annotations");
	size_t len = TJ_NODE_FAILURES_MAX + 1;
	char *big = malloc(len + 1);
	struct tj_node *n;

	(void)state;
	assert_non_null(big);
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_string_equal(n->failures, "1:135:0:a/b");
	assert_string_equal(n->suspect_mark, "2026-12-04T10:00:00Z why");
	tj_node_free(n);
	memset(big, 'x', len);
	big[len] = '\0';
	cJSON_ReplaceItemInObject(ann, "trainjob.flame.dev/failures", cJSON_CreateString(big));
	cJSON_ReplaceItemInObject(ann, "trainjob.flame.dev/suspect", cJSON_CreateString(big));
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_null(n->failures);
	assert_string_equal(n->suspect_mark, "");
	tj_node_free(n);
	cJSON_DeleteItemFromObject(ann, "trainjob.flame.dev/suspect");
	cJSON_DeleteItemFromObject(ann, "trainjob.flame.dev/failures");
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_null(n->failures);
	assert_null(n->suspect_mark);
	tj_node_free(n);
	free(big);
	cJSON_Delete(obj);
}

static void test_node_same_placement(void **state)
{
	static const struct placement_row rows[] = {
		{ "1", "x", "false", "NoSchedule", "4", "True", "2026-12-01T10:00:00Z", true },
		{ "2", "x", "false", "NoSchedule", "4", "True", "2026-12-01T10:05:00Z", true },
		{ "2", "y", "false", "NoSchedule", "4", "True", "2026-12-01T10:00:00Z", false },
		{ "2", "x", "true", "NoSchedule", "4", "True", "2026-12-01T10:00:00Z", false },
		{ "2", "x", "false", "NoExecute", "4", "True", "2026-12-01T10:00:00Z", false },
		{ "2", "x", "false", "NoSchedule", "3", "True", "2026-12-01T10:00:00Z", false },
		{ "2", "x", "false", "NoSchedule", "4", "False", "2026-12-01T10:00:00Z", false },
	};
	struct tj_node *first = placement_node(&rows[0]);

	for (size_t i = 1; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct tj_node *n = placement_node(&rows[i]);

		assert_int_equal(tj_node_same_placement(first, n), rows[i].same);
		assert_int_equal(tj_node_same_placement(n, first), rows[i].same);
		tj_node_free(n);
	}
	assert_true(tj_node_same_placement(first, first));
	tj_node_free(first);
}

static void test_node_limits_and_invalid(void **state)
{
	cJSON *obj = cJSON_Parse("{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},"
	                         "\"spec\":{\"taints\":[]},\"status\":{\"conditions\":["
	                         "{\"type\":\"Ready\"},{\"status\":\"True\"},7,"
	                         "{\"type\":\"Ready\",\"status\":\"Maybe\"}]}}");
	cJSON *taints = cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "spec"), "taints");
	struct tj_node *n = NULL;
	cJSON *bad;

	/* Entries without their required members are skipped. */
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_int_equal(n->n_conditions, 1);
	assert_int_equal(n->conditions[0].status, TJ_COND_UNKNOWN);
	assert_null(n->conditions[0].reason);
	assert_int_equal(n->n_taints, 0);
	assert_null(n->taints);
	tj_node_free(n);

	for (int i = 0; i < 64; i++) {
		cJSON *t = cJSON_CreateObject();

		cJSON_AddStringToObject(t, "key", "k");
		cJSON_AddStringToObject(t, "effect", "NoSchedule");
		cJSON_AddItemToArray(taints, t);
	}
	assert_int_equal(tj_node_from_json(obj, &n), 0);
	assert_int_equal(n->n_taints, 64);
	tj_node_free(n);
	cJSON_AddItemToArray(taints, cJSON_Duplicate(cJSON_GetArrayItem(taints, 0), true));
	n = NULL;
	assert_int_equal(tj_node_from_json(obj, &n), -E2BIG);
	assert_null(n);
	cJSON_Delete(obj);

	/* Only entries that are skipped: no arrays at all. */
	bad = cJSON_Parse("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"taints\":[{\"key\":\"k\"}]},"
	                  "\"status\":{\"conditions\":[{\"type\":\"Ready\"},[]]}}");
	assert_int_equal(tj_node_from_json(bad, &n), 0);
	assert_int_equal(n->n_conditions, 0);
	assert_null(n->conditions);
	assert_int_equal(n->n_taints, 0);
	assert_null(n->taints);
	tj_node_free(n);
	cJSON_Delete(bad);

	bad = cJSON_Parse("{\"kind\":\"Pod\",\"metadata\":{\"name\":\"n\"}}");
	assert_int_equal(tj_node_from_json(bad, &n), -EINVAL);
	cJSON_Delete(bad);
	bad = cJSON_Parse("{\"kind\":\"Node\",\"metadata\":{}}");
	assert_int_equal(tj_node_from_json(bad, &n), -EINVAL);
	cJSON_Delete(bad);
}

static void test_node_built_by_hand_is_freed(void **state)
{
	struct tj_node *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	n->name = strdup("n");
	n->conditions = calloc(1, sizeof(*n->conditions));
	n->n_conditions = 1;
	n->conditions[0].type = strdup("Ready");
	n->taints = calloc(1, sizeof(*n->taints));
	n->n_taints = 1;
	n->taints[0].key = strdup("k");
	n->taints[0].effect = strdup("NoSchedule");
	n->labels = calloc(1, sizeof(*n->labels));
	n->n_labels = 1;
	n->labels[0].key = strdup("kubernetes.io/hostname");
	n->labels[0].value = strdup("n");
	/* Names of extended resources are borrowed in a node built by hand. */
	n->allocatable.n_extended = 1;
	n->allocatable.extended[0] = (struct tj_extended_resource){ "nvidia.com/gpu", 4 };
	assert_null(tj_node_free(n));
}

static void test_parse_index(void **state)
{
	static const struct {
		const char *s;
		int rc, want;
	} cases[] = {
		{ "0", 0, 0 },
		{ "17", 0, 17 },
		{ "2147483647", 0, 2147483647 },
		{ "2147483648", -EINVAL, 0 },
		{ "01", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "+1", -EINVAL, 0 },
		{ "1 ", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
		{ NULL, -EINVAL, 0 },
		{ "99999999999999999999", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int v = -7;

		assert_int_equal(tj_parse_index(cases[i].s, &v), cases[i].rc);
		assert_int_equal(v, cases[i].rc == 0 ? cases[i].want : -7);
	}
}

static void test_json_paths(void **state)
{
	cJSON *obj = cJSON_Parse("{\"a\":{\"b\":{\"c\":\"x\",\"n\":1,\"t\":true}},\"A\":2}");

	assert_string_equal(tj_field_string(obj, "a", "b", "c"), "x");
	assert_null(tj_field_string(obj, "a", "b", "n"));
	assert_null(tj_field_string(obj, "a", "b", "c", "d"));
	assert_null(tj_field(obj, "a", "B"));
	assert_ptr_equal(tj_field(obj, "A"), cJSON_GetObjectItemCaseSensitive(obj, "A"));
	assert_true(tj_field_bool(tj_field(obj, "a", "b"), "t"));
	assert_false(tj_field_bool(tj_field(obj, "a", "b"), "n"));
	assert_null(tj_field_string(NULL, "a"));
	assert_null(tj_field(NULL, "a"));
	cJSON_Delete(obj);
}

static void test_intern_table(void **state)
{
	enum {
		N = 1000
	};
	char *s[N], name[32];

	/* Enough distinct strings to grow the table several times, then release them in an
	 * order that exercises the backward-shift deletion. */
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		s[i] = tj_intern(name);
		assert_non_null(s[i]);
	}
	assert_int_equal(tj_intern_count(), N);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_ptr_equal(tj_intern(name), s[i]);
		assert_ptr_equal(tj_intern_len("node-999xyz", 8), s[999]);
		tj_intern_unref(s[999]);
	}
	for (int i = 0; i < N; i += 2) {
		tj_intern_unref(s[i]);
		assert_ptr_equal(tj_intern_ref(s[i]), s[i]);
		tj_intern_unref(s[i]);
		tj_intern_unref(s[i]);
	}
	assert_int_equal(tj_intern_count(), N / 2);
	for (int i = 1; i < N; i += 2) {
		snprintf(name, sizeof(name), "node-%d", i);
		assert_string_equal(s[i], name);
		tj_intern_unref(s[i]);
		tj_intern_unref(s[i]);
	}
	assert_int_equal(tj_intern_count(), 0);
	assert_null(tj_intern_unref(NULL));
	assert_null(tj_intern_ref(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_fixtures),
		cmocka_unit_test(test_pod_held_seconds),
		cmocka_unit_test(test_pod_invalid_and_odd_input),
		cmocka_unit_test(test_pod_odd_values),
		cmocka_unit_test(test_pod_strings_are_interned),
		cmocka_unit_test(test_pod_pinned_node_and_requests),
		cmocka_unit_test(test_pod_nominated_node_and_grace),
		cmocka_unit_test(test_pod_termination_message_and_kept),
		cmocka_unit_test(test_pod_built_by_hand_is_freed),
		cmocka_unit_test(test_node_fixtures),
		cmocka_unit_test(test_node_labels_and_allocatable),
		cmocka_unit_test(test_node_suspect_annotations),
		cmocka_unit_test(test_node_same_placement),
		cmocka_unit_test(test_node_limits_and_invalid),
		cmocka_unit_test(test_node_built_by_hand_is_freed),
		cmocka_unit_test(test_parse_index),
		cmocka_unit_test(test_json_paths),
		cmocka_unit_test(test_intern_table),
	};
	return cmocka_run_group_tests_name("projection", tests, NULL, NULL);
}
