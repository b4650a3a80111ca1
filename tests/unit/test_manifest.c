/* A TrainJob manifest as render plans from it: the namespace kubectl would give it, a
 * placeholder uid, resumed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cli/manifest.h"
#include "reconcilers/json.h"

struct manifest_case {
	const char *name;
	const char *json;
	int want_rc;
	const char *want_namespace; /* of the job, and of the document after the call */
	const char *want_uid;
	bool want_resumed;
};

static const struct manifest_case cases[] = {
	{ "no namespace: default, as kubectl applies it",
	  "{\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"j\"}}", 0, "default", TJ_MANIFEST_UID,
	  false },
	{ "a namespace of its own is kept",
	  "{\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"j\",\"namespace\":\"team\"}}", 0, "team",
	  TJ_MANIFEST_UID, false },
	{ "a uid of its own is kept",
	  "{\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"j\",\"namespace\":\"team\","
	  "\"uid\":\"1234\"}}",
	  0, "team", "1234", false },
	{ "suspended: resumed, and told so",
	  "{\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"j\"},\"spec\":{\"suspend\":true}}", 0,
	  "default", TJ_MANIFEST_UID, true },
	{ "suspend false is not a resume",
	  "{\"kind\":\"TrainJob\",\"metadata\":{\"name\":\"j\"},\"spec\":{\"suspend\":false}}", 0,
	  "default", TJ_MANIFEST_UID, false },
	{ "no name", "{\"kind\":\"TrainJob\",\"metadata\":{\"namespace\":\"team\"}}", -EINVAL,
	  "team", NULL, false },
	{ "no metadata: nothing to add a namespace to", "{\"kind\":\"TrainJob\"}", -EINVAL, NULL,
	  NULL, false },
	{ "metadata that is not an object", "{\"kind\":\"TrainJob\",\"metadata\":[]}", -EINVAL,
	  NULL, NULL, false },
};

static void test_manifest_trainjob(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct manifest_case *c = &cases[i];
		cJSON *doc = cJSON_Parse(c->json);
		struct tj_trainjob *job = (struct tj_trainjob *)&job;
		bool resumed = !c->want_resumed;

		print_message("# case: %s\n", c->name);
		assert_non_null(doc);
		assert_int_equal(tj_manifest_trainjob(doc, &job, &resumed), c->want_rc);
		if (c->want_namespace)
			assert_string_equal(tj_json_string(doc, "metadata.namespace"),
			                    c->want_namespace);
		else
			assert_null(tj_json_string(doc, "metadata.namespace"));
		if (c->want_rc < 0) {
			assert_ptr_equal(job, (struct tj_trainjob *)&job);
			assert_int_equal(resumed, !c->want_resumed);
		} else {
			assert_string_equal(job->name, "j");
			assert_string_equal(job->namespace, c->want_namespace);
			assert_string_equal(job->uid, c->want_uid);
			assert_false(job->suspend);
			assert_int_equal(resumed, c->want_resumed);
			tj_trainjob_free(job);
		}
		cJSON_Delete(doc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_manifest_trainjob),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
