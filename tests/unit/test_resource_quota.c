/* The ResourceQuota projection: its scopes, its limits in thousandths, what the API server
 * would refuse, the bounds on its size, and the store it is kept in. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "informers/resource_quota.h"

/* Mebibytes and gibibytes in thousandths. */
#define MI 1048576000LL
#define GI 1073741824000LL

struct want_scope {
	enum tj_quota_scope scope;
	enum tj_quota_operator op;
	const char *values[3]; /* the first n_values */
	size_t n_values;
};

struct want_limit {
	const char *resource;
	int64_t hard, used;
};

#define META "'metadata':{'namespace':'team-a','name':'gpus'}"

#define EXISTS(s)                                                                                  \
	{                                                                                          \
		.scope = (s), .op = TJ_QUOTA_OP_EXISTS                                             \
	}
#define EXPRESSION(s, o, n, ...)                                                                   \
	{                                                                                          \
		.scope = (s), .op = (o), .values = { __VA_ARGS__ }, .n_values = (n)                \
	}

static const struct {
	const char *what;
	const char *json;
	int rc;
	struct want_scope scopes[8];
	size_t n_scopes;
	struct want_limit limits[4];
	size_t n_limits;
} projections[] = {
	{ .what = "hard and used, in thousandths",
	  .json = "{" META ",'spec':{'hard':{'requests.nvidia.com/gpu':'4','requests.cpu':'500m',"
	          "'limits.memory':'1Gi','pods':'10'}},'status':{'hard':{'pods':'10'},"
	          "'used':{'requests.nvidia.com/gpu':'2','requests.cpu':'250m',"
	          "'limits.memory':'512Mi','pods':'3'}}}",
	  .limits = { { "requests.nvidia.com/gpu", 4000, 2000 },
	              { "requests.cpu", 500, 250 },
	              { "limits.memory", 1 * GI, 512 * MI },
	              { "pods", 10000, 3000 } },
	  .n_limits = 4 },
	{ .what = "nothing used yet",
	  .json = "{" META ",'spec':{'hard':{'requests.nvidia.com/gpu':'8','count/pods':'4'}}}",
	  .limits = { { "requests.nvidia.com/gpu", 8000, 0 }, { "count/pods", 4000, 0 } },
	  .n_limits = 2 },
	{ .what = "a resource not counted yet",
	  .json = "{" META ",'spec':{'hard':{'pods':'4','requests.memory':'2Gi'}},"
	          "'status':{'used':{'pods':'1'}}}",
	  .limits = { { "pods", 4000, 1000 }, { "requests.memory", 2 * GI, 0 } },
	  .n_limits = 2 },
	{ .what = "a number for a quantity",
	  .json = "{" META ",'spec':{'hard':{'pods':10}}}",
	  .limits = { { "pods", 10000, 0 } },
	  .n_limits = 1 },
	{ .what = "a quantity past what thousandths hold is no limit",
	  .json = "{" META ",'spec':{'hard':{'requests.memory':'1E','limits.memory':1e300}},"
	          "'status':{'used':{'requests.memory':'9E'}}}",
	  .limits = { { "requests.memory", TJ_QUOTA_UNLIMITED, TJ_QUOTA_UNLIMITED },
	              { "limits.memory", TJ_QUOTA_UNLIMITED, 0 } },
	  .n_limits = 2 },
	{ .what = "no hard", .json = "{" META ",'spec':{}}" },
	{ .what = "no spec", .json = "{" META "}" },
	{ .what = "every scope by name",
	  .json = "{" META ",'spec':{'scopes':['Terminating','NotTerminating','BestEffort',"
	          "'NotBestEffort','PriorityClass','CrossNamespacePodAffinity'],"
	          "'hard':{'pods':'1'}}}",
	  .scopes = { EXISTS(TJ_QUOTA_SCOPE_TERMINATING), EXISTS(TJ_QUOTA_SCOPE_NOT_TERMINATING),
	              EXISTS(TJ_QUOTA_SCOPE_BEST_EFFORT), EXISTS(TJ_QUOTA_SCOPE_NOT_BEST_EFFORT),
	              EXISTS(TJ_QUOTA_SCOPE_PRIORITY_CLASS),
	              EXISTS(TJ_QUOTA_SCOPE_CROSS_NAMESPACE) },
	  .n_scopes = 6,
	  .limits = { { "pods", 1000, 0 } },
	  .n_limits = 1 },
	{ .what = "scopes of other objects",
	  .json = "{" META ",'spec':{'scopes':['VolumeAttributesClass','SomethingNew']}}",
	  .scopes = { EXISTS(TJ_QUOTA_SCOPE_OTHER), EXISTS(TJ_QUOTA_SCOPE_OTHER) },
	  .n_scopes = 2 },
	{ .what = "PriorityClass expressions",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'PriorityClass','operator':'In','values':['high','urgent']},"
	          "{'scopeName':'PriorityClass','operator':'NotIn','values':['low']},"
	          "{'scopeName':'PriorityClass','operator':'Exists'},"
	          "{'scopeName':'PriorityClass','operator':'DoesNotExist','values':[]}]}}}",
	  .scopes = { EXPRESSION(TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_IN, 2, "high",
	                         "urgent"),
	              EXPRESSION(TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_NOT_IN, 1, "low"),
	              EXISTS(TJ_QUOTA_SCOPE_PRIORITY_CLASS),
	              EXPRESSION(TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_DOES_NOT_EXIST, 0,
	                         NULL) },
	  .n_scopes = 4 },
	{ .what = "scopes first, then the selector's expressions",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'BestEffort','operator':'Exists'},"
	          "{'scopeName':'PriorityClass','operator':'In','values':['high']}]},"
	          "'scopes':['NotTerminating'],'hard':{'requests.nvidia.com/gpu':'16'}}}",
	  .scopes = { EXISTS(TJ_QUOTA_SCOPE_NOT_TERMINATING), EXISTS(TJ_QUOTA_SCOPE_BEST_EFFORT),
	              EXPRESSION(TJ_QUOTA_SCOPE_PRIORITY_CLASS, TJ_QUOTA_OP_IN, 1, "high") },
	  .n_scopes = 3,
	  .limits = { { "requests.nvidia.com/gpu", 16000, 0 } },
	  .n_limits = 1 },
	/* The API server takes In on VolumeAttributesClass, which compares a PVC's class. */
	{ .what = "a class of other objects compared by name",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'VolumeAttributesClass','operator':'In','values':['gold']}]}}}",
	  .scopes = { EXPRESSION(TJ_QUOTA_SCOPE_OTHER, TJ_QUOTA_OP_IN, 1, "gold") },
	  .n_scopes = 1 },
	{ .what = "no namespace",
	  .json = "{'metadata':{'name':'gpus'},'spec':{'hard':{'pods':'1'}}}",
	  .rc = -EINVAL },
	{ .what = "an empty namespace",
	  .json = "{'metadata':{'namespace':'','name':'gpus'}}",
	  .rc = -EINVAL },
	{ .what = "no name",
	  .json = "{'metadata':{'namespace':'team-a'},'spec':{'hard':{'pods':'1'}}}",
	  .rc = -EINVAL },
	{ .what = "an empty name",
	  .json = "{'metadata':{'namespace':'team-a','name':''}}",
	  .rc = -EINVAL },
	{ .what = "a hard amount that is no quantity",
	  .json = "{" META ",'spec':{'hard':{'pods':'ten'}}}",
	  .rc = -EINVAL },
	{ .what = "a hard amount that is neither string nor number",
	  .json = "{" META ",'spec':{'hard':{'pods':true}}}",
	  .rc = -EINVAL },
	{ .what = "a used amount that is no quantity",
	  .json = "{" META ",'spec':{'hard':{'pods':'4'}},'status':{'used':{'pods':'1 pod'}}}",
	  .rc = -EINVAL },
	{ .what = "a negative quantity",
	  .json = "{" META ",'spec':{'hard':{'requests.cpu':'-1'}}}",
	  .rc = -EINVAL },
	{ .what = "a negative number",
	  .json = "{" META ",'spec':{'hard':{'pods':-2}}}",
	  .rc = -EINVAL },
	{ .what = "a negative quantity past what thousandths hold",
	  .json = "{" META ",'spec':{'hard':{'requests.memory':'-9E'}}}",
	  .rc = -EINVAL },
	{ .what = "a negative used amount",
	  .json = "{" META ",'spec':{'hard':{'pods':'4'}},'status':{'used':{'pods':'-1'}}}",
	  .rc = -EINVAL },
	{ .what = "In without values",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'PriorityClass','operator':'In'}]}}}",
	  .rc = -EINVAL },
	{ .what = "NotIn with no values",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'PriorityClass','operator':'NotIn','values':[]}]}}}",
	  .rc = -EINVAL },
	{ .what = "a scope of the pod's state with In",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'Terminating','operator':'In','values':['x']}]}}}",
	  .rc = -EINVAL },
	{ .what = "a scope of the pod's state with DoesNotExist",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'CrossNamespacePodAffinity','operator':'DoesNotExist'}]}}}",
	  .rc = -EINVAL },
	{ .what = "an unknown operator",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'PriorityClass','operator':'Gt','values':['1']}]}}}",
	  .rc = -EINVAL },
	{ .what = "no operator",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'PriorityClass'}]}}}",
	  .rc = -EINVAL },
	{ .what = "no scope name",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'operator':'Exists'}]}}}",
	  .rc = -EINVAL },
	{ .what = "values that are not an array",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'PriorityClass','operator':'In','values':'high'}]}}}",
	  .rc = -EINVAL },
	{ .what = "a value that is no string",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':["
	          "{'scopeName':'PriorityClass','operator':'In','values':['high',7]}]}}}",
	  .rc = -EINVAL },
	{ .what = "scopes that are not an array",
	  .json = "{" META ",'spec':{'scopes':'Terminating'}}",
	  .rc = -EINVAL },
	{ .what = "a scope that is no string",
	  .json = "{" META ",'spec':{'scopes':['Terminating',1]}}",
	  .rc = -EINVAL },
	{ .what = "expressions that are not an array",
	  .json = "{" META ",'spec':{'scopeSelector':{'matchExpressions':'PriorityClass'}}}",
	  .rc = -EINVAL },
};

static void assert_quota(const struct tj_resource_quota *q, size_t i)
{
	assert_string_equal(q->namespace, "team-a");
	assert_string_equal(q->name, "gpus");
	assert_int_equal(q->n_scopes, projections[i].n_scopes);
	for (size_t k = 0; k < q->n_scopes; k++) {
		const struct want_scope *w = &projections[i].scopes[k];

		assert_int_equal(q->scopes[k].scope, w->scope);
		assert_int_equal(q->scopes[k].op, w->op);
		assert_int_equal(q->scopes[k].n_values, w->n_values);
		for (size_t v = 0; v < w->n_values; v++)
			assert_string_equal(q->scopes[k].values[v], w->values[v]);
	}
	assert_int_equal(q->n_limits, projections[i].n_limits);
	for (size_t k = 0; k < q->n_limits; k++) {
		const struct want_limit *w = &projections[i].limits[k];

		assert_string_equal(q->limits[k].resource, w->resource);
		assert_int_equal(q->limits[k].hard, w->hard);
		assert_int_equal(q->limits[k].used, w->used);
	}
}

static void test_projection(void **state)
{
	for (size_t i = 0; i < sizeof(projections) / sizeof(projections[0]); i++) {
		cJSON *j = jlit(projections[i].json);
		struct tj_resource_quota *q = (struct tj_resource_quota *)0x1;
		int rc = tj_resource_quota_from_json(j, &q);

		print_message("# case: %s\n", projections[i].what);
		assert_int_equal(rc, projections[i].rc);
		if (rc == 0) {
			assert_quota(q, i);
			tj_resource_quota_free(q);
		} else {
			assert_ptr_equal(q, (struct tj_resource_quota *)0x1);
		}
		cJSON_Delete(j);
	}
}

/* A quota with one expression, PriorityClass In [high], and n more entries of one list: hard
 * resources, spec.scopes, spec.scopes and expressions half and half, or values of that
 * expression. */
enum list {
	HARD,
	SCOPES,
	SCOPES_AND_EXPRESSIONS,
	VALUES
};

static cJSON *quota_with(enum list list, int n)
{
	cJSON *j = jlit("{" META ",'spec':{'hard':{},'scopes':[],'scopeSelector':{"
	                "'matchExpressions':[{'scopeName':'PriorityClass','operator':'In',"
	                "'values':['high']}]}}}");
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(j, "spec");
	cJSON *hard = cJSON_GetObjectItemCaseSensitive(spec, "hard");
	cJSON *scopes = cJSON_GetObjectItemCaseSensitive(spec, "scopes");
	cJSON *exprs = cJSON_GetObjectItemCaseSensitive(
	        cJSON_GetObjectItemCaseSensitive(spec, "scopeSelector"), "matchExpressions");
	cJSON *values = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(exprs, 0), "values");
	char name[32];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "example.com/r%d", i);
		if (list == HARD)
			cJSON_AddItemToObject(hard, name, cJSON_CreateString("1"));
		else if (list == SCOPES || (list == SCOPES_AND_EXPRESSIONS && i % 2))
			cJSON_AddItemToArray(scopes, cJSON_CreateString("NotTerminating"));
		else if (list == SCOPES_AND_EXPRESSIONS)
			cJSON_AddItemToArray(
			        exprs, jlit("{'scopeName':'PriorityClass','operator':'Exists'}"));
		else
			cJSON_AddItemToArray(values, cJSON_CreateString(name));
	}
	return j;
}

/* The values of the quota's one In expression. */
static size_t in_values(const struct tj_resource_quota *q)
{
	for (size_t k = 0; k < q->n_scopes; k++)
		if (q->scopes[k].op == TJ_QUOTA_OP_IN)
			return q->scopes[k].n_values;
	fail_msg("no In expression");
	return 0;
}

/* TJ_QUOTA_MAX_*, reached and passed. */
static const struct {
	const char *what;
	enum list list;
	int n;
	int rc;
	size_t n_scopes, n_limits, n_values;
} bounds[] = {
	{ "as many hard entries as allowed", HARD, TJ_QUOTA_MAX_HARD, 0, 1, TJ_QUOTA_MAX_HARD, 1 },
	{ "one hard entry too many", HARD, TJ_QUOTA_MAX_HARD + 1, -E2BIG, 0, 0, 0 },
	{ "as many scopes as allowed", SCOPES, TJ_QUOTA_MAX_SCOPES - 1, 0, TJ_QUOTA_MAX_SCOPES, 0,
	  1 },
	{ "one scope too many", SCOPES, TJ_QUOTA_MAX_SCOPES, -E2BIG, 0, 0, 0 },
	{ "scopes and expressions as many as allowed", SCOPES_AND_EXPRESSIONS,
	  TJ_QUOTA_MAX_SCOPES - 1, 0, TJ_QUOTA_MAX_SCOPES, 0, 1 },
	{ "scopes and expressions, one too many", SCOPES_AND_EXPRESSIONS, TJ_QUOTA_MAX_SCOPES,
	  -E2BIG, 0, 0, 0 },
	{ "as many values as allowed", VALUES, TJ_QUOTA_MAX_VALUES - 1, 0, 1, 0,
	  TJ_QUOTA_MAX_VALUES },
	{ "one value too many", VALUES, TJ_QUOTA_MAX_VALUES, -E2BIG, 0, 0, 0 },
};

static void test_bounds(void **state)
{
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		cJSON *j = quota_with(bounds[i].list, bounds[i].n);
		struct tj_resource_quota *q = (struct tj_resource_quota *)0x1;
		int rc = tj_resource_quota_from_json(j, &q);

		print_message("# case: %s\n", bounds[i].what);
		assert_int_equal(rc, bounds[i].rc);
		if (rc == 0) {
			assert_int_equal(q->n_scopes, bounds[i].n_scopes);
			assert_int_equal(q->n_limits, bounds[i].n_limits);
			assert_int_equal(in_values(q), bounds[i].n_values);
			tj_resource_quota_free(q);
		} else {
			assert_ptr_equal(q, (struct tj_resource_quota *)0x1);
		}
		cJSON_Delete(j);
	}
}

static struct tj_resource_quota *project(const char *json)
{
	cJSON *j = jlit(json);
	void *q;

	assert_int_equal(tj_resource_quota_project(j, &q), 0);
	cJSON_Delete(j);
	return q;
}

/* Kept by "namespace/name"; a new version replaces the old one. */
static void test_store(void **state)
{
	struct tj_resource_quota *gpus = project("{" META ",'spec':{'hard':{'pods':'4'}}}");
	struct tj_resource_quota *other = project(
	        "{'metadata':{'namespace':'team-b','name':'gpus'},'spec':{'hard':{'pods':'2'}}}");
	struct tj_resource_quota *again =
	        project("{" META ",'spec':{'hard':{'pods':'8'}},'status':{'used':{'pods':'1'}}}");
	const struct tj_resource_quota *got;
	struct tj_store *s;
	void *old, *p = (void *)0x1;
	cJSON *bad = jlit("{'metadata':{'name':'gpus'}}");

	assert_int_equal(tj_resource_quota_project(bad, &p), -EINVAL);
	assert_ptr_equal(p, (void *)0x1);
	cJSON_Delete(bad);

	assert_int_equal(tj_store_new(&tj_resource_quota_store_ops, &s), 0);
	assert_int_equal(tj_store_upsert(s, gpus, NULL), 0);
	assert_int_equal(tj_store_upsert(s, other, NULL), 0);
	assert_int_equal(tj_store_len(s), 2);
	assert_ptr_equal(tj_store_get(s, "team-a/gpus"), gpus);
	assert_ptr_equal(tj_store_get(s, "team-b/gpus"), other);
	assert_null(tj_store_get(s, "gpus"));

	assert_int_equal(tj_store_upsert(s, again, &old), 0);
	assert_ptr_equal(old, gpus);
	tj_resource_quota_store_ops.free(old);
	assert_int_equal(tj_store_len(s), 2);
	got = tj_store_get(s, "team-a/gpus");
	assert_ptr_equal(got, again);
	assert_int_equal(got->limits[0].hard, 8000);
	assert_int_equal(got->limits[0].used, 1000);

	assert_int_equal(tj_store_delete(s, "team-b/gpus", NULL), 0);
	assert_int_equal(tj_store_len(s), 1);
	tj_store_free(s);
	assert_null(tj_resource_quota_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_store),
	};
	return cmocka_run_group_tests_name("resource_quota", tests, NULL, NULL);
}
