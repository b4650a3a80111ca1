/* The decisions of core/v1 Event recording, without the I/O: whether an event is new (create
 * an Event object), a repeat (patch count and lastTimestamp of the existing one), or spam
 * (drop it). The rules are client-go's record package (tools/record/events_cache.go):
 * - identical events (same object, type, reason and message) are one Event object whose
 *   count and lastTimestamp grow;
 * - each object has a token bucket, burst 25, refilled one token per 300 s; an event that
 *   finds the bucket empty is dropped, so a crash loop cannot flood the API server;
 * - both caches are LRU-bounded (4096 entries).
 * Not done: client-go's folding of more than 10 similar events (same reason, different
 * messages) within 600 s into one "(combined from similar events)" event. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reconcilers/trainjob.h"

#define TJ_EVENT_BURST          25
#define TJ_EVENT_REFILL_SECONDS 300
#define TJ_EVENT_CACHE_SIZE     4096

/* The event, borrowed for the call. */
struct tj_event_key {
	const char *namespace; /* of the involved object */
	const char *name;      /* of the involved object */
	const char *uid;       /* of the involved object */
	bool warning;          /* type Warning, else Normal */
	const char *reason;
	const char *message;
};

enum tj_event_verdict {
	TJ_EVENT_CREATE, /* POST a new Event named name, count 1 */
	TJ_EVENT_PATCH,  /* PATCH Event name: count and lastTimestamp */
	TJ_EVENT_DROP,   /* the object's spam budget is spent */
};

struct tj_event_decision {
	enum tj_event_verdict verdict;
	char name[TJ_NAME_MAX]; /* the Event's name: "<object>.<unix nanos in hex>" */
	int count;
	int64_t first_timestamp; /* unix seconds */
	int64_t last_timestamp;  /* unix seconds */
};

struct tj_event_cache;

/* An empty cache. NULL on -ENOMEM. */
struct tj_event_cache *tj_event_cache_new(void);

/* Accepts NULL; returns NULL. */
struct tj_event_cache *tj_event_cache_free(struct tj_event_cache *cache);

/* Decides what to do with one occurrence of an event at now_ns (unix nanoseconds; the
 * caller reads the clock). Returns 0 or -ENOMEM. */
int tj_event_decide(struct tj_event_cache *cache, const struct tj_event_key *key, int64_t now_ns,
                    struct tj_event_decision *ret);

/* Forgets an event, so that its next occurrence creates a new Event: for when the patch of
 * an existing one finds it gone (the API server expires events after an hour). */
void tj_event_forget(struct tj_event_cache *cache, const struct tj_event_key *key);
