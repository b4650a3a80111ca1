/* The pass of queued jobs' status writes, its bookkeeping alone: the order of the waiters,
 * one write of a job in flight, of the pass or sent outside it, the waiter behind it going
 * stale when it is answered, the most in flight, and removal from every list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/executor/status_pass.h"

/* One step: a waiter added or removed, the next ones taken with a budget, a job's write
 * sent outside the pass or answered, or the stale ones taken. expect is what NEXT or STALE
 * took, one letter a waiter in order ("" for none). */
enum op {
	ADD,
	BEGIN,
	REMOVE,
	NEXT,
	DONE,
	STALE
};

struct step {
	enum op op;
	char waiter;        /* ADD, REMOVE: the waiter 'a' to 'h' */
	const char *key;    /* BEGIN, DONE: the job */
	bool begun;         /* BEGIN: what tj_status_pass_begin says */
	size_t budget;      /* NEXT */
	const char *expect; /* NEXT, STALE */
};

#define ADD_(w)                                                                                    \
	{                                                                                          \
		.op = ADD, .waiter = (w)                                                           \
	}
#define REMOVE_(w)                                                                                 \
	{                                                                                          \
		.op = REMOVE, .waiter = (w)                                                        \
	}
#define NEXT_(b, e)                                                                                \
	{                                                                                          \
		.op = NEXT, .budget = (b), .expect = (e)                                           \
	}
#define BEGIN_(k, b)                                                                               \
	{                                                                                          \
		.op = BEGIN, .key = (k), .begun = (b)                                              \
	}
#define DONE_(k)                                                                                   \
	{                                                                                          \
		.op = DONE, .key = (k)                                                             \
	}
#define STALE_(e)                                                                                  \
	{                                                                                          \
		.op = STALE, .expect = (e)                                                         \
	}

struct table_case {
	const char *name;
	struct step steps[16];
	size_t in_flight, queued, blocked; /* at the end */
};

/* Waiter 'a' + i is of job keys[i]: a, b and e are of team/x. */
static const char *const keys[] = { "team/x", "team/x", "team/y", "team/z",
	                            "team/x", "team/w", "team/v", "team/u" };

static const struct table_case cases[] = {
	{ "released in the order they came, within the budget",
	  { ADD_('c'), ADD_('d'), ADD_('f'), NEXT_(2, "cd"), NEXT_(2, ""), DONE_("team/y"),
	    NEXT_(2, "f") },
	  2,
	  0,
	  0 },
	{ "a job's next waiter waits for its write, then goes stale",
	  { ADD_('a'), NEXT_(8, "a"), ADD_('b'), NEXT_(8, ""), STALE_(""), DONE_("team/x"),
	    STALE_("b"), NEXT_(8, "") },
	  0,
	  0,
	  0 },
	{ "other jobs pass a blocked waiter",
	  { ADD_('a'), NEXT_(8, "a"), ADD_('b'), ADD_('c'), NEXT_(8, "c") },
	  2,
	  0,
	  1 },
	{ "a second waiter blocked behind the same write makes the first stale",
	  { ADD_('a'), NEXT_(8, "a"), ADD_('b'), ADD_('e'), STALE_("b"), DONE_("team/x"),
	    STALE_("e") },
	  0,
	  0,
	  0 },
	{ "two waiters of one job queued together: the second waits for the first's write",
	  { ADD_('a'), ADD_('b'), ADD_('c'), NEXT_(8, "ac"), DONE_("team/x"), STALE_("b") },
	  1,
	  0,
	  0 },
	{ "removed from the queue, from behind a write, and from the stale list",
	  { ADD_('a'), ADD_('c'), REMOVE_('c'), NEXT_(8, "a"), ADD_('b'), REMOVE_('b'),
	    DONE_("team/x"), STALE_(""), ADD_('d'), NEXT_(8, "d"), ADD_('h'), REMOVE_('h'),
	    DONE_("team/z"), STALE_("") },
	  0,
	  0,
	  0 },
	{ "a job not in flight: its answer changes nothing",
	  { ADD_('c'), DONE_("team/y"), NEXT_(1, "c"), DONE_("team/q"), ADD_('d'), NEXT_(1, "") },
	  1,
	  1,
	  0 },
	{ "a write sent outside the pass blocks its job's next waiter, not the width",
	  { BEGIN_("team/x", true), ADD_('a'), ADD_('c'), NEXT_(1, "c"), DONE_("team/x"),
	    STALE_("a"), NEXT_(1, "") },
	  1,
	  0,
	  0 },
	{ "a write outside the pass waits like one of it: queued behind the one outside",
	  { BEGIN_("team/x", true), ADD_('c'), ADD_('a'), ADD_('b'), NEXT_(8, "c"), STALE_("a"),
	    DONE_("team/x"), STALE_("b") },
	  1,
	  0,
	  0 },
	{ "a job with a write in flight is not counted twice",
	  { ADD_('a'), NEXT_(8, "a"), BEGIN_("team/x", false), BEGIN_("team/y", true),
	    BEGIN_("team/y", false), DONE_("team/x"), DONE_("team/y"), ADD_('b'), NEXT_(8, "b") },
	  1,
	  0,
	  0 },
	{ "a budget above the most in flight is the most",
	  { ADD_('c'), NEXT_(1000, "c") },
	  1,
	  0,
	  0 },
};

static void take(struct tj_status_pass *p, struct tj_status_pass_waiter *base, const struct step *s,
                 char *out, size_t size)
{
	struct tj_status_pass_waiter *w;

	out[0] = '\0';
	while ((w = s->op == NEXT ? tj_status_pass_next(p, s->budget)
	                          : tj_status_pass_take_stale(p))) {
		size_t n = strlen(out);

		assert_int_equal(w->state, TJ_STATUS_PASS_IDLE);
		assert_true(n + 1 < size);
		out[n] = (char)('a' + (w - base));
		out[n + 1] = '\0';
	}
}

static void test_table(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct table_case *tc = &cases[c];
		struct tj_status_pass p = { 0 };
		struct tj_status_pass_waiter w[8] = { 0 };
		char got[16];

		for (size_t i = 0; i < 8; i++)
			w[i].key = keys[i];
		for (size_t i = 0; i < sizeof(tc->steps) / sizeof(tc->steps[0]); i++) {
			const struct step *s = &tc->steps[i];

			if (!s->waiter && !s->key && !s->expect)
				break;
			switch (s->op) {
			case ADD:
				tj_status_pass_add(&p, &w[s->waiter - 'a']);
				break;
			case REMOVE:
				tj_status_pass_remove(&p, &w[s->waiter - 'a']);
				assert_int_equal(w[s->waiter - 'a'].state, TJ_STATUS_PASS_IDLE);
				break;
			case BEGIN:
				if (tj_status_pass_begin(&p, s->key) != s->begun)
					fail_msg("%s, step %zu: begin of %s not %d", tc->name, i,
					         s->key, s->begun);
				assert_true(tj_status_pass_in_flight(&p, s->key));
				break;
			case DONE:
				tj_status_pass_done(&p, s->key);
				assert_false(tj_status_pass_in_flight(&p, s->key));
				break;
			case NEXT:
			case STALE:
				take(&p, w, s, got, sizeof(got));
				if (strcmp(got, s->expect) != 0)
					fail_msg("%s, step %zu: took \"%s\", not \"%s\"", tc->name,
					         i, got, s->expect);
				break;
			}
		}
		if (p.n_in_flight != tc->in_flight || p.queued.n != tc->queued ||
		    p.n_blocked != tc->blocked)
			fail_msg("%s: %zu in flight, %zu queued, %zu blocked; not %zu, %zu, %zu",
			         tc->name, p.n_in_flight, p.queued.n, p.n_blocked, tc->in_flight,
			         tc->queued, tc->blocked);
		assert_int_equal(tj_status_pass_pending(&p), p.queued.n + p.stale.n > 0);
	}
}

/* The most jobs in flight at once, each with its own slot, and a slot freed in the middle
 * taken by the next. */
static void test_every_slot(void **state)
{
	struct tj_status_pass p = { 0 };
	struct tj_status_pass_waiter w[TJ_STATUS_PASS_MAX_IN_FLIGHT + 1] = { 0 };
	char names[TJ_STATUS_PASS_MAX_IN_FLIGHT + 1][16];

	(void)state;
	for (size_t i = 0; i <= TJ_STATUS_PASS_MAX_IN_FLIGHT; i++) {
		snprintf(names[i], sizeof(names[i]), "team/j%zu", i);
		w[i].key = names[i];
		tj_status_pass_add(&p, &w[i]);
	}
	for (size_t i = 0; i < TJ_STATUS_PASS_MAX_IN_FLIGHT; i++)
		assert_ptr_equal(tj_status_pass_next(&p, TJ_STATUS_PASS_MAX_IN_FLIGHT), &w[i]);
	assert_null(tj_status_pass_next(&p, TJ_STATUS_PASS_MAX_IN_FLIGHT));
	tj_status_pass_done(&p, "team/j5");
	assert_ptr_equal(tj_status_pass_next(&p, TJ_STATUS_PASS_MAX_IN_FLIGHT),
	                 &w[TJ_STATUS_PASS_MAX_IN_FLIGHT]);
	/* The slot moved into the freed place still answers to its job. */
	tj_status_pass_done(&p, names[TJ_STATUS_PASS_MAX_IN_FLIGHT]);
	tj_status_pass_done(&p, "team/j31");
	assert_int_equal(p.n_in_flight, TJ_STATUS_PASS_MAX_IN_FLIGHT - 2);
	for (size_t i = 0; i < p.n_in_flight; i++)
		assert_true(strcmp(p.slots[i].key, "team/j5") != 0 &&
		            strcmp(p.slots[i].key, "team/j31") != 0);
}

/* The writes outside the pass fill their own places, past which one goes untracked, and
 * leave the pass its whole width. */
static void test_every_other_slot(void **state)
{
	struct tj_status_pass p = { 0 };
	struct tj_status_pass_waiter w[TJ_STATUS_PASS_MAX_IN_FLIGHT] = { 0 };
	char others[TJ_STATUS_PASS_MAX_OTHERS + 1][16], names[TJ_STATUS_PASS_MAX_IN_FLIGHT][16];

	(void)state;
	for (size_t i = 0; i <= TJ_STATUS_PASS_MAX_OTHERS; i++) {
		snprintf(others[i], sizeof(others[i]), "team/o%zu", i);
		assert_int_equal(tj_status_pass_begin(&p, others[i]),
		                 i < TJ_STATUS_PASS_MAX_OTHERS);
	}
	assert_false(tj_status_pass_in_flight(&p, others[TJ_STATUS_PASS_MAX_OTHERS]));
	for (size_t i = 0; i < TJ_STATUS_PASS_MAX_IN_FLIGHT; i++) {
		snprintf(names[i], sizeof(names[i]), "team/j%zu", i);
		w[i].key = names[i];
		tj_status_pass_add(&p, &w[i]);
	}
	for (size_t i = 0; i < TJ_STATUS_PASS_MAX_IN_FLIGHT; i++)
		assert_ptr_equal(tj_status_pass_next(&p, TJ_STATUS_PASS_MAX_IN_FLIGHT), &w[i]);
	assert_int_equal(p.n_in_flight, TJ_STATUS_PASS_MAX_IN_FLIGHT);
	assert_int_equal(p.n_others, TJ_STATUS_PASS_MAX_OTHERS);
	tj_status_pass_done(&p, others[3]);
	assert_true(tj_status_pass_begin(&p, others[TJ_STATUS_PASS_MAX_OTHERS]));
	for (size_t i = 0; i < TJ_STATUS_PASS_MAX_IN_FLIGHT; i++)
		tj_status_pass_done(&p, names[i]);
	assert_int_equal(p.n_in_flight, 0);
	assert_int_equal(p.n_others, TJ_STATUS_PASS_MAX_OTHERS);
	assert_true(tj_status_pass_in_flight(&p, others[0]));
	assert_false(tj_status_pass_in_flight(&p, others[3]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_every_slot),
		cmocka_unit_test(test_every_other_slot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
