#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/render_command.h"
#include "controller/cli.h"
#include "controller/run.h"
#include "tj-version.h"

int main(int argc, char *argv[])
{
	static struct tj_cli cli; /* large (paths): not on the stack */
	char err[256];

	if (tj_cli_parse(argc, argv, &cli, err, sizeof(err)) < 0) {
		fprintf(stderr, "trainjob-controller: %s\n", err);
		return 2;
	}
	switch (cli.action) {
	case TJ_CLI_HELP:
		tj_cli_usage(stdout, "trainjob-controller", cli.topic);
		return EXIT_SUCCESS;
	case TJ_CLI_VERSION:
		printf("trainjob-controller %s\n", TJ_VERSION);
		return EXIT_SUCCESS;
	case TJ_CLI_RENDER:
		return tj_render_command(&cli.render, stdout, stderr) < 0 ? EXIT_FAILURE
		                                                          : EXIT_SUCCESS;
	case TJ_CLI_RUN:
		break;
	}
	return tj_run(&cli);
}
