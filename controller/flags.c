#include "controller/flags.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tj-version.h"

struct option_spec {
	const char *name;
	const char *alias; /* a short form ("-f"), or NULL */
	enum tj_flags_action action;
	const char *help;
	/* Options that take a value (--name=VALUE or --name VALUE): its name in the help, and
	 * what stores it; NULL for plain flags. A switch has set but no metavar: "--name" alone
	 * means true, "--name=false" turns it off, and it never takes the next argument, as
	 * Go's boolean flags. */
	const char *metavar;
	int (*set)(struct tj_flags *flags, const char *value, char *err, size_t errlen);
};

static int set_metrics_addr(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return tj_bind_addr_parse(value, &flags->metrics_addr, err, errlen);
}

static int set_trainer_status_addr(struct tj_flags *flags, const char *value, char *err,
                                   size_t errlen)
{
	return tj_bind_addr_parse(value, &flags->trainer_status_addr, err, errlen);
}

static int set_probe_addr(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return tj_bind_addr_parse(value, &flags->probe_addr, err, errlen);
}

static int set_log_level(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	if (tj_log_level_parse(value, &flags->log_level) < 0) {
		snprintf(err, errlen, "'%s' is not a level (error, warn, info, debug)", value);
		return -EINVAL;
	}
	return 0;
}

static int set_path(char dst[static PATH_MAX], const char *value, char *err, size_t errlen)
{
	if (!*value) {
		snprintf(err, errlen, "needs a path");
		return -EINVAL;
	}
	if (strlen(value) >= PATH_MAX) {
		snprintf(err, errlen, "the path is too long");
		return -EINVAL;
	}
	strcpy(dst, value);
	return 0;
}

static int set_file(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_path(flags->render.file, value, err, errlen);
}

static int set_runtime(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_path(flags->render.runtime, value, err, errlen);
}

static int set_runtime_dir(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_path(flags->render.runtime_dir, value, err, errlen);
}

static int set_config(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_path(flags->render.config, value, err, errlen);
}

static int set_string(char *dst, size_t size, const char *value, char *err, size_t errlen)
{
	if (!*value) {
		snprintf(err, errlen, "must not be empty");
		return -EINVAL;
	}
	if (strlen(value) >= size) {
		snprintf(err, errlen, "is longer than %zu characters", size - 1);
		return -EINVAL;
	}
	strcpy(dst, value);
	return 0;
}

static int set_kubeconfig(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_path(flags->run.kubeconfig, value, err, errlen);
}

static int set_context(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_string(flags->run.context, sizeof(flags->run.context), value, err, errlen);
}

static int set_run_config(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_path(flags->run.config, value, err, errlen);
}

static int set_namespace(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return set_string(flags->run.namespace, sizeof(flags->run.namespace), value, err, errlen);
}

static int set_qps(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	char *end;
	double v = strtod(value, &end);

	if (!*value || *end || !(v >= 0 && v <= 1e6)) {
		snprintf(err, errlen, "'%s' is not a rate from 0 (no limit) to 1000000", value);
		return -EINVAL;
	}
	flags->run.qps = v;
	return 0;
}

static int set_burst(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	char *end;
	long v = strtol(value, &end, 10);

	if (!*value || *end || v < 1 || v > 1000000) {
		snprintf(err, errlen, "'%s' is not a count from 1 to 1000000", value);
		return -EINVAL;
	}
	flags->run.burst = (int)v;
	return 0;
}

static int parse_bool(const char *value, bool *ret, char *err, size_t errlen)
{
	if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0) {
		*ret = true;
		return 0;
	}
	if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0) {
		*ret = false;
		return 0;
	}
	snprintf(err, errlen, "'%s' is not true or false", value);
	return -EINVAL;
}

static int set_leader_elect(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return parse_bool(value, &flags->run.leader_elect, err, errlen);
}

static int set_paginated_lists(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return parse_bool(value, &flags->run.paginated_lists, err, errlen);
}

static int set_metrics_secure(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	flags->run.metrics_secure_given = true;
	return parse_bool(value, &flags->run.metrics_secure, err, errlen);
}

static int set_metrics_cert_path(struct tj_flags *flags, const char *value, char *err,
                                 size_t errlen)
{
	return set_path(flags->run.metrics_cert_path, value, err, errlen);
}

static int set_kueue(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return parse_bool(value, &flags->run.kueue, err, errlen);
}

static int set_leader_election_id(struct tj_flags *flags, const char *value, char *err,
                                  size_t errlen)
{
	return set_string(flags->run.leader_election_id, sizeof(flags->run.leader_election_id),
	                  value, err, errlen);
}

static int set_leader_election_namespace(struct tj_flags *flags, const char *value, char *err,
                                         size_t errlen)
{
	return set_string(flags->run.leader_election_namespace,
	                  sizeof(flags->run.leader_election_namespace), value, err, errlen);
}

/* A duration in Go's syntax ("15s", "1m30s", "1.5s", "500ms"), in milliseconds, rounded;
 * at most a day. */
static int parse_duration(const char *value, uint64_t *ret_ms, char *err, size_t errlen)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = { { "ms", 1 },     { "us", 1e-3 }, { "\u00b5s", 1e-3 }, { "ns", 1e-6 },
		      { "h", 3600e3 }, { "m", 60e3 },  { "s", 1e3 } };
	const char *p = value;
	double total = 0;

	if (strcmp(value, "0") == 0) {
		*ret_ms = 0;
		return 0;
	}
	while (*p) {
		char *end;
		double n;
		size_t u, len = 0;

		if (!(*p >= '0' && *p <= '9') && *p != '.')
			goto bad;
		n = strtod(p, &end);
		if (end == p)
			goto bad;
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			len = strlen(units[u].unit);
			if (strncmp(end, units[u].unit, len) == 0)
				break;
		}
		if (u == sizeof(units) / sizeof(units[0]))
			goto bad;
		total += n * units[u].ms;
		p = end + len;
	}
	if (!*value || !(total <= 24 * 3600e3))
		goto bad;
	*ret_ms = (uint64_t)(total + 0.5);
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a duration such as 15s, 1m30s or 500ms (at most 24h)",
	         value);
	return -EINVAL;
}

static int set_lease_duration(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return parse_duration(value, &flags->run.leader_timings.lease_duration_ms, err, errlen);
}

static int set_renew_deadline(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return parse_duration(value, &flags->run.leader_timings.renew_deadline_ms, err, errlen);
}

static int set_retry_period(struct tj_flags *flags, const char *value, char *err, size_t errlen)
{
	return parse_duration(value, &flags->run.leader_timings.retry_period_ms, err, errlen);
}

static const struct option_spec run_options[] = {
	{ "--help", NULL, TJ_FLAGS_HELP, "print this help and exit", NULL, NULL },
	{ "--version", NULL, TJ_FLAGS_VERSION, "print the version and exit", NULL, NULL },
	{ "--kubeconfig", NULL, TJ_FLAGS_RUN,
	  "the kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)", "PATH",
	  set_kubeconfig },
	{ "--context", NULL, TJ_FLAGS_RUN, "the kubeconfig context (default: its current-context)",
	  "NAME", set_context },
	{ "--config", NULL, TJ_FLAGS_RUN,
	  "the GPU classes, reloaded on change (default: built-in gh200, h100)", "PATH",
	  set_run_config },
	{ "--namespace", NULL, TJ_FLAGS_RUN,
	  "watch TrainJobs in this namespace only (default: all)", "NS", set_namespace },
	{ "--kube-api-qps", NULL, TJ_FLAGS_RUN,
	  "client-side limit of API requests per second (default 0: none)", "QPS", set_qps },
	{ "--kube-api-burst", NULL, TJ_FLAGS_RUN, "requests allowed at once above the QPS limit",
	  "N", set_burst },
	{ "--paginated-lists", NULL, TJ_FLAGS_RUN,
	  "list with pages, not streaming watches (default false: stream where served)", NULL,
	  set_paginated_lists },
	{ "--leader-elect", NULL, TJ_FLAGS_RUN,
	  "only the holder of a Lease reconciles (default false)", NULL, set_leader_elect },
	{ "--leader-election-id", NULL, TJ_FLAGS_RUN,
	  "the Lease's name (default " TJ_LEADER_ELECTION_ID_DEFAULT ")", "NAME",
	  set_leader_election_id },
	{ "--leader-election-namespace", NULL, TJ_FLAGS_RUN,
	  "the Lease's namespace (default: the pod's; \"default\" out of cluster)", "NS",
	  set_leader_election_namespace },
	{ "--leader-elect-lease-duration", NULL, TJ_FLAGS_RUN,
	  "followers take over a Lease unrenewed this long (default 15s)", "DUR",
	  set_lease_duration },
	{ "--leader-elect-renew-deadline", NULL, TJ_FLAGS_RUN,
	  "the leader stops when it cannot renew this long (default 10s)", "DUR",
	  set_renew_deadline },
	{ "--leader-elect-retry-period", NULL, TJ_FLAGS_RUN,
	  "how often to try to acquire or renew (default 2s)", "DUR", set_retry_period },
	{ "--kueue", NULL, TJ_FLAGS_RUN,
	  "watch Kueue's Workloads: a TrainJob Kueue holds says why (default false)", NULL,
	  set_kueue },
	{ "--metrics-bind-address", NULL, TJ_FLAGS_RUN,
	  "serve /metrics here (default :8080; 0 disables)", "ADDR", set_metrics_addr },
	{ "--metrics-secure", NULL, TJ_FLAGS_RUN,
	  "HTTPS and token review on /metrics (default: true in cluster)", NULL,
	  set_metrics_secure },
	{ "--metrics-cert-path", NULL, TJ_FLAGS_RUN,
	  "directory of tls.crt and tls.key (default: self-signed)", "DIR", set_metrics_cert_path },
	{ "--trainer-status-bind-address", NULL, TJ_FLAGS_RUN,
	  "serve Kubeflow's trainer status API here, over HTTPS (default 0: off; Kubeflow's "
	  ":10443)",
	  "ADDR", set_trainer_status_addr },
	{ "--health-probe-bind-address", NULL, TJ_FLAGS_RUN,
	  "serve /healthz and /readyz here (default :8081; 0 disables)", "ADDR", set_probe_addr },
	{ "--log-level", NULL, TJ_FLAGS_RUN, "error, warn, info (default) or debug", "LEVEL",
	  set_log_level },
	{ "--zap-log-level", NULL, TJ_FLAGS_RUN, "the same, as controller-runtime spells it",
	  "LEVEL", set_log_level },
};

static const struct option_spec render_options[] = {
	{ "--filename", "-f", TJ_FLAGS_RENDER, "the TrainJob(s) to render (required)",
	  "TRAINJOB.yaml", set_file },
	{ "--runtime", NULL, TJ_FLAGS_RENDER, "a file with the runtime(s) they reference",
	  "RUNTIME.yaml", set_runtime },
	{ "--runtime-dir", NULL, TJ_FLAGS_RENDER,
	  "where to look up runtimes by name (default: the shipped ones)", "DIR", set_runtime_dir },
	{ "--config", NULL, TJ_FLAGS_RENDER,
	  "the controller's config (default: built-in GPU classes gh200, h100)", "CONFIG.yaml",
	  set_config },
	{ "--help", NULL, TJ_FLAGS_HELP, "print this help and exit", NULL, NULL },
};

struct command {
	const char *name; /* NULL for the default command */
	enum tj_flags_action action;
	const struct option_spec *options;
	size_t n_options;
	const char *usage; /* "{prog}" stands for the program's name */
};

static const struct command commands[] = {
	{ NULL, TJ_FLAGS_RUN, run_options, sizeof(run_options) / sizeof(run_options[0]),
	  "Usage: {prog} [OPTION]...\n"
	  "       {prog} render -f TRAINJOB.yaml [OPTION]...\n"
	  "\n"
	  "Runs Kubeflow Trainer TrainJobs (trainer.kubeflow.org/v1alpha1) on GPU clusters:\n"
	  "one pod per node, torchrun wiring, restarts on healthy nodes.\n"
	  "\n"
	  "Commands:\n"
	  "  render                             print the Service and pods a TrainJob becomes\n"
	  "\n"
	  "Options:\n" },
	{ "render", TJ_FLAGS_RENDER, render_options,
	  sizeof(render_options) / sizeof(render_options[0]),
	  "Usage: {prog} render -f TRAINJOB.yaml [OPTION]...\n"
	  "\n"
	  "Prints, as a YAML stream, the Service, the PVCs and the pods of every step the\n"
	  "controller would create for each TrainJob in the file, without a cluster, and for\n"
	  "an MPI runtime the hostfile ConfigMap and the SSH Secret (its key pair is made\n"
	  "only when the controller creates it).\n"
	  "\n"
	  "Options:\n" },
};

static const struct command *command_of(enum tj_flags_action action)
{
	return action == TJ_FLAGS_RENDER ? &commands[1] : &commands[0];
}

/* The option named by arg ("--name", "--name=value" or the alias); *ret_value is the inline
 * value. */
static const struct option_spec *find_option(const struct command *cmd, const char *arg,
                                             const char **ret_value)
{
	for (size_t o = 0; o < cmd->n_options; o++) {
		const struct option_spec *spec = &cmd->options[o];
		size_t n = strlen(spec->name);

		if (spec->alias && strcmp(arg, spec->alias) == 0) {
			*ret_value = NULL;
			return spec;
		}
		if (strncmp(arg, spec->name, n) != 0)
			continue;
		if (arg[n] == '\0') {
			*ret_value = NULL;
			return spec;
		}
		if (arg[n] == '=' && spec->set) {
			*ret_value = arg + n + 1;
			return spec;
		}
	}
	return NULL;
}

bool tj_flags_metrics_secure(const struct tj_flags_run *run, bool in_cluster)
{
	return run->metrics_secure_given ? run->metrics_secure : in_cluster;
}

void tj_flags_usage(FILE *out, const char *prog, enum tj_flags_action topic)
{
	const struct command *cmd = command_of(topic);

	for (const char *p = cmd->usage; *p; p++) {
		if (strncmp(p, "{prog}", 6) == 0) {
			fputs(prog, out);
			p += 5;
		} else {
			fputc(*p, out);
		}
	}
	for (size_t i = 0; i < cmd->n_options; i++) {
		const struct option_spec *o = &cmd->options[i];
		char name[64];

		snprintf(name, sizeof(name), "%s%s%s%s%s", o->alias ? o->alias : "",
		         o->alias ? ", " : "", o->name, o->metavar ? "=" : "",
		         o->metavar ? o->metavar : "");
		fprintf(out, "  %-34s %s\n", name, o->help);
	}
	fprintf(out, "\ntrainjob-controller %s\n", TJ_VERSION);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int tj_flags_parse(int argc, char *const argv[], struct tj_flags *ret, char *err, size_t errlen)
{
	struct tj_flags flags = {
		.action = TJ_FLAGS_RUN,
		.metrics_addr = { .port = "8080" },
		.probe_addr = { .port = "8081" },
		.trainer_status_addr = { .disabled = true },
		.log_level = TJ_LOG_INFO,
		.run = {
			.leader_election_id = TJ_LEADER_ELECTION_ID_DEFAULT,
			.leader_timings = TJ_LEADER_TIMINGS_DEFAULT,
		},
	};
	const struct command *cmd = &commands[0];
	enum tj_flags_action first_flag = TJ_FLAGS_RUN; /* the first of --help and --version */
	int i = 1;

	if (errlen > 0)
		err[0] = '\0';
	if (argc > 1 && argv[1][0] != '-') {
		for (size_t c = 1; c < sizeof(commands) / sizeof(commands[0]); c++)
			if (strcmp(argv[1], commands[c].name) == 0)
				cmd = &commands[c];
		if (cmd == &commands[0])
			return fail(err, errlen, "unknown command '%s' (see --help)", argv[1]);
		i = 2;
	}
	for (; i < argc; i++) {
		const char *value;
		const struct option_spec *found = find_option(cmd, argv[i], &value);
		char why[128];

		if (!found)
			return fail(err, errlen, "unknown argument '%s' (see --help)", argv[i]);
		if (found->set && !found->metavar) {
			if (found->set(&flags, value ? value : "true", why, sizeof(why)) < 0)
				return fail(err, errlen, "%s: %s", found->name, why);
			continue;
		}
		if (found->set) {
			if (!value && i + 1 == argc)
				return fail(err, errlen, "%s needs a value", found->name);
			if (!value)
				value = argv[++i];
			if (found->set(&flags, value, why, sizeof(why)) < 0)
				return fail(err, errlen, "%s: %s", found->name, why);
			continue;
		}
		/* The first of --help and --version wins, as in most GNU tools. */
		if (first_flag == TJ_FLAGS_RUN)
			first_flag = found->action;
	}
	flags.topic = cmd->action;
	flags.action = first_flag != TJ_FLAGS_RUN ? first_flag : cmd->action;
	if (flags.action == TJ_FLAGS_RENDER && !flags.render.file[0])
		return fail(err, errlen, "render: -f TRAINJOB.yaml is required");
	if (flags.action == TJ_FLAGS_RUN) {
		char why[160];

		if (tj_leader_timings_check(&flags.run.leader_timings, why, sizeof(why)) < 0)
			return fail(err, errlen, "leader election: %s", why);
	}
	*ret = flags;
	return 0;
}
