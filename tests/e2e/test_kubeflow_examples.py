"""Kubeflow Trainer's examples and runtimes from its Go module, applied as a Kubeflow user
applies them. The torch examples: 01-multi-node unchanged, on the shipped torch-distributed
ClusterTrainingRuntime of the same name, and Kubeflow's own torch-distributed runtime
(manifests/base/runtimes) as a namespaced TrainingRuntime (its kind the only change: a real
ClusterTrainingRuntime of that name would replace the shipped one that other suites use).
Each job has its node pods with torchrun's environment as Kubeflow sets it, and ends
Complete with nothing left running (KWOK runs every pod for 20 s and lets it succeed).

The other runtimes Kubeflow installs by default, jax-distributed and xgboost-distributed,
applied unchanged as the ClusterTrainingRuntimes they are: their jobs get the env of
Kubeflow's JAX and XGBoost plugins (the coordinator, the DMLC tracker) and end Complete.
Those that cannot run here are refused before any pod, naming the field: Kubeflow's Flux
runtime and its three examples (examples/flux), and example 04's Volcano PodGroup policy."""

import os

import pytest
import yaml

from kube import apply, condition, events, kubectl, kubeflow_runtime_file, pods, tj, trainjob, wait_for, wait_state

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
    with open(kubeflow_runtime_file(kubeflow_module, "torch-distributed")) as f:
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


def framework_job(name, runtime, nodes, gpus=0):
    """A TrainJob of nodes pods of gpus GPUs each (none: on the CPU nodes) that run 3 s."""
    body = trainjob(name, nodes=nodes, gpus=gpus, runtime=runtime)
    body["spec"]["trainer"]["command"] = ["python3", "train.py"]
    if gpus:
        # GPU nodes are tainted, and a runtime without a GPU class adds no toleration: the
        # job adds it, as a user of Kubeflow's runtime on such a cluster does.
        body["spec"]["podTemplateOverrides"][0]["spec"] = {
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    return body


def assert_framework_job(namespace, name, nodes, image, want_env):
    """The job Complete, its nodes pods all Succeeded, each with exactly want_env(rank) of
    the controller's names, the port 29500, the runtime's image, and no torchrun wiring."""
    wait_state(namespace, name, "Complete", timeout=180)
    final = pods(namespace, name)
    assert len(final) == nodes
    for p in final:
        rank = int(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"])
        env = env_of(p)
        want = want_env(rank)
        assert {k: env.get(k) for k in want} == want, env
        assert not any(k.startswith("PET_") or k in ("MASTER_ADDR", "WORLD_SIZE", "RANK") for k in env), env
        (node,) = [c for c in p["spec"]["containers"] if c["name"] == "node"]
        assert node["image"] == image
        assert {"containerPort": 29500, "protocol": "TCP"} in node["ports"]
        assert p["spec"]["hostname"] == f"{name}-node-0-{rank}" and p["spec"]["subdomain"] == name
    wait_for("every pod finished", lambda: all(
        p["status"].get("phase") in PHASE_DONE for p in pods(namespace, name)), timeout=60)
    assert all(p["status"]["phase"] == "Succeeded" for p in pods(namespace, name))


def test_kubeflows_jax_distributed_runtime_runs_a_job(controller, namespace, kubeflow_module):
    kubectl("apply", "-f", kubeflow_runtime_file(kubeflow_module, "jax-distributed"))
    apply(framework_job("kf-jax", "jax-distributed", 3), "-n", namespace)
    assert_framework_job(namespace, "kf-jax", 3, "nvcr.io/nvidia/jax:25.10-py3", lambda rank: {
        "JAX_NUM_PROCESSES": "3",
        "JAX_PROCESS_ID": str(rank),
        "JAX_COORDINATOR_ADDRESS": "kf-jax-node-0-0.kf-jax:29500",
    })


@pytest.mark.parametrize("gpus,workers", [(0, 2), (4, 8)], ids=["cpu", "4-gpus"])
def test_kubeflows_xgboost_distributed_runtime_runs_a_job(controller, namespace, kubeflow_module, gpus, workers):
    kubectl("apply", "-f", kubeflow_runtime_file(kubeflow_module, "xgboost-distributed"))
    apply(framework_job("kf-xgb", "xgboost-distributed", 2, gpus), "-n", namespace)
    assert_framework_job(namespace, "kf-xgb", 2, "ghcr.io/kubeflow/trainer/xgboost-runtime", lambda rank: {
        "DMLC_TRACKER_URI": "kf-xgb-node-0-0.kf-xgb",
        "DMLC_TRACKER_PORT": "29500",
        "DMLC_TASK_ID": str(rank),
        "DMLC_NUM_WORKER": str(workers),
    })


def assert_refused(namespace, name, reason, *texts):
    """The job Failed before any pod, with reason and a message naming texts, and a Warning
    event Failed that says the same."""
    job = wait_state(namespace, name, "Failed", timeout=60)
    st = job["status"]
    assert st["reason"] == reason, st
    for text in texts:
        assert text in st["message"], (text, st["message"])
    c = condition(job, "Failed")
    assert c["status"] == "True" and c["reason"] == reason and c["message"] == st["message"]
    assert pods(namespace, name) == []
    ev = wait_for(f"a Failed event of {name}", lambda: events(namespace, name, "Failed"), timeout=30)
    assert ev[0]["type"] == "Warning"
    assert ev[0]["message"] == f"{reason}: {st['message']}"


@pytest.mark.parametrize("runtime,trainer,text", [
    ("jax-distributed", {"numProcPerNode": 2},
     "spec.trainer.numProcPerNode: '2' is not read by JAX runtimes, which run one JAX process per node"),
    ("xgboost-distributed", {"env": [{"name": "DMLC_NUM_WORKER", "value": "8"}]},
     "spec.trainer.env[0].name: DMLC_NUM_WORKER is set by the controller (XGBoost's tracker)"),
], ids=["jax-numProcPerNode", "xgboost-DMLC-env"])
def test_what_the_jax_and_xgboost_wiring_owns_is_refused_in_the_trainjob(controller, namespace, kubeflow_module,
                                                                         runtime, trainer, text):
    kubectl("apply", "-f", kubeflow_runtime_file(kubeflow_module, runtime))
    body = framework_job("kf-refused", runtime, 2)
    body["spec"]["trainer"].update(trainer)
    apply(body, "-n", namespace)
    assert_refused(namespace, "kf-refused", "InvalidSpec", text)


@pytest.mark.parametrize("name,nodes", [("lammps-train-job", 2), ("lammps-train-gpus", 2), ("flux-interactive", 4)])
def test_kubeflows_flux_examples_are_refused_naming_the_field(controller, namespace, kubeflow_module, name, nodes):
    flux = os.path.join(kubeflow_module, "examples", "flux")
    kubectl("apply", "-f", os.path.join(flux, "flux-runtime.yaml"))
    with open(os.path.join(flux, name + ".yaml")) as f:
        example = yaml.safe_load(f)
    kubectl("apply", "-n", namespace, "-f", os.path.join(flux, name + ".yaml"))
    job = example["metadata"]["name"]
    assert tj(namespace, job)["spec"]["trainer"]["numNodes"] == nodes
    assert_refused(namespace, job, "UnsupportedRuntime",
                   "ClusterTrainingRuntime flux-distributed: spec.mlPolicy.flux is not supported",
                   "run the program with mpirun on an MPI runtime")


def test_volcano_example_is_refused_naming_the_field(controller, namespace, kubeflow_module):
    # 04-volcano-integration: its own ClusterTrainingRuntime, then a TrainJob of it.
    kubectl("apply", "-n", namespace, "-f", os.path.join(kubeflow_module, "examples/yaml/04-volcano-integration.yaml"))
    assert_refused(namespace, "volcano-example", "UnsupportedRuntime",
                   "ClusterTrainingRuntime torch-distributed-volcano: spec.podGroupPolicy.volcano is not supported")
