/* Pod projection: the few fields of a core/v1 Pod that the controller reads. A watch event's
 * JSON is projected into this struct and the cJSON tree is freed at once (DESIGN.md,
 * "Caches hold projections"). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/resources.h"
#include "informers/store.h"

/* Label and annotation keys with this project's own prefix. */
#define TJ_LABEL_PREFIX   "trainjob.flame.dev/"
#define TJ_LABEL_RANK     TJ_LABEL_PREFIX "rank"
#define TJ_LABEL_ATTEMPT  TJ_LABEL_PREFIX "attempt"
#define TJ_LABEL_TRAINJOB "trainer.kubeflow.org/trainjob-name"
/* The attempt of a pod kept after its attempt was replaced, for its logs; such a pod has
 * lost the labels by which Kubeflow's SDK and the Service find a rank. */
#define TJ_LABEL_FAILED_ATTEMPT TJ_LABEL_PREFIX "failed-attempt"
/* The most of a container's termination message a pod keeps: its end, where a crash is. */
#define TJ_POD_TERMINATION_MAX 1024
/* The node the controller's admission chose for a pod, set on the pods it creates, so that
 * the pod counts against its node before the scheduler binds it. */
#define TJ_ANNOTATION_PINNED_NODE TJ_LABEL_PREFIX "node"
/* On the first node pod of a gang whose MPI launcher admission placed with it: the
 * launcher's node and requests (reconcilers/admission/launcher_hold.h), until the launcher exists.
 * A longer value than TJ_POD_LAUNCHER_HOLD_MAX is not ours and is not kept. */
#define TJ_ANNOTATION_LAUNCHER_HOLD TJ_LABEL_PREFIX "launcher-hold"
#define TJ_POD_LAUNCHER_HOLD_MAX    2048
/* The scheduling gate that holds a gang's pods back until every pod of the gang exists
 * (reconcilers/plan/plan.h, "Admission"): kube-scheduler leaves a pod with a gate alone. */
#define TJ_SCHEDULING_GATE TJ_LABEL_PREFIX "gang"
/* The job's deadline (RFC 3339), written on its pods when they are warned of it
 * (reconcilers/policy/walltime.h). */
#define TJ_ANNOTATION_DEADLINE TJ_LABEL_PREFIX "deadline"

enum tj_pod_phase {
	TJ_POD_PENDING,
	TJ_POD_RUNNING,
	TJ_POD_SUCCEEDED,
	TJ_POD_FAILED,
	TJ_POD_UNKNOWN,
};

/* A pod from tj_pod_from_json() is one allocation: the struct followed by its own strings.
 * Its namespace, owner_uid, trainjob, node_name, pinned_node, nominated_node, reason,
 * exit_reason,
 * disruption_reason and the names of its extended requests are interned: they point into the
 * shared string table (informers/intern.h) and hold one reference each; never modify them.
 * A pod built field by field (in a test) leaves packed false and owns each string as a
 * separate malloc'd copy, except the names of its extended requests, which it borrows (string
 * literals); tj_pod_free() handles both.
 *
 * The informer caches every pod of the cluster, so the fields are ordered to leave no
 * padding between them. */
struct tj_pod {
	char *namespace;        /* owned */
	char *name;             /* owned */
	char *uid;              /* owned */
	char *resource_version; /* owned */
	char *owner_uid;        /* owned; uid of the controller ownerReference, NULL if none */
	char *trainjob;         /* owned; label TJ_LABEL_TRAINJOB, NULL if absent */
	char *node_name;        /* owned; spec.nodeName, NULL until scheduled */
	char *pinned_node;      /* owned; annotation TJ_ANNOTATION_PINNED_NODE, NULL if absent */
	/* owned; status.nominatedNodeName: the node kube-scheduler holds for the pod while the
	 * pods it preempts there go, NULL if none */
	char *nominated_node;
	char *unschedulable_message; /* owned; that condition's message, NULL otherwise */
	char *reason;                /* owned; status.reason (Evicted, ...), NULL if unset */
	char *message;               /* owned; status.message, NULL if unset */
	char *exit_reason;           /* owned; NULL if none (see terminated) */
	/* status.conditions DisruptionTarget=True: the pod is being evicted or preempted. */
	char *disruption_reason; /* owned; its reason, NULL if none */
	/* owned; the terminated container's message (with terminationMessagePolicy
	 * FallbackToLogsOnError, the end of its log), its last TJ_POD_TERMINATION_MAX bytes
	 * at most, cut between UTF-8 sequences; NULL if none */
	char *termination_message;
	char *launcher_hold;   /* owned; annotation TJ_ANNOTATION_LAUNCHER_HOLD, NULL if absent */
	int64_t creation_time; /* metadata.creationTimestamp, unix seconds */
	int64_t start_time;    /* status.startTime, unix seconds, 0 if unset */
	int64_t deletion_time; /* metadata.deletionTimestamp, unix seconds, 0 if not deleting */
	int64_t deadline;      /* annotation TJ_ANNOTATION_DEADLINE, unix seconds, 0 if absent */
	/* The effective requests (informers/resources.h), what the pod holds on its node until
	 * it is terminal; zero if its spec has a quantity that is not one, which the API server
	 * never lets through. */
	struct tj_pod_resources requests;
	int rank;    /* label trainjob.flame.dev/rank, -1 if absent or malformed */
	int attempt; /* label trainjob.flame.dev/attempt, -1 if absent or malformed */
	/* The termination of the container named "node" (or else of the first terminated
	 * container): exit code, reason (exit_reason) such as Error or OOMKilled, and message. */
	int exit_code;
	enum tj_pod_phase phase;
	/* Seconds from start_time to the moment the pod stopped holding its requests, for the
	 * GPU-seconds of reconcilers/usage/gpu_seconds.h: the finishedAt of the terminated
	 * container above, else, for a pod being deleted, when its deletion was asked for
	 * (deletionTimestamp minus deletionGracePeriodSeconds). -1 while it holds them, and for
	 * a pod that never started. An offset rather than a time, so that it fits in what was
	 * the struct's tail padding (68 years of seconds). */
	int32_t held_seconds;
	/* spec.terminationGracePeriodSeconds (30 when unset, as API defaulting makes it), capped
	 * at INT32_MAX: how long the pod may hold its node after it is told to stop. */
	int32_t termination_grace;
	bool terminated;
	bool ready;         /* condition Ready=True */
	bool unschedulable; /* condition PodScheduled=False with reason Unschedulable */
	bool kept;          /* labelled TJ_LABEL_FAILED_ATTEMPT */
	bool gated;         /* spec.schedulingGates names TJ_SCHEDULING_GATE */
	bool packed;        /* true if made by tj_pod_from_json(): see above */
};

/* A pod that has Succeeded or Failed: its containers are gone and its requests free. */
static inline bool tj_pod_terminal(const struct tj_pod *pod)
{
	return pod->phase == TJ_POD_SUCCEEDED || pod->phase == TJ_POD_FAILED;
}

/* The node the pod uses or will: spec.nodeName once bound, else the node our admission
 * pinned it to, else the node kube-scheduler nominated it for; NULL for none. */
static inline const char *tj_pod_node_of(const struct tj_pod *pod)
{
	return pod->node_name     ? pod->node_name
	       : pod->pinned_node ? pod->pinned_node
	                          : pod->nominated_node;
}

/* Projects a Pod object (the "object" of a watch event, or a list item) into a new struct.
 * Returns -EINVAL if the object is not a Pod with a namespace and a name. */
int tj_pod_from_json(const cJSON *obj, struct tj_pod **ret);

/* The store key "namespace/name" written into buf; -ENAMETOOLONG if it does not fit. */
int tj_pod_key(const struct tj_pod *pod, char *buf, size_t size);

/* The pod store (informers/store.h): keyed "namespace/name", with these indexes. */
enum {
	TJ_POD_INDEX_TRAINJOB, /* "namespace/trainjob" from the label TJ_LABEL_TRAINJOB */
	/* spec.nodeName, or pinned_node while the pod is not bound, or nominated_node while it
	 * is neither: the pods of one node are every pod that uses it or will. */
	TJ_POD_INDEX_NODE,
};
extern const struct tj_store_ops tj_pod_store_ops;

/* The key "namespace/trainjob" of the TrainJob a pod belongs to (by its label), for a
 * handler that queues the owner: returns 1, 0 if the pod has no TrainJob label, or
 * -ENAMETOOLONG. */
int tj_pod_trainjob_key(const struct tj_pod *pod, char *buf, size_t size);

/* The pods of the TrainJob job_key ("namespace/name") in a store of tj_pod_store_ops: those
 * its label names whose controller ownerReference has the uid owner_uid, as a new array
 * (NULL if there are none) that the caller frees with free(); the pods stay the store's.
 * The label alone is not ownership: pods that carry it for another owner (a namesake's
 * leftovers, a copy made by hand) are left out before anything is counted, so that no
 * number of them can crowd out the job's own. 0, -E2BIG if the job owns more than max pods
 * (nothing is returned), or -ENOMEM. */
int tj_pod_collect_owned(const struct tj_store *store, const char *job_key, const char *owner_uid,
                         size_t max, const struct tj_pod ***ret, size_t *ret_n);

/* A pod spec's terminationGracePeriodSeconds: 30 when it does not say, as API defaulting
 * makes it; 0 for a value that is not positive, INT32_MAX past it. For the cached pods and
 * the pods the controller renders alike. */
int32_t tj_pod_spec_termination_grace(const cJSON *pod_spec);

/* tj_pod_from_json() as a reflector projection (tj_project_fn). */
int tj_pod_project(const cJSON *obj, void **ret);

/* Frees the pod and everything it owns. Accepts NULL; returns NULL. */
struct tj_pod *tj_pod_free(struct tj_pod *pod);
