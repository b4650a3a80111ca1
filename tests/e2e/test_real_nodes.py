"""The local cluster's real nodes (deploy/local/real-nodes.sh): real-0 and real-1 run each
pod's container with containerd and runc, give it an address on their shared bridge, and
CoreDNS answers for the cluster domain, so that the pods of a job find each other by the
names of its headless Service, as a TrainJob's ranks do; a TrainJob whose runtime
selects the CPU-only GPU class of these nodes runs its command there; and TrainJobs of the
runtime torch-cpu train for real with the training image (deploy/local/real/torch-cpu):
torchrun on 2 nodes of 2 processes, plain PyTorch from the controller's RANK and
WORLD_SIZE, Kubeflow's MPI runtime over SSH, a crash and its restart, a walltime's warning
and SIGTERM.

Without real nodes these tests fail, saying why the cluster has none (the check of
cluster.sh up that failed), so that CI never passes without them; TJC_REAL_NODES=0, which
leaves them out on purpose, skips them."""

import json
import os
import re
import subprocess

import pytest
import yaml

from conftest import Controller
from kube import RANK, REPO, apply, events, kubectl, kubectl_json, kubeflow_runtime_file, pods, tj, wait_for, wait_state

REAL = "trainjob.flame.dev/real"
GPU_CLASS = "trainjob.flame.dev/gpu-class"
IMAGE = "docker.io/library/debian:bookworm"


def why_none():
    cache = os.environ.get("TJC_CACHE", os.path.expanduser("~/.cache/trainjob-controller"))
    path = os.path.join(cache, "real", os.environ.get("TJC_CLUSTER", "trainjob") + ".why")
    try:
        with open(path) as f:
            return f.read().strip()
    except FileNotFoundError:
        return "cluster.sh up left no reason (was the cluster started before real nodes existed?)"


@pytest.fixture(scope="module", autouse=True)
def real_nodes():
    if os.environ.get("TJC_REAL_NODES") == "0":
        pytest.skip("TJC_REAL_NODES=0: the cluster has no real nodes on purpose")
    nodes = kubectl_json("get", "nodes", "-l", f"{REAL}=true")["items"]
    ready = sorted(n["metadata"]["name"] for n in nodes
                   if any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions") or []))
    if ready != ["real-0", "real-1"]:
        pytest.fail(f"the cluster's real nodes are not both Ready (found {ready}): {why_none()}")
    return ready


def real_pod(name, node, command, **spec):
    """A bare pod on real node `node` running `command` in the Debian image built locally."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "real-nodes"}},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {REAL: "true", "kubernetes.io/hostname": node},
            "tolerations": [{"key": REAL, "operator": "Exists", "effect": "NoSchedule"}],
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "node", "image": IMAGE, "imagePullPolicy": "Never", "command": ["bash", "-c", command]}],
            **spec,
        },
    }


def phase(namespace, name):
    return kubectl_json("get", "pod", name, "-n", namespace)["status"].get("phase")


def wait_done(namespace, name, timeout=120):
    wait_for(f"pod {name} to finish", lambda: phase(namespace, name) in ("Succeeded", "Failed"), timeout=timeout)
    return kubectl_json("get", "pod", name, "-n", namespace)


def test_the_real_nodes_report_a_real_kubelet_and_runtime(real_nodes):
    for name in real_nodes:
        node = kubectl_json("get", "node", name)
        info = node["status"]["nodeInfo"]
        assert info["kubeletVersion"].startswith("v1.")
        assert info["containerRuntimeVersion"].startswith("containerd://")
        assert {"key": REAL, "value": "true", "effect": "NoSchedule"} in node["spec"]["taints"]
        assert "nvidia.com/gpu" not in node["status"]["allocatable"]


def test_a_pod_runs_its_command_in_a_container_and_succeeds(namespace):
    command = 'echo "uid $(id -u) on $(cat /etc/debian_version) in $(hostname)"; exit 0'
    apply(real_pod("hello", "real-0", command), "-n", namespace)
    pod = wait_done(namespace, "hello")
    assert pod["status"]["phase"] == "Succeeded", pod["status"]
    assert pod["spec"]["nodeName"] == "real-0"
    state = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert state["exitCode"] == 0 and state["reason"] == "Completed"
    # The log comes from the kubelet, through the API server, as for any real pod.
    log = kubectl("logs", "hello", "-n", namespace).stdout
    assert log.startswith("uid 0 on 12.") and log.strip().endswith("in hello"), log


def test_a_failing_command_fails_the_pod_with_its_exit_code(namespace):
    apply(real_pod("crash", "real-1", "echo dying >&2; exit 3"), "-n", namespace)
    pod = wait_done(namespace, "crash")
    assert pod["status"]["phase"] == "Failed"
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3


def test_two_pods_on_two_nodes_find_each_other_through_the_headless_service(namespace):
    """The names of a TrainJob's ranks: <job>-node-0-<rank>.<job> within the namespace, and the
    whole name under svc.cluster.local, which CoreDNS serves from the Service's EndpointSlices.
    Each pod resolves both names of the other; then rank 1, on real-1, connects to rank 0's
    port on real-0 by its short name and says who it is, as a rendezvous would."""
    apply({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "j"},
        "spec": {"clusterIP": "None", "selector": {"app": "real-nodes"}, "publishNotReadyAddresses": True,
                 "ports": [{"name": "rendezvous", "port": 29500}]},
    }, "-n", namespace)

    def resolve(peer):
        return (f"for i in $(seq 60); do getent hosts {peer}.j >/dev/null && break; sleep 1; done; "
                f"getent hosts {peer}.j >/dev/null || exit 10; "
                f"getent hosts {peer}.j.{namespace}.svc.cluster.local >/dev/null || exit 11; ")

    listen = ("perl -MIO::Socket::INET -e '$s = IO::Socket::INET->new(LocalPort => 29500, Listen => 1, "
              "ReuseAddr => 1) or die $!; $c = $s->accept; print \"got: \", scalar <$c>'")
    connect = ("for i in $(seq 30); do { exec 3<>/dev/tcp/j-node-0-0.j/29500; } 2>/dev/null && break; sleep 1; done; "
               "echo \"hello from $(hostname -i)\" >&3; echo sent")
    for rank, node, command in ((0, "real-0", resolve("j-node-0-1") + listen),
                                (1, "real-1", resolve("j-node-0-0") + connect)):
        name = f"j-node-0-{rank}"
        apply(real_pod(name, node, command, hostname=name, subdomain="j"), "-n", namespace)
    done = {}
    for rank in (0, 1):
        name = f"j-node-0-{rank}"
        pod = wait_done(namespace, name)
        log = kubectl("logs", name, "-n", namespace, check=False).stdout
        assert pod["status"]["phase"] == "Succeeded", f"{name}: {pod['status']}, log: {log}"
        done[name] = (pod, log.strip())
    (rank0, got), (rank1, sent) = done["j-node-0-0"], done["j-node-0-1"]
    assert sent == "sent"
    assert got == f"got: hello from {rank1['status']['podIP']}"
    # Each node gives its pods addresses of its own range of the shared bridge's network.
    a, b = rank0["status"]["podIP"].split("."), rank1["status"]["podIP"].split(".")
    assert a[:2] == b[:2] and a[2] != b[2], (a, b)


# The GPU class of the real nodes, added to the shipped config for a controller of this
# module's own: what a runtime names to send its pods there. They have no GPU; a job asks for
# none.
with open(os.path.join(REPO, "deploy", "local", "real", "gpu-class.yaml")) as f:
    REAL_CLASS = f.read()


@pytest.fixture(scope="module")
def real_controller(real_nodes, session_controller_aside, tmp_path_factory):
    """A controller whose config has the real nodes' class besides the shipped ones."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        shipped = f.read()
    assert "\ngpuClasses:\n" in shipped
    path = tmp_path_factory.mktemp("real") / "config.yaml"
    path.write_text(shipped.replace("\ngpuClasses:\n", "\ngpuClasses:\n" + REAL_CLASS, 1))
    c = Controller("--config", str(path)).start()
    try:
        yield c
    finally:
        c.stop()


def test_a_trainjob_on_the_real_class_runs_its_ranks_for_real(real_controller, namespace):
    """A runtime named torch-real selects the class real; the TrainJob's two ranks run its
    command in containers on the real nodes, resolve the master's address the controller gives
    them (<job>-node-0-0.<job>, through the job's headless Service), and the job completes."""
    apply({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "torch-real", "labels": {"trainer.kubeflow.org/framework": "torch"}},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": 1}},
            "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {
                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                "spec": {"template": {"spec": {"containers": [
                    {"name": "node", "image": IMAGE, "imagePullPolicy": "Never"}]}}}}}]}},
        },
    }, "-n", namespace)
    command = ("for i in $(seq 60); do getent hosts $MASTER_ADDR >/dev/null && break; sleep 1; done; "
               "echo rank $RANK of $WORLD_SIZE on $(hostname -i), master $MASTER_ADDR at $(getent hosts $MASTER_ADDR | cut -d' ' -f1)")
    apply({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "rt"},
        "spec": {
            "runtimeRef": {"name": "torch-real", "kind": "TrainingRuntime"},
            "trainer": {"numNodes": 2, "command": ["bash", "-c", command],
                        "resourcesPerNode": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
        },
    }, "-n", namespace)
    wait_state(namespace, "rt", "Complete", timeout=120)
    ranks = sorted(pods(namespace, "rt"), key=lambda p: p["metadata"]["name"])
    assert [p["spec"]["nodeName"].startswith("real-") for p in ranks] == [True, True], [p["spec"].get("nodeName") for p in ranks]
    master_ip = ranks[0]["status"]["podIP"]
    for rank, p in enumerate(ranks):
        log = kubectl("logs", p["metadata"]["name"], "-n", namespace).stdout.strip()
        assert log == f"rank {rank} of 2 on {p['status']['podIP']}, master rt-node-0-0.rt at {master_ip}", log


# The training image and its script (deploy/local/real/torch-cpu), and the runtime that runs
# it on the real nodes.
TORCH_IMAGE = "localhost/trainjob-torch-cpu:latest"
TRAIN = "/opt/trainjob/train.py"
LINE = re.compile(r"^rank (\d+): (.*)$", re.M)


@pytest.fixture(scope="module")
def torch_cpu(real_nodes):
    """The training image on both real nodes (built first when its inputs changed: cluster.sh
    real-image, which the test command runs before the suites, so that a build shows its
    progress) and the ClusterTrainingRuntime torch-cpu."""
    proc = subprocess.run([os.path.join(REPO, "deploy", "local", "cluster.sh"), "real-image"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"cluster.sh real-image failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    kubectl("apply", "-f", os.path.join(REPO, "deploy", "local", "real", "torch-cpu.yaml"))
    return TORCH_IMAGE


def torch_job(name, nodes, command, procs=1, volume=None, annotations=None, **spec):
    """A TrainJob of the runtime torch-cpu; `volume`, a folder of this machine, is mounted at
    /checkpoint in every pod (both real nodes are this machine, so they share it)."""
    trainer = {"numNodes": nodes, "numProcPerNode": procs, "command": command}
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {"runtimeRef": {"name": "torch-cpu"}, "trainer": trainer, **spec},
    }
    if volume:
        job["spec"]["podTemplateOverrides"] = [{
            "targetJobs": [{"name": "node"}],
            "spec": {"volumes": [{"name": "checkpoint", "hostPath": {"path": str(volume), "type": "DirectoryOrCreate"}}],
                     "containers": [{"name": "node", "volumeMounts": [{"name": "checkpoint", "mountPath": "/checkpoint"}]}]},
        }]
    return job


def rank_lines(namespace, pod):
    """What each rank of the pod said, {rank: [line, ...]}, from the pod's log."""
    said = {}
    for rank, what in LINE.findall(kubectl("logs", pod["metadata"]["name"], "-n", namespace).stdout):
        said.setdefault(int(rank), []).append(what)
    return said


def finish(namespace, name, want, timeout, restarts=0):
    """Waits until the job is Complete or Failed, or has restarted more often than `restarts`,
    and requires it to be `want` then, so that a broken run fails at once with its status."""
    def done():
        j = tj(namespace, name)
        status = j.get("status", {})
        return (status.get("state") in ("Complete", "Failed") or status.get("restartCount", 0) > restarts) and j

    job = wait_for(f"TrainJob {name} to finish", done, timeout=timeout)
    assert job["status"]["state"] == want and job["status"].get("restartCount", 0) == restarts, job["status"]
    return job


def by_node_rank(pod_list):
    return sorted(pod_list, key=lambda p: int(p["metadata"]["labels"][RANK]))


def test_torchrun_trains_on_two_nodes_of_two_processes(real_controller, torch_cpu, namespace, tmp_path):
    """torchrun on each node starts two ranks from the controller's PET_* variables: the four
    ranks see WORLD_SIZE 4 and their own RANK, agree on an all-reduce and on the trained
    weights, and rank 0's checkpoint is on the mounted folder."""
    command = ["torchrun", TRAIN, "--steps", "5", "--checkpoint-dir", "/checkpoint"]
    apply(torch_job("tr", 2, command, procs=2, volume=tmp_path), "-n", namespace)
    finish(namespace, "tr", "Complete", timeout=240)
    ranks = by_node_rank(pods(namespace, "tr"))
    assert [p["spec"]["nodeName"].startswith("real-") for p in ranks] == [True, True]
    for node_rank, p in enumerate(ranks):
        said = rank_lines(namespace, p)
        assert sorted(said) == [2 * node_rank, 2 * node_rank + 1], said
        for rank, lines in said.items():
            assert lines[0].startswith(f"rank {rank} of 4 (local rank {rank % 2}) on tr-node-0-{node_rank}"), lines
            assert "all_reduce ok: 10 = 1 + ... + 4" in lines, lines
            assert any(x.startswith("step 5/5 loss ") for x in lines), lines
            assert lines[-1] == "done", lines
    checkpoint = json.loads((tmp_path / "checkpoint.json").read_text())
    assert (checkpoint["rank"], checkpoint["world_size"], checkpoint["step"]) == (0, 4, 5), checkpoint
    assert (tmp_path / "model.pt").stat().st_size > 0


def test_plain_pytorch_joins_from_the_environment_the_controller_sets(real_controller, torch_cpu, namespace):
    """Without torchrun, one process a node: init_process_group("gloo", init_method="env://")
    takes RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT as the controller set them."""
    apply(torch_job("plain", 2, ["python3", TRAIN, "--steps", "3"]), "-n", namespace)
    finish(namespace, "plain", "Complete", timeout=180)
    for node_rank, p in enumerate(by_node_rank(pods(namespace, "plain"))):
        said = rank_lines(namespace, p)
        assert list(said) == [node_rank], said
        lines = said[node_rank]
        assert lines[0] == f"rank {node_rank} of 2 (local rank 0) on plain-node-0-{node_rank}, master plain-node-0-0.plain:29500", lines
        assert "all_reduce ok: 3 = 1 + ... + 2" in lines and lines[-1] == "done", lines


@pytest.fixture
def deepspeed_cpu(kubeflow_module, torch_cpu):
    """Kubeflow's deepspeed-distributed runtime as its module ships it, under another name,
    with the training image and the GPU class of the real nodes, its launcher on them too."""
    with open(kubeflow_runtime_file(kubeflow_module, "deepspeed-distributed")) as f:
        runtime = yaml.safe_load(f)
    runtime["metadata"]["name"] = "deepspeed-cpu"
    runtime["metadata"]["labels"][GPU_CLASS] = "real"
    for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        pod = job["template"]["spec"]["template"]["spec"]
        for c in pod["containers"]:
            c.update(image=torch_cpu, imagePullPolicy="Never")
        # The class places the node pods; the launcher, which asks for no GPU, is placed by
        # the scheduler alone, so it is sent to the real nodes here.
        if job["name"] == "launcher":
            pod.update(nodeSelector={REAL: "true"}, tolerations=[{"key": REAL, "operator": "Exists", "effect": "NoSchedule"}])
    apply(runtime)
    yield "deepspeed-cpu"
    kubectl("delete", "clustertrainingruntime", "deepspeed-cpu", "--ignore-not-found")


def test_an_mpi_launcher_runs_mpirun_over_ssh_on_the_nodes(real_controller, deepspeed_cpu, namespace):
    """The launcher (uid 1000, the job's key Secret in ~/.ssh, the hostfile in /etc/mpi) runs
    mpirun, which starts rank 0 beside itself (runLauncherAsNode: OpenMPI maps its first
    rank to its own node) and reaches the node pod's sshd over SSH to start rank 1 there;
    the launcher's address is the master of the gloo group."""
    name = "mpi"
    command = ["bash", "-c", f"mpirun -x MASTER_ADDR=$(hostname -i) -x MASTER_PORT=29500 python3 {TRAIN} --steps 3"]
    apply({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {"runtimeRef": {"name": deepspeed_cpu}, "trainer": {"numNodes": 2, "command": command}},
    }, "-n", namespace)
    finish(namespace, name, "Complete", timeout=240)
    (launcher,) = [p for p in kubectl_json("get", "pods", "-n", namespace, "-l", f"trainer.kubeflow.org/trainjob-name={name}")["items"]
                   if p["metadata"]["labels"].get("jobset.sigs.k8s.io/replicatedjob-name") == "launcher"]
    state = launcher["status"]["containerStatuses"][0]["state"]["terminated"]
    assert state["exitCode"] == 0, state
    said = rank_lines(namespace, launcher)
    assert sorted(said) == [0, 1], said
    assert said[0][0] == f"rank 0 of 2 (local rank 0) on {name}-launcher-0-0, master {launcher['status']['podIP']}:29500", said
    assert said[1][0] == f"rank 1 of 2 (local rank 0) on {name}-node-0-0, master {launcher['status']['podIP']}:29500", said
    for lines in said.values():
        assert "all_reduce ok: 3 = 1 + ... + 2" in lines and lines[-1] == "done", lines


def test_a_crashed_rank_leaves_its_message_and_log_and_restarts_on_the_other_node(real_controller, torch_cpu, namespace, tmp_path):
    """The script raises at step 2 of the first attempt: the status and the Restarting event
    end with Python's last line, as the kubelet took it from the log (FallbackToLogsOnError),
    the crashed pod's whole log is readable with kubectl logs, and with its node cordoned the
    next attempt runs on the other real node and completes."""
    name = "crash"
    command = ["bash", "-c", f"if [ -e /checkpoint/crashed ]; then exec python3 {TRAIN} --steps 2; fi; "
               f"touch /checkpoint/crashed; exec python3 {TRAIN} --steps 3 --crash-rank 0 --crash-step 2"]
    apply(torch_job(name, 1, command, volume=tmp_path), "-n", namespace)
    job = wait_for("the restart", lambda: (j := tj(namespace, name))["status"].get("restartCount") == 1 and j, timeout=120)
    message = "RuntimeError: rank 0 crashed at step 2 on purpose"
    failure = job["status"]["lastFailure"]
    crashed = kubectl_json("get", "pod", failure["pod"], "-n", namespace)
    node = crashed["spec"]["nodeName"]
    kubectl("cordon", node)
    try:
        assert (failure["rank"], failure["exitCode"]) == (0, 1), failure
        assert failure["message"].rstrip().endswith(message), failure
        assert "Traceback (most recent call last):" in failure["message"], failure
        restarting = [e["message"] for e in events(namespace, name, "Restarting")]
        assert len(restarting) == 1 and restarting[0].rstrip().endswith(message), restarting
        log = kubectl("logs", failure["pod"], "-n", namespace).stdout
        assert "rank 0: step 2/3 loss " in log and log.rstrip().endswith(message), log
        finish(namespace, name, "Complete", timeout=180, restarts=1)
        (again,) = pods(namespace, name)
        assert again["spec"]["nodeName"] != node and again["spec"]["nodeName"].startswith("real-"), again["spec"]["nodeName"]
        assert rank_lines(namespace, again)[0][-1] == "done"
    finally:
        kubectl("uncordon", node)


def test_a_job_past_its_warning_reads_its_deadline_and_its_end_is_a_sigterm(real_controller, torch_cpu, namespace, tmp_path):
    """Warned 30 s before a walltime of 45 s, the script finds the deadline in
    /etc/trainjob/deadline; at the deadline the controller deletes the pod and the script
    gets SIGTERM, which it records on the mounted folder with the deadline it read."""
    name = "late"
    command = ["python3", TRAIN, "--steps", "600", "--step-seconds", "1", "--checkpoint-dir", "/checkpoint"]
    apply(torch_job(name, 1, command, volume=tmp_path, activeDeadlineSeconds=45,
                    annotations={"trainjob.flame.dev/deadline-warning-seconds": "30"}), "-n", namespace)
    job = finish(namespace, name, "Failed", timeout=150)
    assert job["status"]["reason"] == "DeadlineExceeded", job["status"]
    record = tmp_path / "rank-0.json"
    said = wait_for("the script's record of SIGTERM", lambda: record.exists() and json.loads(record.read_text()), timeout=30)
    assert said["signal"] == "SIGTERM", said
    assert said["deadline"] == job["status"]["deadline"], (said, job["status"]["deadline"])
    assert said["step"] >= 1, said
