#include "informers/resource_quota.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/quantity.h"
#include "informers/projection.h"

static const struct {
	const char *name;
	enum tj_quota_scope scope;
} scope_names[] = {
	{ "Terminating", TJ_QUOTA_SCOPE_TERMINATING },
	{ "NotTerminating", TJ_QUOTA_SCOPE_NOT_TERMINATING },
	{ "BestEffort", TJ_QUOTA_SCOPE_BEST_EFFORT },
	{ "NotBestEffort", TJ_QUOTA_SCOPE_NOT_BEST_EFFORT },
	{ "PriorityClass", TJ_QUOTA_SCOPE_PRIORITY_CLASS },
	{ "CrossNamespacePodAffinity", TJ_QUOTA_SCOPE_CROSS_NAMESPACE },
};

static const struct {
	const char *name;
	enum tj_quota_operator op;
} operator_names[] = {
	{ "Exists", TJ_QUOTA_OP_EXISTS },
	{ "DoesNotExist", TJ_QUOTA_OP_DOES_NOT_EXIST },
	{ "In", TJ_QUOTA_OP_IN },
	{ "NotIn", TJ_QUOTA_OP_NOT_IN },
};

static enum tj_quota_scope scope_of(const char *name)
{
	for (size_t i = 0; i < sizeof(scope_names) / sizeof(scope_names[0]); i++)
		if (strcmp(scope_names[i].name, name) == 0)
			return scope_names[i].scope;
	return TJ_QUOTA_SCOPE_OTHER;
}

static int operator_of(const char *name, enum tj_quota_operator *ret)
{
	for (size_t i = 0; i < sizeof(operator_names) / sizeof(operator_names[0]); i++)
		if (strcmp(operator_names[i].name, name) == 0) {
			*ret = operator_names[i].op;
			return 0;
		}
	return -EINVAL;
}

static void expression_clear(struct tj_quota_expression *e)
{
	for (size_t i = 0; i < e->n_values; i++)
		free(e->values[i]);
	free(e->values);
}

struct tj_resource_quota *tj_resource_quota_free(struct tj_resource_quota *q)
{
	if (!q)
		return NULL;
	for (size_t i = 0; i < q->n_scopes; i++)
		expression_clear(&q->scopes[i]);
	for (size_t i = 0; i < q->n_limits; i++)
		free(q->limits[i].resource);
	free(q->scopes);
	free(q->limits);
	free(q->namespace);
	free(q->name);
	free(q);
	return NULL;
}

int tj_quota_amount_json(const cJSON *q, int64_t *ret)
{
	int64_t v;
	int r = tj_quantity_json_milli(q, &v);

	if (r == -ERANGE && !(cJSON_IsString(q) && q->valuestring[0] == '-') &&
	    !(cJSON_IsNumber(q) && q->valuedouble < 0)) {
		*ret = TJ_QUOTA_UNLIMITED;
		return 0;
	}
	if (r < 0 || v < 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int add_scope(struct tj_resource_quota *q, enum tj_quota_scope scope,
                     enum tj_quota_operator op, const cJSON *values)
{
	struct tj_quota_expression *e;
	const cJSON *v;
	int n = cJSON_GetArraySize(values);

	if (q->n_scopes >= TJ_QUOTA_MAX_SCOPES || n > TJ_QUOTA_MAX_VALUES)
		return -E2BIG;
	/* The API server's rules: the scopes of a pod's state (all but PriorityClass and the
	 * others, such as VolumeAttributesClass, which compare a class name) take only Exists,
	 * and In and NotIn need values. */
	if ((scope != TJ_QUOTA_SCOPE_PRIORITY_CLASS && scope != TJ_QUOTA_SCOPE_OTHER &&
	     op != TJ_QUOTA_OP_EXISTS) ||
	    ((op == TJ_QUOTA_OP_IN || op == TJ_QUOTA_OP_NOT_IN) && n == 0))
		return -EINVAL;
	e = &q->scopes[q->n_scopes];
	*e = (struct tj_quota_expression){ .scope = scope, .op = op };
	if (n > 0 && !(e->values = calloc((size_t)n, sizeof(*e->values))))
		return -ENOMEM;
	q->n_scopes++;
	cJSON_ArrayForEach(v, values)
	{
		if (!cJSON_IsString(v))
			return -EINVAL;
		if (!(e->values[e->n_values] = strdup(v->valuestring)))
			return -ENOMEM;
		e->n_values++;
	}
	return 0;
}

static int read_scopes(const cJSON *obj, struct tj_resource_quota *q)
{
	const cJSON *scopes = cJSON_GetObjectItemCaseSensitive(tj_field(obj, "spec"), "scopes");
	const cJSON *exprs = cJSON_GetObjectItemCaseSensitive(
	        tj_field(obj, "spec", "scopeSelector"), "matchExpressions");
	const cJSON *s;
	enum tj_quota_operator op;
	int r;

	if (cJSON_GetArraySize(scopes) + cJSON_GetArraySize(exprs) > TJ_QUOTA_MAX_SCOPES)
		return -E2BIG;
	q->scopes = calloc(TJ_QUOTA_MAX_SCOPES, sizeof(*q->scopes));
	if (!q->scopes)
		return -ENOMEM;
	if (scopes && !cJSON_IsArray(scopes))
		return -EINVAL;
	if (exprs && !cJSON_IsArray(exprs))
		return -EINVAL;
	cJSON_ArrayForEach(s, scopes)
	{
		if (!cJSON_IsString(s))
			return -EINVAL;
		if ((r = add_scope(q, scope_of(s->valuestring), TJ_QUOTA_OP_EXISTS, NULL)) < 0)
			return r;
	}
	cJSON_ArrayForEach(s, exprs)
	{
		const char *scope = tj_field_string(s, "scopeName");
		const char *oper = tj_field_string(s, "operator");
		const cJSON *values = cJSON_GetObjectItemCaseSensitive(s, "values");

		if (!scope || !oper || operator_of(oper, &op) < 0 ||
		    (values && !cJSON_IsArray(values)))
			return -EINVAL;
		if ((r = add_scope(q, scope_of(scope), op, values)) < 0)
			return r;
	}
	return 0;
}

static int read_limits(const cJSON *obj, struct tj_resource_quota *q)
{
	const cJSON *hard = tj_field(obj, "spec", "hard");
	const cJSON *used = tj_field(obj, "status", "used");
	const cJSON *h;
	int n = cJSON_GetArraySize(hard);

	if (!cJSON_IsObject(hard) || n == 0)
		return 0;
	if (n > TJ_QUOTA_MAX_HARD)
		return -E2BIG;
	q->limits = calloc((size_t)n, sizeof(*q->limits));
	if (!q->limits)
		return -ENOMEM;
	cJSON_ArrayForEach(h, hard)
	{
		struct tj_quota_limit *l = &q->limits[q->n_limits];
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(used, h->string);

		if (!h->string || tj_quota_amount_json(h, &l->hard) < 0 ||
		    (u && tj_quota_amount_json(u, &l->used) < 0))
			return -EINVAL;
		if (!(l->resource = strdup(h->string)))
			return -ENOMEM;
		q->n_limits++;
	}
	return 0;
}

int tj_resource_quota_from_json(const cJSON *obj, struct tj_resource_quota **ret)
{
	const char *ns = tj_field_string(obj, "metadata", "namespace");
	const char *name = tj_field_string(obj, "metadata", "name");
	struct tj_resource_quota *q;
	int r;

	if (!ns || !*ns || !name || !*name)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	if (!(q->namespace = strdup(ns)) || !(q->name = strdup(name)))
		r = -ENOMEM;
	else if ((r = read_scopes(obj, q)) == 0)
		r = read_limits(obj, q);
	if (r < 0) {
		tj_resource_quota_free(q);
		return r;
	}
	*ret = q;
	return 0;
}

static void resource_quota_free(void *obj)
{
	tj_resource_quota_free(obj);
}

static int resource_quota_key(const void *obj, char *buf, size_t size)
{
	const struct tj_resource_quota *q = obj;

	return tj_store_key_of(buf, size, q->namespace, q->name);
}

const struct tj_store_ops tj_resource_quota_store_ops = {
	.free = resource_quota_free,
	.key = resource_quota_key,
};

int tj_resource_quota_project(const cJSON *obj, void **ret)
{
	struct tj_resource_quota *q;
	int r = tj_resource_quota_from_json(obj, &q);

	if (r == 0)
		*ret = q;
	return r;
}
