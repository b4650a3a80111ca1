#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "cli/render_command.h"

/* Golden outputs: `render` of each example with the shipped runtimes must print exactly
 * tests/unit/data/golden/<name>.yaml. After an intended change, regenerate them with
 * TJ_GOLDEN_UPDATE=1 meson test -C build render_command, and review the diff. */

struct render_case {
	const char *name;
	const char *file;        /* relative to the source root */
	const char *runtime_dir; /* relative to the source root, or NULL: the runtime is in file */
	const char *golden;      /* relative to tests/unit/data/golden, or NULL: no output */
	int want_rc;
	const char *want_err;
};

static const struct render_case cases[] = {
	{ "job and runtime in one file", "tests/unit/data/render/inline-runtime.yaml", NULL,
	  "inline-runtime.yaml", 0, "" },
	{ "a reserved env name", "tests/unit/data/render/reserved-env.yaml", NULL, NULL, -EINVAL,
	  "render: bad-env: InvalidSpec: spec.trainer.env[0].name: WORLD_SIZE is set by the "
	  "controller (torchrun wiring); remove it from the TrainJob\n" },
	{ "a runtime that exists nowhere", "tests/unit/data/render/no-runtime.yaml",
	  "tests/unit/data/render", NULL, -ENOENT,
	  "render: lost: RuntimeNotFound: TrainingRuntime torch-nowhere not found in namespace "
	  "team-a; the job starts when it is created\n" },
	{ "a command that never exits", "tests/unit/data/render/never-exits.yaml", "crds/runtimes",
	  NULL, -EINVAL,
	  "render: keepalive: PolicyViolation: container node of step node: 'tail -f /dev/null' "
	  "never exits (it follows /dev/null or standard input for ever); a job must exit by "
	  "itself when its work is done, so it is refused before any pod starts\n" },
	{ "example vit-single-gpu", "examples/vit-single-gpu.yaml", "crds/runtimes",
	  "vit-single-gpu.yaml", 0, "" },
	{ "example gh200-4x4", "examples/gh200-4x4.yaml", "crds/runtimes", "gh200-4x4.yaml", 0,
	  "" },
	{ "example cephfs-results", "examples/cephfs-results.yaml", "crds/runtimes",
	  "cephfs-results.yaml", 0, "" },
	{ "example pod-template-overrides", "examples/pod-template-overrides.yaml", "crds/runtimes",
	  "pod-template-overrides.yaml", 0, "" },
	{ "example suspended", "examples/suspended.yaml", "crds/runtimes", "suspended.yaml", 0,
	  "render: vit-later is suspended; these are the objects it gets when resumed\n" },
};

/* The whole file, by the reader the commands use; NULL if it cannot be read. */
static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len;

	return tj_read_file(path, 1u << 20, 0, &buf, &len) == 0 ? buf : NULL;
}

static void render(const struct render_case *c, const char *root, const char *config,
                   char **ret_out, char **ret_err, int *ret_rc)
{
	struct tj_render_options *opts = calloc(1, sizeof(*opts));
	size_t out_len = 0, err_len = 0;
	FILE *out, *err;

	assert_non_null(opts);
	snprintf(opts->file, sizeof(opts->file), "%s/%s", root, c->file);
	if (c->runtime_dir)
		snprintf(opts->runtime_dir, sizeof(opts->runtime_dir), "%s/%s", root,
		         c->runtime_dir);
	if (config)
		snprintf(opts->config, sizeof(opts->config), "%s/%s", root, config);
	out = open_memstream(ret_out, &out_len);
	err = open_memstream(ret_err, &err_len);
	assert_non_null(out);
	assert_non_null(err);
	*ret_rc = tj_render_command(opts, out, err);
	fclose(out);
	fclose(err);
	free(opts);
}

static void test_render_table(void **state)
{
	const char *root = getenv("TJ_SOURCE_ROOT");
	size_t ran = 0;

	assert_non_null(root);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct render_case *c = &cases[i];
		char path[4096], *out = NULL, *err = NULL, *want = NULL;
		int rc;

		snprintf(path, sizeof(path), "%s/%s", root, c->file);
		if (access(path, R_OK) != 0) {
			print_message("# case: %s: skipped, %s is not in this tree\n", c->name,
			              c->file);
			continue;
		}
		print_message("# case: %s\n", c->name);
		ran++;
		render(c, root, NULL, &out, &err, &rc);
		assert_string_equal(err, c->want_err);
		assert_int_equal(rc, c->want_rc);
		if (!c->golden) {
			assert_string_equal(out, "");
		} else {
			snprintf(path, sizeof(path), "%s/tests/unit/data/golden/%s", root,
			         c->golden);
			if (getenv("TJ_GOLDEN_UPDATE")) {
				FILE *f = fopen(path, "w");

				assert_non_null(f);
				fputs(out, f);
				fclose(f);
			}
			want = slurp(path);
			assert_non_null(want);
			assert_string_equal(out, want);
			/* The shipped config file defines the same classes as the built-in ones. */
			free(out);
			free(err);
			render(c, root, "deploy/config/config.yaml", &out, &err, &rc);
			assert_int_equal(rc, c->want_rc);
			assert_string_equal(out, want);
		}
		free(want);
		free(out);
		free(err);
	}
	assert_true(ran >= 3);
}

/* render holds a job to the walltime limits of the config it is given, with the reason and
 * message the controller would fail it with; without that config the job renders. */
static void test_render_walltime(void **state)
{
	static const struct render_case c = { "a job past the config's maxWalltime",
		                              "tests/unit/data/render/long-walltime.yaml",
		                              "crds/runtimes",
		                              NULL,
		                              -EINVAL,
		                              "" };
	const char *root = getenv("TJ_SOURCE_ROOT");
	char *out = NULL, *err = NULL;
	int rc;

	assert_non_null(root);
	render(&c, root, "tests/unit/data/render/walltime-config.yaml", &out, &err, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_string_equal(out, "");
	assert_string_equal(err, "render: long: PolicyViolation: spec.activeDeadlineSeconds (86400 "
	                         "s) is longer than the maxWalltime of GPU class gh200, 2h (7200 "
	                         "s); ask for at most 7200 s\n");
	free(out);
	free(err);
	render(&c, root, NULL, &out, &err, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	assert_non_null(strstr(out, "kind: Pod"));
	free(out);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render_table),
		cmocka_unit_test(test_render_walltime),
	};
	return cmocka_run_group_tests_name("render_command", tests, NULL, NULL);
}
