#include "base/number.h"

bool tj_double_to_int64(double v, int64_t min, int64_t max, int64_t *ret)
{
	/* 2^63 is the first double past INT64_MAX; the comparisons are false for NaN. */
	if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
		return false;
	if (v != (double)(int64_t)v || (int64_t)v < min || (int64_t)v > max)
		return false;
	*ret = (int64_t)v;
	return true;
}
