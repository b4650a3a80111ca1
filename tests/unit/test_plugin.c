#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/plugin.h"

/* A plugin with one option of its own that takes a value (--image) and one flag (--dry-run),
 * as kubectl sbatch has them. */
struct own {
	const char *image;
	bool dry_run;
};

static int own_option(void *userdata, const char *arg, const char *next, char *err, size_t errlen)
{
	struct own *o = userdata;
	int n = tj_plugin_match(arg, next, 0, "image", &o->image);

	if (n < 0)
		snprintf(err, errlen, "--image needs a value");
	if (n != 0)
		return n;
	if (tj_plugin_match_flag(arg, 0, "dry-run")) {
		o->dry_run = true;
		return 1;
	}
	return 0;
}

static const struct tj_plugin_spec stopping = {
	.name = "sbatch",
	.synopsis = "[OPTION]... SCRIPT [ARG]...",
	.summary = "Submits a batch script.",
	.options_help = "      --image IMAGE\n",
	.on_option = own_option,
	.stop_at_operand = true,
	.min_operands = 1,
	.max_operands = 1,
};

static const struct tj_plugin_spec permuting = {
	.name = "scancel",
	.synopsis = "NAME...",
	.summary = "Cancels jobs.",
	.min_operands = 1,
};

struct parse_case {
	const char *name;
	const struct tj_plugin_spec *spec;
	const char *argv[8];
	int want_rc;
	const char *want_out; /* a prefix of stdout */
	const char *want_err; /* all of stderr */
	const char *namespace, *kubeconfig, *context, *image;
	bool dry_run;
	size_t n_operands, n_rest;
};

static const struct parse_case cases[] = {
	{ "script only",
	  &stopping,
	  { "job.sh" },
	  TJ_PLUGIN_GO_ON,
	  "",
	  "",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  1,
	  0 },
	{ "every common form",
	  &stopping,
	  { "-nteam-a", "--kubeconfig", "/k", "--context=c1", "--image=img", "--dry-run",
	    "job.sh" },
	  TJ_PLUGIN_GO_ON,
	  "",
	  "",
	  "team-a",
	  "/k",
	  "c1",
	  "img",
	  true,
	  1,
	  0 },
	{ "namespace as a separate value",
	  &stopping,
	  { "--namespace", "ns", "job.sh" },
	  TJ_PLUGIN_GO_ON,
	  "",
	  "",
	  "ns",
	  "",
	  "",
	  NULL,
	  false,
	  1,
	  0 },
	{ "what follows the script is its own",
	  &stopping,
	  { "job.sh", "-n", "5", "--dry-run" },
	  TJ_PLUGIN_GO_ON,
	  "",
	  "",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  1,
	  3 },
	{ "options after operands when permuting",
	  &permuting,
	  { "a", "b", "-n", "ns" },
	  TJ_PLUGIN_GO_ON,
	  "",
	  "",
	  "ns",
	  "",
	  "",
	  NULL,
	  false,
	  2,
	  0 },
	{ "-- ends the options",
	  &permuting,
	  { "--", "-odd-name" },
	  TJ_PLUGIN_GO_ON,
	  "",
	  "",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  1,
	  0 },
	{ "help",
	  &stopping,
	  { "--help" },
	  TJ_PLUGIN_EXIT_SUCCESS,
	  "Usage: kubectl sbatch [OPTION]... SCRIPT [ARG]...\n\nSubmits a batch script.\n",
	  "",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  0,
	  0 },
	{ "version",
	  &permuting,
	  { "--version" },
	  TJ_PLUGIN_EXIT_SUCCESS,
	  "kubectl-scancel (trainjob-controller) ",
	  "",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  0,
	  0 },
	{ "unknown option",
	  &stopping,
	  { "--frobnicate", "job.sh" },
	  TJ_PLUGIN_EXIT_USAGE,
	  "",
	  "kubectl sbatch: unknown option --frobnicate (see --help)\n",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  0,
	  0 },
	{ "a common option without its value",
	  &permuting,
	  { "x", "--context" },
	  TJ_PLUGIN_EXIT_USAGE,
	  "",
	  "kubectl scancel: --context needs a value (at most 255 characters)\n",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  0,
	  0 },
	{ "an empty namespace",
	  &permuting,
	  { "x", "--namespace=" },
	  TJ_PLUGIN_EXIT_USAGE,
	  "",
	  "kubectl scancel: --namespace needs a value (at most 253 characters)\n",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  0,
	  0 },
	{ "missing operand",
	  &stopping,
	  { "--dry-run" },
	  TJ_PLUGIN_EXIT_USAGE,
	  "",
	  "kubectl sbatch: missing arguments (see --help)\n",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  0,
	  0 },
	{ "a plugin option's own error",
	  &stopping,
	  { "--image" },
	  TJ_PLUGIN_EXIT_USAGE,
	  "",
	  "kubectl sbatch: --image needs a value\n",
	  "",
	  "",
	  "",
	  NULL,
	  false,
	  0,
	  0 },
};

static void test_parse(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		char *argv[9] = { "kubectl-x" }, *out_buf = NULL, *err_buf = NULL;
		size_t out_len = 0, err_len = 0;
		FILE *out = open_memstream(&out_buf, &out_len);
		FILE *err = open_memstream(&err_buf, &err_len);
		struct own own = { NULL, false };
		struct tj_plugin p;
		int argc = 1, rc;

		for (size_t j = 0; j < 8 && c->argv[j]; j++)
			argv[argc++] = (char *)c->argv[j];
		rc = tj_plugin_parse(&p, c->spec, &own, argc, argv, out, err);
		fclose(out);
		fclose(err);
		print_message("case: %s\n", c->name);
		assert_int_equal(rc, c->want_rc);
		assert_memory_equal(out_buf, c->want_out, strlen(c->want_out));
		assert_string_equal(err_buf, c->want_err);
		if (rc == TJ_PLUGIN_GO_ON) {
			assert_string_equal(p.namespace, c->namespace);
			assert_int_equal(p.namespace_given, c->namespace[0] != 0);
			assert_string_equal(p.kubeconfig, c->kubeconfig);
			assert_string_equal(p.context, c->context);
			if (c->image)
				assert_string_equal(own.image, c->image);
			else
				assert_null(own.image);
			assert_int_equal(own.dry_run, c->dry_run);
			assert_int_equal(p.n_operands, c->n_operands);
			assert_int_equal(p.n_rest, c->n_rest);
		}
		free(out_buf);
		free(err_buf);
	}
}

static void test_match(void **state)
{
	const char *v = NULL;

	assert_int_equal(tj_plugin_match("-t", "10", 't', "time", &v), 2);
	assert_string_equal(v, "10");
	assert_int_equal(tj_plugin_match("-t10", NULL, 't', "time", &v), 1);
	assert_string_equal(v, "10");
	assert_int_equal(tj_plugin_match("--time=1:00", NULL, 't', "time", &v), 1);
	assert_string_equal(v, "1:00");
	assert_int_equal(tj_plugin_match("--time", "5", 't', "time", &v), 2);
	assert_string_equal(v, "5");
	assert_int_equal(tj_plugin_match("--time", NULL, 't', "time", &v), -EINVAL);
	assert_int_equal(tj_plugin_match("--timeout=3", NULL, 't', "time", &v), 0);
	assert_int_equal(tj_plugin_match("-x", "1", 't', "time", &v), 0);
	assert_int_equal(tj_plugin_match_flag("--dry-run", 0, "dry-run"), 1);
	assert_int_equal(tj_plugin_match_flag("--dry-run=1", 0, "dry-run"), 0);
	assert_int_equal(tj_plugin_match_flag("-h", 'h', "help"), 1);
	assert_int_equal(tj_plugin_match_flag("-hx", 'h', "help"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
