#include "cli/sbatch_directives.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plugin.h"
#include "reconcilers/plan/dependency.h"

void tj_sbatch_note(struct tj_sbatch_notes *notes, const char *fmt, ...)
{
	char text[TJ_SBATCH_NOTE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < notes->n; i++)
		if (strcmp(notes->text[i], text) == 0)
			return;
	if (notes->n < TJ_SBATCH_MAX_NOTES)
		memcpy(notes->text[notes->n++], text, sizeof(text));
}

void tj_sbatch_opts_init(struct tj_sbatch_opts *opts)
{
	memset(opts, 0, sizeof(*opts));
}

/* What an option's handler gets: the options to fill, and where to say why a value is
 * wrong (the caller puts the option in front). */
struct ctx {
	struct tj_sbatch_opts *opts;
	struct tj_sbatch_notes *notes;
	int where;
	char *why;
	size_t why_len;
};

static int refuse(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->why, c->why_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal count in [min, max], nothing else. */
static int parse_count(const char *text, long min, long max, long *ret)
{
	long v = 0;

	if (!isdigit((unsigned char)*text))
		return -EINVAL;
	for (; isdigit((unsigned char)*text); text++) {
		v = v * 10 + (*text - '0');
		if (v > max)
			return -EINVAL;
	}
	if (*text || v < min)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Copies text into a buffer of size bytes; -EINVAL if it does not fit or is empty. */
static int copy(char *dst, size_t size, const char *text)
{
	size_t len = strlen(text);

	if (len == 0 || len >= size)
		return -EINVAL;
	memcpy(dst, text, len + 1);
	return 0;
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* A lowercase DNS label: what a GPU type, a class or a claim must be to name objects. */
static bool is_label(const char *s, size_t max)
{
	size_t len = strlen(s);

	if (len == 0 || len > max || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[len - 1]))
		return false;
	for (; *s; s++)
		if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '-'))
			return false;
	return true;
}

static int opt_job_name(struct ctx *c, const char *v)
{
	if (has_control(v) || copy(c->opts->job_name, sizeof(c->opts->job_name), v) < 0)
		return refuse(c, "a job name is 1 to %d printable characters",
		              TJ_SBATCH_VALUE_MAX - 1);
	return 0;
}

static int opt_nodes(struct ctx *c, const char *v)
{
	const char *dash = strchr(v, '-');
	long n, max;
	char min[32];

	/* sbatch takes MIN-MAX; a gang has one size, so only MIN-MIN is the same thing. */
	if (dash && (size_t)(dash - v) < sizeof(min)) {
		memcpy(min, v, (size_t)(dash - v));
		min[dash - v] = '\0';
		if (parse_count(min, 1, TJ_MAX_NODES, &n) == 0 &&
		    parse_count(dash + 1, 1, TJ_MAX_NODES, &max) == 0 && n != max)
			return refuse(c, "a range of node counts is not supported: give one count");
		v = dash + 1;
	}
	if (parse_count(v, 1, TJ_MAX_NODES, &n) < 0)
		return refuse(c, "the node count must be 1 to %d", TJ_MAX_NODES);
	c->opts->nodes = (int)n;
	return 0;
}

static int opt_ntasks_per_node(struct ctx *c, const char *v)
{
	long n;

	if (parse_count(v, 1, 1024, &n) < 0)
		return refuse(c, "the tasks per node must be 1 to 1024");
	c->opts->ntasks_per_node = (int)n;
	return 0;
}

static int opt_cpus_per_task(struct ctx *c, const char *v)
{
	long n;

	if (parse_count(v, 1, 4096, &n) < 0)
		return refuse(c, "the CPUs per task must be 1 to 4096");
	c->opts->cpus_per_task = (int)n;
	return 0;
}

/* "[TYPE:]COUNT" into the GPU fields. */
static int set_gpus(struct ctx *c, const char *v, bool total, long max)
{
	const char *colon = strrchr(v, ':');
	char type[TJ_SBATCH_WORD_MAX] = "";
	long n;

	if (colon) {
		size_t len = (size_t)(colon - v);

		if (len == 0 || len >= sizeof(type))
			return refuse(c, "the GPU type is missing or too long");
		for (size_t i = 0; i < len; i++)
			type[i] = (char)tolower((unsigned char)v[i]);
		type[len] = '\0';
		if (!is_label(type, 63))
			return refuse(c, "the GPU type must be letters, digits and '-'");
		v = colon + 1;
	}
	if (parse_count(v, 0, max, &n) < 0)
		return refuse(c, "the GPU count must be 0 to %ld", max);
	c->opts->gpus = (int)n;
	c->opts->gpus_total = total;
	memcpy(c->opts->gpu_type, type, sizeof(type));
	return 0;
}

static int opt_gpus_per_node(struct ctx *c, const char *v)
{
	return set_gpus(c, v, false, 64);
}

static int opt_gpus(struct ctx *c, const char *v)
{
	return set_gpus(c, v, true, 64L * TJ_MAX_NODES);
}

/* --gres=gpu[:TYPE][:COUNT]: the only generic resource a pod gets here is GPUs. */
static int opt_gres(struct ctx *c, const char *v)
{
	const char *first_colon = strchr(v, ':'), *last_colon = strrchr(v, ':');

	if (strchr(v, ','))
		return refuse(c, "only one generic resource, gpu, is supported");
	if (strncmp(v, "gpu", 3) != 0 || (v[3] && v[3] != ':'))
		return refuse(c, "only the generic resource gpu is supported");
	if (!first_colon)
		return set_gpus(c, "1", false, 64);
	/* gpu:TYPE without a count asks for one GPU of that type. */
	if (first_colon == last_colon && !isdigit((unsigned char)first_colon[1])) {
		char spec[TJ_SBATCH_WORD_MAX + 3];

		if (snprintf(spec, sizeof(spec), "%s:1", first_colon + 1) >= (int)sizeof(spec))
			return refuse(c, "the GPU type is too long");
		return set_gpus(c, spec, false, 64);
	}
	return set_gpus(c, first_colon + 1, false, 64);
}

static int set_mem(struct ctx *c, const char *v, int per)
{
	if (tj_sbatch_parse_memory(v, &c->opts->mem_mib) < 0)
		return refuse(c, "a size is a number with an optional unit K, M, G or T "
		                 "(megabytes without one)");
	c->opts->mem_per = per;
	return 0;
}

static int opt_mem(struct ctx *c, const char *v)
{
	return set_mem(c, v, TJ_SBATCH_MEM_NODE);
}

static int opt_mem_per_gpu(struct ctx *c, const char *v)
{
	return set_mem(c, v, TJ_SBATCH_MEM_PER_GPU);
}

static int opt_mem_per_cpu(struct ctx *c, const char *v)
{
	return set_mem(c, v, TJ_SBATCH_MEM_PER_CPU);
}

static int opt_time(struct ctx *c, const char *v)
{
	if (tj_sbatch_parse_time(v, &c->opts->time_seconds) < 0)
		return refuse(c, "a time limit is M, M:S, H:M:S, D-H, D-H:M, D-H:M:S or UNLIMITED");
	return 0;
}

static int opt_partition(struct ctx *c, const char *v)
{
	if (strchr(v, ','))
		return refuse(c, "one partition, not a list");
	for (const char *s = v; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return refuse(c, "a partition name is letters, digits, '-', '_' and '.'");
	if (copy(c->opts->partition, sizeof(c->opts->partition), v) < 0)
		return refuse(c, "a partition name is 1 to %d characters", TJ_SBATCH_WORD_MAX - 1);
	return 0;
}

static bool is_signal(const char *s)
{
	static const char *const names[] = { "HUP",  "INT",  "QUIT", "ABRT", "KILL", "USR1",
		                             "USR2", "PIPE", "ALRM", "TERM", "CONT", "STOP",
		                             "TSTP", "URG",  "XCPU", "XFSZ", "PWR" };
	long n;

	if (parse_count(s, 1, 64, &n) == 0)
		return true;
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0)
			return true;
	return false;
}

/* --signal=[{R|B}:]SIG[@SECONDS]: Slurm's default warning time is 60 s. */
static int opt_signal(struct ctx *c, const char *v)
{
	const char *at = strchr(v, '@');
	char sig[TJ_SBATCH_WORD_MAX];
	long seconds = 60;
	size_t len;

	if (strncmp(v, "R:", 2) == 0)
		return refuse(c, "reservations (R:) are not supported");
	if (strncmp(v, "B:", 2) == 0)
		v += 2;
	len = at ? (size_t)(at - v) : strlen(v);
	if (len == 0 || len >= sizeof(sig))
		return refuse(c, "the form is [B:]SIGNAL[@SECONDS]");
	memcpy(sig, v, len);
	sig[len] = '\0';
	if (!is_signal(sig))
		return refuse(c, "%s is not a signal", sig);
	if (at && parse_count(at + 1, 0, 65535, &seconds) < 0)
		return refuse(c, "the warning time must be 0 to 65535 seconds");
	memcpy(c->opts->signal, sig, len + 1);
	c->opts->signal_seconds = (int)seconds;
	return 0;
}

static int opt_chdir(struct ctx *c, const char *v)
{
	if (v[0] != '/' || has_control(v))
		return refuse(c, "the working directory must be an absolute path in the container");
	if (copy(c->opts->chdir, sizeof(c->opts->chdir), v) < 0)
		return refuse(c, "the path is longer than %d characters", TJ_SBATCH_VALUE_MAX - 1);
	return 0;
}

static bool is_env_name(const char *s, size_t len)
{
	if (len == 0 || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/* --export=[ALL|NONE][,VAR[=VALUE]]... */
static int opt_export(struct ctx *c, const char *v)
{
	struct tj_sbatch_opts *o = c->opts;
	const char *p = v;

	o->export_none = false;
	o->n_exports = 0;
	while (*p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		struct tj_sbatch_export *e;

		if (len == 3 && strncasecmp(p, "ALL", 3) == 0) {
			tj_sbatch_note(c->notes,
			               "--export=ALL: the pods start with the image's environment, "
			               "not this shell's; list the variables to pass (VAR or "
			               "VAR=value)");
		} else if (len == 4 && strncasecmp(p, "NONE", 4) == 0) {
			o->export_none = true;
		} else {
			eq = memchr(p, '=', len);
			if (!is_env_name(p, eq ? (size_t)(eq - p) : len))
				return refuse(c, "'%.*s' is not VAR or VAR=value",
				              (int)(len > 64 ? 64 : len), p);
			if (o->n_exports == TJ_SBATCH_MAX_EXPORTS)
				return refuse(c, "more than %d variables", TJ_SBATCH_MAX_EXPORTS);
			e = &o->exports[o->n_exports];
			len = eq ? (size_t)(eq - p) : len;
			if (len >= sizeof(e->name))
				return refuse(c, "a variable name is longer than %zu characters",
				              sizeof(e->name) - 1);
			memcpy(e->name, p, len);
			e->name[len] = '\0';
			e->from_env = !eq;
			e->value[0] = '\0';
			if (eq) {
				size_t vlen = end ? (size_t)(end - eq - 1) : strlen(eq + 1);

				if (vlen >= sizeof(e->value))
					return refuse(c, "the value of %s is too long", e->name);
				memcpy(e->value, eq + 1, vlen);
				e->value[vlen] = '\0';
			}
			o->n_exports++;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/* --container-image as pyxis takes it: [docker://][REGISTRY#]IMAGE[:TAG], where '#' stands
 * between the registry and the path, as enroot writes it. */
static int opt_image(struct ctx *c, const char *v)
{
	char *hash;
	size_t len;

	if (strncmp(v, "docker://", 9) == 0)
		v += 9;
	len = strlen(v);
	if (v[0] == '/' || v[0] == '.' || (len > 5 && strcmp(v + len - 5, ".sqsh") == 0))
		return refuse(c, "a squashfs file is not an image a pod can run: push the image "
		                 "to a registry and name it");
	if (strchr(v, '@') && strchr(v, '#'))
		return refuse(c, "registry credentials in the image are not supported: use an "
		                 "image pull secret");
	for (const char *s = v; *s; s++)
		if (isspace((unsigned char)*s) || (unsigned char)*s < 0x20)
			return refuse(c, "an image reference has no spaces");
	if (copy(c->opts->image, sizeof(c->opts->image), v) < 0)
		return refuse(c, "the image is 1 to %d characters", TJ_SBATCH_VALUE_MAX - 1);
	hash = strchr(c->opts->image, '#');
	if (hash)
		*hash = '/';
	return 0;
}

/* One SRC:DST[:ro|rw] of --container-mounts, where SRC is a claim[/sub/path]. */
static int parse_mount(struct ctx *c, const char *item, size_t len, struct tj_sbatch_mount *m)
{
	char buf[3 * TJ_SBATCH_VALUE_MAX];
	char *dst, *flags, *slash;

	if (len >= sizeof(buf))
		return refuse(c, "a mount is longer than %zu characters", sizeof(buf) - 1);
	memcpy(buf, item, len);
	buf[len] = '\0';
	dst = strchr(buf, ':');
	if (!dst)
		return refuse(c, "'%.64s' is not CLAIM:PATH", buf);
	*dst++ = '\0';
	flags = strchr(dst, ':');
	if (flags)
		*flags++ = '\0';
	if (buf[0] == '/')
		return refuse(c,
		              "%.64s is a path on a host; a pod mounts volumes: name a "
		              "PersistentVolumeClaim (CLAIM[/SUBDIR]:PATH)",
		              buf);
	m->read_only = false;
	if (flags && strcmp(flags, "ro") == 0)
		m->read_only = true;
	else if (flags && strcmp(flags, "rw") != 0)
		return refuse(c, "the mount flag '%.32s' is not ro or rw", flags);
	slash = strchr(buf, '/');
	m->sub_path[0] = '\0';
	if (slash) {
		*slash++ = '\0';
		if (copy(m->sub_path, sizeof(m->sub_path), slash) < 0 || strstr(slash, ".."))
			return refuse(c, "the folder in claim %.64s is not a plain relative path",
			              buf);
	}
	if (!is_label(buf, 63))
		return refuse(c,
		              "the claim name '%.64s' must be a DNS label (lowercase letters, "
		              "digits, '-')",
		              buf);
	memcpy(m->claim, buf, strlen(buf) + 1);
	if (dst[0] != '/' || copy(m->path, sizeof(m->path), dst) < 0)
		return refuse(c, "the mount path of %s must be an absolute path", m->claim);
	return 0;
}

static int opt_mounts(struct ctx *c, const char *v)
{
	const char *p = v;

	c->opts->n_mounts = 0;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int r;

		if (c->opts->n_mounts == TJ_SBATCH_MAX_MOUNTS)
			return refuse(c, "more than %d mounts", TJ_SBATCH_MAX_MOUNTS);
		r = parse_mount(c, p, len, &c->opts->mounts[c->opts->n_mounts]);
		if (r < 0)
			return r;
		c->opts->n_mounts++;
		if (!end)
			break;
		p = end + 1;
	}
	if (c->opts->n_mounts == 0)
		return refuse(c, "no mount given");
	return 0;
}

static int opt_exclusive(struct ctx *c, const char *v)
{
	if (v)
		return refuse(c, "only whole nodes (--exclusive without a value) are supported");
	c->opts->exclusive = true;
	return 0;
}

static int opt_hold(struct ctx *c, const char *v)
{
	if (v)
		return refuse(c, "takes no value");
	c->opts->hold = true;
	return 0;
}

static int opt_constraint(struct ctx *c, const char *v)
{
	char lower[TJ_SBATCH_WORD_MAX];
	size_t len = strlen(v);

	if (strpbrk(v, "&|[]*,!"))
		return refuse(c, "one node feature, the GPU class, not an expression");
	if (len >= sizeof(lower))
		return refuse(c, "the feature is too long");
	for (size_t i = 0; i <= len; i++)
		lower[i] = (char)tolower((unsigned char)v[i]);
	if (!is_label(lower, 63))
		return refuse(c, "a feature is letters, digits and '-'");
	memcpy(c->opts->constraint, lower, len + 1);
	return 0;
}

static int add_index(struct tj_sbatch_opts *o, long index)
{
	size_t i = 0;

	while (i < o->n_array && o->array[i] < index)
		i++;
	if (i < o->n_array && o->array[i] == index)
		return 0;
	if (o->n_array == TJ_SBATCH_MAX_ARRAY)
		return -E2BIG;
	memmove(&o->array[i + 1], &o->array[i], (o->n_array - i) * sizeof(o->array[0]));
	o->array[i] = (int)index;
	o->n_array++;
	return 0;
}

/* One element of --array: N, A-B or A-B:STEP. */
static int parse_array_item(struct ctx *c, char *item)
{
	char *dash = strchr(item, '-'), *colon = strchr(item, ':');
	long from, to, step = 1;

	if (colon) {
		*colon = '\0';
		if (parse_count(colon + 1, 1, TJ_SBATCH_MAX_INDEX, &step) < 0)
			return refuse(c, "the step must be 1 to %d", TJ_SBATCH_MAX_INDEX);
	}
	if (dash)
		*dash = '\0';
	if (parse_count(item, 0, TJ_SBATCH_MAX_INDEX, &from) < 0 ||
	    (dash && parse_count(dash + 1, 0, TJ_SBATCH_MAX_INDEX, &to) < 0))
		return refuse(c, "indexes are 0 to %d, as N, A-B or A-B:STEP, separated by ','",
		              TJ_SBATCH_MAX_INDEX);
	if (!dash)
		to = from;
	if (to < from || (colon && !dash))
		return refuse(c, "indexes are N, A-B with A <= B, or A-B:STEP");
	for (long i = from; i <= to; i += step)
		if (add_index(c->opts, i) < 0)
			return refuse(c, "more than %d tasks", TJ_SBATCH_MAX_ARRAY);
	return 0;
}

static int opt_array(struct ctx *c, const char *v)
{
	char buf[TJ_SBATCH_VALUE_MAX], *p, *save = NULL;
	int r;

	if (strchr(v, '%'))
		return refuse(c, "a %% limit on the tasks that run at once is not supported: the "
		                 "queue starts every task when it fits; drop the %%N");
	if (copy(buf, sizeof(buf), v) < 0 ||
	    copy(c->opts->array_spec, sizeof(c->opts->array_spec), v) < 0)
		return refuse(c, "the array is 1 to %d characters", TJ_SBATCH_VALUE_MAX - 1);
	c->opts->n_array = 0;
	for (p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		r = parse_array_item(c, p);
		if (r < 0)
			return r;
	}
	if (c->opts->n_array == 0)
		return refuse(c, "no index given");
	return 0;
}

static int opt_output(struct ctx *c, const char *v)
{
	tj_sbatch_note(c->notes, "--output/--error: no file is written; each node's output is "
	                         "in kubectl logs of its pod");
	return 0;
}

static int opt_mail(struct ctx *c, const char *v)
{
	tj_sbatch_note(c->notes, "--mail-*: no mail is sent; kubectl get trainjobs and kubectl "
	                         "describe show the job's state and events");
	return 0;
}

static int opt_account(struct ctx *c, const char *v)
{
	tj_sbatch_note(c->notes, "--account: the namespace is the account here; the job goes to "
	                         "the namespace (-n)");
	return 0;
}

/* --qos: the tier, in the annotation the admission reads; the controller says whether the
 * namespace may use it. */
static int opt_qos(struct ctx *c, const char *v)
{
	size_t len = strlen(v);

	if (!len || len >= sizeof(c->opts->qos))
		return refuse(c, "%s is not a QOS tier's name", v);
	for (size_t i = 0; i < len; i++)
		if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') || v[i] == '-'))
			return refuse(c,
			              "%s is not a QOS tier's name (lower case letters, "
			              "digits and -)",
			              v);
	memcpy(c->opts->qos, v, len + 1);
	return 0;
}

/* --dependency: the annotation the controller holds the job by; checked here so that a
 * typo is told at once. Names are TrainJob names of the namespace, not job ids. */
static int opt_dependency(struct ctx *c, const char *v)
{
	struct tj_dependency dep;
	struct tj_problem why = { "", "" };

	if (strlen(v) >= sizeof(c->opts->dependency))
		return refuse(c, "a dependency list is at most %zu characters",
		              sizeof(c->opts->dependency) - 1);
	if (tj_dependency_parse(v, &dep, &why) < 0) {
		/* The controller's message names the annotation; here the option is named. */
		const char *rest = strstr(why.message, "]: ");

		return refuse(c, "%s", rest ? rest + 3 : why.message);
	}
	strcpy(c->opts->dependency, v);
	return 0;
}

static int opt_ntasks(struct ctx *c, const char *v)
{
	return refuse(c, "a total task count is not supported: give -N and --ntasks-per-node");
}

/* COMMAND_LINE_VALUE takes a value as TAKES_VALUE does, but only on the command line: it is
 * kubectl sbatch's own spelling of a directive, which a script written for Slurm does not
 * hold. */
enum arg_kind {
	TAKES_VALUE,
	FLAG,
	COMMAND_LINE_VALUE,
};

struct option {
	const char *long_name;
	char short_name;
	enum arg_kind kind;
	int (*fn)(struct ctx *c, const char *value); /* value NULL for a flag */
	size_t where; /* offset of the where_* field the option sets, or 0 */
};

#define WHERE(field) offsetof(struct tj_sbatch_opts, field)

static const struct option options[] = {
	{ "job-name", 'J', TAKES_VALUE, opt_job_name, WHERE(where_job_name) },
	{ "nodes", 'N', TAKES_VALUE, opt_nodes, WHERE(where_nodes) },
	{ "ntasks-per-node", 0, TAKES_VALUE, opt_ntasks_per_node, WHERE(where_ntasks_per_node) },
	{ "cpus-per-task", 'c', TAKES_VALUE, opt_cpus_per_task, WHERE(where_cpus_per_task) },
	{ "gpus-per-node", 0, TAKES_VALUE, opt_gpus_per_node, WHERE(where_gpus) },
	{ "gres", 0, TAKES_VALUE, opt_gres, WHERE(where_gpus) },
	{ "gpus", 'G', TAKES_VALUE, opt_gpus, WHERE(where_gpus) },
	{ "mem", 0, TAKES_VALUE, opt_mem, WHERE(where_mem) },
	{ "mem-per-gpu", 0, TAKES_VALUE, opt_mem_per_gpu, WHERE(where_mem) },
	{ "mem-per-cpu", 0, TAKES_VALUE, opt_mem_per_cpu, WHERE(where_mem) },
	{ "time", 't', TAKES_VALUE, opt_time, WHERE(where_time) },
	{ "partition", 'p', TAKES_VALUE, opt_partition, WHERE(where_partition) },
	{ "signal", 0, TAKES_VALUE, opt_signal, WHERE(where_signal) },
	{ "chdir", 'D', TAKES_VALUE, opt_chdir, WHERE(where_chdir) },
	{ "container-workdir", 0, TAKES_VALUE, opt_chdir, WHERE(where_chdir) },
	{ "export", 0, TAKES_VALUE, opt_export, WHERE(where_export) },
	{ "container-image", 0, TAKES_VALUE, opt_image, WHERE(where_image) },
	{ "image", 0, COMMAND_LINE_VALUE, opt_image, WHERE(where_image) },
	{ "container-mounts", 0, TAKES_VALUE, opt_mounts, WHERE(where_mounts) },
	{ "exclusive", 0, FLAG, opt_exclusive, WHERE(where_exclusive) },
	{ "hold", 'H', FLAG, opt_hold, WHERE(where_hold) },
	{ "constraint", 'C', TAKES_VALUE, opt_constraint, WHERE(where_constraint) },
	{ "array", 'a', TAKES_VALUE, opt_array, WHERE(where_array) },
	{ "output", 'o', TAKES_VALUE, opt_output, 0 },
	{ "error", 'e', TAKES_VALUE, opt_output, 0 },
	{ "mail-type", 0, TAKES_VALUE, opt_mail, 0 },
	{ "mail-user", 0, TAKES_VALUE, opt_mail, 0 },
	{ "account", 'A', TAKES_VALUE, opt_account, 0 },
	{ "qos", 'q', TAKES_VALUE, opt_qos, WHERE(where_qos) },
	{ "dependency", 'd', TAKES_VALUE, opt_dependency, WHERE(where_dependency) },
	{ "ntasks", 'n', TAKES_VALUE, opt_ntasks, 0 },
};

/* Matches arg against o; returns as tj_plugin_match (a flag's value, if any, in *value). */
static int match(const struct option *o, const char *arg, const char *next, const char **value)
{
	size_t len = strlen(o->long_name);

	if (o->kind != FLAG)
		return tj_plugin_match(arg, next, o->short_name, o->long_name, value);
	*value = NULL;
	if (tj_plugin_match_flag(arg, o->short_name, o->long_name))
		return 1;
	/* --exclusive=user is sbatch's; the handler says what is supported. */
	if (strncmp(arg, "--", 2) == 0 && strncmp(arg + 2, o->long_name, len) == 0 &&
	    arg[2 + len] == '=') {
		*value = arg + 3 + len;
		return 1;
	}
	return 0;
}

int tj_sbatch_parse_option(struct tj_sbatch_opts *opts, struct tj_sbatch_notes *notes,
                           const char *arg, const char *next, int where, char *err, size_t errlen)
{
	char why[TJ_SBATCH_NOTE_MAX];
	struct ctx c = { opts, notes, where, why, sizeof(why) };

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		const struct option *o = &options[i];
		const char *value = NULL;
		int n = match(o, arg, next, &value), r;

		if (n == 0 || (o->kind == COMMAND_LINE_VALUE && where != TJ_SBATCH_COMMAND_LINE))
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%.64s: needs a value", arg);
			return -EINVAL;
		}
		r = o->fn(&c, value);
		if (r < 0) {
			snprintf(err, errlen, "%.200s%s%.200s: %s", arg, n == 2 ? " " : "",
			         n == 2 ? next : "", why);
			return r;
		}
		if (o->where)
			*(int *)((char *)opts + o->where) = where;
		if (o->where == WHERE(where_gpus))
			snprintf(opts->gpu_option, sizeof(opts->gpu_option), "%.200s%s%.200s", arg,
			         n == 2 ? " " : "", n == 2 ? next : "");
		return n;
	}
	return 0;
}

/* Splits an #SBATCH line's options into words: blanks separate them, quotes group, an
 * unquoted '#' starts a comment. The words point into buf. */
static int split_words(char *buf, char **words, size_t *ret_n)
{
	size_t n = 0;
	char *in = buf, *out = buf;

	for (;;) {
		char quote = 0;

		while (*in == ' ' || *in == '\t')
			in++;
		if (!*in || *in == '#')
			break;
		if (n == TJ_SBATCH_MAX_TOKENS)
			return -E2BIG;
		words[n++] = out;
		while (*in && (quote || (*in != ' ' && *in != '\t'))) {
			if (quote && *in == quote) {
				quote = 0;
			} else if (!quote && (*in == '"' || *in == '\'')) {
				quote = *in;
			} else {
				*out++ = *in;
			}
			in++;
		}
		if (quote)
			return -EINVAL;
		/* out never passes in, so the terminator lands on text already read. */
		if (*in)
			in++;
		*out++ = '\0';
	}
	*ret_n = n;
	return 0;
}

static int parse_line(const char *line, size_t len, int lineno, struct tj_sbatch_opts *opts,
                      struct tj_sbatch_notes *notes, char *err, size_t errlen)
{
	char buf[TJ_SBATCH_MAX_LINE + 1], msg[TJ_PLUGIN_ERROR_MAX];
	char *words[TJ_SBATCH_MAX_TOKENS];
	size_t n;
	int r;

	if (len > TJ_SBATCH_MAX_LINE) {
		snprintf(err, errlen, "line %d: longer than %d characters", lineno,
		         TJ_SBATCH_MAX_LINE);
		return -EINVAL;
	}
	memcpy(buf, line, len);
	buf[len] = '\0';
	r = split_words(buf, words, &n);
	if (r < 0) {
		snprintf(err, errlen, "line %d: %s", lineno,
		         r == -E2BIG ? "more than 64 options on one line"
		                     : "a quote is not closed");
		return -EINVAL;
	}
	for (size_t i = 0; i < n;) {
		if (words[i][0] != '-' || !words[i][1]) {
			snprintf(err, errlen, "line %d: #SBATCH %.64s: not an option", lineno,
			         words[i]);
			return -EINVAL;
		}
		r = tj_sbatch_parse_option(opts, notes, words[i], i + 1 < n ? words[i + 1] : NULL,
		                           lineno, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "line %d: #SBATCH %s", lineno, msg);
			return r;
		}
		if (r == 0) {
			snprintf(err, errlen,
			         "line %d: #SBATCH %.200s: not supported by kubectl sbatch (see "
			         "kubectl sbatch --help)",
			         lineno, words[i]);
			return -EINVAL;
		}
		i += (size_t)r;
	}
	return 0;
}

static bool is_directive(const char *line, size_t len)
{
	return len >= 7 && memcmp(line, "#SBATCH", 7) == 0 &&
	       (len == 7 || line[7] == ' ' || line[7] == '\t');
}

int tj_sbatch_parse_script(const char *script, size_t len, struct tj_sbatch_opts *opts,
                           struct tj_sbatch_notes *notes, char *err, size_t errlen)
{
	bool commands_started = false;
	int lineno = 0;

	if (len > TJ_SBATCH_MAX_SCRIPT) {
		snprintf(err, errlen, "longer than %d bytes", TJ_SBATCH_MAX_SCRIPT);
		return -E2BIG;
	}
	for (size_t pos = 0; pos < len;) {
		const char *line = script + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos, blank = 0;
		int r;

		pos += n + 1;
		lineno++;
		if (n && line[n - 1] == '\r')
			n--;
		if (memchr(line, '\0', n)) {
			snprintf(err, errlen, "line %d: a NUL byte: this is not a text file",
			         lineno);
			return -EINVAL;
		}
		while (blank < n && (line[blank] == ' ' || line[blank] == '\t'))
			blank++;
		if (is_directive(line, n)) {
			if (commands_started) {
				tj_sbatch_note(
				        notes,
				        "line %d: #SBATCH after the first command is ignored, as "
				        "sbatch ignores it",
				        lineno);
				continue;
			}
			r = parse_line(line + 7, n - 7, lineno, opts, notes, err, errlen);
			if (r < 0)
				return r;
		} else if (blank < n && line[blank] != '#') {
			commands_started = true;
		}
	}
	return 0;
}

int tj_sbatch_parse_time(const char *text, int64_t *ret)
{
	long f[4] = { 0, 0, 0, 0 }, days = 0;
	const char *dash = strchr(text, '-'), *p = text;
	int n = 0;
	int64_t s;

	if (strcasecmp(text, "UNLIMITED") == 0 || strcasecmp(text, "INFINITE") == 0) {
		*ret = TJ_SBATCH_UNLIMITED;
		return 0;
	}
	if (dash) {
		char d[16];

		if ((size_t)(dash - text) >= sizeof(d))
			return -EINVAL;
		memcpy(d, text, (size_t)(dash - text));
		d[dash - text] = '\0';
		if (parse_count(d, 0, 100000, &days) < 0)
			return -EINVAL;
		p = dash + 1;
	}
	/* The fields after the days, split on ':'. */
	while (n < 3) {
		char field[16];
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);

		if (len == 0 || len >= sizeof(field))
			return -EINVAL;
		memcpy(field, p, len);
		field[len] = '\0';
		if (parse_count(field, 0, 100000000, &f[n]) < 0)
			return -EINVAL;
		n++;
		if (!colon)
			break;
		p = colon + 1;
		if (n == 3)
			return -EINVAL;
	}
	if (dash) {
		/* D-H, D-H:M, D-H:M:S */
		if (f[0] > 23 || (n > 1 && f[1] > 59) || (n > 2 && f[2] > 59))
			return -EINVAL;
		s = days * 86400 + f[0] * 3600 + f[1] * 60 + f[2];
	} else if (n == 1) {
		s = f[0] * 60; /* M */
	} else if (n == 2) {
		if (f[1] > 59)
			return -EINVAL;
		s = f[0] * 60 + f[1]; /* M:S */
	} else {
		if (f[1] > 59 || f[2] > 59)
			return -EINVAL;
		s = f[0] * 3600 + f[1] * 60 + f[2]; /* H:M:S */
	}
	*ret = s == 0 ? TJ_SBATCH_UNLIMITED : s;
	return 0;
}

int tj_sbatch_parse_memory(const char *text, int64_t *ret_mib)
{
	char digits[24];
	size_t len = strlen(text), nd = 0;
	long v;
	int64_t mib;

	while (nd < len && isdigit((unsigned char)text[nd]))
		nd++;
	if (nd == 0 || nd >= sizeof(digits) || len - nd > 1)
		return -EINVAL;
	memcpy(digits, text, nd);
	digits[nd] = '\0';
	if (parse_count(digits, 0, 1L << 40, &v) < 0)
		return -EINVAL;
	switch (nd < len ? toupper((unsigned char)text[nd]) : 'M') {
	case 'K':
		mib = (v + 1023) / 1024;
		break;
	case 'M':
		mib = v;
		break;
	case 'G':
		mib = (int64_t)v * 1024;
		break;
	case 'T':
		mib = (int64_t)v * 1024 * 1024;
		break;
	default:
		return -EINVAL;
	}
	if (mib > ((int64_t)1 << 40))
		return -EINVAL;
	*ret_mib = mib;
	return 0;
}
