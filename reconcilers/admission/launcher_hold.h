/* The place an admitted gang holds for its MPI launcher (reconcilers/admission/admission.h: a
 * launcher that asks for GPUs is placed with the node pods). The launcher is created only once the
 * nodes are Ready, so its node is written, with what it will request, in the annotation
 * TJ_ANNOTATION_LAUNCHER_HOLD (informers/pod.h) of the first node pod the admission created:
 * the pod and its hold reach the API server in one create. From the cache, the capacity
 * counts the hold on its node until the launcher pod exists, and the plan pins the launcher
 * there, after a restart of the controller as before it.
 *
 * The annotation's value is compact JSON:
 *   {"pod":"<launcher pod>","node":"<node>",
 *    "containers":[{"resources":{"requests":{"cpu":"500m","memory":"1073741824",
 *                                            "nvidia.com/gpu":"4"}}}]}
 * whose containers are the launcher's effective requests (informers/resources.h), so that
 * it reads as a pod spec. (An older controller also wrote the node's hostname label, which
 * is read past: the launcher is pinned by the node's name.) */
#pragma once

#include <stdint.h>

#include <cjson/cJSON.h>

#include "informers/pod.h"
#include "informers/resources.h"
#include "reconcilers/trainjob.h"

/* The longest annotation value read; a longer one is not ours and holds nothing. */
#define TJ_LAUNCHER_HOLD_MAX TJ_POD_LAUNCHER_HOLD_MAX
#define TJ_RESOURCE_NAME_MAX 64

struct tj_launcher_hold {
	char pod[TJ_NAME_MAX];  /* the launcher pod whose place it is */
	char node[TJ_NAME_MAX]; /* the node admission chose */
	int64_t cpu_milli, memory;
	uint8_t n_extended;
	struct {
		char name[TJ_RESOURCE_NAME_MAX];
		int64_t value;
	} extended[TJ_RESOURCES_MAX_EXTENDED];
};

/* The annotation's value for the launcher pod launcher (its metadata.name and its spec's
 * requests) held on node. -EINVAL for a launcher without a name or with a quantity that is
 * not one; -ENOMEM. */
int tj_launcher_hold_format(const cJSON *launcher, const char *node, char **ret);

/* Reads an annotation's value; -EINVAL if it is not one tj_launcher_hold_format makes (too
 * long, not JSON, a name missing or too long). *ret is written only on success. */
int tj_launcher_hold_parse(const char *text, struct tj_launcher_hold *ret);

/* The hold's request of the extended resource name; 0 if absent. */
int64_t tj_launcher_hold_extended(const struct tj_launcher_hold *h, const char *name);
