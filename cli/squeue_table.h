/* What kubectl squeue prints (pure): the TrainJobs as Slurm's squeue lists jobs,
 *   JOBID PARTITION NAME USER ST TIME TIME_LEFT PROGRESS ETA NODES NODELIST(REASON)
 * with the queue's reason in the last column while a job waits and its nodes (a Slurm host
 * list) once it has them; or, with --start, the expected start of the jobs that wait,
 *   JOBID PARTITION NAME USER ST START_TIME POSITION NODES NODELIST(REASON)
 * JOBID and NAME are the TrainJob's name (what kubectl sbatch prints and scancel takes). TIME
 * counts from status.startTime (the admission) to now or status.completionTime; TIME_LEFT is
 * what is left to status.deadline (the walltime the controller fixed at the start), else to
 * what spec.activeDeadlineSeconds allows (UNLIMITED without either). PROGRESS and ETA are
 * what the job's training code last reported (status.trainerStatus: "42%" and the time
 * left), N/A before it has; Slurm's squeue has no such columns. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/slurm_jobs.h"

struct tj_squeue_options {
	bool start; /* --start */
	/* The states shown (-t); by default the jobs that have not ended, as squeue shows. */
	bool states[TJ_SLURM_STATE_COUNT];
};

/* The default states: every state but CD, F, TO and CA. */
void tj_squeue_default_states(struct tj_squeue_options *o);

/* Parses -t's comma-separated list of state names or letters ("PD,R", "pending", "all")
 * into o->states. Returns 0, or -EINVAL with the state that is not one in err. */
int tj_squeue_parse_states(const char *list, struct tj_squeue_options *o, char *err, size_t errlen);

/* Prints the table. Returns 0, or -ENOMEM. */
int tj_squeue_print(FILE *out, const struct tj_slurm_jobs *jobs, const struct tj_squeue_options *o,
                    int64_t now);
