"""The local cluster is real: the real scheduler places GPU pods by resources, affinity and
taints, KWOK runs bare pods to completion or failure, and the node lifecycle controller
reacts to a NotReady node."""

import time
from datetime import datetime

import pytest

from kube import apply, condition, kubectl, kubectl_json, wait_for


def gpu_pod(name, gpus, annotations=None):
    """A bare pod asking for GPUs on an arm64 GH200 node, as the controller will render one."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "restartPolicy": "Never",
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
                                    {
                                        "key": "nvidia.com/gpu.product",
                                        "operator": "In",
                                        "values": ["NVIDIA-GH200-480GB"],
                                    },
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {
                    "name": "node",
                    "image": "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime",
                    "resources": {
                        "requests": {"nvidia.com/gpu": str(gpus)},
                        "limits": {"nvidia.com/gpu": str(gpus)},
                    },
                }
            ],
        },
    }


def pod(namespace, name):
    return kubectl_json("get", "pod", name, "-n", namespace)


def parse_time(text):
    """Seconds since the epoch of an RFC 3339 time of the API server's."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_node_shape():
    nodes = kubectl_json("get", "nodes", "-l", "type=kwok")["items"]
    by_class = {}
    for n in nodes:
        labels = n["metadata"]["labels"]
        by_class.setdefault(labels.get("nvidia.com/gpu.product", "cpu"), []).append(n)
    gh200 = by_class["NVIDIA-GH200-480GB"]
    h100 = by_class["NVIDIA-H100-80GB-HBM3"]
    assert len(gh200) >= 8 and len(h100) >= 4 and len(by_class["cpu"]) >= 2
    for n in gh200:
        assert n["metadata"]["labels"]["kubernetes.io/arch"] == "arm64"
        assert n["status"]["allocatable"]["nvidia.com/gpu"] == "4"
        assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in n["spec"]["taints"]
        assert condition(n, "Ready")["status"] == "True"
    for n in h100:
        assert n["metadata"]["labels"]["kubernetes.io/arch"] == "amd64"
        assert n["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    for n in by_class["cpu"]:
        assert "nvidia.com/gpu" not in n["status"]["allocatable"]


def test_gpu_pod_is_placed_on_gh200_then_runs_to_success(namespace):
    apply(gpu_pod("fits", 4, {"sim.trainjob.flame.dev/run-time": "3s"}), "-n", namespace)
    running = wait_for("pod fits to be Running", lambda: (p := pod(namespace, "fits"))["status"].get("phase") == "Running" and p)
    node = kubectl_json("get", "node", running["spec"]["nodeName"])
    assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-GH200-480GB"
    assert node["metadata"]["labels"]["kubernetes.io/arch"] == "arm64"
    assert condition(running, "PodScheduled")["status"] == "True"
    done = wait_for("pod fits to succeed", lambda: (p := pod(namespace, "fits"))["status"].get("phase") == "Succeeded" and p)
    term = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 0 and term["reason"] == "Completed"


def test_a_simulated_run_ends_at_its_start_plus_its_run_time_whatever_updates_the_pod(namespace):
    """KWOK starts a stage's delay again when the pod changes; the stages give the end as a
    time, so labels, annotations and deadline warnings written to a running pod do not make
    it run longer."""
    apply(gpu_pod("steady", 1, {"sim.trainjob.flame.dev/run-time": "12s"}), "-n", namespace)
    wait_for("pod steady to run", lambda: pod(namespace, "steady")["status"].get("phase") == "Running")
    for i in range(5):
        kubectl("annotate", "--overwrite", "pod", "steady", "-n", namespace, f"touched={i}")
        time.sleep(2)
    done = wait_for("pod steady to succeed",
                    lambda: (p := pod(namespace, "steady"))["status"].get("phase") == "Succeeded" and p,
                    timeout=60)
    start = parse_time(done["status"]["startTime"])
    end = parse_time(done["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"])
    # Started again at the last update, it would end about 20 s after its start.
    assert 10 <= end - start <= 15, f"ran {end - start} s, not 12"


def test_pod_asking_for_more_gpus_than_a_node_has_is_refused(namespace):
    apply(gpu_pod("too-big", 5), "-n", namespace)

    def unschedulable():
        c = condition(pod(namespace, "too-big"), "PodScheduled")
        return c if c and c["status"] == "False" else None

    c = wait_for("the scheduler to refuse pod too-big", unschedulable)
    assert c["reason"] == "Unschedulable"
    assert "nvidia.com/gpu" in c["message"]
    assert "nodeName" not in pod(namespace, "too-big")["spec"]


def test_pod_marked_for_failure_fails_with_the_chosen_exit_code(namespace):
    apply(
        gpu_pod(
            "doomed",
            1,
            {
                "sim.trainjob.flame.dev/fail-exit-code": "42",
                "sim.trainjob.flame.dev/fail-reason": "OOMKilled",
                "sim.trainjob.flame.dev/fail-after": "1s",
            },
        ),
        "-n",
        namespace,
    )
    p = wait_for("pod doomed to fail", lambda: (p := pod(namespace, "doomed"))["status"].get("phase") == "Failed" and p)
    term = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 42
    assert term["reason"] == "OOMKilled"


def test_running_pod_fails_when_annotated(namespace):
    apply(gpu_pod("later", 1, {"sim.trainjob.flame.dev/run-time": "10m"}), "-n", namespace)
    wait_for("pod later to run", lambda: pod(namespace, "later")["status"].get("phase") == "Running")
    kubectl("annotate", "pod", "later", "-n", namespace,
            "sim.trainjob.flame.dev/fail-exit-code=137", "sim.trainjob.flame.dev/fail-reason=Error")
    p = wait_for("pod later to fail", lambda: (p := pod(namespace, "later"))["status"].get("phase") == "Failed" and p)
    assert p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 137


@pytest.fixture
def broken_node():
    name = "cpu-1"
    yield name
    kubectl("label", "node", name, "node-not-ready.stage.kwok.x-k8s.io-", check=False)


def test_node_made_not_ready_is_tainted_and_recovers(broken_node):
    kubectl("label", "node", broken_node, "node-not-ready.stage.kwok.x-k8s.io=true")

    def not_ready_and_tainted():
        n = kubectl_json("get", "node", broken_node)
        taints = {t["key"] for t in n["spec"].get("taints", [])}
        return condition(n, "Ready")["status"] == "False" and "node.kubernetes.io/not-ready" in taints

    wait_for("node to be NotReady with the not-ready taint", not_ready_and_tainted, timeout=90)
    kubectl("label", "node", broken_node, "node-not-ready.stage.kwok.x-k8s.io-")

    def recovered():
        n = kubectl_json("get", "node", broken_node)
        taints = {t["key"] for t in n["spec"].get("taints", [])}
        return condition(n, "Ready")["status"] == "True" and "node.kubernetes.io/not-ready" not in taints

    wait_for("node to be Ready again without the taint", recovered, timeout=90)
