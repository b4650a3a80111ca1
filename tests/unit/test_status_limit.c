/* The rate limit of the trainer status server: one write an interval per job, and what a
 * full table forgets. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "controller/http/status_limit.h"

struct step {
	uint64_t now;
	const char *key;
	uint64_t want; /* 0: written; else the wait */
};

struct table {
	const char *name;
	size_t capacity;
	struct step steps[8];
	size_t n;
};

static const struct table tables[] = {
	{ "one write an interval per job",
	  4,
	  { { 1000, "a/x", 0 },
	    { 1400, "a/x", 600 },
	    { 1999, "a/x", 1 },
	    { 2000, "a/x", 0 },
	    { 2001, "a/y", 0 },
	    { 2500, "a/y", 501 } },
	  6 },
	{ "a refused report does not move the interval",
	  4,
	  { { 0, "a/x", 0 }, { 900, "a/x", 100 }, { 1000, "a/x", 0 } },
	  3 },
	/* x's entry made room for z; x is then a new job that waits for room. */
	{ "a full table forgets an expired job",
	  2,
	  { { 0, "a/x", 0 },
	    { 500, "a/y", 0 },
	    { 1200, "a/z", 0 },
	    { 1300, "a/y", 200 },
	    { 1300, "a/x", 200 },
	    { 1500, "a/x", 0 } },
	  6 },
	{ "a full table of young jobs makes a new one wait for the first to expire",
	  2,
	  { { 0, "a/x", 0 }, { 300, "a/y", 0 }, { 600, "a/z", 400 }, { 1000, "a/z", 0 } },
	  4 },
	{ "a clock that goes back lets the write through",
	  2,
	  { { 5000, "a/x", 0 }, { 4000, "a/x", 0 } },
	  2 },
	{ "no job has a key this long",
	  2,
	  { { 0,
	      "a/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	      1000 } },
	  1 },
};

static void test_tables(void **state)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		struct tj_status_limit *l = NULL;

		assert_int_equal(tj_status_limit_new(tables[t].capacity, 1000, &l), 0);
		for (size_t i = 0; i < tables[t].n; i++) {
			const struct step *s = &tables[t].steps[i];
			uint64_t got = tj_status_limit_take(l, s->key, s->now);

			if (got != s->want)
				fail_msg("%s, step %zu: %llu, want %llu", tables[t].name, i,
				         (unsigned long long)got, (unsigned long long)s->want);
		}
		tj_status_limit_free(l);
	}
}

static void test_new_refuses_zero(void **state)
{
	struct tj_status_limit *l = NULL;

	assert_int_equal(tj_status_limit_new(0, 1000, &l), -EINVAL);
	assert_int_equal(tj_status_limit_new(4, 0, &l), -EINVAL);
	assert_null(l);
	assert_null(tj_status_limit_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_new_refuses_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
