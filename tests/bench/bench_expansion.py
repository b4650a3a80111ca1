#!/usr/bin/env python3
"""Expansion benchmark of the controller: J TrainJobs x N nodes (200 x 4 by default) applied at
once, against the same J*N pod creates sent by a plain client with no rate limit, in the same
run and on the same cluster (the API server's own limit: the yardstick of a shared, noisy
machine). Each run measures, in this order:

  - pods: the plain client creates the J*N pods the controller would create (from its render
    command); wall time until every create returned, and until every pod was seen by a watch;
  - floor: the plain client sends the J TrainJobs and then the J*N pods: the least the API
    server must do before every pod exists when the TrainJob creates are in the clock;
  - writes: the plain client sends every write the controller makes for the burst (J
    TrainJobs, the J*N pods behind the gang's scheduling gate and the J*N patches that lift
    it, J Services, J status patches and J Events), in the order the controller gives them;
  - controller: a fresh controller process; the J TrainJobs are created at once and the clock
    runs from the first create sent until the watch has seen every one of the J*N pods; the
    controller's CPU time over that span (utime+stime), its peak resident memory (VmHWM),
    its reconciles, failed reconciles and mean reconcile time;
  - backlog: the J TrainJobs are created first, then a fresh controller starts; the clock
    runs from its start until every pod exists: the controller's own work (its start, list
    and writes) without the TrainJob creates, which are the user's.

The report gives each run and the medians; the goal is a ratio controller / pods of 1.05 or
less. Runs are interleaved (pods, floor, writes, controller, backlog, pods, ...) so that drift
in the machine's load reaches them all alike. Each run also logs when a quarter, half, three
quarters and all of its pods existed.

  tests/bench/bench_expansion.py [--jobs 200] [--nodes 4] [--runs 3] [--connections 32]
  tests/bench/bench_expansion.py --versus OTHER_BUILD_DIR --runs 12   # two builds, run by run
  tests/bench/bench_expansion.py --versus OTHER_BUILD_DIR --settle    # ... and each until every TrainJob is Running

The benchmark uses its own local cluster (TJC_CLUSTER, "bench" by default): it starts one
with enough CPU-only nodes for the pods if none runs, and stops it at the end if it started
it (--keep-cluster leaves it up). The controller is build/release/trainjob-controller
(TJC_BUILD_DIR overrides the folder; TJC_CONTROLLER_ARGS adds flags, such as
"--log-level debug" for a line a request), started afresh for each run so that its CPU time
and peak memory belong to that run. The TrainJobs use the torch-distributed runtime with tiny CPU
requests; their pods land on the CPU nodes and KWOK marks them Running (they run for an hour,
so nothing finishes during a run). After each run everything is deleted (the TrainJobs, their
pods, Services and runtime snapshots, and the Events), and the next starts once it is gone.

Why this plain client: Python's http.client over many HTTP/1.1 keep-alive connections, one
thread per connection, with the kubeconfig's client certificate. Python's standard library
has no HTTP/2, and the API server serves each HTTP/1.1 connection in its own goroutine, so
parallel connections give the same concurrency HTTP/2 streams would. Measured with
--compare-connections on this machine (2 cores), 800 creates took 9.8 s over 1 connection,
4.6 s over 4, and 2.5 to 3.3 s over 16, 32, 64 or 128 (the API server's limit, within noise):
32 is the default. The client spends a fraction of a millisecond of CPU
per create (the GIL is released during TLS and socket I/O), against several milliseconds in
the API server and etcd, so the client is not what limits it. The same client sends the
TrainJobs of the controller run, also all at once (kubectl apply would send them one after
another, and charge its own serial round trips to the controller)."""

import argparse
import base64
import http.client
import json
import math
import os
import queue
import re
import shlex
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLUSTER_SH = os.path.join(REPO, "deploy", "local", "cluster.sh")
TRAINJOB_LABEL = "trainer.kubeflow.org/trainjob-name"
BENCH_LABEL = "bench.trainjob.flame.dev/expansion"
RUNTIME = "torch-distributed"
TJ_API = "/apis/trainer.kubeflow.org/v1alpha1"
GANG_GATE = "trainjob.flame.dev/gang"  # the scheduling gate of an admitted gang's pods (informers/pod.h)
PODS_PER_NODE = 110  # the local cluster's node allocatable


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def kubectl(*args, input=None, check=True):
    proc = subprocess.run(["kubectl", *args], input=input, capture_output=True, text=True)
    if check and proc.returncode != 0:
        sys.exit(f"kubectl {' '.join(args[:3])} ...: {proc.stderr.strip()}")
    return proc


# ---- the plain client ----


class Api:
    """The API server of the kubeconfig, over http.client with its client certificate."""

    def __init__(self):
        cfg = json.loads(kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
        cluster = cfg["clusters"][0]["cluster"]
        user = cfg["users"][0]["user"]
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-expansion-")
        url = urllib.parse.urlsplit(cluster["server"])
        self.host, self.port = url.hostname, url.port or 443
        self.ctx = ssl.create_default_context(cafile=self._file(cluster, "certificate-authority"))
        self.ctx.load_cert_chain(self._file(user, "client-certificate"), self._file(user, "client-key"))

    def _file(self, section, key):
        if key in section:
            return section[key]
        path = os.path.join(self.tmp.name, key)
        with open(path, "wb") as f:
            f.write(base64.b64decode(section[key + "-data"]))
        return path

    def connect(self, timeout=60):
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)
        conn.connect()
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn

    def call(self, method, path, body=None, conn=None, content_type=None):
        own = conn is None
        conn = conn or self.connect()
        try:
            headers = {"Accept": "application/json"}
            if body is not None:
                headers["Content-Type"] = content_type or "application/json"
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, data
        finally:
            if own:
                conn.close()

    def json(self, method, path, body=None):
        status, data = self.call(method, path, body)
        if status >= 300:
            raise RuntimeError(f"{method} {path}: {status} {data[:300]!r}")
        return json.loads(data)

    def create_all(self, requests, connections):
        """Sends every (path, body) POST, or (method, path, body, content type) request, at
        once over `connections` keep-alive connections, in order. A request may also be
        (method, path, body, content type, after, done): it waits aside, holding no
        connection, until the Countdown `after` (None: no wait) is done, and then goes ahead
        of the requests not yet sent; it calls done.set() (done may be None) when it
        succeeded. Returns (seconds from the first send until the last answer, first send
        time)."""
        conns = [self.connect() for _ in range(min(connections, len(requests)))]
        work, ready = queue.SimpleQueue(), queue.SimpleQueue()
        aside = [0]  # requests waiting for their Countdown, not yet in ready
        lock = threading.Lock()

        def release(r):
            ready.put(r)
            with lock:
                aside[0] -= 1

        for r in requests:
            if len(r) == 6 and r[4] is not None:
                with lock:
                    aside[0] += 1
                r[4].then(lambda r=r: release(r))
            else:
                work.put(r)
        errors = []
        go = threading.Event()

        def next_request():
            for q in (ready, work):
                try:
                    return q.get_nowait()
                except queue.Empty:
                    pass
            return None

        def worker(conn):
            go.wait()
            while not errors:
                r = next_request()
                if r is None:
                    with lock:
                        if aside[0] == 0 and ready.empty():
                            return
                    time.sleep(0.001)
                    continue
                method, path, body, ctype, _, done = (
                    r if len(r) == 6 else (*r, None, None) if len(r) == 4 else ("POST", r[0], r[1], None, None, None))
                try:
                    status, data = self.call(method, path, body, conn, ctype)
                except (OSError, http.client.HTTPException) as e:
                    errors.append(f"{path}: {e}")
                    return
                if status == 404 and method == "PATCH":
                    work.put(r)  # the TrainJob's create is still in flight: again, later
                    time.sleep(0.01)
                    continue
                if status not in (200, 201):
                    errors.append(f"{path}: {status} {data[:200]!r}")
                elif done is not None:
                    done.set()

        threads = [threading.Thread(target=worker, args=(c,)) for c in conns]
        for t in threads:
            t.start()
        t0 = time.monotonic()
        go.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - t0
        for c in conns:
            c.close()
        if errors:
            sys.exit(f"{len(errors)} creates failed, first: {errors[0]}")
        return elapsed, t0


class Countdown:
    """Done once set() has been called n times; then() runs a function when it is (at once
    if it already is)."""

    def __init__(self, n):
        self._left, self._lock, self._then = n, threading.Lock(), []

    def then(self, fn):
        with self._lock:
            if self._left > 0:
                self._then.append(fn)
                return
        fn()

    def set(self):
        with self._lock:
            self._left -= 1
            due, self._then = (self._then, []) if self._left == 0 else ([], self._then)
        for fn in due:
            fn()


class PodWatch:
    """Lists, then watches, the pods of a namespace with a label selector, and notes when
    `want` distinct pods have been seen. Started before the creates; its clock is the same
    monotonic clock as theirs."""

    def __init__(self, api, namespace, selector, want):
        self.api, self.want = api, want
        self.path = f"/api/v1/namespaces/{namespace}/pods?labelSelector={urllib.parse.quote(selector)}"
        self.seen = set()
        self.arrivals = []  # monotonic time of each pod's first sighting, in order
        self.done_at = None
        self.done = threading.Event()
        self.error = None
        items = api.json("GET", self.path)
        self.seen.update(p["metadata"]["name"] for p in items["items"])
        self.rv = items["metadata"]["resourceVersion"]
        self.conn = api.connect(timeout=None)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        # The API server may end a watch at any time; it resumes from the last
        # resourceVersion seen, as informers do.
        try:
            for _ in range(20):
                self._watch()
                if self.done.is_set():
                    return
                self.conn.close()
                self.conn = self.api.connect(timeout=None)
            raise RuntimeError("the watch kept ending")
        except Exception as e:  # reported by wait()
            if not self.done.is_set():
                self.error = e
                self.done.set()

    def _watch(self):
        self.conn.request("GET", f"{self.path}&watch=1&resourceVersion={self.rv}&timeoutSeconds=1800",
                          headers={"Accept": "application/json"})
        resp = self.conn.getresponse()
        if resp.status != 200:
            raise RuntimeError(f"watch: {resp.status} {resp.read()[:200]!r}")
        self._check()
        while not self.done.is_set():
            line = resp.readline()
            if not line:
                return
            ev = json.loads(line)
            if ev["type"] == "ERROR":
                raise RuntimeError(f"watch: {ev['object'].get('message')}")
            self.rv = ev["object"]["metadata"]["resourceVersion"]
            if ev["type"] in ("ADDED", "MODIFIED"):
                name = ev["object"]["metadata"]["name"]
                if name not in self.seen:
                    self.seen.add(name)
                    self.arrivals.append(time.monotonic())
                self._check()

    def _check(self):
        if len(self.seen) >= self.want and not self.done.is_set():
            self.done_at = time.monotonic()
            self.done.set()

    def wait(self, timeout):
        self.done.wait(timeout)
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()
        if self.error:
            raise RuntimeError(str(self.error))
        if self.done_at is None:
            raise RuntimeError(f"only {len(self.seen)} of {self.want} pods appeared within {timeout} s")
        return self.done_at

    def wait_logged(self, t0, timeout):
        """wait(), then logs the seconds from t0 until a quarter, half, three quarters and all
        of the pods existed; returns the seconds from t0 until every pod was seen."""
        done = self.wait(timeout)
        a = self.arrivals
        if a:
            quartiles = [a[max(math.ceil(len(a) * q) - 1, 0)] - t0 for q in (0.25, 0.5, 0.75, 1.0)]
            log("  pods at 25/50/75/100%: " + " ".join(f"{q:.2f}" for q in quartiles) + " s")
        return done - t0


def count(api, path):
    return len(api.json("GET", path)["items"])


# The objects the controller makes for a TrainJob besides its pods, by the label that names
# the job: its Services and its runtime snapshots (ConfigMaps).
JOB_CHILDREN = ("services", "configmaps")


def children_paths(namespace):
    sel = urllib.parse.quote(TRAINJOB_LABEL)
    return [f"/api/v1/namespaces/{namespace}/{kind}?labelSelector={sel}" for kind in JOB_CHILDREN]


def remaining(api, namespace):
    """How many of the runs' pods, TrainJobs, Services and runtime snapshots (ConfigMaps) are
    left in namespace."""
    sel = urllib.parse.quote(TRAINJOB_LABEL)
    paths = [f"/api/v1/namespaces/{namespace}/pods?labelSelector={sel}",
             f"{TJ_API}/namespaces/{namespace}/trainjobs"] + children_paths(namespace)
    return sum(count(api, p) for p in paths)


def delete_pods(api, namespace, connections=32):
    """Every pod of the runs in namespace, one DELETE each (grace 0: no kubelet is waited
    for) over `connections` connections at once. A collection delete is no faster: the API
    server deletes a collection one object at a time, and ends the request at its timeout
    (60 s) whether or not it is through, which thousands of pods on a loaded machine are not."""
    sel = urllib.parse.quote(TRAINJOB_LABEL)
    names = [p["metadata"]["name"] for p in
             api.json("GET", f"/api/v1/namespaces/{namespace}/pods?labelSelector={sel}")["items"]]
    work = queue.SimpleQueue()
    for n in names:
        work.put(n)

    def worker():
        conn = api.connect()
        try:
            while True:
                try:
                    name = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    api.call("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}?gracePeriodSeconds=0",
                             conn=conn)
                except (OSError, http.client.HTTPException):
                    conn.close()
                    conn = api.connect()  # what is left is counted and deleted again
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(min(connections, len(names)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def delete_everything(api, namespace, timeout=900):
    """TrainJobs, their pods, Services, runtime snapshots and Events; again until nothing is
    left (a collection delete on a loaded API server can end at its timeout before it is
    through). The snapshots go too, not left to the garbage collector: the next run's
    controller watches them, and would list and decode those still there."""
    paths = ([f"{TJ_API}/namespaces/{namespace}/trainjobs"] + children_paths(namespace) +
             [f"/api/v1/namespaces/{namespace}/events"])
    deadline = time.monotonic() + timeout
    for attempt in range(1, 1000):
        for path in paths:
            try:
                status, data = api.call("DELETE", path)
                if status >= 300:
                    log(f"  DELETE {path.split('?')[0]}: {status} {data[:120]!r}")
            except (OSError, http.client.HTTPException) as e:
                log(f"  DELETE {path.split('?')[0]} ended early ({e})")
        delete_pods(api, namespace)
        left = remaining(api, namespace)
        if not left:
            return
        if time.monotonic() > deadline:
            sys.exit(f"{left} objects of {namespace} were not gone within {timeout} s")
        log(f"  {left} objects left in {namespace} after {attempt} round(s) of deletes: again")
        time.sleep(1)


# ---- the objects ----


def trainjob(namespace, i, nodes):
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": f"bench-{i:04d}", "namespace": namespace, "labels": {BENCH_LABEL: "true"}},
        "spec": {
            "runtimeRef": {"name": RUNTIME},
            "trainer": {
                "numNodes": nodes,
                "resourcesPerNode": {"requests": {"cpu": "10m", "memory": "16Mi"}},
            },
            # Long enough that no pod finishes during a run (the local cluster's pods run
            # 20 s by default).
            "podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
                                      "metadata": {"annotations": {"sim.trainjob.flame.dev/run-time": "1h"}}}],
        },
    }


def render_job(binary, namespace, i, nodes):
    """The pods the controller would create for TrainJob i, from its render command, as
    JSON (converted by kubectl)."""
    runtime = os.path.join(REPO, "crds", "runtimes", f"{RUNTIME}.yaml")
    config = os.path.join(REPO, "deploy", "config", "config.yaml")
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        json.dump(trainjob(namespace, i, nodes), f)
        f.flush()
        proc = subprocess.run([binary, "render", "-f", f.name, "--runtime", runtime, "--config", config],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"render: {proc.stderr.strip()}")
    out = kubectl("create", "--dry-run=client", "-o", "json", "-f", "-", input=proc.stdout).stdout
    # kubectl prints one JSON document per object, one after another.
    objs, dec, pos = [], json.JSONDecoder(), 0
    while pos < len(out):
        if out[pos].isspace():
            pos += 1
            continue
        obj, pos = dec.raw_decode(out, pos)
        objs.extend(obj["items"] if obj.get("kind") == "List" else [obj])
    return [o for o in objs if o["kind"] in ("Pod", "Service")]


def rendered_objects(binary, namespace, jobs, nodes):
    """The pods and Services of every TrainJob of the benchmark. The first job is rendered, and the others
    are made from it by renaming (kubectl takes a minute of CPU to convert 1,000 objects); the
    last is rendered too, to check that renaming gives what render gives. Their
    ownerReferences are dropped: their owner would be the TrainJob, which does not exist in
    the baseline, and the garbage collector would delete them as orphans while they are
    counted."""
    first = json.dumps(render_job(binary, namespace, 0, nodes))
    objs = []
    for i in range(jobs):
        objs.extend(json.loads(first.replace('"bench-0000', f'"bench-{i:04d}')
                               .replace('.bench-0000"', f'.bench-{i:04d}"')))
    last = render_job(binary, namespace, jobs - 1, nodes)
    if objs[-nodes - 1:] != last:
        sys.exit("renaming the first job's objects does not give the last job's")
    for o in objs:
        o["metadata"].pop("ownerReferences", None)
    pods = [o for o in objs if o["kind"] == "Pod"]
    services = [o for o in objs if o["kind"] == "Service"]
    if len(pods) != jobs * nodes or len(services) != jobs:
        sys.exit(f"render gave {len(pods)} pods and {len(services)} Services, not {jobs * nodes} and {jobs}")
    return pods, services


# ---- the controller ----


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """The CPU time of process pid: utime + stime."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid):
    """The peak resident memory of process pid (VmHWM), in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Controller:
    def __init__(self, binary, kubeconfig, log_path, config=None, extra_args=(), ready_timeout=60):
        self.metrics_port, self.probe_port = free_port(), free_port()
        while self.probe_port == self.metrics_port:  # each port was free when asked for
            self.probe_port = free_port()
        self.log = open(log_path, "a")
        self.proc = subprocess.Popen(
            [binary, "--kubeconfig", kubeconfig,
             "--config", config or os.path.join(REPO, "deploy", "config", "config.yaml"),
             "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}",
             "--health-probe-bind-address", f"127.0.0.1:{self.probe_port}", *extra_args,
             *shlex.split(os.environ.get("TJC_CONTROLLER_ARGS", ""))],
            stdout=self.log, stderr=self.log)
        deadline = time.monotonic() + ready_timeout
        while self._get(self.probe_port, "/readyz") is None or self._status != 200:
            if self.proc.poll() is not None:
                sys.exit(f"the controller exited ({self.proc.returncode}); log: {log_path}")
            if time.monotonic() > deadline:
                self.stop()
                sys.exit(f"the controller was not ready within {ready_timeout} s; log: {log_path}")
            time.sleep(0.1)

    def _get(self, port, path):
        self._status = None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                self._status = r.status
                return r.read().decode()
        except OSError:
            return None

    def cpu_seconds(self):
        return cpu_seconds(self.proc.pid)

    def peak_rss_mib(self):
        return peak_rss_mib(self.proc.pid)

    def metrics(self):
        """The samples of the metrics endpoint, summed over labels: {name: value}."""
        out = {}
        for line in (self._get(self.metrics_port, "/metrics") or "").splitlines():
            if not line or line.startswith("#"):
                continue
            name, _, value = line.rpartition(" ")
            base = name.split("{", 1)[0]
            key = base
            if base == "controller_runtime_reconcile_total":
                result = re.search(r'result="([a-z_]+)"', name)
                key = base + "/" + (result.group(1) if result else "-")
            elif base in ("rest_client_requests_total", "rest_client_request_duration_seconds_sum",
                          "rest_client_request_duration_seconds_count"):
                method = re.search(r'(?:method|verb)="([A-Z]+)"', name)
                key = base + "/" + (method.group(1) if method else "-")
            try:
                out[key] = out.get(key, 0) + float(value)
            except ValueError:
                pass
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# ---- the runs ----


def send_watched(api, namespace, requests, n_pods, connections):
    """Sends the requests by the plain client at once, watches until n_pods pods exist, and
    deletes everything. Returns (seconds until the last answer, until every pod was seen)."""
    watch = PodWatch(api, namespace, TRAINJOB_LABEL, n_pods)
    answered, t0 = api.create_all(requests, connections)
    visible = watch.wait_logged(t0, 300)
    delete_everything(api, namespace)
    return answered, visible


def baseline_run(api, namespace, pods, connections):
    """The same pods, created by the plain client at once."""
    path = f"/api/v1/namespaces/{namespace}/pods"
    requests = [(path, json.dumps(p).encode()) for p in pods]
    created, visible = send_watched(api, namespace, requests, len(pods), connections)
    return {"created": created, "visible": visible}


def writes_run(api, args, namespace, pods, services):
    """The writes the controller makes for a burst, sent by the plain client at once from one
    queue: the TrainJobs; then, job by job, its pods behind the gang's scheduling gate and
    the patches that lift the gate, sent once every create of the gang has been answered
    (the controller lifts a gang's gates once every pod of it exists); then the Services, then
    each job's status patch (Pending, the start time) and Created event: the controller's
    own order under a burst (its write gate holds the bookkeeping until the pods are out),
    without its waits."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    reqs = [("POST", f"{TJ_API}/namespaces/{namespace}/trainjobs",
             json.dumps(trainjob(namespace, i, args.nodes)).encode(), None) for i in range(args.jobs)]
    for j in range(args.jobs):
        gang = pods[j * args.nodes:(j + 1) * args.nodes]
        created = Countdown(len(gang))
        for p in gang:
            gated = json.loads(json.dumps(p))
            gated["spec"]["schedulingGates"] = p["spec"].get("schedulingGates", []) + [{"name": GANG_GATE}]
            reqs.append(("POST", f"/api/v1/namespaces/{namespace}/pods", json.dumps(gated).encode(), None,
                         None, created))
        for p in gang:
            ungate = {"spec": {"schedulingGates": p["spec"].get("schedulingGates") or None}}
            reqs.append(("PATCH", f"/api/v1/namespaces/{namespace}/pods/{p['metadata']['name']}",
                         json.dumps(ungate).encode(), "application/merge-patch+json", created, None))
    for i in range(args.jobs):
        reqs.append(("POST", f"/api/v1/namespaces/{namespace}/services", json.dumps(services[i]).encode(), None))
    for i in range(args.jobs):
        name = f"bench-{i:04d}"
        status = {"status": {"state": "Pending", "reason": "PodsStarting",
                             "message": f"0 of {args.nodes} pods running", "startTime": now,
                             "restartCount": 0, "observedGeneration": 1}}
        reqs.append(("PATCH", f"{TJ_API}/namespaces/{namespace}/trainjobs/{name}/status",
                     json.dumps(status).encode(), "application/merge-patch+json"))
        event = {"apiVersion": "v1", "kind": "Event",
                 "metadata": {"name": f"{name}.bench", "namespace": namespace},
                 "involvedObject": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                    "namespace": namespace, "name": name},
                 "type": "Normal", "reason": "Created",
                 "message": f"creating {args.nodes} pods from ClusterTrainingRuntime {RUNTIME}",
                 "firstTimestamp": now, "lastTimestamp": now, "count": 1,
                 "source": {"component": "bench"}, "reportingComponent": "bench", "reportingInstance": "bench"}
        reqs.append(("POST", f"/api/v1/namespaces/{namespace}/events", json.dumps(event).encode(), None))
    done, visible = send_watched(api, namespace, reqs, len(pods), args.connections)
    return {"created": done, "visible": visible}


def floor_run(api, args, namespace, pods):
    """The TrainJobs and then their pods, sent by the plain client at once from one queue: the
    least work the API server must do before every pod exists when the TrainJob creates are
    in the clock, as they are in the controller run."""
    reqs = [("POST", f"{TJ_API}/namespaces/{namespace}/trainjobs",
             json.dumps(trainjob(namespace, i, args.nodes)).encode(), None) for i in range(args.jobs)]
    reqs += [("POST", f"/api/v1/namespaces/{namespace}/pods", json.dumps(p).encode(), None) for p in pods]
    _, visible = send_watched(api, namespace, reqs, len(pods), args.connections)
    return {"visible": visible}


def all_running(api, namespace, jobs):
    items = api.json("GET", f"{TJ_API}/namespaces/{namespace}/trainjobs")["items"]
    return len(items) == jobs and all(j.get("status", {}).get("state") == "Running" for j in items)


def controller_run(api, args, namespace, log_path):
    c = Controller(args.binary, args.kubeconfig, log_path, ready_timeout=getattr(args, "ready_timeout", 60))
    try:
        requests = [(f"{TJ_API}/namespaces/{namespace}/trainjobs",
                     json.dumps(trainjob(namespace, i, args.nodes)).encode()) for i in range(args.jobs)]
        cpu0 = c.cpu_seconds()
        watch = PodWatch(api, namespace, TRAINJOB_LABEL, args.jobs * args.nodes)
        applied, t0 = api.create_all(requests, args.connections)
        exist = watch.wait_logged(t0, 600)
        cpu_exist = c.cpu_seconds() - cpu0
        m = c.metrics()
        reconcile_s = (m.get("controller_runtime_reconcile_time_seconds_sum", 0)
                       / max(m.get("controller_runtime_reconcile_time_seconds_count", 0), 1))
        errors = m.get("controller_runtime_reconcile_total/error", 0)
        # A conflict counts as a requeue: the job planned again from the newer object.
        reconciles = sum(v for k, v in m.items() if k.startswith("controller_runtime_reconcile_total/"))
        running = cpu_running = float("nan")
        if args.settle:
            # Scheduling 800 pods is the scheduler's work, not ours, and slow on a busy
            # machine: this figure is for information.
            deadline = time.monotonic() + 600
            while not all_running(api, namespace, args.jobs):
                if time.monotonic() > deadline:
                    sys.exit(f"not every TrainJob was Running within 600 s; log: {log_path}")
                time.sleep(0.5)
            running = time.monotonic() - t0
            cpu_running = c.cpu_seconds() - cpu0
        res = {
            "applied": applied, "exist": exist, "running": running,
            "cpu_exist": cpu_exist, "cpu_running": cpu_running, "peak_mib": c.peak_rss_mib(),
            "reconciles": reconciles, "errors": errors,
            "reconcile_ms": reconcile_s * 1000,
        }
    finally:
        c.stop()
    delete_everything(api, namespace)
    return res


def backlog_run(api, args, namespace, log_path):
    """The TrainJobs are all there before the controller starts (a controller brought up, or
    restarted, on a backlog): the clock runs from the controller's start until the watch has
    seen every pod, so it holds the controller's own writes and none of the TrainJob creates."""
    requests = [(f"{TJ_API}/namespaces/{namespace}/trainjobs",
                 json.dumps(trainjob(namespace, i, args.nodes)).encode()) for i in range(args.jobs)]
    api.create_all(requests, args.connections)
    watch = PodWatch(api, namespace, TRAINJOB_LABEL, args.jobs * args.nodes)
    t0 = time.monotonic()
    c = Controller(args.binary, args.kubeconfig, log_path)
    try:
        exist = watch.wait_logged(t0, 600)
        res = {"exist": exist, "cpu_exist": c.cpu_seconds()}
    finally:
        c.stop()
    delete_everything(api, namespace)
    return res


def cluster_env(args):
    env = dict(os.environ, TJC_CLUSTER=args.cluster)
    # No real nodes: the pods never run, and real ones would only load the machine.
    env.setdefault("TJC_REAL_NODES", "0")
    need = math.ceil(args.jobs * args.nodes / PODS_PER_NODE) + 2
    env.setdefault("TJC_CPU_NODES", str(need))
    if int(env["TJC_CPU_NODES"]) * PODS_PER_NODE < args.jobs * args.nodes:
        sys.exit(f"TJC_CPU_NODES={env['TJC_CPU_NODES']} is too few for {args.jobs * args.nodes} pods")
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=4, help="nodes (pods) per TrainJob")
    ap.add_argument("--runs", type=int, default=3, help="runs of each, alternating")
    ap.add_argument("--connections", type=int, default=32, help="connections of the plain client")
    ap.add_argument("--cluster", default=os.environ.get("TJC_CLUSTER", "bench"))
    ap.add_argument("--keep-cluster", action="store_true", help="leave a cluster it started running")
    ap.add_argument("--settle", action="store_true",
                    help="also wait until every TrainJob is Running, and report that time and CPU")
    ap.add_argument("--versus", metavar="BUILD_DIR",
                    help="only time the controller runs of this build and of the one in BUILD_DIR, "
                         "in turn, against the plain client's pod creates of each run")
    ap.add_argument("--compare-connections", action="store_true",
                    help="only time the baseline with 1 to 64 connections")
    args = ap.parse_args()
    build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
    args.binary = os.path.join(build, "trainjob-controller")
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"no controller at {args.binary}: ninja -C {build} trainjob-controller")

    # SIGTERM ends the runs as an error would: the controller and the cluster are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))
    env = cluster_env(args)
    started = subprocess.run([CLUSTER_SH, "status"], env=env, capture_output=True).returncode != 0
    if started:
        log(f"starting cluster {args.cluster} ({env['TJC_CPU_NODES']} CPU nodes)")
        subprocess.run([CLUSTER_SH, "up"], env=env, check=True, stdout=sys.stderr)
    args.kubeconfig = subprocess.run([CLUSTER_SH, "kubeconfig"], env=env, capture_output=True,
                                     text=True, check=True).stdout.strip()
    os.environ["KUBECONFIG"] = args.kubeconfig
    namespace = "bench-expansion"
    log_path = os.path.join(REPO, "build", "bench-expansion-controller.log")
    try:
        report(args, namespace, log_path, env)
    finally:
        if started and not args.keep_cluster:
            log(f"stopping cluster {args.cluster}")
            subprocess.run([CLUSTER_SH, "down"], env=env, stdout=sys.stderr)


def check_control_plane(env):
    """Every component of the cluster still runs (cluster.sh status checks their processes):
    without kube-controller-manager there is no garbage collection and no EndpointSlice work,
    and the figures would flatter the controller."""
    proc = subprocess.run([CLUSTER_SH, "status"], env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"the cluster is not whole: {proc.stderr.strip() or proc.stdout.strip()}")


def wait_established(timeout=90):
    """kubectl wait fails at once, rather than waiting, on a CRD so new that it has no
    conditions yet: ask again until it answers."""
    deadline = time.monotonic() + timeout
    while kubectl("wait", "--for", "condition=Established", "--timeout=30s",
                  "crd/trainjobs.trainer.kubeflow.org", check=False).returncode != 0:
        if time.monotonic() > deadline:
            sys.exit("the TrainJob CRD was not Established")
        time.sleep(1)


def wait_watch_caches(api, timeout=60):
    """A new CRD's watch cache answers a streaming list (the controller's informers') with
    "storage is (re)initializing" for a moment after the CRD is Established, and an informer
    then lists again about a second later: that second would be the first run's alone. Ask
    as the informers do until every trainer.kubeflow.org resource answers."""
    query = ("?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"
             "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1")
    deadline = time.monotonic() + timeout
    for resource in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
        while True:
            status, data = api.call("GET", f"{TJ_API}/{resource}{query}")
            first = data.split(b"\n", 1)[0]
            if status == 200 and (not first or json.loads(first).get("type") != "ERROR"):
                break
            if time.monotonic() > deadline:
                sys.exit(f"the watch cache of {resource} is not ready after {timeout} s: {status} {data[:200]!r}")
            time.sleep(0.2)


def setup(api, namespace):
    kubectl("apply", "-k", os.path.join(REPO, "crds"))
    wait_established()
    wait_watch_caches(api)
    deadline = time.monotonic() + 30
    while kubectl("apply", "-k", os.path.join(REPO, "crds", "runtimes"), check=False).returncode != 0:
        if time.monotonic() > deadline:
            sys.exit("the runtimes did not apply")
        time.sleep(1)
    create_namespace(namespace)
    delete_everything(api, namespace)


def create_namespace(namespace):
    if kubectl("get", "namespace", namespace, check=False).returncode != 0:
        kubectl("create", "namespace", namespace)
    # Pods are created only once the namespace's default ServiceAccount exists.
    deadline = time.monotonic() + 60
    while kubectl("get", "serviceaccount", "default", "-n", namespace, check=False).returncode != 0:
        if time.monotonic() > deadline:
            sys.exit(f"no default ServiceAccount in {namespace}")
        time.sleep(0.5)


def med(rows, key, f=None):
    return statistics.median(f(r) if f else r[key] for r in rows)


def versus(api, args, namespace, pods, log_path, env):
    """Two builds in the same runs: each run times the plain client's pod creates, then the
    controller run of each build, the two in turn first (the run after another one's
    deletes is often slower, on a machine with two cores), and reports each build's ratio
    to that run's plain client, and the ratio of the two."""
    builds = [("this", args.binary), ("versus", os.path.join(args.versus, "trainjob-controller"))]
    base, ratio = [], {name: [] for name, _ in builds}
    running, cpu = {name: [] for name, _ in builds}, {name: [] for name, _ in builds}
    for i in range(args.runs):
        log(f"run {i + 1}/{args.runs}: baseline, {len(pods)} pod creates over {args.connections} connections")
        base.append(baseline_run(api, namespace, pods, args.connections)["visible"])
        for name, binary in builds if i % 2 == 0 else builds[::-1]:
            log(f"run {i + 1}/{args.runs}: controller of {binary}")
            res = controller_run(api, argparse.Namespace(**{**vars(args), "binary": binary}), namespace, log_path)
            ratio[name].append(res["exist"] / base[-1])
            running[name].append(res["running"])
            cpu[name].append(res["cpu_exist"])
            log(f"  pods exist {res['exist']:.2f} s, {ratio[name][-1]:.2f} x the plain client's"
                + (f"; every TrainJob Running {res['running']:.2f} s" if args.settle else ""))
        check_control_plane(env)
    print(f"\n{args.jobs} TrainJobs x {args.nodes} nodes; all pods exist / the plain client's "
          f"{len(pods)} pod creates, run by run (this build: {args.binary}; versus: {builds[1][1]})")
    print("run  first    plain s   this   versus   this / versus")
    for i in range(args.runs):
        print(f"{i + 1:3d}  {'this' if i % 2 == 0 else 'versus':6s}  {base[i]:7.2f}  {ratio['this'][i]:5.2f}  "
              f"{ratio['versus'][i]:7.2f}  {ratio['this'][i] / ratio['versus'][i]:14.2f}")
    print(f"med  {'':6s}  {statistics.median(base):7.2f}  {statistics.median(ratio['this']):5.2f}  "
          f"{statistics.median(ratio['versus']):7.2f}  "
          f"{statistics.median(t / v for t, v in zip(ratio['this'], ratio['versus'])):14.2f}")
    print(f"controller CPU until every pod exists (median): this {statistics.median(cpu['this']):.2f} s, "
          f"versus {statistics.median(cpu['versus']):.2f} s")
    if args.settle:
        print(f"every TrainJob Running (median): this {statistics.median(running['this']):.2f} s, "
              f"versus {statistics.median(running['versus']):.2f} s; run by run "
              f"{statistics.median(t / v for t, v in zip(running['this'], running['versus'])):.2f}")
    print(json.dumps({"runs": args.runs, "this": args.binary, "versus": builds[1][1], "plain_s": base,
                      "ratio_this": ratio["this"], "ratio_versus": ratio["versus"],
                      "median_this": statistics.median(ratio["this"]),
                      "median_versus": statistics.median(ratio["versus"]),
                      "cpu_this": cpu["this"], "cpu_versus": cpu["versus"],
                      **({"running_this": running["this"], "running_versus": running["versus"]} if args.settle else {})}))


def report(args, namespace, log_path, env):
    api = Api()
    check_control_plane(env)
    setup(api, namespace)
    n = args.jobs * args.nodes
    pods, services = rendered_objects(args.binary, namespace, args.jobs, args.nodes)

    if args.compare_connections:
        for conns in (1, 4, 16, 32, 64, 128):
            t = [baseline_run(api, namespace, pods, conns)["created"] for _ in range(args.runs)]
            print(f"{conns:3d} connections: {' '.join(f'{x:6.2f}' for x in t)} s  "
                  f"median {statistics.median(t):.2f} s ({n / statistics.median(t):.0f} pods/s)")
        return

    if args.versus:
        versus(api, args, namespace, pods, log_path, env)
        return

    base, writes, ctrl, backlog, floor = [], [], [], [], []
    for i in range(args.runs):
        log(f"run {i + 1}/{args.runs}: baseline, {n} pod creates over {args.connections} connections")
        base.append(baseline_run(api, namespace, pods, args.connections))
        log(f"  created {base[-1]['created']:.2f} s, visible {base[-1]['visible']:.2f} s")
        log(f"run {i + 1}/{args.runs}: the TrainJobs, then the pods, by the plain client")
        floor.append(floor_run(api, args, namespace, pods))
        log(f"  pods visible {floor[-1]['visible']:.2f} s")
        log(f"run {i + 1}/{args.runs}: the controller's writes by the plain client")
        writes.append(writes_run(api, args, namespace, pods, services))
        log(f"  written {writes[-1]['created']:.2f} s, pods visible {writes[-1]['visible']:.2f} s")
        log(f"run {i + 1}/{args.runs}: controller, {args.jobs} TrainJobs x {args.nodes} nodes")
        ctrl.append(controller_run(api, args, namespace, log_path))
        log(f"  pods exist {ctrl[-1]['exist']:.2f} s, CPU {ctrl[-1]['cpu_exist']:.2f} s")
        log(f"run {i + 1}/{args.runs}: controller started on {args.jobs} TrainJobs already there")
        backlog.append(backlog_run(api, args, namespace, log_path))
        log(f"  pods exist {backlog[-1]['exist']:.2f} s after the start, CPU {backlog[-1]['cpu_exist']:.2f} s")
        check_control_plane(env)

    print(f"\n{args.jobs} TrainJobs x {args.nodes} nodes = {n} pods; plain client over "
          f"{args.connections} connections; cluster {args.cluster}; seconds from the first request")
    print(f"\n     plain client: {n} pods   | plain client: the controller's writes | controller")
    print("run   created   visible     |   written  pods visible              | pods exist  "
          "x pods  x writes   CPU s  peak MiB  reconciles  errors  reconcile ms")
    rows = list(zip(base, writes, ctrl))
    for i, (b, w, c) in enumerate(rows):
        print(f"{i + 1:3d}  {b['created']:8.2f}  {b['visible']:8.2f}     |  {w['created']:8.2f}  "
              f"{w['visible']:12.2f}              | {c['exist']:10.2f}  {c['exist'] / b['visible']:6.2f}  "
              f"{c['exist'] / w['visible']:8.2f}  {c['cpu_exist']:6.2f}  {c['peak_mib']:8.1f}  "
              f"{c['reconciles']:10.0f}  {c['errors']:6.0f}  {c['reconcile_ms']:12.0f}")
    bv, wv, ce = med(base, "visible"), med(writes, "visible"), med(ctrl, "exist")
    print(f"med  {med(base, 'created'):8.2f}  {bv:8.2f}     |  {med(writes, 'created'):8.2f}  "
          f"{wv:12.2f}              | {ce:10.2f}  {med(rows, None, lambda r: r[2]['exist'] / r[0]['visible']):6.2f}  "
          f"{med(rows, None, lambda r: r[2]['exist'] / r[1]['visible']):8.2f}  {med(ctrl, 'cpu_exist'):6.2f}  "
          f"{med(ctrl, 'peak_mib'):8.1f}")
    print(f"\ntime until every pod exists, controller / plain client's {n} pod creates: "
          f"{ce / bv:.2f} (ratio of medians; goal: 1.05 or less)")
    print(f"controller / plain client sending the controller's own writes: {ce / wv:.2f}")
    fv = med(floor, "visible")
    print(f"plain client sending the {args.jobs} TrainJobs and then the {n} pods: every pod "
          f"visible after {fv:.2f} s, {fv / bv:.2f} x the pods alone (the least the TrainJob "
          f"creates in the clock cost); controller / that: {ce / fv:.2f}")
    be = med(backlog, "exist")
    backlog_runs = " ".join(f"{r['exist']:.2f}" for r in backlog)
    print(f"controller started on the {args.jobs} TrainJobs already there: every pod exists "
          f"{be:.2f} s after its start (runs: {backlog_runs}), "
          f"{be / bv:.2f} x the plain client's {n} pod creates; CPU {med(backlog, 'cpu_exist'):.2f} s")
    print(f"controller CPU until every pod exists: {med(ctrl, 'cpu_exist'):.2f} s "
          f"({med(ctrl, 'cpu_exist') / n * 1000:.2f} ms per pod); peak RSS {med(ctrl, 'peak_mib'):.1f} MiB "
          f"(VmHWM, from start); the TrainJob creates returned after {med(ctrl, 'applied'):.2f} s")
    if args.settle:
        print(f"every TrainJob Running after {med(ctrl, 'running'):.2f} s, controller CPU until then "
              f"{med(ctrl, 'cpu_running'):.2f} s (medians)")
    print(f"controller log: {log_path}")


if __name__ == "__main__":
    main()
