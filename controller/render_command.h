/* `trainjob-controller render`: the objects a TrainJob becomes, printed without a cluster. It
 * runs the controller's own planner on the TrainJob as if it were new (no status, no pods),
 * so the output is exactly what the controller would create first: the Service, then one
 * pod per rank, as a YAML stream. */
#pragma once

#include <stdio.h>

#include "controller/cli.h"

/* Renders every TrainJob in opts->file. The runtime is taken from opts->runtime, else looked
 * up by name among the *.yaml files of opts->runtime_dir, else of the installed runtimes
 * (<prefix>/share/trainjob-controller/runtimes, or crds/runtimes of the source tree when
 * run from a build directory). The GPU classes come from opts->config, else the built-in
 * defaults (gh200 and h100). Problems (a job that would fail, a runtime not found) are
 * written to err. Returns 0, or a negative errno code. */
int tj_render_command(const struct tj_cli_render *opts, const char *self_path, FILE *out,
                      FILE *err);
