#include "controller/cli.h"

#include <errno.h>
#include <string.h>

#include "tj-version.h"

struct option_spec {
	const char *name;
	enum tj_cli_action action;
	const char *help;
};

static const struct option_spec options[] = {
	{ "--help", TJ_CLI_HELP, "print this help and exit" },
	{ "--version", TJ_CLI_VERSION, "print the version and exit" },
};

void tj_cli_usage(FILE *out, const char *prog)
{
	fprintf(out,
	        "Usage: %s [OPTION]...\n"
	        "\n"
	        "Runs Kubeflow Trainer TrainJobs (trainer.kubeflow.org/v1alpha1) on GPU clusters:\n"
	        "one pod per node, torchrun wiring, restarts on healthy nodes.\n"
	        "\n"
	        "Options:\n",
	        prog);
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		fprintf(out, "  %-28s %s\n", options[i].name, options[i].help);
	fprintf(out, "\ntrainjob-controller %s\n", TJ_VERSION);
}

int tj_cli_parse(int argc, char *const argv[], struct tj_cli *ret, char *err, size_t errlen)
{
	struct tj_cli cli = { .action = TJ_CLI_RUN };

	if (errlen > 0)
		err[0] = '\0';
	for (int i = 1; i < argc; i++) {
		const struct option_spec *found = NULL;

		for (size_t o = 0; o < sizeof(options) / sizeof(options[0]); o++)
			if (strcmp(argv[i], options[o].name) == 0)
				found = &options[o];
		if (!found) {
			if (errlen > 0)
				snprintf(err, errlen, "unknown argument '%s' (see --help)",
				         argv[i]);
			return -EINVAL;
		}
		/* The first of --help and --version wins, as in most GNU tools. */
		if (cli.action == TJ_CLI_RUN)
			cli.action = found->action;
	}
	*ret = cli;
	return 0;
}
