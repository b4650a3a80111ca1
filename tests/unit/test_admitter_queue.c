/* The admitter's queue entries: what a plan that wants a created gang's pods again leads to
 * (the cache behind, the same pods again, or the job decided again); the nodes that refused
 * a job's pinned pods, each kept until its time; and the snapshot of the caches, which keeps
 * what it judged of the nodes between cycles and must show every change of a node in the
 * next cycle as a snapshot built afresh would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <uv.h>

#include "controller/admission/admitter.h"
#include "controller/admission/admitter_queue.h"
#include "fixtures.h"
#include "idle_reflector.h"

#define CREATED_MS 1000000
#define PATIENCE   TJ_ADMITTER_CREATED_PATIENCE_MS

struct again_case {
	const char *name;
	enum tj_admitter_state state;
	uint64_t after_ms; /* since the creates */
	int num_pods;      /* the plan wants pods for this many ranks */
	bool restart;      /* a restart's replacements, or part of the gang */
	bool launcher;     /* the plan wants a launcher's place */
	bool has_launcher; /* the admission has one */
	const char *excluded;
	enum tj_admitter_again again;
	bool shown; /* the cache showed every pod the creates made */
};

static const struct again_case cases[] = {
	{ "the cache shows none of its pods yet", TJ_ADMITTER_CREATED, 5000, 2, false, false, false,
	  NULL, TJ_ADMITTER_WAIT_FOR_CACHE, false },
	{ "the cache shows part of the gang", TJ_ADMITTER_CREATED, 5000, 1, true, false, false,
	  NULL, TJ_ADMITTER_WAIT_FOR_CACHE, false },
	{ "pods to avoid another node", TJ_ADMITTER_CREATED, 5000, 2, false, false, false, "gh-9",
	  TJ_ADMITTER_WAIT_FOR_CACHE, false },
	{ "pods to avoid one of its nodes: a failure there", TJ_ADMITTER_CREATED, 5000, 1, true,
	  false, false, "gh-1", TJ_ADMITTER_DECIDE_AGAIN, false },
	{ "past the patience, the whole gang missing", TJ_ADMITTER_CREATED, PATIENCE, 2, false,
	  false, false, NULL, TJ_ADMITTER_CREATE_AGAIN, false },
	{ "past the patience, with its launcher", TJ_ADMITTER_CREATED, PATIENCE + 1, 2, false, true,
	  true, NULL, TJ_ADMITTER_CREATE_AGAIN, false },
	{ "past the patience, part of the gang", TJ_ADMITTER_CREATED, PATIENCE, 1, true, false,
	  false, NULL, TJ_ADMITTER_DECIDE_AGAIN, false },
	{ "past the patience, a restart of the whole gang", TJ_ADMITTER_CREATED, PATIENCE, 2, true,
	  false, false, NULL, TJ_ADMITTER_DECIDE_AGAIN, false },
	{ "past the patience, a launcher wanted that was not admitted", TJ_ADMITTER_CREATED,
	  PATIENCE, 2, false, true, false, NULL, TJ_ADMITTER_DECIDE_AGAIN, false },
	{ "past the patience, a launcher admitted that is not wanted", TJ_ADMITTER_CREATED,
	  PATIENCE, 2, false, false, true, NULL, TJ_ADMITTER_DECIDE_AGAIN, false },
	/* Shown, then missing: deleted since, whatever the patience says. */
	{ "shown, the whole gang missing", TJ_ADMITTER_CREATED, 5000, 2, false, false, false, NULL,
	  TJ_ADMITTER_CREATE_AGAIN, true },
	{ "shown, the whole gang and its launcher missing", TJ_ADMITTER_CREATED, 0, 2, false, true,
	  true, NULL, TJ_ADMITTER_CREATE_AGAIN, true },
	{ "shown, part of the gang missing", TJ_ADMITTER_CREATED, 5000, 1, true, false, false, NULL,
	  TJ_ADMITTER_DECIDE_AGAIN, true },
	{ "shown, a restart of the whole gang", TJ_ADMITTER_CREATED, 5000, 2, true, false, false,
	  NULL, TJ_ADMITTER_DECIDE_AGAIN, true },
	{ "admitted, not created yet", TJ_ADMITTER_ADMITTED, 5000, 2, false, false, false, NULL,
	  TJ_ADMITTER_DECIDE_AGAIN, false },
	{ "waiting", TJ_ADMITTER_WAITING, 5000, 2, false, false, false, NULL,
	  TJ_ADMITTER_DECIDE_AGAIN, false },
	{ "started", TJ_ADMITTER_STARTING, 5000, 2, false, false, false, NULL,
	  TJ_ADMITTER_DECIDE_AGAIN, false },
};

static void test_created_again_table(void **state)
{
	char *nodes[] = { "gh-0", "gh-1" };
	char *launcher_node = "gh-0";
	cJSON launcher_pod = { 0 }; /* only whether there is one counts */

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct again_case *c = &cases[i];
		char *excluded[] = { (char *)c->excluded };
		struct tj_admitter_entry e = {
			.state = c->state,
			.num_pods = 2,
			.nodes = nodes,
			.n_nodes = 2,
			.launcher_node = c->has_launcher ? launcher_node : NULL,
			.created_ms = CREATED_MS,
			.creates_shown = c->shown,
		};
		struct tj_plan_want want = {
			.wanted = true,
			.num_nodes = 2,
			.num_pods = c->num_pods,
			.restart = c->restart,
			.excluded = excluded,
			.n_excluded = c->excluded ? 1 : 0,
			.launcher = c->launcher ? &launcher_pod : NULL,
		};

		print_message("# %s\n", c->name);
		assert_int_equal(tj_admitter_created_again(&e, &want, CREATED_MS + c->after_ms),
		                 c->again);
	}
}

/* A node named again has its time renewed, not a second row; when every row is taken, the
 * refusal that ends first makes room. */
static void test_refusals_renew_and_make_room(void **state)
{
	struct tj_admitter_refusals r = { .key = "team-a/j" };
	char nodes[TJ_PLAN_MAX_REFUSED + 1][TJ_NAME_MAX];

	(void)state;
	for (size_t i = 0; i <= TJ_PLAN_MAX_REFUSED; i++)
		snprintf(nodes[i], sizeof(nodes[i]), "gh-%zu", i);
	tj_admitter_refusals_add(&r, (const char(*)[TJ_NAME_MAX])nodes, 2, 1000);
	assert_int_equal(r.n, 2);
	assert_string_equal(r.nodes[0], "gh-0");
	assert_string_equal(r.nodes[1], "gh-1");
	tj_admitter_refusals_add(&r, (const char(*)[TJ_NAME_MAX]) & nodes[1], 1, 5000);
	assert_int_equal(r.n, 2);
	assert_int_equal(r.until_ms[0], 1000);
	assert_int_equal(r.until_ms[1], 5000);
	/* Fill every row, gh-0 (until 1000) ending first; one more takes its row. */
	tj_admitter_refusals_add(&r, (const char(*)[TJ_NAME_MAX]) & nodes[2],
	                         TJ_PLAN_MAX_REFUSED - 2, 3000);
	assert_int_equal(r.n, TJ_PLAN_MAX_REFUSED);
	tj_admitter_refusals_add(&r, (const char(*)[TJ_NAME_MAX]) & nodes[TJ_PLAN_MAX_REFUSED], 1,
	                         9000);
	assert_int_equal(r.n, TJ_PLAN_MAX_REFUSED);
	assert_string_equal(r.nodes[0], nodes[TJ_PLAN_MAX_REFUSED]);
	assert_int_equal(r.until_ms[0], 9000);
	assert_string_equal(r.nodes[1], "gh-1");
}

static struct tj_kv gone_labels[] = { { "nvidia.com/gpu.product", "GH200" } };
static struct tj_gpu_class gone_classes[] = {
	{ .name = "gh200",
	  .resource = "nvidia.com/gpu",
	  .arch = "arm64",
	  .node_labels = gone_labels,
	  .n_node_labels = 1 },
};
static const struct tj_config gone_config = { .classes = gone_classes, .n_classes = 1 };
static struct tj_node_label gh_label[] = { { "nvidia.com/gpu.product", "GH200" } };

/* A deleted node of a class is remembered with its class and size for TJ_ADMITTER_GONE_MS; one
 * of no class is not; deleted again, its time is renewed; a full list drops the node that
 * was to be forgotten first. */
static void test_gone_nodes_kept_renewed_and_make_room(void **state)
{
	static struct tj_admitter_gone_node gone[TJ_ADMITTER_MAX_GONE];
	struct tj_node gh = { .name = "gh-1", .arch = "arm64", .labels = gh_label, .n_labels = 1 };
	struct tj_node cpu = { .name = "cpu-1", .arch = "amd64" };
	char name[32];
	size_t n = 0;

	gh.allocatable = (struct tj_node_allocatable){
		.cpu_milli = 72000,
		.memory = 1024,
		.pods = 110,
		.n_extended = 1,
		.extended = { { "nvidia.com/gpu", 4 } },
	};
	tj_admitter_gone_add(gone, &n, &gone_config, &cpu, 1000);
	assert_int_equal(n, 0);
	tj_admitter_gone_add(gone, &n, &gone_config, &gh, 1000);
	assert_int_equal(n, 1);
	assert_string_equal(gone[0].name, "gh-1");
	assert_string_equal(gone[0].gpu_class, "gh200");
	assert_int_equal(gone[0].allocatable.gpus, 4);
	assert_int_equal(gone[0].allocatable.cpu_milli, 72000);
	assert_int_equal(gone[0].allocatable.memory, 1024);
	assert_int_equal(gone[0].allocatable.pods, 110);
	assert_int_equal(gone[0].until_ms, 1000 + TJ_ADMITTER_GONE_MS);
	tj_admitter_gone_add(gone, &n, &gone_config, &gh, 5000);
	assert_int_equal(n, 1);
	assert_int_equal(gone[0].until_ms, 5000 + TJ_ADMITTER_GONE_MS);
	for (size_t i = 1; i < TJ_ADMITTER_MAX_GONE; i++) {
		snprintf(name, sizeof(name), "gh-x%zu", i);
		gh.name = name;
		tj_admitter_gone_add(gone, &n, &gone_config, &gh, 10000 + i);
	}
	assert_int_equal(n, TJ_ADMITTER_MAX_GONE);
	gh.name = "gh-new";
	tj_admitter_gone_add(gone, &n, &gone_config, &gh, 20000);
	assert_int_equal(n, TJ_ADMITTER_MAX_GONE);
	assert_string_equal(gone[0].name, "gh-new");
	assert_string_equal(gone[1].name, "gh-x1");
}

/* ---- the snapshot across cycles ---- */

static struct tj_kv block_gh200_labels[] = { { "nvidia.com/gpu.product", "GH200" } };
static struct tj_toleration block_tolerations[] = {
	{ "nvidia.com/gpu", "Exists", NULL, "NoSchedule" },
};
static struct tj_gpu_class block_classes[] = {
	{ .name = "gh200",
	  .resource = "nvidia.com/gpu",
	  .arch = "arm64",
	  .node_labels = block_gh200_labels,
	  .n_node_labels = 1,
	  .tolerations = block_tolerations,
	  .n_tolerations = 1 },
};
static struct tj_admission_policy block_policy = { .enabled = true,
	                                           .topology_label = (char *)"block" };
static const struct tj_config block_config = { .classes = block_classes,
	                                       .n_classes = 1,
	                                       .admission = &block_policy };

struct cycles {
	uv_loop_t loop;
	struct tj_informers informers;      /* nodes owned; the rest NULL */
	struct tj_store *entries;           /* owned */
	struct tj_ledger *ledger;           /* owned; kept between the cycles */
	struct tj_eligibility *eligibility; /* owned; kept between the cycles */
	uint64_t stamp;
};

/* A node of the cache: name, its product and arch labels (its class), its block (NULL:
 * none), a taint key with effect NoSchedule (NULL: only the class's GPU taint), cordoned or
 * not; Ready, 4 GPUs. The ledger hears of it as the controller's node handlers tell it. */
static void put_node(struct cycles *c, const char *name, const char *product, const char *arch,
                     const char *block, const char *taint, bool cordoned)
{
	char text[2048], blocks[64] = "", taints[256] = "";
	struct tj_store *nodes = idle_reflector_store(c->informers.nodes);
	void *node, *old = NULL;
	cJSON *obj;

	if (block)
		snprintf(blocks, sizeof(blocks), ",'block':'%s'", block);
	if (taint)
		snprintf(taints, sizeof(taints), ",{'key':'%s','effect':'NoSchedule'}", taint);
	snprintf(text, sizeof(text),
	         "{'metadata':{'name':'%s','labels':{'nvidia.com/gpu.product':'%s',"
	         "'kubernetes.io/arch':'%s'%s}},"
	         "'spec':{'unschedulable':%s,'taints':[{'key':'nvidia.com/gpu','value':'present',"
	         "'effect':'NoSchedule'}%s]},"
	         "'status':{'allocatable':{'cpu':'72','memory':'480Gi','pods':'110',"
	         "'nvidia.com/gpu':'4'},'conditions':[{'type':'Ready','status':'True'}]}}",
	         name, product, arch, blocks, cordoned ? "true" : "false", taints);
	obj = jlit(text);
	assert_int_equal(tj_node_project(obj, &node), 0);
	cJSON_Delete(obj);
	assert_int_equal(tj_store_upsert(nodes, node, &old), 0);
	tj_ledger_node_changed(c->ledger, old, node);
	tj_node_store_ops.free(old);
}

static void delete_node(struct cycles *c, const char *name)
{
	struct tj_store *nodes = idle_reflector_store(c->informers.nodes);
	void *old = NULL;

	assert_int_equal(tj_store_delete(nodes, name, &old), 0);
	tj_ledger_node_changed(c->ledger, old, NULL);
	tj_node_store_ops.free(old);
}

/* A waiting job ns/name of class gh200 whose pods' spec is spec_sq. */
static void put_entry_in(struct cycles *c, const char *ns, const char *name, int64_t created,
                         const char *spec_sq)
{
	struct tj_admitter_entry *e = calloc(1, sizeof(*e));
	cJSON *spec = jlit(spec_sq);

	assert_non_null(e);
	snprintf(e->key, sizeof(e->key), "%s/%s", ns, name);
	snprintf(e->namespace, sizeof(e->namespace), "%s", ns);
	snprintf(e->gpu_class, sizeof(e->gpu_class), "gh200");
	e->state = TJ_ADMITTER_WAITING;
	e->rank = SIZE_MAX;
	e->num_nodes = e->num_pods = 1;
	e->request = (struct tj_admission_resources){ 4, 1000, 1 << 30, 1 };
	e->creation_time = created;
	assert_int_equal(tj_placement_compile(spec, &e->placement, NULL, 0), 0);
	cJSON_Delete(spec);
	assert_int_equal(tj_store_upsert(c->entries, e, NULL), 0);
}

/* The same in team-a. */
static void put_entry(struct cycles *c, const char *name, int64_t created, const char *spec_sq)
{
	put_entry_in(c, "team-a", name, created, spec_sq);
}

/* The class's affinity and tolerations, as its rendered pods carry them; a spec goes on. */
#define CLASS_SPEC                                                                                 \
	"'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"           \
	"'nodeSelectorTerms':[{'matchExpressions':[{'key':'kubernetes.io/arch','operator':'In',"   \
	"'values':['arm64']}]}]}}},"                                                               \
	"'tolerations':[{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoSchedule'}]"

static void cycles_setup(struct cycles *c)
{
	*c = (struct cycles){ 0 };
	assert_int_equal(uv_loop_init(&c->loop), 0);
	assert_int_equal(idle_reflector_new(&c->loop, "nodes", tj_node_project, &tj_node_store_ops,
	                                    &c->informers.nodes),
	                 0);
	assert_int_equal(tj_store_new(&tj_admitter_entry_ops, &c->entries), 0);
	assert_int_equal(tj_ledger_new(&c->ledger), 0);
	assert_int_equal(tj_eligibility_new(&c->eligibility), 0);
	/* Two jobs of the class's own placement (one placement, shared), one that selects block
	 * b1, and one that tolerates none of the taints. */
	put_entry(c, "a", 100, "{" CLASS_SPEC "}");
	put_entry(c, "b", 101, "{" CLASS_SPEC "}");
	put_entry(c, "in-b1", 102, "{'nodeSelector':{'block':'b1'}," CLASS_SPEC "}");
	put_entry(c, "no-toleration", 103, "{'nodeSelector':{'kubernetes.io/arch':'arm64'}}");
}

static void cycles_teardown(struct cycles *c)
{
	tj_ledger_free(c->ledger);
	tj_eligibility_free(c->eligibility);
	tj_store_free(c->entries);
	tj_reflector_free(c->informers.nodes);
	uv_run(&c->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&c->loop), 0);
}

/* The snapshot of a cycle that kept what the ones before it judged (kept), and one built
 * afresh (a ledger and eligibility of its own) from the same caches, are alike in every node
 * and in the nodes every job may use. Returns kept's built snapshot for more checks; the
 * caller clears it. */
static void build_both(struct cycles *c, struct tj_admitter_snapshot *kept)
{
	struct tj_admitter_source src = {
		.config = &block_config,
		.informers = &c->informers,
		.entries = c->entries,
		.ledger = c->ledger,
		.eligibility = c->eligibility,
		.stamp = ++c->stamp,
	};
	struct tj_admitter_snapshot fresh = { 0 };
	struct tj_ledger *ledger;
	struct tj_eligibility *eligibility;

	*kept = (struct tj_admitter_snapshot){ 0 };
	assert_int_equal(tj_admitter_snapshot_build(&src, kept, 1795953600, 1000), 0);
	assert_int_equal(tj_ledger_new(&ledger), 0);
	assert_int_equal(tj_eligibility_new(&eligibility), 0);
	src.ledger = ledger;
	src.eligibility = eligibility;
	src.stamp = 1;
	assert_int_equal(tj_admitter_snapshot_build(&src, &fresh, 1795953600, 1000), 0);

	assert_int_equal(kept->n_nodes, fresh.n_nodes);
	for (size_t k = 0; k < fresh.n_nodes; k++) {
		const struct tj_admission_node *x = &kept->nodes[k], *y = &fresh.nodes[k];

		assert_string_equal(x->name, y->name);
		assert_int_equal(x->class_index, y->class_index);
		assert_int_equal(x->schedulable, y->schedulable);
		assert_memory_equal(&x->allocatable, &y->allocatable, sizeof(x->allocatable));
		assert_memory_equal(&x->used, &y->used, sizeof(x->used));
		assert_int_equal(x->domain == NULL, y->domain == NULL);
		if (y->domain)
			assert_string_equal(x->domain, y->domain);
		assert_string_equal(kept->refs[k].name, fresh.refs[k].name);
	}
	assert_int_equal(kept->n_jobs, fresh.n_jobs);
	for (size_t i = 0; i < fresh.n_jobs; i++) {
		const struct tj_admission_job *x = &kept->jobs[i], *y = &fresh.jobs[i];

		assert_string_equal(x->key, y->key);
		assert_int_equal(x->eligible == NULL, y->eligible == NULL);
		if (y->eligible) {
			assert_memory_equal(x->eligible, y->eligible, fresh.n_nodes);
			assert_string_equal(x->ineligible_why, y->ineligible_why);
		}
	}
	tj_admitter_snapshot_clear(&fresh);
	tj_ledger_free(ledger);
	tj_eligibility_free(eligibility);
}

/* The index of the node named name in s, failing the test without one. */
static size_t node_at(const struct tj_admitter_snapshot *s, const char *name)
{
	ssize_t k = tj_admitter_find_node(s->refs, s->n_nodes, name);

	assert_true(k >= 0);
	return (size_t)k;
}

/* The job named key in s. */
static const struct tj_admission_job *job_of(const struct tj_admitter_snapshot *s, const char *key)
{
	for (size_t i = 0; i < s->n_jobs; i++)
		if (strcmp(s->jobs[i].key, key) == 0)
			return &s->jobs[i];
	fail_msg("no job %s", key);
	return NULL;
}

/* A job's class is looked up once per config: under the next one (a reload, which may move
 * the classes), its index is that config's. */
static void test_snapshot_looks_up_classes_again_under_a_new_config(void **state)
{
	struct cycles c;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;
	/* block_config's class after another: under it gh200 is the class of index 1. */
	struct tj_gpu_class two_classes[] = {
		{ .name = "h100", .resource = "nvidia.com/gpu", .arch = "amd64" },
		block_classes[0],
	};
	const struct tj_config two_config = { .classes = two_classes,
		                              .n_classes = 2,
		                              .admission = &block_policy };

	(void)state;
	cycles_setup(&c);
	put_node(&c, "gh-2", "GH200", "arm64", NULL, NULL, false);
	src = (struct tj_admitter_source){ .config = &block_config,
		                           .informers = &c.informers,
		                           .entries = c.entries,
		                           .ledger = c.ledger,
		                           .eligibility = c.eligibility,
		                           .stamp = ++c.stamp,
		                           .config_epoch = 1 };
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, 1795953600, 1000), 0);
	assert_int_equal(job_of(&s, "team-a/a")->class_index, 0);
	tj_admitter_snapshot_clear(&s);

	src.config = &two_config;
	src.config_epoch = 2;
	src.stamp = ++c.stamp;
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, 1795953600, 1000), 0);
	assert_int_equal(job_of(&s, "team-a/a")->class_index, 1);
	assert_int_equal(s.nodes[node_at(&s, "gh-2")].class_index, 1);
	tj_admitter_snapshot_clear(&s);
	cycles_teardown(&c);
}

/* A node added, deleted, relabelled, tainted, cordoned, or of another class between two
 * cycles shows in the next snapshot as in one built afresh; a node whose status report
 * changed nothing leaves it as it was. */
static void test_snapshot_shows_node_changes_as_a_fresh_one(void **state)
{
	struct cycles c;
	struct tj_admitter_snapshot s;
	const struct tj_admission_job *j;

	(void)state;
	cycles_setup(&c);
	put_node(&c, "gh-2", "GH200", "arm64", "b1", NULL, false);
	put_node(&c, "gh-3", "GH200", "arm64", "b2", NULL, false);
	put_node(&c, "gh-4", "GH200", "arm64", "b1", NULL, false);
	build_both(&c, &s);
	assert_int_equal(s.n_nodes, 3);
	assert_int_equal(s.n_jobs, 4);
	/* The two jobs of one placement share it, and its nodes. */
	assert_ptr_equal(job_of(&s, "team-a/a")->eligible, NULL);
	assert_ptr_equal(job_of(&s, "team-a/b")->eligible, NULL);
	assert_false(job_of(&s, "team-a/in-b1")->eligible[node_at(&s, "gh-3")]);
	tj_admitter_snapshot_clear(&s);

	/* Added, first in name order: every node after it moves. */
	put_node(&c, "gh-1", "GH200", "arm64", "b2", NULL, false);
	build_both(&c, &s);
	assert_int_equal(s.n_nodes, 4);
	assert_string_equal(s.nodes[0].name, "gh-1");
	assert_string_equal(s.nodes[0].domain, "b2");
	assert_false(job_of(&s, "team-a/in-b1")->eligible[0]);
	tj_admitter_snapshot_clear(&s);

	/* Deleted. */
	delete_node(&c, "gh-2");
	build_both(&c, &s);
	assert_int_equal(s.n_nodes, 3);
	assert_string_equal(s.nodes[1].name, "gh-3");
	tj_admitter_snapshot_clear(&s);

	/* One node gone and another come between two cycles: as many nodes, at other places. */
	delete_node(&c, "gh-1");
	put_node(&c, "gh-5", "GH200", "arm64", "b1", NULL, false);
	build_both(&c, &s);
	assert_int_equal(s.n_nodes, 3);
	assert_string_equal(s.nodes[0].name, "gh-3");
	assert_false(job_of(&s, "team-a/in-b1")->eligible[0]);
	tj_admitter_snapshot_clear(&s);
	delete_node(&c, "gh-5");
	put_node(&c, "gh-1", "GH200", "arm64", "b2", NULL, false);

	/* Relabelled: gh-3 into block b1, which in-b1 may now use. */
	put_node(&c, "gh-3", "GH200", "arm64", "b1", NULL, false);
	build_both(&c, &s);
	assert_string_equal(s.nodes[node_at(&s, "gh-3")].domain, "b1");
	j = job_of(&s, "team-a/in-b1");
	assert_true(j->eligible[node_at(&s, "gh-3")]);
	tj_admitter_snapshot_clear(&s);

	/* Tainted: gh-4 takes no new pods of the class, nor any job's. */
	put_node(&c, "gh-4", "GH200", "arm64", "b1", "maintenance", false);
	build_both(&c, &s);
	assert_false(s.nodes[node_at(&s, "gh-4")].schedulable);
	assert_false(job_of(&s, "team-a/a")->eligible[node_at(&s, "gh-4")]);
	tj_admitter_snapshot_clear(&s);

	/* Cordoned: gh-1 takes no new pods, though every placement allows it. */
	put_node(&c, "gh-1", "GH200", "arm64", "b2", NULL, true);
	build_both(&c, &s);
	assert_false(s.nodes[node_at(&s, "gh-1")].schedulable);
	assert_true(job_of(&s, "team-a/a")->eligible[node_at(&s, "gh-1")]);
	tj_admitter_snapshot_clear(&s);

	/* Of no class any more (another product), then a status report that changes nothing. */
	put_node(&c, "gh-3", "H100", "arm64", "b1", NULL, false);
	build_both(&c, &s);
	assert_int_equal(s.nodes[node_at(&s, "gh-3")].class_index, -1);
	assert_int_equal(s.nodes[node_at(&s, "gh-3")].allocatable.gpus, 0);
	tj_admitter_snapshot_clear(&s);
	put_node(&c, "gh-3", "H100", "arm64", "b1", NULL, false);
	build_both(&c, &s);
	tj_admitter_snapshot_clear(&s);

	/* Back to the first shape, every change undone. */
	put_node(&c, "gh-1", "GH200", "arm64", "b2", NULL, false);
	put_node(&c, "gh-2", "GH200", "arm64", "b1", NULL, false);
	put_node(&c, "gh-3", "GH200", "arm64", "b2", NULL, false);
	put_node(&c, "gh-4", "GH200", "arm64", "b1", NULL, false);
	build_both(&c, &s);
	assert_int_equal(s.n_nodes, 4);
	for (size_t k = 0; k < s.n_nodes; k++)
		assert_true(s.nodes[k].schedulable);
	tj_admitter_snapshot_clear(&s);
	cycles_teardown(&c);
}

/* A node deleted without the ledger hearing of it (a missed event) is still gone from the
 * next snapshot: the ledger counts the cache's nodes. */
static void test_snapshot_drops_a_node_deleted_unheard(void **state)
{
	struct cycles c;
	struct tj_admitter_snapshot s;
	struct tj_store *nodes;

	(void)state;
	cycles_setup(&c);
	put_node(&c, "gh-1", "GH200", "arm64", "b1", NULL, false);
	put_node(&c, "gh-2", "GH200", "arm64", "b2", NULL, false);
	build_both(&c, &s);
	tj_admitter_snapshot_clear(&s);
	nodes = idle_reflector_store(c.informers.nodes);
	assert_int_equal(tj_store_delete(nodes, "gh-1", NULL), 0);
	build_both(&c, &s);
	assert_int_equal(s.n_nodes, 1);
	assert_string_equal(s.nodes[0].name, "gh-2");
	tj_admitter_snapshot_clear(&s);
	cycles_teardown(&c);
}

/* The entry of key in c's queue. */
static struct tj_admitter_entry *entry_of(struct cycles *c, const char *key)
{
	struct tj_admitter_entry *e = (struct tj_admitter_entry *)tj_store_get(c->entries, key);

	assert_non_null(e);
	return e;
}

/* A source of c's caches and entries under block_config. */
static struct tj_admitter_source block_source(struct cycles *c)
{
	return (struct tj_admitter_source){
		.config = &block_config,
		.informers = &c->informers,
		.entries = c->entries,
		.ledger = c->ledger,
		.eligibility = c->eligibility,
		.stamp = 1,
	};
}

/* e admitted (at admitted_ms) or created on node. */
static void admit_on(struct tj_admitter_entry *e, enum tj_admitter_state state, const char *node,
                     uint64_t admitted_ms)
{
	e->state = state;
	e->nodes = calloc(1, sizeof(*e->nodes));
	assert_non_null(e->nodes);
	e->nodes[0] = strdup(node);
	e->n_nodes = 1;
	e->admitted_ms = admitted_ms;
}

/* The waiting jobs come in the order of the last cycle's ranks, those without one after
 * them; a gang admitted or created but not in the cache holds its node, and one whose plan
 * never came holds it this cycle still, and waits again. */
static void test_snapshot_orders_by_rank_and_holds_admitted_gangs(void **state)
{
	struct cycles c;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;
	bool c_seen = false, late_seen = false;

	(void)state;
	cycles_setup(&c);
	put_node(&c, "gh-1", "GH200", "arm64", "b1", NULL, false);
	put_node(&c, "gh-2", "GH200", "arm64", "b1", NULL, false);
	entry_of(&c, "team-a/a")->rank = 1;
	entry_of(&c, "team-a/b")->rank = 0;
	admit_on(entry_of(&c, "team-a/in-b1"), TJ_ADMITTER_CREATED, "gh-2", 90000);
	admit_on(entry_of(&c, "team-a/no-toleration"), TJ_ADMITTER_ADMITTED, "gh-1", 1000);
	put_entry(&c, "c", 104, "{}");
	src = block_source(&c);
	assert_int_equal(tj_admitter_snapshot_build(&src, &s, 1795953600,
	                                            1000 + TJ_ADMITTER_ADMITTED_TIMEOUT_MS + 1),
	                 0);
	assert_int_equal(s.n_jobs, 4);
	assert_string_equal(s.jobs[0].key, "team-a/b");
	assert_string_equal(s.jobs[1].key, "team-a/a");
	for (size_t i = 2; i < 4; i++) {
		c_seen = c_seen || strcmp(s.jobs[i].key, "team-a/c") == 0;
		late_seen = late_seen || strcmp(s.jobs[i].key, "team-a/no-toleration") == 0;
	}
	assert_true(c_seen && late_seen);
	assert_int_equal(entry_of(&c, "team-a/no-toleration")->state, TJ_ADMITTER_WAITING);
	assert_int_equal(s.nodes[0].used.gpus, 4);
	assert_int_equal(s.nodes[1].used.gpus, 4);
	assert_int_equal(s.nodes[0].used.pods, 1);
	tj_admitter_snapshot_clear(&s);
	cycles_teardown(&c);
}

/* The snapshot gives the nodes in name order, whatever order they came in, and tells the
 * decision so; the jobs of a namespace share one copy of its name, from cycle to cycle. */
static void test_snapshot_gives_nodes_by_name_and_one_copy_of_a_namespace(void **state)
{
	struct cycles c;
	struct tj_admitter_snapshot s = { 0 };
	struct tj_admitter_source src;
	const char *team_a = NULL, *first = NULL;

	(void)state;
	cycles_setup(&c);
	put_node(&c, "gh-3", "GH200", "arm64", "b1", NULL, false);
	put_node(&c, "gh-1", "GH200", "arm64", "b1", NULL, false);
	put_node(&c, "gh-2", "GH200", "arm64", "b1", NULL, false);
	put_entry_in(&c, "team-b", "other", 104, "{}");
	src = block_source(&c);
	for (int cycle = 0; cycle < 2; cycle++) {
		assert_int_equal(tj_admitter_snapshot_build(&src, &s, 1795953600, 1000), 0);
		assert_true(s.input.nodes_by_name);
		assert_int_equal(s.n_nodes, 3);
		for (size_t k = 1; k < s.n_nodes; k++)
			assert_true(strcmp(s.nodes[k - 1].name, s.nodes[k].name) < 0);
		assert_int_equal(s.n_jobs, 5);
		for (size_t k = 0; k < s.n_jobs; k++) {
			const char *ns = s.jobs[k].namespace;

			assert_ptr_not_equal(ns, entry_of(&c, s.jobs[k].key)->namespace);
			if (strcmp(s.jobs[k].key, "team-b/other") == 0) {
				assert_string_equal(ns, "team-b");
				continue;
			}
			assert_string_equal(ns, "team-a");
			if (!team_a)
				team_a = ns;
			assert_ptr_equal(ns, team_a);
		}
		if (!first)
			first = team_a;
		assert_ptr_equal(team_a, first);
		tj_admitter_snapshot_clear(&s);
	}
	cycles_teardown(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_created_again_table),
		cmocka_unit_test(test_refusals_renew_and_make_room),
		cmocka_unit_test(test_gone_nodes_kept_renewed_and_make_room),
		cmocka_unit_test(test_snapshot_shows_node_changes_as_a_fresh_one),
		cmocka_unit_test(test_snapshot_looks_up_classes_again_under_a_new_config),
		cmocka_unit_test(test_snapshot_drops_a_node_deleted_unheard),
		cmocka_unit_test(test_snapshot_orders_by_rank_and_holds_admitted_gangs),
		cmocka_unit_test(test_snapshot_gives_nodes_by_name_and_one_copy_of_a_namespace),
	};
	return cmocka_run_group_tests_name("admitter_queue", tests, NULL, NULL);
}
