#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "reconcilers/events.h"

#define SEC INT64_C(1000000000)
#define T0  (INT64_C(1795946400) * SEC)

static struct tj_event_key key(const char *name, const char *reason, const char *message)
{
	return (struct tj_event_key){ "team-a", name, "uid", true, reason, message };
}

/* The first occurrence creates an Event named like client-go's; repeats patch it. */
static void test_create_then_patch(void **state)
{
	struct tj_event_cache *c = tj_event_cache_new();
	struct tj_event_key k = key("vit", "Restarting", "rank 1 failed");
	struct tj_event_decision d;

	assert_int_equal(tj_event_decide(c, &k, T0 + 5, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_CREATE);
	assert_string_equal(d.name, "vit.18ec7bbc47a44005");
	assert_int_equal(d.count, 1);
	assert_int_equal(d.first_timestamp, 1795946400);
	assert_int_equal(d.last_timestamp, 1795946400);

	assert_int_equal(tj_event_decide(c, &k, T0 + 70 * SEC, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_PATCH);
	assert_string_equal(d.name, "vit.18ec7bbc47a44005");
	assert_int_equal(d.count, 2);
	assert_int_equal(d.first_timestamp, 1795946400);
	assert_int_equal(d.last_timestamp, 1795946470);
	tj_event_cache_free(c);
}

/* Two events of one plan, stamped with the same time, still get names of their own. */
static void test_names_never_repeat(void **state)
{
	struct tj_event_cache *c = tj_event_cache_new();
	struct tj_event_key created = key("vit", "Created", "creating 2 pods");
	struct tj_event_key running = key("vit", "Running", "2 of 2 pods running");
	struct tj_event_decision d;

	assert_int_equal(tj_event_decide(c, &created, T0 + 5, &d), 0);
	assert_string_equal(d.name, "vit.18ec7bbc47a44005");
	assert_int_equal(tj_event_decide(c, &running, T0 + 5, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_CREATE);
	assert_string_equal(d.name, "vit.18ec7bbc47a44006");
	tj_event_cache_free(c);
}

struct key_case {
	const char *name;
	struct tj_event_key other;
};

/* Any difference in object, type, reason or message makes a separate Event. */
static void test_key_fields(void **state)
{
	const struct key_case cases[] = {
		{ "other object", { "team-a", "bert", "uid", true, "Restarting", "m" } },
		{ "other namespace", { "team-b", "vit", "uid", true, "Restarting", "m" } },
		{ "other uid", { "team-a", "vit", "uid2", true, "Restarting", "m" } },
		{ "other type", { "team-a", "vit", "uid", false, "Restarting", "m" } },
		{ "other reason", { "team-a", "vit", "uid", true, "Failed", "m" } },
		{ "other message", { "team-a", "vit", "uid", true, "Restarting", "m2" } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_event_cache *c = tj_event_cache_new();
		struct tj_event_key k = key("vit", "Restarting", "m");
		struct tj_event_decision d;

		print_message("# case: %s\n", cases[i].name);
		assert_int_equal(tj_event_decide(c, &k, T0, &d), 0);
		assert_int_equal(tj_event_decide(c, &cases[i].other, T0 + SEC, &d), 0);
		assert_int_equal(d.verdict, TJ_EVENT_CREATE);
		assert_int_equal(d.count, 1);
		tj_event_cache_free(c);
	}
}

/* 25 events at once pass, the 26th is dropped; one token comes back every 300 s; the limit
 * is per object. */
static void test_spam_limit(void **state)
{
	struct tj_event_cache *c = tj_event_cache_new();
	struct tj_event_key k = key("vit", "Restarting", "same");
	struct tj_event_key other = key("bert", "Restarting", "same");
	struct tj_event_decision d;

	for (int i = 0; i < TJ_EVENT_BURST; i++) {
		assert_int_equal(tj_event_decide(c, &k, T0 + i, &d), 0);
		assert_int_not_equal(d.verdict, TJ_EVENT_DROP);
		assert_int_equal(d.count, i + 1);
	}
	assert_int_equal(tj_event_decide(c, &k, T0 + 100, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_DROP);
	assert_int_equal(tj_event_decide(c, &other, T0 + 100, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_CREATE);
	/* 299 s later: still no whole token. */
	assert_int_equal(tj_event_decide(c, &k, T0 + 299 * SEC, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_DROP);
	assert_int_equal(tj_event_decide(c, &k, T0 + 301 * SEC, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_PATCH);
	assert_int_equal(d.count, TJ_EVENT_BURST + 1);
	assert_int_equal(tj_event_decide(c, &k, T0 + 302 * SEC, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_DROP);
	/* A long quiet time refills the bucket to its burst, not beyond. */
	for (int i = 0; i < TJ_EVENT_BURST; i++) {
		assert_int_equal(tj_event_decide(c, &k, T0 + 100000 * SEC, &d), 0);
		assert_int_not_equal(d.verdict, TJ_EVENT_DROP);
	}
	assert_int_equal(tj_event_decide(c, &k, T0 + 100000 * SEC, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_DROP);
	tj_event_cache_free(c);
}

/* After the Event expired in the API server, forgetting it creates a new one. */
static void test_forget(void **state)
{
	struct tj_event_cache *c = tj_event_cache_new();
	struct tj_event_key a = key("vit", "Running", "a"), b = key("vit", "Running", "b");
	struct tj_event_decision d;

	assert_int_equal(tj_event_decide(c, &a, T0, &d), 0);
	assert_int_equal(tj_event_decide(c, &b, T0, &d), 0);
	tj_event_forget(c, &a);
	tj_event_forget(c, &a); /* unknown: no-op */
	assert_int_equal(tj_event_decide(c, &a, T0 + 16, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_CREATE);
	assert_string_equal(d.name, "vit.18ec7bbc47a44010");
	assert_int_equal(tj_event_decide(c, &b, T0 + SEC, &d), 0);
	assert_int_equal(d.verdict, TJ_EVENT_PATCH);
	assert_int_equal(d.count, 2);
	tj_event_cache_free(c);
}

/* The cache is bounded: past 4096 events the least recently used one is forgotten. */
static void test_lru_bound(void **state)
{
	struct tj_event_cache *c = tj_event_cache_new();
	struct tj_event_decision d;
	char msg[32];

	for (int i = 0; i <= TJ_EVENT_CACHE_SIZE; i++) {
		/* One object per event, so that the spam limit stays out of the way. */
		char name[32];
		struct tj_event_key k;

		snprintf(name, sizeof(name), "job-%d", i);
		snprintf(msg, sizeof(msg), "m%d", i);
		k = key(name, "Running", msg);
		assert_int_equal(tj_event_decide(c, &k, T0 + i, &d), 0);
		assert_int_equal(d.verdict, TJ_EVENT_CREATE);
	}
	{
		struct tj_event_key first = key("job-0", "Running", "m0");
		struct tj_event_key last = key("job-4096", "Running", "m4096");

		assert_int_equal(tj_event_decide(c, &last, T0 + SEC, &d), 0);
		assert_int_equal(d.verdict, TJ_EVENT_PATCH);
		assert_int_equal(tj_event_decide(c, &first, T0 + SEC, &d), 0);
		assert_int_equal(d.verdict, TJ_EVENT_CREATE);
	}
	tj_event_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_then_patch), cmocka_unit_test(test_key_fields),
		cmocka_unit_test(test_spam_limit),        cmocka_unit_test(test_forget),
		cmocka_unit_test(test_lru_bound),         cmocka_unit_test(test_names_never_repeat),
	};
	return cmocka_run_group_tests_name("events", tests, NULL, NULL);
}
