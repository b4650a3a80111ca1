#include "cli/sacct_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/table.h"

enum field {
	F_JOBID,
	F_JOBNAME,
	F_PARTITION,
	F_USER,
	F_STATE,
	F_EXITCODE,
	F_START,
	F_END,
	F_ELAPSED,
	F_NNODES,
	F_NODELIST,
	F_RESTARTS,
	F_REASON,
	F_GPUSECONDS,
	F_GPUHOURS,
	F_WASTEDGPUHOURS,
	F_COUNT,
};

static const char *const field_names[F_COUNT] = {
	[F_JOBID] = "JobID",         [F_JOBNAME] = "JobName",
	[F_PARTITION] = "Partition", [F_USER] = "User",
	[F_STATE] = "State",         [F_EXITCODE] = "ExitCode",
	[F_START] = "Start",         [F_END] = "End",
	[F_ELAPSED] = "Elapsed",     [F_NNODES] = "NNodes",
	[F_NODELIST] = "NodeList",   [F_RESTARTS] = "Restarts",
	[F_REASON] = "Reason",       [F_GPUSECONDS] = "GPUSeconds",
	[F_GPUHOURS] = "GPUHours",   [F_WASTEDGPUHOURS] = "WastedGPUHours",
};

static void list_fields(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < F_COUNT && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
		                        field_names[i]);
}

int tj_sacct_parse_format(const char *spec, struct tj_sacct_format *ret, char *err, size_t errlen)
{
	struct tj_sacct_format f = { .n = 0 };
	const char *p = spec;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		const char *pct = memchr(p, '%', len);
		size_t name_len = pct ? (size_t)(pct - p) : len;
		int field = -1;

		for (int i = 0; i < F_COUNT; i++)
			if (strlen(field_names[i]) == name_len &&
			    strncasecmp(p, field_names[i], name_len) == 0)
				field = i;
		if (field < 0) {
			char known[512];

			list_fields(known, sizeof(known));
			snprintf(err, errlen, "--format: '%.*s' is not a field (%s)",
			         (int)(name_len < 64 ? name_len : 64), p, known);
			return -EINVAL;
		}
		if (f.n == TJ_SACCT_MAX_FIELDS) {
			snprintf(err, errlen, "--format: more than %d fields", TJ_SACCT_MAX_FIELDS);
			return -EINVAL;
		}
		f.fields[f.n] = field;
		if (pct) {
			char *end;
			long w = strtol(pct + 1, &end, 10);

			if (end != p + len || w < 1 || w > 1000 || pct + 1 == end) {
				snprintf(err, errlen,
				         "--format: '%.*s' needs a width from 1 to 1000",
				         (int)(len < 64 ? len : 64), p);
				return -EINVAL;
			}
			f.widths[f.n] = (size_t)w;
		}
		f.n++;
		if (!comma)
			break;
		p = comma + 1;
	}
	*ret = f;
	return 0;
}

/* When the job ended: its completion, else its deletion (a job cancelled); 0 while it runs. */
static int64_t ended(const struct tj_trainjob *job)
{
	return job->status.completion_time ? job->status.completion_time : job->deletion_time;
}

static int64_t elapsed(const struct tj_trainjob *job, int64_t now)
{
	int64_t start = job->status.start_time;
	int64_t end = ended(job) ? ended(job) : now;

	return start && end > start ? end - start : 0;
}

static void hours(int64_t seconds, char *buf, size_t size)
{
	snprintf(buf, size, "%.3f", (double)seconds / 3600.0);
}

static void cell(const struct tj_slurm_job *j, int field, int64_t now, char *buf, size_t size)
{
	const struct tj_trainjob *job = j->job;
	const struct tj_trainjob_status *st = &job->status;

	switch ((enum field)field) {
	case F_JOBID:
	case F_JOBNAME:
		snprintf(buf, size, "%s", job->name);
		break;
	case F_PARTITION:
		snprintf(buf, size, "%s", j->partition);
		break;
	case F_USER:
		snprintf(buf, size, "%s", j->user);
		break;
	case F_STATE:
		snprintf(buf, size, "%s", tj_slurm_state_name(j->state));
		break;
	case F_EXITCODE:
		tj_slurm_exit_code(st->last_failure.rank >= 0 ? st->last_failure.exit_code : 0, buf,
		                   size);
		break;
	case F_START:
		tj_slurm_time(st->start_time, buf, size);
		break;
	case F_END:
		tj_slurm_time(ended(job), buf, size);
		break;
	case F_ELAPSED:
		tj_slurm_duration(elapsed(job, now), buf, size);
		break;
	case F_NNODES:
		snprintf(buf, size, "%d", job->num_nodes > 0 ? job->num_nodes : 1);
		break;
	case F_NODELIST:
		if (j->n_nodes)
			tj_slurm_hostlist((const char *const *)j->nodes, j->n_nodes, buf, size);
		else
			snprintf(buf, size, "None assigned");
		break;
	case F_RESTARTS:
		snprintf(buf, size, "%d", st->restart_count);
		break;
	case F_REASON:
		snprintf(buf, size, "%s", st->reason[0] ? st->reason : "None");
		break;
	case F_GPUSECONDS:
		snprintf(buf, size, "%lld", (long long)j->gpu_seconds);
		break;
	case F_GPUHOURS:
		hours(j->gpu_seconds, buf, size);
		break;
	case F_WASTEDGPUHOURS:
		hours(j->wasted_gpu_seconds, buf, size);
		break;
	case F_COUNT:
		buf[0] = '\0';
		break;
	}
}

static bool right_aligned(int field)
{
	return field == F_ELAPSED || field == F_NNODES || field == F_RESTARTS ||
	       field == F_GPUSECONDS || field == F_GPUHOURS || field == F_WASTEDGPUHOURS ||
	       field == F_EXITCODE;
}

/* sacct lists jobs that were eligible after -S: here, jobs that had not ended by then. */
static bool selected(const struct tj_slurm_job *j, int64_t since)
{
	int64_t end = ended(j->job);

	return !since || !end || end >= since;
}

int tj_sacct_print(FILE *out, const struct tj_slurm_jobs *jobs, const struct tj_sacct_format *f,
                   bool parsable, int64_t since, int64_t now)
{
	struct tj_table *t = tj_table_new(f->n);
	int r = 0;

	if (!t)
		return -ENOMEM;
	for (size_t c = 0; c < f->n && r == 0; c++) {
		r = tj_table_add(t, field_names[f->fields[c]]);
		if (f->widths[c])
			tj_table_set_width(t, c, f->widths[c]);
		if (right_aligned(f->fields[c]))
			tj_table_align_right(t, c);
	}
	for (size_t i = 0; i < jobs->n && r == 0; i++) {
		const struct tj_slurm_job *j = &jobs->jobs[i];

		if (!selected(j, since))
			continue;
		for (size_t c = 0; c < f->n && r == 0; c++) {
			char buf[4096];

			cell(j, f->fields[c], now, buf, sizeof(buf));
			r = tj_table_add(t, buf);
		}
	}
	if (r == 0)
		tj_table_print(t, out, parsable);
	tj_table_free(t);
	return r;
}
