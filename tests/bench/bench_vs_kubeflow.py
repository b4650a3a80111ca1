#!/usr/bin/env python3
"""Side by side with Kubeflow Trainer: the workload of bench_expansion.py (J TrainJobs x N nodes
applied at once, 200 x 4 by default) run by this controller and by Kubeflow Trainer's chain
(Trainer's controller manager makes a JobSet, JobSet's makes the Jobs, kube-controller-manager's
Job controller makes the pods), each against the same plain-client yardstick in the same run
on the same cluster, with kube-controller-manager at its default client limits (20 QPS, burst
30) and with them raised (--kube-api-qps=5000 --kube-api-burst=10000); and the gang scenario
(two TrainJobs of 5 nodes x 4 GPUs on 8 GH200 nodes of 4 GPUs: only one fits at a time).

  tests/bench/bench_vs_kubeflow.py [--jobs 200] [--nodes 4] [--runs 3] [--limits default,raised]
  tests/bench/bench_vs_kubeflow.py --self-test   # the gang figures on synthetic pods, and the
                                                 # TrainJobs; no cluster (every run starts with it)

Each side has a cluster of its own, never both at once (the machine's two cores would be
shared between them): this controller on TJC_CLUSTER=bench-vs-ours (--cluster), with this
project's CRDs and runtimes; Kubeflow on bench-kubeflow (--kubeflow-cluster), with Kubeflow's
CRDs, webhooks and runtimes and both managers running as processes on this machine
(deploy/local/kubeflow-trainer.sh: built once from their Go modules, Trainer at the newest
release the module proxy serves and the JobSet its go.mod names; the first run builds them,
several minutes). A cluster is created for each side and each setting of
kube-controller-manager (its flags are fixed at creation: TJC_KCM_FLAGS of cluster.sh), and
removed after it; a cluster of the same name that already runs is refused.

On each cluster, runs alternate (plain client, controller, plain client, ...):

  - plain client: the J*N pods this controller would create (its render command, as in
    bench_expansion.py) sent at once over 32 connections; seconds until the watch has seen
    every one. JobSet's labels are dropped from them, so that on Kubeflow's cluster JobSet's
    pod webhooks (which select pods by jobset.sigs.k8s.io/jobset-name) leave them alone;
  - controller: the J TrainJobs created at once by the same client; seconds from the first
    create sent until the watch has seen all J*N pods; the CPU time (utime + stime) over that
    span of each process of the chain, kube-controller-manager included (it is Kubeflow's
    pod maker; for this controller it does only garbage collection and endpoints), and the
    peak RSS (VmHWM) of each. This controller is started afresh for each run (its peak counts
    from its start, its list of the cluster included); Trainer's and JobSet's managers and
    kube-controller-manager run throughout, so their peak is reset (clear_refs) at the start
    of each run and counts from there.

Kubeflow's TrainJob is the same job: Kubeflow's own torch-distributed runtime, the same
numNodes and resourcesPerNode, and the same pod annotation (pods run for an hour under KWOK)
given as a runtimePatches entry, since Trainer v2.3.0 has no podTemplateOverrides. Both
managers run as shipped (client limits, log level), with leader election and metrics off.

The gang scenario runs once, with default limits: both TrainJobs created at once, then the
pods watched until nothing changes for 10 s. This controller (its default configuration, gang
admission on) must bind all 5 pods of one job and none of the other (the other waits Queued):
the benchmark fails if it placed a partial gang. Kubeflow without Kueue leaves it to
kube-scheduler, which binds pods as GPUs allow: 8 of the 10 pods fit.

The result: the runs and medians on stderr, then a markdown table of the medians and a final
JSON line with every figure on stdout. The controller is build/release/trainjob-controller
(TJC_BUILD_DIR overrides the folder); its log and the managers' logs are under build/ and
~/.cache/trainjob-controller/kubeflow/<cluster>/."""

import argparse
import concurrent.futures
import copy
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_expansion as bx  # noqa: E402
from bench_admission import wait_schedulable  # noqa: E402
from bench_expansion import (  # noqa: E402
    CLUSTER_SH, REPO, TJ_API, TRAINJOB_LABEL, Api, Controller, PodWatch, cpu_seconds, log,
    peak_rss_mib)

KUBEFLOW_SH = os.path.join(REPO, "deploy", "local", "kubeflow-trainer.sh")
NAMESPACE = "bench-vs-kubeflow"
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
JOBSET_API = "/apis/jobset.x-k8s.io/v1alpha2"
PATCH_MANAGER = "bench.trainjob.flame.dev/manager"
RUN_TIME = "sim.trainjob.flame.dev/run-time"
GPU = "nvidia.com/gpu"
GH200 = "NVIDIA-GH200-480GB"
LIMITS = {  # name: kube-controller-manager's flags
    "default": "",
    "raised": "--kube-api-qps=5000 --kube-api-burst=10000",
}
GANG_NODES, GANG_GPUS, GANG_JOBS, GANG_CLUSTER_NODES = 5, 4, 2, 8
GANG_STABLE_S, GANG_TIMEOUT_S = 10, 180
KCM = "kube-controller-manager"


# ---- the objects ----


def as_runtime_patch(tj):
    """TrainJob tj with its podTemplateOverrides turned into one runtimePatches entry that
    makes the same change to the same replicated jobs' pod templates (Trainer v2.3.0 has no
    podTemplateOverrides)."""
    tj = copy.deepcopy(tj)
    jobs = []
    for o in tj["spec"].pop("podTemplateOverrides", []):
        template = {k: o[k] for k in ("metadata", "spec") if k in o}
        jobs.extend({"name": t["name"], "template": {"spec": {"template": template}}} for t in o["targetJobs"])
    tj["spec"]["runtimePatches"] = [{"manager": PATCH_MANAGER,
                                     "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": jobs}}}}]
    return tj


def kubeflow_trainjob(namespace, i, nodes):
    """bench_expansion.py's TrainJob, as Kubeflow Trainer v2.3.0 takes it (its runtime has the
    same name, torch-distributed: Kubeflow's own)."""
    return as_runtime_patch(bx.trainjob(namespace, i, nodes))


def gang_trainjob(namespace, name, kubeflow):
    """A TrainJob of GANG_NODES nodes x GANG_GPUS GPUs on the GH200 nodes: this project's
    torch-gh200 runtime places it there itself; Kubeflow's torch-distributed runtime is told
    so by the job (a node selector and the GPU taint's toleration)."""
    override = {"targetJobs": [{"name": "node"}], "metadata": {"annotations": {RUN_TIME: "1h"}}}
    if kubeflow:
        override["spec"] = {"nodeSelector": {"nvidia.com/gpu.product": GH200},
                            "tolerations": [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]}
    tj = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "runtimeRef": {"name": "torch-distributed" if kubeflow else "torch-gh200"},
            "trainer": {"numNodes": GANG_NODES, "resourcesPerNode": {"limits": {GPU: str(GANG_GPUS)}}},
            "podTemplateOverrides": [override],
        },
    }
    return as_runtime_patch(tj) if kubeflow else tj


def yardstick_pods(binary, namespace, jobs, nodes):
    """The pods this controller would create (bench_expansion.py's yardstick), without JobSet's
    labels, so that JobSet's pod webhooks do not take them on Kubeflow's cluster."""
    pods, _ = bx.rendered_objects(binary, namespace, jobs, nodes)
    for p in pods:
        labels = p["metadata"].get("labels") or {}
        for key in [k for k in labels if k.startswith("jobset.sigs.k8s.io/")]:
            del labels[key]
    return pods


# ---- the processes ----


def reset_peak(pid):
    """Resets the peak RSS (VmHWM) of process pid to its current RSS."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def shell_env(env, expr):
    """The value of a shell expression after deploy/local/env.sh, with env."""
    return subprocess.run(["bash", "-c", f'. "$1/deploy/local/env.sh"; echo "{expr}"', "_", REPO], env=env,
                          capture_output=True, text=True, check=True).stdout.strip()


def kcm_pid(env):
    path = shell_env(env, "$KWOK_WORKDIR/clusters/$TJC_CLUSTER/pids/kube-controller-manager.pid")
    with open(path) as f:
        return int(f.read().strip())


def kubeflow_pids(env):
    out = subprocess.run([KUBEFLOW_SH, "pids"], env=env, capture_output=True, text=True, check=True).stdout
    names = {"trainer-controller-manager": "trainer", "jobset-controller-manager": "jobset"}
    return {names[n]: int(p) for n, p in (line.split() for line in out.splitlines())}


def kubeflow_versions():
    out = subprocess.run([KUBEFLOW_SH, "versions"], capture_output=True, text=True, check=True).stdout
    return dict(line.split() for line in out.splitlines())


class Cluster:
    """A fresh cluster of env (refused if one of that name runs), with Kubeflow's chain on it
    when kubeflow; removed on leaving."""

    def __init__(self, env, kubeflow):
        self.env, self.kubeflow, self.name = env, kubeflow, env["TJC_CLUSTER"]

    def __enter__(self):
        if subprocess.run([CLUSTER_SH, "status"], env=self.env, capture_output=True).returncode == 0:
            sys.exit(f"cluster {self.name} already runs; this benchmark creates its clusters itself "
                     f"(kube-controller-manager's flags are fixed at creation): bring it down "
                     f"(TJC_CLUSTER={self.name} {CLUSTER_SH} down) or name another")
        flags = self.env.get("TJC_KCM_FLAGS") or "default flags"
        log(f"starting cluster {self.name} ({self.env['TJC_CPU_NODES']} CPU nodes, "
            f"{self.env['TJC_GH200_NODES']} GH200; kube-controller-manager {flags})")
        try:
            subprocess.run([CLUSTER_SH, "up"], env=self.env, check=True, stdout=sys.stderr)
            self.kubeconfig = subprocess.run([CLUSTER_SH, "kubeconfig"], env=self.env, capture_output=True,
                                             text=True, check=True).stdout.strip()
            os.environ["KUBECONFIG"] = self.kubeconfig
            self.api = Api()
            self.kcm = kcm_pid(self.env)
            if self.kubeflow:
                subprocess.run([KUBEFLOW_SH, "up"], env=self.env, check=True, stdout=sys.stderr)
                self.managers = kubeflow_pids(self.env)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        log(f"stopping cluster {self.name}")
        subprocess.run([CLUSTER_SH, "down"], env=self.env, stdout=sys.stderr)
        return False

    def check(self):
        """Every component of the cluster still runs (and both managers, on Kubeflow's)."""
        bx.check_control_plane(self.env)
        if self.kubeflow:
            proc = subprocess.run([KUBEFLOW_SH, "status"], env=self.env, capture_output=True, text=True)
            if proc.returncode != 0 or kubeflow_pids(self.env) != self.managers:
                sys.exit(f"Kubeflow's managers did not run throughout: {proc.stdout.strip()}")


def cluster_env(name, args, limits):
    env = bx.cluster_env(argparse.Namespace(cluster=name, jobs=args.jobs, nodes=args.nodes))
    env.setdefault("TJC_GH200_NODES", str(GANG_CLUSTER_NODES))
    env.setdefault("TJC_H100_NODES", "0")
    env["TJC_KCM_FLAGS"] = LIMITS[limits]
    return env


# ---- the runs ----


def chain_run(api, args, requests, selector, procs, fresh=()):
    """Creates the TrainJobs at once and watches until every pod exists. procs: name -> pid of
    the processes measured; the peak of those not in fresh is reset first."""
    for name, pid in procs.items():
        if name not in fresh:
            reset_peak(pid)
    cpu0 = {n: cpu_seconds(p) for n, p in procs.items()}
    watch = PodWatch(api, NAMESPACE, selector, args.jobs * args.nodes)
    applied, t0 = api.create_all(requests, args.connections)
    exist = watch.wait_logged(t0, args.timeout)
    return {"exist": exist, "applied": applied,
            "cpu_s": {n: cpu_seconds(p) - cpu0[n] for n, p in procs.items()},
            "peak_mib": {n: peak_rss_mib(p) for n, p in procs.items()}}


def ours_run(cl, args, requests):
    c = Controller(args.binary, cl.kubeconfig, args.log_path)
    try:
        res = chain_run(cl.api, args, requests, TRAINJOB_LABEL, {"controller": c.proc.pid, KCM: cl.kcm},
                        fresh=("controller",))
    finally:
        c.stop()
    bx.delete_everything(cl.api, NAMESPACE)
    return res


def kubeflow_run(cl, args, requests):
    procs = dict(cl.managers, **{KCM: cl.kcm})
    res = chain_run(cl.api, args, requests, JOBSET_LABEL, procs)
    delete_kubeflow(cl.api, NAMESPACE)
    return res


def strip_finalizers(api, pods):
    """The Job controller's tracking finalizer holds a deleted pod until that controller, at its
    client limit, removes it: the plain client removes it instead."""
    body = json.dumps({"metadata": {"finalizers": None}}).encode()
    paths = [f"/api/v1/namespaces/{p['metadata']['namespace']}/pods/{p['metadata']['name']}"
             for p in pods if p["metadata"].get("finalizers")]
    with concurrent.futures.ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda path: api.call("PATCH", path, body, content_type="application/merge-patch+json"), paths))


def delete_kubeflow(api, namespace, timeout=300):
    """TrainJobs, JobSets, Jobs, their pods (grace 0) and Services, until none is left."""
    paths = {"trainjobs": f"{TJ_API}/namespaces/{namespace}/trainjobs",
             "jobsets": f"{JOBSET_API}/namespaces/{namespace}/jobsets",
             "jobs": f"/apis/batch/v1/namespaces/{namespace}/jobs",
             "pods": f"/api/v1/namespaces/{namespace}/pods",
             "services": f"/api/v1/namespaces/{namespace}/services"}
    deadline = time.monotonic() + timeout
    while True:
        left = {k: api.json("GET", p)["items"] for k, p in paths.items()}
        if not any(left.values()):
            break
        if time.monotonic() > deadline:
            sys.exit(f"the objects of {namespace} were not gone within {timeout} s: "
                     + ", ".join(f"{len(v)} {k}" for k, v in left.items() if v))
        for kind in ("trainjobs", "jobsets", "jobs"):
            if left[kind]:
                api.call("DELETE", paths[kind] + "?propagationPolicy=Background")
        if left["pods"]:
            api.call("DELETE", paths["pods"] + "?gracePeriodSeconds=0")
            strip_finalizers(api, left["pods"])
        if left["services"]:
            api.call("DELETE", paths["services"])
        time.sleep(1)
    api.call("DELETE", f"/api/v1/namespaces/{namespace}/events")


# ---- the gang scenario ----


def gang_figures(pods, label, names, size):
    """pods: Pod objects of the namespace. Per job: its pods and those bound to a node; a gang
    is partial when some but not all of its ranks are bound (their GPUs held while the others
    wait)."""
    jobs = {n: {"pods": 0, "bound": 0} for n in names}
    for p in pods:
        job = (p["metadata"].get("labels") or {}).get(label)
        if job in jobs:
            jobs[job]["pods"] += 1
            jobs[job]["bound"] += 1 if (p.get("spec") or {}).get("nodeName") else 0
    partial = [n for n, j in jobs.items() if 0 < j["bound"] < size]
    return {"jobs": jobs, "partial_gangs": len(partial),
            "bound_gpus": sum(j["bound"] for j in jobs.values()) * GANG_GPUS,
            "whole_gangs": sum(1 for j in jobs.values() if j["bound"] >= size)}


def gang_run(api, args, kubeflow):
    """Both gang TrainJobs at once; the pods are read until nothing changes for GANG_STABLE_S
    after the first is bound (or GANG_TIMEOUT_S pass)."""
    names = [f"gang-{chr(ord('a') + i)}" for i in range(GANG_JOBS)]
    label = JOBSET_LABEL if kubeflow else TRAINJOB_LABEL
    reqs = [(f"{TJ_API}/namespaces/{NAMESPACE}/trainjobs", json.dumps(gang_trainjob(NAMESPACE, n, kubeflow)).encode())
            for n in names]
    _, t0 = api.create_all(reqs, args.connections)
    last, since = None, time.monotonic()
    while True:
        pods = api.json("GET", f"/api/v1/namespaces/{NAMESPACE}/pods")["items"]
        fig = gang_figures(pods, label, names, GANG_NODES)
        now = time.monotonic()
        if fig != last:
            last, since = fig, now
            log("  gang: " + ", ".join(f"{n} {j['bound']}/{j['pods']} bound" for n, j in fig["jobs"].items()))
        elif fig["bound_gpus"] and now - since >= GANG_STABLE_S:
            break
        if now - t0 > GANG_TIMEOUT_S:
            log(f"  gang: not settled within {GANG_TIMEOUT_S} s; taking the last state")
            break
        time.sleep(0.5)
    states = {tj["metadata"]["name"]: (tj.get("status") or {}).get("state")
              for tj in api.json("GET", f"{TJ_API}/namespaces/{NAMESPACE}/trainjobs")["items"]}
    for n, j in fig["jobs"].items():
        j["state"] = states.get(n)
    return fig


def gang_ours(cl, args):
    wait_schedulable(cl.api)
    c = Controller(args.binary, cl.kubeconfig, args.log_path)
    try:
        fig = gang_run(cl.api, args, kubeflow=False)
    finally:
        c.stop()
    bx.delete_everything(cl.api, NAMESPACE)
    return fig


def gang_kubeflow(cl, args):
    wait_schedulable(cl.api)
    fig = gang_run(cl.api, args, kubeflow=True)
    delete_kubeflow(cl.api, NAMESPACE)
    return fig


# ---- the report ----


def medians(runs):
    """The median of each figure over the runs: exist, applied, and per process cpu_s, peak_mib."""
    out = {"exist": statistics.median(r["exist"] for r in runs),
           "applied": statistics.median(r["applied"] for r in runs)}
    for key in ("cpu_s", "peak_mib"):
        out[key] = {n: round(statistics.median(r[key][n] for r in runs), 2) for n in runs[0][key]}
    return out


def side(cl, args, pods, requests, run):
    """The runs of one side on its cluster: plain client and controller, alternating."""
    base, ctrl = [], []
    n = args.jobs * args.nodes
    for i in range(args.runs):
        log(f"{cl.name} run {i + 1}/{args.runs}: plain client, {n} pod creates")
        base.append(bx.baseline_run(cl.api, NAMESPACE, pods, args.connections))
        log(f"  visible {base[-1]['visible']:.2f} s")
        log(f"{cl.name} run {i + 1}/{args.runs}: {args.jobs} TrainJobs x {args.nodes} nodes")
        ctrl.append(run(cl, args, requests))
        r = ctrl[-1]
        log(f"  pods exist {r['exist']:.2f} s; CPU " + ", ".join(f"{k} {v:.2f} s" for k, v in r["cpu_s"].items())
            + "; peak " + ", ".join(f"{k} {v:.0f} MiB" for k, v in r["peak_mib"].items()))
        cl.check()
    m = medians(ctrl)
    m["plain_client"] = statistics.median(b["visible"] for b in base)
    m["ratio"] = round(m["exist"] / m["plain_client"], 2)
    for key in ("exist", "plain_client", "applied"):
        m[key] = round(m[key], 2)
    return {"runs": ctrl, "plain_client_runs": [b["visible"] for b in base], "median": m}


def fmt_procs(d, names):
    return " + ".join(f"{d[n]:.2f}" if d[n] < 10 else f"{d[n]:.1f}" for n in names)


def table(out):
    v = out["versions"]
    n = out["pods"]
    chain = {"ours": ("trainjob-controller", ["controller"]),
             "kubeflow": (f"Kubeflow Trainer {v['trainer']} + JobSet {v['jobset']} + Job controller",
                          ["trainer", "jobset"])}
    lines = ["| kube-controller-manager | pods made by | all %d pods exist, s | plain client, s | ratio "
             "| CPU s (controller) | CPU s (kube-controller-manager) | peak RSS MiB |" % n,
             "|---|---|---|---|---|---|---|---|"]
    for limits, sides in out["limits"].items():
        for name, res in sides.items():
            m = res["median"]
            title, procs = chain[name]
            peaks = " + ".join(f"{m['peak_mib'][p]:.0f}" for p in procs)
            lines.append(f"| {limits} ({LIMITS[limits] or '20 QPS, burst 30'}) | {title} | {m['exist']:.2f} "
                         f"| {m['plain_client']:.2f} | {m['ratio']:.2f} | {fmt_procs(m['cpu_s'], procs)} "
                         f"| {m['cpu_s'][KCM]:.2f} | {peaks} |")
    if out.get("gang"):
        lines += ["", f"| {GANG_JOBS} TrainJobs of {GANG_NODES} nodes x {GANG_GPUS} GPUs on {GANG_CLUSTER_NODES} "
                  f"GH200 nodes | pods bound per job | partial gangs |", "|---|---|---|"]
        for name, fig in out["gang"].items():
            per = " + ".join(f"{j['bound']}" + (f" ({j['state']})" if j.get("state") else "")
                             for j in fig["jobs"].values())
            lines.append(f"| {chain[name][0]} | {per} | {fig['partial_gangs']} |")
    return "\n".join(lines)


def run(args):
    out = {"jobs": args.jobs, "nodes": args.nodes, "pods": args.jobs * args.nodes, "runs": args.runs,
           "versions": kubeflow_versions(), "limits": {}, "gang": {}}
    out["versions"]["trainjob_controller"] = subprocess.run(
        ["git", "-C", REPO, "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    pods = None
    for limits in args.limits.split(","):
        res = out["limits"][limits] = {}
        with Cluster(cluster_env(args.cluster, args, limits), kubeflow=False) as cl:
            out["versions"]["kubernetes"] = cl.api.json("GET", "/version")["gitVersion"]
            bx.setup(cl.api, NAMESPACE)
            pods = pods or yardstick_pods(args.binary, NAMESPACE, args.jobs, args.nodes)
            reqs = [(f"{TJ_API}/namespaces/{NAMESPACE}/trainjobs",
                     json.dumps(bx.trainjob(NAMESPACE, i, args.nodes)).encode()) for i in range(args.jobs)]
            res["ours"] = side(cl, args, pods, reqs, ours_run)
            if limits == "default" and not args.no_gang:
                log("gang scenario, trainjob-controller")
                out["gang"]["ours"] = gang_ours(cl, args)
        with Cluster(cluster_env(args.kubeflow_cluster, args, limits), kubeflow=True) as cl:
            bx.create_namespace(NAMESPACE)
            reqs = [(f"{TJ_API}/namespaces/{NAMESPACE}/trainjobs",
                     json.dumps(kubeflow_trainjob(NAMESPACE, i, args.nodes)).encode()) for i in range(args.jobs)]
            res["kubeflow"] = side(cl, args, pods, reqs, kubeflow_run)
            if limits == "default" and not args.no_gang:
                log("gang scenario, Kubeflow Trainer without Kueue")
                out["gang"]["kubeflow"] = gang_kubeflow(cl, args)
    print(table(out))
    print(json.dumps(out))
    if out["gang"].get("ours", {}).get("partial_gangs"):
        sys.exit("trainjob-controller placed a partial gang")


def self_test():
    def pod(job, bound):
        return {"metadata": {"labels": {TRAINJOB_LABEL: job}}, "spec": {"nodeName": "n" if bound else None}}
    names = ["a", "b"]
    cases = [  # (bound pods of a, of b, created pods of a, of b), partial gangs, whole gangs
        ((5, 0, 5, 0), 0, 1),
        ((5, 3, 5, 5), 1, 1),
        ((4, 4, 5, 5), 2, 0),
        ((0, 0, 5, 5), 0, 0),
        ((5, 5, 5, 5), 0, 2),
    ]
    bad = 0
    for (ba, bb, ca, cb), want_partial, want_whole in cases:
        pods = ([pod("a", i < ba) for i in range(ca)] + [pod("b", i < bb) for i in range(cb)]
                + [pod("other", True)])
        fig = gang_figures(pods, TRAINJOB_LABEL, names, GANG_NODES)
        got = (fig["partial_gangs"], fig["whole_gangs"], fig["bound_gpus"])
        want = (want_partial, want_whole, (ba + bb) * GANG_GPUS)
        if got != want:
            bad += 1
            print(f"gang_figures with bound {ba}+{bb} of {ca}+{cb}: {got}, want {want}")
    tj = kubeflow_trainjob("ns", 3, 4)
    patch = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    if ("podTemplateOverrides" in tj["spec"] or patch[0]["name"] != "node"
            or patch[0]["template"]["spec"]["template"]["metadata"]["annotations"][RUN_TIME] != "1h"):
        bad += 1
        print(f"kubeflow_trainjob: {json.dumps(tj['spec'])}")
    g = gang_trainjob("ns", "g", kubeflow=True)["spec"]["runtimePatches"][0]
    spec = g["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    if spec["nodeSelector"] != {"nvidia.com/gpu.product": GH200} or spec["tolerations"][0]["key"] != GPU:
        bad += 1
        print(f"gang_trainjob (Kubeflow): {json.dumps(g)}")
    print("self-test: " + ("ok" if not bad else f"{bad} failed"))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=4, help="nodes (pods) per TrainJob")
    ap.add_argument("--runs", type=int, default=3, help="runs of each side per setting, alternating")
    ap.add_argument("--connections", type=int, default=32, help="connections of the plain client")
    ap.add_argument("--limits", default="default,raised",
                    help="settings of kube-controller-manager's client limits to run: default, raised")
    ap.add_argument("--no-gang", action="store_true", help="leave out the gang scenario")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a run may take until every pod exists")
    ap.add_argument("--cluster", default=os.environ.get("TJC_CLUSTER", "bench-vs-ours"),
                    help="the cluster of this controller")
    ap.add_argument("--kubeflow-cluster", default="bench-kubeflow", help="the cluster of Kubeflow's chain")
    ap.add_argument("--self-test", action="store_true", help="check the gang figures and the objects; no cluster")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(self_test())
    unknown = set(args.limits.split(",")) - set(LIMITS)
    if unknown:
        sys.exit(f"--limits: unknown {', '.join(sorted(unknown))} (known: {', '.join(LIMITS)})")
    if args.cluster == args.kubeflow_cluster:
        sys.exit("--cluster and --kubeflow-cluster must differ")
    build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
    args.binary = os.path.join(build, "trainjob-controller")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no controller at {args.binary}: ninja -C {build} trainjob-controller")
    args.log_path = os.path.join(REPO, "build", "bench-vs-kubeflow-controller.log")
    if self_test():
        sys.exit("the self-test failed")
    # SIGTERM ends the runs as an error would: the clusters and managers are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    run(args)


if __name__ == "__main__":
    main()
