/* Expectations: the pods a reconcile has created, deleted or ungated whose writes the pod
 * cache has not shown yet, by name (the idea of client-go's ControllerExpectations). A newer
 * plan of the same job, made before the watch has brought those pods, would not see them and
 * would create them again, only to be told AlreadyExists; made before the watch has brought a
 * deletion, it would take a pod on its way out for a live one (a job stopped for preemption
 * would then want only the ranks whose pods are already gone: a part of its gang); made
 * before the watch has brought an ungate, it would take the gate off again (each gang's
 * other pods' events bring such plans). So a job whose expectations are outstanding is not
 * planned until the cache has every pod it created, shows every pod it deleted gone or being
 * deleted and every pod it ungated without the gate, or their deadline has passed. The pod
 * events that fill the cache queue the job again. */
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

/* Whether key may be planned at now_ms: it expects nothing, or every pod it expects is
 * seen (seen(name, what, ctx) is true: the cache shows what is expected of the pod), or the
 * deadline has passed; key's expectations are then forgotten. Otherwise *wait_ms (if not
 * NULL) receives the time left until the deadline. */
bool tj_expectations_met(struct tj_expectations *x, const char *key, uint64_t now_ms,
                         bool (*seen)(const char *name, enum tj_expected what, void *ctx),
                         void *ctx, uint64_t *wait_ms);
