/* UTF-8 validation: every boundary of RFC 3629's table of well-formed sequences. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/utf8.h"

struct sequence_case {
	const char *name;
	const char *bytes;
	size_t n;    /* bytes that may be read */
	size_t want; /* the length of the sequence, 0 if it is not one */
};

static const struct sequence_case sequence_cases[] = {
	{ "ASCII", "a", 1, 1 },
	{ "NUL", "\0", 1, 1 },
	{ "DEL", "\x7f", 1, 1 },
	{ "U+0080, the first of two bytes", "\xc2\x80", 2, 2 },
	{ "U+07FF, the last of two bytes", "\xdf\xbf", 2, 2 },
	{ "U+0800, the first of three bytes", "\xe0\xa0\x80", 3, 3 },
	{ "U+D7FF, below the surrogates", "\xed\x9f\xbf", 3, 3 },
	{ "U+E000, above the surrogates", "\xee\x80\x80", 3, 3 },
	{ "U+FFFF", "\xef\xbf\xbf", 3, 3 },
	{ "U+10000, the first of four bytes", "\xf0\x90\x80\x80", 4, 4 },
	{ "U+10FFFF, the last code point", "\xf4\x8f\xbf\xbf", 4, 4 },
	{ "only the sequence counts, not what follows", "\xc3\xa9z", 3, 2 },
	{ "a lone continuation byte", "\x80", 1, 0 },
	{ "overlong NUL", "\xc0\x80", 2, 0 },
	{ "overlong '/' in two bytes", "\xc1\xaf", 2, 0 },
	{ "overlong U+07FF in three bytes", "\xe0\x9f\xbf", 3, 0 },
	{ "overlong U+FFFF in four bytes", "\xf0\x8f\xbf\xbf", 4, 0 },
	{ "the first surrogate, U+D800", "\xed\xa0\x80", 3, 0 },
	{ "the last surrogate, U+DFFF", "\xed\xbf\xbf", 3, 0 },
	{ "U+110000, above the last code point", "\xf4\x90\x80\x80", 4, 0 },
	{ "a lead byte of five bytes", "\xf8\x88\x80\x80\x80", 5, 0 },
	{ "0xff", "\xff", 1, 0 },
	{ "truncated two bytes", "\xc3", 1, 0 },
	{ "truncated three bytes", "\xe2\x82", 2, 0 },
	{ "truncated four bytes", "\xf0\x9f\x9a", 3, 0 },
	{ "truncated by n, not by the bytes", "\xc3\xa9", 1, 0 },
	{ "ASCII where a continuation belongs",
	  "\xe2"
	  "a\x82",
	  3, 0 },
	{ "a lead byte where a continuation belongs", "\xc3\xc3\xa9", 3, 0 },
};

static void test_sequence(void **state)
{
	for (size_t i = 0; i < sizeof(sequence_cases) / sizeof(sequence_cases[0]); i++) {
		const struct sequence_case *c = &sequence_cases[i];

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_utf8_sequence(c->bytes, c->n), c->want);
	}
}

struct text_case {
	const char *name;
	const char *text;
	size_t want; /* the offset of the first bad byte; strlen(text) if none */
};

static const struct text_case text_cases[] = {
	{ "empty", "", 0 },
	{ "ASCII", "hello", 5 },
	{ "mixed", "\xc3\xa9quipe \xe2\x82\xac \xf0\x9f\x9a\x80", 16 },
	{ "overlong after text", "a: \xc0\xaf\n", 3 },
	{ "surrogate after text", "a: \xed\xa0\x80\n", 3 },
	{ "truncated at the end", "a: b\n%\xc3", 6 },
	{ "bad byte at the start",
	  "\xff"
	  "abc",
	  0 },
	{ "the first bad one of several", "ok\xc3\xa9\x80\xff", 4 },
};

static void test_invalid_at(void **state)
{
	for (size_t i = 0; i < sizeof(text_cases) / sizeof(text_cases[0]); i++) {
		const struct text_case *c = &text_cases[i];

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_utf8_invalid_at(c->text, strlen(c->text)), c->want);
	}
	/* A NUL is text like any other, and the length is what is given, not strlen. */
	assert_int_equal(tj_utf8_invalid_at("a\0b", 3), 3);
	assert_int_equal(tj_utf8_invalid_at("ab\xc3\xa9", 3), 2);
}

struct tail_case {
	const char *name;
	const char *text;
	size_t max;
	size_t want; /* the offset of the tail */
};

static const struct tail_case tail_cases[] = {
	{ "shorter than the bound: all of it", "crash", 10, 0 },
	{ "exactly the bound: all of it", "crash", 5, 0 },
	{ "ASCII: the last max bytes", "Traceback: boom", 4, 11 },
	{ "a bound of 0: nothing", "abc", 0, 3 },
	{ "empty", "", 0, 0 },
	/* "x\u00e9y": the cut would fall between the two bytes of \u00e9. */
	{ "not inside a two-byte sequence", "x\xc3\xa9y", 2, 3 },
	{ "at the lead byte of a two-byte sequence", "x\xc3\xa9y", 3, 1 },
	/* "\u20ac" is three bytes: cuts after its first or second byte move past it. */
	{ "not after the first byte of three", "a\xe2\x82\xac", 2, 4 },
	{ "not after the second byte of three", "a\xe2\x82\xac", 1, 4 },
	{ "four bytes: whole, or not at all", "\xf0\x9f\x9a\x80!", 4, 4 },
	{ "four bytes kept whole", "\xf0\x9f\x9a\x80!", 5, 0 },
	{ "a run of stray continuation bytes is skipped",
	  "ab\x80\x80\x80\x80\x80"
	  "c",
	  6, 7 },
};

static void test_tail(void **state)
{
	for (size_t i = 0; i < sizeof(tail_cases) / sizeof(tail_cases[0]); i++) {
		const struct tail_case *c = &tail_cases[i];
		size_t len = strlen(c->text), at;

		print_message("# case: %s\n", c->name);
		at = tj_utf8_tail(c->text, len, c->max);
		assert_int_equal(at, c->want);
		assert_true(len - at <= c->max);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_invalid_at),
		cmocka_unit_test(test_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
