/* The walltime section of the controller's config file (controller/config/config.h), into
 * struct tj_walltime_policy (reconcilers/settings.h):
 *
 *   walltime:                        # optional; each absent field: no limit there
 *     defaultWalltime: 24h           # the cluster's; of a job without activeDeadlineSeconds
 *     maxWalltime: 72h               # the cluster's; a longer job is refused
 *     warningSeconds: 300            # 0..604800, before the deadline (default 300)
 *     gpuClasses:                    # per class of gpuClasses (a Slurm partition)
 *       gh200: {defaultWalltime: 4h, maxWalltime: 48h}
 *     namespaces:                    # at most 256; gpuClass absent: every class
 *       - {namespace: team-a, gpuClass: gh200, maxWalltime: 7d}
 *
 * A walltime is a number of seconds or amounts of d, h, m, s in that order ("1h30m"), up
 * to 366d; in one entry, defaultWalltime must not exceed maxWalltime. Unknown fields,
 * unknown classes and a second entry for the same namespace and class are errors. Read by config.c
 * and config_qos.c alone. */
#pragma once

#include <libfyaml.h>

#include "controller/config/config_fields_internal.h"
#include "reconcilers/settings.h"

/* Reads root's walltime section, if any, into config->walltime; read after gpuClasses,
 * which it names. 0, -EINVAL (the message in p's buffer) or -ENOMEM. */
int tj_config_parse_walltime(const struct tj_config_parser *p, struct fy_node *root,
                             struct tj_config *config);

/* An optional walltime field of mapping (key, in the form above), into *ret in seconds; *ret
 * keeps its value when the field is absent or null. */
int tj_config_field_walltime(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                             const char *path, const char *key, long long *ret);
