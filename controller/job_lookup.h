/* The TrainJobs of a namespace as a dependency reads them (reconcilers/plan/dependency.h), from
 * the TrainJob cache, and the jobs of a namespace that wait for one. */
#pragma once

#include "informers/store.h"
#include "reconcilers/plan/dependency.h"
#include "reconcilers/trainjob.h"

/* The lookup of the jobs of job's namespace, for job's dependency. Borrows store and job
 * until tj_job_lookup_clear. */
struct tj_job_lookup {
	struct tj_dependency_lookup lookup;
	const struct tj_store *store;
	const struct tj_trainjob *job;
	const char *group;                  /* job's singleton group */
	const struct tj_trainjob **members; /* owned; the group's jobs once asked for */
	size_t n_members;
	bool collected;
};

void tj_job_lookup_init(struct tj_job_lookup *l, const struct tj_store *store,
                        const struct tj_trainjob *job);
void tj_job_lookup_clear(struct tj_job_lookup *l);

/* Calls fn with the key of each job of namespace that names a dependency and has not
 * started: a job of the namespace changed, which may meet or break their dependencies. */
void tj_job_lookup_dependents(const struct tj_store *store, const char *namespace,
                              void (*fn)(const char *key, void *userdata), void *userdata);
