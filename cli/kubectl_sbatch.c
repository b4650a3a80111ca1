/* kubectl sbatch: a Slurm batch script submitted as a TrainJob (cli/sbatch_command.h). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/sbatch_command.h"

static const char *lookup(const char *name)
{
	return getenv(name);
}

int main(int argc, char **argv)
{
	const struct tj_sbatch_env env = { .lookup_env = lookup };

	return tj_sbatch_main(argc, argv, &env, stdout, stderr);
}
