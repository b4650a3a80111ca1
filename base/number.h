/* Numbers of JSON documents are doubles; converting one to an integer type is undefined
 * behaviour in C when it is out of that type's range (1e300, NaN), so every conversion of a
 * number that input can set goes through this check. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Whether v is a whole number in [min, max]; if so, writes it into *ret. */
bool tj_double_to_int64(double v, int64_t min, int64_t max, int64_t *ret);

/* a + b for b >= 0, INT64_MAX where the sum would pass it: a time plus a duration, a total
 * of amounts, where "for ever" is the only honest answer to an overflow. */
static inline int64_t tj_add_capped(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}
