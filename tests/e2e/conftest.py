"""Fixtures shared by the e2e suites. The test runner (scripts/test.sh) brings the local
cluster up and exports KUBECONFIG before pytest starts."""

import os
import signal
import socket
import subprocess
import time
import urllib.request
import uuid

import pytest

import sdk
from kube import REPO, kubectl, wait_for

CRD_NAMES = [
    "trainjobs.trainer.kubeflow.org",
    "clustertrainingruntimes.trainer.kubeflow.org",
    "trainingruntimes.trainer.kubeflow.org",
]


def pytest_configure(config):
    if not os.environ.get("KUBECONFIG"):
        raise pytest.UsageError(
            "KUBECONFIG is not set: run the e2e suite through scripts/test.sh, "
            "or export KUBECONFIG=$(deploy/local/cluster.sh kubeconfig)"
        )


@pytest.fixture
def namespace():
    """A fresh namespace per test, deleted afterwards (without waiting).

    Ready once the controller-manager has given it its default ServiceAccount: until then the
    API server refuses every pod in it (what a quick user would also meet)."""
    name = "e2e-" + uuid.uuid4().hex[:8]
    kubectl("create", "namespace", name)
    wait_for(
        f"the default ServiceAccount of namespace {name}",
        lambda: kubectl("get", "serviceaccount", "default", "-n", name, check=False).returncode == 0,
        timeout=60,
        interval=0.1,
    )
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="session")
def crds():
    """The CRDs and the shipped runtimes, installed as docs/operators.md says (idempotent, and
    left installed: other suites need them)."""
    install_crds()


def install_crds():
    """kubectl apply of the CRDs and the shipped runtimes, on the cluster of KUBECONFIG."""
    kubectl("apply", "-k", os.path.join(REPO, "crds"))
    # kubectl wait fails at once, rather than waiting, on a CRD so new that it has no
    # conditions yet: ask again until it answers.
    wait_for(
        "the CRDs to be Established",
        lambda: kubectl("wait", "--for", "condition=Established", "--timeout=60s",
                        *[f"crd/{n}" for n in CRD_NAMES], check=False).returncode == 0,
        timeout=90,
    )
    # The API server's discovery can lag a moment behind Established, and kubectl then says
    # "no matches for kind": try again briefly.
    wait_for(
        "the shipped runtimes to apply",
        lambda: kubectl("apply", "-k", os.path.join(REPO, "crds", "runtimes"), check=False).returncode == 0,
        timeout=30,
    )


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Controller:
    """The controller binary of this build, run as a process against the test cluster."""

    def __init__(self, *extra, kubeconfig=None):
        build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
        self.binary = os.path.join(build, "trainjob-controller")
        self.extra = list(extra)
        self.kubeconfig = kubeconfig or os.environ["KUBECONFIG"]
        self.proc = None
        self.log_path = os.path.join(REPO, "build", f"e2e-controller-{uuid.uuid4().hex[:6]}.log")

    def start(self, *extra):
        self.metrics_port, self.probe_port = free_port(), free_port()
        args = [
            self.binary,
            "--kubeconfig", self.kubeconfig,
            "--config", os.path.join(REPO, "deploy", "config", "config.yaml"),
            "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}",
            "--health-probe-bind-address", f"127.0.0.1:{self.probe_port}",
            *self.extra,
            *extra,
        ]
        log = open(self.log_path, "a")
        self.proc = subprocess.Popen(args, stdout=log, stderr=log)
        wait_for("the controller to be ready", lambda: self.get("/readyz", self.probe_port) == 200, timeout=60)
        return self

    def get(self, path, port):
        if self.proc.poll() is not None:
            raise AssertionError(f"the controller exited ({self.proc.returncode}); log: {self.log_path}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
                return r.status
        except OSError:
            return None

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
            return r.read().decode()

    def kill(self):
        """SIGKILL: nothing is cleaned up, as when a node dies under the controller."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        """SIGTERM, and it must exit by itself, cleanly."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise AssertionError(f"the controller did not stop on SIGTERM; log: {self.log_path}")
            assert rc == 0, f"the controller exited {rc} on SIGTERM; log: {self.log_path}"

    def log(self):
        with open(self.log_path) as f:
            return f.read()


def config_with_policy(policy):
    """A config file for a controller of a module's own: deploy/config's GPU classes, and
    the failure policy given (YAML text starting with failurePolicy:) instead of the
    shipped one."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        shipped = f.read()
    classes = shipped.split("\nfailurePolicy:")[0]
    path = os.path.join(REPO, "build", f"e2e-config-{uuid.uuid4().hex[:6]}.yaml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(classes + "\n" + policy)
    return path


# The session's controller once started, for modules that run their own meanwhile.
_session_controller = []


@pytest.fixture(scope="session")
def controller(crds):
    """One controller for the whole session, stopped (SIGTERM) at the end."""
    c = Controller().start()
    _session_controller.append(c)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def session_controller_aside(crds):
    """For a module that runs a controller of its own: stops the session's controller if it
    runs, and starts it again after the module. A session controller that has not started
    yet stays so, as the modules that ran before saw it: without a controller, what they
    write stays as they wrote it."""
    running = [c for c in _session_controller if c.proc and c.proc.poll() is None]
    for c in running:
        c.stop()
    yield
    for c in running:
        c.start()


@pytest.fixture(scope="session")
def sdk_configmap():
    sdk.install_configmap()


@pytest.fixture
def client(sdk_configmap, namespace, caplog):
    """Kubeflow's TrainerClient on the test's namespace (sdk.py). Tests that run jobs ask for
    a controller fixture too."""
    return sdk.trainer_client(namespace, caplog)


@pytest.fixture(scope="session")
def kubeflow_module():
    """The folder of Kubeflow Trainer's Go module at the pinned release (downloaded into the
    cache on first use): its manifests/ and examples/yaml/ are applied unchanged."""
    out = subprocess.run([os.path.join(REPO, "deploy/local/kubeflow-module.sh")], check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()
