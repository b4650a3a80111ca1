"""Small helpers the e2e tests use to drive the real cluster through the real kubectl."""

import json
import os
import subprocess
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kubectl(*args, input=None, check=True, timeout=120):
    """Runs kubectl against the test cluster (KUBECONFIG is set by the test runner).

    Returns the CompletedProcess; raises AssertionError with kubectl's stderr when check is
    set and kubectl fails, so a failing test shows what the API server said."""
    proc = subprocess.run(
        ["kubectl", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
        )
    return proc


def kubectl_json(*args, **kw):
    """kubectl ... -o json, decoded."""
    return json.loads(kubectl(*args, "-o", "json", **kw).stdout)


def apply(manifest, *extra, check=True):
    """kubectl apply -f - of a YAML or JSON string (or of a dict, sent as JSON)."""
    if not isinstance(manifest, str):
        manifest = json.dumps(manifest)
    return kubectl("apply", "-f", "-", *extra, input=manifest, check=check)


def wait_for(what, predicate, timeout=60.0, interval=0.5):
    """Polls predicate() until it returns a truthy value, which is returned.

    On timeout raises AssertionError naming what was awaited and the last value seen."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}")
        time.sleep(interval)


def condition(obj, ctype):
    """The condition of type ctype in obj['status']['conditions'], or None."""
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == ctype:
            return c
    return None
