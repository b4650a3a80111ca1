/* Reloading the config file on change, with a libuv fs event on the file's directory and a
 * timer that merges the events of one update. */
#include "controller/config/config_watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tj_config_watch {
	uv_fs_event_t event;
	uv_timer_t timer;
	int open_handles; /* handles not yet closed; the watch is freed at 0 */
	char *path;       /* owned */
	unsigned debounce_ms;
	struct tj_config *config; /* owned; the current config */
	char *seen;               /* owned; the content last read (parsed or not), NULL after a
	                           * read error, so that the same content is not reported twice */
	size_t seen_len;
	tj_config_reload_cb cb;
	void *userdata;
};

static void reload(uv_timer_t *timer)
{
	struct tj_config_watch *w = timer->data;
	char err[512];
	char *buf;
	size_t len;
	int r = tj_config_read_file(w->path, &buf, &len, err, sizeof(err));
	if (r < 0) {
		free(w->seen);
		w->seen = NULL;
		w->cb(w->config, r, err, w->userdata);
		return;
	}
	if (w->seen && w->seen_len == len && !memcmp(w->seen, buf, len)) {
		free(buf);
		return;
	}
	free(w->seen);
	w->seen = buf;
	w->seen_len = len;

	struct tj_config *config;
	r = tj_config_parse(buf, len, w->path, &config, err, sizeof(err));
	if (r < 0) {
		w->cb(w->config, r, err, w->userdata);
		return;
	}
	struct tj_config *old = w->config;
	w->config = config;
	w->cb(config, 0, NULL, w->userdata);
	tj_config_free(old);
}

static void on_dir_event(uv_fs_event_t *event, const char *filename, int events, int status)
{
	struct tj_config_watch *w = event->data;
	if (status < 0) {
		char err[512];
		snprintf(err, sizeof(err), "%s: watching the directory failed: %s", w->path,
		         uv_strerror(status));
		w->cb(w->config, status, err, w->userdata);
		return;
	}
	/* Any change in the directory may be the file's: a ConfigMap update renames the ..data
	 * symlink, an editor may write a temporary file and rename it. Reading the file again
	 * after the burst is cheaper than telling these apart. */
	uv_timer_start(&w->timer, reload, w->debounce_ms, 0);
}

static void watch_free(struct tj_config_watch *w)
{
	tj_config_free(w->config);
	free(w->seen);
	free(w->path);
	free(w);
}

static void on_close(uv_handle_t *handle)
{
	struct tj_config_watch *w = handle->data;
	if (--w->open_handles == 0)
		watch_free(w);
}

int tj_config_watch_start(uv_loop_t *loop, const char *path, unsigned debounce_ms,
                          tj_config_reload_cb cb, void *userdata, struct tj_config_watch **ret,
                          char *err, size_t errlen)
{
	struct tj_config_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->debounce_ms = debounce_ms;
	w->cb = cb;
	w->userdata = userdata;
	int r = -ENOMEM;
	w->path = strdup(path);
	if (!w->path)
		goto out_free;
	r = tj_config_read_file(path, &w->seen, &w->seen_len, err, errlen);
	if (r < 0)
		goto out_free;
	r = tj_config_parse(w->seen, w->seen_len, path, &w->config, err, errlen);
	if (r < 0)
		goto out_free;

	char *dir = strdup(path);
	if (!dir) {
		r = -ENOMEM;
		goto out_free;
	}
	char *slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';

	uv_timer_init(loop, &w->timer);
	w->timer.data = w;
	uv_fs_event_init(loop, &w->event);
	w->event.data = w;
	w->open_handles = 2;
	r = uv_fs_event_start(&w->event, on_dir_event, dir, 0);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot watch %s: %s", path, dir, uv_strerror(r));
		free(dir);
		uv_close((uv_handle_t *)&w->timer, on_close);
		uv_close((uv_handle_t *)&w->event, on_close);
		return r;
	}
	free(dir);
	*ret = w;
	return 0;
out_free:
	watch_free(w);
	return r;
}

const struct tj_config *tj_config_watch_config(const struct tj_config_watch *watch)
{
	return watch ? watch->config : NULL;
}

void tj_config_watch_stop(struct tj_config_watch *watch)
{
	if (!watch)
		return;
	uv_close((uv_handle_t *)&watch->timer, on_close);
	uv_close((uv_handle_t *)&watch->event, on_close);
}
