/* The GPUs of TrainJobs' pods by GPU class, for trainjob_job_gpus{gpu_class,state} of one
 * namespace (controller/metrics/std_metrics.h counts each namespace's pods apart): what the
 * pods request (every pod that holds its GPUs or waits on its node for them), what runs, and
 * what runs idle in a partial gang: a job's current attempt whose pods do not all run yet,
 * so that the running ones hold GPUs that compute nothing while they wait for the rest (a
 * gang that cannot start whole, or one that lost a worker).
 *
 * A pod's class is its node's (the node it is bound to, else the one admission pinned it
 * to): the class whose node labels and architecture the node has. Pods without a node, on a
 * node of no class or not in the cache count nowhere. Pure: no I/O, no clock. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "informers/node.h"
#include "informers/pod.h"
#include "reconcilers/settings.h"

struct tj_gpu_use {
	int64_t requested;
	int64_t running;
	int64_t idle; /* of running, those in partial gangs */
};

/* The index of the class whose node labels and architecture the node has; -1 for none. */
int tj_gpu_class_of_node(const struct tj_config *config, const struct tj_node *node);

typedef const struct tj_node *(*tj_gpu_use_node_fn)(const char *name, void *ctx);

/* Counts into use[0..config->n_classes) (zeroed first) the pods of TrainJobs among pods (any
 * order; those without the TrainJob label, terminated or kept for their logs are left out).
 * node looks a node up by name. -ENOMEM (use untouched). */
int tj_gpu_use_count(const struct tj_config *config, const struct tj_pod *const *pods,
                     size_t n_pods, tj_gpu_use_node_fn node, void *ctx, struct tj_gpu_use *use);
