#include "cli/sbatch_job.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/plugin.h"
#include "reconcilers/json.h"
#include "reconcilers/render/render.h"
#include "reconcilers/render/wiring.h"
#include "reconcilers/trainjob.h"

/* Defines srun for the script: the script itself already runs once on every node, so srun
 * runs its command once, after dropping srun's own options (those that take a separate
 * value drop it too). POSIX sh, since the script's shell may be sh. */
static const char prelude[] =
        "# kubectl sbatch: this script runs on every node; srun runs its command once here.\n"
        "srun() {\n"
        "  while [ \"$#\" -gt 0 ]; do\n"
        "    case \"$1\" in\n"
        "    --) shift; break ;;\n"
        "    --*=* | -[!-]?*) shift ;;\n"
        "    -[ACDGJNcdeimnopqrtwx] | --account | --chdir | --constraint | --cpu-bind | \\\n"
        "    --cpus-per-task | --dependency | --distribution | --error | --exclude | \\\n"
        "    --export | --gpu-bind | --gpus | --gpus-per-node | --gpus-per-task | --gres | \\\n"
        "    --input | --job-name | --mem | --mem-per-cpu | --mem-per-gpu | --mpi | \\\n"
        "    --nodelist | --nodes | --ntasks | --ntasks-per-node | --output | \\\n"
        "    --partition | --qos | --time | --container-image | --container-mounts | \\\n"
        "    --container-name | --container-workdir) shift 2 ;;\n"
        "    -*) shift ;;\n"
        "    *) break ;;\n"
        "    esac\n"
        "  done\n"
        "  \"$@\"\n"
        "}\n";

#define MAX_SHEBANG 256

static int fail(char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* "line 5" or "the command line", for messages about an option. */
static void where_text(int where, char buf[static 32])
{
	if (where == TJ_SBATCH_COMMAND_LINE)
		snprintf(buf, 32, "the command line");
	else
		snprintf(buf, 32, "line %d", where);
}

static bool is_shell(const char *name)
{
	static const char *const shells[] = { "sh", "bash", "dash", "ash", "ksh", "zsh" };

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (strcmp(name, shells[i]) == 0)
			return true;
	return false;
}

/* The interpreter of the shebang as the command's first words: "#!/bin/bash -l" gives
 * /bin/bash and -l (the kernel passes the rest of the line as one argument, and so does
 * this). No shebang: bash, as most batch scripts are. */
static int interpreter(const char *script, size_t len, char interp[MAX_SHEBANG],
                       char arg[MAX_SHEBANG], char *err, size_t errlen)
{
	const char *nl, *base;
	char line[MAX_SHEBANG], *p, *rest, shell[MAX_SHEBANG];
	size_t n;

	arg[0] = '\0';
	if (len < 2 || script[0] != '#' || script[1] != '!') {
		snprintf(interp, MAX_SHEBANG, "/bin/bash");
		return 0;
	}
	nl = memchr(script, '\n', len);
	n = (nl ? (size_t)(nl - script) : len) - 2;
	if (n >= sizeof(line))
		return fail(err, errlen, "line 1: the #! line is longer than %d characters",
		            MAX_SHEBANG - 1);
	memcpy(line, script + 2, n);
	line[n] = '\0';
	for (p = line + n; p > line && isspace((unsigned char)p[-1]); p--)
		p[-1] = '\0';
	for (p = line; *p == ' ' || *p == '\t'; p++)
		;
	rest = p + strcspn(p, " \t");
	if (*rest) {
		*rest++ = '\0';
		while (*rest == ' ' || *rest == '\t')
			rest++;
	}
	if (p[0] != '/')
		return fail(err, errlen, "line 1: #!%s: the interpreter must be an absolute path",
		            p);
	base = strrchr(p, '/') + 1;
	/* #!/usr/bin/env [-S] bash: the shell is env's first word. */
	snprintf(shell, sizeof(shell), "%s", base);
	if (strcmp(base, "env") == 0) {
		const char *w = strncmp(rest, "-S", 2) == 0 ? rest + 2 : rest;

		while (*w == ' ')
			w++;
		snprintf(shell, sizeof(shell), "%.*s", (int)strcspn(w, " \t"), w);
	}
	if (!is_shell(shell))
		return fail(err, errlen,
		            "line 1: #!%s%s%s: the interpreter is not a shell; kubectl sbatch runs "
		            "shell scripts (sh, bash, ...)",
		            p, *rest ? " " : "", rest);
	snprintf(interp, MAX_SHEBANG, "%s", p);
	snprintf(arg, MAX_SHEBANG, "%s", rest);
	return 0;
}

/* The TrainJob name from a job name: lowercase letters, digits and single '-' between
 * them, as a DNS label wants. */
static void name_from(const char *job_name, char out[TJ_NAME_MAX])
{
	size_t n = 0;

	for (const char *s = job_name; *s && n < TJ_NAME_MAX - 1; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) && ch < 0x80)
			out[n++] = (char)tolower(ch);
		else if (n > 0 && out[n - 1] != '-')
			out[n++] = '-';
	}
	while (n > 0 && out[n - 1] == '-')
		n--;
	out[n] = '\0';
}

/* The job name Slurm gives a job without -J: the script's file name. */
static const char *job_name(const struct tj_sbatch_input *in)
{
	return in->opts->where_job_name ? in->opts->job_name : in->script_name;
}

/* The TrainJob name without the array suffix. */
static int base_name(const struct tj_sbatch_input *in, char out[TJ_NAME_MAX],
                     struct tj_sbatch_notes *notes, char *err, size_t errlen)
{
	const struct tj_sbatch_opts *o = in->opts;
	char source[TJ_NAME_MAX];
	size_t max = TJ_SBATCH_NAME_MAX;
	const char *dot;

	if (o->where_job_name) {
		name_from(o->job_name, out);
	} else {
		/* train.sh -> train */
		snprintf(source, sizeof(source), "%s", in->script_name);
		dot = strrchr(source, '.');
		if (dot && dot != source)
			source[dot - source] = '\0';
		name_from(source, out);
	}
	if (o->n_array)
		max -= 1 + (size_t)snprintf(NULL, 0, "%d", o->array[o->n_array - 1]);
	if (!out[0] || strlen(out) > max || !isalpha((unsigned char)out[0]))
		return fail(
		        err, errlen,
		        "the job name %s does not make a TrainJob name (a letter first, at most "
		        "%zu letters, digits and '-'%s): give one with -J",
		        job_name(in), max, o->n_array ? " before the -<index>" : "");
	if (o->where_job_name && strcmp(out, o->job_name) != 0)
		tj_sbatch_note(notes, "-J %.64s: the TrainJob is named %s", o->job_name, out);
	return 0;
}

/* Where the job runs: the partition, its runtime, and its GPU class if one is known. */
struct placement {
	char partition[TJ_SBATCH_WORD_MAX];
	char runtime[TJ_NAME_MAX];
	const struct tj_gpu_class *gpu_class; /* borrowed from the config; NULL if unknown */
};

static const char *mapped_runtime(const struct tj_sbatch_input *in, const char *partition)
{
	for (size_t i = 0; i < in->n_partitions; i++)
		if (strcmp(in->partitions[i].partition, partition) == 0)
			return in->partitions[i].runtime;
	return NULL;
}

static bool is_dns_label(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '-')
			return false;
	return true;
}

/* The partition is -p, else the GPU type (--gres=gpu:gh200:4), else the feature (-C),
 * else the first GPU class of the config, as Slurm runs a job without -p in its default
 * partition. The type and the feature must agree with the partition's class. */
static int place(const struct tj_sbatch_input *in, struct placement *pl, char *err, size_t errlen)
{
	const struct tj_sbatch_opts *o = in->opts;
	const char *runtime, *cls;
	char w[32];

	if (o->where_partition)
		snprintf(pl->partition, sizeof(pl->partition), "%s", o->partition);
	else if (o->where_gpus && o->gpu_type[0])
		snprintf(pl->partition, sizeof(pl->partition), "%s", o->gpu_type);
	else if (o->where_constraint)
		snprintf(pl->partition, sizeof(pl->partition), "%s", o->constraint);
	else if (in->config && in->config->n_classes > 0)
		snprintf(pl->partition, sizeof(pl->partition), "%s", in->config->classes[0].name);
	else
		return fail(err, errlen, "no partition: give one with -p");
	runtime = mapped_runtime(in, pl->partition);
	if (runtime) {
		snprintf(pl->runtime, sizeof(pl->runtime), "%s", runtime);
	} else {
		snprintf(pl->runtime, sizeof(pl->runtime), "torch-%s", pl->partition);
		if (!is_dns_label(pl->runtime))
			return fail(err, errlen,
			            "partition %s: %s is not a runtime name; map the partition to "
			            "one with --partition-map %s=RUNTIME",
			            pl->partition, pl->runtime, pl->partition);
	}
	/* A runtime named torch-<class> selects <class>, as the controller reads it. */
	cls = strncmp(pl->runtime, "torch-", 6) == 0 ? pl->runtime + 6 : NULL;
	pl->gpu_class = cls && in->config ? tj_config_find_class(in->config, cls) : NULL;
	if (!cls)
		return 0;
	if (o->where_gpus && o->gpu_type[0] && strcmp(o->gpu_type, cls) != 0) {
		where_text(o->where_gpus, w);
		return fail(err, errlen,
		            "%s: %s asks for %s GPUs, but partition %s runs on %s: drop the type "
		            "or the partition",
		            w, o->gpu_option, o->gpu_type, pl->partition, cls);
	}
	if (o->where_constraint && strcmp(o->constraint, cls) != 0) {
		where_text(o->where_constraint, w);
		return fail(err, errlen,
		            "%s: --constraint=%s: partition %s runs on %s nodes; the feature must "
		            "be the GPU class",
		            w, o->constraint, pl->partition, cls);
	}
	return 0;
}

static void quantity_mib(int64_t mib, char buf[static 32])
{
	if (mib % 1024 == 0)
		snprintf(buf, 32, "%lldGi", (long long)(mib / 1024));
	else
		snprintf(buf, 32, "%lldMi", (long long)mib);
}

/* What one node gets. gpus is -1 when no option asks for GPUs (the runtime's own count). */
struct shape {
	int nodes, tasks, gpus;
	long cpus;       /* 0: not asked */
	int64_t mem_mib; /* 0: not asked */
};

static int shape_of(const struct tj_sbatch_opts *o, struct shape *s, char *err, size_t errlen)
{
	char w[32];

	s->nodes = o->where_nodes ? o->nodes : 1;
	s->tasks = o->where_ntasks_per_node ? o->ntasks_per_node : 1;
	s->gpus = -1;
	if (o->where_gpus && o->gpus_total) {
		if (o->gpus % s->nodes != 0) {
			where_text(o->where_gpus, w);
			return fail(err, errlen,
			            "%s: %s: %d GPUs do not divide evenly over %d nodes; give "
			            "--gpus-per-node",
			            w, o->gpu_option, o->gpus, s->nodes);
		}
		s->gpus = o->gpus / s->nodes;
	} else if (o->where_gpus) {
		s->gpus = o->gpus;
	}
	s->cpus = o->where_cpus_per_task ? (long)o->cpus_per_task * s->tasks : 0;
	s->mem_mib = 0;
	if (!o->where_mem)
		return 0;
	where_text(o->where_mem, w);
	switch (o->mem_per) {
	case TJ_SBATCH_MEM_NODE:
		s->mem_mib = o->mem_mib;
		break;
	case TJ_SBATCH_MEM_PER_GPU:
		if (s->gpus < 0)
			return fail(err, errlen,
			            "%s: --mem-per-gpu needs a GPU count (--gpus-per-node, --gres "
			            "or -G)",
			            w);
		s->mem_mib = o->mem_mib * s->gpus;
		break;
	case TJ_SBATCH_MEM_PER_CPU:
		s->mem_mib = o->mem_mib * (s->cpus ? s->cpus : s->tasks);
		break;
	}
	return 0;
}

static int set_quantity(cJSON *obj, const char *section, const char *name, const char *value)
{
	cJSON *sec = tj_json_object(obj, section);

	return sec ? tj_json_set_string(sec, name, value) : -ENOMEM;
}

/* resourcesPerNode is merged over the runtime's resources of the node container, per
 * resource (as Kubeflow merges it), so it is set only when the script asks for something,
 * and then it names the GPUs too: a script that asks for CPUs or memory but no GPUs gets
 * none, as in Slurm, not the runtime's. GPUs are limits (requests follow), memory is both
 * (Slurm enforces it as a limit), CPUs are requests (Slurm binds them, it does not throttle
 * them). */
static int add_resources(cJSON *trainer, const struct shape *s, const struct placement *pl)
{
	const char *gpu = pl->gpu_class && pl->gpu_class->resource ? pl->gpu_class->resource
	                                                           : "nvidia.com/gpu";
	cJSON *res;
	char q[32];

	if (s->gpus < 0 && !s->cpus && !s->mem_mib)
		return 0;
	res = tj_json_object(trainer, "resourcesPerNode");
	if (!res)
		return -ENOMEM;
	snprintf(q, sizeof(q), "%d", s->gpus > 0 ? s->gpus : 0);
	if (set_quantity(res, "limits", gpu, q) < 0)
		return -ENOMEM;
	if (s->mem_mib) {
		quantity_mib(s->mem_mib, q);
		if (set_quantity(res, "limits", "memory", q) < 0 ||
		    set_quantity(res, "requests", "memory", q) < 0)
			return -ENOMEM;
	}
	if (s->cpus) {
		snprintf(q, sizeof(q), "%ld", s->cpus);
		if (set_quantity(res, "requests", "cpu", q) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Adds NAME=value, replacing an earlier variable of that name. */
static int set_env(cJSON *env, const char *name, const char *value)
{
	cJSON *e = cJSON_CreateObject(), *old = tj_json_find_by(env, "name", name);

	if (!e || tj_json_set_string(e, "name", name) < 0 ||
	    tj_json_set_string(e, "value", value) < 0)
		goto fail;
	if (old ? !cJSON_ReplaceItemViaPointer(env, old, e) : !cJSON_AddItemToArray(env, e))
		goto fail;
	return 0;
fail:
	cJSON_Delete(e);
	return -ENOMEM;
}

static int set_env_int(cJSON *env, const char *name, long long value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", value);
	return set_env(env, name, buf);
}

/* NAME from the pod's completion-index annotation (the node's rank), by the downward API. */
static int set_env_rank(cJSON *env, const char *name)
{
	cJSON *e = cJSON_CreateObject(), *ref;

	if (!e || !cJSON_AddItemToArray(env, e)) {
		cJSON_Delete(e);
		return -ENOMEM;
	}
	if (tj_json_set_string(e, "name", name) < 0)
		return -ENOMEM;
	ref = tj_json_object(tj_json_object(e, "valueFrom"), "fieldRef");
	if (!ref || tj_json_set_string(ref, "fieldPath",
	                               "metadata.annotations['" TJ_LABEL_COMPLETION_INDEX "']") < 0)
		return -ENOMEM;
	return 0;
}

/* The node list: every pod's host name with the job's Service as its domain, the name
 * other pods reach it by (a bare host name does not resolve in a pod's DNS search path). */
static int node_list(const char *name, int nodes, char **ret)
{
	size_t cap = (size_t)nodes * (2 * strlen(name) + 20) + 1, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	buf[0] = '\0';
	for (int r = 0; r < nodes; r++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s-node-0-%d.%s", r ? "," : "", name, r,
		                      name);
	*ret = buf;
	return 0;
}

struct job_ctx {
	const struct tj_sbatch_input *in;
	const struct placement *pl;
	const struct shape *shape;
	const char *base;    /* the TrainJob name without the array suffix */
	const char *command; /* the -c string: the prelude and the script */
	const char *interp, *interp_arg;
};

static int add_slurm_env(cJSON *env, const struct job_ctx *j, const char *name, int index)
{
	const struct tj_sbatch_opts *o = j->in->opts;
	const struct shape *s = j->shape;
	char *nodes = NULL;
	int r;

	if (set_env(env, "SLURM_JOB_ID", name) < 0 ||
	    set_env(env, "SLURM_JOB_NAME", job_name(j->in)) < 0 ||
	    set_env_int(env, "SLURM_JOB_NUM_NODES", s->nodes) < 0 ||
	    set_env_int(env, "SLURM_NNODES", s->nodes) < 0 ||
	    set_env_rank(env, "SLURM_NODEID") < 0 || set_env_rank(env, "SLURM_PROCID") < 0 ||
	    set_env_int(env, "SLURM_NTASKS", (long long)s->nodes * s->tasks) < 0 ||
	    set_env_int(env, "SLURM_NTASKS_PER_NODE", s->tasks) < 0 ||
	    (s->gpus >= 0 && set_env_int(env, "SLURM_GPUS_ON_NODE", s->gpus) < 0) ||
	    (o->where_cpus_per_task &&
	     set_env_int(env, "SLURM_CPUS_PER_TASK", o->cpus_per_task) < 0) ||
	    (o->where_chdir && set_env(env, "SLURM_SUBMIT_DIR", o->chdir) < 0) ||
	    set_env(env, "SLURM_JOB_PARTITION", j->pl->partition) < 0)
		return -ENOMEM;
	if (node_list(name, s->nodes, &nodes) < 0)
		return -ENOMEM;
	r = set_env(env, "SLURM_JOB_NODELIST", nodes);
	free(nodes);
	if (r < 0)
		return r;
	if (!o->n_array)
		return 0;
	if (set_env(env, "SLURM_ARRAY_JOB_ID", j->base) < 0 ||
	    set_env_int(env, "SLURM_ARRAY_TASK_ID", index) < 0 ||
	    set_env_int(env, "SLURM_ARRAY_TASK_COUNT", (long long)o->n_array) < 0 ||
	    set_env_int(env, "SLURM_ARRAY_TASK_MIN", o->array[0]) < 0 ||
	    set_env_int(env, "SLURM_ARRAY_TASK_MAX", o->array[o->n_array - 1]) < 0)
		return -ENOMEM;
	return 0;
}

static int add_exports(cJSON *env, const struct tj_sbatch_input *in, char *err, size_t errlen)
{
	const struct tj_sbatch_opts *o = in->opts;
	char w[32];

	where_text(o->where_export, w);
	for (size_t i = 0; i < o->n_exports; i++) {
		const struct tj_sbatch_export *e = &o->exports[i];
		const char *value = e->value;

		if (tj_wiring_env_reserved(TJ_ML_TORCH, e->name))
			return fail(err, errlen,
			            "%s: --export: %s is set by the controller (torchrun wiring)",
			            w, e->name);
		if (e->from_env) {
			value = in->lookup_env ? in->lookup_env(e->name) : NULL;
			if (!value)
				return fail(err, errlen,
				            "%s: --export: %s is not set in this shell; give "
				            "%s=value",
				            w, e->name, e->name);
			if (strlen(value) >= TJ_SBATCH_VALUE_MAX)
				return fail(err, errlen,
				            "%s: --export: the value of %s is too long", w,
				            e->name);
		}
		if (set_env(env, e->name, value) < 0)
			return -ENOMEM;
	}
	return 0;
}

static cJSON *strings(const char *const *items, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++) {
		cJSON *s = cJSON_CreateString(items[i]);

		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

/* --container-mounts: one volume per claim, one mount per entry. */
static int add_mounts(cJSON *spec, const struct tj_sbatch_opts *o)
{
	cJSON *overrides, *ov, *target, *ospec, *volumes, *container, *mounts;

	if (!o->n_mounts)
		return 0;
	overrides = tj_json_array(spec, "podTemplateOverrides");
	ov = cJSON_CreateObject();
	if (!overrides || !ov || !cJSON_AddItemToArray(overrides, ov)) {
		cJSON_Delete(ov);
		return -ENOMEM;
	}
	target = cJSON_CreateObject();
	if (!target || !cJSON_AddItemToArray(tj_json_array(ov, "targetJobs"), target)) {
		cJSON_Delete(target);
		return -ENOMEM;
	}
	ospec = tj_json_object(ov, "spec");
	volumes = tj_json_array(ospec, "volumes");
	container = cJSON_CreateObject();
	if (tj_json_set_string(target, "name", "node") < 0 || !volumes || !container ||
	    !cJSON_AddItemToArray(tj_json_array(ospec, "containers"), container)) {
		cJSON_Delete(container);
		return -ENOMEM;
	}
	if (tj_json_set_string(container, "name", "node") < 0)
		return -ENOMEM;
	mounts = tj_json_array(container, "volumeMounts");
	if (!mounts)
		return -ENOMEM;
	for (size_t i = 0; i < o->n_mounts; i++) {
		const struct tj_sbatch_mount *m = &o->mounts[i];
		cJSON *mount = cJSON_CreateObject(), *vol;

		if (!mount || !cJSON_AddItemToArray(mounts, mount)) {
			cJSON_Delete(mount);
			return -ENOMEM;
		}
		if (tj_json_set_string(mount, "name", m->claim) < 0 ||
		    tj_json_set_string(mount, "mountPath", m->path) < 0 ||
		    (m->sub_path[0] && tj_json_set_string(mount, "subPath", m->sub_path) < 0) ||
		    (m->read_only && tj_json_set(mount, "readOnly", cJSON_CreateTrue()) < 0))
			return -ENOMEM;
		if (tj_json_find_by(volumes, "name", m->claim))
			continue;
		vol = cJSON_CreateObject();
		if (!vol || !cJSON_AddItemToArray(volumes, vol)) {
			cJSON_Delete(vol);
			return -ENOMEM;
		}
		if (tj_json_set_string(vol, "name", m->claim) < 0 ||
		    tj_json_set_string(tj_json_object(vol, "persistentVolumeClaim"), "claimName",
		                       m->claim) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int add_metadata(cJSON *job, const struct job_ctx *j, const char *name)
{
	const struct tj_sbatch_opts *o = j->in->opts;
	cJSON *meta = tj_json_object(job, "metadata"), *ann;
	char buf[32];

	if (!meta || tj_json_set_string(meta, "name", name) < 0 ||
	    tj_json_set_string(meta, "namespace", j->in->namespace) < 0)
		return -ENOMEM;
	if (o->n_array && tj_json_set_string(tj_json_object(meta, "labels"),
	                                     TJ_LABEL_PREFIX "array-job", j->base) < 0)
		return -ENOMEM;
	ann = tj_json_object(meta, "annotations");
	if (!ann || tj_json_set_string(ann, TJ_ANNOTATION_PARTITION, j->pl->partition) < 0 ||
	    (j->in->user && tj_json_set_string(ann, TJ_ANNOTATION_SUBMITTED_BY, j->in->user) < 0))
		return -ENOMEM;
	if (o->where_qos && tj_json_set_string(ann, TJ_LABEL_PREFIX "qos", o->qos) < 0)
		return -ENOMEM;
	if (o->hold && tj_json_set_string(ann, TJ_LABEL_PREFIX "hold", "true") < 0)
		return -ENOMEM;
	if (o->where_dependency &&
	    tj_json_set_string(ann, TJ_LABEL_PREFIX "dependency", o->dependency) < 0)
		return -ENOMEM;
	/* The job's name in Slurm's sense, which names its singleton group: an array's
	 * TrainJobs are named apart, and share it. */
	if (o->n_array && tj_json_set_string(ann, TJ_LABEL_PREFIX "job-name", j->base) < 0)
		return -ENOMEM;
	if (o->where_signal) {
		snprintf(buf, sizeof(buf), "%d", o->signal_seconds);
		if (tj_json_set_string(ann, TJ_ANNOTATION_DEADLINE_WARNING, buf) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int build_job(const struct job_ctx *j, int index, cJSON **ret, char *err, size_t errlen)
{
	const struct tj_sbatch_input *in = j->in;
	const struct tj_sbatch_opts *o = in->opts;
	const char *command[4];
	size_t n_command = 0;
	cJSON *job = cJSON_CreateObject(), *spec, *trainer, *env, *args;
	char name[TJ_NAME_MAX];
	int r = -ENOMEM;

	if (o->n_array)
		snprintf(name, sizeof(name), "%s-%d", j->base, index);
	else
		snprintf(name, sizeof(name), "%s", j->base);
	if (!job || tj_json_set_string(job, "apiVersion", TJ_API_VERSION) < 0 ||
	    tj_json_set_string(job, "kind", "TrainJob") < 0 || add_metadata(job, j, name) < 0)
		goto fail;
	spec = tj_json_object(job, "spec");
	if (!spec ||
	    tj_json_set_string(tj_json_object(spec, "runtimeRef"), "name", j->pl->runtime) < 0)
		goto fail;
	if (o->where_time && o->time_seconds > 0 &&
	    tj_json_set(spec, "activeDeadlineSeconds",
	                cJSON_CreateNumber((double)o->time_seconds)) < 0)
		goto fail;
	trainer = tj_json_object(spec, "trainer");
	if (!trainer || tj_json_set(trainer, "numNodes", cJSON_CreateNumber(j->shape->nodes)) < 0 ||
	    (o->where_ntasks_per_node &&
	     tj_json_set(trainer, "numProcPerNode", cJSON_CreateNumber(o->ntasks_per_node)) < 0) ||
	    (o->where_image && tj_json_set_string(trainer, "image", o->image) < 0))
		goto fail;
	command[n_command++] = j->interp;
	if (j->interp_arg[0])
		command[n_command++] = j->interp_arg;
	command[n_command++] = "-c";
	command[n_command++] = j->command;
	if (tj_json_set(trainer, "command", strings(command, n_command)) < 0)
		goto fail;
	args = strings(in->args, in->n_args);
	if (!args || !cJSON_InsertItemInArray(args, 0, cJSON_CreateString(in->script_name)) ||
	    tj_json_set(trainer, "args", args) < 0)
		goto fail;
	env = tj_json_array(trainer, "env");
	if (!env || add_slurm_env(env, j, name, index) < 0)
		goto fail;
	r = add_exports(env, in, err, errlen);
	if (r < 0)
		goto fail;
	r = -ENOMEM;
	if (add_resources(trainer, j->shape, j->pl) < 0 || add_mounts(spec, o) < 0)
		goto fail;
	*ret = job;
	return 0;
fail:
	cJSON_Delete(job);
	return r;
}

/* The -c string: the prelude, the move into -D's directory, SLURM_SUBMIT_DIR, then the
 * script as written. */
static int command_text(const struct tj_sbatch_input *in, char **ret)
{
	const struct tj_sbatch_opts *o = in->opts;
	size_t len = 0;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -ENOMEM;
	fputs(prelude, f);
	if (o->where_chdir) {
		/* Single quotes keep every byte; a quote inside is closed, escaped, reopened. */
		fputs("cd '", f);
		for (const char *s = o->chdir; *s; s++) {
			if (*s == '\'')
				fputs("'\\''", f);
			else
				fputc(*s, f);
		}
		fputs("' || exit 1\n", f);
	}
	fputs("SLURM_SUBMIT_DIR=\"${SLURM_SUBMIT_DIR:-$PWD}\"; export SLURM_SUBMIT_DIR\n", f);
	fwrite(in->script, 1, in->script_len, f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

static void add_notes(const struct tj_sbatch_input *in, const struct shape *s,
                      struct tj_sbatch_notes *notes)
{
	const struct tj_sbatch_opts *o = in->opts;

	if (o->where_time && o->time_seconds == TJ_SBATCH_UNLIMITED)
		tj_sbatch_note(notes, "--time=UNLIMITED: no activeDeadlineSeconds; the cluster's "
		                      "walltime policy for the partition decides");
	if (o->where_signal)
		tj_sbatch_note(
		        notes,
		        "--signal=%s@%d: no signal is sent; the pods are told of the deadline "
		        "%d s before it (docs/slurm.md), and get SIGTERM at it",
		        o->signal, o->signal_seconds, o->signal_seconds);
	if (o->where_exclusive && s->gpus >= 0)
		tj_sbatch_note(notes,
		               "--exclusive: each node's pod holds the %d GPUs asked for; "
		               "without a GPU count it holds the runtime's whole node",
		               s->gpus);
}

int tj_sbatch_convert(const struct tj_sbatch_input *in, struct tj_sbatch_notes *notes, cJSON ***ret,
                      size_t *ret_n, char *err, size_t errlen)
{
	const struct tj_sbatch_opts *o = in->opts;
	char interp[MAX_SHEBANG], interp_arg[MAX_SHEBANG], base[TJ_NAME_MAX], w[32];
	struct placement pl;
	struct shape shape = { 0 };
	char *command = NULL;
	cJSON **jobs = NULL;
	size_t n = o->n_array ? o->n_array : 1, done = 0;
	int r;

	if (in->script_len > TJ_SBATCH_MAX_SCRIPT)
		return fail(err, errlen, "longer than %d bytes", TJ_SBATCH_MAX_SCRIPT);
	if ((r = interpreter(in->script, in->script_len, interp, interp_arg, err, errlen)) < 0 ||
	    (r = base_name(in, base, notes, err, errlen)) < 0 ||
	    (r = place(in, &pl, err, errlen)) < 0 || (r = shape_of(o, &shape, err, errlen)) < 0)
		return r;
	if (o->where_exclusive && shape.gpus < 0 && (shape.cpus || shape.mem_mib)) {
		where_text(o->where_exclusive, w);
		return fail(err, errlen,
		            "%s: --exclusive with CPUs or memory but no GPU count: the pod's "
		            "resources would replace the runtime's whole node; give "
		            "--gpus-per-node",
		            w);
	}
	add_notes(in, &shape, notes);
	if (command_text(in, &command) < 0)
		return -ENOMEM;
	jobs = calloc(n, sizeof(*jobs));
	r = -ENOMEM;
	if (!jobs)
		goto out;
	struct job_ctx j = { in, &pl, &shape, base, command, interp, interp_arg };

	for (; done < n; done++) {
		r = build_job(&j, o->n_array ? o->array[done] : 0, &jobs[done], err, errlen);
		if (r < 0)
			goto out;
	}
	*ret = jobs;
	*ret_n = n;
	jobs = NULL;
	r = 0;
out:
	tj_sbatch_jobs_free(jobs, done);
	free(command);
	return r;
}

cJSON **tj_sbatch_jobs_free(cJSON **jobs, size_t n)
{
	if (!jobs)
		return NULL;
	for (size_t i = 0; i < n; i++)
		cJSON_Delete(jobs[i]);
	free(jobs);
	return NULL;
}
