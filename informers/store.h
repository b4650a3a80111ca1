/* The store: the cache of one resource, a hash table of projected objects keyed
 * "namespace/name" (or "name" for cluster-scoped objects) with secondary indexes, as
 * client-go's Indexer. It is generic over the object type: the ops say how to free an object,
 * compute its key and compute its value in each index.
 *
 * Objects in the store are owned by it and read-only for everyone else (a lister never
 * mutates a cached object). Single-threaded, on the loop, like everything that caches. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest key: a namespace (63) + "/" + a name (253), rounded up. */
#define TJ_STORE_KEY_MAX     320
#define TJ_STORE_MAX_INDEXES 4

struct tj_store_ops {
	/* Frees an object. */
	void (*free)(void *obj);
	/* Writes the object's key into buf (size TJ_STORE_KEY_MAX); 0 or a negative errno. */
	int (*key)(const void *obj, char *buf, size_t size);
	/* Secondary indexes, each giving an object at most one value (pods by TrainJob, pods
	 * by node): writes it into buf (size TJ_STORE_KEY_MAX) and returns 1, returns 0 if the
	 * object is not in the index, or a negative errno. */
	int (*index[TJ_STORE_MAX_INDEXES])(const void *obj, char *buf, size_t size);
	size_t n_indexes;
	/* Optional: the object's metadata.resourceVersion, for a reflector that takes the
	 * answers of the controller's own writes (tj_reflector_write_back). */
	const char *(*version)(const void *obj);
};

struct tj_store;

/* Iterates the whole store (in no particular order) or one value of an index. The store
 * must not be changed while an iterator is in use. */
struct tj_store_iter {
	const struct tj_store *store; /* borrowed */
	size_t slot;
	size_t index;
	void *next; /* borrowed; next entry in an index bucket */
	bool by_index;
};

/* ops must outlive the store. */
int tj_store_new(const struct tj_store_ops *ops, struct tj_store **ret);

/* Frees the store and every object in it. Accepts NULL; returns NULL. */
struct tj_store *tj_store_free(struct tj_store *store);

size_t tj_store_len(const struct tj_store *store);

/* The object with that key, or NULL. */
const void *tj_store_get(const struct tj_store *store, const char *key);

/* Inserts obj, or replaces the object with the same key. On success the store owns obj, and
 * *ret_old (if ret_old is not NULL) receives the object it replaced, or NULL; the caller
 * owns it and frees it with ops->free once the update handlers have seen it. If ret_old is
 * NULL, the replaced object is freed at once. On error the store is unchanged and the caller
 * still owns obj: -ENAMETOOLONG (key), -ENOMEM. */
int tj_store_upsert(struct tj_store *store, void *obj, void **ret_old);

/* Writes the store key of the object name in namespace ns ("ns/name", or "name" when ns is
 * NULL or empty, for a cluster-scoped object or a key already whole, which a store's ops.key
 * copies so). 0, or -ENAMETOOLONG. */
int tj_store_key_of(char *buf, size_t size, const char *ns, const char *name);

/* Removes the object with that key and hands it to the caller in *ret_old (or frees it if
 * ret_old is NULL). -ENOENT if there is none. */
int tj_store_delete(struct tj_store *store, const char *key, void **ret_old);

/* Exchanges the contents of two stores of the same ops, indexes included, so that a relist
 * built aside in a second store replaces the cache at once (client-go's Replace) while the
 * pointer to the cache stays the same. 0, or -EINVAL if their ops differ. */
int tj_store_swap(struct tj_store *a, struct tj_store *b);

/* Number of objects whose value in index `index` is value. */
size_t tj_store_index_count(const struct tj_store *store, size_t index, const char *value);

/* The objects whose value in index `index` is value, as a new array (NULL if there are none)
 * that the caller frees with free(); the objects stay the store's. 0 or -ENOMEM. This is the
 * shape the planner takes (a TrainJob's pods). */
int tj_store_collect_index(const struct tj_store *store, size_t index, const char *value,
                           const void ***ret, size_t *ret_n);

/* Starts an iteration over every object, or over the objects whose value in index `index`
 * is value; tj_store_iter_next() then returns each object, and NULL at the end. An iteration
 * over every object fetches the first 192 bytes of the objects a few places ahead while it
 * returns the earlier ones: a type whose objects are walked often puts what the walks read
 * there. */
void tj_store_iter_init(const struct tj_store *store, struct tj_store_iter *it);
void tj_store_iter_index(const struct tj_store *store, size_t index, const char *value,
                         struct tj_store_iter *it);
const void *tj_store_iter_next(struct tj_store_iter *it);
