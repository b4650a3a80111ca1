/* Internal to controller/workqueue.c: the backoff rule and a key's failure count, declared for it
 * and for its unit test (tests/unit/test_workqueue.c) only. The rest of the tree uses the public
 * header. */
#pragma once

#include "controller/workqueue.h"

/* The delay before retry number failures + 1 of a key: base * 2^failures, capped at max
 * (client-go's ItemExponentialFailureRateLimiter). */
uint64_t tj_workqueue_backoff_ms(unsigned failures, uint64_t base_ms, uint64_t max_ms);

/* Failures counted for key since the last forget. */
unsigned tj_workqueue_num_requeues(const struct tj_workqueue *q, const char *key);
