/* The QOS tiers of the admission section of the controller's config file
 * (controller/config/config.h; reconcilers/policy/qos.h says what they mean):
 *
 *   admission:
 *     qos:                           # at most 16; absent: normal (0), low (-1000), high (1000)
 *       - {name: normal, priority: 0}
 *       - {name: low, priority: -1000}
 *       - {name: high, priority: 1000, maxWalltime: 24h}
 *     namespaces:                    # at most 256; required with qos
 *       - {namespace: "*", allowed: [normal, low], default: normal}
 *       - {namespace: team-a, allowed: [normal, low, high], default: normal}
 *
 * A tier's name is a DNS label, its priority an integer in -1000000000..1000000000, its
 * maxWalltime a walltime as the walltime section writes them. A namespace entry names a DNS
 * label or "*", tiers of qos (or of the built-in ones) it may use, and its default among
 * them. Unknown fields, a second tier or entry of one name, a tier not defined and a
 * default not allowed are errors. Read by config.c alone. */
#pragma once

#include <libfyaml.h>

#include "controller/config/config_fields_internal.h"
#include "reconcilers/settings.h"

/* Reads the qos and namespaces fields of the admission mapping node into a. 0, -EINVAL (the
 * message in p's buffer) or -ENOMEM; what was read is a's to free either way. */
int tj_config_parse_qos(const struct tj_config_parser *p, struct fy_node *node, int line,
                        struct tj_admission_policy *a);
