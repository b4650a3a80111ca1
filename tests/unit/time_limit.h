/* Wall-clock limits of the unit tests. A limit that holds on a plain build is far too short
 * under valgrind, which runs the same code 20 to 50 times slower; TJ_TEST_TIME_FACTOR (a
 * number >= 1, default 1) scales every limit, as meson's --timeout-multiplier scales the
 * time of a whole test. Lower bounds ("not before 50 ms") stay as they are: slowness never
 * makes them fail. Included after <cmocka.h>. */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* ms scaled by TJ_TEST_TIME_FACTOR; a factor that is not a number >= 1 fails the test, so
 * that a typo does not quietly leave the limits unscaled. */
static inline uint64_t time_limit_ms(uint64_t ms)
{
	const char *s = getenv("TJ_TEST_TIME_FACTOR");
	char *end;
	double factor;

	if (!s || !*s)
		return ms;
	errno = 0;
	factor = strtod(s, &end);
	if (errno || *end || !(factor >= 1.0 && factor <= 1000.0))
		fail_msg("TJ_TEST_TIME_FACTOR=%s: want a number from 1 to 1000", s);
	return (uint64_t)((double)ms * factor);
}
