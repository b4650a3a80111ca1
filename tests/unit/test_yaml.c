#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/yaml.h"
#include "fixtures.h"

static char *print(const cJSON *item)
{
	static char buf[8192];
	FILE *f;

	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	assert_non_null(f);
	tj_yaml_print(f, item);
	fclose(f);
	return buf;
}

struct scalar_case {
	const char *json; /* a string, number, bool or null, as JSON */
	const char *want; /* how it is printed as a map value */
};

static const struct scalar_case scalar_cases[] = {
	{ "\"node\"", "node" },
	{ "\"nvidia.com/gpu\"", "nvidia.com/gpu" },
	{ "\"nvcr.io/nvidia/pytorch:25.08-py3\"", "nvcr.io/nvidia/pytorch:25.08-py3" },
	{ "\"400Gi\"", "400Gi" },
	{ "\"500m\"", "500m" },
	{ "\"-c\"", "-c" },
	{ "\"--config\"", "--config" },
	{ "\"/data\"", "/data" },
	{ "\"4\"", "\"4\"" },
	{ "\"1e3\"", "\"1e3\"" },
	{ "\"0x1F\"", "\"0x1F\"" },
	{ "\"1:20\"", "\"1:20\"" },
	{ "\"1_000\"", "\"1_000\"" },
	{ "\"yes\"", "\"yes\"" },
	{ "\"Off\"", "\"Off\"" },
	{ "\"null\"", "\"null\"" },
	{ "\"true\"", "\"true\"" },
	{ "\"\"", "\"\"" },
	{ "\"a: b\"", "\"a: b\"" },
	{ "\"key:\"", "\"key:\"" },
	{ "\"-\"", "\"-\"" },
	{ "\"- x\"", "\"- x\"" },
	{ "\"#comment\"", "\"#comment\"" },
	{ "\"<uid>\"", "\"<uid>\"" },
	{ "\"tab\\there\"", "\"tab\\there\"" },
	{ "\"one line\\n\"", "|\n  one line" },
	{ "\"no newline\\nat the end\"", "|-\n  no newline\n  at the end" },
	{ "\"two\\n\\n\"", "|+\n  two\n" },
	{ "\" leading\\nspace\"", "\" leading\\nspace\"" },
	{ "\"trailing \\nspace\"", "\"trailing \\nspace\"" },
	{ "29500", "29500" },
	{ "-3", "-3" },
	{ "0.5", "0.5" },
	{ "true", "true" },
	{ "null", "null" },
	{ "[]", "[]" },
	{ "{}", "{}" },
};

/* How each scalar is printed, and that YAML reads every one back as the same value. */
static void test_scalars_round_trip(void **state)
{
	for (size_t i = 0; i < sizeof(scalar_cases) / sizeof(scalar_cases[0]); i++) {
		const struct scalar_case *c = &scalar_cases[i];
		cJSON *obj = cJSON_CreateObject(), **docs = NULL;
		char want[256], err[128];
		const char *out;
		size_t n = 0;

		print_message("# case: %s\n", c->json);
		cJSON_AddItemToObject(obj, "k", cJSON_Parse(c->json));
		out = print(obj);
		snprintf(want, sizeof(want), "---\nk: %s\n", c->want);
		assert_string_equal(out, want);
		assert_int_equal(tj_yaml_parse(out, strlen(out), "t", &docs, &n, err, sizeof(err)),
		                 0);
		assert_int_equal(n, 1);
		assert_true(cJSON_Compare(docs[0], obj, true));
		tj_yaml_docs_free(docs, n);
		cJSON_Delete(obj);
	}
}

/* Nesting as kubectl prints it: lists at their key's indentation, maps in lists inline. */
static void test_block_layout(void **state)
{
	cJSON *obj =
	        jlit("{'metadata':{'name':'p','labels':{'a':'1'}},'spec':{'containers':[{'name':"
	             "'node','args':['x','y'],'ports':[{'containerPort':29500}]}],'matrix':[[1,2],"
	             "[]],'empty':{}}}");
	cJSON **docs = NULL;
	const char *out = print(obj);
	char err[128];
	size_t n = 0;

	assert_string_equal(out, "---\n"
	                         "metadata:\n"
	                         "  name: p\n"
	                         "  labels:\n"
	                         "    a: \"1\"\n"
	                         "spec:\n"
	                         "  containers:\n"
	                         "  - name: node\n"
	                         "    args:\n"
	                         "    - x\n"
	                         "    - \"y\"\n"
	                         "    ports:\n"
	                         "    - containerPort: 29500\n"
	                         "  matrix:\n"
	                         "  -\n"
	                         "    - 1\n"
	                         "    - 2\n"
	                         "  - []\n"
	                         "  empty: {}\n");
	assert_int_equal(tj_yaml_parse(out, strlen(out), "t", &docs, &n, err, sizeof(err)), 0);
	assert_true(cJSON_Compare(docs[0], obj, true));
	tj_yaml_docs_free(docs, n);
	cJSON_Delete(obj);
}

/* A stream: empty documents skipped, YAML types mapped to JSON's. */
static void test_parse_stream(void **state)
{
	const char *text = "# a comment only\n---\na: 1\nb: [x, 'y']\nc:\n  - d: true\n    e: 08\n"
	                   "---\n---\nkind: Foo\n";
	cJSON **docs = NULL;
	char err[128];
	size_t n = 0;

	assert_int_equal(tj_yaml_parse(text, strlen(text), "t", &docs, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_json_equal(docs[0], "{'a':1,'b':['x','y'],'c':[{'d':true,'e':'08'}]}");
	assert_json_equal(docs[1], "{'kind':'Foo'}");
	tj_yaml_docs_free(docs, n);
}

/* Each YAML value read into JSON as libfyaml's JSON emitter wrote it before the tree was
 * built without it (the emitter leaks on quotes: the 'xx''y''z''q''r' case fails under
 * AddressSanitizer with it). want is JSON, with " for the quotes. */
struct read_case {
	const char *yaml; /* the value of key a */
	const char *want; /* the document, as JSON */
};

static const struct read_case read_cases[] = {
	{ "null", "{\"a\":null}" },
	{ "", "{\"a\":null}" },
	{ "Null", "{\"a\":\"Null\"}" },
	{ "~", "{\"a\":\"~\"}" },
	{ "true", "{\"a\":true}" },
	{ "false", "{\"a\":false}" },
	{ "True", "{\"a\":\"True\"}" },
	{ "yes", "{\"a\":\"yes\"}" },
	{ "1", "{\"a\":1}" },
	{ "-1", "{\"a\":-1}" },
	{ "+1", "{\"a\":\"+1\"}" },
	{ "01", "{\"a\":\"01\"}" },
	{ "0x1F", "{\"a\":\"0x1F\"}" },
	{ "1.5", "{\"a\":1.5}" },
	{ "-1.5e-3", "{\"a\":-0.0015}" },
	{ "1E3", "{\"a\":1000}" },
	{ ".5", "{\"a\":\".5\"}" },
	{ "1.", "{\"a\":\"1.\"}" },
	{ "1e", "{\"a\":\"1e\"}" },
	{ ".inf", "{\"a\":\".inf\"}" },
	{ "12:30", "{\"a\":\"12:30\"}" },
	{ "'1'", "{\"a\":\"1\"}" },
	{ "\"true\"", "{\"a\":\"true\"}" },
	{ "!!str 1", "{\"a\":\"1\"}" },
	{ "! 1", "{\"a\":\"1\"}" },
	{ "!<tag:yaml.org,2002:str> null", "{\"a\":\"null\"}" },
	{ "!!int 1", "{\"a\":1}" },
	{ "!custom", "{\"a\":null}" },
	{ "'xx''y''z''q''r'", "{\"a\":\"xx'y'z'q'r\"}" },
	{ "\"x\\ty\\u00e9\"", "{\"a\":\"x\\ty\\u00e9\"}" },
	{ "|\n  one\n  two", "{\"a\":\"one\\ntwo\\n\"}" },
	{ ">-\n  one\n  two", "{\"a\":\"one two\"}" },
	{ "&x [1, ~, null, '', {b: c}]", "{\"a\":[1,\"~\",null,\"\",{\"b\":\"c\"}]}" },
	{ "{1: x, null: y, true: z}", "{\"a\":{\"1\":\"x\",\"null\":\"y\",\"true\":\"z\"}}" },
};

static void test_parse_values(void **state)
{
	for (size_t i = 0; i < sizeof(read_cases) / sizeof(read_cases[0]); i++) {
		const struct read_case *c = &read_cases[i];
		char text[256], err[128];
		cJSON **docs = NULL, *want = cJSON_Parse(c->want);
		size_t n = 0;

		print_message("# case: %s\n", c->yaml);
		snprintf(text, sizeof(text), "a: %s\n", c->yaml);
		assert_non_null(want);
		assert_int_equal(
		        tj_yaml_parse(text, strlen(text), "t", &docs, &n, err, sizeof(err)), 0);
		assert_int_equal(n, 1);
		assert_true(cJSON_Compare(docs[0], want, true));
		tj_yaml_docs_free(docs, n);
		cJSON_Delete(want);
	}
}

/* What JSON cannot hold is refused by document: an alias, a key that is not a scalar. */
static void test_parse_what_json_cannot_hold(void **state)
{
	static const char *const texts[] = { "a: &x 1\n---\nb: *x\n", "a: 1\n---\n? [1]\n: x\n" };
	cJSON **docs = (cJSON **)0x1;
	char err[128];
	size_t n = 0;

	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(
		        tj_yaml_parse(texts[i], strlen(texts[i]), "t", &docs, &n, err, sizeof(err)),
		        -EINVAL);
		assert_string_equal(err, "t: document 2 cannot be read as JSON");
		assert_ptr_equal(docs, (cJSON **)0x1);
	}
}

static void test_parse_errors(void **state)
{
	const char *bad = "a: [1, 2\n";
	cJSON **docs = (cJSON **)0x1;
	char err[128] = "";
	size_t n = 7;

	assert_int_equal(tj_yaml_parse(bad, strlen(bad), "job.yaml", &docs, &n, err, sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "job.yaml:2:1: flow sequence without a closing bracket");
	assert_ptr_equal(docs, (cJSON **)0x1);
	assert_int_equal(n, 7);
	assert_int_equal(tj_yaml_read_file("/nonexistent/x.yaml", &docs, &n, err, sizeof(err)),
	                 -ENOENT);
	assert_string_equal(err, "/nonexistent/x.yaml: No such file or directory");
	/* Not UTF-8: refused before libfyaml, whose scanner would spin on it. */
	bad = "kind: TrainJob\n%a\x8c\n";
	assert_int_equal(tj_yaml_parse(bad, strlen(bad), "job.yaml", &docs, &n, err, sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "job.yaml: not valid UTF-8 (byte 17)");
	assert_ptr_equal(docs, (cJSON **)0x1);
	/* A tab as the indentation of a block entry in an explicit key: libfyaml 0.7.12 crashes
	 * while it cleans up after refusing it. */
	bad = "kind: TrainJob\n? a: \t- x\n";
	assert_int_equal(tj_yaml_parse(bad, strlen(bad), "job.yaml", &docs, &n, err, sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "job.yaml: a tab before '-', '?', ':', '|' or '>' (YAML indents "
	                         "with spaces; in quotes, write \\t) (byte 20)");
	assert_ptr_equal(docs, (cJSON **)0x1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars_round_trip),
		cmocka_unit_test(test_block_layout),
		cmocka_unit_test(test_parse_stream),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_what_json_cannot_hold),
		cmocka_unit_test(test_parse_errors),
	};
	return cmocka_run_group_tests_name("yaml", tests, NULL, NULL);
}
