"""The controller's own image as its Deployment, in the local cluster: deploy/local/in-cluster
(deploy/base with the image `cluster.sh controller-image` imports into the real nodes'
containerd) runs on real-0 and real-1 under the namespace's restricted Pod Security, one
replica takes the Lease, and it reconciles a TrainJob on the KWOK GPU nodes.

The pods reach the API server at the real nodes' bridge address and the API server's port
(no kube-proxy serves the kubernetes Service's address): the container's environment sets
KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, which a container's own env overrides
over the kubelet's, and `cluster.sh up` brings the bridge up before the API server so that
its serving certificate names that address. The token and CA are those the kubelet mounts.

The session's controller steps aside meanwhile (session_controller_aside). Without real
nodes this fails as tests/e2e/test_real_nodes.py does."""

import json
import os
import subprocess
import urllib.parse

import pytest
import yaml

from kube import REPO, apply, kubectl, kubectl_json, pods, trainjob, undeploy, wait_for, wait_state
from test_real_nodes import REAL, real_nodes  # noqa: F401 (the module's autouse fixture)

NS = "trainjob-system"
NAME = "trainjob-controller"
OVERLAY = os.path.join(REPO, "deploy", "local", "in-cluster")


def api_server_for_pods():
    """The address pods on the real nodes reach the API server at: the bridge's (the nodes'
    InternalIP) and the port of the cluster's kubeconfig."""
    node = kubectl_json("get", "node", "real-0")
    host = next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")
    server = kubectl_json("config", "view", "--minify")["clusters"][0]["cluster"]["server"]
    return host, str(urllib.parse.urlsplit(server).port)


@pytest.fixture(scope="module")
def in_cluster(real_nodes, session_controller_aside, tmp_path_factory):  # noqa: F811
    proc = subprocess.run([os.path.join(REPO, "deploy", "local", "cluster.sh"), "controller-image"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, f"cluster.sh controller-image failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    host, port = api_server_for_pods()
    overlay = tmp_path_factory.mktemp("in-cluster")
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "resources": [os.path.relpath(OVERLAY, overlay)],
        "patches": [{"target": {"kind": "Deployment", "name": NAME}, "patch": yaml.safe_dump([
            {"op": "add", "path": "/spec/template/spec/containers/0/env", "value": [
                {"name": "KUBERNETES_SERVICE_HOST", "value": host},
                {"name": "KUBERNETES_SERVICE_PORT", "value": port}]}])}],
    }))
    r = kubectl("apply", "-k", str(overlay))
    # The restricted Pod Security of the namespace admits the template as it is.
    assert "Warning" not in r.stderr, r.stderr
    try:
        yield
    finally:
        undeploy()


def controller_pods():
    return kubectl_json("get", "pods", "-n", NS, "-l", f"app.kubernetes.io/name={NAME}")["items"]


def test_the_deployment_leads_on_the_real_nodes_and_runs_a_trainjob(in_cluster, namespace):
    def ready():
        items = controller_pods()
        return len(items) == 2 and all(
            p["status"].get("phase") == "Running" and
            all(c.get("ready") for c in p["status"].get("containerStatuses") or []) for p in items) and items

    try:
        running = wait_for("both replicas Running and ready on the real nodes", ready, timeout=120)
    except AssertionError:
        for p in controller_pods():
            print(p["metadata"]["name"], p["status"])
            print(kubectl("logs", "-n", NS, p["metadata"]["name"], "--tail=30", check=False).stdout)
        raise
    names = {p["metadata"]["name"] for p in running}
    assert {p["spec"]["nodeName"] for p in running} <= {"real-0", "real-1"}
    for p in running:
        node = kubectl_json("get", "node", p["spec"]["nodeName"])
        assert node["metadata"]["labels"].get(REAL) == "true"
    holder = wait_for("the Lease held by one of the replicas",
                      lambda: kubectl("get", "lease", NAME, "-n", NS, "-o", "jsonpath={.spec.holderIdentity}",
                                      check=False).stdout)
    leader = holder.split("_")[0]
    assert leader in names, (holder, names)
    # Configured in-cluster: the mounted token and CA verify the API server at the bridge.
    started = [json.loads(l) for l in kubectl("logs", "-n", NS, leader).stdout.splitlines() if '"using cluster"' in l]
    assert started and started[0].get("from") == "in-cluster", started

    apply(trainjob("on-kwok", nodes=2, gpus=4, run_time="3s"), "-n", namespace)
    done = wait_state(namespace, "on-kwok", "Complete", timeout=120)
    assert done["status"]["jobsStatus"][0]["succeeded"] == 1
    gpu_pods = pods(namespace, "on-kwok")
    assert len([p for p in gpu_pods if p["status"].get("phase") == "Succeeded"]) == 2
    assert all(p["spec"]["nodeName"].startswith("gh200-") for p in gpu_pods)
