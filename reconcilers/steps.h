/* The step graph of a runtime: its replicated jobs (dataset-initializer, model-initializer,
 * node, launcher, ...), the order dependsOn and startupPolicy give them, and the success
 * policy that ends the job. There is no JobSet and no Job: each step becomes its pods
 * directly (DESIGN.md section 4, "Steps").
 *
 * Counting as JobSet and Kubeflow count: a step of `replicas` Jobs, each of `pods_per_job`
 * pods (the Job template's parallelism, at most its completions; 1 when unset), has
 * replicas * pods_per_job pods, one per slot. Slot s is pod (job index s / pods_per_job,
 * completion index s % pods_per_job). The `node` step keeps numNodes: Kubeflow's torch
 * plugin makes it one Job of numNodes pods, and its pods are the ranks of plan.h.
 *
 * Names: a pod of step S in slot (j, k) of attempt a is `<J>-<S>-<j>-<k>-a<a>`, its hostname
 * `<J>-<S>-<j>-<k>` (what JobSet would give it) in the subdomain <J>; for node this is the
 * rank's name of render.h.
 *
 * The decisions here are pure: they take the pods of each step's slots and say whether a
 * step may start, whether it failed, whether the success policy is met, and what
 * status.jobsStatus says of each step. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "informers/pod.h"
#include "reconcilers/trainjob.h"

#define TJ_MAX_STEP_DEPS   TJ_MAX_STEPS
#define TJ_STEP_NAME_MAX   64 /* a replicated job's name is a DNS label */
#define TJ_STEP_MAX_PODS   TJ_MAX_NODES
#define TJ_STEP_NODE       "node"
#define TJ_STEP_LAUNCHER   "launcher" /* the MPI launcher, as Kubeflow's constants name it */
#define TJ_LABEL_ANCESTOR  "trainer.kubeflow.org/trainjob-ancestor-step"
#define TJ_LABEL_JOB_INDEX "jobset.sigs.k8s.io/job-index"
/* JobSet's label and annotation of the group of a replicated job (groupName). */
/* The mark of a claim template whose PVC outlives the TrainJob (no ownerReference), as
 * JobSet's retentionPolicy whenDeleted: Retain. Not a field of a PVC: only the template's
 * metadata and spec reach the PVC. */
#define TJ_CLAIM_RETAIN     "retain"
#define TJ_LABEL_GROUP_NAME "jobset.sigs.k8s.io/group-name"

/* What a dependsOn entry waits for (JobSet's DependsOn.status). */
enum tj_step_need {
	TJ_STEP_NEED_COMPLETE, /* every pod of the step Succeeded */
	TJ_STEP_NEED_READY,    /* every pod of the step Ready (or already Succeeded) */
};

struct tj_step_dep {
	size_t step; /* index in the graph; always an earlier step */
	enum tj_step_need need;
};

struct tj_step {
	char name[TJ_STEP_NAME_MAX];
	/* The Job template's label trainer.kubeflow.org/trainjob-ancestor-step, "" if none:
	 * Kubeflow finds the initializer and trainer steps by it. */
	char ancestor[TJ_STEP_NAME_MAX];
	int replicas;     /* replicas, 1 if unset; 1 for Kubeflow's initializer and trainer */
	int pods_per_job; /* parallelism (at most completions), 1 if unset */
	struct tj_step_dep deps[TJ_MAX_STEP_DEPS];
	size_t n_deps;
	bool success_target; /* named by successPolicy.targetReplicatedJobs, or there are none */
	/* The pod template ({metadata, spec}) as compact JSON, with the Job template's labels
	 * and annotations merged under the pod template's own and the replicated job's groupName
	 * (TJ_LABEL_GROUP_NAME, when set), as the pods carry them. */
	char *pod_template; /* owned */
	/* The Job template's podFailurePolicy.rules as compact JSON, NULL if none: the reason
	 * the step's Job fails with (reconcilers/failure_rules.h). */
	char *pod_failure_rules; /* owned */
};

struct tj_step_graph {
	struct tj_step *steps; /* owned array of n */
	size_t n;
	bool in_order;    /* startupPolicy.startupPolicyOrder InOrder */
	bool success_any; /* successPolicy.operator Any; All otherwise */
	/* volumeClaimPolicies[].templates[], every PVC template of every policy, as one
	 * compact JSON array, the templates of a policy whose retentionPolicy.whenDeleted is
	 * Retain with the member TJ_CLAIM_RETAIN true beside metadata and spec; NULL if there
	 * are none. */
	char *claim_templates; /* owned */
	/* Why the graph cannot be run (a dependsOn naming no earlier step, too many steps, a
	 * Job template of the wrong shape), naming the field; NULL when it can. */
	char *error; /* owned */
};

/* Projects spec.template.spec of a runtime (a JobSet spec) into *g. A graph that cannot be
 * run is projected with g->error set, so that its jobs fail with that reason. 0, -E2BIG
 * when a template exceeds max_template bytes, or -ENOMEM; on error *g is cleared. */
int tj_step_graph_from_json(const cJSON *jobset_spec, size_t max_template, struct tj_step_graph *g);

/* Frees what g owns and zeroes it. */
void tj_step_graph_clear(struct tj_step_graph *g);

/* The index of the step named name; g->n if there is none. */
size_t tj_step_graph_find(const struct tj_step_graph *g, const char *name);

/* The number of pods of step i, node_pods for the node step. */
int tj_step_pods(const struct tj_step_graph *g, size_t i, int node_pods);

/* "<job>-<step>-<j>-<k>-a<attempt>" for slot of step. */
void tj_step_pod_name(const char *job, const struct tj_step *step, int slot, int attempt,
                      char buf[static TJ_NAME_MAX]);

/* "<job>-<step>-<j>-<k>", the pod's hostname. */
void tj_step_hostname(const char *job, const struct tj_step *step, int slot,
                      char buf[static TJ_NAME_MAX]);

/* The step (other than node) and slot a pod of job belongs to, from its name: 0, or
 * -ENOENT when the name is not of that shape (a node pod, a stranger). */
int tj_step_of_pod(const struct tj_step_graph *g, const char *job, const char *pod_name,
                   size_t *ret_step, int *ret_slot);

/* How far the pods of a step have got. slots holds the current pod of each slot, NULL for
 * a slot without one; a pod being deleted counts as neither existing, ready nor failed,
 * but as succeeded if it did. */
struct tj_step_progress {
	int pods;                    /* slots */
	int exist;                   /* slots with a pod that is not being deleted */
	int ready;                   /* pods Running and Ready, or Succeeded */
	int succeeded;               /* pods Succeeded, being deleted or not */
	const struct tj_pod *failed; /* the first Failed pod, NULL if none */
};

void tj_step_progress(const struct tj_pod *const *slots, int n, struct tj_step_progress *ret);

static inline bool tj_step_complete(const struct tj_step_progress *p)
{
	return p->succeeded == p->pods;
}

static inline bool tj_step_ready(const struct tj_step_progress *p)
{
	return p->ready == p->pods;
}

/* Whether step i may have its pods created, given the progress of every step: each of its
 * dependsOn is met, and under startupPolicy InOrder every earlier step is Ready (JobSet
 * creates the next replicated job once the Jobs of the one before are ready). When it may
 * not, writes what it waits for into why ("dataset-initializer to be Complete"). */
bool tj_step_may_start(const struct tj_step_graph *g, size_t i,
                       const struct tj_step_progress *progress, char *why, size_t size);

/* The success policy: operator All (every target step Complete) or Any (one of them); the
 * targets are targetReplicatedJobs, or every step when it names none. */
bool tj_step_graph_succeeded(const struct tj_step_graph *g,
                             const struct tj_step_progress *progress);

/* Whether the success policy stops step i's pods rather than waiting for them: the step is
 * not among its targets (and some other step is), and no step waits for it to be Complete.
 * The command policy lets a command that only serves others (sshd -D of MPI workers) run
 * there. */
bool tj_step_ended_by_success_policy(const struct tj_step_graph *g, size_t i);

/* Whether step i has ended before step j starts: j waits for i to be Complete, directly or
 * through steps that each wait for the one before to be Complete (node after
 * model-initializer after dataset-initializer). Such a step runs before the node step's
 * walltime starts. */
bool tj_step_completes_before(const struct tj_step_graph *g, size_t i, size_t j);

/* status.jobsStatus of one step, as JobSet counts its child Jobs: a Job (pods_per_job
 * consecutive slots) has succeeded when all its pods succeeded, failed when one of them
 * failed, is ready when all its pods are Ready or Succeeded, active while one of its pods
 * exists and has not finished; every Job is suspended while the TrainJob is. */
void tj_step_jobs_status(const char *name, const struct tj_pod *const *slots, int n,
                         int pods_per_job, bool suspended, struct tj_jobs_status *ret);
