"""Deploying in a cluster (deploy/base): the API server accepts the kustomization, the
controller's pods pass the restricted Pod Security Standard, and the RBAC is enough for the
controller to run a TrainJob through its whole life and no more than that.

KWOK runs no containers, so the Deployment's pods only look Running here. The controller
itself runs as a process that authenticates with a token of the Deployment's ServiceAccount:
the same identity, and so the same permissions, as in the cluster."""

import json
import os

import pytest

from conftest import Controller
from kube import REPO, apply, kubectl, kubectl_json, pods, tj, trainjob, undeploy, wait_for, wait_state

BASE = os.path.join(REPO, "deploy", "base")
NS = "trainjob-system"
SA = "trainjob-controller"
AS = f"system:serviceaccount:{NS}:{SA}"


@pytest.fixture(scope="module")
def deployed(crds):
    """The base applied for real, and the SDK's ConfigMap beside it; removed afterwards,
    except the CRDs and the ConfigMap other suites use."""
    kubectl("apply", "-k", BASE)
    kubectl("apply", "-k", os.path.join(REPO, "deploy", "kubeflow-sdk"))
    yield
    undeploy()


@pytest.mark.parametrize("kustomization", ["base", "overlays/flame"])
def test_kustomization_passes_server_side_dry_run(deployed, kustomization):
    # A server-side dry run of namespaced objects needs their namespace to exist already, as
    # it does on the second apply of an operator; the first apply creates it in order.
    r = kubectl("apply", "-k", os.path.join(REPO, "deploy", kustomization), "--dry-run=server")
    assert "(server dry run)" in r.stdout
    if kustomization == "overlays/flame":
        # The site's overlay ships what Kubeflow's SDK reads, in its own namespace.
        assert "configmap/kubeflow-trainer-public" in r.stdout, r.stdout
    # The namespace warns of a pod template the restricted standard would reject.
    assert "Warning" not in r.stderr, r.stderr


def test_deployment_pods_are_admitted_under_restricted_pod_security(deployed):
    def created():
        items = kubectl_json("get", "pods", "-n", NS, "-l", "app.kubernetes.io/name=trainjob-controller")["items"]
        return len(items) >= 2 and all(p["spec"].get("nodeName") for p in items) and items

    # KWOK lets every pod end after a while, and the ReplicaSet then makes new ones: at least 2.
    for pod in wait_for("the Deployment's pods to be created and scheduled", created):
        assert pod["spec"]["serviceAccountName"] == SA
        node = kubectl_json("get", "node", pod["spec"]["nodeName"])
        assert node["metadata"]["labels"]["kubernetes.io/os"] == "linux"


def service_account_kubeconfig(path):
    """A kubeconfig for the cluster of $KUBECONFIG that authenticates as the ServiceAccount."""
    admin = kubectl_json("config", "view", "--raw", "--minify", "--flatten")
    cluster = admin["clusters"][0]["cluster"]
    token = kubectl("create", "token", SA, "-n", NS, "--duration", "1h").stdout.strip()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {
            "server": cluster["server"],
            "certificate-authority-data": cluster["certificate-authority-data"],
        }}],
        "users": [{"name": SA, "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "c", "user": SA}}],
        "current-context": "sa",
    }
    with open(path, "w") as f:
        json.dump(config, f)
    return str(path)


def test_controller_runs_a_trainjob_with_only_its_service_account(deployed, controller, namespace, tmp_path):
    """Run, suspend (pods deleted), resume (a repeated event is patched) and complete: every
    kind of write the controller makes, under the ServiceAccount's permissions alone. The
    session's controller steps aside meanwhile, so that only this one writes."""
    kubeconfig = service_account_kubeconfig(tmp_path / "kubeconfig")
    assert kubectl("--kubeconfig", kubeconfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == AS
    # --leader-elect as the Deployment passes it. Out of a cluster the Lease would go to
    # "default"; in the cluster it goes to the pod's own namespace.
    sa = Controller("--leader-elect", "--leader-election-namespace", NS, kubeconfig=kubeconfig)
    controller.stop()
    try:
        sa.start()
        try:
            wait_for("the Lease to name its holder", lambda: lease_holder() not in (None, ""))
            run_suspend_resume_complete(namespace)
        finally:
            sa.stop()
        assert lease_holder() == "", "SIGTERM releases the Lease (an update)"
        # What RBAC refuses (a pod create in a namespace an earlier test is deleting is
        # refused too, with 403, for another reason).
        refused = [l for l in sa.log().lower().splitlines()
                   if ("forbidden" in l or " 403" in l) and "being terminated" not in l]
        assert not refused, (sa.log_path, refused[:3])
    finally:
        controller.start()


def lease_holder():
    """The Lease's holder ("" once released), or None while there is no Lease."""
    r = kubectl("get", "lease", SA, "-n", NS, "-o", "json", check=False)
    return json.loads(r.stdout)["spec"].get("holderIdentity", "") if r.returncode == 0 else None


def run_suspend_resume_complete(namespace):
    apply(trainjob("bound", nodes=2, gpus=4, run_time="6s"), "-n", namespace)
    wait_for("2 running pods", lambda: len([p for p in pods(namespace, "bound") if p["status"].get("phase") == "Running"]) == 2)
    kubectl("patch", "trainjob", "bound", "-n", namespace, "--type=merge", "-p", '{"spec":{"suspend":true}}')
    wait_state(namespace, "bound", "Suspended")
    wait_for("the pods to be deleted", lambda: pods(namespace, "bound") == [])
    kubectl("patch", "trainjob", "bound", "-n", namespace, "--type=merge", "-p", '{"spec":{"suspend":false}}')
    done = wait_state(namespace, "bound", "Complete", timeout=120)
    # One Job of 2 pods, as JobSet counts the node step.
    assert done["status"]["jobsStatus"][0]["succeeded"] == 1
    assert len(pods(namespace, "bound")) == 2
    svc = kubectl_json("get", "service", "bound", "-n", namespace)
    assert svc["metadata"]["ownerReferences"][0]["uid"] == tj(namespace, "bound")["metadata"]["uid"]
    events = kubectl_json("get", "events", "-n", namespace, "--field-selector", "involvedObject.name=bound")["items"]
    count = {e["reason"]: e["count"] for e in events}
    assert {"Created", "Suspended", "Resumed", "Completed"} <= set(count), count
    # Created twice with the same message: the second time the Event is patched.
    assert count["Created"] == 2, count


def can_i(verb, resource, namespace=None, subresource=None):
    args = ["auth", "can-i", verb, resource, "--as", AS]
    args += ["-n", namespace] if namespace else ["--all-namespaces"]
    if subresource:
        args += ["--subresource", subresource]
    r = kubectl(*args, check=False)
    assert r.stdout.strip() in ("yes", "no"), r.stderr
    return r.stdout.strip() == "yes"


# The Lease, as the run above uses it, and the finalizers subresource that the
# OwnerReferencesPermissionEnforcement admission plugin asks for before it lets
# blockOwnerDeletion be set (the plugin is not enabled in the local cluster).
@pytest.mark.parametrize("verb,resource,namespace,subresource", [
    ("get", "leases.coordination.k8s.io/trainjob-controller", NS, None),
    ("create", "leases.coordination.k8s.io", NS, None),
    ("update", "leases.coordination.k8s.io/trainjob-controller", NS, None),
    ("update", "trainjobs.trainer.kubeflow.org", "default", "finalizers"),
    # The deadline's warning and a kept pod's labels are merge patches of the pods.
    ("patch", "pods", "default", None),
    # A finished job's Service goes after its TTL.
    ("delete", "services", "default", None),
    # An MPI job's SSH key Secret and hostfile ConfigMap.
    ("create", "secrets", "default", None),
    ("create", "configmaps", "default", None),
    # The runtime snapshots: created when a job starts, listed and watched by their label.
    ("list", "configmaps", None, None),
    ("watch", "configmaps", None, None),
    # The accounting records of deleted TrainJobs: that one ConfigMap of a namespace.
    ("get", "configmaps/trainjob-accounting", "default", None),
    ("patch", "configmaps/trainjob-accounting", "default", None),
    # A suspect node's taint and the failures seen on it are merge patches of the node.
    ("patch", "nodes", None, None),
    # Who may read /metrics is asked of the API server.
    ("create", "tokenreviews.authentication.k8s.io", None, None),
    ("create", "subjectaccessreviews.authorization.k8s.io", None, None),
])
def test_service_account_may(deployed, verb, resource, namespace, subresource):
    assert can_i(verb, resource, namespace, subresource)


@pytest.mark.parametrize("verb,resource,namespace,subresource", [
    ("delete", "nodes", None, None),
    ("get", "secrets", NS, None),
    ("list", "secrets", None, None),
    ("get", "configmaps", NS, None),
    ("update", "secrets", "default", None),
    ("delete", "secrets", "default", None),
    ("patch", "configmaps", "default", None),
    ("create", "clusterrolebindings.rbac.authorization.k8s.io", None, None),
    ("create", "rolebindings.rbac.authorization.k8s.io", NS, None),
    ("update", "pods", None, None),
    ("create", "pods", None, "exec"),
    ("update", "services", None, None),
    ("delete", "trainjobs.trainer.kubeflow.org", None, None),
    ("update", "trainjobs.trainer.kubeflow.org", None, None),
    ("update", "trainjobs.trainer.kubeflow.org", None, "status"),
    ("create", "clustertrainingruntimes.trainer.kubeflow.org", None, None),
    ("create", "leases.coordination.k8s.io", "kube-system", None),
    ("update", "leases.coordination.k8s.io/trainjob-controller", "default", None),
    ("update", "leases.coordination.k8s.io/kube-scheduler", NS, None),
    ("get", "leases.coordination.k8s.io/kube-scheduler", NS, None),
    ("delete", "leases.coordination.k8s.io/trainjob-controller", NS, None),
    ("delete", "events", None, None),
])
def test_service_account_may_not(deployed, verb, resource, namespace, subresource):
    assert not can_i(verb, resource, namespace, subresource)
