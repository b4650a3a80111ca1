/* Command line of trainjob-controller: what the process was asked to do.
 *
 *   trainjob-controller [OPTION]...                 run the controller
 *   trainjob-controller render -f TRAINJOB.yaml [--runtime RUNTIME.yaml]
 *                              [--runtime-dir DIR] [--config CONFIG.yaml]
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/render_command.h"
#include "controller/http/http.h"
#include "controller/leader/leader.h"
#include "controller/log/log.h"

enum tj_flags_action {
	TJ_FLAGS_RUN,     /* run the controller (the default) */
	TJ_FLAGS_HELP,    /* print usage and exit 0 */
	TJ_FLAGS_VERSION, /* print the version and exit 0 */
	TJ_FLAGS_RENDER,  /* print the objects TrainJobs become, without a cluster */
};

/* Arguments of the controller itself (the default command); "" when not given. */
struct tj_flags_run {
	char kubeconfig[PATH_MAX]; /* --kubeconfig */
	char context[256];         /* --context */
	char config[PATH_MAX];     /* --config: the GPU classes, reloaded on change */
	char namespace[64];        /* --namespace: watch only this one */
	double qps;                /* --kube-api-qps: client-side limit, 0 = off (the default) */
	int burst;                 /* --kube-api-burst */
	/* --paginated-lists: the caches fill from paginated lists instead of streaming lists
	 * (watches with sendInitialEvents), which are tried first by default. */
	bool paginated_lists;
	/* Leader election, named and defaulted as controller-runtime's flags: off unless asked
	 * (the deploy manifests turn it on). */
	bool leader_elect;                       /* --leader-elect */
	char leader_election_id[254];            /* --leader-election-id: the Lease's name */
	char leader_election_namespace[64];      /* --leader-election-namespace; "" = own */
	struct tj_leader_timings leader_timings; /* --leader-elect-{lease-duration,
	                                            renew-deadline,retry-period} */
	/* --metrics-secure: HTTPS and TokenReview/SubjectAccessReview on /metrics. Unless given,
	 * on in cluster and off outside (a controller run by hand serves plain HTTP). */
	bool metrics_secure_given;
	bool metrics_secure;
	/* --metrics-cert-path: a directory with tls.crt and tls.key (a mounted
	 * kubernetes.io/tls Secret), reloaded on change; "" = self-signed at start. */
	char metrics_cert_path[PATH_MAX];
	/* --kueue: watch Kueue's Workloads, so that a TrainJob Kueue holds says why. */
	bool kueue;
};

struct tj_flags {
	enum tj_flags_action action;
	/* The command given (TJ_FLAGS_RUN or TJ_FLAGS_RENDER): whose usage --help prints. */
	enum tj_flags_action topic;
	/* Operations flags, named as controller-runtime's manager names them. */
	struct tj_bind_addr metrics_addr; /* --metrics-bind-address, default ":8080" */
	struct tj_bind_addr probe_addr;   /* --health-probe-bind-address, default ":8081" */
	/* --trainer-status-bind-address, default "0" (off): the trainer status server */
	struct tj_bind_addr trainer_status_addr;
	enum tj_log_level log_level; /* --log-level (alias --zap-log-level), default info */
	struct tj_flags_run run;
	struct tj_render_options render; /* cli/render_command.h */
};

/* Parses argv into *ret. On a bad argument returns -EINVAL and writes a one-line message
 * naming it into err (which is always NUL-terminated when errlen > 0); *ret is written only
 * on success. argv is not modified and *ret borrows no memory from it. */
int tj_flags_parse(int argc, char *const argv[], struct tj_flags *ret, char *err, size_t errlen);

/* Whether /metrics is served over HTTPS with token and access reviews: --metrics-secure as
 * given, else only in cluster (outside, a controller run by hand or by the tests serves
 * plain HTTP, as controller-runtime's own default did before it turned secure). */
bool tj_flags_metrics_secure(const struct tj_flags_run *run, bool in_cluster);

/* Writes the --help text of a command (topic TJ_FLAGS_RUN: the program's own). */
void tj_flags_usage(FILE *out, const char *prog, enum tj_flags_action topic);
