/* Credential source: static token, token file, exec credential plugin. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fileio.h"
#include "base/rfc3339.h"
#include "kube/credentials.h"

extern char **environ;

struct waiter {
	tj_credentials_fn fn;
	void *userdata;
	struct waiter *next;
};

/* One run of the plugin: a process and the pipe of its stdout. Allocated per run and freed
 * from the handles' close callbacks, so the source itself can go away while a run winds
 * down. */
struct plugin_run {
	struct tj_credentials *owner; /* NULL once the source was freed or the run finished */
	uv_process_t proc;
	uv_pipe_t out;
	bool exited, eof;
	int64_t exit_status;
	int term_signal;
	char *output; /* owned; the plugin's stdout so far */
	size_t output_len;
	int open_handles;
};

struct tj_credentials {
	uv_loop_t *loop;
	char *token;           /* owned; static token from the kubeconfig, NULL if none */
	char *token_file;      /* owned; NULL if none */
	char *file_token;      /* owned; the last token read from token_file */
	uint64_t file_read_ms; /* loop time of that read */
	bool file_fresh;       /* false after a 401: read again on the next get */

	struct tj_exec_config *exec;    /* owned copy; NULL without a plugin */
	char *exec_info;                /* owned; KUBERNETES_EXEC_INFO=... for the plugin */
	struct tj_exec_credential cred; /* owned; the cached plugin result */
	bool cred_valid;
	struct plugin_run *run; /* the running plugin, NULL if none; owned by its handles */
	struct waiter *waiters; /* owned list; callers waiting for the plugin */
	char error[256];
};

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- ExecCredential --------------------------------------------------------------------- */

static int dup_json_string(const cJSON *obj, const char *key, char **out)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = NULL;
	if (!cJSON_IsString(s) || !s->valuestring[0])
		return 0;
	*out = strdup(s->valuestring);
	return *out ? 0 : -ENOMEM;
}

void tj_exec_credential_clear(struct tj_exec_credential *c)
{
	if (!c)
		return;
	free(c->token);
	free(c->client_cert_pem);
	free(c->client_key_pem);
	*c = (struct tj_exec_credential){ 0 };
}

int tj_exec_credential_parse(const char *json, size_t len, const char *want_api_version,
                             struct tj_exec_credential *ret, char *err, size_t errlen)
{
	struct tj_exec_credential c = { 0 };
	const cJSON *kind, *api, *status, *expiry;
	cJSON *root;
	int r = -EINVAL;

	root = cJSON_ParseWithLength(json, len);
	if (!root) {
		snprintf(err, errlen, "the plugin's output is not JSON");
		return -EINVAL;
	}
	kind = cJSON_GetObjectItemCaseSensitive(root, "kind");
	api = cJSON_GetObjectItemCaseSensitive(root, "apiVersion");
	status = cJSON_GetObjectItemCaseSensitive(root, "status");
	if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "ExecCredential") != 0) {
		snprintf(err, errlen, "the plugin's output is not an ExecCredential");
		goto out_free;
	}
	if (!cJSON_IsString(api) || strcmp(api->valuestring, want_api_version) != 0) {
		snprintf(err, errlen, "the plugin answered apiVersion %s, want %s",
		         cJSON_IsString(api) ? api->valuestring : "(none)", want_api_version);
		goto out_free;
	}
	if (!cJSON_IsObject(status)) {
		snprintf(err, errlen, "the plugin's ExecCredential has no status");
		goto out_free;
	}
	if (dup_json_string(status, "token", &c.token) < 0 ||
	    dup_json_string(status, "clientCertificateData", &c.client_cert_pem) < 0 ||
	    dup_json_string(status, "clientKeyData", &c.client_key_pem) < 0) {
		r = -ENOMEM;
		goto out_free;
	}
	if (!!c.client_cert_pem != !!c.client_key_pem) {
		snprintf(err, errlen,
		         "the plugin's ExecCredential has clientCertificateData or clientKeyData "
		         "without the other");
		goto out_free;
	}
	if (!c.token && !c.client_cert_pem) {
		snprintf(
		        err, errlen,
		        "the plugin's ExecCredential has neither a token nor a client certificate");
		goto out_free;
	}
	expiry = cJSON_GetObjectItemCaseSensitive(status, "expirationTimestamp");
	if (expiry && !cJSON_IsNull(expiry) &&
	    (!cJSON_IsString(expiry) ||
	     tj_rfc3339_parse_ms(expiry->valuestring, &c.expires_unix_ms) < 0)) {
		snprintf(err, errlen, "the plugin's expirationTimestamp is not an RFC 3339 time");
		goto out_free;
	}
	cJSON_Delete(root);
	*ret = c;
	return 0;

out_free:
	tj_exec_credential_clear(&c);
	cJSON_Delete(root);
	return r;
}

/* ---- the source ------------------------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void b64_encode(const char *in, size_t len, char *out)
{
	static const char tbl[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned char)in[i] << 16;

		if (i + 1 < len)
			v |= (unsigned char)in[i + 1] << 8;
		if (i + 2 < len)
			v |= (unsigned char)in[i + 2];
		out[o++] = tbl[v >> 18 & 63];
		out[o++] = tbl[v >> 12 & 63];
		out[o++] = i + 1 < len ? tbl[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? tbl[v & 63] : '=';
	}
	out[o] = '\0';
}

/* KUBERNETES_EXEC_INFO: the ExecCredential "spec" client-go hands every plugin, with the
 * cluster when provideClusterInfo is set. We never run plugins interactively. */
static int build_exec_info(const struct tj_kube_config *cfg, char **ret)
{
	cJSON *root = cJSON_CreateObject(), *spec, *cluster;
	char *json = NULL, *b64 = NULL;
	int r = -ENOMEM;

	if (!root)
		return -ENOMEM;
	if (!cJSON_AddStringToObject(root, "apiVersion", cfg->exec->api_version) ||
	    !cJSON_AddStringToObject(root, "kind", "ExecCredential") ||
	    !(spec = cJSON_AddObjectToObject(root, "spec")) ||
	    !cJSON_AddBoolToObject(spec, "interactive", false))
		goto out_free;
	if (cfg->exec->provide_cluster_info) {
		cluster = cJSON_AddObjectToObject(spec, "cluster");
		if (!cluster || !cJSON_AddStringToObject(cluster, "server", cfg->server))
			goto out_free;
		if (cfg->tls_server_name &&
		    !cJSON_AddStringToObject(cluster, "tls-server-name", cfg->tls_server_name))
			goto out_free;
		if (cfg->insecure_skip_tls_verify &&
		    !cJSON_AddBoolToObject(cluster, "insecure-skip-tls-verify", true))
			goto out_free;
		if (cfg->ca_pem) {
			b64 = malloc((cfg->ca_pem_len + 2) / 3 * 4 + 1);
			if (!b64)
				goto out_free;
			b64_encode(cfg->ca_pem, cfg->ca_pem_len, b64);
			if (!cJSON_AddStringToObject(cluster, "certificate-authority-data", b64))
				goto out_free;
		}
	}
	json = cJSON_PrintUnformatted(root);
	if (!json || asprintf(ret, "KUBERNETES_EXEC_INFO=%s", json) < 0)
		goto out_free;
	r = 0;

out_free:
	free(json);
	free(b64);
	cJSON_Delete(root);
	return r;
}

static struct tj_exec_config *copy_exec(const struct tj_exec_config *src)
{
	struct tj_exec_config *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->command = strdup(src->command);
	e->api_version = strdup(src->api_version);
	e->install_hint = dup_or_null(src->install_hint);
	e->args = calloc(src->n_args + 1, sizeof(char *));
	e->env = calloc(src->n_env + 1, sizeof(char *));
	e->provide_cluster_info = src->provide_cluster_info;
	if (!e->command || !e->api_version || (src->install_hint && !e->install_hint) || !e->args ||
	    !e->env)
		goto out_free;
	for (; e->n_args < src->n_args; e->n_args++)
		if (!(e->args[e->n_args] = strdup(src->args[e->n_args])))
			goto out_free;
	for (; e->n_env < src->n_env; e->n_env++)
		if (!(e->env[e->n_env] = strdup(src->env[e->n_env])))
			goto out_free;
	return e;

out_free:
	tj_exec_config_free(e);
	return NULL;
}

int tj_credentials_new(uv_loop_t *loop, const struct tj_kube_config *cfg,
                       struct tj_credentials **ret)
{
	struct tj_credentials *c = calloc(1, sizeof(*c));
	int r = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->token = dup_or_null(cfg->token);
	c->token_file = dup_or_null(cfg->token_file);
	if ((cfg->token && !c->token) || (cfg->token_file && !c->token_file))
		goto out_free;
	if (cfg->exec) {
		c->exec = copy_exec(cfg->exec);
		if (!c->exec)
			goto out_free;
		r = build_exec_info(cfg, &c->exec_info);
		if (r < 0)
			goto out_free;
	}
	*ret = c;
	return 0;

out_free:
	tj_exec_config_free(c->exec);
	free(c->token);
	free(c->token_file);
	free(c);
	return r;
}

/* Re-reads the token file when the cached copy is a minute old or a 401 invalidated it. A
 * failed read keeps the last good token, as client-go's cached token source does. */
static void refresh_token_file(struct tj_credentials *c)
{
	uint64_t now = uv_now(c->loop);
	char *text;
	size_t len;

	if (c->file_token && c->file_fresh && now - c->file_read_ms < TJ_TOKEN_FILE_REFRESH_MS)
		return;
	if (tj_read_file(c->token_file, TJ_KUBE_FILE_MAX, 0, &text, &len) < 0)
		return;
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (len == 0) {
		free(text);
		return;
	}
	free(c->file_token);
	c->file_token = text;
	c->file_read_ms = now;
	c->file_fresh = true;
}

static bool cred_usable(const struct tj_credentials *c)
{
	return c->cred_valid &&
	       (c->cred.expires_unix_ms == 0 ||
	        (int64_t)wall_ms() + TJ_EXEC_EXPIRY_LEEWAY_MS < c->cred.expires_unix_ms);
}

static void fill_from_exec(const struct tj_credentials *c, struct tj_credential *cred)
{
	cred->token = c->cred.token;
	cred->client_cert_pem = c->cred.client_cert_pem;
	cred->client_cert_pem_len = c->cred.client_cert_pem ? strlen(c->cred.client_cert_pem) : 0;
	cred->client_key_pem = c->cred.client_key_pem;
	cred->client_key_pem_len = c->cred.client_key_pem ? strlen(c->cred.client_key_pem) : 0;
}

static void on_run_closed(uv_handle_t *h)
{
	struct plugin_run *run = h->data;

	if (--run->open_handles == 0) {
		free(run->output);
		free(run);
	}
}

/* Detaches the run from its source and closes its handles (killing the process if alive). */
static void end_run(struct plugin_run *run)
{
	if (!run->exited)
		uv_process_kill(&run->proc, SIGTERM);
	if (run->owner)
		run->owner->run = NULL;
	run->owner = NULL;
	uv_close((uv_handle_t *)&run->proc, on_run_closed);
	uv_close((uv_handle_t *)&run->out, on_run_closed);
}

/* Hands the result of a plugin run to every waiter. A waiter may call back into the source
 * (a new get), so the list is detached first. */
static void finish_run(struct tj_credentials *c, int rc)
{
	struct waiter *w = c->waiters;
	struct tj_credential cred = { 0 };

	c->waiters = NULL;
	end_run(c->run);
	if (rc == 0)
		fill_from_exec(c, &cred);
	while (w) {
		struct waiter *next = w->next;

		w->fn(rc, rc == 0 ? &cred : NULL, rc == 0 ? "" : c->error, w->userdata);
		free(w);
		w = next;
	}
}

static void check_run_done(struct plugin_run *run)
{
	struct tj_credentials *c = run->owner;
	struct tj_exec_credential cred;
	char err[200];
	int r;

	if (!c || !run->exited || !run->eof)
		return;
	if (run->exit_status != 0 || run->term_signal != 0) {
		snprintf(c->error, sizeof(c->error), "exec plugin %s %s %d", c->exec->command,
		         run->term_signal ? "was killed by signal" : "exited with status",
		         run->term_signal ? run->term_signal : (int)run->exit_status);
		finish_run(c, -EACCES);
		return;
	}
	r = tj_exec_credential_parse(run->output ? run->output : "", run->output_len,
	                             c->exec->api_version, &cred, err, sizeof(err));
	if (r < 0) {
		snprintf(c->error, sizeof(c->error), "exec plugin %s: %s", c->exec->command, err);
		finish_run(c, r);
		return;
	}
	tj_exec_credential_clear(&c->cred);
	c->cred = cred;
	c->cred_valid = true;
	finish_run(c, 0);
}

static void on_plugin_exit(uv_process_t *proc, int64_t exit_status, int term_signal)
{
	struct plugin_run *run = proc->data;

	run->exited = true;
	run->exit_status = exit_status;
	run->term_signal = term_signal;
	check_run_done(run);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct plugin_run *run = h->data;
	char *grown;

	buf->base = NULL;
	buf->len = 0;
	if (run->output_len >= TJ_EXEC_OUTPUT_MAX)
		return;
	grown = realloc(run->output, run->output_len + 65536 + 1);
	if (!grown)
		return;
	run->output = grown;
	buf->base = run->output + run->output_len;
	buf->len = 65536;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct plugin_run *run = s->data;

	if (n > 0) {
		run->output_len += (size_t)n;
		run->output[run->output_len] = '\0';
		return;
	}
	if (n == 0)
		return;
	/* EOF, a read error, or no buffer (output above the limit): stop reading either way;
	 * the parse then fails on a truncated document. */
	uv_read_stop(s);
	run->eof = true;
	check_run_done(run);
}

static int start_plugin(struct tj_credentials *c)
{
	uv_stdio_container_t stdio[3];
	uv_process_options_t opts = { 0 };
	struct plugin_run *run;
	char **argv = NULL, **env = NULL;
	size_t n_environ = 0, e = 0;
	int r = -ENOMEM;

	while (environ && environ[n_environ])
		n_environ++;
	run = calloc(1, sizeof(*run));
	argv = calloc(c->exec->n_args + 2, sizeof(char *));
	env = calloc(n_environ + c->exec->n_env + 2, sizeof(char *));
	if (!run || !argv || !env) {
		free(run);
		goto out_free;
	}
	argv[0] = c->exec->command;
	for (size_t i = 0; i < c->exec->n_args; i++)
		argv[i + 1] = c->exec->args[i];
	for (size_t i = 0; i < n_environ; i++)
		if (strncmp(environ[i], "KUBERNETES_EXEC_INFO=", 21) != 0)
			env[e++] = environ[i];
	for (size_t i = 0; i < c->exec->n_env; i++)
		env[e++] = c->exec->env[i];
	env[e++] = c->exec_info;

	r = uv_pipe_init(c->loop, &run->out, 0);
	if (r < 0) {
		free(run);
		goto out_free;
	}
	run->out.data = run;
	run->proc.data = run;
	run->owner = c;
	run->open_handles = 2; /* a failed uv_spawn still needs uv_close */
	c->run = run;
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&run->out;
	stdio[2].flags = UV_INHERIT_FD;
	stdio[2].data.fd = 2;
	opts.file = c->exec->command;
	opts.args = argv;
	opts.env = env;
	opts.stdio = stdio;
	opts.stdio_count = 3;
	opts.exit_cb = on_plugin_exit;
	r = uv_spawn(c->loop, &run->proc, &opts);
	if (r < 0) {
		snprintf(c->error, sizeof(c->error), "exec plugin %s: %s%s%s", c->exec->command,
		         uv_strerror(r), c->exec->install_hint ? ": " : "",
		         c->exec->install_hint ? c->exec->install_hint : "");
		run->exited = true;
		end_run(run);
		goto out_free;
	}
	if (uv_read_start((uv_stream_t *)&run->out, on_alloc, on_read) < 0)
		run->eof = true; /* without stdout the run fails when the process exits */

out_free:
	free(argv);
	free(env);
	return r;
}

int tj_credentials_get(struct tj_credentials *c, tj_credentials_fn fn, void *userdata)
{
	struct tj_credential cred = { 0 };
	struct waiter *w, **tail;
	int r;

	if (c->exec) {
		if (cred_usable(c)) {
			fill_from_exec(c, &cred);
			fn(0, &cred, "", userdata);
			return 0;
		}
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		if (!c->run) {
			r = start_plugin(c);
			if (r < 0) {
				free(w);
				fn(r, NULL, c->error, userdata);
				return 0;
			}
		}
		w->fn = fn;
		w->userdata = userdata;
		/* Appended, so that waiters are answered in the order they asked. */
		for (tail = &c->waiters; *tail;)
			tail = &(*tail)->next;
		*tail = w;
		return 0;
	}
	if (c->token_file) {
		refresh_token_file(c);
		if (c->file_token) {
			cred.token = c->file_token;
			fn(0, &cred, "", userdata);
			return 0;
		}
		if (!c->token) {
			snprintf(c->error, sizeof(c->error), "cannot read the token file %s",
			         c->token_file);
			fn(-EACCES, NULL, c->error, userdata);
			return 0;
		}
	}
	cred.token = c->token;
	fn(0, &cred, "", userdata);
	return 0;
}

void tj_credentials_cancel(struct tj_credentials *c, tj_credentials_fn fn, void *userdata)
{
	for (struct waiter **w = &c->waiters; *w; w = &(*w)->next) {
		if ((*w)->fn == fn && (*w)->userdata == userdata) {
			struct waiter *gone = *w;

			*w = gone->next;
			free(gone);
			return;
		}
	}
}

bool tj_credentials_invalidate(struct tj_credentials *c)
{
	if (c->exec) {
		c->cred_valid = false;
		return true;
	}
	if (c->token_file) {
		c->file_fresh = false;
		return true;
	}
	return false;
}

struct tj_credentials *tj_credentials_free(struct tj_credentials *c)
{
	struct waiter *w;

	if (!c)
		return NULL;
	while ((w = c->waiters)) {
		c->waiters = w->next;
		free(w);
	}
	if (c->run)
		end_run(c->run);
	tj_exec_config_free(c->exec);
	free(c->exec_info);
	tj_exec_credential_clear(&c->cred);
	free(c->token);
	free(c->token_file);
	free(c->file_token);
	free(c);
	return NULL;
}
