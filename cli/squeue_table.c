#include "cli/squeue_table.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/table.h"

void tj_squeue_default_states(struct tj_squeue_options *o)
{
	for (int s = 0; s < TJ_SLURM_STATE_COUNT; s++)
		o->states[s] = !tj_slurm_state_finished((enum tj_slurm_state)s);
}

int tj_squeue_parse_states(const char *list, struct tj_squeue_options *o, char *err, size_t errlen)
{
	bool states[TJ_SLURM_STATE_COUNT] = { false };
	const char *p = list;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char one[32];
		enum tj_slurm_state s;

		if (len == 0 || len >= sizeof(one)) {
			snprintf(err, errlen, "-t: '%.*s' is not a job state",
			         (int)(len < 64 ? len : 64), p);
			return -EINVAL;
		}
		memcpy(one, p, len);
		one[len] = '\0';
		if (strcasecmp(one, "all") == 0) {
			for (int i = 0; i < TJ_SLURM_STATE_COUNT; i++)
				states[i] = true;
		} else if (tj_slurm_state_parse(one, &s) == 0) {
			states[s] = true;
		} else {
			snprintf(err, errlen,
			         "-t: '%s' is not a job state (PD, R, CG, RQ, S, CD, F, TO, CA, or "
			         "their "
			         "names, or all)",
			         one);
			return -EINVAL;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	memcpy(o->states, states, sizeof(states));
	return 0;
}

/* The last column: the reason while the job waits, else its nodes. */
static void nodelist(const struct tj_slurm_job *j, char *buf, size_t size)
{
	const struct tj_trainjob_status *st = &j->job->status;
	bool waits = tj_slurm_state_waiting(j->state) || j->state == TJ_SLURM_REQUEUED;

	if (j->n_nodes > 0 && !(waits && j->job->status.state == TJ_STATE_QUEUED)) {
		tj_slurm_hostlist((const char *const *)j->nodes, j->n_nodes, buf, size);
		return;
	}
	if (j->state == TJ_SLURM_SUSPENDED)
		snprintf(buf, size, "(Suspended)");
	else
		snprintf(buf, size, "(%s)", st->reason[0] ? st->reason : "None");
}

static int64_t elapsed(const struct tj_trainjob *job, int64_t now)
{
	int64_t start = job->status.start_time;
	int64_t end = job->status.completion_time ? job->status.completion_time : now;

	return start && end > start ? end - start : 0;
}

/* What the job's training code last reported: "42%" and the time left; N/A before it has. */
static void reported(const struct tj_slurm_job *j, char progress[static 16], char eta[static 32])
{
	const struct tj_trainjob_status *st = &j->job->status;

	if (st->has_progress)
		snprintf(progress, 16, "%d%%", st->progress_percent);
	else
		snprintf(progress, 16, "N/A");
	if (st->has_eta)
		tj_slurm_duration(st->eta_seconds, eta, 32);
	else
		snprintf(eta, 32, "N/A");
}

static int add_row(struct tj_table *t, const struct tj_slurm_job *j,
                   const struct tj_squeue_options *o, int64_t now)
{
	char time_buf[32], left[32], nodes[16], list[4096], pos[16], progress[16], eta[32];
	/* The deadline the controller fixed at the start (activeDeadlineSeconds or the
	 * cluster's default walltime), else what activeDeadlineSeconds will allow. */
	int64_t deadline = j->job->status.deadline, limit = j->job->active_deadline_seconds;
	int r;

	snprintf(nodes, sizeof(nodes), "%d", j->job->num_nodes > 0 ? j->job->num_nodes : 1);
	nodelist(j, list, sizeof(list));
	if (o->start) {
		tj_slurm_time(j->job->status.expected_start_time, time_buf, sizeof(time_buf));
		if (j->job->status.queue_position > 0)
			snprintf(pos, sizeof(pos), "%d", j->job->status.queue_position);
		else
			snprintf(pos, sizeof(pos), "N/A");
	} else {
		tj_slurm_duration(elapsed(j->job, now), time_buf, sizeof(time_buf));
		if (deadline)
			tj_slurm_duration(deadline - (j->job->status.completion_time
			                                      ? j->job->status.completion_time
			                                      : now),
			                  left, sizeof(left));
		else if (limit)
			tj_slurm_duration(limit - elapsed(j->job, now), left, sizeof(left));
		else
			snprintf(left, sizeof(left), "UNLIMITED");
		reported(j, progress, eta);
	}
	if ((r = tj_table_add(t, j->job->name)) < 0 || (r = tj_table_add(t, j->partition)) < 0 ||
	    (r = tj_table_add(t, j->job->name)) < 0 || (r = tj_table_add(t, j->user)) < 0 ||
	    (r = tj_table_add(t, tj_slurm_state_letters(j->state))) < 0 ||
	    (r = tj_table_add(t, time_buf)) < 0 ||
	    (r = tj_table_add(t, o->start ? pos : left)) < 0 ||
	    (!o->start &&
	     ((r = tj_table_add(t, progress)) < 0 || (r = tj_table_add(t, eta)) < 0)) ||
	    (r = tj_table_add(t, nodes)) < 0 || (r = tj_table_add(t, list)) < 0)
		return r;
	return 0;
}

int tj_squeue_print(FILE *out, const struct tj_slurm_jobs *jobs, const struct tj_squeue_options *o,
                    int64_t now)
{
	static const char *const header[] = { "JOBID",
		                              "PARTITION",
		                              "NAME",
		                              "USER",
		                              "ST",
		                              "TIME",
		                              "TIME_LEFT",
		                              "PROGRESS",
		                              "ETA",
		                              "NODES",
		                              "NODELIST(REASON)" };
	static const char *const start_header[] = { "JOBID",    "PARTITION", "NAME",
		                                    "USER",     "ST",        "START_TIME",
		                                    "POSITION", "NODES",     "NODELIST(REASON)" };
	size_t columns = o->start ? 9 : 11;
	struct tj_table *t = tj_table_new(columns);
	int r = 0;

	if (!t)
		return -ENOMEM;
	for (size_t c = 0; c < columns && r == 0; c++)
		r = tj_table_add(t, o->start ? start_header[c] : header[c]);
	/* The times and numbers, from TIME to NODES. */
	for (size_t c = 5; c < columns - 1; c++)
		tj_table_align_right(t, c);
	for (size_t i = 0; i < jobs->n && r == 0; i++) {
		const struct tj_slurm_job *j = &jobs->jobs[i];

		if (!o->states[j->state])
			continue;
		/* --start lists the jobs that wait, as squeue --start does. */
		if (o->start && !tj_slurm_state_waiting(j->state) && j->state != TJ_SLURM_REQUEUED)
			continue;
		r = add_row(t, j, o, now);
	}
	if (r == 0)
		tj_table_print(t, out, false);
	tj_table_free(t);
	return r;
}
