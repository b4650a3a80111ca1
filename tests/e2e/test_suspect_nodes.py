"""Suspect nodes (docs/operators.md, "Suspect nodes") and kubectl sinfo (docs/slurm.md) on
the real control plane: ranks of three different TrainJobs that fail with a hardware-like
exit code on one node make it suspect (tainted, marked, told on the Node and on each job),
the next job avoids it, the failed jobs' restarts run elsewhere, the last one charged to
the infrastructure, and `kubectl sinfo -R` names it; the same crash that follows each job to
another node marks none; the taint removed, the node takes gangs again. Failures are injected as the kubelet
would report them: KWOK fails a pod with the exit code of an annotation. A controller
restarted between the crashes, after the crashed pods are gone, still knows them.

The module runs its own controller, with a one-second restart backoff and queued jobs that
fit nowhere left waiting; the session's controller steps aside meanwhile. Each test uses one
rack of two gh200 nodes, chosen with a nodeSelector, and leaves every node as it found it."""

import os
import subprocess

import pytest

from conftest import Controller, config_with_policy
from kube import (REPO, SIM, apply, events, kubectl, kubectl_json, metric, running, tj, trainjob, wait_for,
                  wait_state)

TAINT = "trainjob.flame.dev/suspect"
FAILURES = "trainjob.flame.dev/failures"
RACK = "topology.flame.dev/rack"
BUILD = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))

POLICY = """
failurePolicy:
  maxRestarts: 3
  restartBackoff: {initialSeconds: 1, maxSeconds: 1}
admission:
  neverFits: Wait
suspectNodes:
  jobs: 3
  window: 1h
  exitCodes: [134, 135, 139]
"""


def clear_nodes():
    """No node keeps a suspect taint or the failures seen on it."""
    for node in kubectl_json("get", "nodes")["items"]:
        name = node["metadata"]["name"]
        if any(t["key"] == TAINT for t in node["spec"].get("taints") or []):
            kubectl("taint", "nodes", name, f"{TAINT}-", check=False)
        ann = node["metadata"].get("annotations") or {}
        if FAILURES in ann or TAINT in ann:
            kubectl("annotate", "node", name, f"{FAILURES}-", f"{TAINT}-", check=False)


@pytest.fixture(scope="module")
def suspect_controller(controller):
    controller.stop()
    clear_nodes()
    c = Controller("--config", config_with_policy(POLICY)).start()
    try:
        yield c
    finally:
        c.stop()
        clear_nodes()
        controller.start()


def sinfo(*args):
    """kubectl sinfo, found on PATH as kubectl finds plugins."""
    env = dict(os.environ, PATH=BUILD + os.pathsep + os.environ["PATH"])
    proc = subprocess.run(["kubectl", "sinfo", *args], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def rack_job(name, rack, **kw):
    body = trainjob(name, nodes=kw.pop("nodes", 1), gpus=kw.pop("gpus", 1), run_time=kw.pop("run_time", "600s"), **kw)
    body["spec"]["podTemplateOverrides"][0]["spec"] = {"nodeSelector": {RACK: rack}}
    return body


def node_of(pod):
    return pod["spec"]["nodeName"]


def fail(namespace, pod, code):
    kubectl("annotate", "pod", pod["metadata"]["name"], "-n", namespace, f"{SIM}fail-exit-code={code}")


def node(name):
    return kubectl_json("get", "node", name)


def tainted(name):
    return any(t["key"] == TAINT for t in node(name)["spec"].get("taints") or [])


def rack_nodes(rack):
    return sorted(n["metadata"]["name"] for n in kubectl_json("get", "nodes", "-l", f"{RACK}={rack}")["items"])


def test_three_jobs_failing_on_one_node_make_it_suspect_until_the_taint_is_removed(suspect_controller, namespace):
    rack = "gh200-rack-3"
    assert len(rack_nodes(rack)) == 2
    jobs = ["crash-a", "crash-b", "crash-c"]
    for name in jobs:
        apply(rack_job(name, rack), "-n", namespace)
    first = {name: running(namespace, name, 1)[0] for name in jobs}
    # Best fit packs the three one-GPU jobs on one node of the rack.
    bad = node_of(first[jobs[0]])
    assert {node_of(p) for p in first.values()} == {bad}, {n: node_of(p) for n, p in first.items()}
    good = next(n for n in rack_nodes(rack) if n != bad)

    for i, name in enumerate(jobs):
        if i == 2:
            # The history lives in the node's annotation: a controller restarted after the
            # crashed pods are gone still has it.
            wait_for(f"two failures recorded on {bad}",
                     lambda: len((node(bad)["metadata"].get("annotations") or {}).get(FAILURES, "").split(",")) == 2)
            for crashed in jobs[:2]:
                kubectl("delete", "pod", first[crashed]["metadata"]["name"], "-n", namespace, "--wait=true")
            suspect_controller.stop()
            suspect_controller.start()
        fail(namespace, first[name], 135)
        job = wait_for(f"{name} to restart", lambda: (j := tj(namespace, name))["status"].get("restartCount") == 1 and j)
        if i < 2:
            # Two jobs are not a pattern: each pays for its own crash.
            assert job["status"].get("infrastructureRestarts", 0) == 0, job["status"]
            assert not tainted(bad)
    wait_for(f"{bad} to be tainted", lambda: tainted(bad), timeout=30)
    n = node(bad)
    taint = next(t for t in n["spec"]["taints"] if t["key"] == TAINT)
    assert taint["effect"] == "NoSchedule"
    mark = n["metadata"]["annotations"][TAINT]
    assert all(f"{namespace}/{name}" in mark for name in jobs), mark
    recorded = n["metadata"]["annotations"][FAILURES].split(",")
    assert sorted(r.split(":")[3] for r in recorded) == sorted(f"{namespace}/{name}" for name in jobs), recorded
    assert {r.split(":")[1] for r in recorded} == {"135"}

    # The crash that made the node suspect is the node's, not the job's.
    last = tj(namespace, jobs[2])["status"]
    assert last["lastFailure"]["exitCode"] == 135 and last["lastFailure"]["node"] == bad
    assert last.get("infrastructureRestarts") == 1, last
    assert any("infrastructure restart 1 of" in e["message"] for e in events(namespace, jobs[2], "Restarting"))

    # Told on the Node, and on each job naming the others.
    node_events = kubectl_json("get", "events", "-n", "default", "--field-selector",
                               f"involvedObject.kind=Node,involvedObject.name={bad},reason=NodeSuspect")["items"]
    assert node_events and "ranks of 3 TrainJobs failed on it" in node_events[0]["message"], node_events
    for name in jobs:
        msgs = [e["message"] for e in wait_for(f"the NodeSuspect event of {name}", lambda: events(namespace, name, "NodeSuspect"))]
        others = [f"{namespace}/{o}" for o in jobs if o != name]
        assert any(bad in m and all(o in m for o in others) for m in msgs), msgs
    assert "NodeSuspect" in kubectl("describe", "trainjob", jobs[0], "-n", namespace).stdout
    assert metric(suspect_controller.metrics(), "trainjob_suspect_nodes") == 1

    # Every restart runs elsewhere, and a new job of the rack avoids the node.
    for name in jobs:
        again = running(namespace, name, 1, attempt=1)[0]
        assert node_of(again) == good, (name, node_of(again))
    apply(rack_job("next", rack), "-n", namespace)
    assert node_of(running(namespace, "next", 1)[0]) == good

    reasons = sinfo("-R")
    line = next((l for l in reasons.splitlines() if l.startswith("suspect:")), None)
    assert line and bad in line and "trainjob-controller" in line, reasons
    assert all(f"{namespace}/{name}" in line for name in jobs), line
    nodes = sinfo("-N", "-p", "gh200")
    assert any(l.split()[:4] == [bad, "1", "gh200*", "suspect"] for l in nodes.splitlines()), nodes

    # A job that may run only there waits; the taint removed, the node is forgotten and
    # takes it.
    pinned = trainjob("pinned", nodes=1, gpus=4, run_time="600s")
    pinned["spec"]["podTemplateOverrides"][0]["spec"] = {"nodeSelector": {"kubernetes.io/hostname": bad}}
    apply(pinned, "-n", namespace)
    wait_state(namespace, "pinned", "Queued", timeout=30)
    kubectl("taint", "nodes", bad, f"{TAINT}-")
    # The mark goes; the failures annotation keeps only the time of the clear, before which
    # the crashed pods still there count no more.
    wait_for(f"{bad}'s history to be forgotten",
             lambda: (a := node(bad)["metadata"].get("annotations") or {}).get(FAILURES, "").startswith("cleared:")
             and "," not in a[FAILURES] and TAINT not in a, timeout=30)
    assert node_of(running(namespace, "pinned", 1)[0]) == bad
    assert metric(suspect_controller.metrics(), "trainjob_suspect_nodes") == 0
    assert kubectl_json("get", "events", "-n", "default", "--field-selector",
                        f"involvedObject.name={bad},reason=NodeSuspectCleared")["items"]


def test_the_same_error_following_each_job_to_another_node_marks_no_node(suspect_controller, namespace):
    rack = "gh200-rack-2"
    nodes = rack_nodes(rack)
    # Every pod of these jobs ends with 135: each crashes on one node, is restarted on the
    # other (a restart avoids the node of the failure), crashes there too, and is Failed.
    crash = {SIM + "fail-exit-code": "135", SIM + "fail-after": "2s"}
    jobs = ["user-a", "user-b", "user-c"]
    for name in jobs:
        apply(rack_job(name, rack, pod_annotations=crash, annotations={"trainjob.flame.dev/max-restarts": "1"}),
              "-n", namespace)
        job = wait_state(namespace, name, "Failed", timeout=60)
        assert job["status"]["reason"] == "ReachedMaxRestarts", job["status"]
        assert job["status"].get("infrastructureRestarts", 0) == 0, job["status"]
        assert not any(tainted(n) for n in nodes)
    for n in nodes:
        recorded = (node(n)["metadata"].get("annotations") or {}).get(FAILURES, "")
        assert {f"{namespace}/{name}" for name in jobs} == {r.split(":")[3] for r in recorded.split(",") if r}, (n, recorded)
    assert not any(tainted(n) for n in nodes)
    assert metric(suspect_controller.metrics(), "trainjob_suspect_nodes") == 0
