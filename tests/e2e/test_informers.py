"""The informers' caches equal the API server's state: tests/tools/informer-dump runs the pod
and node informers through the controller's own client, a burst of creates, label updates
and deletes hits the API server while they watch, and the caches they print are compared
with a fresh `kubectl get -o json`."""

import json
import math
import os
import re
from decimal import Decimal
import select
import signal
import subprocess
import time

import pytest

from kube import REPO, apply, cluster_dir, kubectl, kubectl_json, restart_apiserver, wait_for

BUILD = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
TOOL = os.path.join(BUILD, "tests", "tools", "informer-dump")
TRAINJOB = "trainer.kubeflow.org/trainjob-name"
# The state folder of the cluster under test (tests/soak/faults.py reads it from here).
CLUSTER_DIR = cluster_dir()


PINNED = "trainjob.flame.dev/node"
SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def quantity(q, scale):
    """A resource quantity times 10^scale, rounded up, as the cache counts it."""
    m = re.fullmatch(r"([+-]?[0-9.]+)(.*)", str(q))
    number, suffix = Decimal(m.group(1)), m.group(2)
    if suffix.endswith("i"):
        number *= 2 ** (10 * (" KMGTPE".index(suffix[0])))
    elif suffix[:1] in ("e", "E") and len(suffix) > 1:
        number *= Decimal(10) ** int(suffix[1:])
    else:
        number *= Decimal(10) ** SUFFIXES[suffix]
    return math.ceil(number * Decimal(10) ** scale)


def resources(amounts, extra=None):
    """A resource list as the cache holds it: cpu in thousandths, the rest in units, and
    only what it keeps (cpu, memory, extended resources, and extra)."""
    out = {"cpu": 0, "memory": 0}
    for name, q in (amounts or {}).items():
        if name == "cpu":
            out["cpu"] = quantity(q, 3)
        elif name == "memory" or name == extra or ("/" in name and "kubernetes.io/" not in name):
            out[name] = quantity(q, 0)
    return out


def bare_pod(name, job, rank, fail=False, pinned=None):
    """A pod as the controller labels them (without a TrainJob when job is None); KWOK keeps
    it Running for an hour, or fails it."""
    annotations = {"sim.trainjob.flame.dev/run-time": "1h"}
    if pinned:
        annotations[PINNED] = pinned
    if fail:
        annotations.update(
            {
                "sim.trainjob.flame.dev/fail-exit-code": "3",
                "sim.trainjob.flame.dev/fail-reason": "Error",
                "sim.trainjob.flame.dev/fail-after": "1s",
            }
        )
    labels = {"trainjob.flame.dev/rank": str(rank), "trainjob.flame.dev/attempt": "0"}
    if job:
        labels[TRAINJOB] = job
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/arch": "amd64"},
            "containers": [
                {
                    "name": "node",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": f"{100 + rank}m", "memory": "64Mi"}},
                }
            ],
        },
    }


def start_dump(*extra):
    """Starts informer-dump and waits until its caches have synced."""
    if not os.access(TOOL, os.X_OK):
        pytest.skip(f"{TOOL} is not built")
    proc = subprocess.Popen(
        [TOOL, "--wait-signal", "--quiet-ms", "1500", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 1.0)
        if ready:
            line = proc.stderr.readline()
            if line.startswith("synced "):
                return proc
            if not line and proc.poll() is not None:
                break
    proc.kill()
    raise AssertionError(f"informer-dump did not sync: {proc.stderr.read()}")


def finish_dump(proc, timeout=120):
    """Asks informer-dump to print its caches (after a quiet period, once its informers
    watch) and returns them."""
    proc.send_signal(signal.SIGUSR1)
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out)


def label_index(labels, key):
    v = labels.get(key, "")
    return int(v) if re.fullmatch(r"0|[1-9][0-9]*", v) else -1


def api_pods(namespace, items=None):
    """The API's pods in namespace (every one, not only TrainJobs'), projected as the cache
    projects them; their containers have requests only, and no init containers. items: the
    namespace's pods as listed already, instead of a list of its own."""
    if items is None:
        items = kubectl_json("get", "pods", "-n", namespace)["items"]
    pods = {}
    for p in items:
        m, st = p["metadata"], p.get("status", {})
        term = None
        for cs in st.get("containerStatuses") or []:
            if cs.get("name") == "node" and "terminated" in cs.get("state", {}):
                term = cs["state"]["terminated"]
        pods[m["name"]] = {
            "uid": m["uid"],
            "resourceVersion": m["resourceVersion"],
            "trainjob": m.get("labels", {}).get(TRAINJOB),
            "rank": label_index(m.get("labels", {}), "trainjob.flame.dev/rank"),
            "attempt": label_index(m.get("labels", {}), "trainjob.flame.dev/attempt"),
            "nodeName": p["spec"].get("nodeName"),
            "pinnedNode": m.get("annotations", {}).get(PINNED),
            "requests": summed_requests(p["spec"]["containers"]),
            "phase": st.get("phase", "Pending"),
            "terminated": term is not None,
            "exitCode": term["exitCode"] if term else 0,
        }
    return pods


def summed_requests(containers):
    total = {"cpu": 0, "memory": 0}
    for c in containers:
        for name, v in resources(c.get("resources", {}).get("requests")).items():
            total[name] = total.get(name, 0) + v
    return total


def cache_pods(dump, namespace):
    keys = ("uid", "resourceVersion", "trainjob", "rank", "attempt", "nodeName", "pinnedNode",
            "requests", "phase", "terminated", "exitCode")
    return {
        p["name"]: {k: p[k] for k in keys} for p in dump["pods"] if p["namespace"] == namespace
    }


def settled(namespace, want):
    """The pods of namespace once every one has reached its final phase and nothing has
    changed for two seconds; None until then."""
    first = api_pods(namespace)
    if {n: p["phase"] for n, p in first.items()} != want:
        return None
    time.sleep(2)
    second = api_pods(namespace)
    return second if second == first else None


def test_caches_match_the_api_after_a_burst(namespace):
    proc = start_dump()
    try:
        # Creates: 4 TrainJobs of 6 pods (one of each fails with exit code 3; one is pinned
        # to a node), and pods without the TrainJob label, which the pod informer sees too:
        # their requests take room on their nodes.
        items = []
        for j in range(4):
            for r in range(6):
                items.append(bare_pod(f"job{j}-node-0-{r}", f"job{j}", r, fail=(r == 5),
                                      pinned="kwok-pinned" if (j, r) == (2, 1) else None))
        for i in range(3):
            items.append(bare_pod(f"other-{i}", None, i))
        apply({"apiVersion": "v1", "kind": "List", "items": items}, "-n", namespace)

        # Updates: a new attempt label on job0's pods; job3's rank 0 leaves the TrainJob
        # (an update that clears its trainjob, not a delete).
        for r in range(6):
            kubectl("label", "pod", f"job0-node-0-{r}", "-n", namespace,
                    "trainjob.flame.dev/attempt=1", "--overwrite")
        kubectl("label", "pod", "job3-node-0-0", "-n", namespace, f"{TRAINJOB}-")
        # Deletes: all of job1 and one pod of job2.
        kubectl("delete", "pod", "-n", namespace, "--wait=true",
                *[f"job1-node-0-{r}" for r in range(6)], "job2-node-0-3")

        want = {}
        for j in (0, 2, 3):
            for r in range(6):
                want[f"job{j}-node-0-{r}"] = "Failed" if r == 5 else "Running"
        del want["job2-node-0-3"]
        for i in range(3):
            want[f"other-{i}"] = "Running"
        api = wait_for("the pods to settle", lambda: settled(namespace, want), timeout=120)
    except BaseException:
        proc.kill()
        raise
    dump = finish_dump(proc)
    cache = cache_pods(dump, namespace)

    assert len(api) == 20
    assert sorted(cache) == sorted(api)
    for name in api:
        assert cache[name] == api[name], name
    assert all(cache[f"other-{i}"]["trainjob"] is None for i in range(3))
    assert cache["job3-node-0-0"]["trainjob"] is None
    assert cache["job2-node-0-1"]["pinnedNode"] == "kwok-pinned"
    assert cache["other-2"]["requests"] == {"cpu": 102, "memory": 64 << 20}
    assert all(p["attempt"] == 1 for n, p in cache.items() if n.startswith("job0-"))
    assert cache["job0-node-0-5"]["exitCode"] == 3
    assert dump["stats"]["podEvents"] > 0

    nodes = kubectl_json("get", "nodes")["items"]
    assert sorted((n["metadata"]["name"], n["metadata"]["uid"]) for n in nodes) == sorted(
        (n["name"], n["uid"]) for n in dump["nodes"]
    )
    for n in nodes:
        cached = next(c for c in dump["nodes"] if c["name"] == n["metadata"]["name"])
        assert cached["arch"] == n["metadata"]["labels"].get("kubernetes.io/arch")
        assert cached["labels"] == n["metadata"]["labels"]
        assert cached["allocatable"] == resources(n["status"]["allocatable"], extra="pods")
        ready = next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
        assert {"type": "Ready", "status": ready["status"], "reason": ready.get("reason")} in (
            cached["conditions"]
        )


@pytest.mark.parametrize("mode", ["streaming", "paginated"])
def test_a_streaming_or_paginated_list_fills_the_caches_alike(namespace, mode):
    """The caches fill from a streaming list (a watch with sendInitialEvents, from the watch
    cache) where the API server offers it, as it does here, and from pages with
    --paginated-lists: either way they hold what the API holds, and the watch that follows
    sees the changes."""
    items = [bare_pod(f"job0-node-0-{r}", "job0", r) for r in range(5)]
    items += [bare_pod(f"other-{i}", None, i) for i in range(2)]
    apply({"apiVersion": "v1", "kind": "List", "items": items}, "-n", namespace)
    want = {p["metadata"]["name"]: "Running" for p in items}
    wait_for("the pods to settle", lambda: settled(namespace, want), timeout=120)
    proc = start_dump(*(["--paginated-lists"] if mode == "paginated" else []))
    try:
        kubectl("delete", "pod", "-n", namespace, "--wait=true", "other-1")
        kubectl("label", "pod", "job0-node-0-4", "-n", namespace,
                "trainjob.flame.dev/attempt=2", "--overwrite")
        del want["other-1"]
        api = wait_for("the pods to settle", lambda: settled(namespace, want), timeout=120)
    except BaseException:
        proc.kill()
        raise
    dump = finish_dump(proc)
    assert cache_pods(dump, namespace) == api
    assert dump["stats"]["streamFallbacks"] == 0
    # The pod and node caches each listed once, by the mode asked for.
    assert dump["stats"]["streamedLists"] == (2 if mode == "streaming" else 0)
    assert dump["stats"]["podLists"] == 1
    assert dump["stats"]["podLastError"] == ""


def test_caches_match_the_api_after_a_stall(namespace):
    """The informers are frozen (SIGSTOP) while many updates pass, so that the API server may
    drop their watch as unresponsive and the version they resume from may have left its
    watch cache (410, then a relist); whatever path they take, nothing may be lost."""
    proc = start_dump()
    try:
        items = [bare_pod(f"stall-node-0-{r}", "stall", r) for r in range(40)]
        apply({"apiVersion": "v1", "kind": "List", "items": items}, "-n", namespace)
        want = {f"stall-node-0-{r}": "Running" for r in range(40)}
        wait_for("the pods to run", lambda: settled(namespace, want), timeout=120)
        proc.send_signal(signal.SIGSTOP)
        for round_ in range(1, 16):
            kubectl("label", "pods", "--all", "-n", namespace,
                    f"trainjob.flame.dev/attempt={round_}", "--overwrite")
        # Half of them are deleted while the informers sleep.
        kubectl("delete", "pod", "-n", namespace, "--wait=true",
                *[f"stall-node-0-{r}" for r in range(0, 40, 2)])
        proc.send_signal(signal.SIGCONT)
        api = api_pods(namespace)
    except BaseException:
        proc.kill()
        raise
    dump = finish_dump(proc)
    cache = cache_pods(dump, namespace)

    assert len(api) == 20
    assert cache == api
    assert all(p["attempt"] == 15 for p in cache.values())
    print("stats after the stall:", dump["stats"])


@pytest.mark.skipif(
    os.environ.get("TJC_E2E_DISRUPTIVE") != "1",
    reason="restarts the cluster's API server: set TJC_E2E_DISRUPTIVE=1 on a private cluster",
)
def test_caches_match_the_api_after_an_apiserver_restart(namespace):
    """The API server goes away under the watch and comes back with a fresh watch cache, which
    no longer holds the version the informers watched from (410, relist). Changes made after
    it is back must all arrive, and the vanished pods' deletes be synthesised."""
    proc = start_dump()
    try:
        items = [bare_pod(f"rs-node-0-{r}", "rs", r) for r in range(12)]
        apply({"apiVersion": "v1", "kind": "List", "items": items}, "-n", namespace)
        want = {f"rs-node-0-{r}": "Running" for r in range(12)}
        wait_for("the pods to run", lambda: settled(namespace, want), timeout=120)
        # Frozen through the restart and the changes after it, the informers find their
        # stream dead when they wake up and watch again from a version that the new API
        # server's watch cache does not hold.
        proc.send_signal(signal.SIGSTOP)
        # A write after the freeze: the new watch cache starts past the informers' version
        # even when nothing else in the cluster happened to write in between.
        kubectl("create", "configmap", "rv-bump", "-n", namespace)
        restart_apiserver()
        kubectl("delete", "pod", "-n", namespace, "--wait=true",
                *[f"rs-node-0-{r}" for r in range(0, 12, 3)])
        kubectl("label", "pods", "--all", "-n", namespace, "trainjob.flame.dev/attempt=4",
                "--overwrite")
        apply({"apiVersion": "v1", "kind": "List",
               "items": [bare_pod(f"rs-node-0-{r}", "rs", r) for r in (12, 13)]},
              "-n", namespace)
        proc.send_signal(signal.SIGCONT)
        want = {f"rs-node-0-{r}": "Running" for r in range(14) if r % 3 or r >= 12}
        api = wait_for("the pods to settle", lambda: settled(namespace, want), timeout=180)
    except BaseException:
        proc.kill()
        raise
    dump = finish_dump(proc)
    cache = cache_pods(dump, namespace)

    assert len(api) == 10
    assert cache == api
    assert dump["stats"]["podLists"] >= 2
    assert "too old resource version" in dump["stats"]["podLastError"]
    print("stats after the restart:", dump["stats"])
