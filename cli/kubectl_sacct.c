/* kubectl sacct: the TrainJobs that ran or run, with their GPU-hours, as Slurm's sacct lists
 * jobs (cli/sacct_table.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/plugin.h"
#include "cli/sacct_table.h"
#include "cli/slurm_jobs.h"

struct state {
	struct tj_sacct_format format;
	bool all_namespaces, parsable;
	const char *since; /* -S, NULL: midnight */
};

static int on_option(void *userdata, const char *arg, const char *next, char *err, size_t errlen)
{
	struct state *s = userdata;
	const char *value;
	int n;

	if (tj_plugin_match_flag(arg, 'A', "all-namespaces")) {
		s->all_namespaces = true;
		return 1;
	}
	if (tj_plugin_match_flag(arg, 'P', "parsable2")) {
		s->parsable = true;
		return 1;
	}
	n = tj_plugin_match(arg, next, 'S', "starttime", &value);
	if (n < 0)
		snprintf(err, errlen, "-S needs a time");
	if (n != 0) {
		s->since = value;
		return n;
	}
	n = tj_plugin_match(arg, next, 'o', "format", &value);
	if (n < 0)
		snprintf(err, errlen, "--format needs a list of fields");
	if (n > 0 && tj_sacct_parse_format(value, &s->format, err, errlen) < 0)
		return -EINVAL;
	return n;
}

static const struct tj_plugin_spec spec = {
	.name = "sacct",
	.synopsis = "[-n NAMESPACE | -A] [-S TIME] [--format FIELDS] [-P]",
	.summary = "Lists the TrainJobs that ran or run, as Slurm's sacct lists jobs: state, exit\n"
	           "code of the failed rank, elapsed time, nodes, restarts and GPU-hours.",
	.options_help =
	        "  -A, --all-namespaces       the jobs of every namespace\n"
	        "  -S, --starttime TIME       the jobs that had not ended by TIME (UTC; default\n"
	        "                             midnight): YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS],\n"
	        "                             MMDD[YY], now[-N[minutes|hours|days|weeks]],\n"
	        "                             today, yesterday, or RFC 3339\n"
	        "  -o, --format FIELDS        comma-separated, each with an optional %WIDTH:\n"
	        "                             JobID, JobName, Partition, User, State, ExitCode,\n"
	        "                             Start, End, Elapsed, NNodes, NodeList, Restarts,\n"
	        "                             Reason, GPUSeconds, GPUHours, WastedGPUHours\n"
	        "                             (default " TJ_SACCT_DEFAULT_FORMAT ")\n"
	        "  -P, --parsable2            cells separated by '|', nothing aligned\n",
	.on_option = on_option,
	.max_operands = 0,
	.min_operands = 0,
};

int main(int argc, char **argv)
{
	struct state s = { .since = NULL };
	struct tj_slurm_jobs jobs = { 0 };
	struct tj_plugin p;
	char err[TJ_PLUGIN_ERROR_MAX];
	int64_t now = (int64_t)time(NULL), since;
	int rc;

	if (tj_sacct_parse_format(TJ_SACCT_DEFAULT_FORMAT, &s.format, err, sizeof(err)) < 0)
		return TJ_PLUGIN_EXIT_FAILURE;
	rc = tj_plugin_parse(&p, &spec, &s, argc, argv, stdout, stderr);
	if (rc != TJ_PLUGIN_GO_ON)
		return rc;
	if (p.n_operands > 0) {
		tj_plugin_error(&p, "takes no operands ('%s'): filter with -n, -A or -S",
		                p.operands[0]);
		return TJ_PLUGIN_EXIT_USAGE;
	}
	if (tj_slurm_parse_time(s.since ? s.since : "midnight", now, &since) < 0) {
		tj_plugin_error(
		        &p,
		        "-S: '%s' is not a time (YYYY-MM-DD[THH:MM[:SS]], HH:MM, now-1hours, "
		        "...)",
		        s.since);
		return TJ_PLUGIN_EXIT_USAGE;
	}
	rc = TJ_PLUGIN_EXIT_FAILURE;
	if (tj_plugin_connect(&p) < 0 ||
	    tj_slurm_jobs_fetch_records(&p, s.all_namespaces, true, now, &jobs) < 0)
		goto out;
	if (tj_sacct_print(stdout, &jobs, &s.format, s.parsable, since, now) < 0) {
		tj_plugin_error(&p, "%s", strerror(ENOMEM));
		goto out;
	}
	rc = TJ_PLUGIN_EXIT_SUCCESS;
out:
	tj_slurm_jobs_clear(&jobs);
	tj_plugin_close(&p);
	return rc;
}
