#include "cli/cluster_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "controller/config/config.h"
#include "kube/request.h"

int tj_cluster_config_ref(const char *ref, char ns[TJ_NAME_MAX], char name[TJ_NAME_MAX])
{
	const char *slash = strchr(ref, '/');
	size_t ns_len = slash ? (size_t)(slash - ref) : 0;

	if (!slash || ns_len == 0 || ns_len >= TJ_NAME_MAX || !slash[1] ||
	    strlen(slash + 1) >= TJ_NAME_MAX || strchr(slash + 1, '/'))
		return -EINVAL;
	memcpy(ns, ref, ns_len);
	ns[ns_len] = '\0';
	snprintf(name, TJ_NAME_MAX, "%s", slash + 1);
	return 0;
}

int tj_cluster_config_from_configmap(const cJSON *configmap, const char *origin,
                                     struct tj_config **ret, char *err, size_t errlen)
{
	const cJSON *data = cJSON_GetObjectItemCaseSensitive(configmap, "data");
	const cJSON *yaml = cJSON_GetObjectItemCaseSensitive(data, TJ_CLUSTER_CONFIG_KEY);

	if (!cJSON_IsString(yaml)) {
		snprintf(err, errlen, "%s has no key %s", origin, TJ_CLUSTER_CONFIG_KEY);
		return -EINVAL;
	}
	return tj_config_parse(yaml->valuestring, strlen(yaml->valuestring), origin, ret, err,
	                       errlen);
}

int tj_cluster_config_fetch(struct tj_plugin *p, const char *ref, bool given,
                            struct tj_config **ret)
{
	char ns[TJ_NAME_MAX], name[TJ_NAME_MAX], origin[2 * TJ_NAME_MAX + 16];
	char err[TJ_PLUGIN_ERROR_MAX];
	struct tj_ref cm = { .resource = &tj_resource_configmaps };
	struct tj_plugin_reply reply;
	struct tj_config *config = NULL;
	int r;

	if (tj_cluster_config_ref(ref, ns, name) < 0) {
		tj_plugin_error(p, "--config-map wants NAMESPACE/NAME, not '%s'", ref);
		return -EINVAL;
	}
	cm.namespace = ns;
	cm.name = name;
	snprintf(origin, sizeof(origin), "ConfigMap %s/%s", ns, name);
	tj_plugin_reply_init(&reply);
	r = tj_kube_get(p->client, &cm, tj_plugin_reply_fn, &reply, NULL);
	if (r == 0)
		r = tj_plugin_wait(p, &reply);
	if (r < 0 && reply.http_status == 404 && !given) {
		tj_plugin_error(p,
		                "note: no %s: the built-in defaults apply (every namespace's share "
		                "1, a half-life of 7 days, the tiers normal, low and high); "
		                "--config-map names the controller's config",
		                origin);
		*ret = NULL;
		r = 0;
		goto out;
	}
	if (r < 0) {
		tj_plugin_error(p, "could not read the controller's config, %s: %s", origin,
		                reply.error[0] ? reply.error : strerror(-r));
		goto out;
	}
	r = tj_cluster_config_from_configmap(reply.body, origin, &config, err, sizeof(err));
	if (r < 0) {
		tj_plugin_error(p, "%s", err);
		goto out;
	}
	*ret = config;
out:
	tj_plugin_reply_clear(&reply);
	return r;
}
