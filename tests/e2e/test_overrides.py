"""A TrainJob's overrides and runtime patches aimed at a step other than node, against the
real control plane: a v2.1 podTemplateOverride and a runtimePatch of the dataset-initializer
step show up in that step's pod (its labels and annotations, a nodeSelector, a volume and
its mount, a sidecar's env) and in no other; a patch of a replicated job the runtime does
not have is refused before any pod exists, with a reason that names the field and a
Warning event, as Kubeflow Trainer's webhook refuses it."""

import json

from kube import SIM, apply, condition, events, kubectl, kubectl_json, wait_for, wait_state

STEP = "jobset.sigs.k8s.io/replicatedjob-name"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"

RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainingRuntime",
    "metadata": {"name": "fetch-then-train"},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": 1}},
        "template": {"spec": {"replicatedJobs": [
            {"name": "dataset-initializer",
             "template": {"metadata": {"labels": {ANCESTOR: "dataset-initializer"}},
                          "spec": {"template": {"spec": {"containers": [
                              {"name": "dataset-initializer", "image": "ghcr.io/kubeflow/trainer/dataset-initializer"},
                              {"name": "fetch", "image": "busybox", "command": ["sh", "-c", "true"]}]}}}}},
            {"name": "node", "dependsOn": [{"name": "dataset-initializer", "status": "Complete"}],
             "template": {"metadata": {"labels": {ANCESTOR: "trainer"}},
                          "spec": {"template": {"spec": {"containers": [
                              {"name": "node", "image": "pytorch/pytorch:2.7.1", "command": ["torchrun", "train.py"]}]}}}}},
        ]}},
    },
}


def trainjob(name, **spec):
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {"runtimeRef": {"name": "fetch-then-train", "kind": "TrainingRuntime"}, **spec},
    }


def job_pods(namespace, name):
    return kubectl_json("get", "pods", "-n", namespace, "-l", f"trainer.kubeflow.org/trainjob-name={name}")["items"]


def of_step(pod_list, step):
    return [p for p in pod_list if p["metadata"]["labels"].get(STEP) == step]


def container(pod, name):
    return next(c for c in pod["spec"]["containers"] if c["name"] == name)


def test_override_and_patch_reach_the_dataset_initializer(controller, namespace):
    apply(RUNTIME, "-n", namespace)
    name = "fetch"
    apply(trainjob(
        name,
        podTemplateOverrides=[
            {"targetJobs": [{"name": "dataset-initializer"}],
             "metadata": {"labels": {"team": "data"}, "annotations": {SIM + "run-time": "2s"}},
             # The CPU nodes are the amd64 ones without a GPU taint.
             "spec": {"nodeSelector": {"kubernetes.io/arch": "amd64"}}},
            {"targetJobs": [{"name": "node"}], "metadata": {"annotations": {SIM + "run-time": "2s"}}},
        ],
        runtimePatches=[{
            "manager": "example.com/data-team",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{
                "name": "dataset-initializer",
                "template": {"metadata": {"labels": {"data-job": "yes"}},
                             "spec": {"template": {"spec": {
                                 "volumes": [{"name": "cache", "emptyDir": {}}],
                                 "containers": [
                                     {"name": "dataset-initializer", "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]},
                                     {"name": "fetch", "env": [{"name": "MIRROR", "value": "https://mirror.example.com"}]},
                                 ]}}}},
            }]}}},
        }],
    ), "-n", namespace)

    init = wait_for("the dataset-initializer pod, scheduled",
                    lambda: [p for p in of_step(job_pods(namespace, name), "dataset-initializer") if p["spec"].get("nodeName")])
    assert len(init) == 1
    pod = init[0]
    labels, annotations = pod["metadata"]["labels"], pod["metadata"]["annotations"]
    assert labels["team"] == "data" and labels["data-job"] == "yes", labels
    assert labels[ANCESTOR] == "dataset-initializer" and labels[STEP] == "dataset-initializer"
    assert annotations[SIM + "run-time"] == "2s"
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/arch": "amd64"}
    assert pod["spec"]["nodeName"].startswith("cpu-"), pod["spec"]["nodeName"]
    assert {"name": "cache", "emptyDir": {}} in pod["spec"]["volumes"], pod["spec"]["volumes"]
    assert {"name": "cache", "mountPath": "/cache"} in container(pod, "dataset-initializer")["volumeMounts"]
    assert {"name": "MIRROR", "value": "https://mirror.example.com"} in container(pod, "fetch")["env"]

    done = wait_state(namespace, name, "Complete", timeout=120)
    assert condition(done, "Complete")["status"] == "True"
    nodes = of_step(job_pods(namespace, name), "node")
    assert len(nodes) == 1
    node = nodes[0]
    # What targets the initializer stays off the trainer's pod.
    assert "team" not in node["metadata"]["labels"] and "data-job" not in node["metadata"]["labels"]
    assert "cache" not in [v["name"] for v in node["spec"].get("volumes", [])]
    assert "nodeSelector" not in node["spec"], node["spec"].get("nodeSelector")
    assert node["status"]["phase"] == "Succeeded"


def test_patch_of_a_step_the_runtime_lacks_is_refused(controller, namespace):
    apply(RUNTIME, "-n", namespace)
    name = "no-such-step"
    apply(trainjob(name, runtimePatches=[{
        "manager": "example.com/data-team",
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
            {"name": "model-initializer",
             "template": {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/arch": "amd64"}}}}}}]}}},
    }]), "-n", namespace)

    failed = wait_state(namespace, name, "Failed", timeout=60)
    status = failed["status"]
    assert status["reason"] == "InvalidSpec", status
    assert status["message"] == (
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].name: TrainingRuntime "
        "fetch-then-train has no replicated job 'model-initializer' (its replicated jobs: dataset-initializer, "
        "node); an override or patch must name one of them"), status["message"]
    assert condition(failed, "Failed")["reason"] == "InvalidSpec"
    ev = wait_for("the Warning event", lambda: events(namespace, name, "Failed"))
    assert ev[0]["type"] == "Warning" and "model-initializer" in ev[0]["message"], ev
    assert job_pods(namespace, name) == []


def test_a_runtime_patch_sets_the_grace_period_of_a_step(controller, namespace):
    """Kubeflow v2.3's runtimePatches[].….spec.terminationGracePeriodSeconds: the step's pods
    get it; in podTemplateOverrides it is refused, naming it."""
    apply(RUNTIME, "-n", namespace)
    apply(trainjob("patient", runtimePatches=[{
        "manager": "example.com/me",
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
            {"name": "node", "template": {"spec": {"template": {"spec": {"terminationGracePeriodSeconds": 7}}}}}]}}},
    }]), "-n", namespace)
    nodes = wait_for("the node step's pod", lambda: of_step(job_pods(namespace, "patient"), "node"), timeout=90)
    assert nodes[0]["spec"]["terminationGracePeriodSeconds"] == 7
    (init,) = of_step(job_pods(namespace, "patient"), "dataset-initializer")
    assert init["spec"]["terminationGracePeriodSeconds"] == 30, "the patch names the node step only"

    apply(trainjob("impatient", podTemplateOverrides=[
        {"targetJobs": [{"name": "node"}], "spec": {"terminationGracePeriodSeconds": 7}}]), "-n", namespace)
    status = wait_state(namespace, "impatient", "Failed", timeout=60)["status"]
    assert status["reason"] == "InvalidSpec", status
    assert "spec.podTemplateOverrides[0].spec.terminationGracePeriodSeconds is not supported" in status["message"]
    assert job_pods(namespace, "impatient") == []


def test_env_injection_gives_torchrun_variables_to_the_containers_it_names(controller, namespace):
    """Kubeflow v2.3's mlPolicy.torch.envInjection: a sidecar of the node pods and a container
    of another step get PET_*, with their own pod's index for the rank; a target naming node
    is refused by the schema."""
    runtime = json.loads(json.dumps(RUNTIME))
    runtime["metadata"]["name"] = "injected"
    runtime["spec"]["mlPolicy"]["torch"]["envInjection"] = {"targets": [
        {"jobName": "node", "containerNames": ["probe"]},
        {"jobName": "dataset-initializer", "containerNames": ["fetch"]}]}
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    jobs[1]["template"]["spec"]["template"]["spec"]["containers"].append(
        {"name": "probe", "image": "busybox", "command": ["sh", "-c", "true"]})
    apply(runtime, "-n", namespace)
    job = trainjob("inj", trainer={"numNodes": 2})
    job["spec"]["runtimeRef"]["name"] = "injected"
    apply(job, "-n", namespace)

    def env(pod, name):
        c = next(c for c in pod["spec"]["containers"] if c["name"] == name)
        return {e["name"]: e.get("value") for e in c.get("env", [])}

    (init,) = wait_for("the initializer's pod", lambda: of_step(job_pods(namespace, "inj"), "dataset-initializer"), timeout=60)
    fetch = env(init, "fetch")
    assert fetch["PET_NNODES"] == "2" and fetch["PET_NODE_RANK"] == "0", fetch
    assert fetch["PET_MASTER_ADDR"] == "inj-node-0-0.inj" and fetch["PET_MASTER_PORT"] == "29500", fetch
    assert "PET_NNODES" not in env(init, "dataset-initializer")
    nodes = wait_for("both node pods", lambda: len(n := of_step(job_pods(namespace, "inj"), "node")) == 2 and n, timeout=90)
    for pod in nodes:
        rank = pod["metadata"]["labels"]["trainjob.flame.dev/rank"]
        assert env(pod, "probe")["PET_NODE_RANK"] == rank, env(pod, "probe")
        assert env(pod, "node")["PET_NODE_RANK"] == rank

    bad = json.loads(json.dumps(runtime))
    bad["metadata"]["name"] = "injected-node"
    bad["spec"]["mlPolicy"]["torch"]["envInjection"] = {"targets": [{"jobName": "node", "containerNames": ["node"]}]}
    refused = kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps(bad), check=False)
    assert refused.returncode != 0 and "must not name node" in refused.stderr, refused.stderr
