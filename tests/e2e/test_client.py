"""The controller's API client against the real API server, through tests/tools/kube-get:
a client-certificate kubeconfig, a ServiceAccount token (inline, from a tokenFile, and from
an exec credential plugin), HTTP/2 watches, and a server whose CA is not the one configured
(refused, saying why)."""

import base64
import json
import os
import subprocess
import time

import pytest

from kube import REPO, kubectl, wait_for


def kube_get_binary():
    build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
    path = os.path.join(build, "tests", "tools", "kube-get")
    if not os.access(path, os.X_OK):
        raise AssertionError(f"{path} is missing: build the project first (ninja -C {build})")
    return path


def kube_get(*args, kubeconfig=None, timeout=60):
    """Runs kube-get; returns the CompletedProcess (stdout, stderr, returncode)."""
    env = dict(os.environ)
    if kubeconfig:
        env["KUBECONFIG"] = kubeconfig
    return subprocess.run(
        [kube_get_binary(), *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def cluster_view():
    """The current context's cluster as kubectl resolves it, with the CA inlined."""
    cfg = json.loads(kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
    cluster = cfg["clusters"][0]["cluster"]
    if "certificate-authority-data" not in cluster:
        with open(cluster["certificate-authority"], "rb") as f:
            cluster["certificate-authority-data"] = base64.b64encode(f.read()).decode()
        del cluster["certificate-authority"]
    return cluster


def write_kubeconfig(path, cluster, user):
    """A one-context kubeconfig. JSON is YAML, so json.dump writes a valid file."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "e2e",
        "clusters": [{"name": "e2e", "cluster": cluster}],
        "users": [{"name": "e2e", "user": user}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e"}}],
    }
    with open(path, "w") as f:
        json.dump(doc, f)
    return str(path)


@pytest.fixture
def reader_token(namespace):
    """A ServiceAccount allowed to read pods in the test namespace, and a token for it."""
    kubectl("-n", namespace, "create", "serviceaccount", "reader")
    kubectl(
        "-n", namespace, "create", "rolebinding", "reader", "--clusterrole=view",
        f"--serviceaccount={namespace}:reader",
    )
    token = kubectl("-n", namespace, "create", "token", "reader", "--duration=10m").stdout.strip()
    return token


def test_client_certificate_kubeconfig():
    """The cluster's own kubeconfig: client certificate and key as files, CA as a file."""
    proc = kube_get("/api/v1/namespaces/default")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["metadata"]["name"] == "default"

    proc = kube_get("/api/v1/namespaces/does-not-exist-e2e")
    assert proc.returncode == 1
    assert 'namespaces "does-not-exist-e2e" not found' in proc.stderr


def test_watch_sees_pod_events(namespace):
    """A pod watch through the client sees the ADDED of a pod created after it started."""
    watcher = subprocess.Popen(
        [kube_get_binary(), "--watch-pods", namespace, "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(1)  # let the watch start before the pod exists
        kubectl("-n", namespace, "run", "watched", "--image=busybox", "--restart=Never")
        out, err = watcher.communicate(timeout=60)
    finally:
        watcher.kill()
    assert watcher.returncode == 0, err
    assert out.splitlines()[0] == "ADDED watched"


def test_token_kubeconfig(tmp_path, namespace, reader_token):
    cluster = cluster_view()
    path = write_kubeconfig(tmp_path / "token.yaml", cluster, {"token": reader_token})
    proc = kube_get(f"/api/v1/namespaces/{namespace}/pods", kubeconfig=path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "PodList"

    # The same ServiceAccount may not read another namespace's pods.
    proc = kube_get("/api/v1/namespaces/kube-system/pods", kubeconfig=path)
    assert proc.returncode == 1
    assert "HTTP 403 Forbidden" in proc.stderr

    # A token the server does not know.
    path = write_kubeconfig(tmp_path / "bad.yaml", cluster, {"token": "not-a-token"})
    proc = kube_get(f"/api/v1/namespaces/{namespace}/pods", kubeconfig=path)
    assert proc.returncode == 1
    assert "HTTP 401 Unauthorized" in proc.stderr


def test_token_file_kubeconfig(tmp_path, namespace, reader_token):
    (tmp_path / "token").write_text(reader_token + "\n")
    path = write_kubeconfig(tmp_path / "kc.yaml", cluster_view(), {"tokenFile": "token"})
    proc = kube_get(f"/api/v1/namespaces/{namespace}/pods", kubeconfig=path)
    assert proc.returncode == 0, proc.stderr


def test_exec_plugin_kubeconfig(tmp_path, namespace, reader_token):
    plugin = tmp_path / "get-token"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": reader_token, "expirationTimestamp": "2999-01-01T00:00:00Z"},
    }
    plugin.write_text("#!/bin/sh\ncat <<'EOF'\n" + json.dumps(credential) + "\nEOF\n")
    plugin.chmod(0o755)
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(plugin),
            "interactiveMode": "Never",
        }
    }
    path = write_kubeconfig(tmp_path / "kc.yaml", cluster_view(), user)
    proc = kube_get(f"/api/v1/namespaces/{namespace}/pods", kubeconfig=path)
    assert proc.returncode == 0, proc.stderr


def test_tls_server_name(tmp_path, namespace, reader_token):
    """The server is reached by IP, but TLS checks the name in tls-server-name (one of the
    names in the API server's certificate)."""
    cluster = cluster_view()
    cluster["tls-server-name"] = "kubernetes.default"
    path = write_kubeconfig(tmp_path / "kc.yaml", cluster, {"token": reader_token})
    proc = kube_get(f"/api/v1/namespaces/{namespace}/pods", kubeconfig=path)
    assert proc.returncode == 0, proc.stderr

    cluster["tls-server-name"] = "not-in-the-certificate.example"
    path = write_kubeconfig(tmp_path / "kc2.yaml", cluster, {"token": reader_token})
    proc = kube_get(f"/api/v1/namespaces/{namespace}/pods", kubeconfig=path)
    assert proc.returncode == 1
    assert "not-in-the-certificate.example" in proc.stderr


def test_wrong_ca_is_refused(tmp_path, reader_token):
    """A CA that did not sign the server's certificate: the connection is refused before
    any request is sent, and the message says that the certificate did not verify."""
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=not-the-cluster-ca",
            "-keyout", str(tmp_path / "ca.key"), "-out", str(tmp_path / "ca.crt"),
        ],
        check=True,
        capture_output=True,
    )
    cluster = cluster_view()
    del cluster["certificate-authority-data"]
    cluster["certificate-authority"] = "ca.crt"  # relative to the kubeconfig's folder
    path = write_kubeconfig(tmp_path / "kc.yaml", cluster, {"token": reader_token})
    proc = kube_get("/api/v1/namespaces/default", kubeconfig=path)
    assert proc.returncode == 1
    assert "SSL certificate problem" in proc.stderr, proc.stderr
    assert cluster["server"] in proc.stderr


def test_broken_kubeconfig_names_file_and_field(tmp_path):
    path = write_kubeconfig(tmp_path / "kc.yaml", {"server": "api.example:6443"}, {})
    proc = kube_get("/version", kubeconfig=path)
    assert proc.returncode == 1
    assert proc.stderr == (
        f"kube-get: {path}: clusters[0].cluster.server: "
        '"api.example:6443" is not an http:// or https:// URL\n'
    )
