"""Creates the API server refuses are visible on the TrainJob (reconcilers/refusal.h): state
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
    for pod in pods(namespace, EXAMPLE):
        assert pod["spec"]["serviceAccountName"] == "training-sa"
        assert pod["spec"]["nodeSelector"] == {"node-type": "training"}
        assert pod["spec"]["nodeName"] in training_nodes
    done = wait_state(namespace, EXAMPLE, "Complete", timeout=120)
    assert condition(done, "Complete")["status"] == "True"


def test_a_job_over_its_gpu_quota_is_pending_until_the_quota_is_raised(controller, namespace):
    apply({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpu"},
           "spec": {"hard": {"requests.nvidia.com/gpu": "2"}}}, "-n", namespace)
    wait_for("the quota to be counted",
             lambda: kubectl_json("get", "resourcequota", "gpu", "-n", namespace).get("status", {}).get("hard"))
    apply(trainjob("over", nodes=1, gpus=4), "-n", namespace)

    st = refused(namespace, "over", "Pending", "exceeded quota: gpu")
    assert "requests.nvidia.com/gpu=4" in st["message"]
    failed_create_event(namespace, "over", "exceeded quota: gpu")
    assert pods(namespace, "over") == []
    row = kubectl("get", "tj", "over", "-n", namespace, "--no-headers").stdout.split()
    assert row[1:3] == ["Pending", "FailedCreate"], row

    kubectl("patch", "resourcequota", "gpu", "-n", namespace, "--type", "merge",
            "-p", '{"spec":{"hard":{"requests.nvidia.com/gpu":"8"}}}')
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
