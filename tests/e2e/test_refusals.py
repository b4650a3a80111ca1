"""Creates the API server refuses are visible on the TrainJob (reconcilers/plan/refusal.h): state
Pending with reason FailedCreate and the API's message, a Warning event FailedCreate, and
retries until the cause is fixed; a pod the API finds invalid fails the job. Run with
Kubeflow Trainer's own example 02-runtime-patches, unchanged, from its Go module."""

import os

import pytest

from kube import apply, condition, events, kubectl, kubectl_json, pods, tj, trainjob, wait_for, wait_state

EXAMPLE = "runtime-patches-example"


@pytest.fixture
def training_nodes():
    """The example's nodeSelector (node-type: training) on the two CPU nodes, taken away
    afterwards: the example asks for nodes labelled so."""
    nodes = ["cpu-0", "cpu-1"]
    kubectl("label", "node", *nodes, "node-type=training", "--overwrite")
    yield nodes
    kubectl("label", "node", *nodes, "node-type-", check=False)


def refused(namespace, name, state, text):
    """The job once its status says the API refused its create with text in the message."""
    def ok():
        st = tj(namespace, name).get("status", {})
        return st.get("state") == state and st.get("reason") == "FailedCreate" and text in st.get("message", "") and st

    return wait_for(f"{name} to be {state}/FailedCreate ({text})", ok, timeout=60)


def failed_create_event(namespace, name, text):
    def ok():
        ev = [e for e in events(namespace, name, "FailedCreate") if text in e["message"]]
        return ev and ev[0]

    ev = wait_for(f"a FailedCreate event of {name}", ok, timeout=30)
    assert ev["type"] == "Warning"
    assert ev["message"].startswith("Error creating: ")
    return ev


def test_runtime_patches_example_waits_for_its_service_account_then_runs(controller, namespace, kubeflow_module,
                                                                         training_nodes):
    example = os.path.join(kubeflow_module, "examples", "yaml", "02-runtime-patches.yaml")
    kubectl("apply", "-n", namespace, "-f", example)

    st = refused(namespace, EXAMPLE, "Pending", 'serviceaccount "training-sa" not found')
    assert st["message"].startswith("pods ")
    assert not condition(tj(namespace, EXAMPLE), "Failed")
    assert "startTime" not in st or st["startTime"] is None
    failed_create_event(namespace, EXAMPLE, "training-sa")
    assert pods(namespace, EXAMPLE) == []
    # The controller keeps trying: the event's count grows.
    wait_for("the FailedCreate event to repeat",
             lambda: any(e.get("count", 1) >= 2 for e in events(namespace, EXAMPLE, "FailedCreate")), timeout=60)

    kubectl("create", "serviceaccount", "training-sa", "-n", namespace)
    wait_for("the example's 2 pods", lambda: len(p := pods(namespace, EXAMPLE)) == 2 and p, timeout=60)
    wait_for("the pods to be scheduled", lambda: all(p["spec"].get("nodeName") for p in pods(namespace, EXAMPLE)))
    for pod in pods(namespace, EXAMPLE):
        assert pod["spec"]["serviceAccountName"] == "training-sa"
        assert pod["spec"]["nodeSelector"] == {"node-type": "training"}
        assert pod["spec"]["nodeName"] in training_nodes
        # The patch's JobSet metadata goes on the objects that stand for the JobSet.
        assert pod["metadata"]["labels"]["team"] == "ml-platform"
        assert pod["metadata"]["labels"]["cost-center"] == "research"
        assert pod["metadata"]["annotations"]["prometheus.io/scrape"] == "true"
        assert pod["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] == EXAMPLE
    svc = kubectl_json("get", "service", EXAMPLE, "-n", namespace)
    assert svc["metadata"]["labels"]["team"] == "ml-platform"
    assert svc["metadata"]["annotations"]["prometheus.io/port"] == "8080"
    done = wait_state(namespace, EXAMPLE, "Complete", timeout=120)
    assert condition(done, "Complete")["status"] == "True"


def test_a_create_refused_by_a_quota_waits_until_the_quota_is_raised(controller, namespace):
    # The admission holds back a gang its ResourceQuotas cannot hold (test_admission.py), but
    # not what it does not read: here a LimitRange gives the container a memory request the
    # TrainJob does not ask for, and the quota on memory refuses the pod at its create.
    apply({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "memory"},
           "spec": {"limits": [{"type": "Container", "defaultRequest": {"memory": "100Mi"}, "default": {"memory": "100Mi"}}]}},
          "-n", namespace)
    apply({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "mem"},
           "spec": {"hard": {"requests.memory": "50Mi"}}}, "-n", namespace)
    wait_for("the quota to be counted",
             lambda: kubectl_json("get", "resourcequota", "mem", "-n", namespace).get("status", {}).get("hard"))
    apply(trainjob("over", nodes=1, gpus=4), "-n", namespace)

    st = refused(namespace, "over", "Pending", "exceeded quota: mem")
    assert "requests.memory=100Mi" in st["message"], st["message"]
    failed_create_event(namespace, "over", "exceeded quota: mem")
    assert pods(namespace, "over") == []
    row = kubectl("get", "tj", "over", "-n", namespace, "--no-headers").stdout.split()
    assert row[1:3] == ["Pending", "FailedCreate"], row

    kubectl("patch", "resourcequota", "mem", "-n", namespace, "--type", "merge",
            "-p", '{"spec":{"hard":{"requests.memory":"1Gi"}}}')
    wait_for("the job's pod", lambda: len(pods(namespace, "over")) == 1, timeout=60)
    done = wait_state(namespace, "over", "Complete", timeout=90)
    assert done["status"]["reason"] != "FailedCreate"


def test_a_pod_the_api_finds_invalid_fails_the_job(controller, namespace):
    job = trainjob("invalid", nodes=1, gpus=4)
    job["spec"]["podTemplateOverrides"].append(
        {"targetJobs": [{"name": "node"}], "spec": {"volumes": [{"name": "Not_A_DNS_Label", "emptyDir": {}}]}})
    apply(job, "-n", namespace)

    st = refused(namespace, "invalid", "Failed", "is invalid")
    assert "Not_A_DNS_Label" in st["message"]
    failed = wait_for("the Failed condition", lambda: condition(tj(namespace, "invalid"), "Failed"), timeout=30)
    assert failed["status"] == "True" and failed["reason"] == "FailedCreate"
    failed_create_event(namespace, "invalid", "is invalid")
    assert pods(namespace, "invalid") == []


def test_spec_labels_and_annotations_reach_the_pods_and_the_service(controller, namespace):
    job = trainjob("labelled", nodes=2, gpus=4, labels={"team": "vision", "trainer.kubeflow.org/trainjob-name": "x"})
    job["spec"]["annotations"] = {"owner": "alice"}
    apply(job, "-n", namespace)
    got = wait_for("the 2 pods", lambda: len(p := pods(namespace, "labelled")) == 2 and p, timeout=60)
    for pod in got:
        assert pod["metadata"]["labels"]["team"] == "vision"
        assert pod["metadata"]["labels"]["trainer.kubeflow.org/trainjob-name"] == "labelled"
        assert pod["metadata"]["annotations"]["owner"] == "alice"
    svc = wait_for("the Service", lambda: kubectl_json("get", "service", "labelled", "-n", namespace, check=False))
    assert svc["metadata"]["labels"]["team"] == "vision"
    assert svc["metadata"]["annotations"]["owner"] == "alice"
    wait_state(namespace, "labelled", "Complete", timeout=90)


RUNTIME_NO_RESTARTS = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainingRuntime",
    "metadata": {"name": "no-restarts", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {"spec": {
            "failurePolicy": {"maxRestarts": 0},
            "replicatedJobs": [{"name": "node", "template": {
                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "pytorch/pytorch"}]}}}}}],
        }},
    },
}


def test_a_runtime_failure_policy_of_no_restarts_makes_the_first_failure_final(controller, namespace):
    apply(RUNTIME_NO_RESTARTS, "-n", namespace)
    job = trainjob("once", nodes=1, gpus=0, runtime="no-restarts",
                   pod_annotations={"sim.trainjob.flame.dev/fail-exit-code": "3"})
    job["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    apply(job, "-n", namespace)
    done = wait_state(namespace, "once", "Failed", timeout=90)
    assert done["status"]["reason"] == "ReachedMaxRestarts", done["status"]
    assert done["status"]["restartCount"] == 0
    assert "restart budget of 0" in done["status"]["message"]


def test_kubeflows_volcano_example_is_refused_naming_the_field(controller, namespace, kubeflow_module):
    example = os.path.join(kubeflow_module, "examples", "yaml", "04-volcano-integration.yaml")
    kubectl("apply", "-n", namespace, "-f", example)
    try:
        done = wait_state(namespace, "volcano-example", "Failed", timeout=60)
        st = done["status"]
        assert st["reason"] == "UnsupportedRuntime"
        assert st["message"].startswith("ClusterTrainingRuntime torch-distributed-volcano: spec.podGroupPolicy.volcano is "
                                        "not supported"), st["message"]
        assert condition(done, "Failed")["reason"] == "UnsupportedRuntime"
        ev = wait_for("the Failed event", lambda: events(namespace, "volcano-example", "Failed"), timeout=30)
        assert ev[0]["type"] == "Warning" and "spec.podGroupPolicy.volcano" in ev[0]["message"]
        assert pods(namespace, "volcano-example") == []
    finally:
        kubectl("delete", "clustertrainingruntime", "torch-distributed-volcano", "--wait=false", check=False)


def test_a_pod_security_refusal_is_pending_until_the_namespace_allows_the_pods(controller, namespace):
    kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted")
    apply(trainjob("restricted", nodes=1, gpus=4), "-n", namespace)

    st = refused(namespace, "restricted", "Pending", "violates PodSecurity")
    assert '"restricted:latest"' in st["message"]
    failed_create_event(namespace, "restricted", "violates PodSecurity")
    assert pods(namespace, "restricted") == []

    kubectl("label", "namespace", namespace, "pod-security.kubernetes.io/enforce-")
    wait_for("the job's pod", lambda: len(pods(namespace, "restricted")) == 1, timeout=60)
    wait_state(namespace, "restricted", "Complete", timeout=90)
