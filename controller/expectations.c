#include "controller/expectations.h"
#include "controller/expectations_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One job's outstanding pods. Jobs stay here only between their pod writes and the watch
 * events of those pods, so the list is short: a linear search is enough. */
struct entry {
	struct entry *next;
	char *key;              /* owned */
	char **names;           /* owned array of n owned names; NULL once seen */
	enum tj_expected *what; /* owned; per name */
	size_t n;
	uint64_t deadline_ms;
};

struct tj_expectations {
	struct entry *head;
	size_t len;
};

struct tj_expectations *tj_expectations_new(void)
{
	return calloc(1, sizeof(struct tj_expectations));
}

static void entry_free(struct entry *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->names[i]);
	free(e->names);
	free(e->what);
	free(e->key);
	free(e);
}

static struct entry **find(struct tj_expectations *x, const char *key)
{
	struct entry **p = &x->head;

	while (*p && strcmp((*p)->key, key) != 0)
		p = &(*p)->next;
	return p;
}

void tj_expectations_forget(struct tj_expectations *x, const char *key)
{
	struct entry **p = find(x, key), *e = *p;

	if (!e)
		return;
	*p = e->next;
	entry_free(e);
	x->len--;
}

/* key expects of the n pods named what[i] (NULL: each created). */
static int expect(struct tj_expectations *x, const char *key, const char *const *names,
                  const enum tj_expected *what, size_t n, uint64_t deadline_ms)
{
	struct entry *e;

	tj_expectations_forget(x, key);
	if (n == 0)
		return 0;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->key = strdup(key);
	e->names = calloc(n, sizeof(*e->names));
	e->what = calloc(n, sizeof(*e->what));
	if (!e->key || !e->names || !e->what)
		goto fail;
	for (e->n = 0; e->n < n; e->n++) {
		e->names[e->n] = strdup(names[e->n]);
		if (!e->names[e->n])
			goto fail;
		e->what[e->n] = what ? what[e->n] : TJ_EXPECT_CREATED;
	}
	e->deadline_ms = deadline_ms;
	e->next = x->head;
	x->head = e;
	x->len++;
	return 0;

fail:
	entry_free(e);
	return -ENOMEM;
}

int tj_expectations_expect(struct tj_expectations *x, const char *key, const char *const *names,
                           size_t n, uint64_t deadline_ms)
{
	return expect(x, key, names, NULL, n, deadline_ms);
}

/* What a plan's action expects of its pod; false for an action that expects nothing. */
static bool expected_of(const struct tj_action *a, enum tj_expected *ret)
{
	if (a->kind == TJ_ACTION_CREATE_POD)
		*ret = TJ_EXPECT_CREATED;
	else if (a->kind == TJ_ACTION_DELETE_POD)
		*ret = TJ_EXPECT_GONE;
	else if (a->kind == TJ_ACTION_PATCH_POD && a->ungate)
		*ret = TJ_EXPECT_UNGATED;
	else
		return false;
	return true;
}

/* Records the pods plan creates, deletes and ungates as key's expectations. */
static void expect_plan_pods(struct tj_expectations *x, const char *key, const struct tj_plan *plan,
                             uint64_t deadline_ms)
{
	const char **names;
	enum tj_expected *what, w;
	size_t n = 0;

	/* Most plans touch no pod: no allocation for them. */
	for (size_t i = 0; i < plan->n_actions; i++)
		n += expected_of(&plan->actions[i], &w);
	if (n == 0)
		return;
	names = calloc(n, sizeof(*names));
	what = calloc(n, sizeof(*what));
	if (names && what) {
		n = 0;
		for (size_t i = 0; i < plan->n_actions; i++) {
			if (!expected_of(&plan->actions[i], &what[n]))
				continue;
			names[n++] = plan->actions[i].name;
		}
		expect(x, key, names, what, n, deadline_ms);
	}
	free(names);
	free(what);
}

int tj_expectations_start_plan(struct tj_expectations *x, const char *key, struct tj_plan *plan,
                               uint64_t deadline_ms, int (*start)(struct tj_plan *plan, void *ctx),
                               void *ctx)
{
	int rc;

	/* Before start: it takes the plan, and with it the names. */
	expect_plan_pods(x, key, plan, deadline_ms);
	rc = start(plan, ctx);
	if (rc < 0)
		tj_expectations_forget(x, key);
	return rc;
}

/* The pod of e's name i is seen: expected no more. */
static void see(struct entry *e, size_t i)
{
	free(e->names[i]);
	e->names[i] = NULL;
}

enum tj_expectations_verdict
tj_expectations_check(struct tj_expectations *x, const char *key, uint64_t now_ms,
                      bool (*seen)(const char *name, enum tj_expected what, void *ctx), void *ctx,
                      uint64_t *wait_ms)
{
	struct entry *e = *find(x, key);
	bool met = true;

	if (!e)
		return TJ_EXPECTATIONS_NONE;
	for (size_t i = 0; i < e->n; i++) {
		if (!e->names[i])
			continue;
		if (seen(e->names[i], e->what[i], ctx))
			see(e, i);
		else
			met = false;
	}
	if (met || now_ms >= e->deadline_ms) {
		tj_expectations_forget(x, key);
		return met ? TJ_EXPECTATIONS_SEEN : TJ_EXPECTATIONS_EXPIRED;
	}
	if (wait_ms)
		*wait_ms = e->deadline_ms - now_ms;
	return TJ_EXPECTATIONS_WAITING;
}

void tj_expectations_observe(struct tj_expectations *x, const char *key, const char *name,
                             bool (*seen)(const char *name, enum tj_expected what, void *ctx),
                             void *ctx)
{
	struct entry *e = *find(x, key);

	for (size_t i = 0; e && i < e->n; i++)
		if (e->names[i] && strcmp(e->names[i], name) == 0 && seen(name, e->what[i], ctx))
			see(e, i);
}

size_t tj_expectations_len(const struct tj_expectations *x)
{
	return x->len;
}

struct tj_expectations *tj_expectations_free(struct tj_expectations *x)
{
	if (!x)
		return NULL;
	while (x->head) {
		struct entry *e = x->head;

		x->head = e->next;
		entry_free(e);
	}
	free(x);
	return NULL;
}
