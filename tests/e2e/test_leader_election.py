"""Leader election against the real API server (DESIGN.md section 4): replicas started with
--leader-elect share one coordination.k8s.io/v1 Lease; only its holder reconciles, the others
keep warm caches and stay ready; a killed leader is replaced once its lease expires, a
stopped one (SIGTERM) releases the lease so that the next takes over at once, and a leader
that finds another holder in the Lease exits non-zero.

The timings are shortened through the flags (lease 4 s, renew deadline 3 s, retry 0.5 s) to
keep the suite fast; the rules are the same as with controller-runtime's 15 s / 10 s / 2 s."""

import json
import subprocess
import time
import uuid

import pytest

from conftest import Controller
from kube import (apply, decode_stream, drop_namespaces, gh200_busy, kubectl, metric, kubectl_json, other_namespace, pods, running, tj,
                  trainjob, wait_for, wait_state)

LEASE_S, RENEW_S, RETRY_S = 4, 3, 0.5
FAST = (
    f"--leader-elect-lease-duration={LEASE_S}s",
    f"--leader-elect-renew-deadline={RENEW_S}s",
    f"--leader-elect-retry-period={int(RETRY_S * 1000)}ms",
)


class Replicas:
    """Controllers with leader election on one Lease of the test's namespace."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.lease = "e2e-lease-" + uuid.uuid4().hex[:6]
        self.started = []

    def start(self, *timings):
        c = Controller(
            "--leader-elect",
            f"--leader-election-id={self.lease}",
            f"--leader-election-namespace={self.namespace}",
            *(timings or FAST),
        ).start()  # returns once /readyz answers 200: followers are ready too
        self.started.append(c)
        return c

    def spec(self):
        got = kubectl("get", "lease", self.lease, "-n", self.namespace, "-o", "json", check=False)
        return json.loads(got.stdout)["spec"] if got.returncode == 0 else None

    def holder(self):
        return (self.spec() or {}).get("holderIdentity", "")

    def leader_and_follower(self, a, b):
        holder = wait_for("a replica to hold the lease", self.holder, timeout=30)
        assert holder in (identity(a), identity(b)), f"the lease names a stranger: {holder}"
        return (a, b) if holder == identity(a) else (b, a)

    def status(self, c):
        return metric(c.metrics(), f'leader_election_master_status{{name="{self.lease}"}}')

    def close(self):
        for c in self.started:
            if c.proc and c.proc.poll() is None:
                c.kill()


@pytest.fixture
def replicas(controller, namespace):
    """The session's controller (no leader election) steps aside meanwhile: it would
    reconcile whatever the lease says."""
    controller.stop()
    r = Replicas(namespace)
    try:
        yield r
    finally:
        r.close()
        controller.start()


def identity(c):
    """The identity a controller announced in its log: hostname_uuid."""
    for line in c.log().splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("logger") == "leader" and entry.get("identity"):
            return entry["identity"]
    raise AssertionError(f"no identity in the log {c.log_path}")


def pods_created(c):
    return metric(c.metrics(), "trainjob_pods_created_total")


def test_one_replica_leads_and_only_it_creates_pods(replicas, namespace):
    a, b = replicas.start(), replicas.start()
    leader, follower = replicas.leader_and_follower(a, b)
    assert identity(a) != identity(b)
    wait_for("the leader's metric", lambda: replicas.status(leader) == 1, timeout=10)
    assert replicas.status(follower) == 0
    spec = replicas.spec()
    assert spec["leaseDurationSeconds"] == LEASE_S
    assert spec["acquireTime"] and spec["renewTime"]

    apply(trainjob("led", nodes=2, gpus=4), "-n", namespace)
    wait_state(namespace, "led", "Complete")
    assert len(pods(namespace, "led")) == 2
    assert pods_created(leader) == 2
    assert pods_created(follower) == 0
    # The leader keeps renewing: the record moves on, and the holder stays.
    renewed = spec["renewTime"]
    wait_for("a renewal", lambda: replicas.spec()["renewTime"] != renewed, timeout=5)
    assert replicas.holder() == identity(leader)
    assert replicas.status(follower) == 0


def test_killed_leader_is_replaced_once_its_lease_expires(replicas, namespace):
    a, b = replicas.start(), replicas.start()
    leader, follower = replicas.leader_and_follower(a, b)
    transitions = replicas.spec().get("leaseTransitions", 0)
    leader.kill()
    killed = time.monotonic()
    wait_for("the follower to take over", lambda: replicas.holder() == identity(follower), timeout=30, interval=0.1)
    took = time.monotonic() - killed
    # Not before the lease could have expired in the follower's eyes (the last renewal may
    # have been up to a retry period before the kill), and soon after: the lease, one
    # jittered retry (up to 2.2 retry periods), and slack for a loaded machine.
    assert LEASE_S - 2 * RETRY_S <= took <= LEASE_S + 2.2 * RETRY_S + 3, f"took {took:.1f}s"
    assert replicas.spec()["leaseTransitions"] == transitions + 1
    wait_for("the new leader's metric", lambda: replicas.status(follower) == 1, timeout=5)

    apply(trainjob("after-kill", nodes=2, gpus=4), "-n", namespace)
    wait_state(namespace, "after-kill", "Complete")
    assert pods_created(follower) == 2


def watch_lease(replicas):
    """kubectl get -w of the Lease: every version it goes through, as JSON objects."""
    return subprocess.Popen(
        ["kubectl", "get", "lease", replicas.lease, "-n", replicas.namespace, "-w", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def versions(text):
    return [obj["spec"] for obj in decode_stream(text)]


def test_sigterm_releases_the_lease_and_the_follower_takes_over_at_once(replicas, namespace):
    # A long lease, so that a takeover in seconds can only come from the release.
    slow_lease = ("--leader-elect-lease-duration=30s", "--leader-elect-renew-deadline=20s",
                  f"--leader-elect-retry-period={int(RETRY_S * 1000)}ms")
    a, b = replicas.start(*slow_lease), replicas.start(*slow_lease)
    leader, follower = replicas.leader_and_follower(a, b)
    watch = watch_lease(replicas)
    try:
        time.sleep(1)  # the watch has started
        stopping = time.monotonic()
        leader.stop()  # SIGTERM; asserts exit status 0
        wait_for("the follower to take over", lambda: replicas.holder() == identity(follower), timeout=30, interval=0.1)
        took = time.monotonic() - stopping
    finally:
        watch.terminate()
    seen = versions(watch.communicate(timeout=10)[0])
    assert took < 5, f"took {took:.1f}s: the lease was not released"
    released = [s for s in seen if s.get("holderIdentity", "") == ""]
    assert released, f"no released version among {seen}"
    assert released[0]["leaseDurationSeconds"] == 1
    assert released[0]["acquireTime"] == released[0]["renewTime"]
    after = seen.index(released[0])
    assert any(s.get("holderIdentity") == identity(follower) for s in seen[after:])
    assert "released the lease" in leader.log()
    wait_for("the new leader's metric", lambda: replicas.status(follower) == 1, timeout=5)

    apply(trainjob("after-term", nodes=1, gpus=4), "-n", namespace)
    wait_state(namespace, "after-term", "Complete")
    assert pods_created(follower) == 1


def test_leader_that_finds_another_holder_exits_nonzero(replicas, namespace):
    a, b = replicas.start(), replicas.start()
    leader, follower = replicas.leader_and_follower(a, b)
    # Another process writes itself into the Lease, as a replica that saw it expire would.
    kubectl("patch", "lease", replicas.lease, "-n", namespace, "--type", "merge",
            "-p", json.dumps({"spec": {"holderIdentity": "intruder", "leaseDurationSeconds": 60}}))
    rc = leader.proc.wait(timeout=RENEW_S + 10)
    assert rc == 1, f"the leader exited {rc}; log: {leader.log_path}"
    assert "lost the lease" in leader.log()
    # The intruder's lease has not expired: the follower keeps waiting, and stays ready.
    time.sleep(2 * RETRY_S * 2.2)
    assert replicas.holder() == "intruder"
    assert replicas.status(follower) == 0
    assert follower.get("/readyz", follower.probe_port) == 200


def test_a_new_leader_orders_the_queue_as_the_old_one_did(replicas, namespace):
    """Fair share across a failover (docs/users.md, "The queue"): a namespace that has run jobs
    queues behind one that has used nothing; after the leader stops, the new leader reads
    the same usage from the TrainJobs and keeps the order (the positions it writes do not
    move), and admits the newcomer first."""
    wait_for("the GH200 nodes to be free", lambda: not gh200_busy()[1], timeout=240, interval=1)
    a, b = replicas.start(), replicas.start()
    leader, follower = replicas.leader_and_follower(a, b)
    newcomer, third = other_namespace(), other_namespace()

    def positions(jobs):
        return [tj(ns, n).get("status", {}).get("queuePosition") for ns, n in jobs]

    try:
        apply(trainjob("warmup", nodes=8, run_time="5s"), "-n", namespace)
        assert wait_state(namespace, "warmup", "Complete")["status"].get("gpuSeconds", 0) > 0
        apply(trainjob("blocker", nodes=8, run_time="25s"), "-n", third)
        running(third, "blocker", 8, timeout=60)
        for name in ("backlog-1", "backlog-2"):
            apply(trainjob(name, nodes=8, run_time="3s"), "-n", namespace)
            time.sleep(1.1)  # creation times are in seconds
        apply(trainjob("fresh", nodes=8, run_time="3s"), "-n", newcomer)
        order = [(newcomer, "fresh"), (namespace, "backlog-1"), (namespace, "backlog-2")]
        wait_for("the queue's order", lambda: positions(order) == [1, 2, 3], timeout=60)
        leader.stop()
        wait_for("the follower to take over", lambda: replicas.holder() == identity(follower), timeout=30)
        wait_for("the new leader to rebuild its queue", lambda: "the queue is rebuilt" in follower.log(), timeout=60)
        time.sleep(2)  # its first cycles have written what they decided
        assert positions(order) == [1, 2, 3]
        running(newcomer, "fresh", 8, timeout=90)
        assert pods(namespace, "backlog-1") == []
        for ns, name in order:
            wait_state(ns, name, "Complete", timeout=90)
    finally:
        drop_namespaces(newcomer, third)
