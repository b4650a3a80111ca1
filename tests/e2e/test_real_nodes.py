"""The local cluster's real nodes (deploy/local/real-nodes.sh): real-0 and real-1 run each
pod's container with containerd and runc, give it an address on their shared bridge, and
CoreDNS answers for the cluster domain, so that the pods of a job find each other by the
names of its headless Service, as a TrainJob's ranks do; and a TrainJob whose runtime
selects the CPU-only GPU class of these nodes runs its command there.

Without real nodes these tests fail, saying why the cluster has none (the check of
cluster.sh up that failed), so that CI never passes without them; TJC_REAL_NODES=0, which
leaves them out on purpose, skips them."""

import os

import pytest

from conftest import Controller
from kube import REPO, apply, kubectl, kubectl_json, pods, wait_for, wait_state

REAL = "trainjob.flame.dev/real"
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


# The GPU class of the real nodes, for a controller of this module's own: what a runtime names
# to send its pods there. They have no GPU; a job asks for none.
REAL_CLASS = """  # The local cluster's real nodes (deploy/local/real-nodes.sh), CPU only.
  - name: real
    resource: nvidia.com/gpu
    arch: amd64
    nodeLabels:
      trainjob.flame.dev/real: "true"
    tolerations:
      - key: trainjob.flame.dev/real
        operator: Exists
        effect: NoSchedule
"""


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
