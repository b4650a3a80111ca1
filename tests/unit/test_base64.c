/* Base64 as RFC 4648 section 10 gives its test vectors, and bytes that need every bit. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base64.h"

static void test_rfc4648_vectors(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "" },
		{ "f", "Zg==" },
		{ "fo", "Zm8=" },
		{ "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = NULL;
		size_t n = strlen(cases[i].in);

		assert_int_equal(tj_base64_encode((const uint8_t *)cases[i].in, n, &got), 0);
		assert_string_equal(got, cases[i].want);
		assert_int_equal(strlen(got), tj_base64_len(n));
		free(got);
	}
}

static void test_high_bits(void **state)
{
	static const uint8_t in[] = { 0xff, 0xfe, 0x00, 0xfb, 0xef };
	char *got = NULL;

	assert_int_equal(tj_base64_encode(in, sizeof(in), &got), 0);
	assert_string_equal(got, "//4A++8=");
	free(got);
}

static void test_too_large(void **state)
{
	char *got = NULL;
	static const uint8_t one = 0;

	/* The length is checked before the input is read. */
	assert_int_equal(tj_base64_encode(&one, (size_t)64 * 1024 * 1024 + 1, &got), -E2BIG);
	assert_null(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648_vectors),
		cmocka_unit_test(test_high_bits),
		cmocka_unit_test(test_too_large),
	};
	return cmocka_run_group_tests_name("base64", tests, NULL, NULL);
}
