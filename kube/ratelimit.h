/* Token bucket (golang.org/x/time/rate semantics, as client-go's QPS/burst limiter): tokens
 * refill at qps per second up to burst; taking a token may go into debt, and the debt says how
 * long the caller must wait. Pure arithmetic on a caller-supplied clock, so tests pass "now". */
#pragma once

#include <stdint.h>

struct tj_token_bucket {
	double qps;       /* refill rate, tokens per second; <= 0 disables the limit */
	double burst;     /* capacity */
	double tokens;    /* current balance; negative while requests wait */
	uint64_t last_ms; /* time of the last update */
};

/* A full bucket at now_ms. qps <= 0 makes every take free. burst < 1 is treated as 1. */
void tj_token_bucket_init(struct tj_token_bucket *b, double qps, int burst, uint64_t now_ms);

/* Takes one token at now_ms and returns how many milliseconds the caller must wait before it
 * may proceed (0 = at once). A clock that goes backwards is treated as no time passing. */
uint64_t tj_token_bucket_take(struct tj_token_bucket *b, uint64_t now_ms);
