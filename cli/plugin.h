/* The frame the kubectl plugins share (kubectl-sbatch, kubectl-squeue, kubectl-scancel,
 * kubectl-sacct): the options every plugin has, finding the cluster as kubectl does, and
 * running one request at a time on the project's own kube/ client.
 *
 * How a plugin uses it (cli/kubectl_<name>.c holds its main; add <name> to kubectl_plugins
 * in cli/meson.build and the build makes and installs the executable kubectl-<name>):
 *
 *   static int my_option(void *userdata, const char *arg, const char *next, char *err,
 *                        size_t errlen)
 *   {
 *           const char *value;
 *           int n = tj_plugin_match(arg, next, 0, "image", &value);   // --image X, --image=X
 *           if (n > 0) ...remember value...;
 *           return n;   // >0 consumed, 0 not mine, <0 error (message in err)
 *   }
 *
 *   static const struct tj_plugin_spec spec = {
 *           .name = "sbatch", .synopsis = "[OPTION]... SCRIPT [ARG]...",
 *           .summary = "Turns a Slurm batch script into a TrainJob.",
 *           .options_help = "  --image IMAGE   the container image\n",
 *           .on_option = my_option, .stop_at_operand = true,
 *   };
 *
 *   int main(int argc, char **argv)
 *   {
 *           struct tj_plugin p;
 *           int rc = tj_plugin_parse(&p, &spec, &state, argc, argv, stdout, stderr);
 *           if (rc != TJ_PLUGIN_GO_ON)
 *                   return rc;                  // --help, --version or a usage error
 *           if (tj_plugin_connect(&p) < 0)      // kubeconfig, context, client
 *                   return tj_plugin_close(&p), TJ_PLUGIN_EXIT_FAILURE;
 *           struct tj_plugin_reply reply;
 *           tj_plugin_reply_init(&reply);
 *           tj_kube_get(p.client, &ref, tj_plugin_reply_fn, &reply, NULL);
 *           if (tj_plugin_wait(&p, &reply) < 0)
 *                   tj_plugin_error(&p, "%s", reply.error);
 *           ...use reply.body...
 *           tj_plugin_reply_clear(&reply);
 *           tj_plugin_close(&p);
 *   }
 *
 * Common options (before or after the plugin's own ones): --kubeconfig FILE (else
 * $KUBECONFIG, else ~/.kube/config, else the pod's service account), --context NAME,
 * -n/--namespace NS (default: the context's namespace, as kubectl), -h/--help, --version.
 * Exit codes: 0 success, 1 a failure talking to the cluster or doing the work, 2 bad usage.
 * Every error is one line on stderr that starts with "kubectl <name>: ". */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "informers/pod.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/request.h"
#include "reconcilers/trainjob.h"

/* Annotations the plugins write on the TrainJobs they submit and read back. */
/* Who submitted the job, as the API server named the caller (status.userInfo.username of a
 * SelfSubjectReview). */
#define TJ_ANNOTATION_SUBMITTED_BY TJ_LABEL_PREFIX "submitted-by"
/* The Slurm partition the job was submitted to (-p), when one was given. */
#define TJ_ANNOTATION_PARTITION TJ_LABEL_PREFIX "partition"

#define TJ_PLUGIN_EXIT_SUCCESS  0
#define TJ_PLUGIN_EXIT_FAILURE  1
#define TJ_PLUGIN_EXIT_USAGE    2
/* What tj_plugin_parse returns when the plugin should go on with its work. */
#define TJ_PLUGIN_GO_ON        (-1)

#define TJ_PLUGIN_MAX_OPERANDS 256
#define TJ_PLUGIN_ERROR_MAX    512

/* A plugin's own options: called for every argument that starts with '-' and is not a common
 * option. arg is the argument, next the one after it (NULL at the end). Returns how many
 * arguments it consumed (1 or 2), 0 if arg is not one of its options (an unknown option:
 * usage error), or a negative errno code with a one-line message in err. */
typedef int (*tj_plugin_option_fn)(void *userdata, const char *arg, const char *next, char *err,
                                   size_t errlen);

struct tj_plugin_spec {
	const char *name;              /* "sbatch": the command is kubectl <name> */
	const char *synopsis;          /* after "kubectl <name> ", e.g. "[OPTION]... SCRIPT" */
	const char *summary;           /* one or more lines on what the command does */
	const char *options_help;      /* the plugin's own options, lines of "  -x, --xx  what\n" */
	tj_plugin_option_fn on_option; /* NULL: the plugin has no options of its own */
	/* Stop at the first operand: what follows belongs to it (sbatch SCRIPT ARGS...). */
	bool stop_at_operand;
	size_t min_operands, max_operands; /* max 0: TJ_PLUGIN_MAX_OPERANDS */
};

struct tj_plugin {
	const struct tj_plugin_spec *spec;
	char kubeconfig[PATH_MAX];   /* --kubeconfig; "" unset */
	char context[256];           /* --context; "" unset */
	char namespace[TJ_NAME_MAX]; /* -n; "" unset until tj_plugin_connect fills the default */
	bool namespace_given;        /* -n was on the command line */
	const char *operands[TJ_PLUGIN_MAX_OPERANDS]; /* borrowed from argv */
	size_t n_operands;
	/* With stop_at_operand: the arguments after the first operand, borrowed from argv. */
	char *const *rest;
	size_t n_rest;

	/* Filled by tj_plugin_connect. */
	uv_loop_t loop;
	bool loop_open;
	struct tj_kube_config *kube; /* owned */
	struct tj_client *client;    /* owned */
	FILE *err;                   /* where tj_plugin_error writes; borrowed */
};

/* Parses argv: the common options into *p, the plugin's through spec->on_option, the
 * operands into p->operands (and p->rest). Pure but for the output: prints --help or
 * --version to out and returns TJ_PLUGIN_EXIT_SUCCESS; prints one line to err for a bad
 * argument and returns TJ_PLUGIN_EXIT_USAGE; otherwise returns TJ_PLUGIN_GO_ON. Forms
 * accepted: "-n NS", "-nNS", "--namespace NS", "--namespace=NS", and "--" ends options. */
int tj_plugin_parse(struct tj_plugin *p, const struct tj_plugin_spec *spec, void *userdata,
                    int argc, char *const argv[], FILE *out, FILE *err);

/* Matches arg (and next) against the option -<short_name> (0: none) / --<long_name> that
 * takes a value: "-x V", "-xV", "--long V", "--long=V". Returns 2 or 1 (arguments consumed)
 * with *ret_value set, 0 if arg is not this option, -EINVAL if the value is missing. */
int tj_plugin_match(const char *arg, const char *next, char short_name, const char *long_name,
                    const char **ret_value);

/* Matches a flag without a value: "-x" or "--long". Returns 1 or 0. */
int tj_plugin_match_flag(const char *arg, char short_name, const char *long_name);

/* Finds the cluster as kubectl does (--kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster;
 * --context else current-context), fills p->namespace with the context's namespace unless
 * -n gave one, and creates the client. Prints one line and returns a negative errno code on
 * failure. */
int tj_plugin_connect(struct tj_plugin *p);

/* One request's answer, collected by tj_plugin_reply_fn. */
struct tj_plugin_reply {
	bool done;
	int rc;                          /* as tj_response.rc */
	long http_status;                /* 0 if no answer */
	char reason[64];                 /* the Status reason ("NotFound", ...) or "" */
	cJSON *body;                     /* owned; the 2xx body, NULL otherwise */
	char error[TJ_PLUGIN_ERROR_MAX]; /* one line for a person when rc < 0 */
};

void tj_plugin_reply_init(struct tj_plugin_reply *r);

/* The callback to give a tj_kube_* request, with the reply as its userdata. */
void tj_plugin_reply_fn(struct tj_response *resp, void *userdata);

/* Runs the loop until the reply is done; returns reply->rc. */
int tj_plugin_wait(struct tj_plugin *p, struct tj_plugin_reply *r);

/* Frees the body and zeroes the reply; accepts NULL. */
void tj_plugin_reply_clear(struct tj_plugin_reply *r);

/* Asks the API server who the caller is, as `kubectl auth whoami` does (a SelfSubjectReview,
 * authentication.k8s.io/v1), and writes the user name into buf. Returns 0, or the request's
 * negative errno code with the reason in reply_error (may be NULL). */
int tj_plugin_whoami(struct tj_plugin *p, char *buf, size_t len, char *reply_error, size_t errlen);

/* Writes "kubectl <name>: <message>\n" to the plugin's stderr. */
void tj_plugin_error(const struct tj_plugin *p, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Releases the client and the loop; safe after a failed or no tj_plugin_connect. */
void tj_plugin_close(struct tj_plugin *p);
