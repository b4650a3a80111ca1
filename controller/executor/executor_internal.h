/* Internal to controller/executor/executor.c: where a created object goes, declared for it and for
 * its unit test (tests/unit/test_executor.c) only. The rest of the tree uses the public header. */
#pragma once

#include "controller/executor/executor.h"

/* The resource a CREATE_OBJECT of object goes to, by its apiVersion and kind; NULL for a
 * kind the executor does not create. */
const struct tj_resource *tj_execute_object_resource(const cJSON *object);
