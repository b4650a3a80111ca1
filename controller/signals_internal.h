/* Internal to controller/signals.c: the replacement of exit(3), declared for it and for its unit
 * test (tests/unit/test_signals.c) only. The rest of the tree uses the public header. */
#pragma once

#include "controller/signals.h"

/* Replaces exit(3) for the forced exits. */
void tj_signals_set_exit(struct tj_signals *signals, tj_exit_fn exit_fn);
