"""Fixtures shared by the e2e suites. The test runner (scripts/test.sh) brings the local
cluster up and exports KUBECONFIG before pytest starts."""

import os
import uuid

import pytest

from kube import kubectl


def pytest_configure(config):
    if not os.environ.get("KUBECONFIG"):
        raise pytest.UsageError(
            "KUBECONFIG is not set: run the e2e suite through scripts/test.sh, "
            "or export KUBECONFIG=$(deploy/local/cluster.sh kubeconfig)"
        )


@pytest.fixture
def namespace():
    """A fresh namespace per test, deleted afterwards (without waiting)."""
    name = "e2e-" + uuid.uuid4().hex[:8]
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)
