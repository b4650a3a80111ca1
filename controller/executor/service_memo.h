/* The Services this process knows to exist, by the uid of the TrainJob they serve. A plan
 * posts its job's headless Service with every batch of pods and until the status that
 * records the start is written, and that status is bookkeeping which waits behind a burst's
 * pod writes (write_gate.h): every plan that a gang's pod events brought in between posted
 * the Service again, to be told AlreadyExists (220 such answers for 100 gangs admitted at
 * once). The executor sends no create of a Service it knows; it learns one as it sends its
 * create, so that two plans in flight at once (a queued job admitted again while its last
 * plan's create waits at the write gate) post it once, and forgets it when that create is
 * refused (anything but success or AlreadyExists), so that the next plan posts it again.
 * The last TJ_SERVICE_MEMO_SIZE are kept: the window
 * that matters is the seconds before a job's start is written. A Service deleted by hand
 * while its job lives comes back with the job's next batch of pods only once the memo has
 * forgotten the job (as before it, it never came back once the start was written). */
#pragma once

#include <stdbool.h>

#define TJ_SERVICE_MEMO_SIZE 1024
#define TJ_SERVICE_MEMO_UID  64

struct tj_service_memo {
	char uids[TJ_SERVICE_MEMO_SIZE][TJ_SERVICE_MEMO_UID];
	unsigned next; /* the slot the next uid takes, the oldest one's */
};

/* Whether the Service of the job with this uid is known to exist. NULL memo: never. */
bool tj_service_memo_has(const struct tj_service_memo *m, const char *uid);

/* The Service of the job with this uid exists. NULL memo or uid, or a uid longer than a
 * slot: nothing is kept. */
void tj_service_memo_add(struct tj_service_memo *m, const char *uid);

/* The Service of the job with this uid is not known to exist (its create was refused). */
void tj_service_memo_forget(struct tj_service_memo *m, const char *uid);
