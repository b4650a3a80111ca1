/* What of a runtime's schema this controller implements, and the refusal of the rest: the
 * rule is that a field the schema accepts either works as Kubeflow Trainer does it or the
 * TrainJob is refused with reason UnsupportedRuntime and a message naming the field, never
 * ignored. The fate of every field is in one table (reconcilers/fields.h, which
 * crds/README.md's "Field by field" section lists); the check walks the runtime against it,
 * after the checks of the values of the limited fields here, whose messages say more.
 *
 * Refused with a message of their own: spec.podGroupPolicy (coscheduling, volcano: the
 * PodGroups of another scheduler; the controller's own admission already creates a job's
 * pods only when all of them fit), mlPolicy.flux (Flux's broker, its init container,
 * entrypoint ConfigMap and CURVE certificate are not built; the message points to an MPI
 * runtime), an mlPolicy source other than torch, mpi, jax and xgboost, any field of jax or
 * xgboost (Kubeflow's have none), of the torch policy anything but numProcPerNode and
 * envInjection (elasticPolicy), an envInjection target that names node or a container its
 * replicated job lacks, and in the JobSet template network.subdomain (the pods' subdomain is
 * the TrainJob's name), network enableDNSHostnames or publishNotReadyAddresses false, a
 * failurePolicy.restartStrategy other than Recreate or BlockingRecreate, a maxRestarts that
 * is not a whole number from 0 to 1000, failurePolicy rules that match on a Job's failure
 * message (there are no Jobs whose messages they could read) or on a Job failure reason that
 * does not happen here (only PodFailurePolicy and BackoffLimitExceeded do), that target a
 * replicated job the runtime lacks, action RestartJobSetAndIgnoreMaxRestarts, a
 * podFailurePolicy beyond rules FailJob and Count on the exit code of a one-container pod
 * (reconcilers/failure_rules.h), a Job field of a
 * replicated job other than the pod template, parallelism and completions, except the
 * values that are this controller's behaviour (tj_runtime_job_field_check) and
 * activeDeadlineSeconds on the node step (the walltime), and a volumeClaimPolicy's
 * retentionPolicy.whenDeleted other than Delete and Retain.
 *
 * Implemented: failurePolicy.maxRestarts is the job's own restart budget (the project's
 * annotation trainjob.flame.dev/max-restarts, on the TrainJob or the runtime, wins over it);
 * a first rule that matches every failure decides it (FailJobSet is a budget of 0), and
 * every rule decides the failures it matches (reconcilers/failure_rules.h). The fields the step
 * graph reads (replicatedJobs with their groupName and Job template metadata, successPolicy,
 * startupPolicy, volumeClaimPolicies) and suspend (the TrainJob's spec.suspend decides, as in
 * Kubeflow) are accepted here. */
#pragma once

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

#define TJ_REASON_UNSUPPORTED_RUNTIME "UnsupportedRuntime"

/* Checks a runtime object (either kind). Returns 0, or -EOPNOTSUPP with reason
 * UnsupportedRuntime and a message naming the first field refused. */
int tj_runtime_support_check(const cJSON *runtime, struct tj_problem *why);

/* The restart budget the runtime's JobSet failurePolicy gives: 0 when its first rule
 * matches every failure with FailJobSet, else maxRestarts (JobSet's default 0 when the
 * policy lacks it); -1 without a failurePolicy, or with a maxRestarts that is not a number
 * in 0..1000. Call tj_runtime_support_check first: the rules it refuses are not read. */
int tj_runtime_failure_budget(const cJSON *runtime);

/* The value of a limited Job field of a replicated job's Job template (el, a member of its
 * spec), the same in a runtime and in a TrainJob's runtimePatches: backoffLimit 0,
 * completionMode Indexed and podReplacementPolicy Failed, what the controller does. 0 for
 * such a value; -EOPNOTSUPP with reason and a message naming field for another; -ENOENT
 * when el is not one of those fields. */
int tj_runtime_job_field_check(const cJSON *el, const char *field, const char *reason,
                               struct tj_problem *why);
