/* The wall-clock share of blocking work (time_share.h). */
#include <math.h>

#include "base/time_share.h"

void tj_time_share_init(struct tj_time_share *t, double share, uint64_t burst_ns, uint64_t now_ns)
{
	t->share = share > 0 && share <= 1 ? share : 1.0;
	t->burst_ns = (double)burst_ns;
	t->balance_ns = t->burst_ns;
	t->last_ns = now_ns;
}

static void refill(struct tj_time_share *t, uint64_t now_ns)
{
	if (now_ns <= t->last_ns)
		return;
	t->balance_ns += (double)(now_ns - t->last_ns) * t->share;
	if (t->balance_ns > t->burst_ns)
		t->balance_ns = t->burst_ns;
	t->last_ns = now_ns;
}

uint64_t tj_time_share_wait_credit(struct tj_time_share *t, uint64_t now_ns, uint64_t credit_ns)
{
	double floor_ns = -(double)credit_ns;

	refill(t, now_ns);
	if (t->balance_ns >= floor_ns)
		return 0;
	/* The debt beyond the credit is paid back at `share` per nanosecond of wall clock. */
	return (uint64_t)ceil((floor_ns - t->balance_ns) / t->share);
}

uint64_t tj_time_share_wait(struct tj_time_share *t, uint64_t now_ns)
{
	return tj_time_share_wait_credit(t, now_ns, 0);
}

void tj_time_share_spend(struct tj_time_share *t, uint64_t took_ns, uint64_t now_ns)
{
	/* What the clock gave while the work ran counts: the balance may be full when it starts,
	 * and refilling it only once the work is charged would lose that to the cap. */
	refill(t, now_ns > took_ns ? now_ns - took_ns : 0);
	t->balance_ns -= (double)took_ns;
	refill(t, now_ns);
}
