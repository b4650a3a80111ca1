/* The cached TrainJobs as the trainjob_jobs gauge counts them: by namespace, the GPU class of
 * their runtime and their state. */
#pragma once

#include <stddef.h>

#include "controller/controller.h"
#include "controller/metrics/std_metrics.h"

/* Every cached TrainJob of c: a malloc'd array the caller frees, whose strings are borrowed
 * from the caches and the config (valid until the loop runs on). -ENOMEM. */
int tj_controller_job_series(const struct tj_controller *c, struct tj_job_series **ret,
                             size_t *ret_n);
