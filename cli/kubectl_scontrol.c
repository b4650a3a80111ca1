/* kubectl scontrol: Slurm's scontrol for the TrainJobs of a namespace. hold and release
 * set and remove the annotation trainjob.flame.dev/hold, which keeps a job that has not
 * started out of the queue (Queued, JobHeldUser); top puts a queued job first among the
 * queued jobs of its namespace and tier, through its own priority (the annotation
 * trainjob.flame.dev/priority, which orders only the jobs of its namespace); requeue sends a
 * running job back to the queue, not as a restart, through the annotation
 * trainjob.flame.dev/requeue (the time of the request); show job prints what the controller
 * knows of a job, as scontrol show job does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/plugin.h"
#include "cli/slurm_jobs.h"
#include "reconcilers/json.h"

#define ANNOTATION_HOLD     TJ_LABEL_PREFIX "hold"
#define ANNOTATION_PRIORITY TJ_LABEL_PREFIX "priority"
#define PRIORITY_MAX        1000000000

static const struct tj_plugin_spec spec = {
	.name = "scontrol",
	.synopsis = "[-n NAMESPACE] hold|release|requeue NAME... | top NAME | show job NAME",
	.summary = "Slurm's scontrol for TrainJobs:\n"
	           "  hold NAME...      keeps pending jobs out of the queue (Queued, JobHeldUser)\n"
	           "  release NAME...   lets held jobs queue again\n"
	           "  requeue NAME...   stops running jobs and queues them again (not a restart:\n"
	           "                    they start over, from their last checkpoint)\n"
	           "  top NAME          puts a queued job first among the queued jobs of its\n"
	           "                    namespace and QOS tier (never past another namespace's)\n"
	           "  show job NAME     prints the job's state, reason, QOS, dependency and times",
	.min_operands = 2,
};

static const struct tj_slurm_job *find(const struct tj_plugin *p, const struct tj_slurm_jobs *jobs,
                                       const char *name)
{
	for (size_t i = 0; i < jobs->n; i++)
		if (strcmp(jobs->jobs[i].job->name, name) == 0)
			return &jobs->jobs[i];
	tj_plugin_error(p, "no TrainJob %s in namespace %s", name, p->namespace);
	return NULL;
}

/* A merge patch of the job's annotation key: value, or its removal when value is NULL. */
static int annotate(struct tj_plugin *p, const struct tj_slurm_job *j, const char *key,
                    const char *value)
{
	struct tj_ref ref = { .resource = &tj_resource_trainjobs,
		              .namespace = j->job->namespace,
		              .name = j->job->name };
	cJSON *patch = cJSON_CreateObject(), *ann = NULL;
	struct tj_plugin_reply reply;
	int r = -ENOMEM;

	if (patch)
		ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"),
		                              "annotations");
	if (ann &&
	    (value ? cJSON_AddStringToObject(ann, key, value) : cJSON_AddNullToObject(ann, key))) {
		tj_plugin_reply_init(&reply);
		r = tj_kube_patch(p->client, &ref, TJ_PATCH_MERGE, patch, NULL, tj_plugin_reply_fn,
		                  &reply, NULL);
		if (r == 0)
			r = tj_plugin_wait(p, &reply);
		if (r < 0)
			tj_plugin_error(p, "could not change %s: %s", j->job->name,
			                reply.error[0] ? reply.error : strerror(-r));
		tj_plugin_reply_clear(&reply);
	}
	cJSON_Delete(patch);
	return r;
}

/* Whether the job waits in the queue, its pods not created yet: Slurm holds and tops only
 * pending jobs, and a job whose pods exist is past the queue. */
static bool pending(const struct tj_plugin *p, const struct tj_slurm_job *j, const char *what)
{
	enum tj_state st = j->job->status.state;

	if (tj_slurm_state_waiting(j->state) && !j->job->status.start_time &&
	    (st == TJ_STATE_NONE || st == TJ_STATE_QUEUED))
		return true;
	if (j->state == TJ_SLURM_PENDING)
		tj_plugin_error(p,
		                "%s has left the queue (its pods are being created): only a "
		                "job that waits in the queue can be %s",
		                j->job->name, what);
	else
		tj_plugin_error(p, "%s is %s: only a pending job can be %s", j->job->name,
		                tj_slurm_state_name(j->state), what);
	return false;
}

static int hold_or_release(struct tj_plugin *p, const struct tj_slurm_jobs *jobs, bool hold)
{
	int rc = TJ_PLUGIN_EXIT_SUCCESS;

	for (size_t i = 1; i < p->n_operands; i++) {
		const struct tj_slurm_job *j = find(p, jobs, p->operands[i]);

		if (!j || (hold && !pending(p, j, "held")) ||
		    annotate(p, j, ANNOTATION_HOLD, hold ? "true" : NULL) < 0) {
			rc = TJ_PLUGIN_EXIT_FAILURE;
			continue;
		}
		printf("%s TrainJob %s/%s\n", hold ? "held" : "released", j->job->namespace,
		       j->job->name);
	}
	return rc;
}

/* Sends running jobs back to the queue: the controller stops a run that started by the
 * time of the request, once. */
static int requeue_jobs(struct tj_plugin *p, const struct tj_slurm_jobs *jobs, int64_t now)
{
	int rc = TJ_PLUGIN_EXIT_SUCCESS;
	char when[21];

	tj_time_format(now, when);
	for (size_t i = 1; i < p->n_operands; i++) {
		const struct tj_slurm_job *j = find(p, jobs, p->operands[i]);

		if (j && (!j->job->status.start_time || tj_slurm_state_finished(j->state))) {
			tj_plugin_error(p, "%s is %s: only a running job can be requeued",
			                j->job->name, tj_slurm_state_name(j->state));
			j = NULL;
		}
		if (!j || annotate(p, j, TJ_ANNOTATION_REQUEUE, when) < 0) {
			rc = TJ_PLUGIN_EXIT_FAILURE;
			continue;
		}
		printf("requeued TrainJob %s/%s\n", j->job->namespace, j->job->name);
	}
	return rc;
}

static long long own_priority(const struct tj_trainjob *job)
{
	return job->priority ? strtoll(job->priority, NULL, 10) : 0;
}

static int top(struct tj_plugin *p, const struct tj_slurm_jobs *jobs)
{
	const struct tj_slurm_job *j;
	long long highest = 0;
	char value[24];

	if (p->n_operands != 2) {
		tj_plugin_error(p, "top takes one TrainJob");
		return TJ_PLUGIN_EXIT_USAGE;
	}
	if (!(j = find(p, jobs, p->operands[1])) || !pending(p, j, "put on top"))
		return TJ_PLUGIN_EXIT_FAILURE;
	for (size_t i = 0; i < jobs->n; i++) {
		const struct tj_slurm_job *o = &jobs->jobs[i];

		if (o != j && tj_slurm_state_waiting(o->state) && own_priority(o->job) > highest)
			highest = own_priority(o->job);
	}
	if (own_priority(j->job) > highest) {
		printf("TrainJob %s/%s is first among its namespace's queued jobs already\n",
		       j->job->namespace, j->job->name);
		return TJ_PLUGIN_EXIT_SUCCESS;
	}
	if (highest >= PRIORITY_MAX) {
		tj_plugin_error(p, "another queued job has the highest priority there is (%d)",
		                PRIORITY_MAX);
		return TJ_PLUGIN_EXIT_FAILURE;
	}
	snprintf(value, sizeof(value), "%lld", highest + 1);
	if (annotate(p, j, ANNOTATION_PRIORITY, value) < 0)
		return TJ_PLUGIN_EXIT_FAILURE;
	printf("TrainJob %s/%s goes first among the queued jobs of its namespace and QOS tier "
	       "(%s %s)\n",
	       j->job->namespace, j->job->name, ANNOTATION_PRIORITY, value);
	return TJ_PLUGIN_EXIT_SUCCESS;
}

static int show_job(struct tj_plugin *p, const struct tj_slurm_jobs *jobs)
{
	const struct tj_slurm_job *j;
	const struct tj_trainjob *t;
	char submit[32], start[32], end[32], expected[32];

	if (p->n_operands != 3 || strcmp(p->operands[1], "job") != 0) {
		tj_plugin_error(p, "show takes: job NAME");
		return TJ_PLUGIN_EXIT_USAGE;
	}
	if (!(j = find(p, jobs, p->operands[2])))
		return TJ_PLUGIN_EXIT_FAILURE;
	t = j->job;
	tj_slurm_time(t->creation_time, submit, sizeof(submit));
	tj_slurm_time(t->status.start_time, start, sizeof(start));
	tj_slurm_time(t->status.completion_time, end, sizeof(end));
	tj_slurm_time(t->status.expected_start_time, expected, sizeof(expected));
	printf("JobName=%s Namespace=%s UserId=%s\n", t->name, t->namespace, j->user);
	printf("   JobState=%s Reason=%s Dependency=%s Hold=%s\n", tj_slurm_state_name(j->state),
	       *t->status.reason ? t->status.reason : "None",
	       t->dependency ? t->dependency : "(null)",
	       t->hold && strcmp(t->hold, "true") == 0 ? "yes" : "no");
	printf("   QOS=%s Priority=%s Partition=%s Runtime=%s\n", t->qos ? t->qos : "(default)",
	       t->priority ? t->priority : "(default)", j->partition,
	       t->runtime_name ? t->runtime_name : "(none)");
	printf("   NumNodes=%d QueuePosition=%d\n", t->num_nodes, t->status.queue_position);
	printf("   SubmitTime=%s ExpectedStart=%s StartTime=%s EndTime=%s\n", submit, expected,
	       start, end);
	printf("   Message=%s\n", *t->status.message ? t->status.message : "(none)");
	return TJ_PLUGIN_EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct tj_slurm_jobs jobs = { 0 };
	struct tj_plugin p;
	const char *op;
	int rc;

	rc = tj_plugin_parse(&p, &spec, NULL, argc, argv, stdout, stderr);
	if (rc != TJ_PLUGIN_GO_ON)
		return rc;
	op = p.operands[0];
	if (strcmp(op, "hold") != 0 && strcmp(op, "release") != 0 && strcmp(op, "top") != 0 &&
	    strcmp(op, "requeue") != 0 && strcmp(op, "show") != 0) {
		tj_plugin_error(
		        &p, "'%s' is not a command here: hold, release, requeue, top or show job",
		        op);
		tj_plugin_close(&p);
		return TJ_PLUGIN_EXIT_USAGE;
	}
	rc = TJ_PLUGIN_EXIT_FAILURE;
	if (tj_plugin_connect(&p) < 0 ||
	    tj_slurm_jobs_fetch(&p, false, (int64_t)time(NULL), &jobs) < 0)
		goto out;
	if (strcmp(op, "hold") == 0 || strcmp(op, "release") == 0)
		rc = hold_or_release(&p, &jobs, strcmp(op, "hold") == 0);
	else if (strcmp(op, "requeue") == 0)
		rc = requeue_jobs(&p, &jobs, (int64_t)time(NULL));
	else if (strcmp(op, "top") == 0)
		rc = top(&p, &jobs);
	else
		rc = show_job(&p, &jobs);
out:
	tj_slurm_jobs_clear(&jobs);
	tj_plugin_close(&p);
	return rc;
}
