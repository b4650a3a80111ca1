#include "controller/cli.h"

#include <errno.h>
#include <string.h>

#include "tj-version.h"

struct option_spec {
	const char *name;
	enum tj_cli_action action;
	const char *help;
	/* Options that take a value (--name=VALUE or --name VALUE): its name in the help, and
	 * what stores it; NULL for plain flags. */
	const char *metavar;
	int (*set)(struct tj_cli *cli, const char *value, char *err, size_t errlen);
};

static int set_metrics_addr(struct tj_cli *cli, const char *value, char *err, size_t errlen)
{
	return tj_bind_addr_parse(value, &cli->metrics_addr, err, errlen);
}

static int set_probe_addr(struct tj_cli *cli, const char *value, char *err, size_t errlen)
{
	return tj_bind_addr_parse(value, &cli->probe_addr, err, errlen);
}

static int set_log_level(struct tj_cli *cli, const char *value, char *err, size_t errlen)
{
	if (tj_log_level_parse(value, &cli->log_level) < 0) {
		snprintf(err, errlen, "'%s' is not a level (error, warn, info, debug)", value);
		return -EINVAL;
	}
	return 0;
}

static const struct option_spec options[] = {
	{ "--help", TJ_CLI_HELP, "print this help and exit", NULL, NULL },
	{ "--version", TJ_CLI_VERSION, "print the version and exit", NULL, NULL },
	{ "--metrics-bind-address", TJ_CLI_RUN, "serve /metrics here (default :8080; 0 disables)",
	  "ADDR", set_metrics_addr },
	{ "--health-probe-bind-address", TJ_CLI_RUN,
	  "serve /healthz and /readyz here (default :8081; 0 disables)", "ADDR", set_probe_addr },
	{ "--log-level", TJ_CLI_RUN, "error, warn, info (default) or debug", "LEVEL",
	  set_log_level },
	{ "--zap-log-level", TJ_CLI_RUN, "the same, as controller-runtime spells it", "LEVEL",
	  set_log_level },
};

/* The option named by arg ("--name" or "--name=value"); *ret_value is the inline value. */
static const struct option_spec *find_option(const char *arg, const char **ret_value)
{
	for (size_t o = 0; o < sizeof(options) / sizeof(options[0]); o++) {
		size_t n = strlen(options[o].name);

		if (strncmp(arg, options[o].name, n) != 0)
			continue;
		if (arg[n] == '\0') {
			*ret_value = NULL;
			return &options[o];
		}
		if (arg[n] == '=' && options[o].set) {
			*ret_value = arg + n + 1;
			return &options[o];
		}
	}
	return NULL;
}

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
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s%s%s", options[i].name,
		         options[i].metavar ? "=" : "",
		         options[i].metavar ? options[i].metavar : "");
		fprintf(out, "  %-34s %s\n", name, options[i].help);
	}
	fprintf(out, "\ntrainjob-controller %s\n", TJ_VERSION);
}

int tj_cli_parse(int argc, char *const argv[], struct tj_cli *ret, char *err, size_t errlen)
{
	struct tj_cli cli = {
		.action = TJ_CLI_RUN,
		.metrics_addr = { .port = "8080" },
		.probe_addr = { .port = "8081" },
		.log_level = TJ_LOG_INFO,
	};

	if (errlen > 0)
		err[0] = '\0';
	for (int i = 1; i < argc; i++) {
		const char *value;
		const struct option_spec *found = find_option(argv[i], &value);
		char why[128];

		if (!found) {
			if (errlen > 0)
				snprintf(err, errlen, "unknown argument '%s' (see --help)",
				         argv[i]);
			return -EINVAL;
		}
		if (found->set) {
			if (!value && i + 1 == argc) {
				snprintf(err, errlen, "%s needs a value", found->name);
				return -EINVAL;
			}
			if (!value)
				value = argv[++i];
			if (found->set(&cli, value, why, sizeof(why)) < 0) {
				snprintf(err, errlen, "%s: %s", found->name, why);
				return -EINVAL;
			}
			continue;
		}
		/* The first of --help and --version wins, as in most GNU tools. */
		if (cli.action == TJ_CLI_RUN)
			cli.action = found->action;
	}
	*ret = cli;
	return 0;
}
