"""The runtime snapshot (reconcilers/runtime_snapshot.h), as Kubeflow Trainer v2.3 keeps it: a
job that has started runs on the runtime it started with. Its runtime edited, then deleted,
under it: the job's restarts still make its pods from the copy in the ConfigMap
<job>-runtime-snapshot, which it owns, while a job that starts after the edit runs on the
edited runtime.

The module runs its own controller with a one-second restart backoff; the session's
controller steps aside meanwhile."""

import pytest

from conftest import Controller, config_with_policy
from kube import (ATTEMPT, SIM, apply, by_rank, events, kubectl, kubectl_json, running, tj, trainjob, wait_for,
                  wait_state)

RUNTIME = "snap-rt"
SNAPSHOT_LABEL = "trainjob.flame.dev/runtime-snapshot"

POLICY = """failurePolicy:
  maxRestarts: 5
  restartBackoff: {initialSeconds: 1, maxSeconds: 2}
"""


@pytest.fixture(scope="module")
def snapshot_controller(session_controller_aside):
    c = Controller("--config", config_with_policy(POLICY)).start()
    yield c
    c.stop()


def runtime(namespace, version):
    """torch-gh200 as a TrainingRuntime of the namespace whose node container has the env
    RUNTIME_VERSION=version."""
    rt = kubectl_json("get", "clustertrainingruntime", "torch-gh200")
    spec = rt["spec"]
    node = next(j for j in spec["template"]["spec"]["replicatedJobs"] if j["name"] == "node")
    container = next(c for c in node["template"]["spec"]["template"]["spec"]["containers"] if c["name"] == "node")
    container["env"] = [e for e in container.get("env", []) if e["name"] != "RUNTIME_VERSION"]
    container["env"].append({"name": "RUNTIME_VERSION", "value": str(version)})
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": RUNTIME, "namespace": namespace, "labels": rt["metadata"]["labels"]},
        "spec": spec,
    }


def version_of(pod):
    node = next(c for c in pod["spec"]["containers"] if c["name"] == "node")
    return next(e["value"] for e in node.get("env", []) if e["name"] == "RUNTIME_VERSION")


def job(name):
    body = trainjob(name, nodes=2, gpus=1, runtime=RUNTIME, run_time="600s")
    body["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    return body


def fail_rank(namespace, pods_now, rank):
    victim = by_rank(pods_now, rank)["metadata"]["name"]
    kubectl("annotate", "pod", victim, "-n", namespace, f"{SIM}fail-exit-code=1")


def test_a_job_keeps_the_runtime_it_started_with(snapshot_controller, namespace):
    apply(runtime(namespace, 1), "-n", namespace)
    apply(job("kept"), "-n", namespace)
    first = running(namespace, "kept", 2, attempt=0)
    assert [version_of(p) for p in first] == ["1", "1"]

    # The copy: the job's own ConfigMap, found by its label, holding the runtime it started on.
    cm = wait_for("the snapshot", lambda: kubectl_json(
        "get", "configmap", "-n", namespace, "-l", f"{SNAPSHOT_LABEL}=true")["items"])
    assert [c["metadata"]["name"] for c in cm] == ["kept-runtime-snapshot"]
    owner = cm[0]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "TrainJob", "kept", tj(namespace, "kept")["metadata"]["uid"], True)
    assert '"name":"RUNTIME_VERSION","value":"1"' in cm[0]["data"]["runtime"]

    # The runtime edited under it: its restart makes its pods from the copy.
    apply(runtime(namespace, 2), "-n", namespace)
    fail_rank(namespace, first, 1)
    second = running(namespace, "kept", 2, attempt=1)
    assert [version_of(p) for p in second] == ["1", "1"]

    # A job that starts now runs on the edited runtime.
    apply(job("later"), "-n", namespace)
    later = running(namespace, "later", 2, attempt=0)
    assert [version_of(p) for p in later] == ["2", "2"]

    # The runtime deleted: the job still runs, and restarts, on its copy.
    kubectl("delete", "trainingruntime", RUNTIME, "-n", namespace)
    fail_rank(namespace, second, 0)
    third = running(namespace, "kept", 2, attempt=2)
    assert [version_of(p) for p in third] == ["1", "1"]
    assert tj(namespace, "kept")["status"]["state"] == "Running"
    assert not events(namespace, "kept", "RuntimeNotFound")

    # A job submitted now waits for the runtime, as without snapshots.
    apply(job("after"), "-n", namespace)
    pending = wait_state(namespace, "after", "Pending")
    assert pending["status"]["reason"] == "RuntimeNotFound", pending["status"]


def test_a_snapshot_deleted_under_a_running_job_is_made_again_at_its_next_start(snapshot_controller, namespace):
    apply(runtime(namespace, 1), "-n", namespace)
    apply(job("remade"), "-n", namespace)
    first = running(namespace, "remade", 2, attempt=0)
    wait_for("the snapshot", lambda: kubectl("get", "configmap", "remade-runtime-snapshot", "-n", namespace,
                                              check=False).returncode == 0)
    kubectl("delete", "configmap", "remade-runtime-snapshot", "-n", namespace)
    # Without its copy the job reads the live runtime, and the restart copies it again.
    apply(runtime(namespace, 3), "-n", namespace)
    fail_rank(namespace, first, 0)
    second = running(namespace, "remade", 2, attempt=1)
    assert [version_of(p) for p in second] == ["3", "3"]
    cm = wait_for("the snapshot again", lambda: kubectl_json(
        "get", "configmap", "remade-runtime-snapshot", "-n", namespace, check=False))
    assert '"name":"RUNTIME_VERSION","value":"3"' in cm["data"]["runtime"]
    assert ATTEMPT in second[0]["metadata"]["labels"]
