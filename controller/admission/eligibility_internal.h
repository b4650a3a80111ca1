/* Internal to controller/admission/eligibility.c: the count of placements kept, declared for it and
 * for its unit test (tests/unit/test_eligibility.c) only. The rest of the tree uses the public
 * header. */
#pragma once

#include "controller/admission/eligibility.h"

/* Placements it keeps, for tests. */
size_t tj_eligibility_len(const struct tj_eligibility *c);
