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
#include "cli/sbatch_command.h"
#include "cli/yaml.h"
#include "reconcilers/json.h"

/* Golden outputs: `kubectl sbatch --dry-run -n team-a` of each batch script in
 * tests/unit/data/sbatch must print exactly <name>.yaml there, or fail with exactly the
 * message given. After an intended change, regenerate them with
 * TJ_GOLDEN_UPDATE=1 meson test -C build sbatch_command, and review the diff. */

#define DATA "tests/unit/data/sbatch/"
/* The messages name the script by the path given; the test gives root/DATA/name. */
#define TJ_SOURCE_ROOT_MARK "@ROOT@/"

struct sbatch_case {
	const char *name;
	const char *script;  /* in DATA */
	const char *args[6]; /* before the script */
	const char *golden;  /* in DATA, or NULL: nothing on stdout */
	int want_rc;
	const char *want_err;
	size_t want_jobs;
};

static const struct sbatch_case cases[] = {
	{ "CPUs and memory without GPUs get none",
	  "cpu-only.sh",
	  { NULL },
	  "cpu-only.yaml",
	  0,
	  "",
	  1 },
	{ "single GPU",
	  "single-gpu.sh",
	  { NULL },
	  "single-gpu.yaml",
	  0,
	  "kubectl sbatch: note: --output/--error: no file is written; each node's output is in "
	  "kubectl logs of its pod\n",
	  1 },
	{ "4 nodes x 4 GPUs with srun torchrun",
	  "gh200-4x4.sh",
	  { NULL },
	  "gh200-4x4.yaml",
	  0,
	  "kubectl sbatch: note: --output/--error: no file is written; each node's output is in "
	  "kubectl logs of its pod\n"
	  "kubectl sbatch: note: --signal=USR1@300: no signal is sent; the pods are told of the "
	  "deadline 300 s before it (docs/slurm.md), and get SIGTERM at it\n"
	  "kubectl sbatch: note: --exclusive: each node's pod holds the 4 GPUs asked for; "
	  "without a GPU count it holds the runtime's whole node\n",
	  1 },
	{ "a GPU type without a partition",
	  "gres-gh200.sh",
	  { NULL },
	  "gres-gh200.yaml",
	  0,
	  "",
	  1 },
	{ "an array of four", "array.sh", { NULL }, "array.yaml", 0, "", 4 },
	{ "pyxis options",
	  "pyxis.sh",
	  { NULL },
	  "pyxis.yaml",
	  0,
	  "kubectl sbatch: note: --export=ALL: the pods start with the image's environment, not "
	  "this shell's; list the variables to pass (VAR or VAR=value)\n",
	  1 },
	{ "-G that divides, on a mapped partition",
	  "gpus-divide.sh",
	  { "--partition-map", "h100=torch-h100", "--export=NONE,RUN_ID" },
	  "gpus-divide.yaml",
	  0,
	  "",
	  1 },
	{ "the command line wins",
	  "single-gpu.sh",
	  { "-J", "bert-long", "-t", "2-00:00:00", "--image", "nvcr.io#nvidia/pytorch:24.05-py3" },
	  "command-line.yaml",
	  0,
	  "kubectl sbatch: note: --output/--error: no file is written; each node's output is in "
	  "kubectl logs of its pod\n",
	  1 },
	{ "an unknown directive",
	  "unknown-directive.sh",
	  { NULL },
	  NULL,
	  1,
	  "kubectl sbatch: " TJ_SOURCE_ROOT_MARK DATA
	  "unknown-directive.sh: line 4: #SBATCH --reservation=maint: not supported by "
	  "kubectl sbatch (see kubectl sbatch --help)\n",
	  0 },
	{ "--gpus that does not divide",
	  "gpus-not-divide.sh",
	  { NULL },
	  NULL,
	  1,
	  "kubectl sbatch: " TJ_SOURCE_ROOT_MARK DATA
	  "gpus-not-divide.sh: line 4: --gpus=6: 6 GPUs do not divide evenly over 4 nodes; give "
	  "--gpus-per-node\n",
	  0 },
	{ "an array with a % limit",
	  "array-limit.sh",
	  { NULL },
	  NULL,
	  1,
	  "kubectl sbatch: " TJ_SOURCE_ROOT_MARK DATA
	  "array-limit.sh: line 2: #SBATCH --array=0-99%10: a % limit on the tasks that run at "
	  "once is not supported: the queue starts every task when it fits; drop the %N\n",
	  0 },
	{ "a Python script",
	  "python.sh",
	  { NULL },
	  NULL,
	  1,
	  "kubectl sbatch: " TJ_SOURCE_ROOT_MARK DATA
	  "python.sh: line 1: #!/usr/bin/env python3: the interpreter is not a shell; kubectl "
	  "sbatch runs shell scripts (sh, bash, ...)\n",
	  0 },
	{ "a type that is not the partition's",
	  "gres-gh200.sh",
	  { "-p", "h100" },
	  NULL,
	  1,
	  "kubectl sbatch: " TJ_SOURCE_ROOT_MARK DATA
	  "gres-gh200.sh: line 4: --gres=gpu:gh200:4 asks for gh200 GPUs, but partition h100 "
	  "runs on h100: drop the type or the partition\n",
	  0 },
	{ "a bad command-line directive",
	  "single-gpu.sh",
	  { "--time=soon" },
	  NULL,
	  2,
	  "kubectl sbatch: --time=soon: a time limit is M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or "
	  "UNLIMITED\n",
	  0 },
};

static const char *fake_env(const char *name)
{
	return strcmp(name, "RUN_ID") == 0 ? "run-17" : NULL;
}

/* The whole file, by the reader the commands use; NULL if it cannot be read. */
static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len;

	return tj_read_file(path, 1u << 20, 0, &buf, &len) == 0 ? buf : NULL;
}

static int run(const char *root, const char *script, const char *const *args, char **ret_out,
               char **ret_err)
{
	static const struct tj_sbatch_env env = { .lookup_env = fake_env };
	char path[4096], *argv[12] = { "kubectl-sbatch", "--dry-run", "-n", "team-a" };
	size_t out_len = 0, err_len = 0;
	int argc = 4, rc;
	FILE *out = open_memstream(ret_out, &out_len);
	FILE *err = open_memstream(ret_err, &err_len);

	assert_non_null(out);
	assert_non_null(err);
	for (size_t i = 0; i < 6 && args[i]; i++)
		argv[argc++] = (char *)args[i];
	snprintf(path, sizeof(path), "%s/%s%s", root, DATA, script);
	argv[argc++] = path;
	rc = tj_sbatch_main(argc, argv, &env, out, err);
	fclose(out);
	fclose(err);
	return rc;
}

/* The message with the marker replaced by the source root. */
static char *expected_err(const char *want, const char *root)
{
	const char *mark = strstr(want, TJ_SOURCE_ROOT_MARK);
	char *buf = NULL;

	if (!mark)
		return strdup(want);
	assert_true(asprintf(&buf, "%.*s%s/%s", (int)(mark - want), want, root,
	                     mark + strlen(TJ_SOURCE_ROOT_MARK)) > 0);
	return buf;
}

/* What the controller makes of the TrainJobs: `render` of the printed YAML with the shipped
 * runtimes must plan their pods without a problem. */
static void renders(const char *root, const char *yaml)
{
	struct tj_render_options *opts = calloc(1, sizeof(*opts));
	char tmp[] = "/tmp/sbatch-golden-XXXXXX", *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	int fd = mkstemp(tmp);
	FILE *o, *e;

	assert_non_null(opts);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, strlen(yaml)), (ssize_t)strlen(yaml));
	close(fd);
	snprintf(opts->file, sizeof(opts->file), "%s", tmp);
	snprintf(opts->runtime_dir, sizeof(opts->runtime_dir), "%s/crds/runtimes", root);
	o = open_memstream(&out, &out_len);
	e = open_memstream(&err, &err_len);
	assert_int_equal(tj_render_command(opts, o, e), 0);
	fclose(o);
	fclose(e);
	assert_string_equal(err, "");
	assert_non_null(strstr(out, "kind: Pod"));
	unlink(tmp);
	free(out);
	free(err);
	free(opts);
}

/* The printed YAML reads back, one document per job, and the script is in the command
 * intact, after the prelude. */
static void reads_back(const char *yaml, size_t want_jobs, const char *script_path)
{
	char *script = slurp(script_path), msg[256];
	cJSON **docs = NULL;
	size_t n = 0;

	assert_non_null(script);
	assert_int_equal(tj_yaml_parse(yaml, strlen(yaml), "out", &docs, &n, msg, sizeof(msg)), 0);
	assert_int_equal(n, want_jobs);
	for (size_t i = 0; i < n; i++) {
		const cJSON *command = tj_json_path(docs[i], "spec.trainer.command");
		const cJSON *last = cJSON_GetArrayItem(command, cJSON_GetArraySize(command) - 1);
		size_t len = strlen(script);

		assert_true(cJSON_IsString(last));
		assert_true(strlen(last->valuestring) > len);
		assert_string_equal(last->valuestring + strlen(last->valuestring) - len, script);
	}
	tj_yaml_docs_free(docs, n);
	free(script);
}

static void test_golden(void **state)
{
	const char *root = getenv("TJ_SOURCE_ROOT");

	assert_non_null(root);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sbatch_case *c = &cases[i];
		char path[4096], *out = NULL, *err = NULL, *want, *want_err;
		int rc;

		print_message("# case: %s\n", c->name);
		rc = run(root, c->script, c->args, &out, &err);
		want_err = expected_err(c->want_err, root);
		assert_string_equal(err, want_err);
		assert_int_equal(rc, c->want_rc);
		free(want_err);
		if (!c->golden) {
			assert_string_equal(out, "");
		} else {
			snprintf(path, sizeof(path), "%s/%s%s", root, DATA, c->golden);
			if (getenv("TJ_GOLDEN_UPDATE")) {
				FILE *f = fopen(path, "w");

				assert_non_null(f);
				fputs(out, f);
				fclose(f);
			}
			want = slurp(path);
			assert_non_null(want);
			assert_string_equal(out, want);
			free(want);
			snprintf(path, sizeof(path), "%s/%s%s", root, DATA, c->script);
			reads_back(out, c->want_jobs, path);
			renders(root, out);
		}
		free(out);
		free(err);
	}
}

/* Every time format, given on the command line over the script's own -t 5. */
static void test_time_formats(void **state)
{
	static const struct {
		const char *time;
		const char *line; /* in the output, or NULL: no deadline at all */
	} formats[] = {
		{ "--time=45", "  activeDeadlineSeconds: 2700\n" },
		{ "--time=10:30", "  activeDeadlineSeconds: 630\n" },
		{ "--time=00:00:30", "  activeDeadlineSeconds: 30\n" },
		{ "--time=2-6", "  activeDeadlineSeconds: 194400\n" },
		{ "--time=2-6:15", "  activeDeadlineSeconds: 195300\n" },
		{ "--time=2-06:15:09", "  activeDeadlineSeconds: 195309\n" },
		{ "--time=UNLIMITED", NULL },
		{ "-t5", "  activeDeadlineSeconds: 300\n" },
	};
	const char *root = getenv("TJ_SOURCE_ROOT");

	assert_non_null(root);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		const char *args[2] = { formats[i].time, NULL };
		char *out = NULL, *err = NULL;

		print_message("# %s\n", formats[i].time);
		assert_int_equal(run(root, "time-formats.sh", args, &out, &err), 0);
		if (formats[i].line) {
			assert_non_null(strstr(out, formats[i].line));
			assert_string_equal(err, "");
		} else {
			assert_null(strstr(out, "activeDeadlineSeconds"));
			assert_string_equal(err, "kubectl sbatch: note: --time=UNLIMITED: no "
			                         "activeDeadlineSeconds; the cluster's walltime "
			                         "policy for the partition decides\n");
		}
		free(out);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden),
		cmocka_unit_test(test_time_formats),
	};
	return cmocka_run_group_tests_name("sbatch_command", tests, NULL, NULL);
}
