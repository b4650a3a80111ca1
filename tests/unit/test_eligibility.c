/* The nodes each distinct placement allows, kept between cycles
 * (controller/admission/eligibility.h): equal placements shared, the flags brought up to date for
 * the nodes judged again, the placements no cycle asks for forgotten, and no more kept than the
 * limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/admission/eligibility.h"
#include "controller/admission/eligibility_internal.h"
#include "fixtures.h"

/* A node labelled block=value into nodes; the ledger hears of it. */
static void put_node(struct tj_ledger *l, struct tj_store *nodes, const char *name,
                     const char *block)
{
	char text[512];
	void *node, *old = NULL;
	cJSON *obj;

	snprintf(text, sizeof(text), "{'metadata':{'name':'%s','labels':{'block':'%s'}}}", name,
	         block);
	obj = jlit(text);
	assert_int_equal(tj_node_project(obj, &node), 0);
	cJSON_Delete(obj);
	assert_int_equal(tj_store_upsert(nodes, node, &old), 0);
	tj_ledger_node_changed(l, old, node);
	tj_node_store_ops.free(old);
}

/* A placement that selects the nodes of block value. */
static struct tj_placement *in_block(const char *value)
{
	struct tj_placement *p = NULL;
	char text[128];
	cJSON *spec;

	snprintf(text, sizeof(text), "{'nodeSelector':{'block':'%s'}}", value);
	spec = jlit(text);
	assert_int_equal(tj_placement_compile(spec, &p, NULL, 0), 0);
	cJSON_Delete(spec);
	return p;
}

struct fixture {
	struct tj_store *nodes;
	struct tj_ledger *ledger;
	struct tj_eligibility *cache;
	struct tj_eligibility_nodes read;
};

static void fixture_read(struct fixture *f)
{
	struct tj_ledger_node *const *order;
	size_t n;

	assert_int_equal(tj_ledger_read(f->ledger, &test_config, f->nodes, NULL, &order, &n), 0);
	f->read = (struct tj_eligibility_nodes){ f->ledger, order, n, f->nodes };
}

static void fixture_setup(struct fixture *f)
{
	assert_int_equal(tj_store_new(&tj_node_store_ops, &f->nodes), 0);
	assert_int_equal(tj_ledger_new(&f->ledger), 0);
	assert_int_equal(tj_eligibility_new(&f->cache), 0);
	put_node(f->ledger, f->nodes, "n-1", "b1");
	put_node(f->ledger, f->nodes, "n-2", "b2");
	fixture_read(f);
}

static void fixture_teardown(struct fixture *f)
{
	assert_null(tj_eligibility_free(f->cache));
	tj_ledger_free(f->ledger);
	tj_store_free(f->nodes);
}

/* Equal placements come out as one, each holder with its reference; the flags follow a node
 * judged again. */
static void test_equal_placements_are_shared(void **state)
{
	struct fixture f;
	struct tj_placement *a = in_block("b1"), *b = in_block("b1"), *other = in_block("b2");
	const bool *flags;

	(void)state;
	fixture_setup(&f);
	tj_eligibility_intern(f.cache, &a);
	tj_eligibility_intern(f.cache, &b);
	tj_eligibility_intern(f.cache, &other);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(a, other);
	assert_int_equal(tj_eligibility_len(f.cache), 2);

	assert_int_equal(tj_eligibility_flags(f.cache, a, &f.read, 1, &flags), 0);
	assert_true(flags[0]);
	assert_false(flags[1]);
	/* n-2 moves into block b1. */
	put_node(f.ledger, f.nodes, "n-2", "b1");
	fixture_read(&f);
	assert_int_equal(tj_eligibility_flags(f.cache, b, &f.read, 2, &flags), 0);
	assert_true(flags[0]);
	assert_true(flags[1]);

	/* Only a was asked for at stamp 2: other is forgotten, a kept. */
	tj_eligibility_sweep(f.cache, 2);
	assert_int_equal(tj_eligibility_len(f.cache), 1);
	tj_placement_unref(a);
	tj_placement_unref(b);
	tj_placement_unref(other);
	fixture_teardown(&f);
}

/* Past TJ_ELIGIBILITY_MAX placements, a new one is not kept, and its flags are judged all
 * the same. */
static void test_no_more_than_the_limit_kept(void **state)
{
	struct fixture f;
	struct tj_placement **kept = calloc(TJ_ELIGIBILITY_MAX, sizeof(*kept));
	struct tj_placement *beyond = in_block("b2");
	const bool *flags;
	char block[32];

	(void)state;
	assert_non_null(kept);
	fixture_setup(&f);
	for (size_t i = 0; i < TJ_ELIGIBILITY_MAX; i++) {
		snprintf(block, sizeof(block), "x%zu", i);
		kept[i] = in_block(block);
		tj_eligibility_intern(f.cache, &kept[i]);
	}
	assert_int_equal(tj_eligibility_len(f.cache), TJ_ELIGIBILITY_MAX);
	tj_eligibility_intern(f.cache, &beyond);
	assert_int_equal(tj_eligibility_len(f.cache), TJ_ELIGIBILITY_MAX);
	assert_int_equal(tj_eligibility_flags(f.cache, beyond, &f.read, 1, &flags), 0);
	assert_false(flags[0]);
	assert_true(flags[1]);
	assert_int_equal(tj_eligibility_len(f.cache), TJ_ELIGIBILITY_MAX);
	/* None of the kept ones was asked for at stamp 1. */
	tj_eligibility_sweep(f.cache, 1);
	assert_int_equal(tj_eligibility_len(f.cache), 0);
	for (size_t i = 0; i < TJ_ELIGIBILITY_MAX; i++)
		tj_placement_unref(kept[i]);
	free(kept);
	tj_placement_unref(beyond);
	fixture_teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_placements_are_shared),
		cmocka_unit_test(test_no_more_than_the_limit_kept),
	};

	return cmocka_run_group_tests_name("eligibility", tests, NULL, NULL);
}
