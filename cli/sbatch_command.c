#include "cli/sbatch_command.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "cli/plugin.h"
#include "cli/sbatch_job.h"
#include "cli/yaml.h"
#include "controller/config/config.h"
#include "kube/sources.h"
#include "reconcilers/json.h"

#define MAX_RECORDED 128
#define MAP_MAX      4096

/* A command-line directive, kept to be applied again after the script's own. */
struct recorded {
	const char *arg, *next; /* borrowed from argv */
};

struct state {
	bool dry_run, parsable;
	struct recorded recorded[MAX_RECORDED];
	size_t n_recorded;
	char map[MAP_MAX]; /* --partition-map's text, split in place */
	size_t map_len;
	struct tj_sbatch_partition partitions[TJ_SBATCH_MAX_PARTITIONS];
	size_t n_partitions;
	/* The command line's directives parsed once while reading argv, so that a bad one is
	 * reported before the script is read; the real options are made later. */
	struct tj_sbatch_opts scratch;
	struct tj_sbatch_notes scratch_notes;
};

/* --partition-map P=RUNTIME[,P=RUNTIME]..., repeatable. */
static int add_partition_map(struct state *s, const char *value, char *err, size_t errlen)
{
	size_t len = strlen(value);
	char *p, *save = NULL;

	if (s->map_len + len + 1 > sizeof(s->map)) {
		snprintf(err, errlen, "--partition-map: longer than %d characters", MAP_MAX - 1);
		return -EINVAL;
	}
	p = memcpy(s->map + s->map_len, value, len + 1);
	s->map_len += len + 1;
	for (p = strtok_r(p, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(p, '=');

		if (!eq || eq == p || !eq[1]) {
			snprintf(err, errlen, "--partition-map: '%.64s' is not PARTITION=RUNTIME",
			         p);
			return -EINVAL;
		}
		if (s->n_partitions == TJ_SBATCH_MAX_PARTITIONS) {
			snprintf(err, errlen, "--partition-map: more than %d partitions",
			         TJ_SBATCH_MAX_PARTITIONS);
			return -EINVAL;
		}
		*eq = '\0';
		s->partitions[s->n_partitions++] = (struct tj_sbatch_partition){ p, eq + 1 };
	}
	return 0;
}

static int on_option(void *userdata, const char *arg, const char *next, char *err, size_t errlen)
{
	struct state *s = userdata;
	const char *value;
	int n;

	if (tj_plugin_match_flag(arg, 0, "dry-run") || strcmp(arg, "--dry-run=client") == 0) {
		s->dry_run = true;
		return 1;
	}
	if (tj_plugin_match_flag(arg, 0, "parsable")) {
		s->parsable = true;
		return 1;
	}
	n = tj_plugin_match(arg, next, 0, "partition-map", &value);
	if (n < 0)
		snprintf(err, errlen, "--partition-map needs PARTITION=RUNTIME");
	if (n != 0)
		return n < 0 || add_partition_map(s, value, err, errlen) < 0 ? -EINVAL : n;
	n = tj_sbatch_parse_option(&s->scratch, &s->scratch_notes, arg, next,
	                           TJ_SBATCH_COMMAND_LINE, err, errlen);
	if (n > 0) {
		if (s->n_recorded == MAX_RECORDED) {
			snprintf(err, errlen, "more than %d options", MAX_RECORDED);
			return -E2BIG;
		}
		s->recorded[s->n_recorded++] = (struct recorded){ arg, n == 2 ? next : NULL };
	}
	return n;
}

static const struct tj_plugin_spec spec = {
	.name = "sbatch",
	.synopsis = "[OPTION]... SCRIPT [ARG]...",
	.summary =
	        "Submits a Slurm batch script as a TrainJob: the #SBATCH lines and the options\n"
	        "below (the command line wins) become the TrainJob's fields, and the script runs\n"
	        "on every node with the SLURM_* variables set. Prints the TrainJob's name.",
	.options_help =
	        "      --dry-run              print the TrainJob YAML; contact nothing\n"
	        "      --parsable             print only the name\n"
	        "      --image IMAGE          the container image (as --container-image)\n"
	        "      --partition-map P=RT   run partition P on runtime RT (default torch-P)\n"
	        "Directives (in #SBATCH lines or here):\n"
	        "  -J, --job-name NAME        -N, --nodes N          --ntasks-per-node N\n"
	        "  --gpus-per-node [T:]N      --gres gpu[:T]:N       -G, --gpus [T:]N (total)\n"
	        "  -c, --cpus-per-task N      --mem, --mem-per-gpu, --mem-per-cpu SIZE\n"
	        "  -t, --time LIMIT           -p, --partition P      --signal [B:]SIG@SECONDS\n"
	        "  -D, --chdir DIR            --export ALL|NONE|VAR[=VALUE],...\n"
	        "  --container-image IMAGE    --container-mounts CLAIM[/DIR]:PATH[:ro],...\n"
	        "  --container-workdir DIR    --exclusive            -C, --constraint CLASS\n"
	        "  -a, --array INDEXES        -q, --qos TIER         -H, --hold\n"
	        "  -d, --dependency LIST      (afterok:NAME[:NAME], afternotok, afterany, after,\n"
	        "                             singleton; ',' all, '?' any; TrainJob names)\n"
	        "  accepted with a note: -o, -e, --mail-*, -A\n",
	.on_option = on_option,
	.stop_at_operand = true,
	.min_operands = 1,
	.max_operands = 1,
};

/* The namespace of a dry run: -n, else the kubeconfig context's if one can be read (as
 * kubectl's client-side dry run reads it), else "default". Nothing is contacted. */
static void dry_run_namespace(struct tj_plugin *p)
{
	struct tj_kube_config *cfg = NULL;
	struct tj_kube_env env;
	char err[TJ_PLUGIN_ERROR_MAX];

	if (p->namespace_given)
		return;
	snprintf(p->namespace, sizeof(p->namespace), "default");
	tj_kube_env_from_process(p->kubeconfig[0] ? p->kubeconfig : NULL, &env);
	if (tj_kube_config_load(&env, p->context[0] ? p->context : NULL, TJ_KUBE_SA_DIR, &cfg, err,
	                        sizeof(err)) == 0 &&
	    cfg->namespace && strlen(cfg->namespace) < sizeof(p->namespace))
		snprintf(p->namespace, sizeof(p->namespace), "%s", cfg->namespace);
	tj_kube_config_free(cfg);
}

/* The script's #SBATCH lines, then the command line's directives again on top. */
static int make_options(struct tj_plugin *p, const struct state *s, const char *path,
                        const char *script, size_t len, struct tj_sbatch_opts *opts,
                        struct tj_sbatch_notes *notes)
{
	char err[TJ_PLUGIN_ERROR_MAX];
	int r;

	tj_sbatch_opts_init(opts);
	r = tj_sbatch_parse_script(script, len, opts, notes, err, sizeof(err));
	if (r < 0) {
		tj_plugin_error(p, "%s: %s", path, err);
		return r;
	}
	for (size_t i = 0; i < s->n_recorded; i++) {
		r = tj_sbatch_parse_option(opts, notes, s->recorded[i].arg, s->recorded[i].next,
		                           TJ_SBATCH_COMMAND_LINE, err, sizeof(err));
		if (r < 0) {
			tj_plugin_error(p, "%s", err);
			return r;
		}
	}
	return 0;
}

static int create_jobs(struct tj_plugin *p, const struct state *s, cJSON **jobs, size_t n,
                       FILE *out)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = tj_json_string(jobs[i], "metadata.name");
		struct tj_ref ref = { .resource = &tj_resource_trainjobs,
			              .namespace = p->namespace };
		struct tj_plugin_reply reply;
		int r;

		tj_plugin_reply_init(&reply);
		r = tj_kube_create(p->client, &ref, jobs[i], NULL, tj_plugin_reply_fn, &reply,
		                   NULL);
		if (r == 0)
			r = tj_plugin_wait(p, &reply);
		if (r < 0) {
			if (strcmp(reply.reason, "AlreadyExists") == 0)
				tj_plugin_error(
				        p,
				        "a TrainJob %s already exists in namespace %s: cancel "
				        "it (kubectl scancel %s) or give another -J",
				        name, p->namespace, name);
			else
				tj_plugin_error(p, "cannot create TrainJob %s in namespace %s: %s",
				                name, p->namespace,
				                reply.error[0] ? reply.error : strerror(-r));
			tj_plugin_reply_clear(&reply);
			return r;
		}
		tj_plugin_reply_clear(&reply);
		if (s->parsable)
			fprintf(out, "%s\n", name);
		else
			fprintf(out, "Submitted batch job %s\n", name);
		fflush(out);
	}
	return 0;
}

/* The file's name without its folders: $0 of the script and its default job name. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static int submit(struct tj_plugin *p, struct state *s, const struct tj_sbatch_env *env, FILE *out)
{
	const char *path = p->operands[0];
	struct tj_sbatch_opts *opts = calloc(1, sizeof(*opts));
	struct tj_sbatch_notes *notes = calloc(1, sizeof(*notes));
	char user[TJ_NAME_MAX], err[TJ_PLUGIN_ERROR_MAX];
	bool have_user = false;
	cJSON **jobs = NULL;
	size_t n_jobs = 0, len = 0;
	char *script = NULL;
	int r = -ENOMEM;

	if (!opts || !notes)
		goto out;
	r = tj_read_file(path, TJ_SBATCH_MAX_SCRIPT, TJ_READ_FILE_STREAMS, &script, &len);
	if (r < 0) {
		tj_plugin_error(p, "%s: %s", path,
		                r == -E2BIG ? "larger than 256 KiB: not a batch script"
		                            : strerror(-r));
		goto out;
	}
	r = make_options(p, s, path, script, len, opts, notes);
	if (r < 0)
		goto out;
	if (s->dry_run) {
		dry_run_namespace(p);
	} else {
		r = tj_plugin_connect(p);
		if (r < 0)
			goto out;
		have_user = tj_plugin_whoami(p, user, sizeof(user), err, sizeof(err)) == 0;
		if (!have_user)
			tj_sbatch_note(notes,
			               "cannot tell who you are (%.120s): the job records no "
			               "submitter",
			               err);
	}
	struct tj_sbatch_input in = {
		.script = script,
		.script_len = len,
		.script_name = base_name(path),
		.args = (const char *const *)p->rest,
		.n_args = p->n_rest,
		.opts = opts,
		.namespace = p->namespace,
		.user = have_user ? user : NULL,
		.partitions = s->partitions,
		.n_partitions = s->n_partitions,
		.config = tj_config_builtin(),
		.lookup_env = env->lookup_env,
	};
	r = tj_sbatch_convert(&in, notes, &jobs, &n_jobs, err, sizeof(err));
	if (r < 0) {
		tj_plugin_error(p, "%s: %s", path, r == -ENOMEM ? strerror(-r) : err);
		goto out;
	}
	for (size_t i = 0; i < notes->n; i++)
		tj_plugin_error(p, "note: %s", notes->text[i]);
	if (s->dry_run) {
		for (size_t i = 0; i < n_jobs; i++)
			tj_yaml_print(out, jobs[i]);
	} else {
		r = create_jobs(p, s, jobs, n_jobs, out);
	}
out:
	tj_sbatch_jobs_free(jobs, n_jobs);
	free(script);
	free(notes);
	free(opts);
	return r;
}

int tj_sbatch_main(int argc, char *const argv[], const struct tj_sbatch_env *env, FILE *out,
                   FILE *err)
{
	struct state *s = calloc(1, sizeof(*s));
	struct tj_plugin *p = calloc(1, sizeof(*p));
	int rc = TJ_PLUGIN_EXIT_FAILURE;

	if (!s || !p) {
		fprintf(err, "kubectl sbatch: out of memory\n");
		goto out;
	}
	rc = tj_plugin_parse(p, &spec, s, argc, argv, out, err);
	if (rc != TJ_PLUGIN_GO_ON)
		goto out;
	rc = submit(p, s, env, out) < 0 ? TJ_PLUGIN_EXIT_FAILURE : TJ_PLUGIN_EXIT_SUCCESS;
	tj_plugin_close(p);
out:
	free(p);
	free(s);
	return rc;
}
