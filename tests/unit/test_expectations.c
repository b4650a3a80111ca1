/* Expectations: met when nothing is expected, once every expected pod is seen (created
 * ones there, deleted ones gone or being deleted, ungated ones without their gate; at the
 * check or at the pod's own event), or after the deadline, and the check says which;
 * replaced by a newer expect; forgotten on request; set around the start of a plan and
 * forgotten when it cannot start. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/expectations.h"
#include "controller/expectations_internal.h"

/* Whether the cache, a space-separated list of names, holds the name (a name written
 * "~name" is a pod being deleted). */
static bool has(const char *cache, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(cache, name); p; p = strstr(p + 1, name))
		if ((p == cache || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

/* The pod cache as the controller looks at it: a create is seen once the pod is there, a
 * delete once it is not there live (gone, or "~name": being deleted), an ungate once it is
 * not there gated ("!name": a pod with the gang's gate). */
static bool seen(const char *name, enum tj_expected what, void *ctx)
{
	char gated[64];

	snprintf(gated, sizeof(gated), "!%s", name);
	switch (what) {
	case TJ_EXPECT_CREATED:
		return has(ctx, name);
	case TJ_EXPECT_UNGATED:
		return !has(ctx, gated);
	case TJ_EXPECT_GONE:
		break;
	}
	return !has(ctx, name);
}

/* Whether the job may be planned: anything but waiting. */
static bool met(struct tj_expectations *x, const char *key, uint64_t now_ms,
                bool (*seen_fn)(const char *, enum tj_expected, void *), void *ctx,
                uint64_t *wait_ms)
{
	return tj_expectations_check(x, key, now_ms, seen_fn, ctx, wait_ms) !=
	       TJ_EXPECTATIONS_WAITING;
}

/* case: nothing expected is met; expected pods are met only once all are seen, and then
 * forgotten; another job's expectations stay apart. */
static void test_met_when_all_seen(void **state)
{
	struct tj_expectations *x = tj_expectations_new();
	const char *names[] = { "j-node-0-0-a0", "j-node-0-1-a0" };
	uint64_t wait = 0;

	assert_true(met(x, "ns/j", 0, seen, "", &wait));
	assert_int_equal(tj_expectations_expect(x, "ns/j", names, 2, 1000), 0);
	assert_int_equal(tj_expectations_expect(x, "ns/k", names, 1, 1000), 0);
	assert_int_equal(tj_expectations_len(x), 2);
	assert_false(met(x, "ns/j", 100, seen, "", &wait));
	assert_int_equal(wait, 900);
	assert_false(met(x, "ns/j", 200, seen, "j-node-0-0-a0", &wait));
	assert_int_equal(wait, 800);
	/* Seen once is enough: the cache may move on afterwards. */
	assert_true(met(x, "ns/j", 300, seen, "j-node-0-1-a0 other", &wait));
	assert_int_equal(tj_expectations_len(x), 1);
	assert_true(met(x, "ns/j", 300, seen, "", &wait));
	assert_false(met(x, "ns/k", 300, seen, "j-node-0-0-a00", &wait));
	tj_expectations_free(x);
}

/* case: the deadline ends the wait; a newer expect replaces the older; forget and an empty
 * expect clear it. */
static void test_deadline_replace_forget(void **state)
{
	struct tj_expectations *x = tj_expectations_new();
	const char *a[] = { "j-a" }, *b[] = { "j-b" };

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	assert_true(met(x, "ns/j", 1000, seen, "", NULL));
	assert_int_equal(tj_expectations_len(x), 0);

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	assert_int_equal(tj_expectations_expect(x, "ns/j", b, 1, 1000), 0);
	assert_int_equal(tj_expectations_len(x), 1);
	assert_true(met(x, "ns/j", 0, seen, "j-b", NULL));

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	tj_expectations_forget(x, "ns/j");
	tj_expectations_forget(x, "ns/none");
	assert_true(met(x, "ns/j", 0, seen, "", NULL));

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	assert_int_equal(tj_expectations_expect(x, "ns/j", NULL, 0, 1000), 0);
	assert_int_equal(tj_expectations_len(x), 0);
	assert_null(tj_expectations_free(x));
	assert_null(tj_expectations_free(NULL));
}

struct verdict_case {
	const char *name;
	bool expect;        /* "ns/j" expects its two pods */
	const char *events; /* the pods whose events came, each as the cache showed it then */
	const char *cache;  /* the cache at the check */
	uint64_t now_ms;    /* the deadline is at 1000 */
	enum tj_expectations_verdict want;
};

static const struct verdict_case verdict_cases[] = {
	{ "nothing expected", false, "", "", 0, TJ_EXPECTATIONS_NONE },
	{ "both in the cache at the check", true, "", "j-0 j-1", 10, TJ_EXPECTATIONS_SEEN },
	{ "one not shown yet", true, "", "j-0", 10, TJ_EXPECTATIONS_WAITING },
	{ "one not shown by the deadline", true, "", "j-0", 1000, TJ_EXPECTATIONS_EXPIRED },
	/* Created and deleted before the check: its add event showed it. */
	{ "one shown at its event, gone at the check", true, "j-0", "j-1", 10,
	  TJ_EXPECTATIONS_SEEN },
	{ "both shown at their events, both gone", true, "j-0 j-1", "", 10, TJ_EXPECTATIONS_SEEN },
	{ "seen at its event past the deadline", true, "j-0", "j-1", 1000, TJ_EXPECTATIONS_SEEN },
	/* An event that did not show the pod (its delete, after an add that never came). */
	{ "an event that does not show it", true, "~j-0", "j-1", 10, TJ_EXPECTATIONS_WAITING },
	{ "an event of a pod not expected", true, "j-9", "j-1", 10, TJ_EXPECTATIONS_WAITING },
};

/* case: the check says why the wait ended: nothing expected, every pod seen (at the check
 * or at its own event), or the deadline. */
static void test_verdict_table(void **state)
{
	const char *names[] = { "j-0", "j-1" };

	for (size_t i = 0; i < sizeof(verdict_cases) / sizeof(verdict_cases[0]); i++) {
		const struct verdict_case *c = &verdict_cases[i];
		struct tj_expectations *x = tj_expectations_new();
		char events[64], *save = NULL;

		print_message("case: %s\n", c->name);
		assert_non_null(x);
		if (c->expect)
			assert_int_equal(tj_expectations_expect(x, "ns/j", names, 2, 1000), 0);
		snprintf(events, sizeof(events), "%s", c->events);
		/* Each event as the cache showed it then: the pod there ("name") or not ("~name").
		 */
		for (char *ev = strtok_r(events, " ", &save); ev; ev = strtok_r(NULL, " ", &save))
			tj_expectations_observe(x, "ns/j", ev[0] == '~' ? ev + 1 : ev, seen,
			                        ev[0] == '~' ? "" : ev);
		/* Another job's events touch nothing of this one. */
		tj_expectations_observe(x, "ns/k", "j-1", seen, "j-1");
		assert_int_equal(
		        tj_expectations_check(x, "ns/j", c->now_ms, seen, (void *)c->cache, NULL),
		        c->want);
		assert_int_equal(tj_expectations_len(x), c->want == TJ_EXPECTATIONS_WAITING);
		tj_expectations_free(x);
	}
}

/* The executor as tj_expectations_start_plan() calls it: records the call and what the
 * expectations were while it ran. */
struct fake_start {
	int rc;
	int calls;
	const struct tj_plan *plan;
	struct tj_expectations *x;
	size_t len_during;
};

static int fake_start(struct tj_plan *plan, void *ctx)
{
	struct fake_start *f = ctx;

	f->calls++;
	f->plan = plan;
	f->len_during = tj_expectations_len(f->x);
	return f->rc;
}

struct start_case {
	const char *name;
	enum tj_action_kind kinds[4];
	const char *names[4];
	size_t n_actions;
	int start_rc;
	size_t len_during, len_after;
	bool met_empty; /* met at once with an empty cache afterwards */
};

static const struct start_case start_cases[] = {
	{ "creates started",
	  { TJ_ACTION_PATCH_STATUS, TJ_ACTION_CREATE_POD, TJ_ACTION_CREATE_SERVICE,
	    TJ_ACTION_CREATE_POD },
	  { "", "j-node-0-0-a0", "j", "j-node-0-1-a0" },
	  4,
	  0,
	  1,
	  1,
	  false },
	{ "creates that could not start",
	  { TJ_ACTION_CREATE_POD, TJ_ACTION_CREATE_POD },
	  { "j-node-0-0-a0", "j-node-0-1-a0" },
	  2,
	  -ENOMEM,
	  1,
	  0,
	  true },
	{ "a delete, started: expected, and seen at once in an empty cache",
	  { TJ_ACTION_PATCH_STATUS, TJ_ACTION_DELETE_POD },
	  { "", "j-node-0-0-a0" },
	  2,
	  0,
	  1,
	  1,
	  true },
	{ "no pod writes, started", { TJ_ACTION_PATCH_STATUS }, { "" }, 1, 0, 0, 0, true },
	{ "no creates, could not start", { TJ_ACTION_EVENT }, { "" }, 1, -EINVAL, 0, 0, true },
};

/* case: a plan's pod deletes are expected until the cache shows each pod gone or being
 * deleted: a plan made before that would take a pod on its way out for a live one. */
static void test_deletes_expected(void **state)
{
	struct tj_action actions[3] = {
		{ .kind = TJ_ACTION_PATCH_STATUS },
		{ .kind = TJ_ACTION_DELETE_POD, .name = "j-node-0-0-a0" },
		{ .kind = TJ_ACTION_DELETE_POD, .name = "j-node-0-1-a0" },
	};
	struct tj_plan plan = { .actions = actions, .n_actions = 3 };
	struct fake_start f = { 0 };
	uint64_t wait = 0;

	f.x = tj_expectations_new();
	assert_non_null(f.x);
	assert_int_equal(tj_expectations_start_plan(f.x, "ns/j", &plan, 30000, fake_start, &f), 0);
	assert_int_equal(f.len_during, 1);
	/* Both still live in the cache, then one of them being deleted. */
	assert_false(met(f.x, "ns/j", 100, seen, "j-node-0-0-a0 j-node-0-1-a0", &wait));
	assert_int_equal(wait, 29900);
	assert_false(met(f.x, "ns/j", 200, seen, "~j-node-0-0-a0 j-node-0-1-a0", &wait));
	/* The other gone: both seen. */
	assert_true(met(f.x, "ns/j", 300, seen, "~j-node-0-0-a0", &wait));
	assert_int_equal(tj_expectations_len(f.x), 0);

	/* Creates and deletes of one plan: each seen its own way. */
	actions[1].kind = TJ_ACTION_CREATE_POD;
	assert_int_equal(tj_expectations_start_plan(f.x, "ns/j", &plan, 30000, fake_start, &f), 0);
	assert_false(met(f.x, "ns/j", 100, seen, "j-node-0-1-a0", &wait));
	assert_false(met(f.x, "ns/j", 100, seen, "j-node-0-0-a0 j-node-0-1-a0", &wait));
	assert_true(met(f.x, "ns/j", 100, seen, "j-node-0-0-a0", &wait));
	tj_expectations_free(f.x);
}

/* case: a plan's ungates are expected until the cache shows each pod without its gate (or
 * gone): a plan made before that would take the gate off again. Its other pod patches are
 * not expected. */
static void test_ungates_expected(void **state)
{
	struct tj_action actions[3] = {
		{ .kind = TJ_ACTION_PATCH_POD, .name = "j-node-0-0-a0", .ungate = true },
		{ .kind = TJ_ACTION_PATCH_POD, .name = "j-node-0-1-a0", .ungate = true },
		{ .kind = TJ_ACTION_PATCH_POD, .name = "j-node-0-2-a0" },
	};
	struct tj_plan plan = { .actions = actions, .n_actions = 3 };
	struct fake_start f = { 0 };
	uint64_t wait = 0;

	f.x = tj_expectations_new();
	assert_non_null(f.x);
	assert_int_equal(tj_expectations_start_plan(f.x, "ns/j", &plan, 30000, fake_start, &f), 0);
	assert_int_equal(f.len_during, 1);
	/* Both still gated, then one ungated. */
	assert_false(
	        met(f.x, "ns/j", 100, seen, "!j-node-0-0-a0 !j-node-0-1-a0 !j-node-0-2-a0", &wait));
	assert_int_equal(wait, 29900);
	assert_false(
	        met(f.x, "ns/j", 200, seen, "j-node-0-0-a0 !j-node-0-1-a0 !j-node-0-2-a0", &wait));
	/* The other gone: both seen, whatever the third pod shows. */
	assert_true(met(f.x, "ns/j", 300, seen, "j-node-0-0-a0 !j-node-0-2-a0", &wait));
	assert_int_equal(tj_expectations_len(f.x), 0);
	tj_expectations_free(f.x);
}

/* case: a plan's pod creates are expected while and after its start, unless it could not
 * start: then nothing is expected, and the next plan does not wait out the deadline. */
static void test_start_plan(void **state)
{
	for (size_t i = 0; i < sizeof(start_cases) / sizeof(start_cases[0]); i++) {
		const struct start_case *c = &start_cases[i];
		struct tj_action actions[4] = { 0 };
		struct tj_plan plan = { .actions = actions, .n_actions = c->n_actions };
		struct fake_start f = { .rc = c->start_rc };
		uint64_t wait = 0;

		print_message("# case: %s\n", c->name);
		f.x = tj_expectations_new();
		assert_non_null(f.x);
		for (size_t j = 0; j < c->n_actions; j++) {
			actions[j].kind = c->kinds[j];
			snprintf(actions[j].name, sizeof(actions[j].name), "%s", c->names[j]);
		}
		assert_int_equal(
		        tj_expectations_start_plan(f.x, "ns/j", &plan, 30000, fake_start, &f),
		        c->start_rc);
		assert_int_equal(f.calls, 1);
		assert_ptr_equal(f.plan, &plan);
		assert_int_equal(f.len_during, c->len_during);
		assert_int_equal(tj_expectations_len(f.x), c->len_after);
		assert_int_equal(met(f.x, "ns/j", 100, seen, "", &wait), c->met_empty);
		if (!c->met_empty) {
			assert_int_equal(wait, 29900);
			/* Exactly the created pods: the Service and the others are not waited for.
			 */
			assert_false(met(f.x, "ns/j", 100, seen, "j-node-0-0-a0 j", &wait));
			assert_true(met(f.x, "ns/j", 100, seen, "j-node-0-1-a0", &wait));
		}
		assert_int_equal(tj_expectations_len(f.x), 0);
		tj_expectations_free(f.x);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_met_when_all_seen),
		cmocka_unit_test(test_verdict_table),
		cmocka_unit_test(test_deadline_replace_forget),
		cmocka_unit_test(test_start_plan),
		cmocka_unit_test(test_deletes_expected),
		cmocka_unit_test(test_ungates_expected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
