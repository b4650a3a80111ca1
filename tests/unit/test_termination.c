/* Termination messages: the default policy of rendered containers, and the bounds of the
 * text that goes into status.lastFailure.message and the events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/render/termination.h"

struct append_case {
	const char *name;
	const char *before; /* what buf holds */
	size_t size;        /* of buf */
	const char *sep;
	const char *message;
	const char *want;
};

#define TRACE "Traceback (most recent call last):\n  File \"train.py\"\nRuntimeError: CUDA OOM\n"

static const struct append_case append_cases[] = {
	{ "no message: nothing", "rank 1 failed", 64, "; log:\n", NULL, "rank 1 failed" },
	{ "an empty message: nothing", "rank 1 failed", 64, "; log:\n", "", "rank 1 failed" },
	{ "only white space: nothing", "rank 1 failed", 64, "; log:\n", " \n\t\n",
	  "rank 1 failed" },
	{ "a message that fits: whole, without its trailing newline", "r1", 128, ": ", TRACE,
	  "r1: Traceback (most recent call last):\n  File \"train.py\"\nRuntimeError: CUDA OOM" },
	{ "into an empty buffer without separator", "", 16, "", "Killed\n", "Killed" },
	/* 30 bytes of room after "r1: ": the tail would start inside "  File...", so it
	 * starts at the next line. */
	{ "too long: its last whole lines", "r1", 35, ": ", TRACE, "r1: RuntimeError: CUDA OOM" },
	{ "too long, one line: its last bytes", "", 9, "", "abcdefghijklmnop", "ijklmnop" },
	{ "exactly the room: whole", "", 9, "", "abcdefgh", "abcdefgh" },
	/* Room for 5 bytes of "x\u00e9y\u20ac" (7 bytes): the tail would start on the second
	 * byte of the e acute, so it starts after it. */
	{ "a cut never splits a UTF-8 sequence", "", 6, "", "x\xc3\xa9y\xe2\x82\xac",
	  "y\xe2\x82\xac" },
	{ "a four-byte sequence is kept whole or not at all", "", 4, "", "\xf0\x9f\x94\xa5!", "!" },
	{ "bytes that are not UTF-8 become '?'", "", 32, "", "bad \xff\xfe byte \xc3(",
	  "bad ?? byte ?(" },
	{ "no room for the separator: nothing", "rank 1 failed", 17, "; log:\n", "boom",
	  "rank 1 failed" },
	{ "room for the separator and one byte", "ab", 6, ": ", "xyz", "ab: z" },
	{ "a full buffer: nothing", "abc", 4, "", "xyz", "abc" },
	{ "a line break at the cut: the tail starts on that line", "", 5, "", "aaaa\nbbbb",
	  "bbbb" },
};

static void test_append(void **state)
{
	for (size_t i = 0; i < sizeof(append_cases) / sizeof(append_cases[0]); i++) {
		const struct append_case *c = &append_cases[i];
		char buf[256];

		print_message("# case: %s\n", c->name);
		assert_true(c->size <= sizeof(buf));
		memset(buf, 'Z', sizeof(buf));
		strcpy(buf, c->before);
		tj_termination_append(buf, c->size, c->sep, c->message);
		assert_string_equal(buf, c->want);
		assert_true(strlen(buf) < c->size);
		/* Nothing is written past the buffer's size. */
		for (size_t k = c->size; k < sizeof(buf); k++)
			assert_int_equal(buf[k], 'Z');
	}
}

/* The 1 KiB a pod keeps of a long log (TJ_POD_TERMINATION_MAX) fits an event's message
 * with its failure text in front. */
static void test_append_bounds_an_event(void **state)
{
	char log[4096], msg[1024] = "rank 3 on node gh200-7 failed (exit code 1, Error); replacing "
	                            "all workers in 10 s (restart 1 of 3)";

	for (size_t i = 0; i < sizeof(log) - 1; i++)
		log[i] = i % 64 == 63 ? '\n' : "\xc3\xa9"[i % 2];
	log[sizeof(log) - 1] = '\0';
	tj_termination_append(msg, sizeof(msg), "; the log ends:\n", log);
	assert_true(strlen(msg) < sizeof(msg));
	assert_non_null(strstr(msg, "; the log ends:\n"));
}

static void test_policy_default(void **state)
{
	cJSON *spec = jlit("{'containers':[{'name':'node'},"
	                   "{'name':'sidecar','terminationMessagePolicy':'File'}],"
	                   "'initContainers':[{'name':'init'}]}");

	assert_int_equal(tj_termination_policy_default(spec), 0);
	assert_json_equal(spec, "{'containers':[{'name':'node','terminationMessagePolicy':"
	                        "'FallbackToLogsOnError'},{'name':'sidecar',"
	                        "'terminationMessagePolicy':'File'}],"
	                        "'initContainers':[{'name':'init'}]}");
	cJSON_Delete(spec);
	/* A spec without containers is left as it is. */
	spec = jlit("{}");
	assert_int_equal(tj_termination_policy_default(spec), 0);
	assert_json_equal(spec, "{}");
	cJSON_Delete(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append),
		cmocka_unit_test(test_append_bounds_an_event),
		cmocka_unit_test(test_policy_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
