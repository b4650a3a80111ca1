/* The controller's config file (YAML, read with libfyaml): the GPU classes and the defaults
 * of the failure policy and of admission (reconcilers/settings.h). Shipped in deploy/ as a
 * ConfigMap. */
#pragma once

#include <stddef.h>

#include "reconcilers/settings.h"

#define TJ_CONFIG_MAX_BYTES (64 * 1024) /* a longer file is rejected */

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
 *     maxInfrastructureRestarts: 10  # 0..1000; node failures, evictions, preemptions
 *     nodeGracePeriodSeconds: 60     # 0..86400
 *     restartBackoff: {initialSeconds: 10, maxSeconds: 300}   # 0..86400, max >= initial
 *     permanentExitCodes: [126, 127] # 1..255
 *     gpuHealth:
 *       conditions: [GpuUnhealthy]   # node condition types (not Ready)
 *       taints: [nvidia.com/gpu.unhealthy]
 *     faultCordonConditions: [KernelDeadlock]
 *   admission:                       # optional; each absent field keeps its default
 *     enabled: true                  # false: pods at once, the scheduler alone decides
 *     backfill: true                 # false: strict FIFO per class
 *     neverFits: Fail                # or Wait
 *     pinTimeoutSeconds: 60          # 0..86400; 0 never gives a gang back
 *     restartWaitSeconds: 600        # 0..604800; 0: a restart waits for its room for ever
 *     topologyLabel: topology.flame.dev/rack   # optional label key
 *     namespaceLimits:               # at most 256; namespace "*" = every other namespace
 *       - {namespace: team-a, gpuClass: gh200, maxGPUs: 16}   # a class of gpuClasses
 *   walltime: ...                    # optional; controller/config/config_walltime_internal.h
 *   commandPolicy:                   # optional (reconcilers/policy/command_policy.h)
 *     exemptNamespaces: [services]   # at most 256 namespaces whose jobs it does not check
 *
 * Unknown fields, duplicate keys, duplicate class names and duplicate limits are errors. */
int tj_config_parse(const char *yaml, size_t len, const char *origin, struct tj_config **ret,
                    char *err, size_t errlen);

/* Reads a config file's bytes (at most TJ_CONFIG_MAX_BYTES, a regular file) into a new
 * NUL-terminated buffer. -E2BIG for a longer file, -EINVAL for one that is not a regular
 * file, -errno if it cannot be read; err then says why, naming path. */
int tj_config_read_file(const char *path, char **ret, size_t *ret_len, char *err, size_t errlen);

/* Reads and parses a file; fails as tj_config_read_file and tj_config_parse do. */
int tj_config_load_file(const char *path, struct tj_config **ret, char *err, size_t errlen);
