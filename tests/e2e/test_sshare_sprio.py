"""kubectl sshare and sprio, run as kubectl runs plugins (the build's kubectl-* executables on
PATH), against the real cluster and the session's controller (docs/slurm.md): a
namespace that ran a job, since deleted, has a lower fair-share factor than one that ran
nothing, the same factor and usage the controller's metrics show; sprio lists the jobs
queued behind pods that hold every GH200 node in the order the controller gives them, with
their QOS tier, their fair-share and age points and their own priority. The controller runs
with deploy/config's config file, which the plugins read from the ConfigMap deploy/config
makes of it."""

import os

import pytest

from kube import (GH200_SELECTOR, REPO, apply, drop_namespaces, gh200_busy, kubectl, kubectl_json, metric, other_namespace, tj,
                  trainjob, wait_for, wait_state)
from test_admission import plain_gpu_pod
from test_squeue import plugin, rows

PRIORITY = "trainjob.flame.dev/priority"
QOS = "trainjob.flame.dev/qos"


@pytest.fixture
def namespaces():
    """Two namespaces of the test's own beside the fixture's, dropped afterwards."""
    names = [other_namespace(), other_namespace()]
    yield names
    drop_namespaces(*names)


def position(namespace, name):
    return tj(namespace, name).get("status", {}).get("queuePosition")


def test_sshare_and_sprio_show_the_controllers_fair_share_and_order(controller, namespace, namespaces):
    used, (fresh, blocking) = namespace, namespaces
    wait_for("the GH200 nodes to be free", lambda: not gh200_busy()[1], timeout=240, interval=1)
    # The ConfigMap deploy/config ships, in the test's namespace.
    kubectl("apply", "-n", used, "-k", os.path.join(REPO, "deploy", "config"))
    config_map = f"{used}/trainjob-controller-config"

    apply(trainjob("warmup", nodes=8, run_time="5s"), "-n", used)
    warmup = wait_state(used, "warmup", "Complete", timeout=90)["status"]
    assert warmup.get("gpuSeconds", 0) >= 8 * 4 * 4, warmup
    # Deleted, it counts through its accounting record.
    kubectl("delete", "trainjob", "warmup", "-n", used)
    wait_for("warmup's accounting record",
             lambda: kubectl("get", "configmap", "trainjob-accounting", "-n", used, check=False).returncode == 0, timeout=30)
    # Pods of no TrainJob hold every GH200 node: the queue forms behind them, and no job
    # runs whose count would move while sshare is compared with the controller (a running
    # job's GPU-seconds count as it runs, each reader up to its own now).
    gh200 = sorted(n["metadata"]["name"] for n in kubectl_json("get", "nodes", "-l", GH200_SELECTOR)["items"])
    for i, node in enumerate(gh200):
        apply(plain_gpu_pod(f"hold-{i}", node, by_node_name=True), "-n", blocking)
    wait_for("the GH200 nodes to be held",
             lambda: all(p["status"].get("phase") == "Running" for p in kubectl_json("get", "pods", "-n", blocking)["items"]),
             timeout=60)
    apply(trainjob("backlog", nodes=8, run_time="3s"), "-n", used)
    apply(trainjob("urgent", nodes=8, run_time="3s", annotations={PRIORITY: "5"}), "-n", used)
    apply(trainjob("scavenger", nodes=8, run_time="3s", annotations={QOS: "low"}), "-n", fresh)
    apply(trainjob("newcomer", nodes=8, run_time="3s"), "-n", fresh)
    order = [(fresh, "newcomer"), (used, "urgent"), (used, "backlog"), (fresh, "scavenger")]
    wait_for("the controller's queue", lambda: [position(ns, n) for ns, n in order] == [1, 2, 3, 4], timeout=60)

    # sshare: the namespace that ran a job against the one that ran nothing, each the same as
    # the controller's metrics once both have read the same TrainJobs (the controller reads
    # the usage again every 10 seconds).
    seen = {}

    def agree():
        share = {r["Account"]: r for r in rows(plugin("sshare", "-A", "--config-map", config_map).stdout)}
        scrape = controller.metrics()
        seen.clear()
        seen["sshare"] = share
        seen["controller"] = [line for line in scrape.splitlines() if line.startswith("trainjob_fair_share_")]
        for ns in (used, fresh):
            factor = metric(scrape, f'trainjob_fair_share_factor{{namespace="{ns}"}}', None)
            usage = metric(scrape, f'trainjob_fair_share_usage_gpu_seconds{{namespace="{ns}"}}', None)
            if ns not in share or factor is None or abs(float(share[ns]["FairShare"]) - factor) > 0.0005:
                return None
            if abs(float(share[ns]["RawUsage"]) - usage) > 1:
                return None
        return share

    try:
        share = wait_for("sshare to agree with the controller's metrics", agree, timeout=120, interval=2)
    except AssertionError as e:
        raise AssertionError(f"{e}; last seen: {seen}") from None
    assert float(share[used]["FairShare"]) < 1.0, share[used]
    assert share[fresh]["FairShare"] == "1.000000" and share[fresh]["RawUsage"] == "0", share[fresh]
    assert share[fresh]["EffectvUsage"] == "0.000000"
    # The shipped config gives every namespace a share of 1.
    assert share[used]["RawShares"] == share[fresh]["RawShares"] == "1"
    assert abs(float(share[used]["RawUsage"]) - warmup["gpuSeconds"]) <= 1, (share[used], warmup)
    only = rows(plugin("sshare", "-n", used, "--config-map", config_map).stdout)
    assert [r["Account"] for r in only] == [used], only

    # sprio: the controller's order, by its parts.
    prio = [r for r in rows(plugin("sprio", "-A", "--config-map", config_map).stdout) if r["ACCOUNT"] in (used, fresh)]
    assert [(r["ACCOUNT"], r["JOBID"]) for r in prio] == order, prio
    assert all(r["PARTITION"] == "gh200" for r in prio), prio
    assert [(r["QOS"], r["TIER"]) for r in prio] == [("normal", "0")] * 3 + [("low", "-1000")], prio
    assert [r["OWN"] for r in prio] == ["-", "5", "-", "-"], prio
    for r in prio:
        assert int(r["PRIORITY"]) == int(r["FAIRSHARE"]) + int(r["AGE"]), r
    by_name = {r["JOBID"]: r for r in prio}
    assert by_name["newcomer"]["FAIRSHARE"] == by_name["scavenger"]["FAIRSHARE"] == "10000", prio
    again = {r["Account"]: r for r in rows(plugin("sshare", "-A", "--config-map", config_map).stdout)}
    assert abs(int(by_name["backlog"]["FAIRSHARE"]) - float(again[used]["FairShare"]) * 10000) <= 1, (prio, again[used])
    assert [r["JOBID"] for r in rows(plugin("sprio", "-n", fresh, "--config-map", config_map).stdout)] == ["newcomer", "scavenger"]

    # A ConfigMap named that does not exist is an error; the default one, when it does not
    # exist, leaves the built-in defaults with a note.
    missing = plugin("sshare", "-A", "--config-map", f"{used}/absent", check=False)
    assert missing.returncode == 1 and missing.stdout == "", missing
    assert missing.stderr.startswith(f"kubectl sshare: could not read the controller's config, ConfigMap {used}/absent: "), missing.stderr
    if kubectl("get", "configmap", "trainjob-controller-config", "-n", "trainjob-system", check=False).returncode != 0:
        defaults = plugin("sprio", "-n", fresh)
        assert defaults.stderr.startswith("kubectl sprio: note: no ConfigMap trainjob-system/trainjob-controller-config: "
                                          "the built-in defaults apply"), defaults.stderr
        assert [r["JOBID"] for r in rows(defaults.stdout)] == ["newcomer", "scavenger"]
