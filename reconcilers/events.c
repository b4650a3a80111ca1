#include "reconcilers/events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One entry of either table: an event seen (name, count, times) or an object's spam bucket
 * (tokens). Both tables are arrays searched linearly: they are bounded, and events are rare
 * next to everything else the controller does. The least recently used entry makes room. */
struct entry {
	char *key; /* owned; NULL for a free entry */
	uint64_t used;
	/* an event seen */
	char name[TJ_NAME_MAX];
	int count;
	int64_t first, last;
	/* an object's bucket */
	double tokens;
	int64_t refilled_ns;
};

struct table {
	struct entry *entries; /* owned array of cap, grown up to TJ_EVENT_CACHE_SIZE */
	size_t n, cap;
};

struct tj_event_cache {
	struct table seen;     /* by object, type, reason and message */
	struct table buckets;  /* by object */
	uint64_t clock;        /* a use counter for the LRU */
	uint64_t last_name_ns; /* the time in the newest Event name: names never repeat */
};

struct tj_event_cache *tj_event_cache_new(void)
{
	return calloc(1, sizeof(struct tj_event_cache));
}

static void table_clear(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->entries[i].key);
	free(t->entries);
	t->entries = NULL;
	t->n = t->cap = 0;
}

struct tj_event_cache *tj_event_cache_free(struct tj_event_cache *c)
{
	if (!c)
		return NULL;
	table_clear(&c->seen);
	table_clear(&c->buckets);
	free(c);
	return NULL;
}

static char *object_key(const struct tj_event_key *k)
{
	char *s;

	if (asprintf(&s, "%s\x1f%s\x1f%s", k->namespace, k->name, k->uid ? k->uid : "") < 0)
		return NULL;
	return s;
}

static char *event_key(const struct tj_event_key *k)
{
	char *s;

	if (asprintf(&s, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", k->namespace, k->name,
	             k->uid ? k->uid : "", k->warning ? "Warning" : "Normal", k->reason,
	             k->message) < 0)
		return NULL;
	return s;
}

static struct entry *lookup(struct table *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->entries[i].key, key) == 0)
			return &t->entries[i];
	return NULL;
}

/* The entry for key, taking ownership of key: the existing one, or a new one in a free or
 * the least recently used place (*fresh). */
static struct entry *upsert(struct table *t, char *key, uint64_t now_use, bool *fresh)
{
	struct entry *e = lookup(t, key);

	*fresh = !e;
	if (!e && t->n == t->cap && t->cap < TJ_EVENT_CACHE_SIZE) {
		size_t cap = t->cap ? t->cap * 4 : 16;
		struct entry *entries = realloc(t->entries, cap * sizeof(*entries));

		if (!entries) {
			free(key);
			return NULL;
		}
		t->entries = entries;
		t->cap = cap;
	}
	if (e) {
		free(key);
	} else if (t->n < t->cap) {
		e = &t->entries[t->n++];
	} else {
		e = &t->entries[0];
		for (size_t i = 1; i < t->n; i++)
			if (t->entries[i].used < e->used)
				e = &t->entries[i];
		free(e->key);
	}
	if (*fresh) {
		memset(e, 0, sizeof(*e));
		e->key = key;
	}
	e->used = now_use;
	return e;
}

/* Takes a token from the object's bucket; false if there is none. */
static bool take_token(struct entry *b, bool fresh, int64_t now_ns)
{
	const double per_ns = 1.0 / ((double)TJ_EVENT_REFILL_SECONDS * 1e9);

	if (fresh) {
		b->tokens = TJ_EVENT_BURST;
	} else if (now_ns > b->refilled_ns) {
		b->tokens += (double)(now_ns - b->refilled_ns) * per_ns;
		if (b->tokens > TJ_EVENT_BURST)
			b->tokens = TJ_EVENT_BURST;
	}
	b->refilled_ns = now_ns;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

int tj_event_decide(struct tj_event_cache *c, const struct tj_event_key *key, int64_t now_ns,
                    struct tj_event_decision *ret)
{
	char *okey = object_key(key), *ekey = event_key(key);
	struct tj_event_decision d = { .verdict = TJ_EVENT_DROP };
	int64_t now = now_ns / 1000000000;
	struct entry *b, *e;
	bool fresh;

	if (!okey || !ekey) {
		free(okey);
		free(ekey);
		return -ENOMEM;
	}
	c->clock++;
	b = upsert(&c->buckets, okey, c->clock, &fresh);
	if (!b) {
		free(ekey);
		return -ENOMEM;
	}
	if (!take_token(b, fresh, now_ns)) {
		free(ekey);
		*ret = d;
		return 0;
	}
	e = upsert(&c->seen, ekey, c->clock, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh) {
		/* Two events of one plan share its time: the later one's name takes the next
		 * nanosecond, as client-go's names differ by the time of each call. */
		uint64_t name_ns =
		        (uint64_t)now_ns > c->last_name_ns ? (uint64_t)now_ns : c->last_name_ns + 1;

		c->last_name_ns = name_ns;
		snprintf(e->name, sizeof(e->name), "%.200s.%llx", key->name,
		         (unsigned long long)name_ns);
		e->first = now;
		d.verdict = TJ_EVENT_CREATE;
	} else {
		d.verdict = TJ_EVENT_PATCH;
	}
	e->count++;
	e->last = now;
	snprintf(d.name, sizeof(d.name), "%s", e->name);
	d.count = e->count;
	d.first_timestamp = e->first;
	d.last_timestamp = e->last;
	*ret = d;
	return 0;
}

void tj_event_forget(struct tj_event_cache *c, const struct tj_event_key *key)
{
	char *ekey = event_key(key);
	struct entry *e = ekey ? lookup(&c->seen, ekey) : NULL;

	free(ekey);
	if (!e)
		return;
	free(e->key);
	*e = c->seen.entries[--c->seen.n];
	if (e != &c->seen.entries[c->seen.n])
		memset(&c->seen.entries[c->seen.n], 0, sizeof(*e));
}
