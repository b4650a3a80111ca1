"""The command policy against the real control plane (DESIGN.md section 4, "Policy"): a
TrainJob whose command never exits, in any step (the node pods, an MPI launcher), is Failed
with reason PolicyViolation and a Warning event before any pod of it exists, and
`trainjob-controller render` refuses it first with the same reason and message; near misses
that end by themselves run. Only a cluster operator exempts: a ClusterTrainingRuntime's
label and the config's commandPolicy.exemptNamespaces count, the same label on a namespaced
TrainingRuntime or on the TrainJob does not."""

import json
import os
import subprocess
import time
import uuid

import pytest

from conftest import Controller
from kube import (REPO, Watch, apply, condition, events, kubectl, kubectl_json, kubeflow_runtime_file, pods, trainjob,
                  wait_for, wait_state)

ALLOW = "trainjob.flame.dev/allow-long-running"

# (name, command, the offending part the message quotes)
REFUSED = [
    ("sleeps-forever", ["sleep", "infinity"], "'sleep infinity' never exits"),
    (
        "keeps-gpus-after-training",
        ["bash", "-c", "torchrun --nproc-per-node=4 /workspace/train.py\ntail -f /dev/null\n"],
        "'tail -f /dev/null' never exits (it follows /dev/null or standard input for ever)",
    ),
    (
        "polls-for-ever",
        ["sh", "-c", "while true; do nvidia-smi; sleep 60; done"],
        "'while true; do nvidia-smi; sleep 60; done' never exits (its condition is always "
        "true and nothing in it breaks out or exits)",
    ),
    (
        "sleeps-past-its-walltime",
        ["bash", "-c", "python /workspace/prepare.py && sleep 2h"],
        "'sleep 2h' sleeps 7200 s, as long as the job's walltime of 3600 s or longer, so the "
        "job can never finish by itself",
    ),
]

ACCEPTED = [
    ("naps-after-training", ["sh", "-c", "python /workspace/train.py; sleep 5"]),
    ("waits-then-trains", ["sh", "-c", "sleep 10 && torchrun --nproc-per-node=4 /workspace/train.py"]),
]


def job_with(name, command, **kw):
    body = trainjob(name, **kw)
    body["spec"]["trainer"]["command"] = command
    return body


def render(manifest, *extra):
    """trainjob-controller render of a manifest (a dict), as a person would run it before
    applying, with extra arguments (--runtime FILE): (exit status, stdout, stderr)."""
    build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
    path = os.path.join(REPO, "build", f"e2e-render-{uuid.uuid4().hex[:6]}.yaml")
    with open(path, "w") as f:
        json.dump(manifest, f)  # JSON is YAML
    try:
        p = subprocess.run([os.path.join(build, "trainjob-controller"), "render", "-f", path, *extra],
                           capture_output=True, text=True, timeout=30)
    finally:
        os.unlink(path)
    return p.returncode, p.stdout, p.stderr


def assert_refused_without_pods(namespace, name, watch, part, step="node"):
    done = wait_state(namespace, name, "Failed", timeout=30)
    status = done["status"]
    want = (f"container node of step {step}: {part}; a job must exit by itself when its work is "
            "done, so it is refused before any pod starts")
    assert status["reason"] == "PolicyViolation", status
    assert status["message"] == want
    c = condition(done, "Failed")
    assert c["status"] == "True" and c["reason"] == "PolicyViolation" and c["message"] == want
    failed = wait_for("the Failed event", lambda: events(namespace, name, "Failed"), timeout=30)
    assert failed[0]["type"] == "Warning"
    assert failed[0]["message"] == f"PolicyViolation: {want}"
    # Give a wrong controller the time to create pods anyway, then look at every pod event
    # the namespace has seen since before the job was applied.
    time.sleep(3)
    assert pods(namespace, name) == []
    assert [e for e in watch.events() if e["object"].get("kind") == "Pod"] == []
    assert "startTime" not in status or status["startTime"] is None
    return want


@pytest.mark.parametrize("name,command,part", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_command_that_never_exits_is_refused_before_any_pod(controller, namespace, name, command, part):
    manifest = job_with(name, command, nodes=2, activeDeadlineSeconds=3600)
    if name == "sleeps-forever":
        # Users cannot exempt themselves: the operator's label means nothing on a TrainJob.
        manifest["metadata"]["labels"] = {ALLOW: "true"}
    rc, out, err = render(manifest)
    watch = Watch(namespace)
    try:
        apply(manifest, "-n", namespace)
        want = assert_refused_without_pods(namespace, name, watch, part)
    finally:
        watch.stop()
    # render refused it first, with the cluster's reason and message.
    assert rc != 0
    assert out == ""
    assert err == f"render: {name}: PolicyViolation: {want}\n"


@pytest.mark.parametrize("name,command", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_a_near_miss_that_ends_by_itself_runs(controller, namespace, name, command):
    manifest = job_with(name, command, nodes=2, run_time="3s", activeDeadlineSeconds=600)
    rc, out, err = render(manifest)
    assert rc == 0, err
    assert out.count("kind: Pod") == 2
    apply(manifest, "-n", namespace)
    done = wait_state(namespace, name, "Complete", timeout=90)
    assert done["status"]["reason"] == "AllPodsSucceeded"
    got = pods(namespace, name)
    assert len(got) == 2
    assert got[0]["spec"]["containers"][0]["command"] == command


@pytest.mark.parametrize("runtime", ["deepspeed-distributed", "mlx-distributed"])
def test_sleep_infinity_in_the_mpi_launcher_is_refused_naming_the_launcher(controller, namespace, kubeflow_module,
                                                                           runtime):
    """Kubeflow's MPI runtimes, applied unchanged: the TrainJob's command runs in the launcher
    while the nodes run sshd, which the launcher's end stops. `sleep infinity` in the launcher
    would hold the gang's nodes for ever: refused before any pod exists, the node pods
    included, naming the launcher; render refuses it first."""
    path = kubeflow_runtime_file(kubeflow_module, runtime)
    kubectl("apply", "-f", path)
    name = "launcher-sleeps"
    manifest = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {"runtimeRef": {"name": runtime}, "trainer": {"numNodes": 2, "command": ["sleep", "infinity"]}},
    }
    rc, out, err = render(manifest, "--runtime", path)
    watch = Watch(namespace)
    try:
        apply(manifest, "-n", namespace)
        want = assert_refused_without_pods(namespace, name, watch, "'sleep infinity' never exits", step="launcher")
    finally:
        watch.stop()
    assert rc != 0
    assert out == ""
    assert err == f"render: {name}: PolicyViolation: {want}\n"


def runtime_copy(kind, name, namespace=None):
    """The shipped torch-gh200 runtime under another name and kind, labelled allow-long-running."""
    rt = kubectl_json("get", "clustertrainingruntime", "torch-gh200")
    meta = {"name": name, "labels": dict(rt["metadata"].get("labels", {}), **{ALLOW: "true"})}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": rt["apiVersion"], "kind": kind, "metadata": meta, "spec": rt["spec"]}


def test_only_a_cluster_runtime_label_exempts(controller, namespace):
    ctr = f"e2e-services-{uuid.uuid4().hex[:6]}"
    apply(runtime_copy("ClusterTrainingRuntime", ctr))
    apply(runtime_copy("TrainingRuntime", "mine", namespace))
    try:
        # An operator's ClusterTrainingRuntime: the job runs.
        apply(job_with("service", ["sleep", "infinity"], runtime=ctr, run_time="30s"), "-n", namespace)
        wait_for("the exempt job's pod", lambda: len(pods(namespace, "service")) == 1, timeout=60)
        assert wait_state(namespace, "service", "Running", timeout=60)["status"]["reason"] == "AllPodsRunning"
        # The same label on a TrainingRuntime of the user's own namespace: refused.
        watch = Watch(namespace)
        try:
            manifest = job_with("selfserved", ["sleep", "infinity"])
            manifest["spec"]["runtimeRef"] = {"name": "mine", "kind": "TrainingRuntime",
                                              "apiGroup": "trainer.kubeflow.org"}
            apply(manifest, "-n", namespace)
            done = wait_state(namespace, "selfserved", "Failed", timeout=30)
            assert done["status"]["reason"] == "PolicyViolation"
            time.sleep(2)
            assert pods(namespace, "selfserved") == []
            assert [e for e in watch.events()
                    if e["object"]["metadata"].get("labels", {}).get("trainer.kubeflow.org/trainjob-name") == "selfserved"] == []
        finally:
            watch.stop()
    finally:
        kubectl("delete", "trainjob", "--all", "-n", namespace, "--wait=false", check=False)
        kubectl("delete", "clustertrainingruntime", ctr, "--wait=false", check=False)


def test_an_exempt_namespace_runs_what_others_may_not(controller, namespace):
    """commandPolicy.exemptNamespaces of the controller's config: that namespace's jobs are
    not checked, every other namespace's are."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        shipped = f.read()
    path = os.path.join(REPO, "build", f"e2e-command-policy-{uuid.uuid4().hex[:6]}.yaml")
    with open(path, "w") as f:
        f.write(shipped + f"\ncommandPolicy:\n  exemptNamespaces: [{namespace}]\n")
    other = "e2e-" + uuid.uuid4().hex[:8]
    kubectl("create", "namespace", other)
    controller.stop()
    own = Controller("--config", path).start()
    try:
        apply(job_with("notebook", ["sleep", "infinity"], run_time="30s"), "-n", namespace)
        assert wait_state(namespace, "notebook", "Running", timeout=60)["status"]["reason"] == "AllPodsRunning"
        wait_for("the default ServiceAccount of " + other,
                 lambda: kubectl("get", "serviceaccount", "default", "-n", other, check=False).returncode == 0,
                 timeout=60)
        apply(job_with("notebook", ["sleep", "infinity"], run_time="30s"), "-n", other)
        assert wait_state(other, "notebook", "Failed", timeout=30)["status"]["reason"] == "PolicyViolation"
        assert pods(other, "notebook") == []
    finally:
        own.stop()
        controller.start()
        kubectl("delete", "namespace", other, "--wait=false", check=False)
        os.unlink(path)
