#include "controller/stall_clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "informers/store.h"

struct entry {
	uint64_t digest; /* the progress last seen (trainjob.h, progress_digest) */
	int64_t since;   /* when it was first seen */
	char uid[64];    /* the job's: another job of the same name starts afresh */
	char key[];      /* "namespace/name" */
};

struct tj_stall_clock {
	struct tj_store *entries; /* owned; struct entry by key */
};

static int entry_key(const void *obj, char *buf, size_t size)
{
	const struct entry *e = obj;
	size_t len = strlen(e->key);

	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, e->key, len + 1);
	return 0;
}

static const struct tj_store_ops entry_ops = {
	.free = free,
	.key = entry_key,
};

int tj_stall_clock_new(struct tj_stall_clock **ret)
{
	struct tj_stall_clock *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	r = tj_store_new(&entry_ops, &c->entries);
	if (r < 0) {
		free(c);
		return r;
	}
	*ret = c;
	return 0;
}

struct tj_stall_clock *tj_stall_clock_free(struct tj_stall_clock *c)
{
	if (!c)
		return NULL;
	tj_store_free(c->entries);
	free(c);
	return NULL;
}

int64_t tj_stall_clock_see(struct tj_stall_clock *c, const char *key, const struct tj_trainjob *job,
                           int64_t now)
{
	const struct entry *old = tj_store_get(c->entries, key);
	uint64_t digest = job->status.progress_digest;
	size_t len = strlen(key);
	struct entry *e;

	/* A finished job is judged no more: its entry would stay as long as the TrainJob. */
	if (!digest || tj_trainjob_status_is_true(&job->status, TJ_CONDITION_COMPLETE) ||
	    tj_trainjob_status_is_true(&job->status, TJ_CONDITION_FAILED)) {
		tj_store_delete(c->entries, key, NULL);
		return 0;
	}
	if (old && old->digest == digest && strcmp(old->uid, job->uid) == 0)
		return old->since;
	if (len >= TJ_STORE_KEY_MAX || strlen(job->uid) >= sizeof(e->uid) ||
	    !(e = malloc(sizeof(*e) + len + 1)))
		return 0;
	e->digest = digest;
	e->since = now;
	memcpy(e->uid, job->uid, strlen(job->uid) + 1);
	memcpy(e->key, key, len + 1);
	if (tj_store_upsert(c->entries, e, NULL) < 0) {
		free(e);
		return 0;
	}
	return now;
}

void tj_stall_clock_forget(struct tj_stall_clock *c, const char *key)
{
	tj_store_delete(c->entries, key, NULL);
}
