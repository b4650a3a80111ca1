/* UTF-8 as RFC 3629 defines it: no overlong forms, no UTF-16 surrogates (U+D800..U+DFFF),
 * nothing above U+10FFFF. */
#pragma once

#include <stddef.h>

/* The length (1 to 4) of the well-formed sequence at the start of s, of which n > 0 bytes
 * may be read, or 0 if it is not one (a bad lead byte, a missing or bad continuation byte,
 * an overlong form, a surrogate, a code point above U+10FFFF). */
size_t tj_utf8_sequence(const char *s, size_t n);

/* The offset of the first byte of s that does not start a well-formed sequence, or len when
 * all of s is well-formed. */
size_t tj_utf8_invalid_at(const char *s, size_t len);

/* The offset at which the last max bytes (at most) of s begin without splitting a
 * sequence: the tail s + offset is no longer than max and starts on a lead byte (or at
 * len). For messages kept by their end, such as the last lines of a log. */
size_t tj_utf8_tail(const char *s, size_t len, size_t max);
