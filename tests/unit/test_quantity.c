/* Kubernetes resource quantities: every form of resource.Quantity, both roundings (to
 * thousandths for CPU, to whole units for memory and extended resources, both up), the
 * edges of int64 and the inputs that are not quantities. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/quantity.h"

struct quantity_case {
	const char *text;
	int milli_rc;
	int64_t milli;
	int value_rc;
	int64_t value;
};

static const struct quantity_case cases[] = {
	/* Plain numbers and decimals. */
	{ "0", 0, 0, 0, 0 },
	{ "4", 0, 4000, 0, 4 },
	{ "+4", 0, 4000, 0, 4 },
	{ "-4", 0, -4000, 0, -4 },
	{ "007", 0, 7000, 0, 7 },
	{ "1.5", 0, 1500, 0, 2 },
	{ "1.", 0, 1000, 0, 1 },
	{ ".5", 0, 500, 0, 1 },
	{ "0.0001", 0, 1, 0, 1 },
	{ "-0.0001", 0, -1, 0, -1 },
	{ "2.000", 0, 2000, 0, 2 },
	{ "0.000", 0, 0, 0, 0 },
	/* Decimal SI suffixes. */
	{ "500m", 0, 500, 0, 1 },
	{ "1500m", 0, 1500, 0, 2 },
	{ "2000m", 0, 2000, 0, 2 },
	{ "0.5m", 0, 1, 0, 1 },
	{ "1u", 0, 1, 0, 1 },
	{ "1000000u", 0, 1000, 0, 1 },
	{ "1n", 0, 1, 0, 1 },
	{ "0n", 0, 0, 0, 0 },
	{ "1k", 0, 1000000, 0, 1000 },
	{ "1.5k", 0, 1500000, 0, 1500 },
	{ "128M", 0, 128000000000, 0, 128000000 },
	{ "1G", 0, 1000000000000, 0, 1000000000 },
	{ "2T", 0, 2000000000000000, 0, 2000000000000 },
	{ "3P", 0, 3000000000000000000, 0, 3000000000000000 },
	{ "1E", -ERANGE, 0, 0, 1000000000000000000 },
	{ "9E", -ERANGE, 0, 0, 9000000000000000000 },
	{ "10E", -ERANGE, 0, -ERANGE, 0 },
	/* Binary suffixes, with fractions that are and are not whole. */
	{ "1Ki", 0, 1024000, 0, 1024 },
	{ "0.1Ki", 0, 102400, 0, 103 },
	{ "1.5Gi", 0, 1610612736000, 0, 1610612736 },
	{ "64Mi", 0, 67108864000, 0, 67108864 },
	{ "1Ti", 0, 1099511627776000, 0, 1099511627776 },
	{ "1Pi", 0, 1125899906842624000, 0, 1125899906842624 },
	{ "7Ei", -ERANGE, 0, 0, 8070450532247928832 },
	{ "8Ei", -ERANGE, 0, -ERANGE, 0 },
	{ "0.000000000000000001Ei", 0, 1153, 0, 2 },
	{ "0.5Ki", 0, 512000, 0, 512 },
	/* Decimal exponents; "E" alone is exa, "E" with digits an exponent. */
	{ "1e3", 0, 1000000, 0, 1000 },
	{ "1E3", 0, 1000000, 0, 1000 },
	{ "1e+3", 0, 1000000, 0, 1000 },
	{ "15e-1", 0, 1500, 0, 2 },
	{ "1e-3", 0, 1, 0, 1 },
	{ "1e-4", 0, 1, 0, 1 },
	{ "12e-10", 0, 1, 0, 1 },
	{ "0e99999999999999999999", 0, 0, 0, 0 },
	{ "1e-99999999999999999999", 0, 1, 0, 1 },
	{ "1e99999999999999999999", -ERANGE, 0, -ERANGE, 0 },
	{ "1.2e2", 0, 120000, 0, 120 },
	/* The edges of int64. */
	{ "9223372036854775807", -ERANGE, 0, 0, INT64_MAX },
	{ "9223372036854775808", -ERANGE, 0, -ERANGE, 0 },
	{ "-9223372036854775807", -ERANGE, 0, 0, -INT64_MAX },
	{ "9223372036854775807m", 0, INT64_MAX, 0, 9223372036854776 },
	{ "9223372036854775.807", 0, INT64_MAX, 0, 9223372036854776 },
	{ "9223372036854775.8071", -ERANGE, 0, 0, 9223372036854776 },
	{ "99999999999999999999999", -ERANGE, 0, -ERANGE, 0 },
	{ "0000000000000000000000001", 0, 1000, 0, 1 },
	/* Not quantities. */
	{ "", -EINVAL, 0, -EINVAL, 0 },
	{ ".", -EINVAL, 0, -EINVAL, 0 },
	{ "-", -EINVAL, 0, -EINVAL, 0 },
	{ "+.", -EINVAL, 0, -EINVAL, 0 },
	{ "m", -EINVAL, 0, -EINVAL, 0 },
	{ "Ki", -EINVAL, 0, -EINVAL, 0 },
	{ "1K", -EINVAL, 0, -EINVAL, 0 },
	{ "1ki", -EINVAL, 0, -EINVAL, 0 },
	{ "1Kib", -EINVAL, 0, -EINVAL, 0 },
	{ "1mi", -EINVAL, 0, -EINVAL, 0 },
	{ "1e", -EINVAL, 0, -EINVAL, 0 },
	{ "1e-", -EINVAL, 0, -EINVAL, 0 },
	{ "1e1.5", -EINVAL, 0, -EINVAL, 0 },
	{ "1ee3", -EINVAL, 0, -EINVAL, 0 },
	{ "1 ", -EINVAL, 0, -EINVAL, 0 },
	{ " 1", -EINVAL, 0, -EINVAL, 0 },
	{ "1 k", -EINVAL, 0, -EINVAL, 0 },
	{ "1.2.3", -EINVAL, 0, -EINVAL, 0 },
	{ "--1", -EINVAL, 0, -EINVAL, 0 },
	{ "0x10", -EINVAL, 0, -EINVAL, 0 },
	{ "1,5", -EINVAL, 0, -EINVAL, 0 },
	{ "inf", -EINVAL, 0, -EINVAL, 0 },
	{ "1mm", -EINVAL, 0, -EINVAL, 0 },
};

static void test_quantity_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct quantity_case *c = &cases[i];
		int64_t v = -42;

		print_message("# case: \"%s\"\n", c->text);
		assert_int_equal(tj_quantity_parse_milli(c->text, &v), c->milli_rc);
		assert_int_equal(v, c->milli_rc == 0 ? c->milli : -42); /* untouched on error */
		v = -42;
		assert_int_equal(tj_quantity_parse_value(c->text, &v), c->value_rc);
		assert_int_equal(v, c->value_rc == 0 ? c->value : -42);
	}
	assert_int_equal(tj_quantity_parse_value(NULL, &(int64_t){ 0 }), -EINVAL);
}

static void test_quantity_json(void **state)
{
	static const struct {
		const char *json;
		int milli_rc;
		int64_t milli;
		int value_rc;
		int64_t value;
	} json_cases[] = {
		{ "\"500m\"", 0, 500, 0, 1 },
		{ "4", 0, 4000, 0, 4 },
		/* The double nearest 0.1 is a little above it: still 100m, as written. */
		{ "0.1", 0, 100, 0, 1 },
		{ "2.5", 0, 2500, 0, 3 },
		{ "-1", 0, -1000, 0, -1 },
		{ "1e300", -ERANGE, 0, -ERANGE, 0 },
		{ "1e-300", 0, 1, 0, 1 },
		{ "true", -EINVAL, 0, -EINVAL, 0 },
		{ "null", -EINVAL, 0, -EINVAL, 0 },
		{ "{}", -EINVAL, 0, -EINVAL, 0 },
		{ "\"4 \"", -EINVAL, 0, -EINVAL, 0 },
	};

	for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
		cJSON *q = cJSON_Parse(json_cases[i].json);
		int64_t v = -42;

		print_message("# case: %s\n", json_cases[i].json);
		assert_non_null(q);
		assert_int_equal(tj_quantity_json_milli(q, &v), json_cases[i].milli_rc);
		assert_int_equal(v, json_cases[i].milli_rc == 0 ? json_cases[i].milli : -42);
		v = -42;
		assert_int_equal(tj_quantity_json_value(q, &v), json_cases[i].value_rc);
		assert_int_equal(v, json_cases[i].value_rc == 0 ? json_cases[i].value : -42);
		cJSON_Delete(q);
	}
	assert_int_equal(tj_quantity_json_value(NULL, &(int64_t){ 0 }), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantity_table),
		cmocka_unit_test(test_quantity_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
