#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/plan.h"
#include "reconcilers/render/render_step.h"
#include "reconcilers/steps.h"

#define NOW 1795953600 /* 2026-11-29T12:00:00Z */

/* ---- the graph, from a runtime's JobSet spec ---------------------------------------------- */

static void project(const char *spec_sq, struct tj_step_graph *g)
{
	cJSON *spec = jlit(spec_sq);

	assert_int_equal(tj_step_graph_from_json(spec, 64 * 1024, g), 0);
	cJSON_Delete(spec);
}

static void test_graph_projection(void **state)
{
	struct tj_step_graph g;

	(void)state;
	project("{'startupPolicy':{'startupPolicyOrder':'InOrder'},"
	        "'successPolicy':{'operator':'All','targetReplicatedJobs':['launcher']},"
	        "'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'a'},'spec':{}}]},"
	        "{'templates':[{'metadata':{'name':'b'},'spec':{}}]}],"
	        "'replicatedJobs':[{'name':'init','replicas':3,'template':{'metadata':{'labels':{"
	        "'trainer.kubeflow.org/trainjob-ancestor-step':'dataset-initializer'}},"
	        "'spec':{'template':{'metadata':{'labels':{'x':'pod'}},'spec':{'containers':[]}}}}}"
	        ","
	        "{'name':'node','dependsOn':[{'name':'init','status':'Complete'}],"
	        "'template':{'spec':{'template':{'spec':{}}}}},"
	        "{'name':'launcher','replicas':2,'dependsOn':[{'name':'node','status':'Ready'}],"
	        "'template':{'spec':{'parallelism':3,'completions':5,'template':{}}}}]}",
	        &g);
	assert_null(g.error);
	assert_int_equal(g.n, 3);
	assert_true(g.in_order);
	assert_false(g.success_any);
	assert_string_equal(g.steps[0].name, "init");
	assert_string_equal(g.steps[0].ancestor, "dataset-initializer");
	/* Kubeflow runs an initializer as one Job, whatever its replicas. */
	assert_int_equal(g.steps[0].replicas, 1);
	assert_int_equal(tj_step_pods(&g, 0, 4), 1);
	/* node keeps numNodes; launcher is 2 Jobs of 3 pods (parallelism below completions). */
	assert_int_equal(tj_step_pods(&g, 1, 4), 4);
	assert_int_equal(g.steps[2].replicas, 2);
	assert_int_equal(g.steps[2].pods_per_job, 3);
	assert_int_equal(tj_step_pods(&g, 2, 4), 6);
	assert_int_equal(g.steps[1].n_deps, 1);
	assert_int_equal(g.steps[1].deps[0].step, 0);
	assert_int_equal(g.steps[1].deps[0].need, TJ_STEP_NEED_COMPLETE);
	assert_int_equal(g.steps[2].deps[0].step, 1);
	assert_int_equal(g.steps[2].deps[0].need, TJ_STEP_NEED_READY);
	assert_false(g.steps[0].success_target);
	assert_false(g.steps[1].success_target);
	assert_true(g.steps[2].success_target);
	/* The Job template's labels go under the pod template's own. */
	assert_string_equal(g.steps[0].pod_template,
	                    "{\"metadata\":{\"labels\":{\"x\":\"pod\",\"trainer.kubeflow.org/"
	                    "trainjob-ancestor-step\":\"dataset-initializer\"}},\"spec\":{"
	                    "\"containers\":[]}}");
	assert_string_equal(g.claim_templates, "[{\"metadata\":{\"name\":\"a\"},\"spec\":{}},"
	                                       "{\"metadata\":{\"name\":\"b\"},\"spec\":{}}]");
	assert_int_equal(tj_step_graph_find(&g, "launcher"), 2);
	assert_int_equal(tj_step_graph_find(&g, "nope"), 3);
	tj_step_graph_clear(&g);
	/* A policy whose PVCs outlive the job marks its templates. */
	project("{'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'a'},'spec':{}}],"
	        "'retentionPolicy':{'whenDeleted':'Retain'}},{'templates':[{'metadata':{'name':"
	        "'b'},'spec':{}}],'retentionPolicy':{'whenDeleted':'Delete'}}],'replicatedJobs':[]"
	        "}",
	        &g);
	assert_string_equal(g.claim_templates,
	                    "[{\"metadata\":{\"name\":\"a\"},\"spec\":{},\"" TJ_CLAIM_RETAIN
	                    "\":true},{\"metadata\":{\"name\":\"b\"},\"spec\":{}}]");
	tj_step_graph_clear(&g);
	assert_null(g.steps);
}

static const struct {
	const char *spec;
	const char *error;
} bad_graphs[] = {
	{ "{'replicatedJobs':[{'name':'node','dependsOn':[{'name':'init','status':'Complete'}]},"
	  "{'name':'init'}]}",
	  "spec.template.spec.replicatedJobs[0].dependsOn: 'init' is not a replicated job listed "
	  "before node" },
	{ "{'replicatedJobs':[{'name':'init'},{'name':'node','dependsOn':[{'name':'init',"
	  "'status':'Started'}]}]}",
	  "spec.template.spec.replicatedJobs[1].dependsOn[init].status: must be Complete or "
	  "Ready" },
	{ "{'replicatedJobs':[{'name':'node'},{'name':'node'}]}",
	  "spec.template.spec.replicatedJobs[1].name: node is listed twice" },
	{ "{'replicatedJobs':[{'name':'node','replicas':0}]}",
	  "spec.template.spec.replicatedJobs[0] (node): replicas, parallelism and completions must "
	  "be integers of at most 4096 pods in all" },
	{ "{'replicatedJobs':[{'replicas':1}]}",
	  "spec.template.spec.replicatedJobs[0].name: must be a DNS label" },
};

/* The Job template's annotations go under the pod template's own, as its labels do, and a
 * groupName becomes JobSet's group-name label and annotation; a groupName that is no DNS
 * label is refused. */
static void test_job_metadata_and_group(void **state)
{
	struct tj_step_graph g;

	(void)state;
	project("{'replicatedJobs':[{'name':'node','groupName':'workers','template':{'metadata':{"
	        "'annotations':{'a':'job','b':'job'}},'spec':{'template':{'metadata':{"
	        "'annotations':{'b':'pod'}},'spec':{}}}}}]}",
	        &g);
	assert_null(g.error);
	assert_string_equal(g.steps[0].pod_template,
	                    "{\"metadata\":{\"annotations\":{\"b\":\"pod\",\"a\":\"job\","
	                    "\"jobset.sigs.k8s.io/group-name\":\"workers\"},\"labels\":{"
	                    "\"jobset.sigs.k8s.io/group-name\":\"workers\"}},\"spec\":{}}");
	tj_step_graph_clear(&g);
	project("{'replicatedJobs':[{'name':'node','groupName':'Not A Label','template':{}}]}", &g);
	assert_string_equal(g.error,
	                    "spec.template.spec.replicatedJobs[0].groupName: must be a DNS label");
	tj_step_graph_clear(&g);
}

static void test_graph_refused(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_graphs) / sizeof(bad_graphs[0]); i++) {
		struct tj_step_graph g;

		project(bad_graphs[i].spec, &g);
		assert_non_null(g.error);
		assert_string_equal(g.error, bad_graphs[i].error);
		tj_step_graph_clear(&g);
	}
}

static void test_pod_names(void **state)
{
	static const struct {
		const char *name;
		int rc;
		size_t step;
		int slot;
	} cases[] = {
		{ "vit-launcher-1-2-a0", 0, 1, 5 },
		{ "vit-launcher-0-0-a12", 0, 1, 0 },
		{ "vit-dataset-initializer-0-0-a0", 0, 0, 0 },
		{ "vit-node-0-1-a0", -ENOENT, 0, 0 },           /* a rank of node */
		{ "vit-launcher-2-0-a0", -ENOENT, 0, 0 },       /* job index past replicas */
		{ "vit-launcher-0-3-a0", -ENOENT, 0, 0 },       /* completion index past its pods */
		{ "vit-launcher-01-0-a0", -ENOENT, 0, 0 },      /* not a number JobSet writes */
		{ "vit-launcher-0-0-a", -ENOENT, 0, 0 },        /* no attempt */
		{ "vitx-launcher-0-0-a0", -ENOENT, 0, 0 },      /* another job */
		{ "vit-launcher-extra-0-0-a0", -ENOENT, 0, 0 }, /* another step */
	};
	struct tj_step_graph g;
	char buf[TJ_NAME_MAX];

	(void)state;
	project("{'replicatedJobs':[{'name':'dataset-initializer'},{'name':'launcher','replicas':2,"
	        "'template':{'spec':{'parallelism':3}}},{'name':'node'}]}",
	        &g);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t step = 99;
		int slot = -1;

		assert_int_equal(tj_step_of_pod(&g, "vit", cases[i].name, &step, &slot),
		                 cases[i].rc);
		if (cases[i].rc == 0) {
			assert_int_equal(step, cases[i].step);
			assert_int_equal(slot, cases[i].slot);
		}
	}
	tj_step_pod_name("vit", &g.steps[1], 5, 3, buf);
	assert_string_equal(buf, "vit-launcher-1-2-a3");
	tj_step_hostname("vit", &g.steps[1], 5, buf);
	assert_string_equal(buf, "vit-launcher-1-2");
	tj_step_graph_clear(&g);
}

/* ---- progress, order, success, jobsStatus -------------------------------------------------- */

static struct tj_pod pod_in(enum tj_pod_phase phase, bool ready, bool deleting)
{
	return (struct tj_pod){ .phase = phase,
		                .ready = ready,
		                .deletion_time = deleting ? NOW : 0 };
}

static void test_progress_and_order(void **state)
{
	struct tj_pod ok = pod_in(TJ_POD_SUCCEEDED, false, false);
	struct tj_pod run = pod_in(TJ_POD_RUNNING, false, false);
	struct tj_pod ready = pod_in(TJ_POD_RUNNING, true, false);
	struct tj_pod gone = pod_in(TJ_POD_RUNNING, true, true);
	struct tj_pod bad = pod_in(TJ_POD_FAILED, false, false);
	const struct tj_pod *init[1], *node[2];
	struct tj_step_progress prog[3];
	struct tj_step_graph g;
	char why[256];

	(void)state;
	project("{'replicatedJobs':[{'name':'init'},{'name':'node','dependsOn':[{'name':'init',"
	        "'status':'Complete'}]},{'name':'launcher','dependsOn':[{'name':'node','status':"
	        "'Ready'}]}]}",
	        &g);
	/* Nothing yet: init may start, node waits for it to be Complete. */
	init[0] = NULL;
	node[0] = node[1] = NULL;
	tj_step_progress(init, 1, &prog[0]);
	tj_step_progress(node, 2, &prog[1]);
	tj_step_progress(NULL, 0, &prog[2]);
	assert_true(tj_step_may_start(&g, 0, prog, why, sizeof(why)));
	assert_false(tj_step_may_start(&g, 1, prog, why, sizeof(why)));
	assert_string_equal(why, "init to be Complete (0 of 1 pods succeeded)");
	/* Running is not Complete. */
	init[0] = &ready;
	tj_step_progress(init, 1, &prog[0]);
	assert_int_equal(prog[0].ready, 1);
	assert_false(tj_step_may_start(&g, 1, prog, why, sizeof(why)));
	init[0] = &ok;
	tj_step_progress(init, 1, &prog[0]);
	assert_true(tj_step_complete(&prog[0]));
	assert_true(tj_step_may_start(&g, 1, prog, why, sizeof(why)));
	/* Ready: every pod Running and Ready; a pod being deleted is not. */
	node[0] = &ready;
	node[1] = &run;
	tj_step_progress(node, 2, &prog[1]);
	assert_false(tj_step_may_start(&g, 2, prog, why, sizeof(why)));
	assert_string_equal(why, "node to be Ready (1 of 2 pods ready)");
	node[1] = &gone;
	tj_step_progress(node, 2, &prog[1]);
	assert_int_equal(prog[1].exist, 1);
	assert_false(tj_step_may_start(&g, 2, prog, why, sizeof(why)));
	node[1] = &ready;
	tj_step_progress(node, 2, &prog[1]);
	assert_true(tj_step_may_start(&g, 2, prog, why, sizeof(why)));
	/* A failed pod is reported. */
	init[0] = &bad;
	tj_step_progress(init, 1, &prog[0]);
	assert_ptr_equal(prog[0].failed, &bad);
	tj_step_graph_clear(&g);

	/* InOrder: a step without dependsOn still waits for every earlier step to be Ready. */
	project("{'startupPolicy':{'startupPolicyOrder':'InOrder'},'replicatedJobs':[{'name':"
	        "'a'},{'name':'b'}]}",
	        &g);
	init[0] = &run;
	tj_step_progress(init, 1, &prog[0]);
	assert_false(tj_step_may_start(&g, 1, prog, why, sizeof(why)));
	assert_string_equal(why, "a to be Ready (startupPolicy InOrder; 0 of 1 pods ready)");
	init[0] = &ready;
	tj_step_progress(init, 1, &prog[0]);
	assert_true(tj_step_may_start(&g, 1, prog, why, sizeof(why)));
	tj_step_graph_clear(&g);
}

static void test_success_policy(void **state)
{
	static const struct {
		const char *policy;
		bool a_done, b_done, want;
	} cases[] = {
		{ "", true, false, false }, /* no targets: every step */
		{ "", true, true, true },
		{ ",'successPolicy':{'operator':'All','targetReplicatedJobs':['b']}", false, true,
		  true },
		{ ",'successPolicy':{'operator':'All','targetReplicatedJobs':['b']}", true, false,
		  false },
		{ ",'successPolicy':{'operator':'Any'}", true, false, true },
		{ ",'successPolicy':{'operator':'Any'}", false, false, false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_step_progress prog[2] = {
			{ .pods = 1, .succeeded = cases[i].a_done },
			{ .pods = 2, .succeeded = cases[i].b_done ? 2 : 1 },
		};
		struct tj_step_graph g;
		char spec[512];

		snprintf(spec, sizeof(spec), "{'replicatedJobs':[{'name':'a'},{'name':'b'}]%s}",
		         cases[i].policy);
		project(spec, &g);
		assert_int_equal(tj_step_graph_succeeded(&g, prog), cases[i].want);
		tj_step_graph_clear(&g);
	}
}

/* A step whose pods the success policy stops: not a target while another step is, and no
 * step waits for it to be Complete (the command policy lets sshd -D run there). */
static void test_ended_by_success_policy(void **state)
{
	static const struct {
		const char *spec;
		const char *step;
		bool want;
	} cases[] = {
		/* Kubeflow's deepspeed-distributed: the launcher is the target, the nodes serve it.
		 */
		{ "{'successPolicy':{'operator':'All','targetReplicatedJobs':['launcher']},"
		  "'replicatedJobs':[{'name':'node'},{'name':'launcher','dependsOn':[{'name':'node'"
		  ","
		  "'status':'Ready'}]}]}",
		  "node", true },
		{ "{'successPolicy':{'operator':'All','targetReplicatedJobs':['launcher']},"
		  "'replicatedJobs':[{'name':'node'},{'name':'launcher'}]}",
		  "launcher", false },
		{ "{'successPolicy':{'operator':'All','targetReplicatedJobs':['launcher','node']},"
		  "'replicatedJobs':[{'name':'node'},{'name':'launcher'}]}",
		  "node", false },
		/* No targets: every step is one. */
		{ "{'successPolicy':{'operator':'All','targetReplicatedJobs':[]},"
		  "'replicatedJobs':[{'name':'node'},{'name':'launcher'}]}",
		  "node", false },
		{ "{'replicatedJobs':[{'name':'node'},{'name':'launcher'}]}", "node", false },
		/* Targets that name no step: the policy is never met, nothing is stopped by it. */
		{ "{'successPolicy':{'targetReplicatedJobs':['trainer']},"
		  "'replicatedJobs':[{'name':'node'}]}",
		  "node", false },
		/* A step another waits for to be Complete must end by itself. */
		{ "{'successPolicy':{'targetReplicatedJobs':['node']},'replicatedJobs':[{'name':"
		  "'dataset-initializer'},{'name':'node','dependsOn':[{'name':'dataset-initializer'"
		  ","
		  "'status':'Complete'}]}]}",
		  "dataset-initializer", false },
		{ "{'successPolicy':{'targetReplicatedJobs':['node']},'replicatedJobs':[{'name':"
		  "'cache'},{'name':'node','dependsOn':[{'name':'cache','status':'Ready'}]}]}",
		  "cache", true },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_step_graph g;

		print_message("# case %zu: %s of %s\n", i, cases[i].step, cases[i].spec);
		project(cases[i].spec, &g);
		assert_null(g.error);
		assert_int_equal(
		        tj_step_ended_by_success_policy(&g, tj_step_graph_find(&g, cases[i].step)),
		        cases[i].want);
		tj_step_graph_clear(&g);
	}
}

/* A step ends before another starts when that one waits for it to be Complete, directly or
 * through a chain of such waits; a wait for Ready, or startupPolicy InOrder, leaves it
 * running. */
static void test_completes_before(void **state)
{
	static const struct {
		const char *step, *before;
		bool want;
	} cases[] = {
		{ "dataset-initializer", "node", true }, /* through model-initializer */
		{ "model-initializer", "node", true },
		{ "dataset-initializer", "model-initializer", true },
		{ "node", "dataset-initializer", false },
		{ "node", "node", false },
		{ "sidecar", "node", false }, /* node waits for it to be Ready only */
		{ "cache", "node", false },   /* model-initializer waits for it to be Ready */
		{ "node", "launcher", false },
	};
	struct tj_step_graph g;

	(void)state;
	project("{'replicatedJobs':[{'name':'dataset-initializer'},{'name':'cache'},"
	        "{'name':'model-initializer','dependsOn':[{'name':'dataset-initializer','status':"
	        "'Complete'},{'name':'cache','status':'Ready'}]},{'name':'sidecar'},"
	        "{'name':'node','dependsOn':[{'name':'model-initializer','status':'Complete'},"
	        "{'name':'sidecar','status':'Ready'}]},{'name':'launcher','dependsOn':[{'name':"
	        "'node','status':'Ready'}]}]}",
	        &g);
	assert_null(g.error);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("# %s before %s\n", cases[i].step, cases[i].before);
		assert_int_equal(tj_step_completes_before(&g, tj_step_graph_find(&g, cases[i].step),
		                                          tj_step_graph_find(&g, cases[i].before)),
		                 cases[i].want);
	}
	tj_step_graph_clear(&g);
}

/* JobSet's counts are of Jobs: a Job of 4 pods is ready once all 4 are. */
static void test_jobs_status(void **state)
{
	struct tj_pod ok = pod_in(TJ_POD_SUCCEEDED, false, false);
	struct tj_pod run = pod_in(TJ_POD_RUNNING, false, false);
	struct tj_pod ready = pod_in(TJ_POD_RUNNING, true, false);
	struct tj_pod bad = pod_in(TJ_POD_FAILED, false, false);
	static const struct {
		int pods[6]; /* 0 none, 1 running, 2 ready, 3 succeeded, 4 failed */
		int n, per_job;
		bool suspended;
		int active, ready, succeeded, failed, susp;
	} cases[] = {
		{ { 2, 2, 2, 2 }, 4, 4, false, 1, 1, 0, 0, 0 },
		{ { 2, 2, 2, 1 }, 4, 4, false, 1, 0, 0, 0, 0 },
		{ { 3, 2, 3, 2 }, 4, 4, false, 1, 1, 0, 0, 0 }, /* ready or succeeded */
		{ { 3, 3, 3, 3 }, 4, 4, false, 0, 0, 1, 0, 0 },
		{ { 2, 4, 2, 2 }, 4, 4, false, 0, 0, 0, 1, 0 },
		{ { 0, 0, 0, 0 }, 4, 4, false, 0, 0, 0, 0, 0 },
		{ { 2, 2, 3, 3, 1, 4 }, 6, 2, false, 1, 1, 1, 1, 0 }, /* 3 Jobs of 2 pods */
		{ { 0, 0 }, 2, 1, true, 0, 0, 0, 0, 2 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tj_pod *slots[6];
		struct tj_jobs_status js;

		for (int s = 0; s < cases[i].n; s++) {
			const struct tj_pod *const by_code[] = { NULL, &run, &ready, &ok, &bad };

			slots[s] = by_code[cases[i].pods[s]];
		}
		tj_step_jobs_status("node", slots, cases[i].n, cases[i].per_job, cases[i].suspended,
		                    &js);
		assert_string_equal(js.name, "node");
		assert_int_equal(js.active, cases[i].active);
		assert_int_equal(js.ready, cases[i].ready);
		assert_int_equal(js.succeeded, cases[i].succeeded);
		assert_int_equal(js.failed, cases[i].failed);
		assert_int_equal(js.suspended, cases[i].susp);
	}
}

/* ---- initializers and claims ---------------------------------------------------------------- */

static void test_initializer_env(void **state)
{
	struct tj_trainjob *job = make_job(
	        "{'runtimeRef':{'name':'r'},'initializer':{'dataset':{'storageUri':'hf://a/b',"
	        "'env':[{'name':'STORAGE_URI','value':'hf://c/d'},{'name':'X','value':'1'}],"
	        "'secretRef':{'name':'hf'}},'model':{'storageUri':'hf://m'}}}");
	struct tj_problem why = { "", "" };
	struct tj_step_graph g;
	cJSON *pod;

	(void)state;
	project("{'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'initializer'},"
	        "'spec':{'resources':{'requests':{'storage':'1Gi'}}}}]}],'replicatedJobs':[{'name':"
	        "'dataset-initializer','template':{'metadata':{'labels':{'trainer.kubeflow.org/"
	        "trainjob-ancestor-step':'dataset-initializer'}},'spec':{'template':{'spec':{"
	        "'containers':[{'name':'dataset-initializer','image':'i','env':[{'name':"
	        "'STORAGE_URI','value':'hf://runtime'},{'name':'Y','value':'2'}],'volumeMounts':"
	        "[{'name':'initializer','mountPath':'/workspace'}]}]}}}}}]}",
	        &g);
	assert_int_equal(tj_render_step_pod(job, &g.steps[0], 0, 1, &pod, &why), 0);
	assert_int_equal(tj_render_mount_claims(pod, g.claim_templates, job->name), 0);
	/* The TrainJob's env wins over its storageUri, which wins over the runtime's value;
	 * the model's settings go to no container here. */
	assert_json_equal(
	        pod,
	        "{'apiVersion':'v1','kind':'Pod','metadata':{'labels':{'trainer.kubeflow.org/"
	        "trainjob-ancestor-step':'dataset-initializer','trainer.kubeflow.org/trainjob-name'"
	        ":'vit','jobset.sigs.k8s.io/jobset-name':'vit','jobset.sigs.k8s.io/"
	        "replicatedjob-name':'dataset-initializer','jobset.sigs.k8s.io/job-index':'0',"
	        "'batch.kubernetes.io/job-completion-index':'0','trainjob.flame.dev/attempt':'1'},"
	        "'name':'vit-dataset-initializer-0-0-a1','namespace':'team-a','annotations':{"
	        "'batch.kubernetes.io/job-completion-index':'0'},'ownerReferences':[{'apiVersion':"
	        "'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','name':'vit','uid':'uid-vit',"
	        "'controller':true,'blockOwnerDeletion':true}]},'spec':{'containers':[{'name':"
	        "'dataset-initializer','image':'i','env':[{'name':'STORAGE_URI','value':"
	        "'hf://c/d'},{'name':'Y','value':'2'},{'name':'X','value':'1'}],'volumeMounts':[{"
	        "'name':'initializer','mountPath':'/workspace'}],'terminationMessagePolicy':"
	        "'FallbackToLogsOnError','envFrom':[{'secretRef':{'name':'hf'}}]}],'hostname':"
	        "'vit-dataset-initializer-0-0','subdomain':'vit','restartPolicy':'Never','volumes':"
	        "[{'name':'initializer','persistentVolumeClaim':{'claimName':'initializer-vit'}}]}"
	        "}");
	cJSON_Delete(pod);
	tj_step_graph_clear(&g);
	tj_trainjob_free(job);
}

static void test_claims(void **state)
{
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'r'}}");
	struct tj_problem why = { "", "" };
	cJSON *list;

	(void)state;
	assert_int_equal(tj_render_claims(job,
	                                  "[{\"metadata\":{\"name\":\"cache\",\"labels\":{\"a\":"
	                                  "\"b\"}},\"spec\":{\"accessModes\":[\"RWO\"]}}]",
	                                  &list, &why),
	                 0);
	assert_json_equal(list,
	                  "[{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':"
	                  "'cache-vit','namespace':'team-a','labels':{'a':'b','trainer.kubeflow."
	                  "org/trainjob-name':'vit'},'ownerReferences':[{'apiVersion':'trainer."
	                  "kubeflow.org/v1alpha1','kind':'TrainJob','name':'vit','uid':'uid-vit',"
	                  "'controller':true,'blockOwnerDeletion':true}]},'spec':{'accessModes':"
	                  "['RWO']}}]");
	cJSON_Delete(list);
	/* whenDeleted: Retain, as the graph marks it: no owner, the PVC outlives the job. */
	assert_int_equal(tj_render_claims(job,
	                                  "[{\"metadata\":{\"name\":\"keep\"},\"spec\":{},"
	                                  "\"" TJ_CLAIM_RETAIN "\":true}]",
	                                  &list, &why),
	                 0);
	assert_json_equal(list, "[{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{"
	                        "'name':'keep-vit','namespace':'team-a','labels':{'trainer."
	                        "kubeflow.org/trainjob-name':'vit'}},'spec':{}}]");
	cJSON_Delete(list);
	assert_int_equal(tj_render_claims(job, "[{\"spec\":{}}]", &list, &why), -EINVAL);
	assert_string_equal(why.reason, "InvalidRuntime");
	tj_trainjob_free(job);
}

/* ---- the step graph in a plan --------------------------------------------------------------- */

/* A pod of job vit: its name (the step's, or a node rank's with rank >= 0), phase, Ready. */
struct pod_row {
	const char *name;
	int rank; /* -1 for a step other than node */
	int attempt;
	enum tj_pod_phase phase;
	bool ready;
	bool kept; /* labelled trainjob.flame.dev/failed-attempt */
};

#define MAX_ROWS 8

struct step_case {
	const char *name;
	const char *runtime; /* the JobSet spec of runtime "steps" */
	const char *status;  /* NULL: a new job */
	struct pod_row pods[MAX_ROWS];
	size_t n_pods;
	bool admission; /* the built-in admission is on (nothing admitted yet) */
	const char *want[16];
	const char *want_status; /* "<state>|<reason>|restarts=<n>" */
	const char *want_jobs;   /* "<name>=a/r/s/f/s ..." */
};

/* An initializer the node step dependsOn, and the PVC both mount. */
#define INIT_THEN_NODE                                                                             \
	"{'volumeClaimPolicies':[{'templates':[{'metadata':{'name':'initializer'},'spec':{}}]}],"  \
	"'replicatedJobs':[{'name':'dataset-initializer','template':{'metadata':{'labels':{"       \
	"'trainer.kubeflow.org/trainjob-ancestor-step':'dataset-initializer'}},'spec':{"           \
	"'template':{'spec':{'containers':[{'name':'dataset-initializer','image':'i',"             \
	"'volumeMounts':[{'name':'initializer','mountPath':'/workspace'}]}]}}}}},{'name':'node',"  \
	"'dependsOn':[{'name':'dataset-initializer','status':'Complete'}],'template':{'spec':{"    \
	"'template':{'spec':{'containers':[{'name':'node','image':'t','command':['true'],"         \
	"'volumeMounts':[{'name':'initializer','mountPath':'/workspace'}]}]}}}}}]}"

/* INIT_THEN_NODE whose initializer's Job fails with reason PodFailurePolicy on the exit codes
 * codes, and a JobSet rule that fails the job on that reason. */
#define INIT_THEN_NODE_FAILING_ON(codes)                                                           \
	"{'failurePolicy':{'maxRestarts':3,'rules':[{'name':'fatal','action':'FailJobSet',"        \
	"'onJobFailureReasons':['PodFailurePolicy']}]},"                                           \
	"'replicatedJobs':[{'name':'dataset-initializer','template':{'metadata':{'labels':{"       \
	"'trainer.kubeflow.org/trainjob-ancestor-step':'dataset-initializer'}},'spec':{"           \
	"'podFailurePolicy':{'rules':[{'action':'FailJob','onExitCodes':{'operator':'In',"         \
	"'values':[" codes "]}}]},'template':{'spec':{'containers':[{'name':"                      \
	"'dataset-initializer','image':'i'}]}}}}},{'name':'node','dependsOn':[{'name':"            \
	"'dataset-initializer','status':'Complete'}],'template':{'spec':{'template':{'spec':{"     \
	"'containers':[{'name':'node','image':'t','command':['true']}]}}}}}]}"

/* A launcher that dependsOn the nodes being Ready, and ends the job (MPI's shape). */
#define NODE_THEN_LAUNCHER                                                                         \
	"{'successPolicy':{'operator':'All','targetReplicatedJobs':['launcher']},"                 \
	"'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{'containers':[{" \
	"'name':'node','image':'t','command':['true']}]}}}}},{'name':'launcher','dependsOn':[{"    \
	"'name':'node','status':'Ready'}],'template':{'spec':{'template':{'spec':{'containers':[{" \
	"'name':'launcher','image':'l'}]}}}}}]}"

#define RUNNING_STATUS(restarts)                                                                   \
	"{'state':'Running','reason':'AllPodsRunning','message':'m','restartCount':" #restarts     \
	",'startTime':'2026-11-29T11:00:00Z','observedGeneration':2}"

/* Waiting for the initializer, whose Job the status counts as active and ready (0 or 1). */
#define WAITING_STATUS(active, ready)                                                              \
	"{'state':'Pending','reason':'WaitingForSteps','message':'the node step waits for "        \
	"dataset-initializer to be Complete (0 of 1 pods succeeded)','observedGeneration':2,"      \
	"'jobsStatus':[{'name':'dataset-initializer','active':" #active ",'ready':" #ready         \
	",'succeeded':0,'failed':0,'suspended':0},{'name':'node','active':0,'ready':0,"            \
	"'succeeded':0,'failed':0,'suspended':0}]}"

/* Restarted once, by a failed initializer an hour ago (the backoff is over). */
#define RESTARTED_INIT                                                                             \
	"{'state':'Restarting','reason':'WorkerFailed','message':'m','restartCount':1,"            \
	"'observedGeneration':2,'lastFailure':{'rank':-1,'pod':'vit-dataset-initializer-0-0-a0',"  \
	"'reason':'Error','exitCode':1,'time':'2026-11-29T11:00:00Z'}}"

#define INIT(phase, ready)                                                                         \
	{                                                                                          \
		"vit-dataset-initializer-0-0-a0", -1, 0, phase, ready                              \
	}
#define NODE(r, phase, ready)                                                                      \
	{                                                                                          \
		"vit-node-0-" #r "-a0", r, 0, phase, ready                                         \
	}
#define LAUNCHER(phase, ready)                                                                     \
	{                                                                                          \
		"vit-launcher-0-0-a0", -1, 0, phase, ready                                         \
	}

/* The initializer's pod failed (exit code 1) while the node step waited for it. */
#define INIT_FAILED_WHILE_WAITING                                                                  \
	.status = "{'state':'Pending','reason':'WaitingForSteps','message':'m',"                   \
	          "'observedGeneration':2}",                                                       \
	.pods = { INIT(TJ_POD_FAILED, false) }, .n_pods = 1

/* What that failure does under the failure policy's budget: a restart of the job. */
#define RESTARTED_BY_THE_INITIALIZER                                                               \
	.want = { "0 PatchStatus vit", "1 PatchPod vit-dataset-initializer-0-0-a0",                \
		  "1 Event Warning Restarting: pod vit-dataset-initializer-0-0-a0 on node kw-1 "   \
		  "failed (exit code 1, Error); replacing all workers in 10 s (restart 1 of 3)" }, \
	.want_status = "Restarting|WorkerFailed|restarts=1"

static const struct step_case step_cases[] = {
	{ .name = "a new job creates its initializer, and no node pod before it completes",
	  .runtime = INIT_THEN_NODE,
	  .want = { "0 CreatePod vit-dataset-initializer-0-0-a0", "0 CreateObject initializer-vit",
	            "1 PatchStatus vit",
	            "1 Event Normal WaitingForSteps: the node step waits for dataset-initializer "
	            "to be Complete (0 of 1 pods succeeded)" },
	  .want_status = "Pending|WaitingForSteps|restarts=0",
	  .want_jobs = "dataset-initializer=0/0/0/0/0 node=0/0/0/0/0" },
	{ .name = "the initializer's pod is seen: the step is announced once",
	  .runtime = INIT_THEN_NODE,
	  .status = WAITING_STATUS(0, 0),
	  .pods = { INIT(TJ_POD_RUNNING, true) },
	  .n_pods = 1,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal StepStarted: step dataset-initializer started: 1 of 1 pods "
	            "exist" },
	  .want_status = "Pending|WaitingForSteps|restarts=0",
	  .want_jobs = "dataset-initializer=1/1/0/0/0 node=0/0/0/0/0" },
	{ .name = "a running initializer: the node step still waits",
	  .runtime = INIT_THEN_NODE,
	  .status = WAITING_STATUS(1, 1),
	  .pods = { INIT(TJ_POD_RUNNING, true) },
	  .n_pods = 1,
	  .want = { NULL },
	  .want_status = "Pending|WaitingForSteps|restarts=0",
	  .want_jobs = "dataset-initializer=1/1/0/0/0 node=0/0/0/0/0" },
	{ .name = "the initializer succeeded: the node pods are created, with the claim",
	  .runtime = INIT_THEN_NODE,
	  .status = WAITING_STATUS(1, 1),
	  .pods = { INIT(TJ_POD_SUCCEEDED, false) },
	  .n_pods = 1,
	  .want = { "0 CreatePod vit-node-0-0-a0", "0 CreatePod vit-node-0-1-a0",
	            "0 CreateService vit", "0 CreateObject initializer-vit", "1 PatchStatus vit",
	            "1 Event Normal Created: creating 2 pods from ClusterTrainingRuntime steps" },
	  .want_status = "Pending|PodsStarting|restarts=0",
	  .want_jobs = "dataset-initializer=0/0/1/0/0 node=0/0/0/0/0" },
	{ .name = "a failed initializer restarts the job through the failure policy",
	  .runtime = INIT_THEN_NODE,
	  INIT_FAILED_WHILE_WAITING,
	  RESTARTED_BY_THE_INITIALIZER,
	  .want_jobs = "dataset-initializer=0/0/0/1/0 node=0/0/0/0/0" },
	{ .name = "an initializer failing with an exit code its podFailurePolicy names: a "
	          "failurePolicy rule on PodFailurePolicy fails the job",
	  .runtime = INIT_THEN_NODE_FAILING_ON("1"),
	  INIT_FAILED_WHILE_WAITING,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: FailJobSetFailurePolicyAction: pod "
	            "vit-dataset-initializer-0-0-a0 on node kw-1 failed (exit code 1, Error); "
	            "failurePolicy rule 0 (fatal): FailJobSet on a Job of dataset-initializer "
	            "failed with reason PodFailurePolicy, so the job is not restarted" },
	  .want_status = "Failed|FailJobSetFailurePolicyAction|restarts=0",
	  .want_jobs = "dataset-initializer=0/0/0/1/0 node=0/0/0/0/0" },
	{ .name = "with another exit code the rule does not match: the job restarts",
	  .runtime = INIT_THEN_NODE_FAILING_ON("42"),
	  INIT_FAILED_WHILE_WAITING,
	  RESTARTED_BY_THE_INITIALIZER,
	  .want_jobs = "dataset-initializer=0/0/0/1/0 node=0/0/0/0/0" },
	{ .name = "after a restart the failed initializer is kept for its logs first",
	  .runtime = INIT_THEN_NODE,
	  .status = RESTARTED_INIT,
	  .pods = { { "vit-dataset-initializer-0-0-a0", -1, 0, TJ_POD_FAILED, false } },
	  .n_pods = 1,
	  .want = { "0 PatchPod vit-dataset-initializer-0-0-a0", "1 PatchStatus vit",
	            "1 Event Normal WaitingForSteps: the node step waits for dataset-initializer "
	            "to be Complete (0 of 1 pods succeeded)" },
	  .want_status = "Restarting|WaitingForSteps|restarts=1",
	  .want_jobs = "dataset-initializer=0/0/0/0/0 node=0/0/0/0/0" },
	{ .name = "then the initializer runs again, at the new attempt",
	  .runtime = INIT_THEN_NODE,
	  .status = RESTARTED_INIT,
	  .pods = { { "vit-dataset-initializer-0-0-a0", -1, 0, TJ_POD_FAILED, false, true } },
	  .n_pods = 1,
	  .want = { "0 CreatePod vit-dataset-initializer-0-0-a1", "0 CreateObject initializer-vit",
	            "1 PatchStatus vit",
	            "1 Event Normal WaitingForSteps: the node step waits for dataset-initializer "
	            "to be Complete (0 of 1 pods succeeded)" },
	  .want_status = "Restarting|WaitingForSteps|restarts=1",
	  .want_jobs = "dataset-initializer=0/0/0/0/0 node=0/0/0/0/0" },
	{ .name = "nodes running but not Ready: no launcher yet",
	  .runtime = NODE_THEN_LAUNCHER,
	  .status = RUNNING_STATUS(0),
	  .pods = { NODE(0, TJ_POD_RUNNING, true), NODE(1, TJ_POD_RUNNING, false) },
	  .n_pods = 2,
	  .want = { "0 PatchStatus vit" },
	  .want_status = "Running|AllPodsRunning|restarts=0",
	  .want_jobs = "node=1/0/0/0/0 launcher=0/0/0/0/0" },
	{ .name = "every node Ready: the launcher is created",
	  .runtime = NODE_THEN_LAUNCHER,
	  .status = RUNNING_STATUS(0),
	  .pods = { NODE(0, TJ_POD_RUNNING, true), NODE(1, TJ_POD_RUNNING, true) },
	  .n_pods = 2,
	  .want = { "0 CreatePod vit-launcher-0-0-a0", "1 PatchStatus vit" },
	  .want_status = "Running|AllPodsRunning|restarts=0",
	  .want_jobs = "node=1/1/0/0/0 launcher=0/0/0/0/0" },
	{ .name = "the launcher succeeded: the success policy completes the job and stops the "
	          "nodes",
	  .runtime = NODE_THEN_LAUNCHER,
	  .status = RUNNING_STATUS(0),
	  .pods = { NODE(0, TJ_POD_RUNNING, true), NODE(1, TJ_POD_RUNNING, true),
	            LAUNCHER(TJ_POD_SUCCEEDED, false) },
	  .n_pods = 3,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0",
	            "1 Event Normal StepStarted: step launcher started: 1 of 1 pods exist",
	            "1 Event Normal Completed: successPolicy launcher succeeded" },
	  .want_status = "Complete|SuccessPolicyMet|restarts=0",
	  .want_jobs = "node=1/1/0/0/0 launcher=0/0/1/0/0" },
	{ .name = "every node succeeded but the launcher runs: not Complete",
	  .runtime = NODE_THEN_LAUNCHER,
	  .status = RUNNING_STATUS(0),
	  .pods = { NODE(0, TJ_POD_SUCCEEDED, false), NODE(1, TJ_POD_SUCCEEDED, false),
	            LAUNCHER(TJ_POD_RUNNING, true) },
	  .n_pods = 3,
	  .want = { "0 PatchStatus vit",
	            "0 Event Normal StepStarted: step launcher started: 1 of 1 pods exist" },
	  .want_status = "Running|PodsCompleting|restarts=0",
	  .want_jobs = "node=0/0/1/0/0 launcher=1/1/0/0/0" },
	{ .name = "a failed launcher restarts the job, with the nodes",
	  .runtime = NODE_THEN_LAUNCHER,
	  .status = RUNNING_STATUS(0),
	  .pods = { NODE(0, TJ_POD_RUNNING, true), NODE(1, TJ_POD_RUNNING, true),
	            LAUNCHER(TJ_POD_FAILED, false) },
	  .n_pods = 3,
	  .want = { "0 PatchStatus vit", "1 DeletePod vit-node-0-0-a0",
	            "1 DeletePod vit-node-0-1-a0", "1 PatchPod vit-launcher-0-0-a0",
	            "1 Event Warning Restarting: pod vit-launcher-0-0-a0 on node kw-1 failed (exit "
	            "code 1, Error); replacing all workers in 10 s (restart 1 of 3)" },
	  .want_status = "Restarting|WorkerFailed|restarts=1",
	  .want_jobs = "node=1/1/0/0/0 launcher=0/0/0/1/0" },
	{ .name = "a step other than node that asks for GPUs is refused while admission is on",
	  .runtime = "{'replicatedJobs':[{'name':'launcher','template':{'spec':{'template':{"
	             "'spec':{'containers':[{'name':'launcher','image':'l','resources':{'limits'"
	             ":{'nvidia.com/gpu':1}}}]}}}}},{'name':'node','template':{'spec':{"
	             "'template':{'spec':{'containers':[{'name':'node','image':'t','command':["
	             "'true']}]}}}}}]}",
	  .admission = true,
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: UnsupportedRuntime: ClusterTrainingRuntime steps: "
	            "replicated job launcher requests GPUs; only the node step is admitted as a "
	            "gang, so a step other than node must not request GPUs" },
	  .want_status = "Failed|UnsupportedRuntime|restarts=0",
	  .want_jobs = "launcher=0/0/0/0/0 node=0/0/0/0/0" },
	{ .name = "a runtime whose dependsOn names a later step fails the job",
	  .runtime = "{'replicatedJobs':[{'name':'node','dependsOn':[{'name':'x','status':"
	             "'Complete'}],'template':{'spec':{'template':{'spec':{'containers':[{'name':"
	             "'node','image':'t','command':['true']}]}}}}},{'name':'x'}]}",
	  .want = { "0 PatchStatus vit",
	            "0 Event Warning Failed: InvalidRuntime: ClusterTrainingRuntime steps: "
	            "spec.template.spec.replicatedJobs[0].dependsOn: 'x' is not a replicated job "
	            "listed before node" },
	  .want_status = "Failed|InvalidRuntime|restarts=0",
	  .want_jobs = "node=0/0/0/0/0" },
};

static struct tj_pod *make_pod(const struct pod_row *row)
{
	char buf[2048], rank[64] = "";
	struct tj_pod *pod = NULL;
	const char *phase = row->phase == TJ_POD_RUNNING     ? "Running"
	                    : row->phase == TJ_POD_SUCCEEDED ? "Succeeded"
	                    : row->phase == TJ_POD_FAILED    ? "Failed"
	                                                     : "Pending";
	cJSON *j;

	if (row->rank >= 0)
		snprintf(rank, sizeof(rank), ",'trainjob.flame.dev/rank':'%d'", row->rank);
	else if (row->kept)
		snprintf(rank, sizeof(rank), ",'trainjob.flame.dev/failed-attempt':'%d'",
		         row->attempt);
	snprintf(buf, sizeof(buf),
	         "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'%s','namespace':'team-a',"
	         "'uid':'uid-%s','creationTimestamp':'2026-11-29T11:00:00Z','labels':{"
	         "'trainer.kubeflow.org/trainjob-name':'vit','trainjob.flame.dev/attempt':'%d'%s},"
	         "'ownerReferences':[{'uid':'uid-vit','controller':true}]},'spec':{'nodeName':"
	         "'kw-1'},'status':{'phase':'%s','startTime':'2026-11-29T11:00:00Z',"
	         "'conditions':[{'type':'Ready','status':'%s'}]%s}}",
	         row->name, row->name, row->attempt, rank, phase, row->ready ? "True" : "False",
	         row->phase == TJ_POD_FAILED
	                 ? ",'containerStatuses':[{'name':'x','state':{'terminated':{'exitCode':1,"
	                   "'reason':'Error'}}}]"
	                 : "");
	j = jlit(buf);
	assert_int_equal(tj_pod_from_json(j, &pod), 0);
	cJSON_Delete(j);
	return pod;
}

static void describe(const struct tj_action *a, char *buf, size_t size)
{
	if (a->kind == TJ_ACTION_EVENT)
		snprintf(buf, size, "%d Event %s %s: %s", a->stage,
		         a->warning ? "Warning" : "Normal", a->reason, a->message);
	else
		snprintf(buf, size, "%d %s %s", a->stage, tj_action_kind_name(a->kind), a->name);
}

static void run_step_case(const struct step_case *c)
{
	struct tj_pod *pods[MAX_ROWS];
	struct tj_runtime *rt = NULL;
	struct tj_trainjob *job;
	struct tj_plan *plan = NULL;
	struct tj_admission_ticket adm = { .admitted = false };
	char buf[8192], got[2048];
	size_t n_want = 0, len = 0;
	cJSON *j;

	print_message("# case: %s\n", c->name);
	snprintf(buf, sizeof(buf),
	         "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
	         "'metadata':{'name':'steps'},'spec':{'mlPolicy':{'numNodes':2},'template':{'spec':"
	         "%s}}}",
	         c->runtime);
	j = jlit(buf);
	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	job = make_job("{'runtimeRef':{'name':'steps'}}");
	if (c->status) {
		j = jlit(c->status);
		tj_trainjob_status_from_json(j, &job->status);
		cJSON_Delete(j);
	}
	for (size_t i = 0; i < c->n_pods; i++)
		pods[i] = make_pod(&c->pods[i]);
	assert_int_equal(tj_plan_trainjob(
	                         &(struct tj_plan_input){
	                                 .job = job,
	                                 .runtime = rt,
	                                 .config = &test_config,
	                                 .pods = (const struct tj_pod *const *)pods,
	                                 .n_pods = c->n_pods,
	                                 .ticket = c->admission ? &adm : NULL,
	                                 .now = NOW,
	                         },
	                         &plan),
	                 0);
	for (size_t a = 0; a < plan->n_actions; a++) {
		describe(&plan->actions[a], got, sizeof(got));
		print_message("#   action: %s\n", got);
	}
	while (n_want < 16 && c->want[n_want])
		n_want++;
	for (size_t a = 0; a < plan->n_actions && a < n_want; a++) {
		describe(&plan->actions[a], got, sizeof(got));
		assert_string_equal(got, c->want[a]);
	}
	assert_int_equal(plan->n_actions, n_want);
	snprintf(got, sizeof(got), "%s|%s|restarts=%d", tj_state_name(plan->status.state),
	         plan->status.reason, plan->status.restart_count);
	assert_string_equal(got, c->want_status);
	got[0] = '\0';
	for (size_t i = 0; i < plan->status.n_jobs; i++) {
		const struct tj_jobs_status *js = &plan->status.jobs[i];

		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s=%d/%d/%d/%d/%d",
		                        i ? " " : "", js->name, js->active, js->ready,
		                        js->succeeded, js->failed, js->suspended);
	}
	assert_string_equal(got, c->want_jobs);
	/* Every pod the plan creates carries the JobSet labels of its step. */
	for (size_t a = 0; a < plan->n_actions; a++) {
		const struct tj_action *act = &plan->actions[a];
		const cJSON *labels = tj_json_path(act->object, "metadata.labels");

		if (act->kind != TJ_ACTION_CREATE_POD)
			continue;
		assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		                            labels, "jobset.sigs.k8s.io/jobset-name")),
		                    "vit");
		assert_non_null(cJSON_GetObjectItemCaseSensitive(
		        labels, "jobset.sigs.k8s.io/replicatedjob-name"));
		assert_non_null(
		        cJSON_GetObjectItemCaseSensitive(labels, "jobset.sigs.k8s.io/job-index"));
	}
	tj_plan_free(plan);
	for (size_t i = 0; i < c->n_pods; i++)
		tj_pod_free(pods[i]);
	tj_trainjob_free(job);
	tj_runtime_free(rt);
}

static void test_step_plans(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(step_cases) / sizeof(step_cases[0]); i++)
		run_step_case(&step_cases[i]);
}

/* The offline view shows every step at once: the node pods next to their initializer. */
static void test_all_steps(void **state)
{
	struct tj_runtime *rt = NULL;
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'steps'}}");
	struct tj_plan *plan = NULL;
	char buf[4096], got[256];
	size_t k = 0;
	static const char *const want[] = { "CreatePod vit-dataset-initializer-0-0-a0",
		                            "CreatePod vit-node-0-0-a0",
		                            "CreatePod vit-node-0-1-a0", "CreateService vit",
		                            "CreateObject initializer-vit" };
	cJSON *j;

	(void)state;
	snprintf(buf, sizeof(buf),
	         "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"
	         "'metadata':{'name':'steps'},'spec':{'mlPolicy':{'numNodes':2},'template':{'spec':"
	         "%s}}}",
	         INIT_THEN_NODE);
	j = jlit(buf);
	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	assert_int_equal(tj_plan_trainjob(&(struct tj_plan_input){ .job = job,
	                                                           .runtime = rt,
	                                                           .config = &test_config,
	                                                           .now = NOW,
	                                                           .all_steps = true },
	                                  &plan),
	                 0);
	for (size_t a = 0; a < plan->n_actions; a++) {
		const struct tj_action *act = &plan->actions[a];

		if (act->kind == TJ_ACTION_EVENT || act->kind == TJ_ACTION_PATCH_STATUS)
			continue;
		snprintf(got, sizeof(got), "%s %s", tj_action_kind_name(act->kind), act->name);
		assert_true(k < sizeof(want) / sizeof(want[0]));
		assert_string_equal(got, want[k++]);
	}
	assert_int_equal(k, sizeof(want) / sizeof(want[0]));
	tj_plan_free(plan);
	tj_trainjob_free(job);
	tj_runtime_free(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graph_projection),
		cmocka_unit_test(test_job_metadata_and_group),
		cmocka_unit_test(test_graph_refused),
		cmocka_unit_test(test_pod_names),
		cmocka_unit_test(test_progress_and_order),
		cmocka_unit_test(test_success_policy),
		cmocka_unit_test(test_ended_by_success_policy),
		cmocka_unit_test(test_completes_before),
		cmocka_unit_test(test_jobs_status),
		cmocka_unit_test(test_initializer_env),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_step_plans),
		cmocka_unit_test(test_all_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
