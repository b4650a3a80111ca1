/* The QOS part of an admission cycle's snapshot (controller/admission/admitter_qos.h): the running
 * gangs a queued job may preempt, read from the ledger with their tiers; the victims of
 * earlier cycles kept out of them and released at their stop, their preemptor waiting; and
 * the GPUs a namespace holds in a tier that limits them; and the fair share's usage, which
 * counts the running jobs' pods from the same ledger. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <uv.h>

#include "controller/admission/admitter_qos.h"
#include "controller/admission/admitter_share.h"
#include "controller/stores.h"
#include "fixtures.h"
#include "idle_reflector.h"

#define NOW 1795953600 /* 2026-11-29T12:00:00Z */

static struct tj_kv qos_gh200_labels[] = { { "nvidia.com/gpu.product", "GH200" } };
static struct tj_gpu_class classes[] = {
	{ .name = "gh200",
	  .resource = "nvidia.com/gpu",
	  .node_labels = qos_gh200_labels,
	  .n_node_labels = 1 },
};
static struct tj_admission_policy builtin_tiers = { .enabled = true };
static const struct tj_config config = { .classes = classes,
	                                 .n_classes = 1,
	                                 .admission = &builtin_tiers };

struct fixture {
	uv_loop_t loop;
	struct tj_informers informers;
	struct tj_store *entries, *preemptions;
	struct tj_ledger *ledger;
	struct tj_eligibility *eligibility;
};

static void put_node(struct fixture *f, const char *name)
{
	char text[1024];
	void *node;
	cJSON *obj;

	snprintf(text, sizeof(text),
	         "{'metadata':{'name':'%s','labels':{'nvidia.com/gpu.product':'GH200'}},"
	         "'spec':{},'status':{'allocatable':{'cpu':'72','memory':'480Gi','pods':'110',"
	         "'nvidia.com/gpu':'4'},'conditions':[{'type':'Ready','status':'True'}]}}",
	         name);
	obj = jlit(text);
	assert_int_equal(tj_node_project(obj, &node), 0);
	cJSON_Delete(obj);
	assert_int_equal(tj_store_upsert(idle_reflector_store(f->informers.nodes), node, NULL), 0);
	tj_ledger_node_changed(f->ledger, NULL, node);
}

/* A running TrainJob ns/name of tier qos (NULL: its namespace's default), started at
 * start, with a pod of 4 GPUs on node; status_more goes into its status. */
static void put_running(struct fixture *f, const char *ns, const char *name, const char *qos,
                        const char *node, const char *status_more)
{
	char text[2048], ann[128] = "";
	void *obj_out;
	cJSON *obj;

	if (qos)
		snprintf(ann, sizeof(ann), ",'annotations':{'trainjob.flame.dev/qos':'%s'}", qos);
	snprintf(text, sizeof(text),
	         "{'metadata':{'namespace':'%s','name':'%s','uid':'uid-%s'%s},"
	         "'spec':{'runtimeRef':{'name':'torch-gh200'}},"
	         "'status':{'state':'Running','startTime':'2026-11-29T11:00:00Z'%s}}",
	         ns, name, name, ann, status_more ? status_more : "");
	obj = jlit(text);
	assert_int_equal(tj_trainjob_store_project(obj, &obj_out), 0);
	cJSON_Delete(obj);
	assert_int_equal(
	        tj_store_upsert(idle_reflector_store(f->informers.trainjobs), obj_out, NULL), 0);
	snprintf(text, sizeof(text),
	         "{'metadata':{'namespace':'%s','name':'%s-0','uid':'p-%s',"
	         "'labels':{'trainer.kubeflow.org/trainjob-name':'%s'},"
	         "'ownerReferences':[{'controller':true,'uid':'uid-%s','kind':'TrainJob',"
	         "'name':'%s','apiVersion':'trainer.kubeflow.org/v1alpha1'}]},"
	         "'spec':{'nodeName':'%s','terminationGracePeriodSeconds':30,"
	         "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}]},"
	         "'status':{'phase':'Running'}}",
	         ns, name, name, name, name, name, node);
	obj = jlit(text);
	assert_int_equal(tj_pod_project(obj, &obj_out), 0);
	cJSON_Delete(obj);
	assert_int_equal(tj_store_upsert(idle_reflector_store(f->informers.pods), obj_out, NULL),
	                 0);
	tj_ledger_touch_pod(f->ledger, obj_out);
}

/* A rank pod ns/<job>-<rank> (rank > 0: put_running's is <job>-0) of the running TrainJob ns/job,
 * of attempt 0, with 4 GPUs on node, in phase ("Running", "Succeeded"). */
static void put_rank(struct fixture *f, const char *ns, const char *job, int rank, const char *node,
                     const char *phase)
{
	char text[2048];
	void *obj_out;
	cJSON *obj;

	snprintf(text, sizeof(text),
	         "{'metadata':{'namespace':'%s','name':'%s-%d','uid':'p-%s-%d',"
	         "'labels':{'trainer.kubeflow.org/trainjob-name':'%s',"
	         "'trainjob.flame.dev/rank':'%d','trainjob.flame.dev/attempt':'0'},"
	         "'ownerReferences':[{'controller':true,'uid':'uid-%s','kind':'TrainJob',"
	         "'name':'%s','apiVersion':'trainer.kubeflow.org/v1alpha1'}]},"
	         "'spec':{'nodeName':'%s','terminationGracePeriodSeconds':30,"
	         "'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}]},"
	         "'status':{'phase':'%s'}}",
	         ns, job, rank, job, rank, job, rank, job, job, node, phase);
	obj = jlit(text);
	assert_int_equal(tj_pod_project(obj, &obj_out), 0);
	cJSON_Delete(obj);
	assert_int_equal(tj_store_upsert(idle_reflector_store(f->informers.pods), obj_out, NULL),
	                 0);
	tj_ledger_touch_pod(f->ledger, obj_out);
}

/* The TrainJob ns/name of put_running back in the queue after a preemption (its start
 * cleared), its pod left as it was. */
static void put_queued(struct fixture *f, const char *ns, const char *name)
{
	char text[1024];
	void *obj_out;
	cJSON *obj;

	snprintf(text, sizeof(text),
	         "{'metadata':{'namespace':'%s','name':'%s','uid':'uid-%s',"
	         "'annotations':{'trainjob.flame.dev/qos':'low'}},"
	         "'spec':{'runtimeRef':{'name':'torch-gh200'}},"
	         "'status':{'state':'Queued','reason':'Preempted'}}",
	         ns, name, name);
	obj = jlit(text);
	assert_int_equal(tj_trainjob_store_project(obj, &obj_out), 0);
	cJSON_Delete(obj);
	assert_int_equal(
	        tj_store_upsert(idle_reflector_store(f->informers.trainjobs), obj_out, NULL), 0);
}

/* A waiting job team-a/name of one 4-GPU pod, of tier qos (its index), that may preempt the
 * tiers of preempts. */
static void put_waiting(struct fixture *f, const char *name, unsigned qos, uint32_t preempts)
{
	struct tj_admitter_entry *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	snprintf(e->key, sizeof(e->key), "team-a/%s", name);
	snprintf(e->namespace, sizeof(e->namespace), "team-a");
	snprintf(e->gpu_class, sizeof(e->gpu_class), "gh200");
	e->state = TJ_ADMITTER_WAITING;
	e->rank = SIZE_MAX;
	e->num_nodes = e->num_pods = 1;
	e->request = (struct tj_admission_resources){ 4, 0, 0, 1 };
	e->creation_time = NOW - 60;
	e->qos = qos;
	e->preempts = preempts;
	assert_int_equal(tj_store_upsert(f->entries, e, NULL), 0);
}

static void setup(struct fixture *f)
{
	*f = (struct fixture){ 0 };
	assert_int_equal(uv_loop_init(&f->loop), 0);
	assert_int_equal(idle_reflector_new(&f->loop, "nodes", tj_node_project, &tj_node_store_ops,
	                                    &f->informers.nodes),
	                 0);
	assert_int_equal(idle_reflector_new(&f->loop, "pods", tj_pod_project, &tj_pod_store_ops,
	                                    &f->informers.pods),
	                 0);
	assert_int_equal(idle_reflector_new(&f->loop, "trainjobs", tj_trainjob_store_project,
	                                    &tj_trainjob_store_ops, &f->informers.trainjobs),
	                 0);
	assert_int_equal(tj_store_new(&tj_admitter_entry_ops, &f->entries), 0);
	assert_int_equal(tj_store_new(&tj_admitter_preemption_ops, &f->preemptions), 0);
	assert_int_equal(tj_ledger_new(&f->ledger), 0);
	assert_int_equal(tj_eligibility_new(&f->eligibility), 0);
	put_node(f, "gh-1");
	put_node(f, "gh-2");
	put_node(f, "gh-3");
}

static void teardown(struct fixture *f)
{
	tj_ledger_free(f->ledger);
	tj_eligibility_free(f->eligibility);
	tj_store_free(f->entries);
	tj_store_free(f->preemptions);
	tj_reflector_free(f->informers.nodes);
	tj_reflector_free(f->informers.pods);
	tj_reflector_free(f->informers.trainjobs);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
}

static struct tj_admitter_source source(struct fixture *f, const struct tj_config *c)
{
	return (struct tj_admitter_source){ .config = c,
		                            .informers = &f->informers,
		                            .entries = f->entries,
		                            .ledger = f->ledger,
		                            .eligibility = f->eligibility,
		                            .stamp = 1,
		                            .preemptions = f->preemptions };
}

static const struct tj_admission_release *release_on(const struct tj_admitter_snapshot *s,
                                                     const char *node)
{
	for (size_t i = 0; i < s->n_releases; i++)
		if (strcmp(s->nodes[s->releases[i].node].name, node) == 0)
			return &s->releases[i];
	return NULL;
}

/* A normal job that may preempt low sees the low gang, not the normal one; once a cycle
 * chose the low gang, it is no candidate, its node frees at its stop, and the job that
 * preempts it waits for it, given the node it chose; a victim preempted by its status alone
 * (a new leader) too, without the node. */
static void test_running_gangs_and_the_victims_on_their_way_out(void **state)
{
	struct fixture f;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;
	struct tj_admission_result res = { 0 };
	struct tj_admission_decision d = { 0 };
	size_t victim = 0, claimed;

	(void)state;
	setup(&f);
	src = source(&f, &config);
	put_running(&f, "team-b", "scav", "low", "gh-2", NULL);
	put_running(&f, "team-c", "run", NULL, "gh-1", NULL);
	put_waiting(&f, "urgent", 0, 1u << 1);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW, 1000), 0);
	assert_int_equal(s.n_running, 1);
	assert_string_equal(s.running[0].key, "team-b/scav");
	assert_int_equal(s.running[0].qos, 1);
	assert_int_equal(s.running[0].tier, -1000);
	assert_int_equal(s.running[0].grace, 30);
	assert_int_equal(s.running[0].start, NOW - 3600);
	assert_int_equal(s.running[0].n_holds, 1);
	assert_string_equal(s.nodes[s.running[0].holds[0].node].name, "gh-2");
	assert_int_equal(s.running[0].holds[0].resources.gpus, 4);
	assert_false(s.jobs[0].preempting);
	assert_ptr_equal(s.input.running, s.running);

	/* The cycle chooses it: recorded, stopping 30 s on; the job will take gh-2. */
	d.victims = &victim;
	d.n_victims = 1;
	d.claimed = &claimed;
	d.n_claimed = 1;
	claimed = s.running[0].holds[0].node;
	res.decisions = &d;
	res.n_decisions = 1;
	assert_int_equal(tj_admitter_preemptions_take(&src, &s, &res, NOW, NULL, NULL), 0);
	assert_int_equal(tj_store_len(f.preemptions), 1);
	tj_admitter_snapshot_clear(&s);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW + 1, 2000), 0);
	assert_int_equal(s.n_running, 0);
	assert_true(s.jobs[0].preempting);
	assert_non_null(release_on(&s, "gh-2"));
	assert_int_equal(release_on(&s, "gh-2")->at, NOW + 30);
	assert_int_equal(s.jobs[0].n_claimed, 1);
	assert_string_equal(s.nodes[s.jobs[0].claimed[0]].name, "gh-2");
	tj_admitter_snapshot_clear(&s);

	/* Stopped and queued again before the cache shows its pod gone: the pod still gives
	 * gh-2 back at the stop. */
	put_queued(&f, "team-b", "scav");
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW + 31, 2500), 0);
	assert_non_null(release_on(&s, "gh-2"));
	assert_int_equal(release_on(&s, "gh-2")->at, NOW + 30);
	assert_true(s.jobs[0].preempting);
	tj_admitter_snapshot_clear(&s);

	/* Past the record's time it is forgotten; the victim's status still says it stops. */
	put_running(&f, "team-b", "scav", "low", "gh-2",
	            ",'preemption':{'stopAt':'2026-11-29T12:00:30Z','by':'team-a/urgent'}");
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW + 120, 3000), 0);
	assert_int_equal(tj_store_len(f.preemptions), 0);
	assert_int_equal(s.n_running, 0);
	assert_true(s.jobs[0].preempting);
	assert_null(s.jobs[0].claimed); /* the records alone kept them */
	tj_admitter_snapshot_clear(&s);
	teardown(&f);
}

/* The pods of a TrainJob deleted and created again under its name (their owner is the uid
 * of the first) are no running gang of the second, which a preemption could stop: the
 * snapshot offers no victim. */
static void test_pods_of_an_earlier_job_of_the_name_are_no_victims(void **state)
{
	struct fixture f;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;
	void *obj_out;
	cJSON *obj;

	(void)state;
	setup(&f);
	src = source(&f, &config);
	put_running(&f, "team-b", "scav", "low", "gh-2", NULL);
	put_waiting(&f, "urgent", 0, 1u << 1);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW, 1000), 0);
	assert_int_equal(s.n_running, 1);
	tj_admitter_snapshot_clear(&s);

	obj = jlit("{'metadata':{'namespace':'team-b','name':'scav','uid':'uid-scav-again',"
	           "'annotations':{'trainjob.flame.dev/qos':'low'}},"
	           "'spec':{'runtimeRef':{'name':'torch-gh200'}},"
	           "'status':{'state':'Running','startTime':'2026-11-29T11:30:00Z'}}");
	assert_int_equal(tj_trainjob_store_project(obj, &obj_out), 0);
	cJSON_Delete(obj);
	assert_int_equal(
	        tj_store_upsert(idle_reflector_store(f.informers.trainjobs), obj_out, NULL), 0);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW, 2000), 0);
	assert_int_equal(s.n_running, 0);
	assert_int_equal(s.nodes[1].used.gpus, 4); /* the pod still holds gh-2 */
	tj_admitter_snapshot_clear(&s);
	teardown(&f);
}

/* A running gang holds its nodes until its walltime ends and the grace after it; once one of
 * its ranks succeeded it is ending, and the nodes its other ranks hold count as free from now
 * (no job that would run past now backfills there); a rank that failed says nothing. */
static void test_a_gang_with_a_rank_done_releases_now(void **state)
{
	struct fixture f;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;

	(void)state;
	setup(&f);
	src = source(&f, &config);
	put_running(&f, "team-a", "train", NULL, "gh-3", ",'deadline':'2026-11-29T13:00:00Z'");
	put_rank(&f, "team-a", "train", 1, "gh-1", "Running");
	put_rank(&f, "team-a", "train", 2, "gh-2", "Running");
	put_waiting(&f, "next", 0, 0);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW, 1000), 0);
	assert_non_null(release_on(&s, "gh-2"));
	assert_int_equal(release_on(&s, "gh-2")->at, NOW + 3600 + 30);
	tj_admitter_snapshot_clear(&s);

	put_rank(&f, "team-a", "train", 2, "gh-2", "Failed");
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW + 10, 1500), 0);
	assert_non_null(release_on(&s, "gh-1"));
	assert_int_equal(release_on(&s, "gh-1")->at, NOW + 3600 + 30);
	tj_admitter_snapshot_clear(&s);

	put_rank(&f, "team-a", "train", 2, "gh-2", "Succeeded");
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW + 20, 2000), 0);
	assert_null(release_on(&s, "gh-2")); /* a pod that ended holds nothing */
	assert_non_null(release_on(&s, "gh-1"));
	assert_int_equal(release_on(&s, "gh-1")->at, NOW + 20);
	assert_non_null(release_on(&s, "gh-3"));
	assert_int_equal(release_on(&s, "gh-3")->at, NOW + 20);
	tj_admitter_snapshot_clear(&s);
	teardown(&f);
}

/* A tier's maxGPUsPerNamespace: the queued job of that tier points at its namespace's limit,
 * which counts the namespace's running pods of the tier (not those of another tier or
 * namespace); a tier without one gives no limit. */
static void test_tier_limits_count_the_namespace_in_the_tier(void **state)
{
	static struct tj_qos_tier tiers[] = {
		{ .name = (char *)"normal", .priority = 0, .max_gpus_per_namespace = 8 },
		{ .name = (char *)"low", .priority = -1000 },
	};
	static char *allowed[] = { (char *)"normal", (char *)"low" };
	static struct tj_qos_namespace rules[] = {
		{ .namespace = (char *)"*",
		  .allowed = allowed,
		  .n_allowed = 2,
		  .default_tier = (char *)"normal",
		  .share = 1 },
	};
	static struct tj_admission_policy policy = { .enabled = true,
		                                     .tiers = tiers,
		                                     .n_tiers = 2,
		                                     .qos_namespaces = rules,
		                                     .n_qos_namespaces = 1 };
	static const struct tj_config limited = { .classes = classes,
		                                  .n_classes = 1,
		                                  .admission = &policy };
	struct fixture f;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;

	(void)state;
	setup(&f);
	src = source(&f, &limited);
	put_running(&f, "team-a", "mine", NULL, "gh-1", NULL);
	put_running(&f, "team-a", "scav", "low", "gh-2", NULL);
	put_running(&f, "team-b", "theirs", NULL, "gh-3", NULL);
	put_waiting(&f, "next", 0, 0);
	put_waiting(&f, "cheap", 1, 0);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW, 1000), 0);
	assert_int_equal(s.n_tier_limits, 1);
	assert_string_equal(s.tier_limits[0].namespace, "team-a");
	assert_string_equal(s.tier_limits[0].tier, "normal");
	assert_int_equal(s.tier_limits[0].max_gpus, 8);
	assert_int_equal(s.tier_limits[0].used, 4);
	for (size_t k = 0; k < s.n_jobs; k++)
		assert_int_equal(s.jobs[k].tier_limit,
		                 strcmp(s.jobs[k].key, "team-a/next") == 0 ? 1 : 0);
	assert_ptr_equal(s.input.tier_limits, s.tier_limits);
	tj_admitter_snapshot_clear(&s);
	teardown(&f);
}

/* The fair share (controller/admission/admitter_share.h) counts a running job as it runs: what its
 * pods hold since its status last counted them, beside what the status counted; a
 * namespace that only waits has used nothing. (No half-life in this config: no decay.) */
static void test_fair_share_counts_running_jobs(void **state)
{
	struct fixture f;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;
	struct tj_admitter_shares fs = { 0 };
	const struct tj_fair_share_account *a;

	(void)state;
	setup(&f);
	src = source(&f, &config);
	/* Started at 11:00, nothing counted yet: 4 GPUs for an hour. */
	put_running(&f, "team-b", "scav", "low", "gh-1", NULL);
	/* 7200 counted up to 11:30, then 4 GPUs for half an hour. */
	put_running(&f, "team-c", "run", NULL, "gh-2",
	            ",'gpuSeconds':7200,'gpuSecondsCountedUntil':'2026-11-29T11:30:00Z'");
	put_waiting(&f, "next", 0, 0);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, NOW, 1000), 0);
	assert_int_equal(tj_admitter_shares_apply(&fs, &src, &s, NOW), 0);
	assert_non_null(a = tj_admitter_shares_find(&fs, "team-b"));
	assert_true(a->usage > 14400 - 1e-6 && a->usage < 14400 + 1e-6);
	assert_non_null(a = tj_admitter_shares_find(&fs, "team-c"));
	assert_true(a->usage > 14400 - 1e-6 && a->usage < 14400 + 1e-6);
	assert_non_null(a = tj_admitter_shares_find(&fs, "team-a"));
	assert_true(a->usage == 0 && a->points == TJ_FAIR_SHARE_WEIGHT);
	assert_int_equal(s.jobs[0].fair_share, TJ_FAIR_SHARE_WEIGHT);
	tj_admitter_shares_clear(&fs);
	tj_admitter_snapshot_clear(&s);
	teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_running_gangs_and_the_victims_on_their_way_out),
		cmocka_unit_test(test_pods_of_an_earlier_job_of_the_name_are_no_victims),
		cmocka_unit_test(test_a_gang_with_a_rank_done_releases_now),
		cmocka_unit_test(test_tier_limits_count_the_namespace_in_the_tier),
		cmocka_unit_test(test_fair_share_counts_running_jobs),
	};
	return cmocka_run_group_tests_name("admitter_qos", tests, NULL, NULL);
}
