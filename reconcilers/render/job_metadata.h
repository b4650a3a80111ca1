/* The labels and annotations a TrainJob's objects get from above their pod template.
 *
 * Kubeflow Trainer v2.3.0 puts the runtime template's spec.template.metadata, and over it the
 * template.metadata of each of the TrainJob's runtimePatches in order, on the JobSet it
 * creates; v2.0 and v2.1 merged the TrainJob's spec.labels and spec.annotations over the
 * runtime's, "for the derivative JobSet and Jobs". Here there is no JobSet and no Job: they go
 * on the objects that stand for them, every pod of the job and its headless Service. The
 * order, later winning: the runtime template's, the TrainJob's spec.labels and
 * spec.annotations, the runtimePatches in order (and for the pods of a replicated job, the
 * patches' Job metadata of that job after them). A key the object already has keeps its
 * value: the pod template's own labels, the overrides' and the controller's (the
 * trainjob-name and JobSet labels that selectors read) win over these. */
#pragma once

#include <cjson/cJSON.h>

#include "reconcilers/runtime.h"
#include "reconcilers/trainjob.h"

/* Adds the merged labels and annotations to the object metadata meta where it lacks the
 * key. For a pod of step (a replicated job's name; NULL for the Service), the Job's
 * metadata of the runtimePatches' replicated job of that name comes last, over the
 * JobSet's. Returns 0, or -ENOMEM. */
int tj_job_metadata_apply(cJSON *meta, const struct tj_trainjob *job,
                          const struct tj_runtime *runtime, const char *step);
