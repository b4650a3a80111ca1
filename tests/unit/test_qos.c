/* QOS tiers (reconcilers/policy/qos.h): which tier a job of a namespace gets, and what a tier's
 * maximum walltime does to the walltime a job gets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reconcilers/policy/qos.h"

static struct tj_qos_tier tiers[] = {
	{ .name = "normal", .priority = 0 },
	{ .name = "debug", .priority = 10, .max_walltime_seconds = 3600 },
	{ .name = "urgent", .priority = 5000 },
};
static char *all_allowed[] = { "normal", "debug", "urgent" };
static char *some_allowed[] = { "normal", "debug" };
static struct tj_qos_namespace rules[] = {
	{ .namespace = "team-a", .allowed = all_allowed, .n_allowed = 3, .default_tier = "debug" },
	{ .namespace = "*", .allowed = some_allowed, .n_allowed = 2, .default_tier = "normal" },
};
static const struct tj_admission_policy policy = {
	.tiers = tiers, .n_tiers = 3, .qos_namespaces = rules, .n_qos_namespaces = 2
};
/* A cluster where only team-a may run. */
static const struct tj_admission_policy closed = {
	.tiers = tiers, .n_tiers = 3, .qos_namespaces = rules, .n_qos_namespaces = 1
};

static const struct resolve_case {
	const char *what;
	const struct tj_admission_policy *policy; /* NULL: the built-in tiers */
	const char *namespace, *asked;
	const char *tier; /* NULL: refused with message */
	const char *message;
} resolve_cases[] = {
	{ "built-in: the default is normal", NULL, "team-x", NULL, "normal", NULL },
	{ "built-in: low is allowed", NULL, "team-x", "low", "low", NULL },
	{ "built-in: high is allowed nowhere", NULL, "team-x", "high", NULL,
	  "metadata.annotations[trainjob.flame.dev/qos]: QOS \"high\" is not allowed there; "
	  "namespace team-x may use: normal, low" },
	{ "a namespace's own default", &policy, "team-a", NULL, "debug", NULL },
	{ "a namespace's own allowed tier", &policy, "team-a", "urgent", "urgent", NULL },
	{ "the rest take \"*\"", &policy, "team-b", NULL, "normal", NULL },
	{ "\"*\" does not allow urgent", &policy, "team-b", "urgent", NULL,
	  "metadata.annotations[trainjob.flame.dev/qos]: QOS \"urgent\" is not allowed there; "
	  "namespace team-b may use: normal, debug" },
	{ "a tier the cluster does not have", &policy, "team-a", "gold", NULL,
	  "metadata.annotations[trainjob.flame.dev/qos]: QOS \"gold\" is not a tier of this "
	  "cluster; namespace team-a may use: normal, debug, urgent" },
	{ "a built-in name the config does not keep", &policy, "team-a", "low", NULL,
	  "metadata.annotations[trainjob.flame.dev/qos]: QOS \"low\" is not a tier of this "
	  "cluster; namespace team-a may use: normal, debug, urgent" },
	{ "no rule for the namespace", &closed, "team-b", NULL, NULL,
	  "namespace team-b may use no QOS tier (admission.namespaces has no entry for it and "
	  "none for \"*\")" },
	{ "no rule, asking", &closed, "team-b", "normal", NULL,
	  "metadata.annotations[trainjob.flame.dev/qos]: QOS \"normal\" is not allowed there; "
	  "namespace team-b may use: none" },
};

static void test_resolve(void **state)
{
	for (size_t i = 0; i < sizeof(resolve_cases) / sizeof(resolve_cases[0]); i++) {
		const struct resolve_case *c = &resolve_cases[i];
		struct tj_problem why = { "", "" };
		const struct tj_qos_tier *t =
		        tj_qos_resolve(c->policy, c->namespace, c->asked, &why);

		if (c->tier ? !t || strcmp(t->name, c->tier) != 0 : t != NULL)
			fail_msg("case \"%s\": got tier %s, want %s", c->what, t ? t->name : "none",
			         c->tier ? c->tier : "none");
		if (!c->tier && (strcmp(why.reason, "PolicyViolation") != 0 ||
		                 strcmp(why.message, c->message) != 0))
			fail_msg("case \"%s\": got %s \"%s\", want PolicyViolation \"%s\"", c->what,
			         why.reason, why.message, c->message);
	}
}

static const struct walltime_case {
	const char *what;
	const char *tier;
	struct tj_walltime in;
	int rc;
	int64_t seconds, max_seconds;
	bool from_default;
	const char *source;
} walltime_cases[] = {
	{ "no maximum: unchanged",
	  "normal",
	  { .seconds = 7200, .source = "spec.activeDeadlineSeconds" },
	  0,
	  7200,
	  0,
	  false,
	  "spec.activeDeadlineSeconds" },
	{ "asked within the maximum",
	  "debug",
	  { .seconds = 600, .source = "spec.activeDeadlineSeconds" },
	  0,
	  600,
	  3600,
	  false,
	  "spec.activeDeadlineSeconds" },
	{ "asked past the maximum: refused",
	  "debug",
	  { .seconds = 7200, .source = "spec.activeDeadlineSeconds" },
	  -22,
	  7200,
	  0,
	  false,
	  "spec.activeDeadlineSeconds" },
	{ "no walltime: the tier's maximum",
	  "debug",
	  { .seconds = 0 },
	  0,
	  3600,
	  3600,
	  true,
	  "the maxWalltime of QOS debug" },
	{ "a default past the maximum: cut to it",
	  "debug",
	  { .seconds = 86400, .from_default = true, .source = "the cluster's defaultWalltime" },
	  0,
	  3600,
	  3600,
	  true,
	  "the maxWalltime of QOS debug" },
	{ "a smaller maximum elsewhere stays",
	  "debug",
	  { .seconds = 1800, .max_seconds = 1800, .from_default = true, .source = "x" },
	  0,
	  1800,
	  1800,
	  true,
	  "x" },
};

static void test_walltime(void **state)
{
	for (size_t i = 0; i < sizeof(walltime_cases) / sizeof(walltime_cases[0]); i++) {
		const struct walltime_case *c = &walltime_cases[i];
		struct tj_walltime w = c->in;
		struct tj_problem why = { "", "" };
		int rc = tj_qos_walltime(tj_qos_find(&policy, c->tier), &w, &why);

		if (rc != c->rc || w.seconds != c->seconds || w.max_seconds != c->max_seconds ||
		    w.from_default != c->from_default || strcmp(w.source, c->source) != 0)
			fail_msg("case \"%s\": got %d %lld/%lld %d \"%s\"", c->what, rc,
			         (long long)w.seconds, (long long)w.max_seconds, w.from_default,
			         w.source);
		if (rc < 0 && !strstr(why.message, "maxWalltime of QOS debug, 1h (3600 s)"))
			fail_msg("case \"%s\": message \"%s\"", c->what, why.message);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_walltime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
