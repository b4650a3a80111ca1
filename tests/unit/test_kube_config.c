#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/config.h"
#include "kube/kubeconfig.h"

/* ---- source resolution ------------------------------------------------------------------- */

struct sources_case {
	const char *name;
	struct tj_kube_env env;
	int want_rc;
	enum tj_kube_source_kind want_kind;
	const char *want_paths[4]; /* NULL-terminated */
	bool want_optional;
	const char *want_server;
	const char *want_err;
};

static const struct sources_case sources_cases[] = {
	{ "flag wins over everything",
	  { .kubeconfig_flag = "/f",
	    .kubeconfig_env = "/a:/b",
	    .service_host = "10.0.0.1",
	    .service_port = "443",
	    .home = "/home/u" },
	  0,
	  TJ_KUBE_SOURCE_FILES,
	  { "/f" },
	  false,
	  NULL,
	  "" },
	{ "KUBECONFIG list, empty entries and repeats dropped",
	  { .kubeconfig_env = "/a::/b:/a:",
	    .service_host = "10.0.0.1",
	    .service_port = "443",
	    .home = "/home/u" },
	  0,
	  TJ_KUBE_SOURCE_FILES,
	  { "/a", "/b" },
	  true,
	  NULL,
	  "" },
	{ "KUBECONFIG of only colons",
	  { .kubeconfig_env = "::", .home = "/home/u" },
	  -ENOENT,
	  0,
	  { NULL },
	  false,
	  NULL,
	  "KUBECONFIG: no file in \"::\"" },
	{ "in-cluster before home",
	  { .service_host = "10.96.0.1", .service_port = "443", .home = "/home/u" },
	  0,
	  TJ_KUBE_SOURCE_IN_CLUSTER,
	  { NULL },
	  false,
	  "https://10.96.0.1:443",
	  "" },
	{ "in-cluster IPv6 host is bracketed",
	  { .service_host = "fd00:10:96::1", .service_port = "6443" },
	  0,
	  TJ_KUBE_SOURCE_IN_CLUSTER,
	  { NULL },
	  false,
	  "https://[fd00:10:96::1]:6443",
	  "" },
	{ "in-cluster with a bad port",
	  { .service_host = "10.96.0.1", .service_port = "https" },
	  -EINVAL,
	  0,
	  { NULL },
	  false,
	  NULL,
	  "in-cluster: KUBERNETES_SERVICE_HOST \"10.96.0.1\" and KUBERNETES_SERVICE_PORT "
	  "\"https\" do not form an address" },
	{ "only the host set is not in-cluster",
	  { .service_host = "10.96.0.1", .home = "/home/u" },
	  0,
	  TJ_KUBE_SOURCE_FILES,
	  { "/home/u/.kube/config" },
	  false,
	  NULL,
	  "" },
	{ "empty KUBECONFIG falls through",
	  { .kubeconfig_env = "", .home = "/root" },
	  0,
	  TJ_KUBE_SOURCE_FILES,
	  { "/root/.kube/config" },
	  false,
	  NULL,
	  "" },
	{ "nothing at all",
	  { 0 },
	  -ENOENT,
	  0,
	  { NULL },
	  false,
	  NULL,
	  "no configuration: no --kubeconfig, no KUBECONFIG, not in a cluster "
	  "(KUBERNETES_SERVICE_HOST/PORT unset) and no HOME for ~/.kube/config" },
};

static void test_sources_resolve(void **state)
{
	for (size_t i = 0; i < sizeof(sources_cases) / sizeof(sources_cases[0]); i++) {
		const struct sources_case *c = &sources_cases[i];
		struct tj_kube_sources s = { .kind = 99 };
		char err[256] = "";
		size_t n = 0;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_kube_sources_resolve(&c->env, &s, err, sizeof(err)),
		                 c->want_rc);
		assert_string_equal(err, c->want_err);
		if (c->want_rc < 0) {
			assert_int_equal(s.kind, 99); /* untouched */
			continue;
		}
		assert_int_equal(s.kind, c->want_kind);
		while (c->want_paths[n])
			n++;
		assert_int_equal(s.n_paths, n);
		for (size_t p = 0; p < n; p++)
			assert_string_equal(s.paths[p], c->want_paths[p]);
		if (c->want_kind == TJ_KUBE_SOURCE_FILES)
			assert_int_equal(s.optional, c->want_optional);
		if (c->want_server)
			assert_string_equal(s.server, c->want_server);
		else
			assert_null(s.server);
		tj_kube_sources_clear(&s);
	}
}

/* ---- parsing ------------------------------------------------------------------------------ */

/* "hello" in base64 is aGVsbG8=; "-----BEGIN-----" is LS0tLS1CRUdJTi0tLS0t. */
static const char full_config[] = "apiVersion: v1\n"
                                  "kind: Config\n"
                                  "current-context: dev\n"
                                  "clusters:\n"
                                  "- name: c1\n"
                                  "  cluster:\n"
                                  "    server: https://api.example:6443/\n"
                                  "    certificate-authority-data: LS0tLS1CRUdJTi0tLS0t\n"
                                  "    tls-server-name: kubernetes.default\n"
                                  "- name: c2\n"
                                  "  cluster:\n"
                                  "    server: https://10.0.0.2:443\n"
                                  "    certificate-authority: ca/ca.crt\n"
                                  "users:\n"
                                  "- name: u1\n"
                                  "  user:\n"
                                  "    client-certificate-data: aGVsbG8=\n"
                                  "    client-key: /keys/u1.key\n"
                                  "- name: u2\n"
                                  "  user:\n"
                                  "    token: abc.def\n"
                                  "    tokenFile: tok\n"
                                  "- name: u3\n"
                                  "  user:\n"
                                  "    exec:\n"
                                  "      apiVersion: client.authentication.k8s.io/v1\n"
                                  "      command: get-token\n"
                                  "      args: [--cluster, c3]\n"
                                  "      env:\n"
                                  "      - name: REGION\n"
                                  "        value: eu\n"
                                  "      provideClusterInfo: true\n"
                                  "      installHint: install get-token\n"
                                  "contexts:\n"
                                  "- name: dev\n"
                                  "  context:\n"
                                  "    cluster: c1\n"
                                  "    user: u1\n"
                                  "    namespace: team\n"
                                  "- name: prod\n"
                                  "  context:\n"
                                  "    cluster: c2\n"
                                  "    user: u2\n"
                                  "- name: plugin\n"
                                  "  context:\n"
                                  "    cluster: c2\n"
                                  "    user: u3\n"
                                  "- name: anonymous\n"
                                  "  context:\n"
                                  "    cluster: c2\n";

static struct tj_kube_config *parse_one(const char *yaml, const char *origin, const char *context,
                                        int want_rc, const char *want_err)
{
	struct tj_kube_doc doc = { .origin = origin, .yaml = yaml, .len = strlen(yaml) };
	struct tj_kube_config *cfg = (struct tj_kube_config *)(uintptr_t)1;
	char err[512] = "";

	assert_int_equal(tj_kube_config_parse(&doc, 1, context, &cfg, err, sizeof(err)), want_rc);
	assert_string_equal(err, want_err);
	if (want_rc < 0) {
		assert_ptr_equal(cfg, (void *)(uintptr_t)1); /* untouched */
		return NULL;
	}
	return cfg;
}

static void test_parse_current_context_with_data_fields(void **state)
{
	struct tj_kube_config *cfg = parse_one(full_config, "/home/u/.kube/config", NULL, 0, "");

	assert_string_equal(cfg->origin, "/home/u/.kube/config");
	assert_string_equal(cfg->context, "dev");
	assert_string_equal(cfg->server, "https://api.example:6443"); /* slash dropped */
	assert_string_equal(cfg->namespace, "team");
	assert_null(cfg->ca_file);
	assert_int_equal(cfg->ca_pem_len, 15);
	assert_memory_equal(cfg->ca_pem, "-----BEGIN-----", 15);
	assert_false(cfg->insecure_skip_tls_verify);
	assert_string_equal(cfg->tls_server_name, "kubernetes.default");
	assert_null(cfg->client_cert_file);
	assert_int_equal(cfg->client_cert_pem_len, 5);
	assert_memory_equal(cfg->client_cert_pem, "hello", 5);
	assert_string_equal(cfg->client_key_file, "/keys/u1.key");
	assert_null(cfg->client_key_pem);
	assert_null(cfg->token);
	assert_null(cfg->token_file);
	assert_null(cfg->exec);
	tj_kube_config_free(cfg);
}

static void test_parse_context_override_and_relative_paths(void **state)
{
	struct tj_kube_config *cfg = parse_one(full_config, "/home/u/.kube/config", "prod", 0, "");

	assert_string_equal(cfg->context, "prod");
	assert_string_equal(cfg->server, "https://10.0.0.2:443");
	assert_string_equal(cfg->namespace, "default");
	assert_string_equal(cfg->ca_file, "/home/u/.kube/ca/ca.crt");
	assert_null(cfg->ca_pem);
	assert_null(cfg->tls_server_name);
	assert_string_equal(cfg->token, "abc.def");
	assert_string_equal(cfg->token_file, "/home/u/.kube/tok");
	assert_null(cfg->client_cert_pem);
	assert_null(cfg->client_key_file);
	tj_kube_config_free(cfg);
}

static void test_parse_exec_plugin(void **state)
{
	struct tj_kube_config *cfg = parse_one(full_config, "kc", "plugin", 0, "");
	const struct tj_exec_config *e = cfg->exec;

	assert_non_null(e);
	assert_string_equal(e->command, "get-token");
	assert_string_equal(e->api_version, "client.authentication.k8s.io/v1");
	assert_int_equal(e->n_args, 2);
	assert_string_equal(e->args[0], "--cluster");
	assert_string_equal(e->args[1], "c3");
	assert_int_equal(e->n_env, 1);
	assert_string_equal(e->env[0], "REGION=eu");
	assert_true(e->provide_cluster_info);
	assert_string_equal(e->install_hint, "install get-token");
	assert_null(cfg->token);
	tj_kube_config_free(cfg);
}

static void test_parse_context_without_user(void **state)
{
	struct tj_kube_config *cfg = parse_one(full_config, "kc", "anonymous", 0, "");

	assert_string_equal(cfg->server, "https://10.0.0.2:443");
	assert_null(cfg->token);
	assert_null(cfg->client_cert_pem);
	assert_null(cfg->exec);
	tj_kube_config_free(cfg);
}

struct bad_case {
	const char *name;
	const char *yaml;
	const char *context;
	const char *want_err;
};

#define CLUSTER_OK "clusters:\n- name: c\n  cluster:\n    server: https://s\n"
#define CONTEXT_OK "contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n"

static const struct bad_case bad_cases[] = {
	{ "not YAML", "clusters: [\n", NULL, "/k: not valid YAML: line 2, column 1: " },
	{ "invalid UTF-8 after a directive mark", "%\xff", NULL, "/k: not valid UTF-8 (byte 1)" },
	{ "truncated UTF-8 sequence", "a: b\n%\xc3", NULL, "/k: not valid UTF-8 (byte 6)" },
	{ "overlong UTF-8", "a: \xc0\xaf\n", NULL, "/k: not valid UTF-8 (byte 3)" },
	{ "UTF-16 surrogate", "a: \xed\xa0\x80\n", NULL, "/k: not valid UTF-8 (byte 3)" },
	{ "a tab indenting a block entry in an explicit key", "? a: \t- x\n", NULL,
	  "/k: a tab before '-', '?', ':', '|' or '>' (YAML indents with spaces; in quotes, "
	  "write \\t) (byte 5)" },
	{ "top level is a list", "- a\n- b\n", NULL,
	  "/k: not a kubeconfig (the top level is not a mapping)" },
	{ "clusters not a list", "clusters: {}\n", NULL, "/k: clusters: not a sequence" },
	{ "entry without a name", "users:\n- user: {}\n", NULL, "/k: users[0]: no name" },
	{ "entry not a mapping", "contexts:\n- x\n", NULL, "/k: contexts[0]: not a mapping" },
	{ "current context is a list", "current-context: [a]\n", NULL,
	  "/k: current-context: not a string" },
	{ "no current context", CLUSTER_OK, NULL,
	  "/k: current-context: not set and no context given" },
	{ "unknown context", CLUSTER_OK "current-context: nope\n", NULL,
	  "/k: context \"nope\" not found" },
	{ "context without cluster", "contexts:\n- name: x\n  context:\n    user: u\n", "x",
	  "/k: contexts[0].context.cluster: missing" },
	{ "context body missing", "contexts:\n- name: x\n", "x",
	  "/k: contexts[0].context: missing" },
	{ "unknown cluster", "contexts:\n- name: x\n  context:\n    cluster: gone\n", "x",
	  "/k: contexts[0].context.cluster: cluster \"gone\" not found" },
	{ "unknown user", CLUSTER_OK CONTEXT_OK, "x",
	  "/k: contexts[0].context.user: user \"u\" not found" },
	{ "server missing",
	  "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: true\n" CONTEXT_OK, "x",
	  "/k: clusters[0].cluster.server: missing" },
	{ "server not a URL", "clusters:\n- name: c\n  cluster:\n    server: api:6443\n" CONTEXT_OK,
	  "x", "/k: clusters[0].cluster.server: \"api:6443\" is not an http:// or https:// URL" },
	{ "server is a list", "clusters:\n- name: c\n  cluster:\n    server: [a]\n" CONTEXT_OK, "x",
	  "/k: clusters[0].cluster.server: not a string" },
	{ "bad boolean",
	  "clusters:\n- name: c\n  cluster:\n    server: https://s\n    insecure-skip-tls-verify: "
	  "yes please\n" CONTEXT_OK,
	  "x", "/k: clusters[0].cluster.insecure-skip-tls-verify: not a boolean" },
	{ "CA with insecure",
	  "clusters:\n- name: c\n  cluster:\n    server: https://s\n    insecure-skip-tls-verify: "
	  "true\n    certificate-authority: /ca\n" CONTEXT_OK,
	  "x",
	  "/k: clusters[0].cluster: certificate-authority together with insecure-skip-tls-verify" },
	{ "bad base64",
	  CLUSTER_OK CONTEXT_OK "users:\n- name: u\n  user:\n    client-key-data: a$b=\n", "x",
	  "/k: users[0].user.client-key-data: invalid base64" },
	{ "truncated base64",
	  CLUSTER_OK CONTEXT_OK
	  "users:\n- name: u\n  user:\n    token: t\n"
	  "    client-certificate-data: aGVsbG8\n    client-key-data: aGVsbG8=\n",
	  "x", "/k: users[0].user.client-certificate-data: invalid base64" },
	{ "certificate without key",
	  CLUSTER_OK CONTEXT_OK "users:\n- name: u\n  user:\n    client-certificate: /c\n", "x",
	  "/k: users[0].user: client certificate without a client key" },
	{ "key without certificate",
	  CLUSTER_OK CONTEXT_OK "users:\n- name: u\n  user:\n    client-key-data: aGVsbG8=\n", "x",
	  "/k: users[0].user: client key without a client certificate" },
	{ "auth provider",
	  CLUSTER_OK CONTEXT_OK "users:\n- name: u\n  user:\n    auth-provider: {name: gcp}\n", "x",
	  "/k: users[0].user.auth-provider: not supported; use an exec credential plugin" },
	{ "exec without command",
	  CLUSTER_OK CONTEXT_OK "users:\n- name: u\n  user:\n    exec:\n      apiVersion: "
	                        "client.authentication.k8s.io/v1\n",
	  "x", "/k: users[0].user.exec.command: missing" },
	{ "exec without apiVersion",
	  CLUSTER_OK CONTEXT_OK "users:\n- name: u\n  user:\n    exec:\n      command: x\n", "x",
	  "/k: users[0].user.exec.apiVersion: missing" },
	{ "exec with an old apiVersion",
	  CLUSTER_OK CONTEXT_OK "users:\n- name: u\n  user:\n    exec:\n      command: x\n"
	                        "      apiVersion: client.authentication.k8s.io/v1alpha1\n",
	  "x",
	  "/k: users[0].user.exec.apiVersion: unsupported version "
	  "\"client.authentication.k8s.io/v1alpha1\"" },
	{ "exec env entry without name",
	  CLUSTER_OK CONTEXT_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: x\n"
	  "      apiVersion: client.authentication.k8s.io/v1\n      env:\n      - value: v\n",
	  "x", "/k: users[0].user.exec.env[0].name: missing" },
	{ "exec args not a list",
	  CLUSTER_OK CONTEXT_OK
	  "users:\n- name: u\n  user:\n    exec:\n      command: x\n"
	  "      apiVersion: client.authentication.k8s.io/v1\n      args: a b\n",
	  "x", "/k: users[0].user.exec.args: not a sequence" },
};

static void test_parse_malformed(void **state)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct tj_kube_doc doc = { .origin = "/k",
			                   .yaml = c->yaml,
			                   .len = strlen(c->yaml) };
		struct tj_kube_config *cfg = NULL;
		char err[512] = "";

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_kube_config_parse(&doc, 1, c->context, &cfg, err, sizeof(err)),
		                 -EINVAL);
		/* The YAML syntax case only pins the prefix: the rest is libfyaml's wording. */
		if (strstr(c->want_err, "not valid YAML"))
			assert_memory_equal(err, c->want_err, strlen(c->want_err));
		else
			assert_string_equal(err, c->want_err);
		assert_null(cfg);
	}
}

static void test_merge_first_file_wins(void **state)
{
	static const char a[] = "current-context: from-a\n"
	                        "contexts:\n"
	                        "- name: from-a\n  context: {cluster: shared, user: ua}\n"
	                        "clusters:\n"
	                        "- name: shared\n  cluster: {server: 'https://a'}\n";
	static const char b[] = "current-context: from-b\n"
	                        "contexts:\n"
	                        "- name: from-b\n  context: {cluster: only-b, user: ub}\n"
	                        "clusters:\n"
	                        "- name: shared\n  cluster: {server: 'https://b'}\n"
	                        "- name: only-b\n  cluster: {server: 'https://only-b'}\n"
	                        "users:\n"
	                        "- name: ua\n  user: {token: token-from-b}\n"
	                        "- name: ub\n  user: {token: tb}\n";
	const struct tj_kube_doc docs[] = {
		{ "/a", a, sizeof(a) - 1 },
		{ "/b", b, sizeof(b) - 1 },
	};
	struct tj_kube_config *cfg;
	char err[256] = "";

	/* current-context from the first file; cluster "shared" from the first file that has
	 * it; user "ua" only in the second file. */
	assert_int_equal(tj_kube_config_parse(docs, 2, NULL, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->context, "from-a");
	assert_string_equal(cfg->server, "https://a");
	assert_string_equal(cfg->origin, "/a");
	assert_string_equal(cfg->token, "token-from-b");
	tj_kube_config_free(cfg);

	/* A context of the second file referring to its own cluster. */
	assert_int_equal(tj_kube_config_parse(docs, 2, "from-b", &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->server, "https://only-b");
	assert_string_equal(cfg->origin, "/b");
	assert_string_equal(cfg->token, "tb");
	tj_kube_config_free(cfg);

	/* Names in messages about the merged whole. */
	assert_int_equal(tj_kube_config_parse(docs, 2, "nope", &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/a:/b: context \"nope\" not found");
}

static void test_merge_bad_file_is_named(void **state)
{
	static const char good[] = "current-context: x\n";
	static const char bad[] = "users: 3\n";
	const struct tj_kube_doc docs[] = {
		{ "/good", good, sizeof(good) - 1 },
		{ "/bad", bad, sizeof(bad) - 1 },
	};
	struct tj_kube_config *cfg = NULL;
	char err[256] = "";

	assert_int_equal(tj_kube_config_parse(docs, 2, NULL, &cfg, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/bad: users: not a sequence");
	assert_null(cfg);
}

static void test_utf8_text_is_accepted(void **state)
{
	static const char yaml[] = "current-context: \xc3\xa9quipe\n"
	                           "contexts:\n- name: \xc3\xa9quipe\n  context: {cluster: c, "
	                           "namespace: \xe2\x82\xac-\xf0\x9f\x9a\x80}\n"
	                           "clusters:\n- name: c\n  cluster: {server: 'https://s'}\n";
	struct tj_kube_config *cfg = parse_one(yaml, "/k", NULL, 0, "");

	assert_string_equal(cfg->context, "\xc3\xa9quipe");
	assert_string_equal(cfg->namespace, "\xe2\x82\xac-\xf0\x9f\x9a\x80");
	tj_kube_config_free(cfg);
}

static void test_empty_file_is_empty_config(void **state)
{
	const struct tj_kube_doc docs[] = {
		{ "/empty", "", 0 },
		{ "/comment", "# nothing\n\n", 11 },
		{ "/real", full_config, sizeof(full_config) - 1 },
	};
	struct tj_kube_config *cfg;
	char err[256] = "";

	assert_int_equal(tj_kube_config_parse(docs, 3, NULL, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->context, "dev");
	tj_kube_config_free(cfg);
}

/* ---- files -------------------------------------------------------------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void remove_dir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_in_cluster(void **state)
{
	char dir[] = "/tmp/tj-sa-XXXXXX";
	struct tj_kube_config *cfg;
	char err[256] = "";

	assert_non_null(mkdtemp(dir));
	write_file(dir, "ca.crt", "CA PEM\n");
	write_file(dir, "token", "secret\n");
	write_file(dir, "namespace", "trainjob-system\n");
	assert_int_equal(
	        tj_kube_config_in_cluster("https://[fd00::1]:443", dir, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->origin, "in-cluster");
	assert_string_equal(cfg->server, "https://[fd00::1]:443");
	assert_string_equal(cfg->namespace, "trainjob-system");
	assert_string_equal(cfg->ca_pem, "CA PEM\n");
	assert_int_equal(cfg->ca_pem_len, 7);
	assert_null(cfg->token); /* read by the credential source, not here */
	assert_non_null(strstr(cfg->token_file, "/token"));
	tj_kube_config_free(cfg);

	/* Without the namespace file the namespace is "default"; without ca.crt it fails. */
	write_file(dir, "namespace", "");
	assert_int_equal(tj_kube_config_in_cluster("https://h:1", dir, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg->namespace, "default");
	tj_kube_config_free(cfg);
	remove_dir(dir);
	assert_int_equal(tj_kube_config_in_cluster("https://h:1", dir, &cfg, err, sizeof(err)),
	                 -ENOENT);
	assert_non_null(strstr(err, "certificate-authority /tmp/tj-sa-"));
	assert_non_null(strstr(err, "/ca.crt: No such file or directory"));
}

static void test_load_merges_kubeconfig_list_and_reads_files(void **state)
{
	char dir[] = "/tmp/tj-kc-XXXXXX", list[512], a[128], b[128], missing[128];
	struct tj_kube_config *cfg;
	struct tj_kube_env env = { 0 };
	char err[256] = "";

	assert_non_null(mkdtemp(dir));
	write_file(dir, "a",
	           "current-context: x\n"
	           "contexts:\n- name: x\n  context: {cluster: c, user: u}\n");
	write_file(dir, "b",
	           "clusters:\n- name: c\n  cluster:\n    server: https://s\n"
	           "    certificate-authority: ca.pem\n"
	           "users:\n- name: u\n  user:\n    client-certificate: cert.pem\n"
	           "    client-key: key.pem\n");
	write_file(dir, "ca.pem", "CA");
	write_file(dir, "cert.pem", "CERT");
	write_file(dir, "key.pem", "KEY");
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	snprintf(list, sizeof(list), "%s:%s:%s", missing, a, b);
	env.kubeconfig_env = list;
	assert_int_equal(tj_kube_config_load(&env, NULL, "/nonexistent", &cfg, err, sizeof(err)),
	                 0);
	assert_string_equal(cfg->server, "https://s");
	assert_string_equal(cfg->ca_pem, "CA");
	assert_string_equal(cfg->client_cert_pem, "CERT");
	assert_int_equal(cfg->client_cert_pem_len, 4);
	assert_string_equal(cfg->client_key_pem, "KEY");
	tj_kube_config_free(cfg);

	/* --kubeconfig naming a missing file is an error, unlike a $KUBECONFIG entry. */
	env.kubeconfig_flag = missing;
	assert_int_equal(tj_kube_config_load(&env, NULL, "/nonexistent", &cfg, err, sizeof(err)),
	                 -ENOENT);
	assert_non_null(strstr(err, "/missing: No such file or directory"));

	/* A referenced file that is missing is named. */
	env.kubeconfig_flag = NULL;
	snprintf(list, sizeof(list), "%s:%s", a, b);
	snprintf(missing, sizeof(missing), "%s/key.pem", dir);
	assert_int_equal(unlink(missing), 0);
	assert_int_equal(tj_kube_config_load(&env, NULL, "/nonexistent", &cfg, err, sizeof(err)),
	                 -ENOENT);
	assert_non_null(strstr(err, "client-key "));
	assert_non_null(strstr(err, "/key.pem: No such file or directory"));
	remove_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sources_resolve),
		cmocka_unit_test(test_parse_current_context_with_data_fields),
		cmocka_unit_test(test_parse_context_override_and_relative_paths),
		cmocka_unit_test(test_parse_exec_plugin),
		cmocka_unit_test(test_parse_context_without_user),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_merge_first_file_wins),
		cmocka_unit_test(test_merge_bad_file_is_named),
		cmocka_unit_test(test_utf8_text_is_accepted),
		cmocka_unit_test(test_empty_file_is_empty_config),
		cmocka_unit_test(test_in_cluster),
		cmocka_unit_test(test_load_merges_kubeconfig_list_and_reads_files),
	};
	return cmocka_run_group_tests_name("kube_config", tests, NULL, NULL);
}
