/* Accounting records, as Slurm's accounting database keeps the jobs that ended: what a
 * deleted TrainJob leaves behind, so that its GPU-seconds still count for its namespace's
 * fair share (reconcilers/admission/fair_share.h) and kubectl sacct still lists it. Pure functions
 * of the job and the time.
 *
 * - Where. One ConfigMap per namespace, TJ_ACCOUNTING_CONFIGMAP, labelled
 *   TJ_ACCOUNTING_LABEL=true, in the namespace of the jobs (whoever may read the namespace's
 *   ConfigMaps sees its jobs' records, nobody else). One key per deleted job, its uid; the
 *   value is the job as a TrainJob object trimmed to what the records are read for: its
 *   name, namespace, uid, creation time and the annotations kubectl sbatch writes
 *   (submitted-by, partition, qos); its runtime and number of nodes; its whole status (its
 *   state, start and end, GPU-seconds and where they are counted until, restarts,
 *   preemptions); and the annotation TJ_ACCOUNTING_DELETED_AT, when it was deleted. A job
 *   deleted before it ended (neither Complete nor Failed) also has that time as its
 *   metadata.deletionTimestamp: kubectl sacct shows it CANCELLED, as Slurm does a job
 *   cancelled.
 * - How long. A record is kept for the retention (admission.accountingRetention, 30 days
 *   unless set) from its deletion, and a namespace keeps at most TJ_ACCOUNTING_MAX_RECORDS
 *   of them, the oldest going first: a ConfigMap holds at most 1 MiB, and a record is at
 *   most TJ_ACCOUNTING_RECORD_MAX bytes. With the default half-life of 7 days, what a
 *   record older than 30 days counts is less than 6 % of what it held. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

#define TJ_ACCOUNTING_CONFIGMAP   "trainjob-accounting"
#define TJ_ACCOUNTING_LABEL       TJ_LABEL_PREFIX "accounting"
#define TJ_ACCOUNTING_DELETED_AT  TJ_LABEL_PREFIX "deleted-at"
#define TJ_ACCOUNTING_MAX_RECORDS 512
#define TJ_ACCOUNTING_RECORD_MAX  1900
#define TJ_ACCOUNTING_RETENTION   (30 * 86400) /* the default, seconds */
#define TJ_ACCOUNTING_UID_MAX     64

/* What a record says of a job's use, for the fair share, and when it goes. */
struct tj_accounting_entry {
	char uid[TJ_ACCOUNTING_UID_MAX];
	char namespace[TJ_NAME_MAX];
	int64_t deleted;       /* unix seconds */
	int64_t gpu_seconds;   /* status.gpuSeconds */
	int64_t start;         /* status.startTime; 0 if it never started */
	int64_t counted_until; /* status.gpuSecondsCountedUntil */
};

/* The record of job, deleted at deleted (unix seconds), as the compact JSON text stored in
 * the ConfigMap (owned by the caller, at most TJ_ACCOUNTING_RECORD_MAX bytes: the status's
 * messages are cut to fit), or NULL: without memory (errno ENOMEM), or for a job that does
 * not fit even with its messages cut away (E2BIG). */
char *tj_accounting_record(const struct tj_trainjob *job, int64_t deleted);

/* Reads a record's text (a value of the ConfigMap of namespace; at most
 * TJ_ACCOUNTING_RECORD_MAX bytes) into *ret, its uid from the record itself. 0, or -EINVAL
 * for a text that is not a record (too long, not JSON, no uid or deletion time), -ENOMEM. */
int tj_accounting_parse(const char *text, size_t len, const char *namespace,
                        struct tj_accounting_entry *ret);

/* The TrainJob object of a record's text, for the views that list jobs (kubectl sacct); NULL
 * for a text that is not a record. */
cJSON *tj_accounting_object(const char *text, size_t len);

/* Which records of one namespace go at now: those deleted more than retention seconds ago,
 * then the oldest past TJ_ACCOUNTING_MAX_RECORDS. Sets drop[i] for entries[i] (n of them,
 * in any order); returns how many go. */
size_t tj_accounting_prune(const struct tj_accounting_entry *entries, size_t n, int64_t now,
                           int64_t retention, bool *drop);
