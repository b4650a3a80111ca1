/* RFC 3339 timestamps, in seconds (metav1.Time) and milliseconds (an ExecCredential's
 * expirationTimestamp). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/rfc3339.h"

struct time_case {
	const char *s;
	int want_rc;
	int64_t want_ms;
};

static const struct time_case time_cases[] = {
	{ "2026-11-29T10:15:02Z", 0, 1795947302000 },
	{ "2026-11-29T11:00:00.123456Z", 0, 1795950000123 },
	{ "2026-11-29T11:00:00.5Z", 0, 1795950000500 },
	{ "2026-11-29T11:00:00.05Z", 0, 1795950000050 },
	{ "2026-01-02T05:04:05.250+02:00", 0, 1767323045250 },
	{ "2026-11-29T12:30:45+02:00", 0, 1795948245000 },
	{ "2026-11-29T12:30:45-00:00", 0, 1795955445000 },
	{ "1969-12-31T23:59:59Z", 0, -1000 },
	{ "1969-12-31T23:59:59.250Z", 0, -750 },
	{ "1970-01-01T00:00:00Z", 0, 0 },
	{ "0000-01-01T00:00:00Z", 0, -62167219200000 },
	{ "9999-12-31T23:59:59Z", 0, 253402300799000 },
	{ "2000-02-29T00:00:00Z", 0, 951782400000 },
	{ "2400-02-29T12:00:00-00:30", 0, 13574608200000 },
	{ "2026-11-29t10:15:02z", 0, 1795947302000 },
	/* A leap second folds into the next second. */
	{ "2016-12-31T23:59:60Z", 0, 1483228800000 },
	{ "2025-02-29T00:00:00Z", -EINVAL, 0 },
	{ "1900-02-29T00:00:00Z", -EINVAL, 0 },
	{ "2026-04-31T00:00:00Z", -EINVAL, 0 },
	{ "2026-13-01T00:00:00Z", -EINVAL, 0 },
	{ "2026-00-01T00:00:00Z", -EINVAL, 0 },
	{ "2026-01-00T00:00:00Z", -EINVAL, 0 },
	{ "2026-11-29T24:00:00Z", -EINVAL, 0 },
	{ "2026-11-29T23:60:00Z", -EINVAL, 0 },
	{ "2026-11-29T23:59:61Z", -EINVAL, 0 },
	{ "2026-11-29T10:15:02+24:00", -EINVAL, 0 },
	{ "2026-11-29T10:15:02+02:60", -EINVAL, 0 },
	{ "2026-11-29 10:15:02Z", -EINVAL, 0 },
	{ "2026-11-29T10:15:02", -EINVAL, 0 },
	{ "2026-11-29T10:15:02.Z", -EINVAL, 0 },
	{ "2026-11-29T10:15:02Zjunk", -EINVAL, 0 },
	{ "2026-11-29T10:15:02+0200", -EINVAL, 0 },
	{ "2026-11-29T10:15:02+02", -EINVAL, 0 },
	{ "2026-1-29T10:15:02Z", -EINVAL, 0 },
	{ "2026-11-29T1:15:02Z", -EINVAL, 0 },
	{ " 2026-11-29T10:15:02Z", -EINVAL, 0 },
	{ "26-11-29T10:15:02Z", -EINVAL, 0 },
	{ "+2026-11-29T10:15:02Z", -EINVAL, 0 },
	{ "tomorrow", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ NULL, -EINVAL, 0 },
};

static void test_parse_ms(void **state)
{
	for (size_t i = 0; i < sizeof(time_cases) / sizeof(time_cases[0]); i++) {
		int64_t t = 42;

		print_message("# case: %s\n", time_cases[i].s ? time_cases[i].s : "(null)");
		assert_int_equal(tj_rfc3339_parse_ms(time_cases[i].s, &t), time_cases[i].want_rc);
		assert_int_equal(t, time_cases[i].want_rc == 0 ? time_cases[i].want_ms : 42);
	}
}

/* Seconds are the milliseconds rounded down, also before 1970. */
static void test_parse_seconds(void **state)
{
	for (size_t i = 0; i < sizeof(time_cases) / sizeof(time_cases[0]); i++) {
		int64_t t = 42, want = 42;

		if (time_cases[i].want_rc == 0) {
			want = time_cases[i].want_ms / 1000;
			if (time_cases[i].want_ms % 1000 < 0)
				want--;
		}
		print_message("# case: %s\n", time_cases[i].s ? time_cases[i].s : "(null)");
		assert_int_equal(tj_rfc3339_parse(time_cases[i].s, &t), time_cases[i].want_rc);
		assert_int_equal(t, want);
	}
	int64_t t;
	assert_int_equal(tj_rfc3339_parse("1969-12-31T23:59:59.250Z", &t), 0);
	assert_int_equal(t, -1);
	assert_int_equal(tj_rfc3339_parse("2026-11-29T11:00:00.999Z", &t), 0);
	assert_int_equal(t, 1795950000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ms),
		cmocka_unit_test(test_parse_seconds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
