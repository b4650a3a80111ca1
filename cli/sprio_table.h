/* What kubectl sprio prints (pure): the priority of each job in the queue, by its parts, as
 * Slurm's sprio shows the factors of pending jobs,
 *   JOBID PARTITION ACCOUNT QOS TIER PRIORITY FAIRSHARE AGE OWN
 * in the queue's order (reconcilers/admission/admission.h, tj_admission_order): per partition (the
 * GPU class as squeue names it), the higher QOS tier first (QOS its name, TIER its priority), then
 * the higher PRIORITY, then the earlier place in time, then the key. PRIORITY is FAIRSHARE (the
 * namespace's fair-share factor times 10000, cli/sshare_table.h) plus AGE (up to 1000 points
 * for the time since the job's place, reached after 7 days). OWN is the job's own priority,
 * the annotation trainjob.flame.dev/priority (what scontrol top sets; higher first), the
 * counterpart of Slurm's NICE with the sign turned: it reorders only the jobs of its own
 * namespace and tier, by swapping their places in time (so also their AGE), and never
 * takes a job past another namespace's. A job without the annotation shows "-" and counts as
 * 0 here, though the controller takes its pods' PriorityClass then, which sprio does not
 * read.
 *
 * The jobs are those of tj_slurm_in_queue; one whose QOS its namespace may not use (the
 * controller fails it) has no row. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/slurm_jobs.h"
#include "reconcilers/settings.h"

struct tj_sprio_row {
	const struct tj_slurm_job *job; /* borrowed */
	const char *qos;                /* borrowed from the policy: the tier's name */
	int tier;                       /* its priority */
	int64_t priority;               /* fair_share + age */
	int fair_share, age;            /* points */
	int32_t own;                    /* the annotation's; 0 without */
};

struct tj_sprio_rows {
	struct tj_sprio_row *rows; /* owned array, in the queue's order */
	size_t n;
};

/* The rows of the jobs in the queue at now, fair share computed over every job given (all
 * namespaces, as the controller counts them). 0 or -ENOMEM. */
int tj_sprio_rows(const struct tj_slurm_jobs *jobs, const struct tj_admission_policy *policy,
                  int64_t now, struct tj_sprio_rows *ret);

void tj_sprio_rows_clear(struct tj_sprio_rows *rows);

/* Prints the table of the rows of namespace (NULL: every row). 0 or -ENOMEM. */
int tj_sprio_print(FILE *out, const struct tj_sprio_rows *rows, const char *namespace);
