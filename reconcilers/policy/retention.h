/* Retention: how long what a job leaves behind stays (DESIGN.md section 4, "Policy").
 *
 * - A finished job (Complete or Failed) keeps its pods, for their logs, until its TTL has
 *   passed since its completion: the runtime's ttlSecondsAfterFinished, else the config's
 *   retention.ttlSecondsAfterFinished (none by default). Then its pods and Service go; the
 *   TrainJob stays with its status, the record of the job.
 * - A replaced attempt's finished pods are kept for `kubectl logs` (they hold no GPUs any
 *   more): first they lose the labels by which Kubeflow's SDK and the Service find a rank,
 *   so that both still see one pod per rank, and get TJ_LABEL_FAILED_ATTEMPT; then they
 *   stay until every pod of the current attempt has run for keepFailedPodsSeconds, or
 *   until the TTL once the job is finished. Only the newest replaced attempt is kept: the
 *   last crash is the one a person reads. A pod on a failed node, one that never finished
 *   and one already being deleted are deleted as before (force, on a failed node).
 * - A stalled attempt's pods (reconcilers/policy/stall.h) still run when the attempt is
 *   replaced: they are stopped, not deleted, so that their logs stay. The patch that takes
 *   their rank's labels away also sets spec.activeDeadlineSeconds to 1, on which their
 *   kubelet stops them as it stops any pod past its deadline (SIGTERM, SIGKILL after the
 *   grace period) and leaves them Failed with reason DeadlineExceeded. They are kept while
 *   they stop, until their grace period and TJ_STOP_SLACK_SECONDS more have passed since
 *   the stall; a pod that still runs then (a kubelet that does not stop it) is deleted, so
 *   that it never holds its GPUs for ever. Once stopped they are kept as a crashed
 *   attempt's finished pods are. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "reconcilers/runtime.h"
#include "reconcilers/settings.h"

/* The TTL of a job of runtime (NULL: none found): the runtime's, else the policy's; -1 for
 * none. */
int tj_retention_ttl(const struct tj_runtime *runtime, const struct tj_retention_policy *policy);

/* Whether the TTL of a job that finished at completion_time (unix seconds) has passed at
 * now; if not, *ret_wait (when not NULL) receives the seconds left. False for ttl -1 or a
 * job without a completion time. */
bool tj_retention_ttl_expired(int64_t completion_time, int ttl, int64_t now, int64_t *ret_wait);

/* How long after its grace period a stopped pod may still run before it is deleted: the
 * kubelet looks at a pod's deadline every second, and its status takes a moment to reach the
 * cache. */
#define TJ_STOP_SLACK_SECONDS 60

/* A pod that is not (any more) the current pod of its rank. */
struct tj_keep_input {
	bool finished;    /* Succeeded or Failed */
	bool deleting;    /* has a deletionTimestamp */
	bool node_failed; /* its node has been unhealthy for the grace period */
	bool kept;        /* already labelled TJ_LABEL_FAILED_ATTEMPT */
	/* It still runs, and the job's last restart was a stall that found it running: it is
	 * to be stopped and kept for its logs until stop_until (unix seconds), then deleted. */
	bool stopping;
	int64_t stop_until;
	int attempt;
	int newest_attempt;    /* the newest attempt among such pods that are kept or may be */
	bool job_finished;     /* Complete or Failed: the TTL decides */
	int64_t running_since; /* when the current attempt had every pod running; 0: not yet */
	int keep_seconds;      /* retention.keepFailedPodsSeconds */
	int64_t now;
};

enum tj_keep_verdict {
	/* keep it: first take its rank's labels away (and stop it, when it is stopping) */
	TJ_KEEP_LABEL,
	TJ_KEEP,        /* keep it as it is */
	TJ_KEEP_DELETE, /* delete it */
};

/* What becomes of the pod; for TJ_KEEP, *ret_wait receives the seconds until it is to be
 * deleted, or 0 when no time is known yet. */
enum tj_keep_verdict tj_retention_keep(const struct tj_keep_input *in, int64_t *ret_wait);

/* Whether a stalled attempt's pod is kept while its kubelet stops it: stopping, not being
 * deleted, its node not failed, before stop_until. */
bool tj_retention_stopping(const struct tj_keep_input *in);

/* Whether a pod might be kept (it is finished, not being deleted, and its node has not
 * failed), for the newest_attempt of the others. */
bool tj_retention_keepable(const struct tj_keep_input *in);
