/* Internal to controller/expectations.c: a key's expectations set from a list of pods to be
 * created (as tj_expectations_start_plan sets them from a plan), and the count of keys,
 * declared for it and for its unit test (tests/unit/test_expectations.c) only. The rest of
 * the tree uses the public header. */
#pragma once

#include "controller/expectations.h"

/* key (the job's "namespace/name") expects the n pods named (copied), until deadline_ms;
 * replaces what key expected before. 0, or -ENOMEM (then key expects nothing). */
int tj_expectations_expect(struct tj_expectations *x, const char *key, const char *const *names,
                           size_t n, uint64_t deadline_ms);

/* Keys with outstanding expectations. */
size_t tj_expectations_len(const struct tj_expectations *x);
