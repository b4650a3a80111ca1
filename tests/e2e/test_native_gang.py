"""Native gang scheduling against the real control plane (docs/operators.md, "Native gang
scheduling"): on a cluster that serves Kubernetes' Workload API (scheduling.k8s.io/v1alpha2,
feature gates GenericWorkload and GangScheduling), the controller gives each TrainJob a
Workload and a PodGroup with minCount = numNodes and makes every pod a member, so that
kube-scheduler itself binds a gang whole or not at all. The built-in admission is switched
off here: pods are created at once, and only the scheduler keeps a gang from being split.

The module runs on the session's cluster when that serves the API (one created with
TJC_NATIVE_GANG=1, e.g. `TJC_CLUSTER=native-gang TJC_NATIVE_GANG=1 scripts/test.sh e2e`);
otherwise it brings up a cluster of its own with the gates on ("<session cluster>-gang"),
and takes it down at its end. It is skipped, saying so, only if even that cluster does not
serve the API."""

import os
import re
import subprocess
import threading
import time
import uuid

import pytest

from conftest import Controller, install_crds
from kube import REPO, Watch, apply, events, kubectl, kubectl_json, pods, running, tj, trainjob, wait_for, wait_state
from test_admission import gh200_busy
from test_failures import training_runtime_with_ttl

API = "scheduling.k8s.io/v1alpha2"
NODES = 5
# How long one job may have some pods bound and others not: kube-scheduler binds the members
# of a gang one API call at a time once the whole gang has its nodes, which takes a moment
# on the shared machine, never as long as a job waits for another's nodes.
BINDING_WINDOW = 5.0


def served():
    return kubectl("get", "--raw", f"/apis/{API}", check=False).returncode == 0


def cluster_sh(env, *args):
    return subprocess.run([os.path.join(REPO, "deploy", "local", "cluster.sh"), *args], env=env,
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def gang_cluster(crds):
    """The session's cluster if it serves the API; else one of the module's own, made with
    TJC_NATIVE_GANG=1, whose kubeconfig every kubectl of the module uses meanwhile."""
    if served():
        yield
        return
    # Its gangs want GPUs: the cluster has no real nodes, which would only add to its start.
    env = dict(os.environ, TJC_CLUSTER=os.environ.get("TJC_CLUSTER", "trainjob") + "-gang", TJC_NATIVE_GANG="1",
               TJC_REAL_NODES="0")
    env.pop("TJC_KUBECONFIG", None)  # the session cluster's
    session_kubeconfig = os.environ["KUBECONFIG"]
    try:
        up = cluster_sh(env, "up")
        assert up.returncode == 0, f"cluster {env['TJC_CLUSTER']} did not come up:\n{up.stdout[-2000:]}{up.stderr[-2000:]}"
        os.environ["KUBECONFIG"] = cluster_sh(env, "kubeconfig").stdout.strip()
        if not served():
            pytest.skip(f"even a cluster made with TJC_NATIVE_GANG=1 does not serve {API} "
                        "(the Workload API of native gang scheduling, Kubernetes 1.36)")
        install_crds()
        yield
    finally:
        os.environ["KUBECONFIG"] = session_kubeconfig
        cluster_sh(env, "down")


@pytest.fixture(scope="module")
def gang_controller(gang_cluster, session_controller_aside):
    """A controller of this module's own, with the built-in admission off."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        shipped = f.read()
    # The admission section's own switch (other sections have an `enabled` too).
    section = shipped.find("\nadmission:\n")
    switch = shipped.find("\n  enabled: true\n", section)
    next_section = re.search(r"\n[A-Za-z]", shipped[section + 1:])
    assert section >= 0 and switch > section and (
        next_section is None or switch < section + 1 + next_section.start()), \
        "the shipped config's admission switch moved"
    path = os.path.join(REPO, "build", f"e2e-config-{uuid.uuid4().hex[:6]}.yaml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(shipped[:switch] + "\n  enabled: false\n" + shipped[switch + len("\n  enabled: true\n"):])
    c = Controller("--config", path).start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture
def gh200(gang_controller):
    names, busy = wait_for("the GH200 nodes to be free", lambda: (got := gh200_busy()) and not got[1] and got, timeout=240, interval=1)
    assert len(names) == 8, f"the scenario is sized for the local cluster's 8 GH200 nodes, not {names}"
    return names


class Placement:
    """Polls the namespace's pods in the background: per job, how long it had some pods
    placed (bound, running or done) while others waited unbound, and whether it was ever seen
    with every pod created and none bound while another job had all of its own."""

    def __init__(self, namespace, jobs):
        self.namespace, self.jobs = namespace, jobs
        self.partial_since = {j: None for j in jobs}
        self.longest_partial = {j: 0.0 for j in jobs}
        self.partial_seen = {j: [] for j in jobs}
        self.waited_whole = set()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping.is_set():
            try:
                items = kubectl_json("get", "pods", "-n", self.namespace)["items"]
            except AssertionError:  # the API server did not answer this once
                continue
            now = time.monotonic()
            mine = {j: [p for p in items if p["metadata"].get("labels", {}).get("trainer.kubeflow.org/trainjob-name") == j
                        and not p["metadata"].get("deletionTimestamp")] for j in self.jobs}
            # Placed: bound to a node, running or already done. Waiting: not bound yet.
            placed = {j: sum(1 for p in mine[j] if p["spec"].get("nodeName")) for j in self.jobs}
            waiting = {j: len(mine[j]) - placed[j] for j in self.jobs}
            for j in self.jobs:
                if placed[j] and waiting[j]:
                    self.partial_since[j] = self.partial_since[j] or now
                    self.longest_partial[j] = max(self.longest_partial[j], now - self.partial_since[j])
                    self.partial_seen[j].append(f"{placed[j]} placed, {waiting[j]} waiting")
                else:
                    self.partial_since[j] = None
                others = [o for o in self.jobs if o != j]
                if waiting[j] == NODES and any(placed[o] == NODES and waiting[o] == 0 for o in others):
                    self.waited_whole.add(j)
            time.sleep(0.2)

    def stop(self):
        self.stopping.set()
        self.thread.join()


def bound_when_it_fit(watch_events, later, earlier, room):
    """In the API server's order, no pod of `later` was bound while more than `room` pods of
    `earlier` still held their nodes."""
    phases, bound = {}, set()
    for e in watch_events:
        o = e["object"]
        name, job = o["metadata"]["name"], o["metadata"].get("labels", {}).get("trainer.kubeflow.org/trainjob-name")
        if job == earlier:
            phases[name] = "Gone" if e["type"] == "DELETED" else (o["status"].get("phase") if o["spec"].get("nodeName") else "Unbound")
        if job == later and o["spec"].get("nodeName") and name not in bound:
            holding = {n: ph for n, ph in phases.items() if ph not in ("Succeeded", "Failed", "Gone", "Unbound")}
            assert len(holding) <= room, f"{name} of {later} was bound while {earlier} still held {holding}"
            bound.add(name)
    return bound


def test_two_five_node_jobs_are_each_placed_whole_by_the_scheduler(gang_controller, namespace, gh200):
    assert "serves the Workload API" in gang_controller.log(), "the controller did not discover the Workload API"
    watch = Watch(namespace)
    placement = Placement(namespace, ("first", "second"))
    try:
        apply({"apiVersion": "v1", "kind": "List",
               "items": [trainjob("first", nodes=NODES, run_time="10s"), trainjob("second", nodes=NODES, run_time="10s")]},
              "-n", namespace)
        # Without a queue, every pod of both jobs exists at once; one job gets its 5 nodes,
        # and the other's 5 pods wait unbound although 3 nodes are free.
        wait_for("the 10 pods", lambda: len(kubectl_json("get", "pods", "-n", namespace)["items"]) == 2 * NODES, timeout=30)
        for job in ("first", "second"):
            for p in pods(namespace, job):
                assert p["spec"]["schedulingGroup"] == {"podGroupName": job}, p["spec"].get("schedulingGroup")
                assert "trainjob.flame.dev/node" not in p["metadata"].get("annotations", {}), "pinned without admission"
            uid = kubectl_json("get", "trainjob", job, "-n", namespace)["metadata"]["uid"]
            # Posted in the same batch as the pods, so it may come a moment after them.
            group = wait_for(f"the PodGroup of {job}", lambda: kubectl_json(
                "get", f"podgroups.{API.split('/')[0]}", "-n", namespace, "--field-selector", f"metadata.name={job}")["items"], timeout=15)[0]
            assert group["spec"]["schedulingPolicy"] == {"gang": {"minCount": NODES}}
            assert group["spec"]["podGroupTemplateRef"] == {"workload": {"workloadName": job, "podGroupTemplateName": "node"}}
            workload = kubectl_json("get", f"workloads.{API.split('/')[0]}", job, "-n", namespace)
            # (1.36 prints the template's unset schedulingConstraints as null.)
            assert [(t["name"], t["schedulingPolicy"]) for t in workload["spec"]["podGroupTemplates"]] == [
                ("node", {"gang": {"minCount": NODES}})]
            assert workload["spec"]["controllerRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "TrainJob", "name": job}
            for obj in (group, workload):
                owner = obj["metadata"]["ownerReferences"]
                assert [(o["kind"], o["name"], o["uid"], o.get("controller")) for o in owner] == [("TrainJob", job, uid, True)]

        # Both jobs finish, one after the other, each run whole.
        for job in ("first", "second"):
            wait_state(namespace, job, "Complete", timeout=120)
    finally:
        placement.stop()
        watch.stop()
    for job in ("first", "second"):
        assert placement.longest_partial[job] < BINDING_WINDOW, (
            f"{job} was partly placed for {placement.longest_partial[job]:.1f} s: {placement.partial_seen[job][-5:]}")
    # The job that lost the race was seen waiting with all its pods and none bound while the
    # other ran: what a plain scheduler never does with 3 nodes free.
    assert len(placement.waited_whole) == 1, f"no job was seen waiting whole: {placement.waited_whole}"
    later = placement.waited_whole.pop()
    earlier = "first" if later == "second" else "second"
    # It needs 5 of the 8 nodes: it may start once 2 pods of the other are done.
    assert len(bound_when_it_fit(watch.events(), later, earlier, room=3)) == NODES


def test_a_job_bigger_than_the_free_nodes_stays_unbound_whole_until_they_free_up(gang_controller, namespace, gh200):
    """A 6-node job next to a running 3-node one: 5 nodes are free, so the scheduler binds
    none of its pods (not 5 of 6) until the small job ends."""
    apply(trainjob("small", nodes=3, run_time="10s"), "-n", namespace)
    running(namespace, "small", 3, timeout=60)
    apply(trainjob("big", nodes=6, run_time="3s"), "-n", namespace)
    placement = Placement(namespace, ("big",))
    try:
        wait_for("the 6 pods of big", lambda: len(pods(namespace, "big")) == 6, timeout=30)
        small_pods = pods(namespace, "small")
        assert all(p["status"].get("phase") == "Running" for p in small_pods)
        # While small runs, big's pods stay unbound, all of them.
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and any(p["status"].get("phase") == "Running" for p in pods(namespace, "small")):
            assert not any(p["spec"].get("nodeName") for p in pods(namespace, "big")), "big was placed in part"
            time.sleep(0.3)
        wait_state(namespace, "big", "Complete", timeout=120)
    finally:
        placement.stop()
    assert placement.longest_partial["big"] < BINDING_WINDOW, placement.partial_seen["big"][-5:]


def test_the_ttl_deletes_the_jobs_podgroup_and_workload_with_its_pods(gang_controller, namespace, gh200):
    """ttlSecondsAfterFinished removes a finished job's children and keeps the TrainJob: with
    native gang scheduling its PodGroup and Workload are among them (their ownerReference
    alone would keep them as long as the TrainJob)."""
    training_runtime_with_ttl(namespace, 10)
    body = trainjob("brief", nodes=2, run_time="3s")
    body["spec"]["runtimeRef"] = {"name": "torch-ttl", "kind": "TrainingRuntime", "apiGroup": "trainer.kubeflow.org"}
    apply(body, "-n", namespace)
    group = API.split("/")[0]

    def exists(kind):
        return kubectl("get", f"{kind}.{group}", "brief", "-n", namespace, check=False).returncode == 0

    wait_state(namespace, "brief", "Complete", timeout=90)
    # Until the TTL the job keeps everything.
    assert exists("podgroups") and exists("workloads")
    assert len(pods(namespace, "brief")) == 2
    wait_for("the TTL to delete the pods", lambda: pods(namespace, "brief") == [], timeout=60)
    wait_for("the TTL to delete the PodGroup", lambda: not exists("podgroups"), timeout=30)
    wait_for("the TTL to delete the Workload", lambda: not exists("workloads"), timeout=30)
    job = wait_for("the cleanup to be recorded", lambda: (j := tj(namespace, "brief"))["status"].get("cleanupTime") and j)
    assert job["status"]["state"] == "Complete"
    msgs = [e["message"] for e in events(namespace, "brief", "CleanedUp")]
    assert msgs and "the job's pods, Service, PodGroup and Workload are deleted" in msgs[0], msgs
    # And nothing brings them back.
    time.sleep(3)
    assert not exists("podgroups") and not exists("workloads")
