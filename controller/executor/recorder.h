/* The event recorder: core/v1 Events on TrainJobs, so that `kubectl describe` and Kubeflow's
 * SDK (which reads events.firstTimestamp) show every transition. Repeats of an event are
 * folded into one Event whose count and lastTimestamp grow, and a per-object spam budget
 * keeps a crash loop from flooding the API server (reconcilers/events.h decides; this file
 * does the I/O). Recording is best effort: a failed write is logged, never retried in a
 * loop, and never fails a reconcile. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "kube/client.h"

struct tj_recorder;

/* What the Event names as its involved object: a TrainJob, or a Node (kind "Node"), whose
 * Events go to namespace "default" as the kubelet's do. Strings borrowed for the call. */
struct tj_event_object {
	const char *namespace;
	const char *name;
	const char *uid;
	const char *kind; /* NULL: a TrainJob */
};

/* component is the Event's source.component and reportingComponent, instance its
 * reportingInstance (the pod or host name). Both copied. */
int tj_recorder_new(struct tj_client *client, const char *component, const char *instance,
                    struct tj_recorder **ret);

/* Records one occurrence at now_ns (unix nanoseconds). Returns 0 when the write was sent
 * or deliberately dropped by the spam filter, or a negative errno if it could not be sent. */
int tj_recorder_record(struct tj_recorder *r, const struct tj_event_object *obj, bool warning,
                       const char *reason, const char *message, int64_t now_ns);

/* Cancels writes in flight and frees the recorder. Accepts NULL; returns NULL. */
struct tj_recorder *tj_recorder_free(struct tj_recorder *r);
