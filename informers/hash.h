/* The string hash shared by the hash tables of informers/ (store.c, intern.c). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over len bytes: keys are short, and the content comes from the API server, which
 * the controller trusts for content; a collision costs time, never correctness. */
static inline uint32_t tj_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}
