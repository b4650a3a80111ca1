/* Internal to controller/admission/ledger.c: one node's entry and the count of nodes, declared for
 * it and for its unit test (tests/unit/test_ledger.c) only. The rest of the tree uses the public
 * header. */
#pragma once

#include "controller/admission/ledger.h"

/* The entry of node name, counted from pods (the pod cache and its node index) when it is
 * stale, new, or was counted in another resource (gpus of resource; NULL: no GPUs). NULL
 * without memory. */
const struct tj_ledger_node *tj_ledger_get(struct tj_ledger *l, const char *name,
                                           const char *resource, const struct tj_store *pods);

/* Nodes it keeps, for tests. */
size_t tj_ledger_len(const struct tj_ledger *l);
