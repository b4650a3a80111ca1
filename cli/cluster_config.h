/* The controller's config as the kubectl plugins read it: the ConfigMap deploy/config ships
 * (controller/config/config.h for its format), which the controller's pods mount as their config
 * file. kubectl sshare and sprio need its shares, half-life and QOS tiers to show the
 * numbers the controller orders the queue by. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "cli/plugin.h"
#include "reconcilers/settings.h"

/* The ConfigMap of deploy/base, and the key of the config file in it. */
#define TJ_CLUSTER_CONFIG_DEFAULT "trainjob-system/trainjob-controller-config"
#define TJ_CLUSTER_CONFIG_KEY     "config.yaml"

/* Splits "NAMESPACE/NAME" into its two halves (each a non-empty name of fewer than
 * TJ_NAME_MAX bytes). 0 or -EINVAL. */
int tj_cluster_config_ref(const char *ref, char ns[TJ_NAME_MAX], char name[TJ_NAME_MAX]);

/* The config of a ConfigMap object: data[config.yaml] parsed (tj_config_parse), origin naming
 * it in messages. 0, or -EINVAL (-E2BIG) with one line in err: the key is missing, or the
 * config is not valid. */
int tj_cluster_config_from_configmap(const cJSON *configmap, const char *origin,
                                     struct tj_config **ret, char *err, size_t errlen);

/* Reads the ConfigMap ref ("NAMESPACE/NAME") through the plugin's client. A ConfigMap that
 * does not exist gives *ret NULL (the built-in defaults) with a note on stderr when ref is
 * the default, and an error when the caller named it (given). Any other failure (no right to
 * read it, a config that is not valid) prints one line and returns a negative errno code. */
int tj_cluster_config_fetch(struct tj_plugin *p, const char *ref, bool given,
                            struct tj_config **ret);
