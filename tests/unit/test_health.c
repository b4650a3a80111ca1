#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/http/health.h"

struct world {
	bool leader_fails;
	bool cache_fails;
	int calls;
};

static int informers_synced(void *userdata, char *reason, size_t reason_len)
{
	struct world *w = userdata;

	w->calls++;
	return 0;
}

static int leader_election(void *userdata, char *reason, size_t reason_len)
{
	struct world *w = userdata;

	w->calls++;
	if (!w->leader_fails)
		return 0;
	snprintf(reason, reason_len, "lease not renewed for %ds", 12);
	return -EIO;
}

/* Fails without a reason: the errno text stands in. */
static int cache(void *userdata, char *reason, size_t reason_len)
{
	struct world *w = userdata;

	w->calls++;
	return w->cache_fails ? -EAGAIN : 0;
}

struct probe_case {
	const char *what;
	const char *path;
	bool verbose;
	const char *excludes[3];
	size_t n_excludes;
	bool leader_fails, cache_fails;
	unsigned want_status;
	const char *want_body;
};

#define ALL_OK_VERBOSE                                                                             \
	"[+]informers-synced ok\n[+]leader-election ok\n[+]zz-cache ok\nhealthz check passed\n"

static const struct probe_case cases[] = {
	{ "liveness without checks pings", "/healthz", false, { 0 }, 0, false, false, 200, "ok" },
	{ "liveness verbose",
	  "/healthz",
	  true,
	  { 0 },
	  0,
	  false,
	  false,
	  200,
	  "[+]ping ok\nhealthz check passed\n" },
	{ "liveness trailing slash", "/healthz/", false, { 0 }, 0, true, true, 200, "ok" },
	{ "the ping check alone", "/healthz/ping", false, { 0 }, 0, false, false, 200, "ok" },
	{ "unknown liveness check",
	  "/healthz/nope",
	  false,
	  { 0 },
	  0,
	  false,
	  false,
	  404,
	  "404 page not found\n" },
	{ "ready", "/readyz", false, { 0 }, 0, false, false, 200, "ok" },
	{ "ready verbose, in name order",
	  "/readyz",
	  true,
	  { 0 },
	  0,
	  false,
	  false,
	  200,
	  ALL_OK_VERBOSE },
	{ "not ready lists every check",
	  "/readyz",
	  false,
	  { 0 },
	  0,
	  true,
	  false,
	  500,
	  "[+]informers-synced ok\n[-]leader-election failed: reason withheld\n[+]zz-cache ok\n"
	  "healthz check failed\n" },
	{ "two failures",
	  "/readyz",
	  true,
	  { 0 },
	  0,
	  true,
	  true,
	  500,
	  "[+]informers-synced ok\n[-]leader-election failed: reason withheld\n"
	  "[-]zz-cache failed: reason withheld\nhealthz check failed\n" },
	{ "excluded failure", "/readyz/", false, { "leader-election" }, 1, true, false, 200, "ok" },
	{ "excluded failure verbose",
	  "/readyz",
	  true,
	  { "leader-election" },
	  1,
	  true,
	  false,
	  200,
	  "[+]informers-synced ok\n[+]leader-election excluded: ok\n[+]zz-cache ok\n"
	  "healthz check passed\n" },
	{ "unmatched excludes warn once each",
	  "/readyz",
	  true,
	  { "nope", "nope", "x" },
	  3,
	  false,
	  false,
	  200,
	  "[+]informers-synced ok\n[+]leader-election ok\n[+]zz-cache ok\n"
	  "warn: some health checks cannot be excluded: no matches for \"nope\", \"x\"\n"
	  "healthz check passed\n" },
	{ "one check with its reason",
	  "/readyz/leader-election",
	  false,
	  { 0 },
	  0,
	  true,
	  false,
	  500,
	  "internal server error: lease not renewed for 12s\n" },
	{ "one check, errno as reason",
	  "/readyz/zz-cache",
	  false,
	  { 0 },
	  0,
	  false,
	  true,
	  500,
	  "internal server error: Resource temporarily unavailable\n" },
	{ "one passing check", "/readyz/informers-synced", false, { 0 }, 0, true, true, 200, "ok" },
	{ "no ping once checks exist",
	  "/readyz/ping",
	  false,
	  { 0 },
	  0,
	  false,
	  false,
	  404,
	  "404 page not found\n" },
	{ "longer prefix is not the probe",
	  "/readyzz",
	  false,
	  { 0 },
	  0,
	  false,
	  false,
	  404,
	  "404 page not found\n" },
	{ "below a check",
	  "/readyz/informers-synced/x",
	  false,
	  { 0 },
	  0,
	  false,
	  false,
	  404,
	  "404 page not found\n" },
	{ "other path", "/metrics", false, { 0 }, 0, false, false, 404, "404 page not found\n" },
};

static void test_probe_table(void **state)
{
	struct tj_health *h;
	struct world w = { 0 };

	assert_int_equal(tj_health_new(&h), 0);
	/* Added out of order: the output is in name order. */
	assert_int_equal(tj_health_add(h, TJ_READYZ, "zz-cache", cache, &w), 0);
	assert_int_equal(tj_health_add(h, TJ_READYZ, "leader-election", leader_election, &w), 0);
	assert_int_equal(tj_health_add(h, TJ_READYZ, "informers-synced", informers_synced, &w), 0);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct probe_case *c = &cases[i];
		struct tj_health_reply reply = { 0 };

		print_message("# case: %s\n", c->what);
		w.leader_fails = c->leader_fails;
		w.cache_fails = c->cache_fails;
		assert_int_equal(tj_health_handle(h, c->path, c->verbose, c->excludes,
		                                  c->n_excludes, &reply),
		                 0);
		assert_int_equal(reply.status, c->want_status);
		assert_string_equal(reply.body, c->want_body);
		assert_int_equal(reply.len, strlen(c->want_body));
		free(reply.body);
	}
	tj_health_free(h);
}

static void test_excluded_check_does_not_run(void **state)
{
	struct tj_health *h;
	struct world w = { 0 };
	struct tj_health_reply reply;
	const char *excl[] = { "leader-election" };

	assert_int_equal(tj_health_new(&h), 0);
	assert_int_equal(tj_health_add(h, TJ_READYZ, "leader-election", leader_election, &w), 0);
	assert_int_equal(tj_health_handle(h, "/readyz", false, excl, 1, &reply), 0);
	assert_int_equal(w.calls, 0);
	free(reply.body);
	assert_int_equal(tj_health_handle(h, "/readyz", false, NULL, 0, &reply), 0);
	assert_int_equal(w.calls, 1);
	free(reply.body);
	/* Readiness checks are not liveness checks. */
	assert_int_equal(tj_health_handle(h, "/healthz/leader-election", false, NULL, 0, &reply),
	                 0);
	assert_int_equal(reply.status, 404);
	free(reply.body);
	tj_health_free(h);
}

static void test_add_checks(void **state)
{
	struct tj_health *h;
	struct world w = { 0 };
	char name[16];
	static const char long_name[] =
	        "a123456789012345678901234567890123456789012345678901234567890123";

	assert_int_equal(tj_health_new(&h), 0);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "loop", cache, &w), 0);
	assert_int_equal(tj_health_add(h, TJ_READYZ, "loop", cache, &w), 0);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "loop", cache, &w), -EEXIST);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "", cache, &w), -EINVAL);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "a/b", cache, &w), -EINVAL);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "a b", cache, &w), -EINVAL);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, long_name, cache, &w), -EINVAL);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, long_name + 1, cache, &w), 0);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "Caps_and.dots-1", cache, &w), 0);
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "nofn", NULL, &w), -EINVAL);
	assert_int_equal(tj_health_add(h, (enum tj_health_kind)7, "x", cache, &w), -EINVAL);
	for (int i = 3; i < TJ_HEALTH_MAX_CHECKS; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		assert_int_equal(tj_health_add(h, TJ_HEALTHZ, name, cache, &w), 0);
	}
	assert_int_equal(tj_health_add(h, TJ_HEALTHZ, "one-too-many", cache, &w), -E2BIG);
	tj_health_free(h);
	assert_null(tj_health_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_table),
		cmocka_unit_test(test_excluded_check_does_not_run),
		cmocka_unit_test(test_add_checks),
	};
	return cmocka_run_group_tests_name("health", tests, NULL, NULL);
}
