"""TrainJobs under real Kueue (docs/operators.md, "Kueue"): Kueue's webhook suspends a TrainJob of
a LocalQueue, Kueue admits it by quota and unsuspends it with the node selectors and
tolerations of the ResourceFlavor it chose in a runtimePatches entry of its own, and the
controller runs it with those on every pod; a job over quota waits in Kueue with no pod; a
higher WorkloadPriorityClass, or a namespace reclaiming the quota another one borrowed
through their cohort, preempts a running job, whose pods go and which resumes later.
Kueue's waitForPodsReady reads the job's jobsStatus (Jobs counted as JobSet counts them):
PodsReady once every pod is Ready, and a job whose pods cannot start is evicted at the
timeout and requeued. Topology-aware scheduling places a job's ranks in one domain of a
Topology of the nodes' block and rack labels, in Kueue's rank order; a job that fits no
domain of the level it requires waits in Kueue, without pods, and its status says why.

Needs a cluster that runs Kueue (TJC_KUEUE=1 deploy/local/cluster.sh up; the test command's
own cluster runs it whenever Kueue's build is in the cache); skipped on one that does not. Each test makes ClusterQueues of its own (in a cohort of its own), so no
quota is shared between tests; the ResourceFlavors, one per GPU class with the node labels
of its nodes, and the WorkloadPriorityClasses are the module's."""

import json
import time
import uuid

import pytest

from conftest import Controller
from kube import ATTEMPT, RANK, SIM, PodWatch, Watch, condition, kubectl, kubectl_json, pods, running, tj, trainjob, ts, wait_for, wait_state

QUEUE = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS = "kueue.x-k8s.io/priority-class"
KUEUE_MANAGER = "kueue.x-k8s.io/manager"
PRODUCT = "nvidia.com/gpu.product"
PRODUCTS = {"gh200": "NVIDIA-GH200-480GB", "h100": "NVIDIA-H100-80GB-HBM3"}
# A toleration only Kueue's flavors hand out (no node needs it), so a pod that carries it
# got it from Kueue, through the runtimePatches entry Kueue wrote.
FLAVOR_TOLERATION_KEY = "kueue.flame.dev/flavor"
SUFFIX = uuid.uuid4().hex[:6]
FLAVOR = {c: f"{c}-{SUFFIX}" for c in PRODUCTS}
LOW, HIGH = f"low-{SUFFIX}", f"high-{SUFFIX}"
# Kueue's waitForPodsReady as deploy/local/kueue.sh configures it.
PODS_READY_TIMEOUT = 30
REQUEUE_BACKOFF_BASE = 5
# The labels cluster.sh gives the GPU nodes: racks of 2 nodes, blocks of 2 racks.
BLOCK, RACK, HOSTNAME = "topology.flame.dev/block", "topology.flame.dev/rack", "kubernetes.io/hostname"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
TOPOLOGY_GATE = "kueue.x-k8s.io/topology"


def kueue_runs():
    return kubectl("get", "mutatingwebhookconfiguration", "kueue-mutating-webhook-configuration",
                   check=False).returncode == 0


def create(obj, namespace=None):
    """kubectl create of obj; returns the object as the API server stored it (after the
    mutating webhooks)."""
    ns = ["-n", namespace] if namespace else []
    return json.loads(kubectl("create", "-f", "-", "-o", "json", *ns, input=json.dumps(obj)).stdout)


def kueue_obj(kind, name, spec):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": {"name": name}, "spec": spec}


@pytest.fixture(scope="module")
def kueue(session_controller_aside):
    """On a cluster with Kueue: a controller of the module's own that watches Kueue's
    Workloads (--kueue), the ResourceFlavors and the WorkloadPriorityClasses."""
    if not kueue_runs():
        pytest.skip("the cluster does not run Kueue: TJC_KUEUE=1 scripts/test.sh e2e builds Kueue once and runs "
                    "these, or start a cluster with TJC_KUEUE=1 deploy/local/cluster.sh up")
    c = Controller("--kueue").start()
    for cls, product in PRODUCTS.items():
        create(kueue_obj("ResourceFlavor", FLAVOR[cls], {
            "nodeLabels": {PRODUCT: product},
            "tolerations": [{"key": FLAVOR_TOLERATION_KEY, "operator": "Equal", "value": cls, "effect": "NoSchedule"}],
        }))
    for name, value in ((LOW, 100), (HIGH, 1000)):
        create({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                "metadata": {"name": name}, "value": value, "description": "e2e"})
    try:
        yield
    finally:
        c.stop()
    kubectl("delete", "workloadpriorityclass", LOW, HIGH, "--wait=false", check=False)
    kubectl("delete", "resourceflavor", *FLAVOR.values(), "--wait=false", check=False)


@pytest.fixture
def queues(kueue, namespace):
    """Two namespaces (the test's and a second one), each with a LocalQueue "team" on a
    ClusterQueue of its own; both ClusterQueues are in one cohort, each with a nominal
    quota of 8 GPUs per GPU class, preemption of lower priorities and reclaim of what the
    other borrowed. Yields (namespace_a, namespace_b, cluster_queue_a, cluster_queue_b)."""
    other = "e2e-" + uuid.uuid4().hex[:8]
    kubectl("create", "namespace", other)
    test = uuid.uuid4().hex[:6]
    cqs = [f"team-a-{test}", f"team-b-{test}"]
    flavors = [{"name": FLAVOR[c], "resources": [
        {"name": "cpu", "nominalQuota": "1000"},
        {"name": "memory", "nominalQuota": "10Ti"},
        {"name": "nvidia.com/gpu", "nominalQuota": 8},
    ]} for c in PRODUCTS]
    for cq in cqs:
        create(kueue_obj("ClusterQueue", cq, {
            "cohortName": f"flame-{test}",
            "namespaceSelector": {},
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": flavors}],
        }))
    for ns, cq in zip((namespace, other), cqs):
        lq = kueue_obj("LocalQueue", "team", {"clusterQueue": cq})
        create(lq, ns)
    wait_for("the ClusterQueues to be active", lambda: all(
        (c := condition(kubectl_json("get", "clusterqueue", cq), "Active")) and c["status"] == "True" for cq in cqs),
        timeout=30)
    yield namespace, other, cqs[0], cqs[1]
    kubectl("delete", "namespace", other, "--wait=false", check=False)
    kubectl("delete", "clusterqueue", *cqs, "--wait=false", check=False)


def kueue_job(name, nodes, run_time, gpus=4, cls="gh200", priority=None, **spec):
    """A TrainJob of the LocalQueue "team" on the runtime torch-<cls>.

    What the simulated pods do (their run time) and where they go are a runtimePatches entry
    of the job's own, not podTemplateOverrides: Kueue updates the whole TrainJob when it
    admits or stops it, with Kubeflow's Go types of the release it is built with, which have
    no podTemplateOverrides (the update would drop them). The entry's node selector on the
    GPU class's product label is what lets Kueue choose the flavor of that class: Kueue
    computes the job's pod sets from the runtime and the TrainJob, and the GPU class the
    controller adds to the pods is not in them."""
    labels = {QUEUE: "team"}
    if priority:
        labels[PRIORITY_CLASS] = priority
    body = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "labels": labels},
        "spec": {
            "runtimeRef": {"name": f"torch-{cls}"},
            "trainer": {
                "numNodes": nodes,
                "command": ["torchrun", "/workspace/train.py"],
                "resourcesPerNode": {
                    "requests": {"nvidia.com/gpu": gpus, "cpu": "4"},
                    "limits": {"nvidia.com/gpu": gpus},
                },
            },
            "runtimePatches": [{
                "manager": "e2e.flame.dev/placement",
                "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{
                    "name": "node",
                    "template": {"spec": {"template": {
                        "metadata": {"annotations": {SIM + "run-time": run_time}},
                        "spec": {"nodeSelector": {PRODUCT: PRODUCTS[cls]}},
                    }}},
                }]}}},
            }],
        },
    }
    body["spec"].update(spec)
    return body


def workload(namespace, name):
    """Kueue's Workload of the TrainJob, or None."""
    for w in kubectl_json("get", "workloads.kueue.x-k8s.io", "-n", namespace)["items"]:
        if any(o["kind"] == "TrainJob" and o["name"] == name for o in w["metadata"].get("ownerReferences", [])):
            return w
    return None


def wl_condition(namespace, name, ctype, status="True"):
    w = workload(namespace, name)
    c = w and condition(w, ctype)
    return c if c and c["status"] == status else None


def admitted(namespace, name, timeout=60):
    """The job's Workload once Kueue has admitted it."""
    wait_for(f"Kueue to admit {name}", lambda: wl_condition(namespace, name, "Admitted"), timeout=timeout)
    return workload(namespace, name)


def kueue_patch(job):
    return next(p for p in job["spec"]["runtimePatches"] if p["manager"] == KUEUE_MANAGER)


def live_pods(namespace, name):
    return [p for p in pods(namespace, name) if not p["metadata"].get("deletionTimestamp")]


def created_after(watch, name, t):
    """The pods of the job the watch saw created before time t (Unix seconds)."""
    early = []
    for e in watch.events():
        o = e["object"]
        if e["type"] == "ADDED" and o["metadata"]["labels"].get("trainer.kubeflow.org/trainjob-name") == name:
            if ts(o["metadata"]["creationTimestamp"]) < t:
                early.append(o["metadata"]["name"])
    return early


def test_kueue_admits_by_quota_and_its_placement_reaches_every_pod(queues):
    a, _, cq_a, _ = queues
    watch = PodWatch(a)
    try:
        body = kueue_job("fits", nodes=2, run_time="15s")
        # An override of the older API, which Kueue's update of the job drops (docs/operators.md).
        body["spec"]["podTemplateOverrides"] = [{"targetJobs": [{"name": "node"}],
                                                 "metadata": {"annotations": {"e2e.flame.dev/override": "kept"}}}]
        job = create(body, a)
        assert job["spec"]["podTemplateOverrides"][0]["metadata"]["annotations"] == {"e2e.flame.dev/override": "kept"}
        # Kueue's webhook suspended it at creation and gave it Kueue's runtimePatches entry.
        assert job["spec"]["suspend"] is True
        assert kueue_patch(job)["trainingRuntimeSpec"]["template"]["metadata"]["labels"] == {QUEUE: "team"}
        w = admitted(a, "fits")
        got = running(a, "fits", 2, timeout=60)
    finally:
        watch.stop()
    admitted_at = ts(condition(w, "Admitted")["lastTransitionTime"])
    assert created_after(watch, "fits", admitted_at) == [], "a pod was created before Kueue admitted the job"
    # Kueue chose the gh200 flavor and wrote its node labels and tolerations into its entry.
    ps = w["status"]["admission"]["podSetAssignments"]
    assert [(p["name"], p["count"], p["flavors"]["nvidia.com/gpu"]) for p in ps] == [("node", 2, FLAVOR["gh200"])]
    assert w["status"]["admission"]["clusterQueue"] == cq_a
    job = tj(a, "fits")
    assert job["spec"]["suspend"] is False
    assert "podTemplateOverrides" not in job["spec"]
    assert all("e2e.flame.dev/override" not in p["metadata"].get("annotations", {}) for p in got)
    [rj] = kueue_patch(job)["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    assert rj["name"] == "node"
    kueue_spec = rj["template"]["spec"]["template"]["spec"]
    assert kueue_spec["nodeSelector"] == {PRODUCT: PRODUCTS["gh200"]}
    flavor_toleration = {"key": FLAVOR_TOLERATION_KEY, "operator": "Equal", "value": "gh200", "effect": "NoSchedule"}
    assert kueue_spec["tolerations"] == [flavor_toleration]
    # Every pod carries them, beside the controller's own placement for the GPU class.
    for p in got:
        assert p["spec"]["nodeSelector"][PRODUCT] == PRODUCTS["gh200"]
        assert flavor_toleration in p["spec"]["tolerations"], p["spec"]["tolerations"]
        assert p["spec"]["nodeName"].startswith("gh200-")
    # Kueue's view of the job (its pod sets) is what the controller created: the count of
    # pods that Kueue's selector (jobset.sigs.k8s.io/jobset-name) finds, and their requests.
    [podset] = w["spec"]["podSets"]
    assert podset["name"] == "node" and podset["count"] == 2
    selected = kubectl_json("get", "pods", "-n", a, "-l", "jobset.sigs.k8s.io/jobset-name=fits")["items"]
    assert len(selected) == podset["count"]
    [want] = [c for c in podset["template"]["spec"]["containers"] if c["name"] == "node"]
    for p in selected:
        [c] = [c for c in p["spec"]["containers"] if c["name"] == "node"]
        assert c["resources"]["requests"] == want["resources"]["requests"], (c["resources"], want["resources"])
    assert want["resources"]["requests"]["nvidia.com/gpu"] == "4"
    # The end: our Complete condition is what Kueue reads to finish the Workload.
    wait_state(a, "fits", "Complete", timeout=90)
    wait_for("the Workload to be Finished", lambda: wl_condition(a, "fits", "Finished"), timeout=60)


def test_a_job_over_quota_waits_in_kueue_without_pods_until_the_quota_allows(queues):
    a, b, _, _ = queues
    create(kueue_job("first", nodes=2, run_time="25s"), a)
    running(a, "first", 2, timeout=60)
    # 16 GPUs: its ClusterQueue's 8 and the 8 it may borrow from the other team's, of which
    # "first" holds 8 already.
    watch = PodWatch(a)
    try:
        create(kueue_job("second", nodes=4, run_time="5s"), a)
        pending = wait_for("Kueue to say why the job waits", lambda: wl_condition(a, "second", "QuotaReserved", "False"), timeout=30)
        assert "insufficient unused quota for nvidia.com/gpu in flavor " + FLAVOR["gh200"] in pending["message"], pending
        # Our status says why, in Kueue's words: the Workload's reason and message.
        st = wait_for("the job's status to give Kueue's reason", lambda: (st := tj(a, "second").get("status", {})).get("state") == "Queued" and st, timeout=30)
        pending = wl_condition(a, "second", "QuotaReserved", "False")
        assert st["reason"] == pending["reason"] == "Pending"
        assert st["message"] == "Kueue: " + pending["message"]
        assert condition({"status": st}, "Suspended")["status"] == "True"
        # It stays suspended, without a pod, while "first" holds the quota.
        for _ in range(10):
            j = tj(a, "second")
            assert j["spec"]["suspend"] is True and pods(a, "second") == []
            assert j["status"]["state"] == "Queued", j["status"]
            time.sleep(1)
        assert wl_condition(a, "first", "Admitted")
        # Once "first" completes its quota comes back, and "second" is admitted, borrowing
        # the other namespace's quota through the cohort.
        wait_state(a, "first", "Complete", timeout=90)
        w = admitted(a, "second", timeout=60)
        running(a, "second", 4, timeout=60)
    finally:
        watch.stop()
    assert created_after(watch, "second", ts(condition(w, "Admitted")["lastTransitionTime"])) == []
    [ps] = w["status"]["admission"]["podSetAssignments"]
    assert ps["count"] == 4 and ps["resourceUsage"]["nvidia.com/gpu"] == "16"
    wait_state(a, "second", "Complete", timeout=90)


def test_preemption_by_priority_suspends_the_lower_job_which_resumes_with_its_count_and_a_new_clock(queues):
    a, _, _, _ = queues
    create(kueue_job("low", nodes=4, run_time="20s", priority=LOW, activeDeadlineSeconds=900), a)
    first = running(a, "low", 4, timeout=60)
    before = tj(a, "low")["status"]
    assert before["restartCount"] == 0 and before["deadline"]
    assert ts(before["deadline"]) - ts(before["startTime"]) == 900
    time.sleep(2)  # so the resumed clock's start differs from the first one
    create(kueue_job("high", nodes=2, run_time="8s", priority=HIGH), a)
    # Kueue evicts "low" (it holds the quota "high" needs) by suspending it; the controller
    # deletes its pods, and only then does Kueue take its quota back and admit "high".
    evicted = wait_for("Kueue to preempt low", lambda: wl_condition(a, "low", "Evicted"), timeout=60)
    assert evicted["reason"] == "Preempted", evicted
    wait_for("low to be suspended", lambda: tj(a, "low")["spec"]["suspend"] is True, timeout=30)
    wait_for("low's pods to go", lambda: pods(a, "low") == [], timeout=60)
    # Held by Kueue until there is quota again, and its status says so.
    held = wait_for("low's status to say Kueue holds it", lambda: (st := tj(a, "low")["status"]).get("state") == "Queued" and st, timeout=30)
    assert held["restartCount"] == 0 and held["message"].startswith("Kueue: "), held
    running(a, "high", 2, timeout=60)
    # While Kueue holds it suspended, it has no pod at all.
    end = time.monotonic() + 90
    while tj(a, "high").get("status", {}).get("state") != "Complete":
        assert tj(a, "low")["spec"]["suspend"] is False or pods(a, "low") == []
        assert time.monotonic() < end, "high did not complete within 90 s"
        time.sleep(0.5)
    # Resumed: new pods of the same attempt (a preemption is no failure of the job), the
    # activeDeadlineSeconds clock started again at the resumption, as for a batch/v1 Job.
    again = running(a, "low", 4, timeout=90)
    after = tj(a, "low")["status"]
    assert after["restartCount"] == 0 and "infrastructureRestarts" not in after
    assert ts(after["startTime"]) > ts(before["startTime"])
    assert ts(after["deadline"]) - ts(after["startTime"]) == 900
    assert {p["metadata"]["uid"] for p in again}.isdisjoint(p["metadata"]["uid"] for p in first)
    assert sorted(p["metadata"]["labels"][RANK] for p in again) == ["0", "1", "2", "3"]
    wait_state(a, "low", "Complete", timeout=90)


def test_two_namespaces_share_a_cohort_and_the_lender_reclaims_its_quota(queues):
    a, b, cq_a, cq_b = queues
    # "borrower" in a takes 16 GPUs: a's 8 and b's 8, lent through the cohort.
    create(kueue_job("borrower", nodes=4, run_time="20s"), a)
    running(a, "borrower", 4, timeout=60)
    [ps] = workload(a, "borrower")["status"]["admission"]["podSetAssignments"]
    assert ps["resourceUsage"]["nvidia.com/gpu"] == "16"

    def gpu_usage():
        usage = kubectl_json("get", "clusterqueue", cq_a).get("status", {}).get("flavorsUsage", [])
        gh = [f for f in usage if f["name"] == FLAVOR["gh200"]]
        return [r for r in (gh[0]["resources"] if gh else []) if r["name"] == "nvidia.com/gpu"]

    # The ClusterQueue's status follows the admission a moment later.
    wait_for("a's ClusterQueue to show 8 GPUs borrowed", lambda: (u := gpu_usage()) and u[0]["total"] == "16" and u[0]["borrowed"] == "8", timeout=30)
    # b wants its own quota back: Kueue preempts the borrower, of equal priority.
    create(kueue_job("owner", nodes=2, run_time="8s"), b)
    evicted = wait_for("Kueue to reclaim b's quota", lambda: wl_condition(a, "borrower", "Evicted"), timeout=60)
    assert evicted["reason"] == "Preempted", evicted
    wait_for("the borrower's pods to go", lambda: pods(a, "borrower") == [], timeout=60)
    w = admitted(b, "owner")
    assert w["status"]["admission"]["clusterQueue"] == cq_b
    running(b, "owner", 2, timeout=60)
    wait_state(b, "owner", "Complete", timeout=90)
    running(a, "borrower", 4, timeout=90)
    wait_state(a, "borrower", "Complete", timeout=90)


def pod_template_patch(body):
    """The pod template of the job's own runtimePatches entry (kueue_job)."""
    [rj] = body["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]
    return rj["template"]["spec"]["template"]


def node_job(namespace, name):
    """status.jobsStatus[] of the node step, once the status has one."""
    def get():
        return next((j for j in tj(namespace, name).get("status", {}).get("jobsStatus") or [] if j["name"] == "node"), None)
    return wait_for(f"the jobsStatus of {name}", get, timeout=30)


def test_pods_ready_is_true_once_every_pod_is_ready_as_kueue_reads_jobs_status(queues):
    a, _, _, _ = queues
    create(kueue_job("ready", nodes=2, run_time="15s"), a)
    got = running(a, "ready", 2, timeout=60)
    c = wait_for("Kueue to set PodsReady", lambda: wl_condition(a, "ready", "PodsReady"), timeout=30)
    assert c["reason"] == "Started", c
    # Not before the last of the pods was Ready: Kueue counts the Job of the node step as
    # ready (1 of its 1 replica) only when all of its pods are, as JobSet does.
    last_ready = max(ts(condition(p, "Ready")["lastTransitionTime"]) for p in got if condition(p, "Ready"))
    assert all(condition(p, "Ready")["status"] == "True" for p in got)
    assert ts(c["lastTransitionTime"]) >= last_ready
    node = node_job(a, "ready")
    assert (node["ready"], node["active"], node["succeeded"], node["failed"]) == (1, 1, 0, 0), node
    # It runs to its end without an eviction: the pods were ready long before the timeout.
    wait_state(a, "ready", "Complete", timeout=90)
    wait_for("the Workload to be Finished", lambda: wl_condition(a, "ready", "Finished"), timeout=60)
    assert wl_condition(a, "ready", "Evicted") is None
    assert node_job(a, "ready")["succeeded"] == 1


def test_a_job_whose_pods_cannot_start_is_evicted_at_the_pods_ready_timeout_and_requeued(queues):
    a, _, _, _ = queues
    # Its pods need a node label no node has yet: they stay Pending, unschedulable.
    gate = f"e2e.flame.dev/pods-ready-{SUFFIX}"
    body = kueue_job("stuck", nodes=2, run_time="10s", activeDeadlineSeconds=900)
    pod_template_patch(body)["spec"]["nodeSelector"][gate] = "yes"
    gh200 = f"{PRODUCT}={PRODUCTS['gh200']}"
    jobs = Watch(a, "trainjobs")
    try:
        create(body, a)
        first_admission = admitted(a, "stuck")
        admitted_at = ts(condition(first_admission, "Admitted")["lastTransitionTime"])
        first = wait_for("the pods of stuck", lambda: len(p := pods(a, "stuck")) == 2 and p, timeout=30)
        assert all(p["status"].get("phase") == "Pending" and not p["spec"].get("nodeName") for p in first)
        before = wait_for("stuck's start time", lambda: (st := tj(a, "stuck").get("status", {})).get("startTime") and st, timeout=30)
        waiting = wait_for("Kueue to wait for the pods", lambda: wl_condition(a, "stuck", "PodsReady", "False"), timeout=30)
        assert waiting["reason"] == "WaitForStart", waiting
        assert node_job(a, "stuck")["ready"] == 0
        # At the timeout Kueue evicts it and suspends the job; the controller deletes its pods.
        evicted = wait_for("Kueue to evict stuck", lambda: wl_condition(a, "stuck", "Evicted"), timeout=PODS_READY_TIMEOUT + 30)
        assert evicted["reason"] == "PodsReadyTimeout", evicted
        assert "Exceeded the PodsReady timeout" in evicted["message"], evicted
        evicted_at = ts(evicted["lastTransitionTime"])
        assert PODS_READY_TIMEOUT <= evicted_at - admitted_at <= PODS_READY_TIMEOUT + 15, (admitted_at, evicted_at)
        requeue = workload(a, "stuck")["status"]["requeueState"]
        assert requeue["count"] == 1, requeue
        assert REQUEUE_BACKOFF_BASE - 1 <= ts(requeue["requeueAt"]) - evicted_at <= REQUEUE_BACKOFF_BASE + 2, requeue
        wait_for("stuck to be suspended", lambda: tj(a, "stuck")["spec"]["suspend"] is True, timeout=30)
        wait_for("stuck's pods to go", lambda: pods(a, "stuck") == [], timeout=60)
        # Now the nodes it needs are there: once requeued and admitted again, it starts.
        kubectl("label", "nodes", "-l", gh200, f"{gate}=yes", "--overwrite")
        again = running(a, "stuck", 2, timeout=60 + REQUEUE_BACKOFF_BASE)
        ready = wait_for("PodsReady after the requeue", lambda: wl_condition(a, "stuck", "PodsReady"), timeout=30)
        assert ready["reason"] == "Started", ready
        w = workload(a, "stuck")
        assert ts(condition(w, "Admitted")["lastTransitionTime"]) >= ts(requeue["requeueAt"])
        # An eviction is no failure of the job: the same attempt, no restart counted, and the
        # activeDeadlineSeconds clock started again at the resumption.
        after = wait_for("the new start time", lambda: (st := tj(a, "stuck")["status"]).get("deadline") and st.get("startTime")
                         and ts(st["startTime"]) > ts(before["startTime"]) and st, timeout=30)
        assert after["restartCount"] == 0 and "infrastructureRestarts" not in after, after
        assert ts(after["deadline"]) - ts(after["startTime"]) == 900
        assert {p["metadata"]["uid"] for p in again}.isdisjoint(p["metadata"]["uid"] for p in first)
        assert sorted(p["metadata"]["labels"][RANK] for p in again) == ["0", "1"]
        assert all(p["metadata"]["labels"][ATTEMPT] == "0" for p in again)
        wait_state(a, "stuck", "Complete", timeout=90)
    finally:
        jobs.stop()
        kubectl("label", "nodes", "-l", gh200, f"{gate}-", check=False)
    # Between the eviction and the new admission the job was Queued, in Kueue's words.
    held = [o["status"] for o in (e["object"] for e in jobs.events())
            if o["metadata"]["name"] == "stuck" and o.get("status", {}).get("state") == "Queued"]
    assert held, "stuck was never Queued after its eviction"
    assert any(st["reason"] == "Pending" and st["message"].startswith("Kueue: Exceeded the PodsReady timeout")
               for st in held), held


@pytest.fixture
def tas_queue(kueue, namespace):
    """A Topology of the nodes' block, rack and hostname labels, a ResourceFlavor of the GH200
    nodes on it, and a ClusterQueue of that flavor behind the LocalQueue "team" of the test's
    namespace. The flavor tolerates the GPU taint: Kueue places pods on the nodes whose
    taints the pod set and the flavor tolerate, and the GPU class's tolerations are the
    controller's, not in the pod sets. Yields the flavor's name."""
    test = uuid.uuid4().hex[:6]
    topology, flavor, cq = f"flame-{test}", f"gh200-tas-{test}", f"tas-{test}"
    create(kueue_obj("Topology", topology, {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": RACK}, {"nodeLabel": HOSTNAME}]}))
    create(kueue_obj("ResourceFlavor", flavor, {
        "nodeLabels": {PRODUCT: PRODUCTS["gh200"]},
        "topologyName": topology,
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }))
    create(kueue_obj("ClusterQueue", cq, {
        "namespaceSelector": {},
        "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [{"name": flavor, "resources": [
            {"name": "cpu", "nominalQuota": "1000"},
            {"name": "memory", "nominalQuota": "10Ti"},
            {"name": "nvidia.com/gpu", "nominalQuota": 32},
        ]}]}],
    }))
    create(kueue_obj("LocalQueue", "team", {"clusterQueue": cq}), namespace)
    wait_for("the TAS ClusterQueue to be active", lambda: (c := condition(kubectl_json("get", "clusterqueue", cq), "Active")) and c["status"] == "True", timeout=30)
    yield flavor
    kubectl("delete", "clusterqueue", cq, "--wait=false", check=False)
    kubectl("delete", "resourceflavor", flavor, "--wait=false", check=False)
    kubectl("delete", "topology", topology, "--wait=false", check=False)


def assigned_domains(ta):
    """A TopologyAssignment (levels and slices) as the node labels of each pod's domain, in
    Kueue's rank order: domain after domain, each as many times as its pod count."""
    out = []
    for sl in ta["slices"]:
        for i in range(sl["domainCount"]):
            labels = {}
            for level, v in zip(ta["levels"], sl["valuesPerLevel"]):
                if "universal" in v:
                    labels[level] = v["universal"]
                else:
                    ind = v["individual"]
                    labels[level] = ind.get("prefix", "") + ind["roots"][i] + ind.get("suffix", "")
            pc = sl["podCounts"]
            out += [labels] * (pc["universal"] if "universal" in pc else pc["individual"][i])
    return out


def test_topology_aware_scheduling_places_the_ranks_in_one_block_in_kueues_order(tas_queue, namespace):
    # A job outside Kueue holds one GH200 node, so one block has only 3 free nodes.
    kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(trainjob("busy", nodes=1, run_time="60s")))
    [busy] = running(namespace, "busy", 1, timeout=60)
    nodes = {n["metadata"]["name"]: n["metadata"]["labels"] for n in kubectl_json("get", "nodes")["items"]}
    busy_block = nodes[busy["spec"]["nodeName"]][BLOCK]
    watch = PodWatch(namespace)
    try:
        body = kueue_job("tas", nodes=4, run_time="15s")
        pod_template_patch(body)["metadata"]["annotations"][REQUIRED_TOPOLOGY] = BLOCK
        create(body, namespace)
        w = admitted(namespace, "tas")
        got = running(namespace, "tas", 4, timeout=60)
    finally:
        watch.stop()
    # Kueue read the request from the pod template, with the ranks of JobSet's labels.
    [ps] = w["spec"]["podSets"]
    req = ps["topologyRequest"]
    assert req["required"] == BLOCK, req
    assert req["podIndexLabel"] == "batch.kubernetes.io/job-completion-index", req
    assert req["subGroupIndexLabel"] == "jobset.sigs.k8s.io/job-index" and req["subGroupCount"] == 1, req
    [psa] = w["status"]["admission"]["podSetAssignments"]
    assert psa["flavors"]["nvidia.com/gpu"] == tas_queue
    domains = assigned_domains(psa["topologyAssignment"])
    assert len(domains) == 4, psa["topologyAssignment"]
    # Every pod was created behind Kueue's topology gate, with the workload's annotation and
    # the pod set's label that Kueue's ungater finds it by (from Kueue's runtimePatches entry).
    added = [e["object"] for e in watch.events() if e["type"] == "ADDED"
             and e["object"]["metadata"]["labels"].get("trainer.kubeflow.org/trainjob-name") == "tas"]
    assert len(added) == 4
    for p in added:
        assert p["spec"].get("schedulingGates") == [{"name": TOPOLOGY_GATE}], p["spec"].get("schedulingGates")
    # Ungated, each rank in the domain Kueue gave that rank, and all of them in one block:
    # not the busy node's.
    blocks = set()
    for rank, p in enumerate(got):
        assert p["metadata"]["labels"][RANK] == str(rank)
        assert not p["spec"].get("schedulingGates")
        assert p["metadata"]["annotations"]["kueue.x-k8s.io/workload"] == w["metadata"]["name"]
        assert p["metadata"]["labels"]["kueue.x-k8s.io/podset"] == "node"
        want = domains[rank]
        assert {k: p["spec"]["nodeSelector"].get(k) for k in want} == want, (rank, p["spec"]["nodeSelector"], want)
        labels = nodes[p["spec"]["nodeName"]]
        assert {k: labels.get(k) for k in want} == want, (rank, p["spec"]["nodeName"], want)
        blocks.add(labels[BLOCK])
    assert len(blocks) == 1 and busy_block not in blocks, (blocks, busy_block)
    assert busy["spec"]["nodeName"] not in {p["spec"]["nodeName"] for p in got}
    wait_state(namespace, "tas", "Complete", timeout=90)


def test_a_job_that_fits_no_single_rack_waits_in_kueue_with_its_reason_and_no_pod(tas_queue, namespace):
    # 4 whole nodes in one rack, of racks of 2: the quota allows it, the topology never.
    body = kueue_job("wide", nodes=4, run_time="5s")
    pod_template_patch(body)["metadata"]["annotations"][REQUIRED_TOPOLOGY] = RACK
    create(body, namespace)
    pending = wait_for("Kueue to say why the job waits", lambda: wl_condition(namespace, "wide", "QuotaReserved", "False"), timeout=30)
    assert "topology" in pending["message"], pending
    st = wait_for("the job's status to give Kueue's reason", lambda: (st := tj(namespace, "wide").get("status", {})).get("state") == "Queued" and st, timeout=30)
    pending = wl_condition(namespace, "wide", "QuotaReserved", "False")
    assert st["message"] == "Kueue: " + pending["message"], (st, pending)
    for _ in range(5):
        assert tj(namespace, "wide")["spec"]["suspend"] is True and pods(namespace, "wide") == []
        time.sleep(1)
