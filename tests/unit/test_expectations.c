/* Expectations: met when nothing is expected, once every expected pod is seen, or after the
 * deadline; replaced by a newer expect; forgotten on request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "controller/expectations.h"

/* The pods "in the cache": a space-separated list of names. */
static bool seen(const char *name, void *ctx)
{
	const char *cache = ctx;
	size_t n = strlen(name);

	for (const char *p = strstr(cache, name); p; p = strstr(p + 1, name))
		if ((p == cache || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

/* case: nothing expected is met; expected pods are met only once all are seen, and then
 * forgotten; another job's expectations stay apart. */
static void test_met_when_all_seen(void **state)
{
	struct tj_expectations *x = tj_expectations_new();
	const char *names[] = { "j-node-0-0-a0", "j-node-0-1-a0" };
	uint64_t wait = 0;

	assert_true(tj_expectations_met(x, "ns/j", 0, seen, "", &wait));
	assert_int_equal(tj_expectations_expect(x, "ns/j", names, 2, 1000), 0);
	assert_int_equal(tj_expectations_expect(x, "ns/k", names, 1, 1000), 0);
	assert_int_equal(tj_expectations_len(x), 2);
	assert_false(tj_expectations_met(x, "ns/j", 100, seen, "", &wait));
	assert_int_equal(wait, 900);
	assert_false(tj_expectations_met(x, "ns/j", 200, seen, "j-node-0-0-a0", &wait));
	assert_int_equal(wait, 800);
	/* Seen once is enough: the cache may move on afterwards. */
	assert_true(tj_expectations_met(x, "ns/j", 300, seen, "j-node-0-1-a0 other", &wait));
	assert_int_equal(tj_expectations_len(x), 1);
	assert_true(tj_expectations_met(x, "ns/j", 300, seen, "", &wait));
	assert_false(tj_expectations_met(x, "ns/k", 300, seen, "j-node-0-0-a00", &wait));
	tj_expectations_free(x);
}

/* case: the deadline ends the wait; a newer expect replaces the older; forget and an empty
 * expect clear it. */
static void test_deadline_replace_forget(void **state)
{
	struct tj_expectations *x = tj_expectations_new();
	const char *a[] = { "j-a" }, *b[] = { "j-b" };

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	assert_true(tj_expectations_met(x, "ns/j", 1000, seen, "", NULL));
	assert_int_equal(tj_expectations_len(x), 0);

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	assert_int_equal(tj_expectations_expect(x, "ns/j", b, 1, 1000), 0);
	assert_int_equal(tj_expectations_len(x), 1);
	assert_true(tj_expectations_met(x, "ns/j", 0, seen, "j-b", NULL));

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	tj_expectations_forget(x, "ns/j");
	tj_expectations_forget(x, "ns/none");
	assert_true(tj_expectations_met(x, "ns/j", 0, seen, "", NULL));

	assert_int_equal(tj_expectations_expect(x, "ns/j", a, 1, 1000), 0);
	assert_int_equal(tj_expectations_expect(x, "ns/j", NULL, 0, 1000), 0);
	assert_int_equal(tj_expectations_len(x), 0);
	assert_null(tj_expectations_free(x));
	assert_null(tj_expectations_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_met_when_all_seen),
		cmocka_unit_test(test_deadline_replace_forget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
