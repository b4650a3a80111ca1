/* Pods of the steps other than `node` (reconcilers/steps.h), and the objects every step
 * shares: the PVCs of the runtime's volumeClaimPolicies.
 *
 * A step pod is the step's pod template (with its Job template's labels) and the TrainJob's
 * overrides and patches that target the step (reconcilers/render/overrides.h), named and
 * labelled as a node pod is: the JobSet labels (jobset-name, replicatedjob-name = the step,
 * job-index, the completion index as label and annotation), the TrainJob's name, its
 * attempt; hostname `<J>-<step>-<j>-<k>` in the subdomain <J>; owned by the TrainJob;
 * restartPolicy Never (restarts are the controller's). It gets no GPU placement and no
 * torchrun wiring: initializers and launchers run wherever the scheduler puts them.
 *
 * Initializers, as Kubeflow's initializer plugin passes spec.initializer: the step whose
 * Job template is labelled trainjob-ancestor-step=dataset-initializer (model-initializer)
 * has, in its container of that same name, STORAGE_URI = .dataset.storageUri
 * (.model.storageUri), then the entries of .env upserted by name (so an env STORAGE_URI
 * wins over storageUri), and an envFrom of the Secret .secretRef.name appended.
 *
 * Claims, as JobSet names and mounts them: each PVC template `C` of volumeClaimPolicies
 * becomes the PVC `C-<J>`, owned by the TrainJob; every pod with a container or init
 * container that mounts a volume named `C`, and no volume of that name, gets the volume
 * {name: C, persistentVolumeClaim: {claimName: C-<J>}}. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "reconcilers/steps.h"
#include "reconcilers/trainjob.h"

/* A new Pod for slot of step (not node) at attempt. -EINVAL with reason InvalidRuntime when
 * the template has no containers, or InvalidSpec for a spec.initializer of the wrong shape
 * or an override the template cannot take (tj_overrides_apply);
 * -ENOMEM. */
int tj_render_step_pod(const struct tj_trainjob *job, const struct tj_step *step, int slot,
                       int attempt, cJSON **ret, struct tj_problem *why);

/* Whether every source of spec.initializer that is set has its step in g, with the
 * container of the step's name: 0, or -EINVAL with reason InvalidSpec naming the field
 * (spec.initializer.dataset) when it has none, as it would reach no pod; -ENOMEM. */
int tj_render_check_initializers(const struct tj_trainjob *job, const struct tj_step_graph *g,
                                 struct tj_problem *why);

/* Adds the claims' volumes to a pod, as above. claims is the graph's claim_templates (NULL:
 * nothing to do). -ENOMEM. */
int tj_render_mount_claims(cJSON *pod, const char *claims, const char *job);

/* The PVCs of claims as new objects in *ret (a JSON array; empty without claims). A
 * template without metadata.name is -EINVAL with reason InvalidRuntime. -ENOMEM. */
int tj_render_claims(const struct tj_trainjob *job, const char *claims, cJSON **ret,
                     struct tj_problem *why);

/* True when a container of the pod requests or limits a resource whose name has "gpu" in
 * it (nvidia.com/gpu, amd.com/gpu) or is resource (may be NULL). */
bool tj_render_pod_wants_gpus(const cJSON *pod, const char *resource);
