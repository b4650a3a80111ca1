"""Failures a person can read, and finished jobs cleaned up (DESIGN.md section 4, "Policy";
reconcilers/policy/retention.h): a worker that crashes leaves its termination message in the status
and the events, its pod stays for `kubectl logs` while the next attempt runs (without the
labels by which Kubeflow's SDK and the Service find a rank), and a job's pods and Service go
once its TTL has passed, while the TrainJob stays with its status.

The simulated kubelet serves a pod's log from a file named by a KWOK `Logs` object (the
cluster enables that CRD), and fails a pod with the message of an annotation, as the kubelet
takes it from the end of the log under terminationMessagePolicy FallbackToLogsOnError.

The module runs its own controller, with a one-second restart backoff and kept pods deleted
20 s after the next attempt runs; the session's controller steps aside meanwhile."""

import os
import uuid

import pytest

from conftest import Controller
from kube import (ATTEMPT, FAILED_ATTEMPT, REPO, SIM, apply, by_rank, events, kept_pods, kubectl, kubectl_json,
                  pods, running, tj, trainjob, wait_for, wait_state)
from sdk import trainer_client

KEEP_SECONDS = 20
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"

CONFIG = f"""
failurePolicy:
  maxRestarts: 3
  restartBackoff: {{initialSeconds: 1, maxSeconds: 2}}
retention:
  keepFailedPodsSeconds: {KEEP_SECONDS}
"""

# What the crashing rank prints; the kubelet keeps the end of it as the termination message.
LOG = [
    "epoch 1 step 100 loss 2.31",
    "epoch 1 step 200 loss 1.87",
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 42, in <module>',
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 94.50 GiB total)",
]
MESSAGE = "\n".join(LOG[2:])


def config_path():
    """deploy/config's GPU classes and admission with the fast policy above."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        shipped = f.read()
    classes = shipped.split("\nfailurePolicy:")[0]
    admission = "\nadmission:" + shipped.split("\nadmission:")[1].split("\nretention:")[0]
    path = os.path.join(REPO, "build", f"e2e-failures-config-{uuid.uuid4().hex[:6]}.yaml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(classes + "\n" + CONFIG + admission)
    return path


@pytest.fixture(scope="module")
def failures_controller(controller):
    controller.stop()
    c = Controller("--config", config_path()).start()
    try:
        yield c
    finally:
        c.stop()
        controller.start()


def serve_log(namespace, pod_name, lines):
    """The simulated kubelet serves these lines as the log of container node of the pod (CRI
    log format, as a container runtime writes it)."""
    path = os.path.join(REPO, "build", f"e2e-log-{namespace}-{pod_name}.log")
    with open(path, "w") as f:
        for i, line in enumerate(lines):
            f.write(f"2026-12-01T12:00:{i:02d}.000000000Z stdout F {line}\n")
    apply({
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Logs",
        "metadata": {"name": pod_name, "namespace": namespace},
        "spec": {"logs": [{"containers": ["node"], "logsFile": path}]},
    })


def training_runtime_with_ttl(namespace, ttl):
    """torch-gh200 as a TrainingRuntime of the namespace, with ttlSecondsAfterFinished."""
    rt = kubectl_json("get", "clustertrainingruntime", "torch-gh200")
    body = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "torch-ttl", "namespace": namespace, "labels": rt["metadata"]["labels"]},
        "spec": dict(rt["spec"], ttlSecondsAfterFinished=ttl),
    }
    apply(body)


def test_ttl_removes_the_pods_of_a_finished_job_and_keeps_the_trainjob(failures_controller, namespace):
    training_runtime_with_ttl(namespace, 5)
    body = trainjob("short", nodes=2, run_time="3s")
    body["spec"]["runtimeRef"] = {"name": "torch-ttl", "kind": "TrainingRuntime",
                                  "apiGroup": "trainer.kubeflow.org"}
    apply(body, "-n", namespace)
    done = wait_state(namespace, "short", "Complete")
    assert len(pods(namespace, "short")) == 2, "the pods stay until the TTL"
    assert kubectl("get", "service", "short", "-n", namespace, check=False).returncode == 0

    wait_for("the TTL to delete the pods", lambda: pods(namespace, "short") == [], timeout=60)
    wait_for("the TTL to delete the Service",
             lambda: kubectl("get", "service", "short", "-n", namespace, check=False).returncode != 0, timeout=30)
    job = wait_for("the cleanup to be recorded", lambda: (j := tj(namespace, "short"))["status"].get("cleanupTime") and j)
    st = job["status"]
    assert st["state"] == "Complete"
    assert [c["type"] for c in st["conditions"] if c["status"] == "True"] == ["Complete"]
    assert st["completionTime"] == done["status"]["completionTime"]
    # The counts are the job's record: they stay what they were when its pods ran.
    node = next(j for j in st["jobsStatus"] if j["name"] == "node")
    assert node["succeeded"] == 1, st["jobsStatus"]
    msgs = [e["message"] for e in events(namespace, "short", "CleanedUp")]
    assert msgs and "ttlSecondsAfterFinished (5 s) passed: the job's pods and Service are deleted" in msgs[0], msgs


def test_a_crash_is_readable_and_its_pod_stays_for_kubectl_logs(failures_controller, namespace, sdk_configmap, caplog):
    apply(trainjob("crash", nodes=2, run_time="60s"), "-n", namespace)
    first = running(namespace, "crash", 2)
    victim = by_rank(first, 1)
    victim_name = victim["metadata"]["name"]
    serve_log(namespace, victim_name, LOG)
    # The simulated kubelet fails the container with the end of its log as the message.
    kubectl("annotate", "pod", victim_name, "-n", namespace, f"{SIM}fail-message={MESSAGE}", f"{SIM}fail-exit-code=1")

    job = wait_for("the restart", lambda: (j := tj(namespace, "crash"))["status"].get("restartCount") == 1 and j)
    failure = job["status"]["lastFailure"]
    assert (failure["rank"], failure["pod"], failure["exitCode"]) == (1, victim_name, 1)
    assert failure["message"] == MESSAGE
    restarting = [e["message"] for e in events(namespace, "crash", "Restarting")]
    assert any(m.endswith("; the log ends:\n" + MESSAGE) for m in restarting), restarting
    described = kubectl("describe", "trainjob", "crash", "-n", namespace).stdout
    assert "torch.OutOfMemoryError: CUDA out of memory" in described, described

    # The next attempt runs, and the crashed pod is still there, kept under labels of its own.
    second = running(namespace, "crash", 2, attempt=1)
    kept = wait_for("the crashed pod to be kept",
                    lambda: (k := kept_pods(namespace, "crash")) and k[0]["metadata"]["labels"].get(FAILED_ATTEMPT) and k)
    assert [p["metadata"]["name"] for p in kept] == [victim_name]
    labels = kept[0]["metadata"]["labels"]
    assert labels[FAILED_ATTEMPT] == "0" and labels[ATTEMPT] == "0"
    assert JOBSET_NAME not in labels and "batch.kubernetes.io/job-completion-index" not in labels
    assert kept[0]["status"]["phase"] == "Failed"
    assert kept[0]["spec"]["containers"][0]["terminationMessagePolicy"] == "FallbackToLogsOnError"

    # What docs/users.md says to run to read the last crash.
    out = kubectl("logs", "-n", namespace, "-l", f"trainer.kubeflow.org/trainjob-name=crash,{FAILED_ATTEMPT}").stdout
    assert out.splitlines() == LOG, out

    # Kubeflow's SDK and the Service still see one pod per rank: the new attempt's.
    client = trainer_client(namespace, caplog)
    steps = sorted(client.get_job("crash").steps, key=lambda s: s.name)
    assert [s.name for s in steps] == ["node-0", "node-1"]
    assert [s.pod_name for s in steps] == [p["metadata"]["name"] for p in second]
    sdk_view = kubectl_json("get", "pods", "-n", namespace, "-l", f"{JOBSET_NAME}=crash")["items"]
    assert sorted(p["metadata"]["name"] for p in sdk_view) == sorted(p["metadata"]["name"] for p in second)
    selector = kubectl_json("get", "service", "crash", "-n", namespace)["spec"]["selector"]
    assert selector == {JOBSET_NAME: "crash"}

    # Kept for keepFailedPodsSeconds once the next attempt runs, then deleted.
    wait_for("the kept pod to be deleted", lambda: kept_pods(namespace, "crash") == [], timeout=KEEP_SECONDS + 30)
    assert [p["metadata"]["name"] for p in pods(namespace, "crash")] == [p["metadata"]["name"] for p in second]
    assert tj(namespace, "crash")["status"]["state"] == "Running"
