"""Kubeflow's Python SDK (the `kubeflow` package, pinned in requirements.txt) used unchanged
against this controller: the flow its documentation shows, from listing the runtimes to the
events of a finished job. What the SDK reads is what DESIGN.md section 4 fixes: the JobSet-style
pod labels ("Child objects"), conditions empty while running and events with firstTimestamp
("Status")."""

import logging
import os

import pytest
from kubeflow.trainer import CustomTrainer, KubernetesBackendConfig, TrainerClient
from kubeflow.trainer.options import (
    JobSetSpecPatch,
    JobSetTemplatePatch,
    JobSpecPatch,
    JobTemplatePatch,
    PodTemplatePatch,
    ReplicatedJobPatch,
    RuntimePatch,
    TrainingRuntimeSpecPatch,
)

from kube import REPO, kubectl, kubectl_json

SHIPPED_RUNTIMES = {"torch-distributed", "torch-gh200", "torch-h100"}
RUN_TIME = "sim.trainjob.flame.dev/run-time"


def pod_annotations(annotations):
    """The SDK's RuntimePatch option that puts annotations on the node job's pods (here: how
    long the simulated cluster runs them)."""
    pod = PodTemplatePatch(metadata={"annotations": annotations})
    node = ReplicatedJobPatch(name="node", template=JobTemplatePatch(spec=JobSpecPatch(template=pod)))
    return RuntimePatch(
        training_runtime_spec=TrainingRuntimeSpecPatch(
            template=JobSetTemplatePatch(spec=JobSetSpecPatch(replicated_jobs=[node]))
        )
    )


def train():
    # Runs in the pods (the simulated cluster does not execute it; the SDK ships its source).
    import torch.distributed as dist

    dist.init_process_group()
    print("rank", dist.get_rank(), "of", dist.get_world_size())


@pytest.fixture(scope="module")
def sdk_configmap():
    """The ConfigMap the SDK's constructor reads, installed as deploy/kubeflow-sdk/ says."""
    kubectl("apply", "-k", os.path.join(REPO, "deploy", "kubeflow-sdk"))


@pytest.fixture
def client(controller, sdk_configmap, namespace, caplog):
    """A TrainerClient as a user makes it: the kubeconfig of the cluster, one namespace."""
    with caplog.at_level(logging.WARNING, logger="kubeflow"):
        c = TrainerClient(KubernetesBackendConfig(namespace=namespace, config_file=os.environ["KUBECONFIG"]))
    # The shipped ConfigMap kubeflow-system/kubeflow-trainer-public answers the SDK's check
    # of the control plane's version, so constructing the client warns about nothing.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    return c


def test_list_runtimes_shows_the_shipped_runtimes(client):
    runtimes = {r.name: r for r in client.list_runtimes()}
    assert SHIPPED_RUNTIMES <= set(runtimes)
    gh200 = runtimes["torch-gh200"]
    assert gh200.kind.value == "ClusterTrainingRuntime"
    assert gh200.trainer.framework == "torch"
    assert gh200.trainer.trainer_type.value == "CustomTrainer"
    assert gh200.trainer.image == "nvcr.io/nvidia/pytorch:25.08-py3"
    assert (gh200.trainer.device, gh200.trainer.device_count) == ("gpu", "4")
    assert gh200.trainer.num_nodes == 1
    assert client.get_runtime("torch-gh200").name == "torch-gh200"


def test_custom_trainer_runs_to_completion(client, namespace):
    name = client.train(
        runtime="torch-gh200",
        trainer=CustomTrainer(func=train, num_nodes=2, resources_per_node={"gpu": 4}),
        options=[pod_annotations({RUN_TIME: "8s"})],
    )

    # What the SDK sent is what the controller runs: its command in container "node", the
    # GPUs as requests and limits.
    spec = kubectl_json("get", "trainjob", name, "-n", namespace)["spec"]
    assert spec["runtimeRef"]["name"] == "torch-gh200"
    assert spec["trainer"]["numNodes"] == 2
    assert spec["trainer"]["resourcesPerNode"] == {
        "requests": {"nvidia.com/gpu": 4},
        "limits": {"nvidia.com/gpu": 4},
    }

    # The SDK says Running only while the job has no condition and both node pods run.
    job = client.wait_for_job_status(name, {"Running"}, timeout=120, polling_interval=1)
    assert job.status == "Running"
    assert job.num_nodes == 2
    assert sorted(s.name for s in job.steps) == ["node-0", "node-1"]
    assert {s.status for s in job.steps} <= {"Running", "Succeeded"}
    for pod in kubectl_json("get", "pods", "-n", namespace, "-l", f"trainer.kubeflow.org/trainjob-name={name}")["items"]:
        node = pod["spec"]["containers"][0]
        assert node["name"] == "node"
        assert node["command"] == spec["trainer"]["command"]
        assert pod["metadata"]["annotations"][RUN_TIME] == "8s"

    job = client.wait_for_job_status(name, {"Complete"}, timeout=120, polling_interval=1)
    assert job.status == "Complete"

    job = client.get_job(name)
    assert job.name == name
    assert job.runtime.name == "torch-gh200"
    assert job.num_nodes == 2
    steps = sorted(job.steps, key=lambda s: s.name)
    assert [s.name for s in steps] == ["node-0", "node-1"]
    for step in steps:
        assert step.status == "Succeeded"
        assert step.pod_name.startswith(name + "-")
        assert step.device == "gpu"
        assert step.device_count == "4"
    assert len({s.pod_name for s in steps}) == 2
    assert [j.name for j in client.list_jobs()] == [name]

    events = client.get_job_events(name)
    mine = [e for e in events if e.involved_object_kind == "TrainJob"]
    assert mine, f"no TrainJob events among {events}"
    assert all(e.involved_object_name == name for e in mine)
    # Every transition, each with the firstTimestamp the SDK requires (it drops events
    # without one) and sorts by.
    assert {"Created", "Running", "Completed"} <= {e.reason for e in mine}, mine
    assert [e.event_time for e in events] == sorted(e.event_time for e in events)

    client.delete_job(name)
    kubectl("wait", "--for=delete", f"trainjob/{name}", "-n", namespace, "--timeout=60s")
