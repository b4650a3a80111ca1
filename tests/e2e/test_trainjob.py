"""The reconciler against the real control plane: TrainJobs applied with kubectl become one
pod per node, placed by the real scheduler on the right GPU nodes, with the torchrun wiring,
and their status follows the pods KWOK runs (DESIGN.md section 4)."""

import time

from conftest import Controller
from kube import SIM, apply, condition, kubectl, kubectl_json, metric, pods, tj, trainjob, wait_for, wait_state

def env_of(pod):
    return {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}


def test_four_node_job_lands_on_four_gh200_nodes_and_completes(controller, namespace):
    apply(trainjob("gang", nodes=4, gpus=4, run_time="6s"), "-n", namespace)
    running = wait_for("4 running pods", lambda: len(p := [x for x in pods(namespace, "gang") if x["status"].get("phase") == "Running"]) == 4 and p)
    job = tj(namespace, "gang")
    nodes = set()
    for pod in running:
        rank = int(pod["metadata"]["labels"]["trainjob.flame.dev/rank"])
        node = kubectl_json("get", "node", pod["spec"]["nodeName"])
        nodes.add(node["metadata"]["name"])
        assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-GH200-480GB"
        assert node["metadata"]["labels"]["kubernetes.io/arch"] == "arm64"
        c = pod["spec"]["containers"][0]
        assert c["name"] == "node"
        assert c["resources"]["requests"]["nvidia.com/gpu"] == "4"
        assert c["resources"]["limits"]["nvidia.com/gpu"] == "4"
        terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        for term in terms:
            exprs = {(e["key"], e["operator"], tuple(e.get("values", []))) for e in term["matchExpressions"]}
            assert ("kubernetes.io/arch", "In", ("arm64",)) in exprs
            assert ("nvidia.com/gpu.product", "In", ("NVIDIA-GH200-480GB",)) in exprs
        assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"]["tolerations"]
        assert pod["spec"]["hostname"] == f"gang-node-0-{rank}"
        assert pod["spec"]["subdomain"] == "gang"
        assert pod["spec"]["restartPolicy"] == "Never"
        labels = pod["metadata"]["labels"]
        assert labels["trainer.kubeflow.org/trainjob-name"] == "gang"
        assert labels["jobset.sigs.k8s.io/jobset-name"] == "gang"
        assert labels["jobset.sigs.k8s.io/replicatedjob-name"] == "node"
        assert labels["batch.kubernetes.io/job-completion-index"] == str(rank)
        owner = pod["metadata"]["ownerReferences"][0]
        assert owner["kind"] == "TrainJob" and owner["uid"] == job["metadata"]["uid"]
        assert owner["controller"] is True and owner["blockOwnerDeletion"] is True
        env = env_of(pod)
        assert env["PET_NNODES"] == "4"
        assert env["PET_NPROC_PER_NODE"] == "4"
        assert env["PET_NODE_RANK"] == str(rank)
        assert env["PET_MASTER_ADDR"] == "gang-node-0-0.gang"
        assert env["PET_MASTER_PORT"] == "29500"
        assert env["MASTER_ADDR"] == "gang-node-0-0.gang"
        assert env["MASTER_PORT"] == "29500"
        assert env["WORLD_SIZE"] == "16"
        assert env["NODE_RANK"] == str(rank)
        assert env["RANK"] == str(4 * rank), "the global rank of the node's first process"
        assert env["LOCAL_WORLD_SIZE"] == "4"
    assert len(nodes) == 4, "one pod per node"
    svc = kubectl_json("get", "service", "gang", "-n", namespace)
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["spec"]["selector"] == {"jobset.sigs.k8s.io/jobset-name": "gang"}

    done = wait_state(namespace, "gang", "Complete")
    c = condition(done, "Complete")
    assert c["status"] == "True"
    assert [x["type"] for x in done["status"]["conditions"]] == ["Complete"]
    assert done["status"]["jobsStatus"] == [
        # The node step is one Job of 4 pods, counted as JobSet counts it.
        {"name": "node", "active": 0, "ready": 0, "succeeded": 1, "failed": 0, "suspended": 0}
    ]
    assert done["status"]["observedGeneration"] == done["metadata"]["generation"]
    assert done["status"]["startTime"] and done["status"]["completionTime"]
    # The pods stay after the end: their logs are what the author reads next.
    assert len(pods(namespace, "gang")) == 4
    events = kubectl_json("get", "events", "-n", namespace, "--field-selector", "involvedObject.name=gang")["items"]
    reasons = {e["reason"] for e in events}
    assert {"Created", "Running", "Completed"} <= reasons
    for e in events:
        assert e["firstTimestamp"] and e["lastTimestamp"] and e["count"] >= 1
        assert e["involvedObject"]["kind"] == "TrainJob"


def test_job_asking_for_more_gpus_than_any_node_has_fails_at_once(controller, namespace):
    apply(trainjob("too-big", nodes=1, gpus=5), "-n", namespace)
    job = wait_state(namespace, "too-big", "Failed", timeout=30)
    # No GH200 node has 5 GPUs: the queue says so at once (NeverFits) instead of leaving
    # a pod Pending forever.
    c = condition(job, "Failed")
    assert c["status"] == "True" and c["reason"] == "NeverFits", c
    assert "never fits" in c["message"] and "5 GPUs" in c["message"], c["message"]
    assert pods(namespace, "too-big") == []


def test_failed_worker_is_replaced_on_another_node_and_the_job_completes(controller, namespace):
    apply(trainjob("phoenix", nodes=2, gpus=4, run_time="15s"), "-n", namespace)
    first = wait_for("2 running pods", lambda: len(p := [x for x in pods(namespace, "phoenix") if x["status"].get("phase") == "Running"]) == 2 and p)
    victim = next(p for p in first if p["metadata"]["labels"]["trainjob.flame.dev/rank"] == "1")
    failed_node = victim["spec"]["nodeName"]
    kubectl("annotate", "pod", victim["metadata"]["name"], "-n", namespace, SIM + "fail-exit-code=1")

    def replaced():
        now = [p for p in pods(namespace, "phoenix") if p["metadata"]["labels"]["trainjob.flame.dev/attempt"] == "1"]
        return len(now) == 2 and all(p.get("spec", {}).get("nodeName") for p in now) and now

    second = wait_for("the gang to be replaced", replaced, timeout=120)
    rank1 = next(p for p in second if p["metadata"]["labels"]["trainjob.flame.dev/rank"] == "1")
    assert rank1["spec"]["nodeName"] != failed_node
    job = tj(namespace, "phoenix")
    assert job["status"]["restartCount"] == 1
    failure = job["status"]["lastFailure"]
    assert failure["rank"] == 1 and failure["node"] == failed_node and failure["exitCode"] == 1
    # The old attempt's pods are gone, so the SDK sees one pod per rank.
    assert all(p["metadata"]["labels"]["trainjob.flame.dev/attempt"] == "1" for p in pods(namespace, "phoenix"))
    wait_state(namespace, "phoenix", "Complete", timeout=120)


def test_job_whose_restart_budget_is_spent_ends_failed(controller, namespace):
    body = trainjob(
        "doomed",
        nodes=1,
        gpus=1,
        run_time="60s",
        pod_annotations={SIM + "fail-exit-code": "3", SIM + "fail-after": "1s"},
        annotations={"trainjob.flame.dev/max-restarts": "1"},
    )
    apply(body, "-n", namespace)
    job = wait_state(namespace, "doomed", "Failed", timeout=120)
    assert job["status"]["restartCount"] == 1
    c = condition(job, "Failed")
    assert c["status"] == "True" and c["reason"] == "ReachedMaxRestarts"
    for word in ("rank 0", "exit code 3"):
        assert word in c["message"], c["message"]
    assert job["status"]["lastFailure"]["node"] in c["message"]
    assert [x["type"] for x in job["status"]["conditions"]] == ["Failed"]


def test_suspend_and_resume(controller, namespace):
    apply(trainjob("sleeper", nodes=2, gpus=4, run_time="30s", suspend=True), "-n", namespace)
    job = wait_state(namespace, "sleeper", "Suspended")
    assert condition(job, "Suspended")["status"] == "True"
    assert pods(namespace, "sleeper") == []
    kubectl("patch", "trainjob", "sleeper", "-n", namespace, "--type=merge", "-p", '{"spec":{"suspend":false}}')
    wait_for("2 running pods after resume", lambda: len([x for x in pods(namespace, "sleeper") if x["status"].get("phase") == "Running"]) == 2)
    job = wait_state(namespace, "sleeper", "Running")
    # Resume removes the condition rather than setting it False (Kubeflow's SDK would read
    # any condition as final).
    assert condition(job, "Suspended") is None
    kubectl("patch", "trainjob", "sleeper", "-n", namespace, "--type=merge", "-p", '{"spec":{"suspend":true}}')
    wait_for("the pods to be deleted on suspend", lambda: pods(namespace, "sleeper") == [])
    assert condition(wait_state(namespace, "sleeper", "Suspended"), "Suspended")["status"] == "True"


def test_deleting_a_trainjob_removes_its_pods_and_service(controller, namespace):
    apply(trainjob("brief", nodes=2, gpus=4, run_time="60s"), "-n", namespace)
    wait_for("2 pods", lambda: len(pods(namespace, "brief")) == 2)
    kubectl("delete", "trainjob", "brief", "-n", namespace)
    wait_for("garbage collection of the pods", lambda: pods(namespace, "brief") == [], timeout=90)
    wait_for(
        "garbage collection of the service",
        lambda: kubectl("get", "service", "brief", "-n", namespace, check=False).returncode != 0,
        timeout=90,
    )


def test_bad_jobs_fail_with_a_reason_while_good_ones_run(controller, namespace):
    # A runtime without a `node` job, in the job's namespace.
    apply(
        {
            "apiVersion": "trainer.kubeflow.org/v1alpha1",
            "kind": "TrainingRuntime",
            "metadata": {"name": "no-node", "namespace": namespace},
            "spec": {
                "mlPolicy": {"numNodes": 1},
                "template": {"spec": {"replicatedJobs": [{"name": "launcher", "template": {"spec": {"template": {"spec": {"containers": [{"name": "launcher", "image": "busybox"}]}}}}}]}},
            },
        }
    )
    bad = trainjob("broken", runtime="no-node")
    bad["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    apply(bad, "-n", namespace)
    apply(trainjob("missing-runtime", runtime="torch-nonexistent"), "-n", namespace)
    apply(trainjob("fine", nodes=1, gpus=1), "-n", namespace)
    # The schema accepts any non-negative quantity (it cannot check GPUs, see the CRD), so
    # the controller fails a fractional GPU count instead of creating pods the API refuses.
    apply(trainjob("half-gpu", gpus="0.5"), "-n", namespace)

    failed = wait_state(namespace, "broken", "Failed")
    c = condition(failed, "Failed")
    assert c["status"] == "True" and c["reason"] and "node" in c["message"]
    warnings = kubectl_json("get", "events", "-n", namespace, "--field-selector", "involvedObject.name=broken,type=Warning")["items"]
    assert warnings, "a Warning event says why"
    assert pods(namespace, "broken") == []
    c = condition(wait_state(namespace, "half-gpu", "Failed"), "Failed")
    assert c["reason"] == "InvalidSpec"
    assert 'nvidia.com/gpu "0.5" is not a whole number of GPUs' in c["message"]
    assert pods(namespace, "half-gpu") == []

    def waits_for_runtime():
        s = tj(namespace, "missing-runtime").get("status", {})
        return s.get("state") == "Pending" and s.get("reason") == "RuntimeNotFound" and s

    wait_for("the job without a runtime to wait for it", waits_for_runtime)
    wait_state(namespace, "fine", "Complete")

    # The runtime appears: the waiting job starts by itself.
    rt = kubectl_json("get", "clustertrainingruntime", "torch-gh200")
    for k in ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"):
        rt["metadata"].pop(k, None)
    rt["metadata"]["name"] = "torch-nonexistent"
    rt["metadata"]["labels"]["trainjob.flame.dev/gpu-class"] = "gh200"
    rt["metadata"].get("annotations", {}).pop("kubectl.kubernetes.io/last-applied-configuration", None)
    apply(rt)
    try:
        wait_state(namespace, "missing-runtime", "Complete")
    finally:
        kubectl("delete", "clustertrainingruntime", "torch-nonexistent", check=False)


def test_controller_killed_mid_expansion_leaves_no_duplicate_or_orphan(controller, namespace):
    """SIGKILL halfway through creating 16 pods, then a restart: exactly one pod per rank.
    The session's controller steps aside meanwhile, so that only the killed one writes."""
    controller.stop()
    try:
        expand_kill_restart(namespace)
    finally:
        controller.start()


def expand_kill_restart(namespace):
    # A client-side limit of 4 requests a second makes the expansion take seconds.
    slow = Controller("--kube-api-qps", "4", "--kube-api-burst", "1").start()
    body = trainjob("wide", nodes=16, gpus=0, runtime="torch-distributed", run_time="10m")
    body["spec"]["trainer"]["resourcesPerNode"] = {"requests": {"cpu": "100m"}}
    apply(body, "-n", namespace)
    try:
        wait_for("the expansion to begin", lambda: 1 <= len(pods(namespace, "wide")), timeout=60, interval=0.1)
    finally:
        slow.kill()
    partial = len(pods(namespace, "wide"))
    assert partial < 16, "the kill landed after the expansion: slow the controller further"
    again = Controller().start()
    try:
        wait_for("16 pods", lambda: len(pods(namespace, "wide")) == 16, timeout=60)
        time.sleep(2)  # anything extra the restarted controller might wrongly create
        now = pods(namespace, "wide")
        ranks = sorted(int(p["metadata"]["labels"]["trainjob.flame.dev/rank"]) for p in now)
        assert ranks == list(range(16))
        uid = tj(namespace, "wide")["metadata"]["uid"]
        assert all(p["metadata"]["ownerReferences"][0]["uid"] == uid for p in now)
        # The headless Service, which the killed controller may not have reached (it
        # comes after the pods), exists too.
        wait_for("the Service", lambda: kubectl("get", "service", "wide", "-n", namespace,
                                                check=False).returncode == 0, timeout=30)
        svc = kubectl_json("get", "service", "wide", "-n", namespace)
        assert svc["spec"]["clusterIP"] == "None"
        assert svc["metadata"]["ownerReferences"][0]["uid"] == uid
    finally:
        again.stop()


def test_metrics_count_reconciles(controller, namespace):
    before = controller.metrics()
    apply(trainjob("counted", nodes=2, gpus=4), "-n", namespace)
    wait_state(namespace, "counted", "Complete")
    after = controller.metrics()
    assert metric(after, "trainjob_pods_created_total") - metric(before, "trainjob_pods_created_total") == 2
    ok = 'controller_runtime_reconcile_total{controller="trainjob",result="success"}'
    assert metric(after, ok) > metric(before, ok)
    count = 'controller_runtime_reconcile_time_seconds_count{controller="trainjob"}'
    assert metric(after, count) > metric(before, count)
    assert metric(after, 'workqueue_depth{controller="trainjob",name="trainjob",priority=""}') >= 0


def test_job_managed_by_another_controller_is_left_alone(controller, namespace):
    apply(trainjob("elsewhere", managedBy="kueue.x-k8s.io/multikueue"), "-n", namespace)
    apply(trainjob("here", nodes=1, gpus=1), "-n", namespace)
    # Once the controller has finished a job of the same namespace, it has seen the other.
    wait_state(namespace, "here", "Complete")
    assert pods(namespace, "elsewhere") == []
    assert not tj(namespace, "elsewhere").get("status")


def test_active_deadline_fails_a_job_that_runs_too_long(controller, namespace):
    apply(trainjob("slowpoke", nodes=2, gpus=4, run_time="10m", activeDeadlineSeconds=5), "-n", namespace)
    job = wait_state(namespace, "slowpoke", "Failed", timeout=60)
    c = condition(job, "Failed")
    assert c["status"] == "True" and c["reason"] == "DeadlineExceeded"
    # The pods that were still running are stopped; what is left keeps its logs.
    wait_for("the running pods to stop", lambda: not [p for p in pods(namespace, "slowpoke") if p["status"].get("phase") == "Running" and not p["metadata"].get("deletionTimestamp")])
