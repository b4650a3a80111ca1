/* Internal to controller/leader/leader.c: the pure decisions of the election and the record they
 * read and write, declared for it and for its unit test (tests/unit/test_leader.c) only. The rest
 * of the tree uses the public header. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "controller/leader/leader.h"

#define TJ_MICROTIME_LEN 28 /* "2024-01-02T03:04:05.123456Z" and its NUL */

/* The election record: the spec of the Lease. Times are kept as the strings the API server
 * returned (MicroTime); they are written but never compared with a clock. */
struct tj_lease_record {
	char holder[TJ_LEASE_HOLDER_MAX]; /* holderIdentity; "" when nobody holds it */
	int64_t duration_s;               /* leaseDurationSeconds */
	char acquire_time[TJ_MICROTIME_LEN];
	char renew_time[TJ_MICROTIME_LEN];
	int64_t transitions; /* leaseTransitions */
};

/* Reads lease.spec; absent fields are empty or 0. -EINVAL if lease is not an object with a
 * spec object, -E2BIG if holderIdentity or a time is longer than the record holds. */
int tj_lease_record_from_json(const cJSON *lease, struct tj_lease_record *ret);

/* Writes rec into lease.spec (creating spec), keeping every other field of the object,
 * metadata.resourceVersion included, so that a PUT of it is conditional. Empty times are
 * left out. 0 or -ENOMEM. */
int tj_lease_record_to_json(const struct tj_lease_record *rec, cJSON *lease);

/* What this replica knows of the Lease. */
struct tj_leader_view {
	bool exists;                   /* a Lease has been read (false: none, or 404) */
	struct tj_lease_record record; /* the last record read or written */
	uint64_t observed_ms;          /* local time at which record was first seen as it is */
	bool leading;                  /* we lead */
	uint64_t renewed_ms;           /* when leading: local time our last write was sent */
};

/* Takes a record just read at local time now_ms into the view: observed_ms moves only if
 * the record differs from the one seen before (any field, as client-go compares the raw
 * record), so a holder that keeps renewing keeps its lease however its clock is set. */
void tj_leader_observe(struct tj_leader_view *v, const struct tj_lease_record *rec,
                       uint64_t now_ms);

enum tj_leader_decision {
	TJ_LEADER_ACQUIRE, /* take the Lease: create it, or write ourselves as a new holder */
	TJ_LEADER_RENEW,   /* it is ours: write a new renewTime */
	TJ_LEADER_WAIT,    /* another holder's lease has not expired: try again later */
	TJ_LEADER_LOST,    /* we led and must stop: no renewal within the renew deadline, or
	                      the record names another holder */
};

/* The decision for the view at local time now_ms:
 * - leading, and now_ms - renewed_ms >= renew deadline, or another holder in the record: LOST;
 * - no Lease, an empty holder (released), or a record unchanged for leaseDurationSeconds
 *   since it was observed: ACQUIRE;
 * - the record names us: RENEW;
 * - otherwise WAIT.
 * The times inside the record play no part. Pure. */
enum tj_leader_decision tj_leader_decide(const struct tj_leader_view *v, const char *identity,
                                         uint64_t now_ms, const struct tj_leader_timings *t);

/* The record to write for decision d (ACQUIRE or RENEW) at wall time now (a MicroTime
 * string), or for the release (d == TJ_LEADER_LOST is not written; use
 * tj_lease_record_release). ACQUIRE of a Lease someone else held starts a new term:
 * acquireTime now and leaseTransitions + 1 (0 for a new Lease, old NULL); RENEW keeps both.
 * Pure. */
void tj_lease_record_next(const struct tj_lease_record *old, enum tj_leader_decision d,
                          const char *identity, int64_t duration_s, const char *now,
                          struct tj_lease_record *ret);

/* What controller-runtime's ReleaseOnCancel writes: no holder, leaseDurationSeconds 1,
 * acquireTime = renewTime = now, leaseTransitions unchanged. Pure. */
void tj_lease_record_release(const struct tj_lease_record *old, const char *now,
                             struct tj_lease_record *ret);

/* The wall clock as a MicroTime ("2024-01-02T03:04:05.123456Z"). */
void tj_microtime_now(char buf[static TJ_MICROTIME_LEN]);
