/* The suspectNodes section of the controller's config file (controller/config/config.h),
 * into struct tj_suspect_policy (reconcilers/settings.h; reconcilers/policy/suspect.h says what it
 * means):
 *
 *   suspectNodes:
 *     enabled: true                  # false: no node is marked (default true)
 *     jobs: 3                        # 2..100 different TrainJobs (default 3)
 *     window: 1h                     # a walltime, 1m..7d (default 1h)
 *     exitCodes: [134, 135, 139]     # 1..255, at most 32 (default these)
 *
 * Unknown fields are errors; an absent field keeps its default. */
#pragma once

#include <libfyaml.h>

#include "controller/config/config_fields_internal.h"
#include "reconcilers/settings.h"

/* Reads root's suspectNodes section, if any, into config->suspect. 0, -EINVAL (the message
 * in p's buffer) or -ENOMEM. */
int tj_config_parse_suspect(const struct tj_config_parser *p, struct fy_node *root,
                            struct tj_config *config);
