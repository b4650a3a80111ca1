/* Where the client configuration comes from, decided as controller-runtime decides it. */
#include "kube/sources.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tj_kube_env_from_process(const char *kubeconfig_flag, struct tj_kube_env *ret)
{
	*ret = (struct tj_kube_env){
		.kubeconfig_flag = kubeconfig_flag,
		.kubeconfig_env = getenv("KUBECONFIG"),
		.service_host = getenv("KUBERNETES_SERVICE_HOST"),
		.service_port = getenv("KUBERNETES_SERVICE_PORT"),
		.home = getenv("HOME"),
	};
}

void tj_kube_sources_clear(struct tj_kube_sources *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_paths; i++)
		free(s->paths[i]);
	free(s->paths);
	free(s->server);
	*s = (struct tj_kube_sources){ 0 };
}

static int add_path(struct tj_kube_sources *s, const char *path, size_t len)
{
	char **paths;

	for (size_t i = 0; i < s->n_paths; i++)
		if (strlen(s->paths[i]) == len && memcmp(s->paths[i], path, len) == 0)
			return 0; /* client-go drops repeated entries */
	if (s->n_paths >= TJ_KUBECONFIG_MAX_FILES)
		return -E2BIG;
	paths = realloc(s->paths, (s->n_paths + 1) * sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	s->paths = paths;
	s->paths[s->n_paths] = strndup(path, len);
	if (!s->paths[s->n_paths])
		return -ENOMEM;
	s->n_paths++;
	return 0;
}

static bool valid_port(const char *port)
{
	char *end;
	long v;

	if (!port || !*port)
		return false;
	errno = 0;
	v = strtol(port, &end, 10);
	return errno == 0 && *end == '\0' && v > 0 && v <= 65535;
}

/* "https://" + host:port with an IPv6 host in brackets, as Go's net.JoinHostPort writes it. */
static int in_cluster_server(const char *host, const char *port, char **ret)
{
	bool ipv6 = strchr(host, ':') != NULL;

	if (asprintf(ret, ipv6 ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0)
		return -ENOMEM;
	return 0;
}

int tj_kube_sources_resolve(const struct tj_kube_env *env, struct tj_kube_sources *ret, char *err,
                            size_t errlen)
{
	struct tj_kube_sources s = { .kind = TJ_KUBE_SOURCE_FILES };
	int r;

	if (env->kubeconfig_flag && *env->kubeconfig_flag) {
		r = add_path(&s, env->kubeconfig_flag, strlen(env->kubeconfig_flag));
		if (r < 0)
			goto out_clear;
	} else if (env->kubeconfig_env && *env->kubeconfig_env) {
		const char *p = env->kubeconfig_env;

		s.optional = true;
		while (*p) {
			size_t len = strcspn(p, ":");

			if (len > 0) {
				r = add_path(&s, p, len);
				if (r < 0) {
					if (r == -E2BIG)
						snprintf(err, errlen,
						         "KUBECONFIG: more than %d files",
						         TJ_KUBECONFIG_MAX_FILES);
					goto out_clear;
				}
			}
			p += len;
			if (*p == ':')
				p++;
		}
		if (s.n_paths == 0) {
			r = -ENOENT;
			snprintf(err, errlen, "KUBECONFIG: no file in \"%s\"", env->kubeconfig_env);
			goto out_clear;
		}
	} else if (env->service_host && *env->service_host && env->service_port &&
	           *env->service_port) {
		s.kind = TJ_KUBE_SOURCE_IN_CLUSTER;
		if (!valid_port(env->service_port) || strpbrk(env->service_host, "/[]@ ") != NULL) {
			r = -EINVAL;
			snprintf(err, errlen,
			         "in-cluster: KUBERNETES_SERVICE_HOST \"%s\" and "
			         "KUBERNETES_SERVICE_PORT \"%s\" do not form an address",
			         env->service_host, env->service_port);
			goto out_clear;
		}
		r = in_cluster_server(env->service_host, env->service_port, &s.server);
		if (r < 0)
			goto out_clear;
	} else if (env->home && *env->home) {
		char *path;

		if (asprintf(&path, "%s/.kube/config", env->home) < 0) {
			r = -ENOMEM;
			goto out_clear;
		}
		r = add_path(&s, path, strlen(path));
		free(path);
		if (r < 0)
			goto out_clear;
	} else {
		r = -ENOENT;
		snprintf(err, errlen,
		         "no configuration: no --kubeconfig, no KUBECONFIG, not in a cluster "
		         "(KUBERNETES_SERVICE_HOST/PORT unset) and no HOME for ~/.kube/config");
		goto out_clear;
	}
	*ret = s;
	return 0;

out_clear:
	tj_kube_sources_clear(&s);
	return r;
}
