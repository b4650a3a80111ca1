#include "informers/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informers/hash.h"

/* Both hash tables of the store (objects by key, index buckets by value) hold pointers to
 * items that start with this header, and find an item's string through the table's
 * item_key function. Open addressing with linear probing, at most 3/4 full. */
struct hnode {
	uint32_t hash;
};

struct table {
	struct hnode **slots; /* owned array of cap slots; the items are owned by the store */
	size_t cap;           /* a power of two, or 0 */
	size_t count;
	const char *(*item_key)(const void *ctx, const struct hnode *item);
	const void *ctx; /* borrowed; passed to item_key */
};

/* An object's place in one index: a doubly linked list per index value. */
struct link {
	struct entry *prev, *next; /* borrowed */
	struct bucket *bucket;     /* borrowed; NULL if the object is not in this index */
};

struct entry {
	struct hnode node;
	void *obj; /* owned */
	struct link links[];
	/* followed by the key, NUL-terminated */
};

struct bucket {
	struct hnode node;
	size_t count;
	struct entry *head; /* borrowed */
	char value[];
};

struct tj_store {
	const struct tj_store_ops *ops;             /* borrowed */
	struct table entries;                       /* owns the entries and their objects */
	struct table buckets[TJ_STORE_MAX_INDEXES]; /* own the buckets */
};

/* ---- the hash table ---- */

static size_t probe_start(const struct table *t, uint32_t hash)
{
	return hash & (t->cap - 1);
}

static size_t next_slot(const struct table *t, size_t i)
{
	return (i + 1) & (t->cap - 1);
}

/* The slot holding the item with that key, or the empty slot where it would go. */
static size_t table_slot(const struct table *t, uint32_t hash, const char *key)
{
	size_t i;

	for (i = probe_start(t, hash); t->slots[i]; i = next_slot(t, i))
		if (t->slots[i]->hash == hash && strcmp(t->item_key(t->ctx, t->slots[i]), key) == 0)
			break;
	return i;
}

static struct hnode *table_get(const struct table *t, uint32_t hash, const char *key)
{
	return t->cap ? t->slots[table_slot(t, hash, key)] : NULL;
}

/* Makes room for one more item. */
static int table_reserve(struct table *t)
{
	struct hnode **n;
	size_t ncap;

	if ((t->count + 1) * 4 <= t->cap * 3)
		return 0;
	ncap = t->cap ? t->cap * 2 : 16;
	n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = t->slots[i]->hash & (ncap - 1); n[j]; j = (j + 1) & (ncap - 1))
			;
		n[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = n;
	t->cap = ncap;
	return 0;
}

/* Inserts an item whose key is not in the table; table_reserve() must have succeeded. */
static void table_insert(struct table *t, struct hnode *item)
{
	size_t i;

	for (i = probe_start(t, item->hash); t->slots[i]; i = next_slot(t, i))
		;
	t->slots[i] = item;
	t->count++;
}

static void table_remove(struct table *t, const struct hnode *item)
{
	size_t i, j;

	for (i = probe_start(t, item->hash); t->slots[i] != item; i = next_slot(t, i))
		;
	/* Backward-shift deletion keeps every probe run free of holes. */
	for (j = next_slot(t, i); t->slots[j]; j = next_slot(t, j)) {
		size_t home = probe_start(t, t->slots[j]->hash);

		if (((j - home) & (t->cap - 1)) >= ((j - i) & (t->cap - 1))) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = NULL;
	t->count--;
}

/* ---- entries and index buckets ---- */

static const char *entry_key(const void *ctx, const struct hnode *item)
{
	const struct tj_store *store = ctx;

	/* The key follows the links, one per index of the store. */
	return (const char *)(((const struct entry *)item)->links + store->ops->n_indexes);
}

static const char *bucket_key(const void *ctx, const struct hnode *item)
{
	return ((const struct bucket *)item)->value;
}

static uint32_t hash_str(const char *s)
{
	return tj_hash(s, strlen(s));
}

static struct entry *find_entry(const struct tj_store *store, const char *key)
{
	return (struct entry *)table_get(&store->entries, hash_str(key), key);
}

static void unlink_index(struct tj_store *store, struct entry *e, size_t i)
{
	struct link *l = &e->links[i];
	struct bucket *b = l->bucket;

	if (!b)
		return;
	if (l->prev)
		l->prev->links[i].next = l->next;
	else
		b->head = l->next;
	if (l->next)
		l->next->links[i].prev = l->prev;
	*l = (struct link){ 0 };
	if (--b->count == 0) {
		table_remove(&store->buckets[i], &b->node);
		free(b);
	}
}

static void link_index(struct entry *e, size_t i, struct bucket *b)
{
	struct link *l = &e->links[i];

	l->bucket = b;
	l->prev = NULL;
	l->next = b->head;
	if (b->head)
		b->head->links[i].prev = e;
	b->head = e;
	b->count++;
}

/* Drops the buckets that prepare_buckets() created but nothing was linked into. */
static void release_empty(struct tj_store *store, struct bucket **buckets)
{
	for (size_t i = 0; i < store->ops->n_indexes; i++) {
		if (buckets[i] && buckets[i]->count == 0) {
			table_remove(&store->buckets[i], &buckets[i]->node);
			free(buckets[i]);
		}
	}
}

/* Finds or creates the bucket of each index for obj (NULL where obj is not indexed). */
static int prepare_buckets(struct tj_store *store, const void *obj, struct bucket **ret)
{
	char value[TJ_STORE_KEY_MAX];
	size_t i;
	int r;

	for (i = 0; i < store->ops->n_indexes; i++)
		ret[i] = NULL;
	for (i = 0; i < store->ops->n_indexes; i++) {
		struct table *t = &store->buckets[i];
		struct bucket *b;
		uint32_t h;
		size_t len;

		r = store->ops->index[i](obj, value, sizeof(value));
		if (r < 0)
			goto fail;
		if (r == 0)
			continue;
		len = strlen(value);
		h = tj_hash(value, len);
		b = (struct bucket *)table_get(t, h, value);
		if (!b) {
			r = table_reserve(t);
			if (r < 0)
				goto fail;
			b = calloc(1, sizeof(*b) + len + 1);
			if (!b) {
				r = -ENOMEM;
				goto fail;
			}
			b->node.hash = h;
			memcpy(b->value, value, len + 1);
			table_insert(t, &b->node);
		}
		ret[i] = b;
	}
	return 0;

fail:
	release_empty(store, ret);
	return r;
}

int tj_store_new(const struct tj_store_ops *ops, struct tj_store **ret)
{
	struct tj_store *store;

	if (ops->n_indexes > TJ_STORE_MAX_INDEXES)
		return -EINVAL;
	store = calloc(1, sizeof(*store));
	if (!store)
		return -ENOMEM;
	store->ops = ops;
	store->entries.item_key = entry_key;
	store->entries.ctx = store;
	for (size_t i = 0; i < TJ_STORE_MAX_INDEXES; i++)
		store->buckets[i].item_key = bucket_key;
	*ret = store;
	return 0;
}

struct tj_store *tj_store_free(struct tj_store *store)
{
	if (!store)
		return NULL;
	for (size_t i = 0; i < store->entries.cap; i++) {
		struct entry *e = (struct entry *)store->entries.slots[i];

		if (!e)
			continue;
		store->ops->free(e->obj);
		free(e);
	}
	free(store->entries.slots);
	for (size_t i = 0; i < store->ops->n_indexes; i++) {
		struct table *t = &store->buckets[i];

		for (size_t j = 0; j < t->cap; j++)
			free(t->slots[j]);
		free(t->slots);
	}
	free(store);
	return NULL;
}

size_t tj_store_len(const struct tj_store *store)
{
	return store->entries.count;
}

const void *tj_store_get(const struct tj_store *store, const char *key)
{
	const struct entry *e = find_entry(store, key);

	return e ? e->obj : NULL;
}

int tj_store_upsert(struct tj_store *store, void *obj, void **ret_old)
{
	size_t n_idx = store->ops->n_indexes;
	struct bucket *buckets[TJ_STORE_MAX_INDEXES];
	char key[TJ_STORE_KEY_MAX];
	struct entry *e;
	bool created = false;
	void *old = NULL;
	size_t len;
	uint32_t h;
	int r;

	r = store->ops->key(obj, key, sizeof(key));
	if (r < 0)
		return r;
	len = strlen(key);
	h = tj_hash(key, len);
	e = (struct entry *)table_get(&store->entries, h, key);
	if (!e) {
		r = table_reserve(&store->entries);
		if (r < 0)
			return r;
		e = calloc(1, sizeof(*e) + n_idx * sizeof(struct link) + len + 1);
		if (!e)
			return -ENOMEM;
		e->node.hash = h;
		memcpy((char *)(e->links + n_idx), key, len + 1);
		created = true;
	}
	r = prepare_buckets(store, obj, buckets);
	if (r < 0) {
		if (created)
			free(e);
		return r;
	}
	if (created)
		table_insert(&store->entries, &e->node);
	for (size_t i = 0; i < n_idx; i++) {
		if (e->links[i].bucket == buckets[i])
			continue;
		unlink_index(store, e, i);
		if (buckets[i])
			link_index(e, i, buckets[i]);
	}
	old = e->obj;
	e->obj = obj;
	if (ret_old)
		*ret_old = old;
	else if (old)
		store->ops->free(old);
	return 0;
}

static void *remove_entry(struct tj_store *store, struct entry *e)
{
	void *obj = e->obj;

	for (size_t i = 0; i < store->ops->n_indexes; i++)
		unlink_index(store, e, i);
	table_remove(&store->entries, &e->node);
	free(e);
	return obj;
}

int tj_store_key_of(char *buf, size_t size, const char *ns, const char *name)
{
	int n = ns && ns[0] ? snprintf(buf, size, "%s/%s", ns, name)
	                    : snprintf(buf, size, "%s", name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int tj_store_delete(struct tj_store *store, const char *key, void **ret_old)
{
	struct entry *e = find_entry(store, key);
	void *obj;

	if (!e)
		return -ENOENT;
	obj = remove_entry(store, e);
	if (ret_old)
		*ret_old = obj;
	else
		store->ops->free(obj);
	return 0;
}

int tj_store_swap(struct tj_store *a, struct tj_store *b)
{
	struct tj_store t;

	if (a->ops != b->ops)
		return -EINVAL;
	t = *a;
	*a = *b;
	*b = t;
	/* The entries table finds an entry's key through its store. */
	a->entries.ctx = a;
	b->entries.ctx = b;
	return 0;
}

size_t tj_store_index_count(const struct tj_store *store, size_t index, const char *value)
{
	const struct bucket *b;

	if (index >= store->ops->n_indexes)
		return 0;
	b = (const struct bucket *)table_get(&store->buckets[index], hash_str(value), value);
	return b ? b->count : 0;
}

int tj_store_collect_index(const struct tj_store *store, size_t index, const char *value,
                           const void ***ret, size_t *ret_n)
{
	size_t n = tj_store_index_count(store, index, value), i = 0;
	const void **objs = NULL, *obj;
	struct tj_store_iter it;

	if (n > 0) {
		objs = calloc(n, sizeof(*objs));
		if (!objs)
			return -ENOMEM;
	}
	tj_store_iter_index(store, index, value, &it);
	while ((obj = tj_store_iter_next(&it)))
		objs[i++] = obj;
	*ret = objs;
	*ret_n = n;
	return 0;
}

void tj_store_iter_init(const struct tj_store *store, struct tj_store_iter *it)
{
	*it = (struct tj_store_iter){ .store = store };
}

void tj_store_iter_index(const struct tj_store *store, size_t index, const char *value,
                         struct tj_store_iter *it)
{
	const struct bucket *b = NULL;

	if (index < store->ops->n_indexes)
		b = (const struct bucket *)table_get(&store->buckets[index], hash_str(value),
		                                     value);
	*it = (struct tj_store_iter){
		.store = store,
		.index = index,
		.next = b ? b->head : NULL,
		.by_index = true,
	};
}

/* How many slots ahead an iteration fetches the objects it will return. */
#define ITER_AHEAD 8

const void *tj_store_iter_next(struct tj_store_iter *it)
{
	const struct table *t = &it->store->entries;
	struct entry *e;

	if (it->by_index) {
		e = it->next;
		if (!e)
			return NULL;
		it->next = e->links[it->index].next;
		return e->obj;
	}
	while (it->slot < t->cap) {
		size_t i = it->slot++;

		/* The items lie apart in memory: the next ones are fetched ahead, their entries
		 * first, then, once those are in, the start of their objects. */
		if (i + 2 * ITER_AHEAD < t->cap && t->slots[i + 2 * ITER_AHEAD])
			__builtin_prefetch(t->slots[i + 2 * ITER_AHEAD]);
		if (i + ITER_AHEAD < t->cap && t->slots[i + ITER_AHEAD]) {
			const char *obj = ((struct entry *)t->slots[i + ITER_AHEAD])->obj;

			__builtin_prefetch(obj);
			__builtin_prefetch(obj + 64);
			__builtin_prefetch(obj + 128);
		}
		e = (struct entry *)t->slots[i];
		if (e)
			return e->obj;
	}
	return NULL;
}
