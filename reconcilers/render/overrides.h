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
 * Every step takes them: node, the initializers, an MPI launcher, any replicated job of the
 * runtime. A target that names no replicated job of the runtime is refused (Kubeflow's
 * webhook refuses it: "must not have replicated job that doesn't exist in the runtime job
 * template"). What the pod spec of an override may hold at all is trainjob_support.h's
 * check. */
#pragma once

#include <cjson/cJSON.h>

#include "reconcilers/runtime.h"
#include "reconcilers/trainjob.h"

/* Applies to pod (a Pod, or a pod template {metadata, spec}) every override and patch of
 * job that targets step. An override naming a container the pod lacks, or setting the env
 * of a container named node, dataset-initializer or model-initializer (whose env Kubeflow
 * takes from spec.trainer.env and spec.initializer only), is -EINVAL with reason InvalidSpec
 * and a message naming the field; -ENOMEM. */
int tj_overrides_apply(cJSON *pod, const struct tj_trainjob *job, const char *step,
                       struct tj_problem *why);

/* Before any pod of job exists: every target of its overrides and patches names a
 * replicated job of rt (else -EINVAL with reason InvalidSpec, naming the field, the target
 * and the jobs there are), and each step's template takes what targets it (the errors of
 * tj_overrides_apply). 0 for a runtime whose step graph is not valid (that is its own
 * refusal). -ENOMEM. */
int tj_overrides_check(const struct tj_trainjob *job, const struct tj_runtime *rt,
                       struct tj_problem *why);
