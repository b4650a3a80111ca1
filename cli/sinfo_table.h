/* What kubectl sinfo prints (pure): the nodes of each GPU class as Slurm's sinfo lists the
 * nodes of its partitions, a GPU class being a partition (the first class of the config is
 * the default one, marked '*'). By default one line per partition and state,
 *   PARTITION AVAIL TIMELIMIT NODES STATE GPUS(A/I/O/T) NODELIST
 * TIMELIMIT is the class's maxWalltime (infinite without); GPUS(A/I/O/T) counts its GPUs as
 * sinfo's CPUS(A/I/O/T) counts CPUs: allocated to pods, idle on nodes that take new pods,
 * other (on nodes that do not: down, drained, draining, suspect), and total. With -N, one
 * line per node,
 *   NODELIST NODES PARTITION STATE GPUS(A/I/O/T)
 * and with -R the reasons of the nodes that take no new pods,
 *   REASON USER TIMESTAMP NODELIST
 * where USER says who gave the reason (the kubelet, the node lifecycle controller, a cordon,
 * the GPU health checker, this controller) and TIMESTAMP since when ("Unknown" when the
 * cluster does not say).
 *
 * A node's state, the first that applies:
 * - down: its Ready condition is not True (or missing);
 * - suspect: it carries the taint trainjob.flame.dev/suspect (reconcilers/policy/suspect.h);
 * - draining or drained: cordoned, flagged by a GPU health checker (a condition or a taint
 *   of failurePolicy.gpuHealth), or tainted NoSchedule or NoExecute by anything the class
 *   does not tolerate; draining while pods still hold its GPUs;
 * - allocated: pods hold all its GPUs; mixed: some; idle: none.
 * A node belongs to the class whose node labels and architecture it has; nodes of no class
 * are not listed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "informers/node.h"
#include "informers/pod.h"
#include "reconcilers/settings.h"

enum tj_sinfo_state {
	TJ_SINFO_IDLE,
	TJ_SINFO_MIXED,
	TJ_SINFO_ALLOCATED,
	TJ_SINFO_DRAINING,
	TJ_SINFO_DRAINED,
	TJ_SINFO_DOWN,
	TJ_SINFO_SUSPECT,
	TJ_SINFO_STATE_COUNT,
};

/* "idle", "mixed", "allocated", "draining", "drained", "down", "suspect". */
const char *tj_sinfo_state_name(enum tj_sinfo_state state);

/* The most reasons one node gives. */
#define TJ_SINFO_MAX_REASONS 4
#define TJ_SINFO_REASON_MAX  512

struct tj_sinfo_reason {
	char text[TJ_SINFO_REASON_MAX];
	const char *source; /* static: "kubelet", "node-lifecycle", "cordon", ... */
	int64_t time;       /* unix seconds; 0: unknown */
};

struct tj_sinfo_node {
	const struct tj_node *node; /* borrowed */
	size_t partition;           /* the index of its class */
	enum tj_sinfo_state state;
	int64_t gpus_total, gpus_allocated;
	struct tj_sinfo_reason reasons[TJ_SINFO_MAX_REASONS];
	size_t n_reasons;
};

struct tj_sinfo {
	const struct tj_config *config; /* borrowed */
	struct tj_sinfo_node *nodes;    /* owned array, by partition then name */
	size_t n;
};

/* Judges the nodes of config's classes (pods: every pod of the cluster; those that have
 * ended hold nothing) at now. 0 or -ENOMEM. */
int tj_sinfo_build(const struct tj_config *config, const struct tj_node *const *nodes,
                   size_t n_nodes, const struct tj_pod *const *pods, size_t n_pods, int64_t now,
                   struct tj_sinfo *ret);

void tj_sinfo_clear(struct tj_sinfo *s);

enum tj_sinfo_view {
	TJ_SINFO_SUMMARY, /* a line per partition and state */
	TJ_SINFO_NODES,   /* -N */
	TJ_SINFO_REASONS, /* -R */
};

/* Prints the view of the partition named partition (NULL: every one). 0 or -ENOMEM. */
int tj_sinfo_print(FILE *out, const struct tj_sinfo *s, enum tj_sinfo_view view,
                   const char *partition);
