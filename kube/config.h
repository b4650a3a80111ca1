/* Client configuration: where the API server is and how to authenticate to it, found the way
 * client-go and controller-runtime find it (explicit --kubeconfig, $KUBECONFIG, in-cluster
 * service account, ~/.kube/config: kube/sources.h) and parsed from kubeconfig YAML
 * (kube/kubeconfig.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "kube/sources.h"

/* The service-account folder that Kubernetes mounts into every pod. */
#define TJ_KUBE_SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* Size limit of a kubeconfig file, a CA bundle, a client certificate or key, a token file. */
#define TJ_KUBE_FILE_MAX (4u << 20)

/* users[].user.exec: a credential plugin (client.authentication.k8s.io/v1 or v1beta1). */
struct tj_exec_config {
	char *command; /* owned */
	char **args;   /* owned array of owned strings */
	size_t n_args;
	char **env; /* owned array of owned "NAME=VALUE" strings, added to our environment */
	size_t n_env;
	char *api_version;         /* owned; e.g. "client.authentication.k8s.io/v1" */
	char *install_hint;        /* owned; NULL if absent; shown when the command is missing */
	bool provide_cluster_info; /* pass the cluster in KUBERNETES_EXEC_INFO */
};

/* One resolved context: a cluster and a user. File references are kept as paths after
 * tj_kube_config_parse (which does no I/O) and read into the *_pem fields when
 * the config is loaded (tj_kube_config_load, tj_kube_config_in_cluster); "-data" fields win over
 * paths, as in client-go. */
struct tj_kube_config {
	char *origin;    /* owned; the file the context came from, or "in-cluster" */
	char *context;   /* owned; context name, NULL in-cluster */
	char *server;    /* owned; "https://host:port[/prefix]" without a trailing slash */
	char *namespace; /* owned; the context's namespace, the in-cluster namespace file, or
	                    "default" */

	char *ca_file; /* owned; certificate-authority, absolute; NULL if unset */
	char *ca_pem;  /* owned; certificate-authority-data decoded, or ca_file's contents */
	size_t ca_pem_len;
	bool insecure_skip_tls_verify;
	char *tls_server_name; /* owned; NULL if unset */

	char *client_cert_file; /* owned; absolute path, NULL if unset */
	char *client_cert_pem;  /* owned; client-certificate-data decoded or the file's contents */
	size_t client_cert_pem_len;
	char *client_key_file; /* owned; absolute path, NULL if unset */
	char *client_key_pem;  /* owned */
	size_t client_key_pem_len;

	char *token;      /* owned; static bearer token, NULL if unset */
	char *token_file; /* owned; absolute path, re-read at least every minute, wins over token */
	struct tj_exec_config *exec; /* owned; NULL if no plugin */
};

/* Builds the in-cluster configuration from the service-account folder dir (TJ_KUBE_SA_DIR in
 * production): token_file dir/token, ca_file dir/ca.crt (read), namespace from dir/namespace
 * ("default" if absent). The token file is not read here: the credential source re-reads it. */
int tj_kube_config_in_cluster(const char *server, const char *dir, struct tj_kube_config **ret,
                              char *err, size_t errlen);

/* Everything at once: resolve the sources, read and merge the files, pick the context, read
 * referenced files. sa_dir is normally TJ_KUBE_SA_DIR. */
int tj_kube_config_load(const struct tj_kube_env *env, const char *context_override,
                        const char *sa_dir, struct tj_kube_config **ret, char *err, size_t errlen);

/* Frees everything; accepts NULL; returns NULL. */
struct tj_kube_config *tj_kube_config_free(struct tj_kube_config *cfg);

/* Frees a plugin's configuration; accepts NULL; returns NULL. */
struct tj_exec_config *tj_exec_config_free(struct tj_exec_config *e);
