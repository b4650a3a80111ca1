"""Dependencies between TrainJobs against the real control plane (README, "Dependencies"):
a job that names others in trainjob.flame.dev/dependency waits, Queued with reason
Dependency and no pod, until they have done what it asks for, and fails when they no
longer can, in Slurm's words; the jobs are applied together, the dependent first."""

import json

from kube import SIM, apply, kubectl, pods, running, tj, trainjob, wait_for, wait_state

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
    assert status(namespace, "either")["reason"] == "Dependency"
    wait_state(namespace, "steady", "Complete", timeout=90)
    wait_state(namespace, "either", "Complete", timeout=90)


def test_a_dependency_on_no_job_fails_after_a_minute_and_a_malformed_one_at_once(controller, namespace):
    apply(trainjob("orphan", nodes=1, gpus=1, annotations={DEPENDENCY: "afterok:nothing"}), "-n", namespace)
    apply(trainjob("typo", nodes=1, gpus=1, annotations={DEPENDENCY: "afterok,prep"}), "-n", namespace)
    bad = wait_state(namespace, "typo", "Failed", timeout=30)["status"]
    assert bad["reason"] == "InvalidSpec" and "trainjob.flame.dev/dependency" in bad["message"], bad
    assert status(namespace, "orphan")["reason"] == "Dependency"
    failed = wait_state(namespace, "orphan", "Failed", timeout=120)["status"]
    assert failed["message"] == "afterok:nothing can never be met: the namespace has no TrainJob nothing", failed
