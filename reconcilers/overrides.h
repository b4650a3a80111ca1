/* A TrainJob's overrides and patches of the pod template of one replicated job (a step):
 * Kubeflow Trainer's v2.0 podSpecOverrides and v2.1 podTemplateOverrides (each naming its
 * steps in targetJobs) and the newer runtimePatches (each naming its steps in
 * trainingRuntimeSpec.template.spec.replicatedJobs[].name), applied in that order, each list
 * in its own order, later entries winning, as a strategic merge patch would: maps
 * (labels, annotations, nodeSelector) merged, lists merged by their keys (volumes, env,
 * schedulingGates and imagePullSecrets by name, volumeMounts by mountPath), tolerations
 * added, affinity merged member by member. Kubeflow merges them into the runtime's template
 * before its plugins run, so the fields the controller and the plugins set (initializer env,
 * MPI volumes, placement, names) come after them.
 *
 * What the pod spec of an override may hold at all is trainjob_support.h's check. */
#pragma once

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

/* Applies to pod (a Pod, or a pod template {metadata, spec}) every override and patch of
 * job that targets step. An override naming a container the pod lacks, or setting the env
 * of container node (Kubeflow's trainer env is spec.trainer.env), is -EINVAL with reason
 * InvalidSpec and a message naming the field; -ENOMEM. */
int tj_overrides_apply(cJSON *pod, const struct tj_trainjob *job, const char *step,
                       struct tj_problem *why);
