#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/render_command.h"
#include "controller/flags.h"
#include "controller/run.h"
#include "tj-version.h"

int main(int argc, char *argv[])
{
	static struct tj_flags flags; /* large (paths): not on the stack */
	char err[256];

	if (tj_flags_parse(argc, argv, &flags, err, sizeof(err)) < 0) {
		fprintf(stderr, "trainjob-controller: %s\n", err);
		return 2;
	}
	switch (flags.action) {
	case TJ_FLAGS_HELP:
		tj_flags_usage(stdout, "trainjob-controller", flags.topic);
		return EXIT_SUCCESS;
	case TJ_FLAGS_VERSION:
		printf("trainjob-controller %s\n", TJ_VERSION);
		return EXIT_SUCCESS;
	case TJ_FLAGS_RENDER:
		return tj_render_command(&flags.render, stdout, stderr) < 0 ? EXIT_FAILURE
		                                                            : EXIT_SUCCESS;
	case TJ_FLAGS_RUN:
		break;
	}
	return tj_run(&flags);
}
