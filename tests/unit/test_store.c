/* The store: keyed objects, secondary indexes, the swap that puts a relist in; and the pod
 * store's ops on real projected pods. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "informers/pod.h"
#include "informers/store.h"

/* A test object: key "ns/name", indexed by group and by node. */
struct obj {
	char ns[16];
	char name[400];
	char group[16]; /* "" = not in the group index */
	char node[16];  /* "" = not in the node index */
	int version;
	int fail_index; /* make the node index function fail with this code */
};

static int freed;

static struct obj *obj_new(const char *ns, const char *name, const char *group, const char *node,
                           int version)
{
	struct obj *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	snprintf(o->ns, sizeof(o->ns), "%s", ns);
	snprintf(o->name, sizeof(o->name), "%s", name);
	snprintf(o->group, sizeof(o->group), "%s", group);
	snprintf(o->node, sizeof(o->node), "%s", node);
	o->version = version;
	return o;
}

static void obj_free(void *p)
{
	if (p)
		freed++;
	free(p);
}

static int obj_key(const void *p, char *buf, size_t size)
{
	const struct obj *o = p;
	int n = snprintf(buf, size, "%s/%s", o->ns, o->name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int by_group(const void *p, char *buf, size_t size)
{
	const struct obj *o = p;

	if (!o->group[0])
		return 0;
	snprintf(buf, size, "%s/%s", o->ns, o->group);
	return 1;
}

static int by_node(const void *p, char *buf, size_t size)
{
	const struct obj *o = p;

	if (o->fail_index)
		return o->fail_index;
	if (!o->node[0])
		return 0;
	snprintf(buf, size, "%s", o->node);
	return 1;
}

enum {
	BY_GROUP,
	BY_NODE
};

static const struct tj_store_ops ops = {
	.free = obj_free,
	.key = obj_key,
	.index = { by_group, by_node },
	.n_indexes = 2,
};

static int setup(void **state)
{
	struct tj_store *s;

	freed = 0;
	assert_int_equal(tj_store_new(&ops, &s), 0);
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	tj_store_free(*state);
	return 0;
}

/* The names of the objects an iteration yields, sorted, joined by ",". */
static void collect(struct tj_store_iter *it, char *out, size_t size)
{
	const char *names[64];
	const struct obj *o;
	size_t n = 0;

	while ((o = tj_store_iter_next(it))) {
		assert_true(n < 64);
		names[n++] = o->name;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			const char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		strncat(out, names[i], size - strlen(out) - 1);
		if (i + 1 < n)
			strncat(out, ",", size - strlen(out) - 1);
	}
}

static void index_names(struct tj_store *s, size_t index, const char *value, char *out, size_t size)
{
	struct tj_store_iter it;

	tj_store_iter_index(s, index, value, &it);
	collect(&it, out, size);
}

static void test_upsert_get_delete(void **state)
{
	struct tj_store *s = *state;
	struct obj *a = obj_new("ns", "a", "", "", 1);
	void *old = (void *)0x1;
	const struct obj *got;

	assert_int_equal(tj_store_len(s), 0);
	assert_null(tj_store_get(s, "ns/a"));
	assert_int_equal(tj_store_upsert(s, a, &old), 0);
	assert_null(old);
	assert_ptr_equal(tj_store_get(s, "ns/a"), a);
	assert_int_equal(tj_store_len(s), 1);

	/* Replacing hands the old object back. */
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "a", "", "", 2), &old), 0);
	assert_ptr_equal(old, a);
	obj_free(old);
	got = tj_store_get(s, "ns/a");
	assert_int_equal(got->version, 2);
	assert_int_equal(tj_store_len(s), 1);

	/* Without ret_old the store frees it. */
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "a", "", "", 3), NULL), 0);
	assert_int_equal(freed, 2);

	old = NULL;
	assert_int_equal(tj_store_delete(s, "ns/a", &old), 0);
	assert_int_equal(((struct obj *)old)->version, 3);
	obj_free(old);
	assert_int_equal(tj_store_delete(s, "ns/a", NULL), -ENOENT);
	assert_int_equal(tj_store_len(s), 0);
	assert_null(tj_store_get(s, "ns/a"));
}

static void test_errors_leave_store_unchanged(void **state)
{
	struct tj_store *s = *state;
	struct obj *big = obj_new("ns", "", "", "", 1);
	struct obj *bad = obj_new("ns", "b", "g", "n", 1);

	memset(big->name, 'x', sizeof(big->name) - 1);
	assert_int_equal(tj_store_upsert(s, big, NULL), -ENAMETOOLONG);
	obj_free(big);

	assert_int_equal(tj_store_upsert(s, obj_new("ns", "b", "g", "n1", 1), NULL), 0);
	bad->fail_index = -ENOMEM;
	assert_int_equal(tj_store_upsert(s, bad, NULL), -ENOMEM);
	obj_free(bad);
	assert_int_equal(((const struct obj *)tj_store_get(s, "ns/b"))->version, 1);
	assert_int_equal(tj_store_index_count(s, BY_GROUP, "ns/g"), 1);
	assert_int_equal(tj_store_index_count(s, BY_NODE, "n1"), 1);
	assert_int_equal(tj_store_len(s), 1);
}

static void test_indexes_follow_updates(void **state)
{
	struct tj_store *s = *state;
	char names[256];

	assert_int_equal(tj_store_upsert(s, obj_new("ns", "p0", "job", "n1", 1), NULL), 0);
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "p1", "job", "n1", 1), NULL), 0);
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "p2", "job", "", 1), NULL), 0);
	assert_int_equal(tj_store_upsert(s, obj_new("other", "p0", "job", "n2", 1), NULL), 0);
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "q0", "", "n2", 1), NULL), 0);

	index_names(s, BY_GROUP, "ns/job", names, sizeof(names));
	assert_string_equal(names, "p0,p1,p2");
	index_names(s, BY_GROUP, "other/job", names, sizeof(names));
	assert_string_equal(names, "p0");
	index_names(s, BY_NODE, "n1", names, sizeof(names));
	assert_string_equal(names, "p0,p1");
	index_names(s, BY_NODE, "n2", names, sizeof(names));
	assert_string_equal(names, "p0,q0");
	index_names(s, BY_NODE, "n3", names, sizeof(names));
	assert_string_equal(names, "");
	index_names(s, 7, "n1", names, sizeof(names)); /* no such index */
	assert_string_equal(names, "");
	assert_int_equal(tj_store_index_count(s, 7, "n1"), 0);

	/* p2 gets scheduled, p1 moves, p0 leaves the job: each index follows. */
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "p2", "job", "n2", 2), NULL), 0);
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "p1", "job", "n2", 2), NULL), 0);
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "p0", "", "n1", 2), NULL), 0);
	index_names(s, BY_NODE, "n1", names, sizeof(names));
	assert_string_equal(names, "p0");
	index_names(s, BY_NODE, "n2", names, sizeof(names));
	assert_string_equal(names, "p0,p1,p2,q0");
	index_names(s, BY_GROUP, "ns/job", names, sizeof(names));
	assert_string_equal(names, "p1,p2");
	assert_int_equal(tj_store_index_count(s, BY_NODE, "n2"), 4);

	/* Deletes leave the indexes, and an emptied value disappears. */
	assert_int_equal(tj_store_delete(s, "ns/p0", NULL), 0);
	assert_int_equal(tj_store_index_count(s, BY_NODE, "n1"), 0);
	index_names(s, BY_NODE, "n1", names, sizeof(names));
	assert_string_equal(names, "");
	assert_int_equal(tj_store_delete(s, "ns/p1", NULL), 0);
	assert_int_equal(tj_store_delete(s, "ns/p2", NULL), 0);
	assert_int_equal(tj_store_index_count(s, BY_GROUP, "ns/job"), 0);
	assert_int_equal(tj_store_index_count(s, BY_GROUP, "other/job"), 1);
}

/* case: a swap exchanges every object and every index of two stores of the same ops, both
 * stay usable afterwards, and stores of other ops are refused unchanged. */
static void test_swap_exchanges_contents(void **state)
{
	static const struct tj_store_ops other_ops = { .free = obj_free, .key = obj_key };
	struct tj_store *s = *state, *next, *other;
	char names[256];

	for (int i = 0; i < 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", i);
		assert_int_equal(tj_store_upsert(s, obj_new("ns", name, "job", "n1", 1), NULL), 0);
	}
	/* A relist built aside sees p1 and p3 again, on another node, and a new p9. */
	assert_int_equal(tj_store_new(&ops, &next), 0);
	assert_int_equal(tj_store_upsert(next, obj_new("ns", "p1", "job", "n2", 2), NULL), 0);
	assert_int_equal(tj_store_upsert(next, obj_new("ns", "p3", "job", "n2", 2), NULL), 0);
	assert_int_equal(tj_store_upsert(next, obj_new("ns", "p9", "", "n2", 2), NULL), 0);
	assert_int_equal(tj_store_swap(s, next), 0);

	assert_int_equal(tj_store_len(s), 3);
	assert_int_equal(((const struct obj *)tj_store_get(s, "ns/p1"))->version, 2);
	assert_null(tj_store_get(s, "ns/p0"));
	index_names(s, BY_NODE, "n2", names, sizeof(names));
	assert_string_equal(names, "p1,p3,p9");
	index_names(s, BY_GROUP, "ns/job", names, sizeof(names));
	assert_string_equal(names, "p1,p3");
	assert_int_equal(tj_store_index_count(s, BY_NODE, "n1"), 0);

	assert_int_equal(tj_store_len(next), 5);
	assert_int_equal(((const struct obj *)tj_store_get(next, "ns/p1"))->version, 1);
	index_names(next, BY_NODE, "n1", names, sizeof(names));
	assert_string_equal(names, "p0,p1,p2,p3,p4");
	assert_int_equal(tj_store_index_count(next, BY_NODE, "n2"), 0);

	/* Both go on working: upserts, deletes and index moves. */
	assert_int_equal(tj_store_upsert(s, obj_new("ns", "p3", "job", "n1", 3), NULL), 0);
	assert_int_equal(tj_store_delete(s, "ns/p9", NULL), 0);
	index_names(s, BY_NODE, "n1", names, sizeof(names));
	assert_string_equal(names, "p3");
	assert_int_equal(tj_store_delete(next, "ns/p0", NULL), 0);
	assert_int_equal(tj_store_len(next), 4);
	assert_int_equal(tj_store_index_count(next, BY_GROUP, "ns/job"), 4);

	assert_int_equal(tj_store_new(&other_ops, &other), 0);
	assert_int_equal(tj_store_swap(s, other), -EINVAL);
	assert_int_equal(tj_store_len(s), 2);
	assert_int_equal(tj_store_len(other), 0);
	tj_store_free(other);
	freed = 0;
	assert_null(tj_store_free(next));
	assert_int_equal(freed, 4);
}

static void test_many_objects(void **state)
{
	enum {
		N = 5000
	};
	struct tj_store *s = *state, *next;
	struct tj_store_iter it;
	char name[32], node[16], key[64];
	size_t seen = 0;

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "pod-%d", i);
		snprintf(node, sizeof(node), "n%d", i % 50);
		assert_int_equal(tj_store_upsert(s, obj_new("ns", name, "", node, i), NULL), 0);
	}
	assert_int_equal(tj_store_len(s), N);
	/* Delete every third object, visiting them in a scattered order (7919 is prime to N,
	 * so k -> 7919k mod N is a permutation), then check every lookup. */
	for (int k = 0; k < N; k++) {
		int j = (int)((7919L * k) % N);

		if (j % 3 != 0)
			continue;
		snprintf(key, sizeof(key), "ns/pod-%d", j);
		assert_int_equal(tj_store_delete(s, key, NULL), 0);
	}
	for (int i = 0; i < N; i++) {
		const struct obj *o;

		snprintf(key, sizeof(key), "ns/pod-%d", i);
		o = tj_store_get(s, key);
		if (i % 3 == 0) {
			assert_null(o);
		} else {
			assert_non_null(o);
			assert_int_equal(o->version, i);
		}
	}
	tj_store_iter_init(s, &it);
	while (tj_store_iter_next(&it))
		seen++;
	assert_int_equal(seen, tj_store_len(s));
	{
		size_t total = 0;

		for (int n = 0; n < 50; n++) {
			snprintf(node, sizeof(node), "n%d", n);
			total += tj_store_index_count(s, BY_NODE, node);
		}
		assert_int_equal(total, tj_store_len(s));
	}
	/* A relist that keeps only the even pods, all on n0, swapped in. */
	assert_int_equal(tj_store_new(&ops, &next), 0);
	for (int i = 0; i < N; i += 2) {
		snprintf(name, sizeof(name), "pod-%d", i);
		assert_int_equal(tj_store_upsert(next, obj_new("ns", name, "", "n0", i), NULL), 0);
	}
	assert_int_equal(tj_store_swap(s, next), 0);
	tj_store_free(next);
	assert_int_equal(tj_store_len(s), N / 2);
	assert_int_equal(tj_store_index_count(s, BY_NODE, "n0"), N / 2);
	assert_int_equal(tj_store_index_count(s, BY_NODE, "n1"), 0);
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof(key), "ns/pod-%d", i);
		if (i % 2 == 0)
			assert_non_null(tj_store_get(s, key));
		else
			assert_null(tj_store_get(s, key));
	}
}

static void test_pod_store_ops(void **state)
{
	static const char *const pods[] = {
		"{\"metadata\":{\"namespace\":\"a\",\"name\":\"j-0\",\"labels\":{"
		"\"trainer.kubeflow.org/trainjob-name\":\"j\"}},\"spec\":{\"nodeName\":\"n1\"}}",
		"{\"metadata\":{\"namespace\":\"a\",\"name\":\"j-1\",\"labels\":{"
		"\"trainer.kubeflow.org/trainjob-name\":\"j\"}}}",
		"{\"metadata\":{\"namespace\":\"b\",\"name\":\"j-0\",\"labels\":{"
		"\"trainer.kubeflow.org/trainjob-name\":\"j\"}},\"spec\":{\"nodeName\":\"n1\"}}",
		"{\"metadata\":{\"namespace\":\"a\",\"name\":\"other\"},\"spec\":{\"nodeName\":"
		"\"n2\"}}",
	};
	struct tj_store *s;
	struct tj_store_iter it;
	const struct tj_pod *p;

	assert_int_equal(tj_store_new(&tj_pod_store_ops, &s), 0);
	for (size_t i = 0; i < 4; i++) {
		cJSON *obj = cJSON_Parse(pods[i]);
		void *pod;

		assert_int_equal(tj_pod_project(obj, &pod), 0);
		cJSON_Delete(obj);
		assert_int_equal(tj_store_upsert(s, pod, NULL), 0);
	}
	p = tj_store_get(s, "b/j-0");
	assert_non_null(p);
	assert_string_equal(p->namespace, "b");
	assert_int_equal(tj_store_index_count(s, TJ_POD_INDEX_TRAINJOB, "a/j"), 2);
	assert_int_equal(tj_store_index_count(s, TJ_POD_INDEX_TRAINJOB, "b/j"), 1);
	assert_int_equal(tj_store_index_count(s, TJ_POD_INDEX_NODE, "n1"), 2);
	assert_int_equal(tj_store_index_count(s, TJ_POD_INDEX_NODE, "n2"), 1);
	tj_store_iter_index(s, TJ_POD_INDEX_TRAINJOB, "b/j", &it);
	p = tj_store_iter_next(&it);
	assert_string_equal(p->name, "j-0");
	assert_null(tj_store_iter_next(&it));

	/* The TrainJob key of a pod is its index value. */
	{
		char key[64];
		const void **objs = (const void **)0x1;
		size_t n = 7;

		assert_int_equal(tj_pod_trainjob_key(p, key, sizeof(key)), 1);
		assert_string_equal(key, "b/j");
		assert_int_equal(tj_pod_trainjob_key(p, key, 3), -ENAMETOOLONG);
		assert_int_equal(tj_pod_trainjob_key(tj_store_get(s, "a/other"), key, sizeof(key)),
		                 0);
		assert_int_equal(tj_store_collect_index(s, TJ_POD_INDEX_TRAINJOB, "a/j", &objs, &n),
		                 0);
		assert_int_equal(n, 2);
		assert_string_not_equal(((const struct tj_pod *)objs[0])->name,
		                        ((const struct tj_pod *)objs[1])->name);
		assert_string_equal(((const struct tj_pod *)objs[0])->trainjob, "j");
		assert_string_equal(((const struct tj_pod *)objs[1])->trainjob, "j");
		free(objs);
		assert_int_equal(tj_store_collect_index(s, TJ_POD_INDEX_NODE, "n9", &objs, &n), 0);
		assert_null(objs);
		assert_int_equal(n, 0);
	}
	tj_store_free(s);
}

/* A pod built by hand: namespace "a", the TrainJob label job, controller owner uid owner
 * (NULL: none). */
static struct tj_pod *pod_new(const char *name, const char *job, const char *owner)
{
	struct tj_pod *p = calloc(1, sizeof(*p));

	assert_non_null(p);
	p->namespace = strdup("a");
	p->name = strdup(name);
	p->trainjob = job ? strdup(job) : NULL;
	p->owner_uid = owner ? strdup(owner) : NULL;
	p->rank = p->attempt = -1;
	assert_true(p->namespace && p->name && (!job || p->trainjob) && (!owner || p->owner_uid));
	return p;
}

struct owned_case {
	const char *name;
	const char *job_key;
	const char *owner_uid;
	size_t max;
	int want_rc;
	const char *want; /* the names returned, sorted */
};

static const struct owned_case owned_cases[] = {
	{ "own pods among many foreign ones", "a/j", "uid-j", 4, 0, "j-0,j-1,j-2" },
	{ "the bound counts own pods only", "a/j", "uid-j", 3, 0, "j-0,j-1,j-2" },
	{ "more own pods than the bound", "a/j", "uid-j", 2, -E2BIG, NULL },
	{ "the namesake's own", "a/j", "uid-old", 10, 0, "old-0" },
	{ "an owner with no pods", "a/j", "uid-none", 10, 0, "" },
	{ "no uid owns nothing", "a/j", "", 10, 0, "" },
	{ "NULL uid owns nothing", "a/j", NULL, 10, 0, "" },
	{ "a job with no pods", "a/none", "uid-j", 10, 0, "" },
	{ "another job's owner", "a/k", "uid-j", 10, 0, "" },
};

/* case: the pods of a job are those its label names and its uid controls; pods labelled
 * with its name for another owner, more of them than the 8,256 the controller once cut the
 * list at, neither appear nor count against the bound. */
static void test_pod_collect_owned(void **state)
{
	enum {
		FOREIGN = 8300
	};
	struct tj_store *s;

	assert_int_equal(tj_store_new(&tj_pod_store_ops, &s), 0);
	for (int i = 0; i < FOREIGN; i++) {
		char name[32];

		snprintf(name, sizeof(name), "foreign-%d", i);
		/* Every other one without any owner at all. */
		assert_int_equal(
		        tj_store_upsert(s, pod_new(name, "j", i % 2 ? "uid-other" : NULL), NULL),
		        0);
	}
	assert_int_equal(tj_store_upsert(s, pod_new("j-0", "j", "uid-j"), NULL), 0);
	assert_int_equal(tj_store_upsert(s, pod_new("j-1", "j", "uid-j"), NULL), 0);
	assert_int_equal(tj_store_upsert(s, pod_new("j-2", "j", "uid-j"), NULL), 0);
	assert_int_equal(tj_store_upsert(s, pod_new("old-0", "j", "uid-old"), NULL), 0);
	/* The same owner, but not labelled for the job: another job's pod. */
	assert_int_equal(tj_store_upsert(s, pod_new("k-0", "k", "uid-k"), NULL), 0);
	assert_int_equal(tj_store_upsert(s, pod_new("unlabelled", NULL, "uid-j"), NULL), 0);
	assert_int_equal(tj_store_index_count(s, TJ_POD_INDEX_TRAINJOB, "a/j"), FOREIGN + 4);

	for (size_t i = 0; i < sizeof(owned_cases) / sizeof(owned_cases[0]); i++) {
		const struct owned_case *c = &owned_cases[i];
		const struct tj_pod **pods = (const struct tj_pod **)0x1;
		size_t n = 99;
		char names[256] = "";

		print_message("# case: %s\n", c->name);
		assert_int_equal(
		        tj_pod_collect_owned(s, c->job_key, c->owner_uid, c->max, &pods, &n),
		        c->want_rc);
		if (c->want_rc < 0) {
			/* Nothing is returned. */
			assert_ptr_equal(pods, (const struct tj_pod **)0x1);
			assert_int_equal(n, 99);
			continue;
		}
		for (size_t j = 0; j < n; j++) {
			assert_string_equal(pods[j]->owner_uid, c->owner_uid);
			assert_string_equal(pods[j]->trainjob, "j");
		}
		/* Sorted as the store's iteration gives no order. */
		for (size_t j = 1; j < n; j++)
			for (size_t k = j; k > 0 && strcmp(pods[k - 1]->name, pods[k]->name) > 0;
			     k--) {
				const struct tj_pod *t = pods[k];

				pods[k] = pods[k - 1];
				pods[k - 1] = t;
			}
		for (size_t j = 0; j < n; j++) {
			if (j)
				strncat(names, ",", sizeof(names) - strlen(names) - 1);
			strncat(names, pods[j]->name, sizeof(names) - strlen(names) - 1);
		}
		assert_string_equal(names, c->want);
		if (n == 0)
			assert_null(pods);
		free(pods);
	}
	tj_store_free(s);
}

/* A pod counts against the node it is pinned to until it is bound, then against the node it
 * is bound to; the index follows each update, and a pod that is neither is in no node's. */
static void test_pod_node_index_follows_pinning_and_binding(void **state)
{
	static const struct {
		const char *what;
		const char *json;
		const char *in, *not_in;
	} steps[] = {
		{ "created, not pinned", "{'metadata':{'namespace':'a','name':'p'}}", NULL, "n1" },
		{ "pinned to n1",
		  "{'metadata':{'namespace':'a','name':'p',"
		  "'annotations':{'trainjob.flame.dev/node':'n1'}}}",
		  "n1", "n2" },
		{ "bound to n1",
		  "{'metadata':{'namespace':'a','name':'p',"
		  "'annotations':{'trainjob.flame.dev/node':'n1'}},'spec':{'nodeName':'n1'}}",
		  "n1", "n2" },
		/* The scheduler has the last word: where it binds is where the pod is. */
		{ "bound elsewhere than pinned",
		  "{'metadata':{'namespace':'a','name':'p',"
		  "'annotations':{'trainjob.flame.dev/node':'n1'}},'spec':{'nodeName':'n2'}}",
		  "n2", "n1" },
		{ "bound, not pinned",
		  "{'metadata':{'namespace':'a','name':'p'},'spec':{'nodeName':'n3'}}", "n3",
		  "n2" },
	};
	struct tj_store *s;

	assert_int_equal(tj_store_new(&tj_pod_store_ops, &s), 0);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char *text = strdup(steps[i].json);
		cJSON *obj;
		void *pod;

		print_message("# step: %s\n", steps[i].what);
		assert_non_null(text);
		for (char *c = text; *c; c++)
			if (*c == '\'')
				*c = '"';
		obj = cJSON_Parse(text);
		free(text);
		assert_int_equal(tj_pod_project(obj, &pod), 0);
		cJSON_Delete(obj);
		assert_int_equal(tj_store_upsert(s, pod, NULL), 0);
		if (steps[i].in) {
			struct tj_store_iter it;

			assert_int_equal(tj_store_index_count(s, TJ_POD_INDEX_NODE, steps[i].in),
			                 1);
			tj_store_iter_index(s, TJ_POD_INDEX_NODE, steps[i].in, &it);
			assert_ptr_equal(tj_store_iter_next(&it), pod);
			assert_null(tj_store_iter_next(&it));
		}
		assert_int_equal(tj_store_index_count(s, TJ_POD_INDEX_NODE, steps[i].not_in), 0);
	}
	tj_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_upsert_get_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors_leave_store_unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_indexes_follow_updates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_swap_exchanges_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_objects, setup, teardown),
		cmocka_unit_test(test_pod_store_ops),
		cmocka_unit_test(test_pod_node_index_follows_pinning_and_binding),
		cmocka_unit_test(test_pod_collect_owned),
	};
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
