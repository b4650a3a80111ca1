#include "controller/job_lookup.h"

#include <stdlib.h>
#include <string.h>

#include "controller/stores.h"

static void fill(const struct tj_trainjob *t, struct tj_dependency_job *ret)
{
	*ret = (struct tj_dependency_job){
		.state = t->status.state,
		.creation_time = t->creation_time,
		.start_time = t->status.start_time,
		.completion_time = t->status.completion_time,
	};
}

static bool find(void *userdata, const char *name, struct tj_dependency_job *ret)
{
	const struct tj_job_lookup *l = userdata;
	const struct tj_trainjob *t;
	char key[TJ_STORE_KEY_MAX];

	if (tj_store_key_of(key, sizeof(key), l->job->namespace, name) < 0 ||
	    !(t = tj_store_get(l->store, key)))
		return false;
	fill(t, ret);
	return true;
}

/* The jobs of the namespace in job's singleton group, collected once. */
static void collect(struct tj_job_lookup *l)
{
	struct tj_store_iter it;
	const struct tj_trainjob *t;
	size_t n = tj_store_index_count(l->store, TJ_TRAINJOB_INDEX_NAMESPACE, l->job->namespace);

	l->collected = true;
	l->members = calloc(n + 1, sizeof(*l->members));
	if (!l->members)
		return;
	tj_store_iter_index(l->store, TJ_TRAINJOB_INDEX_NAMESPACE, l->job->namespace, &it);
	while ((t = tj_store_iter_next(&it)) && l->n_members < n)
		if (strcmp(tj_dependency_singleton_group(t->job_name, t->name), l->group) == 0)
			l->members[l->n_members++] = t;
}

static const char *group_member(void *userdata, size_t i, struct tj_dependency_job *ret)
{
	struct tj_job_lookup *l = userdata;

	if (!l->collected)
		collect(l);
	if (i >= l->n_members)
		return NULL;
	fill(l->members[i], ret);
	return l->members[i]->name;
}

void tj_job_lookup_init(struct tj_job_lookup *l, const struct tj_store *store,
                        const struct tj_trainjob *job)
{
	*l = (struct tj_job_lookup){
		.lookup = { find, group_member, l },
		.store = store,
		.job = job,
		.group = tj_dependency_singleton_group(job->job_name, job->name),
	};
}

void tj_job_lookup_clear(struct tj_job_lookup *l)
{
	free(l->members);
	l->members = NULL;
	l->n_members = 0;
}

void tj_job_lookup_dependents(const struct tj_store *store, const char *namespace,
                              void (*fn)(const char *key, void *userdata), void *userdata)
{
	struct tj_store_iter it;
	const struct tj_trainjob *t;
	char key[TJ_STORE_KEY_MAX];

	tj_store_iter_index(store, TJ_TRAINJOB_INDEX_DEPENDENT, namespace, &it);
	while ((t = tj_store_iter_next(&it)))
		if (!t->status.start_time &&
		    tj_store_key_of(key, sizeof(key), t->namespace, t->name) == 0)
			fn(key, userdata);
}
