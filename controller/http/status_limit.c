#include "controller/http/status_limit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char key[TJ_STATUS_LIMIT_KEY_MAX];
	uint64_t written_ms; /* the last write allowed */
};

struct tj_status_limit {
	uint64_t interval_ms;
	size_t capacity;
	size_t n;
	struct entry entries[]; /* owned with the struct */
};

int tj_status_limit_new(size_t capacity, uint64_t interval_ms, struct tj_status_limit **ret)
{
	struct tj_status_limit *l;

	if (capacity == 0 || interval_ms == 0)
		return -EINVAL;
	l = calloc(1, sizeof(*l) + capacity * sizeof(l->entries[0]));
	if (!l)
		return -ENOMEM;
	l->interval_ms = interval_ms;
	l->capacity = capacity;
	*ret = l;
	return 0;
}

struct tj_status_limit *tj_status_limit_free(struct tj_status_limit *l)
{
	free(l);
	return NULL;
}

/* An entry whose interval has passed limits nothing. */
static bool expired(const struct tj_status_limit *l, const struct entry *e, uint64_t now_ms)
{
	return now_ms < e->written_ms || now_ms - e->written_ms >= l->interval_ms;
}

/* A slot for a new key: a free one, else the first expired one; NULL when all are young. */
static struct entry *room(struct tj_status_limit *l, uint64_t now_ms, uint64_t *ret_wait)
{
	uint64_t wait = l->interval_ms;

	if (l->n < l->capacity)
		return &l->entries[l->n++];
	for (size_t i = 0; i < l->n; i++) {
		struct entry *e = &l->entries[i];

		if (expired(l, e, now_ms))
			return e;
		if (e->written_ms + l->interval_ms - now_ms < wait)
			wait = e->written_ms + l->interval_ms - now_ms;
	}
	*ret_wait = wait;
	return NULL;
}

uint64_t tj_status_limit_take(struct tj_status_limit *l, const char *key, uint64_t now_ms)
{
	uint64_t wait = 0;
	struct entry *e;

	if (strlen(key) >= TJ_STATUS_LIMIT_KEY_MAX)
		return l->interval_ms;
	for (size_t i = 0; i < l->n; i++) {
		e = &l->entries[i];
		if (strcmp(e->key, key) != 0)
			continue;
		if (!expired(l, e, now_ms))
			return e->written_ms + l->interval_ms - now_ms;
		e->written_ms = now_ms;
		return 0;
	}
	e = room(l, now_ms, &wait);
	if (!e)
		return wait;
	strcpy(e->key, key);
	e->written_ms = now_ms;
	return 0;
}
