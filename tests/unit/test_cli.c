#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "controller/cli.h"

struct parse_case {
	const char *name;
	int argc;
	char *argv[4];
	int want_rc;
	enum tj_cli_action want_action;
	const char *want_err;
};

static const struct parse_case cases[] = {
	{ "no arguments runs", 1, { "tjc" }, 0, TJ_CLI_RUN, "" },
	{ "--help", 2, { "tjc", "--help" }, 0, TJ_CLI_HELP, "" },
	{ "--version", 2, { "tjc", "--version" }, 0, TJ_CLI_VERSION, "" },
	{ "first of help and version wins",
	  3,
	  { "tjc", "--version", "--help" },
	  0,
	  TJ_CLI_VERSION,
	  "" },
	{ "unknown flag",
	  2,
	  { "tjc", "--frobnicate" },
	  -EINVAL,
	  TJ_CLI_RUN,
	  "unknown argument '--frobnicate' (see --help)" },
	{ "prefix is not a match",
	  2,
	  { "tjc", "--hel" },
	  -EINVAL,
	  TJ_CLI_RUN,
	  "unknown argument '--hel' (see --help)" },
};

static void test_parse_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct tj_cli cli = { .action = (enum tj_cli_action)99 };
		char err[128];

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_cli_parse(c->argc, c->argv, &cli, err, sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc == 0)
			assert_int_equal(cli.action, c->want_action);
		else
			assert_int_equal(cli.action, 99); /* untouched on error */
	}
}

static void test_error_is_truncated_and_terminated(void **state)
{
	char *argv[] = { "tjc", "--a-very-long-unknown-flag" };
	struct tj_cli cli;
	char err[8];

	assert_int_equal(tj_cli_parse(2, argv, &cli, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown");
}

static void test_usage_lists_every_option(void **state)
{
	char buf[2048] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	assert_non_null(f);
	tj_cli_usage(f, "tjc");
	fclose(f);
	assert_non_null(strstr(buf, "Usage: tjc [OPTION]..."));
	assert_non_null(strstr(buf, "--help"));
	assert_non_null(strstr(buf, "--version"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_error_is_truncated_and_terminated),
		cmocka_unit_test(test_usage_lists_every_option),
	};
	return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
