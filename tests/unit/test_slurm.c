/* The Slurm views of TrainJobs: cli/slurm_text.h (states, durations, host lists, -S times,
 * exit codes), cli/slurm_jobs.h (jobs from the API's lists), cli/squeue_table.h and
 * cli/sacct_table.h (what the commands print), cli/table.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/sacct_table.h"
#include "cli/slurm_jobs.h"
#include "cli/slurm_text.h"
#include "cli/squeue_table.h"
#include "cli/table.h"

#include "fixtures.h"

#define NOW 1795953600 /* 2026-11-29T12:00:00Z */

/* ---- slurm_text ---- */

struct state_case {
	const char *status; /* the TrainJob's status */
	bool deleting, live_pods;
	const char *want; /* letters */
};

static const struct state_case state_cases[] = {
	{ "{'state':'Queued','reason':'Resources'}", false, false, "PD" },
	{ "{'state':'Pending','reason':'PodsStarting'}", false, true, "PD" },
	{ "{}", false, false, "PD" },
	{ "{'state':'Running','reason':'AllPodsRunning'}", false, true, "R" },
	{ "{'state':'Running','reason':'PodsCompleting'}", false, true, "CG" },
	{ "{'state':'Restarting','reason':'WorkerFailed'}", false, true, "RQ" },
	{ "{'state':'Suspended','reason':'Suspended'}", false, false, "S" },
	{ "{'state':'Complete','reason':'AllPodsSucceeded'}", false, false, "CD" },
	{ "{'state':'Failed','reason':'ReachedMaxRestarts'}", false, false, "F" },
	{ "{'state':'Failed','reason':'DeadlineExceeded'}", false, false, "TO" },
	{ "{'state':'Failed','reason':'DeadlineExceeded'}", false, true, "CG" },
	{ "{'state':'Running','reason':'AllPodsRunning'}", true, true, "CA" },
	/* Preempted: PR while it waits to run again, R once it does. */
	{ "{'state':'Queued','reason':'Preempted','preemptions':1}", false, false, "PR" },
	{ "{'state':'Queued','reason':'Resources','preemptions':2}", false, false, "PR" },
	{ "{'state':'Running','reason':'AllPodsRunning','preemptions':1,"
	  "'startTime':'2026-11-29T10:00:00Z'}",
	  false, true, "R" },
};

static struct tj_trainjob *job_with(const char *name, const char *spec, const char *status,
                                    const char *extra_meta)
{
	char buf[4096];
	struct tj_trainjob *job = NULL;
	cJSON *j;

	snprintf(buf, sizeof(buf),
	         "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{"
	         "'name':'%s','namespace':'team-a','uid':'uid-%s','creationTimestamp':"
	         "'2026-11-29T10:00:00Z'%s},'spec':%s,'status':%s}",
	         name, name, extra_meta ? extra_meta : "", spec, status);
	j = jlit(buf);
	assert_int_equal(tj_trainjob_from_json(j, &job), 0);
	cJSON_Delete(j);
	return job;
}

static void test_states(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(state_cases) / sizeof(state_cases[0]); i++) {
		const struct state_case *c = &state_cases[i];
		struct tj_trainjob *job = job_with(
		        "a", "{'runtimeRef':{'name':'torch-gh200'}}", c->status,
		        c->deleting ? ",'deletionTimestamp':'2026-11-29T11:00:00Z'" : NULL);
		enum tj_slurm_state s = tj_slurm_state_of(job, c->live_pods), parsed;

		print_message("# case: %s %d %d\n", c->status, c->deleting, c->live_pods);
		assert_string_equal(tj_slurm_state_letters(s), c->want);
		assert_int_equal(tj_slurm_state_parse(c->want, &parsed), 0);
		assert_int_equal(parsed, s);
		assert_int_equal(tj_slurm_state_parse(tj_slurm_state_name(s), &parsed), 0);
		assert_int_equal(parsed, s);
		tj_trainjob_free(job);
	}
	assert_int_equal(tj_slurm_state_parse("running", &(enum tj_slurm_state){ 0 }), 0);
	assert_int_equal(tj_slurm_state_parse("WAITING", &(enum tj_slurm_state){ 0 }), -EINVAL);
	assert_true(tj_slurm_state_finished(TJ_SLURM_TIMEOUT));
	assert_false(tj_slurm_state_finished(TJ_SLURM_COMPLETING));
}

static void test_in_queue(void **state)
{
	static const struct {
		const char *what, *spec, *status, *meta;
		bool want;
	} cases[] = {
		{ "queued", "{}", "{'state':'Queued','reason':'Resources'}", NULL, true },
		{ "not seen yet", "{}", "{}", NULL, true },
		{ "preempted, queued again", "{}",
		  "{'state':'Queued','reason':'Preempted','preemptions':1}", NULL, true },
		{ "held", "{}", "{'state':'Queued','reason':'JobHeldUser'}", NULL, false },
		{ "waits for a dependency", "{}", "{'state':'Queued','reason':'Dependency'}", NULL,
		  false },
		{ "its dependency never met", "{}",
		  "{'state':'Queued','reason':'DependencyNeverSatisfied'}", NULL, false },
		{ "admitted, its pods starting", "{}",
		  "{'state':'Pending','reason':'PodsStarting'}", NULL, false },
		{ "started once", "{}",
		  "{'state':'Queued','reason':'Resources','startTime':'2026-11-29T11:00:00Z'}",
		  NULL, false },
		{ "suspended", "{'suspend':true}", "{}", NULL, false },
		{ "another controller's", "{'managedBy':'kueue.x-k8s.io/multikueue'}", "{}", NULL,
		  false },
		{ "being deleted", "{}", "{'state':'Queued','reason':'Resources'}",
		  ",'deletionTimestamp':'2026-11-29T11:00:00Z'", false },
		{ "running", "{}", "{'state':'Running','reason':'AllPodsRunning'}", NULL, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char spec[256];
		struct tj_trainjob *job;

		snprintf(spec, sizeof(spec), "{'runtimeRef':{'name':'torch-gh200'}%s%s",
		         strcmp(cases[i].spec, "{}") == 0 ? "" : ",", cases[i].spec + 1);
		job = job_with("a", spec, cases[i].status, cases[i].meta);
		if (tj_slurm_in_queue(job) != cases[i].want)
			fail_msg("case \"%s\": want %d", cases[i].what, cases[i].want);
		tj_trainjob_free(job);
	}
}

static void test_durations_and_times(void **state)
{
	static const struct {
		int64_t seconds;
		const char *want;
	} durations[] = {
		{ 0, "0:00" },           { -5, "0:00" },           { 59, "0:59" },
		{ 61, "1:01" },          { 3600, "1:00:00" },      { 86399, "23:59:59" },
		{ 86400, "1-00:00:00" }, { 200000, "2-07:33:20" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(durations) / sizeof(durations[0]); i++) {
		tj_slurm_duration(durations[i].seconds, buf, sizeof(buf));
		assert_string_equal(buf, durations[i].want);
	}
	tj_slurm_time(NOW, buf, sizeof(buf));
	assert_string_equal(buf, "2026-11-29T12:00:00");
	tj_slurm_time(0, buf, sizeof(buf));
	assert_string_equal(buf, "N/A");
}

static void test_hostlists(void **state)
{
	static const struct {
		const char *names[8];
		size_t n;
		const char *want;
	} cases[] = {
		{ { "gh200-3", "gh200-1", "gh200-2" }, 3, "gh200-[1-3]" },
		{ { "gh200-1", "gh200-2", "gh200-7", "cpu-1" }, 4, "cpu-1,gh200-[1-2,7]" },
		{ { "gh200-1" }, 1, "gh200-1" },
		{ { "gh200-1", "gh200-1", "gh200-2" }, 3, "gh200-[1-2]" },
		{ { "node01", "node02", "node10" }, 3, "node[01-02,10]" },
		{ { "a", "b", "gpu9", "gpu10" }, 4, "a,b,gpu9,gpu10" },
		{ { "x-1", "x-3", "x-5" }, 3, "x-[1,3,5]" },
		{ { NULL }, 0, "" },
	};
	char buf[128], small[12];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("# case: %s\n", cases[i].want);
		assert_int_equal(tj_slurm_hostlist(cases[i].names, cases[i].n, buf, sizeof(buf)),
		                 0);
		assert_string_equal(buf, cases[i].want);
	}
	assert_int_equal(tj_slurm_hostlist(cases[1].names, 4, small, sizeof(small)), -ENOSPC);
	assert_string_equal(small, "cpu-1,gh...");
}

static void test_parse_time(void **state)
{
	static const struct {
		const char *s;
		int r;
		int64_t want;
	} cases[] = {
		{ "2026-11-28", 0, NOW - 86400 - 12 * 3600 },
		{ "2026-11-29T10:30", 0, NOW - 5400 },
		{ "2026-11-29T10:30:15", 0, NOW - 5385 },
		{ "2026-11-29T10:30:00Z", 0, NOW - 5400 },
		{ "09:00", 0, NOW - 3 * 3600 },
		{ "09:00:30", 0, NOW - 3 * 3600 + 30 },
		{ "1128", 0, NOW - 86400 - 12 * 3600 },
		{ "112826", 0, NOW - 86400 - 12 * 3600 },
		{ "now", 0, NOW },
		{ "now-90", 0, NOW - 90 },
		{ "now-2hours", 0, NOW - 7200 },
		{ "now-1days", 0, NOW - 86400 },
		{ "now-1weeks", 0, NOW - 604800 },
		{ "today", 0, NOW - 12 * 3600 },
		{ "midnight", 0, NOW - 12 * 3600 },
		{ "yesterday", 0, NOW - 36 * 3600 },
		{ "now+1", -EINVAL, 0 },
		{ "now-2fortnights", -EINVAL, 0 },
		{ "25:00", -EINVAL, 0 },
		{ "2026-13-01", -EINVAL, 0 },
		{ "2026-11-29T1030", -EINVAL, 0 },
		{ "tomorrowish", -EINVAL, 0 },
		{ "", -EINVAL, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t t = -1;

		print_message("# case: '%s'\n", cases[i].s);
		assert_int_equal(tj_slurm_parse_time(cases[i].s, NOW, &t), cases[i].r);
		if (cases[i].r == 0)
			assert_int_equal(t, cases[i].want);
		else
			assert_int_equal(t, -1);
	}
}

static void test_exit_codes_and_partitions(void **state)
{
	struct tj_trainjob *gh = job_with("a", "{'runtimeRef':{'name':'torch-gh200'}}", "{}", NULL);
	struct tj_trainjob *plain = job_with("b", "{'runtimeRef':{'name':'mpi'}}", "{}", NULL);
	char buf[16];

	(void)state;
	tj_slurm_exit_code(0, buf, sizeof(buf));
	assert_string_equal(buf, "0:0");
	tj_slurm_exit_code(1, buf, sizeof(buf));
	assert_string_equal(buf, "1:0");
	tj_slurm_exit_code(137, buf, sizeof(buf));
	assert_string_equal(buf, "0:9");
	tj_slurm_exit_code(255, buf, sizeof(buf));
	assert_string_equal(buf, "255:0");
	tj_slurm_exit_code(-1, buf, sizeof(buf));
	assert_string_equal(buf, "0:0");
	assert_string_equal(tj_slurm_partition(gh, NULL), "gh200");
	assert_string_equal(tj_slurm_partition(gh, "gpu"), "gpu");
	assert_string_equal(tj_slurm_partition(plain, ""), "mpi");
	tj_trainjob_free(gh);
	tj_trainjob_free(plain);
}

/* ---- the jobs and the tables ---- */

#define SPEC(n, deadline)                                                                          \
	"{'runtimeRef':{'name':'torch-gh200'},'activeDeadlineSeconds':" #deadline                  \
	",'trainer':{'numNodes':" #n "}}"

/* Three TrainJobs as a list returns them: big runs on 2 nodes (submitted by alice, 30 min of
 * its hour gone, its deadline 20 minutes away, 28,800 GPU-seconds counted until 10 minutes
 * ago), wait is queued behind it, done ran out of walltime after a restart; and the pods of
 * big (and one of another owner). */
static const char *const trainjobs_json =
        "[{'metadata':{'name':'big','namespace':'team-a','uid':'u-big','creationTimestamp':"
        "'2026-11-29T11:00:00Z','annotations':{'trainjob.flame.dev/submitted-by':'alice'}},"
        "'spec':" SPEC(
                2,
                3600) ",'status':{'state':'Running','reason':'AllPodsRunning',"
                      "'startTime':'2026-11-29T11:30:00Z','deadline':'2026-11-29T12:20:00Z','"
                      "gpuSeconds':28800,"
                      "'gpuSecondsCountedUntil':'2026-11-29T11:50:00Z',"
                      "'trainerStatus':{'progressPercentage':42,'estimatedRemainingSeconds':"
                      "1500,'lastUpdatedTime':'2026-11-29T11:59:00Z'}}},"
                      "{'metadata':{'name':'wait','namespace':'team-a','uid':'u-wait','"
                      "creationTimestamp':"
                      "'2026-11-29T11:10:00Z','annotations':{'trainjob.flame.dev/"
                      "partition':'gpu'}},"
                      "'spec':" SPEC(
                              5,
                              0) ",'status':{'state':'Queued','reason':'Resources',"
                                 "'queuePosition':1,'expectedStartTime':'2026-11-29T12:30:00Z'}},"
                                 "{'metadata':{'name':'done','namespace':'team-b','uid':'u-done','"
                                 "creationTimestamp':"
                                 "'2026-11-29T09:00:00Z'},'spec':" SPEC(
                                         1, 600) ",'status':{'state':'Failed','reason':"
                                                 "'DeadlineExceeded','restartCount':1,'startTime':'"
                                                 "2026-11-29T09:05:00Z',"
                                                 "'completionTime':'2026-11-29T09:15:00Z','"
                                                 "lastFailure':{'rank':0,'node':'gh200-7',"
                                                 "'pod':'done-node-0-0-a0','reason':'OOMKilled','"
                                                 "exitCode':137,'time':"
                                                 "'2026-11-29T09:10:00Z'},'gpuSeconds':2400,'"
                                                 "wastedGpuSeconds':2400}},"
                                                 "{'metadata':{'name':'broken'}}]";

#define POD(name, uid, owner, node, phase)                                                         \
	"{'metadata':{'name':'" name "','namespace':'team-a','uid':'" uid                          \
	"','labels':{'trainer.kubeflow.org/"                                                       \
	"trainjob-name':'big'},'ownerReferences':[{'uid':'" owner                                  \
	"','controller':true}]},'spec':{'nodeName':'" node "','containers':[{'name':'node',"       \
	"'resources':{'limits':{'nvidia.com/gpu':'4'}}}]},'status':{'phase':'" phase "',"          \
	"'startTime':'2026-11-29T11:30:00Z'}}"

static const char *const pods_json =
        "[" POD("big-node-0-0-a0", "p0", "u-big", "gh200-2", "Running") "," POD(
                "big-node-0-1-a0", "p1", "u-big", "gh200-1",
                "Running") "," POD("stray", "p2", "u-other", "gh200-5", "Running") "]";

static void load_jobs(struct tj_slurm_jobs *jobs)
{
	cJSON *tjs = jlit(trainjobs_json), *pods = jlit(pods_json);

	assert_int_equal(tj_slurm_jobs_from_lists(tjs, pods, NOW, jobs), 0);
	cJSON_Delete(tjs);
	cJSON_Delete(pods);
}

static void test_jobs_from_lists(void **state)
{
	struct tj_slurm_jobs jobs;

	(void)state;
	load_jobs(&jobs);
	assert_int_equal(jobs.n, 3); /* broken has no namespace */
	/* By creation time. */
	assert_string_equal(jobs.jobs[0].job->name, "done");
	assert_string_equal(jobs.jobs[1].job->name, "big");
	assert_string_equal(jobs.jobs[2].job->name, "wait");
	assert_string_equal(jobs.jobs[1].user, "alice");
	assert_string_equal(jobs.jobs[2].user, "team-a");
	assert_string_equal(jobs.jobs[2].partition, "gpu");
	assert_string_equal(jobs.jobs[1].partition, "gh200");
	assert_int_equal(jobs.jobs[1].state, TJ_SLURM_RUNNING);
	assert_int_equal(jobs.jobs[0].state, TJ_SLURM_TIMEOUT);
	assert_int_equal(jobs.jobs[1].n_nodes, 2);
	/* The 10 minutes since the count, of 2 pods x 4 GPUs. */
	assert_int_equal(jobs.jobs[1].gpu_seconds, 28800 + 600 * 8);
	assert_int_equal(jobs.jobs[0].gpu_seconds, 2400);
	assert_int_equal(jobs.jobs[0].wasted_gpu_seconds, 2400);
	assert_int_equal(jobs.jobs[2].n_nodes, 0);
	assert_true(jobs.jobs[1].job->status.has_progress);
	assert_int_equal(jobs.jobs[1].job->status.progress_percent, 42);
	assert_true(jobs.jobs[1].job->status.has_eta);
	assert_int_equal(jobs.jobs[1].job->status.eta_seconds, 1500);
	assert_false(jobs.jobs[2].job->status.has_progress);
	assert_false(jobs.jobs[2].job->status.has_eta);
	tj_slurm_jobs_clear(&jobs);
	assert_int_equal(jobs.n, 0);
}

static char *print_squeue(const struct tj_squeue_options *o)
{
	struct tj_slurm_jobs jobs;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	load_jobs(&jobs);
	assert_int_equal(tj_squeue_print(out, &jobs, o, NOW), 0);
	fclose(out);
	tj_slurm_jobs_clear(&jobs);
	return text;
}

static void test_squeue(void **state)
{
	struct tj_squeue_options o = { .start = false };
	char err[256] = "";
	char *text;

	(void)state;
	tj_squeue_default_states(&o);
	text = print_squeue(&o);
	/* PROGRESS and ETA: what big's training code reported, N/A for wait. */
	assert_string_equal(text, "JOBID PARTITION NAME USER   ST  TIME TIME_LEFT PROGRESS   ETA "
	                          "NODES NODELIST(REASON)\n"
	                          "big   gh200     big  alice  R  30:00     20:00      42% 25:00 "
	                          "    2 gh200-[1-2]\n"
	                          "wait  gpu       wait team-a PD  0:00 UNLIMITED      N/A   N/A "
	                          "    5 (Resources)\n");
	free(text);
	o.start = true;
	text = print_squeue(&o);
	assert_string_equal(text, "JOBID PARTITION NAME USER   ST          START_TIME POSITION "
	                          "NODES NODELIST(REASON)\n"
	                          "wait  gpu       wait team-a PD 2026-11-29T12:30:00        1 "
	                          "    5 (Resources)\n");
	free(text);
	o.start = false;
	assert_int_equal(tj_squeue_parse_states("to,CD", &o, err, sizeof(err)), 0);
	text = print_squeue(&o);
	assert_string_equal(text, "JOBID PARTITION NAME USER   ST  TIME TIME_LEFT PROGRESS ETA "
	                          "NODES NODELIST(REASON)\n"
	                          "done  gh200     done team-b TO 10:00      0:00      N/A N/A "
	                          "    1 (DeadlineExceeded)\n");
	free(text);
	assert_int_equal(tj_squeue_parse_states("all", &o, err, sizeof(err)), 0);
	for (int s = 0; s < TJ_SLURM_STATE_COUNT; s++)
		assert_true(o.states[s]);
	assert_int_equal(tj_squeue_parse_states("R,,PD", &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "-t: '' is not a job state");
	assert_int_equal(tj_squeue_parse_states("R,WAIT", &o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "-t: 'WAIT' is not a job state (PD, R, CG, RQ, S, CD, F, TO, CA, "
	                         "or their names, or all)");
	/* A failed parse leaves the states as they were. */
	for (int s = 0; s < TJ_SLURM_STATE_COUNT; s++)
		assert_true(o.states[s]);
}

static char *print_sacct(const char *format, bool parsable, int64_t since)
{
	struct tj_sacct_format f;
	struct tj_slurm_jobs jobs;
	char err[512], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	assert_int_equal(tj_sacct_parse_format(format, &f, err, sizeof(err)), 0);
	load_jobs(&jobs);
	assert_int_equal(tj_sacct_print(out, &jobs, &f, parsable, since, NOW), 0);
	fclose(out);
	tj_slurm_jobs_clear(&jobs);
	return text;
}

static void test_sacct(void **state)
{
	struct tj_sacct_format f;
	char err[512], *text;

	(void)state;
	text = print_sacct(TJ_SACCT_DEFAULT_FORMAT, false, 0);
	assert_string_equal(
	        text, "JobName Partition State   ExitCode Elapsed NNodes Restarts GPUHours\n"
	              "done    gh200     TIMEOUT      0:9   10:00      1        1    0.667\n"
	              "big     gh200     RUNNING      0:0   30:00      2        0    9.333\n"
	              "wait    gpu       PENDING      0:0    0:00      5        0    0.000\n");
	free(text);
	/* -S after done's end leaves it out. */
	text = print_sacct("jobid,user,start,end,nodelist,reason,gpuseconds,wastedgpuhours", true,
	                   NOW - 3600);
	assert_string_equal(text, "JobID|User|Start|End|NodeList|Reason|GPUSeconds|WastedGPUHours\n"
	                          "big|alice|2026-11-29T11:30:00|N/A|gh200-[1-2]|AllPodsRunning|"
	                          "33600|0.000\n"
	                          "wait|team-a|N/A|N/A|None assigned|Resources|0|0.000\n");
	free(text);
	text = print_sacct("JobName%3,State%5", false, 0);
	assert_string_equal(text, "Jo+ State\ndo+ TIME+\nbig RUNN+\nwa+ PEND+\n");
	free(text);
	assert_int_equal(tj_sacct_parse_format("JobName,Nope", &f, err, sizeof(err)), -EINVAL);
	assert_string_equal(err,
	                    "--format: 'Nope' is not a field (JobID, JobName, Partition, User, "
	                    "State, ExitCode, Start, End, Elapsed, NNodes, NodeList, Restarts, "
	                    "Reason, GPUSeconds, GPUHours, WastedGPUHours)");
	assert_int_equal(tj_sacct_parse_format("State%0", &f, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--format: 'State%0' needs a width from 1 to 1000");
	assert_int_equal(tj_sacct_parse_format("State%x", &f, err, sizeof(err)), -EINVAL);
	assert_int_equal(tj_sacct_parse_format("", &f, err, sizeof(err)), -EINVAL);
}

static void test_table(void **state)
{
	struct tj_table *t = tj_table_new(2);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	(void)state;
	assert_null(tj_table_new(0));
	assert_null(tj_table_new(33));
	assert_non_null(t);
	tj_table_align_right(t, 1);
	assert_int_equal(tj_table_add(t, "A"), 0);
	assert_int_equal(tj_table_add(t, "NUMBER"), 0);
	assert_int_equal(tj_table_add(t, "long cell"), 0);
	assert_int_equal(tj_table_add(t, "7"), 0);
	assert_int_equal(tj_table_add(t, NULL), 0); /* an incomplete last row */
	tj_table_print(t, out, false);
	tj_table_print(t, out, true);
	fclose(out);
	assert_string_equal(text, "A         NUMBER\nlong cell      7\n\n"
	                          "A|NUMBER\nlong cell|7\n\n");
	free(text);
	tj_table_free(t);
	assert_null(tj_table_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_in_queue),
		cmocka_unit_test(test_durations_and_times),
		cmocka_unit_test(test_hostlists),
		cmocka_unit_test(test_parse_time),
		cmocka_unit_test(test_exit_codes_and_partitions),
		cmocka_unit_test(test_jobs_from_lists),
		cmocka_unit_test(test_squeue),
		cmocka_unit_test(test_sacct),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
