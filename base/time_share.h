/* A share of the wall clock for work that blocks the event loop (the admission cycle): a
 * budget that refills at `share` nanoseconds per nanosecond up to `burst`, and that the work
 * spends by the time it took. Work may start while the balance is not negative, so a
 * quiet controller reacts at once and a busy one is held to its share over time. Pure
 * arithmetic on a caller-supplied clock, so tests pass "now". */
#pragma once

#include <stdint.h>

struct tj_time_share {
	double share;      /* of the wall clock, in (0, 1] */
	double burst_ns;   /* the most the balance holds */
	double balance_ns; /* negative after work that took more than was saved */
	uint64_t last_ns;  /* time of the last refill */
};

/* A full budget at now_ns. A share outside (0, 1] is taken as 1 (no limit). */
void tj_time_share_init(struct tj_time_share *t, double share, uint64_t burst_ns, uint64_t now_ns);

/* Nanoseconds to wait at now_ns before the work may start (0 = at once). A clock that goes
 * backwards is taken as no time passing. */
uint64_t tj_time_share_wait(struct tj_time_share *t, uint64_t now_ns);

/* The same for work that may start while the debt is at most credit_ns: the work that
 * matters most (the cycle after GPUs were freed) may borrow ahead of the share, within a
 * bound, so the rest of the work still gets its share over time. */
uint64_t tj_time_share_wait_credit(struct tj_time_share *t, uint64_t now_ns, uint64_t credit_ns);

/* Charges work that ended at now_ns and took took_ns. */
void tj_time_share_spend(struct tj_time_share *t, uint64_t took_ns, uint64_t now_ns);
