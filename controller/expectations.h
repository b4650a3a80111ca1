/* Expectations: the pods a reconcile has created that the pod cache has not shown yet, by
 * name (the idea of client-go's ControllerExpectations). A newer plan of the same job,
 * made before the watch has brought those pods, would not see them and would create them
 * again, only to be told AlreadyExists; so a job whose expectations are outstanding is not
 * planned until the cache has every expected pod, or their deadline has passed. The pod
 * events that fill the cache queue the job again. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tj_expectations;

struct tj_expectations *tj_expectations_new(void);

/* Accepts NULL; returns NULL. */
struct tj_expectations *tj_expectations_free(struct tj_expectations *x);

/* key (the job's "namespace/name") expects the n pods named (copied), until deadline_ms;
 * replaces what key expected before. 0, or -ENOMEM (then key expects nothing). */
int tj_expectations_expect(struct tj_expectations *x, const char *key, const char *const *names,
                           size_t n, uint64_t deadline_ms);

/* key expects nothing any more (a failed write, a deleted job). */
void tj_expectations_forget(struct tj_expectations *x, const char *key);

/* Whether key may be planned at now_ms: it expects nothing, or every pod it expects is
 * seen (seen(name, ctx) is true), or the deadline has passed; key's expectations are then
 * forgotten. Otherwise *wait_ms (if not NULL) receives the time left until the deadline. */
bool tj_expectations_met(struct tj_expectations *x, const char *key, uint64_t now_ms,
                         bool (*seen)(const char *name, void *ctx), void *ctx, uint64_t *wait_ms);

/* Keys with outstanding expectations. */
size_t tj_expectations_len(const struct tj_expectations *x);
