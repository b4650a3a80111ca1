/* The TrainJobs as squeue and sacct show them: each job's projection with who submitted it,
 * its partition, its Slurm state, the nodes of its pods and its GPU-seconds up to now. Made
 * from the lists the API server returns (pure), or fetched through the plugin frame. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "cli/plugin.h"
#include "cli/slurm_text.h"
#include "reconcilers/trainjob.h"

/* At most this many TrainJobs and pods are read: beyond it the command says so. */
#define TJ_SLURM_MAX_OBJECTS 100000

struct tj_slurm_job {
	struct tj_trainjob *job; /* owned */
	char *user;              /* owned; annotation trainjob.flame.dev/submitted-by, else the
	                            namespace */
	char *partition;         /* owned; tj_slurm_partition */
	char **nodes;            /* owned array of n_nodes owned names: the nodes of its pods that
	                            are not being deleted, one per pod */
	size_t n_nodes;
	enum tj_slurm_state state;
	/* status.gpuSeconds and wastedGpuSeconds, plus what its pods held since
	 * status.gpuSecondsCountedUntil (the controller writes the counts with its next status
	 * change; reconcilers/usage/gpu_seconds.h). */
	int64_t gpu_seconds;
	int64_t wasted_gpu_seconds;
};

struct tj_slurm_jobs {
	struct tj_slurm_job *jobs; /* owned array, ordered by creation time, then namespace and
	                              name */
	size_t n;
};

/* Builds the jobs from the items of a TrainJob list and of a pod list (the pods with the
 * label trainer.kubeflow.org/trainjob-name, matched to their job by the controller owner
 * reference's uid). Items that do not project are skipped. Returns 0 or -ENOMEM. */
int tj_slurm_jobs_from_lists(const cJSON *trainjobs, const cJSON *pods, int64_t now,
                             struct tj_slurm_jobs *ret);

/* Lists the TrainJobs and their pods in p->namespace, or in every namespace, and builds the
 * jobs. Prints one line through the plugin and returns a negative errno code on failure. */
/* tj_slurm_jobs_fetch, and with records, the deleted jobs' accounting records too
 * (reconcilers/usage/accounting.h), as jobs without pods: those deleted before they ended
 * CANCELLED. */
int tj_slurm_jobs_fetch_records(struct tj_plugin *p, bool all_namespaces, bool records, int64_t now,
                                struct tj_slurm_jobs *ret);

int tj_slurm_jobs_fetch(struct tj_plugin *p, bool all_namespaces, int64_t now,
                        struct tj_slurm_jobs *ret);

/* Lists the TrainJobs of every namespace and their pods, with the deleted jobs' accounting
 * records (those the user may not read are left out, said on stderr), and builds the jobs:
 * what fair share counts (status.gpuSeconds as recorded, and what the pods held since) and
 * the queue holds. Fails as tj_slurm_jobs_fetch does. */
int tj_slurm_jobs_fetch_cluster(struct tj_plugin *p, int64_t now, struct tj_slurm_jobs *ret);

void tj_slurm_jobs_clear(struct tj_slurm_jobs *jobs);

/* Lists every page of a collection (selector, field_selector: NULL for none) into one new
 * array *ret, the items moved from each page; more than TJ_SLURM_MAX_OBJECTS is -E2BIG.
 * Prints one line on failure. 0 or a negative errno code. */
int tj_slurm_list_all(struct tj_plugin *p, const struct tj_ref *ref, const char *selector,
                      const char *field_selector, cJSON **ret);
