/* Standard base64 (RFC 4648 section 4, with padding, no line breaks): the encoding of a
 * Secret's data and of an OpenSSH public key's blob. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The length of the encoding of n bytes, without the NUL. */
size_t tj_base64_len(size_t n);

/* Encodes n bytes into a new NUL-terminated string (*ret, owned by the caller). -ENOMEM;
 * -E2BIG when n is beyond 64 MiB, far more than any caller needs. */
int tj_base64_encode(const uint8_t *in, size_t n, char **ret);
