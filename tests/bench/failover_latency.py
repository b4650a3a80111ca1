#!/usr/bin/env python3
"""Failover latency: the time from a worker's pod turning Failed to its replacement pod
being created, over N failures (100 by default), next to the API server's own time for the
same chain of calls, measured in the same run.

  KUBECONFIG=$(deploy/local/cluster.sh kubeconfig) tests/bench/failover_latency.py \\
      [--failures N] [--jobs J] [--build build/release]

What the controller must do between the two events is a chain of API calls that no
controller can shorten: write the restart into the TrainJob's status (PATCH), delete the
failed pod (DELETE; a pod in a terminal phase goes at once), see the deletion come back
through its watch, and create the replacement (POST), which a watcher then sees. The
baseline is that chain done by a plain HTTP client with a kept-alive connection, on a
TrainJob and a pod of its own. Both are timed by the same watch, from the event that
starts the chain to the ADDED event that ends it, so the difference is what the controller
adds: queueing, planning and its own request handling.

Each failover is followed by one baseline chain, so that both see the same load; the
difference is reported pair by pair. The controller runs with restartBackoff 0 (the backoff
would otherwise be the latency) and a budget large enough for every failure. Jobs have one
node each; failures go round-robin over J jobs (one GH200 GPU each), one at a time. The
namespace is deleted at the end."""

import argparse
import http.client
import json
import os
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINJOB = "trainer.kubeflow.org/trainjob-name"
SIM = "sim.trainjob.flame.dev/"

POLICY = """
failurePolicy:
  maxRestarts: 1000
  restartBackoff: {initialSeconds: 0, maxSeconds: 0}
"""


class Api:
    """A minimal client for the kubeconfig's current context: one kept-alive connection
    per thread, client certificates or a bearer token."""

    def __init__(self, path):
        with open(path) as f:
            cfg = yaml.safe_load(f)
        ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == cfg["current-context"])
        cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
        self.tmp = tempfile.mkdtemp(prefix="failover-")
        hostport = cluster["server"].split("://", 1)[1].rstrip("/")
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.ssl = ssl.create_default_context(cafile=self.file(cluster, "certificate-authority"))
        if "client-certificate" in user or "client-certificate-data" in user:
            self.ssl.load_cert_chain(self.file(user, "client-certificate"), self.file(user, "client-key"))
        self.token = user.get("token")
        self.local = threading.local()

    def file(self, obj, key):
        if key in obj:
            return obj[key]
        import base64

        path = os.path.join(self.tmp, key)
        with open(path, "wb") as f:
            f.write(base64.b64decode(obj[key + "-data"]))
        return path

    def conn(self):
        c = getattr(self.local, "conn", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=60)
            c.connect()
            c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.local.conn = c
        return c

    def headers(self, ctype="application/json"):
        h = {"Content-Type": ctype, "Accept": "application/json"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        return h

    def call(self, method, path, body=None, ctype="application/json", ok=(200, 201)):
        c = self.conn()
        c.request(method, path, body=json.dumps(body) if body is not None else None, headers=self.headers(ctype))
        r = c.getresponse()
        data = r.read()
        if r.status not in ok:
            sys.exit(f"{method} {path}: {r.status} {data[:300]!r}")
        return json.loads(data) if data else None

    def watch(self, path):
        """A new connection streaming the watch; yields decoded events."""
        c = http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=3600)
        c.request("GET", path, headers=self.headers())
        r = c.getresponse()
        while True:
            line = r.readline()
            if not line:
                return
            yield json.loads(line)


class Watcher(threading.Thread):
    """Records when each pod was first seen Failed and when it was ADDED (monotonic)."""

    def __init__(self, api, namespace):
        super().__init__(daemon=True)
        self.api, self.namespace = api, namespace
        rv = api.call("GET", f"/api/v1/namespaces/{namespace}/pods")["metadata"]["resourceVersion"]
        self.path = f"/api/v1/namespaces/{namespace}/pods?watch=1&allowWatchBookmarks=false&resourceVersion={rv}"
        self.failed, self.added, self.deleted, self.running = {}, {}, {}, {}
        self.cv = threading.Condition()

    def run(self):
        for ev in self.api.watch(self.path):
            now = time.monotonic()
            pod = ev["object"]
            name = pod["metadata"]["name"]
            with self.cv:
                if ev["type"] == "ADDED":
                    self.added.setdefault(name, now)
                elif ev["type"] == "DELETED":
                    self.deleted.setdefault(name, now)
                phase = pod.get("status", {}).get("phase")
                if phase == "Failed":
                    self.failed.setdefault(name, now)
                if phase == "Running":
                    self.running.setdefault(name, now)
                self.cv.notify_all()

    def wait(self, what, table, name, timeout=60):
        with self.cv:
            if not self.cv.wait_for(lambda: name in table, timeout=timeout):
                sys.exit(f"timed out waiting for {name} to be {what}")
            return table[name]


def kubectl(*args, input=None, check=True):
    proc = subprocess.run(["kubectl", *args], input=input, capture_output=True, text=True)
    if check and proc.returncode != 0:
        sys.exit(f"kubectl {' '.join(args[:3])} ...: {proc.stderr.strip()}")
    return proc.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def trainjob(name):
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "annotations": {"trainjob.flame.dev/max-restarts": "1000"}},
        "spec": {
            "runtimeRef": {"name": "torch-gh200"},
            "trainer": {"numNodes": 1, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}},
            "podTemplateOverrides": [{"targetJobs": [{"name": "node"}], "metadata": {"annotations": {SIM + "run-time": "1h"}}}],
        },
    }


def baseline_job():
    """A TrainJob the controller leaves alone (another controller manages it)."""
    job = trainjob("baseline")
    job["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    return job


def gated_pod(name):
    """A pod nobody schedules or runs: its deletion is immediate, as a failed pod's is."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"schedulingGates": [{"name": "bench.trainjob.flame.dev/gate"}], "containers": [{"name": "c", "image": "x"}]},
    }


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--failures", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=10)
    ap.add_argument("--build", default=os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release")))
    args = ap.parse_args()
    binary = os.path.join(args.build, "trainjob-controller")
    if not os.access(binary, os.X_OK):
        sys.exit(f"no {binary}: build it with ninja -C {args.build}")
    kubeconfig = os.environ.get("KUBECONFIG") or sys.exit("KUBECONFIG is not set")
    api = Api(kubeconfig)

    kubectl("apply", "-k", os.path.join(REPO, "crds"))
    # kubectl wait fails at once on a CRD so new that it has no conditions yet: ask again.
    deadline = time.monotonic() + 90
    while subprocess.run(["kubectl", "wait", "--for", "condition=Established", "--timeout=30s",
                          "crd/trainjobs.trainer.kubeflow.org"], capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            sys.exit("the TrainJob CRD was not Established")
        time.sleep(1)
    kubectl("apply", "-k", os.path.join(REPO, "crds", "runtimes"))
    ns = "bench-failover-" + uuid.uuid4().hex[:6]
    kubectl("create", "namespace", ns)
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        classes = f.read().split("\nfailurePolicy:")[0]
    cfg = os.path.join(api.tmp, "config.yaml")
    with open(cfg, "w") as f:
        f.write(classes + "\n" + POLICY)
    log = open(os.path.join(api.tmp, "controller.log"), "w")
    probe = free_port()
    ctl = subprocess.Popen(
        [binary, "--kubeconfig", kubeconfig, "--config", cfg,
         "--metrics-bind-address", f"127.0.0.1:{free_port()}", "--health-probe-bind-address", f"127.0.0.1:{probe}"],
        stdout=log, stderr=log)
    try:
        watcher = Watcher(api, ns)
        watcher.start()
        names = [f"fo-{j:02d}" for j in range(args.jobs)]
        for n in names:
            api.call("POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs", trainjob(n))
        attempt = {n: 0 for n in names}
        for n in names:
            watcher.wait("running", watcher.running, f"{n}-node-0-0-a0", timeout=120)

        # The baseline's own TrainJob and pod.
        api.call("POST", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs", baseline_job())
        api.call("POST", f"/api/v1/namespaces/{ns}/pods", gated_pod("baseline-0"))
        watcher.wait("created", watcher.added, "baseline-0")

        latencies, baseline = [], []
        for i in range(args.failures):
            n = names[i % len(names)]
            old, new = f"{n}-node-0-0-a{attempt[n]}", f"{n}-node-0-0-a{attempt[n] + 1}"
            watcher.wait("running", watcher.running, old)
            api.call("PATCH", f"/api/v1/namespaces/{ns}/pods/{old}",
                     {"metadata": {"annotations": {SIM + "fail-exit-code": "1"}}}, "application/merge-patch+json")
            t_failed = watcher.wait("failed", watcher.failed, old)
            t_added = watcher.wait("created", watcher.added, new)
            latencies.append(t_added - t_failed)
            attempt[n] += 1

            # The same chain by a plain client, right after, under the same load: PATCH a
            # status, DELETE a pod, see it DELETED, POST the next pod, see it ADDED.
            t0 = time.monotonic()
            api.call("PATCH", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/baseline/status",
                     {"status": {"restartCount": i + 1}}, "application/merge-patch+json")
            api.call("DELETE", f"/api/v1/namespaces/{ns}/pods/baseline-{i}")
            watcher.wait("deleted", watcher.deleted, f"baseline-{i}")
            api.call("POST", f"/api/v1/namespaces/{ns}/pods", gated_pod(f"baseline-{i + 1}"))
            baseline.append(watcher.wait("created", watcher.added, f"baseline-{i + 1}") - t0)
    finally:
        ctl.send_signal(signal.SIGTERM)
        ctl.wait(timeout=30)
        kubectl("delete", "namespace", ns, "--wait=false", check=False)

    ms = lambda v: f"{v * 1000:7.1f} ms"  # noqa: E731
    added = [a - b for a, b in zip(latencies, baseline)]
    print(f"failover latency over {len(latencies)} failures ({args.jobs} one-node TrainJobs, backoff 0)")
    print(f"  controller (Failed seen -> replacement ADDED):  p50 {ms(pct(latencies, 50))}  p99 {ms(pct(latencies, 99))}")
    print(f"  API chain by a plain client, right after each:  p50 {ms(pct(baseline, 50))}  p99 {ms(pct(baseline, 99))}")
    print(f"  added by the controller (pairwise difference):  p50 {ms(pct(added, 50))}  p99 {ms(pct(added, 99))}"
          f"  mean {ms(statistics.mean(added))}")

if __name__ == "__main__":
    main()
