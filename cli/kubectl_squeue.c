/* kubectl squeue: the TrainJobs as Slurm's squeue lists jobs (cli/squeue_table.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/plugin.h"
#include "cli/slurm_jobs.h"
#include "cli/squeue_table.h"

struct state {
	struct tj_squeue_options options;
	bool all_namespaces;
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
	if (tj_plugin_match_flag(arg, 0, "start")) {
		s->options.start = true;
		return 1;
	}
	n = tj_plugin_match(arg, next, 't', "states", &value);
	if (n == 0)
		n = tj_plugin_match(arg, next, 0, "state", &value);
	if (n < 0)
		snprintf(err, errlen, "-t needs a list of states");
	if (n > 0 && tj_squeue_parse_states(value, &s->options, err, errlen) < 0)
		return -EINVAL;
	return n;
}

static const struct tj_plugin_spec spec = {
	.name = "squeue",
	.synopsis = "[-n NAMESPACE | -A] [--start] [-t STATES]",
	.summary = "Lists TrainJobs as Slurm's squeue lists jobs: state letters, the time they\n"
	           "ran and have left, and the queue's reason while they wait or their nodes\n"
	           "once they run.",
	.options_help = "  -A, --all-namespaces       the jobs of every namespace\n"
	                "      --start                the expected start of the jobs that wait\n"
	                "  -t, --states LIST          PD, R, CG, RQ, S, CD, F, TO, CA (or their\n"
	                "                             names), comma-separated, or all; default:\n"
	                "                             the jobs that have not ended\n",
	.on_option = on_option,
	.max_operands = 0,
	.min_operands = 0,
};

int main(int argc, char **argv)
{
	struct state s = { .all_namespaces = false };
	struct tj_slurm_jobs jobs = { 0 };
	struct tj_plugin p;
	int64_t now = (int64_t)time(NULL);
	int rc;

	tj_squeue_default_states(&s.options);
	rc = tj_plugin_parse(&p, &spec, &s, argc, argv, stdout, stderr);
	if (rc != TJ_PLUGIN_GO_ON)
		return rc;
	if (p.n_operands > 0) {
		tj_plugin_error(&p, "takes no operands ('%s'): filter with -n, -A or -t",
		                p.operands[0]);
		return TJ_PLUGIN_EXIT_USAGE;
	}
	rc = TJ_PLUGIN_EXIT_FAILURE;
	if (tj_plugin_connect(&p) < 0 || tj_slurm_jobs_fetch(&p, s.all_namespaces, now, &jobs) < 0)
		goto out;
	if (tj_squeue_print(stdout, &jobs, &s.options, now) < 0) {
		tj_plugin_error(&p, "%s", strerror(ENOMEM));
		goto out;
	}
	rc = TJ_PLUGIN_EXIT_SUCCESS;
out:
	tj_slurm_jobs_clear(&jobs);
	tj_plugin_close(&p);
	return rc;
}
