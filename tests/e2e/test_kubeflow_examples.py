"""Kubeflow Trainer's torch examples from its Go module, applied as a Kubeflow user applies
them: 01-multi-node unchanged, on the shipped torch-distributed ClusterTrainingRuntime of the
same name, and Kubeflow's own torch-distributed runtime (manifests/base/runtimes) as a
namespaced TrainingRuntime (its kind the only change: a real ClusterTrainingRuntime of that
name would replace the shipped one that other suites use). Each job has its node pods with
torchrun's environment as Kubeflow sets it, and ends Complete with nothing left running
(KWOK runs every pod for 20 s and lets it succeed)."""

import os

import yaml

from kube import apply, pods, wait_for, wait_state

PHASE_DONE = ("Succeeded", "Failed")


def env_of(pod):
    (node,) = [c for c in pod["spec"]["containers"] if c["name"] == "node"]
    return {e["name"]: e.get("value") for e in node.get("env", [])}


def assert_torch_job(namespace, name, nodes):
    wait_state(namespace, name, "Complete", timeout=180)
    final = pods(namespace, name)
    assert len(final) == nodes
    for p in final:
        labels = p["metadata"]["labels"]
        rank = labels["batch.kubernetes.io/job-completion-index"]
        env = env_of(p)
        assert env["PET_NNODES"] == str(nodes)
        assert env["PET_NODE_RANK"] == rank
        assert env["PET_MASTER_ADDR"] == f"{name}-node-0-0.{name}"
        assert env["PET_MASTER_PORT"] == "29500"
        assert labels["jobset.sigs.k8s.io/jobset-name"] == name
        assert labels["jobset.sigs.k8s.io/replicatedjob-name"] == "node"
    wait_for("every pod finished", lambda: all(
        p["status"].get("phase") in PHASE_DONE for p in pods(namespace, name)), timeout=60)
    assert all(p["status"]["phase"] == "Succeeded" for p in pods(namespace, name))


def test_multi_node_example_runs_on_torch_distributed(controller, namespace, kubeflow_module):
    with open(os.path.join(kubeflow_module, "examples/yaml/01-multi-node.yaml")) as f:
        apply(f.read(), "-n", namespace)
    assert_torch_job(namespace, "multi-node-example", 3)


def test_kubeflows_torch_distributed_runtime_runs_a_job(controller, namespace, kubeflow_module):
    with open(os.path.join(kubeflow_module, "manifests/base/runtimes/torch_distributed.yaml")) as f:
        runtime = yaml.safe_load(f)
    runtime["kind"] = "TrainingRuntime"
    apply(runtime, "-n", namespace)
    apply({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "kf-torch"},
        "spec": {
            "runtimeRef": {"name": "torch-distributed", "kind": "TrainingRuntime"},
            "trainer": {"numNodes": 2, "command": ["torchrun", "train.py"]},
        },
    }, "-n", namespace)
    assert_torch_job(namespace, "kf-torch", 2)
