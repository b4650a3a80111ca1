/* Leader election with a coordination.k8s.io/v1 Lease, as client-go's leaderelection package
 * and controller-runtime's manager do it: every replica tries to hold one Lease; the holder
 * renews it every retry period and the others take it over once it has not changed for the
 * lease duration, judged by their own clock.
 *
 * The decisions are pure functions of plain data (leader_internal.h, tested directly);
 * struct tj_leader is the I/O around them on the loop: read the Lease, create it if missing, write
 * it with its resourceVersion (a 409 Conflict means another replica won the race), renew while
 * leading, and release it on shutdown.
 *
 * Why expiry is judged by local observation time and never by renewTime: the clocks of the
 * replicas and of the API server may disagree by any amount, but each replica's own clock
 * measures durations correctly. A replica that sees the record change at local time T knows
 * the holder renewed no earlier than shortly before T, so the lease is free at the earliest
 * at T + leaseDurationSeconds. The holder gives up at its last renewal + renew deadline,
 * which is earlier (renew deadline < lease duration), so two replicas never both lead. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uv.h>

#include "controller/metrics/std_metrics.h"
#include "kube/client.h"

/* controller-runtime's defaults (component-base's LeaderElectionConfiguration). */
#define TJ_LEASE_DURATION_MS_DEFAULT 15000
#define TJ_RENEW_DEADLINE_MS_DEFAULT 10000
#define TJ_RETRY_PERIOD_MS_DEFAULT   2000
/* client-go's JitterFactor: a follower retries after retry period * (1 + up to 1.2). */
#define TJ_LEADER_JITTER 1.2

/* The Lease's name. Not Kubeflow Trainer's own ("trainer.kubeflow.org"): this is another
 * program, and a Kubeflow controller left running beside it during a migration must neither
 * block nor be blocked by it (spec.managedBy already tells them apart). */
#define TJ_LEADER_ELECTION_ID_DEFAULT "trainjob-controller"

#define TJ_LEASE_HOLDER_MAX           256 /* holderIdentity, with its NUL */

struct tj_leader_timings {
	uint64_t lease_duration_ms; /* how long a follower waits for a record to change */
	uint64_t renew_deadline_ms; /* how long the leader keeps leading without a renewal */
	uint64_t retry_period_ms;   /* how often everyone tries */
};

/* The defaults, as an initializer. */
#define TJ_LEADER_TIMINGS_DEFAULT                                                                  \
	{                                                                                          \
		TJ_LEASE_DURATION_MS_DEFAULT, TJ_RENEW_DEADLINE_MS_DEFAULT,                        \
		        TJ_RETRY_PERIOD_MS_DEFAULT                                                 \
	}

/* client-go's rule: lease duration > renew deadline > 1.2 x retry period > 0, and the lease
 * duration a whole number of seconds (leaseDurationSeconds is an integer). Otherwise -EINVAL
 * with a sentence naming the flags in err. */
int tj_leader_timings_check(const struct tj_leader_timings *t, char *err, size_t errlen);

/* The exit status of a process whose lease is lost: EXIT_FAILURE while it runs, so that it
 * restarts as a follower with no state of the old term (controller-runtime's "leader
 * election lost"); EXIT_SUCCESS once a signal has begun its shutdown (stopping), as then the
 * loss is part of stopping as asked: the renewals may be throttled (429) or the API server
 * away while the writes drain, and controller-runtime's manager only logs what fails after
 * its stop sequence has begun. Pure. */
int tj_leader_lost_exit_status(bool stopping);

/* hostname "_" a random UUID, as client-go's callers build it, so that two processes on one
 * host (or a restarted one) are never taken for each other. 0, or -E2BIG if it does not fit
 * (len must be at least 38 + the host name). */
int tj_leader_identity(const char *hostname, const uint8_t random[16], char *buf, size_t len);

struct tj_leader_config {
	struct tj_client *client;             /* borrowed */
	const char *namespace;                /* copied */
	const char *name;                     /* the Lease; copied */
	const char *identity;                 /* copied */
	struct tj_leader_timings timings;     /* checked with tj_leader_timings_check */
	const struct tj_std_metrics *metrics; /* borrowed; NULL keeps no metrics */
	/* We lead now. */
	void (*on_started_leading)(void *userdata);
	/* We led and lost the Lease (not called on release). Stop writing at once. */
	void (*on_stopped_leading)(void *userdata);
	void *userdata;
};

struct tj_leader;

/* Starts trying to acquire the Lease at once. -EINVAL for bad timings or a missing name. */
int tj_leader_start(uv_loop_t *loop, const struct tj_leader_config *config, struct tj_leader **ret);

/* Stops trying. If we lead, writes the release (the caller must have stopped all writes
 * guarded by the lease first) and calls done when the API server has answered; otherwise
 * done runs on the next loop iteration. Leading ends at once either way; on_stopped_leading
 * is not called. Called once. */
void tj_leader_release(struct tj_leader *l, void (*done)(void *userdata), void *userdata);

/* Cancels what is in flight and frees once the timer has closed (the loop must run for
 * that). Accepts NULL. */
void tj_leader_close(struct tj_leader *l);
