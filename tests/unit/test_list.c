/* The intrusive list: a table of operations on five elements, each followed by the order
 * the list must hold, walked both ways, and its count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/list.h"

struct item {
	int pad; /* the link not first, so that the offset counts */
	struct tj_link link;
	char name;
};

enum op {
	APPEND,
	PREPEND,
	UNLINK
};

struct step {
	enum op op;
	char name;
	const char *want; /* the names from head to tail */
};

struct list_case {
	const char *name;
	struct step steps[8];
	size_t n_steps;
};

static const struct list_case cases[] = {
	{ "append keeps the order they came",
	  { { APPEND, 'a', "a" }, { APPEND, 'b', "ab" }, { APPEND, 'c', "abc" } },
	  3 },
	{ "prepend puts in front",
	  { { PREPEND, 'a', "a" }, { PREPEND, 'b', "ba" }, { APPEND, 'c', "bac" } },
	  3 },
	{ "unlink the head, the tail, the middle, the last",
	  { { APPEND, 'a', "a" },
	    { APPEND, 'b', "ab" },
	    { APPEND, 'c', "abc" },
	    { APPEND, 'd', "abcd" },
	    { UNLINK, 'a', "bcd" },
	    { UNLINK, 'd', "bc" },
	    { UNLINK, 'b', "c" },
	    { UNLINK, 'c', "" } },
	  8 },
	{ "an element unlinked goes back in, at either end",
	  { { APPEND, 'a', "a" },
	    { APPEND, 'b', "ab" },
	    { APPEND, 'c', "abc" },
	    { UNLINK, 'b', "ac" },
	    { APPEND, 'b', "acb" },
	    { UNLINK, 'a', "cb" },
	    { PREPEND, 'a', "acb" } },
	  7 },
};

/* The names of l from head to tail, checked against the walk from tail to head. */
static void names_of(const struct tj_list *l, char *out, size_t size)
{
	size_t n = 0, back = 0;
	char rev[16];

	for (const struct tj_link *e = l->head; e && n + 1 < size; e = e->next)
		out[n++] = TJ_CONTAINER_OF(e, const struct item, link)->name;
	out[n] = '\0';
	for (const struct tj_link *e = l->tail; e && back + 1 < sizeof(rev); e = e->prev)
		rev[back++] = TJ_CONTAINER_OF(e, const struct item, link)->name;
	assert_int_equal(back, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(rev[n - 1 - i], out[i]);
}

static void test_list(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct list_case *c = &cases[i];
		struct item items[5];
		struct tj_list l = { 0 };
		char got[16];

		print_message("# case: %s\n", c->name);
		memset(items, 0, sizeof(items));
		for (size_t k = 0; k < 5; k++)
			items[k].name = (char)('a' + k);
		for (size_t s = 0; s < c->n_steps; s++) {
			struct tj_link *e = &items[c->steps[s].name - 'a'].link;

			if (c->steps[s].op == APPEND)
				tj_list_append(&l, e);
			else if (c->steps[s].op == PREPEND)
				tj_list_prepend(&l, e);
			else {
				tj_list_unlink(&l, e);
				assert_null(e->prev);
				assert_null(e->next);
			}
			names_of(&l, got, sizeof(got));
			if (strcmp(got, c->steps[s].want) != 0)
				fail_msg("step %zu: the list holds \"%s\", want \"%s\"", s, got,
				         c->steps[s].want);
			assert_int_equal(l.n, strlen(c->steps[s].want));
		}
	}
	(void)state;
}

static void test_entry_of_null(void **state)
{
	assert_null(TJ_LIST_ENTRY((struct tj_link *)NULL, struct item, link));
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_entry_of_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
