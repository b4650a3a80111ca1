/* The pass of queued jobs' status writes: the order in which the writes of jobs that wait in
 * the admission queue (their position, expected start and message) go to the API server.
 *
 * A queue of thousands of jobs whose positions moved is thousands of status patches, which
 * nobody waits for the way a gang waits for its pods, but which users read: they must keep
 * up with the API server's pace, not wait for every burst of pod creates to end. The pass
 * sends them apart from the write gate's other bookkeeping, under rules of its own:
 *
 *   - at most one write of a job in flight: a job's next write waits until the one before
 *     is answered, and then goes stale, since it was planned from the object before that
 *     answer (its resourceVersion could only meet a conflict): its owner plans the job
 *     again from the answer, with the queue's newest verdict, so the newest content wins
 *     and the positions a job went through in the meantime are never written;
 *   - a job has one waiting write at most: a newer plan of the job supersedes the waiting
 *     one before it is made (controller.c), so a cycle that moves a job again only changes
 *     what its one write will say;
 *   - at most TJ_STATUS_PASS_MAX_IN_FLIGHT writes in flight, whatever else goes out:
 *     urgent writes (pod creates and deletes, a failure's status, an admitted gang's
 *     writes) never wait for the pass, and an admitted gang's plan runs ahead of the queued
 *     jobs' (controller/workqueue.h, tj_workqueue_add_first), but a pass that shrank while
 *     they go out fell far behind a plain client under a burst of admissions. The pace of
 *     the pass is its width over the time a write takes, and among a burst's other writes
 *     a status patch takes 0.3 s with 32 in flight (as many as a plain client's
 *     connections) and 0.6 s with 96: about 130 writes a second with 32, 180 with 96
 *     (docs/benchmarks.md, "Queued jobs' status writes"). The API server runs a
 *     connection's streams at once, up to 100 of them (kube-apiserver's limit; libcurl
 *     opens another connection past it), so the pass alone never needs a second one.
 *
 * The first rule holds for every status write of a job, not only the pass's: a status patch
 * sent outside it (an admitted job's progress, a restart recorded) counts its job in flight
 * too (tj_status_pass_begin), without taking a place of the pass's width, and the job's
 * next status write, of the pass or not, waits behind it and goes stale as above. Two plans
 * of one job, the second made before the first's answer, otherwise both sent their patch,
 * and the second met a conflict (docs/benchmarks.md, "Admission at scale").
 *
 * Waiters go in the order they came. This file is the pass's bookkeeping, with no clock and
 * no I/O; the write gate (write_gate.h) runs it on the loop and calls the waiters back. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "base/list.h"

#define TJ_STATUS_PASS_MAX_IN_FLIGHT 96
/* Status writes sent outside the pass that count their job in flight, at most: the write
 * gate's deferrable writes in flight (TJ_WRITE_GATE_MAX_DEFERRED) and a status patch of each
 * reconcile in flight fit. A write past them goes untracked, as before the rule. */
#define TJ_STATUS_PASS_MAX_OTHERS 64

enum tj_status_pass_state {
	TJ_STATUS_PASS_IDLE,    /* in no list */
	TJ_STATUS_PASS_QUEUED,  /* waits for its turn */
	TJ_STATUS_PASS_BLOCKED, /* waits for its job's write in flight to be answered */
	TJ_STATUS_PASS_STALE,   /* that write was answered: to be planned again */
};

struct tj_status_pass_waiter;

/* What the write gate calls back: release when the waiter's turn has come (its job counts as
 * in flight until tj_status_pass_done), stale when it went stale. */
typedef void (*tj_status_pass_fn)(struct tj_status_pass_waiter *w, void *userdata);

/* One job's waiting writes; embedded in its owner, which must not free it while it is in a
 * list (tj_status_pass_remove first). */
struct tj_status_pass_waiter {
	struct tj_link link; /* in the list it is in */
	const char *key;     /* borrowed: the job's "namespace/name", valid until done */
	enum tj_status_pass_state state;
	tj_status_pass_fn release, stale;
	void *userdata;
};

/* A job with a write in flight, and its next waiter, blocked until that write is answered. */
struct tj_status_pass_slot {
	const char *key; /* borrowed from the waiter released, or the sender */
	struct tj_status_pass_waiter *blocked; /* borrowed; NULL */
	bool other;                            /* sent outside the pass: not in its width */
};

struct tj_status_pass {
	struct tj_list queued; /* of waiters, in the order they came */
	struct tj_list stale;  /* of waiters to be called back as stale */
	struct tj_status_pass_slot slots[TJ_STATUS_PASS_MAX_IN_FLIGHT + TJ_STATUS_PASS_MAX_OTHERS];
	/* Jobs with a status write in flight, in slots[0 .. n_in_flight + n_others): the ones
	 * the pass released (its width), and the others. */
	size_t n_in_flight;
	size_t n_others;
	size_t n_blocked;
};

/* Queues w, whose key is set: behind the others, or blocked when its job has a write in
 * flight. A waiter that was blocked there already (its owner failed to supersede it) goes
 * stale. */
void tj_status_pass_add(struct tj_status_pass *p, struct tj_status_pass_waiter *w);

/* Takes w out of whatever list holds it; no callback of it will run. */
void tj_status_pass_remove(struct tj_status_pass *p, struct tj_status_pass_waiter *w);

/* The next waiter whose turn has come, taken out of the queue with its job counted in
 * flight, or NULL when none may go: the queue is empty, or budget writes are in flight. */
struct tj_status_pass_waiter *tj_status_pass_next(struct tj_status_pass *p, size_t budget);

/* A status write of the job of key is sent outside the pass: the job counts in flight until
 * tj_status_pass_done. False, changing nothing, when the job has a write in flight already
 * or TJ_STATUS_PASS_MAX_OTHERS others are: the write goes untracked, and its sender must not
 * call tj_status_pass_done for it. */
bool tj_status_pass_begin(struct tj_status_pass *p, const char *key);

/* Whether the job of key has a status write in flight, of the pass or not. */
bool tj_status_pass_in_flight(const struct tj_status_pass *p, const char *key);

/* The job of key has no more write in flight (answered, or never sent): the waiter blocked
 * behind it goes stale. A key not in flight changes nothing. */
void tj_status_pass_done(struct tj_status_pass *p, const char *key);

/* A waiter gone stale, taken out of the pass, or NULL. */
struct tj_status_pass_waiter *tj_status_pass_take_stale(struct tj_status_pass *p);

/* Whether the pass holds waiters the gate must look at again (queued or stale). */
bool tj_status_pass_pending(const struct tj_status_pass *p);
