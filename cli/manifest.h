/* A TrainJob manifest as the controller first sees it once applied: what `render` plans
 * from. Pure: a document in, a projected job out. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

/* Stands for the uid the API server would give the job. */
#define TJ_MANIFEST_UID "<uid>"

/* Projects doc, a TrainJob manifest, into *ret as a new job the controller would plan for:
 * in the namespace "default" when the manifest names none (doc gets it, as kubectl applies
 * such a manifest), with the uid TJ_MANIFEST_UID when it has none, and not suspended, since
 * render shows what the job becomes when it runs; *ret_resumed tells whether it was
 * suspended. -EINVAL when doc has no metadata.name (tj_trainjob_from_json), -ENOMEM. *ret
 * and *ret_resumed are written only on success. */
int tj_manifest_trainjob(cJSON *doc, struct tj_trainjob **ret, bool *ret_resumed);
