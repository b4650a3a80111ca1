/* What of a TrainJob's overrides and patches this controller implements, and the refusal of
 * the rest. The schema keeps the pod-spec parts of podTemplateOverrides, podSpecOverrides
 * and runtimePatches open (x-kubernetes-preserve-unknown-fields), so that every manifest
 * written for a Kubeflow release is accepted; a field of them that the renderer does not
 * apply must not be dropped silently. Applied (reconcilers/render/render.h): serviceAccountName,
 * nodeSelector, affinity, tolerations, volumes, schedulingGates, imagePullSecrets, and of
 * containers and initContainers env and volumeMounts; the labels and annotations of the
 * pod template, of the JobSet (reconcilers/render/job_metadata.h) and of a replicated job's Job
 * template; in runtimePatches also the pod spec's terminationGracePeriodSeconds (Kubeflow
 * v2.3), a whole number of seconds, and of the Job spec beside its pod template the values
 * a runtime may give it too, as this controller's behaviour (tj_runtime_job_field_check:
 * backoffLimit 0, completionMode Indexed, podReplacementPolicy Failed). Anything else
 * (securityContext, the grace period in an override, a container's securityContext, another
 * Job spec field or value, a patch of the runtime beyond its template) fails the job with
 * reason InvalidSpec and a message naming the field, before any pod exists. */
#pragma once

#include "reconcilers/trainjob.h"

/* Checks the overrides and patches of job. Returns 0, or -EOPNOTSUPP with reason
 * InvalidSpec and a message naming the first field refused; -ENOMEM. */
int tj_trainjob_support_check(const struct tj_trainjob *job, struct tj_problem *why);
