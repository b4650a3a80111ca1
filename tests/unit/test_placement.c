/* Placement: kube-scheduler's filters judged from a rendered pod's spec and a cached node:
 * nodeSelector, every operator of required node affinity, matchFields, terms ORed and their
 * requirements ANDed, every rule of tolerations, extended resources against allocatable; the
 * reasons in the scheduler's words; the problems of a malformed spec and the limits; and the
 * hash and equality that let placements be shared. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "reconcilers/admission/placement.h"

#define MAX_ROWS   4
#define MAX_LABELS 8

struct label_row {
	const char *key, *value;
};

/* A node as a test builds it: labels (a list ended by a NULL key), taints (value NULL: unset)
 * and allocatable extended resources. */
struct node_row {
	const char *name;
	const struct label_row *labels;
	struct {
		const char *key, *value, *effect;
	} taints[MAX_ROWS];
	struct tj_extended_resource extended[MAX_ROWS];
};

/* As GPU feature discovery labels a GH200 node, and two labels of numbers. */
static const struct label_row gh200_node_labels[] = {
	{ "kubernetes.io/hostname", "gh200-1" },
	{ "kubernetes.io/arch", "arm64" },
	{ "nvidia.com/gpu.product", "NVIDIA-GH200-480GB" },
	{ "nvidia.com/cuda.driver.major", "550" },
	{ "example.com/offset", "-3" },
	{ "example.com/huge", "9223372036854775808" },
	{ NULL, NULL },
};
static const struct label_row a100_node_labels[] = {
	{ "kubernetes.io/hostname", "a100-7" },
	{ "kubernetes.io/arch", "amd64" },
	{ NULL, NULL },
};

/* A GH200 node as GPU feature discovery labels it; without taints. */
static const struct node_row gh200 = {
	.name = "gh200-1",
	.labels = gh200_node_labels,
	.extended = { { "nvidia.com/gpu", 1 } },
};
/* The same, with the GPU operator's taint. */
static const struct node_row gh200_tainted = {
	.name = "gh200-1",
	.labels = gh200_node_labels,
	.taints = { { "nvidia.com/gpu", "present", "NoSchedule" } },
	.extended = { { "nvidia.com/gpu", 1 } },
};
static const struct node_row gpu_taint_without_value = {
	.name = "gh200-1",
	.labels = gh200_node_labels,
	.taints = { { "nvidia.com/gpu", NULL, "NoSchedule" } },
};
static const struct node_row two_taints = {
	.name = "gh200-1",
	.taints = { { "nvidia.com/gpu", "present", "NoSchedule" },
	            { "example.com/maintenance", "drain", "NoExecute" } },
};
static const struct node_row draining = {
	.name = "cpu-1",
	.taints = { { "example.com/busy", "yes", "PreferNoSchedule" },
	            { "example.com/maintenance", "drain", "NoExecute" } },
};
static const struct node_row busy = {
	.name = "cpu-1",
	.taints = { { "example.com/busy", "yes", "PreferNoSchedule" } },
};
static const struct node_row unreachable = {
	.name = "cpu-1",
	.taints = { { "node.kubernetes.io/unreachable", NULL, "NoExecute" } },
};
/* An A100 split into seven MIG slices, with an RDMA device. */
static const struct node_row a100_mig = {
	.name = "a100-7",
	.labels = a100_node_labels,
	.extended = { { "nvidia.com/mig-1g.10gb", 7 }, { "rdma/hca", 1 } },
};

static void build_node(const struct node_row *row, struct tj_node *node,
                       struct tj_node_label *labels, struct tj_node_taint *taints)
{
	memset(node, 0, sizeof(*node));
	node->name = (char *)row->name;
	node->labels = labels;
	node->taints = taints;
	for (size_t i = 0; row->labels && row->labels[i].key && i < MAX_LABELS; i++)
		labels[node->n_labels++] = (struct tj_node_label){ (char *)row->labels[i].key,
			                                           (char *)row->labels[i].value };
	for (size_t i = 0; i < MAX_ROWS && row->taints[i].key; i++)
		taints[node->n_taints++] = (struct tj_node_taint){
			.key = (char *)row->taints[i].key,
			.value = (char *)row->taints[i].value,
			.effect = (char *)row->taints[i].effect,
		};
	for (size_t i = 0; i < MAX_ROWS && row->extended[i].name; i++)
		node->allocatable.extended[node->allocatable.n_extended++] = row->extended[i];
}

#define REQUIRED_BLOCK(inner)                                                                      \
	"{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{" inner    \
	"}}}}"
#define TERMS_HEAD                                                                                 \
	"{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"          \
	"'nodeSelectorTerms':["
#define TERMS_TAIL       "]}}}}"
#define TERMS(...)       TERMS_HEAD __VA_ARGS__ TERMS_TAIL
#define EXPRESSION(...)  TERMS("{'matchExpressions':[" __VA_ARGS__ "]}")
#define FIELD(...)       TERMS("{'matchFields':[" __VA_ARGS__ "]}")
#define TOLERATIONS(...) "{'tolerations':[" __VA_ARGS__ "]}"
/* One container's resources. */
#define RESOURCES(...) "{'containers':[{'name':'c','resources':{" __VA_ARGS__ "}}]}"

#define ARM64          "{'key':'kubernetes.io/arch','operator':'In','values':['arm64']}"
#define AMD64          "{'key':'kubernetes.io/arch','operator':'In','values':['amd64']}"
#define NO_MATCH       "node(s) didn't match Pod's node affinity/selector"
#define GPU_TAINT      "node(s) had untolerated taint {nvidia.com/gpu: present}"
#define MAINT          "node(s) had untolerated taint {example.com/maintenance: drain}"
#define MIG_SHORT      "Insufficient nvidia.com/mig-1g.10gb"

struct allow_case {
	const char *name;
	const char *spec; /* JSON with ' for " */
	const struct node_row *node;
	bool allowed;
	const char *why;
};

static const struct allow_case allow_cases[] = {
	{ "an empty spec allows any node", "{}", &gh200, true, "" },
	{ "null fields are absent ones", "{'nodeSelector':null,'affinity':null,'tolerations':null}",
	  &gh200_tainted, false, GPU_TAINT },

	/* nodeSelector */
	{ "nodeSelector: every entry is a label of the node",
	  "{'nodeSelector':{'kubernetes.io/arch':'arm64','nvidia.com/gpu.product':"
	  "'NVIDIA-GH200-480GB'}}",
	  &gh200, true, "" },
	{ "nodeSelector: one value differs",
	  "{'nodeSelector':{'kubernetes.io/arch':'arm64','nvidia.com/gpu.product':"
	  "'NVIDIA-H100-80GB-HBM3'}}",
	  &gh200, false, NO_MATCH },
	{ "nodeSelector: a label the node lacks, even with an empty value",
	  "{'nodeSelector':{'example.com/pool':''}}", &gh200, false, NO_MATCH },

	/* matchExpressions, operator by operator */
	{ "In: the label is one of the values",
	  EXPRESSION("{'key':'kubernetes.io/arch','operator':'In','values':['amd64','arm64']}"),
	  &gh200, true, "" },
	{ "In: the label is none of the values", EXPRESSION(AMD64), &gh200, false, NO_MATCH },
	{ "In: a node without the label",
	  EXPRESSION("{'key':'example.com/pool','operator':'In','values':['a']}"), &gh200, false,
	  NO_MATCH },
	{ "NotIn: the label is one of the values",
	  EXPRESSION("{'key':'kubernetes.io/arch','operator':'NotIn','values':['arm64']}"), &gh200,
	  false, NO_MATCH },
	{ "NotIn: the label is none of the values",
	  EXPRESSION("{'key':'kubernetes.io/arch','operator':'NotIn','values':['amd64',"
	             "'ppc64le']}"),
	  &gh200, true, "" },
	{ "NotIn: a node without the label matches",
	  EXPRESSION("{'key':'example.com/pool','operator':'NotIn','values':['a']}"), &gh200, true,
	  "" },
	{ "Exists: the node has the label",
	  EXPRESSION("{'key':'nvidia.com/gpu.product','operator':'Exists'}"), &gh200, true, "" },
	{ "Exists: the node lacks the label",
	  EXPRESSION("{'key':'example.com/pool','operator':'Exists','values':[]}"), &gh200, false,
	  NO_MATCH },
	{ "DoesNotExist: the node lacks the label",
	  EXPRESSION("{'key':'example.com/pool','operator':'DoesNotExist'}"), &gh200, true, "" },
	{ "DoesNotExist: the node has the label",
	  EXPRESSION("{'key':'nvidia.com/gpu.product','operator':'DoesNotExist'}"), &gh200, false,
	  NO_MATCH },
	{ "Gt: 550 > 535",
	  EXPRESSION("{'key':'nvidia.com/cuda.driver.major','operator':'Gt','values':['535']}"),
	  &gh200, true, "" },
	{ "Gt: 550 is not > 550",
	  EXPRESSION("{'key':'nvidia.com/cuda.driver.major','operator':'Gt','values':['550']}"),
	  &gh200, false, NO_MATCH },
	{ "Lt: 550 < 560",
	  EXPRESSION("{'key':'nvidia.com/cuda.driver.major','operator':'Lt','values':['560']}"),
	  &gh200, true, "" },
	{ "Lt: 550 is not < 550",
	  EXPRESSION("{'key':'nvidia.com/cuda.driver.major','operator':'Lt','values':['550']}"),
	  &gh200, false, NO_MATCH },
	{ "Lt with signs: -3 < +0",
	  EXPRESSION("{'key':'example.com/offset','operator':'Lt','values':['+0']}"), &gh200, true,
	  "" },
	{ "Gt on a label that is not an integer never matches",
	  EXPRESSION("{'key':'kubernetes.io/arch','operator':'Gt','values':['0']}"), &gh200, false,
	  NO_MATCH },
	{ "Gt on a label beyond int64 never matches",
	  EXPRESSION("{'key':'example.com/huge','operator':'Gt','values':['0']}"), &gh200, false,
	  NO_MATCH },
	{ "Lt on a node without the label",
	  EXPRESSION("{'key':'example.com/pool','operator':'Lt','values':['9']}"), &gh200, false,
	  NO_MATCH },

	/* matchFields */
	{ "matchFields: metadata.name In the node's name",
	  FIELD("{'key':'metadata.name','operator':'In','values':['gh200-1']}"), &gh200, true, "" },
	{ "matchFields: metadata.name In another name",
	  FIELD("{'key':'metadata.name','operator':'In','values':['gh200-2']}"), &gh200, false,
	  NO_MATCH },
	{ "matchFields: metadata.name NotIn the node's name",
	  FIELD("{'key':'metadata.name','operator':'NotIn','values':['gh200-1']}"), &gh200, false,
	  NO_MATCH },
	{ "matchFields: metadata.name NotIn another name",
	  FIELD("{'key':'metadata.name','operator':'NotIn','values':['gh200-2']}"), &gh200, true,
	  "" },

	/* Terms */
	{ "terms are ORed: the second matches",
	  TERMS("{'matchExpressions':[" AMD64 "]},{'matchExpressions':[" ARM64 "]}"), &gh200, true,
	  "" },
	{ "terms are ORed: none matches",
	  TERMS("{'matchExpressions':[" AMD64 "]},{'matchFields':[{'key':'metadata.name',"
	        "'operator':'In','values':['gh200-2']}]}"),
	  &gh200, false, NO_MATCH },
	{ "a term ANDs its expressions: one fails",
	  EXPRESSION(ARM64 ",{'key':'nvidia.com/gpu.product','operator':'In','values':["
	                   "'NVIDIA-H100-80GB-HBM3']}"),
	  &gh200, false, NO_MATCH },
	{ "a term ANDs its expressions and fields: the field fails",
	  TERMS("{'matchExpressions':[" ARM64 "],'matchFields':[{'key':'metadata.name',"
	        "'operator':'In','values':['gh200-2']}]}"),
	  &gh200, false, NO_MATCH },
	{ "a term ANDs its expressions and fields: both pass",
	  TERMS("{'matchExpressions':[" ARM64 "],'matchFields':[{'key':'metadata.name',"
	        "'operator':'In','values':['gh200-1']}]}"),
	  &gh200, true, "" },
	{ "an empty list of terms matches no node", TERMS(""), &gh200, false, NO_MATCH },
	{ "a required block without terms matches no node", REQUIRED_BLOCK(""), &gh200, false,
	  NO_MATCH },
	{ "a term without expressions or fields matches no node",
	  TERMS("{},{'matchExpressions':[],'matchFields':[]}"), &gh200, false, NO_MATCH },
	{ "an empty term beside one that matches", TERMS("{},{'matchExpressions':[" ARM64 "]}"),
	  &gh200, true, "" },
	{ "preferred terms keep no pod off",
	  "{'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':[{"
	  "'weight':1,'preference':{'matchExpressions':[" AMD64 "]}}]}}}",
	  &gh200, true, "" },

	/* nodeSelector and affinity together */
	{ "nodeSelector and affinity both pass",
	  "{'nodeSelector':{'kubernetes.io/arch':'arm64'},'affinity':{'nodeAffinity':{"
	  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
	  "'matchExpressions':[{'key':'nvidia.com/gpu.product','operator':'Exists'}]}]}}}}",
	  &gh200, true, "" },
	{ "nodeSelector passes, affinity fails",
	  "{'nodeSelector':{'kubernetes.io/arch':'arm64'},'affinity':{'nodeAffinity':{"
	  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
	  "'matchExpressions':[" AMD64 "]}]}}}}",
	  &gh200, false, NO_MATCH },
	{ "affinity passes, nodeSelector fails",
	  "{'nodeSelector':{'kubernetes.io/arch':'amd64'},'affinity':{'nodeAffinity':{"
	  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':[{"
	  "'matchExpressions':[" ARM64 "]}]}}}}",
	  &gh200, false, NO_MATCH },

	/* Taints and tolerations */
	{ "an untolerated NoSchedule taint", "{}", &gh200_tainted, false, GPU_TAINT },
	{ "Exists tolerates the key, whatever its value",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoSchedule'}"),
	  &gh200_tainted, true, "" },
	{ "Equal tolerates the same value",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Equal','value':'present','effect':"
	              "'NoSchedule'}"),
	  &gh200_tainted, true, "" },
	{ "the operator defaults to Equal, and an empty effect matches NoSchedule",
	  TOLERATIONS("{'key':'nvidia.com/gpu','value':'present','effect':''}"), &gh200_tainted,
	  true, "" },
	{ "Equal with another value",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Equal','value':'absent'}"),
	  &gh200_tainted, false, GPU_TAINT },
	{ "Equal without a value does not tolerate a taint with one",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Equal'}"), &gh200_tainted, false,
	  GPU_TAINT },
	{ "Equal without a value tolerates a taint without one",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Equal'}"), &gpu_taint_without_value,
	  true, "" },
	{ "a taint without a value is named with an empty one", "{}", &gpu_taint_without_value,
	  false, "node(s) had untolerated taint {nvidia.com/gpu: }" },
	{ "an empty key with Exists tolerates every taint", TOLERATIONS("{'operator':'Exists'}"),
	  &two_taints, true, "" },
	{ "an empty key with Exists and an effect tolerates that effect only",
	  TOLERATIONS("{'operator':'Exists','effect':'NoSchedule'}"), &two_taints, false, MAINT },
	{ "an empty effect matches NoExecute",
	  TOLERATIONS("{'key':'example.com/maintenance','operator':'Exists'}"), &draining, true,
	  "" },
	{ "another effect does not match",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoExecute'}"),
	  &gh200_tainted, false, GPU_TAINT },
	{ "a toleration of PreferNoSchedule does not tolerate NoSchedule",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Exists','effect':'PreferNoSchedule'}"),
	  &gh200_tainted, false, GPU_TAINT },
	{ "a PreferNoSchedule taint keeps no pod off", "{}", &busy, true, "" },
	{ "an untolerated NoExecute taint, after a PreferNoSchedule one", "{}", &draining, false,
	  MAINT },
	{ "a NoExecute taint tolerated for a while is tolerated",
	  TOLERATIONS("{'key':'example.com/maintenance','operator':'Equal','value':'drain',"
	              "'effect':'NoExecute','tolerationSeconds':300}"),
	  &draining, true, "" },
	{ "one taint tolerated, the other named",
	  TOLERATIONS("{'key':'nvidia.com/gpu','operator':'Exists'}"), &two_taints, false, MAINT },
	{ "the node's own state (the unreachable taint) is left to its health", "{}", &unreachable,
	  true, "" },
	{ "the unreachable taint tolerated",
	  TOLERATIONS("{'key':'node.kubernetes.io/unreachable','operator':'Exists','effect':"
	              "'NoExecute'}"),
	  &unreachable, true, "" },
	{ "a taint is reported before the selector, in the scheduler's order of filters",
	  "{'nodeSelector':{'kubernetes.io/arch':'amd64'}}", &gh200_tainted, false, GPU_TAINT },

	/* Extended resources */
	{ "a GPU within allocatable", RESOURCES("'limits':{'nvidia.com/gpu':1}"), &gh200, true,
	  "" },
	{ "more GPUs than the node has", RESOURCES("'requests':{'nvidia.com/gpu':'2'}"), &gh200,
	  false, "Insufficient nvidia.com/gpu" },
	{ "a MIG slice the node lacks", RESOURCES("'requests':{'nvidia.com/mig-1g.10gb':1}"),
	  &gh200, false, MIG_SHORT },
	{ "MIG slices within allocatable", RESOURCES("'requests':{'nvidia.com/mig-1g.10gb':7}"),
	  &a100_mig, true, "" },
	{ "more MIG slices than the node has", RESOURCES("'requests':{'nvidia.com/mig-1g.10gb':8}"),
	  &a100_mig, false, MIG_SHORT },
	{ "the containers' requests are summed",
	  "{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/mig-1g.10gb':4}}},"
	  "{'name':'b','resources':{'limits':{'nvidia.com/mig-1g.10gb':4}}}]}",
	  &a100_mig, false, MIG_SHORT },
	{ "a request of 0 asks nothing", RESOURCES("'requests':{'nvidia.com/gpu':0}"), &a100_mig,
	  true, "" },
	{ "two resources: the one short is named",
	  RESOURCES("'requests':{'rdma/hca':2,'nvidia.com/mig-1g.10gb':1}"), &a100_mig, false,
	  "Insufficient rdma/hca" },
	{ "CPU and memory are not judged here",
	  RESOURCES("'requests':{'cpu':'512','memory':'4Ti'}"), &a100_mig, true, "" },
	{ "the selector is reported before the resources",
	  "{'nodeSelector':{'kubernetes.io/arch':'arm64'},'containers':[{'name':'c',"
	  "'resources':{'limits':{'nvidia.com/gpu':1}}}]}",
	  &a100_mig, false, NO_MATCH },
};

static void test_allows_table(void **state)
{
	for (size_t i = 0; i < sizeof(allow_cases) / sizeof(allow_cases[0]); i++) {
		const struct allow_case *c = &allow_cases[i];
		struct tj_node_label labels[MAX_LABELS];
		struct tj_node_taint taints[MAX_ROWS];
		struct tj_placement *p = NULL;
		char why[TJ_PLACEMENT_WHY_MAX];
		char problem[TJ_PLACEMENT_PROBLEM_MAX] = "";
		struct tj_node node;
		cJSON *spec = jlit(c->spec);

		print_message("# case: %s\n", c->name);
		build_node(c->node, &node, labels, taints);
		assert_int_equal(tj_placement_compile(spec, &p, problem, sizeof(problem)), 0);
		assert_string_equal(problem, "");
		/* The placement keeps copies: the tree goes before it is used. */
		cJSON_Delete(spec);
		memset(why, 'x', sizeof(why));
		assert_int_equal(tj_placement_allows(p, &node, why, sizeof(why)), c->allowed);
		assert_string_equal(why, c->why);
		assert_int_equal(tj_placement_allows(p, &node, NULL, 0), c->allowed);
		assert_null(tj_placement_unref(p));
	}
}

/* A reason longer than the buffer is cut, and still ends. */
static void test_why_truncated(void **state)
{
	struct tj_node_label labels[MAX_LABELS];
	struct tj_node_taint taints[MAX_ROWS];
	struct tj_placement *p = NULL;
	struct tj_node node;
	char why[8];
	cJSON *spec = jlit("{}");

	build_node(&gh200_tainted, &node, labels, taints);
	assert_int_equal(tj_placement_compile(spec, &p, NULL, 0), 0);
	assert_false(tj_placement_allows(p, &node, why, sizeof(why)));
	assert_string_equal(why, "node(s)");
	cJSON_Delete(spec);
	tj_placement_unref(p);
	assert_null(tj_placement_unref(NULL));
}

/* A placement shared by two holders stays whole until the second lets go. */
static void test_shared_until_the_last_unref(void **state)
{
	struct tj_placement *p = NULL;
	cJSON *spec = jlit("{'nodeSelector':{'a':'b'}}");
	uint64_t hash;

	assert_int_equal(tj_placement_compile(spec, &p, NULL, 0), 0);
	hash = tj_placement_hash(p);
	assert_ptr_equal(tj_placement_ref(p), p);
	assert_null(tj_placement_unref(p));
	assert_int_equal(tj_placement_hash(p), hash);
	assert_true(tj_placement_equal(p, p));
	assert_null(tj_placement_unref(p));
	cJSON_Delete(spec);
}

struct problem_case {
	const char *name;
	const char *spec; /* JSON with ' for " */
	int rc;
	const char *problem;
};

#define REQ     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
#define TERM0   REQ ".nodeSelectorTerms[0]"
#define EXPR0   TERM0 ".matchExpressions[0]"
#define QTY_BAD "spec: a resource request, limit or overhead is not a quantity, or is negative"

static const struct problem_case problem_cases[] = {
	{ "a spec that is not an object", "[]", -EINVAL, "spec: not an object" },
	{ "nodeSelector is a list", "{'nodeSelector':['a']}", -EINVAL,
	  "spec.nodeSelector: not an object" },
	{ "a nodeSelector value that is not a string", "{'nodeSelector':{'rack':7}}", -EINVAL,
	  "spec.nodeSelector.rack: not a string" },
	{ "affinity is a list", "{'affinity':[]}", -EINVAL, "spec.affinity: not an object" },
	{ "nodeSelectorTerms is an object", REQUIRED_BLOCK("'nodeSelectorTerms':{}"), -EINVAL,
	  REQ ".nodeSelectorTerms: not a list" },
	{ "a term that is not an object", TERMS("7"), -EINVAL, TERM0 ": not an object" },
	{ "matchExpressions is an object", TERMS("{'matchExpressions':{}}"), -EINVAL,
	  TERM0 ".matchExpressions: not a list" },
	{ "an unknown operator, in the second expression of the second term",
	  TERMS("{'matchExpressions':[" ARM64 "]},{'matchExpressions':[" ARM64 ",{'key':'a',"
	        "'operator':'Within','values':['1']}]}"),
	  -EINVAL,
	  REQ ".nodeSelectorTerms[1].matchExpressions[1].operator: \"Within\" is not In, NotIn, "
	      "Exists, DoesNotExist, Gt or Lt" },
	{ "no operator", EXPRESSION("{'key':'a','values':['1']}"), -EINVAL,
	  EXPR0 ".operator: \"\" is not In, NotIn, Exists, DoesNotExist, Gt or Lt" },
	{ "an empty key", EXPRESSION("{'key':'','operator':'Exists'}"), -EINVAL,
	  EXPR0 ".key: required" },
	{ "a key that is not a string", EXPRESSION("{'key':1,'operator':'Exists'}"), -EINVAL,
	  EXPR0 ".key: not a string" },
	{ "an expression that is not an object", EXPRESSION("'a'"), -EINVAL,
	  EXPR0 ": not an object" },
	{ "In without values", EXPRESSION("{'key':'a','operator':'In','values':[]}"), -EINVAL,
	  EXPR0 ".values: In needs a value at least" },
	{ "NotIn without values", EXPRESSION("{'key':'a','operator':'NotIn'}"), -EINVAL,
	  EXPR0 ".values: NotIn needs a value at least" },
	{ "a value that is not a string",
	  EXPRESSION("{'key':'a','operator':'In','values':['x',1]}"), -EINVAL,
	  EXPR0 ".values[1]: not a string" },
	{ "Exists with values", EXPRESSION("{'key':'a','operator':'Exists','values':['x']}"),
	  -EINVAL, EXPR0 ".values: must be empty for Exists" },
	{ "DoesNotExist with values",
	  EXPRESSION("{'key':'a','operator':'DoesNotExist','values':['x']}"), -EINVAL,
	  EXPR0 ".values: must be empty for DoesNotExist" },
	{ "Gt with two values", EXPRESSION("{'key':'a','operator':'Gt','values':['1','2']}"),
	  -EINVAL, EXPR0 ".values: Gt needs exactly one integer" },
	{ "Lt with a number rather than a string",
	  EXPRESSION("{'key':'a','operator':'Lt','values':[5]}"), -EINVAL,
	  EXPR0 ".values: Lt needs exactly one integer" },
	{ "Lt with a value that is not an integer",
	  EXPRESSION("{'key':'a','operator':'Lt','values':['ten']}"), -EINVAL,
	  EXPR0 ".values[0]: \"ten\" is not an integer" },
	{ "Gt with a value beyond int64",
	  EXPRESSION("{'key':'a','operator':'Gt','values':['9223372036854775808']}"), -EINVAL,
	  EXPR0 ".values[0]: \"9223372036854775808\" is not an integer" },
	{ "Gt with a sign alone", EXPRESSION("{'key':'a','operator':'Gt','values':['-']}"), -EINVAL,
	  EXPR0 ".values[0]: \"-\" is not an integer" },
	{ "matchFields on another field",
	  FIELD("{'key':'metadata.namespace','operator':'In','values':['x']}"), -EINVAL,
	  TERM0 ".matchFields[0].key: \"metadata.namespace\" is not a node field (metadata.name)" },
	{ "matchFields with Exists", FIELD("{'key':'metadata.name','operator':'Exists'}"), -EINVAL,
	  TERM0 ".matchFields[0].operator: \"Exists\" is not In or NotIn" },
	{ "matchFields In two names",
	  FIELD("{'key':'metadata.name','operator':'In','values':['a','b']}"), -EINVAL,
	  TERM0 ".matchFields[0].values: In on a field needs exactly one value" },
	{ "tolerations is an object", "{'tolerations':{}}", -EINVAL,
	  "spec.tolerations: not a list" },
	{ "a toleration that is not an object", TOLERATIONS("'x'"), -EINVAL,
	  "spec.tolerations[0]: not an object" },
	{ "a toleration with Gt, the second",
	  TOLERATIONS("{'key':'a','operator':'Exists'},{'key':'a','operator':'Gt','value':'1'}"),
	  -EINVAL, "spec.tolerations[1].operator: \"Gt\" is not Equal or Exists" },
	{ "an unknown effect",
	  TOLERATIONS("{'key':'a','operator':'Exists','effect':'NoScheduling'}"), -EINVAL,
	  "spec.tolerations[0].effect: \"NoScheduling\" is not NoSchedule, PreferNoSchedule or "
	  "NoExecute" },
	{ "an empty key with Equal", TOLERATIONS("{'operator':'Equal','value':'x'}"), -EINVAL,
	  "spec.tolerations[0].operator: must be Exists when key is empty" },
	{ "an empty toleration", TOLERATIONS("{}"), -EINVAL,
	  "spec.tolerations[0].operator: must be Exists when key is empty" },
	{ "Exists with a value", TOLERATIONS("{'key':'a','operator':'Exists','value':'x'}"),
	  -EINVAL, "spec.tolerations[0].value: must be empty when operator is Exists" },
	{ "a toleration value that is not a string", TOLERATIONS("{'key':'a','value':true}"),
	  -EINVAL, "spec.tolerations[0].value: not a string" },
	{ "a request that is not a quantity", RESOURCES("'requests':{'nvidia.com/gpu':'lots'}"),
	  -EINVAL, QTY_BAD },
	{ "a negative limit", RESOURCES("'limits':{'nvidia.com/gpu':-1}"), -EINVAL, QTY_BAD },
	{ "more extended resources than are kept",
	  RESOURCES("'requests':{'nvidia.com/gpu':1,'rdma/hca':1,'example.com/fpga':1}"), -E2BIG,
	  "spec: requests more than 2 extended resources" },
};

static void test_problems_table(void **state)
{
	for (size_t i = 0; i < sizeof(problem_cases) / sizeof(problem_cases[0]); i++) {
		const struct problem_case *c = &problem_cases[i];
		struct tj_placement *p = (struct tj_placement *)&p; /* a sentinel */
		char problem[TJ_PLACEMENT_PROBLEM_MAX] = "";
		cJSON *spec = jlit(c->spec);

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_placement_compile(spec, &p, problem, sizeof(problem)), c->rc);
		assert_string_equal(problem, c->problem);
		assert_ptr_equal(p, (struct tj_placement *)&p); /* untouched */
		assert_int_equal(tj_placement_compile(spec, &p, NULL, 0), c->rc);
		cJSON_Delete(spec);
	}
	assert_int_equal(tj_placement_compile(NULL, &(struct tj_placement *){ NULL }, NULL, 0),
	                 -EINVAL);
}

/* A list that grows with input: the spec is head, then the items (item_head, the index,
 * item_tail) joined by commas, then tail. */
struct limit_case {
	size_t max;
	const char *head, *item_head, *item_tail, *tail;
	const char *problem; /* with one item more than max */
};

static const struct limit_case limit_cases[] = {
	{ TJ_PLACEMENT_MAX_SELECTOR, "{'nodeSelector':{", "'k", "':'v'", "}}",
	  "spec.nodeSelector: 65 entries, beyond the limit of 64" },
	{ TJ_PLACEMENT_MAX_TERMS, TERMS_HEAD, "{'matchExpressions':[{'key':'k",
	  "','operator':'Exists'}]}", TERMS_TAIL,
	  REQ ".nodeSelectorTerms: 65 entries, beyond the limit of 64" },
	{ TJ_PLACEMENT_MAX_EXPRESSIONS, TERMS_HEAD "{'matchExpressions':[", "{'key':'k",
	  "','operator':'Exists'}", "]}" TERMS_TAIL,
	  TERM0 ".matchExpressions: 65 entries, beyond the limit of 64" },
	{ TJ_PLACEMENT_MAX_EXPRESSIONS, TERMS_HEAD "{'matchFields':[",
	  "{'key':'metadata.name','operator':'NotIn','values':['n", "']}", "]}" TERMS_TAIL,
	  TERM0 ".matchFields: 65 entries, beyond the limit of 64" },
	{ TJ_PLACEMENT_MAX_VALUES,
	  TERMS_HEAD "{'matchExpressions':[{'key':'k','operator':'In','values':[", "'v", "'",
	  "]}]}" TERMS_TAIL, EXPR0 ".values: 257 entries, beyond the limit of 256" },
	{ TJ_PLACEMENT_MAX_TOLERATIONS, "{'tolerations':[", "{'key':'k", "','operator':'Exists'}",
	  "]}", "spec.tolerations: 65 entries, beyond the limit of 64" },
};

static cJSON *grown_spec(const struct limit_case *c, size_t n)
{
	size_t size = strlen(c->head) + strlen(c->tail) + 1 +
	              n * (strlen(c->item_head) + strlen(c->item_tail) + 24);
	char *text = malloc(size), *end = text;
	cJSON *spec;

	assert_non_null(text);
	end += sprintf(end, "%s", c->head);
	for (size_t i = 0; i < n; i++)
		end += sprintf(end, "%s%s%zu%s", i ? "," : "", c->item_head, i, c->item_tail);
	sprintf(end, "%s", c->tail);
	spec = jlit(text);
	free(text);
	return spec;
}

static void test_limits(void **state)
{
	for (size_t i = 0; i < sizeof(limit_cases) / sizeof(limit_cases[0]); i++) {
		const struct limit_case *c = &limit_cases[i];
		cJSON *at = grown_spec(c, c->max), *beyond = grown_spec(c, c->max + 1);
		char problem[TJ_PLACEMENT_PROBLEM_MAX] = "";
		struct tj_placement *p = NULL;

		print_message("# case: %s\n", c->problem);
		assert_int_equal(tj_placement_compile(at, &p, problem, sizeof(problem)), 0);
		assert_string_equal(problem, "");
		p = tj_placement_unref(p);
		assert_int_equal(tj_placement_compile(beyond, &p, problem, sizeof(problem)),
		                 -E2BIG);
		assert_string_equal(problem, c->problem);
		assert_null(p);
		cJSON_Delete(at);
		cJSON_Delete(beyond);
	}
}

struct hash_case {
	const char *name;
	const char *a, *b; /* JSON with ' for " */
	bool equal;
};

#define GPU_TOLERATION "{'key':'nvidia.com/gpu','operator':'Exists','effect':'NoSchedule'}"
#define ALL_TOLERATION "{'operator':'Exists'}"

static const struct hash_case hash_cases[] = {
	/* Equal by construction */
	{ "the same spec", EXPRESSION(ARM64), EXPRESSION(ARM64), true },
	{ "nodeSelector in another order", "{'nodeSelector':{'a':'1','b':'2'}}",
	  "{'nodeSelector':{'b':'2','a':'1'}}", true },
	{ "a nodeSelector key given twice keeps its last value",
	  "{'nodeSelector':{'a':'0','b':'2','a':'1'}}", "{'nodeSelector':{'a':'1','b':'2'}}",
	  true },
	{ "values in another order, and repeated",
	  EXPRESSION("{'key':'k','operator':'In','values':['b','a','b']}"),
	  EXPRESSION("{'key':'k','operator':'In','values':['a','b']}"), true },
	{ "a Gt bound spelled with a sign",
	  EXPRESSION("{'key':'k','operator':'Gt','values':['+5']}"),
	  EXPRESSION("{'key':'k','operator':'Gt','values':['5']}"), true },
	{ "an empty term beside the others",
	  TERMS("{},{'matchExpressions':[" ARM64 "]},{'matchFields':[]}"), EXPRESSION(ARM64),
	  true },
	{ "an empty list of terms, or none", TERMS("{}"),
	  REQUIRED_BLOCK("'nodeSelectorTerms':null"), true },
	{ "tolerations in another order, and repeated",
	  TOLERATIONS(GPU_TOLERATION "," ALL_TOLERATION "," GPU_TOLERATION),
	  TOLERATIONS(ALL_TOLERATION "," GPU_TOLERATION), true },
	{ "Equal spelled out, or the default",
	  TOLERATIONS("{'key':'a','operator':'Equal','value':'x'}"),
	  TOLERATIONS("{'key':'a','value':'x'}"), true },
	{ "a toleration of PreferNoSchedule only, or none",
	  TOLERATIONS("{'key':'a','operator':'Exists','effect':'PreferNoSchedule'}"), "{}", true },
	{ "tolerationSeconds",
	  TOLERATIONS("{'key':'a','operator':'Exists','tolerationSeconds':60}"),
	  TOLERATIONS("{'key':'a','operator':'Exists'}"), true },
	{ "a request of 0, or none", RESOURCES("'requests':{'nvidia.com/gpu':0}"), "{}", true },
	{ "requests in another order, and split between containers",
	  RESOURCES("'requests':{'rdma/hca':1,'nvidia.com/gpu':4}"),
	  "{'containers':[{'name':'a','resources':{'limits':{'nvidia.com/gpu':'2'}}},"
	  "{'name':'b','resources':{'requests':{'nvidia.com/gpu':2,'rdma/hca':'1'}}}]}",
	  true },
	{ "what is not a constraint: names, images, CPU",
	  "{'containers':[{'name':'a','image':'x','resources':{'requests':{'cpu':1}}}]}",
	  "{'containers':[{'name':'b','image':'y'}]}", true },
	{ "null affinity, or none", "{'affinity':null}", "{}", true },

	/* Different */
	{ "a nodeSelector value", "{'nodeSelector':{'a':'1'}}", "{'nodeSelector':{'a':'2'}}",
	  false },
	{ "In or NotIn", EXPRESSION("{'key':'k','operator':'In','values':['a']}"),
	  EXPRESSION("{'key':'k','operator':'NotIn','values':['a']}"), false },
	{ "one value more", EXPRESSION("{'key':'k','operator':'In','values':['a']}"),
	  EXPRESSION("{'key':'k','operator':'In','values':['a','b']}"), false },
	{ "a key", EXPRESSION("{'key':'k','operator':'Exists'}"),
	  EXPRESSION("{'key':'l','operator':'Exists'}"), false },
	{ "Gt or Lt", EXPRESSION("{'key':'k','operator':'Gt','values':['5']}"),
	  EXPRESSION("{'key':'k','operator':'Lt','values':['5']}"), false },
	{ "a label or the node's name",
	  EXPRESSION("{'key':'metadata.name','operator':'In','values':['n']}"),
	  FIELD("{'key':'metadata.name','operator':'In','values':['n']}"), false },
	{ "two terms or one with both expressions",
	  TERMS("{'matchExpressions':[" ARM64 "]},{'matchExpressions':[" AMD64 "]}"),
	  EXPRESSION(ARM64 "," AMD64), false },
	{ "no terms required, or none at all", TERMS(""), "{}", false },
	{ "Exists or Equal", TOLERATIONS("{'key':'a','operator':'Exists'}"),
	  TOLERATIONS("{'key':'a','operator':'Equal'}"), false },
	{ "a toleration's effect",
	  TOLERATIONS("{'key':'a','operator':'Exists','effect':'NoSchedule'}"),
	  TOLERATIONS("{'key':'a','operator':'Exists','effect':'NoExecute'}"), false },
	{ "a toleration's value", TOLERATIONS("{'key':'a','value':'x'}"),
	  TOLERATIONS("{'key':'a','value':'y'}"), false },
	{ "a request's amount", RESOURCES("'requests':{'nvidia.com/gpu':1}"),
	  RESOURCES("'requests':{'nvidia.com/gpu':2}"), false },
	{ "a request's name", RESOURCES("'requests':{'nvidia.com/gpu':1}"),
	  RESOURCES("'requests':{'amd.com/gpu':1}"), false },
	{ "strings split elsewhere", "{'nodeSelector':{'ab':'c'}}", "{'nodeSelector':{'a':'bc'}}",
	  false },
};

static void test_hash_table(void **state)
{
	for (size_t i = 0; i < sizeof(hash_cases) / sizeof(hash_cases[0]); i++) {
		const struct hash_case *c = &hash_cases[i];
		cJSON *ja = jlit(c->a), *jb = jlit(c->b);
		struct tj_placement *a = NULL, *b = NULL;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_placement_compile(ja, &a, NULL, 0), 0);
		assert_int_equal(tj_placement_compile(jb, &b, NULL, 0), 0);
		assert_true(tj_placement_equal(a, a));
		assert_int_equal(tj_placement_equal(a, b), c->equal);
		assert_int_equal(tj_placement_equal(b, a), c->equal);
		if (c->equal)
			assert_int_equal(tj_placement_hash(a), tj_placement_hash(b));
		else
			assert_int_not_equal(tj_placement_hash(a), tj_placement_hash(b));
		tj_placement_unref(a);
		tj_placement_unref(b);
		cJSON_Delete(ja);
		cJSON_Delete(jb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allows_table),
		cmocka_unit_test(test_why_truncated),
		cmocka_unit_test(test_problems_table),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_hash_table),
		cmocka_unit_test(test_shared_until_the_last_unref),
	};
	return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
