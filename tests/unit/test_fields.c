/* The table of field fates (reconcilers/fields.h) against the shipped CRD schemas and
 * crds/README.md: every property path of the schemas has a fate, every open object says what
 * becomes of the fields it keeps unknown, and the README's "Field by field" rows name the
 * same paths with the same fates. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "cli/yaml.h"
#include "fixtures.h"
#include "reconcilers/fields.h"

#define README_MAX (1024 * 1024)

static const char *source_root(void)
{
	const char *root = getenv("TJ_SOURCE_ROOT");

	if (!root)
		fail_msg("TJ_SOURCE_ROOT is not set; run the tests with meson test");
	return root;
}

/* The schema of spec in the CRD file name (under crds/). */
static cJSON *spec_schema(const char *name, cJSON ***docs, size_t *n)
{
	char path[512], err[256];
	cJSON *versions;

	snprintf(path, sizeof(path), "%s/crds/%s", source_root(), name);
	assert_int_equal(tj_yaml_read_file(path, docs, n, err, sizeof(err)), 0);
	versions = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive((*docs)[0], "spec"), "versions");
	return cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(
	                        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(versions, 0),
	                                                         "schema"),
	                        "openAPIV3Schema"),
	                "properties"),
	        "spec");
}

static int missing;

/* Every property path below schema (at path) has a fate; an open object's unknown members
 * have one too. */
static void walk(enum tj_field_kind kind, const cJSON *schema, const char *path)
{
	const cJSON *prop;
	const struct tj_field *f = *path ? tj_field_find(kind, path) : NULL;
	char sub[512];

	if (*path && !f && !tj_field_has_below(kind, path)) {
		print_message("# no fate: %s\n", path);
		missing++;
	}
	if (f && f->subtree)
		return;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
	            schema, "x-kubernetes-preserve-unknown-fields"))) {
		snprintf(sub, sizeof(sub), "%s%s(unknown)", path, *path ? "." : "");
		if (!tj_field_find(kind, sub)) {
			print_message("# no fate for the unknown fields of: %s\n", path);
			missing++;
		}
	}
	cJSON_ArrayForEach(prop, cJSON_GetObjectItemCaseSensitive(schema, "properties"))
	{
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", prop->string);
		walk(kind, prop, sub);
	}
	prop = cJSON_GetObjectItemCaseSensitive(schema, "items");
	if (prop) {
		snprintf(sub, sizeof(sub), "%s[]", path);
		walk(kind, prop, sub);
	}
}

static void test_every_schema_path_has_a_fate(void **state)
{
	static const struct {
		const char *file;
		enum tj_field_kind kind;
	} crds[] = {
		{ "trainer.kubeflow.org_trainjobs.yaml", TJ_FIELD_TRAINJOB },
		{ "trainer.kubeflow.org_clustertrainingruntimes.yaml", TJ_FIELD_RUNTIME },
		{ "trainer.kubeflow.org_trainingruntimes.yaml", TJ_FIELD_RUNTIME },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(crds) / sizeof(crds[0]); i++) {
		cJSON **docs;
		size_t n;
		const cJSON *spec = spec_schema(crds[i].file, &docs, &n);

		assert_non_null(spec);
		walk(crds[i].kind, spec, "");
		tj_yaml_docs_free(docs, n);
	}
	assert_int_equal(missing, 0);
}

/* What tj_field_find answers: the path's own entry, the ".*" of an open object, a subtree
 * above; nothing for a container of entries or a path it does not know. */
static void test_find(void **state)
{
	static const struct {
		enum tj_field_kind kind;
		const char *path, *want; /* want: the entry's path, NULL for none */
	} cases[] = {
		{ TJ_FIELD_RUNTIME, "mlPolicy.numNodes", "mlPolicy.numNodes" },
		{ TJ_FIELD_RUNTIME, "mlPolicy.paddle", "mlPolicy.*" },
		{ TJ_FIELD_RUNTIME, "mlPolicy", NULL },
		{ TJ_FIELD_RUNTIME, "podGroupPolicy.volcano.queue", "podGroupPolicy" },
		{ TJ_FIELD_RUNTIME, "template.spec.replicatedJobs[].template.spec.template.spec.x",
		  "template.spec.replicatedJobs[].template.spec.template" },
		{ TJ_FIELD_RUNTIME,
		  "template.spec.replicatedJobs[].template.spec.podFailurePolicy.rules[].action",
		  "template.spec.replicatedJobs[].template.spec.podFailurePolicy.rules" },
		{ TJ_FIELD_RUNTIME, "template.spec.replicatedJobs[].template.spec.suspend",
		  "template.spec.replicatedJobs[].template.spec.*" },
		{ TJ_FIELD_RUNTIME, "template.metadata.name", NULL },
		{ TJ_FIELD_TRAINJOB, "runtimeRef.name", "runtimeRef" },
		{ TJ_FIELD_TRAINJOB, "podSpecOverrides[].nodeSelector", "podSpecOverrides[].*" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tj_field *f = tj_field_find(cases[i].kind, cases[i].path);

		print_message("# case: %s\n", cases[i].path);
		if (!cases[i].want)
			assert_null(f);
		else
			assert_string_equal(f ? f->path : "(none)", cases[i].want);
	}
}

/* The walk: refused and unknown fields named with their list indexes, nulls skipped as
 * absent, a limited field's subtree left to its own check, a name too long for any path of
 * the table refused. */
static void test_check(void **state)
{
	static const struct {
		const char *spec, *want; /* want: the message, NULL: accepted */
	} cases[] = {
		{ "{'mlPolicy':{'numNodes':2,'torch':{'numProcPerNode':'auto'}},'podGroupPolicy':"
		  "null,"
		  "'template':{'spec':{'replicatedJobs':[{'name':'a','template':{'spec':{'template'"
		  ":{"
		  "'spec':{'anything':1}}}}}],'failurePolicy':{'rules':[{'whatever':1}]}}}}",
		  NULL },
		{ "{'template':{'spec':{'replicatedJobs':[null,{'name':'a'},{'name':'b','template':"
		  "{"
		  "'spec':{'podFailurePolicy':{'rules':[{'any':1}],'extra':1}}}}]}}}",
		  "spec.template.spec.replicatedJobs[2].template.spec.podFailurePolicy.extra is "
		  "not "
		  "supported by this controller: of podFailurePolicy only rules is implemented; "
		  "remove it from the runtime (crds/README.md lists what is supported)" },
		{ "{'template':{'metadata':{'name':'x'}}}",
		  "spec.template.metadata.name is not supported by this controller: the field is "
		  "not "
		  "implemented; remove it from the runtime (crds/README.md lists what is "
		  "supported)" },
	};
	char spec[400], want[600], name[300];
	struct tj_problem why;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *j = jlit(cases[i].spec);

		print_message("# case %zu\n", i);
		if (!cases[i].want) {
			assert_int_equal(
			        tj_field_check(TJ_FIELD_RUNTIME, j, "UnsupportedRuntime", &why), 0);
		} else {
			assert_int_equal(
			        tj_field_check(TJ_FIELD_RUNTIME, j, "UnsupportedRuntime", &why),
			        -EOPNOTSUPP);
			assert_string_equal(why.reason, "UnsupportedRuntime");
			assert_string_equal(why.message, cases[i].want);
		}
		cJSON_Delete(j);
	}
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "parallelism", 11);
	snprintf(spec, sizeof(spec),
	         "{'template':{'spec':{'replicatedJobs':[{'template':{'spec':{'%s':1}}}]}}}", name);
	{
		cJSON *j = jlit(spec);

		assert_int_equal(tj_field_check(TJ_FIELD_TRAINJOB, j, "InvalidSpec", &why),
		                 -EOPNOTSUPP);
		assert_int_equal(tj_field_check(TJ_FIELD_RUNTIME, j, "UnsupportedRuntime", &why),
		                 -EOPNOTSUPP);
		snprintf(want, sizeof(want), "spec.template.spec.replicatedJobs[0].template.spec.");
		assert_memory_equal(why.message, want, strlen(want));
		cJSON_Delete(j);
	}
}

/* The backticked paths of a README row's first cell, each checked against the table. */
static void check_row(enum tj_field_kind kind, char *line, bool *seen, size_t n_table,
                      const struct tj_field *table)
{
	char *cell = line + 1, *end = strchr(cell, '|'), *fate, *p;
	size_t fate_len;

	assert_non_null(end);
	*end = '\0';
	fate = end + 1;
	fate += strspn(fate, " ");
	fate_len = strcspn(fate, " :,|");
	for (p = strchr(cell, '`'); p; p = strchr(p, '`')) {
		char *close = strchr(p + 1, '`');
		bool found = false;

		assert_non_null(close);
		*close = '\0';
		for (size_t i = 0; i < n_table; i++) {
			if (table[i].kind != kind || strcmp(table[i].path, p + 1) != 0)
				continue;
			found = true;
			seen[i] = true;
			if (strlen(tj_field_fate_name(table[i].fate)) != fate_len ||
			    strncmp(fate, tj_field_fate_name(table[i].fate), fate_len) != 0) {
				print_message("# README says %.*s of %s, the table %s\n",
				              (int)fate_len, fate, p + 1,
				              tj_field_fate_name(table[i].fate));
				missing++;
			}
		}
		if (!found) {
			print_message("# README names %s, which the table lacks\n", p + 1);
			missing++;
		}
		p = close + 1;
	}
}

static void test_readme_matches_the_table(void **state)
{
	size_t n_table, len;
	const struct tj_field *table = tj_fields(&n_table);
	bool *seen = calloc(n_table, sizeof(*seen));
	char path[512], *text, *line, *save = NULL;
	bool in_section = false;
	int kind = -1;

	(void)state;
	assert_non_null(seen);
	missing = 0;
	snprintf(path, sizeof(path), "%s/crds/README.md", source_root());
	assert_int_equal(tj_read_file(path, README_MAX, 0, &text, &len), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "#", 1) == 0) {
			in_section = strcmp(line, "### Field by field") == 0;
			continue;
		}
		if (!in_section)
			continue;
		if (strncmp(line, "TrainJob (", 10) == 0)
			kind = TJ_FIELD_TRAINJOB;
		else if (strncmp(line, "Runtime (", 9) == 0)
			kind = TJ_FIELD_RUNTIME;
		else if (kind >= 0 && line[0] == '|' && strncmp(line, "| field", 7) != 0 &&
		         strncmp(line, "|---", 4) != 0)
			check_row((enum tj_field_kind)kind, line, seen, n_table, table);
	}
	for (size_t i = 0; i < n_table; i++)
		if (!seen[i]) {
			print_message("# the README lacks %s (%s)\n", table[i].path,
			              tj_field_fate_name(table[i].fate));
			missing++;
		}
	free(seen);
	free(text);
	assert_int_equal(missing, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_schema_path_has_a_fate),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_readme_matches_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
