/* The cache of review answers: what is found when, and what a full cache forgets. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "controller/http/review_cache.h"
#include "controller/http/review_cache_internal.h"

static void key_of(uint8_t key[TJ_REVIEW_KEY_SIZE], uint8_t n)
{
	memset(key, 0, TJ_REVIEW_KEY_SIZE);
	key[TJ_REVIEW_KEY_SIZE - 1] = n;
}

/* One step of a table: put (ttl > 0) or get, at a time. */
struct step {
	uint64_t now;
	uint8_t key;
	bool put;
	enum tj_review_decision decision; /* put: what to store */
	uint64_t ttl;
	int want;    /* get: the decision, or -ENOENT */
	size_t size; /* entries held after the step */
};

struct table {
	const char *name;
	size_t capacity;
	struct step steps[8];
	size_t n;
};

static const struct table tables[] = {
	{ "an entry lives until its deadline",
	  2,
	  { { 1000, 1, true, TJ_REVIEW_ALLOW, 60000, 0, 1 },
	    { 1000, 1, false, 0, 0, TJ_REVIEW_ALLOW, 1 },
	    { 60999, 1, false, 0, 0, TJ_REVIEW_ALLOW, 1 },
	    { 61000, 1, false, 0, 0, -ENOENT, 1 },
	    { 61000, 2, false, 0, 0, -ENOENT, 1 } },
	  5 },
	{ "a put replaces the decision and the deadline",
	  2,
	  { { 0, 1, true, TJ_REVIEW_ALLOW, 300000, 0, 1 },
	    { 10, 1, true, TJ_REVIEW_DENY, 30000, 0, 1 },
	    { 20, 1, false, 0, 0, TJ_REVIEW_DENY, 1 },
	    { 30010, 1, false, 0, 0, -ENOENT, 1 } },
	  4 },
	{ "a full cache forgets the expired entries first",
	  3,
	  { { 0, 1, true, TJ_REVIEW_ALLOW, 100, 0, 1 },
	    { 0, 2, true, TJ_REVIEW_ALLOW, 100, 0, 2 },
	    { 0, 3, true, TJ_REVIEW_DENY, 1000, 0, 3 },
	    { 500, 4, true, TJ_REVIEW_ALLOW, 1000, 0, 2 },
	    { 500, 3, false, 0, 0, TJ_REVIEW_DENY, 2 },
	    { 500, 4, false, 0, 0, TJ_REVIEW_ALLOW, 2 } },
	  6 },
	{ "then the one closest to expiring",
	  2,
	  { { 0, 1, true, TJ_REVIEW_ALLOW, 300000, 0, 1 },
	    { 0, 2, true, TJ_REVIEW_DENY, 30000, 0, 2 },
	    { 10, 3, true, TJ_REVIEW_ALLOW, 60000, 0, 2 },
	    { 20, 1, false, 0, 0, TJ_REVIEW_ALLOW, 2 },
	    { 20, 2, false, 0, 0, -ENOENT, 2 },
	    { 20, 3, false, 0, 0, TJ_REVIEW_ALLOW, 2 } },
	  6 },
};

static void test_tables(void **state)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		const struct table *tb = &tables[t];
		struct tj_review_cache *c;

		print_message("table: %s\n", tb->name);
		assert_int_equal(tj_review_cache_new(tb->capacity, &c), 0);
		for (size_t i = 0; i < tb->n; i++) {
			const struct step *s = &tb->steps[i];
			uint8_t key[TJ_REVIEW_KEY_SIZE];

			key_of(key, s->key);
			if (s->put)
				assert_int_equal(tj_review_cache_put(c, key, s->decision, NULL,
				                                     s->now, s->ttl),
				                 0);
			else
				assert_int_equal(tj_review_cache_get(c, key, s->now, NULL),
				                 s->want);
			assert_int_equal(tj_review_cache_size(c), s->size);
		}
		tj_review_cache_free(c);
	}
}

static void test_user_is_kept(void **state)
{
	char *groups[] = { "system:authenticated" };
	struct tj_review_user u = { .name = "alice", .uid = "u1", .groups = groups, .n_groups = 1 };
	const struct tj_review_user *got = (const void *)1;
	uint8_t k1[TJ_REVIEW_KEY_SIZE], k2[TJ_REVIEW_KEY_SIZE];
	struct tj_review_cache *c;

	key_of(k1, 1);
	key_of(k2, 2);
	assert_int_equal(tj_review_cache_new(4, &c), 0);
	assert_int_equal(tj_review_cache_put(c, k1, TJ_REVIEW_ALLOW, &u, 0, 1000), 0);
	assert_int_equal(tj_review_cache_put(c, k2, TJ_REVIEW_DENY, NULL, 0, 1000), 0);
	assert_int_equal(tj_review_cache_get(c, k1, 5, &got), TJ_REVIEW_ALLOW);
	assert_non_null(got);
	assert_ptr_not_equal(got->name, u.name); /* a copy */
	assert_string_equal(got->name, "alice");
	assert_string_equal(got->uid, "u1");
	assert_int_equal(got->n_groups, 1);
	assert_string_equal(got->groups[0], "system:authenticated");
	assert_int_equal(tj_review_cache_get(c, k2, 5, &got), TJ_REVIEW_DENY);
	assert_null(got);
	/* Replacing an entry with a user frees the old copy (ASan and valgrind check it). */
	assert_int_equal(tj_review_cache_put(c, k1, TJ_REVIEW_DENY, NULL, 10, 1000), 0);
	assert_int_equal(tj_review_cache_get(c, k1, 11, &got), TJ_REVIEW_DENY);
	assert_null(got);
	tj_review_cache_free(c);
}

static void test_bad_arguments(void **state)
{
	struct tj_review_cache *c = NULL;
	uint8_t key[TJ_REVIEW_KEY_SIZE] = { 0 };

	assert_int_equal(tj_review_cache_new(0, &c), -EINVAL);
	assert_null(c);
	assert_int_equal(tj_review_cache_new(1, &c), 0);
	assert_int_equal(tj_review_cache_put(c, key, 0, NULL, 0, 10), -EINVAL);
	assert_int_equal(tj_review_cache_size(c), 0);
	assert_null(tj_review_cache_free(c));
	assert_null(tj_review_cache_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_user_is_kept),
		cmocka_unit_test(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
