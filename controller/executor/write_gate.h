/* The write gate: which of the controller's writes go to the API server first.
 *
 * Urgent writes are the ones a training job waits for: pod creates and deletes (and a status
 * patch that records a restart or a failure before anything else happens). Deferrable
 * writes are the bookkeeping that nobody waits for in the same second: the headless Service
 * (torchrun's rendezvous retries its DNS name until it resolves, and a pod needs seconds at
 * least to start), the status patches that report progress, and the Events. When a burst of
 * TrainJobs arrives, every deferrable write would otherwise take API-server time from the
 * pods of the jobs behind it; the gate holds them while urgent writes are in flight or more
 * reconciles wait to start, and lets them go once the burst is through (nothing urgent for
 * 50 ms), at a bounded pace. On a quiet controller the gate is open and nothing waits.
 *
 * A waiter never waits longer than max_wait_ms for queued work, nor longer than max_hold_ms
 * while urgent writes keep going out: under endless load, the bookkeeping still happens. The
 * longer bound is for a burst of TrainJobs: its Services and status patches (each Service
 * also has kube-controller-manager write its Endpoints and EndpointSlice) sent alongside
 * the creates made every pod exist much later than the same pods created by a plain client;
 * they are held until the pods are out, no later (docs/benchmarks.md, "Scale").
 *
 * At most TJ_WRITE_GATE_MAX_DEFERRED deferrable writes are in flight at once, whatever the
 * wait: thousands of status patches sent together (a queue of
 * thousands of jobs whose positions moved) would sit in the API server's queue for this
 * client ahead of the next pod creates, and past its request timeout on a busy server.
 * Waiters are released in the order they came.
 *
 * The status writes of jobs that wait in the admission queue go by a pass of their own
 * (status_pass.h), which neither the busy queue nor the hold of a burst stops: at most one
 * write of a job in flight, a bounded number in all, fewer while urgent writes go out.
 * Everything runs on one libuv loop. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "controller/executor/status_pass.h"

/* Default bounds on a deferred write's wait: while only queued work shuts the gate, and
 * while urgent writes are in flight (or were a moment ago). */
#define TJ_WRITE_GATE_MAX_WAIT_MS 5000
#define TJ_WRITE_GATE_MAX_HOLD_MS 60000
/* Deferrable writes in flight at most: as many as the benchmarks' plain client has
 * connections (docs/benchmarks.md, "Scale"). */
#define TJ_WRITE_GATE_MAX_DEFERRED 32

struct tj_write_gate;

/* What one deferred piece of work waits with; embedded in its owner, which must not free it
 * while it waits (tj_write_gate_cancel first). */
struct tj_write_gate_waiter {
	struct tj_link link; /* in the gate's FIFO */
	uint64_t since_ms;   /* loop time it started waiting */
	void (*release)(struct tj_write_gate_waiter *w, void *userdata);
	void *userdata;
	bool waiting;
};

struct tj_write_gate_config {
	/* Whether more work that may bring urgent writes is waiting to start (the workqueue's
	 * depth): the gate stays shut while it says so. May be NULL. */
	bool (*busy)(void *userdata);
	void *userdata;
	uint64_t max_wait_ms; /* 0 means TJ_WRITE_GATE_MAX_WAIT_MS */
	uint64_t max_hold_ms; /* 0 means TJ_WRITE_GATE_MAX_HOLD_MS; at least max_wait_ms */
};

int tj_write_gate_new(uv_loop_t *loop, const struct tj_write_gate_config *config,
                      struct tj_write_gate **ret);

/* An urgent write was sent, or was answered. */
void tj_write_gate_urgent_begin(struct tj_write_gate *g);
void tj_write_gate_urgent_end(struct tj_write_gate *g);

/* A deferrable write was sent, or was answered (or cancelled). */
void tj_write_gate_deferred_begin(struct tj_write_gate *g);
void tj_write_gate_deferred_end(struct tj_write_gate *g);

/* Whether a deferrable write may go now: no urgent write in flight or answered in the last
 * 50 ms, nothing busy, fewer than TJ_WRITE_GATE_MAX_DEFERRED deferrable writes in flight, and
 * no earlier waiter still waiting. A NULL gate is always open. */
bool tj_write_gate_open(const struct tj_write_gate *g);

/* Queues w; release(w, userdata) runs from the loop once the gate opens (or w has waited
 * max_wait_ms, or max_hold_ms while urgent writes go out, and fewer than
 * TJ_WRITE_GATE_MAX_DEFERRED deferrable writes are in flight),
 * never from inside this call. */
void tj_write_gate_wait(struct tj_write_gate *g, struct tj_write_gate_waiter *w,
                        void (*release)(struct tj_write_gate_waiter *w, void *userdata),
                        void *userdata);

/* Opens the gate for good (the controller is stopping): every waiter is released from the
 * loop, and later waits end at once. */
void tj_write_gate_flush(struct tj_write_gate *g);

/* Takes w out of the queue if it still waits; its release will not run. */
void tj_write_gate_cancel(struct tj_write_gate *g, struct tj_write_gate_waiter *w);

/* The pass of queued jobs' status writes (status_pass.h): w, whose key is set, waits for its
 * turn apart from the other waiters. release(w, userdata) runs from the loop when it comes,
 * after which its job counts as having a write in flight until tj_write_gate_pass_done;
 * stale(w, userdata) runs from the loop instead when w waited behind its job's write in
 * flight and that write was answered: w was planned before the answer. Never from inside
 * this call. */
void tj_write_gate_pass_wait(struct tj_write_gate *g, struct tj_status_pass_waiter *w,
                             tj_status_pass_fn release, tj_status_pass_fn stale, void *userdata);

/* The writes of the job of key that the pass released are answered (or were not sent). */
void tj_write_gate_pass_done(struct tj_write_gate *g, const char *key);

/* Takes w out of the pass if it still waits; none of its callbacks will run. */
void tj_write_gate_pass_cancel(struct tj_write_gate *g, struct tj_status_pass_waiter *w);

/* A status patch of the job of key is sent outside the pass (tj_status_pass_begin): until
 * tj_write_gate_status_end, the job's next status write waits in the pass behind it, blocked,
 * and goes stale once it is answered. False when the write goes untracked (then no end). */
bool tj_write_gate_status_begin(struct tj_write_gate *g, const char *key);
void tj_write_gate_status_end(struct tj_write_gate *g, const char *key);

/* Whether the job of key has a status write in flight, of the pass or not; false for a NULL
 * gate. */
bool tj_write_gate_status_in_flight(const struct tj_write_gate *g, const char *key);

/* Writes in flight, and waiters. */
struct tj_write_gate_stats {
	uint64_t urgent_in_flight;
	uint64_t deferred_in_flight;
	uint64_t waiting;
	uint64_t pass_in_flight; /* jobs with a write of the pass in flight */
	uint64_t pass_waiting;   /* waiters of the pass, queued or blocked */
	uint64_t deferred_total; /* waits so far */
	uint64_t expired_total;  /* waits that ended by max_wait_ms rather than by the gate */
};
void tj_write_gate_stats(const struct tj_write_gate *g, struct tj_write_gate_stats *ret);

/* Frees the gate once its timer is closed; waiters still queued are dropped unreleased.
 * Accepts NULL; returns NULL. */
struct tj_write_gate *tj_write_gate_free(struct tj_write_gate *g);
