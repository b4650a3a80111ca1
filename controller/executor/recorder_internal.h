/* Internal to controller/executor/recorder.c: the counts of what the recorder did, declared for it
 * and for its unit test (tests/unit/test_recorder.c) only. The rest of the tree uses the public
 * header. */
#pragma once

#include "controller/executor/recorder.h"

/* Events written, folded into an existing Event, dropped by the spam filter, failed. */
struct tj_recorder_stats {
	uint64_t created, patched, dropped, failed;
};

void tj_recorder_stats(const struct tj_recorder *r, struct tj_recorder_stats *ret);
