/* Token bucket arithmetic. */
#include <math.h>

#include "kube/ratelimit.h"

void tj_token_bucket_init(struct tj_token_bucket *b, double qps, int burst, uint64_t now_ms)
{
	b->qps = qps;
	b->burst = burst < 1 ? 1.0 : (double)burst;
	b->tokens = b->burst;
	b->last_ms = now_ms;
}

uint64_t tj_token_bucket_take(struct tj_token_bucket *b, uint64_t now_ms)
{
	double wait_ms;

	if (b->qps <= 0)
		return 0;
	if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * b->qps / 1000.0;
		if (b->tokens > b->burst)
			b->tokens = b->burst;
		b->last_ms = now_ms;
	}
	b->tokens -= 1.0;
	if (b->tokens >= 0)
		return 0;
	/* The debt is paid back at qps tokens per second; round up so that the caller never
	 * proceeds before its token exists. */
	wait_ms = ceil(-b->tokens * 1000.0 / b->qps);
	return (uint64_t)wait_ms;
}
