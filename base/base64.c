#include "base/base64.h"

#include <errno.h>
#include <stdlib.h>

#define MAX_INPUT (64u * 1024 * 1024)

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t tj_base64_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

int tj_base64_encode(const uint8_t *in, size_t n, char **ret)
{
	char *out, *p;
	size_t i;

	if (n > MAX_INPUT)
		return -E2BIG;
	out = malloc(tj_base64_len(n) + 1);
	if (!out)
		return -ENOMEM;
	p = out;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*p++ = alphabet[v >> 18 & 63];
		*p++ = alphabet[v >> 12 & 63];
		*p++ = alphabet[v >> 6 & 63];
		*p++ = alphabet[v & 63];
	}
	if (i < n) {
		/* One or two bytes left: two or three characters, padded to four. */
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0);

		*p++ = alphabet[v >> 18 & 63];
		*p++ = alphabet[v >> 12 & 63];
		*p++ = i + 1 < n ? alphabet[v >> 6 & 63] : '=';
		*p++ = '=';
	}
	*p = '\0';
	*ret = out;
	return 0;
}
