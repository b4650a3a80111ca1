/* The settings' defaults and the built-in GPU classes, lookups, and freeing what the config
 * file's parser built. */
#include "reconcilers/settings.h"

#include <stdlib.h>
#include <string.h>

/* The failure policy. The defaults: 3 restarts, as Kubeflow users know from JobSet's
 * examples; 60 s of grace, a little more than the node lifecycle controller's 40-50 s
 * node-monitor-grace-period, so that one missed heartbeat does not restart a gang; a
 * doubling backoff from 10 s to 5 min, as the kubelet's CrashLoopBackOff; exit codes 126
 * and 127 (the shell's "not executable" and "command not found"), which no restart can
 * mend; 10 restarts caused by the infrastructure, more than a job's own, since a job whose
 * nodes fail did nothing wrong, yet few enough to stop a job that keeps landing on bad
 * nodes (or that breaks them). The GPU signals are the names deploy/config documents; a
 * cluster whose health checker uses others lists them in its config file. */
static int default_exit_codes[] = { 126, 127 };
static char *default_gpu_conditions[] = { "GpuUnhealthy", "XidError" };
static char *default_gpu_taints[] = { "nvidia.com/gpu.unhealthy", "nvidia.com/gpu.xid" };
static char *default_cordon_conditions[] = { "KernelDeadlock", "ReadonlyFilesystem" };

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct tj_failure_policy default_policy = {
	.max_restarts = 3,
	.node_grace_period_seconds = 60,
	.backoff_initial_seconds = 10,
	.backoff_max_seconds = 300,
	.permanent_exit_codes = default_exit_codes,
	.n_permanent_exit_codes = N_OF(default_exit_codes),
	.gpu_conditions = default_gpu_conditions,
	.n_gpu_conditions = N_OF(default_gpu_conditions),
	.gpu_taints = default_gpu_taints,
	.n_gpu_taints = N_OF(default_gpu_taints),
	.fault_cordon_conditions = default_cordon_conditions,
	.n_fault_cordon_conditions = N_OF(default_cordon_conditions),
	.max_infrastructure_restarts = 10,
};

const struct tj_failure_policy *tj_config_failure_policy(const struct tj_config *config)
{
	return config && config->failure_policy ? config->failure_policy : &default_policy;
}

/* The classes deploy/config/config.yaml ships, for running and rendering without a file. */
static struct tj_kv gh200_labels[] = { { "nvidia.com/gpu.product", "NVIDIA-GH200-480GB" } };
static struct tj_kv h100_labels[] = { { "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3" } };
static struct tj_toleration gpu_tolerations[] = {
	{ "nvidia.com/gpu", "Exists", NULL, "NoSchedule" },
};
static struct tj_gpu_class default_classes[] = {
	{ "gh200", "nvidia.com/gpu", "arm64", gh200_labels, 1, gpu_tolerations, 1 },
	{ "h100", "nvidia.com/gpu", "amd64", h100_labels, 1, gpu_tolerations, 1 },
};
static const struct tj_config builtin_config = { .classes = default_classes, .n_classes = 2 };

const struct tj_config *tj_config_builtin(void)
{
	return &builtin_config;
}

const struct tj_gpu_class *tj_config_find_class(const struct tj_config *config, const char *name)
{
	if (!config || !name)
		return NULL;
	for (size_t i = 0; i < config->n_classes; i++)
		if (!strcmp(config->classes[i].name, name))
			return &config->classes[i];
	return NULL;
}

static void gpu_class_clear(struct tj_gpu_class *class)
{
	free(class->name);
	free(class->resource);
	free(class->arch);
	for (size_t i = 0; i < class->n_node_labels; i++) {
		free(class->node_labels[i].key);
		free(class->node_labels[i].value);
	}
	free(class->node_labels);
	for (size_t i = 0; i < class->n_tolerations; i++) {
		free(class->tolerations[i].key);
		free(class->tolerations[i].operator_);
		free(class->tolerations[i].value);
		free(class->tolerations[i].effect);
	}
	free(class->tolerations);
}

static void free_strings(char **strings, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(strings[i]);
	free(strings);
}

static const struct tj_admission_policy default_admission = {
	.enabled = true,
	.backfill = true,
	.backfill_depth = 8,
	.backfill_max_job_test = 500,
	.fair_share_half_life = 7 * 86400,
	.accounting_retention = 30 * 86400,
	.pin_timeout_seconds = 60,
	.restart_wait_seconds = 600,
};

const struct tj_admission_policy *tj_config_admission(const struct tj_config *config)
{
	return config && config->admission ? config->admission : &default_admission;
}

static struct tj_admission_policy *admission_policy_free(struct tj_admission_policy *policy)
{
	if (!policy)
		return NULL;
	for (size_t i = 0; i < policy->n_limits; i++) {
		free(policy->limits[i].namespace);
		free(policy->limits[i].gpu_class);
	}
	free(policy->limits);
	free(policy->topology_label);
	for (size_t i = 0; i < policy->n_tiers; i++)
		free(policy->tiers[i].name);
	free(policy->tiers);
	for (size_t i = 0; i < policy->n_qos_namespaces; i++) {
		struct tj_qos_namespace *q = &policy->qos_namespaces[i];

		free(q->namespace);
		free_strings(q->allowed, q->n_allowed);
		free(q->default_tier);
	}
	free(policy->qos_namespaces);
	free(policy);
	return NULL;
}

/* Five minutes, as a checkpoint of a large model takes a few: long enough to write one,
 * short enough not to cut a job's useful time much. */
static const struct tj_walltime_policy default_walltime = { .warning_seconds = 300 };

const struct tj_walltime_policy *tj_config_walltime(const struct tj_config *config)
{
	return config && config->walltime ? config->walltime : &default_walltime;
}

static struct tj_walltime_policy *walltime_policy_free(struct tj_walltime_policy *policy)
{
	if (!policy)
		return NULL;
	for (size_t i = 0; i < policy->n_overrides; i++) {
		free(policy->overrides[i].namespace);
		free(policy->overrides[i].gpu_class);
	}
	free(policy->overrides);
	free(policy);
	return NULL;
}

static const struct tj_retention_policy default_retention = {
	.ttl_seconds_after_finished = -1,
	.keep_failed_pods_seconds = 300,
};

const struct tj_retention_policy *tj_config_retention(const struct tj_config *config)
{
	return config && config->retention ? config->retention : &default_retention;
}

/* The suspect nodes' defaults: three jobs, as no two jobs that share a bad peer can reach
 * it alone; an hour, about the time a few jobs take to start and crash on a node; the exit
 * codes of a process killed by SIGABRT (PyTorch's NCCL watchdog aborts on a collective that
 * timed out or failed), SIGBUS and SIGSEGV (a memory or device fault), as 128 + the
 * signal. */
static int default_suspect_codes[] = { 134, 135, 139 };
static const struct tj_suspect_policy default_suspect = {
	.enabled = true,
	.jobs = 3,
	.window_seconds = 3600,
	.exit_codes = default_suspect_codes,
	.n_exit_codes = N_OF(default_suspect_codes),
};

const struct tj_suspect_policy *tj_config_suspect(const struct tj_config *config)
{
	return config && config->suspect ? config->suspect : &default_suspect;
}

struct tj_suspect_policy *tj_suspect_policy_free(struct tj_suspect_policy *policy)
{
	if (!policy)
		return NULL;
	free(policy->exit_codes);
	free(policy);
	return NULL;
}

static void failure_policy_free(struct tj_failure_policy *policy)
{
	if (!policy)
		return;
	free(policy->permanent_exit_codes);
	free_strings(policy->gpu_conditions, policy->n_gpu_conditions);
	free_strings(policy->gpu_taints, policy->n_gpu_taints);
	free_strings(policy->fault_cordon_conditions, policy->n_fault_cordon_conditions);
	free(policy);
}

struct tj_config *tj_config_free(struct tj_config *config)
{
	if (!config)
		return NULL;
	for (size_t i = 0; i < config->n_classes; i++)
		gpu_class_clear(&config->classes[i]);
	free(config->classes);
	failure_policy_free(config->failure_policy);
	admission_policy_free(config->admission);
	walltime_policy_free(config->walltime);
	free_strings(config->command_exempt_namespaces, config->n_command_exempt_namespaces);
	free(config->retention);
	tj_suspect_policy_free(config->suspect);
	free(config->trainer_status_url);
	free(config->trainer_status_ca_config_map);
	free(config);
	return NULL;
}
