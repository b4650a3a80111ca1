"""Kubeflow's Python SDK (the `kubeflow` package, pinned in requirements.txt) used unchanged
against this controller: the flow its documentation shows, from listing the runtimes to the
events of a finished job. What the SDK reads is what DESIGN.md section 4 fixes: the JobSet-style
pod labels ("Child objects"), conditions empty while running and events with firstTimestamp
("Status")."""

from kubeflow.trainer import CustomTrainer

from kube import kubectl, kubectl_json
from sdk import RUN_TIME, pod_annotations, train

SHIPPED_RUNTIMES = {"torch-distributed", "torch-gh200", "torch-h100"}


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


def test_custom_trainer_runs_to_completion(controller, client, namespace):
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
