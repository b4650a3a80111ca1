/* kubectl sprio: the priority of the queued TrainJobs by its parts, as Slurm's sprio shows
 * pending jobs (cli/sprio_table.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cluster_config.h"
#include "cli/plugin.h"
#include "cli/slurm_jobs.h"
#include "cli/sprio_table.h"

struct state {
	bool all_namespaces;
	const char *config_map; /* borrowed from argv; NULL: the default */
};

static int on_option(void *userdata, const char *arg, const char *next, char *err, size_t errlen)
{
	struct state *s = userdata;
	int n;

	if (tj_plugin_match_flag(arg, 'A', "all-namespaces")) {
		s->all_namespaces = true;
		return 1;
	}
	n = tj_plugin_match(arg, next, 0, "config-map", &s->config_map);
	if (n < 0)
		snprintf(err, errlen, "--config-map needs NAMESPACE/NAME");
	return n;
}

static const struct tj_plugin_spec spec = {
	.name = "sprio",
	.synopsis = "[-n NAMESPACE | -A] [--config-map NAMESPACE/NAME]",
	.summary =
	        "Lists the TrainJobs that wait in the queue with their priority by its parts, as\n"
	        "Slurm's sprio lists pending jobs, in the queue's order per PARTITION (GPU "
	        "class):\n"
	        "the QOS tier first (QOS and its priority TIER: a higher tier always goes\n"
	        "first), then PRIORITY = FAIRSHARE + AGE (higher first), then creation time.\n"
	        "  FAIRSHARE  the namespace's fair-share factor times 10000 (kubectl sshare)\n"
	        "  AGE        up to 1000 for the time since the job's place, reached in 7 days\n"
	        "  OWN        the job's own priority, the annotation trainjob.flame.dev/priority\n"
	        "             (what scontrol top sets), Slurm's NICE with the sign turned: higher\n"
	        "             first, but only among the queued jobs of its own namespace and "
	        "tier,\n"
	        "             which it reorders by swapping their places in time (and so their\n"
	        "             AGE); never past another namespace's job. \"-\": not set (the\n"
	        "             controller then takes the pods' PriorityClass, not shown here).",
	.options_help = "  -A, --all-namespaces       the queued jobs of every namespace\n"
	                "      --config-map NS/NAME   the controller's config (default\n"
	                "                             " TJ_CLUSTER_CONFIG_DEFAULT ")\n",
	.on_option = on_option,
};

int main(int argc, char **argv)
{
	struct state s = { .all_namespaces = false };
	struct tj_slurm_jobs jobs = { 0 };
	struct tj_sprio_rows rows = { 0 };
	struct tj_config *config = NULL;
	struct tj_plugin p;
	int64_t now = (int64_t)time(NULL);
	int rc;

	rc = tj_plugin_parse(&p, &spec, &s, argc, argv, stdout, stderr);
	if (rc != TJ_PLUGIN_GO_ON)
		return rc;
	if (p.n_operands > 0) {
		tj_plugin_error(&p, "takes no operands ('%s'): filter with -n or -A",
		                p.operands[0]);
		return TJ_PLUGIN_EXIT_USAGE;
	}
	rc = TJ_PLUGIN_EXIT_FAILURE;
	if (tj_plugin_connect(&p) < 0 ||
	    tj_cluster_config_fetch(&p, s.config_map ? s.config_map : TJ_CLUSTER_CONFIG_DEFAULT,
	                            s.config_map != NULL, &config) < 0 ||
	    tj_slurm_jobs_fetch_cluster(&p, now, &jobs) < 0)
		goto out;
	if (tj_sprio_rows(&jobs, tj_config_admission(config), now, &rows) < 0 ||
	    tj_sprio_print(stdout, &rows, s.all_namespaces ? NULL : p.namespace) < 0) {
		tj_plugin_error(&p, "%s", strerror(ENOMEM));
		goto out;
	}
	rc = TJ_PLUGIN_EXIT_SUCCESS;
out:
	tj_sprio_rows_clear(&rows);
	tj_slurm_jobs_clear(&jobs);
	tj_config_free(config);
	tj_plugin_close(&p);
	return rc;
}
