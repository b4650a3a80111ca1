/* What kubectl sacct prints (pure): the TrainJobs that ran or run, as Slurm's sacct lists
 * jobs, in columns chosen with --format (Slurm's field names, in any case, each with an
 * optional %WIDTH):
 *   JobID JobName Partition User State ExitCode Start End Elapsed NNodes NodeList Restarts
 *   Reason GPUSeconds GPUHours WastedGPUHours
 * by default JobName,Partition,State,ExitCode,Elapsed,NNodes,Restarts,GPUHours. ExitCode is
 * the failed rank's (status.lastFailure) as "code:signal"; GPUHours are status.gpuSeconds
 * with what the pods held since it was last counted, in hours. -S keeps the jobs that had
 * not ended by that time. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/slurm_jobs.h"

#define TJ_SACCT_DEFAULT_FORMAT "JobName,Partition,State,ExitCode,Elapsed,NNodes,Restarts,GPUHours"
#define TJ_SACCT_MAX_FIELDS     32

struct tj_sacct_format {
	int fields[TJ_SACCT_MAX_FIELDS];    /* indexes of the fields above */
	size_t widths[TJ_SACCT_MAX_FIELDS]; /* 0: as wide as the widest cell */
	size_t n;
};

/* Parses a --format list ("JobID,State%12"). Returns 0, or -EINVAL with a line in err. */
int tj_sacct_parse_format(const char *spec, struct tj_sacct_format *ret, char *err, size_t errlen);

/* Prints the jobs that had not ended by since (every job for 0) and have started or ended,
 * as a table, or with parsable as sacct -P prints (cells joined by '|'). 0 or -ENOMEM. */
int tj_sacct_print(FILE *out, const struct tj_slurm_jobs *jobs, const struct tj_sacct_format *f,
                   bool parsable, int64_t since, int64_t now);
