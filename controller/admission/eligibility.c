#include "controller/admission/eligibility.h"
#include "controller/admission/eligibility_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A placement kept, with the nodes it allows. */
struct kept {
	struct tj_placement *placement; /* a reference */
	uint64_t hash;
	bool *allowed; /* owned; a flag per node of the ledger's order; NULL: not judged yet */
	size_t n_allowed;
	uint64_t layout;   /* the ledger's layout the flags are of */
	uint64_t judged;   /* the ledger's count of judgements they were brought up to */
	uint64_t asked_at; /* the stamp of the last cycle that asked for them */
};

struct tj_eligibility {
	struct kept *kept; /* owned array of n, sorted by hash; at most TJ_ELIGIBILITY_MAX */
	size_t n, cap;
	bool *scratch; /* owned; the flags of a placement not kept, cap_scratch of them */
	size_t cap_scratch;
};

int tj_eligibility_new(struct tj_eligibility **ret)
{
	struct tj_eligibility *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

static void kept_clear(struct kept *k)
{
	tj_placement_unref(k->placement);
	free(k->allowed);
}

struct tj_eligibility *tj_eligibility_free(struct tj_eligibility *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		kept_clear(&c->kept[i]);
	free(c->kept);
	free(c->scratch);
	free(c);
	return NULL;
}

/* The first place whose hash is hash or more. */
static size_t lower_bound(const struct tj_eligibility *c, uint64_t hash)
{
	size_t lo = 0, hi = c->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->kept[mid].hash < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The placement kept for p: p itself, else one equal to it; NULL if none. */
static struct kept *find(struct tj_eligibility *c, const struct tj_placement *p)
{
	uint64_t hash = tj_placement_hash(p);
	size_t at = lower_bound(c, hash), end = at;

	while (end < c->n && c->kept[end].hash == hash) {
		if (c->kept[end].placement == p)
			return &c->kept[end];
		end++;
	}
	for (size_t i = at; i < end; i++)
		if (tj_placement_equal(c->kept[i].placement, p))
			return &c->kept[i];
	return NULL;
}

/* Keeps p, with a reference of its own; NULL when c is full or without memory. */
static struct kept *keep(struct tj_eligibility *c, struct tj_placement *p)
{
	size_t at;

	if (c->n == TJ_ELIGIBILITY_MAX)
		return NULL;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct kept *k = realloc(c->kept, cap * sizeof(*k));

		if (!k)
			return NULL;
		c->kept = k;
		c->cap = cap;
	}
	at = lower_bound(c, tj_placement_hash(p));
	memmove(&c->kept[at + 1], &c->kept[at], (c->n - at) * sizeof(*c->kept));
	c->kept[at] =
	        (struct kept){ .placement = tj_placement_ref(p), .hash = tj_placement_hash(p) };
	c->n++;
	return &c->kept[at];
}

void tj_eligibility_intern(struct tj_eligibility *c, struct tj_placement **p)
{
	struct kept *k;

	if (!*p)
		return;
	if (!(k = find(c, *p))) {
		keep(c, *p);
		return;
	}
	if (k->placement != *p) {
		tj_placement_unref(*p);
		*p = tj_placement_ref(k->placement);
	}
}

/* Whether p allows node i of the read; a node the cache does not have is allowed. */
static bool allows(const struct tj_placement *p, const struct tj_eligibility_nodes *read, size_t i)
{
	const struct tj_node *node = tj_store_get(read->nodes, read->order[i]->name);

	return !node || tj_placement_allows(p, node, NULL, 0);
}

int tj_eligibility_flags(struct tj_eligibility *c, struct tj_placement *p,
                         const struct tj_eligibility_nodes *read, uint64_t stamp, const bool **ret)
{
	struct kept *k = find(c, p);
	uint64_t layout = tj_ledger_layout(read->ledger);

	if (!k)
		k = keep(c, p);
	if (!k) {
		/* Not kept: judged on every node, into the scratch flags. */
		if (read->n >= c->cap_scratch) {
			bool *s = realloc(c->scratch, read->n + 1);

			if (!s)
				return -ENOMEM;
			c->scratch = s;
			c->cap_scratch = read->n + 1;
		}
		for (size_t i = 0; i < read->n; i++)
			c->scratch[i] = allows(p, read, i);
		*ret = c->scratch;
		return 0;
	}
	if (!k->allowed || k->layout != layout || k->n_allowed != read->n) {
		bool *a = realloc(k->allowed, read->n + 1);

		if (!a)
			return -ENOMEM;
		k->allowed = a;
		k->n_allowed = read->n;
		for (size_t i = 0; i < read->n; i++)
			a[i] = allows(k->placement, read, i);
	} else {
		for (size_t i = 0; i < read->n; i++)
			if (read->order[i]->judged_at > k->judged)
				k->allowed[i] = allows(k->placement, read, i);
	}
	k->layout = layout;
	k->judged = tj_ledger_judgements(read->ledger);
	k->asked_at = stamp;
	*ret = k->allowed;
	return 0;
}

void tj_eligibility_sweep(struct tj_eligibility *c, uint64_t stamp)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n; i++) {
		if (c->kept[i].asked_at == stamp)
			c->kept[k++] = c->kept[i];
		else
			kept_clear(&c->kept[i]);
	}
	c->n = k;
}

size_t tj_eligibility_len(const struct tj_eligibility *c)
{
	return c->n;
}
