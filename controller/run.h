/* The controller process: connects to the cluster, loads the GPU classes, starts the
 * informers, the reconciler, the metrics and probe servers, and runs the loop until SIGTERM. */
#pragma once

#include "controller/flags.h"

/* Runs until shutdown; returns the process's exit status. */
int tj_run(const struct tj_flags *flags);
