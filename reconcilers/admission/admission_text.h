/* The words of the queue's messages (reconcilers/admission/admission.h), pure functions of the
 * numbers they tell, for the decisions and for whatever else shows the queue. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "reconcilers/admission/admission.h"

/* "" for one, "s" for any other count. */
const char *tj_admission_plural(int64_t n);

/* "10:40Z" on the day of now, "2026-12-02T10:40Z" on another, "unknown" for 0 (UTC). */
void tj_admission_describe_time(char *buf, size_t size, int64_t t, int64_t now);

/* A waiting job's message from its decision's numbers: "position 3 of 7 in gh200: needs 5
 * nodes x 4 GPUs, 3 such nodes free; expected start 10:40Z". */
void tj_admission_say_waiting(struct tj_admission_decision *d, const char *class_name,
                              const struct tj_admission_job *job, int64_t now);

/* A node's size in the resource that describes the request ("4 GPUs" for a GPU job, "72
 * CPUs" for a CPU one). */
void tj_admission_describe_node(char *buf, size_t size, const struct tj_admission_resources *alloc,
                                const struct tj_admission_resources *req);

/* "gh200 has 8 nodes of 4 GPUs: a job of 9 nodes x 4 GPUs never fits; at most 8": n_nodes
 * nodes of the class hold one of its pods, all of node_size ("" when they differ). When the
 * job may use only some nodes of the class, job->ineligible_why says why not the others:
 * "gh200 has 2 nodes of 4 GPUs that its pods may use (not the others: node(s) didn't match
 * Pod's node affinity/selector): ...". */
void tj_admission_say_never_fits(struct tj_admission_decision *d, const char *class_name,
                                 const struct tj_admission_job *job, int64_t most, int n_nodes,
                                 const char *node_size);

/* Adds to a waiting job's message the gangs it preempts now (d->victims, into running):
 * "; preempting 2 jobs of lower tiers: team-b/scav-1, team-b/scav-2"; with running NULL,
 * that those it preempted before are still stopping. */
void tj_admission_say_preempting(struct tj_admission_decision *d,
                                 const struct tj_admission_running *running);
