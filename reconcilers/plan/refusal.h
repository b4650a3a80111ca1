/* Creates the API server refuses: which of them a TrainJob's author must hear of, and how.
 *
 * A pod or Service create can be refused for reasons that are the job's, not the
 * controller's: an admission plugin or webhook (403: a ServiceAccount that does not exist, a
 * ResourceQuota exceeded, Pod Security), or an object the API cannot accept (422 Invalid,
 * 400 BadRequest). Without a word in the TrainJob such a job would sit there silently, its
 * reason only in the controller's log. So the refusal is written into the status (state
 * Pending, reason FailedCreate, the API's message) and a Warning event FailedCreate, while
 * the controller keeps retrying with its backoff: a quota raised or a ServiceAccount created
 * lets the next try through. A 422 or 400 can never succeed on a retry: the status says
 * state Failed, and the planner fails the job (Failed condition) on its next plan. A
 * namespace being deleted refuses every create: that is not the job's fault, not worth a
 * status, and not retried (the TrainJob goes with the namespace). Transient answers (429,
 * 5xx, a lost connection), 401 (the controller's credentials) and 404 are none of these:
 * they are retried as before, without a word in the status. */
#pragma once

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

/* The status.reason of a job whose pods or Service the API server refused. */
#define TJ_REASON_FAILED_CREATE "FailedCreate"

/* The controller's backoff after failed writes grows to 1000 s (client-go's): a job whose
 * creates are refused is planned again at least this often, so that a fix (a quota raised,
 * a ServiceAccount created) lets it start within this time. */
#define TJ_REFUSAL_RETRY_SECONDS 30

enum tj_refusal {
	TJ_REFUSAL_NONE,      /* not a refusal of the job's (or not an error) */
	TJ_REFUSAL_RETRY,     /* 403 by admission: Pending, retried with backoff */
	TJ_REFUSAL_PERMANENT, /* 422 Invalid, 400 BadRequest: the job fails */
	/* 403 because the namespace is being deleted: no status, no retry */
	TJ_REFUSAL_NAMESPACE_TERMINATING,
};

/* Classifies the answer to a create: the HTTP code and the Status's message (NULL: none). */
enum tj_refusal tj_refusal_classify(long http_code, const char *message);

/* The merge patch for the TrainJob's status subresource that records a refusal of kind
 * RETRY or PERMANENT: state Pending or Failed, reason FailedCreate, message the API's
 * (cut to TJ_MESSAGE_MAX between UTF-8 sequences). Unconditional (no resourceVersion): it
 * changes only those three fields, which the next plan reads. -EINVAL for another kind,
 * -ENOMEM. */
int tj_refusal_status_patch(enum tj_refusal kind, const char *message, cJSON **ret);

/* The FailedCreate event's message: "Error creating: " and the API's message, as the Job
 * and ReplicaSet controllers word it, cut between UTF-8 sequences to fit buf. */
void tj_refusal_event_message(const char *message, char buf[static TJ_MESSAGE_MAX]);
