"""The runtime fields a JobSet or a Job would apply, applied without either (crds/README.md,
"Field by field"): a Job template's annotations and a replicated job's groupName on the step's
pods, the Job fields whose values are this controller's behaviour (backoffLimit 0,
completionMode Indexed), a PVC of volumeClaimPolicies with whenDeleted: Retain that outlives
its TrainJob, a podFailurePolicy rule FailJob with a JobSet failurePolicy rule on its reason
failing the job on that exit code; and a Job field or value that is not applied refused
before any pod exists, naming it."""

import copy

from kube import apply, condition, events, kubectl, kubectl_json, pods, trainjob, wait_for, wait_state

SIM = "sim.trainjob.flame.dev/"
GROUP = "jobset.sigs.k8s.io/group-name"

RUNTIME = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainingRuntime",
    "metadata": {"name": "jobby", "labels": {"trainer.kubeflow.org/framework": "torch"}},
    "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {"spec": {
            "volumeClaimPolicies": [{
                "templates": [{"metadata": {"name": "kept"},
                               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                "retentionPolicy": {"whenDeleted": "Retain"}}],
            "replicatedJobs": [
                {"name": "prepare", "groupName": "setup", "template": {
                    # The simulated pod's run time arrives through the Job template's
                    # annotations, as a Job would pass them to its pods.
                    "metadata": {"annotations": {SIM + "run-time": "2s", "note": "from-the-job"}},
                    "spec": {"backoffLimit": 0, "completionMode": "Indexed", "template": {"spec": {
                        "containers": [{"name": "prepare", "image": "busybox", "command": ["true"]}]}}}}},
                {"name": "node", "dependsOn": [{"name": "prepare", "status": "Complete"}], "template": {
                    "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"},
                                 "annotations": {"note": "from-the-node-job"}},
                    "spec": {"backoffLimit": 0, "template": {"spec": {
                        "containers": [{"name": "node", "image": "pytorch/pytorch"}]}}}}},
            ],
        }},
    },
}


def job_of(name, runtime):
    job = trainjob(name, nodes=1, gpus=0, runtime=runtime)
    job["spec"]["runtimeRef"]["kind"] = "TrainingRuntime"
    return job


def test_job_annotations_group_and_behaviour_values_are_applied_and_a_retained_claim_outlives_the_job(
        controller, namespace):
    apply(RUNTIME, "-n", namespace)
    apply(job_of("jobby", "jobby"), "-n", namespace)
    try:
        seen = {}

        def both_steps():
            for p in kubectl_json("get", "pods", "-n", namespace, "-l", "trainer.kubeflow.org/trainjob-name=jobby")["items"]:
                seen[p["metadata"]["labels"]["jobset.sigs.k8s.io/replicatedjob-name"]] = p
            return len(seen) == 2

        wait_for("the prepare and node pods", both_steps, timeout=90)
        prepare, node = seen["prepare"]["metadata"], seen["node"]["metadata"]
        assert prepare["annotations"]["note"] == "from-the-job"
        assert prepare["annotations"][SIM + "run-time"] == "2s"
        assert prepare["labels"][GROUP] == "setup" and prepare["annotations"][GROUP] == "setup"
        assert node["annotations"]["note"] == "from-the-node-job"
        assert GROUP not in node["labels"]
        done = wait_state(namespace, "jobby", "Complete", timeout=120)
        assert condition(done, "Complete")
        pvc = kubectl_json("get", "pvc", "kept-jobby", "-n", namespace)
        assert not pvc["metadata"].get("ownerReferences"), pvc["metadata"]
        kubectl("delete", "trainjob", "jobby", "-n", namespace, "--wait=true", "--timeout=60s")
        # Retain: the PVC is not the TrainJob's child, so the garbage collector leaves it.
        assert kubectl_json("get", "pvc", "kept-jobby", "-n", namespace)["metadata"]["name"] == "kept-jobby"
    finally:
        kubectl("delete", "trainjob", "jobby", "-n", namespace, "--wait=false", check=False)
        kubectl("delete", "pvc", "kept-jobby", "-n", namespace, "--wait=false", check=False)


def test_a_pod_failure_policy_rule_and_a_jobset_rule_fail_the_job_on_its_exit_code(controller, namespace):
    rt = copy.deepcopy(RUNTIME)
    rt["metadata"]["name"] = "fatal-exit"
    spec = rt["spec"]["template"]["spec"]
    del spec["volumeClaimPolicies"]
    spec["failurePolicy"] = {"maxRestarts": 3, "rules": [
        {"name": "fatal", "action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]}]}
    spec["replicatedJobs"][1]["template"]["spec"]["podFailurePolicy"] = {
        "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [3]}}]}
    apply(rt, "-n", namespace)
    job = job_of("fatal-exit", "fatal-exit")
    job["spec"]["podTemplateOverrides"][0]["metadata"]["annotations"][SIM + "fail-exit-code"] = "3"
    apply(job, "-n", namespace)
    done = wait_state(namespace, "fatal-exit", "Failed", timeout=120)
    st = done["status"]
    assert st["reason"] == "FailJobSetFailurePolicyAction", st
    assert st.get("restartCount", 0) == 0
    assert "failurePolicy rule 0 (fatal): FailJobSet on a Job of node failed with reason PodFailurePolicy" in st["message"]
    assert condition(done, "Failed")["reason"] == "FailJobSetFailurePolicyAction"


def test_a_job_field_not_applied_is_refused_naming_it(controller, namespace):
    rt = copy.deepcopy(RUNTIME)
    rt["metadata"]["name"] = "retrying"
    del rt["spec"]["template"]["spec"]["volumeClaimPolicies"]
    rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["podFailurePolicy"] = {
        "rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [42]}}]}
    apply(rt, "-n", namespace)
    apply(job_of("retrying", "retrying"), "-n", namespace)
    done = wait_state(namespace, "retrying", "Failed", timeout=60)
    st = done["status"]
    assert st["reason"] == "UnsupportedRuntime"
    field = "spec.template.spec.replicatedJobs[0].template.spec.podFailurePolicy.rules[0]"
    assert st["message"].startswith(f"TrainingRuntime retrying: {field} is not supported"), st["message"]
    ev = wait_for("the Failed event", lambda: events(namespace, "retrying", "Failed"), timeout=30)
    assert ev[0]["type"] == "Warning" and field in ev[0]["message"]
    assert pods(namespace, "retrying") == []
