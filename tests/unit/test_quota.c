/* What a rendered pod counts for in ResourceQuotas: its requests and limits as the scheduler
 * computes them, the scopes it is in, what it uses of a quota's resource, and an amount as a
 * message shows it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "informers/resource_quota.h"
#include "reconcilers/admission/quota.h"

/* Mebibytes and gibibytes in thousandths. */
#define MI 1048576000LL
#define GI 1073741824000LL

struct want_amount {
	const char *resource;
	int64_t request, limit;
};

/* Fields left out are false, "" (the priority class) and no amounts. */
static const struct {
	const char *what;
	const char *spec;
	int rc;
	bool terminating, best_effort, cross_namespace;
	const char *priority_class;
	struct want_amount amounts[4];
	size_t n_amounts;
} pods[] = {
	{ .what = "requests and limits per resource",
	  .spec = "{'containers':[{'name':'node','resources':{'requests':{'cpu':'2',"
	          "'memory':'8Gi','nvidia.com/gpu':'4'},'limits':{'memory':'16Gi',"
	          "'nvidia.com/gpu':'4'}}}]}",
	  .amounts = { { "cpu", 2000, 0 },
	               { "memory", 8 * GI, 16 * GI },
	               { "nvidia.com/gpu", 4000, 4000 } },
	  .n_amounts = 3 },
	{ .what = "a limit stands for a missing request",
	  .spec = "{'containers':[{'resources':{'requests':{'memory':'1Gi'},'limits':{'cpu':'500m',"
	          "'memory':'2Gi','nvidia.com/gpu':2}}}]}",
	  .amounts = { { "memory", 1 * GI, 2 * GI },
	               { "cpu", 500, 500 },
	               { "nvidia.com/gpu", 2000, 2000 } },
	  .n_amounts = 3 },
	{ .what = "the containers add up",
	  .spec = "{'containers':[{'resources':{'requests':{'cpu':'1'}}},"
	          "{'resources':{'requests':{'cpu':'250m','memory':'1Gi'}}}]}",
	  .amounts = { { "cpu", 1250, 0 }, { "memory", 1 * GI, 0 } },
	  .n_amounts = 2 },
	{ .what = "the largest init container, resource by resource",
	  .spec = "{'initContainers':[{'resources':{'requests':{'cpu':'3'}}},"
	          "{'resources':{'requests':{'cpu':'2','memory':'4Gi'}}}],"
	          "'containers':[{'resources':{'requests':{'cpu':'1','memory':'8Gi'}}}]}",
	  .amounts = { { "cpu", 3000, 0 }, { "memory", 8 * GI, 0 } },
	  .n_amounts = 2 },
	{ .what = "a sidecar runs beside the init containers after it",
	  .spec = "{'initContainers':[{'name':'before','resources':{'requests':{'cpu':'4'}}},"
	          "{'name':'proxy','restartPolicy':'Always','resources':{'requests':{'cpu':'1',"
	          "'memory':'1Gi'}}},{'name':'after','resources':{'requests':{'cpu':'4'}}}],"
	          "'containers':[{'resources':{'requests':{'cpu':'2'}}}]}",
	  .amounts = { { "cpu", 5000, 0 }, { "memory", 1 * GI, 0 } },
	  .n_amounts = 2 },
	{ .what = "a sidecar adds to the containers",
	  .spec = "{'initContainers':[{'restartPolicy':'Always','resources':{'requests':{'cpu':'1'}"
	          ","
	          "'limits':{'cpu':'2'}}},{'resources':{'requests':{'cpu':'4'},'limits':{'cpu':'4'}"
	          "}}],"
	          "'containers':[{'resources':{'requests':{'cpu':'6'},'limits':{'cpu':'6'}}}]}",
	  .amounts = { { "cpu", 7000, 8000 } },
	  .n_amounts = 1 },
	{ .what = "pod-level CPU and memory replace the containers'",
	  .spec = "{'resources':{'requests':{'cpu':'8'},'limits':{'cpu':'16','memory':'32Gi'}},"
	          "'containers':[{'resources':{'requests':{'cpu':'1','memory':'1Gi'},"
	          "'limits':{'nvidia.com/gpu':'1'}}}]}",
	  .amounts = { { "cpu", 8000, 16000 },
	               { "memory", 32 * GI, 32 * GI },
	               { "nvidia.com/gpu", 1000, 1000 } },
	  .n_amounts = 3 },
	{ .what = "the overhead adds to the requests, and to the limits the pod has",
	  .spec = "{'overhead':{'cpu':'250m','memory':'120Mi'},'containers':[{'resources':{"
	          "'requests':{'cpu':'1','memory':'1Gi'},'limits':{'cpu':'2'}}}]}",
	  .amounts = { { "cpu", 1250, 2250 }, { "memory", 1144 * MI, 0 } },
	  .n_amounts = 2 },
	{ .what = "a pod that asks only for GPUs is BestEffort",
	  .spec = "{'containers':[{'resources':{'limits':{'nvidia.com/gpu':'1'}}}]}",
	  .best_effort = true,
	  .amounts = { { "nvidia.com/gpu", 1000, 1000 } },
	  .n_amounts = 1 },
	{ .what = "a pod that asks for nothing",
	  .spec = "{'containers':[{'name':'c'}]}",
	  .best_effort = true },
	{ .what = "a request of no CPU is still BestEffort",
	  .spec = "{'containers':[{'resources':{'requests':{'cpu':'0'}}}]}",
	  .best_effort = true,
	  .amounts = { { "cpu", 0, 0 } },
	  .n_amounts = 1 },
	{ .what = "an init container's memory limit is not BestEffort",
	  .spec = "{'initContainers':[{'resources':{'limits':{'memory':'64Mi'}}}],"
	          "'containers':[{}]}",
	  .amounts = { { "memory", 64 * MI, 64 * MI } },
	  .n_amounts = 1 },
	{ .what = "a pod-level CPU limit is not BestEffort",
	  .spec = "{'resources':{'limits':{'cpu':'1'}},'containers':[{}]}",
	  .amounts = { { "cpu", 1000, 1000 } },
	  .n_amounts = 1 },
	{ .what = "a deadline is Terminating",
	  .spec = "{'activeDeadlineSeconds':3600,'containers':[{}]}",
	  .terminating = true,
	  .best_effort = true },
	{ .what = "a deadline of 0 is Terminating",
	  .spec = "{'activeDeadlineSeconds':0,'containers':[{}]}",
	  .terminating = true,
	  .best_effort = true },
	{ .what = "a priority class",
	  .spec = "{'priorityClassName':'high','containers':[{}]}",
	  .best_effort = true,
	  .priority_class = "high" },
	{ .what = "required affinity to pods of named namespaces",
	  .spec = "{'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
	          "{'topologyKey':'kubernetes.io/"
	          "hostname','labelSelector':{},'namespaces':['b']}]}},"
	          "'containers':[{}]}",
	  .best_effort = true,
	  .cross_namespace = true },
	{ .what = "required anti-affinity with a namespace selector",
	  .spec = "{'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution'"
	          ":"
	          "[{'topologyKey':'x','namespaceSelector':{'matchLabels':{'team':'a'}}}]}},"
	          "'containers':[{}]}",
	  .best_effort = true,
	  .cross_namespace = true },
	{ .what = "preferred affinity to pods of named namespaces",
	  .spec = "{'affinity':{'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':["
	          "{'weight':10,'podAffinityTerm':{'topologyKey':'x','namespaces':['b']}}]}},"
	          "'containers':[{}]}",
	  .best_effort = true,
	  .cross_namespace = true },
	{ .what = "preferred anti-affinity with an empty namespace selector (every namespace)",
	  .spec = "{'affinity':{'podAntiAffinity':{'"
	          "preferredDuringSchedulingIgnoredDuringExecution'"
	          ":[{'weight':1,'podAffinityTerm':{'topologyKey':'x','namespaceSelector':{}}}]}},"
	          "'containers':[{}]}",
	  .best_effort = true,
	  .cross_namespace = true },
	{ .what = "affinity within the pod's namespace",
	  .spec = "{'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["
	          "{'topologyKey':'x','namespaces':[],'namespaceSelector':null}],"
	          "'preferredDuringSchedulingIgnoredDuringExecution':[{'weight':1,"
	          "'podAffinityTerm':{'topologyKey':'x'}}]},'podAntiAffinity':{}},"
	          "'containers':[{}]}",
	  .best_effort = true },
	{ .what = "a quantity past int64 is no limit",
	  .spec = "{'containers':[{'resources':{'limits':{'nvidia.com/gpu':'1E'}}},"
	          "{'resources':{'limits':{'nvidia.com/gpu':'1'}}}]}",
	  .best_effort = true,
	  .amounts = { { "nvidia.com/gpu", INT64_MAX, INT64_MAX } },
	  .n_amounts = 1 },
	{ .what = "a quantity that is not one",
	  .spec = "{'containers':[{'resources':{'requests':{'cpu':'lots'}}}]}",
	  .rc = -EINVAL },
	{ .what = "a quantity that is neither string nor number",
	  .spec = "{'containers':[{'resources':{'limits':{'cpu':[1]}}}]}",
	  .rc = -EINVAL },
	{ .what = "a negative limit",
	  .spec = "{'containers':[{'resources':{'limits':{'memory':'-1Gi'}}}]}",
	  .rc = -EINVAL },
	{ .what = "a negative number",
	  .spec = "{'containers':[{'resources':{'requests':{'nvidia.com/gpu':-1}}}]}",
	  .rc = -EINVAL },
	{ .what = "a negative quantity past int64",
	  .spec = "{'containers':[{'resources':{'requests':{'memory':'-9E'}}}]}",
	  .rc = -EINVAL },
	{ .what = "a bad quantity of an init container",
	  .spec = "{'initContainers':[{'resources':{'requests':{'cpu':'1 core'}}}],"
	          "'containers':[{}]}",
	  .rc = -EINVAL },
	{ .what = "a bad pod-level quantity",
	  .spec = "{'resources':{'limits':{'memory':'big'}},'containers':[{}]}",
	  .rc = -EINVAL },
	{ .what = "a negative overhead",
	  .spec = "{'overhead':{'cpu':'-100m'},'containers':[{}]}",
	  .rc = -EINVAL },
};

static void assert_pod(const struct tj_quota_pod *p, size_t i)
{
	assert_int_equal(p->terminating, pods[i].terminating);
	assert_int_equal(p->best_effort, pods[i].best_effort);
	assert_int_equal(p->cross_namespace, pods[i].cross_namespace);
	assert_string_equal(p->priority_class,
	                    pods[i].priority_class ? pods[i].priority_class : "");
	assert_int_equal(p->n_amounts, pods[i].n_amounts);
	for (size_t k = 0; k < p->n_amounts; k++) {
		assert_string_equal(p->amounts[k].resource, pods[i].amounts[k].resource);
		assert_int_equal(p->amounts[k].request, pods[i].amounts[k].request);
		assert_int_equal(p->amounts[k].limit, pods[i].amounts[k].limit);
	}
}

static void test_pod_of(void **state)
{
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
		cJSON *spec = jlit(pods[i].spec);
		struct tj_quota_pod *p = (struct tj_quota_pod *)0x1;
		int rc = tj_quota_pod_of(spec, &p);

		print_message("# case: %s\n", pods[i].what);
		assert_int_equal(rc, pods[i].rc);
		if (rc == 0) {
			assert_pod(p, i);
			tj_quota_pod_free(p);
		} else {
			assert_ptr_equal(p, (struct tj_quota_pod *)0x1);
		}
		cJSON_Delete(spec);
	}
	assert_null(tj_quota_pod_free(NULL));
}

/* A pod of n resource names, half in a container's requests and half in the overhead. */
static cJSON *pod_of_names(int n)
{
	cJSON *spec = jlit("{'overhead':{},'containers':[{'resources':{'requests':{}}}]}");
	cJSON *requests = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(
	                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(spec, "containers"), 0),
	                "resources"),
	        "requests");
	cJSON *overhead = cJSON_GetObjectItemCaseSensitive(spec, "overhead");
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "example.com/r%d", i);
		cJSON_AddItemToObject(i % 2 ? overhead : requests, name, cJSON_CreateString("1"));
	}
	return spec;
}

static void test_pod_of_bound(void **state)
{
	cJSON *spec = pod_of_names(TJ_QUOTA_POD_MAX_RESOURCES);
	struct tj_quota_pod *p = (struct tj_quota_pod *)0x1;

	assert_int_equal(tj_quota_pod_of(spec, &p), 0);
	assert_int_equal(p->n_amounts, TJ_QUOTA_POD_MAX_RESOURCES);
	assert_string_equal(p->amounts[0].resource, "example.com/r0");
	assert_int_equal(p->amounts[0].request, 1000);
	assert_int_equal(p->amounts[0].limit, 0);
	assert_string_equal(p->amounts[TJ_QUOTA_POD_MAX_RESOURCES - 1].resource, "example.com/r15");
	assert_int_equal(p->amounts[TJ_QUOTA_POD_MAX_RESOURCES - 1].request, 1000);
	tj_quota_pod_free(p);
	cJSON_Delete(spec);

	p = (struct tj_quota_pod *)0x1;
	spec = pod_of_names(TJ_QUOTA_POD_MAX_RESOURCES + 1);
	assert_int_equal(tj_quota_pod_of(spec, &p), -E2BIG);
	assert_ptr_equal(p, (struct tj_quota_pod *)0x1);
	cJSON_Delete(spec);
}

/* Pods in and out of each scope. */
#define PLAIN    "{'containers':[{'resources':{'requests':{'cpu':'1'}}}]}"
#define DEADLINE "{'activeDeadlineSeconds':60,'containers':[{}]}"
#define HIGH     "{'priorityClassName':'high','containers':[{}]}"
#define URGENT                                                                                     \
	"{'priorityClassName':'urgent','containers':[{'resources':{'limits':{'memory':'1Gi'}}}]}"
#define LOW "{'priorityClassName':'low','containers':[{}]}"
#define CROSS                                                                                      \
	"{'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':["           \
	"{'topologyKey':'x','namespaces':['b']}]}},'containers':[{}]}"
#define SELECTOR(e) "{'scopeSelector':{'matchExpressions':[" e "]}}"

static const struct {
	const char *what;
	const char *quota_spec;
	const char *pod_spec;
	bool counts;
} counts[] = {
	{ "no scope: a pod", "{}", PLAIN, true },
	{ "no scope: a BestEffort pod with a deadline", "{}", DEADLINE, true },
	{ "Terminating: a pod with a deadline", "{'scopes':['Terminating']}", DEADLINE, true },
	{ "Terminating: a pod without", "{'scopes':['Terminating']}", PLAIN, false },
	{ "NotTerminating: a pod without a deadline", "{'scopes':['NotTerminating']}", PLAIN,
	  true },
	{ "NotTerminating: a pod with one", "{'scopes':['NotTerminating']}", DEADLINE, false },
	{ "BestEffort: a pod that asks for no CPU or memory", "{'scopes':['BestEffort']}", HIGH,
	  true },
	{ "BestEffort: a pod that asks for CPU", "{'scopes':['BestEffort']}", PLAIN, false },
	{ "NotBestEffort: a pod that asks for CPU", "{'scopes':['NotBestEffort']}", PLAIN, true },
	{ "NotBestEffort: a BestEffort pod", "{'scopes':['NotBestEffort']}", HIGH, false },
	{ "CrossNamespacePodAffinity: a pod with such a term",
	  "{'scopes':['CrossNamespacePodAffinity']}", CROSS, true },
	{ "CrossNamespacePodAffinity: a pod without", "{'scopes':['CrossNamespacePodAffinity']}",
	  PLAIN, false },
	{ "PriorityClass scope: a pod with a class", "{'scopes':['PriorityClass']}", HIGH, true },
	{ "PriorityClass scope: a pod without", "{'scopes':['PriorityClass']}", PLAIN, false },
	{ "PriorityClass Exists: a pod with a class",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'Exists'}"), URGENT, true },
	{ "PriorityClass Exists: a pod without",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'Exists'}"), PLAIN, false },
	{ "PriorityClass In: the second value",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']}"),
	  URGENT, true },
	{ "PriorityClass In: the first value",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']}"),
	  HIGH, true },
	{ "PriorityClass In: another class",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']}"), LOW,
	  false },
	{ "PriorityClass In: no class",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']}"),
	  PLAIN, false },
	{ "PriorityClass NotIn: another class",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'NotIn','values':['low']}"), HIGH,
	  true },
	{ "PriorityClass NotIn: no class is ''",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'NotIn','values':['low']}"), PLAIN,
	  true },
	{ "PriorityClass NotIn: the class",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'NotIn','values':['low']}"), LOW,
	  false },
	{ "PriorityClass DoesNotExist: no class (the label is there, empty)",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'DoesNotExist'}"), PLAIN, false },
	{ "PriorityClass DoesNotExist: a class",
	  SELECTOR("{'scopeName':'PriorityClass','operator':'DoesNotExist'}"), HIGH, false },
	{ "scopes and expressions together: all of them hold",
	  "{'scopes':['NotTerminating','BestEffort'],'scopeSelector':{'matchExpressions':["
	  "{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']}]}}",
	  HIGH, true },
	{ "scopes and expressions together: one scope fails",
	  "{'scopes':['NotTerminating','BestEffort'],'scopeSelector':{'matchExpressions':["
	  "{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']}]}}",
	  URGENT, false },
	{ "scopes and expressions together: the expression fails",
	  "{'scopes':['NotTerminating','BestEffort'],'scopeSelector':{'matchExpressions':["
	  "{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']}]}}",
	  LOW, false },
	{ "a scope of other objects counts no pod", "{'scopes':['VolumeAttributesClass']}", PLAIN,
	  false },
	{ "a scope of other objects with NotIn counts no pod",
	  SELECTOR("{'scopeName':'VolumeAttributesClass','operator':'NotIn','values':['gold']}"),
	  HIGH, false },
};

static void test_counts(void **state)
{
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		char quota_json[1024];
		cJSON *qj, *spec = jlit(counts[i].pod_spec);
		struct tj_resource_quota *q;
		struct tj_quota_pod *p;

		print_message("# case: %s\n", counts[i].what);
		snprintf(quota_json, sizeof(quota_json),
		         "{'metadata':{'namespace':'team-a','name':'q'},'spec':%s}",
		         counts[i].quota_spec);
		qj = jlit(quota_json);
		assert_int_equal(tj_resource_quota_from_json(qj, &q), 0);
		assert_int_equal(tj_quota_pod_of(spec, &p), 0);
		assert_int_equal(tj_quota_counts(q, p), counts[i].counts);
		tj_quota_pod_free(p);
		tj_resource_quota_free(q);
		cJSON_Delete(spec);
		cJSON_Delete(qj);
	}
}

/* One pod, against the keys of a quota's spec.hard. */
static const char usage_pod[] =
        "{'priorityClassName':'high','containers':[{'resources':{'requests':{'cpu':'2',"
        "'memory':'8Gi','nvidia.com/gpu':'4','hugepages-2Mi':'64Mi'},'limits':{'memory':'16Gi',"
        "'nvidia.com/gpu':'4','hugepages-2Mi':'64Mi'}}}]}";

/* What tj_quota_usage() leaves in *ret when the resource is no pod's. */
#define UNTOUCHED (-7)

static const struct {
	const char *resource;
	bool ok;
	int64_t use;
} usages[] = {
	{ "pods", true, 1000 },
	{ "count/pods", true, 1000 },
	{ "requests.nvidia.com/gpu", true, 4000 },
	{ "requests.cpu", true, 2000 },
	{ "cpu", true, 2000 },
	{ "requests.memory", true, 8 * GI },
	{ "memory", true, 8 * GI },
	{ "limits.memory", true, 16 * GI },
	{ "hugepages-2Mi", true, 64 * MI },
	{ "requests.hugepages-2Mi", true, 64 * MI },
	{ "limits.hugepages-2Mi", true, 64 * MI },
	/* Resources a pod uses that this one does not ask for. */
	{ "limits.cpu", true, 0 },
	{ "ephemeral-storage", true, 0 },
	{ "requests.ephemeral-storage", true, 0 },
	{ "requests.example.com/fpga", true, 0 },
	/* Resources no pod uses. */
	{ "limits.nvidia.com/gpu", false, UNTOUCHED },
	{ "nvidia.com/gpu", false, UNTOUCHED },
	{ "requests.storage", false, UNTOUCHED },
	{ "services", false, UNTOUCHED },
	{ "persistentvolumeclaims", false, UNTOUCHED },
	{ "count/services", false, UNTOUCHED },
	{ "count/jobs.batch", false, UNTOUCHED },
};

static void test_usage(void **state)
{
	cJSON *spec = jlit(usage_pod);
	struct tj_quota_pod *p;

	assert_int_equal(tj_quota_pod_of(spec, &p), 0);
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		int64_t use = UNTOUCHED;

		print_message("# case: %s\n", usages[i].resource);
		assert_int_equal(tj_quota_usage(p, usages[i].resource, &use), usages[i].ok);
		assert_int_equal(use, usages[i].use);
	}
	tj_quota_pod_free(p);
	cJSON_Delete(spec);
}

static const struct {
	int64_t milli;
	const char *text;
} formats[] = {
	{ 4000, "4" }, { 500, "500m" },          { 1500, "1500m" },
	{ 0, "0" },    { 1 * GI, "1073741824" }, { TJ_QUOTA_UNLIMITED, "unlimited" },
};

static void test_format(void **state)
{
	char buf[32], small[4];

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		tj_quota_format(buf, sizeof(buf), formats[i].milli);
		assert_string_equal(buf, formats[i].text);
	}
	tj_quota_format(small, sizeof(small), 1 * GI);
	assert_string_equal(small, "107");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pod_of), cmocka_unit_test(test_pod_of_bound),
		cmocka_unit_test(test_counts), cmocka_unit_test(test_usage),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests_name("quota", tests, NULL, NULL);
}
