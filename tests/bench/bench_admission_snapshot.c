/* The admission cycle at scale, at the unit level: the snapshot of the caches
 * (controller/admission/admitter_queue.h, tj_admitter_snapshot_build and _clear) and the decision
 * on it (reconcilers/admission/admission.h, tj_admit), cycle after cycle, on real caches filled
 * without an API server. Reports, over the cycles, the median, p90 and p99 of the wall time and of
 * the thread's CPU time of the snapshot, of the decision, and of the whole cycle.
 *
 *   build/release/tests/bench/bench_admission_snapshot [cycles] [mixed]
 *
 * The shape (the issue's): 5,000 GH200 nodes of 4 GPUs (tests/unit/data/node-ready.json,
 * labelled as deploy/config/config.yaml's gh200 class asks, the config read from that file)
 * running 150,000 pods: on each node one rank (4 GPUs) of a running TrainJob of 4 nodes
 * whose walltime ends within the hour (1,250 jobs, with status.startTime and status.deadline),
 * and 29 small pods of no TrainJob (100 to 500 millicores each), all built from
 * tests/unit/data/pod-running.json; and 5,000 TrainJobs queued, each for 4 nodes x 4 GPUs,
 * with the placement of the class's rendered pods, three priorities and creation times
 * two seconds apart. Every GPU is taken, so nothing is admitted: each cycle decides the
 * whole queue again, its head reserved the earliest nodes the walltimes free.
 *
 * Between two cycles, as between two cycles of a cluster, 10 pods end and are replaced by
 * a new pod on the same node (pods_changed), the same pods in every run; the first cycle,
 * whose queue has no ranks yet and whose every decision is told, is reported apart. The
 * whole cycle is the snapshot, the decision, and taking the decisions as the admitter does
 * (the ranks and the statuses worth telling, their messages written). No ResourceQuota is
 * cached and the config sets no namespace limits.
 *
 * The snapshots of the first cycle and of one more after the last are checked, untimed,
 * against the caches, counted apart: what each node holds, and the releases. A snapshot
 * that missed a change (a replacement asks for other amounts than its pod) fails the run,
 * exit status 1. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>

#include "../unit/idle_reflector.h"
#include "controller/admission/admitter_queue.h"
#include "controller/config/config.h"
#include "controller/stores.h"
#include "informers/node.h"
#include "informers/pod.h"
#include "informers/resources.h"
#include "reconcilers/policy/qos.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

#define NOW           1795953600 /* 2026-11-29T12:00:00Z, after the fixtures' times */
#define NOW_MS        86400000   /* the loop's clock: a day up */
#define CLASS         "gh200"

#define N_NODES       5000
#define JOB_NODES     4
#define N_RUNNING     (N_NODES / JOB_NODES)
#define PODS_PER_NODE 30 /* slot 0: a rank of a running job; the others, small pods */
#define N_PODS        (N_NODES * PODS_PER_NODE)
#define N_QUEUED      5000
#define CHANGES       10 /* pods that end and are replaced between two cycles */
#define WALLTIME      3600

#define PRODUCT_LABEL "nvidia.com/gpu.product"
#define GIB           (1024LL * 1024 * 1024)

/* A fixed sequence, so that every run builds the same cluster and changes the same pods. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static int64_t pick(uint64_t *state, int64_t lo, int64_t hi)
{
	return lo + (int64_t)(next_random(state) % (uint64_t)(hi - lo + 1));
}

static cJSON *read_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	cJSON *json = NULL;
	long len;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)len + 1)) && fread(buf, 1, (size_t)len, f) == (size_t)len) {
		buf[len] = '\0';
		json = cJSON_Parse(buf);
	}
	free(buf);
	fclose(f);
	return json;
}

/* JSON written with ' for " (no value holds a '), as the unit tests' fixtures are. */
static cJSON *parse_quoted(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static cJSON *parse_quoted(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return NULL;
	for (char *p = buf; *p; p++)
		if (*p == '\'')
			*p = '"';
	return cJSON_Parse(buf);
}

/* obj[key] = value, replaced or added. */
static void set_string(cJSON *obj, const char *key, const char *value)
{
	cJSON *item = cJSON_CreateString(value);

	if (cJSON_GetObjectItemCaseSensitive(obj, key))
		cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
	else
		cJSON_AddItemToObject(obj, key, item);
}

static void rfc3339(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&tt, &tm));
}

/* ---- the caches, without an API server ---- */

/* The reflectors are never started (tests/unit/idle_reflector.h): the benchmark stands in
 * for their lists and watches. */

/* Projects obj into r's cache, as the reflector does with a list item. */
static int cache_put(const struct tj_reflector *r, tj_project_fn project,
                     const struct tj_store_ops *ops, const cJSON *obj)
{
	void *projected;
	int rc = project(obj, &projected);

	if (rc == 0 && (rc = tj_store_upsert(idle_reflector_store(r), projected, NULL)) < 0)
		ops->free(projected);
	return rc;
}

struct cluster {
	uv_loop_t loop;
	bool loop_open;
	struct tj_config *config;      /* owned */
	struct tj_informers informers; /* its trainjobs, pods and nodes owned; the rest NULL */
	struct tj_store *entries;      /* owned; the queue (struct tj_admitter_entry) */
	cJSON *rank_pod, *small_pod;   /* owned; the pods' templates */
	unsigned *generation;          /* owned; per pod slot, the times it was replaced */
	uint64_t resource_version;
	struct tj_ledger *ledger; /* owned; what the nodes offer and hold, between cycles */
	struct tj_eligibility *eligibility; /* owned; the nodes the placements allow */
	uint64_t cycles; /* snapshots built: the stamps of the placements they ask for */
};

/* ---- the shape ---- */

/* The mixed queue (argv[2] "mixed"): the queued jobs ask 1 to 8 nodes of 1, 2 or 4 GPUs
 * (14 cores and 100 GiB a GPU), and on one node in 10 the running rank holds 1 to 3 GPUs
 * of the 4 (as much CPU and memory a GPU), so that the cycle admits and backfills gangs of
 * many shapes on what is left, as the decision benchmark's busy cluster (bench_admission_core).
 * The same gangs are admitted in every cycle: the benchmark takes no admission. */
static bool mixed;

static int64_t rank_gpus(size_t node)
{
	return node % 10 == 3 ? 1 + (int64_t)(node / 10) % 3 : 4;
}

static const char *const small_apps[][2] = {
	{ "kube-system", "kube-proxy" },    { "kube-system", "cilium" },
	{ "kube-system", "nvidia-driver" }, { "monitoring", "node-exporter" },
	{ "monitoring", "dcgm-exporter" },  { "logging", "fluent-bit" },
};
#define N_DAEMONS (sizeof(small_apps) / sizeof(small_apps[0]))

static void node_name(size_t node, char *buf, size_t size)
{
	snprintf(buf, size, "gh200-%04zu", node);
}

static void job_name(bool queued, size_t job, char *buf, size_t size)
{
	snprintf(buf, size, "%s-%04zu", queued ? "queued" : "run", job);
}

static void job_namespace(size_t job, char *buf, size_t size)
{
	snprintf(buf, size, "team-%02zu", job % 10);
}

static void job_uid(bool queued, size_t job, char *buf, size_t size)
{
	snprintf(buf, size, "%08zx-5e4f-4321-8765-0fedcba98765", job + (queued ? 1000000 : 0));
}

/* The namespace and name of the pod of slot `slot` of node `node` after gen replacements:
 * slot 0 is rank node % 4 of the running job node / 4 (a replacement is its next attempt),
 * slots 1 to 6 a DaemonSet's pod, the others a small service's. */
static void pod_identity(size_t node, size_t slot, unsigned gen, char *ns, char *name, size_t size)
{
	if (slot == 0) {
		char job[32];

		job_name(false, node / JOB_NODES, job, sizeof(job));
		job_namespace(node / JOB_NODES, ns, size);
		snprintf(name, size, "%s-node-0-%zu-a%u", job, node % JOB_NODES, gen);
	} else if (slot <= N_DAEMONS) {
		snprintf(ns, size, "%s", small_apps[slot - 1][0]);
		snprintf(name, size, "%s-%04zu-%u", small_apps[slot - 1][1], node, gen);
	} else {
		snprintf(ns, size, "team-%02zu", (node + slot) % 10);
		snprintf(name, size, "svc-%04zu-%02zu-%u", node, slot, gen);
	}
}

/* The templates of the pods, from pod-running.json: a rank asks for the whole node's GPUs
 * and most of its CPU and memory (as the rendered pods of tests/unit/data/golden); a small
 * pod, owned by a ReplicaSet, for CPU and memory alone. */
static int make_templates(struct cluster *c)
{
	cJSON *pod = read_json(TJ_TEST_DATA "/pod-running.json");
	cJSON *small, *labels, *owner, *container, *rank_res, *small_res;

	if (!pod)
		return -EINVAL;
	rank_res = parse_quoted("{'requests':{'cpu':'56','memory':'400Gi','nvidia.com/gpu':'4'},"
	                        "'limits':{'memory':'400Gi','nvidia.com/gpu':'4'}}");
	small_res = parse_quoted("{'requests':{'cpu':'','memory':''},'limits':{'memory':''}}");
	container = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(pod, "spec"), "containers"), 0);
	if (!rank_res || !small_res ||
	    !cJSON_ReplaceItemInObjectCaseSensitive(container, "resources", rank_res)) {
		cJSON_Delete(rank_res);
		cJSON_Delete(small_res);
		cJSON_Delete(pod);
		return -ENOMEM;
	}
	small = cJSON_Duplicate(pod, true);
	if (!small) {
		cJSON_Delete(small_res);
		cJSON_Delete(pod);
		return -ENOMEM;
	}
	labels = cJSON_GetObjectItem(cJSON_GetObjectItem(small, "metadata"), "labels");
	cJSON_Delete(labels->child);
	labels->child = NULL;
	set_string(labels, "app", "svc");
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(small, "metadata"), "annotations");
	owner = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(small, "metadata"), "ownerReferences"), 0);
	set_string(owner, "apiVersion", "apps/v1");
	set_string(owner, "kind", "ReplicaSet");
	set_string(owner, "name", "svc");
	container = cJSON_GetArrayItem(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(small, "spec"), "containers"), 0);
	set_string(container, "name", "app");
	set_string(container, "image", "registry.k8s.io/pause:3.10");
	cJSON_ReplaceItemInObjectCaseSensitive(container, "resources", small_res);
	c->rank_pod = pod;
	c->small_pod = small;
	return 0;
}

/* The pod of that slot after gen replacements, projected as the reflector projects one. */
static int make_pod(struct cluster *c, size_t node, size_t slot, unsigned gen, struct tj_pod **ret)
{
	cJSON *pod = slot == 0 ? c->rank_pod : c->small_pod;
	cJSON *meta = cJSON_GetObjectItem(pod, "metadata");
	cJSON *labels = cJSON_GetObjectItem(meta, "labels");
	cJSON *spec = cJSON_GetObjectItem(pod, "spec");
	cJSON *owner = cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "ownerReferences"), 0);
	char ns[TJ_NAME_MAX], name[TJ_NAME_MAX], uid[64], rv[24], host[32], owner_uid[64];

	pod_identity(node, slot, gen, ns, name, sizeof(ns));
	node_name(node, host, sizeof(host));
	snprintf(uid, sizeof(uid), "%08zx-9b7d-4e15-%04x-%012zx", node, gen,
	         slot * 7919 + node * 31);
	snprintf(rv, sizeof(rv), "%" PRIu64, ++c->resource_version);
	set_string(meta, "namespace", ns);
	set_string(meta, "name", name);
	set_string(meta, "uid", uid);
	set_string(meta, "resourceVersion", rv);
	set_string(spec, "nodeName", host);
	if (slot == 0) {
		char job[32], rank[8], attempt[16];

		if (mixed) {
			cJSON *res = cJSON_GetObjectItem(
			        cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 0),
			        "resources");
			cJSON *req = cJSON_GetObjectItem(res, "requests");
			int64_t gpus = rank_gpus(node);
			char amount[16], cpu[16], memory[16];

			snprintf(amount, sizeof(amount), "%lld", (long long)gpus);
			snprintf(cpu, sizeof(cpu), "%lld", (long long)gpus * 14);
			snprintf(memory, sizeof(memory), "%lldGi", (long long)gpus * 100);
			set_string(req, "nvidia.com/gpu", amount);
			set_string(req, "cpu", cpu);
			set_string(req, "memory", memory);
			set_string(cJSON_GetObjectItem(res, "limits"), "nvidia.com/gpu", amount);
			set_string(cJSON_GetObjectItem(res, "limits"), "memory", memory);
		}

		job_name(false, node / JOB_NODES, job, sizeof(job));
		job_uid(false, node / JOB_NODES, owner_uid, sizeof(owner_uid));
		snprintf(rank, sizeof(rank), "%zu", node % JOB_NODES);
		snprintf(attempt, sizeof(attempt), "%u", gen);
		set_string(owner, "name", job);
		set_string(owner, "uid", owner_uid);
		set_string(labels, TJ_LABEL_TRAINJOB, job);
		set_string(labels, "jobset.sigs.k8s.io/jobset-name", job);
		set_string(labels, TJ_LABEL_RANK, rank);
		set_string(labels, TJ_LABEL_ATTEMPT, attempt);
		set_string(labels, "batch.kubernetes.io/job-completion-index", rank);
		set_string(spec, "hostname", name);
		set_string(spec, "subdomain", job);
	} else {
		/* A replacement asks for other amounts than the pod it replaces: a snapshot that
		 * missed the change would hold the old ones. */
		cJSON *res = cJSON_GetObjectItem(
		        cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "containers"), 0),
		        "resources");
		char cpu[16], memory[16];

		snprintf(cpu, sizeof(cpu), "%zum", 100 * (1 + (node + slot + gen) % 5));
		snprintf(memory, sizeof(memory), "%dMi", 128 << ((node * 7 + slot + gen) % 3));
		/* A DaemonSet per app; a ReplicaSet per slot and 50 nodes. */
		snprintf(owner_uid, sizeof(owner_uid), "00000000-0000-4000-8000-%012zx",
		         slot <= N_DAEMONS ? slot : (node / 50) * PODS_PER_NODE + slot);
		set_string(cJSON_GetObjectItem(res, "requests"), "cpu", cpu);
		set_string(cJSON_GetObjectItem(res, "requests"), "memory", memory);
		set_string(cJSON_GetObjectItem(res, "limits"), "memory", memory);
		set_string(owner, "uid", owner_uid);
		set_string(spec, "hostname", name);
	}
	return tj_pod_from_json(pod, ret);
}

static int add_nodes(struct cluster *c)
{
	cJSON *node = read_json(TJ_TEST_DATA "/node-ready.json");
	cJSON *meta = node ? cJSON_GetObjectItem(node, "metadata") : NULL;
	int rc = node ? 0 : -EINVAL;

	for (size_t i = 0; rc == 0 && i < N_NODES; i++) {
		char name[32], uid[64], rv[24];

		node_name(i, name, sizeof(name));
		snprintf(uid, sizeof(uid), "e0e1e2e3-e4e5-4e6e-8e7e-%012zx", i);
		snprintf(rv, sizeof(rv), "%" PRIu64, ++c->resource_version);
		set_string(meta, "name", name);
		set_string(meta, "uid", uid);
		set_string(meta, "resourceVersion", rv);
		set_string(cJSON_GetObjectItem(meta, "labels"), "kubernetes.io/hostname", name);
		rc = cache_put(c->informers.nodes, tj_node_project, &tj_node_store_ops, node);
	}
	cJSON_Delete(node);
	return rc;
}

/* A pod slot by its pod's store key. */
struct slot_key {
	char key[64];
	size_t slot; /* node * PODS_PER_NODE + its slot on the node */
};

static int cmp_slot_key(const void *a, const void *b)
{
	return strcmp(((const struct slot_key *)a)->key, ((const struct slot_key *)b)->key);
}

/* Every pod, into the cache in the order a list returns them (by namespace and name), as
 * the reflector fills it: the pods of one node lie apart in memory, as in the controller's. */
static int add_pods(struct cluster *c)
{
	struct slot_key *order = calloc(N_PODS, sizeof(*order));
	int rc = order ? 0 : -ENOMEM;

	for (size_t i = 0; rc == 0 && i < N_PODS; i++) {
		char ns[TJ_NAME_MAX], name[TJ_NAME_MAX];

		pod_identity(i / PODS_PER_NODE, i % PODS_PER_NODE, 0, ns, name, sizeof(ns));
		order[i].slot = i;
		rc = tj_store_key_of(order[i].key, sizeof(order[i].key), ns, name);
	}
	if (rc == 0)
		qsort(order, N_PODS, sizeof(*order), cmp_slot_key);
	for (size_t i = 0; rc == 0 && i < N_PODS; i++) {
		size_t slot = order[i].slot;
		struct tj_pod *pod;

		rc = make_pod(c, slot / PODS_PER_NODE, slot % PODS_PER_NODE, 0, &pod);
		if (rc == 0 &&
		    (rc = tj_store_upsert(idle_reflector_store(c->informers.pods), pod, NULL)) < 0)
			tj_pod_free(pod);
	}
	free(order);
	return rc;
}

/* A TrainJob of 4 nodes on the torch-gh200 runtime; a running one with its start and its
 * deadline in its status, started up to 50 minutes ago with a walltime of an hour. */
static int add_trainjob(struct cluster *c, bool queued, size_t job, int64_t created,
                        int64_t started)
{
	char name[32], ns[32], uid[64], creation[32], start[32], deadline[32], status[160] = "{}";
	cJSON *obj;
	int rc;

	job_name(queued, job, name, sizeof(name));
	job_namespace(job, ns, sizeof(ns));
	job_uid(queued, job, uid, sizeof(uid));
	rfc3339(created, creation, sizeof(creation));
	if (!queued) {
		rfc3339(started, start, sizeof(start));
		rfc3339(started + WALLTIME, deadline, sizeof(deadline));
		snprintf(status, sizeof(status),
		         "{'state':'Running','startTime':'%s','deadline':'%s'}", start, deadline);
	}
	obj = parse_quoted(
	        "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
	        "'metadata':{'name':'%s','namespace':'%s','uid':'%s','resourceVersion':'%" PRIu64
	        "','generation':1,'creationTimestamp':'%s'},"
	        "'spec':{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':%d,"
	        "'trainer':{'numNodes':%d,'image':'nvcr.io/nvidia/pytorch:25.08-py3',"
	        "'command':['torchrun','train.py'],"
	        "'resourcesPerNode':{'requests':{'nvidia.com/gpu':4}}}},"
	        "'status':%s}",
	        name, ns, uid, ++c->resource_version, creation, WALLTIME, JOB_NODES, status);
	if (!obj)
		return -ENOMEM;
	rc = cache_put(c->informers.trainjobs, tj_trainjob_store_project, &tj_trainjob_store_ops,
	               obj);
	cJSON_Delete(obj);
	return rc;
}

/* The spec of a queued job's rendered pods, as far as the queue reads it: the requests,
 * and the class's affinity and tolerations (tests/unit/data/golden/gh200-4x4.yaml). */
#define QUEUED_POD_SPEC                                                                            \
	"{'containers':[{'name':'node','resources':{"                                              \
	"'requests':{'cpu':'56','memory':'400Gi','nvidia.com/gpu':'4'},"                           \
	"'limits':{'memory':'400Gi','nvidia.com/gpu':'4'}}}],"                                     \
	"'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"           \
	"'nodeSelectorTerms':[{'matchExpressions':["                                               \
	"{'key':'" PRODUCT_LABEL "','operator':'In','values':['NVIDIA-GH200-480GB']},"             \
	"{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}]}]}}},"                   \
	"'tolerations':[{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoSchedule'}]}"

/* The queue's entry of a queued job, with what the admitter reads from its rendered pods
 * (controller/admission/admitter.c, read_want) and what a cycle reads of it. */
static int add_entry(struct cluster *c, const cJSON *spec, size_t job, int nodes, int64_t gpus,
                     int32_t priority, int64_t created, int64_t walltime)
{
	const struct tj_gpu_class *cls = tj_config_find_class(c->config, CLASS);
	struct tj_admitter_entry *e = calloc(1, sizeof(*e));
	struct tj_pod_resources r = { 0 };
	char name[32];
	int rc;

	if (!e)
		return -ENOMEM;
	job_name(true, job, name, sizeof(name));
	job_namespace(job, e->namespace, sizeof(e->namespace));
	snprintf(e->key, sizeof(e->key), "%s/%s", e->namespace, name);
	snprintf(e->gpu_class, sizeof(e->gpu_class), "%s", CLASS);
	e->state = TJ_ADMITTER_WAITING;
	e->rank = SIZE_MAX;
	e->num_nodes = e->num_pods = nodes;
	rc = tj_pod_spec_requests(spec, &r);
	e->request = (struct tj_admission_resources){ tj_pod_resources_extended(&r, cls->resource),
		                                      r.cpu_milli, r.memory, 1 };
	if (mixed)
		e->request =
		        (struct tj_admission_resources){ gpus, gpus * 14000, gpus * 100 * GIB, 1 };
	e->priority = priority;
	/* Of its namespace's default tier, normal, which may preempt low (the shipped config):
	 * each cycle reads the running gangs for the tiers it may preempt. */
	const struct tj_admission_policy *policy = tj_config_admission(c->config);
	const struct tj_qos_tier *tier = tj_qos_find(policy, "normal");

	e->qos = tj_qos_index(policy, tier);
	e->tier = tier ? tier->priority : 0;
	e->preempts = tier ? tier->preempts : 0;
	e->preempt_after = tier ? tier->preempt_after_seconds : 0;
	e->creation_time = created;
	e->walltime = walltime;
	e->grace = tj_pod_spec_termination_grace(spec);
	if (rc == 0)
		rc = tj_placement_compile(spec, &e->placement, NULL, 0);
	if (rc == 0)
		rc = tj_store_upsert(c->entries, e, NULL);
	if (rc < 0)
		tj_admitter_entry_free(e);
	return rc;
}

static int cluster_build(struct cluster *c)
{
	static const int32_t priorities[] = { 0, 0, 100, 1000 };
	char err[512] = "";
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	cJSON *spec;
	int rc;

	if (uv_loop_init(&c->loop) < 0 || tj_ledger_new(&c->ledger) < 0 ||
	    tj_eligibility_new(&c->eligibility) < 0)
		return -ENOMEM;
	c->loop_open = true;
	rc = tj_config_load_file(TJ_CONFIG_FILE, &c->config, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		return rc;
	}
	if (!tj_config_find_class(c->config, CLASS))
		return -EINVAL;
	rc = idle_reflector_new(&c->loop, "trainjobs", tj_trainjob_store_project,
	                        &tj_trainjob_store_ops, &c->informers.trainjobs);
	if (rc == 0)
		rc = idle_reflector_new(&c->loop, "pods", tj_pod_project, &tj_pod_store_ops,
		                        &c->informers.pods);
	if (rc == 0)
		rc = idle_reflector_new(&c->loop, "nodes", tj_node_project, &tj_node_store_ops,
		                        &c->informers.nodes);
	if (rc == 0)
		rc = tj_store_new(&tj_admitter_entry_ops, &c->entries);
	if (rc == 0)
		rc = make_templates(c);
	c->generation = calloc(N_PODS, sizeof(*c->generation));
	if (rc == 0 && !c->generation)
		rc = -ENOMEM;
	if (rc == 0)
		rc = add_nodes(c);
	for (size_t j = 0; rc == 0 && j < N_RUNNING; j++) {
		int64_t started = NOW - pick(&seed, 600, 3000);

		rc = add_trainjob(c, false, j, started - pick(&seed, 10, 86400), started);
	}
	if (rc == 0)
		rc = add_pods(c);
	spec = parse_quoted("%s", QUEUED_POD_SPEC);
	if (rc == 0 && !spec)
		rc = -ENOMEM;
	for (size_t j = 0; rc == 0 && j < N_QUEUED; j++) {
		int64_t created = NOW - 2 * N_QUEUED + 2 * (int64_t)j;

		static const int64_t gpus[] = { 1, 2, 4, 4 };
		int nodes = mixed ? (int)pick(&seed, 1, 8) : JOB_NODES;
		int64_t g = mixed ? gpus[pick(&seed, 0, 3)] : 4;

		rc = add_trainjob(c, true, j, created, 0);
		if (rc == 0)
			rc = add_entry(c, spec, j, nodes, g, priorities[pick(&seed, 0, 3)], created,
			               60 * pick(&seed, 10, 240));
	}
	cJSON_Delete(spec);
	return rc;
}

/* Frees what cluster_build made, all or part of it. */
static void cluster_free(struct cluster *c)
{
	c->ledger = tj_ledger_free(c->ledger);
	c->eligibility = tj_eligibility_free(c->eligibility);
	tj_reflector_free(c->informers.trainjobs);
	tj_reflector_free(c->informers.pods);
	tj_reflector_free(c->informers.nodes);
	/* The reflectors' memory goes with their timers' close callbacks. */
	if (c->loop_open) {
		uv_run(&c->loop, UV_RUN_DEFAULT);
		uv_loop_close(&c->loop);
	}
	tj_store_free(c->entries);
	tj_config_free(c->config);
	cJSON_Delete(c->rank_pod);
	cJSON_Delete(c->small_pod);
	free(c->generation);
}

/* ---- what changes between two cycles ---- */

/* The one place where the benchmark changes the pod cache between two cycles, as the pod
 * reflector does on a watch event: old, a cached pod, ends and leaves the cache; new (its
 * replacement, which the cache does not have) enters it. A snapshot that keeps what it
 * read between cycles and must be told of changes is told here, as the controller's pod
 * handlers tell it, before old is freed. */
static int pods_changed(struct cluster *c, const struct tj_pod *old, struct tj_pod *new)
{
	struct tj_store *pods = idle_reflector_store(c->informers.pods);
	char key[TJ_STORE_KEY_MAX];
	void *gone = NULL;
	int rc = tj_pod_key(old, key, sizeof(key));

	if (rc == 0)
		rc = tj_store_delete(pods, key, &gone);
	if (rc == 0)
		rc = tj_store_upsert(pods, new, NULL);
	if (rc < 0) {
		tj_pod_free(new);
	} else {
		tj_ledger_touch_pod(c->ledger, gone);
		tj_ledger_touch_pod(c->ledger, new);
	}
	tj_pod_free(gone);
	return rc;
}

/* CHANGES pods, drawn from seed, end; each is replaced by a new pod on its node. */
static int change_pods(struct cluster *c, uint64_t *seed)
{
	for (int i = 0; i < CHANGES; i++) {
		size_t node = (size_t)pick(seed, 0, N_NODES - 1);
		size_t slot = (size_t)pick(seed, 0, PODS_PER_NODE - 1);
		unsigned *gen = &c->generation[node * PODS_PER_NODE + slot];
		char ns[TJ_NAME_MAX], name[TJ_NAME_MAX], key[TJ_STORE_KEY_MAX];
		const struct tj_pod *old;
		struct tj_pod *new;
		int rc;

		pod_identity(node, slot, *gen, ns, name, sizeof(ns));
		if (tj_store_key_of(key, sizeof(key), ns, name) < 0 ||
		    !(old = tj_store_get(tj_reflector_store(c->informers.pods), key)))
			return -ENOENT;
		rc = make_pod(c, node, slot, ++*gen, &new);
		if (rc == 0)
			rc = pods_changed(c, old, new);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- one cycle ---- */

struct clocks {
	uint64_t wall, cpu; /* ns: CLOCK_MONOTONIC, and the thread's CPU time */
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct clocks clocks_now(void)
{
	return (struct clocks){ clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_THREAD_CPUTIME_ID) };
}

enum {
	SNAPSHOT,
	DECIDE,
	CYCLE,
	N_PARTS
};
enum {
	WALL,
	CPU,
	N_CLOCKS
};
static const char *const part_names[] = { "snapshot", "decide", "cycle" };

/* The times of one cycle's parts, in ms. */
struct cycle_times {
	double ms[N_PARTS][N_CLOCKS];
};

/* What the last cycle decided, to show the shape is as meant. */
struct outcome {
	size_t admitted, waiting[4], told;
	int64_t head_start;
};

static void spent(double *ms, struct clocks from, struct clocks to)
{
	ms[WALL] += (double)(to.wall - from.wall) / 1e6;
	ms[CPU] += (double)(to.cpu - from.cpu) / 1e6;
}

/* Decides the queue of s, on the input the snapshot built for it, as the admitter does. */
static int decide(struct tj_admitter_snapshot *s, struct outcome *out)
{
	struct tj_admission_result *res = NULL;
	int rc = tj_admit(&s->input, &res);
	/* As the admitter takes the decisions: the ranks, for the next cycle's order, and the
	 * decisions worth telling, their messages written. An admitted job stays in the queue:
	 * every cycle must decide the same queue (none is, with every GPU taken). */
	for (size_t i = 0; rc == 0 && i < s->n_jobs; i++)
		s->job_entries[i]->rank = res->decisions[i].rank;
	*out = (struct outcome){ 0 };
	for (size_t i = 0; rc == 0 && i < s->n_jobs; i++) {
		struct tj_admitter_entry *e = s->job_entries[i];
		struct tj_admission_decision *d = &res->decisions[i];

		if (i + TJ_ADMITTER_FETCH_AHEAD < s->n_jobs)
			tj_admitter_entry_fetch_told(s->job_entries[i + TJ_ADMITTER_FETCH_AHEAD]);
		if (d->position == 1)
			out->head_start = d->expected_start;
		if (d->verdict == TJ_ADMISSION_ADMITTED ||
		    (e->decided && !tj_admission_worth_telling(&e->decision, d)))
			continue;
		tj_admission_say_deferred(&s->input, i, d);
		e->decision = *d;
		e->decision.nodes = NULL;
		e->decided = true;
		out->told++;
	}
	if (rc == 0) {
		out->admitted = res->admitted;
		memcpy(out->waiting, res->classes[0].waiting, sizeof(out->waiting));
	}
	tj_admission_result_free(res);
	return rc;
}

/* The index of the node of that name (node_name), SIZE_MAX for another name. */
static size_t node_index(const char *name)
{
	char *end;
	size_t i;

	if (!name || strncmp(name, "gh200-", 6) != 0)
		return SIZE_MAX;
	i = strtoul(name + 6, &end, 10);
	return *end == '\0' && i < N_NODES ? i : SIZE_MAX;
}

/* What a snapshot holds, and whether it is what the caches say, counted here apart from
 * it: on each node, the requests of its pods (every pod here is bound and running); and a
 * release for each rank, at its job's deadline plus the rank's grace. */
struct check {
	size_t nodes, schedulable, releases, jobs;
	struct tj_admission_resources used;
	size_t wrong_nodes;       /* whose used is not what their pods request */
	size_t expected_releases; /* the ranks in the pod cache */
	int64_t release_seconds;  /* the releases' times after NOW, summed */
	int64_t expected_seconds; /* the same from the ranks and their jobs */
};

static int check_snapshot(const struct cluster *c, const struct tj_admitter_snapshot *s,
                          struct check *ret)
{
	const char *resource = tj_config_find_class(c->config, CLASS)->resource;
	const struct tj_store *jobs = tj_reflector_store(c->informers.trainjobs);
	struct tj_admission_resources *used = calloc(N_NODES, sizeof(*used));
	struct tj_store_iter it;
	const struct tj_pod *pod;

	if (!used)
		return -ENOMEM;
	*ret = (struct check){ .nodes = s->n_nodes, .releases = s->n_releases, .jobs = s->n_jobs };
	tj_store_iter_init(tj_reflector_store(c->informers.pods), &it);
	while ((pod = tj_store_iter_next(&it))) {
		size_t k = node_index(tj_pod_node_of(pod));
		char key[TJ_STORE_KEY_MAX];
		const struct tj_trainjob *job;

		if (k == SIZE_MAX)
			continue;
		used[k].gpus += tj_pod_resources_extended(&pod->requests, resource);
		used[k].cpu_milli += pod->requests.cpu_milli;
		used[k].memory += pod->requests.memory;
		used[k].pods++;
		if (tj_pod_trainjob_key(pod, key, sizeof(key)) == 1 &&
		    (job = tj_store_get(jobs, key))) {
			ret->expected_releases++;
			ret->expected_seconds +=
			        job->status.deadline + pod->termination_grace - NOW;
		}
	}
	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct tj_admission_resources *u = &s->nodes[i].used;
		size_t k = node_index(s->nodes[i].name);

		ret->schedulable += s->nodes[i].schedulable;
		ret->used.gpus += u->gpus;
		ret->used.cpu_milli += u->cpu_milli;
		ret->used.memory += u->memory;
		ret->used.pods += u->pods;
		ret->wrong_nodes += k == SIZE_MAX || memcmp(u, &used[k], sizeof(*u)) != 0;
	}
	for (size_t i = 0; i < s->n_releases; i++)
		ret->release_seconds += s->releases[i].at - NOW;
	free(used);
	return 0;
}

static bool check_passed(const struct check *k)
{
	return k->nodes == N_NODES && k->wrong_nodes == 0 && k->releases == k->expected_releases &&
	       k->release_seconds == k->expected_seconds && k->jobs == N_QUEUED;
}

/* One cycle, its parts timed into *t; its snapshot checked into *seen unless it is NULL
 * (outside the times). */
static int cycle(struct cluster *c, struct cycle_times *t, struct outcome *out, struct check *seen)
{
	const struct tj_admitter_source src = {
		.config = c->config,
		.informers = &c->informers,
		.entries = c->entries,
		.ledger = c->ledger,
		.eligibility = c->eligibility,
		.stamp = ++c->cycles,
		.config_epoch = 1, /* one config throughout */
	};
	struct tj_admitter_snapshot s = { 0 };
	struct clocks start, built, decided, checked, cleared;
	int rc;

	*t = (struct cycle_times){ 0 };
	start = clocks_now();
	rc = tj_admitter_snapshot_build(&src, &s, NOW, NOW_MS);
	built = clocks_now();
	if (rc == 0)
		rc = decide(&s, out);
	decided = checked = clocks_now();
	if (rc == 0 && seen) {
		rc = check_snapshot(c, &s, seen);
		checked = clocks_now();
	}
	tj_admitter_snapshot_clear(&s);
	cleared = clocks_now();
	spent(t->ms[SNAPSHOT], start, built);
	spent(t->ms[SNAPSHOT], checked, cleared);
	spent(t->ms[DECIDE], built, decided);
	spent(t->ms[CYCLE], start, decided);
	spent(t->ms[CYCLE], checked, cleared);
	return rc;
}

/* ---- the report ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The q-quantile of v (n, sorted in place), interpolated between ranks. */
static double quantile(double *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t lo = (size_t)h;

	qsort(v, n, sizeof(*v), cmp_double);
	return lo + 1 < n ? v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]) : v[lo];
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 50;
	struct cluster c = { 0 };
	struct cycle_times first, last, *times;
	struct check before, after;
	struct outcome out;
	double *v, q[N_PARTS][N_CLOCKS][3];
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	struct clocks t0, t1;
	int rc, status = 1;

	mixed = argc > 2 && strcmp(argv[2], "mixed") == 0;
	if (argc > 3 || cycles < 1 || (argc > 2 && !mixed)) {
		fprintf(stderr, "usage: %s [cycles] [mixed]\n", argv[0]);
		return 2;
	}
	times = calloc((size_t)cycles, sizeof(*times));
	v = calloc((size_t)cycles, sizeof(*v));
	if (!times || !v)
		goto free_arrays;
	t0 = clocks_now();
	rc = cluster_build(&c);
	t1 = clocks_now();
	if (rc < 0) {
		fprintf(stderr, "building the caches: %s\n", strerror(-rc));
		goto free_cluster;
	}
	printf("shape     %d GH200 nodes of 4 GPUs; %d pods: %d ranks of %d running TrainJobs of "
	       "%d nodes with a walltime, %d small pods of no TrainJob; %d TrainJobs queued for "
	       "%s\n",
	       N_NODES, N_PODS, N_NODES, N_RUNNING, JOB_NODES, N_PODS - N_NODES, N_QUEUED,
	       mixed ? "1 to 8 nodes x 1, 2 or 4 GPUs (one node in 10 has 1 to 3 free)"
	             : "4 nodes x 4 GPUs");
	printf("caches    %zu nodes, %zu pods, %zu TrainJobs, %zu queued; built in %.1f s\n",
	       tj_store_len(tj_reflector_store(c.informers.nodes)),
	       tj_store_len(tj_reflector_store(c.informers.pods)),
	       tj_store_len(tj_reflector_store(c.informers.trainjobs)), tj_store_len(c.entries),
	       (double)(t1.wall - t0.wall) / 1e9);
	rc = cycle(&c, &first, &out, &before);
	for (int i = 0; rc == 0 && i < cycles; i++) {
		rc = change_pods(&c, &seed);
		if (rc == 0)
			rc = cycle(&c, &times[i], &out, NULL);
	}
	/* One more, untimed, whose snapshot is checked as the first's. */
	if (rc == 0)
		rc = cycle(&c, &last, &out, &after);
	if (rc < 0) {
		fprintf(stderr, "cycle: %s\n", strerror(-rc));
		goto free_cluster;
	}
	printf("first     (no ranks yet, every decision told) wall: snapshot %.2f ms, decide "
	       "%.2f ms, cycle %.2f ms; CPU: cycle %.2f ms\n",
	       first.ms[SNAPSHOT][WALL], first.ms[DECIDE][WALL], first.ms[CYCLE][WALL],
	       first.ms[CYCLE][CPU]);
	printf("snapshot  %zu nodes (%zu take new pods); held on them %lld GPUs, %lld cores, "
	       "%lld GiB, %lld pods; %zu releases; %zu jobs\n",
	       after.nodes, after.schedulable, (long long)after.used.gpus,
	       (long long)after.used.cpu_milli / 1000, (long long)(after.used.memory >> 30),
	       (long long)after.used.pods, after.releases, after.jobs);
	printf("check     first and last snapshot (after the changes) against the caches: %s, %s "
	       "(%zu nodes hold other than their pods, %zu releases of %zu)\n",
	       check_passed(&before) ? "right" : "WRONG", check_passed(&after) ? "right" : "WRONG",
	       after.wrong_nodes, after.releases, after.expected_releases);
	printf("decided   %zu admitted; waiting: %zu Resources, %zu Priority, %zu QuotaExceeded, "
	       "%zu NeverFits; head's expected start in %lld s; %zu statuses told in the last "
	       "cycle\n",
	       out.admitted, out.waiting[0], out.waiting[1], out.waiting[2], out.waiting[3],
	       (long long)(out.head_start ? out.head_start - NOW : 0), out.told);
	printf("cycles    %d, each after %d pods ended and were replaced\n", cycles, CHANGES);
	for (int p = 0; p < N_PARTS; p++) {
		for (int k = 0; k < N_CLOCKS; k++) {
			for (int i = 0; i < cycles; i++)
				v[i] = times[i].ms[p][k];
			q[p][k][0] = quantile(v, (size_t)cycles, 0.5);
			q[p][k][1] = quantile(v, (size_t)cycles, 0.9);
			q[p][k][2] = quantile(v, (size_t)cycles, 0.99);
		}
		printf("%-9s wall p50 %7.2f ms  p90 %7.2f ms  p99 %7.2f ms   CPU p50 %7.2f ms  "
		       "p90 %7.2f ms  p99 %7.2f ms\n",
		       part_names[p], q[p][WALL][0], q[p][WALL][1], q[p][WALL][2], q[p][CPU][0],
		       q[p][CPU][1], q[p][CPU][2]);
	}
	printf("{\"nodes\":%d,\"pods\":%d,\"running_jobs\":%d,\"queued\":%d,\"queue\":\"%s\","
	       "\"cycles\":%d,\"changes_per_cycle\":%d,\"admitted\":%zu,\"snapshot_right\":%s",
	       N_NODES, N_PODS, N_RUNNING, N_QUEUED, mixed ? "mixed" : "uniform", cycles, CHANGES,
	       out.admitted, check_passed(&before) && check_passed(&after) ? "true" : "false");
	for (int p = 0; p < N_PARTS; p++)
		printf(",\"%s_ms_p50\":%.3f,\"%s_ms_p90\":%.3f,\"%s_ms_p99\":%.3f,"
		       "\"%s_cpu_ms_p50\":%.3f,\"%s_cpu_ms_p90\":%.3f,\"%s_cpu_ms_p99\":%.3f",
		       part_names[p], q[p][WALL][0], part_names[p], q[p][WALL][1], part_names[p],
		       q[p][WALL][2], part_names[p], q[p][CPU][0], part_names[p], q[p][CPU][1],
		       part_names[p], q[p][CPU][2]);
	printf("}\n");
	status = check_passed(&before) && check_passed(&after) ? 0 : 1;
free_cluster:
	cluster_free(&c);
free_arrays:
	free(times);
	free(v);
	return status;
}
