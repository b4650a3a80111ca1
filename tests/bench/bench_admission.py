#!/usr/bin/env python3
"""Gang admission benchmark: a trace of TrainJobs on 32 GH200 nodes run three ways, and the
queue at scale (5,000 jobs on 2,000 nodes). Each part uses its own local cluster of KWOK
nodes, started if none runs and stopped at the end if it was started here.

  tests/bench/bench_admission.py trace [--jobs 150] [--seed 1] [--ways scheduler,fifo,backfill]
  tests/bench/bench_admission.py trace --jobs 40 --ways backfill,shares,scavenger [--grace 10] [--backlog]
  tests/bench/bench_admission.py scale [--jobs 5000] [--nodes 2000]
  tests/bench/bench_admission.py all          # both, one after the other (the default)
  tests/bench/bench_admission.py --self-test  # the metrics on synthetic timelines; no cluster

The trace (cluster TJC_CLUSTER=bench-admission, 32 GH200 nodes of 4 GPUs, no H100 node):
--jobs TrainJobs of runtime torch-gh200, each of 1 to 8 nodes x 4 GPUs with a walltime
(activeDeadlineSeconds) of 20 to 120 s; its pods run (annotation
sim.trainjob.flame.dev/run-time) for 30 to 90 % of the walltime, and at least 5 s less than
it, so that a job that starts whole always ends before its deadline. Sizes, walltimes and run
times are drawn from a seeded RNG (--seed). The same trace runs up to five ways (--ways), each
with a fresh controller process and its own --config:

  scheduler  admission.enabled: false: pods are created at once, kube-scheduler alone decides;
  fifo       admission, backfill: false (nothing starts behind a blocked head);
  backfill   admission, backfill: true (EASY backfill);
  shares     backfill, the jobs dealt in turn to three namespaces whose admission.namespaces
             entries give them the fair shares 2, 1 and 1 (bench-share-a, -b, -c): each
             submits a third of the jobs, far more than its share, all at once;
  scavenger  backfill, the trace in its namespace at the QOS tier normal, plus a backlog of
             --scavengers jobs of the tier low (annotation trainjob.flame.dev/qos: low) in a
             namespace of their own (bench-scavenger), each of 1 node x 4 GPUs with a
             walltime of 20 to 60 s and a run of 5 s less: they take the GPUs no normal job
             can use, and a blocked normal job preempts them (the shipped tiers: normal
             preempts low). Their runtime is the namespace's own copy of torch-gh200 whose
             pods have terminationGracePeriodSeconds --grace: the time a preempting job waits
             for its victims to stop. With --checkpoint S their pods instead save their state
             and exit (143) S seconds after the notice (deploy/local/stages.yaml,
             checkpoint-time), which stops them then, and the tier low gets
             backfillReservedNodes: they may run on nodes reserved for normal jobs. The way
             ends when every normal job has ended.

Each way creates every TrainJob at once (the plain client of bench_expansion.py, 32
connections) and watches pods and TrainJobs until each job is Complete or Failed, or a
timeout. The controller runs meanwhile, so its first cycles decide the jobs that have arrived,
and which those are differs from run to run (and from way to way): so does the schedule. With
--backlog the TrainJobs are created first, one by one in the trace's order, and the
controller starts after them: its first cycle decides the whole queue, in the same order in
every way and every run (the order is creation, whole seconds, then the name), as
tests/bench/sim_admission.c does; the makespan and each job's wait then count from the
controller's start. From the watch's timelines (the time each event was read, so sub-second; the
objects' own timestamps have whole seconds) it reports:

  - partial-gang GPU-seconds: a pod holds its GPUs from the first event that shows it bound
    to a node (spec.nodeName) until the first that shows it ended (phase Succeeded or Failed,
    or deleted). A job's gang is whole while every one of its ranks has a Running pod. The
    figure is the sum, over pods, of GPUs x the time the pod held them while its job's gang
    was not whole: ranks that wait for a node while others hold theirs, and also the short
    skew of a gang that starts or ends (pods are bound and turn Running one after another,
    and end one after another). It is split into:
      split: held while another rank of the same job was Unschedulable (its pod Pending with
             condition PodScheduled=False, reason Unschedulable, and not bound yet): GPUs a
             gang that cannot start holds (the goal is zero with admission);
      other: the rest, held while no rank waited Unschedulable: pods bound but not yet
             Running, ranks that ended before the others (the short skew of a gang started
             whole; with the scheduler alone, also the ranks of a gang started piecemeal that
             run on after the first ones ended), pods deleted after the job ended;
  - GPU utilisation: busy GPU-seconds (pods Running) / (capacity GPUs x makespan); also the
    useful share (pods Running while their gang is whole), and the useful GPU-seconds of the
    jobs that ended Complete (a job failed by its deadline wasted what it ran);
  - makespan: from the first TrainJob create sent to the last job seen Complete or Failed;
  - wait, mean and p95: from the TrainJob's ADDED event to its first pod Running (and,
    beside it, to its whole gang Running); jobs that never ran are counted apart;
  - jobs Complete, Failed, of which DeadlineExceeded, and jobs whose gang was never whole;
  - shares: the busy period, from the first create sent until the first moment a namespace
    has no job left waiting (every job of it admitted, its first pod created, or ended
    without one), as tests/bench/sim_admission.c counts it; each namespace's busy GPU-seconds
    (pods Running) over it, its part of their sum, and the gap between that part and its
    share, relative to the share (0.1: a part of 45 or 55 % for a share of 50 %); the
    largest gap is share_error_max;
  - scavenger: the figures above for the normal jobs alone (their makespan, from the first
    create sent to the last normal job's end, is the window), the GPU-seconds the low jobs'
    pods were Running within it, the utilisation of both together over it, the preemptions
    (from the timeline: a low job's pod deleted while its job goes on; beside them the low
    jobs' status.preemptions), and the normal jobs' mean wait against that of the backfill
    way of the same run;
  - where the idle GPU-seconds went (every way but shares), node by node from the pods'
    nodes: before its first pod ran (ramp), in gaps of at most 3 s between two pods
    (turnover: the controller, the scheduler and the node in turn), in longer gaps (held: kept
    for a reservation, or too few GPUs for any job), after its last pod (tail), and on nodes
    nothing ran on (unused);
  - a gang's release: from the create of its last pod to its last pod bound (its gate lifted
    and the scheduler's binding), median and p90 over the gangs of more than one pod (a job's
    pods of one attempt), and the same for pods started alone, which have no gate.

Goals: zero split GPU-seconds with admission (and little "other" in the partial-gang figure);
backfill utilisation >= 90 % and above FIFO's; shares: every namespace's part within 10 % of
its share, at a utilisation no lower than the backfill way's (and than 90.7 %, the 300-job
backfill run's); scavenger: utilisation >= 97 %, while the normal jobs' mean wait exceeds the
backfill way's by no more than the grace.

Why 150 jobs by default, not 300: the trace's work is about 4.5 nodes x 38 s per job, so 300
jobs keep 32 nodes busy for about 1,800 s at 100 % utilisation (30 to 33 minutes per
admission way in a simulation of FIFO and EASY backfill); 150 jobs give about 900 s of work,
15 to 18 minutes per admission way, and about 40 minutes for the three ways together (the
scheduler way ends early: its jobs run out their deadlines while they wait). --jobs 300 runs
the full trace.

The scale part (cluster TJC_CLUSTER=bench-admission-scale, --nodes GH200 nodes): --jobs
TrainJobs of --gang nodes x 4 GPUs (walltime 1,800 s, run time from --run-min to --run-max
seconds), more than fit: nodes / gang of them run at once, the rest queue. They are created
before the controller starts (a backlog, as in bench_expansion.py), so that the clock holds
the controller's work and not the user's creates:

  - decisions per second: jobs / seconds from the controller's start until every job is
    decided: Queued with a queuePosition in its status, or admitted (its first pod exists).
    Two yardsticks, measured afterwards in the same run on the same cluster, the controller
    stopped: the plain client sends the writes those decisions take (a status patch and an
    Event per job, and the admitted jobs' pods, gated so that nothing schedules them), all at
    once; then, the controller's pods, Services and ConfigMaps deleted and the namespace
    quiet, it sends the same status patches and Events with copies of those pods (ungated),
    Services and ConfigMaps, pods first, so that the scheduler places the pods and KWOK runs
    them as they did the controller's (the cluster's part of the decisions, which loads the
    same two cores);
  - capacity freeing to the next gang: every job takes whole nodes (one pod a node), and each
    pod that ends frees its node; the head's gang fits when the gang-th free node appears.
    From a moment when fewer than a gang's nodes are free (every freed slot refilled, no
    admission owed), admission i is owed to the pod end that brings the free nodes to
    i x gang; the time from that end to the ADDED event of the i-th next job's first pod, on
    the same watch, p50 and p99. The ranks of one job start, and so end, at different
    instants, so the node that completes a gang is often not the last of one job's. The
    yardstick: on every gang-th pod end the plain client POSTs a pod at once over a
    kept-alive connection and times its ADDED event on the same watch (the round trip of a
    reaction with no thought in it); the latency's percentile minus the yardstick's is the
    controller's time as seen from outside;
  - the controller's own time, which the goal of 100 ms is about: its log line per admitted
    gang, from the event that let the gang in (the pod end as its watch delivered it) to the
    creates of its pods, and the three parts of it (waiting for the cycle, the cycle,
    waiting for the plan that creates the pods);
  - the decisions themselves: the admission cycles' count, time and jobs decided
    (trainjob_admission_cycle_duration_seconds, trainjob_admission_decisions_total), so
    the decisions per second of cycle time, which the goal of 500/s is about (every
    decision that changes what a job's status says is also a write, and those go at the API
    server's pace: the first figure above);
  - the requests the controller sent by the end of the run, by method
    (rest_client_requests_total), to set beside the yardstick's writes.

Every figure goes into one JSON line at the end; progress lines go to stderr. The controller
is build/release/trainjob-controller (TJC_BUILD_DIR overrides the folder, TJC_CONTROLLER_ARGS
adds flags to it); its log is
build/<cluster>-controller.log (the trace's or the scale run's cluster)."""

import argparse
import json
import math
import os
import queue
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_expansion import (  # noqa: E402
    CLUSTER_SH, REPO, TJ_API, TRAINJOB_LABEL, Api, Controller, create_namespace, delete_everything, kubectl, log,
    setup)

RUNTIME = "torch-gh200"
GPU = "nvidia.com/gpu"
GPUS_PER_NODE = 4
RUN_TIME = "sim.trainjob.flame.dev/run-time"
CHECKPOINT_TIME = "sim.trainjob.flame.dev/checkpoint-time"
BENCH_LABEL = "bench.trainjob.flame.dev/admission"
QOS = "trainjob.flame.dev/qos"
YARDSTICK_LABEL = "bench.trainjob.flame.dev/yardstick"
POD_NAME = re.compile(r"^(.*)-node-0-(\d+)-a(\d+)$")
SHARES = {"bench-share-a": 2, "bench-share-b": 1, "bench-share-c": 1}  # the shares way's
SCAVENGER_NAMESPACE = "bench-scavenger"
WAYS = {  # name: the config's admission section
    "scheduler": {"enabled": False},
    "fifo": {"enabled": True, "backfill": False},
    "backfill": {"enabled": True, "backfill": True},
    # The shipped "*" entry, and one for each namespace of the shares way with its share.
    "shares": {"enabled": True, "backfill": True, "namespaces": [
        {"namespace": ns, "allowed": ["normal", "low"], "default": "normal", "share": share}
        for ns, share in [("*", 1), *SHARES.items()]]},
    "scavenger": {"enabled": True, "backfill": True},
}


# ---- the trace ----


def make_trace(n, seed):
    """n jobs: (nodes, walltime s, run time s), the same for the same seed."""
    rng = random.Random(seed)
    jobs = []
    for _ in range(n):
        nodes = rng.randint(1, 8)
        walltime = rng.randint(20, 120)
        run = max(5, min(walltime - 5, round(walltime * rng.uniform(0.3, 0.9))))
        jobs.append((nodes, walltime, run))
    return jobs


def make_scavengers(n, seed):
    """n jobs of the tier low, as make_trace's tuples: 1 node, a walltime of 20 to 60 s, a run
    of 5 s less; the same for the same seed, and not the trace's draws."""
    rng = random.Random(f"scavengers-{seed}")
    return [(1, w, w - 5) for w in (rng.randint(20, 60) for _ in range(n))]


def trainjob(namespace, name, nodes, walltime, run, qos=None, runtime_kind=None, checkpoint=0):
    """A TrainJob of the runtime torch-gh200: the ClusterTrainingRuntime, or with
    runtime_kind "TrainingRuntime" the namespace's own; qos: its tier's annotation;
    checkpoint: seconds its pods take to save their state and exit once told of a
    preemption (deploy/local/stages.yaml, checkpoint-time), 0 for pods that run on until
    they are deleted."""
    pod_annotations = {RUN_TIME: f"{run}s"}
    if checkpoint:
        pod_annotations[CHECKPOINT_TIME] = f"{checkpoint:g}s"
    meta = {"name": name, "namespace": namespace, "labels": {BENCH_LABEL: "true"}}
    if qos:
        meta["annotations"] = {QOS: qos}
    ref = {"name": RUNTIME}
    if runtime_kind:
        ref.update(kind=runtime_kind, apiGroup="trainer.kubeflow.org")
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": meta,
        "spec": {
            "runtimeRef": ref,
            "activeDeadlineSeconds": walltime,
            "trainer": {"numNodes": nodes, "resourcesPerNode": {"limits": {GPU: str(GPUS_PER_NODE)}}},
            "podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
                                      "metadata": {"annotations": pod_annotations}}],
        },
    }


def write_config(path, admission):
    """deploy/config/config.yaml with its admission section replaced by `admission`."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        cfg = yaml.safe_load(f)
    section = dict(cfg.get("admission") or {})
    section.update(admission)
    cfg["admission"] = section
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        yaml.safe_dump(cfg, f, sort_keys=False)
    return path


# ---- the metrics, from timelines ----


def pct(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(math.ceil(p / 100 * len(s)) - 1, 0)] if s else float("nan")


def _at(t, start, end):
    """Whether t lies in [start, end), with None as 'never' for start and 'not yet' for end."""
    return start is not None and start <= t and (end is None or t < end)


def job_figures(nodes, pods, t_end):
    """The figures of one job from its pods' timelines. pods: dicts with rank, gpus, and the
    times bound, running, unschedulable, ended (None: not seen). Returns GPU-seconds held
    while the gang was not whole (partial), of them while a rank was Unschedulable (split),
    GPU-seconds Running (busy), of them while whole (useful), and the first times a pod ran
    (first_running) and the gang was whole (whole_at), None if never."""
    times = sorted({t for p in pods for t in (p["bound"], p["running"], p["unschedulable"], p["ended"])
                    if t is not None and t < t_end})
    out = {"partial": 0.0, "split": 0.0, "busy": 0.0, "useful": 0.0, "whole_at": None,
           "first_running": min((p["running"] for p in pods if p["running"] is not None), default=None)}
    for a, b in zip(times, times[1:] + [t_end]):
        dt = b - a
        held = sum(p["gpus"] for p in pods if _at(a, p["bound"], p["ended"]))
        running = [p for p in pods if _at(a, p["running"], p["ended"])]
        busy = sum(p["gpus"] for p in running)
        whole = len({p["rank"] for p in running}) >= nodes
        waiting = any(_at(a, p["unschedulable"], p["ended"]) and not _at(a, p["bound"], p["ended"])
                      for p in pods)
        out["busy"] += busy * dt
        if whole:
            out["useful"] += busy * dt
            if out["whole_at"] is None:
                out["whole_at"] = a
        else:
            out["partial"] += held * dt
            if waiting:
                out["split"] += held * dt
    return out


def pods_by_job(pods):
    by_job = {}
    for p in pods:
        by_job.setdefault(p["job"], []).append(p)
    return by_job


def trace_end(jobs, t_end):
    """When the last of jobs ended, or t_end if one has not."""
    ended = [j["ended"] for j in jobs.values() if j.get("ended") is not None]
    return max(ended) if len(ended) == len(jobs) and ended else t_end


def trace_figures(jobs, pods, capacity_gpus, t0, t_end):
    """The report of one way. jobs: {name: {nodes, created, ended, state, reason}}; pods:
    dicts with job, rank, gpus, bound, running, unschedulable, ended; times are seconds on
    one clock; t0 is the first create sent, t_end the end of observation."""
    by_job = pods_by_job(pods)
    total = {"partial": 0.0, "split": 0.0, "busy": 0.0, "useful": 0.0}
    goodput = 0.0
    waits, whole_waits = [], []
    never_ran = never_whole = split_jobs = 0
    for name, j in jobs.items():
        f = job_figures(j["nodes"], by_job.get(name, []), t_end)
        for k in total:
            total[k] += f[k]
        if j.get("state") == "Complete":
            goodput += f["useful"]
        if f["first_running"] is None:
            never_ran += 1
        else:
            waits.append(f["first_running"] - j["created"])
        if f["whole_at"] is None:
            never_whole += 1
        else:
            whole_waits.append(f["whole_at"] - j["created"])
        split_jobs += f["split"] > 0
    finished = all(j.get("ended") is not None for j in jobs.values())
    makespan = trace_end(jobs, t_end) - t0
    states = [j.get("state") for j in jobs.values()]
    return {
        "jobs": len(jobs),
        "finished": finished,
        "makespan_s": round(makespan, 2),
        "partial_gang_gpu_s": round(total["partial"], 1),
        "partial_split_gpu_s": round(total["split"], 1),
        "partial_other_gpu_s": round(total["partial"] - total["split"], 1),
        "busy_gpu_s": round(total["busy"], 1),
        "useful_gpu_s": round(total["useful"], 1),
        "complete_useful_gpu_s": round(goodput, 1),
        "utilisation": round(total["busy"] / (capacity_gpus * makespan), 4) if makespan > 0 else 0.0,
        "useful_utilisation": round(total["useful"] / (capacity_gpus * makespan), 4) if makespan > 0 else 0.0,
        "wait_mean_s": round(statistics.mean(waits), 2) if waits else None,
        "wait_p95_s": round(pct(waits, 95), 2) if waits else None,
        "whole_wait_mean_s": round(statistics.mean(whole_waits), 2) if whole_waits else None,
        "whole_wait_p95_s": round(pct(whole_waits, 95), 2) if whole_waits else None,
        "never_ran": never_ran,
        "never_whole": never_whole,
        "split_jobs": split_jobs,
        "complete": states.count("Complete"),
        "failed": states.count("Failed"),
        "deadline_exceeded": sum(1 for j in jobs.values() if j.get("reason") == "DeadlineExceeded"),
    }


def busy_by(jobs, pods, group, until):
    """The busy GPU-seconds (pods Running) up to `until` of each group of jobs: {group(job):
    GPU-seconds}."""
    by_job = pods_by_job(pods)
    out = {}
    for name, j in jobs.items():
        k = group(j)
        out[k] = out.get(k, 0.0) + job_figures(j["nodes"], by_job.get(name, []), until)["busy"]
    return out


def busy_period_end(jobs, t_end):
    """The first moment a namespace has no job left waiting: each of its jobs admitted (its
    first pod created) or ended without a pod. t_end if every namespace still has one
    waiting then. jobs: {name: {namespace, admitted, ended}}."""
    drained = {}
    for j in jobs.values():
        left = j["admitted"] if j.get("admitted") is not None else j.get("ended")
        ns = j["namespace"]
        if left is None or (ns in drained and drained[ns] is None):
            drained[ns] = None
        else:
            drained[ns] = max(drained.get(ns, left), left)
    return min([t for t in drained.values() if t is not None] + [t_end])


def share_figures(jobs, pods, shares, t0, t_end):
    """Each namespace's busy GPU-seconds over the busy period (t0 to busy_period_end), its
    part of their sum, and its gap from its share relative to the share. shares: {namespace:
    share}; jobs as busy_period_end's, with nodes; pods as trace_figures'."""
    end = busy_period_end(jobs, t_end)
    used = busy_by(jobs, pods, lambda j: j["namespace"], end)
    total, total_share = sum(used.values()), sum(shares.values())
    parts = {ns: used.get(ns, 0.0) / total if total else 0.0 for ns in shares}
    gaps = {ns: abs(parts[ns] - share / total_share) / (share / total_share) for ns, share in shares.items()}
    return {"busy_period_s": round(end - t0, 2),
            "share_gpu_s": {ns: round(used.get(ns, 0.0), 1) for ns in shares},
            "share_parts": {ns: round(v, 4) for ns, v in parts.items()},
            "share_targets": {ns: round(share / total_share, 4) for ns, share in shares.items()},
            "share_errors": {ns: round(v, 4) for ns, v in gaps.items()},
            "share_error_max": round(max(gaps.values()), 4)}


TURNOVER_S = 3.0


def idle_figures(pods, capacity_gpus, t0, end):
    """Where the idle GPU-seconds of [t0, end) go, node by node (pods with node, gpus, running,
    ended; every node of GPUS_PER_NODE GPUs): idle_ramp_gpu_s before a node's first pod runs,
    idle_turnover_gpu_s in gaps of at most TURNOVER_S between two pods (a pod's end to the next
    one's Running: the controller, the scheduler and the node in turn), idle_held_gpu_s in longer
    gaps (GPUs nothing used: kept for a reservation or too few for any job), idle_tail_gpu_s
    after a node's last pod ended, and idle_unused_gpu_s on nodes no pod ran on. Within a gap
    a node's free GPUs count, so a part-used node idles in part."""
    by_node = {}
    for p in pods:
        if p.get("node") and p["running"] is not None and p["running"] < end and (p["ended"] is None or p["ended"] > t0):
            by_node.setdefault(p["node"], []).append((max(p["running"], t0), min(p["ended"] or end, end), p["gpus"]))
    out = {"ramp": 0.0, "turnover": 0.0, "held": 0.0, "tail": 0.0}
    for spans in by_node.values():
        edges = sorted({t for a, b, _ in spans for t in (a, b)} | {t0, end})
        first, last = min(a for a, _, _ in spans), max(b for _, b, _ in spans)
        # Pieces of time with the same use; in between first and last, a gap is a run of
        # pieces with a GPU free, its kind by its length.
        gap = []
        for a, b in zip(edges, edges[1:]):
            f = max(GPUS_PER_NODE - sum(g for s0, s1, g in spans if s0 <= a and b <= s1), 0)
            if b <= first:
                out["ramp"] += (b - a) * f
            elif a >= last:
                out["tail"] += (b - a) * f
            elif f:
                gap.append((a, b, f))
            if gap and (not f or b >= last):
                kind = "turnover" if gap[-1][1] - gap[0][0] <= TURNOVER_S else "held"
                out[kind] += sum((y - x) * n for x, y, n in gap)
                gap = []
    unused = max(capacity_gpus - GPUS_PER_NODE * len(by_node), 0) * max(end - t0, 0)
    figures = {f"idle_{k}_gpu_s": round(v, 1) for k, v in out.items()}
    figures["idle_unused_gpu_s"] = round(unused, 1)
    return figures


def release_figures(pods):
    """How long a started gang took from its last pod's create to its last pod bound (the
    gang's gate lifted and the scheduler's binding), over the gangs of more than one pod whose
    every pod was bound, and the same for pods started alone (no gate): medians and p90, in
    seconds. A gang is the pods of one job and attempt."""
    gangs = {}
    for p in pods:
        gangs.setdefault((p["job"], p.get("attempt")), []).append(p)
    spans = {"gang": [], "single": []}
    for ps in gangs.values():
        if any(p.get("created") is None or p.get("bound") is None for p in ps):
            continue
        spans["gang" if len(ps) > 1 else "single"].append(max(p["bound"] for p in ps) - max(p["created"] for p in ps))
    out = {}
    for kind, v in spans.items():
        out[f"release_{kind}s"] = len(v)
        out[f"release_{kind}_median_s"] = round(statistics.median(v), 3) if v else None
        out[f"release_{kind}_p90_s"] = round(pct(v, 90), 3) if v else None
    return out


def scavenger_figures(jobs, pods, capacity_gpus, t0, t_end):
    """trace_figures of the jobs of a tier other than low, over their makespan (the window),
    with: the low jobs' busy GPU-seconds within it, the utilisation of both together, the
    low jobs' preemptions in it as the timeline shows them (a pod of a low job deleted before
    its job ended, per node of the job) and as their status.preemptions counts them, the
    normal jobs' status.preemptions (0 expected), and the low jobs not yet ended at the
    window's end (0: the backlog ran dry)."""
    low = {n: j for n, j in jobs.items() if j.get("qos") == "low"}
    normal = {n: j for n, j in jobs.items() if n not in low}
    out = trace_figures(normal, pods, capacity_gpus, t0, t_end)
    end = trace_end(normal, t_end)
    busy = busy_by(jobs, pods, lambda j: j.get("qos") == "low", end)
    out["scavenger_jobs"] = len(low)
    out["scavenger_busy_gpu_s"] = round(busy.get(True, 0.0), 1)
    window = capacity_gpus * (end - t0)
    out["utilisation_with_scavengers"] = round(sum(busy.values()) / window, 4) if window > 0 else 0.0
    stops = sum(1 / low[p["job"]]["nodes"] for p in pods if p["job"] in low and p.get("phase") in ("Deleted", "Failed")
                and p["ended"] <= end and (low[p["job"]]["ended"] is None or p["ended"] < low[p["job"]]["ended"]))
    out["preemptions"] = round(stops)
    out["status_preemptions"] = sum(j.get("preemptions") or 0 for j in low.values())
    out["normal_preemptions"] = sum(j.get("preemptions") or 0 for j in normal.values())
    out["scavengers_left_at_end"] = sum(1 for j in low.values() if j.get("ended") is None or j["ended"] > end)
    out.update(idle_figures(pods, capacity_gpus, t0, end))
    return out


def pair_by_nodes(ends, admissions, free, gang):
    """Latencies from capacity freeing to the admission it allowed, for jobs of `gang` whole
    nodes each, admitted in order: ends and admissions are the sorted times of pod ends and
    of admissions after a moment when `free` (< gang) nodes were free; admission i (from 1)
    is owed to the end that made i x gang nodes free, the (i x gang - free)-th."""
    out = []
    for i, a in enumerate(admissions, 1):
        k = i * gang - free
        if k > len(ends):
            break
        out.append(a - ends[k - 1])
    return out


# ---- the watches ----


class Watch(threading.Thread):
    """Lists, then watches, one collection; calls on_event(type, object, t) for each object
    (the listed ones as ADDED), t being the monotonic time the event was read. The API
    server may end a watch at any time: it resumes from the last resourceVersion, as
    informers do; after 410 Gone it lists again, and objects missing from the list are
    given to on_event as DELETED."""

    def __init__(self, api, path, on_event):
        super().__init__(daemon=True)
        self.api, self.path, self.on_event = api, path, on_event
        self.sep = "&" if "?" in path else "?"
        self.known = {}
        self.conn = None
        self.stopping = threading.Event()
        self.error = None
        self._list()
        self.start()

    def _list(self):
        items = self.api.json("GET", self.path)
        self.rv = items["metadata"]["resourceVersion"]
        now = time.monotonic()
        names = set()
        for obj in items["items"]:
            names.add(obj["metadata"]["name"])
            self.known[obj["metadata"]["name"]] = obj
            self.on_event("ADDED", obj, now)
        for name in list(self.known):
            if name not in names:
                self.on_event("DELETED", self.known.pop(name), now)

    def run(self):
        try:
            while not self.stopping.is_set():
                self._watch()
        except Exception as e:  # reported by stop()
            if not self.stopping.is_set():
                self.error = e
                log(f"watch {self.path}: {e}")

    def _watch(self):
        self.conn = self.api.connect(timeout=None)
        try:
            self.conn.request("GET", f"{self.path}{self.sep}watch=1&allowWatchBookmarks=true"
                                     f"&resourceVersion={self.rv}&timeoutSeconds=1800",
                              headers={"Accept": "application/json"})
            resp = self.conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"watch: {resp.status} {resp.read()[:200]!r}")
            while not self.stopping.is_set():
                line = resp.readline()
                if not line:
                    return
                now = time.monotonic()
                ev = json.loads(line)
                obj = ev["object"]
                if ev["type"] == "ERROR":
                    if obj.get("code") == 410:
                        self._list()
                        return
                    raise RuntimeError(f"watch: {obj.get('message')}")
                self.rv = obj["metadata"]["resourceVersion"]
                if ev["type"] == "BOOKMARK":
                    continue
                name = obj["metadata"]["name"]
                if ev["type"] == "DELETED":
                    self.known.pop(name, None)
                else:
                    self.known[name] = obj
                self.on_event(ev["type"], obj, now)
        finally:
            self.conn.close()

    def stop(self):
        self.stopping.set()
        try:
            self.conn.sock.shutdown(2)
        except (OSError, AttributeError):
            pass
        self.join(5)


class Recorder:
    """The timelines of the pods and TrainJobs of one or more namespaces, from two watches
    each (the TrainJobs' names must differ across them).

    pods: uid -> {job, rank, attempt, gpus, created, bound, running, unschedulable, ended,
    phase} (by uid: a preempted job's next pods may have the names of its last ones);
    jobs: name -> {namespace, qos, nodes, created, decided, queued, ended, state, reason,
    preemptions, updates}; other: name -> ADDED time of pods that belong to no TrainJob (the
    yardstick's).
    ends: times at which a bound pod ended (its node is free); admissions: (time, job) of
    each job's first pod. on_end, if given, is called on the pod watch's thread with each
    end's time. A job is decided when it is first seen
    Queued with a queuePosition, or when its first pod exists."""

    def __init__(self, api, *namespaces, on_end=None):
        self.lock = threading.Lock()
        self.pods, self.jobs, self.other = {}, {}, {}
        self.by_job = {}  # job -> its pods' records
        self.ends, self.admissions = [], []
        self.on_end = on_end
        self.watches = []
        for ns in namespaces:
            self.watches.append(Watch(api, f"{TJ_API}/namespaces/{ns}/trainjobs", self._job_event))
            self.watches.append(Watch(api, f"/api/v1/namespaces/{ns}/pods", self._pod_event))

    def stop(self):
        for w in reversed(self.watches):
            w.stop()
        for w in self.watches:
            if w.error:
                sys.exit(f"a watch failed: {w.error}")

    def _job_event(self, typ, tj, t):
        name = tj["metadata"]["name"]
        st = tj.get("status") or {}
        with self.lock:
            j = self.jobs.get(name)
            if j is None:
                j = self.jobs[name] = {"namespace": tj["metadata"]["namespace"],
                                       "qos": (tj["metadata"].get("annotations") or {}).get(QOS),
                                       "nodes": tj["spec"]["trainer"]["numNodes"], "created": t,
                                       "queued_position": None, "queued": None, "ended": None,
                                       "state": None, "reason": None, "preemptions": 0,
                                       "updates": 0, "expected": []}
            elif typ == "MODIFIED":
                j["updates"] += 1
            j["preemptions"] = max(j["preemptions"], st.get("preemptions") or 0)
            state = st.get("state")
            j["state"], j["reason"] = state, st.get("reason")
            if state == "Queued":
                j["queued"] = j["queued"] or t
                if st.get("queuePosition") is not None and j["queued_position"] is None:
                    j["queued_position"] = t
            if state in ("Complete", "Failed") and j["ended"] is None:
                j["ended"] = t
            # The reservation's changes, for reading a timeline afterwards.
            expected = st.get("expectedStartTime")
            if expected and (not j["expected"] or j["expected"][-1][1] != expected):
                j["expected"].append((t, expected))

    def _pod_event(self, typ, pod, t):
        meta, spec, st = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        name = meta["name"]
        job = (meta.get("labels") or {}).get(TRAINJOB_LABEL)
        m = POD_NAME.match(name)
        freed = None
        with self.lock:
            if job is None or m is None:
                self.other.setdefault(name, t)
                return
            uid = meta.get("uid", name)
            p = self.pods.get(uid)
            if p is None:
                gpus = sum(int((c.get("resources") or {}).get("limits", {}).get(GPU, 0))
                           for c in spec.get("containers", []))
                p = self.pods[uid] = {"job": job, "rank": int(m.group(2)), "attempt": int(m.group(3)),
                                      "gpus": gpus, "created": t, "bound": None, "running": None,
                                      "unschedulable": None, "ended": None, "phase": None, "node": None}
                if job not in self.by_job:
                    self.admissions.append((t, job))
                self.by_job.setdefault(job, []).append(p)
            phase = st.get("phase")
            if spec.get("nodeName") and p["bound"] is None:
                p["bound"], p["node"] = t, spec["nodeName"]
            if phase == "Running" and p["running"] is None:
                p["running"] = t
            if p["unschedulable"] is None and p["bound"] is None and any(
                    c.get("type") == "PodScheduled" and c.get("status") == "False"
                    and c.get("reason") == "Unschedulable" for c in st.get("conditions") or []):
                p["unschedulable"] = t
            if p["ended"] is None and (typ == "DELETED" or phase in ("Succeeded", "Failed")):
                p["ended"], p["phase"] = t, phase if phase in ("Succeeded", "Failed") else "Deleted"
                if p["bound"] is not None:
                    freed = t
                    self.ends.append(t)
        if freed is not None and self.on_end:
            self.on_end(freed)

    def live_pods(self):
        """TrainJob pods that hold a node or are pinned to one (created, not ended)."""
        with self.lock:
            return sum(1 for p in self.pods.values() if p["ended"] is None)

    def snapshot(self):
        """(jobs, pods): copies; each job also with admitted (its first pod's time) and
        decided."""
        with self.lock:
            jobs = {}
            for k, v in self.jobs.items():
                j = jobs[k] = dict(v)
                pods = self.by_job.get(k)
                j["admitted"] = min(p["created"] for p in pods) if pods else None
                j["decided"] = min((x for x in (j["queued_position"], j["admitted"]) if x is not None),
                                   default=None)
            return jobs, [dict(p) for p in self.pods.values()]


# ---- the trace runs ----


def way_jobs(args, way, trace, namespace):
    """The TrainJobs of a way, in the order they are created, and the names of those whose
    end ends it."""
    names = [f"adm-{i:04d}" for i in range(len(trace))]
    if way == "shares":
        spaces = list(SHARES)
        jobs = [trainjob(spaces[i % len(spaces)], name, *job) for i, (name, job) in enumerate(zip(names, trace))]
    elif way == "scavenger":
        jobs = [trainjob(namespace, name, *job, qos="normal") for name, job in zip(names, trace)]
        jobs += [trainjob(SCAVENGER_NAMESPACE, f"low-{i:04d}", *job, qos="low", runtime_kind="TrainingRuntime",
                          checkpoint=args.checkpoint)
                 for i, job in enumerate(make_scavengers(args.scavengers, args.seed))]
    else:
        jobs = [trainjob(namespace, name, *job) for name, job in zip(names, trace)]
    return jobs, names


def way_admission(args, way):
    """The admission section of a way's config: WAYS's; for the scavenger way with
    --checkpoint, the shipped tiers with backfillReservedNodes on the tier low."""
    admission = dict(WAYS[way])
    if way == "scavenger" and args.checkpoint:
        with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
            tiers = yaml.safe_load(f)["admission"]["qos"]
        admission["qos"] = [dict(t, backfillReservedNodes=True) if t["name"] == "low" else t for t in tiers]
    return admission


def scavenger_runtime(api, grace):
    """torch-gh200 as a TrainingRuntime of the scavengers' namespace, its node pods with
    terminationGracePeriodSeconds grace."""
    rt = api.json("GET", "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/" + RUNTIME)
    node = next(j for j in rt["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == "node")
    node["template"]["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = grace
    meta = {"name": RUNTIME, "labels": rt["metadata"].get("labels", {}),
            "annotations": {k: v for k, v in (rt["metadata"].get("annotations") or {}).items()
                            if not k.startswith("kubectl.kubernetes.io/")}}
    kubectl("apply", "-n", SCAVENGER_NAMESPACE, "-f", "-",
            input=json.dumps({"apiVersion": rt["apiVersion"], "kind": "TrainingRuntime", "metadata": meta,
                              "spec": rt["spec"]}))


def queued_from(jobs, t0):
    """With --backlog, the jobs were created before the controller started at t0: each one's
    wait counts from then."""
    for j in jobs.values():
        if j["created"] is not None and j["created"] < t0:
            j["created"] = t0


def observe_trace(rec, names, t0, timeout, capacity):
    """Waits until every job of names has ended, or timeout seconds after t0, logging the
    jobs' states every 30 s; returns the time it stopped."""
    last = time.monotonic()
    while True:
        jobs, pods = rec.snapshot()
        done = sum(1 for n in names if n in jobs and jobs[n]["ended"] is not None)
        now = time.monotonic()
        if done == len(names) or now - t0 > timeout:
            return now
        if now - last >= 30:
            last = now
            running = [p for p in pods if p["running"] is not None and p["ended"] is None]
            states = {}
            for j in jobs.values():
                states[j["state"] or "-"] = states.get(j["state"] or "-", 0) + 1
            log(f"  {now - t0:6.0f} s: {done}/{len(names)} ended; states "
                + " ".join(f"{k} {v}" for k, v in sorted(states.items()))
                + f"; {sum(p['gpus'] for p in running)} of {capacity} GPUs in Running pods")
        time.sleep(1)


def trace_way(api, args, way, trace, namespace, capacity):
    jobs_sent, names = way_jobs(args, way, trace, namespace)
    spaces = sorted({j["metadata"]["namespace"] for j in jobs_sent})
    for ns in spaces:
        if ns != namespace:  # run_trace's setup made that one
            create_namespace(ns)
            delete_everything(api, ns)
    if way == "scavenger":
        scavenger_runtime(api, args.grace)
    cfg = write_config(os.path.join(REPO, "build", f"bench-admission-{way}.yaml"), way_admission(args, way))
    rec = Recorder(api, *spaces)
    c = None
    work = sum(n * GPUS_PER_NODE * r for n, _, r in trace)
    timeout = args.timeout or 1.8 * work / capacity + 300
    try:
        reqs = [(f"{TJ_API}/namespaces/{j['metadata']['namespace']}/trainjobs", json.dumps(j).encode())
                for j in jobs_sent]
        if args.backlog:
            # One by one over one connection, in the trace's order: a job created in a later
            # second also has a later name, so the queue's order (creation, then name) is the
            # trace's in every run.
            applied, _ = api.create_all(reqs, 1)
            t0 = time.monotonic()
            c = Controller(args.binary, args.kubeconfig, args.log_path, cfg)
            cpu0 = 0.0
            log(f"  {len(reqs)} TrainJobs created in {applied:.2f} s before the controller started; "
                f"observing (timeout {timeout:.0f} s)")
        else:
            c = Controller(args.binary, args.kubeconfig, args.log_path, cfg)
            cpu0 = c.cpu_seconds()
            applied, t0 = api.create_all(reqs, args.connections)
            log(f"  {len(reqs)} TrainJobs created in {applied:.2f} s; observing (timeout {timeout:.0f} s)")
        t_end = observe_trace(rec, names, t0, timeout, capacity)
        cpu = c.cpu_seconds() - cpu0
        peak = c.peak_rss_mib()
    finally:
        if c:
            c.stop()
        rec.stop()
    jobs, pods = rec.snapshot()
    if args.backlog:
        queued_from(jobs, t0)
    sent = [j["metadata"]["name"] for j in jobs_sent]
    missing = set(sent) - set(jobs)
    if missing:
        sys.exit(f"the watch never saw {len(missing)} TrainJobs, e.g. {sorted(missing)[0]}")
    jobs = {n: jobs[n] for n in sent}
    if way == "scavenger":
        res = scavenger_figures(jobs, pods, capacity, t0, t_end)
        res["grace_s"] = args.grace
        res["checkpoint_s"] = args.checkpoint
    else:
        res = trace_figures(jobs, pods, capacity, t0, t_end)
        res.update(idle_figures(pods, capacity, t0, trace_end(jobs, t_end)))
    if way == "shares":
        res.update(share_figures(jobs, pods, SHARES, t0, t_end))
    res.update(release_figures(pods))
    if args.timelines:
        with open(f"{args.timelines}-{way}.json", "w") as f:
            json.dump({"t0": t0, "t_end": t_end, "capacity": capacity, "jobs": jobs, "pods": pods,
                       "wall_minus_monotonic": time.time() - time.monotonic()}, f)
    res["controller_cpu_s"] = round(cpu, 2)
    res["controller_peak_mib"] = round(peak, 1)
    if not res["finished"]:
        log(f"  timed out after {timeout:.0f} s with {res['jobs'] - res['complete'] - res['failed']} jobs unfinished")
    reasons = {}
    for n in names:
        if jobs[n]["state"] == "Failed":
            reasons[jobs[n]["reason"]] = reasons.get(jobs[n]["reason"], 0) + 1
    res["failed_reasons"] = reasons
    for ns in spaces:
        delete_everything(api, ns)
    return res


def wait_schedulable(api, timeout=1200, product="NVIDIA-GH200-480GB"):
    """Waits until no node of the product (GH200 by default; no node at all, with product
    None) carries a taint other than the GPU one. A new node is Ready before
    kube-controller-manager lifts its node.kubernetes.io/not-ready taint, and with thousands
    of nodes on two cores that takes minutes (about 4 nodes a second); until then neither the
    scheduler nor the admission counts those nodes, and the capacity would grow under the
    run."""
    sel = urllib.parse.quote(f"nvidia.com/gpu.product={product}" if product else "type=kwok")
    which = f"{product} " if product else ""
    deadline = last = time.monotonic()
    deadline += timeout
    while True:
        nodes = api.json("GET", f"/api/v1/nodes?labelSelector={sel}")["items"]
        tainted = sum(1 for n in nodes if n["spec"].get("unschedulable")
                      or any(t["key"] != GPU for t in n["spec"].get("taints") or []))
        if not tainted:
            return
        if time.monotonic() > deadline:
            sys.exit(f"{tainted} of {len(nodes)} {which}nodes are still tainted after {timeout} s")
        if time.monotonic() - last >= 30:
            last = time.monotonic()
            log(f"  {tainted} of {len(nodes)} {which}nodes still tainted (not-ready): waiting")
        time.sleep(5)


def gpu_capacity(api, product="NVIDIA-GH200-480GB"):
    sel = urllib.parse.quote(f"nvidia.com/gpu.product={product}")
    nodes = api.json("GET", f"/api/v1/nodes?labelSelector={sel}")["items"]
    return len(nodes), sum(int(n["status"]["allocatable"].get(GPU, 0)) for n in nodes)


def run_trace(args):
    env = cluster_env(args.trace_cluster, gh200=32)
    with cluster(args, env) as api:
        namespace = "bench-admission"
        setup(api, namespace)
        wait_schedulable(api)
        n_nodes, capacity = gpu_capacity(api)
        trace = make_trace(args.jobs, args.seed)
        work = sum(n * GPUS_PER_NODE * r for n, _, r in trace)
        log(f"trace: {len(trace)} jobs (seed {args.seed}), {work} GPU-seconds of work on {n_nodes} "
            f"GH200 nodes ({capacity} GPUs): at least {work / capacity:.0f} s")
        out = {"jobs": len(trace), "seed": args.seed, "backlog": args.backlog, "capacity_gpus": capacity,
               "work_gpu_s": work, "lower_bound_makespan_s": round(work / capacity, 1), "ways": {}}
        for way in args.ways.split(","):
            wait_for_quiet(args)
            log(f"trace, way {way}: admission {way_admission(args, way)}")
            r = out["ways"][way] = trace_way(api, args, way, trace, namespace, capacity)
            log(f"  {way}: makespan {r['makespan_s']:.0f} s, utilisation {r['utilisation']:.1%} "
                f"(useful {r['useful_utilisation']:.1%}), partial-gang {r['partial_gang_gpu_s']:.0f} GPU-s "
                f"(split {r['partial_split_gpu_s']:.0f}, other {r['partial_other_gpu_s']:.0f}), wait mean "
                f"{r['wait_mean_s']} s p95 {r['wait_p95_s']} s, {r['complete']} Complete, {r['failed']} "
                f"Failed ({r['deadline_exceeded']} DeadlineExceeded), never whole {r['never_whole']}")
            if way == "shares":
                log(f"  shares: over the busy period ({r['busy_period_s']:.0f} s) "
                    + ", ".join(f"{ns} {r['share_parts'][ns]:.1%} (share {r['share_targets'][ns]:.1%})"
                                for ns in SHARES)
                    + f"; largest gap {r['share_error_max']:.1%} of a share")
            if way == "scavenger":
                log(f"  scavenger: utilisation with the low jobs {r['utilisation_with_scavengers']:.1%} "
                    f"({r['scavenger_busy_gpu_s']:.0f} GPU-s of low jobs), {r['preemptions']} preemptions "
                    f"({r['status_preemptions']} in the low jobs' status.preemptions) "
                    f"(grace {r['grace_s']} s), {r['scavengers_left_at_end']} low jobs not ended at the end")
            if "idle_held_gpu_s" in r:
                log(f"  idle GPU-s: ramp {r['idle_ramp_gpu_s']:.0f}, turnover {r['idle_turnover_gpu_s']:.0f}, "
                    f"held {r['idle_held_gpu_s']:.0f}, tail {r['idle_tail_gpu_s']:.0f}, "
                    f"unused {r['idle_unused_gpu_s']:.0f}")
            log(f"  last create to last bound: gangs median {r['release_gang_median_s']} s "
                f"(p90 {r['release_gang_p90_s']} s, {r['release_gangs']} gangs), single pods median "
                f"{r['release_single_median_s']} s ({r['release_singles']})")
        out.update(summary(out["ways"]))
        return out


def summary(ways):
    """The figures the ways are compared by, and the goals they meet."""
    out, goals = {}, {}
    for w in ("fifo", "backfill", "shares", "scavenger"):
        if w in ways:
            goals[f"{w}_zero_split"] = ways[w]["partial_split_gpu_s"] == 0
    backfill = ways.get("backfill")
    if backfill:
        goals["backfill_utilisation_ge_90"] = backfill["utilisation"] >= 0.9
        if "fifo" in ways:
            goals["backfill_above_fifo"] = backfill["utilisation"] > ways["fifo"]["utilisation"]
        out["utilisation_backfill"] = backfill["utilisation"]
        out["normal_wait_mean_backfill"] = backfill["wait_mean_s"]
    shares = ways.get("shares")
    if shares:
        out["share_error_max"] = shares["share_error_max"]
        out["utilisation_shares"] = shares["utilisation"]
        goals["shares_within_10pct"] = shares["share_error_max"] <= 0.1
        goals["shares_utilisation_ge_90_7"] = shares["utilisation"] >= 0.907
        if backfill:
            goals["shares_utilisation_ge_backfill"] = shares["utilisation"] >= backfill["utilisation"]
    scavenger = ways.get("scavenger")
    if scavenger:
        out["utilisation_scavenger"] = scavenger["utilisation_with_scavengers"]
        out["normal_wait_mean_scavenger"] = scavenger["wait_mean_s"]
        out["preemptions"] = scavenger["preemptions"]
        out["grace_s"] = scavenger["grace_s"]
        out["checkpoint_s"] = scavenger.get("checkpoint_s", 0)
        goals["scavenger_utilisation_ge_97"] = scavenger["utilisation_with_scavengers"] >= 0.97
        if backfill and backfill["wait_mean_s"] is not None and scavenger["wait_mean_s"] is not None:
            out["normal_wait_growth_s"] = round(scavenger["wait_mean_s"] - backfill["wait_mean_s"], 2)
            goals["scavenger_wait_growth_le_grace"] = out["normal_wait_growth_s"] <= scavenger["grace_s"]
    out["goals"] = goals
    return out


# ---- the scale run ----


class Yardstick(threading.Thread):
    """On each capacity freeing, POSTs a gated pod at once over a kept-alive connection; the
    recorder notes its ADDED event. Returns {pod name: freeing time}."""

    def __init__(self, api, namespace, every):
        super().__init__(daemon=True)
        self.api, self.namespace, self.every, self.ends = api, namespace, every, 0
        self.q = queue.SimpleQueue()
        self.sent = {}
        self.conn = api.connect()
        self.start()

    def freeing(self, t):
        self.ends += 1
        if self.ends % self.every == 0:
            self.q.put(t)

    def run(self):
        k = 0
        while True:
            t = self.q.get()
            if t is None:
                return
            name = f"yardstick-{k:05d}"
            k += 1
            body = json.dumps(gated_pod(name)).encode()
            try:
                status, data = self.api.call("POST", f"/api/v1/namespaces/{self.namespace}/pods", body, self.conn)
            except OSError:
                self.conn = self.api.connect()
                continue
            if status == 201:
                self.sent[name] = t

    def stop(self):
        self.q.put(None)
        self.join(10)
        self.conn.close()


def gated_pod(name):
    """A pod nothing schedules or counts (no node, no GPU): its create is a plain write."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {YARDSTICK_LABEL: "true"}},
            "spec": {"schedulingGates": [{"name": "bench.trainjob.flame.dev/gate"}],
                     "containers": [{"name": "c", "image": "x"}]}}


def decision_writes(namespace, names, admitted_pods, tag="yardstick"):
    """The writes of every job's decision, by the plain client: a status patch and an Event
    per job (the Queued state with its position), and admitted_pods pods (gated). tag names
    the Events and ends the messages, so that two yardsticks in one run write anew."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    reqs = []
    for i, name in enumerate(names):
        status = {"status": {"state": "Queued", "reason": "Resources", "queuePosition": i + 1,
                             "message": f"position {i + 1} of {len(names)} in gh200: needs 4 nodes x 4 GPUs, "
                                        f"0 such nodes free; expected start 10:40Z ({tag})"}}
        reqs.append(("PATCH", f"{TJ_API}/namespaces/{namespace}/trainjobs/{name}/status",
                     json.dumps(status).encode(), "application/merge-patch+json"))
        event = {"apiVersion": "v1", "kind": "Event",
                 "metadata": {"name": f"{name}.{tag}", "namespace": namespace},
                 "involvedObject": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                    "namespace": namespace, "name": name},
                 "type": "Normal", "reason": "Queued", "message": status["status"]["message"],
                 "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                 "source": {"component": "bench"}, "reportingComponent": "bench", "reportingInstance": "bench"}
        reqs.append(("POST", f"/api/v1/namespaces/{namespace}/events", json.dumps(event).encode(), None))
    for k in range(admitted_pods):
        reqs.append(("POST", f"/api/v1/namespaces/{namespace}/pods",
                     json.dumps(gated_pod(f"yardstick-write-{k:05d}")).encode(), None))
    return reqs


OWNED_KINDS = (("pods", "Pod"), ("services", "Service"), ("configmaps", "ConfigMap"))  # core/v1


def owned_by_trainjobs(api, namespace):
    """The pods, Services and ConfigMaps of the namespace that a TrainJob owns: kind -> items."""
    out = {}
    for kind, _ in OWNED_KINDS:
        items = api.json("GET", f"/api/v1/namespaces/{namespace}/{kind}")["items"]
        out[kind] = [o for o in items if any(r.get("kind") == "TrainJob"
                                             for r in o["metadata"].get("ownerReferences") or [])]
    return out


def as_new(obj):
    """obj as a plain client would create it: no server-set fields, no owner, no node and no
    scheduling gate (the scheduler places a pod at once), labelled as the yardstick's."""
    meta = obj["metadata"]
    new = {"apiVersion": "v1", "kind": obj["kind"],
           "metadata": {"name": meta["name"], "namespace": meta["namespace"],
                        "labels": {**(meta.get("labels") or {}), YARDSTICK_LABEL: "true"},
                        "annotations": meta.get("annotations") or {}}}
    for k in ("spec", "data"):
        if k in obj:
            new[k] = json.loads(json.dumps(obj[k]))
    spec = new.get("spec") or {}
    # Set by the API server's admission (the priority from the PriorityClass) or allocated.
    for k in ("nodeName", "schedulingGates", "priority", "preemptionPolicy"):
        spec.pop(k, None)
    if spec.get("clusterIP") != "None":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    # The service account token volume is added again by the API server.
    if "volumes" in spec:
        spec["volumes"] = [v for v in spec["volumes"] if not v["name"].startswith("kube-api-access-")]
        for c in spec.get("containers", []):
            c["volumeMounts"] = [m for m in c.get("volumeMounts", [])
                                 if not m["name"].startswith("kube-api-access-")]
    return new


def wait_namespace_quiet(api, namespace, quiet=3.0, timeout=180):
    """Waits until the namespace's pods and EndpointSlices have not changed for quiet seconds
    (the cluster is through with the writes before), or timeout. Returns the seconds waited."""
    last = [time.monotonic()]

    def seen(*_):
        last[0] = time.monotonic()

    t0 = time.monotonic()
    watches = [Watch(api, f"/api/v1/namespaces/{namespace}/pods", seen),
               Watch(api, f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices", seen)]
    try:
        while time.monotonic() - last[0] < quiet and time.monotonic() - t0 < timeout:
            time.sleep(0.5)
    finally:
        for w in watches:
            w.stop()
    return time.monotonic() - t0


def live_yardstick(api, args, namespace, names):
    """The yardstick of the decisions with the cluster's part in them: the plain client sends
    the decisions' status patches and Events, and creates the pods, Services and ConfigMaps
    the controller created (copies, once the controller's are gone), all at once, pods first.
    The scheduler places those pods and KWOK runs them, as it did the controller's, on the
    same machine. Returns (seconds from the first send until the last answer, writes)."""
    owned = owned_by_trainjobs(api, namespace)
    api.create_all([("DELETE", f"/api/v1/namespaces/{namespace}/{kind}/{o['metadata']['name']}"
                               "?gracePeriodSeconds=0", None, None)
                    for kind, _ in OWNED_KINDS for o in owned[kind]], args.connections)
    deadline = time.monotonic() + 180
    while any(owned_by_trainjobs(api, namespace).values()):
        if time.monotonic() > deadline:
            sys.exit("the controller's pods, Services and ConfigMaps were not gone within 180 s")
        time.sleep(1)
    waited = wait_namespace_quiet(api, namespace)
    log(f"  the controller's {sum(len(v) for v in owned.values())} pods, Services and ConfigMaps deleted; "
        f"the namespace quiet after {waited:.0f} s")
    reqs = []
    for kind, object_kind in OWNED_KINDS:
        for o in owned[kind]:
            reqs.append((f"/api/v1/namespaces/{namespace}/{kind}",
                         json.dumps(as_new({**o, "kind": object_kind})).encode()))
    reqs += decision_writes(namespace, names, 0, tag="yardstick-live")
    elapsed, _ = api.create_all(reqs, args.connections)
    return elapsed, len(reqs)


def run_scale(args):
    env = cluster_env(args.scale_cluster, gh200=args.nodes)
    with cluster(args, env) as api:
        namespace = "bench-admission-scale"
        # Thousands of TrainJobs of an earlier run on a kept cluster: one by one, as a single
        # collection delete of them outlasts the client's timeout.
        kubectl("delete", "trainjobs", "--all", "-n", namespace, "--wait=false", check=False)
        setup(api, namespace)
        # The yardstick's objects of an earlier run on a kept cluster (they have no TrainJob).
        sel = urllib.parse.quote(YARDSTICK_LABEL)
        for kind, _ in OWNED_KINDS:
            api.call("DELETE", f"/api/v1/namespaces/{namespace}/{kind}?labelSelector={sel}&gracePeriodSeconds=0")
        # Gone, and the cluster through with them, before the run: the live yardstick's pods
        # hold nodes, and their deletes load the two cores.
        deadline = time.monotonic() + 300
        while api.json("GET", f"/api/v1/namespaces/{namespace}/pods?labelSelector={sel}&limit=1")["items"]:
            if time.monotonic() > deadline:
                sys.exit("the yardstick's pods of an earlier run are still there after 300 s")
            time.sleep(1)
        wait_namespace_quiet(api, namespace)
        wait_schedulable(api)
        n_nodes, capacity = gpu_capacity(api)
        slots = n_nodes // args.gang
        rng = random.Random(args.seed)
        names = [f"scale-{i:05d}" for i in range(args.scale_jobs)]
        jobs = [trainjob(namespace, n, args.gang, 1800, rng.randint(args.run_min, args.run_max)) for n in names]
        log(f"scale: {len(jobs)} TrainJobs of {args.gang} nodes x {GPUS_PER_NODE} GPUs on {n_nodes} GH200 "
            f"nodes: {slots} run at once, {len(jobs) - slots} queue")
        wait_for_quiet(args)
        created, _ = api.create_all([(f"{TJ_API}/namespaces/{namespace}/trainjobs", json.dumps(j).encode())
                                     for j in jobs], args.connections)
        log(f"  {len(jobs)} TrainJobs created by the plain client in {created:.1f} s ({len(jobs) / created:.0f}/s)")
        ys = Yardstick(api, namespace, args.gang)
        rec = Recorder(api, namespace, on_end=ys.freeing)
        cfg = write_config(os.path.join(REPO, "build", "bench-admission-scale.yaml"), WAYS["backfill"])
        t_start = time.monotonic()
        c = Controller(args.binary, args.kubeconfig, args.log_path, cfg)
        t_ready = time.monotonic()
        out = {"jobs": len(jobs), "nodes": n_nodes, "gang_nodes": args.gang, "slots": slots,
               "trainjob_creates_per_s": round(len(jobs) / created, 1),
               "controller_ready_s": round(t_ready - t_start, 2)}
        try:
            decided_at = observe_decisions(rec, names, t_start, args.decide_timeout)
            out.update(decided_figures(rec, names, t_start, t_ready, decided_at, slots))
            log(f"  every job decided {out['decided_s']} s after the controller's start: "
                f"{out['decisions_per_s']} decisions/s ({out['admitted_at_decided']} admitted, "
                f"{out['queued_at_decided']} queued)")
            out.update(observe_freeings(rec, ys, args, n_nodes))
            m = c.metrics()
            out["controller_cpu_s"] = round(c.cpu_seconds(), 2)
            out["controller_peak_mib"] = round(c.peak_rss_mib(), 1)
            out["admissions_total"] = m.get("trainjob_admissions_total")
            out["reconciles"] = sum(v for k, v in m.items() if k.startswith("controller_runtime_reconcile_total/"))
            out["reconcile_errors"] = m.get("controller_runtime_reconcile_total/error", 0)
            # A status patch that met a conflict: the job planned again from the newer object.
            out["reconcile_conflicts"] = m.get("controller_runtime_reconcile_total/requeue", 0)
            # What the controller sent by the end, by method, beside the yardstick's writes.
            out["controller_requests"] = {k.split("/", 1)[1]: int(v) for k, v in m.items()
                                          if k.startswith("rest_client_requests_total/")}
            # And how long each took on average, from its send to its answer.
            out["controller_request_mean_ms"] = {
                verb: round(m[f"rest_client_request_duration_seconds_sum/{verb}"] / n * 1000, 1)
                for verb, n in ((k.split("/", 1)[1], v) for k, v in m.items()
                                if k.startswith("rest_client_request_duration_seconds_count/")) if n}
            # The decisions themselves, as the controller's cycles count and time them: every
            # cycle decides the whole queue from the caches.
            cycles = m.get("trainjob_admission_cycle_duration_seconds_count", 0)
            cycle_s = m.get("trainjob_admission_cycle_duration_seconds_sum", 0)
            decisions = m.get("trainjob_admission_decisions_total", 0)
            out["cycles"] = int(cycles)
            out["cycle_mean_ms"] = round(cycle_s / cycles * 1000, 2) if cycles else None
            out["controller_decisions"] = int(decisions)
            out["controller_decisions_per_s"] = round(decisions / cycle_s) if cycle_s else None
            log(f"  {out['cycles']} admission cycles, {out['cycle_mean_ms']} ms each on average: "
                f"{out['controller_decisions']} decisions at {out['controller_decisions_per_s']}/s "
                f"of cycle time")
        finally:
            c.stop()
            ys.stop()
            rec.stop()
        # The yardstick of the decisions: their writes by the plain client, on the same
        # TrainJobs (the controller is stopped), under the same cluster load.
        reqs = decision_writes(namespace, names, slots * args.gang)
        elapsed, _ = api.create_all(reqs, args.connections)
        out["yardstick_writes"] = len(reqs)
        out["yardstick_s"] = round(elapsed, 2)
        out["yardstick_decisions_per_s"] = round(len(names) / elapsed, 1)
        out["decisions_vs_yardstick"] = round(out["decisions_per_s"] / out["yardstick_decisions_per_s"], 3)
        log(f"  plain client: the {len(reqs)} writes of {len(names)} decisions in {elapsed:.1f} s "
            f"({out['yardstick_decisions_per_s']} decisions/s)")
        elapsed, n = live_yardstick(api, args, namespace, names)
        out["yardstick_live_writes"] = n
        out["yardstick_live_s"] = round(elapsed, 2)
        out["decisions_vs_yardstick_live"] = round(elapsed / out["decided_s"], 3)
        log(f"  plain client, with the cluster's part: the {n} writes of {len(names)} decisions, their "
            f"pods scheduled and run, in {elapsed:.1f} s: {out['decisions_vs_yardstick_live']}x the "
            f"controller's {out['decided_s']} s")
        out["goals"] = {"decisions_per_s_ge_500": (out.get("controller_decisions_per_s") or 0) >= 500,
                        "freeing_p99_lt_100ms": (out.get("own_latency_p99_ms") or 1e9) < 100,
                        "freeing_controller_time_p99_lt_100ms": (out.get("own_controller_p99_ms") or 1e9) < 100,
                        "freeing_busy_p99_lt_100ms": (out.get("own_busy_p99_ms") or 1e9) < 100}
        if not args.keep_cluster:
            kubectl("delete", "namespace", namespace, "--wait=false", check=False)
        return out


def observe_decisions(rec, names, t_start, timeout):
    last = time.monotonic()
    while True:
        jobs, _ = rec.snapshot()
        decided = [jobs[n]["decided"] for n in names if n in jobs and jobs[n]["decided"] is not None]
        now = time.monotonic()
        if len(decided) == len(names):
            return max(decided)
        if now - t_start > timeout:
            sys.exit(f"only {len(decided)} of {len(names)} jobs were decided within {timeout} s")
        if now - last >= 10:
            last = now
            log(f"  {now - t_start:5.0f} s: {len(decided)}/{len(names)} decided, "
                f"{len(rec.admissions)} admitted")
        time.sleep(0.5)


def decided_figures(rec, names, t_start, t_ready, decided_at, slots):
    jobs, _ = rec.snapshot()
    admitted = sum(1 for n in names if jobs[n].get("admitted"))
    times = sorted(jobs[n]["decided"] - t_start for n in names)
    if admitted != slots:
        log(f"  note: {admitted} jobs admitted at first, not the {slots} that fit")
    return {"decided_s": round(decided_at - t_start, 2),
            "decided_after_ready_s": round(decided_at - t_ready, 2),
            "decided_p50_s": round(pct(times, 50), 2),
            "decisions_per_s": round(len(names) / (decided_at - t_start), 1),
            "admitted_at_decided": admitted, "queued_at_decided": len(names) - admitted}


def observe_freeings(rec, ys, args, n_nodes):
    """Waits for a moment when fewer than a gang's nodes are free, then pairs the pod ends and
    admissions that follow (pair_by_nodes), until --freeings admissions or --window seconds."""
    t0 = last = time.monotonic()
    mark = None
    while True:
        now = time.monotonic()
        with rec.lock:
            a, e = len(rec.admissions), len(rec.ends)
            updates = sum(j["updates"] for j in rec.jobs.values())
        if mark is None:
            free = n_nodes - rec.live_pods()
            with rec.lock:
                if free < args.gang and len(rec.admissions) == a and len(rec.ends) == e:
                    mark, t_mark, updates0 = (a, e, free), now, updates
                    log_mark = os.path.getsize(args.log_path)
                    log(f"  pairing from here: {a} jobs admitted, {e} pods ended, {free} nodes free")
        if mark is not None and a - mark[0] >= args.freeings:
            break
        if now - t0 > args.window:
            log(f"  window of {args.window} s over")
            break
        if now - last >= 20:
            last = now
            log(f"  {now - t0:5.0f} s: {e} pod ends, {a} admissions, {updates} TrainJob updates seen")
        time.sleep(0.5)
    time.sleep(2)  # the yardstick's last pods
    with rec.lock:
        ends = sorted(rec.ends)
        admissions = sorted(t for t, _ in rec.admissions)
        other = dict(rec.other)
        updates = sum(j["updates"] for j in rec.jobs.values())
    if mark is None:
        return {"pod_ends": len(ends), "freeing_pairs": 0}
    raw = pair_by_nodes(ends[mark[1]:], admissions[mark[0]:], mark[2], args.gang)
    ystick = [other[name] - t for name, t in ys.sent.items() if name in other and t >= t_mark]
    ms = lambda v: round(v * 1000, 1) if v == v else None  # noqa: E731
    window = time.monotonic() - t_mark
    res = {"pod_ends": len(ends), "freeing_pairs": len(raw), "yardstick_samples": len(ystick),
           "freeing_to_pod_p50_ms": ms(pct(raw, 50)), "freeing_to_pod_p99_ms": ms(pct(raw, 99)),
           "freeing_to_pod_max_ms": ms(max(raw)) if raw else None,
           "freeing_yardstick_p50_ms": ms(pct(ystick, 50)), "freeing_yardstick_p99_ms": ms(pct(ystick, 99)),
           "freeing_controller_p50_ms": ms(pct(raw, 50) - pct(ystick, 50)),
           "freeing_controller_p99_ms": ms(pct(raw, 99) - pct(ystick, 99)),
           "trainjob_updates_per_s_in_window": round((updates - updates0) / window, 1)}
    res.update(own_latency(args.log_path, log_mark))
    if args.timelines:
        with open(f"{args.timelines}-scale.json", "w") as f:
            json.dump({"mark": mark, "t_mark": t_mark, "ends": ends, "admissions": admissions,
                       "yardstick": ystick}, f)
    log(f"  {len(raw)} admissions paired with the pod end that allowed them: first pod after p50 "
        f"{res['freeing_to_pod_p50_ms']} ms p99 {res['freeing_to_pod_p99_ms']} ms; plain client p50 "
        f"{res['freeing_yardstick_p50_ms']} ms p99 {res['freeing_yardstick_p99_ms']} ms; controller "
        f"p50 {res['freeing_controller_p50_ms']} ms p99 {res['freeing_controller_p99_ms']} ms")
    return res


def log_records(log_path, offset, msg):
    """The JSON lines of the controller's log after offset whose message is msg."""
    with open(log_path, errors="replace") as f:
        f.seek(offset)
        for line in f:
            if f'"{msg}"' not in line:
                continue
            try:
                yield json.loads(line)
            except ValueError:
                continue


def own_latency(log_path, offset):
    """The controller's own account of each admission after offset in its log (one line per
    admitted gang, as its creates go out): from the event that let the gang in to the
    creates, and its three parts, p50 and p99 in ms; of the cycle, its two parts (reading the
    caches, deciding) and the CPU time the controller's thread had in it (the rest of the
    cycle's wall time, other processes of the machine had the CPU); and the CPU time of the
    controller's thread from the event to the creates (its own work in that span, whatever
    it was: the cycle, other events, the plan), p50 and p99; and the time in that span the
    thread was ready to run but other processes had the CPUs (its run-queue wait), and the
    span less that wait: the controller's time, as it would be on a machine of its own."""
    names = {"latencyUs": "own_latency", "waitedForCycleUs": "own_wait_for_cycle",
             "cycleUs": "own_cycle", "waitedForPlanUs": "own_wait_for_plan",
             "cycleSnapshotUs": "own_cycle_snapshot", "cycleDecideUs": "own_cycle_decide",
             "cycleCpuUs": "own_cycle_cpu", "busyUs": "own_busy", "runQueueUs": "own_run_queue",
             "controllerUs": "own_controller"}
    parts = {k: [] for k in names}
    for rec in log_records(log_path, offset, "creating an admitted gang"):
        if "latencyUs" in rec and "runQueueUs" in rec:
            rec["controllerUs"] = rec["latencyUs"] - rec["runQueueUs"]
        for k, v in parts.items():
            if k in rec:
                v.append(rec[k] / 1000)
    out = {"own_latency_samples": len(parts["latencyUs"])}
    for k, v in parts.items():
        name = names[k]
        v.sort()
        out[f"{name}_p50_ms"] = round(pct(v, 50), 1) if v else None
        out[f"{name}_p99_ms"] = round(pct(v, 99), 1) if v else None
    log(f"  the controller's own time from the freeing event to the creates: p50 "
        f"{out['own_latency_p50_ms']} ms p99 {out['own_latency_p99_ms']} ms (waiting for the cycle p99 "
        f"{out['own_wait_for_cycle_p99_ms']} ms, the cycle p99 {out['own_cycle_p99_ms']} ms, waiting for "
        f"the plan p99 {out['own_wait_for_plan_p99_ms']} ms); the cycle read the caches in p99 "
        f"{out['own_cycle_snapshot_p99_ms']} ms, decided in p99 {out['own_cycle_decide_p99_ms']} ms, "
        f"and had p99 {out['own_cycle_cpu_p99_ms']} ms of CPU; the controller's CPU time from the "
        f"event to the creates: p50 {out['own_busy_p50_ms']} ms p99 {out['own_busy_p99_ms']} ms; its "
        f"wait for a CPU in that span p50 {out['own_run_queue_p50_ms']} ms p99 {out['own_run_queue_p99_ms']} "
        f"ms; the span less that wait (the controller's time): p50 {out['own_controller_p50_ms']} ms p99 "
        f"{out['own_controller_p99_ms']} ms")
    return out


# ---- clusters ----


def cluster_env(name, gh200):
    env = dict(os.environ, TJC_CLUSTER=name)
    env.setdefault("TJC_GH200_NODES", str(gh200))
    env.setdefault("TJC_H100_NODES", "0")
    env.setdefault("TJC_CPU_NODES", "1")
    # No real nodes: every job wants GPUs, which they lack, and they would only load the machine.
    env.setdefault("TJC_REAL_NODES", "0")
    # kube-controller-manager's node lifecycle controller takes each new node's not-ready
    # taint off at its client's default limits (20 QPS), about 4.5 nodes a second: 7.5
    # minutes for 2,000 nodes. Raised, as in bench_scale.py, the nodes are schedulable about as
    # soon as KWOK makes them Ready. Nothing measured here goes through
    # kube-controller-manager (Kueue's Workloads are Kueue's, the pods the controller's).
    env.setdefault("TJC_KCM_FLAGS", "--kube-api-qps=1000 --kube-api-burst=2000")
    return env


class cluster:
    """The cluster of env: started if it does not run (and stopped on leaving, unless
    --keep-cluster); yields a plain client for it."""

    def __init__(self, args, env):
        self.args, self.env = args, env

    def __enter__(self):
        env = self.env
        self.started = subprocess.run([CLUSTER_SH, "status"], env=env, capture_output=True).returncode != 0
        if self.started:
            log(f"starting cluster {env['TJC_CLUSTER']} ({env['TJC_GH200_NODES']} GH200 nodes)")
            subprocess.run([CLUSTER_SH, "up"], env=env, check=True, stdout=sys.stderr)
        kubeconfig = subprocess.run([CLUSTER_SH, "kubeconfig"], env=env, capture_output=True,
                                    text=True, check=True).stdout.strip()
        os.environ["KUBECONFIG"] = self.args.kubeconfig = kubeconfig
        return Api()

    def __exit__(self, *exc):
        if self.started and not self.args.keep_cluster:
            log(f"stopping cluster {self.env['TJC_CLUSTER']}")
            subprocess.run([CLUSTER_SH, "down"], env=self.env, stdout=sys.stderr)
        return False


def wait_for_quiet(args):
    """Waits (up to --quiet-wait seconds) until the 1-minute load average is under --max-load:
    the machine is shared, and a run under another's heavy load measures that load."""
    deadline = time.monotonic() + args.quiet_wait
    while os.getloadavg()[0] > args.max_load and time.monotonic() < deadline:
        log(f"  load average {os.getloadavg()[0]:.1f} > {args.max_load}: waiting")
        time.sleep(30)


# ---- self-test ----


def self_test():
    def pod(job, rank, bound, running, ended, unsched=None, gpus=4):
        return {"job": job, "rank": rank, "gpus": gpus, "bound": bound, "running": running,
                "unschedulable": unsched, "ended": ended}

    # A gang's release: its last create to its last pod bound; a gang with a pod never bound
    # does not count.
    r = release_figures([{"job": "a", "attempt": 0, "created": 1.0, "bound": 1.5},
                         {"job": "a", "attempt": 0, "created": 1.25, "bound": 1.5},
                         {"job": "a", "attempt": 1, "created": 5.0, "bound": None},
                         {"job": "a", "attempt": 1, "created": 5.0, "bound": 5.1},
                         {"job": "b", "attempt": 0, "created": 2.0, "bound": 2.125}])
    assert (r["release_gangs"], r["release_gang_median_s"], r["release_singles"],
            r["release_single_median_s"]) == (1, 0.25, 1, 0.125), r

    # --backlog: a job created before the controller started waits from its start.
    backlog = {"a": {"created": 3.0}, "b": {"created": 10.5}}
    queued_from(backlog, 10.0)
    assert backlog == {"a": {"created": 10.0}, "b": {"created": 10.5}}, backlog

    def close(a, b):
        assert abs(a - b) < 1e-9, (a, b)

    # A whole gang: bound at 0, Running at 1, ended at 11: 1 s of skew per pod.
    f = job_figures(2, [pod("a", 0, 0, 1, 11), pod("a", 1, 0, 1, 11)], 100)
    close(f["partial"], 8)
    close(f["split"], 0)
    close(f["busy"], 80)
    close(f["useful"], 80)
    assert f["whole_at"] == 1 and f["first_running"] == 1
    # Ranks ending half a second apart: the tail is partial, not split.
    f = job_figures(2, [pod("a", 0, 0, 0, 10), pod("a", 1, 0, 0, 10.5)], 100)
    close(f["partial"], 2)
    close(f["split"], 0)
    close(f["useful"], 80)
    # A split gang: rank 0 Running from 0 until deleted at 30, rank 1 Unschedulable from 1.
    f = job_figures(2, [pod("b", 0, 0, 0, 30), pod("b", 1, None, None, 30, unsched=1)], 100)
    close(f["partial"], 120)
    close(f["split"], 116)
    close(f["busy"], 120)
    close(f["useful"], 0)
    assert f["whole_at"] is None
    # Rank 1 unschedulable until it is bound at 5: split only while it waited.
    f = job_figures(2, [pod("c", 0, 0, 0, 20), pod("c", 1, 5, 5, 20, unsched=1)], 100)
    close(f["split"], 16)
    close(f["partial"], 20)
    close(f["useful"], 120)
    # A pod still running at the end of observation counts until then.
    f = job_figures(1, [pod("d", 0, 0, 0, None)], 50)
    close(f["busy"], 200)
    close(f["partial"], 0)
    # Two pods of one rank (a restart): the gang is whole whenever the rank has one Running.
    f = job_figures(1, [pod("e", 0, 0, 0, 10), pod("e", 0, 10, 10, 20)], 100)
    close(f["partial"], 0)
    close(f["useful"], 80)

    # The report of a way: job a whole, job b split and failed by its deadline, job c never ran.
    jobs = {"a": {"nodes": 2, "created": 0, "ended": 11, "state": "Complete", "reason": "Succeeded"},
            "b": {"nodes": 2, "created": 0, "ended": 30, "state": "Failed", "reason": "DeadlineExceeded"},
            "c": {"nodes": 1, "created": 2, "ended": 40, "state": "Failed", "reason": "DeadlineExceeded"}}
    pods = [pod("a", 0, 0, 1, 11), pod("a", 1, 0, 1, 11), pod("b", 0, 0, 0, 30),
            pod("b", 1, None, None, 30, unsched=1), pod("c", 0, None, None, 40, unsched=2)]
    r = trace_figures(jobs, pods, 16, 0, 50)
    assert r["finished"] and r["makespan_s"] == 40, r
    assert r["partial_gang_gpu_s"] == 128 and r["partial_split_gpu_s"] == 116 and r["partial_other_gpu_s"] == 12, r
    assert r["busy_gpu_s"] == 200 and r["useful_gpu_s"] == 80 and r["complete_useful_gpu_s"] == 80, r
    close(r["utilisation"], round(200 / (16 * 40), 4))
    assert r["wait_mean_s"] == 0.5 and r["never_ran"] == 1 and r["never_whole"] == 2, r
    assert r["split_jobs"] == 1 and r["complete"] == 1 and r["failed"] == 2 and r["deadline_exceeded"] == 2, r
    # Unfinished: the makespan runs to the end of observation.
    jobs["c"]["ended"] = None
    assert trace_figures(jobs, pods, 16, 0, 50)["makespan_s"] == 50

    # Shares 2:1:1. Namespace a drains at 30 (its last job admitted then), b and c never:
    # the busy period is 0 to 30, and what runs after it does not count.
    def job(ns, nodes, admitted, ended=None, qos=None, state=None, preemptions=0):
        return {"namespace": ns, "qos": qos, "nodes": nodes, "created": 0, "admitted": admitted,
                "ended": ended, "state": state, "reason": None, "preemptions": preemptions}

    shares = {"a": 2, "b": 1, "c": 1}
    jobs = {"a1": job("a", 2, 0, 40), "a2": job("a", 1, 30, 60), "b1": job("b", 1, 0, 30),
            "b2": job("b", 1, None), "c1": job("c", 1, 10, 50), "c2": job("c", 1, None)}
    pods = [pod("a1", 0, 0, 0, 40), pod("a1", 1, 0, 0, 40), pod("a2", 0, 30, 31, 60),
            pod("b1", 0, 0, 0, 30), pod("c1", 0, 10, 10, 50)]
    assert busy_period_end(jobs, 100) == 30
    close(busy_by(jobs, pods, lambda j: j["namespace"], 30)["a"], 240)
    r = share_figures(jobs, pods, shares, 0, 100)
    assert r["busy_period_s"] == 30 and r["share_gpu_s"] == {"a": 240, "b": 120, "c": 80}, r
    assert r["share_parts"] == {"a": round(6 / 11, 4), "b": round(3 / 11, 4), "c": round(2 / 11, 4)}, r
    assert r["share_targets"] == {"a": 0.5, "b": 0.25, "c": 0.25}, r
    assert r["share_errors"] == {"a": round(1 / 11, 4), "b": round(1 / 11, 4), "c": round(3 / 11, 4)}, r
    assert r["share_error_max"] == round(3 / 11, 4), r
    # A namespace whose jobs all ran or ended without running has drained; one whose job
    # still waits has not; the end of observation bounds the period.
    assert busy_period_end({"x": job("n1", 1, None, 5), "y": job("n1", 1, 7)}, 100) == 7
    assert busy_period_end({"x": job("n1", 1, 7), "y": job("n2", 1, None)}, 100) == 7
    assert busy_period_end({"x": job("n2", 1, None), "y": job("n2", 1, 3)}, 100) == 100
    assert busy_period_end({"x": job("n1", 1, 200)}, 100) == 100
    # Exactly the shares, each namespace with a job still waiting at the end: no gap.
    assert share_figures({"a1": job("a", 2, 0), "b1": job("b", 1, 0), "c1": job("c", 1, 0),
                          "a2": job("a", 1, None), "b2": job("b", 1, None), "c2": job("c", 1, None)},
                         [pod("a1", 0, 0, 0, None), pod("a1", 1, 0, 0, None), pod("b1", 0, 0, 0, None),
                          pod("c1", 0, 0, 0, None)], shares, 0, 10)["share_error_max"] == 0

    # Scavengers on 12 GPUs: normal n1 runs 2..50, n2 10..40; low l1 runs 0..10, is
    # preempted, and runs again 20..70 (a new pod of the same name: a record of its own).
    # The window is the normal jobs' makespan, 0..50: l1's GPU-seconds after 50 do not count.
    jobs = {"n1": job("ns", 1, 1, 50, "normal", "Complete"), "n2": job("ns", 1, 9, 40, None, "Complete"),
            "l1": job("low-ns", 1, 0, 70, "low", "Complete", preemptions=1)}
    pods = [pod("n1", 0, 1, 2, 50), pod("n2", 0, 9, 10, 40), dict(pod("l1", 0, 0, 0, 10), phase="Deleted"),
            pod("l1", 0, 19, 20, 70)]
    r = scavenger_figures(jobs, pods, 12, 0, 80)
    assert r["jobs"] == 2 and r["finished"] and r["makespan_s"] == 50 and r["wait_mean_s"] == 6, r
    assert r["busy_gpu_s"] == 312 and r["scavenger_busy_gpu_s"] == 160 and r["scavenger_jobs"] == 1, r
    close(r["utilisation"], round(312 / 600, 4))
    close(r["utilisation_with_scavengers"], round(472 / 600, 4))
    assert r["preemptions"] == 1 and r["status_preemptions"] == 1 and r["normal_preemptions"] == 0, r
    assert r["scavengers_left_at_end"] == 1, r
    # A stop the status does not count still shows in the timeline; a pod deleted with its
    # ended job is no stop.
    jobs["l1"]["preemptions"] = 0
    pods.append(dict(pod("l1", 0, 69, 69, 70), phase="Deleted"))
    r = scavenger_figures(jobs, pods, 12, 0, 80)
    assert r["preemptions"] == 1 and r["status_preemptions"] == 0, r

    # The idle GPU-seconds of two nodes over 0..30: n0 idles 0..2 (ramp), 10..11 (a turnover),
    # 15..25 (held) and 28..30 (tail); n1 half-used 5..30 (ramp 0..5, then 2 GPUs held); a
    # third node (12 GPUs in all) never used.
    pods = [dict(pod("a", 0, 2, 2, 10), node="n0"), dict(pod("b", 0, 11, 11, 15), node="n0"),
            dict(pod("c", 0, 25, 25, 28), node="n0"), dict(pod("d", 0, 5, 5, None), node="n1", gpus=2)]
    r = idle_figures(pods, 12, 0, 30)
    assert r == {"idle_ramp_gpu_s": 8 + 20, "idle_turnover_gpu_s": 4, "idle_held_gpu_s": 40 + 50,
                 "idle_tail_gpu_s": 8, "idle_unused_gpu_s": 120}, r

    # The comparison of the ways and their goals.
    base = {"partial_split_gpu_s": 0, "utilisation": 0.9, "wait_mean_s": 100.0}
    s_ = summary({"backfill": base, "shares": dict(base, utilisation=0.91, share_error_max=0.08),
                  "scavenger": dict(base, utilisation_with_scavengers=0.975, wait_mean_s=112.0,
                                    preemptions=7, grace_s=10)})
    assert s_["share_error_max"] == 0.08 and s_["utilisation_shares"] == 0.91, s_
    assert s_["utilisation_scavenger"] == 0.975 and s_["preemptions"] == 7 and s_["grace_s"] == 10, s_
    assert s_["normal_wait_mean_backfill"] == 100 and s_["normal_wait_mean_scavenger"] == 112, s_
    assert s_["normal_wait_growth_s"] == 12, s_
    g = s_["goals"]
    assert g["shares_within_10pct"] and g["shares_utilisation_ge_90_7"] and g["shares_utilisation_ge_backfill"], g
    assert g["scavenger_utilisation_ge_97"] and not g["scavenger_wait_growth_le_grace"], g
    assert g["backfill_utilisation_ge_90"] and "backfill_above_fifo" not in g, g
    # Without the backfill way the wait has nothing to be set beside.
    s_ = summary({"scavenger": dict(base, utilisation_with_scavengers=0.9, preemptions=0, grace_s=10)})
    assert "normal_wait_growth_s" not in s_ and not s_["goals"]["scavenger_utilisation_ge_97"], s_

    # The live yardstick's copies: what the API server set, the owner, the node and the gate
    # go; a headless Service stays headless; the decisions' second round writes anew.
    owned = {"kind": "Pod", "metadata": {"name": "j-node-0-0-a0", "namespace": "ns", "uid": "u",
                                         "resourceVersion": "7", "labels": {TRAINJOB_LABEL: "j"},
                                         "ownerReferences": [{"kind": "TrainJob", "name": "j"}]},
             "spec": {"nodeName": "gh200-1", "schedulingGates": [{"name": "g"}], "priority": 0,
                      "preemptionPolicy": "PreemptLowerPriority", "containers": [
                          {"name": "node", "volumeMounts": [{"name": "kube-api-access-x"}, {"name": "d"}]}],
                      "volumes": [{"name": "kube-api-access-x"}, {"name": "d"}]},
             "status": {"phase": "Running"}}
    p = as_new(owned)
    assert p["metadata"] == {"name": "j-node-0-0-a0", "namespace": "ns", "annotations": {},
                             "labels": {TRAINJOB_LABEL: "j", YARDSTICK_LABEL: "true"}}
    assert "status" not in p and set(p["spec"]) == {"containers", "volumes"}
    assert p["spec"]["volumes"] == [{"name": "d"}] and p["spec"]["containers"][0]["volumeMounts"] == [{"name": "d"}]
    assert owned["spec"]["nodeName"] == "gh200-1"  # a copy, not the original
    svc = {"kind": "Service", "metadata": {"name": "j", "namespace": "ns"},
           "spec": {"clusterIP": "None", "clusterIPs": ["None"]}}
    assert as_new(svc)["spec"] == svc["spec"]
    svc["spec"] = {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "ports": []}
    assert as_new(svc)["spec"] == {"ports": []}
    first, second = decision_writes("ns", ["j"], 0), decision_writes("ns", ["j"], 0, tag="yardstick-live")
    assert len(first) == len(second) == 2 and first[0][2] != second[0][2] and first[1][2] != second[1][2]
    assert len(decision_writes("ns", ["j"], 3)) == 5
    # The trace: deterministic, in bounds, every run shorter than its walltime by 5 s.
    t = make_trace(300, 7)
    assert t == make_trace(300, 7) and t != make_trace(300, 8)
    assert all(1 <= n <= 8 and 20 <= w <= 120 and 5 <= r <= w - 5 for n, w, r in t)
    assert {n for n, _, _ in t} == set(range(1, 9))
    tj = trainjob("ns", "adm-0001", *t[0])
    assert tj["spec"]["activeDeadlineSeconds"] == t[0][1]
    assert tj["spec"]["podTemplateOverrides"][0]["metadata"]["annotations"][RUN_TIME] == f"{t[0][2]}s"
    assert "annotations" not in tj["metadata"] and tj["spec"]["runtimeRef"] == {"name": RUNTIME}
    # The ways' TrainJobs: dealt in turn to the namespaces of the shares; the trace at the
    # tier normal and the scavengers at low, of their namespace's runtime.
    a = argparse.Namespace(scavengers=5, seed=7, checkpoint=0)
    sent, names = way_jobs(a, "shares", t[:7], "ns")
    assert names == [f"adm-{i:04d}" for i in range(7)] and [j["metadata"]["name"] for j in sent] == names
    assert [j["metadata"]["namespace"] for j in sent] == [*SHARES, *SHARES, "bench-share-a"]
    sent, names = way_jobs(a, "scavenger", t[:7], "ns")
    assert len(names) == 7 and len(sent) == 12
    assert [(j["metadata"]["namespace"], j["metadata"]["annotations"][QOS]) for j in sent] == \
        [("ns", "normal")] * 7 + [(SCAVENGER_NAMESPACE, "low")] * 5
    assert all(j["spec"]["runtimeRef"]["kind"] == "TrainingRuntime" for j in sent[7:])
    assert all(CHECKPOINT_TIME not in j["spec"]["podTemplateOverrides"][0]["metadata"]["annotations"]
               for j in sent)
    assert "qos" not in way_admission(a, "scavenger")
    # With --checkpoint, the low jobs' pods save their state and exit on the notice, and the
    # tier low backfills onto reserved nodes; the normal jobs and the other tiers as shipped.
    c = argparse.Namespace(scavengers=5, seed=7, checkpoint=2)
    sent, _ = way_jobs(c, "scavenger", t[:7], "ns")
    ann = [j["spec"]["podTemplateOverrides"][0]["metadata"]["annotations"] for j in sent]
    assert [x.get(CHECKPOINT_TIME) for x in ann] == [None] * 7 + ["2s"] * 5, ann
    tiers = {q["name"]: q for q in way_admission(c, "scavenger")["qos"]}
    assert tiers["low"]["backfillReservedNodes"] is True and tiers["low"]["priority"] == -1000, tiers
    assert not any("backfillReservedNodes" in q for n, q in tiers.items() if n != "low"), tiers
    assert way_admission(c, "backfill") == WAYS["backfill"]
    sent, _ = way_jobs(a, "backfill", t[:7], "ns")
    assert [j["metadata"]["namespace"] for j in sent] == ["ns"] * 7 and sent[0] == trainjob("ns", "adm-0000", *t[0])
    # The scavengers: their own draws, 1 node, runs of 5 s less than 20 to 60 s walltimes.
    low = make_scavengers(200, 7)
    assert low == make_scavengers(200, 7) and low != make_scavengers(200, 8) and low[:5] != t[:5]
    assert all(n == 1 and 20 <= w <= 60 and r == w - 5 for n, w, r in low)
    assert {w for _, w, _ in low} >= {20, 60}
    tj = trainjob(SCAVENGER_NAMESPACE, "low-0001", *low[0], qos="low", runtime_kind="TrainingRuntime")
    assert tj["metadata"]["annotations"] == {QOS: "low"}, tj
    assert tj["spec"]["runtimeRef"] == {"name": RUNTIME, "kind": "TrainingRuntime",
                                        "apiGroup": "trainer.kubeflow.org"}, tj

    # Gangs of 2 nodes, 1 node free at the mark: the 1st end admits the 1st job, the 3rd end
    # the 2nd; the 3rd admission waits for a 5th end that has not come.
    lat = pair_by_nodes([1.0, 2.0, 3.0, 4.0], [1.1, 3.05, 9.0], 1, 2)
    assert [round(x, 3) for x in lat] == [0.1, 0.05], lat
    assert [round(x, 3) for x in pair_by_nodes([5.0], [5.2], 0, 1)] == [0.2]
    assert pct([1, 2, 3, 4], 50) == 2 and pct(list(range(1, 101)), 99) == 99 and pct([5], 99) == 5

    # The configs: the admission section replaced, the classes kept.
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for way, section in WAYS.items():
            with open(write_config(os.path.join(d, f"{way}.yaml"), section)) as f:
                cfg = yaml.safe_load(f)
            assert all(cfg["admission"][k] == v for k, v in section.items()), cfg["admission"]
            assert [c["name"] for c in cfg["gpuClasses"]] == ["gh200", "h100"]
            # The shipped tiers stay: normal preempts low.
            assert {q["name"]: q.get("preempts") for q in cfg["admission"]["qos"]}["normal"] == ["low"]
            spaces = {e["namespace"]: e.get("share", 1) for e in cfg["admission"]["namespaces"]}
            assert spaces == ({"*": 1, **SHARES} if way == "shares" else {"*": 1}), spaces
        # The controller's own account: only its gang lines after the offset; the span less
        # its run-queue wait is the controller's time.
        log_path = os.path.join(d, "controller.log")
        lines = [{"msg": "creating an admitted gang", "latencyUs": 900000, "runQueueUs": 800000},
                 {"msg": "decided the queue", "latencyUs": 1},
                 {"msg": "creating an admitted gang", "latencyUs": 150000, "runQueueUs": 100000,
                  "busyUs": 20000},
                 "not JSON \"creating an admitted gang\""]
        with open(log_path, "w") as f:
            f.write('{"msg": "creating an admitted gang", "latencyUs": 5}\n')
            offset = f.tell()
            f.writelines((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines)
        o = own_latency(log_path, offset)
        assert o["own_latency_samples"] == 2 and o["own_latency_p99_ms"] == 900, o
        assert o["own_run_queue_p50_ms"] == 100 and o["own_controller_p50_ms"] == 50, o
        assert o["own_controller_p99_ms"] == 100 and o["own_busy_p99_ms"] == 20, o
    print("self-test passed")


def add_run_arguments(ap, nodes_help):
    """The options of the trace's timeout and of the scale run's jobs, which
    bench_vs_kueue.py shares."""
    ap.add_argument("--timeout", type=float, default=0,
                    help="seconds per trace way (default: 1.8 x the trace's work / capacity + 300)")
    ap.add_argument("--scale-jobs", type=int, default=5000)
    ap.add_argument("--nodes", type=int, default=2000, help=nodes_help)
    ap.add_argument("--gang", type=int, default=4, help="nodes per job of the scale run")
    ap.add_argument("--run-min", type=int, default=90, help="shortest run of a scale job, s")
    ap.add_argument("--run-max", type=int, default=300, help="longest run of a scale job, s")


def add_cluster_arguments(ap):
    """The options of the client, the clusters and the machine's load, which
    bench_vs_kueue.py shares."""
    ap.add_argument("--connections", type=int, default=32, help="connections of the plain client")
    ap.add_argument("--keep-cluster", action="store_true", help="leave a cluster it started running")
    ap.add_argument("--max-load", type=float, default=6.0, help="wait before each run while the load is above")
    ap.add_argument("--quiet-wait", type=float, default=120, help="most seconds to wait for that")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", nargs="?", default="all", choices=("all", "trace", "scale"))
    ap.add_argument("--self-test", action="store_true", help="check the metrics on synthetic timelines")
    ap.add_argument("--jobs", type=int, default=150, help="TrainJobs of the trace")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ways", default="scheduler,fifo,backfill",
                    help="of " + ",".join(WAYS) + " (the scavenger way's wait is set beside backfill's)")
    ap.add_argument("--scavengers", type=int, default=0,
                    help="low jobs of the scavenger way (default: twice --jobs)")
    ap.add_argument("--grace", type=int, default=10,
                    help="terminationGracePeriodSeconds of the low jobs' pods, s")
    ap.add_argument("--checkpoint", type=float, default=0,
                    help="seconds the low jobs' pods take to save their state and exit once told of a "
                         "preemption, with backfillReservedNodes on the tier low (default 0: they run "
                         "until their grace ends)")
    add_run_arguments(ap, "GH200 nodes of the scale cluster")
    ap.add_argument("--freeings", type=int, default=300, help="freeing-to-admission pairs to time")
    ap.add_argument("--window", type=float, default=420, help="most seconds to wait for them")
    ap.add_argument("--decide-timeout", type=float, default=600)
    ap.add_argument("--trace-cluster", default="bench-admission")
    ap.add_argument("--scale-cluster", default="bench-admission-scale")
    ap.add_argument("--backlog", action="store_true",
                    help="create each way's TrainJobs (one by one, in the trace's order) before its controller "
                         "starts, so that its first cycle decides the whole queue; the clock and the waits "
                         "start with the controller")
    ap.add_argument("--timelines", metavar="PREFIX",
                    help="write each trace way's timelines to PREFIX-<way>.json")
    add_cluster_arguments(ap)
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    unknown = set(args.ways.split(",")) - set(WAYS)
    if unknown:
        ap.error(f"unknown ways {','.join(sorted(unknown))}: the ways are {','.join(WAYS)}")
    args.scavengers = args.scavengers or 2 * args.jobs
    build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
    args.binary = os.path.join(build, "trainjob-controller")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no controller at {args.binary}: ninja -C {build} trainjob-controller")
    # One log per cluster, so that runs of the ways on clusters of their own (--ways and
    # --trace-cluster) can go side by side.
    cluster = args.scale_cluster if args.part == "scale" else args.trace_cluster
    args.log_path = os.path.join(REPO, "build", f"{cluster}-controller.log")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.part in ("all", "trace"):
        out["trace"] = run_trace(args)
    if args.part in ("all", "scale"):
        out["scale"] = run_scale(args)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
