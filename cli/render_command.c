#include "cli/render_command.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/manifest.h"
#include "cli/yaml.h"
#include "controller/config/config.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/runtime.h"
#include "reconcilers/trainjob.h"

#define MAX_RUNTIMES 256

struct runtimes {
	struct tj_runtime *items[MAX_RUNTIMES]; /* owned */
	size_t n;
};

static void runtimes_clear(struct runtimes *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		tj_runtime_free(rs->items[i]);
	rs->n = 0;
}

/* Adds the runtimes among a file's documents; other kinds are skipped. */
static int load_runtimes(const char *path, struct runtimes *rs, FILE *err)
{
	cJSON **docs = NULL;
	size_t n = 0;
	char msg[512];
	int r;

	r = tj_yaml_read_file(path, &docs, &n, msg, sizeof(msg));
	if (r < 0) {
		fprintf(err, "render: %s\n", msg);
		return r;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		struct tj_runtime *rt;

		if (rs->n == MAX_RUNTIMES) {
			fprintf(err, "render: more than %d runtimes\n", MAX_RUNTIMES);
			r = -E2BIG;
		} else if (tj_runtime_from_json(docs[i], &rt) == 0) {
			rs->items[rs->n++] = rt;
		}
	}
	tj_yaml_docs_free(docs, n);
	return r;
}

static bool has_yaml_suffix(const char *name)
{
	size_t len = strlen(name);

	return (len > 5 && strcmp(name + len - 5, ".yaml") == 0) ||
	       (len > 4 && strcmp(name + len - 4, ".yml") == 0);
}

static int load_runtime_dir(const char *dir, struct runtimes *rs, FILE *err)
{
	struct dirent **entries = NULL;
	int n = scandir(dir, &entries, NULL, alphasort), r = 0;

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (r == 0 && has_yaml_suffix(entries[i]->d_name) &&
		    snprintf(path, sizeof(path), "%s/%s", dir, entries[i]->d_name) <
		            (int)sizeof(path))
			r = load_runtimes(path, rs, err);
		free(entries[i]);
	}
	free(entries);
	return r;
}

/* The shipped runtimes: installed under the data directory, or in the source tree for a
 * binary run from its build directory. */
static int load_shipped_runtimes(struct runtimes *rs, FILE *err)
{
	static const char *const dirs[] = { TJ_RUNTIME_DIR, TJ_SOURCE_RUNTIME_DIR };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (load_runtime_dir(dirs[i], rs, err) == 0)
			return 0;
	return -ENOENT;
}

static const struct tj_runtime *lookup(void *ctx, enum tj_runtime_kind kind, const char *ns,
                                       const char *name)
{
	const struct runtimes *rs = ctx;

	for (size_t i = 0; i < rs->n; i++) {
		const struct tj_runtime *rt = rs->items[i];

		/* A runtime file without a namespace stands for the job's own namespace. */
		if (rt->kind == kind && strcmp(rt->name, name) == 0 &&
		    (kind == TJ_RUNTIME_CLUSTER || strcmp(rt->namespace, ns) == 0))
			return rt;
	}
	return NULL;
}

static int render_job(cJSON *doc, const struct runtimes *rs, const struct tj_config *config,
                      FILE *out, FILE *err)
{
	struct tj_trainjob *job = NULL;
	const struct tj_runtime *rt = NULL;
	struct tj_problem why = { "", "" };
	struct tj_plan *plan = NULL;
	bool resumed;
	int r;

	r = tj_manifest_trainjob(doc, &job, &resumed);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		fprintf(err, "render: a TrainJob needs metadata.name and metadata.namespace\n");
		return r;
	}
	if (resumed)
		fprintf(err,
		        "render: %s is suspended; these are the objects it gets when resumed\n",
		        job->name);
	if (!tj_trainjob_is_ours(job)) {
		fprintf(err, "render: %s is managed by %s, not by this controller\n", job->name,
		        job->managed_by);
		goto out;
	}
	if (tj_trainjob_validate(job, &why) == 0 &&
	    tj_runtime_resolve(job, lookup, (void *)rs, &rt, &why) < 0) {
		fprintf(err, "render: %s: %s: %s\n", job->name, why.reason, why.message);
		r = -ENOENT;
		goto out;
	}
	r = tj_plan_trainjob(&(struct tj_plan_input){ .job = job,
	                                              .runtime = rt,
	                                              .runtime_problem = &why,
	                                              .config = config,
	                                              .all_steps = true },
	                     &plan);
	if (r < 0)
		goto out;
	if (plan->status.state == TJ_STATE_FAILED) {
		fprintf(err, "render: %s: %s: %s\n", job->name, plan->status.reason,
		        plan->status.message);
		r = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < plan->n_actions; i++)
		if (plan->actions[i].kind == TJ_ACTION_CREATE_SERVICE ||
		    plan->actions[i].kind == TJ_ACTION_CREATE_OBJECT)
			tj_yaml_print(out, plan->actions[i].object);
	for (size_t i = 0; i < plan->n_actions; i++)
		if (plan->actions[i].kind == TJ_ACTION_CREATE_POD)
			tj_yaml_print(out, plan->actions[i].object);
out:
	tj_plan_free(plan);
	tj_trainjob_free(job);
	return r;
}

static int load_config(const char *path, struct tj_config **ret, FILE *err)
{
	char msg[512];
	int r = tj_config_load_file(path, ret, msg, sizeof(msg));

	if (r < 0)
		fprintf(err, "render: %s\n", msg);
	return r;
}

int tj_render_command(const struct tj_render_options *opts, FILE *out, FILE *err)
{
	struct runtimes rs = { .n = 0 };
	struct tj_config *config = NULL;
	cJSON **docs = NULL;
	size_t n = 0, jobs = 0;
	char msg[512];
	int r;

	r = tj_yaml_read_file(opts->file, &docs, &n, msg, sizeof(msg));
	if (r < 0) {
		fprintf(err, "render: %s\n", msg);
		return r;
	}
	if (opts->config[0]) {
		r = load_config(opts->config, &config, err);
		if (r < 0)
			goto out;
	}
	/* Runtimes in the job's own file count too, so one file can hold a job and its runtime. */
	for (size_t i = 0; i < n; i++) {
		struct tj_runtime *rt;

		if (rs.n < MAX_RUNTIMES && tj_runtime_from_json(docs[i], &rt) == 0)
			rs.items[rs.n++] = rt;
	}
	if (opts->runtime[0])
		r = load_runtimes(opts->runtime, &rs, err);
	else if (opts->runtime_dir[0])
		r = load_runtime_dir(opts->runtime_dir, &rs, err);
	else
		load_shipped_runtimes(&rs, err);
	if (r < 0) {
		if (opts->runtime_dir[0] && !opts->runtime[0])
			fprintf(err, "render: %s: %s\n", opts->runtime_dir, strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const char *kind = tj_json_string(docs[i], "kind");

		if (!kind || strcmp(kind, "TrainJob") != 0)
			continue;
		jobs++;
		r = render_job(docs[i], &rs, config ? config : tj_config_builtin(), out, err);
		if (r < 0)
			goto out;
	}
	if (jobs == 0) {
		fprintf(err, "render: %s: no TrainJob in it\n", opts->file);
		r = -EINVAL;
	}
out:
	runtimes_clear(&rs);
	tj_config_free(config);
	tj_yaml_docs_free(docs, n);
	return r;
}
