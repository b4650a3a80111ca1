#!/usr/bin/env python3
"""Scale benchmark of the informers against the local cluster: fills one namespace with N
TrainJob pods (100,000 by default), then runs tests/tools/informer-dump on it and reports,
from one run:

  - the API server's create throughput for those pods (the yardstick of the machine),
  - list+sync time of the pod informer into the cache, by a streaming list (a watch with
    sendInitialEvents, the default) and by a paginated list (500 per page,
    --paginated-lists), --rounds times each in turn, against the yardstick of the same
    rounds: a plain paginated LIST of the same pods by kubectl (-o name, 500 per page);
  - memory per cached pod: growth of the heap in use (mallinfo2) and of the resident set,
    against a run on the empty namespace,
  - CPU time per 1,000 watch events (label updates on part of the pods).

  KUBECONFIG=$(deploy/local/cluster.sh kubeconfig) tests/bench/informer_scale.py \\
      [--pods N] [--events E] [--rounds R] [--build build/release]

The pods carry a scheduling gate, so neither the scheduler nor KWOK touches them: the
benchmark measures the informers, not the cluster. The namespace is deleted at the end."""

import argparse
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINJOB = "trainer.kubeflow.org/trainjob-name"
BATCH = "bench.trainjob.flame.dev/batch"


def kubectl(*args, input=None):
    proc = subprocess.run(["kubectl", *args], input=input, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"kubectl {' '.join(args[:3])} ...: {proc.stderr.strip()}")
    return proc.stdout


def pod(i, events):
    job = i // 8
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"finetune-{job:06d}-node-0-{i % 8}-a0",
            "labels": {
                TRAINJOB: f"finetune-{job:06d}",
                "trainjob.flame.dev/rank": str(i % 8),
                "trainjob.flame.dev/attempt": "0",
                "jobset.sigs.k8s.io/jobset-name": f"finetune-{job:06d}",
                "jobset.sigs.k8s.io/replicatedjob-name": "node",
                BATCH: "touch" if i < events else "rest",
            },
        },
        "spec": {
            "restartPolicy": "Never",
            "schedulingGates": [{"name": "trainjob.flame.dev/bench"}],
            "hostname": f"finetune-{job:06d}-node-0-{i % 8}",
            "subdomain": f"finetune-{job:06d}",
            "containers": [
                {
                    "name": "node",
                    "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                    "command": ["torchrun"],
                    "args": ["--nnodes=8", "train.py"],
                    "env": [
                        {"name": "PET_NNODES", "value": "8"},
                        {"name": "PET_NODE_RANK", "value": str(i % 8)},
                        {"name": "PET_MASTER_ADDR", "value": f"finetune-{job:06d}-node-0-0"},
                    ],
                    "resources": {"limits": {"nvidia.com/gpu": "4"}},
                }
            ],
        },
    }


def create_pods(namespace, n, events, batch=500, workers=4):
    def create(start):
        items = [pod(i, events) for i in range(start, min(start + batch, n))]
        kubectl("create", "-n", namespace, "-f", "-",
                input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    t0 = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(create, range(0, n, batch)))
    return n / (time.monotonic() - t0)


def run_dump(tool, namespace, touch=None, extra=()):
    """Runs informer-dump on namespace; returns (synced line fields, dump). With touch, the
    pods labelled for it are updated once after the sync (one watch event each)."""
    proc = subprocess.Popen([tool, "--namespace", namespace, "--wait-signal", "--quiet-ms",
                             "2000", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    synced = None
    deadline = time.monotonic() + 1800
    while synced is None and time.monotonic() < deadline:
        if select.select([proc.stderr], [], [], 1.0)[0]:
            line = proc.stderr.readline()
            if line.startswith("synced "):
                synced = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", line)}
            elif not line and proc.poll() is not None:
                break
    if synced is None:
        proc.kill()
        sys.exit(f"informer-dump did not sync: {proc.stderr.read()}")
    if touch:
        kubectl("label", "pods", "-n", namespace, "-l", f"{BATCH}=touch",
                f"bench.trainjob.flame.dev/touched={touch}", "--overwrite")
    proc.send_signal(signal.SIGUSR1)
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        sys.exit(f"informer-dump failed: {err}")
    return synced, json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pods", type=int, default=100000)
    ap.add_argument("--events", type=int, default=2000, help="pods updated once after sync")
    ap.add_argument("--rounds", type=int, default=3,
                    help="timed syncs of each list mode, and of the yardstick")
    ap.add_argument("--build", default=os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release")))
    args = ap.parse_args()
    tool = os.path.join(args.build, "tests", "tools", "informer-dump")
    if not os.access(tool, os.X_OK):
        sys.exit(f"no {tool}: build it with ninja -C {args.build}")
    namespace = "bench-informers-" + uuid.uuid4().hex[:6]

    kubectl("create", "namespace", namespace)
    try:
        empty, _ = run_dump(tool, namespace)
        rate = create_pods(namespace, args.pods, args.events)
        full, dump = run_dump(tool, namespace, touch=uuid.uuid4().hex[:6])
        # The modes take turns, so that a slower minute of a shared machine hits each alike.
        timed = {"streaming": [], "paginated": [], "kubectl": []}
        for _ in range(args.rounds):
            timed["streaming"].append(run_dump(tool, namespace)[0]["list_ms"] / 1000)
            synced, pages = run_dump(tool, namespace, extra=("--paginated-lists",))
            if pages["stats"]["streamedLists"]:
                sys.exit("informer-dump --paginated-lists streamed")
            timed["paginated"].append(synced["list_ms"] / 1000)
            start = time.monotonic()
            kubectl("get", "pods", "-n", namespace, "--chunk-size=500", "-o", "name")
            timed["kubectl"].append(time.monotonic() - start)
    finally:
        kubectl("delete", "namespace", namespace, "--wait=false")

    n = len(dump["pods"])
    if n != args.pods:
        sys.exit(f"the cache holds {n} pods, the API {args.pods}")
    events = dump["stats"]["podEventsAfterSync"]
    cpu_events = dump["stats"]["cpuMs"] - full["cpu_ms"]
    print(f"pods                          {n}")
    print(f"API server create throughput  {rate:.0f} pods/s (kubectl, 4 x 500 per request)")
    print(f"list+sync                     {full['list_ms'] / 1000:.2f} s "
          f"({n / (full['list_ms'] / 1000):.0f} pods/s, "
          f"{(n / (full['list_ms'] / 1000)) / rate:.1f}x the create throughput)")
    print(f"heap per cached pod           "
          f"{(full['heap_kib'] - empty['heap_kib']) * 1024 / n:.0f} bytes (mallinfo2)")
    print(f"RSS per cached pod            "
          f"{(full['rss_kib'] - empty['rss_kib']) * 1024 / n:.0f} bytes "
          f"(peak RSS {full['max_rss_kib'] / 1024:.0f} MiB)")
    print(f"CPU for the list              {full['cpu_ms'] - empty['cpu_ms']:.0f} ms")
    med = {k: sorted(v)[len(v) // 2] for k, v in timed.items()}
    print(f"list+sync, median of {args.rounds}      streaming {med['streaming']:.2f} s, "
          f"paginated {med['paginated']:.2f} s, kubectl LIST {med['kubectl']:.2f} s")
    print(f"  as ratios                   streaming/paginated "
          f"{med['streaming'] / med['paginated']:.2f}x, streaming/kubectl "
          f"{med['streaming'] / med['kubectl']:.2f}x, paginated/kubectl "
          f"{med['paginated'] / med['kubectl']:.2f}x")
    print(f"watch events after sync       {events:.0f}")
    if events:
        print(f"CPU per 1,000 watch events    {cpu_events / events * 1000:.0f} ms")
    print(json.dumps({"pods": n, "createPerSecond": round(rate), "streamedFirstSync":
                      bool(dump["stats"]["streamedLists"]),
                      "syncSeconds": {k: [round(x, 3) for x in v] for k, v in timed.items()},
                      "heapBytesPerPod": round((full["heap_kib"] - empty["heap_kib"]) * 1024 / n),
                      "rssBytesPerPod": round((full["rss_kib"] - empty["rss_kib"]) * 1024 / n)}))


if __name__ == "__main__":
    main()
