/* Node projection: what the controller needs to judge a node's health and its capacity. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/resources.h"
#include "informers/store.h"

enum tj_condition_status {
	TJ_COND_UNKNOWN,
	TJ_COND_TRUE,
	TJ_COND_FALSE,
};

struct tj_node_condition {
	char *type; /* owned */
	enum tj_condition_status status;
	char *reason;                 /* owned; NULL if unset */
	int64_t last_transition_time; /* unix seconds */
};

struct tj_node_taint {
	char *key;          /* owned */
	char *value;        /* owned; NULL if unset */
	char *effect;       /* owned; NoSchedule, PreferNoSchedule or NoExecute */
	int64_t time_added; /* unix seconds, 0 if unset */
};

struct tj_node_label {
	char *key;   /* owned */
	char *value; /* owned */
};

/* What the controller writes on a node it finds suspect (reconcilers/policy/suspect.h): the
 * failures seen there, and the mark that goes with the taint. A failures annotation longer
 * than TJ_NODE_FAILURES_MAX was not written by the controller and is not kept; nor is the
 * text of such a mark, though the mark counts. */
#define TJ_ANNOTATION_NODE_FAILURES "trainjob.flame.dev/failures"
#define TJ_ANNOTATION_SUSPECT       "trainjob.flame.dev/suspect"
#define TJ_NODE_FAILURES_MAX        16384

/* Extended resources kept per node (GPUs, MIG slices, RDMA devices...). */
#define TJ_NODE_MAX_EXTENDED 8
/* Labels kept per node. A node labelled by node-feature-discovery and GPU feature discovery
 * carries one to two hundred; the API server sends them sorted by key, and those beyond the
 * limit are left out rather than the node, whose health the controller must still see. */
#define TJ_NODE_MAX_LABELS 256

/* status.allocatable: what pods may request on the node in all. */
struct tj_node_allocatable {
	int64_t cpu_milli; /* thousandths of a CPU */
	int64_t memory;    /* bytes */
	int64_t pods;
	uint8_t n_extended;
	/* The first TJ_NODE_MAX_EXTENDED extended resources (informers/resources.h), in the
	 * order of the object (sorted by name); names as in a pod's requests. */
	struct tj_extended_resource extended[TJ_NODE_MAX_EXTENDED];
};

/* A node from tj_node_from_json() is one allocation: the struct, its arrays and its strings,
 * except the keys and values of its labels and the names of its extended resources, which are
 * interned (informers/intern.h: thousands of nodes repeat the same labels) and hold one
 * reference each. A node built field by field (in a test) leaves packed false and owns each
 * array and string as a separate malloc'd block, except the names of its extended resources,
 * which it borrows (string literals); tj_node_free() handles both. */
struct tj_node {
	char *name;                           /* owned */
	char *uid;                            /* owned */
	char *resource_version;               /* owned */
	char *arch;                           /* owned; label kubernetes.io/arch, NULL if absent */
	bool unschedulable;                   /* spec.unschedulable (cordoned) */
	struct tj_node_condition *conditions; /* owned array of n_conditions */
	size_t n_conditions;
	struct tj_node_taint *taints; /* owned array of n_taints */
	size_t n_taints;
	struct tj_node_label *labels; /* owned array of n_labels; NULL if none */
	size_t n_labels;
	struct tj_node_allocatable allocatable;
	char *failures;     /* owned; annotation TJ_ANNOTATION_NODE_FAILURES, NULL if absent */
	char *suspect_mark; /* owned; annotation TJ_ANNOTATION_SUSPECT, NULL if absent ("" if
	                     * longer than TJ_NODE_FAILURES_MAX) */
	bool packed;        /* true if made by tj_node_from_json(): see above */
};

/* Projects a Node object into a new struct; -EINVAL if it is not a Node with a name.
 * Limits: at most 64 conditions and 64 taints are kept (-E2BIG beyond); of the labels and
 * the allocatable extended resources, the first TJ_NODE_MAX_LABELS and
 * TJ_NODE_MAX_EXTENDED. An allocatable quantity that is not one counts as 0 (the node
 * offers none of it), one too large for an int64 as INT64_MAX. */
int tj_node_from_json(const cJSON *obj, struct tj_node **ret);

/* The condition of the given type, or NULL. */
const struct tj_node_condition *tj_node_condition(const struct tj_node *node, const char *type);

/* The value of the label key, or NULL if the node does not have it. */
const char *tj_node_label(const struct tj_node *node, const char *key);

/* The allocatable amount of the extended resource name, 0 if the node has none. */
int64_t tj_node_allocatable_extended(const struct tj_node *node, const char *name);

/* Whether two versions of a node are alike to whatever places pods on it or judges its
 * health: spec.unschedulable, the arch, labels, taints, allocatable, and the conditions'
 * type, status, reason and transition time. They may differ in what a kubelet's periodic
 * status report alone moves (resourceVersion, lastHeartbeatTime), which thousands of nodes
 * send every few minutes and which frees or takes nothing. */
bool tj_node_same_placement(const struct tj_node *a, const struct tj_node *b);

/* The node store (informers/store.h): keyed by name. */
extern const struct tj_store_ops tj_node_store_ops;

/* tj_node_from_json() as a reflector projection (tj_project_fn). */
int tj_node_project(const cJSON *obj, void **ret);

/* Frees the node and everything it owns. Accepts NULL; returns NULL. */
struct tj_node *tj_node_free(struct tj_node *node);
