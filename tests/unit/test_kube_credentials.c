#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "kube/credentials.h"

/* ---- ExecCredential parsing ------------------------------------------------------------- */

#define V1 "client.authentication.k8s.io/v1"

struct parse_case {
	const char *name;
	const char *json;
	int want_rc;
	const char *want_token;
	const char *want_cert;
	int64_t want_expiry;
	const char *want_err;
};

static const struct parse_case parse_cases[] = {
	{ "token without expiry",
	  "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t1\"}}",
	  0, "t1", NULL, 0, "" },
	{ "token with expiry",
	  "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t2\","
	  "\"expirationTimestamp\":\"2026-01-02T03:04:05Z\"}}",
	  0, "t2", NULL, 1767323045000, "" },
	{ "fractional seconds and offset",
	  "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
	  "\"expirationTimestamp\":\"2026-01-02T05:04:05.250+02:00\"}}",
	  0, "t", NULL, 1767323045250, "" },
	{ "client certificate",
	  "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{"
	  "\"clientCertificateData\":\"CERT\",\"clientKeyData\":\"KEY\"}}",
	  0, NULL, "CERT", 0, "" },
	{ "not JSON", "token", -EINVAL, NULL, NULL, 0, "the plugin's output is not JSON" },
	{ "wrong kind", "{\"apiVersion\":\"" V1 "\",\"kind\":\"Pod\",\"status\":{\"token\":\"t\"}}",
	  -EINVAL, NULL, NULL, 0, "the plugin's output is not an ExecCredential" },
	{ "wrong version",
	  "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":\"ExecCredential\","
	  "\"status\":{\"token\":\"t\"}}",
	  -EINVAL, NULL, NULL, 0,
	  "the plugin answered apiVersion client.authentication.k8s.io/v1beta1, want " V1 },
	{ "no status", "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\"}", -EINVAL, NULL,
	  NULL, 0, "the plugin's ExecCredential has no status" },
	{ "empty status", "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{}}",
	  -EINVAL, NULL, NULL, 0,
	  "the plugin's ExecCredential has neither a token nor a client certificate" },
	{ "certificate without key",
	  "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{"
	  "\"clientCertificateData\":\"CERT\"}}",
	  -EINVAL, NULL, NULL, 0,
	  "the plugin's ExecCredential has clientCertificateData or clientKeyData without the "
	  "other" },
	{ "bad time",
	  "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\","
	  "\"expirationTimestamp\":\"tomorrow\"}}",
	  -EINVAL, NULL, NULL, 0, "the plugin's expirationTimestamp is not an RFC 3339 time" },
};

static void test_parse(void **state)
{
	for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct tj_exec_credential cred = { .expires_unix_ms = -7 };
		char err[256] = "";

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_exec_credential_parse(c->json, strlen(c->json), V1, &cred, err,
		                                          sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc < 0) {
			assert_int_equal(cred.expires_unix_ms, -7); /* untouched */
			continue;
		}
		if (c->want_token)
			assert_string_equal(cred.token, c->want_token);
		else
			assert_null(cred.token);
		if (c->want_cert) {
			assert_string_equal(cred.client_cert_pem, c->want_cert);
			assert_string_equal(cred.client_key_pem, "KEY");
		} else {
			assert_null(cred.client_cert_pem);
		}
		assert_int_equal(cred.expires_unix_ms, c->want_expiry);
		tj_exec_credential_clear(&cred);
	}
}

/* ---- sources on a loop -------------------------------------------------------------------- */

struct got {
	int calls;
	int rc;
	char token[64];
	char cert[64];
	char error[256];
};

static void on_cred(int rc, const struct tj_credential *cred, const char *error, void *userdata)
{
	struct got *g = userdata;

	g->calls++;
	g->rc = rc;
	snprintf(g->token, sizeof(g->token), "%s", cred && cred->token ? cred->token : "");
	snprintf(g->cert, sizeof(g->cert), "%s",
	         cred && cred->client_cert_pem ? cred->client_cert_pem : "");
	snprintf(g->error, sizeof(g->error), "%s", error);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static char *read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

struct fixture {
	char dir[32];
	char plugin[96];
	char runs[96];
	char info[96];
	uv_loop_t loop;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/tj-cred-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->plugin, sizeof(fx->plugin), "%s/plugin", fx->dir);
	snprintf(fx->runs, sizeof(fx->runs), "%s/runs", fx->dir);
	snprintf(fx->info, sizeof(fx->info), "%s/info", fx->dir);
	uv_loop_init(&fx->loop);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char cmd[96];

	/* Every handle must have been closed. */
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx->dir);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* A plugin that counts its runs, saves KUBERNETES_EXEC_INFO and prints a credential. */
static void write_plugin(struct fixture *fx, const char *status_json, int exit_code)
{
	char script[1024];

	snprintf(script, sizeof(script),
	         "#!/bin/sh\n"
	         "echo run >> '%s'\n"
	         "printf '%%s' \"$KUBERNETES_EXEC_INFO\" > '%s'\n"
	         "[ \"$1\" = --flag ] || exit 9\n"
	         "[ \"$EXTRA\" = yes ] || exit 8\n"
	         "printf '{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"status\":%s}'\n"
	         "exit %d\n",
	         fx->runs, fx->info, status_json, exit_code);
	write_file(fx->plugin, script, 0755);
}

static int count_runs(const struct fixture *fx)
{
	const char *t = read_text(fx->runs);
	int n = 0;

	for (; t && *t; t++)
		n += *t == '\n';
	return n;
}

static struct tj_credentials *exec_source(struct fixture *fx, const char *command,
                                          bool cluster_info)
{
	char *args[] = { "--flag" };
	char *env[] = { "EXTRA=yes" };
	struct tj_exec_config exec = { .command = (char *)command,
		                       .args = args,
		                       .n_args = 1,
		                       .env = env,
		                       .n_env = 1,
		                       .api_version = V1,
		                       .install_hint = "see the docs",
		                       .provide_cluster_info = cluster_info };
	struct tj_kube_config cfg = {
		.server = "https://api:6443", .ca_pem = "CA", .ca_pem_len = 2, .exec = &exec
	};
	struct tj_credentials *c;

	assert_int_equal(tj_credentials_new(&fx->loop, &cfg, &c), 0);
	return c;
}

static void test_plugin_runs_once_for_concurrent_gets_and_is_cached(void **state)
{
	struct fixture *fx = *state;
	struct tj_credentials *c;
	struct got a = { 0 }, b = { 0 }, d = { 0 };

	write_plugin(fx,
	             "{\"token\":\"from-plugin\",\"expirationTimestamp\":\"2999-01-01T00:00:00Z\"}",
	             0);
	c = exec_source(fx, fx->plugin, true);
	assert_int_equal(tj_credentials_get(c, on_cred, &a), 0);
	assert_int_equal(tj_credentials_get(c, on_cred, &b), 0);
	assert_int_equal(a.calls + b.calls, 0); /* the plugin runs first */
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.rc, 0);
	assert_string_equal(a.token, "from-plugin");
	assert_int_equal(b.calls, 1);
	assert_string_equal(b.token, "from-plugin");
	assert_int_equal(count_runs(fx), 1);
	assert_string_equal(read_text(fx->info),
	                    "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"spec\":{"
	                    "\"interactive\":false,\"cluster\":{\"server\":\"https://api:6443\","
	                    "\"certificate-authority-data\":\"Q0E=\"}}}");

	/* Cached: answered at once, no new run. */
	assert_int_equal(tj_credentials_get(c, on_cred, &d), 0);
	assert_int_equal(d.calls, 1);
	assert_string_equal(d.token, "from-plugin");

	/* After a 401 the plugin runs again. */
	assert_true(tj_credentials_invalidate(c));
	assert_int_equal(tj_credentials_get(c, on_cred, &d), 0);
	assert_int_equal(d.calls, 1);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(d.calls, 2);
	assert_int_equal(count_runs(fx), 2);
	tj_credentials_free(c);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
}

static void test_expired_credential_is_renewed(void **state)
{
	struct fixture *fx = *state;
	struct tj_credentials *c;
	struct got a = { 0 };

	write_plugin(fx,
	             "{\"clientCertificateData\":\"C\",\"clientKeyData\":\"K\","
	             "\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"}",
	             0);
	c = exec_source(fx, fx->plugin, false);
	tj_credentials_get(c, on_cred, &a);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(a.rc, 0);
	assert_string_equal(a.cert, "C");
	assert_string_equal(a.token, "");
	assert_string_equal(read_text(fx->info),
	                    "{\"apiVersion\":\"" V1 "\",\"kind\":\"ExecCredential\",\"spec\":{"
	                    "\"interactive\":false}}");
	tj_credentials_get(c, on_cred, &a);
	assert_int_equal(a.calls, 1); /* already expired: not served from the cache */
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(a.calls, 2);
	assert_int_equal(count_runs(fx), 2);
	tj_credentials_free(c);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
}

static void test_plugin_failures(void **state)
{
	struct fixture *fx = *state;
	struct tj_credentials *c;
	struct got a = { 0 };
	char want[256];

	write_plugin(fx, "{\"token\":\"t\"}", 3);
	c = exec_source(fx, fx->plugin, false);
	tj_credentials_get(c, on_cred, &a);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(a.rc, -EACCES);
	snprintf(want, sizeof(want), "exec plugin %s exited with status 3", fx->plugin);
	assert_string_equal(a.error, want);
	tj_credentials_free(c);

	write_plugin(fx, "\"nonsense\"", 0);
	c = exec_source(fx, fx->plugin, false);
	tj_credentials_get(c, on_cred, &a);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(a.rc, -EINVAL);
	snprintf(want, sizeof(want), "exec plugin %s: the plugin's ExecCredential has no status",
	         fx->plugin);
	assert_string_equal(a.error, want);
	tj_credentials_free(c);

	/* A command that does not exist: reported at once, with the install hint. */
	c = exec_source(fx, "/nonexistent/get-token", false);
	memset(&a, 0, sizeof(a));
	assert_int_equal(tj_credentials_get(c, on_cred, &a), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.rc, -ENOENT);
	assert_string_equal(a.error, "exec plugin /nonexistent/get-token: no such file or "
	                             "directory: see the docs");
	tj_credentials_free(c);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
}

static void test_free_while_plugin_runs(void **state)
{
	struct fixture *fx = *state;
	struct tj_credentials *c;
	struct got a = { 0 };

	write_file(fx->plugin, "#!/bin/sh\nsleep 5\n", 0755);
	c = exec_source(fx, fx->plugin, false);
	tj_credentials_get(c, on_cred, &a);
	uv_run(&fx->loop, UV_RUN_NOWAIT);
	tj_credentials_free(c); /* kills the plugin; no callback */
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(a.calls, 0);
}

static void test_token_file(void **state)
{
	struct fixture *fx = *state;
	char path[96];
	struct tj_kube_config cfg = { .token = "static", .token_file = path };
	struct tj_credentials *c;
	struct got a = { 0 };

	snprintf(path, sizeof(path), "%s/token", fx->dir);
	write_file(path, "first\n", 0600);
	assert_int_equal(tj_credentials_new(&fx->loop, &cfg, &c), 0);
	tj_credentials_get(c, on_cred, &a);
	assert_int_equal(a.calls, 1);
	assert_string_equal(a.token, "first"); /* the file wins over the static token */

	/* Rotated on disk: the cached copy is used until a minute passes or a 401. */
	write_file(path, "second", 0600);
	tj_credentials_get(c, on_cred, &a);
	assert_string_equal(a.token, "first");
	assert_true(tj_credentials_invalidate(c));
	tj_credentials_get(c, on_cred, &a);
	assert_string_equal(a.token, "second");

	/* The file vanishes: the last good token stays. */
	assert_int_equal(unlink(path), 0);
	tj_credentials_invalidate(c);
	tj_credentials_get(c, on_cred, &a);
	assert_int_equal(a.rc, 0);
	assert_string_equal(a.token, "second");
	tj_credentials_free(c);

	/* Never readable and no static token: an error naming the file. */
	cfg.token = NULL;
	assert_int_equal(tj_credentials_new(&fx->loop, &cfg, &c), 0);
	tj_credentials_get(c, on_cred, &a);
	assert_int_equal(a.rc, -EACCES);
	assert_non_null(strstr(a.error, "cannot read the token file /tmp/tj-cred-"));
	tj_credentials_free(c);
}

static void test_static_token_cannot_be_refreshed(void **state)
{
	struct fixture *fx = *state;
	struct tj_kube_config cfg = { .token = "abc" };
	struct tj_credentials *c;
	struct got a = { 0 };

	assert_int_equal(tj_credentials_new(&fx->loop, &cfg, &c), 0);
	tj_credentials_get(c, on_cred, &a);
	assert_string_equal(a.token, "abc");
	assert_false(tj_credentials_invalidate(c));
	tj_credentials_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test_setup_teardown(
		        test_plugin_runs_once_for_concurrent_gets_and_is_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expired_credential_is_renewed, setup,
		                                teardown),
		cmocka_unit_test_setup_teardown(test_plugin_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_free_while_plugin_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_token_cannot_be_refreshed, setup,
		                                teardown),
	};
	return cmocka_run_group_tests_name("kube_credentials", tests, NULL, NULL);
}
