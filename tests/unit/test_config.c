/* The controller's config file: parsing (the shipped file, a full document, a table of
 * broken ones with their exact messages); reloading is test_config_watch.c's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "reconcilers/policy/qos.h"

static struct tj_config *parse_ok(const char *yaml)
{
	struct tj_config *config = NULL;
	char err[512] = "";
	int r = tj_config_parse(yaml, strlen(yaml), "test.yaml", &config, err, sizeof(err));
	if (r != 0)
		fail_msg("unexpected error %d: %s", r, err);
	assert_non_null(config);
	return config;
}

static void assert_class(const struct tj_gpu_class *c, const char *name, const char *resource,
                         const char *arch, const char *label_key, const char *label_value)
{
	assert_non_null(c);
	assert_string_equal(c->name, name);
	assert_string_equal(c->resource, resource);
	if (arch)
		assert_string_equal(c->arch, arch);
	else
		assert_null(c->arch);
	assert_int_equal(c->n_node_labels, 1);
	assert_string_equal(c->node_labels[0].key, label_key);
	assert_string_equal(c->node_labels[0].value, label_value);
}

static void assert_gpu_toleration(const struct tj_gpu_class *c)
{
	assert_int_equal(c->n_tolerations, 1);
	assert_string_equal(c->tolerations[0].key, "nvidia.com/gpu");
	assert_string_equal(c->tolerations[0].operator_, "Exists");
	assert_null(c->tolerations[0].value);
	assert_string_equal(c->tolerations[0].effect, "NoSchedule");
}

static void assert_strings(char *const *got, size_t n, const char *const *want)
{
	size_t n_want = 0;
	while (want[n_want])
		n_want++;
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got[i], want[i]);
}

static void assert_policy_equal(const struct tj_failure_policy *a,
                                const struct tj_failure_policy *b)
{
	assert_int_equal(a->max_restarts, b->max_restarts);
	assert_int_equal(a->max_infrastructure_restarts, b->max_infrastructure_restarts);
	assert_int_equal(a->node_grace_period_seconds, b->node_grace_period_seconds);
	assert_int_equal(a->backoff_initial_seconds, b->backoff_initial_seconds);
	assert_int_equal(a->backoff_max_seconds, b->backoff_max_seconds);
	assert_int_equal(a->n_permanent_exit_codes, b->n_permanent_exit_codes);
	for (size_t i = 0; i < a->n_permanent_exit_codes; i++)
		assert_int_equal(a->permanent_exit_codes[i], b->permanent_exit_codes[i]);
	assert_int_equal(a->n_gpu_conditions, b->n_gpu_conditions);
	for (size_t i = 0; i < a->n_gpu_conditions; i++)
		assert_string_equal(a->gpu_conditions[i], b->gpu_conditions[i]);
	assert_int_equal(a->n_gpu_taints, b->n_gpu_taints);
	for (size_t i = 0; i < a->n_gpu_taints; i++)
		assert_string_equal(a->gpu_taints[i], b->gpu_taints[i]);
	assert_int_equal(a->n_fault_cordon_conditions, b->n_fault_cordon_conditions);
	for (size_t i = 0; i < a->n_fault_cordon_conditions; i++)
		assert_string_equal(a->fault_cordon_conditions[i], b->fault_cordon_conditions[i]);
}

/* The file shipped in deploy/config/ parses to the classes the local cluster's nodes have
 * (deploy/local labels GH200 and H100 nodes the same way). */
static void test_shipped_config(void **state)
{
	const char *root = getenv("TJ_SOURCE_ROOT");
	if (!root)
		fail_msg("TJ_SOURCE_ROOT is not set; run the tests with meson test");
	char path[4096];
	snprintf(path, sizeof(path), "%s/deploy/config/config.yaml", root);
	struct tj_config *config = NULL;
	char err[512] = "";
	int r = tj_config_load_file(path, &config, err, sizeof(err));
	if (r != 0)
		fail_msg("%s", err);

	assert_int_equal(config->n_classes, 2);
	const struct tj_gpu_class *gh200 = tj_config_find_class(config, "gh200");
	assert_class(gh200, "gh200", "nvidia.com/gpu", "arm64", "nvidia.com/gpu.product",
	             "NVIDIA-GH200-480GB");
	assert_gpu_toleration(gh200);
	const struct tj_gpu_class *h100 = tj_config_find_class(config, "h100");
	assert_class(h100, "h100", "nvidia.com/gpu", "amd64", "nvidia.com/gpu.product",
	             "NVIDIA-H100-80GB-HBM3");
	assert_gpu_toleration(h100);
	assert_null(tj_config_find_class(config, "a100"));
	assert_null(tj_config_find_class(NULL, "gh200"));
	/* The shipped file spells out the defaults. */
	assert_non_null(config->failure_policy);
	assert_policy_equal(config->failure_policy, tj_config_failure_policy(NULL));
	/* And the admission defaults. */
	const struct tj_admission_policy *a = tj_config_admission(config);
	assert_ptr_not_equal(a, tj_config_admission(NULL));
	assert_true(a->enabled && a->backfill && !a->wait_if_never_fits);
	assert_int_equal(a->pin_timeout_seconds, 60);
	assert_null(a->topology_label);
	assert_int_equal(a->n_limits, 0);
	assert_int_equal(a->backfill_depth, tj_config_admission(NULL)->backfill_depth);
	assert_int_equal(a->fair_share_half_life, tj_config_admission(NULL)->fair_share_half_life);
	assert_int_equal(a->accounting_retention, tj_config_admission(NULL)->accounting_retention);
	/* And the built-in QOS tiers and namespace rule. */
	size_t n_builtin;
	const struct tj_qos_tier *builtin = tj_qos_tiers(NULL, &n_builtin);

	assert_int_equal(a->n_tiers, n_builtin);
	for (size_t i = 0; i < n_builtin; i++) {
		assert_string_equal(a->tiers[i].name, builtin[i].name);
		assert_int_equal(a->tiers[i].priority, builtin[i].priority);
		assert_int_equal(a->tiers[i].max_walltime_seconds, 0);
		assert_int_equal(a->tiers[i].preempts, builtin[i].preempts);
		assert_int_equal(a->tiers[i].preempt_after_seconds,
		                 builtin[i].preempt_after_seconds);
	}
	const struct tj_qos_namespace *rule = tj_qos_namespace_rule(a, "team-a"),
	                              *builtin_rule = tj_qos_namespace_rule(NULL, "team-a");

	assert_string_equal(rule->namespace, "*");
	assert_int_equal(rule->n_allowed, builtin_rule->n_allowed);
	for (size_t i = 0; i < rule->n_allowed; i++)
		assert_string_equal(rule->allowed[i], builtin_rule->allowed[i]);
	assert_string_equal(rule->default_tier, builtin_rule->default_tier);
	/* And the retention defaults. */
	assert_non_null(config->retention);
	assert_int_equal(config->retention->ttl_seconds_after_finished,
	                 tj_config_retention(NULL)->ttl_seconds_after_finished);
	assert_int_equal(config->retention->keep_failed_pods_seconds,
	                 tj_config_retention(NULL)->keep_failed_pods_seconds);
	tj_config_free(config);
}

/* The site config of deploy/overlays/flame parses, and gives every job a walltime. */
static void test_flame_config(void **state)
{
	const char *root = getenv("TJ_SOURCE_ROOT");
	char path[4096];
	struct tj_config *config = NULL;
	char err[512] = "";

	assert_non_null(root);
	snprintf(path, sizeof(path), "%s/deploy/overlays/flame/config.yaml", root);
	if (tj_config_load_file(path, &config, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	assert_non_null(tj_config_find_class(config, "gh200"));
	assert_int_equal(tj_config_walltime(config)->cluster.default_seconds, 24 * 3600);
	assert_int_equal(tj_config_walltime(config)->cluster.max_seconds, 72 * 3600);
	assert_int_equal(tj_qos_find(tj_config_admission(config), "high")->max_walltime_seconds,
	                 24 * 3600);
	tj_config_free(config);
}

/* A syntax error under lines of many tabs (fuzz_config found it): libfyaml 0.7.12 crashed
 * drawing the source line of the error; the error is collected instead, with its line. */
static void test_syntax_error_under_tabs(void **state)
{
	const char *root = getenv("TJ_SOURCE_ROOT");
	if (!root)
		fail_msg("TJ_SOURCE_ROOT is not set; run the tests with meson test");
	char path[4096], *text = NULL, err[512] = "";
	size_t len = 0;
	struct tj_config *config = NULL;
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/fuzz_config/libfyaml-tabs-error-display",
	         root);
	assert_int_equal(tj_config_read_file(path, &text, &len, err, sizeof(err)), 0);
	assert_int_equal(tj_config_parse(text, len, "test.yaml", &config, err, sizeof(err)),
	                 -EINVAL);
	assert_string_equal(err, "test.yaml:2: invalid multiline plain key");
	assert_null(config);
	free(text);
}

/* Every field, flow and block style, optional fields left out, the toleration default. */
static void test_parse_full(void **state)
{
	struct tj_config *config = parse_ok(
	        "gpuClasses:\n"
	        "  - name: mi300\n"
	        "    resource: amd.com/gpu\n"
	        "    nodeLabels: {amd.com/gpu.product-name: MI300X, flame.dev/pool: a}\n"
	        "    tolerations:\n"
	        "      - key: amd.com/gpu\n"
	        "        value: present\n"
	        "        effect: NoExecute\n"
	        "      - operator: Exists\n"
	        "  - {name: cpu-only, resource: example.com/slot, arch: amd64, nodeLabels: {},\n"
	        "     tolerations: []}\n"
	        "  - name: bare\n"
	        "    resource: example.com/thing\n"
	        "    arch: ~\n"
	        "    nodeLabels:\n"
	        "    tolerations:\n");
	assert_int_equal(config->n_classes, 3);

	const struct tj_gpu_class *c = &config->classes[0];
	assert_string_equal(c->name, "mi300");
	assert_string_equal(c->resource, "amd.com/gpu");
	assert_null(c->arch);
	assert_int_equal(c->n_node_labels, 2);
	assert_string_equal(c->node_labels[0].key, "amd.com/gpu.product-name");
	assert_string_equal(c->node_labels[0].value, "MI300X");
	assert_string_equal(c->node_labels[1].key, "flame.dev/pool");
	assert_string_equal(c->node_labels[1].value, "a");
	assert_int_equal(c->n_tolerations, 2);
	assert_string_equal(c->tolerations[0].key, "amd.com/gpu");
	assert_string_equal(c->tolerations[0].operator_, "Equal");
	assert_string_equal(c->tolerations[0].value, "present");
	assert_string_equal(c->tolerations[0].effect, "NoExecute");
	assert_null(c->tolerations[1].key);
	assert_string_equal(c->tolerations[1].operator_, "Exists");
	assert_null(c->tolerations[1].value);
	assert_null(c->tolerations[1].effect);

	c = &config->classes[1];
	assert_string_equal(c->name, "cpu-only");
	assert_string_equal(c->arch, "amd64");
	assert_int_equal(c->n_node_labels, 0);
	assert_null(c->node_labels);
	assert_int_equal(c->n_tolerations, 0);
	assert_null(c->tolerations);

	c = &config->classes[2];
	assert_string_equal(c->name, "bare");
	assert_null(c->arch);
	assert_int_equal(c->n_node_labels, 0);
	assert_int_equal(c->n_tolerations, 0);

	assert_ptr_equal(tj_config_find_class(config, "bare"), &config->classes[2]);
	tj_config_free(config);
}

static void test_parse_empty_list(void **state)
{
	struct tj_config *config = parse_ok("gpuClasses: []\n");
	assert_int_equal(config->n_classes, 0);
	assert_null(config->classes);
	assert_null(tj_config_find_class(config, "gh200"));
	tj_config_free(config);
	assert_null(tj_config_free(NULL));
}

/* Without a failurePolicy the defaults apply; each absent field of one keeps its default;
 * an empty list is empty, not the default. */
static void test_failure_policy(void **state)
{
	static const char *const gpu_conditions[] = { "GpuUnhealthy", "XidError", NULL };
	static const char *const gpu_taints[] = { "nvidia.com/gpu.unhealthy", "nvidia.com/gpu.xid",
		                                  NULL };
	static const char *const cordon[] = { "KernelDeadlock", "ReadonlyFilesystem", NULL };
	const struct tj_failure_policy *d = tj_config_failure_policy(NULL);

	assert_int_equal(d->max_restarts, 3);
	assert_int_equal(d->max_infrastructure_restarts, 10);
	assert_int_equal(d->node_grace_period_seconds, 60);
	assert_int_equal(d->backoff_initial_seconds, 10);
	assert_int_equal(d->backoff_max_seconds, 300);
	assert_int_equal(d->n_permanent_exit_codes, 2);
	assert_int_equal(d->permanent_exit_codes[0], 126);
	assert_int_equal(d->permanent_exit_codes[1], 127);
	assert_strings(d->gpu_conditions, d->n_gpu_conditions, gpu_conditions);
	assert_strings(d->gpu_taints, d->n_gpu_taints, gpu_taints);
	assert_strings(d->fault_cordon_conditions, d->n_fault_cordon_conditions, cordon);

	struct tj_config *config = parse_ok("gpuClasses: []\n");
	assert_null(config->failure_policy);
	assert_ptr_equal(tj_config_failure_policy(config), d);
	tj_config_free(config);

	config = parse_ok("gpuClasses: []\nfailurePolicy: {}\n");
	assert_non_null(config->failure_policy);
	assert_policy_equal(tj_config_failure_policy(config), d);
	tj_config_free(config);

	config = parse_ok("gpuClasses: []\n"
	                  "failurePolicy:\n"
	                  "  maxRestarts: 0\n"
	                  "  maxInfrastructureRestarts: 25\n"
	                  "  nodeGracePeriodSeconds: 5\n"
	                  "  restartBackoff: {initialSeconds: 1}\n"
	                  "  permanentExitCodes: [2, 255]\n"
	                  "  gpuHealth:\n"
	                  "    conditions: [example.com/GPUBroken]\n"
	                  "    taints: []\n"
	                  "  faultCordonConditions:\n");
	const struct tj_failure_policy *p = tj_config_failure_policy(config);
	static const char *const broken[] = { "example.com/GPUBroken", NULL };
	static const char *const none[] = { NULL };
	assert_int_equal(p->max_restarts, 0);
	assert_int_equal(p->max_infrastructure_restarts, 25);
	assert_int_equal(p->node_grace_period_seconds, 5);
	assert_int_equal(p->backoff_initial_seconds, 1);
	assert_int_equal(p->backoff_max_seconds, 300);
	assert_int_equal(p->n_permanent_exit_codes, 2);
	assert_int_equal(p->permanent_exit_codes[0], 2);
	assert_int_equal(p->permanent_exit_codes[1], 255);
	assert_strings(p->gpu_conditions, p->n_gpu_conditions, broken);
	assert_strings(p->gpu_taints, p->n_gpu_taints, none);
	/* null is absent: the default */
	assert_strings(p->fault_cordon_conditions, p->n_fault_cordon_conditions, cordon);
	tj_config_free(config);

	config = parse_ok("gpuClasses: []\nfailurePolicy:\n  permanentExitCodes: []\n"
	                  "  restartBackoff: {initialSeconds: 0, maxSeconds: 0}\n");
	p = tj_config_failure_policy(config);
	assert_int_equal(p->n_permanent_exit_codes, 0);
	assert_int_equal(p->backoff_initial_seconds, 0);
	assert_int_equal(p->backoff_max_seconds, 0);
	tj_config_free(config);
}

static void test_retention_policy(void **state)
{
	const struct tj_retention_policy *d = tj_config_retention(NULL);

	assert_int_equal(d->ttl_seconds_after_finished, -1);
	assert_int_equal(d->keep_failed_pods_seconds, 300);

	struct tj_config *config = parse_ok("gpuClasses: []\n");
	assert_ptr_equal(tj_config_retention(config), d);
	tj_config_free(config);

	config = parse_ok("gpuClasses: []\nretention:\n  ttlSecondsAfterFinished: 3600\n");
	assert_int_equal(tj_config_retention(config)->ttl_seconds_after_finished, 3600);
	assert_int_equal(tj_config_retention(config)->keep_failed_pods_seconds, 300);
	tj_config_free(config);

	config = parse_ok("gpuClasses: []\nretention:\n  keepFailedPodsSeconds: 0\n");
	assert_int_equal(tj_config_retention(config)->ttl_seconds_after_finished, -1);
	assert_int_equal(tj_config_retention(config)->keep_failed_pods_seconds, 0);
	tj_config_free(config);
}

static void test_trainer_status(void **state)
{
	struct tj_config *config = parse_ok("gpuClasses: []\n");

	assert_null(config->trainer_status_url);
	assert_null(config->trainer_status_ca_config_map);
	tj_config_free(config);
	config = parse_ok("gpuClasses: []\ntrainerStatus:\n"
	                  "  url: https://trainjob-controller.trainjob-system.svc:10443\n"
	                  "  caConfigMap: trainjob-ca\n");
	assert_string_equal(config->trainer_status_url,
	                    "https://trainjob-controller.trainjob-system.svc:10443");
	assert_string_equal(config->trainer_status_ca_config_map, "trainjob-ca");
	tj_config_free(config);
	config = parse_ok("gpuClasses: []\ntrainerStatus:\n  url: https://127.0.0.1:10443\n");
	assert_string_equal(config->trainer_status_url, "https://127.0.0.1:10443");
	assert_null(config->trainer_status_ca_config_map);
	tj_config_free(config);
}

static void test_suspect_policy(void **state)
{
	const struct tj_suspect_policy *d = tj_config_suspect(NULL);

	struct tj_config *config = parse_ok("gpuClasses: []\n");
	assert_ptr_equal(tj_config_suspect(config), d);
	tj_config_free(config);

	config = parse_ok("gpuClasses: []\nsuspectNodes:\n  enabled: false\n  jobs: 5\n"
	                  "  window: 2h30m\n  exitCodes: [74, 134]\n");
	const struct tj_suspect_policy *p = tj_config_suspect(config);
	assert_false(p->enabled);
	assert_int_equal(p->jobs, 5);
	assert_int_equal(p->window_seconds, 9000);
	assert_int_equal(p->n_exit_codes, 2);
	assert_int_equal(p->exit_codes[0], 74);
	assert_int_equal(p->exit_codes[1], 134);
	tj_config_free(config);

	/* An absent field keeps its default, the exit codes copied. */
	config = parse_ok("gpuClasses: []\nsuspectNodes:\n  jobs: 2\n");
	p = tj_config_suspect(config);
	assert_true(p->enabled);
	assert_int_equal(p->jobs, 2);
	assert_int_equal(p->window_seconds, 3600);
	assert_int_equal(p->n_exit_codes, d->n_exit_codes);
	assert_memory_equal(p->exit_codes, d->exit_codes, d->n_exit_codes * sizeof(int));
	assert_ptr_not_equal(p->exit_codes, d->exit_codes);
	tj_config_free(config);

	config = parse_ok("gpuClasses: []\nsuspectNodes:\n  exitCodes: []\n");
	assert_int_equal(tj_config_suspect(config)->n_exit_codes, 0);
	tj_config_free(config);
}

static void test_admission_policy(void **state)
{
	const struct tj_admission_policy *d = tj_config_admission(NULL);

	assert_true(d->enabled);
	assert_true(d->backfill);
	assert_false(d->wait_if_never_fits);
	assert_int_equal(d->pin_timeout_seconds, 60);
	assert_int_equal(d->restart_wait_seconds, 600);
	assert_int_equal(d->backfill_depth, 8);
	assert_int_equal(d->backfill_max_job_test, 500);
	assert_null(d->topology_label);
	assert_int_equal(d->n_limits, 0);

	struct tj_config *config = parse_ok("gpuClasses: []\n");
	assert_ptr_equal(tj_config_admission(config), d);
	tj_config_free(config);

	config = parse_ok("gpuClasses:\n"
	                  "  - {name: gh200, resource: nvidia.com/gpu}\n"
	                  "admission:\n"
	                  "  enabled: false\n"
	                  "  backfill: false\n"
	                  "  neverFits: Wait\n"
	                  "  pinTimeoutSeconds: 0\n"
	                  "  restartWaitSeconds: 0\n"
	                  "  backfillDepth: 3\n"
	                  "  backfillMaxJobTest: 0\n"
	                  "  topologyLabel: topology.flame.dev/rack\n"
	                  "  namespaceLimits:\n"
	                  "    - {namespace: team-a, gpuClass: gh200, maxGPUs: 16}\n"
	                  "    - {namespace: '*', gpuClass: gh200, maxGPUs: 24}\n");
	const struct tj_admission_policy *a = tj_config_admission(config);
	assert_false(a->enabled);
	assert_false(a->backfill);
	assert_true(a->wait_if_never_fits);
	assert_int_equal(a->pin_timeout_seconds, 0);
	assert_int_equal(a->restart_wait_seconds, 0);
	assert_int_equal(a->backfill_depth, 3);
	assert_int_equal(a->backfill_max_job_test, 0);
	assert_string_equal(a->topology_label, "topology.flame.dev/rack");
	assert_int_equal(a->n_limits, 2);
	assert_string_equal(a->limits[0].namespace, "team-a");
	assert_string_equal(a->limits[0].gpu_class, "gh200");
	assert_int_equal(a->limits[0].max_gpus, 16);
	assert_string_equal(a->limits[1].namespace, "*");
	assert_int_equal(a->limits[1].max_gpus, 24);
	tj_config_free(config);

	/* QOS tiers of the operator's, and which namespace may use which. */
	config = parse_ok("gpuClasses: []\n"
	                  "admission:\n"
	                  "  qos:\n"
	                  "    - {name: normal, priority: 0, preempts: [scavenger]}\n"
	                  "    - {name: urgent, priority: 5000, maxWalltime: 4h,\n"
	                  "       preempts: [scavenger, normal], preemptAfterSeconds: 600,\n"
	                  "       maxGPUsPerNamespace: 16}\n"
	                  "    - {name: scavenger, priority: -10, backfillReservedNodes: true}\n"
	                  "  namespaces:\n"
	                  "    - {namespace: '*', allowed: [normal], default: normal}\n"
	                  "    - {namespace: team-a, allowed: [normal, urgent], default: urgent,"
	                  " share: 3}\n"
	                  "  fairShareHalfLife: 2d\n"
	                  "  accountingRetention: 90d\n");
	a = tj_config_admission(config);
	assert_int_equal(a->n_tiers, 3);
	assert_int_equal(a->tiers[0].preempts, 1u << 2);
	assert_int_equal(a->tiers[0].preempt_after_seconds, 0);
	assert_int_equal(a->tiers[1].preempts, 1u << 2 | 1u << 0);
	assert_int_equal(a->tiers[1].preempt_after_seconds, 600);
	assert_int_equal(a->tiers[1].max_gpus_per_namespace, 16);
	assert_int_equal(a->tiers[0].max_gpus_per_namespace, 0);
	assert_int_equal(a->tiers[2].preempts, 0);
	assert_true(a->tiers[2].backfill_reserved_nodes);
	assert_false(a->tiers[0].backfill_reserved_nodes);
	assert_string_equal(a->tiers[1].name, "urgent");
	assert_int_equal(a->tiers[1].priority, 5000);
	assert_int_equal(a->tiers[1].max_walltime_seconds, 4 * 3600);
	assert_int_equal(a->tiers[0].max_walltime_seconds, 0);
	assert_int_equal(a->n_qos_namespaces, 2);
	assert_string_equal(a->qos_namespaces[1].namespace, "team-a");
	assert_int_equal(a->qos_namespaces[1].n_allowed, 2);
	assert_string_equal(a->qos_namespaces[1].allowed[1], "urgent");
	assert_string_equal(a->qos_namespaces[1].default_tier, "urgent");
	assert_int_equal(a->qos_namespaces[1].share, 3);
	assert_int_equal(a->qos_namespaces[0].share, 1);
	assert_int_equal(a->fair_share_half_life, 2 * 86400);
	assert_int_equal(a->accounting_retention, 90 * 86400);
	tj_config_free(config);

	/* Namespace rules alone name the built-in tiers. */
	config = parse_ok("gpuClasses: []\n"
	                  "admission:\n"
	                  "  namespaces:\n"
	                  "    - {namespace: team-a, allowed: [normal, high], default: normal}\n");
	a = tj_config_admission(config);
	assert_null(a->tiers);
	assert_int_equal(a->n_qos_namespaces, 1);
	tj_config_free(config);

	/* An empty section keeps every default. */
	config = parse_ok("gpuClasses: []\nadmission: {}\n");
	a = tj_config_admission(config);
	assert_true(a->enabled && a->backfill && !a->wait_if_never_fits);
	assert_int_equal(a->pin_timeout_seconds, 60);
	tj_config_free(config);
}

/* The walltime section: the cluster's limits, those of classes and namespaces, the warning;
 * every field optional. */
static void test_walltime_policy(void **state)
{
	const struct tj_walltime_policy *d = tj_config_walltime(NULL);

	assert_int_equal(d->cluster.default_seconds, 0);
	assert_int_equal(d->cluster.max_seconds, 0);
	assert_int_equal(d->n_overrides, 0);
	assert_int_equal(d->warning_seconds, 300);

	struct tj_config *config = parse_ok("gpuClasses: []\n");
	assert_ptr_equal(tj_config_walltime(config), d);
	tj_config_free(config);

	config = parse_ok("gpuClasses:\n"
	                  "  - {name: gh200, resource: nvidia.com/gpu}\n"
	                  "  - {name: h100, resource: nvidia.com/gpu}\n"
	                  "walltime:\n"
	                  "  defaultWalltime: 1d\n"
	                  "  maxWalltime: 3d\n"
	                  "  warningSeconds: 600\n"
	                  "  gpuClasses:\n"
	                  "    gh200: {defaultWalltime: 4h, maxWalltime: 2d}\n"
	                  "    h100: {maxWalltime: 90m}\n"
	                  "  namespaces:\n"
	                  "    - {namespace: team-a, gpuClass: gh200, maxWalltime: 7d}\n"
	                  "    - {namespace: team-a, defaultWalltime: 3600}\n");
	const struct tj_walltime_policy *w = tj_config_walltime(config);
	assert_int_equal(w->cluster.default_seconds, 86400);
	assert_int_equal(w->cluster.max_seconds, 3 * 86400);
	assert_int_equal(w->warning_seconds, 600);
	assert_int_equal(w->n_overrides, 4);
	assert_null(w->overrides[0].namespace);
	assert_string_equal(w->overrides[0].gpu_class, "gh200");
	assert_int_equal(w->overrides[0].limits.default_seconds, 4 * 3600);
	assert_int_equal(w->overrides[0].limits.max_seconds, 2 * 86400);
	assert_null(w->overrides[1].namespace);
	assert_string_equal(w->overrides[1].gpu_class, "h100");
	assert_int_equal(w->overrides[1].limits.default_seconds, 0);
	assert_int_equal(w->overrides[1].limits.max_seconds, 5400);
	assert_string_equal(w->overrides[2].namespace, "team-a");
	assert_string_equal(w->overrides[2].gpu_class, "gh200");
	assert_int_equal(w->overrides[2].limits.max_seconds, 7 * 86400);
	assert_string_equal(w->overrides[3].namespace, "team-a");
	assert_null(w->overrides[3].gpu_class);
	assert_int_equal(w->overrides[3].limits.default_seconds, 3600);
	tj_config_free(config);

	/* An empty section: no limits, the default warning. */
	config = parse_ok("gpuClasses: []\nwalltime: {}\n");
	w = tj_config_walltime(config);
	assert_int_equal(w->cluster.max_seconds, 0);
	assert_int_equal(w->warning_seconds, 300);
	tj_config_free(config);
}

/* The namespaces the command policy leaves alone; none by default. */
static void test_command_policy(void **state)
{
	struct tj_config *config = parse_ok("gpuClasses: []\n");

	assert_int_equal(config->n_command_exempt_namespaces, 0);
	assert_null(config->command_exempt_namespaces);
	tj_config_free(config);
	config = parse_ok("gpuClasses: []\ncommandPolicy:\n  exemptNamespaces:\n"
	                  "    - services\n    - notebooks\n");
	assert_int_equal(config->n_command_exempt_namespaces, 2);
	assert_string_equal(config->command_exempt_namespaces[0], "services");
	assert_string_equal(config->command_exempt_namespaces[1], "notebooks");
	tj_config_free(config);
	config = parse_ok("gpuClasses: []\ncommandPolicy: {}\n");
	assert_int_equal(config->n_command_exempt_namespaces, 0);
	tj_config_free(config);
}

/* A valid class to build broken files around. */
#define GH200                                                                                      \
	"  - name: gh200\n"                                                                        \
	"    resource: nvidia.com/gpu\n"

static const struct broken_case {
	const char *what;
	const char *yaml;
	const char *message;
} broken_cases[] = {
	{ "empty file", "\n  \n", "test.yaml:1: the file is empty; it must list gpuClasses" },
	{ "syntax error", "gpuClasses:\n  - name: [gh200\n",
	  "test.yaml:3: flow sequence without a closing bracket" },
	{ "root is a list", "- gh200\n", "test.yaml:1: must be a mapping" },
	{ "unknown top-level key", "gpuClasses: []\ngpuclass: []\n",
	  "test.yaml:2: unknown field \"gpuclass\" (expected gpuClasses, failurePolicy, "
	  "admission, walltime, commandPolicy, retention, suspectNodes, trainerStatus)" },
	{ "trainerStatus without url", "gpuClasses: []\ntrainerStatus:\n  caConfigMap: ca\n",
	  "test.yaml:3: trainerStatus: missing required field \"url\"" },
	{ "trainerStatus over plain HTTP",
	  "gpuClasses: []\ntrainerStatus:\n  url: http://tjc.sys.svc:10443\n",
	  "test.yaml:3: trainerStatus.url: \"http://tjc.sys.svc:10443\" is not "
	  "https://HOST[:PORT] (no path)" },
	{ "trainerStatus url with a path",
	  "gpuClasses: []\ntrainerStatus:\n  url: https://tjc.sys.svc:10443/apis\n",
	  "test.yaml:3: trainerStatus.url: \"https://tjc.sys.svc:10443/apis\" is not "
	  "https://HOST[:PORT] (no path)" },
	{ "trainerStatus bad ConfigMap name",
	  "gpuClasses: []\ntrainerStatus:\n  url: https://tjc\n  caConfigMap: CA\n",
	  "test.yaml:4: trainerStatus.caConfigMap: \"CA\" is not a ConfigMap name" },
	{ "trainerStatus unknown field", "gpuClasses: []\ntrainerStatus:\n  uri: https://tjc\n",
	  "test.yaml:3: trainerStatus: unknown field \"uri\" (expected url, caConfigMap)" },
	{ "suspectNodes unknown field", "gpuClasses: []\nsuspectNodes:\n  jobz: 3\n",
	  "test.yaml:3: suspectNodes: unknown field \"jobz\" (expected enabled, jobs, window, "
	  "exitCodes)" },
	{ "suspectNodes one job is no pattern", "gpuClasses: []\nsuspectNodes:\n  jobs: 1\n",
	  "test.yaml:3: suspectNodes.jobs: \"1\" is not an integer between 2 and 100" },
	{ "suspectNodes window too short", "gpuClasses: []\nsuspectNodes:\n  window: 30s\n",
	  "test.yaml:3: suspectNodes.window: must be between 1m and 7d" },
	{ "suspectNodes exit code 0", "gpuClasses: []\nsuspectNodes:\n  exitCodes: [135, 0]\n",
	  "test.yaml:3: suspectNodes.exitCodes[1]: \"0\" is not an integer between 1 and 255" },
	{ "retention unknown field", "gpuClasses: []\nretention:\n  ttl: 60\n",
	  "test.yaml:3: retention: unknown field \"ttl\" (expected ttlSecondsAfterFinished, "
	  "keepFailedPodsSeconds)" },
	{ "retention TTL negative", "gpuClasses: []\nretention:\n  ttlSecondsAfterFinished: -1\n",
	  "test.yaml:3: retention.ttlSecondsAfterFinished: \"-1\" is not an integer between 0 "
	  "and 604800" },
	{ "not UTF-8 (libfyaml would spin on it)", "gpuClasses: []\n%a\x8c\n",
	  "test.yaml:2: not valid UTF-8 (byte 17)" },
	{ "a tab indenting a block entry in an explicit key (libfyaml would crash on it)",
	  "gpuClasses: []\n? a: \t- x\n",
	  "test.yaml:2: a tab before '-', '?', ':', '|' or '>' (YAML indents with spaces; in "
	  "quotes, write \\t) (byte 20)" },
	{ "unknown admission field", "gpuClasses: []\nadmission:\n  backfil: true\n",
	  "test.yaml:3: admission: unknown field \"backfil\" (expected enabled, backfill, "
	  "neverFits, pinTimeoutSeconds, topologyLabel, namespaceLimits, restartWaitSeconds, qos, "
	  "namespaces, backfillDepth, backfillMaxJobTest, fairShareHalfLife, "
	  "accountingRetention)" },
	{ "admission not a mapping", "gpuClasses: []\nadmission: [on]\n",
	  "test.yaml:2: admission: must be a mapping" },
	{ "enabled not a boolean", "gpuClasses: []\nadmission:\n  enabled: yes\n",
	  "test.yaml:3: admission.enabled: \"yes\" is not true or false" },
	{ "neverFits unknown", "gpuClasses: []\nadmission:\n  neverFits: Later\n",
	  "test.yaml:3: admission.neverFits: \"Later\" is not Fail or Wait" },
	{ "pinTimeoutSeconds negative", "gpuClasses: []\nadmission:\n  pinTimeoutSeconds: -1\n",
	  "test.yaml:3: admission.pinTimeoutSeconds: \"-1\" is not an integer between 0 and "
	  "86400" },
	{ "qos without namespaces",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: normal, priority: 0}\n",
	  "test.yaml:3: admission.namespaces: is required with admission.qos: which tiers each "
	  "namespace may use, and its default" },
	{ "qos tier without a priority",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: normal}\n  namespaces: []\n",
	  "test.yaml:4: admission.qos[0]: missing required field \"priority\"" },
	{ "qos tier name not a label",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: Gold, priority: 1}\n  namespaces: []\n",
	  "test.yaml:4: admission.qos[0]: name \"Gold\" is not a DNS label" },
	{ "qos tier twice",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: a, priority: 1}\n"
	  "    - {name: a, priority: 2}\n  namespaces: []\n",
	  "test.yaml:5: admission.qos[1]: a second tier \"a\" (also qos[0])" },
	{ "qos tier unknown field",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: a, priority: 1, preempt: [b]}\n"
	  "  namespaces: []\n",
	  "test.yaml:4: admission.qos[0]: unknown field \"preempt\" (expected name, priority, "
	  "maxWalltime, preempts, preemptAfterSeconds, maxGPUsPerNamespace, "
	  "backfillReservedNodes)" },
	{ "qos tier backfillReservedNodes not a boolean",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: a, priority: 1, "
	  "backfillReservedNodes: maybe}\n  namespaces: []\n",
	  "test.yaml:4: admission.qos[0].backfillReservedNodes: \"maybe\" is not true or false" },
	{ "qos tier preempts an unknown tier",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: a, priority: 1, preempts: [b]}\n"
	  "  namespaces: []\n",
	  "test.yaml:4: admission.qos[0].preempts[0]: \"b\" is not a tier of qos" },
	{ "qos tier preempts itself",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: a, priority: 1, preempts: [a]}\n"
	  "  namespaces: []\n",
	  "test.yaml:4: admission.qos[0].preempts[0]: a tier cannot preempt itself" },
	{ "qos tier preemptAfterSeconds negative",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: a, priority: 1, preemptAfterSeconds: "
	  "-1}\n"
	  "  namespaces: []\n",
	  "test.yaml:4: admission.qos[0].preemptAfterSeconds: \"-1\" is not an integer between 0 "
	  "and 31622400" },
	{ "qos maxWalltime malformed",
	  "gpuClasses: []\nadmission:\n  qos:\n    - {name: a, priority: 1, maxWalltime: 2x}\n"
	  "  namespaces: []\n",
	  "test.yaml:4: admission.qos[0].maxWalltime: \"2x\" is not a walltime (seconds, or d, h, "
	  "m, s in that order, like 90m or 1d12h) between 1s and 366d" },
	{ "namespace allows an unknown tier",
	  "gpuClasses: []\nadmission:\n  namespaces:\n"
	  "    - {namespace: team-a, allowed: [normal, gold], default: normal}\n",
	  "test.yaml:4: admission.namespaces[0].allowed[1]: \"gold\" is not a tier of qos" },
	{ "namespace default not allowed",
	  "gpuClasses: []\nadmission:\n  namespaces:\n"
	  "    - {namespace: team-a, allowed: [low], default: normal}\n",
	  "test.yaml:4: admission.namespaces[0]: default \"normal\" is not one of allowed" },
	{ "namespace twice",
	  "gpuClasses: []\nadmission:\n  namespaces:\n"
	  "    - {namespace: '*', allowed: [low], default: low}\n"
	  "    - {namespace: '*', allowed: [normal], default: normal}\n",
	  "test.yaml:5: admission.namespaces[1]: a second entry for namespace \"*\" (also "
	  "namespaces[0])" },
	{ "namespace without allowed",
	  "gpuClasses: []\nadmission:\n  namespaces:\n    - {namespace: team-a, default: normal}\n",
	  "test.yaml:4: admission.namespaces[0]: missing required field \"allowed\"" },
	{ "restartWaitSeconds too large",
	  "gpuClasses: []\nadmission:\n  restartWaitSeconds: 604801\n",
	  "test.yaml:3: admission.restartWaitSeconds: \"604801\" is not an integer between 0 and "
	  "604800" },
	{ "topologyLabel not a label key", "gpuClasses: []\nadmission:\n  topologyLabel: a b\n",
	  "test.yaml:3: admission.topologyLabel: \"a b\" is not a label key" },
	{ "limit of an unknown class",
	  "gpuClasses:\n" GH200 "admission:\n  namespaceLimits:\n"
	  "    - {namespace: team-a, gpuClass: h100, maxGPUs: 8}\n",
	  "test.yaml:6: admission.namespaceLimits[0]: gpuClass \"h100\" is not one of gpuClasses" },
	{ "limit without maxGPUs",
	  "gpuClasses:\n" GH200 "admission:\n  namespaceLimits:\n"
	  "    - {namespace: team-a, gpuClass: gh200}\n",
	  "test.yaml:6: admission.namespaceLimits[0]: missing required field \"maxGPUs\"" },
	{ "limit of a bad namespace",
	  "gpuClasses:\n" GH200 "admission:\n  namespaceLimits:\n"
	  "    - {namespace: Team_A, gpuClass: gh200, maxGPUs: 8}\n",
	  "test.yaml:6: admission.namespaceLimits[0]: namespace \"Team_A\" is not a DNS label (or "
	  "\"*\")" },
	{ "two limits of one namespace and class",
	  "gpuClasses:\n" GH200 "admission:\n  namespaceLimits:\n"
	  "    - {namespace: '*', gpuClass: gh200, maxGPUs: 8}\n"
	  "    - {namespace: '*', gpuClass: gh200, maxGPUs: 4}\n",
	  "test.yaml:7: admission.namespaceLimits[1]: a second limit for namespace \"*\" and "
	  "gpuClass \"gh200\" (also namespaceLimits[0])" },
	{ "gpuClasses missing", "# nothing\n{}\n",
	  "test.yaml:1: missing required field \"gpuClasses\"" },
	{ "gpuClasses not a list", "gpuClasses:\n  name: gh200\n",
	  "test.yaml:1: gpuClasses: must be a sequence of GPU classes" },
	{ "unknown class field", "gpuClasses:\n" GH200 "    colour: green\n",
	  "test.yaml:4: gpuClasses[0]: unknown field \"colour\" (expected name, resource, arch, "
	  "nodeLabels, tolerations)" },
	{ "name missing", "gpuClasses:\n  - resource: nvidia.com/gpu\n    arch: arm64\n",
	  "test.yaml:2: gpuClasses[0]: missing required field \"name\"" },
	{ "resource missing", "gpuClasses:\n" GH200 "  - name: h100\n    arch: amd64\n",
	  "test.yaml:4: gpuClasses[1]: missing required field \"resource\"" },
	{ "name empty", "gpuClasses:\n  - name:\n    resource: nvidia.com/gpu\n",
	  "test.yaml:2: gpuClasses[0].name: must not be empty" },
	{ "name not a DNS label", "gpuClasses:\n  - name: GH_200\n    resource: nvidia.com/gpu\n",
	  "test.yaml:2: gpuClasses[0]: name \"GH_200\" is not a DNS label (lower case letters, "
	  "digits and '-'); it names the runtime torch-<name>" },
	{ "name too long",
	  "gpuClasses:\n  - name: "
	  "a234567890123456789012345678901234567890123456789012345678901234\n"
	  "    resource: nvidia.com/gpu\n",
	  "test.yaml:2: gpuClasses[0].name: is 64 characters long, the limit is 63" },
	{ "name is a mapping", "gpuClasses:\n  - name: {x: 1}\n    resource: nvidia.com/gpu\n",
	  "test.yaml:2: gpuClasses[0].name: must be a string, not a mapping" },
	{ "duplicate class", "gpuClasses:\n" GH200 GH200,
	  "test.yaml:4: gpuClasses[1]: duplicate class name \"gh200\" (also gpuClasses[0])" },
	{ "duplicate key", "gpuClasses:\n  - name: gh200\n    name: h100\n",
	  "test.yaml:3: duplicate key" },
	{ "resource without domain", "gpuClasses:\n  - name: gh200\n    resource: gpu\n",
	  "test.yaml:3: gpuClasses[0]: resource \"gpu\" is not an extended resource name "
	  "(domain/name, like nvidia.com/gpu)" },
	{ "bad node label value",
	  "gpuClasses:\n" GH200 "    nodeLabels:\n      nvidia.com/gpu.product: NVIDIA GH200\n",
	  "test.yaml:5: gpuClasses[0].nodeLabels.nvidia.com/gpu.product: \"NVIDIA GH200\" is not a "
	  "valid label value (letters, digits, '-', '_' and '.', alphanumeric at both ends)" },
	{ "bad node label key", "gpuClasses:\n" GH200 "    nodeLabels:\n      -bad/key: x\n",
	  "test.yaml:5: gpuClasses[0].nodeLabels: \"-bad/key\" is not a valid label key "
	  "([prefix/]name, name at most 63 characters)" },
	{ "nodeLabels a list", "gpuClasses:\n" GH200 "    nodeLabels:\n      - a\n",
	  "test.yaml:4: gpuClasses[0].nodeLabels: must be a mapping" },
	{ "bad operator",
	  "gpuClasses:\n" GH200 "    tolerations:\n      - key: nvidia.com/gpu\n"
	  "        operator: Exist\n",
	  "test.yaml:6: gpuClasses[0].tolerations[0]: operator must be Equal or Exists, not "
	  "\"Exist\"" },
	{ "Exists with a value",
	  "gpuClasses:\n" GH200 "    tolerations:\n      - {key: nvidia.com/gpu, operator: Exists, "
	  "value: present}\n",
	  "test.yaml:5: gpuClasses[0].tolerations[0]: value must be empty when operator is "
	  "Exists" },
	{ "no key and Equal", "gpuClasses:\n" GH200 "    tolerations:\n      - value: present\n",
	  "test.yaml:5: gpuClasses[0].tolerations[0]: a toleration without a key must have "
	  "operator Exists" },
	{ "bad effect",
	  "gpuClasses:\n" GH200 "    tolerations:\n      - key: nvidia.com/gpu\n"
	  "        operator: Exists\n        effect: NoScheduleX\n",
	  "test.yaml:7: gpuClasses[0].tolerations[0]: effect must be NoSchedule, PreferNoSchedule "
	  "or NoExecute, not \"NoScheduleX\"" },
	{ "unknown toleration field",
	  "gpuClasses:\n" GH200 "    tolerations:\n      - key: nvidia.com/gpu\n"
	  "        tolerationSeconds: 30\n",
	  "test.yaml:6: gpuClasses[0].tolerations[0]: unknown field \"tolerationSeconds\" "
	  "(expected key, operator, value, effect)" },
	{ "failurePolicy a list", "gpuClasses: []\nfailurePolicy:\n  - maxRestarts: 3\n",
	  "test.yaml:2: failurePolicy: must be a mapping" },
	{ "unknown failurePolicy field", "gpuClasses: []\nfailurePolicy:\n  maxRetries: 3\n",
	  "test.yaml:3: failurePolicy: unknown field \"maxRetries\" (expected maxRestarts, "
	  "maxInfrastructureRestarts, nodeGracePeriodSeconds, restartBackoff, permanentExitCodes, "
	  "gpuHealth, faultCordonConditions)" },
	{ "maxRestarts negative", "gpuClasses: []\nfailurePolicy:\n  maxRestarts: -1\n",
	  "test.yaml:3: failurePolicy.maxRestarts: \"-1\" is not an integer between 0 and 1000" },
	{ "maxRestarts not a number", "gpuClasses: []\nfailurePolicy:\n  maxRestarts: three\n",
	  "test.yaml:3: failurePolicy.maxRestarts: \"three\" is not an integer between 0 and "
	  "1000" },
	{ "maxInfrastructureRestarts past its limit",
	  "gpuClasses: []\nfailurePolicy:\n  maxInfrastructureRestarts: 1001\n",
	  "test.yaml:3: failurePolicy.maxInfrastructureRestarts: \"1001\" is not an integer "
	  "between 0 and 1000" },
	{ "maxRestarts a fraction", "gpuClasses: []\nfailurePolicy:\n  maxRestarts: 1.5\n",
	  "test.yaml:3: failurePolicy.maxRestarts: \"1.5\" is not an integer between 0 and 1000" },
	{ "grace period too long",
	  "gpuClasses: []\nfailurePolicy:\n  nodeGracePeriodSeconds: 86401\n",
	  "test.yaml:3: failurePolicy.nodeGracePeriodSeconds: \"86401\" is not an integer between "
	  "0 and 86400" },
	{ "grace period a list", "gpuClasses: []\nfailurePolicy:\n  nodeGracePeriodSeconds: [1]\n",
	  "test.yaml:3: failurePolicy.nodeGracePeriodSeconds: must be a string, not a sequence" },
	{ "backoff max below initial",
	  "gpuClasses: []\nfailurePolicy:\n  restartBackoff:\n    initialSeconds: 60\n"
	  "    maxSeconds: 30\n",
	  "test.yaml:3: failurePolicy.restartBackoff: maxSeconds (30) must not be less than "
	  "initialSeconds (60)" },
	{ "backoff below default initial",
	  "gpuClasses: []\nfailurePolicy:\n  restartBackoff: {maxSeconds: 5}\n",
	  "test.yaml:3: failurePolicy.restartBackoff: maxSeconds (5) must not be less than "
	  "initialSeconds (10)" },
	{ "unknown backoff field",
	  "gpuClasses: []\nfailurePolicy:\n  restartBackoff:\n    factor: 2\n",
	  "test.yaml:4: failurePolicy.restartBackoff: unknown field \"factor\" (expected "
	  "initialSeconds, maxSeconds)" },
	{ "exit code 0", "gpuClasses: []\nfailurePolicy:\n  permanentExitCodes: [1, 0]\n",
	  "test.yaml:3: failurePolicy.permanentExitCodes[1]: \"0\" is not an integer between 1 "
	  "and 255" },
	{ "exit codes a scalar", "gpuClasses: []\nfailurePolicy:\n  permanentExitCodes: 2\n",
	  "test.yaml:3: failurePolicy.permanentExitCodes: must be a sequence" },
	{ "gpuHealth unknown field",
	  "gpuClasses: []\nfailurePolicy:\n  gpuHealth:\n    labels: [x]\n",
	  "test.yaml:4: failurePolicy.gpuHealth: unknown field \"labels\" (expected conditions, "
	  "taints)" },
	{ "Ready as a GPU condition",
	  "gpuClasses: []\nfailurePolicy:\n  gpuHealth:\n    conditions:\n      - XidError\n"
	  "      - Ready\n",
	  "test.yaml:6: failurePolicy.gpuHealth.conditions[1]: Ready is judged by its own rule "
	  "(False or Unknown is unhealthy) and cannot be listed" },
	{ "bad taint key",
	  "gpuClasses: []\nfailurePolicy:\n  gpuHealth:\n    taints: [\"gpu unhealthy\"]\n",
	  "test.yaml:4: failurePolicy.gpuHealth.taints[0]: \"gpu unhealthy\" is not a valid taint "
	  "key" },
	{ "cordon condition a mapping",
	  "gpuClasses: []\nfailurePolicy:\n  faultCordonConditions:\n    - {type: X}\n",
	  "test.yaml:4: failurePolicy.faultCordonConditions[0]: must be a string, not a mapping" },
	{ "alias",
	  "gpuClasses:\n  - name: &n gh200\n    resource: nvidia.com/gpu\n"
	  "  - name: *n\n    resource: nvidia.com/gpu\n",
	  "test.yaml:4: gpuClasses[1].name: anchors and aliases are not supported" },
	{ "walltime unknown field", "gpuClasses: []\nwalltime:\n  default: 1h\n",
	  "test.yaml:3: walltime: unknown field \"default\" (expected defaultWalltime, "
	  "maxWalltime, warningSeconds, gpuClasses, namespaces)" },
	{ "walltime not a duration", "gpuClasses: []\nwalltime:\n  maxWalltime: 1h-30m\n",
	  "test.yaml:3: walltime.maxWalltime: \"1h-30m\" is not a walltime (seconds, or d, h, m, "
	  "s in that order, like 90m or 1d12h) between 1s and 366d" },
	{ "walltime units out of order", "gpuClasses: []\nwalltime:\n  maxWalltime: 30m1h\n",
	  "test.yaml:3: walltime.maxWalltime: \"30m1h\" is not a walltime (seconds, or d, h, m, "
	  "s in that order, like 90m or 1d12h) between 1s and 366d" },
	{ "walltime zero", "gpuClasses: []\nwalltime:\n  defaultWalltime: 0\n",
	  "test.yaml:3: walltime.defaultWalltime: \"0\" is not a walltime (seconds, or d, h, m, "
	  "s in that order, like 90m or 1d12h) between 1s and 366d" },
	{ "walltime past a year", "gpuClasses: []\nwalltime:\n  maxWalltime: 367d\n",
	  "test.yaml:3: walltime.maxWalltime: \"367d\" is not a walltime (seconds, or d, h, m, "
	  "s in that order, like 90m or 1d12h) between 1s and 366d" },
	{ "default longer than max",
	  "gpuClasses: []\nwalltime:\n  defaultWalltime: 2h\n  maxWalltime: 1h\n",
	  "test.yaml:2: walltime: defaultWalltime (7200 s) must not be longer than maxWalltime "
	  "(3600 s)" },
	{ "warningSeconds past a week", "gpuClasses: []\nwalltime:\n  warningSeconds: 604801\n",
	  "test.yaml:3: walltime.warningSeconds: \"604801\" is not an integer between 0 and "
	  "604800" },
	{ "walltime of an unknown class",
	  "gpuClasses:\n" GH200 "walltime:\n  gpuClasses:\n    h100: {maxWalltime: 1h}\n",
	  "test.yaml:6: walltime.gpuClasses: \"h100\" is not one of gpuClasses" },
	{ "class walltime unknown field",
	  "gpuClasses:\n" GH200 "walltime:\n  gpuClasses:\n    gh200: {max: 1h}\n",
	  "test.yaml:6: walltime.gpuClasses.gh200: unknown field \"max\" (expected "
	  "defaultWalltime, maxWalltime)" },
	{ "namespace walltime without a namespace",
	  "gpuClasses: []\nwalltime:\n  namespaces:\n    - {maxWalltime: 1h}\n",
	  "test.yaml:4: walltime.namespaces[0]: missing required field \"namespace\"" },
	{ "namespace walltime of an unknown class",
	  "gpuClasses:\n" GH200
	  "walltime:\n  namespaces:\n    - {namespace: team-a, gpuClass: h100, maxWalltime: 1h}\n",
	  "test.yaml:6: walltime.namespaces[0]: gpuClass \"h100\" is not one of gpuClasses" },
	{ "two walltimes for one namespace and class",
	  "gpuClasses:\n" GH200
	  "walltime:\n  namespaces:\n    - {namespace: team-a, maxWalltime: 1h}\n"
	  "    - {namespace: team-b, maxWalltime: 1h}\n    - {namespace: team-a, maxWalltime: "
	  "2h}\n",
	  "test.yaml:8: walltime.namespaces[2]: a second entry for namespace \"team-a\" (also "
	  "namespaces[0])" },
	{ "namespace not a DNS label",
	  "gpuClasses: []\nwalltime:\n  namespaces:\n    - {namespace: Team_A, maxWalltime: 1h}\n",
	  "test.yaml:4: walltime.namespaces[0]: namespace \"Team_A\" is not a DNS label" },
	{ "commandPolicy unknown field", "gpuClasses: []\ncommandPolicy:\n  exempt: [a]\n",
	  "test.yaml:3: commandPolicy: unknown field \"exempt\" (expected exemptNamespaces)" },
	{ "exempt namespace not a name",
	  "gpuClasses: []\ncommandPolicy:\n  exemptNamespaces:\n    - ok\n    - Not_A_Name\n",
	  "test.yaml:5: commandPolicy.exemptNamespaces[1]: \"Not_A_Name\" is not a namespace "
	  "name" },
	{ "exempt namespace twice",
	  "gpuClasses: []\ncommandPolicy:\n  exemptNamespaces: [svc, nb, svc]\n",
	  "test.yaml:3: commandPolicy.exemptNamespaces[2]: namespace \"svc\" is listed twice "
	  "(also [0])" },
	{ "exempt namespaces a scalar", "gpuClasses: []\ncommandPolicy:\n  exemptNamespaces: svc\n",
	  "test.yaml:3: commandPolicy.exemptNamespaces: must be a sequence" },
};

static void test_parse_broken(void **state)
{
	for (size_t i = 0; i < sizeof(broken_cases) / sizeof(broken_cases[0]); i++) {
		const struct broken_case *c = &broken_cases[i];
		struct tj_config *config = (struct tj_config *)0x1;
		char err[512] = "unset";
		int r = tj_config_parse(c->yaml, strlen(c->yaml), "test.yaml", &config, err,
		                        sizeof(err));
		if (r != -EINVAL || strcmp(err, c->message) != 0)
			fail_msg("case \"%s\": got %d \"%s\", want -EINVAL \"%s\"", c->what, r, err,
			         c->message);
		assert_ptr_equal(config, (struct tj_config *)0x1);
	}
}

/* Repeats a class count times, for the limit tests. */
static char *classes_yaml(int count, int tolerations, int labels)
{
	size_t cap = 256 + (size_t)count * 64 + (size_t)tolerations * 40 + (size_t)labels * 32;
	char *s = malloc(cap);
	assert_non_null(s);
	size_t n = (size_t)snprintf(s, cap, "gpuClasses:\n");
	for (int i = 0; i < count; i++)
		n += (size_t)snprintf(s + n, cap - n, "  - name: c%d\n    resource: x.io/gpu\n", i);
	if (tolerations) {
		n += (size_t)snprintf(s + n, cap - n, "    tolerations:\n");
		for (int i = 0; i < tolerations; i++)
			n += (size_t)snprintf(s + n, cap - n, "      - operator: Exists\n");
	}
	if (labels) {
		n += (size_t)snprintf(s + n, cap - n, "    nodeLabels:\n");
		for (int i = 0; i < labels; i++)
			n += (size_t)snprintf(s + n, cap - n, "      l%d: v\n", i);
	}
	return s;
}

static void assert_limit(char *yaml, int want, const char *message)
{
	struct tj_config *config = NULL;
	char err[512] = "";
	int r = tj_config_parse(yaml, strlen(yaml), "test.yaml", &config, err, sizeof(err));
	assert_int_equal(r, want);
	if (message)
		assert_string_equal(err, message);
	tj_config_free(config);
	free(yaml);
}

static void test_parse_limits(void **state)
{
	assert_limit(classes_yaml(TJ_CONFIG_MAX_CLASSES, 0, 0), 0, NULL);
	assert_limit(classes_yaml(TJ_CONFIG_MAX_CLASSES + 1, 0, 0), -EINVAL,
	             "test.yaml:1: gpuClasses: has 65 classes, the limit is 64");
	assert_limit(classes_yaml(1, TJ_CONFIG_MAX_TOLERATIONS, TJ_CONFIG_MAX_NODE_LABELS), 0,
	             NULL);
	assert_limit(classes_yaml(1, TJ_CONFIG_MAX_TOLERATIONS + 1, 0), -EINVAL,
	             "test.yaml:4: gpuClasses[0].tolerations: has 17 tolerations, the limit is 16");
	assert_limit(classes_yaml(1, 0, TJ_CONFIG_MAX_NODE_LABELS + 1), -EINVAL,
	             "test.yaml:4: gpuClasses[0].nodeLabels: has 33 labels, the limit is 32");

	size_t big = TJ_CONFIG_MAX_BYTES + 1;
	char *yaml = malloc(big + 1);
	assert_non_null(yaml);
	memset(yaml, '#', big);
	yaml[big] = '\0';
	assert_limit(yaml, -E2BIG, "test.yaml:1: the file is 65537 bytes long, the limit is 65536");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_config),
		cmocka_unit_test(test_flame_config),
		cmocka_unit_test(test_syntax_error_under_tabs),
		cmocka_unit_test(test_parse_full),
		cmocka_unit_test(test_parse_empty_list),
		cmocka_unit_test(test_parse_broken),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_failure_policy),
		cmocka_unit_test(test_admission_policy),
		cmocka_unit_test(test_walltime_policy),
		cmocka_unit_test(test_command_policy),
		cmocka_unit_test(test_retention_policy),
		cmocka_unit_test(test_suspect_policy),
		cmocka_unit_test(test_trainer_status),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
