/* Kubeconfig documents: parsed with libfyaml's document API, checked, merged as client-go
 * merges them, and the chosen context resolved. */
#include "kube/kubeconfig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "base/yaml_guard.h"

/* Limit on what a kubeconfig can make us hold. */
#define MAX_EXEC_ARGS 256

struct parser {
	const char *origin; /* the file being looked at, for messages */
	char *err;
	size_t errlen;
};

static int fail(const struct parser *p, const char *field, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Writes "origin: field: message" and returns -EINVAL. */
static int fail(const struct parser *p, const char *field, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (field)
		snprintf(p->err, p->errlen, "%s: %s: %s", p->origin, field, msg);
	else
		snprintf(p->err, p->errlen, "%s: %s", p->origin, msg);
	return -EINVAL;
}

/* A scalar's text, or NULL for a YAML null. */
static const char *scalar(struct fy_node *n, size_t *len)
{
	if (fy_node_is_null(n))
		return NULL;
	return fy_node_get_scalar(n, len);
}

/* Reads map[key] as a string into *out (owned; NULL if absent, null or empty). */
static int get_string(const struct parser *p, struct fy_node *map, const char *key,
                      const char *where, char **out)
{
	struct fy_node *n = fy_node_mapping_lookup_by_string(map, key, FY_NT);
	char field[192];
	const char *s;
	size_t len = 0;

	*out = NULL;
	if (!n)
		return 0;
	snprintf(field, sizeof(field), "%s.%s", where, key);
	if (!fy_node_is_scalar(n))
		return fail(p, field, "not a string");
	s = scalar(n, &len);
	if (!s || len == 0)
		return 0;
	if (memchr(s, '\0', len))
		return fail(p, field, "contains a NUL byte");
	*out = strndup(s, len);
	return *out ? 0 : -ENOMEM;
}

static int get_bool(const struct parser *p, struct fy_node *map, const char *key, const char *where,
                    bool *out)
{
	char *s;
	int r;

	r = get_string(p, map, key, where, &s);
	if (r < 0)
		return r;
	*out = false;
	if (!s)
		return 0;
	if (strcmp(s, "true") == 0 || strcmp(s, "True") == 0 || strcmp(s, "TRUE") == 0) {
		*out = true;
	} else if (strcmp(s, "false") != 0 && strcmp(s, "False") != 0 && strcmp(s, "FALSE") != 0) {
		char field[192];

		snprintf(field, sizeof(field), "%s.%s", where, key);
		free(s);
		return fail(p, field, "not a boolean");
	}
	free(s);
	return 0;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Standard base64 with padding; line breaks are skipped, as Go's decoder skips them. */
static int base64_decode(const char *in, char **ret, size_t *ret_len)
{
	size_t n = strlen(in), o = 0, quad = 0, pad = 0;
	char *out = malloc(n / 4 * 3 + 4);
	unsigned acc = 0;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		int v;

		if (c == '\n' || c == '\r')
			continue;
		if (c == '=') {
			pad++;
			v = 0;
		} else {
			if (pad > 0)
				goto out_invalid;
			v = b64_value(c);
			if (v < 0)
				goto out_invalid;
		}
		acc = acc << 6 | (unsigned)v;
		if (++quad == 4) {
			if (pad > 2)
				goto out_invalid;
			out[o++] = (char)(acc >> 16);
			if (pad < 2)
				out[o++] = (char)(acc >> 8);
			if (pad < 1)
				out[o++] = (char)acc;
			quad = 0;
			acc = 0;
			if (pad > 0)
				break;
		}
	}
	/* Nothing may follow the padding, and the input must be whole quads. */
	if (quad != 0)
		goto out_invalid;
	out[o] = '\0';
	*ret = out;
	*ret_len = o;
	return 0;

out_invalid:
	free(out);
	return -EINVAL;
}

/* Reads map[key] as base64 into *out (owned, NUL-terminated for convenience). */
static int get_base64(const struct parser *p, struct fy_node *map, const char *key,
                      const char *where, char **out, size_t *out_len)
{
	char *s;
	int r;

	r = get_string(p, map, key, where, &s);
	if (r < 0 || !s)
		return r;
	r = base64_decode(s, out, out_len);
	free(s);
	if (r == -EINVAL) {
		char field[192];

		snprintf(field, sizeof(field), "%s.%s", where, key);
		return fail(p, field, "invalid base64");
	}
	return r;
}

/* A path from the kubeconfig, made absolute against the folder of the file it came from. */
static int get_path(const struct parser *p, struct fy_node *map, const char *key, const char *where,
                    char **out)
{
	const char *slash;
	char *s;
	int r;

	r = get_string(p, map, key, where, &s);
	if (r < 0 || !s)
		return r;
	slash = strrchr(p->origin, '/');
	if (s[0] != '/' && slash) {
		char *abs;

		r = asprintf(&abs, "%.*s/%s", (int)(slash - p->origin), p->origin, s);
		free(s);
		if (r < 0)
			return -ENOMEM;
		s = abs;
	}
	*out = s;
	return 0;
}

/* The kubeconfig list entry named `name` under `key` (clusters, users, contexts), with its
 * index; the value mapping (entry.cluster / .user / .context) is returned in *ret_value. */
static int find_entry(const struct parser *p, struct fy_node *root, const char *list,
                      const char *member, const char *name, struct fy_node **ret_value,
                      size_t *ret_index)
{
	struct fy_node *seq = fy_node_mapping_lookup_by_string(root, list, FY_NT);
	struct fy_node *item;
	void *iter = NULL;
	size_t i = 0;

	if (!seq || fy_node_is_null(seq))
		return -ENOENT;
	for (; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		struct fy_node *n = fy_node_mapping_lookup_by_string(item, "name", FY_NT);
		const char *s;
		size_t len = 0;

		if (!n || !fy_node_is_scalar(n))
			continue;
		s = scalar(n, &len);
		if (!s || strlen(name) != len || memcmp(s, name, len) != 0)
			continue;
		*ret_value = fy_node_mapping_lookup_by_string(item, member, FY_NT);
		*ret_index = i;
		if (!*ret_value || !fy_node_is_mapping(*ret_value)) {
			char field[96];

			snprintf(field, sizeof(field), "%s[%zu].%s", list, i, member);
			return fail(p, field, *ret_value ? "not a mapping" : "missing");
		}
		return 0;
	}
	return -ENOENT;
}

/* Checks the shape every document must have, whether or not its entries are used: a mapping
 * whose lists are sequences of mappings with a name. */
static int check_shape(const struct parser *p, struct fy_node *root)
{
	static const char *const lists[] = { "clusters", "users", "contexts" };

	if (!root || !fy_node_is_mapping(root))
		return fail(p, NULL, "not a kubeconfig (the top level is not a mapping)");
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		struct fy_node *seq = fy_node_mapping_lookup_by_string(root, lists[l], FY_NT);
		struct fy_node *item;
		void *iter = NULL;
		size_t i = 0;

		if (!seq || fy_node_is_null(seq))
			continue;
		if (!fy_node_is_sequence(seq))
			return fail(p, lists[l], "not a sequence");
		for (; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
			struct fy_node *name;
			char field[64];

			snprintf(field, sizeof(field), "%s[%zu]", lists[l], i);
			if (!fy_node_is_mapping(item))
				return fail(p, field, "not a mapping");
			name = fy_node_mapping_lookup_by_string(item, "name", FY_NT);
			if (!name || !fy_node_is_scalar(name) || fy_node_is_null(name))
				return fail(p, field, "no name");
		}
	}
	return 0;
}

struct parsed_doc {
	struct fy_document *fyd; /* owned */
	struct fy_node *root;
	struct parser p;
};

static int parse_doc(const struct tj_kube_doc *doc, char *err, size_t errlen,
                     struct parsed_doc *ret)
{
	struct fy_diag_cfg dcfg;
	struct fy_parse_cfg pcfg = { .flags = FYPCF_QUIET };
	struct parsed_doc d = { .p = { .origin = doc->origin, .err = err, .errlen = errlen } };
	struct fy_diag *diag;
	const char *why;
	size_t bad;
	int r = 0;

	/* What would hang or crash libfyaml is refused before it reads the text. */
	bad = tj_yaml_refused_at(doc->yaml, doc->len, &why);
	if (bad < doc->len)
		return fail(&d.p, NULL, "%s (byte %zu)", why, bad);
	fy_diag_cfg_default(&dcfg);
	dcfg.fp = NULL;
	dcfg.colorize = false;
	diag = fy_diag_create(&dcfg);
	if (!diag)
		return -ENOMEM;
	fy_diag_set_collect_errors(diag, true);
	pcfg.diag = diag;
	d.fyd = fy_document_build_from_string(&pcfg, doc->yaml, doc->len);
	if (!d.fyd) {
		/* libfyaml builds no document from an empty stream (nothing, blanks or only
		 * comments) and reports no error for it: that is an empty configuration, as
		 * client-go reads it. */
		struct fy_diag_error *e = tj_yaml_first_error(diag);

		if (e)
			r = fail(&d.p, NULL, "not valid YAML: line %d, column %d: %s", e->line,
			         e->column, e->msg);
		else
			*ret = d;
		goto out_diag;
	}
	d.root = fy_document_root(d.fyd);
	if (!d.root) {
		/* An empty file is an empty configuration, as in client-go. */
		*ret = d;
		goto out_diag;
	}
	r = check_shape(&d.p, d.root);
	if (r < 0) {
		fy_document_destroy(d.fyd);
		goto out_diag;
	}
	*ret = d;

out_diag:
	fy_diag_destroy(diag);
	return r;
}

static int parse_exec(const struct parser *p, struct fy_node *exec, const char *where,
                      struct tj_exec_config **ret)
{
	struct tj_exec_config *e = calloc(1, sizeof(*e));
	struct fy_node *seq, *item;
	char field[192];
	void *iter;
	size_t i;
	int r;

	if (!e)
		return -ENOMEM;
	r = get_string(p, exec, "command", where, &e->command);
	if (r < 0)
		goto out_free;
	snprintf(field, sizeof(field), "%s.command", where);
	if (!e->command) {
		r = fail(p, field, "missing");
		goto out_free;
	}
	r = get_string(p, exec, "apiVersion", where, &e->api_version);
	if (r < 0)
		goto out_free;
	snprintf(field, sizeof(field), "%s.apiVersion", where);
	if (!e->api_version) {
		r = fail(p, field, "missing");
		goto out_free;
	}
	if (strcmp(e->api_version, "client.authentication.k8s.io/v1") != 0 &&
	    strcmp(e->api_version, "client.authentication.k8s.io/v1beta1") != 0) {
		r = fail(p, field, "unsupported version \"%s\"", e->api_version);
		goto out_free;
	}
	r = get_string(p, exec, "installHint", where, &e->install_hint);
	if (r < 0)
		goto out_free;
	r = get_bool(p, exec, "provideClusterInfo", where, &e->provide_cluster_info);
	if (r < 0)
		goto out_free;

	seq = fy_node_mapping_lookup_by_string(exec, "args", FY_NT);
	if (seq && !fy_node_is_null(seq)) {
		snprintf(field, sizeof(field), "%s.args", where);
		if (!fy_node_is_sequence(seq)) {
			r = fail(p, field, "not a sequence");
			goto out_free;
		}
		iter = NULL;
		for (i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
			const char *s;
			size_t len = 0;
			char **args;

			snprintf(field, sizeof(field), "%s.args[%zu]", where, i);
			if (!fy_node_is_scalar(item)) {
				r = fail(p, field, "not a string");
				goto out_free;
			}
			if (i >= MAX_EXEC_ARGS) {
				r = fail(p, field, "more than %d arguments", MAX_EXEC_ARGS);
				goto out_free;
			}
			s = scalar(item, &len);
			args = realloc(e->args, (e->n_args + 1) * sizeof(*args));
			if (!args) {
				r = -ENOMEM;
				goto out_free;
			}
			e->args = args;
			e->args[e->n_args] = strndup(s ? s : "", s ? len : 0);
			if (!e->args[e->n_args]) {
				r = -ENOMEM;
				goto out_free;
			}
			e->n_args++;
		}
	}

	seq = fy_node_mapping_lookup_by_string(exec, "env", FY_NT);
	if (seq && !fy_node_is_null(seq)) {
		snprintf(field, sizeof(field), "%s.env", where);
		if (!fy_node_is_sequence(seq)) {
			r = fail(p, field, "not a sequence");
			goto out_free;
		}
		iter = NULL;
		for (i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
			char *name = NULL, *value = NULL, **env;
			char at[160];

			snprintf(at, sizeof(at), "%s.env[%zu]", where, i);
			if (!fy_node_is_mapping(item)) {
				r = fail(p, at, "not a mapping");
				goto out_free;
			}
			if (i >= MAX_EXEC_ARGS) {
				r = fail(p, at, "more than %d variables", MAX_EXEC_ARGS);
				goto out_free;
			}
			r = get_string(p, item, "name", at, &name);
			if (r == 0)
				r = get_string(p, item, "value", at, &value);
			if (r == 0 && (!name || strchr(name, '='))) {
				snprintf(field, sizeof(field), "%s.name", at);
				r = fail(p, field, name ? "contains '='" : "missing");
			}
			if (r == 0) {
				env = realloc(e->env, (e->n_env + 1) * sizeof(*env));
				if (!env)
					r = -ENOMEM;
				else
					e->env = env;
			}
			if (r == 0 &&
			    asprintf(&e->env[e->n_env], "%s=%s", name, value ? value : "") < 0)
				r = -ENOMEM;
			free(name);
			free(value);
			if (r < 0)
				goto out_free;
			e->n_env++;
		}
	}
	*ret = e;
	return 0;

out_free:
	tj_exec_config_free(e);
	return r;
}

static int parse_cluster(const struct parser *p, struct fy_node *cluster, size_t index,
                         struct tj_kube_config *cfg)
{
	char where[64], field[96];
	int r;

	snprintf(where, sizeof(where), "clusters[%zu].cluster", index);
	r = get_string(p, cluster, "server", where, &cfg->server);
	if (r < 0)
		return r;
	snprintf(field, sizeof(field), "%s.server", where);
	if (!cfg->server)
		return fail(p, field, "missing");
	if (strncmp(cfg->server, "https://", 8) != 0 && strncmp(cfg->server, "http://", 7) != 0)
		return fail(p, field, "\"%s\" is not an http:// or https:// URL", cfg->server);
	/* Paths are appended to the server, so drop a trailing slash of a prefix. */
	for (size_t n = strlen(cfg->server); n > 8 && cfg->server[n - 1] == '/'; n--)
		cfg->server[n - 1] = '\0';
	r = get_path(p, cluster, "certificate-authority", where, &cfg->ca_file);
	if (r < 0)
		return r;
	r = get_base64(p, cluster, "certificate-authority-data", where, &cfg->ca_pem,
	               &cfg->ca_pem_len);
	if (r < 0)
		return r;
	r = get_bool(p, cluster, "insecure-skip-tls-verify", where, &cfg->insecure_skip_tls_verify);
	if (r < 0)
		return r;
	/* client-go refuses the combination rather than guess which one was meant. */
	if (cfg->insecure_skip_tls_verify && (cfg->ca_file || cfg->ca_pem))
		return fail(p, where,
		            "certificate-authority together with insecure-skip-tls-verify");
	return get_string(p, cluster, "tls-server-name", where, &cfg->tls_server_name);
}

static int parse_user(const struct parser *p, struct fy_node *user, size_t index,
                      struct tj_kube_config *cfg)
{
	struct fy_node *exec;
	char where[64], field[96];
	bool has_cert, has_key;
	int r;

	snprintf(where, sizeof(where), "users[%zu].user", index);
	r = get_path(p, user, "client-certificate", where, &cfg->client_cert_file);
	if (r < 0)
		return r;
	r = get_base64(p, user, "client-certificate-data", where, &cfg->client_cert_pem,
	               &cfg->client_cert_pem_len);
	if (r < 0)
		return r;
	r = get_path(p, user, "client-key", where, &cfg->client_key_file);
	if (r < 0)
		return r;
	r = get_base64(p, user, "client-key-data", where, &cfg->client_key_pem,
	               &cfg->client_key_pem_len);
	if (r < 0)
		return r;
	has_cert = cfg->client_cert_file || cfg->client_cert_pem;
	has_key = cfg->client_key_file || cfg->client_key_pem;
	if (has_cert != has_key)
		return fail(p, where,
		            has_cert ? "client certificate without a client key"
		                     : "client key without a client certificate");
	r = get_string(p, user, "token", where, &cfg->token);
	if (r < 0)
		return r;
	r = get_path(p, user, "tokenFile", where, &cfg->token_file);
	if (r < 0)
		return r;
	if (fy_node_mapping_lookup_by_string(user, "auth-provider", FY_NT)) {
		snprintf(field, sizeof(field), "%s.auth-provider", where);
		return fail(p, field, "not supported; use an exec credential plugin");
	}
	exec = fy_node_mapping_lookup_by_string(user, "exec", FY_NT);
	if (exec && !fy_node_is_null(exec)) {
		snprintf(field, sizeof(field), "%s.exec", where);
		if (!fy_node_is_mapping(exec))
			return fail(p, field, "not a mapping");
		r = parse_exec(p, exec, field, &cfg->exec);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Looks name up in the list of every document, first document first (client-go's merge:
 * the first file that defines a name wins). */
static int lookup_merged(struct parsed_doc *docs, size_t n, const char *list, const char *member,
                         const char *name, struct parsed_doc **ret_doc, struct fy_node **ret_value,
                         size_t *ret_index)
{
	for (size_t i = 0; i < n; i++) {
		int r;

		if (!docs[i].root)
			continue;
		r = find_entry(&docs[i].p, docs[i].root, list, member, name, ret_value, ret_index);
		if (r == -ENOENT)
			continue;
		if (r == 0)
			*ret_doc = &docs[i];
		return r;
	}
	return -ENOENT;
}

/* "a:b:c", the list of files for a message about the merged configuration. */
static void join_origins(const struct tj_kube_doc *docs, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++) {
		int w = snprintf(buf + o, len - o, "%s%s", i ? ":" : "", docs[i].origin);

		if (w < 0)
			break;
		o += (size_t)w;
	}
}

static int resolve(struct parsed_doc *docs, size_t n_docs, const struct tj_kube_doc *in,
                   const char *context_override, struct tj_kube_config *cfg, char *err,
                   size_t errlen)
{
	struct parsed_doc *ctx_doc = NULL, *doc = NULL;
	struct fy_node *ctx = NULL, *value = NULL;
	char *cluster_name = NULL, *user_name = NULL, where[64], field[96], files[512];
	size_t index;
	int r;

	join_origins(in, n_docs, files, sizeof(files));
	if (context_override && *context_override) {
		cfg->context = strdup(context_override);
		if (!cfg->context)
			return -ENOMEM;
	} else {
		for (size_t i = 0; i < n_docs && !cfg->context; i++) {
			if (!docs[i].root)
				continue;
			r = get_string(&docs[i].p, docs[i].root, "current-context", "kubeconfig",
			               &cfg->context);
			if (r == -EINVAL) /* the message names "kubeconfig.": say it plainly */
				return fail(&docs[i].p, "current-context", "not a string");
			if (r < 0)
				return r;
		}
		if (!cfg->context) {
			snprintf(err, errlen, "%s: current-context: not set and no context given",
			         files);
			return -EINVAL;
		}
	}

	r = lookup_merged(docs, n_docs, "contexts", "context", cfg->context, &ctx_doc, &ctx,
	                  &index);
	if (r == -ENOENT) {
		snprintf(err, errlen, "%s: context \"%s\" not found", files, cfg->context);
		return -EINVAL;
	}
	if (r < 0)
		return r;
	snprintf(where, sizeof(where), "contexts[%zu].context", index);
	r = get_string(&ctx_doc->p, ctx, "cluster", where, &cluster_name);
	if (r < 0)
		goto out_free;
	snprintf(field, sizeof(field), "%s.cluster", where);
	if (!cluster_name) {
		r = fail(&ctx_doc->p, field, "missing");
		goto out_free;
	}
	r = get_string(&ctx_doc->p, ctx, "user", where, &user_name);
	if (r < 0)
		goto out_free;
	r = get_string(&ctx_doc->p, ctx, "namespace", where, &cfg->namespace);
	if (r < 0)
		goto out_free;

	r = lookup_merged(docs, n_docs, "clusters", "cluster", cluster_name, &doc, &value, &index);
	if (r == -ENOENT) {
		r = fail(&ctx_doc->p, field, "cluster \"%s\" not found", cluster_name);
		goto out_free;
	}
	if (r < 0)
		goto out_free;
	cfg->origin = strdup(doc->p.origin);
	if (!cfg->origin) {
		r = -ENOMEM;
		goto out_free;
	}
	r = parse_cluster(&doc->p, value, index, cfg);
	if (r < 0)
		goto out_free;

	/* A context without a user is valid: the requests go out anonymous. */
	if (user_name) {
		r = lookup_merged(docs, n_docs, "users", "user", user_name, &doc, &value, &index);
		if (r == -ENOENT) {
			snprintf(field, sizeof(field), "%s.user", where);
			r = fail(&ctx_doc->p, field, "user \"%s\" not found", user_name);
			goto out_free;
		}
		if (r < 0)
			goto out_free;
		r = parse_user(&doc->p, value, index, cfg);
		if (r < 0)
			goto out_free;
	}
	if (!cfg->namespace) {
		cfg->namespace = strdup("default");
		if (!cfg->namespace)
			r = -ENOMEM;
	}

out_free:
	free(cluster_name);
	free(user_name);
	return r;
}

int tj_kube_config_parse(const struct tj_kube_doc *docs, size_t n_docs,
                         const char *context_override, struct tj_kube_config **ret, char *err,
                         size_t errlen)
{
	struct parsed_doc *parsed;
	struct tj_kube_config *cfg;
	size_t n_parsed = 0;
	int r;

	if (n_docs == 0 || n_docs > TJ_KUBECONFIG_MAX_FILES)
		return -EINVAL;
	parsed = calloc(n_docs, sizeof(*parsed));
	cfg = calloc(1, sizeof(*cfg));
	if (!parsed || !cfg) {
		r = -ENOMEM;
		goto out_free;
	}
	for (; n_parsed < n_docs; n_parsed++) {
		r = parse_doc(&docs[n_parsed], err, errlen, &parsed[n_parsed]);
		if (r < 0)
			goto out_free;
	}
	r = resolve(parsed, n_docs, docs, context_override, cfg, err, errlen);
	if (r < 0)
		goto out_free;
	*ret = cfg;
	cfg = NULL;

out_free:
	for (size_t i = 0; i < n_parsed; i++)
		fy_document_destroy(parsed[i].fyd);
	free(parsed);
	tj_kube_config_free(cfg);
	return r;
}
