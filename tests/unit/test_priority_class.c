/* The PriorityClass projection and the priority a pod's priorityClassName stands for. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "informers/priority_class.h"

static const struct {
	const char *what;
	const char *json;
	int rc;
	const char *name;
	int32_t value;
	bool global_default;
} projections[] = {
	{ "a user class", "{'metadata':{'name':'high'},'value':1000}", 0, "high", 1000, false },
	{ "the global default", "{'metadata':{'name':'normal'},'value':10,'globalDefault':true}", 0,
	  "normal", 10, true },
	{ "a negative value", "{'metadata':{'name':'low'},'value':-5}", 0, "low", -5, false },
	{ "a system class", "{'metadata':{'name':'system-node-critical'},'value':2000001000}", 0,
	  "system-node-critical", 2000001000, false },
	{ "no name", "{'metadata':{},'value':1}", -EINVAL, NULL, 0, false },
	{ "no value", "{'metadata':{'name':'x'}}", -EINVAL, NULL, 0, false },
	{ "a value that is a string", "{'metadata':{'name':'x'},'value':'1'}", -EINVAL, NULL, 0,
	  false },
	{ "a value past int32", "{'metadata':{'name':'x'},'value':2147483648}", -EINVAL, NULL, 0,
	  false },
	{ "a fraction", "{'metadata':{'name':'x'},'value':1.5}", -EINVAL, NULL, 0, false },
};

static void test_projection(void **state)
{
	for (size_t i = 0; i < sizeof(projections) / sizeof(projections[0]); i++) {
		cJSON *j = jlit(projections[i].json);
		struct tj_priority_class *pc = (struct tj_priority_class *)0x1;
		int rc = tj_priority_class_from_json(j, &pc);

		print_message("# case: %s\n", projections[i].what);
		assert_int_equal(rc, projections[i].rc);
		if (rc == 0) {
			assert_string_equal(pc->name, projections[i].name);
			assert_int_equal(pc->value, projections[i].value);
			assert_int_equal(pc->global_default, projections[i].global_default);
			tj_priority_class_free(pc);
		} else {
			assert_ptr_equal(pc, (struct tj_priority_class *)0x1);
		}
		cJSON_Delete(j);
	}
}

static void add(struct tj_store *s, const char *json)
{
	cJSON *j = jlit(json);
	void *pc;

	assert_int_equal(tj_priority_class_project(j, &pc), 0);
	assert_int_equal(tj_store_upsert(s, pc, NULL), 0);
	cJSON_Delete(j);
}

/* As the Priority admission plugin: the named class, else the global default, else 0. */
static void test_priority_of(void **state)
{
	struct tj_store *s;

	assert_int_equal(tj_priority_of(NULL, "high"), 0);
	assert_int_equal(tj_store_new(&tj_priority_class_store_ops, &s), 0);
	assert_int_equal(tj_priority_of(s, NULL), 0);
	add(s, "{'metadata':{'name':'high'},'value':1000}");
	assert_int_equal(tj_priority_of(s, "high"), 1000);
	assert_int_equal(tj_priority_of(s, "missing"), 0);
	assert_int_equal(tj_priority_of(s, ""), 0);
	add(s, "{'metadata':{'name':'normal'},'value':10,'globalDefault':true}");
	assert_int_equal(tj_priority_of(s, NULL), 10);
	assert_int_equal(tj_priority_of(s, ""), 10);
	assert_int_equal(tj_priority_of(s, "high"), 1000);
	tj_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_priority_of),
	};
	return cmocka_run_group_tests_name("priority_class", tests, NULL, NULL);
}
