/* kubectl sbatch: a Slurm batch script submitted as a TrainJob. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/plugin.h"

static const struct tj_plugin_spec spec = {
	.name = "sbatch",
	.synopsis = "[OPTION]... SCRIPT [ARG]...",
	.summary = "Submits a Slurm batch script as a TrainJob.",
	.stop_at_operand = true,
	.min_operands = 1,
	.max_operands = 1,
};

int main(int argc, char **argv)
{
	struct tj_plugin p;
	char user[256], err[TJ_PLUGIN_ERROR_MAX];
	int rc = tj_plugin_parse(&p, &spec, NULL, argc, argv, stdout, stderr);

	if (rc != TJ_PLUGIN_GO_ON)
		return rc;
	rc = TJ_PLUGIN_EXIT_FAILURE;
	if (tj_plugin_connect(&p) < 0)
		goto out;
	if (tj_plugin_whoami(&p, user, sizeof(user), err, sizeof(err)) < 0) {
		tj_plugin_error(&p, "cannot tell who you are: %s", err);
		goto out;
	}
	tj_plugin_error(&p, "%s: the conversion of batch scripts is not built yet (caller %s)",
	                p.operands[0], user);
out:
	tj_plugin_close(&p);
	return rc;
}
