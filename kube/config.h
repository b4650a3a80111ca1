/* Client configuration: where the API server is and how to authenticate to it, found the way
 * client-go and controller-runtime find it (explicit --kubeconfig, $KUBECONFIG, in-cluster
 * service account, ~/.kube/config) and parsed from kubeconfig YAML with libfyaml. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

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
 * tj_kube_config_parse (which does no I/O) and read into the *_pem fields by
 * tj_kube_config_read_files; "-data" fields win over paths, as in client-go. */
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

/* The process environment that decides where the configuration comes from. Every member may
 * be NULL (unset). Passed in so that the choice is a pure function. */
struct tj_kube_env {
	const char *kubeconfig_flag; /* --kubeconfig */
	const char *kubeconfig_env;  /* $KUBECONFIG */
	const char *service_host;    /* $KUBERNETES_SERVICE_HOST */
	const char *service_port;    /* $KUBERNETES_SERVICE_PORT */
	const char *home;            /* $HOME */
};

/* Fills env from getenv() with the given --kubeconfig flag value (may be NULL). The pointers
 * borrow from the environment. */
void tj_kube_env_from_process(const char *kubeconfig_flag, struct tj_kube_env *ret);

enum tj_kube_source_kind {
	TJ_KUBE_SOURCE_FILES,      /* kubeconfig files, merged in order (first wins) */
	TJ_KUBE_SOURCE_IN_CLUSTER, /* the pod's service account */
};

struct tj_kube_sources {
	enum tj_kube_source_kind kind;
	char **paths; /* owned array of owned strings; FILES only */
	size_t n_paths;
	bool optional; /* FILES: a missing file is skipped ($KUBECONFIG list), not an error */
	char *server;  /* owned; IN_CLUSTER only: "https://host:port", IPv6 hosts bracketed */
};

/* Decides where the configuration comes from, in controller-runtime's order: the flag; else a
 * non-empty $KUBECONFIG (split on ':', empty entries and repeats dropped); else in-cluster if
 * both service variables are set; else $HOME/.kube/config. Pure: no I/O.
 * Returns -ENOENT with a message in err if there is no source at all, -EINVAL for an
 * unusable in-cluster host or port, -ENOMEM. */
int tj_kube_sources_resolve(const struct tj_kube_env *env, struct tj_kube_sources *ret, char *err,
                            size_t errlen);

/* Frees the members; accepts NULL. */
void tj_kube_sources_clear(struct tj_kube_sources *s);

/* One kubeconfig document in memory. */
struct tj_kube_doc {
	const char *origin; /* path of the file: names it in messages, and relative paths inside
	                       are resolved against its folder */
	const char *yaml;
	size_t len;
};

/* Parses and merges kubeconfig documents as client-go does (for each cluster, user and context
 * name, and for current-context, the first document that sets it wins), then picks the
 * context (context_override if not NULL, else current-context) and resolves it into *ret.
 * No I/O: referenced files stay paths. On error returns -EINVAL and writes a message naming
 * the file and the field, e.g. "/home/u/.kube/config: users[0].user.client-key-data: invalid
 * base64", or "kubeconfig: context \"x\" not found"; *ret is written only on success. */
int tj_kube_config_parse(const struct tj_kube_doc *docs, size_t n_docs,
                         const char *context_override, struct tj_kube_config **ret, char *err,
                         size_t errlen);

/* Reads ca_file, client_cert_file and client_key_file into the matching *_pem fields where
 * the "-data" variant was not given. Returns -errno (message names the file) on failure. */
int tj_kube_config_read_files(struct tj_kube_config *cfg, char *err, size_t errlen);

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
