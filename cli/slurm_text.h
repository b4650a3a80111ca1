/* Slurm's vocabulary for TrainJobs, as squeue and sacct print it: job states, durations,
 * node lists, and the times sacct -S takes. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/trainjob.h"

enum tj_slurm_state {
	TJ_SLURM_PENDING,    /* PD: Queued, or admitted with pods not yet running */
	TJ_SLURM_RUNNING,    /* R */
	TJ_SLURM_COMPLETING, /* CG: some ranks are done, or the job ended and pods still stop */
	TJ_SLURM_REQUEUED,   /* RQ: Restarting after a failed worker */
	TJ_SLURM_SUSPENDED,  /* S */
	TJ_SLURM_COMPLETED,  /* CD */
	TJ_SLURM_FAILED,     /* F */
	TJ_SLURM_TIMEOUT,    /* TO: Failed with DeadlineExceeded (the walltime) */
	TJ_SLURM_CANCELLED,  /* CA: being deleted */
	TJ_SLURM_PREEMPTED,  /* PR: preempted, and Queued again (status.preemptions) */
	TJ_SLURM_STATE_COUNT,
};

/* The state of a job: deleting (metadata.deletionTimestamp set) wins, then status.state and
 * reason; live_pods is whether the job still has pods that have not ended. */
enum tj_slurm_state tj_slurm_state_of(const struct tj_trainjob *job, bool live_pods);

/* Whether the job waits in the controller's queue, or will once the controller has seen it:
 * not being deleted, not started (no status.startTime), Queued or without a state yet, held
 * neither by its owner (scontrol hold) nor by a dependency, not suspended, and left to no
 * other admitter (spec.managedBy; a job Kueue holds is suspended). */
bool tj_slurm_in_queue(const struct tj_trainjob *job);

/* "PD", "R", ... and "PENDING", "RUNNING", ... */
const char *tj_slurm_state_letters(enum tj_slurm_state s);
const char *tj_slurm_state_name(enum tj_slurm_state s);

/* True when the job waits in the queue: PD, or PR (preempted, waiting to run again). */
bool tj_slurm_state_waiting(enum tj_slurm_state s);

/* True when the job has ended (CD, F, TO, CA). */
bool tj_slurm_state_finished(enum tj_slurm_state s);

/* Parses the name or the letters of a state, in any case ("pd", "Running"); -EINVAL. */
int tj_slurm_state_parse(const char *s, enum tj_slurm_state *ret);

/* A duration as Slurm prints it: "M:SS", "H:MM:SS", "D-HH:MM:SS" (negative counts as 0). */
void tj_slurm_duration(int64_t seconds, char *buf, size_t size);

/* A time as Slurm prints it, in UTC: "2026-12-01T13:40:00"; "N/A" for 0. */
void tj_slurm_time(int64_t t, char *buf, size_t size);

/* The node names compressed as Slurm writes host lists: names that differ only in a final
 * number join into ranges, "gh200-[1-3,7],cpu-1". Returns 0 or -ENOSPC (buf then ends in
 * "..." where it was cut). */
int tj_slurm_hostlist(const char *const *names, size_t n, char *buf, size_t size);

/* A time as sacct -S takes it, in UTC: "YYYY-MM-DD[THH:MM[:SS]]", "HH:MM[:SS]" (today),
 * "MMDD[YY]", "now[-N[seconds|minutes|hours|days|weeks]]" (bare N: seconds), "today" or
 * "midnight", "yesterday", and RFC 3339. Returns 0 or -EINVAL. */
int tj_slurm_parse_time(const char *s, int64_t now, int64_t *ret);

/* What an exit code reads as in sacct's ExitCode, "code:signal": a container that died of
 * signal N exits 128+N, so 137 reads "0:9"; a job without a failure "0:0". */
void tj_slurm_exit_code(int exit_code, char *buf, size_t size);

/* The partition of a job: the annotation trainjob.flame.dev/partition that kubectl sbatch
 * writes, else the runtime's name without "torch-". Borrowed from job (annotation may be
 * NULL). */
const char *tj_slurm_partition(const struct tj_trainjob *job, const char *annotation);
