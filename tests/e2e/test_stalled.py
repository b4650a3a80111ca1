"""Stalled jobs (docs/users.md, "Stalled jobs"): a running job whose reported progress has not
changed for its `trainjob.flame.dev/stall-timeout` is restarted as an infrastructure failure
with reason Stalled, its pods stopped (activeDeadlineSeconds, which the simulated kubelet
honours as the real one does) and kept for their logs; the new attempt gets a full timeout
from its start and, reporting again, completes. A job that never reports progress is never
judged, and a report that repeats the same progress is no progress.

The reports are posted as a training script posts them, through the trainer status server
of the module's controller (status_api.py)."""

import time

from kube import FAILED_ATTEMPT, apply, events, kept_pods, metric_sum, running, tj, trainjob, ts, wait_for, wait_state
# certs and server are the module's fixtures.
from status_api import certs, post, report, server, token

TIMEOUT = 20
STALL = {"trainjob.flame.dev/stall-timeout": f"{TIMEOUT}s"}


def restarts(namespace, name):
    return tj(namespace, name).get("status", {}).get("restartCount", 0)


def test_a_job_that_stops_reporting_is_restarted_as_stalled_and_completes(server, certs, namespace):
    # Each attempt's pods run 60 s: long enough to stall in the first, and to complete in the
    # second while it reports.
    apply(trainjob("stuck", run_time="60s", annotations=STALL), "-n", namespace)
    apply(trainjob("silent", run_time="60s", annotations=STALL), "-n", namespace)
    running(namespace, "stuck", 1, attempt=0, timeout=90)
    running(namespace, "silent", 1, attempt=0, timeout=90)
    bearer = token(namespace, "stuck")

    def send(progress, **metrics):
        code, answer, _ = post(server, certs[1], namespace, "stuck", report(progress, 600, **metrics), bearer=bearer)
        assert code == 200, answer

    send(10, loss=0.9)
    time.sleep(2)
    send(20, loss=0.8)
    changed = time.time()
    # The same progress again, later and with another remaining time: no progress.
    time.sleep(8)
    send(20, loss=0.8)

    job = wait_for("the stall's restart", lambda: restarts(namespace, "stuck") == 1 and tj(namespace, "stuck"),
                   timeout=60)
    status = job["status"]
    # Judged from the last change, not from the repeat (which would give 28 s or more).
    assert ts(status["lastFailure"]["time"]) < changed + TIMEOUT + 6, status["lastFailure"]
    assert status["lastFailure"]["reason"] == "Stalled" and status["lastFailure"]["rank"] == 0
    assert status["infrastructureRestarts"] == 1
    assert (status["state"], status["reason"]) == ("Restarting", "Stalled")
    assert "infrastructure restart 1 of 10" in status["message"]
    (stalled,) = events(namespace, "stuck", "Stalled")
    assert stalled["type"] == "Warning"
    assert "the progress it reports (20%) has not changed since" in stalled["message"]
    assert f"longer than its stall timeout of {TIMEOUT}s" in stalled["message"]
    assert events(namespace, "stuck", "Restarting")

    # The stalled pod is not deleted: stopped by its deadline, and kept for its logs.
    def stopped():
        kept = kept_pods(namespace, "stuck")
        return (len(kept) == 1 and kept[0]["status"].get("phase") == "Failed" and kept[0])

    pod = wait_for("the stalled pod to stop", stopped, timeout=30)
    assert pod["metadata"]["labels"][FAILED_ATTEMPT] == "0"
    assert pod["spec"]["activeDeadlineSeconds"] == 1
    assert pod["status"]["reason"] == "DeadlineExceeded"

    # The silent job has run longer than the timeout, and was never judged.
    assert restarts(namespace, "silent") == 0 and not events(namespace, "silent", "Stalled")

    # The new attempt gets a full timeout from its start, however old the last change is:
    # it reports only after 12 s, then every 6 s until it completes.
    running(namespace, "stuck", 1, attempt=1, timeout=60)
    time.sleep(12)
    assert restarts(namespace, "stuck") == 1
    progress = 30
    deadline = time.time() + 90
    while tj(namespace, "stuck")["status"].get("state") != "Complete":
        assert time.time() < deadline, tj(namespace, "stuck")["status"]
        send(progress, loss=1 / progress)
        progress = min(progress + 5, 100)
        time.sleep(6)

    status = tj(namespace, "stuck")["status"]
    assert (status["restartCount"], status["infrastructureRestarts"]) == (1, 1)
    silent = wait_state(namespace, "silent", "Complete", timeout=60)["status"]
    assert silent["restartCount"] == 0 and "lastFailure" not in silent

    text = server.metrics()
    assert metric_sum(text, "trainjob_stalled_total", namespace=namespace) == 1
    assert metric_sum(text, "trainjob_worker_restarts_total", namespace=namespace, reason="Stalled") == 1


def test_a_bad_stall_timeout_is_refused_naming_the_annotation(server, namespace):
    apply(trainjob("typo", annotations={"trainjob.flame.dev/stall-timeout": "20 minutes"}), "-n", namespace)
    status = wait_state(namespace, "typo", "Failed", timeout=30)["status"]
    assert status["reason"] == "InvalidSpec"
    assert status["message"] == ("metadata.annotations[trainjob.flame.dev/stall-timeout]: '20 minutes' is not a "
                                 "duration such as 30m, 1h30m or 600s (1 s to 366 d), or 0 for none")
