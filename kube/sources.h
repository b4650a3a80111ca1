/* Where the client configuration comes from: the --kubeconfig flag, $KUBECONFIG, the pod's
 * service account, or ~/.kube/config, decided from the environment alone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Limit on the kubeconfig files merged into one configuration ($KUBECONFIG lists them). */
#define TJ_KUBECONFIG_MAX_FILES 64

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
