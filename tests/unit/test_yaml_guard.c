/* What is refused before libfyaml reads a YAML text: bytes that are not UTF-8, and a tab
 * that libfyaml takes as the indentation of a block indicator (its cleanup after that
 * error crashes inside an explicit key). Everything else goes through, tabs included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/yaml_guard.h"

#define TAB_WHY                                                                                    \
	"a tab before '-', '?', ':', '|' or '>' (YAML indents with spaces; in quotes, write \\t)"

struct guard_case {
	const char *name;
	const char *text;
	size_t want;          /* the offset refused; strlen(text) when none is */
	const char *want_why; /* NULL when nothing is refused */
};

static const struct guard_case cases[] = {
	{ "plain YAML", "gpuClasses:\n- name: gh200\n  gpus: 4\n", 36, NULL },
	{ "empty", "", 0, NULL },
	{ "a tab inside a plain scalar", "a: b\tc\n", 7, NULL },
	{ "a tab before a plain scalar", "a:\tb\n", 5, NULL },
	{ "a tab at the end of a line, '-' on the next", "a:\t\n- b\n", 8, NULL },
	{ "a tab before '-' that starts a number", "a: \t-1\n", 7, NULL },
	{ "the crash fuzz_config found", "? a: \t- x\n", 5, TAB_WHY },
	{ "a tab before '- ' in a mapping value", "a: \t- x\n", 3, TAB_WHY },
	{ "a tab before '-' at the end of the text", "a:\t-", 2, TAB_WHY },
	{ "a tab before '-' at the end of a line", "a:\t-\nb: c\n", 2, TAB_WHY },
	{ "a tab before '-' and a NEL", "a: \t-\xc2\x85x\n", 3, TAB_WHY },
	{ "a tab before '-' and a letter", "a: \t-x\n", 7, NULL },
	{ "a tab before '?'", "? a: \t? x\n", 5, TAB_WHY },
	{ "a tab before ':'", "? a: \t:\n", 5, TAB_WHY },
	{ "a tab before '|'", "a: \t|\n  x\n", 3, TAB_WHY },
	{ "a tab before '>'", "a: \t>\n  x\n", 3, TAB_WHY },
	{ "tabs and spaces between", "a: \t \t - x\n", 3, TAB_WHY },
	{ "the first of two tabs is the one named", "a:\t\t- x\n", 2, TAB_WHY },
	{ "in a comment too", "a: b # \t- x\n", 7, TAB_WHY },
	{ "in a quoted string too", "a: \"\t- x\"\n", 4, TAB_WHY },
	{ "not UTF-8", "a: \xc3\n", 3, "not valid UTF-8" },
	{ "the first of the two reasons", "a: \t- x\n\xff", 3, TAB_WHY },
	{ "the first of the two reasons, UTF-8 first", "\xff\na: \t- x\n", 0, "not valid UTF-8" },
};

static void test_refused_at(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct guard_case *c = &cases[i];
		const char *why = "untouched";

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_yaml_refused_at(c->text, strlen(c->text), &why), c->want);
		assert_string_equal(why, c->want_why ? c->want_why : "untouched");
	}
	/* A NUL after the '-' (fuzz_yaml found it): libfyaml takes it for the end. */
	assert_int_equal(tj_yaml_refused_at("? a: \t-\0\0", 9, NULL), 5);
	/* The length is what is given: a tab past it is not read. */
	assert_int_equal(tj_yaml_refused_at("a: \t- x", 3, NULL), 3);
	assert_int_equal(tj_yaml_refused_at("a: \t- x", 4, NULL), 4);
	assert_int_equal(tj_yaml_refused_at("a: \t- x", 5, NULL), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_at),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
