"""Fault tolerance against the real control plane (DESIGN.md section 4, "Failures"): workers
that exit, nodes that go NotReady, are tainted by a GPU health checker or are deleted, the
Worker policy, permanent exit codes, the restart budget, and a controller restarted between
failures. Failures are injected as a kubelet or the node lifecycle would cause them: KWOK
fails a pod on an annotation, marks a node NotReady on a label.

The module runs its own controller with a failure policy that backs off for one second, so
that a scenario takes seconds; the session's controller steps aside meanwhile."""

import time

import pytest

from conftest import Controller, config_with_policy
from kube import (ATTEMPT, NOT_READY_LABEL, RANK, SIM, PodWatch, apply, by_rank, condition, delete_node, events, kubectl,
                  kubectl_json, metric_sum, node_ready, pods, restore_node, running, tj, trainjob, wait_for,
                  wait_state)

GPU_TAINT = "nvidia.com/gpu.unhealthy"

POLICY = """
failurePolicy:
  maxRestarts: 3
  nodeGracePeriodSeconds: 60
  restartBackoff: {initialSeconds: 1, maxSeconds: 2}
  permanentExitCodes: [126, 127]
  gpuHealth:
    conditions: [GpuUnhealthy]
    taints: [nvidia.com/gpu.unhealthy]
"""


@pytest.fixture(scope="module")
def faults_controller(controller):
    """A controller with the fast failure policy, instead of the session's."""
    controller.stop()
    c = Controller("--config", config_with_policy(POLICY)).start()
    try:
        yield c
    finally:
        c.stop()
        controller.start()


def fail_pod(namespace, pod, code):
    kubectl("annotate", "pod", pod["metadata"]["name"], "-n", namespace, f"{SIM}fail-exit-code={code}")


def restarts_metric(ctl, namespace, reason):
    return metric_sum(ctl.metrics(), "trainjob_worker_restarts_total", namespace=namespace, reason=reason)


def only_attempt(namespace, name, attempt, n):
    """Exactly n pods, one per rank, all of the attempt: what the SDK should see."""
    now = pods(namespace, name)
    assert sorted(int(p["metadata"]["labels"][RANK]) for p in now) == list(range(n)), now
    assert {p["metadata"]["labels"][ATTEMPT] for p in now} == {str(attempt)}
    return now


def test_exit_code_1_restarts_the_gang_which_then_completes(faults_controller, namespace):
    before = restarts_metric(faults_controller, namespace, "WorkerFailed")
    apply(trainjob("phoenix", nodes=2, run_time="8s"), "-n", namespace)
    first = running(namespace, "phoenix", 2)
    victim = by_rank(first, 1)
    fail_pod(namespace, victim, 1)

    job = wait_for("a restart", lambda: (j := tj(namespace, "phoenix"))["status"].get("restartCount") == 1 and j)
    assert job["status"]["state"] in ("Restarting", "Running")
    failure = job["status"]["lastFailure"]
    assert (failure["rank"], failure["node"], failure["pod"], failure["exitCode"]) == (1, victim["spec"]["nodeName"], victim["metadata"]["name"], 1)
    second = running(namespace, "phoenix", 2, attempt=1)
    # Gang: the healthy rank 0 was replaced too; the failed node is avoided.
    assert by_rank(second, 0)["metadata"]["uid"] != by_rank(first, 0)["metadata"]["uid"]
    assert by_rank(second, 1)["spec"]["nodeName"] != victim["spec"]["nodeName"]
    wait_state(namespace, "phoenix", "Complete")
    only_attempt(namespace, "phoenix", 1, 2)
    msgs = [e["message"] for e in events(namespace, "phoenix", "Restarting")]
    assert any("rank 1 on node %s failed (exit code 1" % victim["spec"]["nodeName"] in m for m in msgs), msgs
    assert restarts_metric(faults_controller, namespace, "WorkerFailed") == before + 1


def test_worker_policy_replaces_only_the_failed_rank(faults_controller, namespace):
    apply(trainjob("solo", nodes=3, run_time="12s", annotations={"trainjob.flame.dev/restart-policy": "Worker"}), "-n", namespace)
    first = running(namespace, "solo", 3)
    fail_pod(namespace, by_rank(first, 1), 1)

    def replaced():
        p = pods(namespace, "solo")
        return len(p) == 3 and by_rank(p, 1)["metadata"]["labels"][ATTEMPT] == "1" and p

    second = wait_for("rank 1 to be replaced", replaced, timeout=60)
    for r in (0, 2):
        assert by_rank(second, r)["metadata"]["uid"] == by_rank(first, r)["metadata"]["uid"], f"rank {r} was replaced"
        assert by_rank(second, r)["metadata"]["labels"][ATTEMPT] == "0"
    job = wait_state(namespace, "solo", "Complete")
    assert job["status"]["restartCount"] == 1


def test_permanent_exit_code_fails_the_job_at_once(faults_controller, namespace):
    apply(trainjob("typo", nodes=2, run_time="60s"), "-n", namespace)
    first = running(namespace, "typo", 2)
    fail_pod(namespace, by_rank(first, 0), 127)
    job = wait_state(namespace, "typo", "Failed")
    assert job["status"]["restartCount"] == 0
    c = condition(job, "Failed")
    assert c["status"] == "True" and c["reason"] == "PermanentFailure"
    assert "exit code 127 is permanent" in c["message"], c["message"]
    assert job["status"]["lastFailure"]["exitCode"] == 127
    # The live rank is deleted (its GPUs freed); the failed pod stays for its logs.
    wait_for("rank 1 to be deleted", lambda: [p["metadata"]["labels"][RANK] for p in pods(namespace, "typo")] == ["0"])


def test_budget_is_spent_after_the_configured_failures(faults_controller, namespace):
    body = trainjob(
        "doomed",
        nodes=1,
        gpus=1,
        run_time="60s",
        pod_annotations={SIM + "fail-exit-code": "1", SIM + "fail-after": "1s"},
        annotations={"trainjob.flame.dev/max-restarts": "2"},
    )
    apply(body, "-n", namespace)
    job = wait_state(namespace, "doomed", "Failed", timeout=120)
    assert job["status"]["restartCount"] == 2
    c = condition(job, "Failed")
    assert c["reason"] == "ReachedMaxRestarts" and "budget of 2 is spent" in c["message"], c
    assert len(events(namespace, "doomed", "Restarting")) >= 1


def test_node_not_ready_replaces_its_worker_after_the_grace_period(faults_controller, namespace):
    # A grace period of a day: the node's NotReady must not restart anything yet.
    apply(trainjob("steady", nodes=2, run_time="40s", annotations={"trainjob.flame.dev/node-grace-period-seconds": "86400"}), "-n", namespace)
    first = running(namespace, "steady", 2)
    victim = by_rank(first, 1)
    node = victim["spec"]["nodeName"]
    watch = PodWatch(namespace)
    kubectl("label", "node", node, f"{NOT_READY_LABEL}=true")
    try:
        wait_for(f"{node} to be NotReady", lambda: not node_ready(node))
        time.sleep(3)
        assert tj(namespace, "steady")["status"].get("restartCount", 0) == 0, "restarted within the grace period"
        # A grace period of 5 s: once the node has been NotReady that long, the worker on
        # the dead node counts as failed.
        kubectl("annotate", "trainjob", "steady", "-n", namespace, "--overwrite", "trainjob.flame.dev/node-grace-period-seconds=5")
        job = wait_for("the restart", lambda: (j := tj(namespace, "steady"))["status"].get("restartCount") == 1 and j)
        assert job["status"]["lastFailure"]["reason"] == "NodeNotReady"
        assert job["status"]["lastFailure"]["node"] == node
        second = running(namespace, "steady", 2, attempt=1)
        for p in second:
            n = kubectl_json("get", "node", p["spec"]["nodeName"])
            assert p["spec"]["nodeName"] != node
            assert n["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-GH200-480GB"
        # The pod on the dead node was force-deleted; the healthy one gracefully.
        assert watch.deletion_grace(victim["metadata"]["name"]) == 0
        assert watch.deletion_grace(by_rank(first, 0)["metadata"]["name"]) != 0
    finally:
        watch.stop()
        kubectl("label", "node", node, f"{NOT_READY_LABEL}-")
    wait_state(namespace, "steady", "Complete", timeout=120)
    only_attempt(namespace, "steady", 1, 2)


def test_gpu_health_taint_replaces_the_worker(faults_controller, namespace):
    before = restarts_metric(faults_controller, namespace, "GPUUnhealthy")
    apply(trainjob("xid", nodes=2, run_time="10s"), "-n", namespace)
    first = running(namespace, "xid", 2)
    node = by_rank(first, 0)["spec"]["nodeName"]
    kubectl("taint", "node", node, f"{GPU_TAINT}=true:NoSchedule")
    try:
        job = wait_for("the restart", lambda: (j := tj(namespace, "xid"))["status"].get("restartCount") == 1 and j)
        assert (job["status"]["lastFailure"]["reason"], job["status"]["lastFailure"]["rank"]) == ("GPUUnhealthy", 0)
        second = running(namespace, "xid", 2, attempt=1)
        assert node not in {p["spec"]["nodeName"] for p in second}
        wait_state(namespace, "xid", "Complete")
        only_attempt(namespace, "xid", 1, 2)
    finally:
        kubectl("taint", "node", node, f"{GPU_TAINT}-", check=False)
    assert restarts_metric(faults_controller, namespace, "GPUUnhealthy") == before + 1


def test_deleted_node_replaces_its_worker(faults_controller, namespace):
    apply(trainjob("orphan", nodes=2, run_time="10s"), "-n", namespace)
    first = running(namespace, "orphan", 2)
    victim = by_rank(first, 1)
    node = victim["spec"]["nodeName"]
    saved = delete_node(node)
    try:
        job = wait_for("the restart", lambda: (j := tj(namespace, "orphan"))["status"].get("restartCount") == 1 and j)
        assert (job["status"]["lastFailure"]["reason"], job["status"]["lastFailure"]["node"]) == ("NodeDeleted", node)
        wait_for("the pod on the deleted node to be gone", lambda: all(p["metadata"]["uid"] != victim["metadata"]["uid"] for p in pods(namespace, "orphan")))
        wait_state(namespace, "orphan", "Complete")
        only_attempt(namespace, "orphan", 1, 2)
    finally:
        restore_node(saved)


def test_controller_restarted_between_failures_keeps_the_count(faults_controller, namespace):
    apply(trainjob("stubborn", nodes=1, gpus=1, run_time="8s", annotations={"trainjob.flame.dev/max-restarts": "2"}), "-n", namespace)
    fail_pod(namespace, running(namespace, "stubborn", 1)[0], 1)
    wait_for("the first restart", lambda: tj(namespace, "stubborn")["status"].get("restartCount") == 1)
    pod = running(namespace, "stubborn", 1, attempt=1)[0]
    faults_controller.stop()
    try:
        fail_pod(namespace, pod, 1)
        wait_for("the pod to fail", lambda: by_rank(pods(namespace, "stubborn"), 0)["status"].get("phase") == "Failed")
    finally:
        faults_controller.start()
    job = wait_for("the second restart", lambda: (j := tj(namespace, "stubborn"))["status"].get("restartCount") == 2 and j)
    assert job["status"]["lastFailure"]["pod"] == pod["metadata"]["name"]
    fail_pod(namespace, running(namespace, "stubborn", 1, attempt=2)[0], 1)
    job = wait_state(namespace, "stubborn", "Failed")
    assert job["status"]["restartCount"] == 2
    assert condition(job, "Failed")["reason"] == "ReachedMaxRestarts"
