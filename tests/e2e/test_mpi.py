"""MPI runtimes as Kubeflow Trainer runs them for OpenMPI, with Kubeflow's own
deepspeed-distributed and mlx-distributed runtimes applied unchanged from its Go module: the
node pods (sshd) first, the launcher only once they are Ready, the SSH key Secret and the
hostfile ConfigMap with Kubeflow's contents, owned by the TrainJob, the env and mounts on
launcher and nodes, and the job Complete when the launcher is, with nothing left running."""

import base64
import json
import os
import subprocess
import tempfile

import pytest

from conftest import Controller
from kube import SIM, apply, condition, events, kubectl, kubectl_json, kubeflow_runtime_file, pods, tj, trainjob, wait_for, wait_state

LABEL = "trainer.kubeflow.org/trainjob-name"
STEP = "jobset.sigs.k8s.io/replicatedjob-name"


def mpi_job(name, runtime, nodes):
    """A TrainJob of an MPI runtime: the launcher runs mpirun (for the simulated kubelet's
    default 20 s); the node pods run sshd, which it keeps running far longer than that."""
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {
            "runtimeRef": {"name": runtime},
            "trainer": {"numNodes": nodes, "command": ["mpirun", "--hostfile", "/etc/mpi/hostfile", "python3", "/train.py"]},
            "podTemplateOverrides": [
                {"targetJobs": [{"name": "node"}], "metadata": {"annotations": {SIM + "run-time": "600s"}}},
            ],
        },
    }


def job_pods(namespace, name):
    return kubectl_json("get", "pods", "-n", namespace, "-l", f"{LABEL}={name}")["items"]


def of_step(pod_list, step):
    return [p for p in pod_list if p["metadata"]["labels"].get(STEP) == step]


def ready_since(pod):
    """When the pod became Ready (the API's second-resolution timestamp), or None."""
    c = next((c for c in pod["status"].get("conditions", []) if c["type"] == "Ready"), None)
    return c["lastTransitionTime"] if c and c["status"] == "True" else None


def node_container(pod):
    return next(c for c in pod["spec"]["containers"] if c["name"] == "node")


def volume(pod, name):
    return next((v for v in pod["spec"].get("volumes", []) if v["name"] == name), None)


def mounts(pod):
    return {m["mountPath"]: m["name"] for m in node_container(pod).get("volumeMounts", [])}


def env(pod):
    return {e["name"]: e.get("value") for e in node_container(pod).get("env", [])}


SSH_VOLUME_ITEMS = [
    {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
    {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
    {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644},
]


def assert_owned(obj, job):
    refs = obj["metadata"]["ownerReferences"]
    assert refs == [{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": job["metadata"]["name"],
                     "uid": job["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}], refs


def assert_key_pair(secret):
    """The private key is an ECDSA P-521 key as PEM EC PRIVATE KEY, and the public key is its
    authorized_keys line: ssh-keygen derives the same one from the private key."""
    private = base64.b64decode(secret["data"]["ssh-privatekey"]).decode()
    public = base64.b64decode(secret["data"]["ssh-publickey"]).decode()
    assert private.startswith("-----BEGIN EC PRIVATE KEY-----\n"), private[:40]
    assert public.startswith("ecdsa-sha2-nistp521 ") and public.endswith("\n"), public
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(private)
    try:
        os.chmod(f.name, 0o600)
        derived = subprocess.run(["ssh-keygen", "-y", "-f", f.name], check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    assert derived.split()[:2] == public.split()[:2]


@pytest.mark.parametrize("runtime", ["deepspeed-distributed", "mlx-distributed"])
def test_kubeflow_mpi_runtime_runs_to_complete(controller, namespace, kubeflow_module, runtime):
    kubectl("apply", "-f", kubeflow_runtime_file(kubeflow_module, runtime))
    name = "mpi"
    apply(mpi_job(name, runtime, nodes=3), "-n", namespace)

    # runLauncherAsNode: of 3 nodes the launcher is one, so 2 node pods; no launcher until
    # both are Ready.
    nodes = wait_for("2 Ready node pods", lambda: len(n := [p for p in of_step(job_pods(namespace, name), "node") if ready_since(p)]) == 2 and n)
    launcher = wait_for("the launcher pod", lambda: of_step(job_pods(namespace, name), "launcher"), timeout=60)
    assert len(launcher) == 1
    launcher = launcher[0]
    ready = [ready_since(p) for p in nodes]
    assert all(r <= launcher["metadata"]["creationTimestamp"] for r in ready), (ready, launcher["metadata"]["creationTimestamp"])
    job = tj(namespace, name)

    secret = kubectl_json("get", "secret", f"{name}-mpi-ssh-auth", "-n", namespace)
    assert secret["type"] == "kubernetes.io/ssh-auth"
    assert secret["immutable"] is True
    assert sorted(secret["data"]) == ["ssh-privatekey", "ssh-publickey"]
    assert_key_pair(secret)
    assert_owned(secret, job)
    hostfile = kubectl_json("get", "configmap", f"{name}-mpi-hostfile", "-n", namespace)
    assert hostfile["data"] == {"hostfile": f"{name}-node-0-0.{name} slots=1\n{name}-node-0-1.{name} slots=1\n"
                                            f"{name}-launcher-0-0.{name} slots=1\n"}
    assert_owned(hostfile, job)

    for pod in nodes + [launcher]:
        ssh = volume(pod, "mpi-ssh-auth")
        assert ssh["secret"] == {"secretName": f"{name}-mpi-ssh-auth", "defaultMode": 0o400, "items": SSH_VOLUME_ITEMS}, ssh
        assert mounts(pod)["/home/mpiuser/.ssh"] == "mpi-ssh-auth"
    for pod in nodes:
        assert node_container(pod)["command"] == ["/usr/sbin/sshd"]
        assert volume(pod, "mpi-hostfile") is None
        assert not any(k.startswith("OMPI_MCA_") for k in env(pod))
    assert volume(launcher, "mpi-hostfile")["configMap"] == {
        "name": f"{name}-mpi-hostfile", "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}], "defaultMode": 0o644}
    assert mounts(launcher)["/etc/mpi"] == "mpi-hostfile"
    assert node_container(launcher)["command"][0] == "mpirun"
    e = env(launcher)
    assert {k: e.get(k) for k in e if k.startswith("OMPI_MCA_")} == {
        "OMPI_MCA_orte_default_hostfile": "/etc/mpi/hostfile",
        "OMPI_MCA_orte_keep_fqdn_hostnames": "true",
        "OMPI_MCA_orte_set_default_slots": "1",
        "OMPI_MCA_plm_rsh_args": "-o ConnectionAttempts=10",
    }

    # The success policy targets the launcher: when it succeeds the job is Complete and the
    # node pods, whose sshd would run on, are deleted.
    done = wait_state(namespace, name, "Complete", timeout=90)
    assert condition(done, "Complete")["status"] == "True"
    wait_for("no pod of the job left running",
             lambda: not [p for p in job_pods(namespace, name)
                          if p["status"].get("phase") in ("Pending", "Running") and not p["metadata"].get("deletionTimestamp")],
             timeout=60)
    assert of_step(job_pods(namespace, name), "launcher")[0]["status"]["phase"] == "Succeeded"

    # Deleted with the TrainJob, by the garbage collector.
    kubectl("delete", "trainjob", name, "-n", namespace)
    wait_for("the Secret and ConfigMap to go with the TrainJob",
             lambda: all(kubectl("get", kind, obj, "-n", namespace, check=False).returncode != 0
                         for kind, obj in (("secret", f"{name}-mpi-ssh-auth"), ("configmap", f"{name}-mpi-hostfile"))),
             timeout=60)

def test_mpi_implementation_other_than_openmpi_is_refused(controller, namespace):
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "mpi-unset"},
        "spec": {
            "mlPolicy": {"numNodes": 1, "mpi": {"mpiImplementation": "", "numProcPerNode": 1}},
            "template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [
                    {"name": "node", "image": "mpi", "command": ["/usr/sbin/sshd"], "args": ["-De"]}]}}}}},
                {"name": "launcher", "dependsOn": [{"name": "node", "status": "Ready"}],
                 "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                              "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "mpi"}]}}}}},
            ]}},
        },
    }
    apply(runtime, "-n", namespace)
    job = mpi_job("refused", "mpi-unset", nodes=1)
    job["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    apply(job, "-n", namespace)
    failed = wait_state(namespace, "refused", "Failed", timeout=60)
    status = failed["status"]
    assert status["reason"] == "UnsupportedRuntime"
    assert "spec.mlPolicy.mpi.mpiImplementation" in status["message"], status["message"]
    assert condition(failed, "Failed")["reason"] == "UnsupportedRuntime"
    ev = wait_for("the Warning event", lambda: events(namespace, "refused", "Failed"))
    assert ev[0]["type"] == "Warning" and "UnsupportedRuntime" in ev[0]["message"], ev
    assert job_pods(namespace, "refused") == []
    for kind, obj in (("secret", "refused-mpi-ssh-auth"), ("configmap", "refused-mpi-hostfile")):
        assert kubectl("get", kind, obj, "-n", namespace, check=False).returncode != 0


def hostfile_of(namespace, name):
    proc = kubectl("get", "configmap", f"{name}-mpi-hostfile", "-n", namespace, "-o", "json", check=False)
    return json.loads(proc.stdout)["data"]["hostfile"] if proc.returncode == 0 else None


def test_num_nodes_cannot_change_so_the_hostfile_stays_true(controller, namespace, kubeflow_module):
    """Kubeflow Trainer makes spec.trainer immutable: an MPI job keeps the nodes its hostfile
    names, suspended or not. The API server refuses the change and names the field."""
    kubectl("apply", "-f", kubeflow_runtime_file(kubeflow_module, "deepspeed-distributed"))
    name = "fixed"
    apply(mpi_job(name, "deepspeed-distributed", nodes=2), "-n", namespace)
    hostfile = wait_for("the hostfile", lambda: hostfile_of(namespace, name))
    assert hostfile == f"{name}-node-0-0.{name} slots=1\n{name}-launcher-0-0.{name} slots=1\n"
    for patch in ('{"spec":{"trainer":{"numNodes":3}}}',
                  '{"spec":{"suspend":true,"trainer":{"numNodes":3}}}'):
        proc = kubectl("patch", "tj", name, "-n", namespace, "--type", "merge", "-p", patch, check=False)
        assert proc.returncode != 0, proc.stdout
        assert "spec.trainer.numNodes: Invalid value" in proc.stderr, proc.stderr
        assert "spec.trainer.numNodes is immutable" in proc.stderr, proc.stderr
    kubectl("patch", "tj", name, "-n", namespace, "--type", "merge", "-p", '{"spec":{"suspend":true}}')
    proc = kubectl("patch", "tj", name, "-n", namespace, "--type", "merge", "-p", '{"spec":{"trainer":{"numNodes":3}}}',
                   check=False)
    assert proc.returncode != 0 and "spec.trainer.numNodes is immutable" in proc.stderr, proc.stderr
    assert tj(namespace, name)["spec"]["trainer"]["numNodes"] == 2
    assert hostfile_of(namespace, name) == hostfile


PINNED_NODE = "trainjob.flame.dev/node"
LAUNCHER_HOLD = "trainjob.flame.dev/launcher-hold"
GPU_CLASS = "trainjob.flame.dev/gpu-class"


def gpu_mpi_job(name, nodes):
    """An MPI job whose resourcesPerNode asks for a whole GH200 node: Kubeflow gives it to
    the node pods (runLauncherAsNode) and to the launcher, which runs 30 s."""
    job = mpi_job(name, "deepspeed-distributed", nodes)
    job["spec"]["trainer"]["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": 4}}
    job["spec"]["podTemplateOverrides"].append(
        {"targetJobs": [{"name": "launcher"}], "metadata": {"annotations": {SIM + "run-time": "30s"}}})
    return job


def pinned_to(pod):
    """The node the pod is pinned to, checked in its required affinity, and where it runs."""
    node = pod["metadata"]["annotations"][PINNED_NODE]
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    for term in terms:
        assert {"key": "metadata.name", "operator": "In", "values": [node]} in term["matchFields"], term
    assert pod["spec"].get("nodeName") in (None, node), (pod["metadata"]["name"], pod["spec"].get("nodeName"), node)
    return node


@pytest.fixture
def deepspeed_gh200(kubeflow_module):
    """Kubeflow's deepspeed-distributed, unchanged, given the GH200 class by the operator's
    label (as a cluster assigns its runtimes to GPU classes); the label goes afterwards."""
    kubectl("apply", "-f", kubeflow_runtime_file(kubeflow_module, "deepspeed-distributed"))
    kubectl("label", "clustertrainingruntime", "deepspeed-distributed", f"{GPU_CLASS}=gh200", "--overwrite")
    try:
        yield "deepspeed-distributed"
    finally:
        kubectl("label", "clustertrainingruntime", "deepspeed-distributed", f"{GPU_CLASS}-")


def test_launcher_with_gpus_is_admitted_with_its_gang_and_a_second_gang_waits_queued(controller, namespace, deepspeed_gh200):
    """resourcesPerNode with GPUs under the built-in admission: the gang admitted is the node
    pods and the launcher, each pinned to a GH200 node of its own (4 GPUs each); the launcher
    is created only once the nodes are Ready, on the node held for it from the admission on.
    A second such gang, larger than what is left, waits Queued with no pod at all."""
    name, other = "gpu-launcher", "gpu-launcher-2"
    apply(gpu_mpi_job(name, nodes=3), "-n", namespace)

    nodes = wait_for("2 Ready node pods", lambda: len(n := [p for p in of_step(job_pods(namespace, name), "node") if ready_since(p)]) == 2 and n,
                     timeout=120)
    rank0 = next(p for p in nodes if p["metadata"]["name"] == f"{name}-node-0-0-a0")
    hold = json.loads(rank0["metadata"]["annotations"][LAUNCHER_HOLD])
    assert hold["pod"] == f"{name}-launcher-0-0-a0", hold
    assert hold["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == "4", hold
    node_nodes = [pinned_to(p) for p in nodes]
    assert hold["node"] not in node_nodes and len(set(node_nodes)) == 2, (hold, node_nodes)
    admitted = wait_for("the Admitted event", lambda: events(namespace, name, "Admitted"))
    assert f"the launcher's place on {hold['node']}" in admitted[0]["message"], admitted

    # While the first gang holds 3 of the 8 GH200 nodes, a gang of 7 node pods and a launcher
    # cannot fit: it waits whole, with no pod.
    apply(gpu_mpi_job(other, nodes=8), "-n", namespace)
    queued = wait_state(namespace, other, "Queued", timeout=60)["status"]
    assert queued["reason"] == "Resources", queued
    assert "needs 7 nodes x 4 GPUs and a launcher of 4 GPUs" in queued["message"], queued["message"]
    assert job_pods(namespace, other) == []

    launcher = wait_for("the launcher pod", lambda: of_step(job_pods(namespace, name), "launcher"), timeout=60)
    assert len(launcher) == 1
    launcher = launcher[0]
    assert all(ready_since(p) <= launcher["metadata"]["creationTimestamp"] for p in nodes)
    assert pinned_to(launcher) == hold["node"]
    assert node_container(launcher)["resources"]["limits"] == {"nvidia.com/gpu": "4"}
    bound = wait_for("the launcher bound to its node",
                     lambda: (p := kubectl_json("get", "pod", launcher["metadata"]["name"], "-n", namespace))["spec"].get("nodeName") and p)
    assert bound["spec"]["nodeName"] == hold["node"]
    assert job_pods(namespace, other) == []

    done = wait_state(namespace, name, "Complete", timeout=120)
    assert condition(done, "Complete")["status"] == "True"
    wait_for("no pod of the job left running",
             lambda: not [p for p in job_pods(namespace, name)
                          if p["status"].get("phase") in ("Pending", "Running") and not p["metadata"].get("deletionTimestamp")],
             timeout=60)
    assert of_step(job_pods(namespace, name), "launcher")[0]["status"]["phase"] == "Succeeded"
    kubectl("delete", "trainjob", other, "-n", namespace, "--wait=false")


def gh200_pods():
    """The live pods on the GH200 nodes, or waiting for a GPU."""
    nodes = {n["metadata"]["name"] for n in kubectl_json("get", "nodes", "-l", "nvidia.com/gpu.product=NVIDIA-GH200-480GB")["items"]}
    return [p["metadata"]["name"] for p in kubectl_json("get", "pods", "-A")["items"]
            if p["status"].get("phase") not in ("Succeeded", "Failed")
            and (p["spec"].get("nodeName") in nodes
                 or any("nvidia.com/gpu" in (c.get("resources", {}).get("limits") or {}) for c in p["spec"]["containers"]))]


def test_launcher_place_is_kept_across_a_controller_restart(session_controller_aside, namespace, deepspeed_gh200):
    """SIGKILL after the node pods are created, before the launcher: the controller that
    starts next reads the launcher's place from the pods (nothing lived only in the dead
    one's memory), keeps it from a rival job that would fit only with it (6 of the 8 GH200
    nodes, where 2 hold node pods and 1 the launcher's place), and creates the launcher
    there once the nodes are Ready. The session's controller steps aside meanwhile."""
    wait_for("the GH200 nodes to be free", lambda: not gh200_pods(), timeout=180, interval=1)
    name = "restarted"
    # A client-side limit of 4 requests a second spreads the plan's writes over seconds.
    slow = Controller("--kube-api-qps", "4", "--kube-api-burst", "1").start()
    try:
        apply(gpu_mpi_job(name, nodes=3), "-n", namespace)
        wait_for("both node pods", lambda: len(of_step(job_pods(namespace, name), "node")) == 2, timeout=60, interval=0.1)
    finally:
        slow.kill()
    assert of_step(job_pods(namespace, name), "launcher") == [], "the kill landed after the launcher was created: slow the controller further"
    rank0 = kubectl_json("get", "pod", f"{name}-node-0-0-a0", "-n", namespace)
    held = json.loads(rank0["metadata"]["annotations"][LAUNCHER_HOLD])["node"]
    apply(trainjob("rival", nodes=6, run_time="3s"), "-n", namespace)

    fresh = Controller().start()
    try:
        rival = wait_state(namespace, "rival", "Queued", timeout=60)["status"]
        assert rival["reason"] == "Resources" and "needs 6 nodes x 4 GPUs, 5 such nodes free" in rival["message"], rival
        launcher = wait_for("the launcher pod", lambda: of_step(job_pods(namespace, name), "launcher"), timeout=90)[0]
        assert pinned_to(launcher) == held
        bound = wait_for("the launcher bound to its node",
                         lambda: (p := kubectl_json("get", "pod", launcher["metadata"]["name"], "-n", namespace))["spec"].get("nodeName") and p)
        assert bound["spec"]["nodeName"] == held
        assert pods(namespace, "rival") == []
        wait_state(namespace, name, "Complete", timeout=120)
        # Its nodes free again, the rival runs whole.
        wait_for("the rival to run", lambda: tj(namespace, "rival").get("status", {}).get("state") in ("Running", "Complete"), timeout=90)
    finally:
        fresh.stop()
