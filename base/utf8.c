#include "base/utf8.h"

size_t tj_utf8_sequence(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len;
	unsigned int cp;

	if (u[0] < 0x80)
		return 1;
	/* 0xc0 and 0xc1 could only start overlong forms of ASCII; 0xf5 and above only code
	 * points above U+10FFFF. */
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		len = 2;
		cp = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		len = 3;
		cp = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		len = 4;
		cp = u[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (u[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t tj_utf8_invalid_at(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		size_t n = tj_utf8_sequence(s + i, len - i);

		if (n == 0)
			return i;
		i += n;
	}
	return len;
}

size_t tj_utf8_tail(const char *s, size_t len, size_t max)
{
	size_t at;

	if (len <= max)
		return 0;
	at = len - max;
	/* Continuation bytes are 10xxxxxx; a sequence is at most 4 bytes, but a run of
	 * stray continuation bytes may be longer, and is skipped whole. */
	while (at < len && ((unsigned char)s[at] & 0xc0) == 0x80)
		at++;
	return at;
}
