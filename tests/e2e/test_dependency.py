"""Dependencies between TrainJobs and holds against the real control plane (docs/users.md,
"Dependencies"): a job that names others in trainjob.flame.dev/dependency waits, Queued with
reason Dependency and no pod, until they have done what it asks for, and fails when they no
longer can, in Slurm's words; the jobs are applied together, the dependent first. kubectl
scontrol (the build's kubectl-scontrol on PATH) holds, releases, requeues, tops and shows jobs."""

import json
import os
import subprocess
import time

from kube import REPO, SIM, apply, gh200_busy, kubectl, pods, running, tj, trainjob, ts, wait_for, wait_state

BUILD = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))

DEPENDENCY = "trainjob.flame.dev/dependency"
FAILS = {SIM + "fail-exit-code": "3", SIM + "fail-after": "4s"}


def status(namespace, name):
    return tj(namespace, name).get("status", {})


def apply_all(namespace, *jobs):
    """One kubectl call, in the order given, as kubectl apply of a folder."""
    kubectl("apply", "-n", namespace, "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(jobs)}))


def test_afterok_waits_for_its_job_and_afternotok_fails_when_it_succeeds(controller, namespace):
    apply_all(namespace,
              trainjob("train", nodes=1, gpus=1, run_time="3s", annotations={DEPENDENCY: "afterok:prep"}),
              trainjob("cleanup", nodes=1, gpus=1, run_time="3s", annotations={DEPENDENCY: "afternotok:prep"}),
              trainjob("prep", nodes=1, gpus=1, run_time="8s"))
    running(namespace, "prep", 1, timeout=60)
    for name in ("train", "cleanup"):
        s = wait_for(f"{name} to wait for prep", lambda: (s := status(namespace, name)).get("reason") == "Dependency" and s, timeout=30)
        assert s["state"] == "Queued", s
        assert s["message"].startswith("waits for prep"), s
        assert pods(namespace, name) == []
    wait_state(namespace, "prep", "Complete", timeout=60)
    wait_state(namespace, "train", "Complete", timeout=90)
    failed = wait_state(namespace, "cleanup", "Failed", timeout=30)["status"]
    assert failed["reason"] == "DependencyNeverSatisfied", failed
    assert failed["message"] == "afternotok:prep can never be met: prep completed", failed
    assert pods(namespace, "cleanup") == []


def test_afternotok_runs_after_a_failure_and_any_of_two_is_enough(controller, namespace):
    apply_all(namespace,
              trainjob("rescue", nodes=1, gpus=1, run_time="3s", annotations={DEPENDENCY: "afternotok:flaky"}),
              trainjob("either", nodes=1, gpus=1, run_time="3s", annotations={DEPENDENCY: "afterok:flaky?afterok:steady"}),
              trainjob("flaky", nodes=1, gpus=1, run_time="1h", pod_annotations=FAILS,
                       annotations={"trainjob.flame.dev/max-restarts": "0"}),
              trainjob("steady", nodes=1, gpus=1, run_time="20s"))
    failed = wait_state(namespace, "flaky", "Failed", timeout=90)["status"]
    assert failed["reason"] == "ReachedMaxRestarts", failed
    wait_state(namespace, "rescue", "Complete", timeout=90)
    steady = wait_state(namespace, "steady", "Complete", timeout=90)["status"]
    either = wait_state(namespace, "either", "Complete", timeout=90)["status"]
    # flaky failed, so only steady's completion let it start.
    assert ts(either["startTime"]) >= ts(steady["completionTime"]), (either, steady)


def test_a_dependency_on_no_job_fails_after_a_minute_and_a_malformed_one_at_once(controller, namespace):
    apply(trainjob("orphan", nodes=1, gpus=1, annotations={DEPENDENCY: "afterok:nothing"}), "-n", namespace)
    apply(trainjob("typo", nodes=1, gpus=1, annotations={DEPENDENCY: "afterok,prep"}), "-n", namespace)
    bad = wait_state(namespace, "typo", "Failed", timeout=30)["status"]
    assert bad["reason"] == "InvalidSpec" and "trainjob.flame.dev/dependency" in bad["message"], bad
    assert status(namespace, "orphan")["reason"] == "Dependency"
    failed = wait_state(namespace, "orphan", "Failed", timeout=120)["status"]
    assert failed["message"] == "afterok:nothing can never be met: the namespace has no TrainJob nothing", failed


def scontrol(namespace, *args, check=True):
    """kubectl scontrol -n namespace ...: kubectl finds kubectl-scontrol on PATH."""
    env = dict(os.environ, PATH=BUILD + os.pathsep + os.environ["PATH"])
    proc = subprocess.run(["kubectl", "scontrol", "-n", namespace, *args], capture_output=True, text=True, env=env, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl scontrol {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def test_a_held_job_waits_past_its_dependency_until_released(controller, namespace):
    apply_all(namespace,
              trainjob("later", nodes=1, gpus=1, run_time="3s", annotations={DEPENDENCY: "afterok:first"}),
              trainjob("first", nodes=1, gpus=1, run_time="6s"))
    wait_for("later to wait for first", lambda: status(namespace, "later").get("reason") == "Dependency", timeout=30)
    assert scontrol(namespace, "hold", "later").stdout == f"held TrainJob {namespace}/later\n"
    wait_for("later to be held", lambda: status(namespace, "later").get("reason") == "JobHeldUser", timeout=30)
    wait_state(namespace, "first", "Complete", timeout=60)
    time.sleep(3)
    assert status(namespace, "later")["reason"] == "JobHeldUser" and pods(namespace, "later") == []
    shown = scontrol(namespace, "show", "job", "later").stdout
    assert "JobState=PENDING Reason=JobHeldUser Dependency=afterok:first Hold=yes" in shown, shown
    refused = scontrol(namespace, "hold", "first", check=False)
    assert refused.returncode == 1 and "first is COMPLETED: only a pending job can be held" in refused.stderr, refused.stderr
    assert scontrol(namespace, "release", "later").stdout == f"released TrainJob {namespace}/later\n"
    wait_state(namespace, "later", "Complete", timeout=60)


def test_top_puts_a_queued_job_first_among_its_namespaces(controller, namespace):
    apply(trainjob("hog", nodes=8, run_time="15s"), "-n", namespace)
    running(namespace, "hog", 8, timeout=60)
    for name in ("first", "second"):
        apply(trainjob(name, nodes=8, run_time="3s"), "-n", namespace)
        time.sleep(1.1)  # creation times are in seconds
    wait_for("the queue", lambda: [status(namespace, n).get("queuePosition") for n in ("first", "second")] == [1, 2], timeout=30)
    out = scontrol(namespace, "top", "second").stdout
    assert out.startswith(f"TrainJob {namespace}/second goes first"), out
    wait_for("second on top", lambda: [status(namespace, n).get("queuePosition") for n in ("second", "first")] == [1, 2], timeout=30)
    running(namespace, "second", 8, timeout=90)
    assert pods(namespace, "first") == []
    wait_state(namespace, "first", "Complete", timeout=90)


def test_requeue_sends_a_running_job_back_to_the_queue_uncharged(controller, namespace):
    """kubectl scontrol requeue: the running job's pods are deleted and it is Queued with
    reason Requeued, then runs again to Complete, its restart count still 0 and its
    walltime clock started again; a job that does not run cannot be requeued."""
    # Jobs of earlier tests, in namespaces still being deleted, can hold GH200 nodes a while.
    wait_for("the GH200 nodes to be free", lambda: not gh200_busy()[1], timeout=240, interval=1)
    apply(trainjob("long", nodes=2, gpus=1, run_time="20s"), "-n", namespace)
    first = running(namespace, "long", 2, timeout=60)
    first_start = ts(wait_for("long's startTime", lambda: status(namespace, "long").get("startTime"), timeout=30))
    time.sleep(1.1)  # the request comes after the start, in seconds
    assert scontrol(namespace, "requeue", "long").stdout == f"requeued TrainJob {namespace}/long\n"

    def requeued():
        s = status(namespace, "long")
        if s.get("reason") == "Requeued":
            return s
        # With its nodes free, the job is admitted again within milliseconds of its stop, so
        # a poll can miss the Queued state: its new start and lastRequeueTime tell it went back.
        if s.get("lastRequeueTime") and s.get("startTime") and ts(s["startTime"]) > first_start:
            return s
        return None

    back = wait_for("long to be requeued", requeued, timeout=30)
    if back.get("reason") == "Requeued":
        assert back["state"] == "Queued" and "not a restart" in back["message"], back
    try:
        again = running(namespace, "long", 2, timeout=90)
    except AssertionError as e:
        raise AssertionError(f"{e}; long: {status(namespace, 'long')}; GH200: {gh200_busy()[1]}") from None
    assert {p["metadata"]["uid"] for p in again}.isdisjoint({p["metadata"]["uid"] for p in first})
    done = wait_state(namespace, "long", "Complete", timeout=90)["status"]
    assert done.get("restartCount", 0) == 0 and ts(done["startTime"]) > first_start, done
    assert done.get("lastRequeueTime"), done
    refused = scontrol(namespace, "requeue", "long", check=False)
    assert refused.returncode == 1 and "long is COMPLETED: only a running job can be requeued" in refused.stderr, refused.stderr
