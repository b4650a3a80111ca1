"""Kubeflow's trainer status API as the e2e suites use it (test_trainer_status.py,
test_stalled.py): a controller of the module's own that serves it, and reports posted as a
training script posts them, with a token of the job's audience from `kubectl create token`,
as the kubelet projects it.

The controller runs as a process with a certificate for 127.0.0.1 made with openssl, which the
clients trust. A module takes the fixtures by importing them (`from status_api import certs,
server`)."""

import datetime
import json
import os
import ssl
import urllib.error
import urllib.request

import pytest

from conftest import Controller, config_with_policy, free_port
from kube import kubectl, tj
from scrapers import make_pair

PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status"
AUDIENCE = "trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/{name}/status"
VENV_PYTHON = os.path.join(os.path.expanduser("~"), ".cache", "trainjob-controller", "venv", "bin", "python")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("status-certs")
    return str(d), make_pair(str(d), "trainjob-controller")


@pytest.fixture(scope="module")
def server(session_controller_aside, certs):
    """A controller serving the trainer status API on a port of its own, whose config wires
    the pods to it; the session's controller steps aside, or it would create the pods
    without the wiring."""
    port = free_port()
    config = config_with_policy(f"trainerStatus:\n  url: https://127.0.0.1:{port}\n"
                                "  caConfigMap: trainjob-controller-ca\n")
    c = Controller(f"--config={config}", f"--trainer-status-bind-address=127.0.0.1:{port}",
                   f"--metrics-cert-path={certs[0]}").start()
    c.status_port = port
    yield c
    c.stop()


def token(namespace, name, sa="default", duration="10m"):
    return kubectl("create", "token", sa, "-n", namespace, f"--audience={AUDIENCE.format(ns=namespace, name=name)}",
                   f"--duration={duration}").stdout.strip()


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def post(server, cafile, namespace, name, body, bearer=None, path=None, method="POST"):
    """(status, decoded JSON answer, headers) of a report, as a training script sends it."""
    ctx = ssl.create_default_context(cafile=cafile)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(f"https://127.0.0.1:{server.status_port}{path or PATH.format(ns=namespace, name=name)}",
                                 data=data, method=method, headers={"Content-Type": "application/json"})
    if bearer:
        req.add_header("Authorization", f"Bearer {bearer}")
    try:
        with urllib.request.urlopen(req, timeout=15, context=ctx) as r:
            return r.status, json.loads(r.read() or b"null"), r.headers
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null"), e.headers


def trainer_status(namespace, name):
    return tj(namespace, name).get("status", {}).get("trainerStatus")


def report(progress, eta, **metrics):
    body = {"trainerStatus": {"progressPercentage": progress, "estimatedRemainingSeconds": eta,
                              "lastUpdatedTime": now()}}
    if metrics:
        body["trainerStatus"]["metrics"] = [{"name": k, "value": str(v)} for k, v in metrics.items()]
    return body
