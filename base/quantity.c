#include "base/quantity.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Exponents beyond this magnitude give the same result as this one (every int64 has fewer
 * than 20 digits), so parsing saturates there instead of overflowing. The mantissa of a
 * quantity is a string the caller holds in memory, far shorter than this. */
#define EXPONENT_CAP 1000000000000LL

/* A quantity split into its parts: the digits of the mantissa (the point skipped), how many
 * of them come before the point, and the power of ten and of two the suffix multiplies by. */
struct parts {
	const char *mantissa; /* borrowed; the first digit or the point */
	int64_t n_digits;
	int64_t n_int; /* digits before the point */
	int64_t exp10;
	int exp2; /* 0, 10, ..., 60 */
	bool negative;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The decimal exponent after 'e' or 'E': an optional sign, then at least one digit. */
static int parse_exponent(const char *p, int64_t *ret)
{
	bool negative = *p == '-';
	int64_t v = 0;

	if (*p == '+' || *p == '-')
		p++;
	if (!*p)
		return -EINVAL;
	for (; *p; p++) {
		if (!is_digit(*p))
			return -EINVAL;
		if (v < EXPONENT_CAP)
			v = v * 10 + (*p - '0');
	}
	*ret = negative ? -v : v;
	return 0;
}

static int parse_suffix(const char *p, struct parts *q)
{
	static const char decimal[] = "num kMGTPE"; /* 10^-9 ... 10^18 in steps of 3 */
	static const char binary[] = "KMGTPE";      /* 2^10 ... 2^60 */
	const char *c;

	if (!*p)
		return 0;
	if (p[1] == 'i' && !p[2] && (c = strchr(binary, *p))) {
		q->exp2 = 10 * (int)(c - binary + 1);
		return 0;
	}
	if ((*p == 'e' || *p == 'E') && p[1])
		return parse_exponent(p + 1, &q->exp10);
	if (!p[1] && *p != ' ' && (c = strchr(decimal, *p))) {
		q->exp10 = 3 * (int64_t)(c - decimal) - 9;
		return 0;
	}
	return -EINVAL;
}

static int split(const char *s, struct parts *q)
{
	const char *p = s;
	int64_t n_frac = 0;

	*q = (struct parts){ 0 };
	if (!s)
		return -EINVAL;
	if (*p == '+' || *p == '-')
		q->negative = *p++ == '-';
	q->mantissa = p;
	while (is_digit(*p)) {
		q->n_int++;
		p++;
	}
	if (*p == '.') {
		p++;
		while (is_digit(*p)) {
			n_frac++;
			p++;
		}
	}
	q->n_digits = q->n_int + n_frac;
	if (q->n_digits == 0)
		return -EINVAL;
	return parse_suffix(p, q);
}

/* Digit i of the mantissa, counting from the most significant, the point skipped. */
static unsigned digit(const struct parts *q, int64_t i)
{
	return (unsigned)(q->mantissa[i < q->n_int ? i : i + 1] - '0');
}

/* The value times 10^scale, rounded away from zero. The digits left of the (shifted)
 * point make the integer part; those right of it make a fraction f, and f * 2^exp2 is
 * computed exactly from its last digit up: each step divides (digit * 2^exp2 + carry) by
 * ten, and any remainder on the way means the result is not whole. */
static int evaluate(const char *s, int scale, int64_t *ret)
{
	struct parts q;
	uint64_t v = 0, carry = 0, m;
	int64_t point, first_frac;
	bool inexact = false;
	int r = split(s, &q);

	if (r < 0)
		return r;
	m = (uint64_t)1 << q.exp2;
	point = q.n_int + q.exp10 + scale;
	for (int64_t i = 0; i < point && i < q.n_digits; i++) {
		unsigned d = digit(&q, i);

		if (v > ((uint64_t)INT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	for (int64_t i = q.n_digits; i < point && v != 0; i++) {
		if (v > (uint64_t)INT64_MAX / 10)
			return -ERANGE;
		v *= 10;
	}
	if (v > (uint64_t)INT64_MAX >> q.exp2)
		return -ERANGE;
	v <<= q.exp2;

	first_frac = point > 0 ? point : 0;
	for (int64_t i = q.n_digits - 1; i >= first_frac; i--) {
		uint64_t t = digit(&q, i) * m + carry; /* < 10 * 2^60 */

		carry = t / 10;
		inexact = inexact || t % 10 != 0;
	}
	/* The zeros between the point and the first digit, while they still change anything. */
	for (int64_t i = point; i < 0 && carry != 0; i++) {
		inexact = inexact || carry % 10 != 0;
		carry /= 10;
	}
	if (carry + inexact > (uint64_t)INT64_MAX - v)
		return -ERANGE;
	v += carry + inexact;
	*ret = q.negative ? -(int64_t)v : (int64_t)v;
	return 0;
}

int tj_quantity_parse_milli(const char *s, int64_t *ret)
{
	return evaluate(s, 3, ret);
}

int tj_quantity_parse_value(const char *s, int64_t *ret)
{
	return evaluate(s, 0, ret);
}

static int evaluate_json(const cJSON *q, int scale, int64_t *ret)
{
	char text[32];

	if (cJSON_IsString(q))
		return evaluate(q->valuestring, scale, ret);
	if (!cJSON_IsNumber(q))
		return -EINVAL;
	/* NaN and infinities print as words, which evaluate() refuses. */
	snprintf(text, sizeof(text), "%.15g", q->valuedouble);
	return evaluate(text, scale, ret);
}

int tj_quantity_json_milli(const cJSON *q, int64_t *ret)
{
	return evaluate_json(q, 3, ret);
}

int tj_quantity_json_value(const cJSON *q, int64_t *ret)
{
	return evaluate_json(q, 0, ret);
}
