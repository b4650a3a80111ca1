/* Reloading the controller's config file with a real libuv loop. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config_watch.h"
#include "time_limit.h"

/* A valid class. */
#define GH200                                                                                      \
	"  - name: gh200\n"                                                                        \
	"    resource: nvidia.com/gpu\n"

/* Reloading: a temporary directory laid out as the kubelet lays out a ConfigMap volume
 * (config.yaml -> ..data/config.yaml, ..data -> ..<version>), updated the way the kubelet
 * updates it: a new version directory, then an atomic rename of a new ..data symlink. */
struct reload_state {
	char dir[64];
	char path[128];
	int version;
	int calls;
	int last_error;
	char last_message[512];
	const struct tj_config *last_config;
	uv_timer_t guard;
};

static void write_version(struct reload_state *s, const char *yaml)
{
	char vdir[128], file[192], link_tmp[128], link[128], target[32];
	s->version++;
	snprintf(target, sizeof(target), "..v%d", s->version);
	snprintf(vdir, sizeof(vdir), "%s/%s", s->dir, target);
	assert_int_equal(mkdir(vdir, 0700), 0);
	snprintf(file, sizeof(file), "%s/config.yaml", vdir);
	FILE *f = fopen(file, "w");
	assert_non_null(f);
	assert_int_equal(fputs(yaml, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	snprintf(link_tmp, sizeof(link_tmp), "%s/..data_tmp", s->dir);
	snprintf(link, sizeof(link), "%s/..data", s->dir);
	assert_int_equal(symlink(target, link_tmp), 0);
	assert_int_equal(rename(link_tmp, link), 0);
}

static void on_reload(const struct tj_config *config, int error, const char *message,
                      void *userdata)
{
	struct reload_state *s = userdata;
	s->calls++;
	s->last_error = error;
	s->last_config = config;
	snprintf(s->last_message, sizeof(s->last_message), "%s", message ? message : "");
}

static void on_guard(uv_timer_t *timer)
{
	/* Only wakes the loop up, so that run_until can give up. */
}

/* Runs the loop until the callback has been called want times, or 3 s (scaled) have passed. */
static void run_until(uv_loop_t *loop, struct reload_state *s, int want)
{
	uint64_t deadline = uv_now(loop) + time_limit_ms(3000);
	while (s->calls < want && uv_now(loop) < deadline) {
		uv_timer_start(&s->guard, on_guard, 50, 0);
		uv_run(loop, UV_RUN_ONCE);
	}
	assert_int_equal(s->calls, want);
}

static void rm_tree(const char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_reload(void **state)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	struct reload_state s = { 0 };
	snprintf(s.dir, sizeof(s.dir), "/tmp/tj-config-test-XXXXXX");
	assert_non_null(mkdtemp(s.dir));
	snprintf(s.path, sizeof(s.path), "%s/config.yaml", s.dir);
	uv_timer_init(&loop, &s.guard);

	write_version(&s, "gpuClasses:\n" GH200);
	assert_int_equal(symlink("..data/config.yaml", s.path), 0);

	struct tj_config_watch *w = NULL;
	char err[512] = "";
	int r = tj_config_watch_start(&loop, s.path, 10, on_reload, &s, &w, err, sizeof(err));
	if (r != 0)
		fail_msg("%d: %s", r, err);
	const struct tj_config *first = tj_config_watch_config(w);
	assert_int_equal(first->n_classes, 1);
	assert_string_equal(first->classes[0].name, "gh200");

	/* A new version: reported, and current. */
	write_version(&s, "gpuClasses:\n" GH200 "  - name: h100\n    resource: nvidia.com/gpu\n");
	run_until(&loop, &s, 1);
	assert_int_equal(s.last_error, 0);
	assert_string_equal(s.last_message, "");
	assert_ptr_equal(s.last_config, tj_config_watch_config(w));
	assert_int_equal(s.last_config->n_classes, 2);
	assert_string_equal(s.last_config->classes[1].name, "h100");
	const struct tj_config *second = s.last_config;

	/* A broken version: reported with its line, and the previous config stays. */
	write_version(&s, "gpuClasses:\n  - name: a100\n");
	run_until(&loop, &s, 2);
	assert_int_equal(s.last_error, -EINVAL);
	char want[256];
	snprintf(want, sizeof(want), "%s:2: gpuClasses[0]: missing required field \"resource\"",
	         s.path);
	assert_string_equal(s.last_message, want);
	assert_ptr_equal(s.last_config, second);
	assert_ptr_equal(tj_config_watch_config(w), second);

	/* Unrelated changes in the directory are not reported again. */
	char other[160];
	snprintf(other, sizeof(other), "%s/unrelated", s.dir);
	FILE *f = fopen(other, "w");
	assert_non_null(f);
	fclose(f);
	uint64_t until = uv_now(&loop) + 100;
	while (uv_now(&loop) < until) {
		uv_timer_start(&s.guard, on_guard, 20, 0);
		uv_run(&loop, UV_RUN_ONCE);
	}
	assert_int_equal(s.calls, 2);

	/* Repaired: reported as a success. */
	write_version(&s, "gpuClasses: []\n");
	run_until(&loop, &s, 3);
	assert_int_equal(s.last_error, 0);
	assert_int_equal(tj_config_watch_config(w)->n_classes, 0);

	/* The file gone: an error naming it, the config stays. */
	assert_int_equal(unlink(s.path), 0);
	run_until(&loop, &s, 4);
	assert_int_equal(s.last_error, -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", s.path);
	assert_string_equal(s.last_message, want);
	assert_int_equal(tj_config_watch_config(w)->n_classes, 0);

	/* A FIFO in its place: refused at once, never read (no writer would ever come, and the
	 * loop would wait for it), and the config stays. */
	assert_int_equal(mkfifo(s.path, 0600), 0);
	alarm(10);
	run_until(&loop, &s, 5);
	alarm(0);
	assert_int_equal(s.last_error, -EINVAL);
	snprintf(want, sizeof(want), "%s: not a regular file", s.path);
	assert_string_equal(s.last_message, want);
	assert_int_equal(tj_config_watch_config(w)->n_classes, 0);

	tj_config_watch_stop(w);
	uv_close((uv_handle_t *)&s.guard, NULL);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	rm_tree(s.dir);
}

/* A broken file at start is rejected: no watch is made. */
static void test_watch_start_broken(void **state)
{
	uv_loop_t loop;
	assert_int_equal(uv_loop_init(&loop), 0);
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/tj-config-test-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/config.yaml", dir);

	struct tj_config_watch *w = (struct tj_config_watch *)0x1;
	char err[512] = "";
	assert_int_equal(
	        tj_config_watch_start(&loop, path, 10, on_reload, NULL, &w, err, sizeof(err)),
	        -ENOENT);
	assert_ptr_equal(w, (struct tj_config_watch *)0x1);

	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("gpuClasses: {}\n", f);
	fclose(f);
	assert_int_equal(
	        tj_config_watch_start(&loop, path, 10, on_reload, NULL, &w, err, sizeof(err)),
	        -EINVAL);
	char want[256];
	snprintf(want, sizeof(want), "%s:1: gpuClasses: must be a sequence of GPU classes", path);
	assert_string_equal(err, want);
	assert_ptr_equal(w, (struct tj_config_watch *)0x1);

	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(uv_loop_close(&loop), 0);
	rm_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_watch_start_broken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
