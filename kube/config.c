/* Client configuration: the files a kubeconfig names, the in-cluster service account, and
 * everything at once from the process's environment. */
#include "kube/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "kube/kubeconfig.h"

struct tj_exec_config *tj_exec_config_free(struct tj_exec_config *e)
{
	if (!e)
		return NULL;
	for (size_t i = 0; i < e->n_args; i++)
		free(e->args[i]);
	free(e->args);
	for (size_t i = 0; i < e->n_env; i++)
		free(e->env[i]);
	free(e->env);
	free(e->command);
	free(e->api_version);
	free(e->install_hint);
	free(e);
	return NULL;
}

static int read_into(const char *path, char **pem, size_t *pem_len, const char *what, char *err,
                     size_t errlen)
{
	int r;

	if (!path || *pem)
		return 0;
	r = tj_read_file(path, TJ_KUBE_FILE_MAX, 0, pem, pem_len);
	if (r < 0)
		snprintf(err, errlen, "%s %s: %s", what, path,
		         r == -E2BIG ? "larger than 4 MiB" : strerror(-r));
	return r;
}

/* Reads ca_file, client_cert_file and client_key_file into the matching *_pem fields where
 * the "-data" variant was not given. Returns -errno (message names the file) on failure. */
static int read_files(struct tj_kube_config *cfg, char *err, size_t errlen)
{
	int r;

	r = read_into(cfg->ca_file, &cfg->ca_pem, &cfg->ca_pem_len, "certificate-authority", err,
	              errlen);
	if (r < 0)
		return r;
	r = read_into(cfg->client_cert_file, &cfg->client_cert_pem, &cfg->client_cert_pem_len,
	              "client-certificate", err, errlen);
	if (r < 0)
		return r;
	return read_into(cfg->client_key_file, &cfg->client_key_pem, &cfg->client_key_pem_len,
	                 "client-key", err, errlen);
}

int tj_kube_config_in_cluster(const char *server, const char *dir, struct tj_kube_config **ret,
                              char *err, size_t errlen)
{
	struct tj_kube_config *cfg = calloc(1, sizeof(*cfg));
	char *ns_path = NULL, *ns = NULL;
	size_t ns_len = 0;
	int r = -ENOMEM;

	if (!cfg)
		return -ENOMEM;
	cfg->origin = strdup("in-cluster");
	cfg->server = strdup(server);
	if (!cfg->origin || !cfg->server || asprintf(&cfg->token_file, "%s/token", dir) < 0 ||
	    asprintf(&cfg->ca_file, "%s/ca.crt", dir) < 0 ||
	    asprintf(&ns_path, "%s/namespace", dir) < 0)
		goto out_free;
	r = read_files(cfg, err, errlen);
	if (r < 0)
		goto out_free;
	/* The namespace file is how a controller learns its own namespace; without it the
	 * controller still works in "default". */
	r = tj_read_file(ns_path, TJ_KUBE_FILE_MAX, 0, &ns, &ns_len);
	if (r == 0) {
		while (ns_len > 0 && (ns[ns_len - 1] == '\n' || ns[ns_len - 1] == ' '))
			ns[--ns_len] = '\0';
		if (ns_len > 0) {
			cfg->namespace = ns;
			ns = NULL;
		}
	}
	free(ns);
	cfg->namespace = cfg->namespace ? cfg->namespace : strdup("default");
	r = cfg->namespace ? 0 : -ENOMEM;
	if (r < 0)
		goto out_free;
	free(ns_path);
	*ret = cfg;
	return 0;

out_free:
	free(ns_path);
	tj_kube_config_free(cfg);
	return r;
}

int tj_kube_config_load(const struct tj_kube_env *env, const char *context_override,
                        const char *sa_dir, struct tj_kube_config **ret, char *err, size_t errlen)
{
	struct tj_kube_sources src;
	struct tj_kube_doc *docs = NULL;
	char **texts = NULL;
	struct tj_kube_config *cfg = NULL;
	size_t n = 0;
	int r;

	r = tj_kube_sources_resolve(env, &src, err, errlen);
	if (r < 0)
		return r;
	if (src.kind == TJ_KUBE_SOURCE_IN_CLUSTER) {
		r = tj_kube_config_in_cluster(src.server, sa_dir, ret, err, errlen);
		tj_kube_sources_clear(&src);
		return r;
	}
	docs = calloc(src.n_paths, sizeof(*docs));
	texts = calloc(src.n_paths, sizeof(*texts));
	if (!docs || !texts) {
		r = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < src.n_paths; i++) {
		size_t len;

		r = tj_read_file(src.paths[i], TJ_KUBE_FILE_MAX, 0, &texts[n], &len);
		/* Missing files in a $KUBECONFIG list are skipped, as client-go does. */
		if (r == -ENOENT && src.optional)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s: %s", src.paths[i],
			         r == -E2BIG ? "larger than 4 MiB" : strerror(-r));
			goto out_free;
		}
		docs[n] = (struct tj_kube_doc){ .origin = src.paths[i],
			                        .yaml = texts[n],
			                        .len = len };
		n++;
	}
	if (n == 0) {
		r = -ENOENT;
		snprintf(err, errlen, "KUBECONFIG: none of the files exists");
		goto out_free;
	}
	r = tj_kube_config_parse(docs, n, context_override, &cfg, err, errlen);
	if (r < 0)
		goto out_free;
	r = read_files(cfg, err, errlen);
	if (r < 0)
		goto out_free;
	*ret = cfg;
	cfg = NULL;

out_free:
	tj_kube_config_free(cfg);
	for (size_t i = 0; texts && i < src.n_paths; i++)
		free(texts[i]);
	free(texts);
	free(docs);
	tj_kube_sources_clear(&src);
	return r;
}

struct tj_kube_config *tj_kube_config_free(struct tj_kube_config *cfg)
{
	if (!cfg)
		return NULL;
	free(cfg->origin);
	free(cfg->context);
	free(cfg->server);
	free(cfg->namespace);
	free(cfg->ca_file);
	free(cfg->ca_pem);
	free(cfg->tls_server_name);
	free(cfg->client_cert_file);
	free(cfg->client_cert_pem);
	free(cfg->client_key_file);
	free(cfg->client_key_pem);
	free(cfg->token);
	free(cfg->token_file);
	tj_exec_config_free(cfg->exec);
	free(cfg);
	return NULL;
}
