/* QOS tiers, as Slurm's QOS: which tier a TrainJob runs in, and what the tier allows. Pure
 * functions of the admission policy and the job.
 *
 * - Tiers. The config's admission.qos names the tiers, each with a priority and an optional
 *   maxWalltime. Without it the built-in tiers hold: normal (priority 0), low (-1000,
 *   a scavenger tier for idle GPUs) and high (1000).
 * - Namespaces. admission.namespaces says, per namespace ("*" for every namespace without an
 *   entry of its own), which tiers its jobs may ask for and the one they get without asking.
 *   Without it: every namespace may use normal and low, and gets normal; high is allowed
 *   nowhere until the operator says so. A namespace with no entry and no "*" entry may use
 *   no tier: its jobs fail.
 * - The choice. A TrainJob asks for a tier with the annotation trainjob.flame.dev/qos
 *   (kubectl sbatch --qos). A tier its namespace may not use, or one the config does not
 *   name, fails the job with reason PolicyViolation and a message listing the allowed ones.
 * - Order. The tier's priority orders the queue of a class before anything a job sets on
 *   itself: the job's own priority (the annotation trainjob.flame.dev/priority, else its
 *   pods' PriorityClass) only reorders the queued jobs of its own namespace and tier among
 *   themselves (reconcilers/admission/admission.h), so no job goes past another namespace's.
 * - Walltime. A tier's maxWalltime is one more maximum (reconcilers/policy/walltime.h): a
 *   job asking for more fails with PolicyViolation, one asking for nothing gets the smaller
 *   of its default and the tier's maximum. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "reconcilers/policy/walltime.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

#define TJ_ANNOTATION_QOS TJ_LABEL_PREFIX "qos"

/* The tiers in force: the config's, or the built-in ones. */
const struct tj_qos_tier *tj_qos_tiers(const struct tj_admission_policy *policy, size_t *n);

/* The index of tier among the tiers in force (tj_qos_tiers); 32 for NULL. */
unsigned tj_qos_index(const struct tj_admission_policy *policy, const struct tj_qos_tier *tier);

/* The tier of that name, or NULL. */
const struct tj_qos_tier *tj_qos_find(const struct tj_admission_policy *policy, const char *name);

/* The rule of namespace: its own entry, else "*"'s; NULL when neither exists. */
const struct tj_qos_namespace *tj_qos_namespace_rule(const struct tj_admission_policy *policy,
                                                     const char *namespace);

/* The tier of a job of namespace that asks for asked (its annotation; NULL for none).
 * Returns it, or NULL with reason PolicyViolation and a message naming the tiers the
 * namespace may use. */
const struct tj_qos_tier *tj_qos_resolve(const struct tj_admission_policy *policy,
                                         const char *namespace, const char *asked,
                                         struct tj_problem *why);

/* Holds a resolved walltime to the tier's maxWalltime. 0, or -EINVAL with reason
 * PolicyViolation when the job asked for more (*w unchanged then). */
int tj_qos_walltime(const struct tj_qos_tier *tier, struct tj_walltime *w, struct tj_problem *why);
