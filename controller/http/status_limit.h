/* How often the trainer status server writes one TrainJob's status: at most once an interval
 * per job, so that the pods of a job that report every step (every rank of a large job, or a
 * script that reports in a tight loop) cost the API server one write an interval. A report
 * that comes too soon is refused with the time to wait (429 and Retry-After); its newer
 * values come with the next report, so only the intermediate values are skipped. Pure: the
 * time is an input. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* One write a second per job and replica: a progress bar moves no faster for a person. */
#define TJ_STATUS_LIMIT_INTERVAL_MS 1000
/* Jobs remembered at once. An entry older than the interval allows the next write anyway,
 * so it is forgotten when room is needed; with every entry younger (that many jobs written
 * within one interval) a new job waits its turn as well. */
#define TJ_STATUS_LIMIT_JOBS 1024
/* Longest key: "namespace/name" of two DNS labels. */
#define TJ_STATUS_LIMIT_KEY_MAX 128

struct tj_status_limit;

/* -EINVAL for a capacity or interval of 0, -ENOMEM. */
int tj_status_limit_new(size_t capacity, uint64_t interval_ms, struct tj_status_limit **ret);

/* Accepts NULL; returns NULL. */
struct tj_status_limit *tj_status_limit_free(struct tj_status_limit *l);

/* Whether key ("ns/name") may be written at now_ms: 0, and the write is counted; or the
 * milliseconds to wait before it may (key too long for TJ_STATUS_LIMIT_KEY_MAX is refused
 * for an interval: no job has such a key). */
uint64_t tj_status_limit_take(struct tj_status_limit *l, const char *key, uint64_t now_ms);
