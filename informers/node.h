/* Node projection: what the controller needs to judge a node's health. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

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

/* A node from tj_node_from_json() is one allocation: the struct, its arrays and its strings.
 * A node built field by field (in a test) leaves packed false and owns each array and string
 * as a separate malloc'd block; tj_node_free() handles both. */
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
	bool packed; /* true if made by tj_node_from_json(): see above */
};

/* Projects a Node object into a new struct; -EINVAL if it is not a Node with a name.
 * Limits: at most 64 conditions and 64 taints are kept (-E2BIG beyond). */
int tj_node_from_json(const cJSON *obj, struct tj_node **ret);

/* The condition of the given type, or NULL. */
const struct tj_node_condition *tj_node_condition(const struct tj_node *node, const char *type);

/* The node store (informers/store.h): keyed by name. */
extern const struct tj_store_ops tj_node_store_ops;

/* tj_node_from_json() as a reflector projection (tj_project_fn). */
int tj_node_project(const cJSON *obj, void **ret);

/* Frees the node and everything it owns. Accepts NULL; returns NULL. */
struct tj_node *tj_node_free(struct tj_node *node);
