/* The keeper of the accounting records (reconcilers/usage/accounting.h) on the cluster: while the
 * controller leads, it reads the records of each namespace asked for (a GET of the
 * namespace's ConfigMap trainjob-accounting: the controller may read and patch that one
 * ConfigMap of a namespace, no other), writes the record of each TrainJob deleted (a merge
 * patch of that ConfigMap, created when it is missing), and drops the records the
 * retention or the most a namespace keeps let go, in the same patch. Their GPU-seconds count
 * for the fair share (controller/admission/admitter_share.c). A write the API server refuses is
 * logged with the job's name (the job itself is gone), and its record counts no more. The
 * records known are read again every 30 seconds, so that those of a namespace deleted since
 * stop counting, as for any other reader of the cluster. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <uv.h>

#include "kube/client.h"
#include "reconcilers/trainjob.h"
#include "reconcilers/usage/accounting.h"

struct tj_accounting;

/* client borrowed; NULL: records are neither loaded nor written (tests without an API
 * server). */
int tj_accounting_new(uv_loop_t *loop, struct tj_client *client, struct tj_accounting **ret);

/* Accepts NULL; returns NULL. Requests in flight are cancelled. */
struct tj_accounting *tj_accounting_free(struct tj_accounting *a);

/* Seconds a record is kept after its job's deletion (0: until a namespace has too many). */
void tj_accounting_set_retention(struct tj_accounting *a, int64_t seconds);

/* The controller leads, or no longer does: the records known are forgotten either way (a
 * new leadership reads them again: another leader may have written some). */
void tj_accounting_set_active(struct tj_accounting *a, bool active);

/* The records of namespace ns are read, unless they were asked for already. */
void tj_accounting_want(struct tj_accounting *a, const char *ns);

/* Calls fn(userdata) when the records asked for have all been read (or one could not be:
 * a read that failed is retried, and counts as read meanwhile, logged, so that the queue
 * does not wait for it for ever). */
void tj_accounting_on_loaded(struct tj_accounting *a, void (*fn)(void *userdata), void *userdata);

/* Whether the records asked for are read (see tj_accounting_on_loaded). */
bool tj_accounting_loaded(const struct tj_accounting *a);

/* The TrainJob job was deleted at now while the controller leads: its record is kept. */
void tj_accounting_job_deleted(struct tj_accounting *a, const struct tj_trainjob *job, int64_t now);

/* The records known, of every namespace (borrowed until the next call that changes them). */
const struct tj_accounting_entry *tj_accounting_entries(const struct tj_accounting *a, size_t *n);
