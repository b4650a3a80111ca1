#!/usr/bin/env python3
"""Scale benchmark of the controller on a cluster of Kubernetes' envelope: --nodes KWOK nodes
(mostly GPU nodes of the FLAME classes), --pods pods that are not TrainJobs', and
--trainjobs TrainJobs of 8 nodes. Every figure stands beside a yardstick measured in the same
run on the same cluster, and one JSON line at the end gives them all with the sizes:

  - cold start: a fresh controller process until every cache has synced and /readyz
    answers 200, by streaming lists (a watch with sendInitialEvents, the default) and with
    --paginated-lists, against the yardstick of a plain paginated LIST (500 per page) of the
    same collections by the plain client of bench_expansion.py, all of them at once as the
    informers list them. The three take turns for --rounds rounds, as in informer_scale.py,
    so that a slower minute of the shared machine hits each alike; the medians and their
    ratios are reported. A streaming start whose log says it fell back to paginated lists
    fails the benchmark;
  - memory with everything cached: the resident set (VmRSS) of the streaming controller a
    few seconds after its start, in MiB, per cached pod, and per pod beyond the RSS of a
    controller started on the cluster before its pods existed (the fixed part); with that,
    the RSS at 150,000 pods, the goal being under 128 MiB;
  - steady state: the controller's CPU seconds per second over --window seconds with no
    change, then over --window seconds of a churn of --churn-rate pod events a second (pods
    that are not TrainJobs' created, labelled and deleted in turn), beside the API server's
    CPU seconds per second over the same windows;
  - expansion: --trainjobs TrainJobs x 8 nodes applied at once, until every pod exists,
    against the plain client's creates of the same pods (bench_expansion.py's runs, with
    every other pod of the cluster in the controller's cache), --runs times in turn; the
    median of the ratios (the goal: 1.05 or less);
  - relist: with --trainjobs TrainJobs running, the controller is frozen (SIGSTOP), a write
    moves the cluster's resourceVersion past every one it watched from, and the API server
    is killed and started again with a fresh watch cache; thawed, every watch of the
    controller gets 410 (too old resource version) and every cache lists again. The time
    from the first 410 in its log to every cache that got one having relisted
    (trainjob_relists_total, polled), and the proof that no reconcile saw a half relist: the
    reflector swaps a relist into its cache in one step, so the reconciles that run on the
    relisted caches (counted) find every pod of every job, and make no write that a missing
    pod would cause: no pod created (trainjob_pods_created_total), no worker restarted
    (trainjob_worker_restarts_total), no POST or DELETE at all (rest_client_requests_total),
    and the TrainJobs' pods and restart counts, read from the cluster, are the same before
    and after.

  tests/bench/bench_scale.py [--nodes 500] [--pods 20000] [--trainjobs 200] [--runs 3]
  tests/bench/bench_scale.py --self-test   # the parsers and the fit, no cluster
  tests/bench/bench_scale.py --fit OUT...  # how each figure grows over runs' outputs

The pods that are not TrainJobs' look like a service's pods (labels, env, resources) and carry
a scheduling gate, so neither the scheduler nor KWOK touches them: the figures are the
controller's and the API server's, not those of 150,000 simulated kubelets. They spread over
--namespaces namespaces. The TrainJobs use bench_expansion.py's CPU runtime (their pods run on
the CPU nodes, enough for them all); the other nodes are GH200 (three quarters) and H100.

The benchmark uses its own local cluster (TJC_CLUSTER, "bench-scale" by default), started if
none runs and stopped at the end if it was started here (--keep-cluster leaves it up, with
its pods: a later run with the same --pods and --namespaces reuses them, and then has no
fixed part of the RSS). The controller is build/release/trainjob-controller (TJC_BUILD_DIR
overrides the folder); its log is build/bench-scale-controller.log. Progress goes to
stderr."""

import argparse
import calendar
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import types
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_expansion import (  # noqa: E402
    CLUSTER_SH, REPO, TJ_API, TRAINJOB_LABEL, Api, Controller, PodWatch,
    all_running, baseline_run, controller_run, delete_everything, log, rendered_objects,
    setup, trainjob)
from bench_admission import wait_for_quiet, wait_schedulable  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
# The e2e suite's restart of the API server: kill -9, the same command line, until ready.
from kube import cluster_dir, restart_apiserver  # noqa: E402

TRAINJOB_NODES = 8
# The CPU request of the relist's TrainJobs: 100 pods fill a CPU node (32 cores) before its
# 110 pod slots do. The admission counts CPU but not pod slots, and packs gangs onto the
# fewest nodes: with 10m, as in bench_expansion.py, it pins 160 pods to one node of 110.
RELIST_CPU = "320m"
RELIST_PODS_PER_NODE = 100
BG_LABEL = "bench.trainjob.flame.dev/scale"
CHURN_LABEL = "bench.trainjob.flame.dev/churn"
EXPANSION_NS = "bench-scale-expansion"
GOAL_PODS = 150000
KCM_FLAGS = "--kube-api-qps=1000 --kube-api-burst=2000"
GOAL_RSS_MIB = 128
COLLECTIONS = ["/api/v1/pods", "/api/v1/nodes", f"{TJ_API}/trainjobs", f"{TJ_API}/trainingruntimes",
               f"{TJ_API}/clustertrainingruntimes", "/apis/scheduling.k8s.io/v1/priorityclasses"]


# ---- pure parts (the self-test checks them) ----


def node_split(nodes, trainjobs):
    """(gh200, h100, cpu): enough CPU nodes for every TrainJob pod of the relist (and two
    more), the rest GPU nodes, three GH200 for one H100."""
    cpu = math.ceil(trainjobs * TRAINJOB_NODES / RELIST_PODS_PER_NODE) + 2
    gpu = nodes - cpu
    if gpu < 1:
        raise ValueError(f"{nodes} nodes leave no GPU node beside the {cpu} CPU nodes "
                         f"{trainjobs} TrainJobs x {TRAINJOB_NODES} need")
    gh200 = max(1, round(gpu * 0.75))
    return gh200, gpu - gh200, cpu


def parse_metrics(text):
    """Prometheus text: {(name, frozenset of (label, value)): value}."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)', line)
        if not m:
            continue
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        try:
            out[(m.group(1), labels)] = float(m.group(3))
        except ValueError:
            pass
    return out


def metric_sum(series, name, **labels):
    """The sum of the series of name whose labels include labels."""
    want = set(labels.items())
    return sum(v for (n, ls), v in series.items() if n == name and want <= ls)


def expired_watches(lines):
    """{resource: first time (epoch seconds)} of the controller's log lines that say a watch
    was refused as too old (410)."""
    out = {}
    for line in lines:
        if '"list or watch failed"' not in line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        err = rec.get("error", "")
        m = re.match(r"(?:watch|streaming list) (\S+): (.*)", err)
        if not m or not re.search(r"too old resource version|\b410\b|Expired|Gone", m.group(2)):
            continue
        out.setdefault(m.group(1), log_time(rec["ts"]))
    return out


def log_time(ts):
    """The controller's log timestamp (2026-12-01T18:45:03.123Z) in epoch seconds."""
    secs, _, ms = ts.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(secs, "%Y-%m-%dT%H:%M:%S")) + int(ms or 0) / 1000


def fit_power(points):
    """Least squares of log y = log a + b log x over (x, y) points with x, y > 0: (a, b), so
    that y = a * x^b. Needs two distinct x."""
    pts = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len({x for x, _ in pts}) < 2:
        raise ValueError("a fit needs two sizes")
    mx = statistics.mean(x for x, _ in pts)
    my = statistics.mean(y for _, y in pts)
    b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    return math.exp(my - b * mx), b


# The figures whose growth with the pods --fit reports: (name, path in the JSON line).
GROWTH = [
    ("cold start, streaming (s)", ("cold_start", "median_s", "streaming")),
    ("cold start, paginated (s)", ("cold_start", "median_s", "paginated")),
    ("plain paginated LIST (s)", ("cold_start", "median_s", "plain_list")),
    ("RSS, everything cached (MiB)", ("rss", "full_mib")),
    ("controller CPU under churn (s/s)", ("churn", "controller_cpu_s_per_s", "churn")),
    ("controller CPU idle (s/s)", ("churn", "controller_cpu_s_per_s", "idle")),
    ("expansion, median ratio", ("expansion", "median_ratio")),
    ("relist after 410 (s)", ("relist", "seconds_from_first_410")),
]


def growth(results, at=GOAL_PODS):
    """For each figure of GROWTH in two or more results (the JSON lines of runs at different
    --pods): the fit y = a * pods^b over them, and y at `at` pods. Returns rows of (name,
    [(pods, y)], b, y at `at`); figures with fewer than two sizes get None for both."""
    rows = []
    for name, path in GROWTH:
        pts = []
        for r in results:
            v = r
            for k in path:
                v = v.get(k) if isinstance(v, dict) else None
            if isinstance(v, (int, float)) and v > 0:
                pts.append((r["sizes"]["pods"], float(v)))
        pts.sort()
        try:
            a, b = fit_power(pts)
            rows.append((name, pts, b, a * at ** b))
        except ValueError:
            rows.append((name, pts, None, None))
    return rows


def read_results(paths):
    """The last line of each file that is a JSON object with sizes (the benchmark's output)."""
    out = []
    for path in paths:
        found = None
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        continue
                    if "sizes" in obj:
                        found = obj
        if found is None:
            sys.exit(f"{path}: no result line")
        out.append(found)
    return out


def print_growth(results):
    rows = growth(results)
    print(f"figure                              sizes (pods: value)                        "
          f"exponent  at {GOAL_PODS} pods")
    for name, pts, b, at in rows:
        sizes = ", ".join(f"{p}: {v:g}" for p, v in pts)
        fit = f"{b:8.2f}  {at:10.3g}" if b is not None else "       -           -"
        print(f"{name:35s} {sizes:42s} {fit}")
    print(json.dumps({"fit": [{"figure": n, "points": p, "exponent": rnd(b), f"at_{GOAL_PODS}": rnd(a)}
                              for n, p, b, a in rows]}))


def median(values):
    return statistics.median(values) if values else None


def rnd(x, digits=3):
    return None if x is None else round(x, digits)


# ---- the cluster's objects ----


def background_pod(i, namespaces):
    """Pod i of the ones that are not TrainJobs': a web service's replica, gated."""
    app = f"svc-{i // 50:04d}"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{app}-{i:06d}",
            "namespace": f"bench-scale-{i % namespaces}",
            "labels": {"app.kubernetes.io/name": app, "app.kubernetes.io/part-of": "bench",
                       "pod-template-hash": "7d9f8c6b5", BG_LABEL: "true"},
            "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
        },
        "spec": {
            "schedulingGates": [{"name": "bench.trainjob.flame.dev/gate"}],
            "containers": [{
                "name": "app",
                "image": "registry.example.com/team/app:1.4.2",
                "args": ["--port=8080", "--metrics-port=9090"],
                "ports": [{"containerPort": 8080, "name": "http"}, {"containerPort": 9090, "name": "metrics"}],
                "env": [{"name": "APP", "value": app}, {"name": "LOG_LEVEL", "value": "info"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"},
                              "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
            }],
        },
    }


def count_pods(api, selector):
    """Pods of the cluster with the label selector, by a paginated LIST."""
    return plain_list(api, f"/api/v1/pods?labelSelector={urllib.parse.quote(selector)}", exact=True)


def plain_list(api, path, limit=500, conn=None, exact=False):
    """A paginated LIST of path as a plain client does it, without decoding the objects: the
    continue token from the head of each page (the API server writes the list's metadata
    before its items). Returns the objects: with exact, every page decoded and counted;
    without, the last page's count plus limit for each page before it (what a full page
    holds)."""
    own = conn is None
    conn = conn or api.connect(timeout=600)
    sep = "&" if "?" in path else "?"
    token, pages, n = None, 0, 0
    try:
        while True:
            q = f"{path}{sep}limit={limit}" + (f"&continue={urllib.parse.quote(token)}" if token else "")
            status, data = api.call("GET", q, conn=conn)
            if status != 200:
                raise RuntimeError(f"GET {q}: {status} {data[:200]!r}")
            pages += 1
            m = re.search(rb'"continue":"([^"]*)"', data[:4096].split(b'"items":', 1)[0])
            token = m.group(1).decode() if m else ""
            if exact:
                n += len(json.loads(data)["items"])
            if not token:
                return n if exact else (pages - 1) * limit + len(json.loads(data)["items"])
    finally:
        if own:
            conn.close()


def yardstick_lists(api):
    """The plain client's paginated LIST of every collection the controller caches, all at
    once (one connection each, as the informers start together): (seconds, objects)."""
    counts, errors = {}, []

    def one(path):
        try:
            counts[path] = plain_list(api, path)
        except (OSError, RuntimeError) as e:
            errors.append(f"{path}: {e}")

    threads = [threading.Thread(target=one, args=(p,)) for p in COLLECTIONS]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - t0
    if errors:
        sys.exit(f"the plain LIST failed: {errors[0]}")
    return elapsed, counts


def ensure_namespaces(api, names):
    for ns in names:
        status, data = api.call("POST", "/api/v1/namespaces", json.dumps(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}).encode())
        if status not in (201, 409):
            sys.exit(f"namespace {ns}: {status} {data[:200]!r}")
    deadline = time.monotonic() + 120
    for ns in names:
        while api.call("GET", f"/api/v1/namespaces/{ns}/serviceaccounts/default")[0] != 200:
            if time.monotonic() > deadline:
                sys.exit(f"no default ServiceAccount in {ns}")
            time.sleep(0.5)


def fill(api, args):
    """Creates the pods that are not TrainJobs' that the cluster lacks (a kept cluster has
    them); returns (pods created, creates per second)."""
    ensure_namespaces(api, [f"bench-scale-{k}" for k in range(args.namespaces)])
    have = count_pods(api, BG_LABEL)
    if have == args.pods:
        return 0, None
    if have:
        sys.exit(f"the cluster has {have} pods of an earlier run, not {args.pods}: bring it down")
    t0 = time.monotonic()
    chunk = 10000
    for start in range(0, args.pods, chunk):
        reqs = []
        for i in range(start, min(start + chunk, args.pods)):
            p = background_pod(i, args.namespaces)
            reqs.append((f"/api/v1/namespaces/{p['metadata']['namespace']}/pods", json.dumps(p).encode()))
        api.create_all(reqs, args.connections)
        log(f"  {min(start + chunk, args.pods)}/{args.pods} pods created")
    return args.pods, args.pods / (time.monotonic() - t0)


# ---- the controller ----


def proc_status(pid, key):
    """A field of /proc/pid/status in KiB (VmRSS, VmHWM)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def series(c):
    return parse_metrics(c._get(c.metrics_port, "/metrics") or "")


def log_lines(path, offset):
    with open(path, errors="replace") as f:
        f.seek(offset)
        return f.read().splitlines()


def cached_pods(lines):
    """The pods of the 'caches synced' line in the log lines, None if none."""
    for line in lines:
        if '"caches synced"' in line:
            try:
                return json.loads(line).get("pods")
            except ValueError:
                return None
    return None


def start_controller(args, paginated=False):
    """A fresh controller; returns (controller, seconds until /readyz said 200, its log)."""
    offset = os.path.getsize(args.log_path) if os.path.exists(args.log_path) else 0
    t0 = time.monotonic()
    c = Controller(args.binary, args.kubeconfig, args.log_path,
                   extra_args=("--paginated-lists",) if paginated else (), ready_timeout=900)
    ready = time.monotonic() - t0
    lines = log_lines(args.log_path, offset)
    if not paginated and any("falling back to paginated lists" in ln for ln in lines):
        c.stop()
        sys.exit(f"the controller fell back to paginated lists; log: {args.log_path}")
    return c, ready, lines


def empty_rss(args, settle=3):
    c, _, _ = start_controller(args)
    try:
        time.sleep(settle)
        return proc_status(c.proc.pid, "VmRSS")
    finally:
        c.stop()


def cold_starts(api, args, out):
    timed = {"streaming": [], "paginated": [], "plain_list": []}
    cpu = {"streaming": [], "paginated": []}
    rss, hwm, pods = [], [], None
    for k in range(args.rounds):
        for mode in ("streaming", "paginated"):
            c, ready, lines = start_controller(args, paginated=mode == "paginated")
            try:
                timed[mode].append(ready)
                cpu[mode].append(c.cpu_seconds())
                pods = cached_pods(lines) or pods
                if mode == "streaming":
                    time.sleep(args.settle)
                    rss.append(proc_status(c.proc.pid, "VmRSS"))
                    hwm.append(proc_status(c.proc.pid, "VmHWM"))
            finally:
                c.stop()
        elapsed, counts = yardstick_lists(api)
        timed["plain_list"].append(elapsed)
        log(f"  round {k + 1}/{args.rounds}: ready after {timed['streaming'][-1]:.2f} s streaming, "
            f"{timed['paginated'][-1]:.2f} s paginated; plain LIST {elapsed:.2f} s "
            f"({counts['/api/v1/pods']} pods); RSS {rss[-1] / 1024:.1f} MiB")
    med = {k: median(v) for k, v in timed.items()}
    out["cold_start"] = {
        "seconds": {k: [rnd(x) for x in v] for k, v in timed.items()},
        "median_s": {k: rnd(v) for k, v in med.items()},
        "streaming_vs_plain_list": rnd(med["streaming"] / med["plain_list"]),
        "paginated_vs_plain_list": rnd(med["paginated"] / med["plain_list"]),
        "streaming_vs_paginated": rnd(med["streaming"] / med["paginated"]),
        "cpu_s_at_ready": {k: rnd(median(v)) for k, v in cpu.items()},
        "cached_pods": pods,
        "listed": counts,
    }
    full = median(rss) * 1024
    per_pod = full / pods if pods else None
    marginal = (full - out["rss"]["empty_bytes"]) / pods if pods and out["rss"].get("empty_bytes") else None
    out["rss"].update({
        "full_mib": rnd(full / 2 ** 20, 1), "peak_mib": rnd(median(hwm) / 1024, 1),
        "bytes_per_pod": rnd(per_pod, 0), "marginal_bytes_per_pod": rnd(marginal, 0),
    })
    if marginal is not None:
        at_goal = (out["rss"]["empty_bytes"] + marginal * GOAL_PODS) / 2 ** 20
        out["rss"]["projected_mib_at_150k_pods"] = rnd(at_goal, 1)
        out["goals"]["rss_under_128_mib_at_150k"] = at_goal < GOAL_RSS_MIB


class Churn:
    """Pod events at a steady rate from four threads, each op at its slot t0 + i / rate: a
    churn pod created, a pod that is not a TrainJob's labelled, another labelled, the oldest
    churn pod deleted (a label instead while none is left). Every op is one watch event."""

    def __init__(self, api, args):
        self.api, self.rate, self.ns = api, args.churn_rate, "bench-scale-0"
        self.targets = [background_pod(i, args.namespaces)["metadata"]
                        for i in range(0, min(args.pods, 2000))]
        self.lock = threading.Lock()
        self.created, self.done, self.errors, self.late = [], 0, [], 0
        self.next = 0
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(4)]

    def start(self):
        self.t0 = time.monotonic()
        for t in self.threads:
            t.start()

    def _op(self, i, conn):
        kind = i % 4
        with self.lock:
            victim = self.created.pop(0) if kind == 3 and self.created else None
        if kind == 0:
            name = f"churn-{i:08d}"
            p = background_pod(0, 1)
            p["metadata"].update(name=name, namespace=self.ns, labels={CHURN_LABEL: "true"})
            status, data = self.api.call("POST", f"/api/v1/namespaces/{self.ns}/pods",
                                         json.dumps(p).encode(), conn)
            if status == 201:
                with self.lock:
                    self.created.append(name)
        elif victim:
            status, data = self.api.call("DELETE", f"/api/v1/namespaces/{self.ns}/pods/{victim}", None, conn)
        else:
            t = self.targets[i % len(self.targets)]
            body = json.dumps({"metadata": {"labels": {CHURN_LABEL: str(i)}}}).encode()
            status, data = self.api.call("PATCH", f"/api/v1/namespaces/{t['namespace']}/pods/{t['name']}",
                                         body, conn, "application/merge-patch+json")
        return status, data

    def _run(self):
        conn = self.api.connect()
        while not self.stopping.is_set():
            with self.lock:
                i = self.next
                self.next += 1
            wait = self.t0 + i / self.rate - time.monotonic()
            if wait > 0:
                self.stopping.wait(wait)
            elif wait < -1:
                with self.lock:
                    self.late += 1
            if self.stopping.is_set():
                break
            status, data = self._op(i, conn)
            with self.lock:
                if status in (200, 201):
                    self.done += 1
                else:
                    self.errors.append(f"{status} {data[:200]!r}")
        conn.close()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(30)
        if self.errors:
            sys.exit(f"{len(self.errors)} churn requests failed, first: {self.errors[0]}")
        return time.monotonic() - self.t0

    def clean(self):
        """Deletes the churn pods still there."""
        sel = urllib.parse.quote(CHURN_LABEL + "=true")
        self.api.call("DELETE", f"/api/v1/namespaces/{self.ns}/pods?labelSelector={sel}")


def apiserver_pid():
    with open(os.path.join(cluster_dir(), "pids", "kube-apiserver.pid")) as f:
        return int(f.read().strip())


def steady_state(api, args, out):
    c, _, _ = start_controller(args)
    try:
        time.sleep(args.settle)
        api_pid = apiserver_pid()

        def window(churn):
            c0, a0, t0 = c.cpu_seconds(), proc_cpu(api_pid), time.monotonic()
            if churn:
                churn.start()
            time.sleep(args.window)
            elapsed = churn.stop() if churn else time.monotonic() - t0
            return (c.cpu_seconds() - c0) / elapsed, (proc_cpu(api_pid) - a0) / elapsed, elapsed

        idle, api_idle, _ = window(None)
        churn = Churn(api, args)
        busy, api_busy, elapsed = window(churn)
        churn.clean()
        rate = churn.done / elapsed
        log(f"  idle: controller {idle:.4f} CPU s/s; churn of {rate:.1f} events/s: controller "
            f"{busy:.4f} CPU s/s, API server {api_busy:.3f}")
        if rate < 0.9 * args.churn_rate:
            log(f"  note: the churn reached {rate:.1f} of {args.churn_rate} events/s")
        out["churn"] = {
            "window_s": args.window, "events_per_s": rnd(rate, 2), "events": churn.done,
            "late_ops": churn.late,
            "controller_cpu_s_per_s": {"idle": rnd(idle, 5), "churn": rnd(busy, 5)},
            "apiserver_cpu_s_per_s": {"idle": rnd(api_idle, 4), "churn": rnd(api_busy, 4)},
            "controller_vs_apiserver": rnd(busy / api_busy, 4) if api_busy else None,
            "controller_cpu_ms_per_event": rnd((busy - idle) * 1000 / rate, 3) if rate else None,
        }
    finally:
        c.stop()


def expansion(api, args, out):
    x = types.SimpleNamespace(binary=args.binary, kubeconfig=args.kubeconfig, jobs=args.trainjobs,
                              nodes=TRAINJOB_NODES, connections=args.connections, settle=False)
    pods, _ = rendered_objects(args.binary, EXPANSION_NS, args.trainjobs, TRAINJOB_NODES)
    base, ctrl = [], []
    for i in range(args.runs):
        base.append(baseline_run(api, EXPANSION_NS, pods, args.connections))
        ctrl.append(controller_run(api, x, EXPANSION_NS, args.log_path))
        log(f"  run {i + 1}/{args.runs}: plain client {base[-1]['visible']:.2f} s, controller "
            f"{ctrl[-1]['exist']:.2f} s ({ctrl[-1]['exist'] / base[-1]['visible']:.2f}x; TrainJobs "
            f"applied in {ctrl[-1]['applied']:.2f} s), CPU "
            f"{ctrl[-1]['cpu_exist']:.2f} s, {ctrl[-1]['errors']:.0f} failed reconciles")
    ratios = [c["exist"] / b["visible"] for b, c in zip(base, ctrl)]
    out["expansion"] = {
        "trainjobs": args.trainjobs, "pods": len(pods),
        "plain_client_s": [rnd(b["visible"]) for b in base], "controller_s": [rnd(c["exist"]) for c in ctrl],
        "ratios": [rnd(r) for r in ratios], "median_ratio": rnd(median(ratios)),
        "controller_cpu_s": rnd(median([c["cpu_exist"] for c in ctrl])),
        "controller_peak_mib": rnd(median([c["peak_mib"] for c in ctrl]), 1),
        "failed_reconciles": sum(c["errors"] for c in ctrl),
    }
    out["goals"]["expansion_le_1_05"] = median(ratios) <= 1.05


def trainjob_state(api):
    """{pod name: uid} of the TrainJobs' pods, and {TrainJob: (state, restartCount)}."""
    sel = urllib.parse.quote(TRAINJOB_LABEL)
    pods = api.json("GET", f"/api/v1/namespaces/{EXPANSION_NS}/pods?labelSelector={sel}")["items"]
    jobs = api.json("GET", f"{TJ_API}/namespaces/{EXPANSION_NS}/trainjobs")["items"]
    return ({p["metadata"]["name"]: p["metadata"]["uid"] for p in pods},
            {j["metadata"]["name"]: ((j.get("status") or {}).get("state"),
                                     (j.get("status") or {}).get("restartCount", 0)) for j in jobs})


def writes(s):
    return {"pods_created": metric_sum(s, "trainjob_pods_created_total"),
            "worker_restarts": metric_sum(s, "trainjob_worker_restarts_total"),
            "posts": metric_sum(s, "rest_client_requests_total", method="POST"),
            "deletes": metric_sum(s, "rest_client_requests_total", method="DELETE"),
            "patches": metric_sum(s, "rest_client_requests_total", method="PATCH"),
            "reconciles": metric_sum(s, "controller_runtime_reconcile_total"),
            "reconcile_errors": metric_sum(s, "controller_runtime_reconcile_total", result="error"),
            "reconcile_conflicts": metric_sum(s, "controller_runtime_reconcile_total", result="requeue")}


def wait_quiet_reconciles(c, quiet=3.0, timeout=300):
    """Until the reconcile count has not moved for `quiet` seconds."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        n = metric_sum(series(c), "controller_runtime_reconcile_total")
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return
        time.sleep(0.5)
    sys.exit(f"the reconciles did not go quiet within {timeout} s")


def relist_trainjob(i):
    """bench_expansion.py's TrainJob i, with RELIST_CPU per pod, so that every pod runs."""
    tj = trainjob(EXPANSION_NS, i, TRAINJOB_NODES)
    tj["spec"]["trainer"]["resourcesPerNode"]["requests"]["cpu"] = RELIST_CPU
    return tj


def relist(api, args, out):
    c, _, _ = start_controller(args)
    try:
        reqs = [(f"{TJ_API}/namespaces/{EXPANSION_NS}/trainjobs", json.dumps(relist_trainjob(i)).encode())
                for i in range(args.trainjobs)]
        watch = PodWatch(api, EXPANSION_NS, TRAINJOB_LABEL, args.trainjobs * TRAINJOB_NODES)
        _, t0 = api.create_all(reqs, args.connections)
        watch.wait(600)
        deadline = time.monotonic() + 900
        while not all_running(api, EXPANSION_NS, args.trainjobs):
            if time.monotonic() > deadline:
                sys.exit(f"not every TrainJob was Running within 900 s; log: {args.log_path}")
            time.sleep(1)
        log(f"  {args.trainjobs} TrainJobs Running after {time.monotonic() - t0:.1f} s")
        wait_quiet_reconciles(c)
        before_pods, before_jobs = trainjob_state(api)
        s0 = series(c)
        w0 = writes(s0)
        offset = os.path.getsize(args.log_path)
        c.proc.send_signal(signal.SIGSTOP)
        try:
            status, data = api.call("POST", f"/api/v1/namespaces/{EXPANSION_NS}/configmaps", json.dumps(
                {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": f"rv-bump-{int(time.time())}"}}).encode())
            if status != 201:
                sys.exit(f"the write before the restart: {status} {data[:200]!r}")
            log("  controller frozen; restarting the API server")
            restart_apiserver()
        finally:
            c.proc.send_signal(signal.SIGCONT)
        t_cont = time.time()
        expired, done_at, relisted = {}, None, {}
        deadline = time.monotonic() + 600
        while done_at is None:
            if time.monotonic() > deadline:
                sys.exit(f"the caches did not relist within 600 s (410s seen: {sorted(expired)}, "
                         f"relisted: {sorted(relisted)}); log: {args.log_path}")
            s = series(c)
            now = time.time()
            expired = expired_watches(log_lines(args.log_path, offset))
            for res in expired:
                if res not in relisted and (metric_sum(s, "trainjob_relists_total", resource=res)
                                            > metric_sum(s0, "trainjob_relists_total", resource=res)):
                    relisted[res] = now
            if {"pods", "nodes", "trainjobs"} <= set(expired) and set(relisted) >= set(expired):
                done_at = now
            time.sleep(0.2)
        first_410 = min(expired.values())
        log(f"  410 for {', '.join(sorted(expired))}; every cache relisted {done_at - first_410:.2f} s "
            f"after the first 410 ({done_at - t_cont:.2f} s after the thaw)")
        time.sleep(args.settle)
        wait_quiet_reconciles(c)
        w1 = writes(series(c))
        after_pods, after_jobs = trainjob_state(api)
        rss, hwm = proc_status(c.proc.pid, "VmRSS"), proc_status(c.proc.pid, "VmHWM")
    finally:
        c.stop()
    delta = {k: w1[k] - w0[k] for k in w0}
    same = before_pods == after_pods and before_jobs == after_jobs
    whole = (delta["reconciles"] > 0 and delta["pods_created"] == 0 and delta["worker_restarts"] == 0
             and delta["posts"] == 0 and delta["deletes"] == 0 and same)
    out["relist"] = {
        "expired_resources": sorted(expired),
        "seconds_from_first_410": rnd(done_at - first_410),
        "pods_relist_s": rnd(relisted["pods"] - expired["pods"]),
        "seconds_from_thaw": rnd(done_at - t_cont),
        "trainjob_pods": len(before_pods),
        "writes_after": {k: int(v) for k, v in delta.items()},
        "pods_and_restart_counts_unchanged": same,
        "no_half_relist": whole,
        "rss_mib_after": rnd(rss / 1024, 1), "peak_mib": rnd(hwm / 1024, 1),
    }
    log(f"  after the relist: {delta['reconciles']:.0f} reconciles, {delta['pods_created']:.0f} pods "
        f"created, {delta['worker_restarts']:.0f} restarts, {delta['posts']:.0f} POST, "
        f"{delta['deletes']:.0f} DELETE, {delta['patches']:.0f} PATCH; pods unchanged: {same}")
    delete_everything(api, EXPANSION_NS)
    if not whole:
        sys.exit(f"a reconcile acted on a partial cache after the relist: {json.dumps(out['relist'])}")


# ---- self-test ----


def self_test():
    assert node_split(500, 200) == (362, 120, 18), node_split(500, 200)
    assert node_split(5000, 2000) == (3628, 1210, 162), node_split(5000, 2000)
    assert sum(node_split(50, 20)) == 50 and node_split(50, 20)[2] == 4
    try:
        node_split(10, 200)
        raise AssertionError("no GPU node left must be refused")
    except ValueError:
        pass

    text = "\n".join([
        "# HELP rest_client_requests_total x",
        'rest_client_requests_total{code="201",method="POST",host="h"} 4',
        'rest_client_requests_total{code="409",method="POST",host="h"} 1',
        'rest_client_requests_total{code="200",method="GET",host="h"} 7',
        'trainjob_relists_total{resource="pods"} 2',
        'trainjob_relists_total{resource="nodes"} 1',
        "trainjob_pods_created_total 12",
        'weird{a="x\\"y"} 3',
    ])
    s = parse_metrics(text)
    assert metric_sum(s, "rest_client_requests_total", method="POST") == 5
    assert metric_sum(s, "rest_client_requests_total") == 12
    assert metric_sum(s, "trainjob_relists_total", resource="pods") == 2
    assert metric_sum(s, "trainjob_relists_total", resource="trainjobs") == 0
    assert metric_sum(s, "trainjob_pods_created_total") == 12
    assert metric_sum(s, "weird") == 3

    lines = [
        '{"ts":"2026-12-01T18:45:03.250Z","level":"warn","logger":"informer","msg":"list or watch '
        'failed","error":"watch pods: too old resource version: 100 (250)"}',
        '{"ts":"2026-12-01T18:45:03.900Z","level":"warn","logger":"informer","msg":"list or watch '
        'failed","error":"watch pods: too old resource version: 100 (260)"}',
        '{"ts":"2026-12-01T18:45:02.000Z","level":"warn","logger":"informer","msg":"list or watch '
        'failed","error":"watch nodes: connection refused"}',
        '{"ts":"2026-12-01T18:45:04.000Z","level":"warn","logger":"informer","msg":"list or watch '
        'failed","error":"streaming list trainjobs: 410 Gone: Expired"}',
        '{"ts":"2026-12-01T18:45:05.000Z","level":"info","logger":"controller","msg":"caches synced",'
        '"trainjobs":2,"pods":1234,"nodes":50}',
        "not json",
    ]
    e = expired_watches(lines)
    assert set(e) == {"pods", "trainjobs"}, e
    assert abs(e["trainjobs"] - e["pods"] - 0.75) < 1e-6, e
    assert abs(log_time("1970-01-01T00:00:10.500Z") - 10.5) < 1e-6
    assert cached_pods(lines) == 1234 and cached_pods(lines[:2]) is None

    a, b = fit_power([(10000, 20.0), (50000, 100.0), (100000, 200.0)])
    assert abs(b - 1) < 1e-9 and abs(a * 150000 ** b - 300) < 1e-6
    rows = growth([{"sizes": {"pods": 10000}, "rss": {"full_mib": 20.0}, "cold_start": {"median_s": {"streaming": 1.0}}},
                   {"sizes": {"pods": 40000}, "rss": {"full_mib": 50.0}, "cold_start": {"median_s": {"streaming": 4.0}}}])
    by = {n: (p, b, at) for n, p, b, at in rows}
    assert by["cold start, streaming (s)"][0] == [(10000, 1.0), (40000, 4.0)]
    assert abs(by["cold start, streaming (s)"][1] - 1) < 1e-9 and abs(by["cold start, streaming (s)"][2] - 15) < 1e-9
    assert 0 < by["RSS, everything cached (MiB)"][1] < 1
    assert by["relist after 410 (s)"] == ([], None, None)
    a, b = fit_power([(1, 3.0), (4, 6.0)])
    assert abs(b - 0.5) < 1e-9 and abs(a - 3) < 1e-9
    try:
        fit_power([(5, 1.0), (5, 2.0)])
        raise AssertionError("one size must be refused")
    except ValueError:
        pass

    p = background_pod(12345, 10)
    assert p["metadata"]["namespace"] == "bench-scale-5" and p["metadata"]["name"] == "svc-0246-012345"
    assert TRAINJOB_LABEL not in p["metadata"]["labels"] and p["spec"]["schedulingGates"]
    assert len(json.dumps(p)) > 700
    print("self-test passed")


# ---- main ----


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--self-test", action="store_true", help="check the parsers and the fit; no cluster")
    ap.add_argument("--fit", nargs="+", metavar="OUTPUT",
                    help="only fit how each figure grows with the pods over the outputs of runs")
    ap.add_argument("--nodes", type=int, default=500, help="KWOK nodes of the cluster")
    ap.add_argument("--pods", type=int, default=20000, help="pods that are not TrainJobs'")
    ap.add_argument("--trainjobs", type=int, default=200, help=f"TrainJobs of {TRAINJOB_NODES} nodes")
    ap.add_argument("--runs", type=int, default=3, help="expansion runs, each against the plain client")
    ap.add_argument("--rounds", type=int, default=3, help="cold starts of each mode, and plain LISTs")
    ap.add_argument("--namespaces", type=int, default=20, help="namespaces of the pods")
    ap.add_argument("--window", type=float, default=30, help="seconds of each steady-state window")
    ap.add_argument("--churn-rate", type=float, default=20, help="pod events per second of the churn")
    ap.add_argument("--settle", type=float, default=5, help="seconds after a start before RSS is read")
    ap.add_argument("--connections", type=int, default=32, help="connections of the plain client")
    ap.add_argument("--cluster", default=os.environ.get("TJC_CLUSTER", "bench-scale"))
    ap.add_argument("--keep-cluster", action="store_true", help="leave a cluster it started running")
    ap.add_argument("--skip", default="", help="phases to leave out: comma-separated of "
                                               "coldstart,churn,expansion,relist")
    ap.add_argument("--max-load", type=float, default=6.0, help="wait before each phase while the load is above")
    ap.add_argument("--quiet-wait", type=float, default=60, help="most seconds to wait for that")
    args = ap.parse_args()
    if args.self_test:
        self_test()
        return
    if args.fit:
        print_growth(read_results(args.fit))
        return
    if args.rounds < 1 or args.runs < 1:
        sys.exit("--rounds and --runs must be at least 1")
    build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
    args.binary = os.path.join(build, "trainjob-controller")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no controller at {args.binary}: ninja -C {build} trainjob-controller")
    args.log_path = os.path.join(REPO, "build", "bench-scale-controller.log")
    skip = set(filter(None, args.skip.split(",")))
    try:
        gh200, h100, cpu = node_split(args.nodes, args.trainjobs)
    except ValueError as e:
        sys.exit(str(e))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    env = dict(os.environ, TJC_CLUSTER=args.cluster, TJC_GH200_NODES=str(gh200),
               TJC_H100_NODES=str(h100), TJC_CPU_NODES=str(cpu))
    # No real nodes: they would only load the machine the figures are measured on.
    env.setdefault("TJC_REAL_NODES", "0")
    # kube-controller-manager's node lifecycle controller takes each new node's not-ready
    # taint off with its client's default limits (20 QPS): about 4.5 nodes a second, 19
    # minutes for 5,000. Raised, the nodes are schedulable in about as long as KWOK takes
    # to make them Ready. Nothing measured here goes through kube-controller-manager.
    env.setdefault("TJC_KCM_FLAGS", KCM_FLAGS)
    out = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "sizes": {"nodes": args.nodes, "gh200": gh200, "h100": h100, "cpu": cpu, "pods": args.pods,
                     "trainjobs": args.trainjobs, "trainjob_pods": args.trainjobs * TRAINJOB_NODES,
                     "runs": args.runs, "rounds": args.rounds, "churn_rate": args.churn_rate},
           "kube_controller_manager_flags": env["TJC_KCM_FLAGS"],
           "load": {"start": [round(x, 2) for x in os.getloadavg()]}, "rss": {}, "goals": {}}
    started = subprocess.run([CLUSTER_SH, "status"], env=env, capture_output=True).returncode != 0
    if started:
        log(f"starting cluster {args.cluster}: {gh200} GH200, {h100} H100, {cpu} CPU nodes")
        subprocess.run([CLUSTER_SH, "up"], env=env, check=True, stdout=sys.stderr)
    args.kubeconfig = subprocess.run([CLUSTER_SH, "kubeconfig"], env=env, capture_output=True,
                                     text=True, check=True).stdout.strip()
    os.environ["KUBECONFIG"] = args.kubeconfig
    os.environ["TJC_CLUSTER"] = args.cluster  # for cluster_dir()
    try:
        api = Api()
        if not started:
            # A cluster left up by an earlier run keeps that run's nodes: record what it has.
            out["sizes"]["cluster_reused"] = True
            for key, selector in (("gh200", "nvidia.com/gpu.product=NVIDIA-GH200-480GB"),
                                  ("h100", "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"),
                                  ("cpu", "!nvidia.com/gpu.product")):
                out["sizes"][key] = plain_list(
                    api, f"/api/v1/nodes?labelSelector={urllib.parse.quote(selector)}", exact=True)
            out["sizes"]["nodes"] = sum(out["sizes"][k] for k in ("gh200", "h100", "cpu"))
        setup(api, EXPANSION_NS)
        log("waiting until no node carries the not-ready taint")
        wait_schedulable(api, product=None)
        if count_pods(api, BG_LABEL) == 0:
            out["rss"]["empty_bytes"] = empty_rss(args) * 1024
            out["rss"]["empty_mib"] = rnd(out["rss"]["empty_bytes"] / 2 ** 20, 1)
            log(f"controller on the empty cluster: RSS {out['rss']['empty_mib']} MiB")
        log(f"creating {args.pods} pods in {args.namespaces} namespaces")
        created, rate = fill(api, args)
        out["pod_creates_per_s"] = rnd(rate, 1)
        if created:
            log(f"  {created} pods at {rate:.0f}/s")
        phases = [("coldstart", cold_starts), ("churn", steady_state), ("expansion", expansion),
                  ("relist", relist)]
        for name, phase in phases:
            if name in skip:
                continue
            wait_for_quiet(args)
            log(f"phase {name}")
            out["load"][name] = [round(x, 2) for x in os.getloadavg()]
            try:
                phase(api, args, out)
            except BaseException as e:
                # The figures of the phases before stay on record.
                out["failed"] = {"phase": name, "error": f"{type(e).__name__}: {e}"}
                print(json.dumps(out), flush=True)
                raise
    finally:
        if started and not args.keep_cluster:
            log(f"stopping cluster {args.cluster}")
            subprocess.run([CLUSTER_SH, "down"], env=env, stdout=sys.stderr)
    out["load"]["end"] = [round(x, 2) for x in os.getloadavg()]
    cs = out.get("cold_start")
    if cs and args.pods >= GOAL_PODS:
        out["goals"]["cold_start_under_10_s"] = cs["median_s"]["streaming"] < 10
    print(json.dumps(out))


if __name__ == "__main__":
    main()
