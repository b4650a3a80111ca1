/* Suspect nodes: a node on which ranks of several different TrainJobs failed, within a
 * window, with an ending that looks like the hardware's rather than the job's. Node health
 * (reconcilers/policy/node_health.h) trusts what others say of a node (its kubelet, a GPU health
 * checker, a cordon); a GPU or NIC that fails quietly says nothing, and only the controller,
 * which sees every job on every node, can notice that the jobs that run there keep dying.
 *
 * The rules, in order:
 * - A failure is a rank's pod that ended Failed (not one being deleted, nor one its kubelet
 *   stopped at its activeDeadlineSeconds, reason DeadlineExceeded: those ends are ours, a
 *   stalled attempt's pods are stopped so, retention.h) with an exit code of the policy's
 *   list (suspectNodes.exitCodes), unless the container was OOMKilled, which is the job's
 *   own memory (tj_suspect_failure_of_pod); or a restart
 *   the node's own condition caused during the run (NotReady, unreachable, a GPU health
 *   signal, a cordon for a fault: tj_suspect_failure_of_restart), recorded with exit code 0.
 * - It counts while it is younger than the window (suspectNodes.window).
 * - It is blamed on its node only if the same job (in any attempt) failed so on no other
 *   node within the window: an ending that follows the job from node to node is the
 *   job's, whatever its code. The attempt alone would not tell: a gang's other ranks are
 *   deleted as soon as one rank fails, most often before they can fail too.
 * - A node is suspect when the failures blamed on it belong to at least suspectNodes.jobs
 *   different TrainJobs (tj_suspect_judge).
 *
 * A suspect node gets the taint TJ_TAINT_SUSPECT (NoSchedule), so that the admission gives
 * it no new gang (tj_node_takes_new_pods: no class tolerates it), and the annotation
 * TJ_ANNOTATION_SUSPECT, which says when and for which jobs. The failures of each node are
 * kept in its annotation TJ_ANNOTATION_NODE_FAILURES, so that a restarted controller
 * rebuilds the history from the Node cache. The operator clears a suspect node by removing
 * the taint: the node's history is then forgotten (tj_suspect_decide), and the annotation
 * keeps the time of the clear, before which no failure counts (the crashed pods may stay in
 * the cluster for their logs, and a restarted controller would see them again). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "informers/node.h"
#include "informers/pod.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

/* The annotations' keys are informers/node.h's, which keeps them in the Node cache. */
#define TJ_TAINT_SUSPECT TJ_LABEL_PREFIX "suspect"
/* The failure class of a rank's crash on a suspect node (reconcilers/plan/plan.h), which the
 * infrastructure's budget pays for (reconcilers/policy/budget.h). */
#define TJ_REASON_NODE_SUSPECT "NodeSuspect"
/* The failures a node's annotation keeps (the newest), and the longest annotation read:
 * a longer one was not written by the controller and is ignored. */
#define TJ_SUSPECT_NODE_RECORDS 32
#define TJ_SUSPECT_FAILURES_MAX TJ_NODE_FAILURES_MAX
/* The jobs a verdict names. */
#define TJ_SUSPECT_MAX_JOBS 8

/* One failure on a node. */
struct tj_node_failure {
	char node[TJ_NAME_MAX];
	char job[TJ_KEY_MAX]; /* "namespace/name" */
	int attempt;
	int exit_code;
	int64_t time; /* unix seconds */
};

/* Whether a container's end looks like the hardware's: an exit code of policy's list, and
 * not OOMKilled. */
bool tj_suspect_ending(const struct tj_suspect_policy *policy, int exit_code,
                       const char *exit_reason);

/* The failure a pod stands for: a pod of a TrainJob (its label), bound to a node, with a
 * rank's attempt, Failed (not DeadlineExceeded) and not being deleted, whose ending is
 * tj_suspect_ending. Its time
 * is when the container finished (start_time + held_seconds), else now. Returns true and
 * writes *ret if the pod is such a failure. */
bool tj_suspect_failure_of_pod(const struct tj_suspect_policy *policy, const struct tj_pod *pod,
                               int64_t now, struct tj_node_failure *ret);

/* The failure a plan's restart stands for, when its class (plan.h, restart_reason) is a
 * condition of the node during the run: NodeNotReady, NodeUnreachable, GPUUnhealthy or
 * NodeCordonedForFault (a deleted node will not be back to be marked), with the node, time
 * and attempt of status (the plan's: its last_failure and the restart count after the
 * restart) for the job job_key, exit code 0. Returns true and writes *ret if it is one. */
bool tj_suspect_failure_of_restart(const char *job_key, const char *failure_class,
                                   const struct tj_trainjob_status *status,
                                   struct tj_node_failure *ret);

/* Reads the annotation TJ_ANNOTATION_NODE_FAILURES of node: entries "TIME:CODE:ATTEMPT:NS/NAME"
 * separated by ',', and "cleared:TIME", when the operator last cleared the node (the
 * failures until then are forgotten, though the crashed pods may still be there). Entries
 * that are neither are skipped; of the failures after the clear, the newest max are written
 * to out (in the order of the text; max may be 0), and the clear's time to *ret_cleared (0
 * for none; may be NULL). Returns how many failures; never fails. */
size_t tj_suspect_parse(const char *node, const char *text, struct tj_node_failure *out, size_t max,
                        int64_t *ret_cleared);

/* Writes "cleared:TIME" (unless cleared is 0) and the failures in that form into buf; 0, or
 * -ENOSPC if they do not fit (buf then holds a string all the same, possibly empty). */
int tj_suspect_format(int64_t cleared, const struct tj_node_failure *failures, size_t n, char *buf,
                      size_t size);

/* The failures of history on node that a node's annotation keeps: those within the window at
 * now, the newest TJ_SUSPECT_NODE_RECORDS, oldest first, written to out (room for
 * TJ_SUSPECT_NODE_RECORDS). Returns how many. */
size_t tj_suspect_keep(const struct tj_suspect_policy *policy,
                       const struct tj_node_failure *history, size_t n, const char *node,
                       int64_t now, struct tj_node_failure *out);

struct tj_suspect_verdict {
	bool suspect;
	size_t n_jobs; /* different jobs whose failures are blamed on the node */
	/* The first TJ_SUSPECT_MAX_JOBS of them, oldest failure first. */
	char jobs[TJ_SUSPECT_MAX_JOBS][TJ_KEY_MAX];
	int64_t first, last; /* the oldest and newest blamed failure; 0 without */
};

/* Judges node by the failures of history (on every node: the rule of the other nodes needs
 * them all) at now. Writes every field of *ret. */
void tj_suspect_judge(const struct tj_suspect_policy *policy, const struct tj_node_failure *history,
                      size_t n, const char *node, int64_t now, struct tj_suspect_verdict *ret);

/* Whether the node carries the suspect taint. */
bool tj_node_is_suspect(const struct tj_node *node);

enum tj_suspect_action {
	TJ_SUSPECT_KEEP,   /* nothing to change */
	TJ_SUSPECT_MARK,   /* taint the node and tell */
	TJ_SUSPECT_FORGET, /* the taint was removed: drop the node's history and its mark */
};

/* What to do with node (its taint and its TJ_ANNOTATION_SUSPECT, marked) given its verdict:
 * a mark whose taint is gone was cleared by the operator, and is forgotten whatever the
 * verdict; a suspect node not yet marked is marked, if the policy is on. */
enum tj_suspect_action tj_suspect_decide(const struct tj_suspect_policy *policy, bool tainted,
                                         bool marked, const struct tj_suspect_verdict *verdict);

/* "ranks of 3 TrainJobs failed on it within 3600 s (a/j1, b/j2, c/j3)". */
void tj_suspect_describe(const struct tj_suspect_policy *policy,
                         const struct tj_suspect_verdict *verdict, char *buf, size_t size);
