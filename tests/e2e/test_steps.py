"""A runtime's whole step graph against the real control plane, with Kubeflow's own manifests
from its Go module, applied unchanged: the initializer steps run to completion before any
trainer pod exists, they and the trainer share the PVC of volumeClaimPolicies at /workspace,
and the job ends Complete with nothing left running (DESIGN.md section 4, "Steps"). KWOK
runs every pod for 20 s and lets it succeed (deploy/local/stages.yaml)."""

import os

from kubeflow.trainer import CustomTrainer, HuggingFaceDatasetInitializer, Initializer

from kube import apply, kubectl, kubectl_json, ts, wait_for, wait_state
from sdk import train

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
STEP = "jobset.sigs.k8s.io/replicatedjob-name"


def job_pods(namespace, name):
    return kubectl_json("get", "pods", "-n", namespace, "-l", f"trainer.kubeflow.org/trainjob-name={name}")["items"]


def of_step(pod_list, step):
    return [p for p in pod_list if p["metadata"]["labels"].get(STEP) == step]


def finished_at(pod):
    return max(ts(c["state"]["terminated"]["finishedAt"]) for c in pod["status"]["containerStatuses"])


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def wait_steps_in_order(namespace, name, initializers, nodes):
    """Watches the job until it is Complete, asserting at every look that no node pod exists
    while an initializer has not succeeded; returns the final pods."""

    def look():
        p = job_pods(namespace, name)
        inits = [x for s in initializers for x in of_step(p, s)]
        done = len(inits) == len(initializers) and all(x["status"].get("phase") == "Succeeded" for x in inits)
        assert done or not of_step(p, "node"), f"node pods before the initializers succeeded: {[x['metadata']['name'] for x in p]}"
        state = kubectl_json("get", "trainjob", name, "-n", namespace).get("status", {}).get("state")
        return state == "Complete" and len(of_step(p, "node")) == nodes and p

    final = wait_for(f"{name} to run its steps and complete", look, timeout=150, interval=1)
    inits = [x for s in initializers for x in of_step(final, s)]
    for node in of_step(final, "node"):
        # A node pod is created only after every initializer finished.
        assert ts(node["metadata"]["creationTimestamp"]) >= max(finished_at(i) for i in inits)
    wait_for("every pod finished", lambda: all(x["status"].get("phase") in ("Succeeded", "Failed") for x in job_pods(namespace, name)))
    return job_pods(namespace, name)


def test_multi_step_example_runs_its_dataset_initializer_first(controller, namespace, kubeflow_module):
    with open(os.path.join(kubeflow_module, "examples/yaml/05-multi-step.yaml")) as f:
        apply(f.read(), "-n", namespace)
    final = wait_steps_in_order(namespace, "multi-step-example", ["dataset-initializer"], 2)

    init = of_step(final, "dataset-initializer")
    assert len(init) == 1
    pod = init[0]
    assert pod["metadata"]["name"] == "multi-step-example-dataset-initializer-0-0-a0"
    labels = pod["metadata"]["labels"]
    assert labels[ANCESTOR] == "dataset-initializer"
    assert labels["jobset.sigs.k8s.io/jobset-name"] == "multi-step-example"
    assert labels["jobset.sigs.k8s.io/job-index"] == "0"
    assert labels["batch.kubernetes.io/job-completion-index"] == "0"
    assert pod["spec"]["hostname"] == "multi-step-example-dataset-initializer-0-0"
    assert pod["spec"]["restartPolicy"] == "Never"
    c = pod["spec"]["containers"][0]
    assert c["name"] == "dataset-initializer"
    assert env_of(c)["STORAGE_URI"] == "hf://tatsu-lab/alpaca"
    assert pod["status"]["phase"] == "Succeeded"
    for node in of_step(final, "node"):
        assert node["metadata"]["labels"][ANCESTOR] == "trainer"
        assert node["status"]["phase"] == "Succeeded"

    job = kubectl_json("get", "trainjob", "multi-step-example", "-n", namespace)
    cond = {c["type"]: c["status"] for c in job["status"]["conditions"]}
    assert cond == {"Complete": "True"}
    # jobsStatus counts Jobs, one per step here, as JobSet does.
    js = {j["name"]: j for j in job["status"]["jobsStatus"]}
    assert set(js) == {"dataset-initializer", "node"}
    for j in js.values():
        assert (j["active"], j["ready"], j["succeeded"], j["failed"]) == (0, 0, 1, 0)
    reasons = [e["reason"] for e in kubectl_json("get", "events", "-n", namespace, "--field-selector",
                                                 "involvedObject.name=multi-step-example")["items"]]
    assert {"StepStarted", "WaitingForSteps", "Created", "Completed"} <= set(reasons), reasons


def test_torchtune_runtime_shares_its_pvc_between_initializers_and_trainer(controller, namespace, kubeflow_module):
    runtime = os.path.join(kubeflow_module, "manifests/base/runtimes/torchtune/llama3_2/llama3_2_1B.yaml")
    kubectl("apply", "-f", runtime)
    name = "tune"
    claim = f"initializer-{name}"
    # A volume for the claim to bind to: the simulated cluster has no provisioner.
    pv = f"{namespace}-{claim}"
    apply({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": pv},
        "spec": {"capacity": {"storage": "20Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": f"/tmp/{pv}"}, "persistentVolumeReclaimPolicy": "Delete",
                 "claimRef": {"namespace": namespace, "name": claim}},
    })
    try:
        apply({
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": name},
            "spec": {"runtimeRef": {"name": "torchtune-llama3.2-1b"},
                     "initializer": {"model": {"storageUri": "hf://meta-llama/Llama-3.2-1B", "secretRef": {"name": "hf-token"}}},
                     # The runtime names no GPU class of ours, so its 2 GPUs get no
                     # toleration of the GPU nodes' taint: the job brings it, as on any
                     # cluster whose GPU nodes are tainted.
                     "podTemplateOverrides": [{"targetJobs": [{"name": "node"}], "spec": {"tolerations": [
                         {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}]},
        }, "-n", namespace)
        final = wait_steps_in_order(namespace, name, ["dataset-initializer", "model-initializer"], 1)

        job = kubectl_json("get", "trainjob", name, "-n", namespace)
        pvc = kubectl_json("get", "pvc", claim, "-n", namespace)
        owner = pvc["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["uid"]) == ("TrainJob", name, job["metadata"]["uid"])
        assert owner["controller"] is True
        assert pvc["spec"]["resources"]["requests"]["storage"] == "20Gi"
        assert pvc["status"]["phase"] == "Bound"
        for pod in final:
            vols = {v["name"]: v for v in pod["spec"].get("volumes", [])}
            assert vols["initializer"]["persistentVolumeClaim"]["claimName"] == claim
            mounts = {m["name"]: m["mountPath"] for m in pod["spec"]["containers"][0]["volumeMounts"]}
            assert mounts["initializer"] == "/workspace"
        model = of_step(final, "model-initializer")[0]["spec"]["containers"][0]
        # The TrainJob's storageUri over the runtime's, and its Secret as envFrom.
        assert env_of(model)["STORAGE_URI"] == "hf://meta-llama/Llama-3.2-1B"
        assert model["envFrom"] == [{"secretRef": {"name": "hf-token"}}]
        dataset = of_step(final, "dataset-initializer")[0]["spec"]["containers"][0]
        assert env_of(dataset)["STORAGE_URI"] == "hf://tatsu-lab/alpaca"
        assert "envFrom" not in dataset
        js = {j["name"]: j["succeeded"] for j in job["status"]["jobsStatus"]}
        assert js == {"dataset-initializer": 1, "model-initializer": 1, "node": 1}
    finally:
        kubectl("delete", "trainjob", name, "-n", namespace, "--wait=false", check=False)
        kubectl("delete", "pvc", claim, "-n", namespace, "--wait=false", check=False)
        kubectl("delete", "pv", pv, "--wait=false", check=False)


def test_sdk_dataset_initializer_runs_before_the_node_pods(controller, client, namespace, kubeflow_module):
    # Kubeflow's runtime of 05-multi-step, as a cluster runtime the SDK can name.
    with open(os.path.join(kubeflow_module, "examples/yaml/05-multi-step.yaml")) as f:
        runtime = f.read().split("\n---\n")[0]
    rt_name = f"dataset-init-{namespace}"
    runtime = runtime.replace("kind: TrainingRuntime", "kind: ClusterTrainingRuntime").replace(
        "name: torch-with-dataset-init", f"name: {rt_name}")
    apply(runtime)
    try:
        name = client.train(
            runtime=rt_name,
            initializer=Initializer(dataset=HuggingFaceDatasetInitializer(storage_uri="hf://tatsu-lab/alpaca")),
            trainer=CustomTrainer(func=train, num_nodes=1),
        )
        spec = kubectl_json("get", "trainjob", name, "-n", namespace)["spec"]
        assert spec["initializer"]["dataset"]["storageUri"] == "hf://tatsu-lab/alpaca"
        final = wait_steps_in_order(namespace, name, ["dataset-initializer"], 1)
        init = of_step(final, "dataset-initializer")[0]
        assert env_of(init["spec"]["containers"][0])["STORAGE_URI"] == "hf://tatsu-lab/alpaca"
        job = client.wait_for_job_status(name, {"Complete"}, timeout=60, polling_interval=1)
        assert job.status == "Complete"
        steps = {s.name: s.status for s in client.get_job(name).steps}
        assert steps.get("dataset-initializer") == "Succeeded", steps
        assert steps.get("node-0") == "Succeeded", steps
    finally:
        kubectl("delete", "clustertrainingruntime", rt_name, "--wait=false", check=False)
