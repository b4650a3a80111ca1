/* Expectations: the pods a reconcile has created or deleted whose writes the pod cache has
 * not shown yet, by name (the idea of client-go's ControllerExpectations). A newer plan of
 * the same job, made before the watch has brought those pods, would not see them and would
 * create them again, only to be told AlreadyExists; made before the watch has brought a
 * deletion, it would take a pod on its way out for a live one (a job stopped for preemption
 * would then want only the ranks whose pods are already gone: a part of its gang). So a
 * job whose expectations are outstanding is not planned until the cache has every pod it
 * created and shows every pod it deleted gone or being deleted, or their deadline has
 * passed. The pod events that fill the cache queue the job again. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/plan/plan.h"

struct tj_expectations;

struct tj_expectations *tj_expectations_new(void);

/* Accepts NULL; returns NULL. */
struct tj_expectations *tj_expectations_free(struct tj_expectations *x);

/* Starts plan through start (the executor, bound by the caller), which takes the plan: key
 * first expects the pods the plan creates and deletes, until deadline_ms (a plan that does
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
 * seen (seen(name, gone, ctx) is true: for a create, gone false, the cache has the pod; for
 * a delete, gone true, the cache has no such pod or shows it being deleted), or the
 * deadline has passed; key's expectations are then forgotten. Otherwise *wait_ms (if not
 * NULL) receives the time left until the deadline. */
bool tj_expectations_met(struct tj_expectations *x, const char *key, uint64_t now_ms,
                         bool (*seen)(const char *name, bool gone, void *ctx), void *ctx,
                         uint64_t *wait_ms);
