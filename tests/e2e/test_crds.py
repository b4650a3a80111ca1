"""The CRDs, the shipped runtimes, the examples and the config ConfigMap against the real API
server, through the real kubectl: what a TrainJob author meets before any controller runs.

Validation is the API server's (OpenAPI schema and CEL rules in crds/), so every rejection
below is what `kubectl apply` prints to a user; each must name the offending field."""

import copy
import glob
import json
import os

import pytest

from kube import REPO, apply, kubectl, kubectl_json, table, wait_for

CRDS = os.path.join(REPO, "crds")
RUNTIMES = os.path.join(CRDS, "runtimes")
EXAMPLES = sorted(glob.glob(os.path.join(REPO, "examples", "*.yaml")))
CRD_NAMES = [
    "trainjobs.trainer.kubeflow.org",
    "clustertrainingruntimes.trainer.kubeflow.org",
    "trainingruntimes.trainer.kubeflow.org",
]


@pytest.fixture(scope="module", autouse=True)
def installed(crds, session_controller_aside):
    """Every test here needs the CRDs and the shipped runtimes, and no controller: a module
    that ran before may have started the session's, which would write the statuses these
    tests write by hand."""


def trainjob(name="vit", **spec):
    """A valid TrainJob; keyword arguments replace fields of spec."""
    body = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {
            "runtimeRef": {"name": "torch-gh200"},
            "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}},
        },
    }
    body["spec"].update(spec)
    return body


def rejected(body, namespace, *extra):
    """Applies body, expects the API server to refuse it, and returns what kubectl printed."""
    proc = apply(body, "-n", namespace, *extra, check=False)
    assert proc.returncode != 0, f"accepted: {json.dumps(body)}"
    return proc.stderr


# ---------------------------------------------------------------------------------------
# Installation


def test_crds_pass_server_dry_run():
    out = kubectl("apply", "--dry-run=server", "-k", CRDS).stdout
    for name in CRD_NAMES:
        assert f"customresourcedefinition.apiextensions.k8s.io/{name}" in out
    out = kubectl("apply", "--dry-run=server", "-k", RUNTIMES).stdout
    for name in ["torch-distributed", "torch-gh200", "torch-h100"]:
        assert f"clustertrainingruntime.trainer.kubeflow.org/{name}" in out


def test_crds_are_structural_and_established():
    for name in CRD_NAMES:
        crd = kubectl_json("get", "crd", name)
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions.get("Established") == "True", conditions
        assert conditions.get("NamesAccepted") == "True", conditions
        assert "NonStructuralSchema" not in conditions, conditions


def test_trainjob_names_and_subresources():
    crd = kubectl_json("get", "crd", "trainjobs.trainer.kubeflow.org")
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"]["shortNames"] == ["tj"]
    (version,) = crd["spec"]["versions"]
    assert version["name"] == "v1alpha1" and version["storage"] and version["served"]
    assert version["subresources"] == {"status": {}}


def test_runtime_crds_share_one_schema():
    """The two runtime kinds differ only in scope and names."""
    cluster = kubectl_json("get", "crd", "clustertrainingruntimes.trainer.kubeflow.org")
    namespaced = kubectl_json("get", "crd", "trainingruntimes.trainer.kubeflow.org")
    assert cluster["spec"]["scope"] == "Cluster"
    assert namespaced["spec"]["scope"] == "Namespaced"
    assert cluster["spec"]["versions"] == namespaced["spec"]["versions"]


# ---------------------------------------------------------------------------------------
# Shipped runtimes: what Kubeflow's Python SDK needs to list and use them


@pytest.mark.parametrize("name,gpu_class,gpus", [
    ("torch-distributed", None, None),
    ("torch-gh200", "gh200", "4"),
    ("torch-h100", "h100", "8"),
])
def test_shipped_runtime_is_usable_by_the_sdk(name, gpu_class, gpus):
    rt = kubectl_json("get", "clustertrainingruntime", name)
    labels = rt["metadata"]["labels"]
    assert labels["trainer.kubeflow.org/framework"] == "torch"
    assert labels.get("trainjob.flame.dev/gpu-class") == gpu_class
    annotations = rt["metadata"]["annotations"]
    assert annotations["trainjob.flame.dev/restart-policy"] == "Gang"
    assert annotations["trainjob.flame.dev/max-restarts"] == "3"
    assert rt["spec"]["mlPolicy"] == {"numNodes": 1, "torch": {"numProcPerNode": "auto"}}
    jobs = rt["spec"]["template"]["spec"]["replicatedJobs"]
    # The SDK takes the first replicated job whose Job template carries the ancestor label,
    # then its container named node, which must have an image.
    trainer = [j for j in jobs if "trainer.kubeflow.org/trainjob-ancestor-step" in
               j["template"].get("metadata", {}).get("labels", {})]
    assert [j["name"] for j in trainer] == ["node"]
    assert trainer[0]["replicas"] == 1
    (node,) = [c for c in trainer[0]["template"]["spec"]["template"]["spec"]["containers"]
               if c["name"] == "node"]
    assert node["image"] == "nvcr.io/nvidia/pytorch:25.08-py3"
    limits = node.get("resources", {}).get("limits", {})
    assert limits == ({"nvidia.com/gpu": gpus} if gpus else {})


def test_get_runtimes_columns():
    out = kubectl("get", "clustertrainingruntimes", "torch-gh200", "torch-distributed").stdout
    assert out.splitlines()[0].split() == ["NAME", "FRAMEWORK", "GPU-CLASS", "NODES", "PROCS/NODE", "AGE"]
    gh200, generic = table(out)
    assert {k: v for k, v in gh200.items() if k != "AGE"} == {
        "NAME": "torch-gh200", "FRAMEWORK": "torch", "GPU-CLASS": "gh200", "NODES": "1", "PROCS/NODE": "auto"}
    # torch-distributed selects no GPU class: its column is empty.
    assert {k: v for k, v in generic.items() if k != "AGE"} == {
        "NAME": "torch-distributed", "FRAMEWORK": "torch", "GPU-CLASS": "", "NODES": "1", "PROCS/NODE": "auto"}
    wide = table(kubectl("get", "ctr", "torch-h100", "-o", "wide").stdout)
    assert wide[0]["IMAGE"] == "nvcr.io/nvidia/pytorch:25.08-py3"


# ---------------------------------------------------------------------------------------
# Examples


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_applies(path, namespace):
    dry = kubectl("apply", "--dry-run=server", "-n", namespace, "-f", path).stdout
    assert "trainjob.trainer.kubeflow.org/" in dry
    kubectl("apply", "-n", namespace, "-f", path)
    jobs = kubectl_json("get", "trainjobs", "-n", namespace)["items"]
    assert len(jobs) == 1
    spec = jobs[0]["spec"]
    # The real nodes' example trains on their CPU runtime; the others are GH200 jobs.
    runtime = "torch-cpu" if os.path.basename(path) == "torch-cpu-2x2.yaml" else "torch-gh200"
    assert spec["runtimeRef"] == {
        "name": runtime, "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"}
    assert spec["managedBy"] == "trainer.kubeflow.org/trainjob-controller"


def test_examples_cover_the_issue():
    names = {os.path.basename(p) for p in EXAMPLES}
    assert names == {
        "vit-single-gpu.yaml", "gh200-4x4.yaml", "cephfs-results.yaml", "suspended.yaml",
        "pod-template-overrides.yaml", "torch-cpu-2x2.yaml"}


def test_example_details(namespace):
    kubectl("apply", "-n", namespace, "-f", os.path.join(REPO, "examples"))
    jobs = {j["metadata"]["name"]: j["spec"]
            for j in kubectl_json("get", "tj", "-n", namespace)["items"]}
    assert jobs["vit-later"]["suspend"] is True
    assert jobs["vit-cifar10"]["suspend"] is False
    assert jobs["vit-l-4x4"]["trainer"]["numNodes"] == 4
    assert jobs["vit-l-4x4"]["trainer"]["numProcPerNode"] == 4
    assert jobs["vit-l-4x4"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == 4
    (override,) = jobs["vit-cifar10-cephfs"]["podTemplateOverrides"]
    volumes = {v["name"]: v for v in override["spec"]["volumes"]}
    assert volumes["results"]["persistentVolumeClaim"] == {"claimName": "vit-results"}
    assert volumes["scratch"]["emptyDir"] == {"sizeLimit": "200Gi"}
    pvc = kubectl_json("get", "pvc", "vit-results", "-n", namespace)
    assert pvc["spec"]["storageClassName"] == "cephfs"
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    (override,) = jobs["vit-project-pool"]["podTemplateOverrides"]
    assert override["targetJobs"] == [{"name": "node"}]
    assert override["spec"]["nodeSelector"] == {"flame.dev/pool": "vision"}


# ---------------------------------------------------------------------------------------
# Validation: a table of invalid TrainJobs, each rejected with the field it gets wrong


def _without_runtime_ref(body):
    del body["spec"]["runtimeRef"]


def _set(path, value):
    """A mutation that sets body[path...] = value, creating dicts on the way."""
    def mutate(body):
        node = body
        for key in path[:-1]:
            node = node.setdefault(key, {}) if isinstance(key, str) else node[key]
        node[path[-1]] = value
    return mutate


INVALID = [
    ("runtimeRef missing", _without_runtime_ref, ["spec.runtimeRef: Required value"]),
    ("runtimeRef without name", _set(["spec", "runtimeRef"], {"kind": "TrainingRuntime"}),
     ["spec.runtimeRef.name: Required value"]),
    ("runtimeRef name empty", _set(["spec", "runtimeRef", "name"], ""),
     ["spec.runtimeRef.name: Invalid value"]),
    ("runtimeRef kind unknown", _set(["spec", "runtimeRef", "kind"], "Runtime"),
     ["spec.runtimeRef.kind: Unsupported value", "ClusterTrainingRuntime", "TrainingRuntime"]),
    ("runtimeRef apiGroup foreign", _set(["spec", "runtimeRef", "apiGroup"], "kubeflow.org"),
     ["spec.runtimeRef.apiGroup: Unsupported value"]),
    ("numNodes zero", _set(["spec", "trainer", "numNodes"], 0),
     ["spec.trainer.numNodes", "greater than or equal to 1"]),
    ("numNodes negative", _set(["spec", "trainer", "numNodes"], -4),
     ["spec.trainer.numNodes", "greater than or equal to 1"]),
    ("numNodes a string", _set(["spec", "trainer", "numNodes"], "four"),
     ["spec.trainer.numNodes"]),
    ("negative GPU limit", _set(["spec", "trainer", "resourcesPerNode", "limits", "nvidia.com/gpu"], -1),
     ["spec.trainer.resourcesPerNode.limits.nvidia.com/gpu", "greater than or equal to 0"]),
    ("negative GPU request", _set(["spec", "trainer", "resourcesPerNode", "requests"], {"nvidia.com/gpu": "-2"}),
     ["spec.trainer.resourcesPerNode.requests.nvidia.com/gpu", "should match"]),
    ("fractional GPUs as a number", _set(["spec", "trainer", "resourcesPerNode", "limits", "nvidia.com/gpu"], 0.5),
     ["spec.trainer.resourcesPerNode.limits.nvidia.com/gpu", "must be of type integer,string"]),
    ("quantity not a quantity", _set(["spec", "trainer", "resourcesPerNode", "limits", "memory"], "lots"),
     ["spec.trainer.resourcesPerNode.limits.memory", "should match"]),
    ("numProcPerNode unknown word", _set(["spec", "trainer", "numProcPerNode"], "many"),
     ["spec.trainer.numProcPerNode", "positive integer or one of auto, cpu, gpu"]),
    ("numProcPerNode zero", _set(["spec", "trainer", "numProcPerNode"], 0),
     ["spec.trainer.numProcPerNode", "positive integer or one of auto, cpu, gpu"]),
    ("reserved torchrun env", _set(["spec", "trainer", "env"], [{"name": "PET_MASTER_ADDR", "value": "x"}]),
     ["spec.trainer.env", "must not set PET_NNODES"]),
    ("env without name", _set(["spec", "trainer", "env"], [{"value": "x"}]),
     ["spec.trainer.env[0].name: Required value"]),
    ("managedBy unknown", _set(["spec", "managedBy"], "example.com/other-controller"),
     ["spec.managedBy", "must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue"]),
    ("suspend not a bool", _set(["spec", "suspend"], "yes"), ["spec.suspend"]),
    ("activeDeadlineSeconds zero", _set(["spec", "activeDeadlineSeconds"], 0),
     ["spec.activeDeadlineSeconds", "greater than or equal to 1"]),
    ("override without targetJobs", _set(["spec", "podTemplateOverrides"], [{"spec": {"nodeSelector": {"a": "b"}}}]),
     ["spec.podTemplateOverrides[0].targetJobs: Required value"]),
    ("override sets the trainer's env", _set(["spec", "podTemplateOverrides"], [{
        "targetJobs": [{"name": "node"}],
        "spec": {"containers": [{"name": "node", "env": [{"name": "A", "value": "b"}]}]}}]),
     ["spec.podTemplateOverrides[0].spec.containers", "set through spec.trainer.env"]),
    ("runtimePatches duplicate manager", _set(["spec", "runtimePatches"], [
        {"manager": "trainer.kubeflow.org/kubeflow-sdk"}, {"manager": "trainer.kubeflow.org/kubeflow-sdk"}]),
     ["spec.runtimePatches[1]: Duplicate value"]),
    ("dataset URI without a scheme", _set(["spec", "initializer"], {"dataset": {"storageUri": "tatsu-lab/alpaca"}}),
     ["spec.initializer.dataset.storageUri", "should match"]),
    ("model URI without a scheme (Kubeflow v2.3 checks both)",
     _set(["spec", "initializer"], {"model": {"storageUri": "meta-llama/Llama-3.2-1B"}}),
     ["spec.initializer.model.storageUri", "should match"]),
    ("misspelt field", _set(["spec", "trainer", "gpus"], 4), ['unknown field "spec.trainer.gpus"']),
]


@pytest.mark.parametrize("what,mutate,expected", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_trainjob_is_rejected(what, mutate, expected, namespace):
    body = trainjob()
    mutate(body)
    err = rejected(body, namespace)
    for text in expected:
        assert text in err, f"{what}: {text!r} not in {err!r}"
    assert kubectl_json("get", "trainjobs", "-n", namespace)["items"] == []


@pytest.mark.parametrize("name,expected", [
    # 52 characters: rank 9999's hostname would have 64.
    ("v" * 52, ["metadata.name", "at most 51 characters", "<name>-node-0-<rank> fits in 63"]),
    # A valid object name, but not a DNS label: the job's Service could not have it.
    ("vit.b16", ["metadata.name", "DNS-1035 label"]),
    ("9vit", ["metadata.name", "DNS-1035 label"]),
])
def test_invalid_name_is_rejected(name, expected, namespace):
    err = rejected(trainjob(name), namespace)
    for text in expected:
        assert text in err, err


def test_empty_storage_uris_are_accepted(namespace):
    """Kubeflow v2.3 lets storageUri be empty, and so does the schema here."""
    body = trainjob()
    body["spec"]["initializer"] = {"dataset": {"storageUri": ""}, "model": {"storageUri": ""}}
    apply(body, "-n", namespace)
    assert kubectl_json("get", "tj", "vit", "-n", namespace)["spec"]["initializer"]["model"]["storageUri"] == ""


def test_longest_name_is_accepted(namespace):
    name = "v" * 51
    apply(trainjob(name), "-n", namespace)
    assert len(f"{name}-node-0-9999") == 63


# ---------------------------------------------------------------------------------------
# Updates


def test_runtime_ref_is_immutable(namespace):
    apply(trainjob(), "-n", namespace)
    changed = trainjob()
    changed["spec"]["runtimeRef"] = {"name": "torch-h100"}
    err = rejected(changed, namespace)
    assert "spec.runtimeRef: Invalid value" in err and "spec.runtimeRef is immutable" in err, err
    proc = kubectl("patch", "tj", "vit", "-n", namespace, "--type", "merge",
                   "-p", '{"spec":{"runtimeRef":{"kind":"TrainingRuntime"}}}', check=False)
    assert proc.returncode != 0 and "spec.runtimeRef is immutable" in proc.stderr, proc.stderr
    job = kubectl_json("get", "tj", "vit", "-n", namespace)
    assert job["spec"]["runtimeRef"]["name"] == "torch-gh200"
    # Fields that may change still do.
    kubectl("patch", "tj", "vit", "-n", namespace, "--type", "merge", "-p", '{"spec":{"suspend":true}}')


def test_managed_by_is_immutable(namespace):
    apply(trainjob(), "-n", namespace)
    proc = kubectl("patch", "tj", "vit", "-n", namespace, "--type", "merge",
                   "-p", '{"spec":{"managedBy":"kueue.x-k8s.io/multikueue"}}', check=False)
    assert proc.returncode != 0, proc.stdout
    assert "spec.managedBy: Invalid value" in proc.stderr and "spec.managedBy is immutable" in proc.stderr


def test_pod_template_overrides_change_only_while_suspended(namespace):
    override = [{"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "a"}}}]
    apply(trainjob(podTemplateOverrides=override), "-n", namespace)
    patch = json.dumps({"spec": {"podTemplateOverrides": [
        {"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "b"}}}]}})
    proc = kubectl("patch", "tj", "vit", "-n", namespace, "--type", "merge", "-p", patch, check=False)
    assert proc.returncode != 0
    assert "spec.podTemplateOverrides may be changed only while the TrainJob is suspended" in proc.stderr
    kubectl("patch", "tj", "vit", "-n", namespace, "--type", "merge", "-p", '{"spec":{"suspend":true}}')
    kubectl("patch", "tj", "vit", "-n", namespace, "--type", "merge", "-p", patch)
    # Kueue's way: resume and change the overrides in one update of a suspended job.
    both = json.dumps({"spec": {"suspend": False, "podTemplateOverrides": [
        {"targetJobs": [{"name": "node"}], "spec": {"nodeSelector": {"pool": "c"}}}]}})
    kubectl("patch", "tj", "vit", "-n", namespace, "--type", "merge", "-p", both)
    job = kubectl_json("get", "tj", "vit", "-n", namespace)
    assert job["spec"]["podTemplateOverrides"][0]["spec"]["nodeSelector"] == {"pool": "c"}


# ---------------------------------------------------------------------------------------
# Status and kubectl get


def patch_status(namespace, name, status):
    kubectl("patch", "tj", name, "-n", namespace, "--subresource=status", "--type", "merge",
            "-p", json.dumps({"status": status}))


FAILURE_STATUS = {
    "state": "Restarting",
    "reason": "NodeNotReady",
    "message": "node gh200-003 is NotReady; replacing all 2 workers (restart 2 of 3)",
    "restartCount": 2,
    "lastFailure": {"rank": 1, "node": "gh200-003", "pod": "vit-node-0-1-a1", "reason": "NodeNotReady", "exitCode": 137,
                    "time": "2026-01-01T10:00:00Z"},
    "startTime": "2026-01-01T09:00:00Z",
    "observedGeneration": 1,
    "jobsStatus": [{"name": "node", "ready": 1, "succeeded": 0, "failed": 1, "active": 1, "suspended": 0}],
}


def test_get_tj_shows_the_columns(namespace):
    apply(trainjob("vit"), "-n", namespace)
    apply(trainjob("sdk", runtimeRef={"name": "torch-distributed"}, trainer={}), "-n", namespace)
    patch_status(namespace, "vit", FAILURE_STATUS)

    out = kubectl("get", "tj", "-n", namespace).stdout
    assert out.splitlines()[0].split() == ["NAME", "STATE", "REASON", "RUNTIME", "NODES", "GPUS/NODE", "RESTARTS",
                                           "PROGRESS", "ETA", "DEADLINE", "AGE"]
    rows = {r["NAME"]: r for r in table(out)}
    assert rows["vit"]["AGE"] and rows["sdk"]["AGE"]
    del rows["vit"]["AGE"], rows["sdk"]["AGE"]
    assert rows["vit"] == {"NAME": "vit", "STATE": "Restarting", "REASON": "NodeNotReady", "RUNTIME": "torch-gh200",
                           "NODES": "2", "GPUS/NODE": "4", "RESTARTS": "2", "PROGRESS": "", "ETA": "",
                           "DEADLINE": ""}
    # Fields not set yet leave their columns empty.
    assert rows["sdk"] == {"NAME": "sdk", "STATE": "", "REASON": "", "RUNTIME": "torch-distributed", "NODES": "",
                           "GPUS/NODE": "", "RESTARTS": "", "PROGRESS": "", "ETA": "", "DEADLINE": ""}
    # What the training code reported (trainerStatus): percent done and seconds left.
    patch_status(namespace, "vit", dict(FAILURE_STATUS, trainerStatus={
        "progressPercentage": 42, "estimatedRemainingSeconds": 5400, "lastUpdatedTime": "2026-01-01T10:00:00Z"}))
    (row,) = table(kubectl("get", "tj", "vit", "-n", namespace).stdout)
    assert (row["PROGRESS"], row["ETA"]) == ("42", "5400")
    # A running job's deadline is the time itself (a date column would call it invalid).
    patch_status(namespace, "vit", dict(FAILURE_STATUS, deadline="2026-01-01T11:00:00Z"))
    (row,) = table(kubectl("get", "tj", "vit", "-n", namespace).stdout)
    assert row["DEADLINE"] == "2026-01-01T11:00:00Z"

    (wide,) = table(kubectl("get", "trainjobs", "vit", "-n", namespace, "-o", "wide").stdout)
    assert list(wide)[-3:] == ["POSITION", "EXPECTED START", "MESSAGE"]
    assert wide["MESSAGE"] == FAILURE_STATUS["message"]
    assert wide["POSITION"] == "" and wide["EXPECTED START"] == ""

    # A queued job's place and reservation.
    patch_status(namespace, "sdk", {"state": "Queued", "reason": "Resources", "queuePosition": 3,
                                    "expectedStartTime": "2026-01-01T10:40:00Z",
                                    "message": "position 3 of 7 in gh200: needs 5 nodes x 4 GPUs, 3 such nodes free; "
                                               "expected start 10:40Z"})
    (wide,) = table(kubectl("get", "trainjobs", "sdk", "-n", namespace, "-o", "wide").stdout)
    assert (wide["STATE"], wide["REASON"], wide["POSITION"]) == ("Queued", "Resources", "3")
    assert wide["EXPECTED START"], "a date column shows how far off the time is"
    assert wide["MESSAGE"].startswith("position 3 of 7 in gh200")


@pytest.mark.parametrize("trainer_status, error", [
    ({"progressPercentage": 5}, "lastUpdatedTime is required when trainerStatus is present"),
    ({"progressPercentage": 101, "lastUpdatedTime": "2026-01-01T10:00:00Z"}, "less than or equal to 100"),
    ({"metrics": [{"name": "loss"}], "lastUpdatedTime": "2026-01-01T10:00:00Z"}, "value: Required value"),
])
def test_trainer_status_has_kubeflows_schema(namespace, trainer_status, error):
    apply(trainjob(), "-n", namespace)
    r = kubectl("patch", "tj", "vit", "-n", namespace, "--subresource=status", "--type", "merge",
                "-p", json.dumps({"status": {"trainerStatus": trainer_status}}), check=False)
    assert r.returncode != 0 and error in r.stderr, r.stderr


def test_status_round_trips_and_conditions_are_kubeflows(namespace):
    apply(trainjob(), "-n", namespace)
    complete = dict(FAILURE_STATUS, state="Complete", reason="Succeeded", message="all 2 workers succeeded",
                    completionTime="2026-01-01T11:00:00Z",
                    conditions=[{"type": "Complete", "status": "True", "reason": "Succeeded",
                                 "message": "TrainJob completed", "lastTransitionTime": "2026-01-01T11:00:00Z"}])
    patch_status(namespace, "vit", complete)
    status = kubectl_json("get", "tj", "vit", "-n", namespace)["status"]
    for key, value in complete.items():
        assert status[key] == value, key

    # A condition type Kubeflow does not have would pin Kubeflow's SDK at "Created".
    proc = kubectl("patch", "tj", "vit", "-n", namespace, "--subresource=status", "--type", "merge", "-p",
                   json.dumps({"status": {"conditions": [
                       {"type": "Running", "status": "True", "reason": "Running", "message": "m",
                        "lastTransitionTime": "2026-01-01T11:00:00Z"}]}}), check=False)
    assert proc.returncode != 0 and "status.conditions[0].type: Unsupported value" in proc.stderr, proc.stderr
    proc = kubectl("patch", "tj", "vit", "-n", namespace, "--subresource=status", "--type", "merge",
                   "-p", '{"status":{"state":"Sleeping"}}', check=False)
    assert proc.returncode != 0 and "status.state: Unsupported value" in proc.stderr, proc.stderr

    # The status subresource is separate: a spec update does not write status.
    body = trainjob()
    body["status"] = {"state": "Failed"}
    apply(body, "-n", namespace)
    assert kubectl_json("get", "tj", "vit", "-n", namespace)["status"]["state"] == "Complete"


# ---------------------------------------------------------------------------------------
# Kubeflow-style manifests apply unchanged

# Kubeflow Trainer's shipped torch-distributed runtime (manifests/base/runtimes), verbatim.
KUBEFLOW_TORCH_DISTRIBUTED = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels:
    trainer.kubeflow.org/framework: torch
spec:
  mlPolicy:
    numNodes: 1
    torch:
      numProcPerNode: auto
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      command:
                        - /bin/bash
                        - -c
                        - |
                          echo "Torch Distributed Runtime"

                          echo "--------------------------------------"
                          echo "Torch Default Runtime Env"
                          env | grep PET_

                          pip list
"""

# Kubeflow's MPI runtime for DeepSpeed: two replicated jobs, JobSet network, successPolicy and
# dependsOn, security contexts and probes in the pod template.
KUBEFLOW_DEEPSPEED = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: deepspeed-distributed
  labels:
    trainer.kubeflow.org/framework: deepspeed
spec:
  mlPolicy:
    numNodes: 1
    mpi:
      numProcPerNode: 1
      mpiImplementation: OpenMPI
      sshAuthMountPath: /home/mpiuser/.ssh
      runLauncherAsNode: true
  template:
    spec:
      network:
        publishNotReadyAddresses: true
      successPolicy:
        operator: All
        targetReplicatedJobs:
          - launcher
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  securityContext:
                    fsGroup: 1000
                  containers:
                    - name: node
                      image: ghcr.io/kubeflow/trainer/deepspeed-runtime
                      securityContext:
                        runAsUser: 1000
                        runAsGroup: 1000
                      command:
                        - /usr/sbin/sshd
                      args:
                        - -De
                        - -f
                        - /home/mpiuser/.sshd_config
                      readinessProbe:
                        tcpSocket:
                          port: 2222
                        initialDelaySeconds: 5
        - name: launcher
          dependsOn:
            - name: node
              status: Ready
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  securityContext:
                    fsGroup: 1000
                  containers:
                    - name: node
                      image: ghcr.io/kubeflow/trainer/deepspeed-runtime
                      securityContext:
                        runAsUser: 1000
                        runAsGroup: 1000
"""

# A torchtune runtime: dataset and model initializers before the trainer, a shared PVC.
KUBEFLOW_TORCHTUNE = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torchtune-llama3.2-1b
  labels:
    trainer.kubeflow.org/framework: torchtune
spec:
  mlPolicy:
    numNodes: 1
    torch:
      numProcPerNode: 2
  template:
    spec:
      replicatedJobs:
        - name: dataset-initializer
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
            spec:
              template:
                spec:
                  containers:
                    - name: dataset-initializer
                      image: ghcr.io/kubeflow/trainer/dataset-initializer
                      env:
                        - name: STORAGE_URI
                          value: hf://tatsu-lab/alpaca
                      volumeMounts:
                        - mountPath: /workspace/dataset
                          name: initializer
                  volumes:
                    - name: initializer
                      persistentVolumeClaim:
                        claimName: initializer
        - name: model-initializer
          dependsOn:
            - name: dataset-initializer
              status: Complete
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: model-initializer
            spec:
              template:
                spec:
                  containers:
                    - name: model-initializer
                      image: ghcr.io/kubeflow/trainer/model-initializer
                      env:
                        - name: STORAGE_URI
                          value: hf://meta-llama/Llama-3.2-1B-Instruct
        - name: node
          dependsOn:
            - name: model-initializer
              status: Complete
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: ghcr.io/kubeflow/trainer/torchtune-trainer
                      command:
                        - tune
                        - run
                        - full_finetune_distributed
                      resources:
                        limits:
                          nvidia.com/gpu: 2
"""


@pytest.mark.parametrize("manifest", [KUBEFLOW_TORCH_DISTRIBUTED, KUBEFLOW_DEEPSPEED, KUBEFLOW_TORCHTUNE],
                         ids=["torch-distributed", "deepspeed-distributed", "torchtune"])
def test_kubeflow_runtime_applies_unchanged(manifest, namespace):
    # As a ClusterTrainingRuntime only in a dry run: a real apply would replace the shipped
    # torch-distributed that other tests use.
    out = kubectl("apply", "--dry-run=server", "-f", "-", input=manifest).stdout
    assert "clustertrainingruntime.trainer.kubeflow.org/" in out
    # The same spec as a namespaced TrainingRuntime, for real.
    kubectl("apply", "-n", namespace, "-f", "-",
            input=manifest.replace("kind: ClusterTrainingRuntime", "kind: TrainingRuntime"))
    (rt,) = kubectl_json("get", "trainingruntimes", "-n", namespace)["items"]
    assert rt["spec"]["template"]["spec"]["replicatedJobs"][-1]["name"] in ("node", "launcher")
    assert all(j["replicas"] == 1 for j in rt["spec"]["template"]["spec"]["replicatedJobs"])


def test_trainjob_as_the_python_sdk_creates_it(namespace):
    """The body TrainerClient.train() POSTs for a CustomTrainer with GPUs, env, a dataset and a
    model initializer, and a RuntimePatch option: created, not applied, as the SDK does."""
    script = ("read -r -d '' SCRIPT << EOM\n\ndef train():\n    print('hello')\n\ntrain()\n"
              "EOM\nprintf \"%s\" \"$SCRIPT\" > \"train.py\"\ntorchrun \"train.py\"")
    body = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "s8d44aa4fb6d", "labels": {"team": "vision"}},
        "spec": {
            "runtimeRef": {"name": "torch-distributed", "kind": "ClusterTrainingRuntime"},
            "trainer": {
                "numNodes": 2,
                "resourcesPerNode": {"requests": {"nvidia.com/gpu": 4, "cpu": 8, "memory": "64Gi"},
                                     "limits": {"nvidia.com/gpu": 4, "cpu": 8, "memory": "64Gi"}},
                "command": ["bash", "-c", script],
                "env": [{"name": "LR", "value": "0.001"},
                        {"name": "WANDB_API_KEY",
                         "valueFrom": {"secretKeyRef": {"name": "wandb", "key": "api-key"}}}],
            },
            "initializer": {
                "dataset": {"storageUri": "hf://tatsu-lab/alpaca", "env": [{"name": "SPLIT", "value": "train"}]},
                "model": {"storageUri": "s3://models/llama", "secretRef": {"name": "s3-credentials"}},
            },
            "runtimePatches": [{
                "manager": "trainer.kubeflow.org/kubeflow-sdk",
                "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{
                    "name": "node",
                    "template": {"spec": {"template": {"spec": {
                        "nodeSelector": {"flame.dev/pool": "vision"},
                        "tolerations": [{"key": "flame.dev/pool", "operator": "Exists"}]}}}}}]}}},
            }],
        },
    }
    kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(body))
    job = kubectl_json("get", "trainjob", "s8d44aa4fb6d", "-n", namespace)
    spec = job["spec"]
    assert spec["runtimeRef"] == {"name": "torch-distributed", "kind": "ClusterTrainingRuntime",
                                  "apiGroup": "trainer.kubeflow.org"}
    # Nothing the SDK sent was pruned, and ints stayed ints (the SDK's pydantic models read
    # numNodes as a strict int).
    for key in ("trainer", "initializer", "runtimePatches"):
        assert spec[key] == body["spec"][key], key
    assert spec["suspend"] is False
    assert spec["managedBy"] == "trainer.kubeflow.org/trainjob-controller"


def test_trainjob_from_older_sdk_sends_only_the_runtime_name(namespace):
    body = trainjob("a1b2c3d4e5f6", runtimeRef={"name": "torch-distributed"}, trainer={"numNodes": 1})
    kubectl("create", "-n", namespace, "-f", "-", input=json.dumps(body))
    ref = kubectl_json("get", "tj", "a1b2c3d4e5f6", "-n", namespace)["spec"]["runtimeRef"]
    assert ref == {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"}


KUBEFLOW_TRAINJOBS = {
    # The getting-started shape of Kubeflow's docs: CPU resources, the default runtime.
    "docs-cpu": """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: pytorch-simple
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits:
        cpu: 1
        memory: 2Gi
""",
    # Kubeflow v2.0: podSpecOverrides, numProcPerNode as a string, labels and annotations.
    "v2.0-overrides": """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: fine-tune
spec:
  runtimeRef:
    apiGroup: trainer.kubeflow.org
    kind: ClusterTrainingRuntime
    name: torch-distributed
  labels:
    kueue.x-k8s.io/queue-name: user-queue
  annotations:
    example.com/owner: alice
  trainer:
    image: docker.io/kubeflow/pytorch-mnist:v1
    command: [torchrun, /opt/mnist.py]
    args: [--epochs, "1"]
    numProcPerNode: "4"
    env:
      - name: NCCL_DEBUG
        value: INFO
  podSpecOverrides:
    - targetJobs:
        - name: node
      serviceAccountName: trainer
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-GH200-480GB
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: node
          volumeMounts:
            - name: data
              mountPath: /data
      volumes:
        - name: data
          persistentVolumeClaim:
            claimName: data
""",
    # Kubeflow v2.1 with Kueue: suspended, managed by MultiKueue, podTemplateOverrides with
    # metadata, initContainers, schedulingGates and imagePullSecrets; a deadline.
    "v2.1-kueue": """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: queued
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
spec:
  suspend: true
  managedBy: kueue.x-k8s.io/multikueue
  activeDeadlineSeconds: 86400
  runtimeRef:
    name: torch-gh200
  trainer:
    numNodes: 4
    numProcPerNode: auto
    resourcesPerNode:
      requests:
        nvidia.com/gpu: "4"
      limits:
        nvidia.com/gpu: "4"
  podTemplateOverrides:
    - targetJobs:
        - name: node
      metadata:
        labels:
          team: vision
        annotations:
          example.com/cost: "42"
      spec:
        schedulingGates:
          - name: example.com/quota
        imagePullSecrets:
          - name: registry
        initContainers:
          - name: fetch
            image: busybox
            command: [sh, -c, "true"]
        affinity:
          podAntiAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 1
                podAffinityTerm:
                  topologyKey: kubernetes.io/hostname
""",
}


@pytest.mark.parametrize("name", sorted(KUBEFLOW_TRAINJOBS))
def test_kubeflow_trainjob_applies_unchanged(name, namespace):
    kubectl("apply", "-n", namespace, "-f", "-", input=KUBEFLOW_TRAINJOBS[name])
    (job,) = kubectl_json("get", "tj", "-n", namespace)["items"]
    assert job["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime"


# ---------------------------------------------------------------------------------------
# Runtime validation


RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainingRuntime",
    "metadata": {"name": "rt", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
        "template": {"spec": {"replicatedJobs": [{
            "name": "node",
            "template": {
                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "busybox"}]}}},
            },
        }]}},
    },
}


def _runtime_set(path, value):
    def mutate(body):
        node = body
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


INVALID_RUNTIMES = [
    ("numProcPerNode unknown", _runtime_set(["spec", "mlPolicy", "torch", "numProcPerNode"], "all"),
     ["spec.mlPolicy.torch.numProcPerNode"]),
    ("numNodes zero", _runtime_set(["spec", "mlPolicy", "numNodes"], 0), ["spec.mlPolicy.numNodes"]),
    ("torch and mpi", _runtime_set(["spec", "mlPolicy", "mpi"], {"numProcPerNode": 1}),
     ["spec.mlPolicy", "only one of torch, mpi, jax, xgboost and flux"]),
    ("torch and xgboost", _runtime_set(["spec", "mlPolicy", "xgboost"], {}),
     ["spec.mlPolicy", "only one of torch, mpi, jax, xgboost and flux"]),
    ("jax and flux", _runtime_set(["spec", "mlPolicy"], {"numNodes": 1, "jax": {}, "flux": {}}),
     ["spec.mlPolicy", "only one of torch, mpi, jax, xgboost and flux"]),
    ("flux numProcPerNode zero", _runtime_set(["spec", "mlPolicy"], {"flux": {"numProcPerNode": 0}}),
     ["spec.mlPolicy.flux.numProcPerNode", "must be >= 1"]),
    ("no replicated jobs", _runtime_set(["spec", "template", "spec", "replicatedJobs"], []),
     ["spec.template.spec.replicatedJobs"]),
    ("trainer with replicas", lambda b: b["spec"]["template"]["spec"]["replicatedJobs"][0].update(replicas=4),
     ["spec.template.spec.replicatedJobs", "must have replicas 1"]),
    ("empty spec", _runtime_set(["spec"], {}), ["spec"]),
]


@pytest.mark.parametrize("what,mutate,expected", INVALID_RUNTIMES, ids=[c[0] for c in INVALID_RUNTIMES])
def test_invalid_runtime_is_rejected(what, mutate, expected, namespace):
    apply(RUNTIME, "-n", namespace, "--dry-run=server")
    body = copy.deepcopy(RUNTIME)
    mutate(body)
    err = rejected(body, namespace)
    for text in expected:
        assert text in err, f"{what}: {text!r} not in {err!r}"


# ---------------------------------------------------------------------------------------
# The controller's config as a ConfigMap


def test_config_configmap_is_the_config_file(namespace):
    kubectl("apply", "-n", namespace, "-k", os.path.join(REPO, "deploy", "config"))
    cm = kubectl_json("get", "configmap", "trainjob-controller-config", "-n", namespace)
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        assert cm["data"] == {"config.yaml": f.read()}
