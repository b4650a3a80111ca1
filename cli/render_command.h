/* `trainjob-controller render`: the objects a TrainJob becomes, printed without a cluster. It
 * runs the controller's own planner on the TrainJob as if it were new (no status, no pods),
 * so the output is what the controller creates: the Service and the PVCs of the runtime's
 * volumeClaimPolicies, then the pods of every step (each step's dependsOn taken as met, so
 * the whole graph shows at once), as a YAML stream. */
#pragma once

#include <limits.h>
#include <stdio.h>

/* What `render` was asked to do: its arguments as `trainjob-controller render` takes them
 * (controller/flags.c parses them); "" when not given. */
struct tj_render_options {
	char file[PATH_MAX];        /* -f, --filename: the TrainJob(s) */
	char runtime[PATH_MAX];     /* --runtime: a file with the runtime(s) */
	char runtime_dir[PATH_MAX]; /* --runtime-dir: where shipped runtimes are looked up */
	char config[PATH_MAX];      /* --config: the controller's config file */
};

/* Renders every TrainJob in opts->file. Runtimes come from the file itself, from
 * opts->runtime, else from the *.yaml files of opts->runtime_dir, else from the shipped ones
 * (installed in <datadir>/trainjob-controller/runtimes, or crds/runtimes of the source tree
 * for a binary run from its build directory). The GPU classes come from opts->config, else
 * the built-in defaults (gh200 and h100, as deploy/config ships them). What stops a job (it
 * would fail, its runtime is not found) is written to err. Returns 0, or a negative errno
 * code. */
int tj_render_command(const struct tj_render_options *opts, FILE *out, FILE *err);
