/* Walltime: the resolution of a job's walltime from the class, the namespace and the job;
 * the warning's timing; the walltimes of the config file; the deadline file of every pod. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/policy/walltime.h"

#define H 3600

/* Overrides of the resolution table's config: gh200 4h/2d, h100 only a max of 90m, the
 * cluster 1d/3d; team-a has 7d for gh200 and a default of 1h for every class; team-b only
 * a max of 30m for every class; team-c a default of 5d for gh200, longer than the class's
 * maximum. */
static struct tj_walltime_override overrides[] = {
	{ NULL, "gh200", { 4 * H, 48 * H } },     { NULL, "h100", { 0, 90 * 60 } },
	{ "team-a", "gh200", { 0, 7 * 24 * H } }, { "team-a", NULL, { H, 0 } },
	{ "team-b", NULL, { 0, 30 * 60 } },       { "team-c", "gh200", { 5 * 24 * H, 0 } },
};
static struct tj_walltime_policy policy = {
	.cluster = { 24 * H, 72 * H },
	.overrides = overrides,
	.n_overrides = sizeof(overrides) / sizeof(overrides[0]),
	.warning_seconds = 300,
};
/* Only a cluster-wide maximum, no default anywhere. */
static struct tj_walltime_policy max_only = { .cluster = { 0, 8 * H }, .warning_seconds = 300 };

struct resolve_case {
	const char *name;
	const struct tj_walltime_policy *policy; /* NULL: no walltime section */
	const char *namespace;
	int cls;           /* index into test_classes (gh200, h100), -1: none */
	int64_t requested; /* activeDeadlineSeconds */
	int want_rc;
	int64_t want_seconds, want_max;
	bool want_default;
	const char *want_source; /* or the PolicyViolation message */
};

static const struct resolve_case resolve_cases[] = {
	{ "no walltime section: no walltime, no maximum", NULL, "team-x", 0, 0, 0, 0, 0, false,
	  "" },
	{ "no walltime section: the job's own walltime", NULL, "team-x", 0, 600, 0, 600, 0, false,
	  "spec.activeDeadlineSeconds" },
	{ "the class's default and maximum", &policy, "team-x", 0, 0, 0, 4 * H, 48 * H, true,
	  "the defaultWalltime of GPU class gh200" },
	{ "a class with only a maximum: the cluster's default is cut to it", &policy, "team-x", 1,
	  0, 0, 90 * 60, 90 * 60, true, "the maxWalltime of GPU class h100" },
	{ "no class: the cluster's limits", &policy, "team-x", -1, 0, 0, 24 * H, 72 * H, true,
	  "the cluster's defaultWalltime" },
	{ "the job asks for less than the maximum", &policy, "team-x", 0, 2 * H, 0, 2 * H, 48 * H,
	  false, "spec.activeDeadlineSeconds" },
	{ "the job asks for exactly the maximum", &policy, "team-x", 0, 48 * H, 0, 48 * H, 48 * H,
	  false, "spec.activeDeadlineSeconds" },
	{ "the job asks for more than the class's maximum", &policy, "team-x", 0, 48 * H + 1,
	  -EINVAL, 48 * H + 1, 48 * H, false,
	  "spec.activeDeadlineSeconds (172801 s) is longer than the maxWalltime of GPU class "
	  "gh200, 2d (172800 s); ask for at most 172800 s" },
	{ "a namespace's maximum for the class raises it", &policy, "team-a", 0, 5 * 24 * H, 0,
	  5 * 24 * H, 7 * 24 * H, false, "spec.activeDeadlineSeconds" },
	{ "a namespace's default for every class beats the class's", &policy, "team-a", 0, 0, 0, H,
	  7 * 24 * H, true, "the defaultWalltime of namespace team-a" },
	{ "the namespace's default for every class, the class's maximum", &policy, "team-a", 1, 0,
	  0, H, 90 * 60, true, "the defaultWalltime of namespace team-a" },
	{ "a namespace's maximum for every class lowers the class's", &policy, "team-b", 0, H,
	  -EINVAL, H, 30 * 60, false,
	  "spec.activeDeadlineSeconds (3600 s) is longer than the maxWalltime of namespace "
	  "team-b, 30m (1800 s); ask for at most 1800 s" },
	{ "a default past the maximum in force is cut to it", &policy, "team-b", 0, 0, 0, 30 * 60,
	  30 * 60, true, "the maxWalltime of namespace team-b" },
	{ "a namespace's default for the class past the class's maximum is cut to it", &policy,
	  "team-c", 0, 0, 0, 48 * H, 48 * H, true, "the maxWalltime of GPU class gh200" },
	{ "another namespace's override does not apply", &policy, "team-ab", 0, 0, 0, 4 * H, 48 * H,
	  true, "the defaultWalltime of GPU class gh200" },
	{ "only a maximum: it is the default, as Slurm's MaxTime", &max_only, "team-x", 0, 0, 0,
	  8 * H, 8 * H, true, "the cluster's maxWalltime" },
	{ "only a maximum: refused past it", &max_only, "team-x", -1, 9 * H, -EINVAL, 9 * H, 8 * H,
	  false,
	  "spec.activeDeadlineSeconds (32400 s) is longer than the cluster's maxWalltime, 8h "
	  "(28800 s); ask for at most 28800 s" },
};

static void test_resolve_table(void **state)
{
	for (size_t i = 0; i < sizeof(resolve_cases) / sizeof(resolve_cases[0]); i++) {
		const struct resolve_case *c = &resolve_cases[i];
		struct tj_config config = test_config;
		struct tj_problem why = { "", "" };
		struct tj_walltime w;
		int rc;

		print_message("# case: %s\n", c->name);
		config.walltime = (struct tj_walltime_policy *)c->policy;
		rc = tj_walltime_resolve(&config, c->namespace,
		                         c->cls >= 0 ? &test_classes[c->cls] : NULL, c->requested,
		                         &w, &why);
		assert_int_equal(rc, c->want_rc);
		assert_int_equal(w.seconds, c->want_seconds);
		assert_int_equal(w.max_seconds, c->want_max);
		assert_int_equal(w.from_default, c->want_default);
		if (rc < 0) {
			assert_string_equal(why.reason, "PolicyViolation");
			assert_string_equal(why.message, c->want_source);
		} else {
			assert_string_equal(w.source, c->want_source);
		}
	}
}

struct warning_case {
	const char *name;
	int64_t start, deadline, warning;
	int64_t want_at;
};

static const struct warning_case warning_cases[] = {
	{ "the default: five minutes before the deadline", 1000, 1000 + H, 300, 1000 + H - 300 },
	{ "a warning as long as the walltime: at the start", 1000, 1300, 300, 1000 },
	{ "a warning longer than the walltime: at the start, not before", 1000, 1060, 300, 1000 },
	{ "no warning time: at the deadline", 1000, 1000 + H, 0, 1000 + H },
	{ "one second before", 1000, 2000, 1, 1999 },
};

static void test_warning_timing_table(void **state)
{
	for (size_t i = 0; i < sizeof(warning_cases) / sizeof(warning_cases[0]); i++) {
		const struct warning_case *c = &warning_cases[i];

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_walltime_warning_at(c->start, c->deadline, c->warning),
		                 c->want_at);
	}
}

/* The annotation, when valid, beats the config's warningSeconds; a bad one is refused by
 * validation and counts as absent. */
static void test_warning_seconds(void **state)
{
	static const struct {
		const char *annotation;
		bool valid;
		int64_t want; /* with the config's 600 */
	} cases[] = {
		{ NULL, true, 600 },        { "0", true, 0 },         { "120", true, 120 },
		{ "604800", true, 604800 }, { "604801", false, 600 }, { "-5", false, 600 },
		{ "5m", false, 600 },       { "", false, 600 },       { " 5", false, 600 },
	};
	struct tj_walltime_policy w = { .warning_seconds = 600 };
	struct tj_config config = { .walltime = &w };

	assert_int_equal(tj_walltime_warning_seconds(NULL, NULL), 300);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_problem why = { "", "" };
		int rc = tj_walltime_validate_warning(cases[i].annotation, &why);

		print_message("# case: '%s'\n",
		              cases[i].annotation ? cases[i].annotation : "(none)");
		assert_int_equal(rc, cases[i].valid ? 0 : -EINVAL);
		assert_int_equal(tj_walltime_warning_seconds(cases[i].annotation, &config),
		                 cases[i].want);
		if (!cases[i].valid) {
			char want[256];

			snprintf(want, sizeof(want),
			         "metadata.annotations[trainjob.flame.dev/"
			         "deadline-warning-seconds]: "
			         "'%s' is not an integer between 0 and 604800",
			         cases[i].annotation);
			assert_string_equal(why.reason, "InvalidSpec");
			assert_string_equal(why.message, want);
		}
	}
}

static void test_parse_and_format(void **state)
{
	static const struct {
		const char *text;
		long long want; /* 0: refused */
		const char *formatted;
	} cases[] = {
		{ "60", 60, "1m" },
		{ "90s", 90, "1m30s" },
		{ "1h30m", 5400, "1h30m" },
		{ "2d", 172800, "2d" },
		{ "1d12h", 129600, "1d12h" },
		{ "1d1h1m1s", 90061, "1d1h1m1s" },
		{ "366d", 366LL * 86400, "366d" },
		{ "367d", 0, NULL },
		{ "0", 0, NULL },
		{ "0s", 0, NULL },
		{ "", 0, NULL },
		{ "h", 0, NULL },
		{ "30m1h", 0, NULL },
		{ "1h1h", 0, NULL },
		{ "1w", 0, NULL },
		{ "1.5h", 0, NULL },
		{ "-1h", 0, NULL },
		{ "1h ", 0, NULL },
		{ "9999999999", 0, NULL },
		{ "99999999d", 0, NULL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long v = -1;
		int rc = tj_walltime_parse(cases[i].text, &v);

		print_message("# case: '%s'\n", cases[i].text);
		if (!cases[i].want) {
			assert_int_equal(rc, -EINVAL);
			assert_int_equal(v, -1);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(v, cases[i].want);
		char buf[32];
		tj_walltime_format(v, buf);
		assert_string_equal(buf, cases[i].formatted);
	}
	assert_int_equal(tj_walltime_parse(NULL, &(long long){ 0 }), -EINVAL);
}

/* Every container mounts the deadline file; a volume or mount of the template at our name
 * or path is replaced; a mount of our volume elsewhere goes. */
static void test_add_volume(void **state)
{
	cJSON *spec = jlit("{'initContainers':[{'name':'fetch'}],"
	                   "'containers':[{'name':'node','volumeMounts':[{'name':'data',"
	                   "'mountPath':'/data'},{'name':'cfg','mountPath':'/etc/trainjob'}]},"
	                   "{'name':'sidecar','volumeMounts':[{'name':'trainjob-deadline',"
	                   "'mountPath':'/old'}]},{'name':'bare','volumeMounts':'junk'}],"
	                   "'volumes':[{'name':'data','emptyDir':{}},"
	                   "{'name':'trainjob-deadline','emptyDir':{}}]}");
	const char *mount = "{'name':'trainjob-deadline','mountPath':'/etc/trainjob',"
	                    "'readOnly':true}";
	char want[512];

	assert_int_equal(tj_walltime_add_volume(spec), 0);
	assert_json_equal(
	        cJSON_GetObjectItem(spec, "volumes"),
	        "[{'name':'data','emptyDir':{}},{'name':'trainjob-deadline',"
	        "'downwardAPI':{'items':[{'path':'deadline','fieldRef':{'fieldPath':"
	        "'metadata.annotations[\\u0027trainjob.flame.dev/deadline\\u0027]'}}]}}]");
	snprintf(want, sizeof(want), "[{'name':'fetch','volumeMounts':[%s]}]", mount);
	assert_json_equal(cJSON_GetObjectItem(spec, "initContainers"), want);
	snprintf(want, sizeof(want),
	         "[{'name':'node','volumeMounts':[{'name':'data','mountPath':'/data'},%s]},"
	         "{'name':'sidecar','volumeMounts':[%s]},{'name':'bare','volumeMounts':[%s]}]",
	         mount, mount, mount);
	assert_json_equal(cJSON_GetObjectItem(spec, "containers"), want);
	/* Twice is the same as once. */
	assert_int_equal(tj_walltime_add_volume(spec), 0);
	assert_json_equal(cJSON_GetObjectItem(spec, "containers"), want);
	cJSON_Delete(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_table),   cmocka_unit_test(test_warning_timing_table),
		cmocka_unit_test(test_warning_seconds), cmocka_unit_test(test_parse_and_format),
		cmocka_unit_test(test_add_volume),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
