"""Gang admission against the real control plane (docs/users.md, "The queue"): a TrainJob's pods are
created only when its whole gang fits on the GH200 nodes, with real kube-scheduler binding
the pinned pods and KWOK running them; the queue's order, reservation and backfill; the
status a person reads while a job waits; the jobs that another admitter owns.

The scenarios fill the 8 GH200 nodes of the local cluster (4 GPUs each) on purpose, so every
test first waits until those nodes hold nothing of other tests. The module runs its own
controller (the shipped config: admission on, backfill on, NeverFits fails), instead of the
session's, so that it can kill and restart it."""

import json
import random
import re
import time
import uuid

import pytest
from kubeflow.trainer import CustomTrainer

from conftest import Controller, config_with_policy
from kube import (GH200_SELECTOR, GRACE, NOT_READY_LABEL, RANK, SIM, TERMINAL, Watch, apply, by_rank, condition, delete_node,
                  drop_namespaces, events, gh200_busy, kubectl, kubectl_json, metric, metric_sum, node_ready, other_namespace, pods,
                  restore_node, running, table, tj, trainjob, ts, wait_for, wait_state)
from sdk import RUN_TIME, pod_annotations, train

PINNED_NODE = "trainjob.flame.dev/node"
PRIORITY = "trainjob.flame.dev/priority"
QOS = "trainjob.flame.dev/qos"
GANG_GATE = "trainjob.flame.dev/gang"
# deploy/local/stages.yaml: a deleted pod with it stays Terminating until its deletionTimestamp.
IGNORE_SIGTERM = SIM + "ignore-sigterm"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
# A replacement that finds no room within 10 s has the live ranks give their nodes back.
RESTART_WAIT_10S = """failurePolicy:
  maxRestarts: 3
  restartBackoff:
    initialSeconds: 1
    maxSeconds: 2
admission:
  restartWaitSeconds: 10
"""

# A replacement is created 20 s after its worker's failure (the restart backoff).
BACKOFF_20S = """failurePolicy:
  maxRestarts: 3
  restartBackoff:
    initialSeconds: 20
    maxSeconds: 20
"""


@pytest.fixture(scope="module")
def admitter(session_controller_aside):
    """A controller of this module's own, instead of the session's."""
    c = Controller().start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def gh200(admitter):
    """The names of the 8 GH200 nodes, once every one of them is free."""
    names, busy = wait_for("the GH200 nodes to be free", lambda: (got := gh200_busy()) and not got[1] and got, timeout=240, interval=1)
    assert len(names) == 8, f"the scenarios are sized for the local cluster's 8 GH200 nodes, not {names}"
    return names


def status(namespace, name):
    return tj(namespace, name).get("status", {})


def started(namespace, name):
    """The job's startTime, once its status has it: the pods can run before the patch
    that records the start lands."""
    return ts(wait_for(f"{name}'s startTime", lambda: status(namespace, name).get("startTime"), timeout=30))


def queued(namespace, name, reason="Resources", timeout=60, **want):
    """The status of the job once it is Queued with that reason (and the fields in want)."""

    def ok():
        s = status(namespace, name)
        return s.get("state") == "Queued" and s.get("reason") == reason and all(s.get(k) == v for k, v in want.items()) and s

    return wait_for(f"{name} to be Queued/{reason} {want or ''}", ok, timeout=timeout)


def pinned_whole(pod_list):
    """Every pod pinned to its own node by a required affinity on the node's name in every
    term, and bound there."""
    nodes = []
    for p in pod_list:
        node = p["metadata"]["annotations"][PINNED_NODE]
        assert p["spec"]["nodeName"] == node, (p["metadata"]["name"], p["spec"]["nodeName"], node)
        terms = p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        for term in terms:
            assert {"key": "metadata.name", "operator": "In", "values": [node]} in term["matchFields"], term
        nodes.append(node)
    assert len(set(nodes)) == len(nodes), f"two ranks on one node: {nodes}"
    return nodes


def job_of(pod):
    return pod["metadata"].get("labels", {}).get("trainer.kubeflow.org/trainjob-name")


def created_when_it_fit(watch_events, later, earlier, room=0):
    """In the order the API server saw it, no pod of job `later` was created while more than
    `room` pods of job `earlier` still held their nodes (pods end one by one: a smaller job
    may start on the nodes of the first ones); and no pod of `later` was ever refused by the
    scheduler (a pod held back by its gang's scheduling gate is not refused)."""
    phases = {}
    seen_later = set()
    for e in watch_events:
        o = e["object"]
        name, job = o["metadata"]["name"], job_of(o)
        if job == earlier:
            phases[name] = "Gone" if e["type"] == "DELETED" else o["status"].get("phase")
        if job == later:
            if name not in seen_later:
                live = {n: ph for n, ph in phases.items() if ph not in TERMINAL + ("Gone",)}
                assert len(live) <= room, f"{name} of {later} was created while {earlier} still ran: {live}"
                seen_later.add(name)
            # Held behind the gang's scheduling gate until the gang exists is no refusal.
            for c in o["status"].get("conditions") or []:
                refused = c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") != "SchedulingGated"
                assert not refused, f"{name} was unschedulable: {c}"
    assert phases, f"the watch saw no pod of {earlier}"
    return seen_later


def one_pod_per_rank_at_any_time(watch_events, job):
    """No rank of the job ever had two live pods at once."""
    live = {}
    for e in watch_events:
        o = e["object"]
        if job_of(o) != job:
            continue
        rank, uid = o["metadata"]["labels"][RANK], o["metadata"]["uid"]
        if e["type"] == "DELETED" or o["status"].get("phase") in TERMINAL:
            live.get(rank, set()).discard(uid)
        else:
            live.setdefault(rank, set()).add(uid)
            assert len(live[rank]) == 1, f"rank {rank} of {job} had two pods at once: {live[rank]}"


def gated(pod):
    return any(g.get("name") == GANG_GATE for g in pod["spec"].get("schedulingGates") or [])


def released_only_whole(watch_events, job, size):
    """In the order the API server saw it, no pod of the job lost the gang's scheduling gate
    or got a node while fewer than `size` pods of the job existed (not being deleted).
    Returns the uids of the pods that were ever bound, by rank."""
    live, released, bound = set(), set(), {}
    for e in watch_events:
        o = e["object"]
        if job_of(o) != job:
            continue
        uid = o["metadata"]["uid"]
        if e["type"] == "DELETED" or o["metadata"].get("deletionTimestamp"):
            live.discard(uid)
        else:
            live.add(uid)
        node = o["spec"].get("nodeName")
        if node:
            bound.setdefault(int(o["metadata"]["labels"][RANK]), set()).add(uid)
        if (node or not gated(o)) and uid not in released:
            released.add(uid)
            assert len(live) >= size, (f"{o['metadata']['name']} of {job} was released (gate lifted or bound to "
                                       f"{node}) while {len(live)} of its {size} pods existed")
    return bound


def released_with_its_creates(gang):
    """The gang's pods were bound within seconds of the last one's create: its gates came off
    as soon as the gang existed, with no wait for a lost write's expectation to lapse (30 s).
    Times are the API server's, to the second."""
    created = max(ts(p["metadata"]["creationTimestamp"]) for p in gang)
    scheduled = max(ts(condition(p, "PodScheduled")["lastTransitionTime"]) for p in gang)
    assert scheduled - created <= 10, [(p["metadata"]["name"], p["metadata"]["creationTimestamp"],
                                        condition(p, "PodScheduled")) for p in gang]


def test_second_of_two_five_node_jobs_waits_with_no_pod_then_runs_whole(admitter, namespace, gh200):
    watch = Watch(namespace)
    try:
        apply({"apiVersion": "v1", "kind": "List",
               "items": [trainjob("first", nodes=5, run_time="10s"), trainjob("second", nodes=5, run_time="4s")]},
              "-n", namespace)
        first = running(namespace, "first", 5, timeout=60)
        pinned_whole(first)
        released_with_its_creates(first)
        wait_state(namespace, "first", "Running", timeout=10)
        s = queued(namespace, "second", queuePosition=1)
        assert "position 1 of 1 in gh200: needs 5 nodes x 4 GPUs, 3 such nodes free" in s["message"], s["message"]
        # The first job has no walltime: nothing says when its nodes come free.
        assert "expected start unknown" in s["message"], s["message"]
        assert "expectedStartTime" not in s and "startTime" not in s
        assert not s.get("conditions"), "Kubeflow's SDK reads any condition as final"
        assert pods(namespace, "second") == []
        assert any("position 1" in e["message"] for e in events(namespace, "second", "Queued"))

        out = kubectl("get", "tj", "-n", namespace).stdout
        assert out.splitlines()[0].split() == ["NAME", "STATE", "REASON", "RUNTIME", "NODES", "GPUS/NODE", "RESTARTS",
                                               "PROGRESS", "ETA", "DEADLINE", "AGE"]
        rows = {r["NAME"]: r for r in table(out)}
        assert (rows["second"]["STATE"], rows["second"]["REASON"], rows["second"]["NODES"]) == ("Queued", "Resources", "5")
        assert (rows["first"]["STATE"], rows["first"]["REASON"]) == ("Running", "AllPodsRunning")
        wide = {r["NAME"]: r for r in table(kubectl("get", "tj", "-n", namespace, "-o", "wide").stdout)}
        assert wide["second"]["POSITION"] == "1"
        assert wide["second"]["EXPECTED START"] in ("", "<none>")
        assert wide["second"]["MESSAGE"].startswith("position 1 of 1 in gh200")
        assert wide["first"]["POSITION"] in ("", "<none>")

        second = running(namespace, "second", 5, timeout=60)
        assert len(pods(namespace, "second")) == 5
        pinned_whole(second)
        released_with_its_creates(second)
        admitted = wait_for("the Admitted event", lambda: events(namespace, "second", "Admitted"), timeout=15)
        assert "5 pods pinned to" in admitted[0]["message"], admitted
        assert "backfilled" not in admitted[0]["message"]
        done = wait_state(namespace, "second", "Complete", timeout=60)
        # Its clock started at the admission, not at its creation.
        assert ts(done["status"]["startTime"]) - ts(done["metadata"]["creationTimestamp"]) >= 5, done["status"]
    finally:
        watch.stop()
    # second needs 5 of the 8 nodes: it may start once 2 pods of first are done.
    assert len(created_when_it_fit(watch.events(), "second", "first", room=3)) == 5


def plain_gpu_pod(name, node, by_node_name):
    """A pod of no TrainJob (a notebook) that holds all 4 GPUs of one GH200 node."""
    spec = {
        "tolerations": [GPU_TOLERATION],
        "containers": [{"name": "lab", "image": "quay.io/jupyter/base-notebook",
                        "resources": {"requests": {"nvidia.com/gpu": 4}, "limits": {"nvidia.com/gpu": 4}}}],
    }
    if by_node_name:
        spec["nodeName"] = node
    else:
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {SIM + "run-time": "10m"}}, "spec": spec}


def test_gpus_held_by_pods_of_no_trainjob_keep_an_eight_node_job_waiting(admitter, namespace, gh200):
    bound, scheduled = gh200[2], gh200[5]
    apply(plain_gpu_pod("by-name", bound, by_node_name=True), "-n", namespace)
    apply(plain_gpu_pod("by-affinity", scheduled, by_node_name=False), "-n", namespace)
    for name, node in (("by-name", bound), ("by-affinity", scheduled)):
        wait_for(f"{name} to run on {node}", lambda: (p := kubectl_json("get", "pod", name, "-n", namespace))["status"].get("phase") == "Running" and p["spec"]["nodeName"] == node)

    apply(trainjob("wide", nodes=8, run_time="3s"), "-n", namespace)
    s = queued(namespace, "wide")
    assert "needs 8 nodes x 4 GPUs, 6 such nodes free" in s["message"], s["message"]
    # Both pods count (6 nodes free): one freed node is not enough for 8.
    kubectl("delete", "pod", "by-name", "-n", namespace, "--timeout=60s")
    time.sleep(3)  # time enough to admit it wrongly
    assert status(namespace, "wide")["state"] == "Queued" and pods(namespace, "wide") == []
    kubectl("delete", "pod", "by-affinity", "-n", namespace, "--timeout=60s")
    got = running(namespace, "wide", 8, timeout=60)
    assert {bound, scheduled} <= set(pinned_whole(got))
    wait_state(namespace, "wide", "Complete")


def test_backfill_starts_a_short_job_ahead_of_the_blocked_head_and_never_one_without_walltime(admitter, namespace, gh200):
    watch = Watch(namespace)
    try:
        apply(trainjob("a", nodes=6, run_time="45s", activeDeadlineSeconds=60), "-n", namespace)
        running(namespace, "a", 6, timeout=60)
        a_start = started(namespace, "a")
        apply(trainjob("b", nodes=8, run_time="4s"), "-n", namespace)
        b = wait_for("b's reservation", lambda: (s := queued(namespace, "b", queuePosition=1)).get("expectedStartTime") and s)
        assert abs(ts(b["expectedStartTime"]) - (a_start + 60 + GRACE)) <= 3, (b["expectedStartTime"], a_start)
        assert re.search(r"expected start \d\d:\d\dZ", b["message"]), b["message"]
        assert "2 such nodes free" in b["message"], b["message"]

        # c ends (walltime 20 s) long before b's reserved start: it may use the 2 free nodes.
        apply(trainjob("c", nodes=2, run_time="6s", activeDeadlineSeconds=20), "-n", namespace)
        running(namespace, "c", 2, timeout=30)
        admitted = wait_for("the Admitted event", lambda: events(namespace, "c", "Admitted"), timeout=15)
        assert "backfilled" in admitted[0]["message"], admitted
        # d-none has no walltime and d-long's ends after b's reserved start: neither may delay b.
        apply(trainjob("d-none", nodes=2, run_time="3s"), "-n", namespace)
        time.sleep(1.1)  # creation times are in seconds: d-long is younger
        apply(trainjob("d-long", nodes=2, run_time="3s", activeDeadlineSeconds=300), "-n", namespace)
        wait_state(namespace, "c", "Complete", timeout=60)
        # Now they would fit (c's nodes are free), but they wait for b.
        for name, pos in (("d-none", 2), ("d-long", 3)):
            s = queued(namespace, name, reason="Priority", queuePosition=pos)
            assert "2 such nodes free" in s["message"], s["message"]
        assert queued(namespace, "b", queuePosition=1)["expectedStartTime"] == b["expectedStartTime"]
        for name in ("b", "d-none", "d-long"):
            assert pods(namespace, name) == [], name

        got = running(namespace, "b", 8, timeout=90)
        pinned_whole(got)
        assert pods(namespace, "d-none") == [] and pods(namespace, "d-long") == []
        assert status(namespace, "a")["state"] == "Complete"
    finally:
        watch.stop()
    assert len(created_when_it_fit(watch.events(), "b", "a")) == 8


def test_a_cancelled_jobs_terminating_pods_hold_their_nodes_until_their_deletion_timestamp(admitter, namespace, gh200):
    # a's pods ignore SIGTERM (deploy/local/stages.yaml): once deleted they stay Terminating
    # for their whole grace period of 300 s, as a kubelet keeps a pod until it kills it.
    slow_to_stop = gh200_runtime_in(namespace, terminationGracePeriodSeconds=300)
    watch = Watch(namespace)
    try:
        apply(trainjob("a", nodes=6, run_time="30m", runtimeRef=slow_to_stop, pod_annotations={IGNORE_SIGTERM: "true"}),
              "-n", namespace)
        a_pods = running(namespace, "a", 6, timeout=60)
        assert {p["spec"]["terminationGracePeriodSeconds"] for p in a_pods} == {300}
        a_nodes = {p["spec"]["nodeName"] for p in a_pods}
        apply(trainjob("b", nodes=8, run_time="5s"), "-n", namespace)
        s = queued(namespace, "b", queuePosition=1)
        assert "expected start unknown" in s["message"], s["message"]  # a has no walltime

        kubectl("delete", "trainjob", "a", "-n", namespace)  # as kubectl scancel cancels it
        deleted = time.time()
        terminating = wait_for("a's pods to be Terminating", lambda: (p := pods(namespace, "a")) and len(p) == 6 and all(
            x["metadata"].get("deletionTimestamp") for x in p) and p, timeout=60)
        ends = [ts(p["metadata"]["deletionTimestamp"]) for p in terminating]
        assert all(e >= deleted + 290 for e in ends), (
            f"a's pods end at {ends}, not 300 s after their deletion at {deleted:.0f}: does the cluster predate "
            "deploy/local/stages.yaml's trainjob-pod-delete-at-grace-end? (cluster.sh down, then up)")
        assert {p["metadata"]["uid"] for p in pods(namespace, "a")} == {p["metadata"]["uid"] for p in a_pods}, "gone early"

        # The head waits for the end of their grace, which its expected start now says.
        b = wait_for("b's expected start", lambda: (s := queued(namespace, "b", queuePosition=1)).get("expectedStartTime") and s)
        assert abs(ts(b["expectedStartTime"]) - max(ends)) <= 3, (b["expectedStartTime"], ends)
        assert "2 such nodes free" in b["message"], b["message"]

        # c's walltime of 10 hours ends long after b's start: it fits, but waits for b.
        apply(trainjob("c", nodes=1, run_time="30m", activeDeadlineSeconds=36000), "-n", namespace)
        queued(namespace, "c", reason="Priority", queuePosition=2)
        time.sleep(1.1)  # creation times are in seconds: d is younger
        # d's walltime of 60 s (and its pods' 30 s to stop) ends before b's start: backfilled.
        apply(trainjob("d", nodes=1, run_time="5s", activeDeadlineSeconds=60), "-n", namespace)
        (d_node,) = pinned_whole(running(namespace, "d", 1, timeout=60))
        assert d_node not in a_nodes
        admitted = wait_for("d's Admitted event", lambda: events(namespace, "d", "Admitted"), timeout=15)
        assert "backfilled" in admitted[0]["message"], admitted
        wait_state(namespace, "d", "Complete", timeout=60)

        # d's node is free again; c still waits, and b's start has not moved.
        s = queued(namespace, "c", reason="Priority", queuePosition=2)
        assert "2 such nodes free" in s["message"], s["message"]
        assert queued(namespace, "b", queuePosition=1)["expectedStartTime"] == b["expectedStartTime"]
        assert len(pods(namespace, "a")) == 6 and time.time() < min(ends), "a's pods went before the test was done"
    finally:
        watch.stop()
        kubectl("delete", "trainjobs", "--all", "-n", namespace, "--timeout=60s", check=False)
        # The held pods go at once when forced.
        kubectl("delete", "pods", "--all", "-n", namespace, "--grace-period=0", "--force", check=False)
        wait_for("the namespace's pods to go", lambda: not kubectl_json("get", "pods", "-n", namespace)["items"], timeout=60)
    started = {job_of(e["object"]) for e in watch.events()}
    assert started == {"a", "d"}, f"pods of {started - {'a', 'd'}} were created"


def test_job_larger_than_its_class_fails_never_fits_in_one_step(admitter, namespace):
    assert len(kubectl_json("get", "nodes", "-l", GH200_SELECTOR)["items"]) == 8
    watch = Watch(namespace, "trainjobs")
    try:
        apply(trainjob("huge", nodes=9), "-n", namespace)
        job = wait_state(namespace, "huge", "Failed", timeout=30)
        time.sleep(1)  # any later write would show in the watch
    finally:
        watch.stop()
    c = condition(job, "Failed")
    assert c["status"] == "True" and c["reason"] == "NeverFits", c
    assert job["status"]["reason"] == "NeverFits"
    for text in (c["message"], job["status"]["message"]):
        assert "gh200 has 8 nodes of 4 GPUs: a job of 9 nodes x 4 GPUs never fits; at most 8" in text, text
    assert [x["type"] for x in job["status"]["conditions"]] == ["Failed"]
    # One reconcile: the first status the controller wrote is the final one.
    written = [e["object"]["status"] for e in watch.events() if e["object"].get("status")]
    assert written and {s.get("state") for s in written} == {"Failed"}, written
    assert "startTime" not in job["status"] and "queuePosition" not in job["status"]
    assert pods(namespace, "huge") == []
    assert events(namespace, "huge", "Queued") == []
    failed = events(namespace, "huge", "Failed")
    assert failed and "NeverFits" in failed[0]["message"] and failed[0]["type"] == "Warning", failed


def test_a_job_as_wide_as_its_class_waits_while_a_node_is_replaced(admitter, namespace, gh200):
    # A node being replaced is gone from the API for a while: NeverFits still counts it, so
    # a job of all 8 nodes waits for it instead of failing, and runs once it is back.
    body = delete_node(gh200[-1])
    try:
        wait_for("the node to be gone", lambda: len(kubectl_json("get", "nodes", "-l", GH200_SELECTOR)["items"]) == 7, timeout=30)
        apply(trainjob("wide", nodes=8, run_time="3s"), "-n", namespace)
        s = queued(namespace, "wide", reason="Resources", timeout=60)
        assert "needs 8 nodes x 4 GPUs, 7 such nodes free" in s["message"], s
        time.sleep(3)  # no change of mind
        assert status(namespace, "wide").get("state") == "Queued"
        assert pods(namespace, "wide") == []
    finally:
        restore_node(body)
    pinned_whole(running(namespace, "wide", 8, timeout=120))


def test_a_replacement_that_finds_no_room_gives_the_live_ranks_back_and_the_gang_waits_whole(admitter, namespace, gh200):
    # Two 4-node jobs fill the class; a worker of the first fails, and its replacement must
    # avoid the failed node: no room. After restartWaitSeconds its 3 live ranks give their
    # nodes back too, and the job waits whole until the second job is done.
    admitter.stop()
    try:
        c = Controller("--config", config_with_policy(RESTART_WAIT_10S)).start()
        try:
            apply(trainjob("worker", nodes=4, run_time="300s", annotations={"trainjob.flame.dev/restart-policy": "Worker"}), "-n", namespace)
            running(namespace, "worker", 4, timeout=60)
            apply(trainjob("other", nodes=4, run_time="60s"), "-n", namespace)
            running(namespace, "other", 4, timeout=60)
            victim = [p for p in pods(namespace, "worker") if p["metadata"]["labels"][RANK] == "1"][0]
            kubectl("annotate", "pod", victim["metadata"]["name"], "-n", namespace, f"{SIM}fail-exit-code=1")
            released = wait_for("the live ranks given back", lambda: events(namespace, "worker", "GangReleased"), timeout=90)
            assert "the 3 live ranks gave their nodes back, and the gang waits for admission whole" in released[0]["message"], released
            wait_for("no live pod of the job", lambda: not [p for p in pods(namespace, "worker")
                                                            if p["status"].get("phase") not in TERMINAL and not p["metadata"].get("deletionTimestamp")], timeout=60)
            assert status(namespace, "worker").get("state") == "Restarting"
            assert running(namespace, "other", 4, timeout=5)
            pinned_whole(running(namespace, "worker", 4, timeout=120))
        finally:
            c.stop()
    finally:
        admitter.start()


def test_a_replacement_in_its_backoff_keeps_its_place_and_the_node_it_needs(admitter, namespace, gh200):
    """A worker fails while a 2-node job waits for one more free node: the failed pod's node
    comes free, but the replacement (which must avoid that node) waits out its 20 s backoff.
    Meanwhile the queue keeps the restart's place and holds the other free node for it from
    the backoff's end, so the waiting job, which would hold that node far longer, is not
    admitted onto the two, and the replacement starts when its backoff ends."""
    admitter.stop()
    try:
        c = Controller("--config", config_with_policy(BACKOFF_20S)).start()
        try:
            apply(trainjob("worker", nodes=4, run_time="300s", annotations={"trainjob.flame.dev/restart-policy": "Worker"}), "-n", namespace)
            first = running(namespace, "worker", 4, timeout=60)
            apply(trainjob("filler", nodes=3, run_time="300s"), "-n", namespace)
            running(namespace, "filler", 3, timeout=60)
            apply(trainjob("waiting", nodes=2, run_time="60s"), "-n", namespace)
            queued(namespace, "waiting", reason="Resources", timeout=30)
            victim = by_rank(first, 1)
            kubectl("annotate", "pod", victim["metadata"]["name"], "-n", namespace, f"{SIM}fail-exit-code=1")
            failed = wait_for("the worker's failure", lambda: status(namespace, "worker")["lastFailure"]["time"], timeout=60)
            # Half the backoff: two nodes are free, one of them held for the replacement.
            time.sleep(max(0.0, ts(failed) + 10 - time.time()))
            assert pods(namespace, "waiting") == [], "the waiting job took the nodes the replacement needs"
            s = status(namespace, "waiting")
            assert (s["state"], s["reason"]) == ("Queued", "Priority"), s
            assert status(namespace, "worker")["state"] == "Restarting"
            again = running(namespace, "worker", 4, timeout=60)
            replacement = by_rank(again, 1)
            assert replacement["metadata"]["uid"] != victim["metadata"]["uid"]
            assert replacement["spec"]["nodeName"] != victim["spec"]["nodeName"], "the failed rank's node again"
            created = ts(replacement["metadata"]["creationTimestamp"])
            assert created >= ts(failed) + 19, f"the replacement came {created - ts(failed):.0f} s after the failure, within its backoff"
            assert pods(namespace, "waiting") == []
        finally:
            c.stop()
    finally:
        admitter.start()


def test_ranks_given_back_are_not_created_again_in_part_while_the_others_go(admitter, namespace, gh200):
    """The live ranks given back stop slowly (their pods ignore SIGTERM for a 40 s grace)
    while GPUs come free elsewhere: the job keeps asking for its whole gang, and no rank is
    created again until every given-back pod is gone, so no part of the gang runs alone."""
    slow_to_stop = gh200_runtime_in(namespace, terminationGracePeriodSeconds=40)
    watch = Watch(namespace)
    admitter.stop()
    try:
        c = Controller("--config", config_with_policy(RESTART_WAIT_10S)).start()
        try:
            apply(trainjob("worker", nodes=4, run_time="300s", runtimeRef=slow_to_stop, pod_annotations={IGNORE_SIGTERM: "true"},
                           annotations={"trainjob.flame.dev/restart-policy": "Worker"}), "-n", namespace)
            first = running(namespace, "worker", 4, timeout=60)
            apply(trainjob("other", nodes=4, run_time="300s"), "-n", namespace)
            running(namespace, "other", 4, timeout=60)
            victim = by_rank(first, 1)
            kubectl("annotate", "pod", victim["metadata"]["name"], "-n", namespace, f"{SIM}fail-exit-code=1")
            wait_for("the live ranks given back", lambda: events(namespace, "worker", "GangReleased"), timeout=90)
            # Four nodes come free while the three given-back pods still stop.
            kubectl("delete", "trainjob", "other", "-n", namespace)
            going = {p["metadata"]["uid"] for p in first if p["metadata"]["uid"] != victim["metadata"]["uid"]}
            assert going <= {p["metadata"]["uid"] for p in pods(namespace, "worker")}, "the given-back pods went early"
            again = pinned_whole(running(namespace, "worker", 4, timeout=120))
            assert not going & {p["metadata"]["uid"] for p in pods(namespace, "worker")}
        finally:
            c.stop()
    finally:
        watch.stop()
        admitter.start()
    evs = watch.events()
    gone = {}
    for i, e in enumerate(evs):
        o = e["object"]
        if e["type"] == "DELETED" and o["metadata"]["uid"] in going:
            gone[o["metadata"]["uid"]] = i
    assert set(gone) == going, f"the watch did not see every given-back pod go: {set(gone)} of {going}"
    old = {p["metadata"]["uid"] for p in first}
    for i, e in enumerate(evs):
        o = e["object"]
        if e["type"] == "ADDED" and job_of(o) == "worker" and o["metadata"]["uid"] not in old:
            assert i > max(gone.values()), (f"{o['metadata']['name']} (rank {o['metadata']['labels'][RANK]}) was created "
                                            "while given-back ranks of its gang were still stopping")
    released_only_whole(evs, "worker", 4)
    assert victim["spec"]["nodeName"] not in again, "the failed rank's node again"


def test_walltime_of_a_queued_job_counts_from_its_admission(admitter, namespace, gh200):
    apply(trainjob("hog", nodes=8, run_time="40s"), "-n", namespace)
    running(namespace, "hog", 8, timeout=60)
    apply(trainjob("patient", nodes=2, run_time="10s", activeDeadlineSeconds=30), "-n", namespace)
    s = queued(namespace, "patient")
    assert "startTime" not in s
    job = wait_state(namespace, "patient", "Complete", timeout=120)
    created, started = ts(job["metadata"]["creationTimestamp"]), ts(job["status"]["startTime"])
    # It waited longer than its walltime, and still ran its 10 s within it.
    assert started - created >= 30, job["status"]
    assert 8 <= ts(job["status"]["completionTime"]) - started < 30, job["status"]
    assert [x["type"] for x in job["status"]["conditions"]] == ["Complete"]
    assert events(namespace, "patient", "Failed") == []


def test_a_later_job_of_higher_priority_is_admitted_first(admitter, namespace, gh200):
    apply(trainjob("hog", nodes=8, run_time="12s"), "-n", namespace)
    running(namespace, "hog", 8, timeout=60)
    for name in ("early", "middle"):
        apply(trainjob(name, nodes=8, run_time="3s"), "-n", namespace)
        time.sleep(1.1)  # creation times are in seconds
    apply(trainjob("urgent", nodes=8, run_time="3s", annotations={PRIORITY: "100"}), "-n", namespace)
    wait_for("the queue's order", lambda: [status(namespace, n).get("queuePosition") for n in ("urgent", "early", "middle")] == [1, 2, 3])
    assert "position 1 of 3" in status(namespace, "urgent")["message"]
    watch = Watch(namespace)
    try:
        running(namespace, "early", 8, timeout=90)
        assert pods(namespace, "middle") == []
    finally:
        watch.stop()
    evs = watch.events()
    assert len(created_when_it_fit(evs, "urgent", "hog")) == 8
    assert len(created_when_it_fit(evs, "early", "urgent")) == 8


def test_a_self_set_priority_reorders_only_its_own_namespace_and_a_tier_goes_first(admitter, namespace, gh200):
    """The QOS tier orders the queue first; a priority a job sets on itself moves it only
    among the jobs of its own namespace and tier, never past another namespace's earlier
    job; a tier the namespace may not use fails the job before any pod (the shipped config:
    normal by default, low allowed everywhere, high nowhere). The two namespaces have used
    no GPUs: the hog runs in a third, so that fair share does not tell them apart."""
    other, third = other_namespace(), other_namespace()
    try:
        apply(trainjob("hog", nodes=8, run_time="15s"), "-n", third)
        running(third, "hog", 8, timeout=60)
        apply(trainjob("scavenger", nodes=8, run_time="3s", annotations={QOS: "low"}), "-n", namespace)
        time.sleep(1.1)  # creation times are in seconds
        apply(trainjob("early", nodes=8, run_time="3s"), "-n", namespace)
        time.sleep(1.1)
        apply(trainjob("plain", nodes=8, run_time="3s"), "-n", other)
        time.sleep(1.1)
        apply(trainjob("urgent", nodes=8, run_time="3s", annotations={PRIORITY: "1000000000"}), "-n", other)
        apply(trainjob("vip", nodes=8, run_time="3s", annotations={QOS: "high"}), "-n", namespace)
        failed = wait_state(namespace, "vip", "Failed", timeout=30)["status"]
        assert failed["reason"] == "PolicyViolation", failed
        assert 'QOS "high" is not allowed there' in failed["message"] and "may use: normal, low" in failed["message"], failed
        assert pods(namespace, "vip") == []

        order = [(namespace, "early"), (other, "urgent"), (other, "plain"), (namespace, "scavenger")]
        wait_for("the queue's order", lambda: [status(ns, n).get("queuePosition") for ns, n in order] == [1, 2, 3, 4], timeout=60)
        running(namespace, "early", 8, timeout=90)
        assert pods(other, "urgent") == [] and pods(namespace, "scavenger") == []
        wait_state(namespace, "early", "Complete", timeout=60)
        running(other, "urgent", 8, timeout=90)
        assert pods(other, "plain") == []
        for ns, name in ((other, "urgent"), (other, "plain"), (namespace, "scavenger")):
            wait_state(ns, name, "Complete", timeout=90)
    finally:
        drop_namespaces(other, third)


def test_a_namespace_that_used_less_goes_ahead_of_a_backlog_and_a_restart_keeps_the_order(admitter, namespace, gh200):
    """Fair share: a namespace that has run jobs queues behind one that has used nothing,
    whatever their creation order, and the order survives a controller restart (the usage
    is read from the TrainJobs' recorded GPU-seconds)."""
    newcomer, third = other_namespace(), other_namespace()
    try:
        apply(trainjob("warmup", nodes=8, run_time="5s"), "-n", namespace)
        done = wait_state(namespace, "warmup", "Complete", timeout=90)["status"]
        assert done.get("gpuSeconds", 0) >= 8 * 4 * 4, done
        apply(trainjob("blocker", nodes=8, run_time="25s"), "-n", third)
        running(third, "blocker", 8, timeout=60)
        for name in ("backlog-1", "backlog-2"):
            apply(trainjob(name, nodes=8, run_time="3s"), "-n", namespace)
            time.sleep(1.1)
        apply(trainjob("fresh", nodes=8, run_time="3s"), "-n", newcomer)
        order = [(newcomer, "fresh"), (namespace, "backlog-1"), (namespace, "backlog-2")]
        wait_for("the queue's order", lambda: [status(ns, n).get("queuePosition") for ns, n in order] == [1, 2, 3], timeout=60)
        log_before = len(admitter.log())
        admitter.stop()
        admitter.start()
        wait_for("the restarted controller to rebuild its queue", lambda: "the queue is rebuilt" in admitter.log()[log_before:], timeout=60)
        time.sleep(2)
        assert [status(ns, n).get("queuePosition") for ns, n in order] == [1, 2, 3]
        # The restarted controller admits the newcomer first once the blocker ends.
        running(newcomer, "fresh", 8, timeout=90)
        assert pods(namespace, "backlog-1") == []
        for ns, name in order:
            wait_state(ns, name, "Complete", timeout=90)
    finally:
        drop_namespaces(newcomer, third)


def test_a_low_job_on_idle_gpus_is_preempted_by_a_normal_job_and_later_completes_unrestarted(admitter, namespace, gh200):
    """Preemption (docs/users.md, "Preemption"), with the shipped tiers (normal preempts low): a
    scavenger job of tier low fills the idle GH200 nodes; a normal job that then needs half
    of them preempts it. The low job's pods are told the stop time (their deadline
    annotation, the file /etc/trainjob/deadline) and deleted at the end of their grace; the
    normal job starts within that grace plus a few seconds; the low job goes back to the
    queue, uncharged (restart count 0), and later runs to Complete; the preemption is in its
    status, its events and the metrics."""
    series = 'trainjob_preemptions_total{gpu_class="gh200",qos="low"}'
    before = metric(admitter.metrics(), series, 0.0)
    # It runs longer than the grace, so that the stop, not its own end, takes it off.
    apply(trainjob("scavenger", nodes=8, run_time=f"{GRACE + 30}s", annotations={QOS: "low"}), "-n", namespace)
    running(namespace, "scavenger", 8, timeout=60)
    first_start = started(namespace, "scavenger")
    asked = time.time()
    apply(trainjob("urgent", nodes=4, run_time="5s"), "-n", namespace)

    told = wait_for("the scavenger's preemption in its status",
                    lambda: status(namespace, "scavenger").get("preemption"), timeout=30)
    assert told["by"] == f"{namespace}/urgent", told
    stop = ts(told["stopAt"])
    assert GRACE - 3 <= stop - asked <= GRACE + 5, (told, asked)
    wait_for("the stop time on every scavenger pod",
             lambda: all(p["metadata"].get("annotations", {}).get("trainjob.flame.dev/deadline") == told["stopAt"]
                         for p in pods(namespace, "scavenger")), timeout=30)
    warned = events(namespace, "scavenger", "Preempted")
    assert any(f"preempted by {namespace}/urgent" in e["message"] and e["type"] == "Warning" for e in warned), warned
    assert pods(namespace, "urgent") == []
    queued_urgent = status(namespace, "urgent")
    assert queued_urgent.get("state") == "Queued", queued_urgent
    assert re.search("preempting 1 job of lower tiers|waiting for the jobs it preempted to stop", queued_urgent.get("message", "")), queued_urgent

    running(namespace, "urgent", 4, timeout=GRACE + 30)
    assert time.time() - asked <= GRACE + 15, "the normal job started later than the grace plus a few seconds"
    back = status(namespace, "scavenger")
    assert back.get("state") == "Queued" and back.get("preemptions") == 1, back
    assert back.get("restartCount", 0) == 0 and "preemption" not in back, back
    assert back.get("preemptedGpuSeconds", 0) >= 8 * 4 * (GRACE - 5), back

    done = wait_state(namespace, "scavenger", "Complete", timeout=GRACE + 120)["status"]
    assert done.get("restartCount", 0) == 0 and done.get("preemptions") == 1, done
    assert ts(done["startTime"]) > first_start, "the walltime clock starts again at the new admission"
    wait_state(namespace, "urgent", "Complete", timeout=30)
    assert metric(admitter.metrics(), series, 0.0) - before == 1


def test_a_low_job_that_saves_its_state_on_the_notice_gives_its_nodes_at_once(admitter, namespace, gh200):
    """A victim whose script reads the stop time, saves its state and exits with a failure
    (143) before its grace ends stops then: its nodes go to the job that preempts it within
    seconds, not at the grace's end (30 s here), and it goes back to the queue as Preempted,
    uncharged, to run to Complete later. The simulated pods do so with the annotation
    checkpoint-time (deploy/local/stages.yaml)."""
    apply(trainjob("scavenger", nodes=8, run_time=f"{GRACE + 30}s", annotations={QOS: "low"},
                   pod_annotations={SIM + "checkpoint-time": "2s"}), "-n", namespace)
    running(namespace, "scavenger", 8, timeout=60)
    asked = time.time()
    apply(trainjob("urgent", nodes=4, run_time="5s"), "-n", namespace)

    told = wait_for("the scavenger's preemption in its status",
                    lambda: status(namespace, "scavenger").get("preemption"), timeout=30)
    assert told["by"] == f"{namespace}/urgent", told
    running(namespace, "urgent", 4, timeout=GRACE)
    assert time.time() - asked <= GRACE - 10, "the normal job waited for the grace's end"
    # Back in the queue (its reason there soon says why it waits, Resources or Priority).
    back = wait_for("the scavenger back in the queue",
                    lambda: (lambda st: st if st.get("state") == "Queued" else None)(status(namespace, "scavenger")),
                    timeout=30)
    assert back.get("preemptions") == 1 and back.get("restartCount", 0) == 0 and "preemption" not in back, back
    stopped = [e["message"] for e in events(namespace, "scavenger", "Preempted")
               if "exited (code 143) before the stop time" in e["message"]]
    assert stopped, events(namespace, "scavenger", "Preempted")

    done = wait_state(namespace, "scavenger", "Complete", timeout=GRACE + 120)["status"]
    assert done.get("restartCount", 0) == 0 and done.get("preemptions") == 1, done
    wait_state(namespace, "urgent", "Complete", timeout=30)


def test_a_namespace_at_its_tiers_gpu_limit_waits_without_blocking_others(admitter, namespace, gh200):
    """A QOS tier's maxGPUsPerNamespace (Slurm's QOS MaxTRESPerAccount): a job that would
    take its namespace past the GPUs its tier allows it waits, QOSMaxGRESPerNamespace, and
    the jobs of other namespaces behind it start; one whose gang alone is larger fails."""
    policy = """failurePolicy:
  maxRestarts: 3
admission:
  qos:
    - {name: normal, priority: 0, maxGPUsPerNamespace: 8}
    - {name: low, priority: -1000}
  namespaces:
    - {namespace: "*", allowed: [normal, low], default: normal}
"""
    other = other_namespace()
    admitter.stop()
    try:
        c = Controller("--config", config_with_policy(policy)).start()
        try:
            apply(trainjob("first", nodes=2, run_time="12s"), "-n", namespace)
            running(namespace, "first", 2, timeout=60)
            apply(trainjob("second", nodes=1, run_time="3s"), "-n", namespace)
            waiting = queued(namespace, "second", reason="QOSMaxGRESPerNamespace")
            assert waiting["message"] == (f"namespace {namespace} holds 8 of the 8 GPUs QOS normal allows it; "
                                          "the job needs 4 more"), waiting
            time.sleep(1.1)
            apply(trainjob("elsewhere", nodes=1, run_time="3s"), "-n", other)
            running(other, "elsewhere", 1, timeout=60)
            assert pods(namespace, "second") == []
            apply(trainjob("huge", nodes=3, run_time="3s"), "-n", namespace)
            failed = wait_state(namespace, "huge", "Failed", timeout=30)["status"]
            assert failed["reason"] == "QOSMaxGRESPerNamespace" and "it never fits" in failed["message"], failed
            wait_state(namespace, "first", "Complete", timeout=60)
            wait_state(namespace, "second", "Complete", timeout=60)
        finally:
            c.stop()
    finally:
        drop_namespaces(other)
        admitter.start()


def test_a_queue_past_the_bound_of_tries_is_looked_at_a_part_at_a_time(admitter, namespace, gh200):
    """admission.backfillMaxJobTest (Slurm's bf_max_job_test with bf_continue): behind the
    reservations, a cycle looks at that many jobs of shapes it has not looked at; the others say
    they were not looked at yet, and the next cycles go on from there until every job tells
    what it waits for."""
    policy = """failurePolicy:
  maxRestarts: 3
admission:
  backfillDepth: 1
  backfillMaxJobTest: 1
"""
    admitter.stop()
    watch = Watch(namespace, "trainjobs")
    try:
        c = Controller("--config", config_with_policy(policy)).start()
        try:
            apply(trainjob("a", nodes=8, run_time="120s", activeDeadlineSeconds=180), "-n", namespace)
            running(namespace, "a", 8, timeout=60)
            # The queue arrives while no controller runs, so that the first cycle decides it whole.
            c.stop()
            apply(trainjob("head", nodes=8, run_time="3s"), "-n", namespace)
            for gpus in (1, 2, 3):
                time.sleep(1.1)  # creation times are in seconds: the order is g1, g2, g3
                apply(trainjob(f"g{gpus}", nodes=1, gpus=gpus, run_time="3s", activeDeadlineSeconds=600), "-n", namespace)
            c.start()
            queued(namespace, "head", queuePosition=1)
            for gpus in (1, 2, 3):
                s = queued(namespace, f"g{gpus}", timeout=60)
                assert f"needs 1 node x {gpus} GPU" in s["message"] and "0 such nodes free" in s["message"], s
        finally:
            c.stop()
    finally:
        watch.stop()
        admitter.start()
    untried = {}
    for e in watch.events():
        o = e["object"]
        if "not looked at yet" in (o.get("status") or {}).get("message", ""):
            untried.setdefault(o["metadata"]["name"], o["status"])
    # One try a cycle behind the head: g1 is looked at by the first cycle, g2 and g3 by later ones.
    assert sorted(untried) == ["g2", "g3"], untried
    for name, st in untried.items():
        assert st["reason"] == "Priority" and "admission.backfillMaxJobTest" in st["message"], st


def forget_deleted_nodes(admitter):
    """A node of a class deleted in the last 10 minutes still counts for NeverFits (a node
    being replaced comes back): the nodes a test added for itself and deleted must not make
    the class look larger to the tests after it, so the controller, which remembers them in
    memory only, starts afresh."""
    admitter.stop()
    admitter.start()


def gh200_node_like(template, name):
    """A GH200 node as deploy/local/cluster.sh makes them (labels, GPU taint, allocatable,
    KWOK's annotation), under another name."""
    t = kubectl_json("get", "node", template)
    labels = {k: v for k, v in t["metadata"]["labels"].items() if k != NOT_READY_LABEL}
    labels["kubernetes.io/hostname"] = name
    info = dict(t["status"]["nodeInfo"], machineID=name, systemUUID=name, bootID=name)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels,
                     "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"taints": t["spec"]["taints"]},
        "status": {"allocatable": t["status"]["allocatable"], "capacity": t["status"]["capacity"],
                   "nodeInfo": info, "phase": "Running"},
    }


def test_node_not_ready_moves_the_heads_start_and_a_new_node_lets_it_run(admitter, namespace, gh200):
    # Two one-node jobs with walltimes of 2 and 4 minutes; the 7-node head fits when the
    # first ends, or, with one node less, only when the second ends too.
    apply(trainjob("short", nodes=1, run_time="10m", activeDeadlineSeconds=120), "-n", namespace)
    apply(trainjob("long", nodes=1, run_time="10m", activeDeadlineSeconds=240), "-n", namespace)
    used = {running(namespace, n, 1)[0]["spec"]["nodeName"] for n in ("short", "long")}
    short_end = started(namespace, "short") + 120 + GRACE
    long_end = started(namespace, "long") + 240 + GRACE
    apply(trainjob("head", nodes=7, run_time="3s"), "-n", namespace)
    s = wait_for("the head's reservation", lambda: (s := queued(namespace, "head", queuePosition=1)).get("expectedStartTime") and s)
    assert abs(ts(s["expectedStartTime"]) - short_end) <= 3, (s, short_end)
    assert "6 such nodes free" in s["message"], s["message"]

    victim = next(n for n in gh200 if n not in used)
    extra = "gh200-e2e-" + uuid.uuid4().hex[:5]
    try:
        kubectl("label", "node", victim, f"{NOT_READY_LABEL}=true")
        wait_for(f"{victim} to be NotReady", lambda: not node_ready(victim))
        s = wait_for("the head's start to move", lambda: (s := queued(namespace, "head")).get("expectedStartTime") and abs(ts(s["expectedStartTime"]) - long_end) <= 3 and s)
        assert "5 such nodes free" in s["message"], s["message"]
        assert pods(namespace, "head") == []

        kubectl("label", "node", victim, f"{NOT_READY_LABEL}-")
        wait_for(f"{victim} to be Ready again", lambda: node_ready(victim), timeout=90)
        s = wait_for("the head's start to come back", lambda: (s := queued(namespace, "head")).get("expectedStartTime") and abs(ts(s["expectedStartTime"]) - short_end) <= 3 and s)
        assert pods(namespace, "head") == []

        kubectl("create", "-f", "-", input=json.dumps(gh200_node_like(victim, extra)))
        got = running(namespace, "head", 7, timeout=60)
        assert extra in pinned_whole(got)
        # The new node let it start, not the end of a walltime.
        assert status(namespace, "short")["state"] == "Running"
    finally:
        kubectl("label", "node", victim, f"{NOT_READY_LABEL}-", check=False)
        kubectl("delete", "trainjobs", "--all", "-n", namespace, "--timeout=60s", check=False)
        wait_for(f"the pods on {extra} to go", lambda: not kubectl_json("get", "pods", "-A", "--field-selector", f"spec.nodeName={extra}")["items"], timeout=90)
        kubectl("delete", "node", extra, "--ignore-not-found", "--timeout=60s")
        forget_deleted_nodes(admitter)


def test_controller_killed_mid_admission_creates_the_gang_once_whole_in_order(admitter, namespace, gh200):
    """SIGKILL while an admitted gang's pods are being created, then a restart. This
    module's controller steps aside meanwhile, so that only one writes at a time."""
    order = ("gang", "next", "last")
    watch = Watch(namespace)
    admitter.stop()
    try:
        # A client-side limit of 4 requests a second makes creating 8 pods take seconds.
        slow = Controller("--kube-api-qps", "4", "--kube-api-burst", "1").start()
        try:
            apply(trainjob("hog", nodes=8, run_time="15s"), "-n", namespace)
            running(namespace, "hog", 8, timeout=60)
            # The gang runs long enough that next is still queued when the checks below
            # look, on a loaded machine too.
            for name in order:
                apply(trainjob(name, nodes=8, run_time="30s" if name == "gang" else "4s"), "-n", namespace)
                time.sleep(1.1)  # creation times are in seconds
            wait_for("the queue's order", lambda: [status(namespace, n).get("queuePosition") for n in order] == [1, 2, 3], timeout=60)
            # Killed once two of its pods exist (there are 8 to create, 4 a second at most).
            wait_for("the gang's creation to begin", lambda: len(pods(namespace, "gang")) >= 2, timeout=60, interval=0.1)
        finally:
            slow.kill()
        partial = pods(namespace, "gang")
        assert len(partial) < 8, "the kill landed after the gang was created: slow the controller further"
        # Killed between the gated creates and the ungating: what exists waits behind the gate.
        for p in partial:
            assert gated(p) and not p["spec"].get("nodeName"), (p["metadata"]["name"], p["spec"].get("schedulingGates"),
                                                                p["spec"].get("nodeName"))
        admitter.start()
        got = running(namespace, "gang", 8, timeout=60)
        pinned_whole(got)
        assert sorted(int(p["metadata"]["labels"][RANK]) for p in pods(namespace, "gang")) == list(range(8))
        # The half-created gang was undone, and created again whole.
        incomplete = wait_for("the GangIncomplete event", lambda: events(namespace, "gang", "GangIncomplete"), timeout=15)
        assert incomplete[0]["type"] == "Warning", incomplete
        assert not {p["metadata"]["uid"] for p in partial} & {p["metadata"]["uid"] for p in got}
        assert pods(namespace, "next") == [] and pods(namespace, "last") == []
        wait_for("the same order after the restart", lambda: [status(namespace, n).get("queuePosition") for n in order[1:]] == [1, 2], timeout=10)
        running(namespace, "next", 8, timeout=60)
        assert pods(namespace, "last") == []
    finally:
        watch.stop()
        if admitter.proc.poll() is not None:
            admitter.start()
    evs = watch.events()
    one_pod_per_rank_at_any_time(evs, "gang")
    # Each rank was bound once, by one pod: the gang ran once, whole.
    bound = released_only_whole(evs, "gang", 8)
    assert {rank: len(uids) for rank, uids in bound.items()} == {rank: 1 for rank in range(8)}, bound
    assert not {p["metadata"]["uid"] for p in partial} & set().union(*bound.values())
    assert len(created_when_it_fit(evs, "next", "gang")) == 8
    released_only_whole(evs, "next", 8)


def test_a_gang_pod_deleted_right_after_its_create_is_created_again_at_once(admitter, namespace, gh200):
    """A pod of an admitted gang deleted while the rest of the gang is still being created
    (a user's delete, an eviction): the controller's cache showed it, so its absence means
    it is gone, not that the cache is behind. The gang is completed at once and runs whole,
    instead of waiting out the 30 s the plans give the cache and the two minutes the
    admission keeps the nodes of a gang whose pods it has not seen. This module's controller
    steps aside for a slow one, as in the test above."""
    watch = Watch(namespace)
    admitter.stop()
    try:
        # 4 requests a second: creating the 8 pods takes about two seconds.
        slow = Controller("--kube-api-qps", "4", "--kube-api-burst", "1").start()
        try:
            apply(trainjob("gang", nodes=8, run_time="20s"), "-n", namespace)
            first = wait_for("the gang's first pod", lambda: pods(namespace, "gang"), timeout=60, interval=0.05)[0]
            kubectl("delete", "pod", "-n", namespace, first["metadata"]["name"], "--wait=false")
            deleted = time.monotonic()
            got = running(namespace, "gang", 8, timeout=25)
            took = time.monotonic() - deleted
        finally:
            slow.stop()
    finally:
        watch.stop()
        admitter.start()
    evs = watch.events()
    uid = first["metadata"]["uid"]
    gone = next(i for i, e in enumerate(evs) if e["type"] == "DELETED" and e["object"]["metadata"]["uid"] == uid)
    created = [i for i, e in enumerate(evs) if e["type"] == "ADDED" and job_of(e["object"]) == "gang"]
    assert len(created) >= 9, f"the deleted pod was not created again: {len(created)} creates"
    assert gone < created[7], "the delete landed after the gang's 8 creates: slow the controller further"
    assert uid not in {p["metadata"]["uid"] for p in got}
    assert sorted(int(p["metadata"]["labels"][RANK]) for p in got) == list(range(8))
    pinned_whole(got)
    one_pod_per_rank_at_any_time(evs, "gang")
    released_only_whole(evs, "gang", 8)
    print(f"the gang ran whole {took:.1f} s after the delete")


def test_after_a_restart_the_first_jobs_admitted_are_the_top_of_a_queue_of_200(admitter, namespace, gh200):
    """After a restart the queue is decided only once every cached job has been planned: the
    first jobs admitted are the top of the order, not the first ones the restart planned."""
    priorities = list(range(1, 201))
    random.Random(4).shuffle(priorities)  # created in no order of priority
    names = {p: f"job-{i:03d}" for i, p in enumerate(priorities)}
    top = {names[p] for p in range(193, 201)}
    apply(trainjob("hog", nodes=8, run_time="30m"), "-n", namespace)
    running(namespace, "hog", 8, timeout=60)
    jobs = [trainjob(names[p], nodes=1, run_time="30m", annotations={PRIORITY: str(p)}) for p in priorities]
    kubectl("create", "-f", "-", "-n", namespace, input=json.dumps({"apiVersion": "v1", "kind": "List", "items": jobs}))
    watch = None
    try:
        def states():
            return [j.get("status", {}).get("state") for j in kubectl_json("get", "trainjobs", "-n", namespace)["items"]
                    if j["metadata"]["name"] != "hog"]

        wait_for("the 200 jobs to be Queued", lambda: states().count("Queued") == 200, timeout=120, interval=1)
        wait_for("the top of the queue", lambda: status(namespace, names[200]).get("queuePosition") == 1, timeout=30)

        admitter.stop()
        kubectl("delete", "trainjob", "hog", "-n", namespace)
        wait_for("the hog's pods to go", lambda: not pods(namespace, "hog"), timeout=90)
        watch = Watch(namespace)
        log_before = len(admitter.log())
        admitter.start()

        def with_pods():
            return {job_of(p) for p in kubectl_json("get", "pods", "-n", namespace)["items"]}

        wait_for("8 jobs to have pods", lambda: len(with_pods()) >= 8, timeout=90)
        assert with_pods() == top, f"admitted {sorted(with_pods())}, the top is {sorted(top)}"
        for name in top:
            running(namespace, name, 1, timeout=60)
        # The nodes are full: nothing else starts, whatever more time the controller has.
        assert with_pods() == top
        log = admitter.log()[log_before:]
        assert "the queue is rebuilt" in log, log[-3000:]
        assert "the queue is decided before every cached job was planned" not in log
    finally:
        if watch:
            watch.stop()
        if admitter.proc.poll() is not None:
            admitter.start()
        # The queued jobs first: each job deleted while it runs would let the next one start.
        kubectl("delete", "trainjobs", "-n", namespace, "--ignore-not-found", "--wait=false",
                *[names[p] for p in range(1, 193)], check=False)
        kubectl("delete", "trainjobs", "--all", "-n", namespace, "--timeout=120s", check=False)
        wait_for("the namespace's pods to go", lambda: not kubectl_json("get", "pods", "-n", namespace)["items"], timeout=90)
    created = [job_of(e["object"]) for e in watch.events() if e["type"] == "ADDED"]
    assert len(created) == 8 and set(created) == top, created


def test_jobs_that_another_admitter_owns_are_left_alone(admitter, namespace, gh200):
    apply(trainjob("multi", nodes=1, managedBy="kueue.x-k8s.io/multikueue"), "-n", namespace)
    time.sleep(2)  # time enough for a wrong write
    # managedBy another controller: nothing at all.
    assert pods(namespace, "multi") == []
    assert not tj(namespace, "multi").get("status")
    assert kubectl_json("get", "events", "-n", namespace, "--field-selector", "involvedObject.name=multi")["items"] == []


def test_kubeflow_sdk_sees_a_queued_job_as_created_then_running(admitter, client, namespace, gh200):
    apply(trainjob("hog", nodes=8, run_time="10s"), "-n", namespace)
    running(namespace, "hog", 8, timeout=60)
    name = client.train(
        runtime="torch-gh200",
        trainer=CustomTrainer(func=train, num_nodes=2, resources_per_node={"gpu": 4}),
        options=[pod_annotations({RUN_TIME: "4s"})],
    )
    queued(namespace, name)
    assert client.get_job(name).status == "Created"
    job = client.wait_for_job_status(name, {"Running"}, timeout=90, polling_interval=1)
    assert job.status == "Running" and len(job.steps) == 2
    # The hog's ranks end one by one (each 10 s after its own start): the 2-node job may run
    # on the first nodes they free while the last of them still runs.
    wait_state(namespace, "hog", "Complete", timeout=30)
    assert client.wait_for_job_status(name, {"Complete"}, timeout=60, polling_interval=1).status == "Complete"


def test_queue_metrics(admitter, namespace, gh200):
    def counts(scrape):
        return {
            "admitted": metric(scrape, 'trainjob_admissions_total{gpu_class="gh200"}', 0.0),
            "waited": metric_sum(scrape, "trainjob_queue_wait_seconds_count", namespace=namespace, gpu_class="gh200"),
        }

    before = counts(admitter.metrics())
    apply(trainjob("hog", nodes=8, run_time="6s"), "-n", namespace)
    running(namespace, "hog", 8, timeout=60)
    apply(trainjob("waiter", nodes=1, run_time="2s"), "-n", namespace)
    queued(namespace, "waiter")
    def waiting(scrape):
        return metric_sum(scrape, "trainjob_queue_jobs", namespace=namespace, gpu_class="gh200", reason="Resources")

    now = wait_for("the queue in the metrics", lambda: waiting(m := admitter.metrics()) == 1 and m)
    assert metric(now, 'trainjob_gpus{gpu_class="gh200",state="capacity"}') == 32
    assert metric(now, 'trainjob_gpus{gpu_class="gh200",state="allocated"}') == 32
    wait_state(namespace, "waiter", "Complete", timeout=60)
    after = admitter.metrics()
    assert counts(after)["admitted"] - before["admitted"] == 2
    assert counts(after)["waited"] - before["waited"] == 2
    assert waiting(after) == 0
    # The namespace still has its two jobs, so its series are there, at 0.
    assert f'trainjob_queue_jobs{{gpu_class="gh200",namespace="{namespace}",reason="Priority"}} 0' in after
    assert metric(after, "trainjob_backfills_total") >= 0


# The admission's model of capacity against the scheduler's (docs/users.md, "The queue", which
# nodes a job may use): selectors and affinity, resources only some nodes offer, pods the scheduler
# nominated, and the Kueue label on a cluster without Kueue.

RACK = "topology.flame.dev/rack"


def nodes_of_rack(rack):
    return sorted(n["metadata"]["name"] for n in kubectl_json("get", "nodes", "-l", f"{RACK}={rack}")["items"])


def with_node_selector(body, selector):
    """The job with a podTemplateOverrides nodeSelector on its node pods."""
    body["spec"]["podTemplateOverrides"][0]["spec"] = {"nodeSelector": selector}
    return body


def test_an_override_that_selects_a_rack_is_admitted_there_whole(admitter, namespace, gh200):
    # Best fit in name order would choose the first nodes; the selector allows rack 2 only.
    rack = nodes_of_rack("gh200-rack-2")
    assert len(rack) == 2 and rack[0] != gh200[0], rack
    apply(with_node_selector(trainjob("racked", nodes=2, run_time="3s"), {RACK: "gh200-rack-2"}), "-n", namespace)
    got = running(namespace, "racked", 2, timeout=60)
    assert sorted(pinned_whole(got)) == rack
    wait_state(namespace, "racked", "Complete", timeout=60)
    assert events(namespace, "racked", "GangReleased") == []


def gh200_runtime_in(namespace, **pod_spec):
    """The shipped torch-gh200 as a TrainingRuntime of the namespace, the spec of its node
    pods updated with pod_spec; the runtimeRef that names it."""
    rt = kubectl_json("get", "clustertrainingruntime", "torch-gh200")
    node_job = next(j for j in rt["spec"]["template"]["spec"]["replicatedJobs"] if j["name"] == "node")
    node_job["template"]["spec"]["template"]["spec"].update(pod_spec)
    apply({"apiVersion": rt["apiVersion"], "kind": "TrainingRuntime",
           "metadata": {"name": "torch-gh200", "labels": rt["metadata"].get("labels", {})}, "spec": rt["spec"]},
          "-n", namespace)
    return {"name": "torch-gh200", "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"}


def test_a_runtime_that_selects_a_rack_is_admitted_there_and_a_wider_job_never_fits(admitter, namespace, gh200):
    ref = gh200_runtime_in(namespace, nodeSelector={RACK: "gh200-rack-1"})
    apply(trainjob("in-rack", nodes=2, run_time="3s", runtimeRef=ref), "-n", namespace)
    got = running(namespace, "in-rack", 2, timeout=60)
    assert sorted(pinned_whole(got)) == nodes_of_rack("gh200-rack-1")
    wait_state(namespace, "in-rack", "Complete", timeout=60)
    assert events(namespace, "in-rack", "GangReleased") == []
    # Three nodes of a rack of two never fit, whatever the class has.
    apply(trainjob("too-wide", nodes=3, run_time="3s", runtimeRef=ref), "-n", namespace)
    job = wait_state(namespace, "too-wide", "Failed", timeout=30)
    assert job["status"]["reason"] == "NeverFits", job["status"]
    assert job["status"]["message"].startswith(
        "gh200 has 2 nodes of 4 GPUs that its pods may use (not the others: node(s) didn't match Pod's node "
        "affinity/selector): a job of 3 nodes x 4 GPUs never fits; at most 2"), job["status"]["message"]
    assert pods(namespace, "too-wide") == []


def test_a_resource_only_some_nodes_offer_sends_the_gang_there(admitter, namespace, gh200):
    extra = ["gh200-rdma-" + uuid.uuid4().hex[:5] for _ in range(2)]
    try:
        for name in extra:
            node = gh200_node_like(gh200[0], name)
            for key in ("allocatable", "capacity"):
                node["status"][key] = dict(node["status"][key], **{"rdma/hca": "1"})
            kubectl("create", "-f", "-", input=json.dumps(node))
        wait_for("the new nodes to be Ready", lambda: all(node_ready(n) for n in extra), timeout=90)
        job = trainjob("rdma", nodes=2, run_time="3s")
        job["spec"]["trainer"]["resourcesPerNode"]["requests"]["rdma/hca"] = 1
        job["spec"]["trainer"]["resourcesPerNode"]["limits"]["rdma/hca"] = 1
        apply(job, "-n", namespace)
        got = running(namespace, "rdma", 2, timeout=60)
        assert sorted(pinned_whole(got)) == sorted(extra)
        wait_state(namespace, "rdma", "Complete", timeout=60)
        assert events(namespace, "rdma", "GangReleased") == []
    finally:
        kubectl("delete", "trainjobs", "--all", "-n", namespace, "--timeout=60s", check=False)
        for name in extra:
            wait_for(f"the pods on {name} to go", lambda: not kubectl_json("get", "pods", "-A", "--field-selector", f"spec.nodeName={name}")["items"], timeout=90)
            kubectl("delete", "node", name, "--ignore-not-found", "--timeout=60s")
        forget_deleted_nodes(admitter)


def test_a_pod_the_scheduler_nominated_to_a_node_holds_it(admitter, namespace, gh200):
    # A pod of no TrainJob that the scheduler has not placed yet, nominated to a node: it
    # is held back by a scheduling gate, so that the nomination stays while the test looks.
    held = gh200[3]
    pod = plain_gpu_pod("nominated", held, by_node_name=False)
    pod["spec"]["schedulingGates"] = [{"name": "example.com/hold"}]
    apply(pod, "-n", namespace)
    kubectl("patch", "pod", "nominated", "-n", namespace, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"nominatedNodeName": held}}))
    apply(trainjob("wide", nodes=8, run_time="3s"), "-n", namespace)
    s = queued(namespace, "wide")
    assert "needs 8 nodes x 4 GPUs, 7 such nodes free" in s["message"], s["message"]
    time.sleep(2)  # time enough to admit it wrongly
    assert pods(namespace, "wide") == []
    kubectl("delete", "pod", "nominated", "-n", namespace, "--timeout=60s")
    got = running(namespace, "wide", 8, timeout=60)
    assert held in pinned_whole(got)
    wait_state(namespace, "wide", "Complete", timeout=60)


def test_the_kueue_label_without_kueue_is_queued_here_and_says_so(admitter, namespace, gh200):
    # Without --kueue nobody else admits it: the label walks past nothing. Nine nodes of a
    # class of eight never fit, at once, with no pod.
    labelled = trainjob("kueued", nodes=9, run_time="2s")
    labelled["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "user-queue"}
    apply(labelled, "-n", namespace)
    job = wait_state(namespace, "kueued", "Failed", timeout=30)
    assert job["status"]["reason"] == "NeverFits", job["status"]
    assert pods(namespace, "kueued") == []
    ignored = wait_for("the KueueLabelIgnored event", lambda: events(namespace, "kueued", "KueueLabelIgnored"), timeout=15)
    assert ignored[0]["type"] == "Warning" and "kueue.x-k8s.io/queue-name is ignored" in ignored[0]["message"], ignored
    # One that fits waits in the queue as any other, and runs whole.
    fits = trainjob("kueued-small", nodes=2, run_time="2s")
    fits["metadata"]["labels"] = {"kueue.x-k8s.io/queue-name": "user-queue"}
    apply(fits, "-n", namespace)
    pinned_whole(running(namespace, "kueued-small", 2, timeout=60))
    assert events(namespace, "kueued-small", "KueueLabelIgnored")
    wait_state(namespace, "kueued-small", "Complete", timeout=60)


GPU_TOLERATIONS_OVERRIDE = {"tolerations": [GPU_TOLERATION]}


def test_a_gpu_job_on_a_runtime_without_a_class_starts_whole_or_waits(admitter, namespace, gh200):
    # Kubeflow's torch-distributed runtime names no GPU class: the queue takes the class
    # whose nodes its pods may use the most of (GH200's 8 nodes, with a toleration of their
    # GPU taint), and the gang starts whole there or waits.
    jobs = []
    for name in ("plain-1", "plain-2"):
        job = trainjob(name, nodes=5, run_time="8s", runtime="torch-distributed")
        job["spec"]["podTemplateOverrides"][0]["spec"] = GPU_TOLERATIONS_OVERRIDE
        jobs.append(job)
    apply({"apiVersion": "v1", "kind": "List", "items": jobs}, "-n", namespace)
    first = wait_for("one of them to run", lambda: next((n for n in ("plain-1", "plain-2") if len(pods(namespace, n)) == 5), None), timeout=60)
    second = "plain-2" if first == "plain-1" else "plain-1"
    assert set(pinned_whole(running(namespace, first, 5, timeout=60))) <= set(gh200)
    s = queued(namespace, second)
    assert "in gh200: needs 5 nodes x 4 GPUs" in s["message"], s["message"]
    assert pods(namespace, second) == []
    assert set(pinned_whole(running(namespace, second, 5, timeout=90))) <= set(gh200)
    # Without the toleration no GPU node takes its pods: it never fits, and says why.
    apply(trainjob("untolerated", nodes=1, run_time="2s", runtime="torch-distributed"), "-n", namespace)
    job = wait_state(namespace, "untolerated", "Failed", timeout=30)
    assert job["status"]["reason"] == "NeverFits", job["status"]
    assert "untolerated taint {nvidia.com/gpu" in job["status"]["message"], job["status"]["message"]
    assert pods(namespace, "untolerated") == []


def bound_alone(watch_events, job, gang):
    """The pods of the job bound to a node while fewer than `gang` of its pods existed (not
    being deleted): none, if no gang of it ever ran in part."""
    alone, live = [], {}
    for e in watch_events:
        p = e["object"]
        name = p["metadata"]["name"]
        if job_of(p) != job:
            continue
        if e["type"] == "DELETED":
            live.pop(name, None)
            continue
        live[name] = p
        if p["spec"].get("nodeName") and len([q for q in live.values() if not q["metadata"].get("deletionTimestamp")]) < gang:
            alone.append(name)
    return alone


def gpu_quota(gpus):
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpus"},
            "spec": {"hard": {"requests.nvidia.com/gpu": str(gpus)}}}


def test_a_gang_its_resource_quota_cannot_hold_now_waits_naming_it_then_runs_whole(admitter, namespace, gh200):
    # The namespace may request 8 GPUs; one 4-GPU job holds 4 of them, so a gang of 2 x 4
    # waits, Queued/QuotaExceeded naming the quota, with no pod, and starts whole once the
    # first job is done.
    apply(gpu_quota(8), "-n", namespace)
    watch = Watch(namespace)
    try:
        apply(trainjob("first", nodes=1, run_time="15s"), "-n", namespace)
        running(namespace, "first", 1, timeout=60)
        wait_for("the quota to count the first job", lambda: kubectl_json("get", "resourcequota", "gpus", "-n", namespace)["status"].get("used", {}).get("requests.nvidia.com/gpu") == "4", timeout=30)
        apply(trainjob("pair", nodes=2, run_time="3s"), "-n", namespace)
        s = queued(namespace, "pair", reason="QuotaExceeded", timeout=60)
        assert s["message"] == "ResourceQuota gpus of namespace %s: requests.nvidia.com/gpu has 4 of 8 used; the job needs 8" % namespace, s
        assert pods(namespace, "pair") == []
        got = running(namespace, "pair", 2, timeout=120)
        pinned_whole(got)
        wait_state(namespace, "pair", "Complete", timeout=60)
    finally:
        watch.stop()
    assert not bound_alone(watch.events(), "pair", 2)
    assert not events(namespace, "pair", "GangRefused")


def test_a_gang_its_resource_quota_can_never_hold_fails_saying_so(admitter, namespace, gh200):
    apply(gpu_quota(4), "-n", namespace)
    apply(trainjob("toolarge", nodes=2, run_time="3s"), "-n", namespace)
    j = wait_state(namespace, "toolarge", "Failed", timeout=60)
    assert j["status"]["reason"] == "QuotaExceeded", j["status"]
    assert j["status"]["message"] == ("ResourceQuota gpus of namespace %s allows 4 requests.nvidia.com/gpu in all; the job's gang "
                                      "needs 8: it never fits" % namespace), j["status"]
    assert pods(namespace, "toolarge") == []


def test_a_create_refused_past_what_the_admission_reads_never_leaves_part_of_a_gang_running(admitter, namespace, gh200):
    # A LimitRange gives every container a memory request the TrainJob does not ask for; the
    # ResourceQuota on memory holds one such pod, not two. The admission reads the quota but
    # not the LimitRange, so it lets the gang through, and the API server refuses its second
    # pod. The pods wait behind their scheduling gate until all exist, so the first never
    # holds a node; it is deleted and the gang waits, FailedCreate naming the quota.
    limits = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "memory"},
              "spec": {"limits": [{"type": "Container", "defaultRequest": {"memory": "100Mi"}, "default": {"memory": "100Mi"}}]}}
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "mem"},
             "spec": {"hard": {"requests.memory": "150Mi"}}}
    apply(limits, "-n", namespace)
    apply(quota, "-n", namespace)
    watch = Watch(namespace)
    try:
        apply(trainjob("split", nodes=2, run_time="3s"), "-n", namespace)
        s = wait_for("the refusal in the status", lambda: (s := status(namespace, "split")).get("reason") == "FailedCreate" and s, timeout=60)
        assert "exceeded quota: mem" in s["message"], s
        wait_for("the GangRefused event", lambda: events(namespace, "split", "GangRefused"), timeout=60)
        time.sleep(10)  # several tries more
        quota["spec"]["hard"]["requests.memory"] = "1Gi"
        apply(quota, "-n", namespace)
        got = running(namespace, "split", 2, timeout=120)
        pinned_whole(got)
        wait_state(namespace, "split", "Complete", timeout=60)
    finally:
        watch.stop()
    # Never one rank bound without the other: until both pods of an attempt existed, none
    # was bound to a node.
    assert not bound_alone(watch.events(), "split", 2)
