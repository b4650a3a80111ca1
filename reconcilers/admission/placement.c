#include "reconcilers/admission/placement.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informers/resources.h"

#define REQUIRED "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
/* Room for the path of an expression: REQUIRED, a term's index and an expression's. */
#define FIELD_PATH_MAX 160

enum op {
	OP_IN,
	OP_NOT_IN,
	OP_EXISTS,
	OP_DOES_NOT_EXIST,
	OP_GT,
	OP_LT,
};

static const char *const op_names[] = {
	[OP_IN] = "In",         [OP_NOT_IN] = "NotIn",
	[OP_EXISTS] = "Exists", [OP_DOES_NOT_EXIST] = "DoesNotExist",
	[OP_GT] = "Gt",         [OP_LT] = "Lt",
};

/* One requirement of a term: on a label (matchExpressions) or on the node's name
 * (matchFields). */
struct requirement {
	char *key; /* owned; metadata.name for a field */
	enum op op;
	char **values; /* owned array of n_values owned strings, sorted, distinct: In, NotIn */
	size_t n_values;
	int64_t bound; /* Gt, Lt */
};

struct term {
	struct requirement *labels; /* owned array of n_labels */
	size_t n_labels;
	struct requirement *fields; /* owned array of n_fields */
	size_t n_fields;
};

struct selector_entry {
	char *key;   /* owned */
	char *value; /* owned */
};

/* The effects a toleration of the filter can name; PreferNoSchedule only scores. */
enum effect {
	EFFECT_ANY,
	EFFECT_NO_SCHEDULE,
	EFFECT_NO_EXECUTE,
};

struct toleration {
	char *key;   /* owned; NULL: every key (Exists) */
	char *value; /* owned; NULL: every value (Exists) */
	enum effect effect;
};

struct request {
	char *name; /* owned */
	int64_t amount;
};

struct tj_placement {
	struct selector_entry *selector; /* owned array of n_selector, sorted by key */
	size_t n_selector;
	bool required;      /* requiredDuringSchedulingIgnoredDuringExecution is set */
	struct term *terms; /* owned array of n_terms, each with a requirement at least */
	size_t n_terms;
	struct toleration *tolerations; /* owned array of n_tolerations, sorted, distinct */
	size_t n_tolerations;
	struct request requests[TJ_RESOURCES_MAX_EXTENDED]; /* n_requests, sorted by name */
	uint8_t n_requests;
	uint64_t hash;
	size_t refs; /* the holders of this placement: the last one's unref frees it */
};

static void requirements_free(struct requirement *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].key);
		for (size_t k = 0; k < r[i].n_values; k++)
			free(r[i].values[k]);
		free(r[i].values);
	}
	free(r);
}

struct tj_placement *tj_placement_ref(struct tj_placement *p)
{
	p->refs++;
	return p;
}

struct tj_placement *tj_placement_unref(struct tj_placement *p)
{
	if (!p || --p->refs > 0)
		return NULL;
	for (size_t i = 0; i < p->n_selector; i++) {
		free(p->selector[i].key);
		free(p->selector[i].value);
	}
	free(p->selector);
	for (size_t i = 0; i < p->n_terms; i++) {
		requirements_free(p->terms[i].labels, p->terms[i].n_labels);
		requirements_free(p->terms[i].fields, p->terms[i].n_fields);
	}
	free(p->terms);
	for (size_t i = 0; i < p->n_tolerations; i++) {
		free(p->tolerations[i].key);
		free(p->tolerations[i].value);
	}
	free(p->tolerations);
	for (uint8_t i = 0; i < p->n_requests; i++)
		free(p->requests[i].name);
	free(p);
	return NULL;
}

/* Where a compilation reports its problem. */
struct compile {
	char *problem; /* borrowed; NULL if the caller does not want it */
	size_t problem_size;
};

__attribute__((format(printf, 3, 4))) static int fail(const struct compile *c, int err,
                                                      const char *fmt, ...)
{
	va_list ap;

	if (c->problem && c->problem_size > 0) {
		va_start(ap, fmt);
		vsnprintf(c->problem, c->problem_size, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* The member key of obj at path, in *ret: NULL when it is absent or null (a Go client decodes
 * both alike), -EINVAL when it is not of the type is() accepts. */
static int typed_member(const struct compile *c, const cJSON *obj, const char *path,
                        const char *key, cJSON_bool (*is)(const cJSON *), const char *type,
                        const cJSON **ret)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsNull(m))
		m = NULL;
	if (m && !is(m))
		return fail(c, -EINVAL, "%s.%s: not %s", path, key, type);
	*ret = m;
	return 0;
}

static int object_at(const struct compile *c, const cJSON *obj, const char *path, const char *key,
                     const cJSON **ret)
{
	return typed_member(c, obj, path, key, cJSON_IsObject, "an object", ret);
}

/* A string member; "" when absent, as Go's zero value. */
static int string_at(const struct compile *c, const cJSON *obj, const char *path, const char *key,
                     const char **ret)
{
	const cJSON *m = NULL;
	int r = typed_member(c, obj, path, key, cJSON_IsString, "a string", &m);

	if (r < 0)
		return r;
	*ret = m ? m->valuestring : "";
	return 0;
}

/* A list member and its length, at most max entries (-E2BIG beyond). */
static int list_at(const struct compile *c, const cJSON *obj, const char *path, const char *key,
                   size_t max, const cJSON **ret, size_t *ret_n)
{
	const cJSON *m = NULL;
	size_t n;
	int r = typed_member(c, obj, path, key, cJSON_IsArray, "a list", &m);

	if (r < 0)
		return r;
	n = m ? (size_t)cJSON_GetArraySize(m) : 0;
	if (n > max)
		return fail(c, -E2BIG, "%s.%s: %zu entries, beyond the limit of %zu", path, key, n,
		            max);
	*ret = m;
	*ret_n = n;
	return 0;
}

/* As Go's strconv.ParseInt(s, 10, 64), by which the label selector reads the operands of Gt
 * and Lt: an optional sign and decimal digits, nothing else, within an int64. */
static bool parse_int(const char *s, int64_t *ret)
{
	bool negative = *s == '-';
	const char *d = *s == '+' || *s == '-' ? s + 1 : s;
	int64_t v = 0;

	if (!*d)
		return false;
	for (; *d; d++) {
		int digit = *d - '0';

		if (digit < 0 || digit > 9 || __builtin_mul_overflow(v, 10, &v) ||
		    (negative ? __builtin_sub_overflow(v, digit, &v)
		              : __builtin_add_overflow(v, digit, &v)))
			return false;
	}
	*ret = v;
	return true;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* NULL (every key, every value) sorts first. */
static int compare_optional(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* Copies the n values of an In or NotIn, sorted and without duplicates: they are a set. */
static int compile_values(const struct compile *c, const cJSON *values, size_t n, const char *path,
                          struct requirement *r)
{
	const cJSON *v;
	size_t kept = 0;

	r->values = calloc(n, sizeof(*r->values));
	if (!r->values)
		return -ENOMEM;
	cJSON_ArrayForEach(v, values)
	{
		if (!cJSON_IsString(v))
			return fail(c, -EINVAL, "%s.values[%zu]: not a string", path, r->n_values);
		r->values[r->n_values] = strdup(v->valuestring);
		if (!r->values[r->n_values])
			return -ENOMEM;
		r->n_values++;
	}
	qsort(r->values, r->n_values, sizeof(*r->values), compare_strings);
	for (size_t i = 0; i < r->n_values; i++) {
		if (kept > 0 && strcmp(r->values[kept - 1], r->values[i]) == 0)
			free(r->values[i]);
		else
			r->values[kept++] = r->values[i];
	}
	r->n_values = kept;
	return 0;
}

static int parse_op(const char *s, enum op *ret)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strcmp(s, op_names[i]) == 0) {
			*ret = (enum op)i;
			return 0;
		}
	return -EINVAL;
}

/* One entry of matchExpressions, or of matchFields (field), with the checks of the API
 * server's validation; the label selector would not match a term that fails them. */
static int compile_requirement(const struct compile *c, const cJSON *e, const char *path,
                               bool field, struct requirement *r)
{
	const char *key, *op;
	const cJSON *values, *bound;
	size_t n;
	int rc;

	if (!cJSON_IsObject(e))
		return fail(c, -EINVAL, "%s: not an object", path);
	if ((rc = string_at(c, e, path, "key", &key)) < 0 ||
	    (rc = string_at(c, e, path, "operator", &op)) < 0 ||
	    (rc = list_at(c, e, path, "values", TJ_PLACEMENT_MAX_VALUES, &values, &n)) < 0)
		return rc;
	if (!*key)
		return fail(c, -EINVAL, "%s.key: required", path);
	if (field && strcmp(key, "metadata.name") != 0)
		return fail(c, -EINVAL, "%s.key: \"%s\" is not a node field (metadata.name)", path,
		            key);
	if (parse_op(op, &r->op) < 0 || (field && r->op != OP_IN && r->op != OP_NOT_IN))
		return fail(c, -EINVAL, "%s.operator: \"%s\" is not %s", path, op,
		            field ? "In or NotIn" : "In, NotIn, Exists, DoesNotExist, Gt or Lt");
	switch (r->op) {
	case OP_IN:
	case OP_NOT_IN:
		if (field && n != 1)
			return fail(c, -EINVAL, "%s.values: %s on a field needs exactly one value",
			            path, op);
		if (n == 0)
			return fail(c, -EINVAL, "%s.values: %s needs a value at least", path, op);
		break;
	case OP_EXISTS:
	case OP_DOES_NOT_EXIST:
		if (n != 0)
			return fail(c, -EINVAL, "%s.values: must be empty for %s", path, op);
		break;
	case OP_GT:
	case OP_LT:
		bound = cJSON_GetArrayItem(values, 0);
		if (n != 1 || !cJSON_IsString(bound))
			return fail(c, -EINVAL, "%s.values: %s needs exactly one integer", path,
			            op);
		if (!parse_int(bound->valuestring, &r->bound))
			return fail(c, -EINVAL, "%s.values[0]: \"%s\" is not an integer", path,
			            bound->valuestring);
		break;
	}
	r->key = strdup(key);
	if (!r->key)
		return -ENOMEM;
	if (r->op == OP_IN || r->op == OP_NOT_IN)
		return compile_values(c, values, n, path, r);
	return 0;
}

/* The requirements of the list key of a term, into *ret (n entries, counted as they are
 * made, so that tj_placement_unref() frees what a failure leaves). */
static int compile_requirements(const struct compile *c, const cJSON *term, const char *path,
                                const char *key, bool field, struct requirement **ret,
                                size_t *ret_n)
{
	char sub[FIELD_PATH_MAX];
	const cJSON *list, *e;
	size_t n;
	int r;

	if ((r = list_at(c, term, path, key, TJ_PLACEMENT_MAX_EXPRESSIONS, &list, &n)) < 0)
		return r;
	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (!*ret)
		return -ENOMEM;
	cJSON_ArrayForEach(e, list)
	{
		snprintf(sub, sizeof(sub), "%s.%s[%zu]", path, key, *ret_n);
		if ((r = compile_requirement(c, e, sub, field, &(*ret)[(*ret_n)++])) < 0)
			return r;
	}
	return 0;
}

static int compile_term(const struct compile *c, const cJSON *t, const char *path,
                        struct term *term)
{
	int r;

	if (!cJSON_IsObject(t))
		return fail(c, -EINVAL, "%s: not an object", path);
	if ((r = compile_requirements(c, t, path, "matchExpressions", false, &term->labels,
	                              &term->n_labels)) < 0)
		return r;
	return compile_requirements(c, t, path, "matchFields", true, &term->fields,
	                            &term->n_fields);
}

static int compile_affinity(const struct compile *c, const cJSON *spec, struct tj_placement *p)
{
	const cJSON *affinity = NULL, *node_affinity = NULL, *required = NULL, *terms, *t;
	char path[FIELD_PATH_MAX];
	size_t n, i = 0;
	int r;

	if ((r = object_at(c, spec, "spec", "affinity", &affinity)) < 0 ||
	    (r = object_at(c, affinity, "spec.affinity", "nodeAffinity", &node_affinity)) < 0 ||
	    (r = object_at(c, node_affinity, "spec.affinity.nodeAffinity",
	                   "requiredDuringSchedulingIgnoredDuringExecution", &required)) < 0)
		return r;
	if (!required)
		return 0;
	/* Set, the block must be met, even with no terms: an empty list matches no node. */
	p->required = true;
	if ((r = list_at(c, required, REQUIRED, "nodeSelectorTerms", TJ_PLACEMENT_MAX_TERMS, &terms,
	                 &n)) < 0)
		return r;
	if (n == 0)
		return 0;
	p->terms = calloc(n, sizeof(*p->terms));
	if (!p->terms)
		return -ENOMEM;
	cJSON_ArrayForEach(t, terms)
	{
		struct term *term = &p->terms[p->n_terms++];

		snprintf(path, sizeof(path), REQUIRED ".nodeSelectorTerms[%zu]", i++);
		if ((r = compile_term(c, t, path, term)) < 0)
			return r;
		/* A term without requirements matches no node, so Kubernetes skips it; its slot,
		 * which nothing was allocated for, takes the next term. */
		if (term->n_labels + term->n_fields == 0)
			p->n_terms--;
	}
	return 0;
}

static int compare_selector(const void *a, const void *b)
{
	return strcmp(((const struct selector_entry *)a)->key,
	              ((const struct selector_entry *)b)->key);
}

static int compile_selector(const struct compile *c, const cJSON *spec, struct tj_placement *p)
{
	const cJSON *selector, *e;
	size_t n;
	int r;

	if ((r = object_at(c, spec, "spec", "nodeSelector", &selector)) < 0)
		return r;
	n = selector ? (size_t)cJSON_GetArraySize(selector) : 0;
	if (n > TJ_PLACEMENT_MAX_SELECTOR)
		return fail(c, -E2BIG, "spec.nodeSelector: %zu entries, beyond the limit of %d", n,
		            TJ_PLACEMENT_MAX_SELECTOR);
	if (n == 0)
		return 0;
	p->selector = calloc(n, sizeof(*p->selector));
	if (!p->selector)
		return -ENOMEM;
	cJSON_ArrayForEach(e, selector)
	{
		struct selector_entry *s = NULL;
		char *value;

		if (!cJSON_IsString(e))
			return fail(c, -EINVAL, "spec.nodeSelector.%s: not a string", e->string);
		value = strdup(e->valuestring);
		if (!value)
			return -ENOMEM;
		/* A key given twice keeps its last value, as a Go client decodes the map. */
		for (size_t i = 0; i < p->n_selector && !s; i++)
			if (strcmp(p->selector[i].key, e->string) == 0)
				s = &p->selector[i];
		if (!s) {
			s = &p->selector[p->n_selector++];
			s->key = strdup(e->string);
		}
		free(s->value);
		s->value = value;
		if (!s->key)
			return -ENOMEM;
	}
	qsort(p->selector, p->n_selector, sizeof(*p->selector), compare_selector);
	return 0;
}

static int compare_tolerations(const void *pa, const void *pb)
{
	const struct toleration *a = pa, *b = pb;
	int r = compare_optional(a->key, b->key);

	if (r == 0)
		r = compare_optional(a->value, b->value);
	return r != 0 ? r : (int)a->effect - (int)b->effect;
}

/* One toleration, with the checks of the API server's validation; *ret_kept is false for
 * one of PreferNoSchedule, which the filter never asks. */
static int compile_toleration(const struct compile *c, const cJSON *t, const char *path,
                              struct toleration *ret, bool *ret_kept)
{
	const char *key, *op, *value, *effect;
	bool exists;
	int r;

	if (!cJSON_IsObject(t))
		return fail(c, -EINVAL, "%s: not an object", path);
	if ((r = string_at(c, t, path, "key", &key)) < 0 ||
	    (r = string_at(c, t, path, "operator", &op)) < 0 ||
	    (r = string_at(c, t, path, "value", &value)) < 0 ||
	    (r = string_at(c, t, path, "effect", &effect)) < 0)
		return r;
	exists = strcmp(op, "Exists") == 0;
	/* Gt and Lt (Kubernetes 1.35, alpha behind TaintTolerationComparisonOperators) are
	 * refused until a cluster the controller runs on can have them. */
	if (!exists && *op && strcmp(op, "Equal") != 0)
		return fail(c, -EINVAL, "%s.operator: \"%s\" is not Equal or Exists", path, op);
	if (!*key && !exists)
		return fail(c, -EINVAL, "%s.operator: must be Exists when key is empty", path);
	if (exists && *value)
		return fail(c, -EINVAL, "%s.value: must be empty when operator is Exists", path);
	if (strcmp(effect, "PreferNoSchedule") == 0) {
		*ret_kept = false;
		return 0;
	}
	if (!*effect)
		ret->effect = EFFECT_ANY;
	else if (strcmp(effect, "NoSchedule") == 0)
		ret->effect = EFFECT_NO_SCHEDULE;
	else if (strcmp(effect, "NoExecute") == 0)
		ret->effect = EFFECT_NO_EXECUTE;
	else
		return fail(c, -EINVAL,
		            "%s.effect: \"%s\" is not NoSchedule, PreferNoSchedule or NoExecute",
		            path, effect);
	*ret_kept = true;
	ret->key = *key ? strdup(key) : NULL;
	ret->value = exists ? NULL : strdup(value);
	return (*key && !ret->key) || (!exists && !ret->value) ? -ENOMEM : 0;
}

static int compile_tolerations(const struct compile *c, const cJSON *spec, struct tj_placement *p)
{
	char path[FIELD_PATH_MAX];
	const cJSON *list, *t;
	size_t n, i = 0, kept = 0;
	int r;

	if ((r = list_at(c, spec, "spec", "tolerations", TJ_PLACEMENT_MAX_TOLERATIONS, &list, &n)) <
	    0)
		return r;
	if (n == 0)
		return 0;
	p->tolerations = calloc(n, sizeof(*p->tolerations));
	if (!p->tolerations)
		return -ENOMEM;
	cJSON_ArrayForEach(t, list)
	{
		bool keep = false;

		snprintf(path, sizeof(path), "spec.tolerations[%zu]", i++);
		p->n_tolerations++;
		if ((r = compile_toleration(c, t, path, &p->tolerations[p->n_tolerations - 1],
		                            &keep)) < 0)
			return r;
		if (!keep)
			p->n_tolerations--;
	}
	qsort(p->tolerations, p->n_tolerations, sizeof(*p->tolerations), compare_tolerations);
	for (i = 0; i < p->n_tolerations; i++) {
		if (kept > 0 &&
		    compare_tolerations(&p->tolerations[kept - 1], &p->tolerations[i]) == 0) {
			free(p->tolerations[i].key);
			free(p->tolerations[i].value);
		} else {
			p->tolerations[kept++] = p->tolerations[i];
		}
	}
	p->n_tolerations = kept;
	return 0;
}

static int compare_requests(const void *a, const void *b)
{
	return strcmp(((const struct request *)a)->name, ((const struct request *)b)->name);
}

static int compile_requests(const struct compile *c, const cJSON *spec, struct tj_placement *p)
{
	struct tj_pod_resources res;
	int r = tj_pod_spec_requests(spec, &res);

	if (r < 0)
		return fail(c, -EINVAL,
		            "spec: a resource request, limit or overhead is not a quantity, or is "
		            "negative");
	/* Checking only the names kept would let the pod onto nodes that lack the others. */
	if (r > 0)
		return fail(c, -E2BIG, "spec: requests more than %d extended resources",
		            TJ_RESOURCES_MAX_EXTENDED);
	for (uint8_t i = 0; i < res.n_extended; i++) {
		struct request *q = &p->requests[p->n_requests];

		/* The scheduler skips a request of 0, as if the pod made none. */
		if (res.extended[i].value == 0)
			continue;
		q->name = strdup(res.extended[i].name);
		if (!q->name)
			return -ENOMEM;
		q->amount = res.extended[i].value;
		p->n_requests++;
	}
	qsort(p->requests, p->n_requests, sizeof(*p->requests), compare_requests);
	return 0;
}

/* FNV-1a, 64 bits: the constraints are the controller's own pods; a collision costs an extra
 * tj_placement_equal(), never a wrong answer. */
static uint64_t mix(uint64_t h, const void *data, size_t n)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t mix_int(uint64_t h, uint64_t v)
{
	return mix(h, &v, sizeof(v));
}

/* Whether it is set, then its bytes with the NUL, so that no two lists of strings hash the
 * same bytes. */
static uint64_t mix_string(uint64_t h, const char *s)
{
	h = mix_int(h, s != NULL);
	return s ? mix(h, s, strlen(s) + 1) : h;
}

static uint64_t mix_requirements(uint64_t h, const struct requirement *r, size_t n)
{
	h = mix_int(h, n);
	for (size_t i = 0; i < n; i++) {
		h = mix_int(mix_int(mix_string(h, r[i].key), r[i].op), (uint64_t)r[i].bound);
		h = mix_int(h, r[i].n_values);
		for (size_t k = 0; k < r[i].n_values; k++)
			h = mix_string(h, r[i].values[k]);
	}
	return h;
}

static uint64_t hash_placement(const struct tj_placement *p)
{
	uint64_t h = mix_int(14695981039346656037ull, p->n_selector);

	for (size_t i = 0; i < p->n_selector; i++)
		h = mix_string(mix_string(h, p->selector[i].key), p->selector[i].value);
	h = mix_int(mix_int(h, p->required), p->n_terms);
	for (size_t i = 0; i < p->n_terms; i++) {
		h = mix_requirements(h, p->terms[i].labels, p->terms[i].n_labels);
		h = mix_requirements(h, p->terms[i].fields, p->terms[i].n_fields);
	}
	h = mix_int(h, p->n_tolerations);
	for (size_t i = 0; i < p->n_tolerations; i++) {
		const struct toleration *t = &p->tolerations[i];

		h = mix_int(mix_string(mix_string(h, t->key), t->value), t->effect);
	}
	h = mix_int(h, p->n_requests);
	for (uint8_t i = 0; i < p->n_requests; i++)
		h = mix_int(mix_string(h, p->requests[i].name), (uint64_t)p->requests[i].amount);
	return h;
}

int tj_placement_compile(const cJSON *pod_spec, struct tj_placement **ret, char *problem,
                         size_t problem_size)
{
	const struct compile c = { problem, problem_size };
	struct tj_placement *p;
	int r;

	if (!cJSON_IsObject(pod_spec))
		return fail(&c, -EINVAL, "spec: not an object");
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->refs = 1;
	if ((r = compile_selector(&c, pod_spec, p)) < 0 ||
	    (r = compile_affinity(&c, pod_spec, p)) < 0 ||
	    (r = compile_tolerations(&c, pod_spec, p)) < 0 ||
	    (r = compile_requests(&c, pod_spec, p)) < 0)
		goto free_placement;
	p->hash = hash_placement(p);
	*ret = p;
	return 0;
free_placement:
	tj_placement_unref(p);
	return r;
}

uint64_t tj_placement_hash(const struct tj_placement *p)
{
	return p->hash;
}

static bool has_value(const struct requirement *r, const char *value)
{
	return bsearch(&value, r->values, r->n_values, sizeof(*r->values), compare_strings) != NULL;
}

/* value: the node's label r->key (NULL if it has none), or its name for a field. */
static bool requirement_matches(const struct requirement *r, const char *value)
{
	int64_t n;

	switch (r->op) {
	case OP_IN:
		return value && has_value(r, value);
	case OP_NOT_IN:
		return !value || !has_value(r, value);
	case OP_EXISTS:
		return value != NULL;
	case OP_DOES_NOT_EXIST:
		return value == NULL;
	case OP_GT:
		return value && parse_int(value, &n) && n > r->bound;
	case OP_LT:
		return value && parse_int(value, &n) && n < r->bound;
	}
	return false;
}

static bool term_matches(const struct term *t, const struct tj_node *node)
{
	for (size_t i = 0; i < t->n_labels; i++)
		if (!requirement_matches(&t->labels[i], tj_node_label(node, t->labels[i].key)))
			return false;
	for (size_t i = 0; i < t->n_fields; i++)
		if (!requirement_matches(&t->fields[i], node->name))
			return false;
	return true;
}

static bool affinity_matches(const struct tj_placement *p, const struct tj_node *node)
{
	for (size_t i = 0; i < p->n_selector; i++) {
		const char *v = tj_node_label(node, p->selector[i].key);

		if (!v || strcmp(v, p->selector[i].value) != 0)
			return false;
	}
	if (!p->required)
		return true;
	for (size_t i = 0; i < p->n_terms; i++)
		if (term_matches(&p->terms[i], node))
			return true;
	return false;
}

static bool tolerates(const struct toleration *t, const struct tj_node_taint *taint,
                      enum effect effect)
{
	if (t->effect != EFFECT_ANY && t->effect != effect)
		return false;
	if (t->key && strcmp(t->key, taint->key) != 0)
		return false;
	return !t->value || strcmp(t->value, taint->value ? taint->value : "") == 0;
}

/* A taint that says what state the node is in (placement.h): judged by node health. */
static bool is_node_state(const struct tj_node_taint *taint)
{
	return strncmp(taint->key, "node.kubernetes.io/", strlen("node.kubernetes.io/")) == 0;
}

/* The first taint of the node that keeps the pod off and that it does not tolerate. */
static const struct tj_node_taint *untolerated_taint(const struct tj_placement *p,
                                                     const struct tj_node *node)
{
	for (size_t i = 0; i < node->n_taints; i++) {
		const struct tj_node_taint *taint = &node->taints[i];
		enum effect effect;
		bool tolerated = false;

		if (is_node_state(taint))
			continue;
		if (strcmp(taint->effect, "NoSchedule") == 0)
			effect = EFFECT_NO_SCHEDULE;
		else if (strcmp(taint->effect, "NoExecute") == 0)
			effect = EFFECT_NO_EXECUTE;
		else
			continue;
		for (size_t k = 0; k < p->n_tolerations && !tolerated; k++)
			tolerated = tolerates(&p->tolerations[k], taint, effect);
		if (!tolerated)
			return taint;
	}
	return NULL;
}

__attribute__((format(printf, 3, 4))) static bool refuse(char *why, size_t why_size,
                                                         const char *fmt, ...)
{
	va_list ap;

	if (why && why_size > 0) {
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return false;
}

bool tj_placement_allows(const struct tj_placement *p, const struct tj_node *node, char *why,
                         size_t why_size)
{
	const struct tj_node_taint *taint = untolerated_taint(p, node);

	if (taint)
		return refuse(why, why_size, "node(s) had untolerated taint {%s: %s}", taint->key,
		              taint->value ? taint->value : "");
	if (!affinity_matches(p, node))
		return refuse(why, why_size, "node(s) didn't match Pod's node affinity/selector");
	for (uint8_t i = 0; i < p->n_requests; i++)
		if (tj_node_allocatable_extended(node, p->requests[i].name) < p->requests[i].amount)
			return refuse(why, why_size, "Insufficient %s", p->requests[i].name);
	if (why && why_size > 0)
		*why = '\0';
	return true;
}

static bool same_requirements(const struct requirement *a, size_t n_a, const struct requirement *b,
                              size_t n_b)
{
	if (n_a != n_b)
		return false;
	for (size_t i = 0; i < n_a; i++) {
		if (strcmp(a[i].key, b[i].key) != 0 || a[i].op != b[i].op ||
		    a[i].bound != b[i].bound || a[i].n_values != b[i].n_values)
			return false;
		for (size_t k = 0; k < a[i].n_values; k++)
			if (strcmp(a[i].values[k], b[i].values[k]) != 0)
				return false;
	}
	return true;
}

bool tj_placement_equal(const struct tj_placement *a, const struct tj_placement *b)
{
	if (a->hash != b->hash || a->n_selector != b->n_selector || a->required != b->required ||
	    a->n_terms != b->n_terms || a->n_tolerations != b->n_tolerations ||
	    a->n_requests != b->n_requests)
		return false;
	for (size_t i = 0; i < a->n_selector; i++)
		if (strcmp(a->selector[i].key, b->selector[i].key) != 0 ||
		    strcmp(a->selector[i].value, b->selector[i].value) != 0)
			return false;
	for (size_t i = 0; i < a->n_terms; i++)
		if (!same_requirements(a->terms[i].labels, a->terms[i].n_labels, b->terms[i].labels,
		                       b->terms[i].n_labels) ||
		    !same_requirements(a->terms[i].fields, a->terms[i].n_fields, b->terms[i].fields,
		                       b->terms[i].n_fields))
			return false;
	for (size_t i = 0; i < a->n_tolerations; i++)
		if (compare_tolerations(&a->tolerations[i], &b->tolerations[i]) != 0)
			return false;
	for (uint8_t i = 0; i < a->n_requests; i++)
		if (strcmp(a->requests[i].name, b->requests[i].name) != 0 ||
		    a->requests[i].amount != b->requests[i].amount)
			return false;
	return true;
}
