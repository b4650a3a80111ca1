/* The controller's config file (YAML, read with libfyaml): the GPU classes and the defaults
 * of the failure policy (reconcilers/settings.h). Shipped in deploy/ as a ConfigMap. */
#pragma once

#include <stddef.h>

#include <uv.h>

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
