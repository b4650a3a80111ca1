/* GPU-seconds: what a TrainJob's pods held, counted by the controller into the job's status
 * (status.gpuSeconds, status.wastedGpuSeconds), where a pod deleted on a restart, a crash of
 * the controller or a move of the leader cannot lose them.
 *
 * A pod holds its GPUs (the GPU class's extended resource, as requested) from its
 * status.startTime until it stops: the finishedAt of its terminated container, else, for a
 * pod being deleted, the moment its deletion was asked for (informers/pod.h, held_seconds).
 * A pod that never started holds nothing; one still running holds them up to now.
 *
 * The rule that counts every second once. The status keeps, beside the two totals, the
 * moment T up to which they are counted (status.gpuSecondsCountedUntil). A plan adds what
 * every pod of the job in the cache held between T and now, and moves T to now, in the
 * same status patch: the patch is conditional on the TrainJob's resourceVersion, so a plan
 * made from a stale status is refused and made again, and a second can never be added
 * twice, across restarts of the job, of the controller, or a new leader. Not writing is
 * lossless as long as the pods stay: the window from T grows and is counted later. So the
 * counts are written with the patches the plan makes anyway (a pod that starts, ends or
 * fails always changes the status), and on their own only when a pod being deleted holds
 * seconds past T: it may vanish from the cache before the next patch. A plan that deletes
 * pods itself (a restart, a failure) writes the status first. What can be lost: the seconds
 * a pod held after T when it vanished without the controller seeing it go (deleted at once
 * with grace 0 by someone else), and time the cache had not yet seen (at most the watch's
 * lag, a second, when a status patch falls between a pod's start and its event).
 *
 * Wasted. An attempt that fails wastes its seconds. Under restart policy Gang every attempt
 * before the current one failed, so a restart makes every second counted so far wasted, and
 * so are the seconds its pods (of an attempt below restartCount) hold while they stop;
 * under Worker a restart wastes the failed pod's own seconds. A job that ends Failed wastes
 * everything it held, including what its pods hold while they are deleted; a Complete job's
 * last attempt is not wasted. wastedGpuSeconds never exceeds gpuSeconds.
 *
 * Pure: no I/O, no clock. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "informers/pod.h"
#include "reconcilers/trainjob.h"

/* The resource counted for a job whose runtime has no GPU class. */
#define TJ_GPU_SECONDS_DEFAULT_RESOURCE "nvidia.com/gpu"

/* GPUs (resource) the pod requests times the seconds it held them within (from, to]. */
int64_t tj_gpu_seconds_of_pod(const struct tj_pod *pod, const char *resource, int64_t from,
                              int64_t to);

struct tj_gpu_seconds_input {
	/* The status the plan started from (what is in the cluster). */
	const struct tj_trainjob_status *old;
	/* The job's own pods, of every attempt (borrowed). */
	const struct tj_pod *const *pods;
	size_t n_pods;
	/* Parallel to pods, or NULL: the plan deletes that pod. */
	const bool *deletes;
	const char *resource; /* the GPU class's resource; NULL: the default above */
	bool gang;            /* restart policy Gang (else Worker) */
	int64_t now;          /* unix seconds */
};

/* Counts into st, the status the plan arrives at (copied from in->old and changed by the
 * plan: its state, restart count and last failure say what happened). The counts advance
 * only when st differs from in->old otherwise, or a pod being deleted (or that the plan
 * deletes) holds seconds not yet counted; else st keeps in->old's. Returns true when a pod
 * the plan deletes holds such seconds: the status must then be written before the delete. */
bool tj_gpu_seconds_count(const struct tj_gpu_seconds_input *in, struct tj_trainjob_status *st);

/* The increments of trainjob_gpu_seconds_total{outcome} when status old becomes new: the
 * seconds of attempts that failed (the growth of wastedGpuSeconds), and, when the job is
 * Complete, the seconds of its attempts that succeeded (gpuSeconds less wastedGpuSeconds,
 * less what an earlier Complete status had). A job's seconds that are neither, until it
 * ends, are counted when it ends, or as cancelled when it is deleted
 * (tj_gpu_seconds_cancelled). */
struct tj_gpu_seconds_outcomes {
	int64_t succeeded;
	int64_t wasted;
};
void tj_gpu_seconds_outcomes(const struct tj_trainjob_status *old,
                             const struct tj_trainjob_status *new_status,
                             struct tj_gpu_seconds_outcomes *ret);

/* The seconds of a job deleted before it ended (neither Complete nor Failed) that no
 * outcome counted: what it held, up to now, less what was wasted. 0 for a finished job. */
int64_t tj_gpu_seconds_cancelled(const struct tj_gpu_seconds_input *in);

/* The outcome label values of trainjob_gpu_seconds_total. */
#define TJ_GPU_OUTCOME_SUCCEEDED "succeeded"
#define TJ_GPU_OUTCOME_WASTED    "wasted"
#define TJ_GPU_OUTCOME_CANCELLED "cancelled"
