#include "controller/metrics/namespace_series.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct seen {
	char *namespace;  /* owned */
	uint64_t last_ms; /* the last sweep that found a job in it, or that first met it */
};

struct tj_namespace_series {
	uint64_t grace_ms;
	struct seen *seen; /* owned array, sorted by namespace */
	size_t n_seen, cap;
};

int tj_namespace_series_new(uint64_t grace_ms, struct tj_namespace_series **ret)
{
	struct tj_namespace_series *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->grace_ms = grace_ms;
	*ret = t;
	return 0;
}

struct tj_namespace_series *tj_namespace_series_free(struct tj_namespace_series *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n_seen; i++)
		free(t->seen[i].namespace);
	free(t->seen);
	free(t);
	return NULL;
}

/* The index of namespace in t->seen, or where it would go (*found false). */
static size_t find(const struct tj_namespace_series *t, const char *namespace, bool *found)
{
	size_t lo = 0, hi = t->n_seen;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(t->seen[mid].namespace, namespace);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

/* The entry of namespace, added with last_ms = now_ms when it is new; NULL for -ENOMEM or
 * -E2BIG. */
static struct seen *meet(struct tj_namespace_series *t, const char *namespace, uint64_t now_ms)
{
	bool found;
	size_t at = find(t, namespace, &found);
	char *copy;

	if (found)
		return &t->seen[at];
	if (t->n_seen >= TJ_NAMESPACE_SERIES_MAX)
		return NULL;
	if (t->n_seen == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct seen *grown = realloc(t->seen, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		t->seen = grown;
		t->cap = cap;
	}
	copy = strdup(namespace);
	if (!copy)
		return NULL;
	memmove(&t->seen[at + 1], &t->seen[at], (t->n_seen - at) * sizeof(*t->seen));
	t->seen[at].namespace = copy;
	t->seen[at].last_ms = now_ms;
	t->n_seen++;
	return &t->seen[at];
}

static bool expired(const struct tj_namespace_series *t, const struct seen *s, uint64_t now_ms)
{
	return now_ms > s->last_ms && now_ms - s->last_ms > t->grace_ms;
}

struct sweep {
	struct tj_namespace_series *t;
	uint64_t now_ms;
	int error; /* the first failure to track a namespace met in a series */
};

static bool keep_series(const char *const *values, void *ctx)
{
	struct sweep *sw = ctx;
	const struct seen *s = meet(sw->t, values[0], sw->now_ms);

	if (!s) {
		/* Untracked, it would never expire: kept, and the caller told. */
		if (!sw->error)
			sw->error = sw->t->n_seen >= TJ_NAMESPACE_SERIES_MAX ? -E2BIG : -ENOMEM;
		return true;
	}
	return !expired(sw->t, s, sw->now_ms);
}

int tj_namespace_series_sweep(struct tj_namespace_series *t, const char *const *live, size_t n_live,
                              uint64_t now_ms, struct tj_metric *const *families, size_t n_families)
{
	struct sweep sw = { t, now_ms, 0 };
	size_t kept = 0;

	for (size_t i = 0; i < n_live; i++) {
		struct seen *s = meet(t, live[i], now_ms);

		if (!s)
			return t->n_seen >= TJ_NAMESPACE_SERIES_MAX ? -E2BIG : -ENOMEM;
		s->last_ms = now_ms;
	}
	for (size_t f = 0; f < n_families; f++)
		tj_metric_remove_series(families[f], keep_series, &sw);
	/* The expired namespaces have no series left in the families. */
	for (size_t i = 0; i < t->n_seen; i++) {
		if (expired(t, &t->seen[i], now_ms))
			free(t->seen[i].namespace);
		else
			t->seen[kept++] = t->seen[i];
	}
	t->n_seen = kept;
	return sw.error;
}
