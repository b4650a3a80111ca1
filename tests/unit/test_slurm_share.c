/* The Slurm views of the fair share: cli/sshare_table.h and cli/sprio_table.h (what kubectl
 * sshare and sprio print), and cli/cluster_config.h (the controller's config as they read
 * it from its ConfigMap). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/cluster_config.h"
#include "cli/slurm_jobs.h"
#include "cli/sprio_table.h"
#include "cli/sshare_table.h"

#include "fixtures.h"

#define NOW 1795953600 /* 2026-11-29T12:00:00Z */

/* team-a has a share of 2, team-idle (no TrainJobs) 3, the others 1; usage counts half
 * after an hour. */
static const char *const config_yaml =
        "gpuClasses: []\n"
        "admission:\n"
        "  namespaces:\n"
        "    - {namespace: team-a, allowed: [normal, low], default: normal, share: 2}\n"
        "    - {namespace: team-idle, allowed: [normal], default: normal, share: 3}\n"
        "    - {namespace: \"*\", allowed: [normal, low], default: normal}\n"
        "  fairShareHalfLife: 1h\n";

static struct tj_config *load_config(void)
{
	cJSON *cm = jlit("{'metadata':{'name':'c','namespace':'ns'},'data':{}}");
	struct tj_config *config = NULL;
	char err[256] = "";

	cJSON_AddStringToObject(cJSON_GetObjectItem(cm, "data"), TJ_CLUSTER_CONFIG_KEY,
	                        config_yaml);
	if (tj_cluster_config_from_configmap(cm, "ConfigMap ns/c", &config, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	cJSON_Delete(cm);
	return config;
}

#define JOB(ns, name, created, runtime, meta, status)                                              \
	"{'metadata':{'name':'" name "','namespace':'" ns "','uid':'u-" name                       \
	"','creationTimestamp':'2026-11-29T" created "Z'" meta                                     \
	"},'spec':{'runtimeRef':{'name':'" runtime "'},'trainer':{'numNodes':2}},'status':" status \
	"}"
#define QUEUED "{'state':'Queued','reason':'Resources'}"
#define QOS(t) ",'annotations':{'trainjob.flame.dev/qos':'" t "'}"

/* team-a ran 7200 GPU-seconds from 10:00 to 12:00 (3600 once decayed from 11:00) and queues
 * wait-a, then urgent-a that puts itself first, and vip in a tier it may not use; team-b ran
 * 7200 GPU-seconds counted at 11:00 (3600 decayed) and queues wait-b in the low tier; team-c
 * used nothing and queues one job on GH200 and one on H100; team-d's only jobs are a held
 * one and one that failed without using a GPU. */
static const char *const trainjobs[] = {
	JOB("team-a", "ran", "09:00:00", "torch-gh200", "",
	    "{'state':'Complete','reason':'AllPodsSucceeded','startTime':'2026-11-29T10:00:00Z',"
	    "'gpuSeconds':7200,'gpuSecondsCountedUntil':'2026-11-29T12:00:00Z'}"),
	JOB("team-a", "wait-a", "11:00:00", "torch-gh200", "", QUEUED),
	JOB("team-a", "urgent-a", "11:30:00", "torch-gh200",
	    ",'annotations':{'trainjob.flame.dev/priority':'10'}", QUEUED),
	JOB("team-a", "vip", "11:40:00", "torch-gh200", QOS("high"), "{}"),
	JOB("team-b", "ran-b", "10:30:00", "torch-gh200", "",
	    "{'state':'Complete','reason':'AllPodsSucceeded','startTime':'2026-11-29T11:00:00Z',"
	    "'gpuSeconds':7200}"),
	JOB("team-b", "wait-b", "10:00:00", "torch-gh200", QOS("low"), QUEUED),
	JOB("team-c", "new", "11:59:00", "torch-gh200", "", "{}"),
	JOB("team-c", "h100", "11:00:00", "torch-h100", "", QUEUED),
	JOB("team-d", "held", "09:30:00", "torch-gh200", "",
	    "{'state':'Queued','reason':'JobHeldUser'}"),
	JOB("team-d", "old", "08:00:00", "torch-gh200", "",
	    "{'state':'Failed','reason':'InvalidSpec'}"),
};

#define N_TRAINJOBS (sizeof(trainjobs) / sizeof(trainjobs[0]))

/* The TrainJobs as a list of every namespace returns them, without pods. */
static void load_jobs(struct tj_slurm_jobs *jobs)
{
	cJSON *list = cJSON_CreateArray();

	for (size_t i = 0; i < N_TRAINJOBS; i++)
		cJSON_AddItemToArray(list, jlit(trainjobs[i]));
	assert_int_equal(tj_slurm_jobs_from_lists(list, NULL, NOW, jobs), 0);
	assert_int_equal(jobs->n, N_TRAINJOBS);
	cJSON_Delete(list);
}

static void test_sshare_rows(void **state)
{
	static const struct {
		const char *account;
		double raw_shares, norm_shares, raw_usage, effective_usage, fair_share;
		bool counted;
	} want[] = {
		{ "team-a", 2, 0.5, 3600, 0.5, 0.5, true },
		{ "team-b", 1, 0.25, 3600, 0.5, 0.25, true },
		{ "team-c", 1, 0.25, 0, 0, 1, true },
		/* Neither waits nor used GPUs: what they would get by queueing. */
		{ "team-d", 1, 1.0 / 5, 0, 0, 1, false },
		{ "team-idle", 3, 3.0 / 7, 0, 0, 1, false },
	};
	struct tj_config *config = load_config();
	struct tj_slurm_jobs jobs;
	struct tj_sshare_rows rows;

	(void)state;
	load_jobs(&jobs);
	assert_int_equal(tj_sshare_rows(&jobs, tj_config_admission(config), NOW, &rows), 0);
	assert_int_equal(rows.n, 5);
	for (size_t i = 0; i < 5; i++) {
		const struct tj_sshare_row *r = &rows.rows[i];

		print_message("#   %s\n", want[i].account);
		assert_string_equal(r->account, want[i].account);
		assert_true(fabs(r->raw_shares - want[i].raw_shares) < 1e-9);
		assert_true(fabs(r->norm_shares - want[i].norm_shares) < 1e-9);
		assert_true(fabs(r->raw_usage - want[i].raw_usage) < 1e-6);
		assert_true(fabs(r->effective_usage - want[i].effective_usage) < 1e-9);
		assert_true(fabs(r->fair_share - want[i].fair_share) < 1e-9);
		assert_int_equal(r->counted, want[i].counted);
	}
	tj_sshare_rows_clear(&rows);
	assert_int_equal(rows.n, 0);
	tj_slurm_jobs_clear(&jobs);
	tj_config_free(config);
}

/* A job that runs counts as it runs: its two pods' 8 GPUs since its status counted last
 * (11:50), 600 s to 12:00, 4800 GPU-seconds held around 11:55, so 4800 x 2^(-5/60) with
 * the half-life of an hour; beside its 3600 counted from 10:00 to 11:50 (around 10:55). */
static void test_sshare_counts_a_running_job(void **state)
{
	cJSON *list = jlit("[" JOB("team-e", "run", "09:00:00", "torch-gh200", "",
	                           "{'state':'Running','startTime':'2026-11-29T10:00:00Z',"
	                           "'gpuSeconds':3600,'gpuSecondsCountedUntil':'2026-11-29T11:50:"
	                           "00Z'}") "]");
	cJSON *pods = jlit(
	        "[{'metadata':{'name':'run-node-0-0','namespace':'team-e','uid':'p0','labels':{"
	        "'trainer.kubeflow.org/trainjob-name':'run'},'ownerReferences':[{'uid':'u-run',"
	        "'controller':true}]},'spec':{'nodeName':'gh200-1','containers':[{'name':'node',"
	        "'resources':{'limits':{'nvidia.com/gpu':'4'}}}]},'status':{'phase':'Running',"
	        "'startTime':'2026-11-29T10:00:00Z'}},"
	        "{'metadata':{'name':'run-node-0-1','namespace':'team-e','uid':'p1','labels':{"
	        "'trainer.kubeflow.org/trainjob-name':'run'},'ownerReferences':[{'uid':'u-run',"
	        "'controller':true}]},'spec':{'nodeName':'gh200-2','containers':[{'name':'node',"
	        "'resources':{'limits':{'nvidia.com/gpu':'4'}}}]},'status':{'phase':'Running',"
	        "'startTime':'2026-11-29T10:00:00Z'}}]");
	struct tj_config *config = load_config();
	struct tj_slurm_jobs jobs;
	struct tj_fair_share_account *accounts = NULL;
	size_t n = 0;
	double want = 4800 * exp2(-5.0 / 60) + 3600 * exp2(-65.0 / 60);

	(void)state;
	assert_int_equal(tj_slurm_jobs_from_lists(list, pods, NOW, &jobs), 0);
	assert_int_equal(tj_sshare_accounts(&jobs, tj_config_admission(config), NOW, &accounts, &n),
	                 0);
	assert_int_equal(n, 1);
	assert_string_equal(accounts[0].namespace, "team-e");
	assert_true(fabs(accounts[0].usage - want) < 1e-6);
	tj_fair_share_accounts_free(accounts, n);
	tj_slurm_jobs_clear(&jobs);
	cJSON_Delete(list);
	cJSON_Delete(pods);
	tj_config_free(config);
}

/* What the command prints for namespace (NULL: -A), with the config or the defaults. */
static char *print(bool sprio, const char *namespace, bool with_config)
{
	struct tj_config *config = with_config ? load_config() : NULL;
	struct tj_slurm_jobs jobs;
	struct tj_sshare_rows share;
	struct tj_sprio_rows prio;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	load_jobs(&jobs);
	if (sprio) {
		assert_int_equal(tj_sprio_rows(&jobs, tj_config_admission(config), NOW, &prio), 0);
		assert_int_equal(tj_sprio_print(out, &prio, namespace), 0);
		tj_sprio_rows_clear(&prio);
	} else {
		assert_int_equal(tj_sshare_rows(&jobs, tj_config_admission(config), NOW, &share),
		                 0);
		assert_int_equal(tj_sshare_print(out, &share, namespace), 0);
		tj_sshare_rows_clear(&share);
	}
	fclose(out);
	tj_slurm_jobs_clear(&jobs);
	tj_config_free(config);
	return text;
}

static void test_sshare(void **state)
{
	char *text;

	(void)state;
	text = print(false, NULL, true);
	assert_string_equal(text,
	                    "Account   RawShares NormShares RawUsage EffectvUsage FairShare\n"
	                    "team-a            2   0.500000     3600     0.500000  0.500000\n"
	                    "team-b            1   0.250000     3600     0.500000  0.250000\n"
	                    "team-c            1   0.250000        0     0.000000  1.000000\n"
	                    "team-d            1   0.200000        0     0.000000  1.000000\n"
	                    "team-idle         3   0.428571        0     0.000000  1.000000\n");
	free(text);
	text = print(false, "team-b", true);
	assert_string_equal(text, "Account RawShares NormShares RawUsage EffectvUsage FairShare\n"
	                          "team-b          1   0.250000     3600     0.500000  0.250000\n");
	free(text);
	/* The built-in defaults: every share 1 and a half-life of 7 days, over which the hour
	 * since each run's middle leaves 7200 x 2^(-1/168) of its GPU-seconds; half the usage
	 * on a third of the shares is a factor of 2^(-1.5). No row for team-idle. */
	text = print(false, NULL, false);
	assert_string_equal(text, "Account RawShares NormShares RawUsage EffectvUsage FairShare\n"
	                          "team-a          1   0.333333     7170     0.500000  0.353553\n"
	                          "team-b          1   0.333333     7170     0.500000  0.353553\n"
	                          "team-c          1   0.333333        0     0.000000  1.000000\n"
	                          "team-d          1   0.250000        0     0.000000  1.000000\n");
	free(text);
}

static void test_sprio(void **state)
{
	char *text;

	(void)state;
	/* gh200: team-c's new job first (it used nothing), then team-a's two with urgent-a in
	 * wait-a's place in time (and its age), then team-b's in the low tier, last whatever
	 * its points; h100 apart. vip (a tier team-a may not use) and the held job have no
	 * row. */
	text = print(true, NULL, true);
	assert_string_equal(text,
	                    "JOBID    PARTITION ACCOUNT QOS     TIER PRIORITY FAIRSHARE AGE OWN\n"
	                    "new      gh200     team-c  normal     0    10000     10000   0   -\n"
	                    "urgent-a gh200     team-a  normal     0     5005      5000   5  10\n"
	                    "wait-a   gh200     team-a  normal     0     5002      5000   2   -\n"
	                    "wait-b   gh200     team-b  low    -1000     2511      2500  11   -\n"
	                    "h100     h100      team-c  normal     0    10005     10000   5   -\n");
	free(text);
	text = print(true, "team-a", true);
	assert_string_equal(text,
	                    "JOBID    PARTITION ACCOUNT QOS    TIER PRIORITY FAIRSHARE AGE OWN\n"
	                    "urgent-a gh200     team-a  normal    0     5005      5000   5  10\n"
	                    "wait-a   gh200     team-a  normal    0     5002      5000   2   -\n");
	free(text);
	text = print(true, "team-d", true);
	assert_string_equal(text, "JOBID PARTITION ACCOUNT QOS TIER PRIORITY FAIRSHARE AGE OWN\n");
	free(text);
}

static void test_config_map(void **state)
{
	char ns[TJ_NAME_MAX], name[TJ_NAME_MAX], err[256] = "";
	struct tj_config *config = NULL;
	cJSON *cm;

	(void)state;
	assert_int_equal(tj_cluster_config_ref(TJ_CLUSTER_CONFIG_DEFAULT, ns, name), 0);
	assert_string_equal(ns, "trainjob-system");
	assert_string_equal(name, "trainjob-controller-config");
	static const char *const bad[] = { "", "name", "/name", "ns/", "a/b/c" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (tj_cluster_config_ref(bad[i], ns, name) != -EINVAL)
			fail_msg("'%s' is not NAMESPACE/NAME", bad[i]);

	cm = jlit("{'data':{'other.yaml':'x: 1'}}");
	assert_int_equal(
	        tj_cluster_config_from_configmap(cm, "ConfigMap ns/c", &config, err, sizeof(err)),
	        -EINVAL);
	assert_string_equal(err, "ConfigMap ns/c has no key config.yaml");
	cJSON_Delete(cm);
	cm = jlit(
	        "{'data':{'config.yaml':'gpuClasses: []\nadmission: {fairShareHalfLife: soon}'}}");
	assert_int_equal(
	        tj_cluster_config_from_configmap(cm, "ConfigMap ns/c", &config, err, sizeof(err)),
	        -EINVAL);
	assert_string_equal(err, "ConfigMap ns/c:2: admission.fairShareHalfLife: \"soon\" is not a "
	                         "walltime (seconds, or d, h, m, s in that order, like 90m or "
	                         "1d12h) between 1s and 366d");
	assert_null(config);
	cJSON_Delete(cm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sshare_rows),
		cmocka_unit_test(test_sshare_counts_a_running_job),
		cmocka_unit_test(test_sshare),
		cmocka_unit_test(test_sprio),
		cmocka_unit_test(test_config_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
