#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/sbatch_directives.h"

static void test_time(void **state)
{
	static const struct {
		const char *text;
		int rc;
		int64_t seconds;
	} cases[] = {
		{ "30", 0, 1800 },          /* M */
		{ "90", 0, 5400 },          /* M past an hour */
		{ "30:15", 0, 1815 },       /* M:S */
		{ "00:00:30", 0, 30 },      /* H:M:S */
		{ "02:00:00", 0, 7200 },    /* H:M:S */
		{ "48:00:00", 0, 172800 },  /* hours past a day */
		{ "1-0", 0, 86400 },        /* D-H */
		{ "2-12", 0, 216000 },      /* D-H */
		{ "1-2:30", 0, 95400 },     /* D-H:M */
		{ "1-02:30:05", 0, 95405 }, /* D-H:M:S */
		{ "UNLIMITED", 0, TJ_SBATCH_UNLIMITED },
		{ "infinite", 0, TJ_SBATCH_UNLIMITED },
		{ "0", 0, TJ_SBATCH_UNLIMITED }, /* Slurm: no limit */
		{ "", -EINVAL, 0 },
		{ "1:2:3:4", -EINVAL, 0 },
		{ "10:60", -EINVAL, 0 },   /* seconds past 59 */
		{ "1:60:00", -EINVAL, 0 }, /* minutes past 59 */
		{ "1-24", -EINVAL, 0 },    /* hours past 23 after days */
		{ "-5", -EINVAL, 0 },
		{ "1h", -EINVAL, 0 },
		{ "1-", -EINVAL, 0 },
		{ "1::", -EINVAL, 0 },
		{ "99999999999999", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t s = -42;

		print_message("time: %s\n", cases[i].text);
		assert_int_equal(tj_sbatch_parse_time(cases[i].text, &s), cases[i].rc);
		assert_int_equal(s, cases[i].rc == 0 ? cases[i].seconds : -42);
	}
}

static void test_memory(void **state)
{
	static const struct {
		const char *text;
		int rc;
		int64_t mib;
	} cases[] = {
		{ "4096", 0, 4096 },    { "500M", 0, 500 },     { "64G", 0, 65536 },
		{ "64g", 0, 65536 },    { "1T", 0, 1048576 },   { "1536K", 0, 2 },
		{ "0", 0, 0 },          { "", -EINVAL, 0 },     { "G", -EINVAL, 0 },
		{ "12GB", -EINVAL, 0 }, { "1.5G", -EINVAL, 0 }, { "3P", -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t m = -42;

		print_message("memory: %s\n", cases[i].text);
		assert_int_equal(tj_sbatch_parse_memory(cases[i].text, &m), cases[i].rc);
		assert_int_equal(m, cases[i].rc == 0 ? cases[i].mib : -42);
	}
}

/* One option, as the command line gives it; the result is checked by a predicate on the
 * options, or the exact message. */
static bool held(const struct tj_sbatch_opts *o)
{
	return o->hold;
}

static bool dependency(const struct tj_sbatch_opts *o)
{
	return strcmp(o->dependency, "afterok:prep:eval,singleton") == 0;
}

struct option_case {
	const char *arg, *next;
	int rc;
	const char *err;
	bool (*check)(const struct tj_sbatch_opts *o);
};

static bool nodes4(const struct tj_sbatch_opts *o)
{
	return o->nodes == 4 && o->where_nodes == TJ_SBATCH_COMMAND_LINE;
}

static bool gres_typed(const struct tj_sbatch_opts *o)
{
	return o->gpus == 4 && !o->gpus_total && strcmp(o->gpu_type, "gh200") == 0 &&
	       strcmp(o->gpu_option, "--gres=gpu:GH200:4") == 0;
}

static bool gres_one(const struct tj_sbatch_opts *o)
{
	return o->gpus == 1 && !o->gpus_total && o->gpu_type[0] == '\0';
}

static bool gres_type_only(const struct tj_sbatch_opts *o)
{
	return o->gpus == 1 && strcmp(o->gpu_type, "h100") == 0;
}

static bool gpus_total(const struct tj_sbatch_opts *o)
{
	return o->gpus == 8 && o->gpus_total && strcmp(o->gpu_option, "-G 8") == 0;
}

static bool mem_per_gpu(const struct tj_sbatch_opts *o)
{
	return o->mem_mib == 81920 && o->mem_per == TJ_SBATCH_MEM_PER_GPU;
}

static bool signal_usr1(const struct tj_sbatch_opts *o)
{
	return o->signal_seconds == 120 && strcmp(o->signal, "USR1") == 0;
}

static bool signal_default(const struct tj_sbatch_opts *o)
{
	return o->signal_seconds == 60 && strcmp(o->signal, "SIGTERM") == 0;
}

static bool exports(const struct tj_sbatch_opts *o)
{
	return o->export_none && o->n_exports == 2 &&
	       strcmp(o->exports[0].name, "WANDB_MODE") == 0 &&
	       strcmp(o->exports[0].value, "offline") == 0 && !o->exports[0].from_env &&
	       strcmp(o->exports[1].name, "HF_TOKEN") == 0 && o->exports[1].from_env;
}

static bool image_pyxis(const struct tj_sbatch_opts *o)
{
	return strcmp(o->image, "nvcr.io/nvidia/pytorch:24.05-py3") == 0;
}

static bool mounts(const struct tj_sbatch_opts *o)
{
	return o->n_mounts == 2 && strcmp(o->mounts[0].claim, "datasets") == 0 &&
	       strcmp(o->mounts[0].sub_path, "imagenet") == 0 &&
	       strcmp(o->mounts[0].path, "/data") == 0 && o->mounts[0].read_only &&
	       strcmp(o->mounts[1].claim, "results") == 0 && o->mounts[1].sub_path[0] == '\0' &&
	       !o->mounts[1].read_only;
}

static bool array_mixed(const struct tj_sbatch_opts *o)
{
	static const int want[] = { 0, 2, 4, 5, 6, 10 };

	return o->n_array == 6 && memcmp(o->array, want, sizeof(want)) == 0;
}

static bool exclusive(const struct tj_sbatch_opts *o)
{
	return o->exclusive;
}

static const struct option_case option_cases[] = {
	{ "-N", "4", 2, NULL, nodes4 },
	{ "-N4", NULL, 1, NULL, nodes4 },
	{ "--nodes=4-4", NULL, 1, NULL, nodes4 },
	{ "--nodes=2-4", NULL, -EINVAL,
	  "--nodes=2-4: a range of node counts is not supported: give one count", NULL },
	{ "--nodes=0", NULL, -EINVAL, "--nodes=0: the node count must be 1 to 4096", NULL },
	{ "--gres=gpu:GH200:4", NULL, 1, NULL, gres_typed },
	{ "--gres=gpu", NULL, 1, NULL, gres_one },
	{ "--gres=gpu:h100", NULL, 1, NULL, gres_type_only },
	{ "--gres=nvme:1", NULL, -EINVAL,
	  "--gres=nvme:1: only the generic resource gpu is supported", NULL },
	{ "--gres=gpu:4,nvme:1", NULL, -EINVAL,
	  "--gres=gpu:4,nvme:1: only one generic resource, gpu, is supported", NULL },
	{ "-G", "8", 2, NULL, gpus_total },
	{ "--gpus-per-node=65", NULL, -EINVAL, "--gpus-per-node=65: the GPU count must be 0 to 64",
	  NULL },
	{ "--mem-per-gpu=80G", NULL, 1, NULL, mem_per_gpu },
	{ "--mem=lots", NULL, -EINVAL,
	  "--mem=lots: a size is a number with an optional unit K, M, G or T (megabytes without "
	  "one)",
	  NULL },
	{ "-t", "1:00:00:00", -EINVAL,
	  "-t 1:00:00:00: a time limit is M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED", NULL },
	{ "--signal=B:USR1@120", NULL, 1, NULL, signal_usr1 },
	{ "--signal=SIGTERM", NULL, 1, NULL, signal_default },
	{ "--signal=R:USR1@60", NULL, -EINVAL,
	  "--signal=R:USR1@60: reservations (R:) are not supported", NULL },
	{ "--signal=FOO@60", NULL, -EINVAL, "--signal=FOO@60: FOO is not a signal", NULL },
	{ "--export=NONE,WANDB_MODE=offline,HF_TOKEN", NULL, 1, NULL, exports },
	{ "--export=1X=2", NULL, -EINVAL, "--export=1X=2: '1X=2' is not VAR or VAR=value", NULL },
	{ "--container-image=nvcr.io#nvidia/pytorch:24.05-py3", NULL, 1, NULL, image_pyxis },
	{ "--container-image=docker://nvcr.io#nvidia/pytorch:24.05-py3", NULL, 1, NULL,
	  image_pyxis },
	{ "--image", "nvcr.io/nvidia/pytorch:24.05-py3", 2, NULL, image_pyxis },
	{ "--container-image=/scratch/pytorch.sqsh", NULL, -EINVAL,
	  "--container-image=/scratch/pytorch.sqsh: a squashfs file is not an image a pod can "
	  "run: push the image to a registry and name it",
	  NULL },
	{ "--container-mounts=datasets/imagenet:/data:ro,results:/results", NULL, 1, NULL, mounts },
	{ "--container-mounts=/lustre/data:/data", NULL, -EINVAL,
	  "--container-mounts=/lustre/data:/data: /lustre/data is a path on a host; a pod mounts "
	  "volumes: name a PersistentVolumeClaim (CLAIM[/SUBDIR]:PATH)",
	  NULL },
	{ "--container-mounts=data:/d:z", NULL, -EINVAL,
	  "--container-mounts=data:/d:z: the mount flag 'z' is not ro or rw", NULL },
	{ "--array=0-4:2,5,6,10,4", NULL, 1, NULL, array_mixed },
	{ "--array=0-15%4", NULL, -EINVAL,
	  "--array=0-15%4: a % limit on the tasks that run at once is not supported: the queue "
	  "starts every task when it fits; drop the %N",
	  NULL },
	{ "--array=0-999", NULL, -EINVAL, "--array=0-999: more than 256 tasks", NULL },
	{ "--array=5-3", NULL, -EINVAL, "--array=5-3: indexes are N, A-B with A <= B, or A-B:STEP",
	  NULL },
	{ "--exclusive", NULL, 1, NULL, exclusive },
	{ "--exclusive=user", NULL, -EINVAL,
	  "--exclusive=user: only whole nodes (--exclusive without a value) are supported", NULL },
	{ "-C", "a100&ib", -EINVAL,
	  "-C a100&ib: one node feature, the GPU class, not an expression", NULL },
	{ "-D", "relative/dir", -EINVAL,
	  "-D relative/dir: the working directory must be an absolute path in the container",
	  NULL },
	{ "-p", "gh200,h100", -EINVAL, "-p gh200,h100: one partition, not a list", NULL },
	{ "--ntasks=16", NULL, -EINVAL,
	  "--ntasks=16: a total task count is not supported: give -N and --ntasks-per-node", NULL },
	{ "--time", NULL, -EINVAL, "--time: needs a value", NULL },
	{ "--dependency=afterok:prep:eval,singleton", NULL, 1, NULL, dependency },
	{ "-H", NULL, 1, NULL, held },
	{ "--hold=yes", NULL, -EINVAL, "--hold=yes: takes no value", NULL },
	{ "-d", "afterok", -EINVAL,
	  "-d afterok: character 8: afterok needs a TrainJob name (afterok:NAME)", NULL },
	{ "--nodes-extra=1", NULL, 0, NULL, NULL },
};

static void test_options(void **state)
{
	for (size_t i = 0; i < sizeof(option_cases) / sizeof(option_cases[0]); i++) {
		const struct option_case *c = &option_cases[i];
		struct tj_sbatch_opts *o = calloc(1, sizeof(*o));
		struct tj_sbatch_notes notes = { .n = 0 };
		char err[512] = "";
		int rc;

		assert_non_null(o);
		tj_sbatch_opts_init(o);
		print_message("option: %s %s\n", c->arg, c->next ? c->next : "");
		rc = tj_sbatch_parse_option(o, &notes, c->arg, c->next, TJ_SBATCH_COMMAND_LINE, err,
		                            sizeof(err));
		assert_int_equal(rc, c->rc);
		if (c->err)
			assert_string_equal(err, c->err);
		if (c->check)
			assert_true(c->check(o));
		free(o);
	}
}

struct script_case {
	const char *name;
	const char *script;
	int rc;
	const char *err;
	const char *notes; /* every note, each ending in '\n' */
};

static const struct script_case script_cases[] = {
	{ "several options, quotes and a comment on one line",
	  "#!/bin/bash\n#SBATCH -N 2 --job-name \"my job\" # two nodes\n#SBATCH -t 10\nhostname\n",
	  0, "", "" },
	{ "commented-out directives stay comments", "#!/bin/bash\n##SBATCH --bogus\n# SBATCH -x\n",
	  0, "", "" },
	{ "directives after the first command are ignored, with a note",
	  "#!/bin/bash\n#SBATCH -N 2\necho hi\n#SBATCH --bogus\n", 0, "",
	  "line 4: #SBATCH after the first command is ignored, as sbatch ignores it\n" },
	{ "an unknown directive names its line",
	  "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --reservation=maint\n", -EINVAL,
	  "line 3: #SBATCH --reservation=maint: not supported by kubectl sbatch (see "
	  "kubectl sbatch --help)",
	  "" },
	{ "-n in a script is --ntasks", "#!/bin/bash\n#SBATCH -n 8\n", -EINVAL,
	  "line 2: #SBATCH -n 8: a total task count is not supported: give -N and "
	  "--ntasks-per-node",
	  "" },
	{ "a word that is not an option", "#SBATCH nodes=4\n", -EINVAL,
	  "line 1: #SBATCH nodes=4: not an option", "" },
	{ "an open quote", "#SBATCH -J \"unterminated\n", -EINVAL, "line 1: a quote is not closed",
	  "" },
	{ "--image is the command line's, not a directive", "#SBATCH --image=x\n", -EINVAL,
	  "line 1: #SBATCH --image=x: not supported by kubectl sbatch (see kubectl sbatch --help)",
	  "" },
	{ "the accepted directives leave notes",
	  "#!/bin/bash\r\n#SBATCH -o out.txt\r\n#SBATCH -e err.txt\r\n#SBATCH --mail-type=END\r\n"
	  "#SBATCH --mail-user=a@b.c\r\n#SBATCH -A proj\r\n#SBATCH --qos=high\r\n",
	  0, "",
	  "--output/--error: no file is written; each node's output is in kubectl logs of its "
	  "pod\n"
	  "--mail-*: no mail is sent; kubectl get trainjobs and kubectl describe show the job's "
	  "state and events\n"
	  "--account: the namespace is the account here; the job goes to the namespace (-n)\n" },
	{ "--qos takes a tier's name", "#SBATCH --qos=High\n", -EINVAL,
	  "line 1: #SBATCH --qos=High: High is not a QOS tier's name (lower case letters, digits "
	  "and -)",
	  "" },
};

static void test_scripts(void **state)
{
	for (size_t i = 0; i < sizeof(script_cases) / sizeof(script_cases[0]); i++) {
		const struct script_case *c = &script_cases[i];
		struct tj_sbatch_opts *o = calloc(1, sizeof(*o));
		struct tj_sbatch_notes notes = { .n = 0 };
		char err[512] = "", all[2048] = "";
		int rc;

		assert_non_null(o);
		tj_sbatch_opts_init(o);
		print_message("script: %s\n", c->name);
		rc = tj_sbatch_parse_script(c->script, strlen(c->script), o, &notes, err,
		                            sizeof(err));
		assert_int_equal(rc, c->rc);
		assert_string_equal(err, c->err);
		for (size_t n = 0; n < notes.n; n++) {
			strcat(all, notes.text[n]);
			strcat(all, "\n");
		}
		assert_string_equal(all, c->notes);
		free(o);
	}
}

/* A later option replaces an earlier one, and the options of one resource replace each
 * other: the command line, parsed after the script, wins. */
static void test_command_line_wins(void **state)
{
	static const char script[] = "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gres=gpu:4\n"
	                             "#SBATCH --mem-per-gpu=10G\n#SBATCH -t 10\n";
	struct tj_sbatch_opts *o = calloc(1, sizeof(*o));
	struct tj_sbatch_notes notes = { .n = 0 };
	char err[256];

	assert_non_null(o);
	tj_sbatch_opts_init(o);
	assert_int_equal(
	        tj_sbatch_parse_script(script, strlen(script), o, &notes, err, sizeof(err)), 0);
	assert_int_equal(o->where_nodes, 2);
	assert_int_equal(o->where_gpus, 3);
	assert_int_equal(tj_sbatch_parse_option(o, &notes, "-N", "8", TJ_SBATCH_COMMAND_LINE, err,
	                                        sizeof(err)),
	                 2);
	assert_int_equal(tj_sbatch_parse_option(o, &notes, "-G16", NULL, TJ_SBATCH_COMMAND_LINE,
	                                        err, sizeof(err)),
	                 1);
	assert_int_equal(tj_sbatch_parse_option(o, &notes, "--mem=100G", NULL,
	                                        TJ_SBATCH_COMMAND_LINE, err, sizeof(err)),
	                 1);
	assert_int_equal(o->nodes, 8);
	assert_int_equal(o->where_nodes, TJ_SBATCH_COMMAND_LINE);
	assert_int_equal(o->gpus, 16);
	assert_true(o->gpus_total);
	assert_int_equal(o->mem_mib, 102400);
	assert_int_equal(o->mem_per, TJ_SBATCH_MEM_NODE);
	assert_int_equal(o->time_seconds, 600);
	assert_int_equal(o->where_time, 5);
	free(o);
}

/* Every buffer is bounded: a line past the limit, a script past the limit, too many words. */
static void test_limits(void **state)
{
	size_t len = TJ_SBATCH_MAX_LINE + 32;
	char *line = malloc(len + 1);
	struct tj_sbatch_opts *o = calloc(1, sizeof(*o));
	struct tj_sbatch_notes notes = { .n = 0 };
	char err[256];

	assert_non_null(line);
	assert_non_null(o);
	memcpy(line, "#SBATCH -J ", 11);
	memset(line + 11, 'x', len - 11);
	line[len] = '\0';
	assert_int_equal(tj_sbatch_parse_script(line, len, o, &notes, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 1: longer than 4096 characters");
	assert_int_equal(
	        tj_sbatch_parse_script(line, TJ_SBATCH_MAX_SCRIPT + 1, o, &notes, err, sizeof(err)),
	        -E2BIG);
	free(line);

	char many[1024] = "#SBATCH";

	for (int i = 0; i < 70; i++)
		strcat(many, " --exclusive");
	assert_int_equal(tj_sbatch_parse_script(many, strlen(many), o, &notes, err, sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "line 1: more than 64 options on one line");
	free(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_scripts),
		cmocka_unit_test(test_command_line_wins),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
