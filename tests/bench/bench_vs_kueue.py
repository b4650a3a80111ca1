#!/usr/bin/env python3
"""Side by side with Kueue: the queue of this controller (gang admission with walltime
backfill) and Kueue's ClusterQueue in both of its queueing strategies, on the same KWOK nodes
with the same jobs: the seeded trace of bench_admission.py, and a backlog at scale.

  tests/bench/bench_vs_kueue.py [all|trace|scale] [--jobs 300] [--seed 1] [--ways ours,kueue-strict,kueue-besteffort]
  tests/bench/bench_vs_kueue.py scale [--scale-jobs 5000] [--nodes 2000] [--gang 4]
  tests/bench/bench_vs_kueue.py --quick       # a small trace and a small backlog, one cluster, < 10 minutes
  tests/bench/bench_vs_kueue.py --self-test   # the figures on made-up data; no cluster

The ways:

  ours              this controller's admission with backfill (bench_admission.py's backfill
                    way), on a cluster without Kueue;
  kueue-strict      Kueue (v0.17.0, the version deploy/local/kueue.sh builds, with its
                    waitForPodsReady: timeout 30 s, requeue backoff 5 s doubling to 60 s)
                    admits, through a ResourceFlavor of the GPU class's nodes, a ClusterQueue
                    whose nominal quota is the class's GPUs (cpu and memory far above what the
                    nodes have), queueingStrategy StrictFIFO, and a LocalQueue in the job's
                    namespace; this controller, started with --kueue as Kueue's integration
                    runs it (tests/e2e/test_kueue.py), runs the jobs Kueue admits;
  kueue-besteffort  the same with queueingStrategy BestEffortFIFO.

Every way has a cluster of its own (TJC_CLUSTER=<--cluster-prefix>-<way>), started here and
stopped at the end; with --one-cluster (which --quick implies) the ways run one after the
other on one cluster with Kueue, where the jobs of the way ours carry no queue name and
Kueue's webhooks and queues never see them. With --parallel (the trace part only) every
way's cluster runs at once, a child process each, and the parent merges their figures: the
same load on each way and a third of the time, for figures (seconds of waiting on runs of 20
to 120 s) that two busy cores move far less than the ways differ. The jobs are the same in
every way: TrainJobs of bench_admission.py (trainjob), with their pods' run time in a runtimePatches entry rather
than podTemplateOverrides (Kueue updates a TrainJob with Kubeflow's Go types of v2.2, which
have no podTemplateOverrides, and the update would drop them), and for Kueue the label
kueue.x-k8s.io/queue-name.

The trace (32 GH200 nodes of 4 GPUs; the trace of bench_admission.py, --jobs of --seed): each
way creates every TrainJob at once and watches pods, TrainJobs and (under Kueue) Workloads
until every job has ended, with bench_admission.py's Recorder; the figures are its
trace_figures: makespan, utilisation (busy GPU-seconds / capacity x makespan), mean and p95
wait (from the TrainJob's ADDED event to its first pod Running), partial-gang GPU-seconds (and
of them "split", held while another rank of the job was Unschedulable), jobs Complete and
DeadlineExceeded; the same waits for the widest jobs alone (7 or 8 nodes, the top quarter of
the trace's sizes, which a greedy queue starves); the Workloads Kueue evicted (waitForPodsReady)
and Kueue's CPU time and peak RSS beside the controller's.

The scale part (--nodes H100 nodes of 8 GPUs, added to the way's cluster after the trace;
--scale-jobs TrainJobs of --gang nodes x 8 GPUs, walltime 1,800 s, runs of --run-min to
--run-max s): nodes / gang of them fit at once (the slots), the rest queue.

  - ours: the backlog is created before the controller starts, as in bench_admission.py's
    scale part; the clock runs from the controller's start, its start and list included;
  - Kueue: the backlog is created while the ClusterQueue is held (stopPolicy Hold), the clock
    starting once Kueue has made a Workload of every job and this controller has settled on
    them; the ClusterQueue is then let go (stopPolicy None). Kueue's cold start and the
    creation of its Workloads are outside the clock, this controller's inside it: a clock that
    favours Kueue.

  Its figures: admissions per second, the slots / the time from the clock's start until the
  slots-th job's first pod exists (the same event for every way: an admitted job whose pods
  are being created), and beside it the queue's own decisions (queue_admissions_per_s: ours,
  the slots-th "admitted a gang" line of its log; Kueue, the slots-th Workload with
  QuotaReserved, from a watch of the Workloads); under Kueue, where an admitted job's time
  goes: from its quota reservation to Kueue's update that resumes the TrainJob
  (spec.suspend false, from a watch of the TrainJobs), and from that to its first pod;
  the time until every job is admitted or shows its place (ours: Queued with a queuePosition
  in its status; Kueue: its Workload admitted, or marked Pending by Kueue's scheduler after
  the clock's start; a StrictFIFO queue never marks those behind its head, and the figure is
  then the count by the end: --decide-timeout, or --idle seconds without a new decision once
  the slots are full); the controller's CPU time and peak RSS from its start, Kueue's over
  the part (its peak reset, clear_refs, before the backlog's creates).

The final line on stdout is one JSON object with every figure, the headline figures
(utilisation_ours, utilisation_kueue: StrictFIFO, utilisation_kueue_besteffort,
admissions_per_s_ours, admissions_per_s_kueue: StrictFIFO, admissions_per_s_kueue_besteffort),
the ratios, and the goals: on the trace, utilisation above StrictFIFO's and no more than a
point below BestEffortFIFO's, the widest jobs' p95 wait below BestEffortFIFO's, the mean wait
below both, no split gang; at scale, admissions per second at least 10x Kueue's.

--quick: a trace of 8 jobs, 200 jobs on 80 H100 nodes, one cluster (bench-vs-kueue by
default), decide timeout 45 s, idle 10 s: the pieces work together, in under 10 minutes; its
figures are too small to judge the goals by. The controller is build/release/trainjob-controller
(TJC_BUILD_DIR overrides the folder), its log build/<cluster>-controller.log; Kueue's log is
~/.cache/trainjob-controller/kueue/<cluster>/kueue.log."""

import argparse
import calendar
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_admission import (  # noqa: E402
    GPUS_PER_NODE, WAYS as ADMISSION_WAYS, Recorder, Watch, add_cluster_arguments, add_run_arguments, cluster,
    cluster_env, gpu_capacity, log_records, make_trace, observe_trace, pct, trace_figures, trainjob, wait_for_quiet,
    wait_schedulable, write_config)
from bench_expansion import (  # noqa: E402
    CLUSTER_SH, REPO, TJ_API, Controller, cpu_seconds, delete_everything, kubectl, log, peak_rss_mib, setup)
from bench_vs_kubeflow import as_runtime_patch, reset_peak, shell_env  # noqa: E402

# way: Kueue's queueingStrategy (None: this controller's admission)
WAYS = {"ours": None, "kueue-strict": "StrictFIFO", "kueue-besteffort": "BestEffortFIFO"}
# class: node product, GPUs per node, runtime
CLASSES = {"gh200": ("NVIDIA-GH200-480GB", GPUS_PER_NODE, "torch-gh200"),
           "h100": ("NVIDIA-H100-80GB-HBM3", 8, "torch-h100")}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_API = "kueue.x-k8s.io/v1beta2"
WIDE_NODES = 7  # the widest jobs: 7 or 8 nodes, a quarter of the trace's sizes
TRACE_NAMESPACE = "bench-vs-kueue"
SCALE_NAMESPACE = "bench-vs-kueue-scale"
QUICK = {"jobs": 8, "scale_jobs": 200, "nodes": 80, "decide_timeout": 45, "idle": 10, "one_cluster": True}


# ---- the jobs and Kueue's objects ----


def bench_job(namespace, name, nodes, walltime, run, queue=None, cls="gh200"):
    """bench_admission.py's TrainJob on the runtime of cls (a whole node each), its run time
    in a runtimePatches entry; with queue, Kueue's to admit through that LocalQueue."""
    _, gpus, runtime = CLASSES[cls]
    tj = trainjob(namespace, name, nodes, walltime, run)
    tj["spec"]["runtimeRef"]["name"] = runtime
    tj["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] = str(gpus)
    tj = as_runtime_patch(tj)
    if queue:
        tj["metadata"]["labels"][QUEUE_LABEL] = queue
    return tj


def queue_objects(namespace, cls, strategy, gpus, hold):
    """A ResourceFlavor of the class's nodes, a ClusterQueue of its GPUs in strategy (held,
    stopPolicy Hold, if hold), and the LocalQueue of namespace on it, each named bench-<cls>."""
    name = f"bench-{cls}"
    product = CLASSES[cls][0]
    flavor = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": name},
              "spec": {"nodeLabels": {"nvidia.com/gpu.product": product}}}
    cq = {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": {"name": name},
          "spec": {"queueingStrategy": strategy, "namespaceSelector": {},
                   "stopPolicy": "Hold" if hold else "None",
                   "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [
                       {"name": name, "resources": [{"name": "cpu", "nominalQuota": "100000"},
                                                    {"name": "memory", "nominalQuota": "1000Ti"},
                                                    {"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}}
    lq = {"apiVersion": KUEUE_API, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
          "spec": {"clusterQueue": name}}
    return [flavor, cq, lq]


def apply_queue(namespace, cls, strategy, gpus, hold=False):
    """Kueue's objects for the class, the ClusterQueue made afresh (a shared cluster's earlier
    way may have left it in another strategy); returns the LocalQueue's name."""
    objs = queue_objects(namespace, cls, strategy, gpus, hold)
    for kind, obj in (("localqueue", objs[2]), ("clusterqueue", objs[1])):
        kubectl("delete", kind, obj["metadata"]["name"], *(["-n", namespace] if kind == "localqueue" else []),
                "--ignore-not-found", "--timeout=120s")
    kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))
    if not hold:
        wait_active(cls)
    return objs[2]["metadata"]["name"]


def release_queue(cls):
    kubectl("patch", "clusterqueue", f"bench-{cls}", "--type", "merge", "-p", '{"spec":{"stopPolicy":"None"}}')


def wait_active(cls, timeout=60):
    """Waits until Kueue reports the class's ClusterQueue Active."""
    deadline = time.monotonic() + timeout
    while True:
        cq = json.loads(kubectl("get", "clusterqueue", f"bench-{cls}", "-o", "json").stdout)
        conds = (cq.get("status") or {}).get("conditions") or []
        if any(c["type"] == "Active" and c["status"] == "True" for c in conds):
            return
        if time.monotonic() > deadline:
            sys.exit(f"the ClusterQueue bench-{cls} was not Active within {timeout} s: {cq.get('status')}")
        time.sleep(0.5)


# ---- Kueue's Workloads ----


def workload_state(wl):
    """(TrainJob name, QuotaReserved status, its reason, the Evicted condition's transition
    time if it is True) of a Workload. Kueue's scheduler marks a Workload of a held
    ClusterQueue Pending too, with the message that the queue is inactive: that reason is
    given as Inactive, as it says nothing of the job's place."""
    job = next((o["name"] for o in wl["metadata"].get("ownerReferences") or [] if o.get("kind") == "TrainJob"), None)
    conds = {c["type"]: c for c in (wl.get("status") or {}).get("conditions") or []}
    qr = conds.get("QuotaReserved") or {}
    ev = conds.get("Evicted") or {}
    reason = "Inactive" if " is inactive" in (qr.get("message") or "") else qr.get("reason")
    return job, qr.get("status"), reason, ev.get("lastTransitionTime") if ev.get("status") == "True" else None


class Workloads:
    """The states of the Workloads of a namespace as a watch saw them (events: job -> [(t,
    state)]), and when a watch of its TrainJobs first saw each of them not suspended
    (resumed: job -> t): the moment Kueue's update let the job start."""

    def __init__(self, api, namespace):
        self.lock = threading.Lock()
        self.events, self.resumed = {}, {}
        self.watches = [Watch(api, f"/apis/{KUEUE_API}/namespaces/{namespace}/workloads", self._event),
                        Watch(api, f"{TJ_API}/namespaces/{namespace}/trainjobs", self._job_event)]

    def _job_event(self, typ, tj, t):
        if typ != "DELETED" and not tj["spec"].get("suspend"):
            with self.lock:
                self.resumed.setdefault(tj["metadata"]["name"], t)

    def _event(self, typ, wl, t):
        job, *state = workload_state(wl)
        if job is None or typ == "DELETED":
            return
        with self.lock:
            self.events.setdefault(job, []).append((t, *state))

    def snapshot(self):
        with self.lock:
            return {k: list(v) for k, v in self.events.items()}

    def stop(self):
        for w in self.watches:
            w.stop()


def chain_figures(admitted, resumed, first_pods):
    """Where an admitted job's time goes under Kueue, p50 and max over the jobs seen in all
    three: from its Workload's quota reservation to Kueue's update that resumes the TrainJob
    (Kueue's part), and from that to its first pod (the controller's). Each argument: job ->
    time."""
    jobs = [j for j in admitted if j in resumed and j in first_pods]
    kueue = [resumed[j] - admitted[j] for j in jobs]
    ours = [first_pods[j] - resumed[j] for j in jobs]
    out = {"chain_jobs": len(jobs)}
    for name, v in (("reserved_to_resumed", kueue), ("resumed_to_first_pod", ours)):
        out[f"{name}_p50_s"] = round(pct(v, 50), 3) if v else None
        out[f"{name}_max_s"] = round(max(v), 3) if v else None
    return out


def gang_admissions(log_path, offset, wall_minus_monotonic):
    """The times (monotonic clock) of the controller's decisions to admit a gang, from its log
    after offset ("admitted a gang", with the wall time to the millisecond)."""
    out = []
    for rec in log_records(log_path, offset, "admitted a gang"):
        ts = rec.get("ts", "")
        wall = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + ts[19:-1])
        out.append(wall - wall_minus_monotonic)
    return out


def wait_no_workloads(api, namespace, timeout=300):
    """Waits until the garbage collector has removed the Workloads of deleted TrainJobs, so
    that the next way on a shared cluster counts only its own."""
    deadline = time.monotonic() + timeout
    while api.json("GET", f"/apis/{KUEUE_API}/namespaces/{namespace}/workloads")["items"]:
        if time.monotonic() > deadline:
            sys.exit(f"Workloads of {namespace} were left {timeout} s after their TrainJobs were deleted")
        time.sleep(1)


def kueue_decisions(events, since):
    """From Workload events (job -> [(t, quota reserved, reason, evicted at)]): each job's first
    time at or after since that its quota was reserved (admitted) or Kueue's scheduler marked
    it Pending (decided, as is admitted), and the distinct evictions it went through."""
    out = {}
    for job, evs in events.items():
        admitted = next((t for t, qr, _, _ in evs if t >= since and qr == "True"), None)
        pending = next((t for t, qr, reason, _ in evs if t >= since and qr == "False" and reason == "Pending"), None)
        decided = min((x for x in (admitted, pending) if x is not None), default=None)
        evictions = len({ev for _, _, _, ev in evs if ev is not None})
        out[job] = {"admitted": admitted, "decided": decided, "evictions": evictions}
    return out


# ---- the figures ----


def fill_rate(times, since, slots):
    """Admissions per second while the slots fill: slots / the time from since to the
    slots-th of times (sorted or not); None if fewer came. Returns (rate, seconds)."""
    after = sorted(t for t in times if t >= since)
    if slots <= 0 or len(after) < slots:
        return None, None
    span = after[slots - 1] - since
    return (round(slots / span, 1) if span > 0 else None), round(span, 2)


def wide_figures(jobs, pods, capacity, t0, t_end):
    """The waits of the widest jobs (WIDE_NODES nodes or more) alone."""
    wide = {n: j for n, j in jobs.items() if j["nodes"] >= WIDE_NODES}
    if not wide:
        return {"wide_jobs": 0}
    f = trace_figures(wide, pods, capacity, t0, t_end)
    return {"wide_jobs": len(wide), "wide_wait_mean_s": f["wait_mean_s"], "wide_wait_p95_s": f["wait_p95_s"],
            "wide_whole_wait_p95_s": f["whole_wait_p95_s"]}


def summary(trace, scale):
    """The headline figures, the ratios and the goals of the ways' results (each part: way ->
    figures; either may be empty)."""
    out, goals = {}, {}
    names = {"ours": "ours", "kueue-strict": "kueue", "kueue-besteffort": "kueue_besteffort"}
    for way, key in names.items():
        if way in trace:
            out[f"utilisation_{key}"] = trace[way]["utilisation"]
            out[f"wait_mean_s_{key}"] = trace[way]["wait_mean_s"]
            out[f"wide_wait_p95_s_{key}"] = trace[way].get("wide_wait_p95_s")
        if way in scale:
            out[f"admissions_per_s_{key}"] = scale[way]["admissions_per_s"]
            out[f"queue_admissions_per_s_{key}"] = scale[way].get("queue_admissions_per_s")
            if scale[way].get("admissions_per_s") is None and "slots_filled" in scale[way]:
                out[f"slots_filled_{key}"] = f"{scale[way]['slots_filled']} of {scale[way]['slots']} " \
                                             f"in {scale[way]['waited_s']} s"
    ours, strict, best = (trace.get(w) for w in ("ours", "kueue-strict", "kueue-besteffort"))

    def less(a, b):
        return a is not None and b is not None and a < b

    if ours:
        goals["zero_split_gangs"] = ours["partial_split_gpu_s"] == 0
        if strict:
            goals["utilisation_above_strict"] = ours["utilisation"] > strict["utilisation"]
            goals["wait_mean_below_strict"] = less(ours["wait_mean_s"], strict["wait_mean_s"])
            out["utilisation_ours_vs_kueue"] = round(ours["utilisation"] / strict["utilisation"], 3)
        if best:
            goals["utilisation_within_a_point_of_besteffort"] = ours["utilisation"] >= best["utilisation"] - 0.01
            goals["wide_wait_p95_below_besteffort"] = less(ours.get("wide_wait_p95_s"), best.get("wide_wait_p95_s"))
            goals["wait_mean_below_besteffort"] = less(ours["wait_mean_s"], best["wait_mean_s"])
            out["utilisation_ours_vs_kueue_besteffort"] = round(ours["utilisation"] / best["utilisation"], 3)
    mine = (scale.get("ours") or {}).get("admissions_per_s")
    own = (scale.get("ours") or {}).get("queue_admissions_per_s")
    for way, key in (("kueue-strict", "kueue"), ("kueue-besteffort", "kueue_besteffort")):
        theirs = (scale.get(way) or {}).get("admissions_per_s")
        theirs_own = (scale.get(way) or {}).get("queue_admissions_per_s")
        if own and theirs_own:
            out[f"queue_admissions_ours_vs_{key}"] = round(own / theirs_own, 2)
        if mine and theirs:
            out[f"admissions_ours_vs_{key}"] = round(mine / theirs, 2)
            goals[f"admissions_10x_{key}"] = mine >= 10 * theirs
        elif "ours" in scale and way in scale:
            goals[f"admissions_10x_{key}"] = bool(mine) and not theirs
    out["goals"] = goals
    return out


# ---- the processes ----


def kueue_pid(env):
    path = shell_env(env, "$TJC_CACHE/kueue/$TJC_CLUSTER/kueue.pid")
    with open(path) as f:
        return int(f.read().strip())


class Procs:
    """The CPU time of the controller and of Kueue (if it runs) from now on, and their peaks."""

    def __init__(self, controller, kueue):
        self.controller, self.kueue = controller, kueue
        if kueue:
            reset_peak(kueue)
        self.cpu0 = {"controller": controller.cpu_seconds(), "kueue": cpu_seconds(kueue) if kueue else 0}

    def figures(self):
        out = {"controller_cpu_s": round(self.controller.cpu_seconds() - self.cpu0["controller"], 2),
               "controller_peak_mib": round(self.controller.peak_rss_mib(), 1)}
        if self.kueue:
            out["kueue_cpu_s"] = round(cpu_seconds(self.kueue) - self.cpu0["kueue"], 2)
            out["kueue_peak_mib"] = round(peak_rss_mib(self.kueue), 1)
        return out


def start_controller(args, way):
    cfg = write_config(os.path.join(REPO, "build", "bench-vs-kueue.yaml"), ADMISSION_WAYS["backfill"])
    return Controller(args.binary, args.kubeconfig, args.log_path, cfg,
                      extra_args=("--kueue",) if WAYS[way] else ())


# ---- the trace ----


def trace_way(api, args, way, trace, capacity, kueue):
    strategy = WAYS[way]
    queue = apply_queue(TRACE_NAMESPACE, "gh200", strategy, capacity) if strategy else None
    jobs_sent = [bench_job(TRACE_NAMESPACE, f"adm-{i:04d}", *job, queue=queue) for i, job in enumerate(trace)]
    names = [j["metadata"]["name"] for j in jobs_sent]
    rec = Recorder(api, TRACE_NAMESPACE)
    wls = Workloads(api, TRACE_NAMESPACE) if strategy else None
    c = start_controller(args, way)
    procs = Procs(c, kueue if strategy else None)
    work = sum(n * GPUS_PER_NODE * r for n, _, r in trace)
    timeout = args.timeout or 1.8 * work / capacity + 300
    try:
        reqs = [(f"{TJ_API}/namespaces/{TRACE_NAMESPACE}/trainjobs", json.dumps(j).encode()) for j in jobs_sent]
        applied, t0 = api.create_all(reqs, args.connections)
        log(f"  {len(reqs)} TrainJobs created in {applied:.2f} s; observing (timeout {timeout:.0f} s)")
        t_end = observe_trace(rec, names, t0, timeout, capacity)
        res_procs = procs.figures()
    finally:
        c.stop()
        rec.stop()
        if wls:
            wls.stop()
    jobs, pods = rec.snapshot()
    missing = set(names) - set(jobs)
    if missing:
        sys.exit(f"the watch never saw {len(missing)} TrainJobs, e.g. {sorted(missing)[0]}")
    jobs = {n: jobs[n] for n in names}
    res = trace_figures(jobs, pods, capacity, t0, t_end)
    res.update(wide_figures(jobs, pods, capacity, t0, t_end))
    res.update(res_procs)
    if wls:
        d = kueue_decisions(wls.snapshot(), t0)
        res["kueue_evictions"] = sum(x["evictions"] for x in d.values())
        res.update(chain_figures({j: x["admitted"] for j, x in d.items() if x["admitted"]}, wls.resumed,
                                 first_pods(rec)))
    if not res["finished"]:
        log(f"  timed out after {timeout:.0f} s with {res['jobs'] - res['complete'] - res['failed']} jobs unfinished")
    log(f"  {way}: makespan {res['makespan_s']:.0f} s, utilisation {res['utilisation']:.1%}, wait mean "
        f"{res['wait_mean_s']} s p95 {res['wait_p95_s']} s (widest {res['wide_jobs']} jobs: mean "
        f"{res.get('wide_wait_mean_s')} s p95 {res.get('wide_wait_p95_s')} s), partial-gang "
        f"{res['partial_gang_gpu_s']:.0f} GPU-s (split {res['partial_split_gpu_s']:.0f}), {res['complete']} Complete, "
        f"{res['deadline_exceeded']} DeadlineExceeded" + (f", {res['kueue_evictions']} evictions" if wls else ""))
    delete_everything(api, TRACE_NAMESPACE)
    if wls:
        wait_no_workloads(api, TRACE_NAMESPACE)
    return res


def first_pods(rec):
    """job -> the time its first pod was seen (the Recorder's admissions)."""
    with rec.lock:
        return {j: t for t, j in rec.admissions}


# ---- the scale part ----


def wait_workloads(api, n, timeout):
    """Waits until Kueue has made n Workloads in the scale namespace."""
    deadline = time.monotonic() + timeout
    while True:
        have = len(api.json("GET", f"/apis/{KUEUE_API}/namespaces/{SCALE_NAMESPACE}/workloads")["items"])
        if have >= n:
            return
        if time.monotonic() > deadline:
            sys.exit(f"Kueue made only {have} of {n} Workloads within {timeout} s")
        log(f"  {have}/{n} Workloads")
        time.sleep(5)


def wait_settled(rec, quiet=5, timeout=300):
    """Waits until the TrainJobs have had no update for quiet seconds (the controller has
    written what it writes of the held jobs)."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        with rec.lock:
            n = sum(j["updates"] for j in rec.jobs.values())
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.5)


def scale_way(api, args, way, kueue):
    strategy = WAYS[way]
    ns = SCALE_NAMESPACE
    n_nodes, capacity = gpu_capacity(api, CLASSES["h100"][0])
    slots = n_nodes // args.gang
    queue = apply_queue(ns, "h100", strategy, capacity, hold=True) if strategy else None
    rng = random.Random(args.seed)
    jobs = [bench_job(ns, f"scale-{i:05d}", args.gang, 1800, rng.randint(args.run_min, args.run_max),
                      queue=queue, cls="h100") for i in range(args.scale_jobs)]
    names = [j["metadata"]["name"] for j in jobs]
    log(f"scale, way {way}: {len(jobs)} TrainJobs of {args.gang} nodes x {CLASSES['h100'][1]} GPUs on {n_nodes} "
        f"H100 nodes: {slots} run at once")
    wait_for_quiet(args)
    if strategy:
        reset_peak(kueue)
        kueue_cpu0 = cpu_seconds(kueue)
    created, _ = api.create_all([(f"{TJ_API}/namespaces/{ns}/trainjobs", json.dumps(j).encode()) for j in jobs],
                                args.connections)
    log(f"  {len(jobs)} TrainJobs created in {created:.1f} s")
    rec = Recorder(api, ns)
    wls = None
    c = None
    try:
        if strategy:
            wait_workloads(api, len(jobs), args.decide_timeout + 300)
            c = start_controller(args, way)
            wait_settled(rec)
            wls = Workloads(api, ns)
            t_start = time.monotonic()
            release_queue("h100")
        else:
            log_offset = os.path.getsize(args.log_path) if os.path.exists(args.log_path) else 0
            t_start = time.monotonic()
            c = start_controller(args, way)
        last = changed = time.monotonic()
        seen = -1
        while True:
            now = time.monotonic()
            snap, _ = rec.snapshot()
            if strategy:
                decided = [d["decided"] for d in kueue_decisions(wls.snapshot(), t_start).values() if d["decided"]]
            else:
                decided = [snap[n]["decided"] for n in names if n in snap and snap[n]["decided"] is not None]
            with rec.lock:
                admitted = len(rec.admissions)
            if len(decided) != seen:
                seen, changed = len(decided), now
            # A StrictFIFO queue decides nothing behind its blocked head: once the slots are
            # filled, --idle seconds without a new decision end the wait.
            if (len(decided) == len(names) and admitted >= slots) or now - t_start > args.decide_timeout \
                    or (admitted >= slots and now - changed > args.idle):
                break
            if now - last >= 10:
                last = now
                log(f"  {now - t_start:5.0f} s: {len(decided)}/{len(names)} decided, {admitted} admitted")
            time.sleep(0.5)
        t_end = time.monotonic()
        out = {"jobs": len(jobs), "nodes": n_nodes, "gang_nodes": args.gang, "slots": slots,
               "controller_cpu_s": round(c.cpu_seconds(), 2),
               "controller_peak_mib": round(c.peak_rss_mib(), 1)}
    finally:
        if c:
            c.stop()
        rec.stop()
        if wls:
            wls.stop()
    with rec.lock:
        firsts = [t for t, _ in rec.admissions]
    out["admissions_per_s"], out["fill_s"] = fill_rate(firsts, t_start, slots)
    # A queue that did not fill the slots: how many it filled, over how long.
    out["slots_filled"] = min(slots, sum(1 for t in firsts if t >= t_start))
    out["waited_s"] = round(t_end - t_start, 2)
    out["decided"] = len(decided)
    out["decided_s"] = round(max(decided) - t_start, 2) if len(decided) == len(names) else None
    if not strategy:
        own = gang_admissions(args.log_path, log_offset, time.time() - time.monotonic())
        out["queue_admissions_per_s"], out["queue_fill_s"] = fill_rate(own, t_start, slots)
    else:
        d = kueue_decisions(wls.snapshot(), t_start)
        out["queue_admissions_per_s"], out["queue_fill_s"] = fill_rate(
            [x["admitted"] for x in d.values() if x["admitted"]], t_start, slots)
        out.update(chain_figures({j: x["admitted"] for j, x in d.items() if x["admitted"]}, wls.resumed,
                                 first_pods(rec)))
        out["kueue_evictions"] = sum(x["evictions"] for x in d.values())
        out["kueue_cpu_s"] = round(cpu_seconds(kueue) - kueue_cpu0, 2)
        out["kueue_peak_mib"] = round(peak_rss_mib(kueue), 1)
    log(f"  {way}: {out['admissions_per_s']} admissions/s ({out['slots_filled']} of {slots} slots filled"
        + (f" in {out['fill_s']} s), " if out["fill_s"] else f" by {out['waited_s']} s), ")
        + f"{out['decided']}/{len(names)} decided"
        + (f" in {out['decided_s']} s" if out["decided_s"] else f" by {args.decide_timeout:.0f} s")
        + f"; the queue's own count: {out['queue_admissions_per_s']} admissions/s"
        + (f"; {out['kueue_evictions']} evictions, Kueue CPU {out['kueue_cpu_s']} s, peak {out['kueue_peak_mib']} MiB; "
           f"from quota reserved to the job resumed p50 {out['reserved_to_resumed_p50_s']} s (max "
           f"{out['reserved_to_resumed_max_s']} s), from resumed to its first pod p50 "
           f"{out['resumed_to_first_pod_p50_s']} s (max {out['resumed_to_first_pod_max_s']} s)" if strategy else "")
        + f"; controller CPU {out['controller_cpu_s']} s, peak {out['controller_peak_mib']} MiB")
    if args.one_cluster:
        kubectl("delete", "trainjobs", "--all", "-n", ns, "--wait=false", check=False)
        delete_everything(api, ns)
        if strategy:
            wait_no_workloads(api, ns)
    return out


# ---- the clusters ----


def groups(args):
    """(cluster name, its ways) in the order they run."""
    ways = args.ways.split(",")
    if args.one_cluster:
        return [(args.cluster_prefix, ways)]
    return [(f"{args.cluster_prefix}-{w}", [w]) for w in ways]


def child_argv(argv, ways):
    """The command line of the child that runs one cluster's ways of a --parallel trace: the
    parent's, less --parallel, with its ways and no wait for a quiet machine (the other
    clusters are the load)."""
    return [a for a in argv if a != "--parallel"] + ["--ways", ",".join(ways), "--quiet-wait", "0"]


def merge_traces(results):
    """One trace part of the children's: the trace's own figures (the same in each) and every
    way's."""
    trace = {}
    for r in results:
        ways = dict(trace.get("ways", {}), **r["trace"].get("ways", {}))
        trace.update(r["trace"], ways=ways)
    return trace


def run_parallel(args):
    """The trace part, every way's cluster at once, a child process each: the same load on
    every way, and a third of the time. Its figures are seconds of waiting for pods of 20 to
    120 s, which the clusters' shared CPU moves by far less than they differ; the scale
    part's rates are not, and it refuses --parallel."""
    wait_for_quiet(args)
    children = []
    for name, ways in groups(args):
        log(f"trace on {name}: {','.join(ways)}, beside the others")
        children.append(subprocess.Popen([sys.executable, os.path.abspath(__file__),
                                          *child_argv(sys.argv[1:], ways)], stdout=subprocess.PIPE, text=True))
    results = []
    for c in children:
        stdout, _ = c.communicate()
        if c.returncode != 0:
            sys.exit(f"a way's run failed ({c.args[-3]}): exit {c.returncode}")
        results.append(json.loads(stdout.strip().splitlines()[-1]))
    out = {"date": results[0]["date"], "quick": args.quick, "parallel": True,
           "trace": merge_traces(results), "scale": {}}
    out.update(summary(out["trace"].get("ways", {}), {}))
    return out


def run(args):
    if args.parallel:
        return run_parallel(args)
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "quick": args.quick,
           "trace": {}, "scale": {}}
    trace = make_trace(args.jobs, args.seed)
    for name, ways in groups(args):
        kueue_here = any(WAYS[w] for w in ways)
        env = cluster_env(name, gh200=32 if args.part != "scale" else 0)
        env["TJC_H100_NODES"] = "0" if args.part != "scale" else str(args.nodes)
        if kueue_here:
            env["TJC_KUEUE"] = "1"
        args.log_path = os.path.join(REPO, "build", f"{name}-controller.log")
        with cluster(args, env) as api:
            pid = kueue_pid(env) if kueue_here else None
            if args.part != "scale":
                setup(api, TRACE_NAMESPACE)
                wait_schedulable(api)
                n_nodes, capacity = gpu_capacity(api)
                work = sum(n * GPUS_PER_NODE * r for n, _, r in trace)
                out["trace"].update(jobs=len(trace), seed=args.seed, capacity_gpus=capacity, work_gpu_s=work,
                                    lower_bound_makespan_s=round(work / capacity, 1))
                for way in ways:
                    wait_for_quiet(args)
                    log(f"trace, way {way} on {name}: {len(trace)} jobs on {n_nodes} GH200 nodes")
                    out["trace"].setdefault("ways", {})[way] = trace_way(api, args, way, trace, capacity, pid)
            if args.part != "trace":
                if args.part == "all":
                    log(f"adding {args.nodes} H100 nodes to {name}")
                    subprocess.run([CLUSTER_SH, "up"], env=dict(env, TJC_H100_NODES=str(args.nodes)), check=True,
                                   stdout=sys.stderr)
                setup(api, SCALE_NAMESPACE)
                wait_schedulable(api, product=CLASSES["h100"][0])
                for way in ways:
                    out["scale"][way] = scale_way(api, args, way, pid)
    out.update(summary((out["trace"] or {}).get("ways", {}), out["scale"]))
    return out


# ---- self-test ----


def self_test():
    # The jobs: bench_admission.py's, the run time moved to a runtimePatches entry.
    tj = bench_job("ns", "a", 3, 60, 40)
    assert "podTemplateOverrides" not in tj["spec"] and QUEUE_LABEL not in tj["metadata"]["labels"], tj
    [patch] = tj["spec"]["runtimePatches"]
    [rj] = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert rj["name"] == "node", rj
    assert rj["template"]["spec"]["template"]["metadata"]["annotations"] == {"sim.trainjob.flame.dev/run-time": "40s"}
    assert tj["spec"]["runtimeRef"] == {"name": "torch-gh200"} and tj["spec"]["activeDeadlineSeconds"] == 60
    assert tj["spec"]["trainer"] == {"numNodes": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": "4"}}}
    tj = bench_job("ns", "b", 4, 1800, 90, queue="bench-h100", cls="h100")
    assert tj["metadata"]["labels"][QUEUE_LABEL] == "bench-h100" and tj["spec"]["runtimeRef"]["name"] == "torch-h100"
    assert tj["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == "8"
    # Kueue's objects: quota = the GPUs given, one flavor, the strategy, held or not.
    flavor, cq, lq = queue_objects("ns", "gh200", "StrictFIFO", 128, hold=True)
    assert flavor["spec"]["nodeLabels"] == {"nvidia.com/gpu.product": "NVIDIA-GH200-480GB"}
    assert cq["spec"]["queueingStrategy"] == "StrictFIFO" and cq["spec"]["stopPolicy"] == "Hold"
    [group] = cq["spec"]["resourceGroups"]
    [fl] = group["flavors"]
    assert fl["name"] == "bench-gh200" and fl["resources"][2] == {"name": "nvidia.com/gpu", "nominalQuota": 128}
    assert [r["name"] for r in fl["resources"]] == group["coveredResources"]
    assert lq["metadata"]["namespace"] == "ns" and lq["spec"]["clusterQueue"] == "bench-gh200"
    assert queue_objects("ns", "h100", "BestEffortFIFO", 800, hold=False)[1]["spec"]["stopPolicy"] == "None"

    # Workloads: the owner, QuotaReserved and Evicted.
    def wl(job, qr=None, reason=None, evicted=None, message=""):
        conds = []
        if qr:
            conds.append({"type": "QuotaReserved", "status": qr, "reason": reason, "message": message})
        if evicted:
            conds.append({"type": "Evicted", "status": "True", "lastTransitionTime": evicted})
        return {"metadata": {"ownerReferences": [{"kind": "TrainJob", "name": job}]}, "status": {"conditions": conds}}

    assert workload_state(wl("a", "False", "Inadmissible")) == ("a", "False", "Inadmissible", None)
    held = wl("a", "False", "Pending", message="ClusterQueue bench-h100 is inactive")
    assert workload_state(held) == ("a", "False", "Inactive", None)
    assert workload_state(wl("a", "True", "QuotaReserved", "T1")) == ("a", "True", "QuotaReserved", "T1")
    assert workload_state({"metadata": {}}) == (None, None, None, None)
    # Decisions after since=10: a was held (inactive) before, then admitted at 12, evicted
    # and admitted again; b marked Pending at 11; c still says only what it said before 10.
    events = {"a": [(5, "False", "Inadmissible", None), (12, "True", "QuotaReserved", None),
                    (40, "False", "Pending", "T1"), (41, "False", "Pending", "T1"), (50, "True", "Admitted", "T1")],
              "b": [(5, "False", "Inadmissible", None), (11, "False", "Pending", None), (20, "True", "Q", None)],
              "c": [(5, "False", "Inadmissible", None), (15, "False", "Inadmissible", None)]}
    d = kueue_decisions(events, 10)
    assert d["a"] == {"admitted": 12, "decided": 12, "evictions": 1}, d
    assert d["b"] == {"admitted": 20, "decided": 11, "evictions": 0}, d
    assert d["c"] == {"admitted": None, "decided": None, "evictions": 0}, d

    # The chain under Kueue: a reserved at 1, resumed at 3, first pod at 3.5; b 2, 6, 6.1; c
    # never resumed.
    f = chain_figures({"a": 1, "b": 2, "c": 3}, {"a": 3, "b": 6}, {"a": 3.5, "b": 6.1})
    assert f == {"chain_jobs": 2, "reserved_to_resumed_p50_s": 2, "reserved_to_resumed_max_s": 4,
                 "resumed_to_first_pod_p50_s": 0.1, "resumed_to_first_pod_max_s": 0.5}, f
    assert chain_figures({}, {}, {})["reserved_to_resumed_p50_s"] is None
    # Our decisions from the log: only the lines after the offset, on the monotonic clock.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "c.log")
        with open(path, "w") as f:
            f.write('{"ts":"2026-12-05T06:36:14.000Z","msg":"admitted a gang"}\n')
            offset = f.tell()
            f.write('{"ts":"2026-12-05T06:36:14.505Z","level":"info","msg":"admitted a gang"}\n'
                    '{"ts":"2026-12-05T06:36:14.508Z","msg":"creating an admitted gang"}\nnot JSON "admitted a gang"\n')
        wall = calendar.timegm((2026, 12, 5, 6, 36, 14, 0, 0, 0))
        [t] = gang_admissions(path, offset, wall - 100)
        assert abs(t - 100.505) < 1e-6, t

    # The fill: 4 slots, admissions at 1, 3, 2, 5, 9 after a start at 0.5: the 4th at 5.
    assert fill_rate([3, 1, 2, 5, 9, 0.1], 0.5, 4) == (round(4 / 4.5, 1), 4.5)
    assert fill_rate([1, 2], 0, 4) == (None, None) and fill_rate([], 0, 0) == (None, None)

    # The widest jobs alone: w (8 nodes) waits 10 s, n (2 nodes) 0 s.
    def pod(job, rank, t):
        return {"job": job, "rank": rank, "gpus": 4, "bound": t, "running": t, "unschedulable": None, "ended": t + 5}

    jobs = {"w": {"nodes": 8, "created": 0, "ended": 15, "state": "Complete", "reason": None},
            "n": {"nodes": 2, "created": 0, "ended": 5, "state": "Complete", "reason": None}}
    pods = [pod("w", r, 10) for r in range(8)] + [pod("n", r, 0) for r in range(2)]
    assert wide_figures(jobs, pods, 32, 0, 20) == {"wide_jobs": 1, "wide_wait_mean_s": 10, "wide_wait_p95_s": 10,
                                                   "wide_whole_wait_p95_s": 10}
    assert wide_figures({"n": jobs["n"]}, pods, 32, 0, 20) == {"wide_jobs": 0}

    # The summary: ours against both strategies.
    def way(util, mean, wide, split=0):
        return {"utilisation": util, "wait_mean_s": mean, "wide_wait_p95_s": wide, "partial_split_gpu_s": split}

    trace = {"ours": way(0.91, 300, 900), "kueue-strict": way(0.85, 500, 1000),
             "kueue-besteffort": way(0.915, 350, 1500)}
    scale = {"ours": {"admissions_per_s": 120.0, "queue_admissions_per_s": 5000.0},
             "kueue-strict": {"admissions_per_s": 10.0, "queue_admissions_per_s": 20.0},
             "kueue-besteffort": {"admissions_per_s": 15.0}}
    s = summary(trace, scale)
    assert s["utilisation_ours"] == 0.91 and s["utilisation_kueue"] == 0.85, s
    assert s["utilisation_kueue_besteffort"] == 0.915, s
    assert s["admissions_per_s_ours"] == 120 and s["admissions_per_s_kueue"] == 10, s
    assert s["admissions_ours_vs_kueue"] == 12 and s["admissions_ours_vs_kueue_besteffort"] == 8, s
    assert s["queue_admissions_per_s_ours"] == 5000 and s["queue_admissions_ours_vs_kueue"] == 250, s
    assert s["queue_admissions_per_s_kueue_besteffort"] is None and "queue_admissions_ours_vs_kueue_besteffort" not in s
    assert s["utilisation_ours_vs_kueue"] == round(0.91 / 0.85, 3), s
    assert s["goals"] == {"zero_split_gangs": True, "utilisation_above_strict": True, "wait_mean_below_strict": True,
                          "utilisation_within_a_point_of_besteffort": True, "wide_wait_p95_below_besteffort": True,
                          "wait_mean_below_besteffort": True, "admissions_10x_kueue": True,
                          "admissions_10x_kueue_besteffort": False}, s["goals"]
    # More than a point below BestEffortFIFO, a split gang, and a Kueue way that never filled.
    trace["ours"] = way(0.90, 300, 900, split=4)
    scale["kueue-strict"] = {"admissions_per_s": None, "slots": 500, "slots_filled": 3, "waited_s": 600.2}
    s = summary(trace, scale)
    g = s["goals"]
    assert not g["utilisation_within_a_point_of_besteffort"] and not g["zero_split_gangs"], g
    assert g["admissions_10x_kueue"], g
    assert s["slots_filled_kueue"] == "3 of 500 in 600.2 s", s
    assert summary({}, {}) == {"goals": {}}

    # The clusters: one a way, or one for all.
    a = argparse.Namespace(ways="ours,kueue-strict", one_cluster=False, cluster_prefix="p")
    assert groups(a) == [("p-ours", ["ours"]), ("p-kueue-strict", ["kueue-strict"])]
    a.one_cluster = True
    assert groups(a) == [("p", ["ours", "kueue-strict"])]
    assert pct([1, 2, 3], 95) == 3
    # --parallel: the children's command lines and the merge of their trace parts.
    assert child_argv(["trace", "--parallel", "--jobs", "300"], ["ours"]) == \
        ["trace", "--jobs", "300", "--ways", "ours", "--quiet-wait", "0"]
    t = {"jobs": 300, "capacity_gpus": 128}
    merged = merge_traces([{"trace": dict(t, ways={"ours": {"utilisation": 0.9}})},
                           {"trace": dict(t, ways={"kueue-strict": {"utilisation": 0.8}})}])
    assert merged == dict(t, ways={"ours": {"utilisation": 0.9}, "kueue-strict": {"utilisation": 0.8}}), merged
    print("self-test passed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("part", nargs="?", default="all", choices=("all", "trace", "scale"))
    ap.add_argument("--self-test", action="store_true", help="check the figures on made-up data")
    ap.add_argument("--quick", action="store_true",
                    help="a small trace and backlog on one cluster: " + ", ".join(f"{k} {v}" for k, v in QUICK.items()))
    ap.add_argument("--ways", default=",".join(WAYS))
    ap.add_argument("--jobs", type=int, default=300, help="TrainJobs of the trace")
    ap.add_argument("--seed", type=int, default=1)
    add_run_arguments(ap, "H100 nodes of the scale part")
    ap.add_argument("--decide-timeout", type=float, default=600,
                    help="most seconds for every scale job to be admitted or shown its place")
    ap.add_argument("--idle", type=float, default=30,
                    help="seconds without a new decision, once the slots are filled, that end the wait")
    ap.add_argument("--cluster-prefix", default="bench-vs-kueue")
    ap.add_argument("--one-cluster", action="store_true", help="every way on one cluster, one after the other")
    ap.add_argument("--parallel", action="store_true",
                    help="the trace part only: every way's cluster at once, a child process each")
    add_cluster_arguments(ap)
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if args.quick:
        for k, v in QUICK.items():
            setattr(args, k, v)
    if args.parallel and (args.part != "trace" or args.one_cluster):
        ap.error("--parallel runs the trace part, a cluster a way: trace, without --one-cluster or --quick")
    unknown = set(args.ways.split(",")) - set(WAYS)
    if unknown:
        ap.error(f"unknown ways {','.join(sorted(unknown))}: the ways are {','.join(WAYS)}")
    build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
    args.binary = os.path.join(build, "trainjob-controller")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no controller at {args.binary}: ninja -C {build} trainjob-controller")
    if any(WAYS[w] for w in args.ways.split(",")) and \
            subprocess.run([CLUSTER_SH, "kueue-built"], capture_output=True).returncode != 0:
        sys.exit(f"Kueue is not built: TJC_KUEUE=1 {CLUSTER_SH} up builds it once (15 to 30 minutes)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    print(json.dumps(run(args)))


if __name__ == "__main__":
    main()
