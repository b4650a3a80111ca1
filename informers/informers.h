/* The informers the controller runs: one reflector and cache per resource, on one kube
 * client. TrainJobs, TrainingRuntimes and ClusterTrainingRuntimes are projected by the
 * functions reconcilers/ provides; Pods and Nodes by informers/pod.h and informers/node.h.
 * Every pod is watched, not only the controller's own: a node's free GPUs, CPU and memory
 * are what all of its pods leave (notebooks and other workloads hold GPUs too). The
 * PriorityClasses, when asked for, give the queue the value of a pod's priorityClassName;
 * Kueue's Workloads, when asked for, say why Kueue holds a TrainJob. */
#pragma once

#include <stdbool.h>

#include <uv.h>

#include "informers/node.h"
#include "informers/pod.h"
#include "informers/reflector.h"
#include "informers/store.h"
#include "kube/client.h"
#include "kube/request.h"

/* A list-watch bound to a client and a collection (ref.name NULL; ref.namespace NULL for
 * all namespaces or a cluster-scoped resource). Fill it, then take tj_listwatch_kube(). */
struct tj_kube_listwatch {
	struct tj_client *client; /* borrowed */
	struct tj_ref ref;        /* strings borrowed; must outlive the reflector */
};

struct tj_listwatch tj_listwatch_kube(struct tj_kube_listwatch *klw);

/* One resource the set watches: its projection and handlers. A NULL project leaves the
 * informer out (its reflector stays NULL). */
struct tj_informer_config {
	tj_project_fn project;
	const struct tj_store_ops *ops; /* must outlive the set */
	struct tj_reflector_handlers handlers;
};

struct tj_informers_config {
	struct tj_client *client; /* borrowed */
	/* Scope of the namespaced resources; NULL watches all namespaces. Copied. */
	const char *namespace;
	struct tj_informer_config trainjobs;
	struct tj_informer_config training_runtimes;
	struct tj_informer_config cluster_training_runtimes;
	/* project and ops of pods and nodes default to the ones above when NULL. */
	struct tj_informer_config pods;
	struct tj_informer_config nodes;
	/* Left out unless its project is set (tj_priority_class_project). */
	struct tj_informer_config priority_classes;
	/* Kueue's Workloads; left out unless its project is set (tj_workload_project). */
	struct tj_informer_config workloads;
	/* ResourceQuotas; left out unless its project is set (tj_resource_quota_project). */
	struct tj_informer_config resource_quotas;
	/* ConfigMaps, only those config_map_selector selects (the runtime snapshots); left out
	 * unless its project is set. */
	struct tj_informer_config config_maps;
	const char *config_map_selector; /* a label selector; must outlive the set */
	uint32_t seed;                   /* of the reflectors' jitter; 0 = from the clock */
	/* Fill the caches from paginated lists only; by default each list is first tried as a
	 * streaming list (tj_reflector_config.streaming_list). */
	bool paginated_lists;
};

struct tj_informers {
	struct tj_reflector *trainjobs;                 /* owned; NULL if left out */
	struct tj_reflector *training_runtimes;         /* owned; NULL if left out */
	struct tj_reflector *cluster_training_runtimes; /* owned; NULL if left out */
	struct tj_reflector *pods;                      /* owned */
	struct tj_reflector *nodes;                     /* owned */
	struct tj_reflector *priority_classes;          /* owned; NULL if left out */
	struct tj_reflector *workloads;                 /* owned; NULL if left out */
	struct tj_reflector *resource_quotas;           /* owned; NULL if left out */
	struct tj_reflector *config_maps;               /* owned; NULL if left out */
	char *namespace;                                /* owned; NULL = all */
	struct tj_kube_listwatch lw[9];
	struct tj_list_turns turns; /* of the reflectors' streaming lists */
};

int tj_informers_new(uv_loop_t *loop, const struct tj_informers_config *config,
                     struct tj_informers **ret);

/* Starts every reflector's first list. */
int tj_informers_start(struct tj_informers *inf);

/* True when every informer of the set has synced (controllers wait for this). */
bool tj_informers_have_synced(const struct tj_informers *inf);

/* Frees the reflectors (memory released on the next loop iteration). Accepts NULL. */
struct tj_informers *tj_informers_free(struct tj_informers *inf);
