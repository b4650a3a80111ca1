#include "base/rfc3339.h"

#include <errno.h>
#include <stdbool.h>

/* Reads exactly n decimal digits. */
static int digits(const char **p, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return -EINVAL;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*ret = v;
	return 0;
}

static int expect(const char **p, char c)
{
	if (**p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days algorithm run
 * backwards), so that no time zone or libc state is involved. */
static int64_t days_from_civil(int y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : days[m - 1];
}

int tj_rfc3339_parse_ms(const char *s, int64_t *ret)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	int64_t ms = 0, scale = 100;
	const char *p = s;

	if (!s)
		return -EINVAL;
	if (digits(&p, 4, &y) < 0 || expect(&p, '-') < 0 || digits(&p, 2, &mo) < 0 ||
	    expect(&p, '-') < 0 || digits(&p, 2, &d) < 0)
		return -EINVAL;
	if (*p != 'T' && *p != 't')
		return -EINVAL;
	p++;
	if (digits(&p, 2, &h) < 0 || expect(&p, ':') < 0 || digits(&p, 2, &mi) < 0 ||
	    expect(&p, ':') < 0 || digits(&p, 2, &sec) < 0)
		return -EINVAL;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			ms += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		p++;
		if (digits(&p, 2, &oh) < 0 || expect(&p, ':') < 0 || digits(&p, 2, &om) < 0)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p != '\0')
		return -EINVAL;
	/* Leap seconds (:60) are accepted as RFC 3339 allows and fold into the next second. */
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
	    sec > 60 || oh > 23 || om > 59)
		return -EINVAL;
	*ret = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	        sign * (oh * 3600 + om * 60)) *
	               1000 +
	       ms;
	return 0;
}

int tj_rfc3339_parse(const char *s, int64_t *ret)
{
	int64_t ms;
	int r = tj_rfc3339_parse_ms(s, &ms);

	if (r < 0)
		return r;
	/* Floor division: the fraction never moves a time before 1970 to the next second. */
	*ret = ms / 1000 - (ms % 1000 < 0);
	return 0;
}
