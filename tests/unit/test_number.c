/* The one conversion of a JSON number to an integer: whole numbers in range only, and never
 * the undefined behaviour of casting a double past the type's range. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/number.h"

static void test_conversions(void **state)
{
	static const struct {
		double v;
		int64_t min, max;
		bool ok;
		int64_t want;
	} cases[] = {
		{ 42, 0, 100, true, 42 },
		{ -7, -10, 10, true, -7 },
		{ 0, 0, 0, true, 0 },
		{ 101, 0, 100, false, 0 },
		{ -1, 0, 100, false, 0 },
		{ 1.5, 0, 100, false, 0 },
		{ 1e300, INT64_MIN, INT64_MAX, false, 0 },
		{ -1e300, INT64_MIN, INT64_MAX, false, 0 },
		{ 6.66667e+42, INT64_MIN, INT64_MAX, false, 0 }, /* found by fuzz_trainjob */
		{ 9223372036854775808.0, INT64_MIN, INT64_MAX, false, 0 }, /* 2^63 */
		{ -9223372036854775808.0, INT64_MIN, INT64_MAX, true, INT64_MIN },
		{ 9007199254740992.0, 0, INT64_MAX, true, 9007199254740992LL }, /* 2^53 */
		{ 2147483648.0, INT32_MIN, INT32_MAX, false, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t got = -12345;

		assert_int_equal(tj_double_to_int64(cases[i].v, cases[i].min, cases[i].max, &got),
		                 cases[i].ok);
		assert_int_equal(got, cases[i].ok ? cases[i].want : -12345);
	}
	{
		int64_t got = 5;

		assert_false(tj_double_to_int64(NAN, INT64_MIN, INT64_MAX, &got));
		assert_false(tj_double_to_int64(INFINITY, INT64_MIN, INT64_MAX, &got));
		assert_int_equal(got, 5);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversions),
	};
	return cmocka_run_group_tests_name("number", tests, NULL, NULL);
}
