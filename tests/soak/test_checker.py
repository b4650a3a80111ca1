"""The soak's invariants themselves, on made-up objects and without a cluster: each one
fails on the state it forbids and passes on the nearby states a healthy controller goes
through (a replaced pod still terminating, a gang a moment after a failure, a job deleted a
moment ago). The soak stage runs these before the soak."""

import random
import time

import pytest

from checker import Checker, cleanup_pending
from soak import STATES, Job
from faults import jobs_by_state  # noqa: E402 (soak puts tests/e2e on the path)

JOB_UID = "job-uid-1"


def trainjob(name="j", uid=JOB_UID, nodes=2, restarts=0, infra=0, rv="1"):
    return {
        "metadata": {"name": name, "uid": uid, "resourceVersion": rv},
        "spec": {"trainer": {"numNodes": nodes}},
        "status": {"restartCount": restarts, "infrastructureRestarts": infra},
    }


def pod(name, rank, attempt=0, owner=JOB_UID, phase="Running", deleting=False, node="gh200-0", rv=1):
    meta = {
        "name": name,
        "uid": "uid-" + name,
        "resourceVersion": str(rv),
        "labels": {"trainjob.flame.dev/rank": str(rank), "trainjob.flame.dev/attempt": str(attempt),
                   "jobset.sigs.k8s.io/replicatedjob-name": "node"},
        "ownerReferences": [{"controller": True, "uid": owner, "kind": "TrainJob", "name": "j"}],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T12:00:00Z"
    return {"metadata": meta, "spec": {"nodeName": node} if node else {}, "status": {"phase": phase}}


@pytest.fixture
def checker():
    c = Checker("soak", orphan_grace=30, gang_grace=30)
    c.api_back_at = 0.0  # the tests give their own clock to check_graces
    job = trainjob()
    c.trainjobs.store[JOB_UID] = job
    return c


def add(c, p):
    c.pods.store[p["metadata"]["uid"]] = p
    c.sink("pod", "ADDED", p)


def test_two_live_pods_of_one_rank_and_attempt(checker):
    add(checker, pod("j-node-0-0-a0", 0))
    add(checker, pod("j-node-0-0-a0-dup", 0))
    assert checker.violation.invariant == "never two live pods of one rank and attempt"


@pytest.mark.parametrize("other", [
    pod("old", 0, deleting=True),  # the pod it replaces is terminating
    pod("done", 0, phase="Failed"),  # or finished
    pod("next", 0, attempt=1),  # another attempt
    pod("peer", 1),  # another rank
])
def test_one_live_pod_per_rank_and_attempt(checker, other):
    add(checker, other)
    add(checker, pod("j-node-0-0-a0", 0))
    assert checker.violation is None


def test_restart_counts_never_go_down(checker):
    checker.sink("trainjob", "MODIFIED", trainjob(restarts=2, infra=1, rv="5"))
    checker.sink("trainjob", "MODIFIED", trainjob(restarts=3, infra=1, rv="6"))
    assert checker.violation is None
    checker.sink("trainjob", "MODIFIED", trainjob(restarts=3, infra=0, rv="7"))
    assert checker.violation.invariant == "restart counts never go down"


def test_a_pod_without_its_trainjob_past_the_grace(checker):
    add(checker, pod("orphan", 0, owner="gone"))
    checker.check_graces(1000.0)
    checker.check_graces(1029.0)
    assert checker.violation is None
    checker.check_graces(1031.0)
    assert checker.violation.invariant == "never a pod without a live owner for longer than the grace"


def test_the_grace_counts_from_the_api_servers_return(checker):
    add(checker, pod("orphan", 0, owner="gone"))
    checker.check_graces(1000.0)
    checker.api_back_at = 1020.0
    checker.check_graces(1040.0)
    assert checker.violation is None
    checker.check_graces(1051.0)
    assert checker.violation is not None


def test_a_partial_gang_past_the_grace(checker):
    add(checker, pod("j-node-0-0-a0", 0))
    add(checker, pod("j-node-0-1-a0", 1, phase="Succeeded"))
    checker.check_graces(1000.0)
    checker.check_graces(1029.0)
    assert checker.violation is None
    checker.check_graces(1031.0)
    assert checker.violation.invariant == "never a partial gang for longer than the grace"


def test_a_whole_gang_or_none_is_no_partial_gang(checker):
    add(checker, pod("j-node-0-0-a0", 0))
    add(checker, pod("j-node-0-1-a0", 1))
    checker.check_graces(1000.0)
    checker.check_graces(2000.0)
    assert checker.violation is None
    for p in list(checker.pods.store.values()):
        p["status"]["phase"] = "Succeeded"
    checker.check_graces(3000.0)
    assert checker.violation is None


def a_job(kind):
    rng = random.Random(0)
    while True:
        j = Job(rng, 0)
        if j.kind == kind:
            return j


def test_control_plane_faults_change_no_outcome():
    j = a_job("runs")
    j.deadline = None
    j.touched.add("suspend")
    assert j.allowed() == {("Complete", "AllPodsSucceeded")}


def test_each_fault_allows_its_own_failure():
    j = a_job("runs")
    j.deadline = 900
    j.touched.add("exit")
    assert j.allowed() == {("Complete", "AllPodsSucceeded"), ("Failed", "ReachedMaxRestarts"),
                           ("Failed", "DeadlineExceeded")}
    j = a_job("exits-permanent")
    j.touched.add("node")
    assert j.allowed() == {("Failed", "PermanentFailure"), ("Failed", "ReachedMaxInfrastructureRestarts")}


def a_node(name, suspect=False):
    taints = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    if suspect:
        taints.append({"key": "trainjob.flame.dev/suspect", "effect": "NoSchedule"})
    return {"metadata": {"name": name, "resourceVersion": "1", "labels": {}}, "spec": {"taints": taints}}


def test_a_healthy_node_marked_suspect(checker):
    checker.sink("node", "MODIFIED", a_node("gh200-1"))
    assert checker.violation is None
    checker.sink("node", "MODIFIED", a_node("gh200-1", suspect=True))
    assert checker.violation and checker.violation.invariant == "no healthy node is marked suspect"


def test_a_flaky_node_may_be_marked_suspect(checker):
    checker.flaky_nodes.add("gh200-2")
    checker.sink("node", "MODIFIED", a_node("gh200-2", suspect=True))
    assert checker.violation is None
    assert checker.suspect_seen == {"gh200-2"}


def test_a_flaky_node_allows_either_budget():
    j = a_job("runs")
    j.deadline = None
    j.touched.add("flaky")
    assert j.allowed() == {("Complete", "AllPodsSucceeded"), ("Failed", "ReachedMaxRestarts"),
                           ("Failed", "ReachedMaxInfrastructureRestarts")}


def scrape(counts):
    """A /metrics page as the controller writes trainjob_jobs: a series for every state of
    each namespace and GPU class it caches jobs of, and trainjob_job_gpus beside it."""
    lines = ["# HELP trainjob_jobs TrainJobs by namespace, GPU class and state", "# TYPE trainjob_jobs gauge"]
    for (ns, cls), by_state in sorted(counts.items()):
        for s in sorted(set(STATES) | set(by_state)):
            lines.append(f'trainjob_jobs{{gpu_class="{cls}",namespace="{ns}",state="{s}"}} {by_state.get(s, 0)}')
    lines += ["# TYPE trainjob_job_gpus gauge", 'trainjob_job_gpus{gpu_class="gh200",namespace="soak",state="idle"} 4']
    return "\n".join(lines) + "\n"


def test_the_cache_check_counts_trainjob_jobs_over_namespace_and_class():
    # The end of seed 3961936805: 27 Complete and 20 Failed in the API server and in the
    # replicas' caches, which the check had read as 0 in every state.
    text = scrape({("soak", "gh200"): {"Complete": 19, "Failed": 15}, ("soak", "h100"): {"Complete": 8, "Failed": 5}})
    want = {s: 0 for s in STATES} | {"Complete": 27, "Failed": 20}
    assert jobs_by_state(text, STATES) == want


def test_the_cache_check_sees_a_state_it_does_not_expect_and_an_empty_cache():
    text = scrape({("soak", ""): {"Running": 1, "Lost": 2}})
    assert jobs_by_state(text, STATES) == {s: 0 for s in STATES} | {"Running": 1, "Lost": 2}
    assert jobs_by_state("", STATES) == {s: 0 for s in STATES}


def test_the_pod_gc_has_work_left_on_a_deleted_node_or_a_pod_being_deleted():
    done = pod("a-0", 0, phase="Succeeded")
    gone = pod("b-0", 0, phase="Succeeded")
    gone["spec"]["nodeName"] = "gh200-5"
    unbound = pod("c-0", 0, phase="Pending")
    del unbound["spec"]["nodeName"]
    deleting = pod("d-0", 0, deleting=True)
    assert cleanup_pending([done, unbound], {"gh200-0"}) == []
    assert cleanup_pending([done, gone, unbound, deleting], {"gh200-0"}) == [
        "pod b-0 is bound to gh200-5, which no longer exists",
        "pod d-0 is being deleted",
    ]


# A pod of a job that selects a block is bound only to a node of that block, judged by the
# node's labels at the binding's resourceVersion.

BLOCK = "topology.flame.dev/block"
SELECTOR = {BLOCK: "gh200-block-0"}


def node(name, rv, block="gh200-block-0"):
    labels = {"kubernetes.io/hostname": name} | ({BLOCK: block} if block else {})
    return {"metadata": {"name": name, "uid": "uid-" + name, "resourceVersion": str(rv), "labels": labels}}


def see_node(c, n):
    c.nodes.store[n["metadata"]["uid"]] = n
    c.nodes.rv = n["metadata"]["resourceVersion"]
    c.sink("node", "MODIFIED", n)


@pytest.fixture
def selecting(checker):
    job = checker.trainjobs.store[JOB_UID]
    job["spec"]["podTemplateOverrides"] = [{"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": SELECTOR}}]
    see_node(checker, node("gh200-0", 10))
    see_node(checker, node("gh200-4", 11, block="gh200-block-1"))
    return checker


def bind(c, name, node_name, unbound_rv, bound_rv):
    add(c, pod(name, 0, node=None, rv=unbound_rv))
    p = pod(name, 0, node=node_name, rv=bound_rv)
    c.pods.store[p["metadata"]["uid"]] = p
    c.sink("pod", "MODIFIED", p)


def test_a_pod_bound_in_its_block(selecting):
    bind(selecting, "j-node-0-0-a0", "gh200-0", 20, 21)
    see_node(selecting, node("gh200-5", 22))  # the nodes' watch passes the binding
    selecting.check_bindings(time.monotonic())
    assert selecting.violation is None and selecting.selector_checks == 1


def test_a_pod_bound_outside_its_block(selecting):
    bind(selecting, "j-node-0-0-a0", "gh200-4", 20, 21)
    see_node(selecting, node("gh200-5", 22))
    selecting.check_bindings(time.monotonic())
    assert selecting.violation.invariant == (
        "a pod of a job that selects its nodes is bound only to a node its selector allows")
    assert "gh200-4" in selecting.violation.detail


def test_a_pod_bound_to_a_node_whose_label_was_taken_off(selecting):
    see_node(selecting, node("gh200-0", 15, block=None))
    bind(selecting, "j-node-0-0-a0", "gh200-0", 20, 21)
    selecting.check_bindings(time.monotonic() + 100)  # no node event since: judged after the wait
    assert selecting.violation is not None


def test_a_label_taken_off_just_after_the_binding_is_no_violation(selecting):
    # The node's event comes first, but its version is after the binding's.
    see_node(selecting, node("gh200-0", 22, block=None))
    bind(selecting, "j-node-0-0-a0", "gh200-0", 20, 21)
    selecting.check_bindings(time.monotonic())
    assert selecting.violation is None and selecting.selector_checks == 1


def test_a_label_put_back_just_before_the_binding_is_judged_once_the_nodes_watch_has_it(selecting):
    see_node(selecting, node("gh200-0", 15, block=None))
    bind(selecting, "j-node-0-0-a0", "gh200-0", 20, 22)
    selecting.check_bindings(time.monotonic())  # the nodes' watch is at 15: not judged yet
    assert selecting.violation is None and selecting.selector_checks == 0
    see_node(selecting, node("gh200-0", 21))  # the label came back at 21, before the binding
    selecting.check_bindings(time.monotonic())  # at 21, a change at 22 may still come
    assert selecting.selector_checks == 0
    see_node(selecting, node("gh200-5", 23))
    selecting.check_bindings(time.monotonic())
    assert selecting.violation is None and selecting.selector_checks == 1


def test_a_job_that_selects_no_node_is_not_judged(checker):
    see_node(checker, node("gh200-4", 11, block="gh200-block-1"))
    bind(checker, "j-node-0-0-a0", "gh200-4", 20, 21)
    checker.check_bindings(time.monotonic() + 100)
    assert checker.violation is None and checker.selector_checks == 0 and checker.bindings == []


def test_a_selecting_job_names_its_block_in_its_manifest():
    rng = random.Random(1)
    jobs = [Job(rng, i) for i in range(200)]
    picked = [j for j in jobs if j.block]
    assert 20 < len(picked) < 60
    for j in picked:
        assert j.nodes <= 3 and j.block.startswith(j.cls + "-block-")
        assert j.manifest()["spec"]["podTemplateOverrides"][0]["spec"] == {"nodeSelector": {BLOCK: j.block}}
    j = next(j for j in jobs if j.kind == "runs" and j.deadline is None)
    j.touched.add("relabel")
    assert j.allowed() == {("Complete", "AllPodsSucceeded")}
