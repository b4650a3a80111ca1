#include "informers/intern.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "informers/hash.h"

/* An interned string: its header sits right before the characters handed out. */
struct istr {
	uint32_t refs;
	uint32_t hash;
	char s[];
};

/* Open addressing with linear probing; the capacity is a power of two, kept at most 3/4 full
 * so that a probe always ends at an empty slot. */
static struct istr **slots; /* owned array of capacity slots; entries owned */
static size_t capacity;
static size_t count;

static struct istr *istr_of(char *s)
{
	return (struct istr *)(s - offsetof(struct istr, s));
}

static int grow(void)
{
	size_t ncap = capacity ? capacity * 2 : 64;
	struct istr **n = calloc(ncap, sizeof(*n));

	if (!n)
		return -1;
	for (size_t i = 0; i < capacity; i++) {
		struct istr *e = slots[i];
		size_t j;

		if (!e)
			continue;
		for (j = e->hash & (ncap - 1); n[j]; j = (j + 1) & (ncap - 1))
			;
		n[j] = e;
	}
	free(slots);
	slots = n;
	capacity = ncap;
	return 0;
}

char *tj_intern_len(const char *s, size_t len)
{
	uint32_t h = tj_hash(s, len);
	struct istr *e;
	size_t i;

	if ((count + 1) * 4 > capacity * 3 && grow() < 0)
		return NULL;
	for (i = h & (capacity - 1); slots[i]; i = (i + 1) & (capacity - 1)) {
		e = slots[i];
		if (e->hash == h && strncmp(e->s, s, len) == 0 && e->s[len] == '\0') {
			e->refs++;
			return e->s;
		}
	}
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	e->refs = 1;
	e->hash = h;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	slots[i] = e;
	count++;
	return e->s;
}

char *tj_intern(const char *s)
{
	return tj_intern_len(s, strlen(s));
}

char *tj_intern_ref(char *s)
{
	if (s)
		istr_of(s)->refs++;
	return s;
}

char *tj_intern_unref(char *s)
{
	struct istr *e;
	size_t i, j;

	if (!s)
		return NULL;
	e = istr_of(s);
	if (--e->refs > 0)
		return NULL;
	for (i = e->hash & (capacity - 1); slots[i] != e; i = (i + 1) & (capacity - 1))
		;
	/* Backward-shift deletion: move later members of the probe run into the hole so that
	 * lookups never stop early at it. */
	for (j = (i + 1) & (capacity - 1); slots[j]; j = (j + 1) & (capacity - 1)) {
		size_t home = slots[j]->hash & (capacity - 1);

		if (((j - home) & (capacity - 1)) >= ((j - i) & (capacity - 1))) {
			slots[i] = slots[j];
			i = j;
		}
	}
	slots[i] = NULL;
	count--;
	free(e);
	if (count == 0) {
		free(slots);
		slots = NULL;
		capacity = 0;
	}
	return NULL;
}

size_t tj_intern_count(void)
{
	return count;
}
