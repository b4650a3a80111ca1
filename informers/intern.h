/* Interned strings: one shared, reference-counted copy of each string that many cached
 * objects repeat (a namespace, a node name, a TrainJob name, a reason). 100,000 pods in a
 * few namespaces on a few thousand nodes then pay one pointer per field instead of a copy.
 *
 * The table is process-wide and not thread-safe: like the caches, it lives on the one
 * libuv loop thread (DESIGN.md, "Event loop"). */
#pragma once

#include <stddef.h>

/* Returns the interned copy of s with one more reference, or NULL if out of memory.
 * The result must not be modified; release it with tj_intern_unref(). */
char *tj_intern(const char *s);

/* Same as tj_intern() for the first len bytes of s (which need not be terminated). */
char *tj_intern_len(const char *s, size_t len);

/* Takes one more reference to a string returned by tj_intern(). Accepts NULL. */
char *tj_intern_ref(char *s);

/* Drops one reference; the last one frees the string. Accepts NULL; returns NULL. */
char *tj_intern_unref(char *s);

/* Distinct strings currently interned (for tests and the benchmark). */
size_t tj_intern_count(void);
