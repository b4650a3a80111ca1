/* The settings the decisions read: the GPU classes (which nodes a runtime's pods go to, and
 * how they get there) and the failure policy (how many restarts, after how long, what counts
 * as a broken node). Plain data, filled by the config file's parser (controller/config/config.h)
 * or built in; the planner, the renderer and node health take them as inputs. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits on what the settings may hold; a config file beyond them is rejected. */
#define TJ_CONFIG_MAX_CLASSES     64
#define TJ_CONFIG_MAX_NODE_LABELS 32
#define TJ_CONFIG_MAX_TOLERATIONS 16
#define TJ_CONFIG_MAX_SIGNALS     32 /* per list of node conditions or taint keys */
#define TJ_CONFIG_MAX_EXIT_CODES  32

/* A walltime's default and maximum, as one place of the config file sets them (a Slurm
 * partition's DefaultTime and MaxTime); reconcilers/policy/walltime.h resolves them. Seconds; 0:
 * unset here, a less specific place decides. */
struct tj_walltime_limits {
	long long default_seconds; /* defaultWalltime: of a job without activeDeadlineSeconds */
	long long max_seconds;     /* maxWalltime: a longer job is refused */
};

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
 * signals are read by reconcilers/policy/node_health.h, the rest by the planner. */
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
	/* Restarts the infrastructure may cause (a node that fails, an eviction, a preemption)
	 * before a job is Failed (ReachedMaxInfrastructureRestarts); they do not count against
	 * max_restarts (reconcilers/policy/budget.h). */
	int max_infrastructure_restarts;
};

/* The most GPUs of one class a namespace may hold at once (Slurm's GrpTRES). */
struct tj_namespace_limit {
	char *namespace; /* owned; "*" for every namespace without a limit of its own */
	char *gpu_class; /* owned */
	long long max_gpus;
};

#define TJ_CONFIG_MAX_NAMESPACE_LIMITS 256

/* A QOS tier (Slurm's QOS; reconcilers/policy/qos.h): the jobs of a tier of higher priority come
 * first in their class's queue, whatever their own priority. */
struct tj_qos_tier {
	char *name; /* owned; a DNS label */
	int priority;
	long long max_walltime_seconds; /* maxWalltimeSeconds; 0: none */
	/* The tiers whose running jobs its queued jobs may preempt (reconcilers/policy/qos.h): bit
	 * i for the i-th tier of the policy's list (or of the built-in ones). */
	uint32_t preempts;
	/* A queued job preempts only when its expected start is unknown or further away than
	 * this (preemptAfterSeconds; 0: whenever it cannot start now). */
	long long preempt_after_seconds;
	/* The most GPUs (of every class together) one namespace's jobs may hold in the tier
	 * (maxGPUsPerNamespace, Slurm's QOS MaxTRESPerAccount=gres/gpu); 0: no limit. */
	long long max_gpus_per_namespace;
	/* Its jobs backfill onto the nodes reserved for a job of a higher tier, as onto those of
	 * their own tier: when their walltime and grace end by the reservation's expected start
	 * (backfillReservedNodes; reconcilers/admission/admission.h). Off: they take only the
	 * nodes no reservation holds. */
	bool backfill_reserved_nodes;
};

/* Which tiers a namespace's jobs may ask for, and the one they get without asking. */
struct tj_qos_namespace {
	char *namespace; /* owned; "*": every namespace without an entry of its own */
	char **allowed;  /* owned array of owned tier names */
	size_t n_allowed;
	char *default_tier; /* owned; one of allowed */
	long long share;    /* its fair share (reconcilers/admission/fair_share.h), > 0 */
};

#define TJ_CONFIG_MAX_QOS_TIERS      16
#define TJ_CONFIG_MAX_QOS_NAMESPACES 256

/* Gang admission (reconcilers/admission/admission.h, controller/admission/admitter.h). */
struct tj_admission_policy {
	bool enabled;  /* off: pods are created at once, the scheduler alone decides */
	bool backfill; /* off: a strict FIFO per class */
	/* How many blocked jobs of a class get a reservation that backfill may not delay, and
	 * an expected start (Slurm's backfill depth); at least 1. */
	int backfill_depth;
	/* How many jobs of a class behind those reservations one cycle tries at most, of those
	 * that need a look at the class's nodes (Slurm's bf_max_job_test; the next cycle goes on
	 * from where it stopped, as bf_continue); 0: no bound. */
	int backfill_max_job_test;
	bool wait_if_never_fits; /* neverFits: Wait; else a job that never fits fails */
	/* Seconds a pinned pod may stay unschedulable before its gang is given back. */
	int pin_timeout_seconds;
	/* Seconds a restart's replacements may wait for room, from the failure, while the
	 * job's live ranks hold their GPUs, before those are given back too and the gang waits
	 * whole; 0: for ever. */
	int restart_wait_seconds;
	/* owned; a node label whose value is a topology domain (rack, NVLink domain); NULL */
	char *topology_label;
	struct tj_namespace_limit *limits; /* owned array */
	size_t n_limits;
	/* owned arrays; NULL: the built-in tiers and namespace rules (reconcilers/policy/qos.h) */
	struct tj_qos_tier *tiers;
	size_t n_tiers;
	struct tj_qos_namespace *qos_namespaces;
	size_t n_qos_namespaces;
	/* Seconds over which a namespace's GPU usage counts half
	 * (reconcilers/admission/fair_share.h). */
	long long fair_share_half_life;
	/* Seconds a deleted TrainJob's accounting record is kept (reconcilers/usage/accounting.h).
	 */
	long long accounting_retention;
};

/* The walltime limits of a GPU class, of a namespace, or of a namespace for one class. */
struct tj_walltime_override {
	char *namespace; /* owned; NULL: every namespace */
	char *gpu_class; /* owned; NULL: every class */
	struct tj_walltime_limits limits;
};

#define TJ_CONFIG_MAX_WALLTIME_OVERRIDES 256 /* namespaces; plus one per GPU class */

/* The walltime section of the config file: the cluster-wide limits, those of the GPU classes
 * and of namespaces, and how long before its deadline a job is warned. */
struct tj_walltime_policy {
	struct tj_walltime_limits cluster;
	struct tj_walltime_override *overrides; /* owned array */
	size_t n_overrides;
	/* Seconds before the deadline the pods get it in their annotation (the TrainJob's
	 * annotation trainjob.flame.dev/deadline-warning-seconds overrides it). */
	int warning_seconds;
};

/* Finished jobs and replaced attempts (reconcilers/policy/retention.h). */
struct tj_retention_policy {
	/* Seconds from a job's end (Complete or Failed) until its pods and Service are
	 * deleted, when its runtime sets no ttlSecondsAfterFinished; -1: never. */
	int ttl_seconds_after_finished;
	/* Seconds a replaced attempt's finished pods stay, for their logs, once every pod of
	 * the attempt after them runs. */
	int keep_failed_pods_seconds;
};

/* Suspect nodes (reconcilers/policy/suspect.h): a node where ranks of several TrainJobs fail with
 * an ending that looks like the hardware's is tainted so that new gangs avoid it. */
struct tj_suspect_policy {
	bool enabled;
	int jobs;                 /* distinct TrainJobs whose failures make a node suspect */
	long long window_seconds; /* how far back their failures count */
	int *exit_codes;          /* owned array; the exit codes that look like the hardware's */
	size_t n_exit_codes;
};

struct tj_config {
	struct tj_gpu_class *classes; /* owned array */
	size_t n_classes;
	/* owned; NULL: the defaults (tj_config_failure_policy) */
	struct tj_failure_policy *failure_policy;
	/* owned; NULL: the defaults (tj_config_admission) */
	struct tj_admission_policy *admission;
	/* owned; NULL: the defaults (tj_config_walltime) */
	struct tj_walltime_policy *walltime;
	/* commandPolicy.exemptNamespaces: namespaces whose TrainJobs may run commands that
	 * never exit (reconcilers/policy/command_policy.h). Owned array of owned names. */
	char **command_exempt_namespaces;
	size_t n_command_exempt_namespaces;
	/* owned; NULL: the defaults (tj_config_retention) */
	struct tj_retention_policy *retention;
	/* owned; NULL: the defaults (tj_config_suspect) */
	struct tj_suspect_policy *suspect;
	/* trainerStatus.url: "https://HOST:PORT" of the trainer status server the pods report
	 * their progress to (reconcilers/trainer_status.h); owned, NULL: the pods get no
	 * wiring. trainerStatus.caConfigMap: the ConfigMap of the job's namespace whose ca.crt
	 * the pods trust it by; owned, NULL: none is mounted. */
	char *trainer_status_url;
	char *trainer_status_ca_config_map;
};

#define TJ_CONFIG_MAX_EXEMPT_NAMESPACES 256

/* The classes deploy/config/config.yaml ships (gh200, h100), for running and rendering
 * without a config file. Static: never freed. */
const struct tj_config *tj_config_builtin(void);

/* The failure policy of config, or the defaults when config is NULL or has none. */
const struct tj_failure_policy *tj_config_failure_policy(const struct tj_config *config);

/* The class with that name, or NULL. */
const struct tj_gpu_class *tj_config_find_class(const struct tj_config *config, const char *name);

/* The admission policy of config, or the defaults (on, backfill, NeverFits fails, pins
 * given back after 60 s, no topology, no limits) when config is NULL or has none. */
const struct tj_admission_policy *tj_config_admission(const struct tj_config *config);

/* The walltime policy of config, or the defaults (no cluster-wide limits, no overrides, a
 * warning 300 s before the deadline) when config is NULL or has none. */
const struct tj_walltime_policy *tj_config_walltime(const struct tj_config *config);

/* The retention policy of config, or the defaults (no TTL; failed pods kept 300 s after the
 * next attempt runs) when config is NULL or has none. */
const struct tj_retention_policy *tj_config_retention(const struct tj_config *config);

/* The suspect-node policy of config, or the defaults (on; 3 jobs within an hour; exit
 * codes 134, 135 and 139) when config is NULL or has none. */
const struct tj_suspect_policy *tj_config_suspect(const struct tj_config *config);

/* Frees a suspect-node policy. Accepts NULL; returns NULL. */
struct tj_suspect_policy *tj_suspect_policy_free(struct tj_suspect_policy *policy);

/* Accepts NULL; returns NULL. */
struct tj_config *tj_config_free(struct tj_config *config);
