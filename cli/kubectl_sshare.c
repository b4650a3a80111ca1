/* kubectl sshare: the namespaces' fair share as Slurm's sshare lists accounts
 * (cli/sshare_table.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cluster_config.h"
#include "cli/plugin.h"
#include "cli/slurm_jobs.h"
#include "cli/sshare_table.h"

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
	.name = "sshare",
	.synopsis = "[-n NAMESPACE | -A] [--config-map NAMESPACE/NAME]",
	.summary =
	        "Lists the namespaces' fair share as Slurm's sshare lists accounts (a namespace\n"
	        "is an account):\n"
	        "  RawShares     its share in the controller's config (1 unless set)\n"
	        "  NormShares    its part of the shares of the namespaces that wait for GPUs or\n"
	        "                used some (of those and itself, for one that did neither)\n"
	        "  RawUsage      the GPU-seconds its TrainJobs recorded (the deleted ones' in\n"
	        "                their accounting records), each decayed by its age with the\n"
	        "                half-life (7 days unless set)\n"
	        "  EffectvUsage  its part of all the namespaces' RawUsage\n"
	        "  FairShare     2^(-EffectvUsage/NormShares): 1 for a namespace that used\n"
	        "                nothing, 0.5 for one that used exactly its share; times 10000,\n"
	        "                the fair-share priority of its queued jobs (kubectl sprio)\n"
	        "The usage of every namespace counts, so the TrainJobs and records of all of\n"
	        "them are read.",
	.options_help = "  -A, --all-namespaces       every namespace's row\n"
	                "      --config-map NS/NAME   the controller's config (default\n"
	                "                             " TJ_CLUSTER_CONFIG_DEFAULT ")\n",
	.on_option = on_option,
};

int main(int argc, char **argv)
{
	struct state s = { .all_namespaces = false };
	struct tj_slurm_jobs jobs = { 0 };
	struct tj_sshare_rows rows = { 0 };
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
	if (tj_sshare_rows(&jobs, tj_config_admission(config), now, &rows) < 0 ||
	    tj_sshare_print(stdout, &rows, s.all_namespaces ? NULL : p.namespace) < 0) {
		tj_plugin_error(&p, "%s", strerror(ENOMEM));
		goto out;
	}
	rc = TJ_PLUGIN_EXIT_SUCCESS;
out:
	tj_sshare_rows_clear(&rows);
	tj_slurm_jobs_clear(&jobs);
	tj_config_free(config);
	tj_plugin_close(&p);
	return rc;
}
