#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/ratelimit.h"

struct step {
	uint64_t now_ms;
	uint64_t want_wait_ms;
};

struct bucket_case {
	const char *name;
	double qps;
	int burst;
	struct step steps[16];
	size_t n_steps;
};

static const struct bucket_case cases[] = {
	{ "off: never waits", 0, 0, { { 0, 0 }, { 0, 0 }, { 0, 0 } }, 3 },
	{ "burst of 3 at 2 qps",
	  2,
	  3,
	  { { 1000, 0 }, { 1000, 0 }, { 1000, 0 }, { 1000, 500 }, { 1000, 1000 }, { 1000, 1500 } },
	  6 },
	{ "refill over time, capped at burst",
	  10,
	  2,
	  /* Two free, then 100 ms per token; after a long pause only the burst is back. */
	  { { 0, 0 },
	    { 0, 0 },
	    { 0, 100 },
	    { 50, 150 },
	    { 10000, 0 },
	    { 10000, 0 },
	    { 10000, 100 } },
	  7 },
	{ "debt is paid back before new tokens count",
	  1,
	  1,
	  { { 0, 0 }, { 0, 1000 }, { 500, 1500 }, { 3000, 0 } },
	  4 },
	{ "clock going backwards adds nothing", 1, 1, { { 5000, 0 }, { 4000, 1000 } }, 2 },
	{ "burst below 1 is 1", 5, 0, { { 0, 0 }, { 0, 200 } }, 2 },
	{ "client-go defaults 5 qps burst 10",
	  5,
	  10,
	  { { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 0 },
	    { 0, 200 },
	    { 0, 400 } },
	  12 },
};

static void test_bucket(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bucket_case *c = &cases[i];
		struct tj_token_bucket b;

		print_message("# case: %s\n", c->name);
		tj_token_bucket_init(&b, c->qps, c->burst, c->steps[0].now_ms);
		for (size_t s = 0; s < c->n_steps; s++) {
			uint64_t got = tj_token_bucket_take(&b, c->steps[s].now_ms);

			if (got != c->steps[s].want_wait_ms)
				fail_msg("step %zu at %llu ms: waited %llu, want %llu", s,
				         (unsigned long long)c->steps[s].now_ms,
				         (unsigned long long)got,
				         (unsigned long long)c->steps[s].want_wait_ms);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket),
	};
	return cmocka_run_group_tests_name("kube_ratelimit", tests, NULL, NULL);
}
