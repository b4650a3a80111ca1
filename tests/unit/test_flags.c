#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "controller/flags.h"

struct parse_case {
	const char *name;
	int argc;
	char *argv[4];
	int want_rc;
	enum tj_flags_action want_action;
	const char *want_err;
};

static const struct parse_case cases[] = {
	{ "no arguments runs", 1, { "tjc" }, 0, TJ_FLAGS_RUN, "" },
	{ "--help", 2, { "tjc", "--help" }, 0, TJ_FLAGS_HELP, "" },
	{ "--version", 2, { "tjc", "--version" }, 0, TJ_FLAGS_VERSION, "" },
	{ "first of help and version wins",
	  3,
	  { "tjc", "--version", "--help" },
	  0,
	  TJ_FLAGS_VERSION,
	  "" },
	{ "unknown flag",
	  2,
	  { "tjc", "--frobnicate" },
	  -EINVAL,
	  TJ_FLAGS_RUN,
	  "unknown argument '--frobnicate' (see --help)" },
	{ "prefix is not a match",
	  2,
	  { "tjc", "--hel" },
	  -EINVAL,
	  TJ_FLAGS_RUN,
	  "unknown argument '--hel' (see --help)" },
	{ "unknown command",
	  2,
	  { "tjc", "apply" },
	  -EINVAL,
	  TJ_FLAGS_RUN,
	  "unknown command 'apply' (see --help)" },
	{ "render options belong to render",
	  3,
	  { "tjc", "-f", "x" },
	  -EINVAL,
	  TJ_FLAGS_RUN,
	  "unknown argument '-f' (see --help)" },
};

static void test_parse_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct tj_flags flags = { .action = (enum tj_flags_action)99 };
		char err[128];

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_flags_parse(c->argc, c->argv, &flags, err, sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc == 0)
			assert_int_equal(flags.action, c->want_action);
		else
			assert_int_equal(flags.action, 99); /* untouched on error */
	}
}

struct value_case {
	const char *name;
	int argc;
	char *argv[6];
	int want_rc;
	const char *want_err;
	const char *metrics; /* want "host|port", or "off" */
	const char *probes;
	enum tj_log_level level;
};

static const struct value_case value_cases[] = {
	{ "defaults", 1, { "tjc" }, 0, "", "|8080", "|8081", TJ_LOG_INFO },
	{ "values after =",
	  4,
	  { "tjc", "--metrics-bind-address=127.0.0.1:9090", "--health-probe-bind-address=:0",
	    "--log-level=debug" },
	  0,
	  "",
	  "127.0.0.1|9090",
	  "|0",
	  TJ_LOG_DEBUG },
	{ "values as the next argument",
	  5,
	  { "tjc", "--metrics-bind-address", "[::1]:8443", "--zap-log-level", "error" },
	  0,
	  "",
	  "::1|8443",
	  "|8081",
	  TJ_LOG_ERROR },
	{ "0 disables",
	  3,
	  { "tjc", "--metrics-bind-address=0", "--health-probe-bind-address=0" },
	  0,
	  "",
	  "off",
	  "off",
	  TJ_LOG_INFO },
	{ "the last value wins",
	  3,
	  { "tjc", "--log-level=debug", "--zap-log-level=1" },
	  0,
	  "",
	  "|8080",
	  "|8081",
	  TJ_LOG_DEBUG },
	{ "zap verbosity 0 is info",
	  2,
	  { "tjc", "--zap-log-level=0" },
	  0,
	  "",
	  "|8080",
	  "|8081",
	  TJ_LOG_INFO },
	{ "values mix with --help",
	  3,
	  { "tjc", "--log-level=warn", "--help" },
	  0,
	  "",
	  "|8080",
	  "|8081",
	  TJ_LOG_WARN },
	{ "missing value",
	  2,
	  { "tjc", "--log-level" },
	  -EINVAL,
	  "--log-level needs a value",
	  NULL,
	  NULL,
	  0 },
	{ "bad level",
	  2,
	  { "tjc", "--log-level=loud" },
	  -EINVAL,
	  "--log-level: 'loud' is not a level (error, warn, info, debug)",
	  NULL,
	  NULL,
	  0 },
	{ "empty level",
	  2,
	  { "tjc", "--zap-log-level=" },
	  -EINVAL,
	  "--zap-log-level: '' is not a level (error, warn, info, debug)",
	  NULL,
	  NULL,
	  0 },
	{ "bad address",
	  3,
	  { "tjc", "--metrics-bind-address", "8080" },
	  -EINVAL,
	  "--metrics-bind-address: '8080': missing port (use HOST:PORT, :PORT, or 0 to disable)",
	  NULL,
	  NULL,
	  0 },
	{ "bad port",
	  2,
	  { "tjc", "--health-probe-bind-address=:99999" },
	  -EINVAL,
	  "--health-probe-bind-address: ':99999': port must be a number from 0 to 65535",
	  NULL,
	  NULL,
	  0 },
	{ "a flag takes no value",
	  2,
	  { "tjc", "--help=yes" },
	  -EINVAL,
	  "unknown argument '--help=yes' (see --help)",
	  NULL,
	  NULL,
	  0 },
	{ "a longer name is not the option",
	  2,
	  { "tjc", "--log-levels=info" },
	  -EINVAL,
	  "unknown argument '--log-levels=info' (see --help)",
	  NULL,
	  NULL,
	  0 },
};

static void expect_addr(const struct tj_bind_addr *a, const char *want)
{
	char got[300];

	if (a->disabled)
		snprintf(got, sizeof(got), "off");
	else
		snprintf(got, sizeof(got), "%s|%s", a->host, a->port);
	assert_string_equal(got, want);
}

static void test_value_options_table(void **state)
{
	for (size_t i = 0; i < sizeof(value_cases) / sizeof(value_cases[0]); i++) {
		const struct value_case *c = &value_cases[i];
		struct tj_flags flags = { .log_level = (enum tj_log_level)99 };
		char err[160];

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_flags_parse(c->argc, c->argv, &flags, err, sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc < 0) {
			assert_int_equal(flags.log_level, 99); /* untouched on error */
			continue;
		}
		expect_addr(&flags.metrics_addr, c->metrics);
		expect_addr(&flags.probe_addr, c->probes);
		assert_int_equal(flags.log_level, c->level);
	}
}

struct render_case {
	const char *name;
	int argc;
	char *argv[9];
	int want_rc;
	const char *want_err;
	enum tj_flags_action want_action;
	/* -f, --runtime, --runtime-dir, --config; NULL means "" */
	const char *file, *runtime, *runtime_dir, *config;
};

static const struct render_case render_cases[] = {
	{ "every option",
	  9,
	  { "tjc", "render", "-f", "job.yaml", "--runtime", "rt.yaml", "--config=c.yaml",
	    "--runtime-dir", "/rt" },
	  0,
	  "",
	  TJ_FLAGS_RENDER,
	  "job.yaml",
	  "rt.yaml",
	  "/rt",
	  "c.yaml" },
	{ "--filename=",
	  3,
	  { "tjc", "render", "--filename=j.yaml" },
	  0,
	  "",
	  TJ_FLAGS_RENDER,
	  "j.yaml",
	  NULL,
	  NULL,
	  NULL },
	{ "--help prints render's usage",
	  3,
	  { "tjc", "render", "--help" },
	  0,
	  "",
	  TJ_FLAGS_HELP,
	  NULL,
	  NULL,
	  NULL,
	  NULL },
	{ "-f is required",
	  4,
	  { "tjc", "render", "--runtime", "rt.yaml" },
	  -EINVAL,
	  "render: -f TRAINJOB.yaml is required",
	  TJ_FLAGS_RUN,
	  NULL,
	  NULL,
	  NULL,
	  NULL },
	{ "-f needs a value",
	  3,
	  { "tjc", "render", "-f" },
	  -EINVAL,
	  "--filename needs a value",
	  TJ_FLAGS_RUN,
	  NULL,
	  NULL,
	  NULL,
	  NULL },
	{ "-f empty",
	  4,
	  { "tjc", "render", "-f", "" },
	  -EINVAL,
	  "--filename: needs a path",
	  TJ_FLAGS_RUN,
	  NULL,
	  NULL,
	  NULL,
	  NULL },
	{ "no --version",
	  3,
	  { "tjc", "render", "--version" },
	  -EINVAL,
	  "unknown argument '--version' (see --help)",
	  TJ_FLAGS_RUN,
	  NULL,
	  NULL,
	  NULL,
	  NULL },
	{ "no controller flags",
	  5,
	  { "tjc", "render", "-f", "j.yaml", "--log-level=debug" },
	  -EINVAL,
	  "unknown argument '--log-level=debug' (see --help)",
	  TJ_FLAGS_RUN,
	  NULL,
	  NULL,
	  NULL,
	  NULL },
};

static void test_render_table(void **state)
{
	for (size_t i = 0; i < sizeof(render_cases) / sizeof(render_cases[0]); i++) {
		const struct render_case *c = &render_cases[i];
		static struct tj_flags flags;
		char err[160];

		print_message("# case: %s\n", c->name);
		flags.action = (enum tj_flags_action)99;
		assert_int_equal(tj_flags_parse(c->argc, c->argv, &flags, err, sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc < 0) {
			assert_int_equal(flags.action, 99); /* untouched on error */
			continue;
		}
		assert_int_equal(flags.action, c->want_action);
		assert_int_equal(flags.topic, TJ_FLAGS_RENDER);
		assert_string_equal(flags.render.file, c->file ? c->file : "");
		assert_string_equal(flags.render.runtime, c->runtime ? c->runtime : "");
		assert_string_equal(flags.render.runtime_dir, c->runtime_dir ? c->runtime_dir : "");
		assert_string_equal(flags.render.config, c->config ? c->config : "");
	}
}

static void test_error_is_truncated_and_terminated(void **state)
{
	char *argv[] = { "tjc", "--a-very-long-unknown-flag" };
	struct tj_flags flags;
	char err[8];

	assert_int_equal(tj_flags_parse(2, argv, &flags, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown");
}

static void test_usage_lists_every_option(void **state)
{
	char buf[4096] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	assert_non_null(f);
	tj_flags_usage(f, "tjc", TJ_FLAGS_RUN);
	fclose(f);
	assert_non_null(strstr(buf, "Usage: tjc [OPTION]..."));
	assert_non_null(strstr(buf, "       tjc render -f TRAINJOB.yaml [OPTION]..."));
	assert_non_null(strstr(buf, "  render   "));
	assert_non_null(strstr(buf, "--help"));
	assert_non_null(strstr(buf, "--version"));
	assert_non_null(strstr(buf, "  --metrics-bind-address=ADDR        serve /metrics here "
	                            "(default :8080; 0 disables)\n"));
	assert_non_null(strstr(buf, "--health-probe-bind-address=ADDR"));
	assert_non_null(strstr(buf, "--log-level=LEVEL"));
	assert_non_null(strstr(buf, "--zap-log-level=LEVEL"));
	assert_non_null(strstr(buf, "  --leader-elect                     only the holder of a "
	                            "Lease reconciles (default false)\n"));
	assert_non_null(strstr(buf, "  --leader-election-namespace=NS     the Lease's namespace "
	                            "(default: the pod's; \"default\" out of cluster)\n"));
	assert_non_null(strstr(buf, "--leader-election-id=NAME"));
	assert_non_null(strstr(buf, "--leader-elect-lease-duration=DUR "));
	assert_non_null(strstr(buf, "--leader-elect-renew-deadline=DUR "));
	assert_non_null(strstr(buf, "--leader-elect-retry-period=DUR "));
}

static void test_render_usage_lists_every_option(void **state)
{
	char buf[2048] = { 0 };
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");

	assert_non_null(f);
	tj_flags_usage(f, "tjc", TJ_FLAGS_RENDER);
	fclose(f);
	assert_non_null(strstr(buf, "Usage: tjc render -f TRAINJOB.yaml [OPTION]..."));
	assert_non_null(strstr(buf, "  -f, --filename=TRAINJOB.yaml       the TrainJob(s) to "
	                            "render (required)\n"));
	assert_non_null(strstr(buf, "  --runtime=RUNTIME.yaml "));
	assert_non_null(strstr(buf, "  --runtime-dir=DIR "));
	assert_non_null(strstr(buf, "  --config=CONFIG.yaml "));
	assert_null(strstr(buf, "--version"));
	assert_null(strstr(buf, "--log-level"));
}

struct run_case {
	const char *name;
	int argc;
	char *argv[6];
	int want_rc;
	const char *want_err;
	const char *kubeconfig, *context, *config, *namespace; /* "" when not given */
};

static const struct run_case run_cases[] = {
	{ "none given", 1, { "tjc" }, 0, "", "", "", "", "" },
	{ "all given, both spellings",
	  6,
	  { "tjc", "--kubeconfig=/k", "--context", "ctx", "--config=/c.yaml", "--namespace=a" },
	  0,
	  "",
	  "/k",
	  "ctx",
	  "/c.yaml",
	  "a" },
	{ "empty namespace",
	  2,
	  { "tjc", "--namespace=" },
	  -EINVAL,
	  "--namespace: must not be empty",
	  "",
	  "",
	  "",
	  "" },
	{ "kubeconfig without a value",
	  2,
	  { "tjc", "--kubeconfig" },
	  -EINVAL,
	  "--kubeconfig needs a value",
	  "",
	  "",
	  "",
	  "" },
	{ "namespace too long",
	  2,
	  { "tjc",
	    "--namespace=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" },
	  -EINVAL,
	  "--namespace: is longer than 63 characters",
	  "",
	  "",
	  "",
	  "" },
};

static void test_rate_limit_options(void **state)
{
	static struct tj_flags flags;
	char *ok[] = { "tjc", "--kube-api-qps=2.5", "--kube-api-burst", "7" };
	char *bad_qps[] = { "tjc", "--kube-api-qps=-1" };
	char *bad_burst[] = { "tjc", "--kube-api-burst=0" };
	char err[128];

	memset(&flags, 0, sizeof(flags));
	assert_int_equal(tj_flags_parse(4, ok, &flags, err, sizeof(err)), 0);
	assert_true(flags.run.qps == 2.5);
	assert_int_equal(flags.run.burst, 7);
	assert_int_equal(tj_flags_parse(2, bad_qps, &flags, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--kube-api-qps: '-1' is not a rate from 0 (no limit) to 1000000");
	assert_int_equal(tj_flags_parse(2, bad_burst, &flags, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--kube-api-burst: '0' is not a count from 1 to 1000000");
}

/* --kueue: off unless given, on alone or with =true, off again with =false. */
static void test_kueue_option(void **state)
{
	static struct tj_flags flags;
	char *none[] = { "tjc" };
	char *on[] = { "tjc", "--kueue" };
	char *off[] = { "tjc", "--kueue", "--kueue=false" };
	char *bad[] = { "tjc", "--kueue=yes" };
	char err[128];

	memset(&flags, 0, sizeof(flags));
	assert_int_equal(tj_flags_parse(1, none, &flags, err, sizeof(err)), 0);
	assert_false(flags.run.kueue);
	assert_int_equal(tj_flags_parse(2, on, &flags, err, sizeof(err)), 0);
	assert_true(flags.run.kueue);
	assert_int_equal(tj_flags_parse(3, off, &flags, err, sizeof(err)), 0);
	assert_false(flags.run.kueue);
	assert_int_equal(tj_flags_parse(2, bad, &flags, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--kueue: 'yes' is not true or false");
}

static void test_run_options(void **state)
{
	static struct tj_flags flags; /* large (paths): not on the stack */

	for (size_t i = 0; i < sizeof(run_cases) / sizeof(run_cases[0]); i++) {
		const struct run_case *c = &run_cases[i];
		char err[128];

		print_message("# case: %s\n", c->name);
		memset(&flags, 0, sizeof(flags));
		assert_int_equal(tj_flags_parse(c->argc, c->argv, &flags, err, sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc < 0)
			continue;
		assert_int_equal(flags.action, TJ_FLAGS_RUN);
		assert_string_equal(flags.run.kubeconfig, c->kubeconfig);
		assert_string_equal(flags.run.context, c->context);
		assert_string_equal(flags.run.config, c->config);
		assert_string_equal(flags.run.namespace, c->namespace);
	}
}

struct leader_case {
	const char *name;
	int argc;
	char *argv[5];
	int want_rc;
	const char *want_err;
	bool elect;
	const char *id, *namespace;
	uint64_t lease_ms, renew_ms, retry_ms;
};

static const struct leader_case leader_cases[] = {
	{ "off by default, controller-runtime's timings",
	  1,
	  { "tjc" },
	  0,
	  "",
	  false,
	  "trainjob-controller",
	  "",
	  15000,
	  10000,
	  2000 },
	{ "--leader-elect alone turns it on",
	  2,
	  { "tjc", "--leader-elect" },
	  0,
	  "",
	  true,
	  "trainjob-controller",
	  "",
	  15000,
	  10000,
	  2000 },
	{ "=false turns it off again",
	  3,
	  { "tjc", "--leader-elect", "--leader-elect=false" },
	  0,
	  "",
	  false,
	  "trainjob-controller",
	  "",
	  15000,
	  10000,
	  2000 },
	{ "=true, the name and the namespace",
	  5,
	  { "tjc", "--leader-elect=true", "--leader-election-id=tj-lock",
	    "--leader-election-namespace", "ops" },
	  0,
	  "",
	  true,
	  "tj-lock",
	  "ops",
	  15000,
	  10000,
	  2000 },
	{ "Go durations",
	  4,
	  { "tjc", "--leader-elect-lease-duration=1m30s", "--leader-elect-renew-deadline=1.5s",
	    "--leader-elect-retry-period=500ms" },
	  0,
	  "",
	  false,
	  "trainjob-controller",
	  "",
	  90000,
	  1500,
	  500 },
	{ "durations as the next argument, and in microseconds",
	  5,
	  { "tjc", "--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline",
	    "3000000\u00b5s" },
	  0,
	  "",
	  false,
	  "trainjob-controller",
	  "",
	  4000,
	  3000,
	  2000 },
	{ "a switch does not take the next argument",
	  4,
	  { "tjc", "--log-level=info", "--leader-elect", "false" },
	  -EINVAL,
	  "unknown argument 'false' (see --help)",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "a switch is true or false",
	  2,
	  { "tjc", "--leader-elect=yes" },
	  -EINVAL,
	  "--leader-elect: 'yes' is not true or false",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "a duration needs a unit",
	  2,
	  { "tjc", "--leader-elect-lease-duration=15" },
	  -EINVAL,
	  "--leader-elect-lease-duration: '15' is not a duration such as 15s, 1m30s or 500ms (at "
	  "most 24h)",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "no negative durations",
	  2,
	  { "tjc", "--leader-elect-retry-period=-2s" },
	  -EINVAL,
	  "--leader-elect-retry-period: '-2s' is not a duration such as 15s, 1m30s or 500ms (at "
	  "most 24h)",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "no unknown units",
	  2,
	  { "tjc", "--leader-elect-retry-period=2d" },
	  -EINVAL,
	  "--leader-elect-retry-period: '2d' is not a duration such as 15s, 1m30s or 500ms (at "
	  "most 24h)",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "at most a day",
	  2,
	  { "tjc", "--leader-elect-lease-duration=24h1s" },
	  -EINVAL,
	  "--leader-elect-lease-duration: '24h1s' is not a duration such as 15s, 1m30s or 500ms "
	  "(at most 24h)",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "the timings must fit together",
	  2,
	  { "tjc", "--leader-elect-renew-deadline=20s" },
	  -EINVAL,
	  "leader election: the renew deadline (20s) must be shorter than the lease duration "
	  "(15s)",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "0 is a duration, but not a retry period",
	  2,
	  { "tjc", "--leader-elect-retry-period=0" },
	  -EINVAL,
	  "leader election: the retry period must be longer than 0",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
	{ "an empty name",
	  2,
	  { "tjc", "--leader-election-id=" },
	  -EINVAL,
	  "--leader-election-id: must not be empty",
	  false,
	  NULL,
	  NULL,
	  0,
	  0,
	  0 },
};

static void test_leader_election_options(void **state)
{
	static struct tj_flags flags; /* large (paths): not on the stack */

	for (size_t i = 0; i < sizeof(leader_cases) / sizeof(leader_cases[0]); i++) {
		const struct leader_case *c = &leader_cases[i];
		char err[160];

		print_message("# case: %s\n", c->name);
		memset(&flags, 0, sizeof(flags));
		flags.run.leader_timings.retry_period_ms = 99; /* untouched on error */
		assert_int_equal(tj_flags_parse(c->argc, c->argv, &flags, err, sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc < 0) {
			assert_int_equal(flags.run.leader_timings.retry_period_ms, 99);
			continue;
		}
		assert_int_equal(flags.run.leader_elect, c->elect);
		assert_string_equal(flags.run.leader_election_id, c->id);
		assert_string_equal(flags.run.leader_election_namespace, c->namespace);
		assert_int_equal(flags.run.leader_timings.lease_duration_ms, c->lease_ms);
		assert_int_equal(flags.run.leader_timings.renew_deadline_ms, c->renew_ms);
		assert_int_equal(flags.run.leader_timings.retry_period_ms, c->retry_ms);
	}
}

/* Streaming lists are the default; --paginated-lists turns them off, and takes a bool. */
static void test_paginated_lists(void **state)
{
	static struct tj_flags flags;
	const struct {
		const char *arg;
		int want_rc;
		bool want;
	} lists[] = {
		{ NULL, 0, false },
		{ "--paginated-lists", 0, true },
		{ "--paginated-lists=true", 0, true },
		{ "--paginated-lists=0", 0, false },
		{ "--paginated-lists=maybe", -EINVAL, false },
	};

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char *argv[] = { "tjc", (char *)lists[i].arg, NULL };
		char err[160];

		print_message("# case: %s\n", lists[i].arg ? lists[i].arg : "(none)");
		memset(&flags, 0, sizeof(flags));
		assert_int_equal(
		        tj_flags_parse(lists[i].arg ? 2 : 1, argv, &flags, err, sizeof(err)),
		        lists[i].want_rc);
		if (lists[i].want_rc == 0)
			assert_int_equal(flags.run.paginated_lists, lists[i].want);
		else
			assert_string_equal(err, "--paginated-lists: 'maybe' is not true or false");
	}
}

struct metrics_case {
	const char *name;
	int argc;
	const char *argv[4];
	int want_rc;
	const char *want_err;
	bool secure_in_cluster, secure_outside;
	const char *cert_path;
};

static const struct metrics_case metrics_cases[] = {
	{ .name = "by default: secure in cluster only",
	  .argc = 1,
	  .argv = { "tjc" },
	  .secure_in_cluster = true,
	  .cert_path = "" },
	{ .name = "--metrics-secure also outside",
	  .argc = 2,
	  .argv = { "tjc", "--metrics-secure" },
	  .secure_in_cluster = true,
	  .secure_outside = true,
	  .cert_path = "" },
	{ .name = "=false: plain HTTP in cluster too",
	  .argc = 2,
	  .argv = { "tjc", "--metrics-secure=false" },
	  .cert_path = "" },
	{ .name = "a certificate directory",
	  .argc = 3,
	  .argv = { "tjc", "--metrics-cert-path", "/etc/metrics-cert" },
	  .secure_in_cluster = true,
	  .cert_path = "/etc/metrics-cert" },
	{ .name = "a switch is true or false",
	  .argc = 2,
	  .argv = { "tjc", "--metrics-secure=on" },
	  .want_rc = -EINVAL,
	  .want_err = "--metrics-secure: 'on' is not true or false" },
	{ .name = "an empty directory name",
	  .argc = 2,
	  .argv = { "tjc", "--metrics-cert-path=" },
	  .want_rc = -EINVAL,
	  .want_err = "--metrics-cert-path: needs a path" },
};

static void test_metrics_security_options(void **state)
{
	for (size_t i = 0; i < sizeof(metrics_cases) / sizeof(metrics_cases[0]); i++) {
		const struct metrics_case *c = &metrics_cases[i];
		struct tj_flags flags;
		char err[256];

		print_message("case: %s\n", c->name);
		assert_int_equal(
		        tj_flags_parse(c->argc, (char *const *)c->argv, &flags, err, sizeof(err)),
		        c->want_rc);
		if (c->want_rc < 0) {
			assert_string_equal(err, c->want_err);
			continue;
		}
		assert_int_equal(tj_flags_metrics_secure(&flags.run, true), c->secure_in_cluster);
		assert_int_equal(tj_flags_metrics_secure(&flags.run, false), c->secure_outside);
		assert_string_equal(flags.run.metrics_cert_path, c->cert_path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_run_options),
		cmocka_unit_test(test_kueue_option),
		cmocka_unit_test(test_rate_limit_options),
		cmocka_unit_test(test_leader_election_options),
		cmocka_unit_test(test_paginated_lists),
		cmocka_unit_test(test_value_options_table),
		cmocka_unit_test(test_error_is_truncated_and_terminated),
		cmocka_unit_test(test_usage_lists_every_option),
		cmocka_unit_test(test_render_table),
		cmocka_unit_test(test_render_usage_lists_every_option),
		cmocka_unit_test(test_metrics_security_options),
	};
	return cmocka_run_group_tests_name("flags", tests, NULL, NULL);
}
