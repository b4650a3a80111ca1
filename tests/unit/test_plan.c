#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/dependency.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/policy/suspect.h"

/* The time of every case: 2026-11-29T12:00:00Z. */
#define NOW         1795953600
#define NOW_S       "2026-11-29T12:00:00Z"

#define MAX_PODS    8
#define MAX_ACTIONS 16
#define MAX_NODES   8

/* A node of the Node cache. A case with nodes has a cache, and a pod's node missing from
 * it has been deleted; a case without has no cache (every node counts as healthy). */
struct node_row {
	const char *name;
	enum tj_condition_status ready;
	int64_t age;           /* seconds since the Ready or the listed condition changed */
	const char *condition; /* a condition True since age (GPU, fault cordon), or NULL */
	const char *taint;     /* a taint key without timeAdded, or NULL */
	bool cordoned;
};

#define NODE_OK(n)                                                                                 \
	{                                                                                          \
		.name = n, .ready = TJ_COND_TRUE, .age = 3600                                      \
	}

/* A pod of the job "vit" (uid uid-vit) as the Pod informer projects it. */
struct pod_row {
	int rank, attempt;
	enum tj_pod_phase phase;
	bool ready;
	const char *node;
	bool deleting;
	int exit_code; /* 0 = not terminated; else the code */
	const char *exit_reason;
	const char *disruption;
	const char *unschedulable; /* the scheduler's message */
	const char *owner;         /* NULL: uid-vit */
	const char *pod_reason;    /* status.reason: Evicted, Preempting, ... */
	int64_t age;               /* seconds since its creation */
	const char *pinned;        /* the node admission pinned it to */
	int64_t deadline;          /* its annotation trainjob.flame.dev/deadline; 0: none */
	bool kept;                 /* labelled trainjob.flame.dev/failed-attempt */
	const char *message;       /* the terminated container's message */
	int64_t started;           /* seconds since status.startTime; 0: unset */
	int32_t held;              /* seconds from status.startTime to its container's end */
	bool gated;                /* held back by the gang's scheduling gate */
};

struct plan_case {
	const char *name;
	const char *annotations; /* JSON object or NULL */
	const char *spec;
	const char *status;       /* JSON object or NULL */
	const char *runtime;      /* name of a standard runtime, or NULL: not found */
	const char *runtime_json; /* a runtime of its own, instead of the standard one */
	struct pod_row pods[MAX_PODS];
	size_t n_pods;
	struct node_row nodes[MAX_NODES];
	size_t n_nodes;                         /* 0: no Node cache */
	const struct tj_failure_policy *policy; /* NULL: the defaults */
	/* "<stage> <Kind> <name>" for pods, services and the status; events as
	 * "<stage> Event <Normal|Warning> <Reason>: <message>". */
	const char *want[MAX_ACTIONS];
	/* "<state>|<reason>|<message>|restarts=<n>|<conditions>|jobs=a/r/s/f/susp" of the
	 * status the plan arrives at; conditions as Type=Reason, comma-separated. */
	const char *want_status;
	int64_t want_requeue;
	const char *want_restart_reason; /* NULL: "" */
	int want_infra;                  /* status.infrastructureRestarts the plan arrives at */
	/* The built-in admission's word on the job; NULL: no admission. */
	const struct tj_admission_ticket *ticket;
	/* "pods=<n>/<nodes> restart=<0|1> class=<c> walltime=<s>|pos=<p>|start=<t>": what the
	 * plan wants admitted, and the status's queue fields; NULL: "-|pos=0|start=0". */
	const char *want_queue;
	/* The config's walltime section; NULL: none. */
	const struct tj_walltime_policy *walltime;
	int64_t want_deadline; /* the status.deadline the plan arrives at */
	/* A namespace the config's commandPolicy exempts, or NULL. */
	const char *exempt_namespace;
	const char *labels; /* JSON object or NULL */
	/* Kueue's Workload of the job; NULL: none. */
	const struct tj_workload *workload;
	/* The API server serves the Workload API (plan input native_gang). */
	bool native_gang;
	/* The namespace's other TrainJobs, for a dependency; NULL: none known. */
	const struct tj_dependency_lookup *jobs;
	/* The status's preemption the plan arrives at: its stop time, and the count. */
	int64_t want_preempt_at;
	int want_preemptions;
	/* Seconds before NOW the controller last saw the job's progress change (plan input
	 * progress_seen); 0: never. And whether the plan found the job stalled. */
	int64_t progress_seen;
	bool want_stalled;
};

/* A TrainJob of the namespace, as a dependency reads it. */
struct other_job {
	const char *name;
	struct tj_dependency_job job;
};

static bool find_other(void *userdata, const char *name, struct tj_dependency_job *ret)
{
	for (const struct other_job *o = userdata; o->name; o++)
		if (strcmp(o->name, name) == 0) {
			*ret = o->job;
			return true;
		}
	return false;
}

static const struct other_job prep_running[] = {
	{ "prep", { TJ_STATE_RUNNING, NOW - 600, NOW - 300, 0 } }, { NULL }
};
static const struct other_job prep_complete[] = {
	{ "prep", { TJ_STATE_COMPLETE, NOW - 600, NOW - 300, NOW - 60 } }, { NULL }
};
static const struct other_job prep_failed[] = {
	{ "prep", { TJ_STATE_FAILED, NOW - 600, NOW - 300, NOW - 60 } }, { NULL }
};
static const struct tj_dependency_lookup jobs_prep_running = { find_other, NULL,
	                                                       (void *)prep_running };
static const struct tj_dependency_lookup jobs_prep_complete = { find_other, NULL,
	                                                        (void *)prep_complete };
static const struct tj_dependency_lookup jobs_prep_failed = { find_other, NULL,
	                                                      (void *)prep_failed };
static const struct tj_dependency_lookup jobs_none = { find_other, NULL, (void *)&prep_running[1] };

#define KUEUE_QUEUE "{'kueue.x-k8s.io/queue-name':'team'}"

static const struct tj_workload kueue_pending = {
	.namespace = "team-a",
	.name = "trainjob-vit-1a2b3",
	.owner = "vit",
	.owner_uid = "uid-vit",
	.waiting = true,
	.reason = "Pending",
	.message = "couldn't assign flavors to pod set node: insufficient unused quota for "
	           "nvidia.com/gpu in flavor gh200, 8 more needed",
};
static const struct tj_workload kueue_reserved = { .namespace = "team-a",
	                                           .name = "trainjob-vit-1a2b3",
	                                           .owner = "vit",
	                                           .owner_uid = "uid-vit",
	                                           .reserved = true };
static const struct tj_workload kueue_bare = { .namespace = "team-a",
	                                       .name = "trainjob-vit-1a2b3",
	                                       .owner = "vit",
	                                       .owner_uid = "uid-vit",
	                                       .waiting = true };

/* A job Kueue holds, its status in Kueue's words, observed at generation gen. */
#define KUEUE_QUEUED_STATUS(gen)                                                                   \
	"{'state':'Queued','reason':'Pending','message':'Kueue: waiting for quota',"               \
	"'restartCount':0,'observedGeneration':" gen ",'startTime':null,'jobsStatus':[{'name':"    \
	"'node','active':0,'ready':0,'succeeded':0,'failed':0,'suspended':1}],"                    \
	"'conditions':[{'type':'Suspended','status':'True','reason':'Suspended',"                  \
	"'message':'TrainJob is suspended','lastTransitionTime':'2026-11-29T11:00:00Z'}]}"

#define SPEC4                                                                                      \
	"{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':4,'resourcesPerNode':{'"       \
	"limits':{'nvidia.com/gpu':4}}}}"
#define RUNNING(r, node)                                                                           \
	{                                                                                          \
		r, 0, TJ_POD_RUNNING, true, node, false, 0, NULL, NULL, NULL, NULL                 \
	}
#define RUNNING_A(r, a, node)                                                                      \
	{                                                                                          \
		r, a, TJ_POD_RUNNING, true, node, false, 0, NULL, NULL, NULL, NULL                 \
	}
#define PENDING(r)                                                                                 \
	{                                                                                          \
		r, 0, TJ_POD_PENDING, false, NULL, false, 0, NULL, NULL, NULL, NULL                \
	}
#define SUCCEEDED(r, node)                                                                         \
	{                                                                                          \
		r, 0, TJ_POD_SUCCEEDED, false, node, false, 0, "Completed", NULL, NULL, NULL       \
	}
#define STARTED "'startTime':'2026-11-29T11:00:00Z'"
#define JOBS(a, r, s, f)                                                                           \
	"'jobsStatus':[{'name':'node','active':" #a ",'ready':" #r ",'succeeded':" #s              \
	",'failed':" #f ",'suspended':0}]"
/* A job that failed at its deadline, with a active pods. */
#define FAILED_STATUS(a)                                                                           \
	"{'state':'Failed','reason':'DeadlineExceeded','message':'m','restartCount':0,'"           \
	"observedGeneration':2," STARTED ",'completionTime':'2026-11-29T11:30:00Z'," JOBS(         \
	        a, 0, 0, 0) ",'conditions':[{'type':'Failed','status':'True','reason':'"           \
	                    "DeadlineExceeded','message':'m','lastTransitionTime':'2026-"          \
	                    "11-29T11:30:00Z'}]}"
#define RUNNING_STATUS                                                                             \
	"{'state':'Running','reason':'AllPodsRunning','message':'4 of 4 pods "                     \
	"running','restartCount':0,'observedGeneration':2," STARTED                                \
	"," JOBS(1, 1, 0, 0) ",'conditions':[]}"

/* A runtime torch-x with the given annotations, no GPU class and one `node` job. */
#define RUNTIME_WITH(annotations)                                                                  \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'torch-x','annotations':" annotations \
	"},'spec':{'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{"      \
	"'template':{'spec':{'containers':[{'name':'node','image':'x'}]}}}}}]}}}}"

/* A runtime torch-x as RUNTIME_WITH, whose spec also holds more (ending in a comma) and
 * whose JobSet template also holds jobset (starting with a comma). */
#define RUNTIME_MORE(annotations, more, jobset)                                                    \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'torch-x','annotations':" annotations \
	"},'spec':{" more "'template':{'spec':{'replicatedJobs':[{'name':'node','template':{"      \
	"'spec':{'template':{'spec':{'containers':[{'name':'node','image':'x'}]}}}}}]" jobset      \
	"}}}}"

/* The command policy's message for SPEC's `torchrun train.py && sleep infinity`. */
#define NEVER_EXITS                                                                                \
	"container node of step node: 'sleep infinity' never exits; a job must exit by itself "    \
	"when its work is done, so it is refused before any pod starts"

/* A ClusterTrainingRuntime keepalive with the given labels whose node container runs
 * tail -f /dev/null. */
#define KEEPALIVE_RUNTIME(labels)                                                                  \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'keepalive','labels':" labels         \
	"},'spec':{'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'spec':{"      \
	"'template':{'spec':{'containers':[{'name':'node','image':'x','command':['tail','-f',"     \
	"'/dev/null']}]}}}}}]}}}}"

/* A job of 2 nodes with activeDeadlineSeconds 3600, started at STARTED, so that its deadline
 * is NOW, with both pods running in its status; and the status that fails it. */
#define DEADLINE_3600_RUNNING2                                                                     \
	.spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':3600,'trainer':{'"   \
	        "numNodes':2}}",                                                                   \
	.runtime = "torch-gh200",                                                                  \
	.status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "           \
	          "running','restartCount':0,'observedGeneration':2," STARTED                      \
	          "," JOBS(1, 1, 0, 0) ",'conditions':[]}"
/* A pod of such a job, started 3590 s before NOW, that succeeded `held` s after the job's
 * start (its container's finishedAt). */
#define SUCCEEDED_AFTER(r, on, held_s)                                                             \
	{                                                                                          \
		.rank = r, .phase = TJ_POD_SUCCEEDED, .node = on, .started = 3590, .held = held_s  \
	}
#define DEADLINE_3600_EXCEEDED                                                                     \
	"Failed|DeadlineExceeded|the job ran longer than spec.activeDeadlineSeconds "              \
	"(3600 s)|restarts=0|Failed=DeadlineExceeded"

static const struct plan_case cases[] = {
	{ .name = "a new job creates the Service and one pod per rank",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreatePod vit-node-0-1-a0",
	            "0 CreatePod vit-node-0-2-a0", "0 CreatePod vit-node-0-3-a0",
	            "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 4 pods from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a created job whose pods exist does not create them again",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 0, 0, 0) ",'conditions':[]}",
	  .pods = { PENDING(0), PENDING(1), PENDING(2), PENDING(3) },
	  .n_pods = 4,
	  .want = { NULL },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "pods that exist before any status recorded the start: the Service is posted "
	          "again, and the start recorded",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .pods = { PENDING(0), PENDING(1), PENDING(2), PENDING(3) },
	  .n_pods = 4,
	  .want = { "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 4 pods from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "an unschedulable pod surfaces the scheduler's message",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods "
	            "running'," STARTED "}",
	  .pods = { PENDING(0),
	            { 1, 0, TJ_POD_PENDING, false, NULL, false, 0, NULL, NULL,
	              "0/8 nodes are available: 8 Insufficient nvidia.com/gpu.", NULL, NULL },
	            RUNNING(2, "gh200-3"),
	            PENDING(3) },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "0 Event Warning Unschedulable: rank 1: 0/8 nodes are "
	                                 "available: 8 Insufficient nvidia.com/gpu." },
	  .want_status = "Pending|Unschedulable|rank 1: 0/8 nodes are available: 8 Insufficient "
	                 "nvidia.com/gpu.|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "every pod running: Running, with no condition",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'3 of 4 pods "
	            "running'," STARTED "}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "0 Event Normal Running: 4 of 4 pods running" },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "nothing changed: no action at all",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "some ranks done, the others running: still Running",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { SUCCEEDED(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Running|PodsCompleting|3 of 4 pods running, 1 "
	                 "succeeded|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "every pod succeeded: Complete",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { SUCCEEDED(0, "gh200-1"), SUCCEEDED(1, "gh200-2"), SUCCEEDED(2, "gh200-3"),
	            SUCCEEDED(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "0 Event Normal Completed: all 4 pods succeeded" },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0" },
	{ .name = "a complete job is final and keeps its pods",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Complete','reason':'AllPodsSucceeded','message':'all 4 pods "
	            "succeeded','restartCount':0,'observedGeneration':2," STARTED
	            ",'completionTime':'2026-11-29T11:30:00Z'," JOBS(
	                    0, 0, 1, 0) ",'conditions':[{'type':'Complete','status':'True','reason'"
	                                ":'AllPodsSucceeded','message':'all 4 pods "
	                                "succeeded','lastTransitionTime':'2026-11-29T11:30:00Z'}]}",
	  .pods = { SUCCEEDED(0, "gh200-1"), SUCCEEDED(1, "gh200-2"), SUCCEEDED(2, "gh200-3"),
	            SUCCEEDED(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { NULL },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0" },
	{ .name = "a failed worker restarts the gang: status first, then every pod replaced",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 1, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 PatchPod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0",
	            "1 DeletePod vit-node-0-3-a0",
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 1, "
	            "Error); replacing all workers in 10 s (restart 1 of 3)" },
	  .want_status =
	          "Restarting|WorkerFailed|rank 1 on node gh200-2 failed (exit code 1, Error); "
	          "replacing all workers in 10 s (restart 1 of 3)|restarts=1||jobs=0/0/0/1/0",
	  .want_requeue = 10,
	  .want_restart_reason = "WorkerFailed" },
	{ .name = "after a gang restart, a rank is recreated only when its old pod is gone, away "
	          "from the failed node",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Restarting','reason':'WorkerFailed','message':'rank 1 on node "
	            "gh200-2 failed','restartCount':1,'observedGeneration':2," STARTED
	            ",'lastFailure':{'rank':1,'node':'gh200-2','pod':'vit-node-0-1-a0','reason':'"
	            "Error','exitCode':1,'time':'2026-11-29T11:59:00Z'}," JOBS(
	                    0, 0, 0, 0) ",'conditions':[]}",
	  .pods = { { 0, 0, TJ_POD_RUNNING, true, "gh200-1", true, 0, NULL, NULL, NULL, NULL,
	              NULL },
	            { 2, 0, TJ_POD_FAILED, false, "gh200-3", true, 143, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING_A(3, 1, "gh200-4") },
	  .n_pods = 3,
	  .want = { "0 CreatePod vit-node-0-1-a1", "0 CreateService vit", "1 PatchStatus vit" },
	  .want_status = "Restarting|WorkerFailed|rank 1 on node gh200-2 "
	                 "failed|restarts=1||jobs=1/0/0/0/0" },
	{ .name = "policy Worker replaces only the failed rank",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            { 2, 0, TJ_POD_FAILED, false, "gh200-3", false, 1, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 PatchPod vit-node-0-2-a0",
	            "1 Event Warning Restarting: rank 2 on node gh200-3 failed (exit code 1, "
	            "Error); replacing that worker in 10 s (restart 1 of 3)" },
	  .want_status =
	          "Restarting|WorkerFailed|rank 2 on node gh200-3 failed (exit code 1, Error); "
	          "replacing that worker in 10 s (restart 1 of 3)|restarts=1||jobs=0/0/0/1/0",
	  .want_requeue = 10,
	  .want_restart_reason = "WorkerFailed" },
	{ .name = "policy Worker does not count a recorded failure twice",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Restarting','reason':'WorkerFailed','message':'m','restartCount':1,'"
	            "observedGeneration':2," STARTED
	            ",'lastFailure':{'rank':2,'node':'gh200-3','pod':'vit-node-0-2-a0','reason':'"
	            "Error','exitCode':1,'time':'2026-11-29T11:59:00Z'}," JOBS(
	                    0, 0, 0, 1) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            { 2, 0, TJ_POD_FAILED, false, "gh200-3", false, 1, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchPod vit-node-0-2-a0" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/1/0" },
	{ .name = "policy Worker recreates a replaced rank at the current restart count",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Restarting','reason':'WorkerFailed','message':'m','restartCount':2,'"
	            "observedGeneration':2," STARTED
	            ",'lastFailure':{'rank':2,'node':'gh200-3','pod':'vit-node-0-2-a1','reason':'"
	            "Error','exitCode':1,'time':'2026-11-29T11:59:00Z'}," JOBS(
	                    1, 0, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING_A(1, 1, "gh200-2"), RUNNING(3, "gh200-4") },
	  .n_pods = 3,
	  .want = { "0 CreatePod vit-node-0-2-a2", "0 CreateService vit" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=2||jobs=1/0/0/0/0" },
	{ .name = "every pod running again after a restart: Running",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Restarting','reason':'WorkerFailed','message':'m','restartCount':1,'"
	            "observedGeneration':2," STARTED "," JOBS(1, 0, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING_A(0, 1, "gh200-1"), RUNNING_A(1, 1, "gh200-5"),
	            RUNNING_A(2, 1, "gh200-3"), RUNNING_A(3, 1, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "0 Event Normal Running: 4 of 4 pods running" },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=1||jobs=1/1/0/0/0" },
	{ .name = "the runtime's restart settings apply when the TrainJob has none",
	  .spec = "{'runtimeRef':{'name':'torch-x'},'trainer':{'numNodes':2}}",
	  .runtime_json =
	          RUNTIME_WITH("{'trainjob.flame.dev/restart-policy':'Worker','trainjob.flame.dev/"
	                       "max-restarts':'1'}"),
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':1,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 1, TJ_POD_FAILED, false, "gh200-2", false, 2, "Error", NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 Event Warning Failed: ReachedMaxRestarts: rank 1 on node gh200-2 failed "
	            "(exit code 2, Error); the restart budget of 1 is spent" },
	  .want_status = "Failed|ReachedMaxRestarts|rank 1 on node gh200-2 failed (exit code 2, "
	                 "Error); the restart budget of 1 is "
	                 "spent|restarts=1|Failed=ReachedMaxRestarts|jobs=0/0/0/1/0" },
	{ .name = "the TrainJob's restart settings win over the runtime's",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Gang','trainjob.flame.dev/"
	                 "max-restarts':'5'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'},'trainer':{'numNodes':2}}",
	  .runtime_json =
	          RUNTIME_WITH("{'trainjob.flame.dev/restart-policy':'Worker','trainjob.flame.dev/"
	                       "max-restarts':'1'}"),
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':1,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING_A(0, 1, "gh200-1"),
	            { 1, 1, TJ_POD_FAILED, false, "gh200-2", false, 2, "Error", NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a1",
	            "1 PatchPod vit-node-0-1-a1",
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 2, "
	            "Error); replacing all workers in 20 s (restart 2 of 5)" },
	  .want_status =
	          "Restarting|WorkerFailed|rank 1 on node gh200-2 failed (exit code 2, Error); "
	          "replacing all workers in 20 s (restart 2 of 5)|restarts=2||jobs=0/0/0/1/0",
	  .want_requeue = 20,
	  .want_restart_reason = "WorkerFailed" },
	{ .name = "a runtime's JobSet failurePolicy.maxRestarts 0: the first failure is final",
	  .spec = "{'runtimeRef':{'name':'torch-x'},'trainer':{'numNodes':2}}",
	  .runtime_json = RUNTIME_MORE("{}", "", ",'failurePolicy':{'maxRestarts':0}"),
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(2, 2, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 2, "Error", NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 Event Warning Failed: ReachedMaxRestarts: rank 1 on node gh200-2 failed "
	            "(exit code 2, Error); the restart budget of 0 is spent" },
	  .want_status = "Failed|ReachedMaxRestarts|rank 1 on node gh200-2 failed (exit code 2, "
	                 "Error); the restart budget of 0 is "
	                 "spent|restarts=0|Failed=ReachedMaxRestarts|jobs=0/0/0/1/0" },
	{ .name = "the runtime's max-restarts annotation wins over its JobSet failurePolicy",
	  .spec = "{'runtimeRef':{'name':'torch-x'},'trainer':{'numNodes':2}}",
	  .runtime_json = RUNTIME_MORE("{'trainjob.flame.dev/max-restarts':'2'}", "",
	                               ",'failurePolicy':{'maxRestarts':0}"),
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(2, 2, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 2, "Error", NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 PatchPod vit-node-0-1-a0",
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 2, "
	            "Error); replacing all workers in 10 s (restart 1 of 2)" },
	  .want_status =
	          "Restarting|WorkerFailed|rank 1 on node gh200-2 failed (exit code 2, Error); "
	          "replacing all workers in 10 s (restart 1 of 2)|restarts=1||jobs=0/0/0/1/0",
	  .want_requeue = 10,
	  .want_restart_reason = "WorkerFailed" },
	{ .name = "a runtime field nothing implements fails the job before any pod exists",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_MORE("{}", "'podGroupPolicy':{'volcano':{}},", ""),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: UnsupportedRuntime: ClusterTrainingRuntime torch-x: "
	            "spec.podGroupPolicy.volcano is not supported by this controller: the "
	            "controller's own admission creates a job's pods only when all of them fit, "
	            "without another scheduler's PodGroups; remove it from the runtime "
	            "(crds/README.md lists what is supported)" },
	  .want_status = "Failed|UnsupportedRuntime|ClusterTrainingRuntime torch-x: "
	                 "spec.podGroupPolicy.volcano is not supported by this controller: the "
	                 "controller's own admission creates a job's pods only when all of them "
	                 "fit, without another scheduler's PodGroups; remove it from the runtime "
	                 "(crds/README.md lists what is supported)|restarts=0|Failed="
	                 "UnsupportedRuntime|jobs=0/0/0/0/0" },
	{ .name = "an override field the renderer does not apply fails the job before any pod",
	  .spec = "{'runtimeRef':{'name':'torch-x'},'podTemplateOverrides':[{'targetJobs':[{'name':"
	          "'node'}],'spec':{'securityContext':{'runAsUser':1000}}}]}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidSpec: spec.podTemplateOverrides[0].spec."
	            "securityContext is not supported by this controller: the field is not "
	            "applied to the pods; remove it (crds/README.md lists what is supported)" },
	  .want_status = "Failed|InvalidSpec|spec.podTemplateOverrides[0].spec.securityContext is "
	                 "not supported by this controller: the field is not applied to the pods; "
	                 "remove it (crds/README.md lists what is "
	                 "supported)|restarts=0|Failed=InvalidSpec|jobs=0/0/0/0/0" },
	{ .name = "a held job waits Queued, without a pod, whatever its dependency says",
	  .annotations = "{'trainjob.flame.dev/hold':'true','trainjob.flame.dev/dependency':"
	                 "'afterok:prep'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .jobs = &jobs_prep_complete,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal JobHeldUser: held (trainjob.flame.dev/hold); kubectl scontrol "
	            "release vit lets it queue" },
	  .want_status = "Queued|JobHeldUser|held (trainjob.flame.dev/hold); kubectl scontrol "
	                 "release vit lets it queue|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a released job (hold false) starts",
	  .annotations = "{'trainjob.flame.dev/hold':'false'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .jobs = &jobs_prep_complete,
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime torch-x" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a hold that is not true or false fails the job",
	  .annotations = "{'trainjob.flame.dev/hold':'yes'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidSpec: "
	            "metadata.annotations[trainjob.flame.dev/hold]: 'yes' is not true or false" },
	  .want_status = "Failed|InvalidSpec|metadata.annotations[trainjob.flame.dev/hold]: 'yes' "
	                 "is not true or false|restarts=0|Failed=InvalidSpec|jobs=0/0/0/0/0" },
	{ .name = "a dependency not met yet holds the job Queued, without a pod",
	  .annotations = "{'trainjob.flame.dev/dependency':'afterok:prep'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .jobs = &jobs_prep_running,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal Dependency: waits for prep to complete (afterok:prep)" },
	  .want_status = "Queued|Dependency|waits for prep to complete "
	                 "(afterok:prep)|restarts=0||jobs=0/0/0/0/0",
	  .want_requeue = 60 },
	{ .name = "a dependency met lets the job start",
	  .annotations = "{'trainjob.flame.dev/dependency':'afterok:prep'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0",
	  .jobs = &jobs_prep_complete,
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-x" } },
	{ .name = "a dependency that can never be met fails the job",
	  .annotations = "{'trainjob.flame.dev/dependency':'afterok:prep'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .jobs = &jobs_prep_failed,
	  .want = { "0 PatchStatus vit", "0 Event Warning Failed: DependencyNeverSatisfied: "
	                                 "afterok:prep can never be met: prep failed" },
	  .want_status = "Failed|DependencyNeverSatisfied|afterok:prep can never be met: prep "
	                 "failed|restarts=0|Failed=DependencyNeverSatisfied|jobs=0/0/0/0/0" },
	{ .name = "a dependency on a job the namespace does not have fails after a minute",
	  .annotations = "{'trainjob.flame.dev/dependency':'afterany:prep'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .jobs = &jobs_none,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: DependencyNeverSatisfied: afterany:prep can never be "
	            "met: the namespace has no TrainJob prep" },
	  .want_status = "Failed|DependencyNeverSatisfied|afterany:prep can never be met: the "
	                 "namespace has no TrainJob "
	                 "prep|restarts=0|Failed=DependencyNeverSatisfied|jobs=0/0/0/0/0" },
	{ .name = "a malformed dependency fails the job",
	  .annotations = "{'trainjob.flame.dev/dependency':'afterok'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .jobs = &jobs_prep_running,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidSpec: "
	            "metadata.annotations[trainjob.flame.dev/dependency]: character 8: afterok "
	            "needs a TrainJob name (afterok:NAME)" },
	  .want_status = "Failed|InvalidSpec|metadata.annotations[trainjob.flame.dev/dependency]: "
	                 "character 8: afterok needs a TrainJob name "
	                 "(afterok:NAME)|restarts=0|Failed=InvalidSpec|jobs=0/0/0/0/0" },
	{ .name = "a QOS tier the namespace may not use fails the job before any pod",
	  .annotations = "{'trainjob.flame.dev/qos':'high'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: PolicyViolation: metadata.annotations[trainjob.flame."
	            "dev/qos]: QOS \"high\" is not allowed there; namespace team-a may use: "
	            "normal, "
	            "low" },
	  .want_status = "Failed|PolicyViolation|metadata.annotations[trainjob.flame.dev/qos]: QOS "
	                 "\"high\" is not allowed there; namespace team-a may use: normal, "
	                 "low|restarts=0|Failed=PolicyViolation|jobs=0/0/0/0/0" },
	{ .name = "a runtime's activeDeadlineSeconds is the walltime of a job that sets none",
	  .spec = "{'runtimeRef':{'name':'torch-x'},'trainer':{'numNodes':1}}",
	  .runtime_json = RUNTIME_MORE("{}", "'activeDeadlineSeconds':600,", ""),
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-x" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0",
	  .want_requeue = 300, /* the deadline's warning */
	  .want_deadline = NOW + 600 },
	{ .name = "a runtime with a bad restart setting fails the job",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{'trainjob.flame.dev/max-restarts':'-1'}"),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidRuntime: ClusterTrainingRuntime torch-x: "
	            "trainjob.flame.dev/max-restarts '-1' is not an integer between 0 and 1000" },
	  .want_status = "Failed|InvalidRuntime|ClusterTrainingRuntime torch-x: "
	                 "trainjob.flame.dev/max-restarts '-1' is not an integer between 0 and "
	                 "1000|restarts=0|Failed=InvalidRuntime|jobs=0/0/0/0/0" },
	{ .name = "a spent budget fails the job, naming rank, node and exit code",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'4 of 4 pods "
	            "running','restartCount':3,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { { 0, 3, TJ_POD_FAILED, false, "gh200-1", false, 137, "OOMKilled", NULL, NULL,
	              NULL, NULL },
	            RUNNING_A(1, 3, "gh200-2"),
	            RUNNING_A(2, 3, "gh200-3"),
	            { 3, 3, TJ_POD_SUCCEEDED, false, "gh200-4", false, 0, NULL, NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-1-a3",
	            "1 DeletePod vit-node-0-2-a3",
	            "1 Event Warning Failed: ReachedMaxRestarts: rank 0 on node gh200-1 failed "
	            "(exit code 137, OOMKilled); the restart budget of 3 is spent" },
	  .want_status = "Failed|ReachedMaxRestarts|rank 0 on node gh200-1 failed (exit code 137, "
	                 "OOMKilled); the restart budget of 3 is "
	                 "spent|restarts=3|Failed=ReachedMaxRestarts|jobs=0/0/0/1/0" },
	{ .name = "max-restarts 0 on the TrainJob fails at the first failure of its own",
	  .annotations = "{'trainjob.flame.dev/max-restarts':'0'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            RUNNING(2, "gh200-3"),
	            { 3, 0, TJ_POD_FAILED, false, "gh200-4", false, 137, "OOMKilled", NULL, NULL,
	              NULL, NULL } },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0",
	            "1 Event Warning Failed: ReachedMaxRestarts: rank 3 on node gh200-4 failed "
	            "(exit code 137, OOMKilled); the restart budget of 0 is spent" },
	  .want_status = "Failed|ReachedMaxRestarts|rank 3 on node gh200-4 failed (exit code 137, "
	                 "OOMKilled); the restart budget of 0 is "
	                 "spent|restarts=0|Failed=ReachedMaxRestarts|jobs=0/0/0/1/0" },
	{ .name = "max-restarts 0 on the TrainJob: an eviction is the infrastructure's, and "
	          "restarts",
	  .annotations = "{'trainjob.flame.dev/max-restarts':'0'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            RUNNING(2, "gh200-3"),
	            { 3, 0, TJ_POD_RUNNING, false, "gh200-4", true, 0, NULL,
	              "EvictionByEvictionAPI", NULL, NULL, NULL } },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0",
	            "1 Event Warning Restarting: rank 3 on node gh200-4 failed "
	            "(EvictionByEvictionAPI); replacing all workers in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|Evicted|rank 3 on node gh200-4 failed "
	                 "(EvictionByEvictionAPI); replacing all workers in 10 s (infrastructure "
	                 "restart 1 of 10)|restarts=1||jobs=1/0/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "Evicted",
	  .want_infra = 1 },
	{ .name = "a failed job is final; pods still running are deleted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = FAILED_STATUS(1),
	  .pods = { RUNNING(0, "gh200-1") },
	  .n_pods = 1,
	  .want = { "0 DeletePod vit-node-0-0-a0" },
	  .want_status =
	          "Failed|DeadlineExceeded|m|restarts=0|Failed=DeadlineExceeded|jobs=1/0/0/0/0" },
	{ .name = "Failed is terminal (Kubeflow v2.3): a failed job that is suspended is not "
	          "Suspended",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':4}}",
	  .runtime = "torch-gh200",
	  .status = FAILED_STATUS(0),
	  .want_status =
	          "Failed|DeadlineExceeded|m|restarts=0|Failed=DeadlineExceeded|jobs=0/0/0/0/0" },
	{ .name = "Failed is terminal: a failed job with no pod left creates none, whatever its "
	          "spec says",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = FAILED_STATUS(0),
	  .want_status =
	          "Failed|DeadlineExceeded|m|restarts=0|Failed=DeadlineExceeded|jobs=0/0/0/0/0" },
	{ .name = "suspend deletes the live pods and sets Suspended",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':4}}",
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            SUCCEEDED(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "0 DeletePod vit-node-0-2-a0", "1 PatchStatus vit",
	            "1 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Suspended|Suspended|TrainJob is "
	                 "suspended|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "a job Kueue holds for quota is Queued with Kueue's reason and message",
	  .labels = KUEUE_QUEUE,
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .workload = &kueue_pending,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Queued|Pending|Kueue: couldn't assign flavors to pod set node: "
	                 "insufficient unused quota for nvidia.com/gpu in flavor gh200, 8 more "
	                 "needed|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "a preempted job whose pods still run: deleted, Suspended while Kueue still "
	          "reserves quota",
	  .labels = KUEUE_QUEUE,
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .workload = &kueue_reserved,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "1 PatchStatus vit",
	            "1 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Suspended|Suspended|TrainJob is "
	                 "suspended|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "a job Kueue admitted keeps Kueue's last words until Kueue resumes it: no "
	          "write under Kueue's update of spec.suspend",
	  .labels = KUEUE_QUEUE,
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = KUEUE_QUEUED_STATUS("2"),
	  .workload = &kueue_reserved,
	  .want = { NULL },
	  .want_status = "Queued|Pending|Kueue: waiting for "
	                 "quota|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "a job Kueue admitted and changed (its pod sets' placement, a new generation) "
	          "keeps the generation its status observed until Kueue resumes it",
	  .labels = KUEUE_QUEUE,
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = KUEUE_QUEUED_STATUS("1"),
	  .workload = &kueue_reserved,
	  .want = { NULL },
	  .want_status = "Queued|Pending|Kueue: waiting for "
	                 "quota|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "a job Kueue admitted before its status said anything is Suspended",
	  .labels = KUEUE_QUEUE,
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .workload = &kueue_reserved,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Suspended|Suspended|TrainJob is "
	                 "suspended|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "Kueue's wait without a reason or message yet",
	  .labels = KUEUE_QUEUE,
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .workload = &kueue_bare,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Queued|Pending|Kueue: waiting for "
	                 "quota|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "a Workload of a job without Kueue's queue label is not Kueue's word",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .workload = &kueue_pending,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Suspended|Suspended|TrainJob is "
	                 "suspended|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "a job created suspended creates nothing",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Suspended|Suspended|TrainJob is "
	                 "suspended|restarts=0|Suspended=Suspended|jobs=0/0/0/0/1" },
	{ .name = "resume removes the condition, restarts the clock and recreates the pods",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status =
	          "{'state':'Suspended','reason':'Suspended','message':'TrainJob is "
	          "suspended','restartCount':0,'observedGeneration':1," STARTED
	          ",'conditions':[{'type':'Suspended','status':'True','reason':'Suspended','"
	          "message':'TrainJob is suspended','lastTransitionTime':'2026-11-29T11:30:00Z'}]}",
	  .pods = { { 0, 0, TJ_POD_FAILED, false, "gh200-1", true, 143, "Error", NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 1,
	  .want = { "0 CreatePod vit-node-0-1-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Resumed: TrainJob is resumed",
	            "1 Event Normal Created: creating 2 pods from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 2 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "Kubeflow's Suspended=False of a resume is no suspension: no Resumed, no second "
	          "Created, the clock kept",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'4 of 4 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[{'type':'Suspended','status':'False','"
	                                 "reason':'Resumed','message':'TrainJob is resumed','"
	                                 "lastTransitionTime':'2026-11-29T11:30:00Z'}]}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "Suspended=False on a job not started yet: its pods with one Created event",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'conditions':[{'type':'Suspended','status':'False','reason':'Resumed','"
	            "message':'TrainJob is resumed','lastTransitionTime':'2026-11-29T11:30:00Z'}]}",
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreatePod vit-node-0-1-a0",
	            "0 CreatePod vit-node-0-2-a0", "0 CreatePod vit-node-0-3-a0",
	            "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 4 pods from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a Failed=False condition is not final: the job runs",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':1}}",
	  .runtime = "torch-gh200",
	  .status = "{'conditions':[{'type':'Failed','status':'False','reason':'x','message':'m','"
	            "lastTransitionTime':'2026-11-29T11:30:00Z'}]}",
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status =
	          "Pending|PodsStarting|0 of 1 pods running|restarts=0|Failed=x|jobs=0/0/0/0/0" },
	{ .name = "a create refused for good (state Failed, FailedCreate) fails the job",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Failed','reason':'FailedCreate','message':'Pod is invalid: x'}",
	  .pods = { RUNNING(0, "gh200-1") },
	  .n_pods = 1,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 Event Warning Failed: FailedCreate: Pod is invalid: x" },
	  .want_status = "Failed|FailedCreate|Pod is invalid: "
	                 "x|restarts=0|Failed=FailedCreate|jobs=1/0/0/0/0" },
	{ .name = "a create refused for now (state Pending, FailedCreate) is tried again",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':1}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'FailedCreate','message':'exceeded quota: gpu'}",
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0",
	  .want_requeue = 30 },
	{ .name = "managedBy another controller: no action",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'managedBy':'kueue.x-k8s.io/multikueue'}",
	  .runtime = "torch-gh200",
	  .want = { NULL },
	  .want_status = "|||restarts=0||jobs=-" },
	{ .name = "managedBy Kubeflow's default value is ours",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'managedBy':'trainer.kubeflow.org/"
	          "trainjob-controller'}",
	  .runtime = "torch-gh200",
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a missing runtime: Pending with the reason, an event, no pods",
	  .spec = SPEC4,
	  .runtime = NULL,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning RuntimeNotFound: ClusterTrainingRuntime torch-gh200 not "
	            "found; the job starts when it is created" },
	  .want_status = "Pending|RuntimeNotFound|ClusterTrainingRuntime torch-gh200 not found; "
	                 "the job starts when it is created|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a runtime naming an unknown GPU class fails the job",
	  .spec = "{'runtimeRef':{'name':'torch-b200'}}",
	  .runtime_json = "{'kind':'ClusterTrainingRuntime','metadata':{'name':'torch-b200','"
	                  "labels':{'trainjob.flame.dev/gpu-class':'b200'}},'spec':{}}",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: UnknownGPUClass: ClusterTrainingRuntime torch-b200: "
	            "label trainjob.flame.dev/gpu-class names GPU class 'b200', which the "
	            "controller's config does not define; fix the label or add the class" },
	  .want_status = "Failed|UnknownGPUClass|ClusterTrainingRuntime torch-b200: label "
	                 "trainjob.flame.dev/gpu-class names GPU class 'b200', which the "
	                 "controller's config does not define; fix the label or add the "
	                 "class|restarts=0|Failed=UnknownGPUClass|jobs=0/0/0/0/0" },
	{ .name = "an MPI implementation other than OpenMPI is refused before any pod",
	  .spec = "{'runtimeRef':{'name':'mpich'}}",
	  .runtime_json = "{'kind':'ClusterTrainingRuntime','metadata':{'name':'mpich'},'spec':{"
	                  "'mlPolicy':{'mpi':{'mpiImplementation':'MPICH'}},'template':{'spec':{"
	                  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{"
	                  "'spec':{'containers':[{'name':'node','image':'x'}]}}}}}]}}}}",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: UnsupportedRuntime: ClusterTrainingRuntime mpich: "
	            "spec.mlPolicy.mpi.mpiImplementation 'MPICH' is not supported; this "
	            "controller runs OpenMPI only, as Kubeflow Trainer does" },
	  .want_status = "Failed|UnsupportedRuntime|ClusterTrainingRuntime mpich: "
	                 "spec.mlPolicy.mpi.mpiImplementation 'MPICH' is not supported; this "
	                 "controller runs OpenMPI only, as Kubeflow Trainer "
	                 "does|restarts=0|Failed=UnsupportedRuntime|jobs=0/0/0/0/0" },
	{ .name = "Kubeflow's Flux runtime is refused before any pod, naming the field",
	  .spec = "{'runtimeRef':{'name':'flux-distributed'},'trainer':{'numNodes':2}}",
	  .runtime_json = "{'kind':'ClusterTrainingRuntime','metadata':{'name':'flux-distributed'},"
	                  "'spec':{'mlPolicy':{'numNodes':1,'flux':{}},'template':{'spec':{"
	                  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{"
	                  "'spec':{'containers':[{'name':'node','image':'ubuntu:jammy'}]}}}}}]}}}}",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: UnsupportedRuntime: ClusterTrainingRuntime "
	            "flux-distributed: spec.mlPolicy.flux is not supported by this controller: it "
	            "does not build Flux's broker (the flux-installer init container, the "
	            "ConfigMap "
	            "<job>-flux-entrypoint that wraps the command in flux run, the CURVE "
	            "certificate "
	            "Secret <job>-flux-curve); run the program with mpirun on an MPI runtime "
	            "(spec.mlPolicy.mpi, as Kubeflow's deepspeed-distributed) instead "
	            "(crds/README.md "
	            "lists what is supported)" },
	  .want_status =
	          "Failed|UnsupportedRuntime|ClusterTrainingRuntime flux-distributed: "
	          "spec.mlPolicy.flux is not supported by this controller: it does not build "
	          "Flux's "
	          "broker (the flux-installer init container, the ConfigMap <job>-flux-entrypoint "
	          "that wraps the command in flux run, the CURVE certificate Secret "
	          "<job>-flux-curve); run the program with mpirun on an MPI runtime "
	          "(spec.mlPolicy.mpi, as Kubeflow's deepspeed-distributed) instead "
	          "(crds/README.md "
	          "lists what is supported)|restarts=0|Failed=UnsupportedRuntime|jobs=0/0/0/0/0" },
	{ .name = "a runtime without a node job fails the job",
	  .spec = "{'runtimeRef':{'name':'empty'}}",
	  .runtime_json = "{'kind':'ClusterTrainingRuntime','metadata':{'name':'empty'},'spec':{}}",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidRuntime: ClusterTrainingRuntime empty has no "
	            "replicatedJob named node (spec.template.spec.replicatedJobs[].name); this "
	            "controller runs the node job's pod template once per node" },
	  .want_status = "Failed|InvalidRuntime|ClusterTrainingRuntime empty has no replicatedJob "
	                 "named node (spec.template.spec.replicatedJobs[].name); this controller "
	                 "runs the node job's pod template once per "
	                 "node|restarts=0|Failed=InvalidRuntime|jobs=0/0/0/0/0" },
	{ .name = "an env colliding with the torchrun wiring fails the job",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'env':[{'name':'MASTER_PORT','"
	          "value':'1234'}]}}",
	  .runtime = "torch-gh200",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidSpec: spec.trainer.env[0].name: MASTER_PORT is "
	            "set by the controller (torchrun wiring); remove it from the TrainJob" },
	  .want_status = "Failed|InvalidSpec|spec.trainer.env[0].name: MASTER_PORT is set by the "
	                 "controller (torchrun wiring); remove it from the "
	                 "TrainJob|restarts=0|Failed=InvalidSpec|jobs=0/0/0/0/0" },
	{ .name = "a command that never exits fails the job before any pod exists",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2,'command':['bash',"
	          "'-c','torchrun train.py && sleep infinity']}}",
	  .runtime = "torch-gh200",
	  .want = { "0 PatchStatus vit", "0 Event Warning Failed: PolicyViolation: " NEVER_EXITS },
	  .want_status = "Failed|PolicyViolation|" NEVER_EXITS
	                 "|restarts=0|Failed=PolicyViolation|jobs=0/0/0/0/0" },
	{ .name = "a suspended job is refused at once too",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':2,"
	          "'command':['bash','-c','torchrun train.py && sleep infinity']}}",
	  .runtime = "torch-gh200",
	  .want = { "0 PatchStatus vit", "0 Event Warning Failed: PolicyViolation: " NEVER_EXITS },
	  .want_status = "Failed|PolicyViolation|" NEVER_EXITS
	                 "|restarts=0|Failed=PolicyViolation|jobs=0/0/0/0/0" },
	{ .name = "a sleep as long as activeDeadlineSeconds fails the job",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':600,'trainer':{"
	          "'command':['sh','-c','sleep 10m']}}",
	  .runtime = "torch-gh200",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: PolicyViolation: container node of step node: "
	            "'sleep 10m' sleeps 600 s, as long as the job's walltime of 600 s or longer, "
	            "so the job can never finish by itself; a job must exit by itself when its "
	            "work is done, so it is refused before any pod starts" },
	  .want_status = "Failed|PolicyViolation|container node of step node: 'sleep 10m' sleeps "
	                 "600 s, as long as the job's walltime of 600 s or longer, so the job can "
	                 "never finish by itself; a job must exit by itself when its work is done, "
	                 "so it is refused before any pod starts|restarts=0|Failed=PolicyViolation"
	                 "|jobs=0/0/0/0/0" },
	{ .name = "the runtime's own command is checked",
	  .spec = "{'runtimeRef':{'name':'keepalive'}}",
	  .runtime_json = KEEPALIVE_RUNTIME("{}"),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: PolicyViolation: container node of step node: "
	            "'tail -f /dev/null' never exits (it follows /dev/null or standard input for "
	            "ever); a job must exit by itself when its work is done, so it is refused "
	            "before any pod starts" },
	  .want_status = "Failed|PolicyViolation|container node of step node: 'tail -f /dev/null' "
	                 "never exits (it follows /dev/null or standard input for ever); a job "
	                 "must exit by itself when its work is done, so it is refused before any "
	                 "pod starts|restarts=0|Failed=PolicyViolation|jobs=0/0/0/0/0" },
	{ .name = "a ClusterTrainingRuntime labelled allow-long-running is exempt",
	  .spec = "{'runtimeRef':{'name':'keepalive'}}",
	  .runtime_json = KEEPALIVE_RUNTIME("{'trainjob.flame.dev/allow-long-running':'true'}"),
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "keepalive" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a namespace of commandPolicy.exemptNamespaces is exempt",
	  .spec = "{'runtimeRef':{'name':'keepalive'}}",
	  .runtime_json = KEEPALIVE_RUNTIME("{}"),
	  .exempt_namespace = "team-a",
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "keepalive" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "a job whose pods exist is not checked again (an exemption withdrawn)",
	  .spec = "{'runtimeRef':{'name':'keepalive'}}",
	  .runtime_json = KEEPALIVE_RUNTIME("{}"),
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'1 of 1 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1") },
	  .n_pods = 1,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|1 of 1 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "an unsupported runtime kind fails the job even before the runtime is found",
	  .spec = "{'runtimeRef':{'name':'x','kind':'JobSet'}}",
	  .runtime = NULL,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: TrainingRuntimeNotSupported: spec.runtimeRef.kind: "
	            "'JobSet' is not supported; use ClusterTrainingRuntime or TrainingRuntime" },
	  .want_status =
	          "Failed|TrainingRuntimeNotSupported|spec.runtimeRef.kind: 'JobSet' is not "
	          "supported; use ClusterTrainingRuntime or "
	          "TrainingRuntime|restarts=0|Failed=TrainingRuntimeNotSupported|jobs=0/0/0/0/0" },
	{ .name = "activeDeadlineSeconds passed: Failed with DeadlineExceeded",
	  DEADLINE_3600_RUNNING2,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0",
	            "1 Event Warning Failed: DeadlineExceeded: the job ran longer than "
	            "spec.activeDeadlineSeconds (3600 s)" },
	  .want_status = DEADLINE_3600_EXCEEDED "|jobs=1/1/0/0/0",
	  .want_deadline = NOW },
	{ .name = "the deadline has passed, but every pod had succeeded before it: Complete",
	  DEADLINE_3600_RUNNING2,
	  .pods = { SUCCEEDED_AFTER(0, "gh200-1", 3500), SUCCEEDED_AFTER(1, "gh200-2", 3590) },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "0 Event Normal Completed: all 2 pods succeeded" },
	  .want_status = "Complete|AllPodsSucceeded|all 2 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0",
	  .want_deadline = NOW },
	{ .name = "the deadline has passed and a pod succeeded only after it: DeadlineExceeded",
	  DEADLINE_3600_RUNNING2,
	  .pods = { SUCCEEDED_AFTER(0, "gh200-1", 3500), SUCCEEDED_AFTER(1, "gh200-2", 3591) },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: DeadlineExceeded: the job ran longer than "
	            "spec.activeDeadlineSeconds (3600 s)" },
	  .want_status = DEADLINE_3600_EXCEEDED "|jobs=0/0/1/0/0",
	  .want_deadline = NOW },
	{ .name = "activeDeadlineSeconds not yet passed: the deadline is written, the pods are "
	          "warned (100 s left, within the default 300 s), look again at the deadline",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':3700,'trainer':{'"
	          "numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { "0 PatchPod vit-node-0-0-a0", "0 PatchPod vit-node-0-1-a0", "1 PatchStatus vit",
	            "1 Event Normal DeadlineWarning: the job ends at 2026-11-29T12:01:40Z: its "
	            "pods have the deadline in /etc/trainjob/deadline" },
	  .want_status = "Running|AllPodsRunning|2 of 2 pods running|restarts=0||jobs=1/1/0/0/0",
	  .want_requeue = 100,
	  .want_deadline = NOW + 100 },
	{ .name = "pods of another owner are ignored; a rank the job does not have is deleted",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':1}}",
	  .runtime = "torch-gh200",
	  .pods = { { 0, 0, TJ_POD_RUNNING, true, "gh200-1", false, 0, NULL, NULL, NULL, "uid-old",
	              NULL },
	            RUNNING(5, "gh200-2") },
	  .n_pods = 2,
	  .want = { "0 DeletePod vit-node-0-5-a0", "0 CreatePod vit-node-0-0-a0",
	            "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "pods newer than the cached status: wait for the cache",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING_A(0, 1, "gh200-1") },
	  .n_pods = 1,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0",
	  .want_requeue = 1 },
};

/* A job restarted restart times, the last failure (rank 1 on node) at time. */
#define RESTARTED(restarts, node, time) RESTARTED_ACTIVE(restarts, node, time, 0)
/* The same, active Jobs in the status's jobsStatus. */
#define RESTARTED_ACTIVE(restarts, node, time, active)                                             \
	RESTARTED_JOBS(restarts, node, time, JOBS(active, 0, 0, 0))
/* The same, with the status's jobsStatus (JOBS). */
#define RESTARTED_JOBS(restarts, node, time, jobs)                                                 \
	"{'state':'Restarting','reason':'WorkerFailed','message':'m','restartCount':" #restarts    \
	",'observedGeneration':2," STARTED ",'lastFailure':{'rank':1,'node':'" node                \
	"','pod':'vit-node-0-1-a0','reason':'Error','exitCode':1,'time':'" time "'}," jobs         \
	",'conditions':[]}"
/* The status the plan that restarted the job for rank 1's failure (on gh200-2 at 11:59:55)
 * wrote, the failed pod counted. */
#define RANK1_RESTART_RECORDED                                                                     \
	RESTARTED_JOBS(1, "gh200-2", "2026-11-29T11:59:55Z", JOBS(0, 0, 0, 1))
/* Four nodes of the Node cache (node_row initializers). */
#define FOUR_NODES(...) .nodes = { __VA_ARGS__ }, .n_nodes = 4
#define RUNNING4                                                                                   \
	.pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),             \
		  RUNNING(3, "gh200-4") },                                                         \
	.n_pods = 4
#define GANG_DELETES(forced)                                                                       \
	"1 DeletePod vit-node-0-0-a0", "1 DeletePod vit-node-0-1-a0" forced,                       \
	        "1 DeletePod vit-node-0-2-a0", "1 DeletePod vit-node-0-3-a0"

/* The same, with the failed rank 1 kept for its logs (its rank's labels taken away). */
#define GANG_KEEPS                                                                                 \
	"1 DeletePod vit-node-0-0-a0", "1 PatchPod vit-node-0-1-a0",                               \
	        "1 DeletePod vit-node-0-2-a0", "1 DeletePod vit-node-0-3-a0"

static int no_exit_codes[1];
static char *no_names[1];
/* No backoff, no permanent exit codes, no GPU signals. */
static const struct tj_failure_policy bare_policy = {
	.max_restarts = 3,
	.node_grace_period_seconds = 60,
	.permanent_exit_codes = no_exit_codes,
	.gpu_conditions = no_names,
	.gpu_taints = no_names,
	.fault_cordon_conditions = no_names,
};
/* The default backoff, capped at 25 s. */
static const struct tj_failure_policy capped_policy = {
	.max_restarts = 3,
	.node_grace_period_seconds = 60,
	.backoff_initial_seconds = 10,
	.backoff_max_seconds = 25,
	.permanent_exit_codes = no_exit_codes,
	.gpu_conditions = no_names,
	.gpu_taints = no_names,
	.fault_cordon_conditions = no_names,
};

/* Failure classes, node health, force deletion, backoff and permanent exit codes. */
static const struct plan_case fault_cases[] = {
	{ .name = "a worker evicted by the kubelet: Evicted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 0, NULL, NULL, NULL, NULL,
	              "Evicted" },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", GANG_KEEPS,
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (Evicted); "
	            "replacing all workers in 10 s (infrastructure restart 1 of 10)" },
	  .want_status =
	          "Restarting|Evicted|rank 1 on node gh200-2 failed (Evicted); replacing "
	          "all workers in 10 s (infrastructure restart 1 of 10)|restarts=1||jobs=0/0/0/1/0",
	  .want_requeue = 10,
	  .want_restart_reason = "Evicted",
	  .want_infra = 1 },
	{ .name = "a worker preempted by the scheduler: Preempted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            { 2, 0, TJ_POD_RUNNING, true, "gh200-3", true, 0, NULL, "PreemptionByScheduler",
	              NULL, NULL, NULL },
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 DeletePod vit-node-0-3-a0",
	            "1 Event Warning Restarting: rank 2 on node gh200-3 failed "
	            "(PreemptionByScheduler); replacing all workers in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|Preempted|rank 2 on node gh200-3 failed "
	                 "(PreemptionByScheduler); replacing all workers in 10 s (infrastructure "
	                 "restart 1 of 10)|restarts=1||jobs=1/0/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "Preempted",
	  .want_infra = 1 },
	{ .name = "policy Worker counts a worker evicted through the API",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            RUNNING(2, "gh200-3"),
	            { 3, 0, TJ_POD_RUNNING, true, "gh200-4", true, 0, NULL, "EvictionByEvictionAPI",
	              NULL, NULL, NULL } },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Restarting: rank 3 on node gh200-4 failed "
	            "(EvictionByEvictionAPI); replacing that worker in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|Evicted|rank 3 on node gh200-4 failed "
	                 "(EvictionByEvictionAPI); replacing that worker in 10 s (infrastructure "
	                 "restart 1 of 10)|restarts=1||jobs=1/0/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "Evicted",
	  .want_infra = 1 },
	{ .name = "a node NotReady within the grace period: look again when it ends",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES(NODE_OK("gh200-1"), { "gh200-2", TJ_COND_FALSE, 20 }, NODE_OK("gh200-3"),
	             NODE_OK("gh200-4")),
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0",
	  .want_requeue = 40 },
	{ .name = "a node NotReady past the grace period: the gang replaced, its pod "
	          "force-deleted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES(NODE_OK("gh200-1"), { "gh200-2", TJ_COND_FALSE, 75 }, NODE_OK("gh200-3"),
	             NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", GANG_DELETES(" (force)"),
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (NodeNotReady: "
	            "condition Ready is False); replacing all workers in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|NodeNotReady|rank 1 on node gh200-2 failed (NodeNotReady: "
	                 "condition Ready is False); replacing all workers in 10 s (infrastructure "
	                 "restart 1 of 10)|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeNotReady",
	  .want_infra = 1 },
	{ .name = "an unreachable node under policy Worker: only its rank, force-deleted",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES(NODE_OK("gh200-1"), NODE_OK("gh200-2"), { "gh200-3", TJ_COND_UNKNOWN, 60 },
	             NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-2-a0 (force)",
	            "1 Event Warning Restarting: rank 2 on node gh200-3 failed (NodeUnreachable: "
	            "condition Ready is Unknown); replacing that worker in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|NodeUnreachable|rank 2 on node gh200-3 failed "
	                 "(NodeUnreachable: condition Ready is Unknown); replacing that worker in "
	                 "10 s (infrastructure restart 1 of 10)|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeUnreachable",
	  .want_infra = 1 },
	{ .name = "a deleted node: its worker failed at once",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  .nodes = { NODE_OK("gh200-1"), NODE_OK("gh200-2"), NODE_OK("gh200-3") },
	  .n_nodes = 3,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0",
	            "1 DeletePod vit-node-0-3-a0 (force)",
	            "1 Event Warning Restarting: rank 3 on node gh200-4 failed (NodeDeleted: the "
	            "node was deleted); replacing all workers in 10 s (infrastructure restart 1 of "
	            "10)" },
	  .want_status = "Restarting|NodeDeleted|rank 3 on node gh200-4 failed (NodeDeleted: the "
	                 "node was deleted); replacing all workers in 10 s (infrastructure restart "
	                 "1 of 10)|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeDeleted",
	  .want_infra = 1 },
	{ .name = "a GPU health taint: GPUUnhealthy",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES({ "gh200-1", TJ_COND_TRUE, 3600, NULL, "nvidia.com/gpu.unhealthy" },
	             NODE_OK("gh200-2"), NODE_OK("gh200-3"), NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0 (force)",
	            "1 DeletePod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0",
	            "1 DeletePod vit-node-0-3-a0",
	            "1 Event Warning Restarting: rank 0 on node gh200-1 failed (GPUUnhealthy: "
	            "taint nvidia.com/gpu.unhealthy); replacing all workers in 10 s "
	            "(infrastructure restart 1 of 10)" },
	  .want_status = "Restarting|GPUUnhealthy|rank 0 on node gh200-1 failed (GPUUnhealthy: "
	                 "taint nvidia.com/gpu.unhealthy); replacing all workers in 10 s "
	                 "(infrastructure restart 1 of 10)|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "GPUUnhealthy",
	  .want_infra = 1 },
	{ .name = "a crash on a suspect node is the node's: NodeSuspect, charged to the "
	          "infrastructure",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 135, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  FOUR_NODES(NODE_OK("gh200-1"),
	             { "gh200-2", TJ_COND_TRUE, 3600, NULL, "trainjob.flame.dev/suspect" },
	             NODE_OK("gh200-3"), NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 PatchPod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0",
	            "1 DeletePod vit-node-0-3-a0",
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 135, "
	            "Error); replacing all workers in 10 s (infrastructure restart 1 of 10)" },
	  .want_status = "Restarting|NodeSuspect|rank 1 on node gh200-2 failed (exit code 135, "
	                 "Error); replacing all workers in 10 s (infrastructure restart 1 of "
	                 "10)|restarts=1||jobs=0/0/0/1/0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeSuspect",
	  .want_infra = 1 },
	{ .name = "a worker that exits on a node with a GPU signal: the node's failure, even "
	          "within the grace period, and its exit code is not permanent",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 127, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  FOUR_NODES(NODE_OK("gh200-1"), { "gh200-2", TJ_COND_TRUE, 5, "XidError" },
	             NODE_OK("gh200-3"), NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", GANG_KEEPS,
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 127, "
	            "GPUUnhealthy: condition XidError is True); replacing all workers in 10 s "
	            "(infrastructure restart 1 of 10)" },
	  .want_status = "Restarting|GPUUnhealthy|rank 1 on node gh200-2 failed (exit code 127, "
	                 "GPUUnhealthy: condition XidError is True); replacing all workers in 10 s "
	                 "(infrastructure restart 1 of 10)|restarts=1||jobs=0/0/0/1/0",
	  .want_requeue = 10,
	  .want_restart_reason = "GPUUnhealthy",
	  .want_infra = 1 },
	{ .name = "a plain cordon leaves the job alone",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES(
	          NODE_OK("gh200-1"), NODE_OK("gh200-2"),
	          { "gh200-3", TJ_COND_TRUE, 3600, NULL, "node.kubernetes.io/unschedulable", true },
	          NODE_OK("gh200-4")),
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "a cordon with a fault condition: NodeCordonedForFault",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES(NODE_OK("gh200-1"), NODE_OK("gh200-2"),
	             { "gh200-3", TJ_COND_TRUE, 120, "KernelDeadlock", NULL, true },
	             NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0 (force)",
	            "1 DeletePod vit-node-0-3-a0",
	            "1 Event Warning Restarting: rank 2 on node gh200-3 failed "
	            "(NodeCordonedForFault: cordoned, condition KernelDeadlock is True); replacing "
	            "all workers in 10 s (infrastructure restart 1 of 10)" },
	  .want_status = "Restarting|NodeCordonedForFault|rank 2 on node gh200-3 failed "
	                 "(NodeCordonedForFault: cordoned, condition KernelDeadlock is True); "
	                 "replacing all workers in 10 s (infrastructure restart 1 of "
	                 "10)|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeCordonedForFault",
	  .want_infra = 1 },
	{ .name = "the TrainJob's own grace period wins over the config's",
	  .annotations = "{'trainjob.flame.dev/node-grace-period-seconds':'10'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES(NODE_OK("gh200-1"), { "gh200-2", TJ_COND_FALSE, 20 }, NODE_OK("gh200-3"),
	             NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", GANG_DELETES(" (force)"),
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (NodeNotReady: "
	            "condition Ready is False); replacing all workers in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|NodeNotReady|rank 1 on node gh200-2 failed (NodeNotReady: "
	                 "condition Ready is False); replacing all workers in 10 s (infrastructure "
	                 "restart 1 of 10)|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeNotReady",
	  .want_infra = 1 },
	{ .name = "a permanent exit code fails the job at once",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 127, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-2-a0", "1 DeletePod vit-node-0-3-a0",
	            "1 Event Warning Failed: PermanentFailure: rank 1 on node gh200-2 failed (exit "
	            "code 127, Error); exit code 127 is permanent "
	            "(failurePolicy.permanentExitCodes), so the job is not restarted" },
	  .want_status =
	          "Failed|PermanentFailure|rank 1 on node gh200-2 failed (exit code 127, "
	          "Error); exit code 127 is permanent (failurePolicy.permanentExitCodes), "
	          "so the job is not restarted|restarts=0|Failed=PermanentFailure|jobs=0/0/0/1/0" },
	{ .name = "without permanent exit codes or backoff, 127 restarts at once",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .policy = &bare_policy,
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 127, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", GANG_KEEPS,
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 127, "
	            "Error); replacing all workers (restart 1 of 3)" },
	  .want_status =
	          "Restarting|WorkerFailed|rank 1 on node gh200-2 failed (exit code 127, "
	          "Error); replacing all workers (restart 1 of 3)|restarts=1||jobs=0/0/0/1/0",
	  .want_restart_reason = "WorkerFailed" },
	{ .name = "a restart waits for its backoff, counted from the failure in the status",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED(1, "gh200-2", "2026-11-29T11:59:55Z"),
	  .want = { NULL },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/0/0",
	  .want_requeue = 5 },
	{ .name = "the backoff doubles: restart 3 waits 40 s",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED(3, "gh200-2", "2026-11-29T11:59:30Z"),
	  .want = { NULL },
	  .want_status = "Restarting|WorkerFailed|m|restarts=3||jobs=0/0/0/0/0",
	  .want_requeue = 10 },
	{ .name = "the backoff is capped at its maximum",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .policy = &capped_policy,
	  .status = RESTARTED(3, "gh200-2", "2026-11-29T11:59:36Z"),
	  .want = { NULL },
	  .want_status = "Restarting|WorkerFailed|m|restarts=3||jobs=0/0/0/0/0",
	  .want_requeue = 1 },
	{ .name = "after the backoff, free ranks get pods while stuck ones wait for their nodes",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED(1, "gh200-2", "2026-11-29T11:59:00Z"),
	  .pods = { { 1, 0, TJ_POD_RUNNING, true, "gh200-2", true, 0, NULL, NULL, NULL, NULL,
	              NULL },
	            { 3, 0, TJ_POD_RUNNING, true, "gh200-4", true, 0, NULL, NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 2,
	  FOUR_NODES(NODE_OK("gh200-1"), { "gh200-2", TJ_COND_UNKNOWN, 30 }, NODE_OK("gh200-3"),
	             { "gh200-4", TJ_COND_TRUE, 10, "XidError" }),
	  .want = { "0 CreatePod vit-node-0-0-a1", "0 CreatePod vit-node-0-2-a1",
	            "0 CreateService vit" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/0/0",
	  .want_requeue = 30 },
	{ .name = "a pod stuck Terminating on a failed node is force-deleted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED(1, "gh200-2", "2026-11-29T11:59:00Z"),
	  .pods = { RUNNING_A(0, 1, "gh200-1"),
	            { 1, 0, TJ_POD_RUNNING, true, "gh200-2", true, 0, NULL, NULL, NULL, NULL,
	              NULL },
	            RUNNING_A(2, 1, "gh200-3"),
	            RUNNING_A(3, 1, "gh200-4") },
	  .n_pods = 4,
	  FOUR_NODES(NODE_OK("gh200-1"), { "gh200-2", TJ_COND_UNKNOWN, 90 }, NODE_OK("gh200-3"),
	             NODE_OK("gh200-4")),
	  .want = { "0 DeletePod vit-node-0-1-a0 (force)", "1 PatchStatus vit" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=1/0/0/0/0" },
	{ .name = "a finished job still frees a pod stuck on a deleted node",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Complete','reason':'AllPodsSucceeded','message':'all 4 pods "
	            "succeeded','restartCount':0,'observedGeneration':2," STARTED
	            ",'completionTime':'2026-11-29T11:30:00Z'," JOBS(
	                    0, 0, 1, 0) ",'conditions':[{'type':'Complete','status':'True','reason'"
	                                ":'AllPodsSucceeded','message':'all 4 pods "
	                                "succeeded','lastTransitionTime':'2026-11-29T11:30:00Z'}]}",
	  .pods = { SUCCEEDED(0, "gh200-1"),
	            SUCCEEDED(1, "gh200-2"),
	            SUCCEEDED(2, "gh200-3"),
	            { 3, 0, TJ_POD_SUCCEEDED, false, "gh200-9", true, 0, "Completed", NULL, NULL,
	              NULL, NULL } },
	  .n_pods = 4,
	  FOUR_NODES(NODE_OK("gh200-1"), NODE_OK("gh200-2"), NODE_OK("gh200-3"),
	             NODE_OK("gh200-4")),
	  .want = { "0 DeletePod vit-node-0-3-a0 (force)" },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0" },
};

/* A job running attempt `restarts`, `infra` of its restarts the infrastructure's. */
#define RESTARTED_RUNNING(restarts, infra)                                                         \
	"{'state':'Running','reason':'AllPodsRunning','message':'4 of 4 pods running',"            \
	"'restartCount':" #restarts ",'infrastructureRestarts':" #infra                            \
	",'observedGeneration':2," STARTED "," JOBS(1, 1, 0, 0) ",'conditions':[]}"

/* The two budgets (reconcilers/policy/budget.h) as the planner applies them. */
static const struct plan_case budget_cases[] = {
	{ .name = "the infrastructure's budget spent: Failed, whatever maxRestarts says",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_RUNNING(10, 10),
	  .pods = { RUNNING_A(0, 10, "gh200-1"), RUNNING_A(1, 10, "gh200-2"),
	            RUNNING_A(2, 10, "gh200-3"), RUNNING_A(3, 10, "gh200-4") },
	  .n_pods = 4,
	  .nodes = { NODE_OK("gh200-1"), NODE_OK("gh200-2"), NODE_OK("gh200-3") },
	  .n_nodes = 3,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a10",
	            "1 DeletePod vit-node-0-1-a10", "1 DeletePod vit-node-0-2-a10",
	            "1 DeletePod vit-node-0-3-a10 (force)",
	            "1 Event Warning Failed: ReachedMaxInfrastructureRestarts: rank 3 on node "
	            "gh200-4 failed (NodeDeleted: the node was deleted); the infrastructure "
	            "restart budget of 10 (failurePolicy.maxInfrastructureRestarts) is spent" },
	  .want_status = "Failed|ReachedMaxInfrastructureRestarts|rank 3 on node gh200-4 failed "
	                 "(NodeDeleted: the node was deleted); the infrastructure restart budget "
	                 "of 10 (failurePolicy.maxInfrastructureRestarts) is "
	                 "spent|restarts=10|Failed=ReachedMaxInfrastructureRestarts|jobs=1/1/0/0/0",
	  .want_infra = 10 },
	{ .name = "a failure of its own after infrastructure restarts: the first of the job's "
	          "budget",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_RUNNING(3, 3),
	  .pods = { RUNNING_A(0, 3, "gh200-1"),
	            { 1, 3, TJ_POD_FAILED, false, "gh200-2", false, 1, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING_A(2, 3, "gh200-3"),
	            RUNNING_A(3, 3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a3",
	            "1 PatchPod vit-node-0-1-a3", "1 DeletePod vit-node-0-2-a3",
	            "1 DeletePod vit-node-0-3-a3",
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 1, "
	            "Error); replacing all workers in 80 s (restart 1 of 3)" },
	  .want_status = "Restarting|WorkerFailed|rank 1 on node gh200-2 failed (exit code 1, "
	                 "Error); replacing all workers in 80 s (restart 1 of "
	                 "3)|restarts=4||jobs=0/0/0/1/0",
	  .want_requeue = 80,
	  .want_restart_reason = "WorkerFailed",
	  .want_infra = 3 },
	{ .name = "max-restarts 0 and a NotReady node past its grace: an infrastructure restart",
	  .annotations = "{'trainjob.flame.dev/max-restarts':'0'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  RUNNING4,
	  FOUR_NODES(NODE_OK("gh200-1"), { "gh200-2", TJ_COND_FALSE, 75 }, NODE_OK("gh200-3"),
	             NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", GANG_DELETES(" (force)"),
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (NodeNotReady: "
	            "condition Ready is False); replacing all workers in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|NodeNotReady|rank 1 on node gh200-2 failed (NodeNotReady: "
	                 "condition Ready is False); replacing all workers in 10 s (infrastructure "
	                 "restart 1 of 10)|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeNotReady",
	  .want_infra = 1 },
};

/* The restart of attempt 0, a minute ago (its backoff is over). */
#define RESTARTED_1                                                                                \
	"{'state':'Restarting','reason':'WorkerFailed','message':'m','restartCount':1,"            \
	"'observedGeneration':2," STARTED ",'lastFailure':{'rank':1,'node':'gh200-2','pod':'"      \
	"vit-node-0-1-a0','reason':'Error','exitCode':1,'time':'2026-11-29T11:59:00Z'}," JOBS(     \
	        0, 0, 0, 0) ",'conditions':[]}"
#define KEPT_A0                                                                                    \
	{                                                                                          \
		.rank = 1, .attempt = 0, .phase = TJ_POD_FAILED, .node = "gh200-2",                \
		.exit_code = 1, .exit_reason = "Error", .kept = true                               \
	}
#define RUNNING_SINCE(r, on, s)                                                                    \
	{                                                                                          \
		.rank = r, .attempt = 1, .phase = TJ_POD_RUNNING, .ready = true, .node = on,       \
		.started = s                                                                       \
	}
#define COMPLETE_AT(t)                                                                             \
	"{'state':'Complete','reason':'AllPodsSucceeded','message':'all 4 pods "                   \
	"succeeded','restartCount':0,'observedGeneration':2," STARTED ",'completionTime':'" t      \
	"'," JOBS(                                                                                 \
	        0, 0, 1,                                                                           \
	        0) ",'conditions':[{'type':'Complete','status':'True','reason':"                   \
	           "'AllPodsSucceeded','message':'all 4 pods succeeded','lastTransitionTime':'" t  \
	           "'}]}"
/* torch-x with ttlSecondsAfterFinished 600 where Kubeflow's runtime has it. */
#define RUNTIME_TTL                                                                                \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'torch-x'},'spec':{"                  \
	"'ttlSecondsAfterFinished':600,'template':{'spec':{'replicatedJobs':[{'name':'node',"      \
	"'template':{'spec':{'template':{'spec':{'containers':[{'name':'node','image':'x'}]}}}}}]" \
	"}}}}"
/* The same with 0 where a runtime written for JobSet has it, in the JobSet template. */
#define RUNTIME_TTL0                                                                               \
	"{'kind':'ClusterTrainingRuntime','metadata':{'name':'torch-x'},'spec':{'template':{"      \
	"'spec':{'ttlSecondsAfterFinished':0,'replicatedJobs':[{'name':'node','template':{"        \
	"'spec':{'template':{'spec':{'containers':[{'name':'node','image':'x'}]}}}}}]}}}}"
#define SUCCEEDED_ALL                                                                              \
	{                                                                                          \
		SUCCEEDED(0, "gh200-1"), SUCCEEDED(1, "gh200-2"), SUCCEEDED(2, "gh200-3"),         \
		        SUCCEEDED(3, "gh200-4")                                                    \
	}

static const struct plan_case retention_cases[] = {
	{ .name = "a failed worker's log ends up in lastFailure and the Restarting event",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            { .rank = 1,
	              .phase = TJ_POD_FAILED,
	              .node = "gh200-2",
	              .exit_code = 1,
	              .exit_reason = "Error",
	              .message = "epoch 3\nRuntimeError: CUDA out of memory\n" },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", GANG_KEEPS,
	            "1 Event Warning Restarting: rank 1 on node gh200-2 failed (exit code 1, "
	            "Error); replacing all workers in 10 s (restart 1 of 3); the log ends:\n"
	            "epoch 3\nRuntimeError: CUDA out of memory" },
	  .want_status = "Restarting|WorkerFailed|rank 1 on node gh200-2 failed (exit code 1, "
	                 "Error); replacing all workers in 10 s (restart 1 of 3)|restarts=1||"
	                 "jobs=0/0/0/1/0",
	  .want_requeue = 10,
	  .want_restart_reason = "WorkerFailed" },
	{ .name = "a spent budget: the log ends up in the Failed event",
	  .annotations = "{'trainjob.flame.dev/max-restarts':'0'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            RUNNING(2, "gh200-3"),
	            { .rank = 3,
	              .phase = TJ_POD_FAILED,
	              .node = "gh200-4",
	              .exit_code = 2,
	              .exit_reason = "Error",
	              .message = "bad config" } },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 DeletePod vit-node-0-2-a0",
	            "1 Event Warning Failed: ReachedMaxRestarts: rank 3 on node gh200-4 failed "
	            "(exit code 2, Error); the restart budget of 0 is spent; the log ends:\n"
	            "bad config" },
	  .want_status = "Failed|ReachedMaxRestarts|rank 3 on node gh200-4 failed (exit code 2, "
	                 "Error); the restart budget of 0 is spent|restarts=0|"
	                 "Failed=ReachedMaxRestarts|jobs=0/0/0/1/0" },
	{ .name = "a failed pod not relabelled yet blocks its rank; the others get their pods",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_1,
	  .pods = { { .rank = 1,
	              .phase = TJ_POD_FAILED,
	              .node = "gh200-2",
	              .exit_code = 1,
	              .exit_reason = "Error" } },
	  .n_pods = 1,
	  .want = { "0 PatchPod vit-node-0-1-a0", "0 CreatePod vit-node-0-0-a1",
	            "0 CreatePod vit-node-0-2-a1", "0 CreatePod vit-node-0-3-a1",
	            "0 CreateService vit" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/0/0" },
	{ .name = "a kept pod is no rank's: the new attempt gets every pod",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_1,
	  .pods = { KEPT_A0 },
	  .n_pods = 1,
	  .want = { "0 CreatePod vit-node-0-0-a1", "0 CreatePod vit-node-0-1-a1",
	            "0 CreatePod vit-node-0-2-a1", "0 CreatePod vit-node-0-3-a1",
	            "0 CreateService vit" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/0/0" },
	{ .name = "a kept pod stays while the new attempt has run for less than the grace",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_1,
	  .pods = { KEPT_A0, RUNNING_SINCE(0, "gh200-1", 120), RUNNING_SINCE(1, "gh200-5", 100),
	            RUNNING_SINCE(2, "gh200-3", 120), RUNNING_SINCE(3, "gh200-4", 120) },
	  .n_pods = 5,
	  .want = { "0 PatchStatus vit", "0 Event Normal Running: 4 of 4 pods running" },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 200 },
	{ .name = "a kept pod goes once the new attempt has run for the grace",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_1,
	  .pods = { KEPT_A0, RUNNING_SINCE(0, "gh200-1", 300), RUNNING_SINCE(1, "gh200-5", 300),
	            RUNNING_SINCE(2, "gh200-3", 300), RUNNING_SINCE(3, "gh200-4", 300) },
	  .n_pods = 5,
	  .want = { "0 DeletePod vit-node-0-1-a0", "1 PatchStatus vit",
	            "1 Event Normal Running: 4 of 4 pods running" },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=1||jobs=1/1/0/0/0" },
	{ .name = "a kept pod on a deleted node is force-deleted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_1,
	  .pods = { KEPT_A0, RUNNING_SINCE(0, "gh200-1", 10), RUNNING_SINCE(1, "gh200-5", 10),
	            RUNNING_SINCE(2, "gh200-3", 10), RUNNING_SINCE(3, "gh200-4", 10) },
	  .n_pods = 5,
	  FOUR_NODES(NODE_OK("gh200-1"), NODE_OK("gh200-5"), NODE_OK("gh200-3"),
	             NODE_OK("gh200-4")),
	  .want = { "0 DeletePod vit-node-0-1-a0 (force)", "1 PatchStatus vit",
	            "1 Event Normal Running: 4 of 4 pods running" },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=1||jobs=1/1/0/0/0" },
	{ .name = "a finished job within its TTL keeps everything and looks again when it ends",
	  .spec = SPEC4,
	  .runtime_json = RUNTIME_TTL,
	  .status = COMPLETE_AT("2026-11-29T11:58:00Z"),
	  .pods = SUCCEEDED_ALL,
	  .n_pods = 4,
	  .want = { NULL },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0",
	  .want_requeue = 480 },
	{ .name = "past its TTL a finished job's pods and Service go; its status stays",
	  .spec = SPEC4,
	  .runtime_json = RUNTIME_TTL,
	  .status = COMPLETE_AT("2026-11-29T11:50:00Z"),
	  .pods = SUCCEEDED_ALL,
	  .n_pods = 4,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "0 DeletePod vit-node-0-2-a0", "0 DeletePod vit-node-0-3-a0",
	            "0 DeleteService vit", "1 PatchStatus vit",
	            "1 Event Normal CleanedUp: ttlSecondsAfterFinished (600 s) passed: the job's "
	            "pods and Service are deleted; the TrainJob keeps its status" },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0" },
	{ .name = "a cleaned-up job keeps its counts and writes nothing more",
	  .spec = SPEC4,
	  .runtime_json = RUNTIME_TTL,
	  .status =
	          "{'state':'Complete','reason':'AllPodsSucceeded','message':'all 4 pods "
	          "succeeded','restartCount':0,'observedGeneration':2," STARTED
	          ",'completionTime':'2026-11-29T11:50:00Z','cleanupTime':'2026-11-29T11:59:00Z'"
	          "," JOBS(0, 0, 1, 0) ",'conditions':[{'type':'Complete','status':'True','reason':"
	                               "'AllPodsSucceeded','message':'all 4 pods "
	                               "succeeded','lastTransitionTime':"
	                               "'2026-11-29T11:50:00Z'}]}",
	  .want = { NULL },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0" },
	{ .name = "a job that finishes now waits for its status before its TTL of 0",
	  .spec = SPEC4,
	  .runtime_json = RUNTIME_TTL0,
	  .status = RUNNING_STATUS,
	  .pods = SUCCEEDED_ALL,
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "0 Event Normal Completed: all 4 pods succeeded" },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0",
	  .want_requeue = 1 },
	{ .name = "a TTL of 0 in the JobSet template: the pods go at the next plan",
	  .spec = SPEC4,
	  .runtime_json = RUNTIME_TTL0,
	  .status = COMPLETE_AT("2026-11-29T11:59:59Z"),
	  .pods = SUCCEEDED_ALL,
	  .n_pods = 4,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "0 DeletePod vit-node-0-2-a0", "0 DeletePod vit-node-0-3-a0",
	            "0 DeleteService vit", "1 PatchStatus vit",
	            "1 Event Normal CleanedUp: ttlSecondsAfterFinished (0 s) passed: the job's "
	            "pods and Service are deleted; the TrainJob keeps its status" },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0" },
};

/* Stalled jobs (reconcilers/policy/stall.h): a timeout of 10 minutes, a report of 42% and a
 * loss, pods that run since STARTED (created a little before). */
#define STALL_10M "{'trainjob.flame.dev/stall-timeout':'10m'}"
/* The job of most rows: 4 nodes of torch-gh200 with that timeout. */
#define STALLING .annotations = STALL_10M, .spec = SPEC4, .runtime = "torch-gh200"
#define REPORT_42                                                                                  \
	"'trainerStatus':{'progressPercentage':42,'metrics':[{'name':'loss','value':'0.7'}],"      \
	"'lastUpdatedTime':'2026-11-29T11:59:00Z'}"
#define RUNNING_REPORTING(restarts, infra)                                                         \
	"{'state':'Running','reason':'AllPodsRunning','message':'4 of 4 pods running',"            \
	"'restartCount':" #restarts ",'infrastructureRestarts':" #infra                            \
	",'observedGeneration':2," STARTED "," JOBS(1, 1, 0, 0) ",'conditions':[]," REPORT_42 "}"
#define RUNNING_HOUR(r, a, on)                                                                     \
	{                                                                                          \
		.rank = r, .attempt = a, .phase = TJ_POD_RUNNING, .ready = true, .node = on,       \
		.age = 3700, .started = 3600                                                       \
	}
#define RUNNING4_HOUR(a)                                                                           \
	.pods = { RUNNING_HOUR(0, a, "gh200-1"), RUNNING_HOUR(1, a, "gh200-2"),                    \
		  RUNNING_HOUR(2, a, "gh200-3"), RUNNING_HOUR(3, a, "gh200-4") },                  \
	.n_pods = 4
#define STALL_WHAT                                                                                 \
	"the progress it reports (42%) has not changed since 2026-11-29T11:45:00Z, longer than "   \
	"its stall timeout of 10m"
#define STALL_RESTART STALL_WHAT "; replacing all workers in 10 s (infrastructure restart 1 of 10)"
#define STALL_PATCHES(stage, a)                                                                    \
	stage " PatchPod vit-node-0-0-a" #a, stage " PatchPod vit-node-0-1-a" #a,                  \
	        stage " PatchPod vit-node-0-2-a" #a, stage " PatchPod vit-node-0-3-a" #a
/* The status a stall left `ago` (a time) before NOW, and a stalled pod of rank r, kept or
 * not yet, still running. */
#define STALL_RESTARTED(ago)                                                                       \
	"{'state':'Restarting','reason':'Stalled','message':'m','restartCount':1,"                 \
	"'infrastructureRestarts':1,'observedGeneration':2," STARTED ",'lastFailure':{'rank':0,"   \
	"'node':'gh200-1','pod':'vit-node-0-0-a0','reason':'Stalled','time':'" ago "',"            \
	"'message':'m'}," JOBS(0, 0, 0, 0) ",'conditions':[]," REPORT_42 "}"
#define STOPPING(r, on, is_kept)                                                                   \
	{                                                                                          \
		.rank = r, .phase = TJ_POD_RUNNING, .ready = true, .node = on, .age = 3700,        \
		.started = 3600, .kept = is_kept                                                   \
	}
#define STOPPING4(is_kept)                                                                         \
	.pods = { STOPPING(0, "gh200-1", is_kept), STOPPING(1, "gh200-2", is_kept),                \
		  STOPPING(2, "gh200-3", is_kept), STOPPING(3, "gh200-4", is_kept) },              \
	.n_pods = 4

static const struct plan_case stall_cases[] = {
	{ .name = "progress unchanged for the stall timeout: restarted as Stalled, its pods "
	          "stopped and kept",
	  STALLING,
	  .status = RUNNING_REPORTING(0, 0),
	  RUNNING4_HOUR(0),
	  .progress_seen = 900,
	  .want = { "0 PatchStatus vit", STALL_PATCHES("1", 0),
	            "1 Event Warning Stalled: " STALL_WHAT,
	            "1 Event Warning Restarting: " STALL_RESTART },
	  .want_status = "Restarting|Stalled|" STALL_RESTART "|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 10,
	  .want_restart_reason = "Stalled",
	  .want_infra = 1,
	  .want_stalled = true },
	{ .name = "progress changed 5 minutes ago: the job runs on, planned again when it would "
	          "be stalled",
	  STALLING,
	  .status = RUNNING_REPORTING(0, 0),
	  RUNNING4_HOUR(0),
	  .progress_seen = 300,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0",
	  .want_requeue = 300 },
	{ .name = "a job that never reported progress is never stalled",
	  STALLING,
	  .status = RUNNING_STATUS,
	  RUNNING4_HOUR(0),
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "without a stall timeout a job is never stalled",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_REPORTING(0, 0),
	  RUNNING4_HOUR(0),
	  .progress_seen = 7200,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "the runtime's stall timeout, and a job that switches it off",
	  .annotations = "{'trainjob.flame.dev/stall-timeout':'0'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{'trainjob.flame.dev/stall-timeout':'5m'}"),
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'1 of 1 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]," REPORT_42 "}",
	  .pods = { RUNNING_HOUR(0, 0, "gh200-1") },
	  .n_pods = 1,
	  .progress_seen = 7200,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|1 of 1 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "a new attempt gets a full timeout from its pods' start",
	  STALLING,
	  .status = RUNNING_REPORTING(1, 1),
	  .pods = { RUNNING_SINCE(0, "gh200-5", 120), RUNNING_SINCE(1, "gh200-2", 120),
	            RUNNING_SINCE(2, "gh200-3", 100), RUNNING_SINCE(3, "gh200-4", 120) },
	  .n_pods = 4,
	  .progress_seen = 1800,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=1||jobs=1/1/0/0/0",
	  .want_requeue = 500,
	  .want_infra = 1 },
	{ .name = "a rank that succeeded: the job is finishing, not stalled",
	  STALLING,
	  .status = RUNNING_REPORTING(0, 0),
	  .pods = { RUNNING_HOUR(0, 0, "gh200-1"), RUNNING_HOUR(1, 0, "gh200-2"),
	            RUNNING_HOUR(2, 0, "gh200-3"), SUCCEEDED(3, "gh200-4") },
	  .n_pods = 4,
	  .progress_seen = 7200,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Running|PodsCompleting|3 of 4 pods running, 1 "
	                 "succeeded|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "a stall with the infrastructure's budget spent: Failed, its pods stopped in "
	          "place",
	  STALLING,
	  .status = RUNNING_REPORTING(10, 10),
	  RUNNING4_HOUR(10),
	  .progress_seen = 900,
	  .want = { "0 PatchStatus vit", STALL_PATCHES("1", 10),
	            "1 Event Warning Stalled: " STALL_WHAT,
	            "1 Event Warning Failed: ReachedMaxInfrastructureRestarts: " STALL_WHAT
	            "; the infrastructure restart budget of 10 "
	            "(failurePolicy.maxInfrastructureRestarts) is spent" },
	  .want_status = "Failed|ReachedMaxInfrastructureRestarts|" STALL_WHAT
	                 "; the infrastructure restart budget of 10 "
	                 "(failurePolicy.maxInfrastructureRestarts) is "
	                 "spent|restarts=10|Failed=ReachedMaxInfrastructureRestarts|jobs=1/1/0/0/0",
	  .want_requeue = 60,
	  .want_infra = 10,
	  .want_stalled = true },
	{ .name = "the failed job's stopping pods are left to stop until their time is up",
	  STALLING,
	  .status = "{'state':'Failed','reason':'ReachedMaxInfrastructureRestarts','message':'m',"
	            "'restartCount':10,'infrastructureRestarts':10,'observedGeneration':2," STARTED
	            ",'completionTime':'2026-11-29T11:59:40Z','lastFailure':{'rank':0,'node':"
	            "'gh200-1','pod':'vit-node-0-0-a10','reason':'Stalled','time':"
	            "'2026-11-29T11:59:40Z','message':'m'}," JOBS(
	                    1, 1, 0, 0) ",'conditions':[{'type':'Failed','status':'True','reason':"
	                                "'ReachedMaxInfrastructureRestarts','message':'m','"
	                                "lastTransitionTime':"
	                                "'2026-11-29T11:59:40Z'}]," REPORT_42 "}",
	  RUNNING4_HOUR(10),
	  .progress_seen = 900,
	  .want = { NULL },
	  .want_status = "Failed|ReachedMaxInfrastructureRestarts|m|restarts=10|"
	                 "Failed=ReachedMaxInfrastructureRestarts|jobs=1/1/0/0/0",
	  .want_requeue = 40,
	  .want_infra = 10 },
	{ .name = "after the stall: its kept pods stop while the new attempt waits for its "
	          "backoff",
	  STALLING,
	  .status = STALL_RESTARTED("2026-11-29T11:59:55Z"),
	  STOPPING4(true),
	  .progress_seen = 900,
	  .want = { NULL },
	  .want_status = "Restarting|Stalled|m|restarts=1||jobs=0/0/0/0/0",
	  .want_requeue = 5,
	  .want_infra = 1 },
	{ .name = "a stalled pod the cache shows unkept yet is stopped again, not deleted",
	  STALLING,
	  .status = STALL_RESTARTED("2026-11-29T11:59:55Z"),
	  STOPPING4(false),
	  .progress_seen = 900,
	  .want = { STALL_PATCHES("0", 0) },
	  .want_status = "Restarting|Stalled|m|restarts=1||jobs=0/0/0/0/0",
	  .want_requeue = 5,
	  .want_infra = 1 },
	{ .name = "so under restart policy Worker: the attempt after a stall is whole",
	  .annotations = "{'trainjob.flame.dev/stall-timeout':'10m',"
	                 "'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = STALL_RESTARTED("2026-11-29T11:59:55Z"),
	  STOPPING4(false),
	  .progress_seen = 900,
	  .want = { STALL_PATCHES("0", 0) },
	  .want_status = "Restarting|Stalled|m|restarts=1||jobs=0/0/0/0/0",
	  .want_requeue = 5,
	  .want_infra = 1 },
	{ .name = "a kept pod that still runs past its time is deleted; the new attempt starts",
	  STALLING,
	  .status = STALL_RESTARTED("2026-11-29T11:58:00Z"),
	  STOPPING4(true),
	  .progress_seen = 900,
	  .want = { "0 CreatePod vit-node-0-0-a1", "0 CreatePod vit-node-0-1-a1",
	            "0 CreatePod vit-node-0-2-a1", "0 CreatePod vit-node-0-3-a1",
	            "0 CreateService vit", "0 DeletePod vit-node-0-0-a0",
	            "0 DeletePod vit-node-0-1-a0", "0 DeletePod vit-node-0-2-a0",
	            "0 DeletePod vit-node-0-3-a0" },
	  .want_status = "Restarting|Stalled|m|restarts=1||jobs=0/0/0/0/0",
	  .want_infra = 1 },
	{ .name = "a job suspended after a stall: its new pods go, its stopping ones stop",
	  .annotations = STALL_10M,
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'suspend':true,'trainer':{'numNodes':1}}",
	  .runtime = "torch-gh200",
	  .status = STALL_RESTARTED("2026-11-29T11:59:30Z"),
	  .pods = { STOPPING(0, "gh200-1", true),
	            { .rank = 0,
	              .attempt = 1,
	              .phase = TJ_POD_RUNNING,
	              .node = "gh200-2",
	              .age = 30,
	              .started = 20 } },
	  .n_pods = 2,
	  .progress_seen = 900,
	  .want = { "0 DeletePod vit-node-0-0-a1", "1 PatchStatus vit",
	            "1 Event Normal Suspended: TrainJob is suspended; its pods are deleted" },
	  .want_status = "Suspended|Suspended|TrainJob is "
	                 "suspended|restarts=1|Suspended=Suspended|jobs=0/0/0/0/1",
	  .want_requeue = 30,
	  .want_infra = 1 },
	{ .name = "a stall timeout that is no duration fails the job",
	  .annotations = "{'trainjob.flame.dev/stall-timeout':'soon'}",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{}"),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidSpec: "
	            "metadata.annotations[trainjob.flame.dev/stall-timeout]: 'soon' is not a "
	            "duration such as 30m, 1h30m or 600s (1 s to 366 d), or 0 for none" },
	  .want_status =
	          "Failed|InvalidSpec|metadata.annotations[trainjob.flame.dev/"
	          "stall-timeout]: 'soon' is not a duration such as 30m, 1h30m or 600s (1 "
	          "s to 366 d), or 0 for none|restarts=0|Failed=InvalidSpec|jobs=0/0/0/0/0" },
	{ .name = "so does a runtime's",
	  .spec = "{'runtimeRef':{'name':'torch-x'}}",
	  .runtime_json = RUNTIME_WITH("{'trainjob.flame.dev/stall-timeout':'1x'}"),
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidRuntime: ClusterTrainingRuntime torch-x: "
	            "trainjob.flame.dev/stall-timeout '1x' is not a duration such as 30m, 1h30m or "
	            "600s (1 s to 366 d), or 0 for none" },
	  .want_status = "Failed|InvalidRuntime|ClusterTrainingRuntime torch-x: "
	                 "trainjob.flame.dev/stall-timeout '1x' is not a duration such as 30m, "
	                 "1h30m or 600s (1 s to 366 d), or 0 for "
	                 "none|restarts=0|Failed=InvalidRuntime|jobs=0/0/0/0/0" },
};

struct fixture {
	struct tj_node nodes[MAX_NODES];
	struct tj_node_condition conditions[MAX_NODES][2];
	struct tj_node_taint taints[MAX_NODES];
	size_t n_nodes;
	struct tj_trainjob *job;
	struct tj_runtime *runtime;
	struct tj_pod pods[MAX_PODS];
	const struct tj_pod *pod_ptrs[MAX_PODS];
	char names[MAX_PODS][TJ_NAME_MAX];
};

static struct tj_trainjob *job_of(const struct plan_case *c)
{
	char buf[8192];
	struct tj_trainjob *job = NULL;
	cJSON *j;

	snprintf(buf, sizeof(buf),
	         "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
	         "'metadata':{'name':'vit','namespace':'team-a','uid':'uid-vit',"
	         "'resourceVersion':'42','generation':2,'annotations':%s,'labels':%s,"
	         "'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':%s,'status':%s}",
	         c->annotations ? c->annotations : "{}", c->labels ? c->labels : "{}", c->spec,
	         c->status ? c->status : "{}");
	j = jlit(buf);
	assert_int_equal(tj_trainjob_from_json(j, &job), 0);
	cJSON_Delete(j);
	return job;
}

static void pods_of(const struct plan_case *c, struct fixture *f)
{
	for (size_t i = 0; i < c->n_pods; i++) {
		const struct pod_row *row = &c->pods[i];
		struct tj_pod *p = &f->pods[i];

		snprintf(f->names[i], TJ_NAME_MAX, "vit-node-0-%d-a%d", row->rank, row->attempt);
		*p = (struct tj_pod){
			.namespace = "team-a",
			.name = f->names[i],
			.uid = f->names[i], /* unique enough */
			.owner_uid = (char *)(row->owner ? row->owner : "uid-vit"),
			.trainjob = "vit",
			.rank = row->rank,
			.attempt = row->attempt,
			.node_name = (char *)row->node,
			.phase = row->phase,
			.ready = row->ready,
			.unschedulable = row->unschedulable != NULL,
			.unschedulable_message = (char *)row->unschedulable,
			.deletion_time = row->deleting ? NOW + 30 : 0,
			.terminated = row->exit_code != 0,
			.exit_code = row->exit_code,
			.exit_reason = (char *)row->exit_reason,
			.disruption_reason = (char *)row->disruption,
			.reason = (char *)row->pod_reason,
			.creation_time = NOW - row->age,
			.pinned_node = (char *)row->pinned,
			.deadline = row->deadline,
			.kept = row->kept,
			.termination_message = (char *)row->message,
			.start_time = row->started ? NOW - row->started : 0,
			.held_seconds = row->held,
			.gated = row->gated,
		};
		f->pod_ptrs[i] = p;
	}
}

static void nodes_of(const struct plan_case *c, struct fixture *f)
{
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct node_row *row = &c->nodes[i];
		struct tj_node *n = &f->nodes[i];

		f->conditions[i][0] =
		        (struct tj_node_condition){ .type = "Ready",
			                            .status = row->ready,
			                            .last_transition_time = NOW - row->age };
		f->conditions[i][1] = (struct tj_node_condition){
			.type = (char *)row->condition,
			.status = TJ_COND_TRUE,
			.last_transition_time = NOW - row->age,
		};
		f->taints[i] =
		        (struct tj_node_taint){ .key = (char *)row->taint, .effect = "NoSchedule" };
		*n = (struct tj_node){
			.name = (char *)row->name,
			.unschedulable = row->cordoned,
			.conditions = f->conditions[i],
			.n_conditions = row->condition ? 2 : 1,
			.taints = &f->taints[i],
			.n_taints = row->taint ? 1 : 0,
		};
	}
	f->n_nodes = c->n_nodes;
}

static const struct tj_node *lookup_node(void *ctx, const char *name)
{
	const struct fixture *f = ctx;

	for (size_t i = 0; i < f->n_nodes; i++)
		if (strcmp(f->nodes[i].name, name) == 0)
			return &f->nodes[i];
	return NULL;
}

/* The plan's view of a suspect node: here, one that carries the taint. */
static bool node_suspect(void *ctx, const char *name)
{
	const struct tj_node *node = lookup_node(ctx, name);

	return node && tj_node_is_suspect(node);
}

static void describe(const struct tj_action *a, char *buf, size_t size)
{
	if (a->kind == TJ_ACTION_EVENT)
		snprintf(buf, size, "%d Event %s %s: %s", a->stage,
		         a->warning ? "Warning" : "Normal", a->reason, a->message);
	else
		snprintf(buf, size, "%d %s %s%s", a->stage, tj_action_kind_name(a->kind), a->name,
		         a->kind == TJ_ACTION_DELETE_POD && a->grace_seconds == 0 ? " (force)"
		                                                                  : "");
}

static void summarize(const struct tj_trainjob_status *s, char *buf, size_t size)
{
	char conds[256] = "", jobs[64] = "-";

	for (size_t i = 0; i < s->n_conditions; i++) {
		size_t len = strlen(conds);

		snprintf(conds + len, sizeof(conds) - len, "%s%s=%s", i ? "," : "",
		         tj_condition_type_name(s->conditions[i].type), s->conditions[i].reason);
	}
	if (s->has_jobs_status)
		snprintf(jobs, sizeof(jobs), "%d/%d/%d/%d/%d", s->jobs[0].active, s->jobs[0].ready,
		         s->jobs[0].succeeded, s->jobs[0].failed, s->jobs[0].suspended);
	snprintf(buf, size, "%s|%s|%s|restarts=%d|%s|jobs=%s", tj_state_name(s->state), s->reason,
	         s->message, s->restart_count, conds, jobs);
}

static void summarize_queue(const struct tj_plan *plan, char *buf, size_t size)
{
	const struct tj_plan_want *w = &plan->gang.want;
	char want[512] = "-";

	if (w->wanted) {
		int len = snprintf(want, sizeof(want),
		                   "pods=%d/%d restart=%d class=%s walltime=%lld", w->num_pods,
		                   w->num_nodes, w->restart, w->gpu_class, (long long)w->walltime);

		for (size_t i = 0; i < w->n_excluded && len < (int)sizeof(want); i++)
			len += snprintf(want + len, sizeof(want) - (size_t)len, "%s%s",
			                i ? "," : " avoid=", w->excluded[i]);
		if (w->not_before && len < (int)sizeof(want))
			snprintf(want + len, sizeof(want) - (size_t)len, " from=%lld",
			         (long long)w->not_before);
		assert_non_null(w->pod);
	} else {
		assert_null(w->pod);
	}
	snprintf(buf, size, "%s|pos=%d|start=%lld", want, plan->status.queue_position,
	         (long long)plan->status.expected_start_time);
}

static struct tj_plan *plan_case(const struct plan_case *c, struct fixture *f)
{
	struct tj_problem why = { "", "" };
	struct tj_plan *plan = NULL;
	struct tj_config config;

	memset(f, 0, sizeof(*f));
	f->job = job_of(c);
	if (c->runtime_json) {
		cJSON *j = jlit(c->runtime_json);

		assert_int_equal(tj_runtime_from_json(j, &f->runtime), 0);
		cJSON_Delete(j);
	} else if (c->runtime) {
		f->runtime = make_runtime(c->runtime);
	} else {
		tj_problem_set(&why, "RuntimeNotFound",
		               "ClusterTrainingRuntime %s not found; the job starts when it is "
		               "created",
		               f->job->runtime_name);
	}
	pods_of(c, f);
	nodes_of(c, f);
	config = test_config;
	config.failure_policy = (struct tj_failure_policy *)c->policy;
	config.walltime = (struct tj_walltime_policy *)c->walltime;
	if (c->exempt_namespace) {
		config.command_exempt_namespaces = (char **)&c->exempt_namespace;
		config.n_command_exempt_namespaces = 1;
	}
	assert_int_equal(
	        tj_plan_trainjob(
	                &(struct tj_plan_input){
	                        .job = f->job,
	                        .runtime = f->runtime,
	                        .runtime_problem = &why,
	                        .config = &config,
	                        .pods = f->pod_ptrs,
	                        .n_pods = c->n_pods,
	                        .node_lookup = c->n_nodes ? lookup_node : NULL,
	                        .node_ctx = f,
	                        .node_suspect = node_suspect,
	                        .ticket = c->ticket,
	                        .jobs = c->jobs,
	                        .workload = c->workload,
	                        .now = NOW,
	                        .progress_seen = c->progress_seen ? NOW - c->progress_seen : 0,
	                        .native_gang = c->native_gang },
	                &plan),
	        0);
	return plan;
}

static void fixture_clear(struct fixture *f)
{
	tj_trainjob_free(f->job);
	tj_runtime_free(f->runtime);
}

static void run_table(const struct plan_case *table, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct plan_case *c = &table[i];
		struct fixture f;
		struct tj_plan *plan;
		char got[2048];
		size_t n_want = 0;

		print_message("# case: %s\n", c->name);
		plan = plan_case(c, &f);
		while (n_want < MAX_ACTIONS && c->want[n_want])
			n_want++;
		for (size_t a = 0; a < plan->n_actions; a++) {
			describe(&plan->actions[a], got, sizeof(got));
			print_message("#   action: %s\n", got);
		}
		for (size_t a = 0; a < plan->n_actions && a < n_want; a++) {
			const struct tj_action *act = &plan->actions[a];

			describe(act, got, sizeof(got));
			assert_string_equal(got, c->want[a]);
			/* Pod writes, and the PodGroup the scheduler holds the pods for, are
			 * never deferred; the Service and events always may be. */
			if (act->kind == TJ_ACTION_CREATE_POD ||
			    act->kind == TJ_ACTION_DELETE_POD || act->kind == TJ_ACTION_PATCH_POD ||
			    act->kind == TJ_ACTION_CREATE_WORKLOAD ||
			    act->kind == TJ_ACTION_CREATE_POD_GROUP)
				assert_false(act->deferrable);
			else if (act->kind != TJ_ACTION_PATCH_STATUS)
				assert_true(act->deferrable);
		}
		assert_int_equal(plan->n_actions, n_want);
		summarize(&plan->status, got, sizeof(got));
		assert_string_equal(got, c->want_status);
		assert_int_equal(plan->requeue_after, c->want_requeue);
		assert_int_equal(plan->status.deadline, c->want_deadline);
		assert_string_equal(plan->restart_reason,
		                    c->want_restart_reason ? c->want_restart_reason : "");
		assert_int_equal(plan->status.infrastructure_restarts, c->want_infra);
		assert_int_equal(plan->status.preempt_at, c->want_preempt_at);
		assert_int_equal(plan->status.preemptions, c->want_preemptions);
		assert_int_equal(plan->stalled, c->want_stalled);
		summarize_queue(plan, got, sizeof(got));
		assert_string_equal(got, c->want_queue ? c->want_queue : "-|pos=0|start=0");
		tj_plan_free(plan);
		fixture_clear(&f);
	}
}

static void test_stall_table(void **state)
{
	run_table(stall_cases, sizeof(stall_cases) / sizeof(stall_cases[0]));
}

static void test_retention_table(void **state)
{
	struct fixture f;
	struct tj_plan *plan;

	run_table(retention_cases, sizeof(retention_cases) / sizeof(retention_cases[0]));
	/* The failed container's message, without its trailing newline, in lastFailure. */
	plan = plan_case(&retention_cases[0], &f);
	assert_string_equal(plan->status.last_failure.message,
	                    "epoch 3\nRuntimeError: CUDA out of memory");
	tj_plan_free(plan);
	fixture_clear(&f);
}

static const struct plan_case *case_named(const char *prefix);

/* case: a status patch that only reports progress may wait behind other jobs' pods; one that
 * records a restart or a failure (stage 0, before the pods are touched) may not. */
static void test_deferrable_status_patches(void **state)
{
	static const struct {
		const char *case_prefix;
		bool deferrable;
	} want[] = {
		{ "a new job creates the Service", true },
		{ "every pod running: Running", true },
		{ "a failed worker restarts the gang", false },
		{ "a spent budget fails the job", false },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct fixture f;
		struct tj_plan *plan = plan_case(case_named(want[i].case_prefix), &f);
		size_t n = 0;

		print_message("# case: %s\n", want[i].case_prefix);
		for (size_t a = 0; a < plan->n_actions; a++)
			if (plan->actions[a].kind == TJ_ACTION_PATCH_STATUS) {
				assert_int_equal(plan->actions[a].deferrable, want[i].deferrable);
				n++;
			}
		assert_int_equal(n, 1);
		tj_plan_free(plan);
		fixture_clear(&f);
	}
}

static void test_plan_table(void **state)
{
	run_table(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_fault_table(void **state)
{
	run_table(fault_cases, sizeof(fault_cases) / sizeof(fault_cases[0]));
}

static void test_budget_table(void **state)
{
	run_table(budget_cases, sizeof(budget_cases) / sizeof(budget_cases[0]));
}

static const struct plan_case *case_named(const char *prefix)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strncmp(cases[i].name, prefix, strlen(prefix)) == 0)
			return &cases[i];
	for (size_t i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]); i++)
		if (strncmp(fault_cases[i].name, prefix, strlen(prefix)) == 0)
			return &fault_cases[i];
	fail_msg("no case %s", prefix);
	return NULL;
}

static const struct tj_action *action_of(const struct tj_plan *plan, enum tj_action_kind kind,
                                         size_t nth)
{
	for (size_t i = 0; i < plan->n_actions; i++)
		if (plan->actions[i].kind == kind && nth-- == 0)
			return &plan->actions[i];
	fail_msg("no action %s", tj_action_kind_name(kind));
	return NULL;
}

/* The case of table whose name starts with prefix. */
static const struct plan_case *case_in(const struct plan_case *table, size_t n, const char *prefix)
{
	for (size_t i = 0; i < n; i++)
		if (strncmp(table[i].name, prefix, strlen(prefix)) == 0)
			return &table[i];
	fail_msg("no case %s", prefix);
	return NULL;
}

#define STALL_CASE(prefix)                                                                         \
	case_in(stall_cases, sizeof(stall_cases) / sizeof(stall_cases[0]), prefix)

/* A stall's writes: lastFailure names rank 0 and what was found; a replaced attempt's pods
 * lose their rank's labels and are stopped in one patch; a failed job's are only stopped;
 * a crashed (finished) pod kept for its logs is only relabelled. */
static void test_stall_patches(void **state)
{
	struct fixture f;
	struct tj_plan *plan = plan_case(STALL_CASE("progress unchanged"), &f);

	assert_json_equal(tj_json_path(action_of(plan, TJ_ACTION_PATCH_STATUS, 0)->object,
	                               "status.lastFailure"),
	                  "{'rank':0,'node':'gh200-1','pod':'vit-node-0-0-a0','reason':'Stalled','"
	                  "time':'" NOW_S "','message':'" STALL_WHAT "'}");
	assert_json_equal(action_of(plan, TJ_ACTION_PATCH_POD, 2)->object,
	                  "{'metadata':{'uid':'vit-node-0-2-a0','labels':{"
	                  "'jobset.sigs.k8s.io/jobset-name':null,"
	                  "'jobset.sigs.k8s.io/replicatedjob-name':null,"
	                  "'batch.kubernetes.io/job-completion-index':null,"
	                  "'trainjob.flame.dev/failed-attempt':'0'},'annotations':{"
	                  "'batch.kubernetes.io/job-completion-index':null}},"
	                  "'spec':{'activeDeadlineSeconds':1}}");
	assert_string_equal(plan->status.last_failure.message, STALL_WHAT);
	tj_plan_free(plan);
	fixture_clear(&f);

	plan = plan_case(STALL_CASE("a stall with the infrastructure's budget spent"), &f);
	assert_json_equal(action_of(plan, TJ_ACTION_PATCH_POD, 0)->object,
	                  "{'metadata':{'uid':'vit-node-0-0-a10'},"
	                  "'spec':{'activeDeadlineSeconds':1}}");
	tj_plan_free(plan);
	fixture_clear(&f);

	plan = plan_case(case_named("a failed worker restarts the gang"), &f);
	assert_null(tj_json_path(action_of(plan, TJ_ACTION_PATCH_POD, 0)->object, "spec"));
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* After a stall the next attempt avoids no node: the stall named rank 0's only to say where
 * the job ran. */
static void test_stall_avoids_no_node(void **state)
{
	struct fixture f;
	struct tj_plan *plan =
	        plan_case(STALL_CASE("a kept pod that still runs past its time"), &f);
	const cJSON *terms =
	        tj_json_path(action_of(plan, TJ_ACTION_CREATE_POD, 0)->object,
	                     "spec.affinity.nodeAffinity."
	                     "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");

	assert_json_equal(terms,
	                  "[{'matchExpressions':["
	                  "{'key':'nvidia.com/gpu.product','operator':'In','values':["
	                  "'NVIDIA-GH200-480GB']},"
	                  "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}]}]");
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* ---- admission ---- */

static const struct tj_admission_decision waiting_second = {
	.verdict = TJ_ADMISSION_WAITING,
	.reason = TJ_ADMISSION_REASON_RESOURCES,
	.message = "position 2 of 3 in gh200: needs 4 nodes x 4 GPUs, 1 such node free; expected "
	           "start 13:00Z",
	.position = 2,
	.queue_length = 3,
	.expected_start = NOW + 3600,
	.free_nodes = 1,
};
static const struct tj_admission_decision never_fits = {
	.verdict = TJ_ADMISSION_NEVER_FITS,
	.reason = TJ_ADMISSION_REASON_NEVER,
	.message = "gh200 has 2 nodes of 4 GPUs: a job of 4 nodes x 4 GPUs never fits; at most 2",
};
static const struct tj_admission_decision quota_never_fits = {
	.verdict = TJ_ADMISSION_NEVER_FITS,
	.reason = TJ_ADMISSION_REASON_QUOTA,
	.message = "ResourceQuota gpus of namespace ns allows 8 requests.nvidia.com/gpu in all; "
	           "the job's gang needs 16: it never fits",
};
static const struct tj_admission_decision admitted_backfill = {
	.verdict = TJ_ADMISSION_ADMITTED,
	.backfilled = true,
};
static const char *const four_nodes[] = { "gh200-1", "gh200-2", "gh200-3", "gh200-4" };

/* The status after the live ranks were given back (RESTART_GIVEN_BACK), none active. */
#define GIVEN_BACK_STATUS                                                                          \
	"{'state':'Restarting','reason':'Resources','message':'" RESTART_GIVEN_BACK                \
	"','restartCount':1,'observedGeneration':2," STARTED                                       \
	",'lastFailure':{'rank':1,'node':'gh200-2','pod':'vit-node-0-1-a0','reason':'Error',"      \
	"'exitCode':1,'time':'2026-11-29T11:50:00Z'}," JOBS(0, 0, 0, 0) ",'conditions':[]}"
/* A pod of the current attempt running on a node, being deleted. */
#define GOING(r, on)                                                                               \
	{                                                                                          \
		.rank = r, .phase = TJ_POD_RUNNING, .ready = true, .node = on, .deleting = true    \
	}

static const struct tj_admission_ticket adm_none = { .pin_timeout = 60 };
static const struct tj_admission_ticket adm_creating = { .pin_timeout = 60, .creating = true };
/* The queue's entry still holds the admission of a gang that is gone (not admitted now). */
static const struct tj_admission_ticket adm_stale = { .decision = &admitted_backfill,
	                                              .pin_timeout = 60 };
#define RESTART_GIVEN_BACK                                                                         \
	"the replacements found no room within 600 s of the failure of rank 1; the 3 live ranks "  \
	"gave their nodes back, and the gang waits for admission whole"

static const struct tj_admission_ticket adm_waiting_patient = { .decision = &waiting_second,
	                                                        .pin_timeout = 60,
	                                                        .restart_wait = 600 };
static const struct tj_admission_ticket adm_waiting = { .decision = &waiting_second,
	                                                .pin_timeout = 60 };
/* A restart in its backoff, held in its place until its end (TJ_ADMISSION_REASON_BEGIN). */
static const struct tj_admission_decision waiting_begin = {
	.verdict = TJ_ADMISSION_WAITING,
	.reason = TJ_ADMISSION_REASON_BEGIN,
	.message = "position 1 of 3 in gh200: needs 1 of 4 nodes x 4 GPUs, 2 such nodes free; "
	           "expected start 12:00Z",
	.position = 1,
	.queue_length = 3,
	.expected_start = NOW + 5,
	.free_nodes = 2,
};
static const struct tj_admission_ticket adm_waiting_begin = { .decision = &waiting_begin,
	                                                      .pin_timeout = 60,
	                                                      .restart_wait = 600 };
static const struct tj_admission_ticket adm_never = { .decision = &never_fits, .pin_timeout = 60 };
static const struct tj_admission_ticket adm_quota_never = { .decision = &quota_never_fits,
	                                                    .pin_timeout = 60 };
static const struct tj_admission_ticket adm_four = { .admitted = true,
	                                             .nodes = four_nodes,
	                                             .n_nodes = 4,
	                                             .decision = &admitted_backfill,
	                                             .pin_timeout = 60 };
static const struct tj_admission_ticket adm_one = {
	.admitted = true, .nodes = four_nodes, .n_nodes = 1, .pin_timeout = 60
};
static const struct tj_admission_ticket adm_two = {
	.admitted = true, .nodes = four_nodes, .n_nodes = 2, .pin_timeout = 60
};

#define WAITING_MSG                                                                                \
	"position 2 of 3 in gh200: needs 4 nodes x 4 GPUs, 1 such node free; expected start "      \
	"13:00Z"
#define QUEUED_STATUS                                                                              \
	"{'state':'Queued','reason':'Resources','message':'" WAITING_MSG "','restartCount':0,"     \
	"'observedGeneration':2,'queuePosition':2,'expectedStartTime':'2026-11-29T13:00:00Z',"     \
	"'startTime':null," JOBS(0, 0, 0, 0) ",'conditions':[]}"
#define PINNED_UNSCHEDULABLE(r, msg, age)                                                          \
	{                                                                                          \
		r, 0, TJ_POD_PENDING, false, NULL, false, 0, NULL, NULL, msg, NULL, NULL, age,     \
		        "gh200-4"                                                                  \
	}

#define PINNED(r, node)                                                                            \
	{                                                                                          \
		r, 0, TJ_POD_PENDING, false, NULL, false, 0, NULL, NULL, NULL, NULL, NULL, 1, node \
	}

#define INCOMPLETE                                                                                 \
	"the gang's creates stopped part way; the 2 pods of the gang, created before the rest, "   \
	"held no node and are deleted; the gang is created again whole once it can be"
#define KUEUE_IGNORED                                                                              \
	"the label kueue.x-k8s.io/queue-name is ignored: this controller runs without Kueue "      \
	"(--kueue), so the job is queued by its own admission"

static const struct plan_case admission_cases[] = {
	{ .name = "a new job waits for its first verdict: no pod, and only its status",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_none,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Queued|Resources|waiting for admission|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=0|start=0" },
	{ .name = "the admission of a gang that is gone is no verdict on the next: the job waits "
	          "for its own, with a reason and a message, and no event says an empty one",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_stale,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Queued|Resources|waiting for admission|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=0|start=0" },
	{ .name = "a queued job shows its place, its need and its expected start",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_waiting,
	  .want = { "0 PatchStatus vit", "0 Event Normal Queued: " WAITING_MSG },
	  .want_status = "Queued|Resources|" WAITING_MSG "|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=2|start=1795957200" },
	{ .name = "the Kueue label without Kueue: queued here, and a warning says so with the "
	          "first verdict",
	  .labels = "{'kueue.x-k8s.io/queue-name':'user-queue'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_waiting,
	  .want = { "0 PatchStatus vit", "0 Event Warning KueueLabelIgnored: " KUEUE_IGNORED,
	            "0 Event Normal Queued: " WAITING_MSG },
	  .want_status = "Queued|Resources|" WAITING_MSG "|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=2|start=1795957200" },
	{ .name = "the Kueue label without Kueue, told once: a job already queued says nothing",
	  .labels = "{'kueue.x-k8s.io/queue-name':'user-queue'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = QUEUED_STATUS,
	  .ticket = &adm_waiting,
	  .want_status = "Queued|Resources|" WAITING_MSG "|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=2|start=1795957200" },
	{ .name = "a queued job whose verdict did not change writes nothing",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = QUEUED_STATUS,
	  .ticket = &adm_waiting,
	  .want = { NULL },
	  .want_status = "Queued|Resources|" WAITING_MSG "|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=2|start=1795957200" },
	{ .name = "a queued job's walltime does not run: no deadline, no start time",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':30,'trainer':{"
	          "'numNodes':4,'resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}}}",
	  .runtime = "torch-gh200",
	  .status = QUEUED_STATUS,
	  .ticket = &adm_waiting,
	  .want = { NULL },
	  .want_status = "Queued|Resources|" WAITING_MSG "|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=30|pos=2|start=1795957200" },
	{ .name = "an admitted gang is created whole, and its clock starts (a walltime shorter "
	          "than the warning: the pods are created with the deadline)",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':30,'trainer':{"
	          "'numNodes':4,'resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}}}",
	  .runtime = "torch-gh200",
	  .status = QUEUED_STATUS,
	  .ticket = &adm_four,
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreatePod vit-node-0-1-a0",
	            "0 CreatePod vit-node-0-2-a0", "0 CreatePod vit-node-0-3-a0",
	            "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Admitted: 4 pods pinned to gh200-1, gh200-2, gh200-3, gh200-4 "
	            "(backfilled ahead of the queue's head)",
	            "1 Event Normal Created: creating 4 pods from ClusterTrainingRuntime "
	            "torch-gh200",
	            "1 Event Normal DeadlineWarning: the job ends at 2026-11-29T12:00:30Z: its "
	            "pods have the deadline in /etc/trainjob/deadline" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=0/0/0/0/0",
	  .want_requeue = 30,
	  .want_deadline = NOW + 30 },
	{ .name = "an admitted gang created before its status was written: the retry tells the "
	          "admission and records the start",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = QUEUED_STATUS,
	  .ticket = &adm_none,
	  .pods = { PINNED(0, "gh200-5"), PINNED(1, "gh200-6"), PINNED(2, "gh200-7"),
	            PINNED(3, "gh200-8") },
	  .n_pods = 4,
	  .want = { "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Admitted: 4 pods pinned to gh200-5, gh200-6, gh200-7, gh200-8",
	            "1 Event Normal Created: creating 4 pods from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "an admitted gang of one pod is created without the gang's gate",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':1,"
	          "'resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}}}",
	  .runtime = "torch-gh200",
	  .status = QUEUED_STATUS,
	  .ticket = &adm_one,
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Admitted: 1 pod pinned to gh200-1",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "an admission for fewer pods than are missing is no admission",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_two,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Queued|Resources|waiting for admission|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=0|start=0" },
	{ .name = "a job that never fits fails at once",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_never,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: NeverFits: gh200 has 2 nodes of 4 GPUs: a job of 4 "
	            "nodes x 4 GPUs never fits; at most 2" },
	  .want_status = "Failed|NeverFits|gh200 has 2 nodes of 4 GPUs: a job of 4 nodes x 4 GPUs "
	                 "never fits; at most 2|restarts=0|Failed=NeverFits|jobs=0/0/0/0/0" },
	{ .name = "a job its namespace's ResourceQuota can never hold fails with the quota's "
	          "reason",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_quota_never,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: QuotaExceeded: ResourceQuota gpus of namespace ns "
	            "allows 8 requests.nvidia.com/gpu in all; the job's gang needs 16: it never "
	            "fits" },
	  .want_status = "Failed|QuotaExceeded|ResourceQuota gpus of namespace ns allows 8 "
	                 "requests.nvidia.com/gpu in all; the job's gang needs 16: it never "
	                 "fits|restarts=0|Failed=QuotaExceeded|jobs=0/0/0/0/0" },
	{ .name = "a pinned pod unschedulable within the timeout: the scheduler's word, and a "
	          "look when it ends",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods "
	            "running'," STARTED "}",
	  .ticket = &adm_none,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            PINNED_UNSCHEDULABLE(3,
	                                 "0/8 nodes are available: 1 Insufficient "
	                                 "nvidia.com/gpu.",
	                                 10) },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "0 Event Warning Unschedulable: rank 3: 0/8 nodes are "
	                                 "available: 1 Insufficient nvidia.com/gpu." },
	  .want_status = "Pending|Unschedulable|rank 3: 0/8 nodes are available: 1 Insufficient "
	                 "nvidia.com/gpu.|restarts=0||jobs=1/0/0/0/0",
	  .want_requeue = 50 },
	{ .name = "a pinned pod unschedulable past the timeout gives the whole gang back",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods "
	            "running'," STARTED "}",
	  .ticket = &adm_none,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            PINNED_UNSCHEDULABLE(3, "node(s) didn't match Pod's node affinity", 61) },
	  .n_pods = 4,
	  .nodes = { NODE_OK("gh200-1"), NODE_OK("gh200-2"), NODE_OK("gh200-3") },
	  .n_nodes = 3,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "0 DeletePod vit-node-0-2-a0", "0 DeletePod vit-node-0-3-a0",
	            "1 PatchStatus vit",
	            "1 Event Warning GangReleased: rank 3 could not be scheduled on its node "
	            "gh200-4 within 60 s (node(s) didn't match Pod's node affinity); the gang was "
	            "given back and waits for admission again, kept off that node for 10 "
	            "minutes" },
	  .want_status = "Queued|Resources|rank 3 could not be scheduled on its node gh200-4 "
	                 "within 60 s (node(s) didn't match Pod's node affinity); the gang was "
	                 "given back and waits for admission again, kept off that node for 10 "
	                 "minutes|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "a restart's gang given back for a pinned pod asks for the whole gang at once, "
	          "keeping its place ahead of the queue",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Restarting','reason':'PodsStarting','message':'0 of 4 pods "
	            "running','restartCount':1," STARTED "}",
	  .ticket = &adm_none,
	  .pods = { RUNNING_A(0, 1, "gh200-1"),
	            RUNNING_A(1, 1, "gh200-2"),
	            RUNNING_A(2, 1, "gh200-3"),
	            { .rank = 3,
	              .attempt = 1,
	              .phase = TJ_POD_PENDING,
	              .unschedulable = "full",
	              .age = 61,
	              .pinned = "gh200-4" } },
	  .n_pods = 4,
	  .want = { "0 DeletePod vit-node-0-0-a1", "0 DeletePod vit-node-0-1-a1",
	            "0 DeletePod vit-node-0-2-a1", "0 DeletePod vit-node-0-3-a1",
	            "1 PatchStatus vit",
	            "1 Event Warning GangReleased: rank 3 could not be scheduled on its node "
	            "gh200-4 within 60 s (full); the gang was given back and waits for admission "
	            "again, kept off that node for 10 minutes" },
	  .want_status = "Restarting|Resources|rank 3 could not be scheduled on its node gh200-4 "
	                 "within 60 s (full); the gang was given back and waits for admission "
	                 "again, kept off that node for 10 minutes|restarts=1||jobs=1/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0|pos=0|start=0" },
	{ .name = "every pod of the gang exists: the gates of those still held back are lifted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods "
	            "running'," STARTED "}",
	  .ticket = &adm_none,
	  .pods = { { .rank = 0, .phase = TJ_POD_PENDING, .pinned = "gh200-1", .gated = true },
	            { .rank = 1, .phase = TJ_POD_PENDING, .pinned = "gh200-2", .gated = true },
	            { .rank = 2, .phase = TJ_POD_PENDING, .pinned = "gh200-3" },
	            { .rank = 3, .phase = TJ_POD_PENDING, .pinned = "gh200-4", .gated = true } },
	  .n_pods = 4,
	  .want = { "0 PatchPod vit-node-0-0-a0", "0 PatchPod vit-node-0-1-a0",
	            "0 PatchPod vit-node-0-3-a0", "1 PatchStatus vit" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "a gang refused in part: the pods created before the refusal, gated, are "
	          "deleted, and the gang keeps its place in the queue, for all its pods",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status =
	          "{'state':'Pending','reason':'FailedCreate','message':'pods \\\"vit-node-0-1-a0"
	          "\\\" is forbidden: exceeded quota: gpus, requested: requests.nvidia.com/gpu=4, "
	          "used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4'}",
	  .ticket = &adm_none,
	  .pods = { { .rank = 0, .phase = TJ_POD_PENDING, .pinned = "gh200-1", .gated = true } },
	  .n_pods = 1,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 Event Warning GangRefused: pods \"vit-node-0-1-a0\" is forbidden: exceeded "
	            "quota: gpus, requested: requests.nvidia.com/gpu=4, used: "
	            "requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4; the 1 pod of "
	            "the gang, created before the rest, held no node and is deleted; the gang is "
	            "created again whole once it can be" },
	  .want_status = "Queued|FailedCreate|pods \"vit-node-0-1-a0\" is forbidden: exceeded "
	                 "quota: gpus, requested: requests.nvidia.com/gpu=4, used: "
	                 "requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4; the 1 pod "
	                 "of the gang, created before the rest, held no node and is deleted; the "
	                 "gang is created again whole once it can be|restarts=0||jobs=1/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=0|start=0",
	  .want_requeue = 30 },
	{ .name = "a gang whose creates stopped part way (a controller killed): its gated pods "
	          "are deleted, and it keeps its place in the queue, for all its pods",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_none,
	  .pods = { { .rank = 0, .phase = TJ_POD_PENDING, .pinned = "gh200-1", .gated = true },
	            { .rank = 2, .phase = TJ_POD_PENDING, .pinned = "gh200-3", .gated = true } },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-2-a0", "1 Event Warning GangIncomplete: " INCOMPLETE },
	  .want_status = "Queued|Resources|" INCOMPLETE "|restarts=0||jobs=1/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=0|start=0" },
	{ .name = "a gang being created whose pods the cache shows in part: nothing is deleted",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .ticket = &adm_creating,
	  .pods = { { .rank = 0, .phase = TJ_POD_PENDING, .pinned = "gh200-1", .gated = true } },
	  .n_pods = 1,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Restarting|Resources|waiting for admission|restarts=0||jobs=1/0/0/0/0",
	  .want_queue = "pods=3/4 restart=1 class=gh200 walltime=0|pos=0|start=0" },
	{ .name = "a restart's replacements wait in the queue as Restarting, ahead of the rest",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_ACTIVE(1, "gh200-2", "2026-11-29T11:00:00Z", 0),
	  .ticket = &adm_waiting,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Restarting|Resources|" WAITING_MSG "|restarts=1||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-2|pos=2|start="
	                "1795957200" },
	{ .name = "a restart's gang waits for every old pod to go before it is created whole, and "
	          "asks the queue for it whole meanwhile, keeping its place",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_ACTIVE(1, "gh200-2", "2026-11-29T11:00:00Z", 0),
	  .ticket = &adm_waiting,
	  .pods = { { 2, 0, TJ_POD_RUNNING, true, "gh200-3", true, 0, NULL, NULL, NULL, NULL,
	              NULL } },
	  .n_pods = 1,
	  .want = { NULL },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-2|pos=0|start=0" },
	{ .name = "a worker's replacement that waits within restartWaitSeconds keeps the live "
	          "ranks, and looks again when it ends",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_ACTIVE(1, "gh200-2", "2026-11-29T11:58:00Z", 3),
	  .ticket = &adm_waiting_patient,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(2, "gh200-3"), RUNNING(3, "gh200-4") },
	  .n_pods = 3,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Restarting|Resources|" WAITING_MSG "|restarts=1||jobs=1/0/0/0/0",
	  .want_queue = "pods=1/4 restart=1 class=gh200 walltime=0 avoid=gh200-2|pos=2|start="
	                "1795957200",
	  .want_requeue = 480 },
	{ .name = "a worker's replacement in its backoff asks the queue for its rank from the "
	          "backoff's end, so that nobody behind takes the nodes it needs meanwhile; its "
	          "status stays",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_ACTIVE(1, "gh200-2", "2026-11-29T11:59:55Z", 1),
	  .ticket = &adm_waiting_begin,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(2, "gh200-3"), RUNNING(3, "gh200-4") },
	  .n_pods = 3,
	  .want = { NULL },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=1/0/0/0/0",
	  .want_queue = "pods=1/4 restart=1 class=gh200 walltime=0 avoid=gh200-2 from=1795953605"
	                "|pos=0|start=0",
	  .want_requeue = 5 },
	{ .name = "the plan after the restart, while the failed pod is still its rank's (not yet "
	          "kept for its logs), keeps asking the queue for the replacement: a plan that "
	          "wanted nothing would have the queue drop the job and give its room away",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RANK1_RESTART_RECORDED,
	  .ticket = &adm_none,
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 1, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchPod vit-node-0-1-a0" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/1/0",
	  .want_queue = "pods=1/4 restart=1 class=gh200 walltime=0 avoid=gh200-2 from=1795953605"
	                "|pos=0|start=0",
	  .want_requeue = 5 },
	{ .name = "under the policy Gang, a restart in its backoff asks the queue for every rank "
	          "while the old attempt's pods still go, not only for the ranks whose pod is gone",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Gang'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RANK1_RESTART_RECORDED,
	  .ticket = &adm_none,
	  .pods = { GOING(0, "gh200-1"),
	            { .rank = 1,
	              .phase = TJ_POD_FAILED,
	              .node = "gh200-2",
	              .exit_code = 1,
	              .exit_reason = "Error",
	              .kept = true },
	            GOING(2, "gh200-3"),
	            GOING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-2 from=1795953605"
	                "|pos=0|start=0",
	  .want_requeue = 5 },
	{ .name = "under the policy Gang, a restart whose old pods all still go, the failed one "
	          "too, asks the queue for every rank",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Gang'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RANK1_RESTART_RECORDED,
	  .ticket = &adm_none,
	  .pods = { GOING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", true, 1, "Error" },
	            GOING(2, "gh200-3"),
	            GOING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Restarting|WorkerFailed|m|restarts=1||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-2 from=1795953605"
	                "|pos=0|start=0",
	  .want_requeue = 5 },
	{ .name = "the plan that restarts a worker asks the queue at once for its replacement, "
	          "from the backoff's end and off the failed node: the node came free as the pod "
	          "failed, and a cycle before the next plan would give the room to the jobs behind",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .ticket = &adm_none,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            { 2, 0, TJ_POD_FAILED, false, "gh200-3", false, 1, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 PatchPod vit-node-0-2-a0",
	            "1 Event Warning Restarting: rank 2 on node gh200-3 failed (exit code 1, "
	            "Error); replacing that worker in 10 s (restart 1 of 3)" },
	  .want_status =
	          "Restarting|WorkerFailed|rank 2 on node gh200-3 failed (exit code 1, Error); "
	          "replacing that worker in 10 s (restart 1 of 3)|restarts=1||jobs=0/0/0/1/0",
	  .want_queue = "pods=1/4 restart=1 class=gh200 walltime=0 avoid=gh200-3 from=1795953610"
	                "|pos=0|start=0",
	  .want_requeue = 10,
	  .want_restart_reason = "WorkerFailed" },
	{ .name = "a worker on an unreachable node is replaced the same way: its running pod is "
	          "what the plan asks a replacement for",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .ticket = &adm_none,
	  RUNNING4,
	  FOUR_NODES(NODE_OK("gh200-1"), NODE_OK("gh200-2"), { "gh200-3", TJ_COND_UNKNOWN, 60 },
	             NODE_OK("gh200-4")),
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-2-a0 (force)",
	            "1 Event Warning Restarting: rank 2 on node gh200-3 failed (NodeUnreachable: "
	            "condition Ready is Unknown); replacing that worker in 10 s (infrastructure "
	            "restart 1 of 10)" },
	  .want_status = "Restarting|NodeUnreachable|rank 2 on node gh200-3 failed "
	                 "(NodeUnreachable: condition Ready is Unknown); replacing that worker in "
	                 "10 s (infrastructure restart 1 of 10)|restarts=1||jobs=1/1/0/0/0",
	  .want_queue = "pods=1/4 restart=1 class=gh200 walltime=0 avoid=gh200-3 from=1795953610"
	                "|pos=0|start=0",
	  .want_requeue = 10,
	  .want_restart_reason = "NodeUnreachable",
	  .want_infra = 1 },
	{ .name = "under the restart policy Gang, the plan that restarts asks for the whole gang",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RUNNING_STATUS,
	  .ticket = &adm_none,
	  .pods = { RUNNING(0, "gh200-1"),
	            RUNNING(1, "gh200-2"),
	            { 2, 0, TJ_POD_FAILED, false, "gh200-3", false, 1, "Error", NULL, NULL, NULL,
	              NULL },
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 PatchPod vit-node-0-2-a0",
	            "1 DeletePod vit-node-0-3-a0",
	            "1 Event Warning Restarting: rank 2 on node gh200-3 failed (exit code 1, "
	            "Error); replacing all workers in 10 s (restart 1 of 3)" },
	  .want_status =
	          "Restarting|WorkerFailed|rank 2 on node gh200-3 failed (exit code 1, Error); "
	          "replacing all workers in 10 s (restart 1 of 3)|restarts=1||jobs=0/0/0/1/0",
	  .want_restart_reason = "WorkerFailed",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-3 from=1795953610"
	                "|pos=0|start=0",
	  .want_requeue = 10 },
	{ .name = "once the backoff is over, the queue's wait for its end says nothing: the "
	          "replacement waits to be decided",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_ACTIVE(1, "gh200-2", "2026-11-29T11:59:50Z", 1),
	  .ticket = &adm_waiting_begin,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(2, "gh200-3"), RUNNING(3, "gh200-4") },
	  .n_pods = 3,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Restarting|Resources|waiting for admission|restarts=1||jobs=1/0/0/0/0",
	  .want_queue = "pods=1/4 restart=1 class=gh200 walltime=0 avoid=gh200-2|pos=0|start=0" },
	{ .name = "a worker's replacement that waited past restartWaitSeconds gives the live "
	          "ranks back, and the gang waits whole",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = RESTARTED_ACTIVE(1, "gh200-2", "2026-11-29T11:50:00Z", 3),
	  .ticket = &adm_waiting_patient,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(2, "gh200-3"), RUNNING(3, "gh200-4") },
	  .n_pods = 3,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-2-a0",
	            "0 DeletePod vit-node-0-3-a0", "1 PatchStatus vit",
	            "1 Event Warning GangReleased: " RESTART_GIVEN_BACK },
	  .want_status = "Restarting|Resources|" RESTART_GIVEN_BACK "|restarts=1||jobs=1/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-2|pos=0|start=0" },
	{ .name = "while the live ranks given back go, the ranks whose pods are gone are not asked "
	          "for alone (they would be created and run while the others go): the whole gang "
	          "is, ahead of the queue",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = GIVEN_BACK_STATUS,
	  .ticket = &adm_waiting_patient,
	  .pods = { GOING(0, "gh200-1"), GOING(2, "gh200-3") },
	  .n_pods = 2,
	  .want = { NULL },
	  .want_status = "Restarting|Resources|" RESTART_GIVEN_BACK "|restarts=1||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-2|pos=0|start=0" },
	{ .name = "an admission that comes while the given-back ranks go creates nothing until "
	          "they are gone",
	  .annotations = "{'trainjob.flame.dev/restart-policy':'Worker'}",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = GIVEN_BACK_STATUS,
	  .ticket = &adm_four,
	  .pods = { GOING(0, "gh200-1") },
	  .n_pods = 1,
	  .want = { NULL },
	  .want_status = "Restarting|Resources|" RESTART_GIVEN_BACK "|restarts=1||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=1 class=gh200 walltime=0 avoid=gh200-2|pos=0|start=0" },
};

static void test_admission_table(void **state)
{
	run_table(admission_cases, sizeof(admission_cases) / sizeof(admission_cases[0]));
}

/* ---- native gang scheduling ---- */

static const struct plan_case native_gang_cases[] = {
	{ .name = "native gang: a new job's pods come with its Workload and PodGroup",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .native_gang = true,
	  .want = { "0 CreateWorkload vit", "1 CreatePod vit-node-0-0-a0",
	            "1 CreatePod vit-node-0-1-a0", "1 CreatePod vit-node-0-2-a0",
	            "1 CreatePod vit-node-0-3-a0", "1 CreatePodGroup vit", "1 CreateService vit",
	            "2 PatchStatus vit",
	            "2 Event Normal Created: creating 4 pods from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=0/0/0/0/0" },
	{ .name = "native gang: pods that all exist and are bound post nothing of the gang again",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .native_gang = true,
	  .status = RUNNING_STATUS,
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2"), RUNNING(2, "gh200-3"),
	            RUNNING(3, "gh200-4") },
	  .n_pods = 4,
	  .want = { NULL },
	  .want_status = "Running|AllPodsRunning|4 of 4 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "native gang: while a pod waits unbound, its Workload and PodGroup are posted "
	          "again (a failed create must not hold the gang forever)",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .native_gang = true,
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 0, 0, 0) ",'conditions':[]}",
	  .pods = { PENDING(0), PENDING(1), PENDING(2), PENDING(3) },
	  .n_pods = 4,
	  .want = { "0 CreateWorkload vit", "1 CreatePodGroup vit" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "without native gang, unbound pods post nothing",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 0, 0, 0) ",'conditions':[]}",
	  .pods = { PENDING(0), PENDING(1), PENDING(2), PENDING(3) },
	  .n_pods = 4,
	  .want = { NULL },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=1/0/0/0/0" },
	{ .name = "native gang: a rank recreated after a restart joins the same PodGroup",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .native_gang = true,
	  .status = "{'state':'Restarting','reason':'WorkerFailed','message':'rank 1 on node "
	            "gh200-2 failed','restartCount':1,'observedGeneration':2," STARTED
	            ",'lastFailure':{'rank':1,'node':'gh200-2','pod':'vit-node-0-1-a0','reason':'"
	            "Error','exitCode':1,'time':'2026-11-29T11:59:00Z'}," JOBS(
	                    0, 0, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING_A(0, 1, "gh200-1"), RUNNING_A(2, 1, "gh200-3"),
	            RUNNING_A(3, 1, "gh200-4") },
	  .n_pods = 3,
	  .want = { "0 CreateWorkload vit", "1 CreatePod vit-node-0-1-a1", "1 CreatePodGroup vit",
	            "1 CreateService vit", "2 PatchStatus vit" },
	  .want_status = "Restarting|WorkerFailed|rank 1 on node gh200-2 "
	                 "failed|restarts=1||jobs=1/0/0/0/0" },
	{ .name = "native gang with the built-in admission: a queued job creates nothing",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .native_gang = true,
	  .status = QUEUED_STATUS,
	  .ticket = &adm_waiting,
	  .want = { NULL },
	  .want_status = "Queued|Resources|" WAITING_MSG "|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=0|pos=2|start=1795957200" },
	{ .name = "native gang: past its TTL the job's PodGroup and Workload go with its pods",
	  .spec = SPEC4,
	  .runtime_json = RUNTIME_TTL,
	  .native_gang = true,
	  .status = COMPLETE_AT("2026-11-29T11:50:00Z"),
	  .pods = SUCCEEDED_ALL,
	  .n_pods = 4,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "0 DeletePod vit-node-0-2-a0", "0 DeletePod vit-node-0-3-a0",
	            "0 DeleteService vit", "0 DeletePodGroup vit", "0 DeleteWorkload vit",
	            "1 PatchStatus vit",
	            "1 Event Normal CleanedUp: ttlSecondsAfterFinished (600 s) passed: the job's "
	            "pods, Service, PodGroup and Workload are deleted; the TrainJob keeps its "
	            "status" },
	  .want_status = "Complete|AllPodsSucceeded|all 4 pods "
	                 "succeeded|restarts=0|Complete=AllPodsSucceeded|jobs=0/0/1/0/0" },
};

/* case: each pod names the job's PodGroup; the Workload and the PodGroup are the gang of
 * numNodes, owned by the TrainJob. Without the API, pods carry no scheduling group. */
static void test_native_gang_objects(void **state)
{
	struct fixture f;
	struct tj_plan *plan;

	run_table(native_gang_cases, sizeof(native_gang_cases) / sizeof(native_gang_cases[0]));
	plan = plan_case(&native_gang_cases[0], &f);
	for (size_t r = 0; r < 4; r++)
		assert_json_equal(tj_json_path(action_of(plan, TJ_ACTION_CREATE_POD, r)->object,
		                               "spec.schedulingGroup"),
		                  "{'podGroupName':'vit'}");
	assert_string_equal(
	        tj_json_string(action_of(plan, TJ_ACTION_CREATE_POD_GROUP, 0)->object, "kind"),
	        "PodGroup");
	assert_json_equal(tj_json_path(action_of(plan, TJ_ACTION_CREATE_POD_GROUP, 0)->object,
	                               "spec.schedulingPolicy"),
	                  "{'gang':{'minCount':4}}");
	assert_json_equal(tj_json_path(action_of(plan, TJ_ACTION_CREATE_WORKLOAD, 0)->object,
	                               "spec.podGroupTemplates"),
	                  "[{'name':'node','schedulingPolicy':{'gang':{'minCount':4}}}]");
	tj_plan_free(plan);
	fixture_clear(&f);

	plan = plan_case(&cases[0], &f);
	assert_null(tj_json_path(action_of(plan, TJ_ACTION_CREATE_POD, 0)->object,
	                         "spec.schedulingGroup"));
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* The walltime of the deadline cases: gh200 jobs get 1 h by default and may ask for 2 h. */
static struct tj_walltime_override gh200_walltime[] = { { NULL, "gh200", { 3600, 7200 } } };
static const struct tj_walltime_policy walltime_1h = {
	.overrides = gh200_walltime,
	.n_overrides = 1,
	.warning_seconds = 300,
};

#define GIVEN_BACK                                                                                 \
	"rank 0 could not be scheduled on its node gh200-4 within 60 s (0/8 nodes are "            \
	"available); "                                                                             \
	"the gang was given back and waits for admission again, kept off that node for 10 "        \
	"minutes"
#define SPEC2 "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}"
/* A job of two running pods, started at 11:00, with that deadline in its status. */
#define RUNNING2_UNTIL(deadline)                                                                   \
	"{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "                     \
	"running','restartCount':0,'observedGeneration':2," STARTED ",'deadline':'" deadline       \
	"'," JOBS(1, 1, 0, 0) ",'conditions':[]}"
#define RUNNING2 "Running|AllPodsRunning|2 of 2 pods running|restarts=0||jobs=1/1/0/0/0"
#define WARNED(r, node, deadline)                                                                  \
	{                                                                                          \
		r, 0, TJ_POD_RUNNING, true, node, false, 0, NULL, NULL, NULL, NULL, NULL, 0, NULL, \
		        deadline                                                                   \
	}

static const struct plan_case deadline_cases[] = {
	{ .name = "defaultWalltime: a new job's deadline is its start plus its class's default; "
	          "look again at the warning",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreatePod vit-node-0-1-a0",
	            "0 CreatePod vit-node-0-2-a0", "0 CreatePod vit-node-0-3-a0",
	            "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 4 pods from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 4 pods running|restarts=0||jobs=0/0/0/0/0",
	  .want_requeue = 3300,
	  .want_deadline = NOW + 3600 },
	{ .name = "maxWalltime: a job that asks for more is refused before any pod exists",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':7201,'trainer':{"
	          "'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: PolicyViolation: spec.activeDeadlineSeconds (7201 s) "
	            "is longer than the maxWalltime of GPU class gh200, 2h (7200 s); ask for at "
	            "most 7200 s" },
	  .want_status = "Failed|PolicyViolation|spec.activeDeadlineSeconds (7201 s) is longer "
	                 "than the maxWalltime of GPU class gh200, 2h (7200 s); ask for at most "
	                 "7200 s|restarts=0|Failed=PolicyViolation|jobs=0/0/0/0/0" },
	{ .name = "maxWalltime: a job that asks for exactly that starts",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':7200,'trainer':{"
	          "'numNodes':1}}",
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreateService vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 1 pod from ClusterTrainingRuntime "
	            "torch-gh200" },
	  .want_status = "Pending|PodsStarting|0 of 1 pods running|restarts=0||jobs=0/0/0/0/0",
	  .want_requeue = 6900,
	  .want_deadline = NOW + 7200 },
	{ .name = "a running job keeps the deadline it started with, past a lowered maxWalltime",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':10800,'trainer':{"
	          "'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T14:00:00Z"),
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { NULL },
	  .want_status = RUNNING2,
	  .want_requeue = 6900,
	  .want_deadline = NOW + 7200 },
	{ .name = "defaultWalltime passed: DeadlineExceeded names it, and the pods are deleted "
	          "with their own grace period, not forced",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T12:00:00Z"),
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0",
	            "1 Event Warning Failed: DeadlineExceeded: the job ran longer than its "
	            "walltime of 1h (3600 s), the defaultWalltime of GPU class gh200 for jobs "
	            "without spec.activeDeadlineSeconds" },
	  .want_status =
	          "Failed|DeadlineExceeded|the job ran longer than its walltime of 1h (3600 "
	          "s), the defaultWalltime of GPU class gh200 for jobs without "
	          "spec.activeDeadlineSeconds|restarts=0|Failed=DeadlineExceeded|jobs=1/1/0/0/0",
	  .want_deadline = NOW },
	{ .name = "a job started before status.deadline existed gets it from its start",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2,'startTime':'2026-11-29T11:"
	            "30:00Z'," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit" },
	  .want_status = RUNNING2,
	  .want_requeue = 1500,
	  .want_deadline = NOW + 1800 },
	{ .name = "a deadline that no longer matches the config is named as such when it passes",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .status = RUNNING2_UNTIL("2026-11-29T11:59:00Z"),
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0",
	            "1 Event Warning Failed: DeadlineExceeded: the job ran past its deadline "
	            "(status.deadline 2026-11-29T11:59:00Z)" },
	  .want_status = "Failed|DeadlineExceeded|the job ran past its deadline (status.deadline "
	                 "2026-11-29T11:59:00Z)|restarts=0|Failed=DeadlineExceeded|jobs=1/1/0/0/0",
	  .want_deadline = NOW - 60 },
	{ .name = "the warning is not due yet: look again when it is",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T12:16:40Z"),
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { NULL },
	  .want_status = RUNNING2,
	  .want_requeue = 700,
	  .want_deadline = NOW + 1000 },
	{ .name = "the warning is due: only the live pods that do not show the deadline yet are "
	          "patched",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':3}}",
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = "{'state':'Running','reason':'PodsCompleting','message':'2 of 3 pods running, "
	            "1 succeeded','restartCount':0,'observedGeneration':2," STARTED
	            ",'deadline':'2026-11-29T12:02:00Z'," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { WARNED(0, "gh200-1", NOW + 120), RUNNING(1, "gh200-2"),
	            SUCCEEDED(2, "gh200-3") },
	  .n_pods = 3,
	  .want = { "0 PatchPod vit-node-0-1-a0",
	            "0 Event Normal DeadlineWarning: the job ends at 2026-11-29T12:02:00Z: its "
	            "pods have the deadline in /etc/trainjob/deadline" },
	  .want_status = "Running|PodsCompleting|2 of 3 pods running, 1 "
	                 "succeeded|restarts=0||jobs=1/1/0/0/0",
	  .want_requeue = 120,
	  .want_deadline = NOW + 120 },
	{ .name = "every pod shows the deadline: nothing to write, look again at the deadline",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T12:02:00Z"),
	  .pods = { WARNED(0, "gh200-1", NOW + 120), WARNED(1, "gh200-2", NOW + 120) },
	  .n_pods = 2,
	  .want = { NULL },
	  .want_status = RUNNING2,
	  .want_requeue = 120,
	  .want_deadline = NOW + 120 },
	{ .name = "the job's annotation asks for a longer warning, as Slurm's --signal: due now",
	  .annotations = "{'trainjob.flame.dev/deadline-warning-seconds':'1200'}",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T12:16:40Z"),
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { "0 PatchPod vit-node-0-0-a0", "0 PatchPod vit-node-0-1-a0",
	            "0 Event Normal DeadlineWarning: the job ends at 2026-11-29T12:16:40Z: its "
	            "pods have the deadline in /etc/trainjob/deadline" },
	  .want_status = RUNNING2,
	  .want_requeue = 1000,
	  .want_deadline = NOW + 1000 },
	{ .name = "a warning of 0 s: no warning before the deadline",
	  .annotations = "{'trainjob.flame.dev/deadline-warning-seconds':'0'}",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T12:02:00Z"),
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .want = { NULL },
	  .want_status = RUNNING2,
	  .want_requeue = 120,
	  .want_deadline = NOW + 120 },
	{ .name = "a malformed warning annotation fails the job",
	  .annotations = "{'trainjob.flame.dev/deadline-warning-seconds':'soon'}",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidSpec: "
	            "metadata.annotations[trainjob.flame.dev/deadline-warning-seconds]: 'soon' is "
	            "not an integer between 0 and 604800" },
	  .want_status = "Failed|InvalidSpec|metadata.annotations[trainjob.flame.dev/"
	                 "deadline-warning-seconds]: 'soon' is not an integer between 0 and "
	                 "604800|restarts=0|Failed=InvalidSpec|jobs=0/0/0/0/0" },
	{ .name = "a queued job is reserved and backfilled with its defaultWalltime; no deadline "
	          "while it waits",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = QUEUED_STATUS,
	  .ticket = &adm_waiting,
	  .want = { NULL },
	  .want_status = "Queued|Resources|" WAITING_MSG "|restarts=0||jobs=0/0/0/0/0",
	  .want_queue = "pods=4/4 restart=0 class=gh200 walltime=3600|pos=2|start=1795957200" },
	{ .name = "a gang given back to the queue loses its deadline with its start",
	  .spec = SPEC4,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = "{'state':'Pending','reason':'PodsStarting','message':'0 of 4 pods running',"
	            "'restartCount':0,'observedGeneration':2," STARTED
	            ",'deadline':'2026-11-29T12:50:00Z'," JOBS(1, 0, 0, 0) ",'conditions':[]}",
	  .pods = { PINNED_UNSCHEDULABLE(0, "0/8 nodes are available", 61), PENDING(1), PENDING(2),
	            PENDING(3) },
	  .n_pods = 4,
	  .ticket = &adm_none,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "0 DeletePod vit-node-0-2-a0", "0 DeletePod vit-node-0-3-a0",
	            "1 PatchStatus vit", "1 Event Warning GangReleased: " GIVEN_BACK },
	  .want_status = "Queued|Resources|" GIVEN_BACK "|restarts=0||jobs=1/0/0/0/0",
	  .want_requeue = 2700 },
	{ .name = "defaultWalltime: a sleep as long as the default walltime is refused",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'command':['sh','-c','python "
	          "prep.py && sleep 60m']}}",
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: PolicyViolation: container node of step node: "
	            "'sleep 60m' sleeps 3600 s, as long as the job's walltime of 3600 s or longer, "
	            "so the job can never finish by itself; a job must exit by itself when its "
	            "work is done, so it is refused before any pod starts" },
	  .want_status =
	          "Failed|PolicyViolation|container node of step node: 'sleep 60m' sleeps "
	          "3600 s, as long as the job's walltime of 3600 s or longer, so the job can "
	          "never finish by itself; a job must exit by itself when its work is done, "
	          "so it is refused before any pod starts|restarts=0|Failed=PolicyViolation"
	          "|jobs=0/0/0/0/0" },
};

static void test_deadline_table(void **state)
{
	run_table(deadline_cases, sizeof(deadline_cases) / sizeof(deadline_cases[0]));
}

static const struct tj_admission_ticket adm_preempt = { .pin_timeout = 60,
	                                                .preempt_at = NOW + 30,
	                                                .preempted_by = "team-a/urgent" };

#define PREEMPTION_AT(t) "'preemption':{'stopAt':'" t "','by':'team-a/urgent'}"
#define PREEMPTED_WARNING                                                                          \
	"Preempted: preempted by team-a/urgent, of a higher QOS tier: its pods have the stop "     \
	"time 2026-11-29T12:00:30Z in /etc/trainjob/deadline and are stopped then; the job goes "  \
	"back to the queue, its restart count unchanged"
#define PREEMPTED_MESSAGE                                                                          \
	"preempted by team-a/urgent at 2026-11-29T12:00:00Z: back in the queue, to start again "   \
	"from the beginning or its last checkpoint"

#define STOPPED_EARLY_MESSAGE                                                                      \
	"preempted by team-a/urgent at 2026-11-29T12:00:00Z, when rank 1 exited (code 143) "       \
	"before the stop time 2026-11-29T12:00:20Z: back in the queue, to start again from the "   \
	"beginning or its last checkpoint"

/* Running until its deadline at 12:00:20, preempted with a stop time after it. */
#define RUNNING2_DEADLINE_FIRST                                                                    \
	"{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "                     \
	"running','restartCount':0,'observedGeneration':2," STARTED                                \
	",'deadline':'2026-11-29T12:00:20Z'," JOBS(1, 1, 0, 0) ",'conditions':[]," PREEMPTION_AT(  \
	        "2026-11-29T12:00:30Z") "}"

static const struct plan_case preempt_cases[] = {
	{ .name = "the queue preempts a running job: recorded, its pods told the stop time in "
	          "their deadline file, and the job looked at again then",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .ticket = &adm_preempt,
	  .want = { "0 PatchPod vit-node-0-0-a0", "0 PatchPod vit-node-0-1-a0", "1 PatchStatus vit",
	            "1 Event Warning " PREEMPTED_WARNING },
	  .want_status = "Running|AllPodsRunning|2 of 2 pods running|restarts=0||jobs=1/1/0/0/0",
	  .want_requeue = 30,
	  .want_preempt_at = NOW + 30 },
	{ .name = "a preemption recorded holds without the ticket (a new leader): the pods "
	          "that do not show the stop time yet are told",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0,
	                     0) ",'conditions':[]," PREEMPTION_AT("2026-11-29T12:00:20Z") "}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want = { "0 PatchPod vit-node-0-0-a0", "0 PatchPod vit-node-0-1-a0" },
	  .want_status = "Running|AllPodsRunning|2 of 2 pods running|restarts=0||jobs=1/1/0/0/0",
	  .want_requeue = 20,
	  .want_preempt_at = NOW + 20 },
	{ .name = "at the stop time the pods are deleted and the job is Queued, Preempted: not a "
	          "restart, its walltime clock stopped",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':7200,'trainer':{"
	          "'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':1,'observedGeneration':2," STARTED
	            ",'deadline':'2026-11-29T13:00:00Z'," JOBS(
	                    1, 1, 0, 0) ",'conditions':[],"
	                                "'preemptions':1," PREEMPTION_AT(NOW_S) "}",
	  .pods = { RUNNING_A(0, 1, "gh200-1"), RUNNING_A(1, 1, "gh200-2") },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want = { "0 DeletePod vit-node-0-0-a1", "0 DeletePod vit-node-0-1-a1",
	            "1 PatchStatus vit",
	            "1 Event Normal Preempted: " PREEMPTED_MESSAGE "; its pods are deleted" },
	  .want_status = "Queued|Preempted|" PREEMPTED_MESSAGE "|restarts=1||jobs=1/1/0/0/0",
	  .want_preemptions = 2 },
	{ .name = "after the stop, a rank whose pod is gone is not wanted alone while the other's "
	          "is still being deleted: the gang is admitted again whole, once both are gone",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Queued','reason':'Preempted','message':'" PREEMPTED_MESSAGE "',"
	            "'restartCount':0,'observedGeneration':2,'preemptions':1," JOBS(
	                    1, 1, 0, 0) ","
	                                "'conditions':[]}",
	  .pods = { GOING(0, "gh200-1") },
	  .n_pods = 1,
	  .ticket = &adm_none,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Queued|Preempted|" PREEMPTED_MESSAGE "|restarts=0||jobs=0/0/0/0/0",
	  .want_preemptions = 1 },
	{ .name = "a rank that fails before the stop time (its script saved its state on the "
	          "notice and exited) stops the job then: Queued, Preempted, not a restart",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0,
	                     0) ",'conditions':[]," PREEMPTION_AT("2026-11-29T12:00:20Z") "}",
	  .pods = { RUNNING(0, "gh200-1"),
	            { 1, 0, TJ_POD_FAILED, false, "gh200-2", false, 143, "Error" } },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "1 PatchStatus vit",
	            "1 Event Normal Preempted: " STOPPED_EARLY_MESSAGE "; its pods are deleted" },
	  .want_status = "Queued|Preempted|" STOPPED_EARLY_MESSAGE "|restarts=0||jobs=0/0/0/1/0",
	  .want_preemptions = 1 },
	{ .name = "a rank that succeeds before the stop time, the other still running, stops "
	          "nothing: the stop time holds",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0,
	                     0) ",'conditions':[]," PREEMPTION_AT("2026-11-29T12:00:20Z") "}",
	  .pods = { RUNNING(0, "gh200-1"), SUCCEEDED_AFTER(1, "gh200-2", 100) },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want = { "0 PatchPod vit-node-0-0-a0", "1 PatchStatus vit" },
	  .want_status = "Running|PodsCompleting|1 of 2 pods running, 1 succeeded|restarts=0||"
	                 "jobs=1/1/0/0/0",
	  .want_requeue = 20,
	  .want_preempt_at = NOW + 20 },
	{ .name = "the queue preempts a job whose walltime's warning is due, its deadline later: "
	          "the pods are told the stop time alone, once",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T12:01:40Z"),
	  .pods = { RUNNING(0, "gh200-1"), WARNED(1, "gh200-2", NOW + 100) },
	  .n_pods = 2,
	  .ticket = &adm_preempt,
	  .want = { "0 PatchPod vit-node-0-0-a0", "0 PatchPod vit-node-0-1-a0", "1 PatchStatus vit",
	            "1 Event Warning " PREEMPTED_WARNING },
	  .want_status = RUNNING2,
	  .want_requeue = 30,
	  .want_deadline = NOW + 100,
	  .want_preempt_at = NOW + 30 },
	{ .name = "the queue preempts a job whose walltime's deadline comes before the stop time: "
	          "recorded, its pods keep the deadline, and the event says so",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_UNTIL("2026-11-29T12:00:20Z"),
	  .pods = { WARNED(0, "gh200-1", NOW + 20), WARNED(1, "gh200-2", NOW + 20) },
	  .n_pods = 2,
	  .ticket = &adm_preempt,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Preempted: preempted by team-a/urgent, of a higher QOS tier: "
	            "stopped at 2026-11-29T12:00:30Z unless it ends first; its walltime's deadline "
	            "2026-11-29T12:00:20Z comes before, and its pods have that in "
	            "/etc/trainjob/deadline" },
	  .want_status = RUNNING2,
	  .want_requeue = 20,
	  .want_deadline = NOW + 20,
	  .want_preempt_at = NOW + 30 },
	{ .name = "a stop time after the walltime's deadline: the pods keep the deadline, which "
	          "comes first, and nothing is patched again",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_DEADLINE_FIRST,
	  .pods = { WARNED(0, "gh200-1", NOW + 20), WARNED(1, "gh200-2", NOW + 20) },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want = { NULL },
	  .want_status = RUNNING2,
	  .want_requeue = 20,
	  .want_deadline = NOW + 20,
	  .want_preempt_at = NOW + 30 },
	{ .name = "a stop time after the walltime's deadline, pods that show the stop time: they "
	          "are given the deadline",
	  .spec = SPEC2,
	  .runtime = "torch-gh200",
	  .walltime = &walltime_1h,
	  .status = RUNNING2_DEADLINE_FIRST,
	  .pods = { WARNED(0, "gh200-1", NOW + 30), WARNED(1, "gh200-2", NOW + 30) },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want = { "0 PatchPod vit-node-0-0-a0", "0 PatchPod vit-node-0-1-a0",
	            "0 Event Normal DeadlineWarning: the job ends at 2026-11-29T12:00:20Z: its "
	            "pods have the deadline in /etc/trainjob/deadline" },
	  .want_status = RUNNING2,
	  .want_requeue = 20,
	  .want_deadline = NOW + 20,
	  .want_preempt_at = NOW + 30 },
	{ .name = "a job that runs to its end before the stop time is no longer being preempted",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':1}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'1 of 1 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0,
	                     0) ",'conditions':[]," PREEMPTION_AT("2026-11-29T12:00:20Z") "}",
	  .pods = { SUCCEEDED_AFTER(0, "gh200-1", 100) },
	  .n_pods = 1,
	  .ticket = &adm_none,
	  .want = { "0 PatchStatus vit", "0 Event Normal Completed: all 1 pods succeeded" },
	  .want_status = "Complete|AllPodsSucceeded|all 1 pods succeeded|restarts=0|"
	                 "Complete=AllPodsSucceeded|jobs=0/0/1/0/0",
	  .want_requeue = 20 },
};

#define REQUEUED_MESSAGE                                                                           \
	"requeued at 2026-11-29T11:30:00Z (trainjob.flame.dev/requeue): back in the queue, to "    \
	"start again from the beginning or its last checkpoint; not a restart"

static const struct plan_case requeue_cases[] = {
	{ .name = "kubectl scontrol requeue: a request made after the start stops the run at "
	          "once and queues it again, not as a restart",
	  .annotations = "{'trainjob.flame.dev/requeue':'2026-11-29T11:30:00Z'}",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2," STARTED
	            "," JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want = { "0 DeletePod vit-node-0-0-a0", "0 DeletePod vit-node-0-1-a0",
	            "1 PatchStatus vit",
	            "1 Event Normal Requeued: " REQUEUED_MESSAGE "; its pods are deleted" },
	  .want_status = "Queued|Requeued|" REQUEUED_MESSAGE "|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "a request carried out already, or made before the run started, stops nothing",
	  .annotations = "{'trainjob.flame.dev/requeue':'2026-11-29T11:30:00Z'}",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}",
	  .runtime = "torch-gh200",
	  .status = "{'state':'Running','reason':'AllPodsRunning','message':'2 of 2 pods "
	            "running','restartCount':0,'observedGeneration':2,"
	            "'startTime':'2026-11-29T11:40:00Z','lastRequeueTime':'2026-11-29T11:30:00Z',"
	            "" JOBS(1, 1, 0, 0) ",'conditions':[]}",
	  .pods = { RUNNING(0, "gh200-1"), RUNNING(1, "gh200-2") },
	  .n_pods = 2,
	  .ticket = &adm_none,
	  .want_status = "Running|AllPodsRunning|2 of 2 pods running|restarts=0||jobs=1/1/0/0/0" },
	{ .name = "a requeue annotation that is not a time is refused, naming it",
	  .annotations = "{'trainjob.flame.dev/requeue':'now'}",
	  .spec = "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':1}}",
	  .runtime = "torch-gh200",
	  .ticket = &adm_none,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidSpec: metadata.annotations[trainjob.flame.dev/"
	            "requeue]: 'now' is not an RFC 3339 time (kubectl scontrol requeue writes "
	            "it)" },
	  .want_status = "Failed|InvalidSpec|metadata.annotations[trainjob.flame.dev/requeue]: "
	                 "'now' is not an RFC 3339 time (kubectl scontrol requeue writes "
	                 "it)|restarts=0|Failed=InvalidSpec|jobs=0/0/0/0/0" },
};

static void test_requeue_table(void **state)
{
	run_table(requeue_cases, sizeof(requeue_cases) / sizeof(requeue_cases[0]));
}

static void test_preempt_table(void **state)
{
	run_table(preempt_cases, sizeof(preempt_cases) / sizeof(preempt_cases[0]));
}

static const struct plan_case *admission_case(const char *prefix)
{
	for (size_t i = 0; i < sizeof(admission_cases) / sizeof(admission_cases[0]); i++)
		if (strncmp(admission_cases[i].name, prefix, strlen(prefix)) == 0)
			return &admission_cases[i];
	fail_msg("no case %s", prefix);
	return NULL;
}

/* A gang given back names the nodes that refused its pinned pods, once each, so that the
 * admission keeps the job off them; a gang that is not given back names none. */
static void test_given_back_gang_names_the_refusing_nodes(void **state)
{
	struct fixture f;
	struct tj_plan *plan = plan_case(admission_case("a pinned pod unschedulable past the "
	                                                "timeout gives the whole gang back"),
	                                 &f);

	assert_int_equal(plan->gang.n_refused, 1);
	assert_string_equal(plan->gang.refused[0], "gh200-4");
	tj_plan_free(plan);
	fixture_clear(&f);
	plan = plan_case(admission_case("a pinned pod unschedulable within the timeout"), &f);
	assert_int_equal(plan->gang.n_refused, 0);
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* An admitted pod is pinned to its node, by the node's name (matchFields, as the DaemonSet
 * controller pins), on top of the class's placement, and says so in an annotation. */
static void test_pinned_pod(void **state)
{
	const struct plan_case *c = admission_case("an admitted gang is created whole");
	struct fixture f;
	struct tj_plan *plan = plan_case(c, &f);
	const struct tj_action *a = action_of(plan, TJ_ACTION_CREATE_POD, 2);

	/* What the admission metrics are counted by. */
	assert_true(plan->gang.admits);
	assert_true(plan->gang.backfilled);
	assert_string_equal(plan->gpu_class, "gh200");
	assert_false(plan->gang.want.wanted);

	assert_json_equal(
	        tj_json_path(a->object, "spec.affinity.nodeAffinity."
	                                "requiredDuringSchedulingIgnoredDuringExecution."
	                                "nodeSelectorTerms"),
	        "[{'matchExpressions':["
	        "{'key':'nvidia.com/gpu.product','operator':'In','values':['NVIDIA-GH200-480GB']},"
	        "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}],"
	        "'matchFields':[{'key':'metadata.name','operator':'In','values':['gh200-3']}]}]");
	assert_string_equal(
	        cJSON_GetObjectItemCaseSensitive(tj_json_path(a->object, "metadata.annotations"),
	                                         "trainjob.flame.dev/node")
	                ->valuestring,
	        "gh200-3");
	/* Held back until every pod of the gang exists. */
	assert_json_equal(tj_json_path(a->object, "spec.schedulingGates"),
	                  "[{'name':'trainjob.flame.dev/gang'}]");
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* A walltime shorter than the warning: every pod of the gang is created with the deadline,
 * which its file shows from its start, so that no pod is patched as it starts. */
static void test_pods_created_with_a_due_deadline(void **state)
{
	struct fixture f;
	struct tj_plan *plan = plan_case(admission_case("an admitted gang is created whole, and "
	                                                "its clock starts"),
	                                 &f);

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_string_equal(
		        cJSON_GetObjectItemCaseSensitive(
		                tj_json_path(action_of(plan, TJ_ACTION_CREATE_POD, i)->object,
		                             "metadata.annotations"),
		                "trainjob.flame.dev/deadline")
		                ->valuestring,
		        "2026-11-29T12:00:30Z");
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* One pod is a whole gang with its create: pinned, with no gate to lift. */
static void test_gang_of_one_is_not_held_back(void **state)
{
	const struct plan_case *c = admission_case("an admitted gang of one pod");
	struct fixture f;
	struct tj_plan *plan = plan_case(c, &f);
	const struct tj_action *a = action_of(plan, TJ_ACTION_CREATE_POD, 0);

	(void)state;
	assert_true(plan->gang.admits);
	assert_null(tj_json_path(a->object, "spec.schedulingGates"));
	assert_string_equal(
	        cJSON_GetObjectItemCaseSensitive(tj_json_path(a->object, "metadata.annotations"),
	                                         "trainjob.flame.dev/node")
	                ->valuestring,
	        "gh200-1");
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* The gates lifted: the template's own gates stay (none here), the uid guards the pod, and
 * the patch is an ungate. */
static void test_ungate_patch(void **state)
{
	struct fixture f;
	struct tj_plan *plan = plan_case(
	        admission_case("every pod of the gang exists: the gates of those still held"), &f);

	assert_json_equal(action_of(plan, TJ_ACTION_PATCH_POD, 0)->object,
	                  "{'metadata':{'uid':'vit-node-0-0-a0'},'spec':{'schedulingGates':null}}");
	/* Marked, so that the job waits for the cache to show it before its next plan. */
	assert_true(action_of(plan, TJ_ACTION_PATCH_POD, 0)->ungate);
	tj_plan_free(plan);
	fixture_clear(&f);
}

struct body_case {
	const char *case_prefix;
	const char *want_body;
};

/* The status patch of the main transitions, conditional on the resourceVersion: a new job's
 * is every field we own, null for the unset ones; a job whose status was written before gets
 * only the fields that change. */
static const struct body_case bodies[] = {
	{ "a new job",
	  "{'metadata':{'resourceVersion':'42'},'status':{'state':'Pending','reason':'PodsStarting'"
	  ","
	  "'message':'0 of 4 pods running','restartCount':0,'lastFailure':null,'startTime':'" NOW_S
	  "',"
	  "'completionTime':null,'expectedStartTime':null,'deadline':null,'cleanupTime':null,'"
	  "queuePosition':null,'"
	  "observedGeneration'"
	  ":2,'jobsStatus':[{'name':'node','active':0,"
	  "'ready':0,'succeeded':0,'failed':0,'suspended':0}],'conditions':[]}}" },
	{ "a failed worker restarts the gang",
	  "{'status':{'state':'Restarting','reason':'WorkerFailed',"
	  "'message':'rank 1 on node gh200-2 failed (exit code 1,"
	  " Error); replacing all workers in 10 s (restart 1 of 3)','restartCount':1,"
	  "'lastFailure':{'rank':1,'node':'gh200-2','pod':'vit-node-0-1-a0',"
	  "'reason':'Error','time':'" NOW_S
	  "','exitCode':1,'message':null},'jobsStatus':[{'name':'node','active':0,"
	  "'ready':0,'succeeded':0,'failed':1,'suspended':0}]},"
	  "'metadata':{'resourceVersion':'42'}}" },
	{ "every pod succeeded",
	  "{'status':{'state':'Complete','reason':'AllPodsSucceeded',"
	  "'message':'all 4 pods succeeded','completionTime':'" NOW_S
	  "','jobsStatus':[{'name':'node','active':0,'ready':0,'succeeded':1,'failed':0,"
	  "'suspended':0}],'conditions':[{'type':'Complete','status':'True',"
	  "'reason':'AllPodsSucceeded','message':'all 4 pods succeeded',"
	  "'lastTransitionTime':'" NOW_S "'}]},'metadata':{'resourceVersion':'42'}}" },
	{ "suspend deletes",
	  "{'status':{'state':'Suspended','reason':'Suspended',"
	  "'message':'TrainJob is suspended','jobsStatus':[{'name':'node','active':0,"
	  "'ready':0,'succeeded':0,'failed':0,'suspended':1}],"
	  "'conditions':[{'type':'Suspended','status':'True','reason':'Suspended',"
	  "'message':'TrainJob is suspended','lastTransitionTime':'" NOW_S
	  "'}]},'metadata':{'resourceVersion':'42'}}" },
	{ "resume removes",
	  "{'status':{'state':'Pending','reason':'PodsStarting',"
	  "'message':'0 of 2 pods running','startTime':'" NOW_S
	  "','observedGeneration':2,'jobsStatus':[{'name':'node','active':0,'ready':0,"
	  "'succeeded':0,'failed':0,'suspended':0}],'conditions':[]},"
	  "'metadata':{'resourceVersion':'42'}}" },
};

/* Kubeflow's Suspended=False goes without touching the start of the walltime clock. */
static const struct body_case adoption_bodies[] = {
	{ "Kubeflow's Suspended=False of a resume",
	  "{'status':{'conditions':[]},'metadata':{'resourceVersion':'42'}}" },
};

/* A node failure: lastFailure names the node's reason and has no exit code. */
static const struct body_case fault_bodies[] = {
	{ "a node NotReady past",
	  "{'status':{'state':'Restarting','reason':'NodeNotReady',"
	  "'message':'rank 1 on node gh200-2 failed (NodeNotReady: condition Ready is Fals"
	  "e); replacing all workers in 10 s (infrastructure restart 1 of 10)',"
	  "'restartCount':1,'infrastructureRestarts':1,'lastFailure':{'rank':1,"
	  "'node':'gh200-2','pod':'vit-node-0-1-a0','reason':'NodeNotReady','time':'" NOW_S
	  "','message':null}},'metadata':{'resourceVersion':'42'}}" },
	{ "a permanent exit code",
	  "{'status':{'state':'Failed','reason':'PermanentFailure',"
	  "'message':'rank 1 on node gh200-2 failed (exit code 127,"
	  " Error); exit code 127 is permanent (failurePolicy.permanentExitCodes),"
	  " so the job is not restarted','lastFailure':{'rank':1,'node':'gh200-2',"
	  "'pod':'vit-node-0-1-a0','reason':'Error','time':'" NOW_S
	  "','exitCode':127,'message':null},'completionTime':'" NOW_S
	  "','jobsStatus':[{'name':'node','active':0,'ready':0,'succeeded':0,'failed':1,"
	  "'suspended':0}],'conditions':[{'type':'Failed','status':'True',"
	  "'reason':'PermanentFailure',"
	  "'message':'rank 1 on node gh200-2 failed (exit code 127,"
	  " Error); exit code 127 is permanent (failurePolicy.permanentExitCodes),"
	  " so the job is not restarted','lastTransitionTime':'" NOW_S
	  "'}]},'metadata':{'resourceVersion':'42'}}" },
};

static void check_bodies(const struct body_case *table, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct fixture f;
		struct tj_plan *plan;

		print_message("# case: %s\n", table[i].case_prefix);
		plan = plan_case(case_named(table[i].case_prefix), &f);
		assert_json_equal(action_of(plan, TJ_ACTION_PATCH_STATUS, 0)->object,
		                  table[i].want_body);
		tj_plan_free(plan);
		fixture_clear(&f);
	}
}

static void test_patch_bodies(void **state)
{
	check_bodies(bodies, sizeof(bodies) / sizeof(bodies[0]));
	check_bodies(fault_bodies, sizeof(fault_bodies) / sizeof(fault_bodies[0]));
	check_bodies(adoption_bodies, sizeof(adoption_bodies) / sizeof(adoption_bodies[0]));
}

/* Replacements avoid the last failed node and every unhealthy node the job's pods are on,
 * each once, and stay within the GPU class: one requirement a node, as the API server
 * takes a single value in a requirement on a node's field (two in one were refused). */
static void test_excluded_nodes(void **state)
{
	struct fixture f;
	struct tj_plan *plan = plan_case(case_named("after the backoff, free ranks"), &f);
	const struct tj_action *a = action_of(plan, TJ_ACTION_CREATE_POD, 1);

	assert_string_equal(a->name, "vit-node-0-2-a1");
	assert_json_equal(
	        tj_json_path(a->object, "spec.affinity.nodeAffinity."
	                                "requiredDuringSchedulingIgnoredDuringExecution."
	                                "nodeSelectorTerms"),
	        "[{'matchExpressions':["
	        "{'key':'nvidia.com/gpu.product','operator':'In','values':['NVIDIA-GH200-480GB']},"
	        "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}],"
	        "'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['gh200-2']},"
	        "{'key':'metadata.name','operator':'NotIn','values':['gh200-4']}]}]");
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* The replacement of a failed rank: the new attempt, and the failed node excluded. */
static void test_replacement_pod(void **state)
{
	struct fixture f;
	struct tj_plan *plan = plan_case(case_named("after a gang restart"), &f);
	const struct tj_action *a = action_of(plan, TJ_ACTION_CREATE_POD, 0);
	const cJSON *terms = tj_json_path(
	        a->object,
	        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
	        "nodeSelectorTerms");

	assert_string_equal(tj_json_string(a->object, "metadata.name"), "vit-node-0-1-a1");
	assert_string_equal(cJSON_GetObjectItem(tj_json_path(a->object, "metadata.labels"),
	                                        "trainjob.flame.dev/attempt")
	                            ->valuestring,
	                    "1");
	assert_json_equal(
	        terms,
	        "[{'matchExpressions':["
	        "{'key':'nvidia.com/gpu.product','operator':'In','values':['NVIDIA-GH200-480GB']},"
	        "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}],"
	        "'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['gh200-2']}]}"
	        "]");
	assert_json_equal(
	        action_of(plan, TJ_ACTION_CREATE_SERVICE, 0)->object,
	        "{'apiVersion':'v1','kind':'Service','metadata':{'name':'vit',"
	        "'namespace':'team-a','labels':{'trainer.kubeflow.org/trainjob-name':'vit'},"
	        "'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1',"
	        "'kind':'TrainJob','name':'vit','uid':'uid-vit','controller':true,"
	        "'blockOwnerDeletion':true}]},'spec':{'clusterIP':'None',"
	        "'publishNotReadyAddresses':true,'selector':{"
	        "'jobset.sigs.k8s.io/jobset-name':'vit'},'ports':[{'name':'torch',"
	        "'port':29500,'targetPort':29500,'protocol':'TCP'}]}}");
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* Deletes carry the pod's uid as precondition and the pod's own grace period. */
static void test_delete_preconditions(void **state)
{
	struct fixture f;
	struct tj_plan *plan = plan_case(case_named("suspend deletes"), &f);
	const struct tj_action *a = action_of(plan, TJ_ACTION_DELETE_POD, 1);

	assert_string_equal(a->name, "vit-node-0-1-a0");
	assert_string_equal(a->uid, "vit-node-0-1-a0");
	assert_int_equal(a->grace_seconds, -1);
	assert_null(a->object);
	assert_int_equal(plan->n_stages, 2);
	tj_plan_free(plan);
	fixture_clear(&f);
}

/* A job being deleted is left to the garbage collector. */
static void test_deleting_job(void **state)
{
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'torch-gh200'}}");
	struct tj_runtime *rt = make_runtime("torch-gh200");
	struct tj_plan *plan = NULL;

	job->deletion_time = NOW - 5;
	assert_int_equal(tj_plan_trainjob(&(struct tj_plan_input){ .job = job,
	                                                           .runtime = rt,
	                                                           .config = &test_config,
	                                                           .now = NOW },
	                                  &plan),
	                 0);
	assert_int_equal(plan->n_actions, 0);
	assert_int_equal(plan->n_stages, 0);
	assert_int_equal(plan->requeue_after, 0);
	tj_plan_free(plan);
	tj_runtime_free(rt);
	tj_trainjob_free(job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_table),
		cmocka_unit_test(test_deferrable_status_patches),
		cmocka_unit_test(test_fault_table),
		cmocka_unit_test(test_budget_table),
		cmocka_unit_test(test_retention_table),
		cmocka_unit_test(test_stall_table),
		cmocka_unit_test(test_stall_patches),
		cmocka_unit_test(test_stall_avoids_no_node),
		cmocka_unit_test(test_patch_bodies),
		cmocka_unit_test(test_replacement_pod),
		cmocka_unit_test(test_delete_preconditions),
		cmocka_unit_test(test_deleting_job),
		cmocka_unit_test(test_excluded_nodes),
		cmocka_unit_test(test_admission_table),
		cmocka_unit_test(test_pinned_pod),
		cmocka_unit_test(test_pods_created_with_a_due_deadline),
		cmocka_unit_test(test_given_back_gang_names_the_refusing_nodes),
		cmocka_unit_test(test_ungate_patch),
		cmocka_unit_test(test_gang_of_one_is_not_held_back),
		cmocka_unit_test(test_native_gang_objects),
		cmocka_unit_test(test_deadline_table),
		cmocka_unit_test(test_preempt_table),
		cmocka_unit_test(test_requeue_table),
	};
	return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
