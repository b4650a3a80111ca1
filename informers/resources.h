/* The resources a pod requests, computed as the scheduler computes them, so that the
 * controller can tell what is free on a node from every pod on it (not only its own).
 *
 * For each resource: the larger of (the sum over the containers, sidecars included) and (the
 * largest init container, plus the sidecars started before it), then plus spec.overhead.
 * A sidecar is an init container with restartPolicy Always (Kubernetes 1.29 and later): it
 * runs beside the containers, so it adds to the sum. A container that sets a limit and no
 * request for a resource requests its limit, as API defaulting does; the pods the planner
 * renders are not defaulted by a server, so this is done here for them too. Pod-level
 * resources (spec.resources, Kubernetes 1.32 and later) replace the containers' CPU and
 * memory when they are set. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* Extended resources kept per pod (a GPU and perhaps an RDMA device); nodes keep more. */
#define TJ_RESOURCES_MAX_EXTENDED 2

/* One extended resource and its amount (struct tj_resource is the API resource of
 * kube/request.h). */
struct tj_extended_resource {
	/* Borrowed. From tj_pod_spec_requests(), a member name of the spec's tree; in a
	 * cached object, interned (informers/intern.h), so that every pod shares one copy of
	 * "nvidia.com/gpu". */
	const char *name;
	int64_t value; /* whole units, rounded up */
};

struct tj_pod_resources {
	int64_t cpu_milli; /* thousandths of a CPU */
	int64_t memory;    /* bytes */
	uint8_t n_extended;
	/* In the order first met. */
	struct tj_extended_resource extended[TJ_RESOURCES_MAX_EXTENDED];
};

/* True for an extended resource: a name with a domain that is not kubernetes.io's
 * ("nvidia.com/gpu", "rdma/hca"). cpu, memory, ephemeral-storage, hugepages-* and pods are
 * native resources, not extended ones. */
bool tj_resource_is_extended(const char *name);

/* The effective requests of a pod from its spec (above). Quantities too large for an int64
 * count as INT64_MAX (nothing fits them), and sums saturate there. The extended resources
 * kept are the first TJ_RESOURCES_MAX_EXTENDED names met (containers, then init
 * containers, then overhead); names are borrowed from pod_spec's tree.
 *
 * Returns 0, or 1 if the pod requests more extended resources than that (*ret is written,
 * without the names left out). -EINVAL, with *ret untouched, if a quantity read is not one
 * or is negative (the API server refuses both, so only a pod of our own can have them).
 * A spec that is missing or mistyped has no requests. */
int tj_pod_spec_requests(const cJSON *pod_spec, struct tj_pod_resources *ret);

/* The request for the extended resource name, 0 if absent. */
int64_t tj_pod_resources_extended(const struct tj_pod_resources *r, const char *name);
