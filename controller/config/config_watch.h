/* Watching the controller's config file (controller/config/config.h) and reloading it on change.
 * A ConfigMap mounted as a volume is updated by swapping a symlink (..data) in the file's
 * directory, so the directory is watched, not the file. */
#pragma once

#include <uv.h>

#include "controller/config/config.h"

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
