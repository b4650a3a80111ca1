"""Walltime against the real control plane (docs/users.md, "Walltime"): a job without
activeDeadlineSeconds gets its GPU class's defaultWalltime, its pods are warned through the
deadline file before the end, it ends DeadlineExceeded with its pods deleted gracefully; a
job asking for more than the maxWalltime is refused before any pod exists.

The module runs its own controller with the shipped config and a walltime section of its own:
gh200 jobs get 60 s by default and may ask for 120 s at most, and are warned 20 s before
their deadline."""

import calendar
import os
import time

import pytest

from conftest import Controller
from kube import GRACE, REPO, PodWatch, apply, condition, events, kubectl, pods, running, table, tj, trainjob, wait_for, wait_state
from test_admission import gh200_busy

DEFAULT, MAX, WARNING = 60, 120, 20
WALLTIME = f"""
walltime:
  warningSeconds: {WARNING}
  gpuClasses:
    gh200: {{defaultWalltime: {DEFAULT}s, maxWalltime: 2m}}
"""
DEADLINE_ANNOTATION = "trainjob.flame.dev/deadline"
DEADLINE_FIELD = f"metadata.annotations['{DEADLINE_ANNOTATION}']"


@pytest.fixture(scope="module")
def walltime_controller(session_controller_aside, tmp_path_factory):
    """A controller of this module's own: the shipped config with the walltime section above
    in place of the shipped one."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        shipped = f.read()
    head, sep, _ = shipped.partition("\nwalltime:")
    assert sep, "the shipped config has a walltime section to replace"
    path = tmp_path_factory.mktemp("walltime") / "config.yaml"
    path.write_text(head + "\n" + WALLTIME)
    c = Controller("--config", str(path)).start()
    try:
        yield c
    finally:
        c.stop()


def ts(rfc3339):
    return calendar.timegm(time.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ"))


def started_status(namespace, name):
    """The job's status once it records the start (startTime and deadline): the pods can
    run before that patch lands, since it waits behind the pods' writes."""

    def recorded():
        s = tj(namespace, name).get("status", {})
        return s.get("startTime") and s.get("deadline") and s

    return wait_for(f"{name}'s recorded start", recorded, timeout=30)


def test_default_walltime_warns_then_ends_the_job(walltime_controller, namespace):
    apply(trainjob("lasts", nodes=2, run_time="10m"), "-n", namespace)
    first = running(namespace, "lasts", 2)
    status = started_status(namespace, "lasts")
    start, deadline = ts(status["startTime"]), ts(status["deadline"])
    assert deadline - start == DEFAULT, status
    (row,) = table(kubectl("get", "tj", "lasts", "-n", namespace).stdout)
    assert row["DEADLINE"] == status["deadline"]

    # KWOK runs no containers, so no code can read the file: what the test can see is what
    # the kubelet would serve. Every container mounts the downward-API volume at
    # /etc/trainjob, whose file `deadline` is the pod's annotation trainjob.flame.dev/deadline
    # (empty while the annotation is absent); so the annotation on the pod is the file's
    # content.
    for pod in first:
        volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
        assert volumes["trainjob-deadline"]["downwardAPI"]["items"] == [
            {"path": "deadline", "fieldRef": {"apiVersion": "v1", "fieldPath": DEADLINE_FIELD}}]
        for c in pod["spec"]["containers"]:
            assert {"name": "trainjob-deadline", "mountPath": "/etc/trainjob", "readOnly": True} in c["volumeMounts"], c
        assert DEADLINE_ANNOTATION not in pod["metadata"].get("annotations", {}), "warned too early"

    watch = PodWatch(namespace)
    try:
        def warned():
            live = [p for p in pods(namespace, "lasts") if not p["metadata"].get("deletionTimestamp")]
            return len(live) == 2 and all(DEADLINE_ANNOTATION in p["metadata"].get("annotations", {}) for p in live) and live

        warned_pods = wait_for("the pods to be warned", warned, timeout=DEFAULT + 10, interval=0.5)
        seen = time.time()
        # Warned `warning` seconds before the deadline (the poll and the watch's delivery add
        # a little).
        assert deadline - WARNING - 1 <= seen <= deadline - WARNING + 6, (seen, deadline)
        for p in warned_pods:
            assert p["metadata"]["annotations"][DEADLINE_ANNOTATION] == status["deadline"]
        (warning,) = events(namespace, "lasts", "DeadlineWarning")
        assert warning["type"] == "Normal" and status["deadline"] in warning["message"], warning

        job = wait_state(namespace, "lasts", "Failed", timeout=WARNING + 15)
        ended = time.time()
        assert deadline <= ended + 1 and ended <= deadline + 6, (ended, deadline)
        c = condition(job, "Failed")
        assert c["status"] == "True" and c["reason"] == "DeadlineExceeded", c
        assert job["status"]["reason"] == "DeadlineExceeded"
        assert f"walltime of 1m ({DEFAULT} s), the defaultWalltime of GPU class gh200" in c["message"], c
        # Deleted with their own grace period, so the code gets SIGTERM and time to save.
        wait_for("the pods' deletion", lambda: all(watch.deletion_grace(p["metadata"]["name"]) is not None for p in first))
        for p in first:
            assert watch.deletion_grace(p["metadata"]["name"]) == p["spec"]["terminationGracePeriodSeconds"] > 0
    finally:
        watch.stop()


def test_a_job_warned_before_its_deadline_still_ends_on_its_own(walltime_controller, namespace):
    """The warning writes to the running pods; a simulated run still ends at its start plus
    its run time (deploy/local/stages.yaml), so a 30 s run under a 40 s walltime, warned at
    20 s, is Complete."""
    apply(trainjob("warned", nodes=1, run_time="30s", activeDeadlineSeconds=40), "-n", namespace)
    running(namespace, "warned", 1)
    wait_for("the pod to be warned",
             lambda: any(DEADLINE_ANNOTATION in p["metadata"].get("annotations", {}) for p in pods(namespace, "warned")),
             timeout=40, interval=0.5)
    job = wait_for("the job to end",
                   lambda: (j := tj(namespace, "warned"))["status"].get("state") in ("Complete", "Failed") and j,
                   timeout=40)
    assert job["status"]["state"] == "Complete", job["status"]


def test_a_job_past_max_walltime_is_refused_at_once(walltime_controller, namespace):
    applied = time.monotonic()
    apply(trainjob("greedy", nodes=1, run_time="10m", activeDeadlineSeconds=600), "-n", namespace)
    job = wait_state(namespace, "greedy", "Failed", timeout=20)
    assert time.monotonic() - applied < 15
    c = condition(job, "Failed")
    assert c["reason"] == "PolicyViolation", c
    assert c["message"] == (f"spec.activeDeadlineSeconds (600 s) is longer than the maxWalltime of GPU class gh200, "
                            f"2m ({MAX} s); ask for at most {MAX} s"), c
    assert "deadline" not in job["status"] and not job["status"].get("startTime")
    (failed,) = events(namespace, "greedy", "Failed")
    assert failed["type"] == "Warning" and "PolicyViolation" in failed["message"]
    assert pods(namespace, "greedy") == []


def test_a_job_within_max_walltime_keeps_its_own(walltime_controller, namespace):
    apply(trainjob("own", nodes=1, run_time="10m", activeDeadlineSeconds=MAX), "-n", namespace)
    running(namespace, "own", 1)
    status = started_status(namespace, "own")
    assert ts(status["deadline"]) - ts(status["startTime"]) == MAX
    kubectl("delete", "tj", "own", "-n", namespace, "--wait=false")


def test_the_queue_reserves_with_the_default_walltime(walltime_controller, namespace):
    """A running job with no activeDeadlineSeconds ends at its defaultWalltime: the head of
    the queue that waits for its nodes expects to start at that deadline."""
    wait_for("the GH200 nodes to be free", lambda: not gh200_busy()[1], timeout=240, interval=1)
    apply(trainjob("holder", nodes=6, run_time="10m"), "-n", namespace)
    running(namespace, "holder", 6)
    deadline = started_status(namespace, "holder")["deadline"]
    apply(trainjob("head", nodes=8, run_time="10m"), "-n", namespace)

    def reserved():
        s = tj(namespace, "head").get("status", {})
        return s.get("state") == "Queued" and s.get("expectedStartTime") and s

    s = wait_for("head's reservation", reserved, timeout=30)
    assert ts(s["expectedStartTime"]) == ts(deadline) + GRACE, (s, deadline)
    assert pods(namespace, "head") == []
    kubectl("delete", "tj", "holder", "head", "-n", namespace, "--wait=false")
