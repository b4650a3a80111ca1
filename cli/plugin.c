#include "cli/plugin.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kube/sources.h"
#include "tj-version.h"

static void print_usage(FILE *out, const struct tj_plugin_spec *spec)
{
	fprintf(out, "Usage: kubectl %s %s\n\n%s\n\nOptions:\n", spec->name, spec->synopsis,
	        spec->summary);
	if (spec->options_help)
		fputs(spec->options_help, out);
	fputs("  -n, --namespace NS    the namespace (default: the context's, as kubectl)\n"
	      "      --kubeconfig FILE the kubeconfig (default: $KUBECONFIG, else "
	      "~/.kube/config)\n"
	      "      --context NAME    the kubeconfig context (default: current-context)\n"
	      "  -h, --help            print this help and exit\n"
	      "      --version         print the version and exit\n",
	      out);
}

int tj_plugin_match(const char *arg, const char *next, char short_name, const char *long_name,
                    const char **ret_value)
{
	size_t len = long_name ? strlen(long_name) : 0;

	if (short_name && arg[0] == '-' && arg[1] == short_name) {
		if (arg[2]) {
			*ret_value = arg + 2;
			return 1;
		}
		if (!next)
			return -EINVAL;
		*ret_value = next;
		return 2;
	}
	if (!long_name || strncmp(arg, "--", 2) != 0 || strncmp(arg + 2, long_name, len) != 0)
		return 0;
	if (arg[2 + len] == '=') {
		*ret_value = arg + 3 + len;
		return 1;
	}
	if (arg[2 + len])
		return 0;
	if (!next)
		return -EINVAL;
	*ret_value = next;
	return 2;
}

int tj_plugin_match_flag(const char *arg, char short_name, const char *long_name)
{
	if (short_name && arg[0] == '-' && arg[1] == short_name && !arg[2])
		return 1;
	return long_name && strncmp(arg, "--", 2) == 0 && strcmp(arg + 2, long_name) == 0;
}

static int copy_value(char *dst, size_t size, const char *value)
{
	size_t len = strlen(value);

	if (len == 0 || len >= size)
		return -EINVAL;
	memcpy(dst, value, len + 1);
	return 0;
}

/* The common options; returns as tj_plugin_option_fn does. */
static int common_option(struct tj_plugin *p, const char *arg, const char *next, char *err,
                         size_t errlen)
{
	static const struct {
		char short_name;
		const char *long_name;
		size_t offset, size;
	} options[] = {
		{ 'n', "namespace", offsetof(struct tj_plugin, namespace), TJ_NAME_MAX },
		{ 0, "kubeconfig", offsetof(struct tj_plugin, kubeconfig), PATH_MAX },
		{ 0, "context", offsetof(struct tj_plugin, context), 256 },
	};

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		const char *value = NULL;
		int n = tj_plugin_match(arg, next, options[i].short_name, options[i].long_name,
		                        &value);

		if (n == 0)
			continue;
		if (n < 0 ||
		    copy_value((char *)p + options[i].offset, options[i].size, value) < 0) {
			snprintf(err, errlen, "--%s needs a value (at most %zu characters)",
			         options[i].long_name, options[i].size - 1);
			return -EINVAL;
		}
		if (options[i].short_name == 'n')
			p->namespace_given = true;
		return n;
	}
	return 0;
}

static int add_operand(struct tj_plugin *p, const char *arg, char *err, size_t errlen)
{
	if (p->n_operands == TJ_PLUGIN_MAX_OPERANDS) {
		snprintf(err, errlen, "more than %d arguments", TJ_PLUGIN_MAX_OPERANDS);
		return -E2BIG;
	}
	p->operands[p->n_operands++] = arg;
	return 0;
}

/* The arguments into *p; returns 1 for --help, 2 for --version, 0 to go on, or -EINVAL with
 * the message in err. */
static int parse_args(struct tj_plugin *p, void *userdata, int argc, char *const argv[], char *err,
                      size_t errlen)
{
	const struct tj_plugin_spec *spec = p->spec;
	bool options_done = false;
	size_t max = spec->max_operands ? spec->max_operands : TJ_PLUGIN_MAX_OPERANDS;

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		int n;

		if (options_done || arg[0] != '-' || strcmp(arg, "-") == 0) {
			if (add_operand(p, arg, err, errlen) < 0)
				return -EINVAL;
			if (spec->stop_at_operand) {
				p->rest = argv + i + 1;
				p->n_rest = (size_t)(argc - i - 1);
				break;
			}
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			options_done = true;
			continue;
		}
		if (tj_plugin_match_flag(arg, 'h', "help"))
			return 1;
		if (tj_plugin_match_flag(arg, 0, "version"))
			return 2;
		n = common_option(p, arg, next, err, errlen);
		if (n == 0 && spec->on_option)
			n = spec->on_option(userdata, arg, next, err, errlen);
		if (n < 0)
			return -EINVAL;
		if (n == 0) {
			snprintf(err, errlen, "unknown option %.64s (see --help)", arg);
			return -EINVAL;
		}
		i += n - 1;
	}
	if (p->n_operands < spec->min_operands || p->n_operands > max) {
		snprintf(err, errlen, "%s (see --help)",
		         p->n_operands < spec->min_operands ? "missing arguments"
		                                            : "too many arguments");
		return -EINVAL;
	}
	return 0;
}

int tj_plugin_parse(struct tj_plugin *p, const struct tj_plugin_spec *spec, void *userdata,
                    int argc, char *const argv[], FILE *out, FILE *err)
{
	char msg[TJ_PLUGIN_ERROR_MAX] = "";
	int r;

	memset(p, 0, sizeof(*p));
	p->spec = spec;
	p->err = err;
	r = parse_args(p, userdata, argc, argv, msg, sizeof(msg));
	if (r < 0) {
		tj_plugin_error(p, "%s", msg);
		return TJ_PLUGIN_EXIT_USAGE;
	}
	if (r == 1) {
		print_usage(out, spec);
		return TJ_PLUGIN_EXIT_SUCCESS;
	}
	if (r == 2) {
		fprintf(out, "kubectl-%s (trainjob-controller) %s\n", spec->name, TJ_VERSION);
		return TJ_PLUGIN_EXIT_SUCCESS;
	}
	return TJ_PLUGIN_GO_ON;
}

void tj_plugin_error(const struct tj_plugin *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(p->err, "kubectl %s: ", p->spec->name);
	va_start(ap, fmt);
	vfprintf(p->err, fmt, ap);
	va_end(ap);
	fputc('\n', p->err);
}

int tj_plugin_connect(struct tj_plugin *p)
{
	struct tj_kube_env env;
	char err[TJ_PLUGIN_ERROR_MAX];
	int r;

	tj_kube_env_from_process(p->kubeconfig[0] ? p->kubeconfig : NULL, &env);
	r = tj_kube_config_load(&env, p->context[0] ? p->context : NULL, TJ_KUBE_SA_DIR, &p->kube,
	                        err, sizeof(err));
	if (r < 0) {
		tj_plugin_error(p, "%s", err);
		return r;
	}
	if (!p->namespace_given &&
	    copy_value(p->namespace, sizeof(p->namespace),
	               p->kube->namespace ? p->kube->namespace : "default") < 0) {
		tj_plugin_error(p, "the context's namespace is too long");
		return -EINVAL;
	}
	r = uv_loop_init(&p->loop);
	if (r < 0) {
		tj_plugin_error(p, "cannot start the event loop: %s", uv_strerror(r));
		return r;
	}
	p->loop_open = true;
	r = tj_client_new(&p->loop, p->kube, NULL, &p->client);
	if (r < 0)
		tj_plugin_error(p, "cannot connect to %s: %s", p->kube->server, strerror(-r));
	return r;
}

void tj_plugin_reply_init(struct tj_plugin_reply *r)
{
	memset(r, 0, sizeof(*r));
}

void tj_plugin_reply_fn(struct tj_response *resp, void *userdata)
{
	struct tj_plugin_reply *r = userdata;

	r->done = true;
	r->rc = resp->rc;
	r->http_status = resp->http_status;
	snprintf(r->reason, sizeof(r->reason), "%s",
	         resp->status.reason ? resp->status.reason : "");
	snprintf(r->error, sizeof(r->error), "%s", resp->error ? resp->error : "");
	if (resp->rc == 0)
		r->body = tj_response_take_body(resp);
}

int tj_plugin_wait(struct tj_plugin *p, struct tj_plugin_reply *r)
{
	while (!r->done && uv_run(&p->loop, UV_RUN_ONCE))
		;
	if (!r->done) {
		r->done = true;
		r->rc = -EPIPE;
		snprintf(r->error, sizeof(r->error), "the request ended without an answer");
	}
	return r->rc;
}

int tj_plugin_whoami(struct tj_plugin *p, char *buf, size_t len, char *reply_error, size_t errlen)
{
	static const struct tj_resource reviews = { "authentication.k8s.io", "v1",
		                                    "selfsubjectreviews", false };
	struct tj_plugin_reply reply;
	const cJSON *user;
	cJSON *review = cJSON_CreateObject();
	int r = -ENOMEM;

	tj_plugin_reply_init(&reply);
	if (!review || !cJSON_AddStringToObject(review, "apiVersion", "authentication.k8s.io/v1") ||
	    !cJSON_AddStringToObject(review, "kind", "SelfSubjectReview"))
		goto out;
	r = tj_kube_create(p->client, &(struct tj_ref){ .resource = &reviews }, review, NULL,
	                   tj_plugin_reply_fn, &reply, NULL);
	if (r < 0)
		goto out;
	r = tj_plugin_wait(p, &reply);
	if (r < 0) {
		if (reply_error)
			snprintf(reply_error, errlen, "%s", reply.error);
		goto out;
	}
	user = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetObjectItemCaseSensitive(reply.body, "status"), "userInfo"),
	        "username");
	if (!cJSON_IsString(user) || !user->valuestring[0] || strlen(user->valuestring) >= len) {
		r = -EBADMSG;
		if (reply_error)
			snprintf(reply_error, errlen, "the SelfSubjectReview names no user");
		goto out;
	}
	memcpy(buf, user->valuestring, strlen(user->valuestring) + 1);
out:
	cJSON_Delete(review);
	tj_plugin_reply_clear(&reply);
	return r;
}

void tj_plugin_reply_clear(struct tj_plugin_reply *r)
{
	if (!r)
		return;
	cJSON_Delete(r->body);
	tj_plugin_reply_init(r);
}

void tj_plugin_close(struct tj_plugin *p)
{
	p->client = tj_client_free(p->client);
	if (p->loop_open) {
		/* The client's handles close on the next iterations. */
		uv_run(&p->loop, UV_RUN_DEFAULT);
		uv_loop_close(&p->loop);
		p->loop_open = false;
	}
	p->kube = tj_kube_config_free(p->kube);
}
