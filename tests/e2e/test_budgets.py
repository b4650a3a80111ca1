"""The two restart budgets and the node grace period against the real control plane
(reconcilers/policy/budget.h, docs/users.md "When a worker fails"): a node that fails restarts a job whose
own budget is 0, counted in status.infrastructureRestarts, until the infrastructure's budget
is spent; a node made NotReady keeps its worker for the whole grace period, counted from
the moment the simulated kubelet reported it (deploy/local/node-stages.yaml), and loses it
after.

The module runs its own controller: the infrastructure's budget is 1, so that one test sees
it both spared and spent, and restarts back off for a second."""

import time

import pytest

from conftest import Controller, config_with_policy
from kube import (ATTEMPT, NOT_READY_LABEL, apply, by_rank, condition, delete_node, events, kubectl, kubectl_json, metric_sum,
                  node_ready, pods, restore_node, running, tj, trainjob, ts, wait_for, wait_state)

POLICY = """
failurePolicy:
  maxRestarts: 3
  maxInfrastructureRestarts: 1
  nodeGracePeriodSeconds: 60
  restartBackoff: {initialSeconds: 1, maxSeconds: 2}
"""

GRACE = 20


@pytest.fixture(scope="module")
def budgets_controller(session_controller_aside):
    c = Controller("--config", config_with_policy(POLICY)).start()
    try:
        yield c
    finally:
        c.stop()


def restarts_metric(ctl, namespace, reason):
    return metric_sum(ctl.metrics(), "trainjob_worker_restarts_total", namespace=namespace, reason=reason)


def test_deleted_nodes_spend_the_infrastructure_budget_not_max_restarts(budgets_controller, namespace):
    before = restarts_metric(budgets_controller, namespace, "NodeDeleted")
    apply(trainjob("sturdy", nodes=2, run_time="10m", annotations={"trainjob.flame.dev/max-restarts": "0"}), "-n", namespace)
    first = running(namespace, "sturdy", 2)
    saved = []
    try:
        victim = by_rank(first, 1)["spec"]["nodeName"]
        saved.append(delete_node(victim))

        # maxRestarts 0, yet the job restarts: the node's failure is the infrastructure's.
        job = wait_for("the restart", lambda: (j := tj(namespace, "sturdy"))["status"].get("restartCount") == 1 and j)
        st = job["status"]
        assert st["infrastructureRestarts"] == 1, st
        assert st["state"] in ("Restarting", "Running"), st
        assert condition(job, "Failed") is None
        assert (st["lastFailure"]["reason"], st["lastFailure"]["node"]) == ("NodeDeleted", victim)
        msgs = [e["message"] for e in events(namespace, "sturdy", "Restarting")]
        assert any(f"rank 1 on node {victim} failed (NodeDeleted" in m and "(infrastructure restart 1 of 1)" in m for m in msgs), msgs
        assert restarts_metric(budgets_controller, namespace, "NodeDeleted") == before + 1
        second = running(namespace, "sturdy", 2, attempt=1)
        assert victim not in {p["spec"]["nodeName"] for p in second}
        st = tj(namespace, "sturdy")["status"]
        assert (st["state"], st["restartCount"], st["infrastructureRestarts"]) == ("Running", 1, 1), st

        # The infrastructure's budget of 1 is spent by the next node failure.
        victim = by_rank(second, 0)["spec"]["nodeName"]
        saved.append(delete_node(victim))
        job = wait_state(namespace, "sturdy", "Failed")
        st = job["status"]
        assert (st["restartCount"], st["infrastructureRestarts"]) == (1, 1), st
        c = condition(job, "Failed")
        assert c["status"] == "True" and c["reason"] == "ReachedMaxInfrastructureRestarts", c
        assert f"rank 0 on node {victim} failed (NodeDeleted" in c["message"], c["message"]
        assert "the infrastructure restart budget of 1 (failurePolicy.maxInfrastructureRestarts) is spent" in c["message"], c["message"]
    finally:
        for body in saved:
            restore_node(body)


def test_not_ready_node_keeps_its_worker_for_the_grace_period(budgets_controller, namespace):
    apply(trainjob("patient", nodes=2, run_time="10m", annotations={"trainjob.flame.dev/node-grace-period-seconds": str(GRACE)}),
          "-n", namespace)
    first = running(namespace, "patient", 2)
    victim = by_rank(first, 1)
    node = victim["spec"]["nodeName"]
    labelled = time.time()
    kubectl("label", "node", node, f"{NOT_READY_LABEL}=true")
    try:
        wait_for(f"{node} to be NotReady", lambda: not node_ready(node))
        ready = condition(kubectl_json("get", "node", node), "Ready")
        since = ts(ready["lastTransitionTime"])
        # The simulated kubelet dates the transition when it happened, not at the node's
        # creation (which would skip the grace period).
        assert labelled - 2 <= since <= labelled + 5, (ready, labelled)

        # Until the grace period ends the worker stays: no restart, the pod not deleted.
        while time.time() < since + GRACE - 2:
            st = tj(namespace, "patient")["status"]
            assert st.get("restartCount", 0) == 0, f"restarted {time.time() - since:.0f} s into a {GRACE} s grace period: {st}"
            pod = kubectl_json("get", "pod", victim["metadata"]["name"], "-n", namespace)
            assert not pod["metadata"].get("deletionTimestamp"), "the worker was deleted within the grace period"
            time.sleep(1)

        # Then it is replaced, on the infrastructure's budget.
        job = wait_for("the restart", lambda: (j := tj(namespace, "patient"))["status"].get("restartCount") == 1 and j, timeout=GRACE + 20)
        st = job["status"]
        assert st["infrastructureRestarts"] == 1, st
        assert (st["lastFailure"]["reason"], st["lastFailure"]["node"]) == ("NodeNotReady", node), st
        decided = ts(st["lastFailure"]["time"])
        assert since + GRACE <= decided <= since + GRACE + 10, (since, decided)
        second = running(namespace, "patient", 2, attempt=1)
        assert node not in {p["spec"]["nodeName"] for p in second}
        wait_for("only the new attempt's pods", lambda: {p["metadata"]["labels"][ATTEMPT] for p in pods(namespace, "patient")} == {"1"})
    finally:
        kubectl("label", "node", node, f"{NOT_READY_LABEL}-", check=False)
        wait_for(f"{node} to be Ready again", lambda: node_ready(node))
