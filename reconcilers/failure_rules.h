/* The failure rules a runtime may give the job's own failures, as JobSet and a Job apply
 * them: a step's Job template's podFailurePolicy names the reason its Job fails with
 * (PodFailurePolicy for a rule FailJob that matches the failed pod's exit code,
 * BackoffLimitExceeded otherwise, every step's backoffLimit being 0 here), and the first
 * rule of the JobSet's failurePolicy that matches the step and that reason decides:
 * FailJobSet fails the job, RestartJobSet restarts it within its budget. A failure of the
 * infrastructure (a node lost, an eviction) is the config's maxInfrastructureRestarts'
 * whatever the rules say.
 *
 * What of the rules is supported is checked by reconcilers/runtime_support.h before a job
 * runs: podFailurePolicy rules with action FailJob or Count on onExitCodes (operator In or
 * NotIn) of a step whose pod has one container; failurePolicy rules on the reasons above and
 * on targetReplicatedJobs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TJ_JOB_REASON_POD_FAILURE_POLICY "PodFailurePolicy"
#define TJ_JOB_REASON_BACKOFF_LIMIT      "BackoffLimitExceeded"
/* The reason of a job that a FailJobSet rule failed, as JobSet names it. */
#define TJ_REASON_FAIL_JOBSET_ACTION "FailJobSetFailurePolicyAction"

/* The reason the Job of a step fails with when its pod failed with exit_code (-1: no
 * container terminated), by pod_rules (compact JSON of the step's podFailurePolicy.rules,
 * NULL for none). */
const char *tj_failure_job_reason(const char *pod_rules, int exit_code);

/* Whether jobset_rules (compact JSON of failurePolicy.rules, NULL for none) fail the job
 * when the Job of step fails with job_reason: true, with the rule named in why ("failurePolicy
 * rule 0 (fatal): FailJobSet on PodFailurePolicy"), when the first rule that matches is
 * FailJobSet. */
bool tj_failure_rules_fail(const char *jobset_rules, const char *step, const char *job_reason,
                           char *why, size_t size);
