/* Internal to controller/http/review_cache.c: the count of entries, declared for it and for its
 * unit test (tests/unit/test_review_cache.c) only. The rest of the tree uses the public header. */
#pragma once

#include "controller/http/review_cache.h"

/* Entries held, expired or not. */
size_t tj_review_cache_size(const struct tj_review_cache *c);
