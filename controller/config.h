/* The controller's config file (YAML, read with libfyaml): the GPU classes and the defaults
 * of the failure policy. Shipped in deploy/ as a ConfigMap. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <uv.h>

/* Limits on what a config file may hold; a file beyond them is rejected. */
#define TJ_CONFIG_MAX_BYTES       (64 * 1024)
#define TJ_CONFIG_MAX_CLASSES     64
#define TJ_CONFIG_MAX_NODE_LABELS 32
#define TJ_CONFIG_MAX_TOLERATIONS 16
#define TJ_CONFIG_MAX_SIGNALS     32 /* per list of node conditions or taint keys */
#define TJ_CONFIG_MAX_EXIT_CODES  32

struct tj_kv {
	char *key;   /* owned */
	char *value; /* owned */
};

struct tj_toleration {
	char *key;       /* owned; NULL matches every key (operator Exists) */
	char *operator_; /* owned; "Equal" or "Exists" */
	char *value;     /* owned; NULL with Exists */
	char *effect;    /* owned; NULL matches every effect */
};

struct tj_gpu_class {
	char *name;                /* owned; e.g. "gh200"; runtime torch-<name> selects it */
	char *resource;            /* owned; extended resource, e.g. "nvidia.com/gpu" */
	char *arch;                /* owned; kubernetes.io/arch value, e.g. "arm64"; NULL = any */
	struct tj_kv *node_labels; /* owned array; required node labels (key In [value]) */
	size_t n_node_labels;
	struct tj_toleration *tolerations; /* owned array */
	size_t n_tolerations;
};

/* The defaults of the failure policy (DESIGN.md section 4, "Failures"); the node-health
 * signals are read by reconcilers/node_health.h, the rest by the planner. */
struct tj_failure_policy {
	int max_restarts; /* restarts before a job is Failed (ReachedMaxRestarts) */
	/* How long a node may be unhealthy before its workers count as failed; a TrainJob's
	 * annotation trainjob.flame.dev/node-grace-period-seconds overrides it. */
	int node_grace_period_seconds;
	/* The delay before the pods of restart n are created: initial * 2^(n-1), at most max. */
	int backoff_initial_seconds;
	int backoff_max_seconds;
	int *permanent_exit_codes; /* owned array; a worker exiting with one fails the job */
	size_t n_permanent_exit_codes;
	/* Node condition types that mean a broken GPU when True (set by node-problem-detector
	 * or a GPU health checker), and taint keys that mean the same whatever their value. */
	char **gpu_conditions; /* owned array of owned strings */
	size_t n_gpu_conditions;
	char **gpu_taints; /* owned array of owned strings */
	size_t n_gpu_taints;
	/* Node condition types that, True on a cordoned node, say it was cordoned for a fault.
	 * A cordon alone is maintenance: it keeps new pods away but leaves running jobs alone. */
	char **fault_cordon_conditions; /* owned array of owned strings */
	size_t n_fault_cordon_conditions;
};

/* The most GPUs of one class a namespace may hold at once (Slurm's GrpTRES). */
struct tj_namespace_limit {
	char *namespace; /* owned; "*" for every namespace without a limit of its own */
	char *gpu_class; /* owned */
	long long max_gpus;
};

/* Gang admission (reconcilers/admission.h, controller/admitter.h). */
struct tj_admission_policy {
	bool enabled;            /* off: pods are created at once, the scheduler alone decides */
	bool backfill;           /* off: a strict FIFO per class */
	bool wait_if_never_fits; /* neverFits: Wait; else a job that never fits fails */
	/* Seconds a pinned pod may stay unschedulable before its gang is given back. */
	int pin_timeout_seconds;
	/* owned; a node label whose value is a topology domain (rack, NVLink domain); NULL */
	char *topology_label;
	struct tj_namespace_limit *limits; /* owned array */
	size_t n_limits;
};

struct tj_config {
	struct tj_gpu_class *classes; /* owned array */
	size_t n_classes;
	/* owned; NULL: the defaults (tj_config_failure_policy) */
	struct tj_failure_policy *failure_policy;
	/* owned; NULL: the defaults (tj_config_admission) */
	struct tj_admission_policy *admission;
};

/* Parses a config document. origin names it in messages ("config.yaml"). On error returns
 * -EINVAL and writes "origin:LINE: what is wrong" into err; *ret is written only on success.
 * A document longer than TJ_CONFIG_MAX_BYTES gives -E2BIG. The format, in short:
 *
 *   gpuClasses:
 *     - name: gh200                  # DNS label; runtime torch-gh200 selects it
 *       resource: nvidia.com/gpu     # extended resource, domain/name
 *       arch: arm64                  # optional kubernetes.io/arch
 *       nodeLabels: {nvidia.com/gpu.product: NVIDIA-GH200-480GB}
 *       tolerations:
 *         - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
 *   failurePolicy:                   # optional; each absent field keeps its default
 *     maxRestarts: 3                 # 0..1000
 *     nodeGracePeriodSeconds: 60     # 0..86400
 *     restartBackoff: {initialSeconds: 10, maxSeconds: 300}   # 0..86400, max >= initial
 *     permanentExitCodes: [126, 127] # 1..255
 *     gpuHealth:
 *       conditions: [GpuUnhealthy]   # node condition types (not Ready)
 *       taints: [nvidia.com/gpu.unhealthy]
 *     faultCordonConditions: [KernelDeadlock]
 *
 * Unknown fields, duplicate keys and duplicate class names are errors. */
int tj_config_parse(const char *yaml, size_t len, const char *origin, struct tj_config **ret,
                    char *err, size_t errlen);

/* Reads and parses a file; -errno if it cannot be read (err then says why). */
int tj_config_load_file(const char *path, struct tj_config **ret, char *err, size_t errlen);

/* The classes deploy/config/config.yaml ships (gh200, h100), for running and rendering
 * without a config file. Static: never freed. */
const struct tj_config *tj_config_builtin(void);

/* The failure policy of config, or the defaults when config is NULL or has none. */
const struct tj_failure_policy *tj_config_failure_policy(const struct tj_config *config);

/* The admission policy of config, or the defaults (on, backfill, NeverFits fails, pins
 * given back after 60 s, no topology, no limits) when config is NULL or has none. */
const struct tj_admission_policy *tj_config_admission(const struct tj_config *config);

/* The class with that name, or NULL. */
const struct tj_gpu_class *tj_config_find_class(const struct tj_config *config, const char *name);

/* Accepts NULL; returns NULL. */
struct tj_config *tj_config_free(struct tj_config *config);

/* Watching the file. A ConfigMap mounted as a volume is updated by swapping a symlink
 * (..data) in the file's directory, so the directory is watched, not the file. */
struct tj_config_watch;

/* Called after each change of the file's content (several events of one update are merged
 * by a short delay). On success error is 0, message is NULL and config is the new config,
 * which is now current; the previous config is freed when the callback returns, so drop
 * pointers into it there. On failure error is negative, message says why ("origin:LINE:
 * ..." for a broken file) and config is the previous one, which stays current. */
typedef void (*tj_config_reload_cb)(const struct tj_config *config, int error, const char *message,
                                    void *userdata);

/* Loads path (failing as tj_config_load_file does) and starts watching it on loop. A change
 * is read debounce_ms after the last event of the directory. */
int tj_config_watch_start(uv_loop_t *loop, const char *path, unsigned debounce_ms,
                          tj_config_reload_cb cb, void *userdata, struct tj_config_watch **ret,
                          char *err, size_t errlen);

/* The current config; valid until the next successful reload or tj_config_watch_stop. */
const struct tj_config *tj_config_watch_config(const struct tj_config_watch *watch);

/* Stops watching. The watch and its config are freed once the loop has run the close
 * callbacks of its handles. Accepts NULL. */
void tj_config_watch_stop(struct tj_config_watch *watch);
