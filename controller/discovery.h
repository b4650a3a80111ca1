/* What the API server serves, asked once at start through its discovery documents: the
 * Workload API of native gang scheduling (reconcilers/render/native_gang.h) is alpha, behind
 * feature gates and --runtime-config, so the controller never assumes it. */
#pragma once

#include <stdbool.h>

#include "kube/client.h"

/* Asks for /apis/scheduling.k8s.io/v1alpha2 and runs the client's loop until the answer
 * is in: *ret_served is true when it lists workloads and podgroups that may be created,
 * false when the server answers 404 (the version is not served) or lists less. Any other
 * answer (no connection, 403, 5xx after the client's retries) returns its negative errno
 * with the reason logged, so that the process does not start on a guess. To be called
 * before anything else runs on the loop. */
int tj_discover_native_gang(struct tj_client *client, bool *ret_served);
