/* Expectations: the pods a reconcile has created, deleted or ungated whose writes the pod
 * cache has not shown yet, by name (the idea of client-go's ControllerExpectations). A newer
 * plan of the same job, made before the watch has brought those pods, would not see them and
 * would create them again, only to be told AlreadyExists; made before the watch has brought a
 * deletion, it would take a pod on its way out for a live one (a job stopped for preemption
 * would then want only the ranks whose pods are already gone: a part of its gang); made
 * before the watch has brought an ungate, it would take the gate off again (each gang's
 * other pods' events bring such plans). So a job whose expectations are outstanding is not
 * planned until the cache has shown every pod it created, every pod it deleted gone or
 * being deleted and every pod it ungated without the gate (each at the job's check or at the
 * pod's own event), or their deadline has passed. The pod events that fill the cache queue
 * the job again. Which of the two ended the wait tells whether the cache has caught up with
 * the job's last pod writes: a created pod missing after it was seen is gone. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/plan/plan.h"

struct tj_expectations;

/* What is expected of a pod. */
enum tj_expected {
	TJ_EXPECT_CREATED, /* the cache has it */
	TJ_EXPECT_GONE,    /* the cache has no such pod, or shows it being deleted */
	TJ_EXPECT_UNGATED, /* as GONE, or the cache shows it without the gang's gate */
};

struct tj_expectations *tj_expectations_new(void);

/* Accepts NULL; returns NULL. */
struct tj_expectations *tj_expectations_free(struct tj_expectations *x);

/* Starts plan through start (the executor, bound by the caller), which takes the plan: key
 * first expects the pods the plan creates, deletes and ungates, until deadline_ms (a plan that does
 * neither changes nothing; without memory key expects nothing, and a repeated create is adopted
 * as AlreadyExists). If start fails, those creates were never sent: key expects nothing
 * again, so that the next plan does not wait for them until the deadline. Returns what
 * start returned. */
int tj_expectations_start_plan(struct tj_expectations *x, const char *key, struct tj_plan *plan,
                               uint64_t deadline_ms, int (*start)(struct tj_plan *plan, void *ctx),
                               void *ctx);

/* key expects nothing any more (a failed write, a deleted job). */
void tj_expectations_forget(struct tj_expectations *x, const char *key);

/* What tj_expectations_check finds of a key. */
enum tj_expectations_verdict {
	TJ_EXPECTATIONS_NONE,    /* it expects nothing (none set, or forgotten) */
	TJ_EXPECTATIONS_SEEN,    /* the cache showed every pod it expected, before the deadline */
	TJ_EXPECTATIONS_EXPIRED, /* the deadline passed first */
	TJ_EXPECTATIONS_WAITING, /* not yet: it is not to be planned */
};

/* Whether key may be planned at now_ms: anything but TJ_EXPECTATIONS_WAITING, after which
 * key's expectations are forgotten. A pod is seen once seen(name, what, ctx) is true (the
 * cache shows what is expected of it), here or at one of its events
 * (tj_expectations_observe). While waiting, *wait_ms (if not NULL) receives the time left
 * until the deadline. */
enum tj_expectations_verdict
tj_expectations_check(struct tj_expectations *x, const char *key, uint64_t now_ms,
                      bool (*seen)(const char *name, enum tj_expected what, void *ctx), void *ctx,
                      uint64_t *wait_ms);

/* An event of key's pod name: if key expects something of the pod and seen(name, what, ctx)
 * says the cache shows it now, it is seen for good. A pod created and deleted again before
 * the job's next check counts as seen: its add event showed it. */
void tj_expectations_observe(struct tj_expectations *x, const char *key, const char *name,
                             bool (*seen)(const char *name, enum tj_expected what, void *ctx),
                             void *ctx);
