/* A random cluster and queue for the admission's property tests, the same for the same seed:
 * one or two GPU classes and the nodes without one, in topology domains, some taking no new
 * pods, partly used, with releases at random times; running gangs that high tiers may
 * preempt; jobs of few shapes (so that shapes repeat, as in a real queue) with launchers,
 * restarts, walltimes or none, nodes to avoid, eligibility, quotas, ResourceQuotas and QOS
 * limits, and jobs whose victims are on their way out on the nodes they claimed. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "reconcilers/admission/admission.h"

#define TJ_RANDOM_NODES    40
#define TJ_RANDOM_JOBS     80
#define TJ_RANDOM_RUNNING  6
#define TJ_RANDOM_ELIGIBLE 3
#define TJ_RANDOM_LABEL    48
#define TJ_RANDOM_NOW      1795946400

struct tj_random_queue {
	uint64_t state;
	bool uniform; /* every job of a class asks 1 or 2 nodes of 4 GPUs: shapes repeat most */
	struct tj_admission_config config;
	struct tj_admission_quota quotas[2];
	struct tj_admission_node nodes[TJ_RANDOM_NODES];
	struct tj_admission_release releases[TJ_RANDOM_NODES];
	struct tj_admission_usage usage[2];
	struct tj_admission_quota_limit quota_limits[2];
	struct tj_admission_tier_limit tier_limits[2];
	struct tj_admission_running running[TJ_RANDOM_RUNNING];
	struct tj_admission_hold holds[TJ_RANDOM_RUNNING][3];
	struct tj_admission_job jobs[TJ_RANDOM_JOBS];
	struct tj_admission_quota_charge charges[TJ_RANDOM_JOBS];
	size_t excluded[TJ_RANDOM_JOBS][2];
	size_t claimed[TJ_RANDOM_JOBS][4];
	bool eligible[TJ_RANDOM_ELIGIBLE][TJ_RANDOM_NODES];
	char node_names[TJ_RANDOM_NODES][TJ_RANDOM_LABEL];
	char job_keys[TJ_RANDOM_JOBS][TJ_RANDOM_LABEL];
	char running_keys[TJ_RANDOM_RUNNING][TJ_RANDOM_LABEL];
	struct tj_admission_input in;
};

/* Fills q from seed (not 0). */
void tj_random_queue_build(struct tj_random_queue *q, uint64_t seed);

/* A number of [lo, hi] from q's sequence. */
int64_t tj_random_pick(struct tj_random_queue *q, int64_t lo, int64_t hi);

/* Every field of two decisions of a job of n_pods is the same (cmocka assertions). */
void tj_test_assert_same_decision(const struct tj_admission_decision *x,
                                  const struct tj_admission_decision *y, size_t n_pods);

/* Every field of two results of the same input is the same (cmocka assertions). */
void tj_test_assert_same_result(const struct tj_admission_input *in,
                                const struct tj_admission_result *x,
                                const struct tj_admission_result *y);
