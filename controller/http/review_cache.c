#include "controller/http/review_cache.h"
#include "controller/http/review_cache_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint8_t key[TJ_REVIEW_KEY_SIZE];
	uint64_t expires_ms;
	enum tj_review_decision decision;
	bool has_user;
	struct tj_review_user user; /* owned when has_user */
};

/* A linear table: the callers are a handful of scrapers, so a few hundred entries at most
 * are ever scanned, and only when a request comes in. */
struct tj_review_cache {
	struct entry *entries; /* owned; capacity of them, n used */
	size_t capacity, n;
};

int tj_review_cache_new(size_t capacity, struct tj_review_cache **ret)
{
	struct tj_review_cache *c;

	if (capacity == 0)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->entries = calloc(capacity, sizeof(*c->entries));
	if (!c->entries) {
		free(c);
		return -ENOMEM;
	}
	c->capacity = capacity;
	*ret = c;
	return 0;
}

static void entry_clear(struct entry *e)
{
	if (e->has_user)
		tj_review_user_clear(&e->user);
	*e = (struct entry){ 0 };
}

struct tj_review_cache *tj_review_cache_free(struct tj_review_cache *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		entry_clear(&c->entries[i]);
	free(c->entries);
	free(c);
	return NULL;
}

static struct entry *find(const struct tj_review_cache *c, const uint8_t *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (memcmp(c->entries[i].key, key, TJ_REVIEW_KEY_SIZE) == 0)
			return &c->entries[i];
	return NULL;
}

int tj_review_cache_get(const struct tj_review_cache *c, const uint8_t key[TJ_REVIEW_KEY_SIZE],
                        uint64_t now_ms, const struct tj_review_user **ret_user)
{
	const struct entry *e = find(c, key);

	if (!e || now_ms >= e->expires_ms)
		return -ENOENT;
	if (ret_user)
		*ret_user = e->has_user ? &e->user : NULL;
	return (int)e->decision;
}

static void remove_at(struct tj_review_cache *c, size_t i)
{
	entry_clear(&c->entries[i]);
	c->entries[i] = c->entries[--c->n];
	c->entries[c->n] = (struct entry){ 0 };
}

/* Makes room for one more entry. */
static void evict(struct tj_review_cache *c, uint64_t now_ms)
{
	size_t soonest = 0;

	for (size_t i = c->n; i-- > 0;)
		if (now_ms >= c->entries[i].expires_ms)
			remove_at(c, i);
	if (c->n < c->capacity)
		return;
	for (size_t i = 1; i < c->n; i++)
		if (c->entries[i].expires_ms < c->entries[soonest].expires_ms)
			soonest = i;
	remove_at(c, soonest);
}

int tj_review_cache_put(struct tj_review_cache *c, const uint8_t key[TJ_REVIEW_KEY_SIZE],
                        enum tj_review_decision decision, const struct tj_review_user *user,
                        uint64_t now_ms, uint64_t ttl_ms)
{
	struct entry fresh = { .decision = decision, .expires_ms = now_ms + ttl_ms };
	struct entry *e;
	int r;

	if (decision != TJ_REVIEW_ALLOW && decision != TJ_REVIEW_DENY)
		return -EINVAL;
	memcpy(fresh.key, key, TJ_REVIEW_KEY_SIZE);
	if (user) {
		r = tj_review_user_copy(user, &fresh.user);
		if (r < 0)
			return r;
		fresh.has_user = true;
	}
	e = find(c, key);
	if (!e) {
		if (c->n == c->capacity)
			evict(c, now_ms);
		e = &c->entries[c->n++];
	} else {
		entry_clear(e);
	}
	*e = fresh;
	return 0;
}

size_t tj_review_cache_size(const struct tj_review_cache *c)
{
	return c->n;
}
