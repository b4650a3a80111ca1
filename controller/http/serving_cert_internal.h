/* Internal to controller/http/serving_cert.c: the count of reloads, declared for it and for its
 * unit test (tests/unit/test_serving_cert.c) only. The rest of the tree uses the public header. */
#pragma once

#include "controller/http/serving_cert.h"

/* How many times the files were read again with success (for tests and logs). */
unsigned tj_serving_cert_generation(const struct tj_serving_cert *c);
