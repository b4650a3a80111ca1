/* kubectl scancel: deletes TrainJobs, and nothing else, as Slurm's scancel cancels jobs (the
 * controller stops their pods: they go with their owner). Prints each job it cancelled. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/plugin.h"
#include "cli/slurm_jobs.h"

struct state {
	bool has_state;
	enum tj_slurm_state state; /* --state: only jobs in it */
};

static int on_option(void *userdata, const char *arg, const char *next, char *err, size_t errlen)
{
	struct state *s = userdata;
	const char *value;
	int n = tj_plugin_match(arg, next, 't', "state", &value);

	if (n < 0)
		snprintf(err, errlen, "--state needs a state (PENDING, RUNNING, SUSPENDED, ...)");
	if (n > 0) {
		if (tj_slurm_state_parse(value, &s->state) < 0) {
			snprintf(err, errlen, "--state: '%s' is not a job state", value);
			return -EINVAL;
		}
		s->has_state = true;
	}
	return n;
}

static const struct tj_plugin_spec spec = {
	.name = "scancel",
	.synopsis = "[-n NAMESPACE] [--state STATE] [NAME]...",
	.summary = "Cancels TrainJobs: deletes the named ones (with --state and no name, every\n"
	           "job of the namespace in that state) and nothing else; their pods go with\n"
	           "them. Prints each job it cancelled.",
	.options_help = "  -t, --state STATE          only jobs in STATE (PENDING, RUNNING,\n"
	                "                             SUSPENDED, ... or PD, R, S, ...)\n",
	.on_option = on_option,
	.min_operands = 0,
};

static bool named(const struct tj_plugin *p, const char *name)
{
	for (size_t i = 0; i < p->n_operands; i++)
		if (strcmp(p->operands[i], name) == 0)
			return true;
	return false;
}

/* Deletes one job, on the condition that it is still the one listed (its uid). */
static int cancel(struct tj_plugin *p, const struct tj_slurm_job *j)
{
	struct tj_ref ref = { .resource = &tj_resource_trainjobs,
		              .namespace = j->job->namespace,
		              .name = j->job->name };
	struct tj_delete_options opts = { .precondition_uid = j->job->uid };
	struct tj_plugin_reply reply;
	int r;

	tj_plugin_reply_init(&reply);
	r = tj_kube_delete(p->client, &ref, &opts, tj_plugin_reply_fn, &reply, NULL);
	if (r == 0)
		r = tj_plugin_wait(p, &reply);
	if (r < 0 && strcmp(reply.reason, "NotFound") != 0)
		tj_plugin_error(p, "could not cancel %s: %s", j->job->name,
		                reply.error[0] ? reply.error : strerror(-r));
	else
		printf("cancelled TrainJob %s/%s (%s)\n", j->job->namespace, j->job->name,
		       tj_slurm_state_name(j->state));
	tj_plugin_reply_clear(&reply);
	return r < 0 && strcmp(reply.reason, "NotFound") != 0 ? r : 0;
}

int main(int argc, char **argv)
{
	struct state s = { .has_state = false };
	struct tj_slurm_jobs jobs = { 0 };
	struct tj_plugin p;
	int rc;

	rc = tj_plugin_parse(&p, &spec, &s, argc, argv, stdout, stderr);
	if (rc != TJ_PLUGIN_GO_ON)
		return rc;
	if (p.n_operands == 0 && !s.has_state) {
		tj_plugin_error(&p, "name the TrainJobs to cancel, or give --state");
		return TJ_PLUGIN_EXIT_USAGE;
	}
	rc = TJ_PLUGIN_EXIT_FAILURE;
	if (tj_plugin_connect(&p) < 0 ||
	    tj_slurm_jobs_fetch(&p, false, (int64_t)time(NULL), &jobs) < 0)
		goto out;
	rc = TJ_PLUGIN_EXIT_SUCCESS;
	for (size_t i = 0; i < p.n_operands; i++) {
		size_t k;

		for (k = 0; k < jobs.n && strcmp(jobs.jobs[k].job->name, p.operands[i]) != 0; k++)
			;
		if (k == jobs.n) {
			tj_plugin_error(&p, "no TrainJob %s in namespace %s", p.operands[i],
			                p.namespace);
			rc = TJ_PLUGIN_EXIT_FAILURE;
		}
	}
	for (size_t i = 0; i < jobs.n; i++) {
		const struct tj_slurm_job *j = &jobs.jobs[i];

		if (p.n_operands > 0 && !named(&p, j->job->name))
			continue;
		if (s.has_state && j->state != s.state) {
			if (p.n_operands > 0)
				tj_plugin_error(&p, "%s is %s, not %s: left alone", j->job->name,
				                tj_slurm_state_name(j->state),
				                tj_slurm_state_name(s.state));
			continue;
		}
		/* A job being deleted is cancelled already. */
		if (j->job->deletion_time)
			continue;
		if (cancel(&p, j) < 0)
			rc = TJ_PLUGIN_EXIT_FAILURE;
	}
out:
	tj_slurm_jobs_clear(&jobs);
	tj_plugin_close(&p);
	return rc;
}
