"""Progress and ETA (docs/users.md, "Progress and ETA"): Kubeflow's trainer status API on the
controller's HTTPS server. A TrainJob's pods get Kubeflow's env and a projected token whose
audience names the job; a report posted with such a token, as a training script posts it (and
through the Kubeflow SDK's own helper, update_trainjob_status), lands in status.trainerStatus
and shows in `kubectl get tj` and `kubectl squeue`. A forged token, a token of another job
and one of another namespace are refused, and so are bodies the CRD would not take.

The controller, the reports and the tokens are status_api.py's: a process with a certificate
for 127.0.0.1 made with openssl, which the clients trust, and tokens from `kubectl create
token` for the pods' ServiceAccount and the job's audience, as the kubelet projects them."""

import os
import subprocess
import time

import pytest

from kube import apply, kubectl, pods, table, tj, trainjob, wait_for
# certs and server are the module's fixtures.
from status_api import AUDIENCE, PATH, VENV_PYTHON, certs, now, post, report, server, token, trainer_status
from test_squeue import plugin, rows


def test_pods_get_kubeflows_wiring(server, namespace):
    apply(trainjob("wired", run_time="600s"), "-n", namespace)
    wait_for("the pod", lambda: pods(namespace, "wired"), timeout=60)
    (pod,) = pods(namespace, "wired")
    node = next(c for c in pod["spec"]["containers"] if c["name"] == "node")
    env = {e["name"]: e.get("value") for e in node["env"]}
    assert env["KUBEFLOW_TRAINER_SERVER_URL"] == f"https://127.0.0.1:{server.status_port}" + PATH.format(
        ns=namespace, name="wired")
    assert env["KUBEFLOW_TRAINER_SERVER_TOKEN"] == "/var/run/secrets/kubeflow/trainer/token"
    assert env["KUBEFLOW_TRAINER_SERVER_CA_CERT"] == "/var/run/secrets/kubeflow/trainer/ca.crt"
    assert {"name": "kubeflow-trainer-token", "mountPath": "/var/run/secrets/kubeflow/trainer",
            "readOnly": True} in node["volumeMounts"]
    (vol,) = [v for v in pod["spec"]["volumes"] if v["name"] == "kubeflow-trainer-token"]
    sources = vol["projected"]["sources"]
    assert sources[0]["serviceAccountToken"] == {"audience": AUDIENCE.format(ns=namespace, name="wired"),
                                                 "expirationSeconds": 3600, "path": "token"}
    assert sources[1]["configMap"]["name"] == "trainjob-controller-ca"


def test_a_report_shows_in_get_tj_and_squeue(server, certs, namespace):
    apply(trainjob("llama", run_time="600s"), "-n", namespace)
    wait_for("the job to run", lambda: tj(namespace, "llama").get("status", {}).get("state") == "Running", timeout=90)
    code, answer, _ = post(server, certs[1], namespace, "llama", report(42, 5400, loss=0.731, step=4200),
                           bearer=token(namespace, "llama"))
    assert code == 200, answer
    ts = trainer_status(namespace, "llama")
    assert ts["progressPercentage"] == 42 and ts["estimatedRemainingSeconds"] == 5400
    assert ts["metrics"] == [{"name": "loss", "value": "0.731"}, {"name": "step", "value": "4200"}]
    assert ts["lastUpdatedTime"].endswith("Z")
    assert answer == {"trainerStatus": ts}

    (row,) = table(kubectl("get", "tj", "llama", "-n", namespace).stdout)
    assert (row["PROGRESS"], row["ETA"]) == ("42", "5400")
    q = {r["JOBID"]: r for r in rows(plugin("squeue", "-n", namespace).stdout)}
    assert (q["llama"]["PROGRESS"], q["llama"]["ETA"]) == ("42%", "1:30:00")

    # The next report replaces it: a field left out is cleared, not kept from before.
    time.sleep(1.1)
    code, answer, _ = post(server, certs[1], namespace, "llama",
                           {"trainerStatus": {"progressPercentage": 43, "lastUpdatedTime": now()}},
                           bearer=token(namespace, "llama"))
    assert code == 200, answer
    assert trainer_status(namespace, "llama") == {"progressPercentage": 43,
                                                  "lastUpdatedTime": answer["trainerStatus"]["lastUpdatedTime"]}
    (row,) = table(kubectl("get", "tj", "llama", "-n", namespace).stdout)
    assert (row["PROGRESS"], row["ETA"]) == ("43", "")
    q = {r["JOBID"]: r for r in rows(plugin("squeue", "-n", namespace).stdout)}
    assert (q["llama"]["PROGRESS"], q["llama"]["ETA"]) == ("43%", "N/A")


def test_tokens_not_of_the_job_are_refused(server, certs, namespace):
    apply(trainjob("mine", run_time="600s"), "-n", namespace)
    apply(trainjob("theirs", run_time="600s"), "-n", namespace)
    wait_for("the jobs", lambda: trainer_status(namespace, "mine") is None and tj(namespace, "theirs"), timeout=30)
    body = report(10, 100)

    assert post(server, certs[1], namespace, "mine", body)[:2] == (
        401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "Unauthorized: no bearer token",
              "reason": "Unauthorized", "code": 401})
    # A forged token.
    code, answer, _ = post(server, certs[1], namespace, "mine", body, bearer="eyJhbGciOiJub25lIn0.e30.forged")
    assert (code, answer["reason"]) == (403, "Forbidden")
    # A real token, but for another job's audience.
    code, answer, _ = post(server, certs[1], namespace, "mine", body, bearer=token(namespace, "theirs"))
    assert (code, answer["reason"]) == (403, "Forbidden"), answer
    assert "not valid for this TrainJob" in answer["message"]
    # The job's audience, but a ServiceAccount of another namespace.
    other = namespace + "-x"
    kubectl("create", "namespace", other)
    try:
        wait_for("its default ServiceAccount",
                 lambda: kubectl("get", "serviceaccount", "default", "-n", other, check=False).returncode == 0)
        stranger = kubectl("create", "token", "default", "-n", other,
                           f"--audience={AUDIENCE.format(ns=namespace, name='mine')}").stdout.strip()
        code, answer, _ = post(server, certs[1], namespace, "mine", body, bearer=stranger)
        assert (code, answer["reason"]) == (403, "Forbidden"), answer
        assert f"system:serviceaccount:{other}:default" in answer["message"]
    finally:
        kubectl("delete", "namespace", other, "--wait=false", check=False)
    # Nothing of that was written, and the job's own token still works.
    assert trainer_status(namespace, "mine") is None
    code, answer, _ = post(server, certs[1], namespace, "mine", body, bearer=token(namespace, "mine"))
    assert code == 200, answer
    assert trainer_status(namespace, "mine")["progressPercentage"] == 10
    assert trainer_status(namespace, "theirs") is None


@pytest.mark.parametrize("body, message", [
    ({"trainerStatus": {"progressPercentage": 101, "lastUpdatedTime": "2026-12-04T10:00:00Z"}},
     "trainerStatus.progressPercentage: must be an integer from 0 to 100"),
    ({"trainerStatus": {"progressPercentage": 5}}, "trainerStatus.lastUpdatedTime: is required"),
    ({"trainerStatus": {"metrics": [{"name": "loss", "value": 0.5}], "lastUpdatedTime": "2026-12-04T10:00:00Z"}},
     "trainerStatus.metrics[0].value: must be a string"),
    ({"trainerStatus": {"metrics": [{"name": f"m{i}", "value": "1"} for i in range(257)],
                        "lastUpdatedTime": "2026-12-04T10:00:00Z"}},
     "trainerStatus.metrics: has 257 entries, the limit is 256"),
    ({"progress": 5}, 'body: unknown field "progress"'),
    (b"{not json", "the body is not a JSON object"),
])
def test_bad_reports_get_422_with_the_reason(server, certs, namespace, body, message):
    apply(trainjob("bad", run_time="600s"), "-n", namespace)
    wait_for("the job", lambda: tj(namespace, "bad"), timeout=30)
    code, answer, _ = post(server, certs[1], namespace, "bad", body, bearer=token(namespace, "bad"))
    assert (code, answer["reason"]) == (422, "Invalid"), answer
    assert message in answer["message"]
    assert trainer_status(namespace, "bad") is None


def test_limits_paths_methods_and_the_rate(server, certs, namespace):
    apply(trainjob("busy", run_time="600s"), "-n", namespace)
    wait_for("the job", lambda: tj(namespace, "busy"), timeout=30)
    t = token(namespace, "busy")
    code, answer, _ = post(server, certs[1], namespace, "busy", b" " * (64 * 1024 + 1), bearer=t)
    assert (code, answer["reason"]) == (413, "RequestEntityTooLarge"), answer
    assert post(server, certs[1], namespace, "busy", report(1, 1), bearer=t, path="/metrics")[0] == 404
    assert post(server, certs[1], namespace, "busy", report(1, 1), bearer=t, method="PUT")[0] == 405
    # A job that does not exist: the audience is valid, the write is refused by the API server.
    code, answer, _ = post(server, certs[1], namespace, "ghost", report(1, 1), bearer=token(namespace, "ghost"))
    assert (code, answer["reason"]) == (404, "NotFound"), answer
    # One write a second per job: the next within it waits, and the one after goes through.
    assert post(server, certs[1], namespace, "busy", report(1, 100), bearer=t)[0] == 200
    code, answer, headers = post(server, certs[1], namespace, "busy", report(2, 99), bearer=t)
    assert (code, answer["reason"], headers["Retry-After"]) == (429, "TooManyRequests", "1")
    assert trainer_status(namespace, "busy")["progressPercentage"] == 1
    time.sleep(1.1)
    assert post(server, certs[1], namespace, "busy", report(3, 98), bearer=t)[0] == 200
    assert trainer_status(namespace, "busy")["progressPercentage"] == 3
    # The controller is still serving.
    assert server.get("/readyz", server.probe_port) == 200


SDK_SCRIPT = """
import sys
from kubeflow.trainer.backends.kubernetes.utils import update_trainjob_status
ok = update_trainjob_status(progress_percent=64, estimated_remaining_seconds=720,
                            metrics={"loss": 0.42, "epoch": 3})
sys.exit(0 if ok else 1)
"""


@pytest.mark.skipif(not os.path.exists(VENV_PYTHON), reason="no venv with Kubeflow's SDK")
def test_the_sdks_own_helper_reports(server, certs, namespace, tmp_path):
    """A training script calls the SDK's update_trainjob_status inside a pod's environment:
    the env the controller gives the pod, the token file and the CA file where the pod has
    them (here, files of this test)."""
    apply(trainjob("sdk", run_time="600s"), "-n", namespace)
    wait_for("the pod", lambda: pods(namespace, "sdk"), timeout=60)
    (pod,) = pods(namespace, "sdk")
    env = {e["name"]: e.get("value") for c in pod["spec"]["containers"] if c["name"] == "node"
           for e in c["env"]}
    (tmp_path / "token").write_text(token(namespace, "sdk"))
    script_env = dict(os.environ, KUBEFLOW_TRAINER_SERVER_URL=env["KUBEFLOW_TRAINER_SERVER_URL"],
                      KUBEFLOW_TRAINER_SERVER_TOKEN=str(tmp_path / "token"),
                      KUBEFLOW_TRAINER_SERVER_CA_CERT=certs[1])
    r = subprocess.run([VENV_PYTHON, "-c", SDK_SCRIPT], env=script_env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    ts = trainer_status(namespace, "sdk")
    assert (ts["progressPercentage"], ts["estimatedRemainingSeconds"]) == (64, 720)
    assert ts["metrics"] == [{"name": "loss", "value": "0.42"}, {"name": "epoch", "value": "3"}]
