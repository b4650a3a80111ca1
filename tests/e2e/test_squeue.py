"""kubectl squeue, scancel and sacct, run as kubectl runs plugins (the build's kubectl-*
executables on PATH), against the real cluster and the session's controller (docs/slurm.md): a 4-node job shown R with its nodes, a job queued behind it PD (Resources) with
its expected start, scancel removing only the queued one, and sacct's GPU-hours of the first
against the simulated run time; a job past its walltime TO, its GPU-hours all wasted."""

import calendar
import json
import os
import re
import subprocess
import time

import pytest

from kube import ATTEMPT, REPO, SIM, apply, kubectl, kubectl_json, metric, pods, running, tj, trainjob, wait_for, wait_state

BUILD = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
SUBMITTED_BY = "trainjob.flame.dev/submitted-by"
RUN_SECONDS = 40


def plugin(*args, check=True):
    """kubectl <plugin> ...: kubectl finds kubectl-<plugin> on PATH."""
    env = dict(os.environ, PATH=BUILD + os.pathsep + os.environ["PATH"])
    proc = subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def rows(out):
    """squeue's and sacct's tables: columns separated by spaces, no cell has one."""
    header, *lines = out.splitlines()
    names = header.split()
    return [dict(zip(names, line.split())) for line in lines]


def expand(hostlist):
    """The node names of a Slurm host list: gh200-[1-3,7],cpu-1."""
    names = []
    for prefix, ranges, plain in re.findall(r"([^,\[]+)\[([^\]]+)\]|([^,\[\]]+)", hostlist):
        if plain:
            names.append(plain)
            continue
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            names += [f"{prefix}{i:0{len(lo)}d}" for i in range(int(lo), int(hi or lo) + 1)]
    return names


def gh200_free():
    return not [p for p in kubectl_json("get", "pods", "-A")["items"]
                if (p["spec"].get("nodeName") or "").startswith("gh200-") and p["status"].get("phase") not in ("Succeeded", "Failed")]


def test_squeue_scancel_sacct(controller, namespace):
    wait_for("the GH200 nodes to be free", gh200_free, timeout=240, interval=1)
    big = trainjob("big", nodes=4, run_time=f"{RUN_SECONDS}s", annotations={SUBMITTED_BY: "alice"},
                   activeDeadlineSeconds=600)
    apply(big, "-n", namespace)
    big_pods = running(namespace, "big", 4, timeout=90)
    apply(trainjob("behind", nodes=5, run_time="3s"), "-n", namespace)
    queued = wait_for("behind to be Queued with an expected start",
                      lambda: (s := tj(namespace, "behind").get("status", {})).get("state") == "Queued" and s.get("expectedStartTime") and s,
                      timeout=60)
    assert queued["reason"] == "Resources"

    q = {r["JOBID"]: r for r in rows(plugin("squeue", "-n", namespace).stdout)}
    assert sorted(q) == ["behind", "big"], q
    assert q["big"]["ST"] == "R" and q["big"]["PARTITION"] == "gh200" and q["big"]["USER"] == "alice"
    assert q["big"]["NODES"] == "4" and q["big"]["TIME_LEFT"] != "UNLIMITED"
    assert sorted(expand(q["big"]["NODELIST(REASON)"])) == sorted(p["spec"]["nodeName"] for p in big_pods)
    assert q["behind"]["ST"] == "PD" and q["behind"]["NODELIST(REASON)"] == "(Resources)"
    assert q["behind"]["USER"] == namespace and q["behind"]["TIME"] == "0:00" and q["behind"]["TIME_LEFT"] == "UNLIMITED"

    start = rows(plugin("squeue", "-n", namespace, "--start").stdout)
    assert [r["JOBID"] for r in start] == ["behind"], start
    assert start[0]["START_TIME"] + "Z" == queued["expectedStartTime"]
    assert start[0]["POSITION"] == "1"
    assert [r["JOBID"] for r in rows(plugin("squeue", "-n", namespace, "-t", "PD").stdout)] == ["behind"]
    assert [r["JOBID"] for r in rows(plugin("squeue", "-A", "-t", "running").stdout) if r["JOBID"] == "big"] == ["big"]

    out = plugin("scancel", "-n", namespace, "--state=PENDING", "behind", "big")
    assert out.stdout == f"cancelled TrainJob {namespace}/behind (PENDING)\n", out.stdout
    assert out.stderr == f"kubectl scancel: big is RUNNING, not PENDING: left alone\n", out.stderr
    wait_for("behind to be gone", lambda: kubectl("get", "tj", "behind", "-n", namespace, check=False).returncode != 0, timeout=30)
    assert len([p for p in pods(namespace, "big") if not p["metadata"].get("deletionTimestamp")]) == 4

    done = wait_state(namespace, "big", "Complete", timeout=RUN_SECONDS + 60)
    want = RUN_SECONDS * 4 * 4
    got = done["status"]["gpuSeconds"]
    assert abs(got - want) <= 0.05 * want, (got, want)
    assert "wastedGpuSeconds" not in done["status"]
    listed = rows(plugin("sacct", "-n", namespace, "--format", "JobName,Partition,State,ExitCode,NNodes,Restarts,GPUSeconds,GPUHours").stdout)
    # The cancelled job is gone from the cluster, but its accounting record is not.
    assert sorted(r["JobName"] for r in listed) == ["behind", "big"], listed
    assert next(r for r in listed if r["JobName"] == "behind")["State"] == "CANCELLED", listed
    acct = [r for r in listed if r["JobName"] == "big"]
    assert acct[0]["State"] == "COMPLETED" and acct[0]["ExitCode"] == "0:0" and acct[0]["NNodes"] == "4"
    assert acct[0]["Restarts"] == "0" and acct[0]["Partition"] == "gh200"
    assert int(acct[0]["GPUSeconds"]) == got and acct[0]["GPUHours"] == f"{got / 3600:.3f}"
    series = f'trainjob_gpu_seconds_total{{gpu_class="gh200",namespace="{namespace}",outcome="succeeded"}}'
    assert wait_for("the succeeded GPU-seconds", lambda: metric(controller.metrics(), series, 0), timeout=10) == got
    # -S after its end leaves it out; parsable output joins the cells with '|'.
    end = calendar.timegm(time.strptime(done["status"]["completionTime"], "%Y-%m-%dT%H:%M:%SZ"))
    at_end = plugin("sacct", "-n", namespace, "-S", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(end)), "-P", "--format", "JobName,State")
    assert at_end.stdout == "JobName|State\nbig|COMPLETED\n", at_end.stdout
    later = plugin("sacct", "-n", namespace, "-S", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(end + 1)), "-P", "--format", "JobName,State")
    assert later.stdout == "JobName|State\n", later.stdout


def test_deleted_jobs_keep_their_accounting_record_for_sacct_and_the_fair_share(controller, namespace):
    """Accounting records (docs/slurm.md, "Accounting records"): deleting a TrainJob that ran and one that
    runs leaves a record of each in the namespace's ConfigMap trainjob-accounting; sacct
    lists them, the first COMPLETED, the second CANCELLED; after a restart the controller's
    fair share still counts what the deleted jobs used, and once the namespace is deleted
    nothing of it counts."""
    apply(trainjob("ran", nodes=2, gpus=4, run_time="3s"), "-n", namespace)
    done = wait_state(namespace, "ran", "Complete", timeout=60)["status"]
    assert done.get("gpuSeconds", 0) > 0, done
    apply(trainjob("cut", nodes=1, gpus=4, run_time="120s"), "-n", namespace)
    running(namespace, "cut", 1, timeout=60)
    uids = {n: tj(namespace, n)["metadata"]["uid"] for n in ("ran", "cut")}
    kubectl("delete", "trainjob", "ran", "cut", "-n", namespace)

    def records():
        got = kubectl("get", "configmap", "trainjob-accounting", "-n", namespace, "-o", "json", check=False)
        return got.returncode == 0 and json.loads(got.stdout)
    cm = wait_for("the records of the deleted jobs", lambda: (c := records()) and set(uids.values()) <= set(c.get("data", {})) and c, timeout=30)
    assert cm["metadata"]["labels"]["trainjob.flame.dev/accounting"] == "true"
    record = json.loads(cm["data"][uids["ran"]])
    assert record["status"]["gpuSeconds"] == done["gpuSeconds"], record
    assert record["metadata"]["name"] == "ran" and "deletionTimestamp" not in record["metadata"]

    listed = {r["JobID"]: r for r in rows(plugin("sacct", "-n", namespace, "-S", "now-1hours",
                                                 "--format", "JobID,State,GPUSeconds").stdout)}
    assert listed["ran"]["State"] == "COMPLETED" and listed["cut"]["State"] == "CANCELLED", listed
    assert float(listed["ran"]["GPUSeconds"]) == done["gpuSeconds"], listed

    # A restarted controller reads the records again, and its fair share counts them.
    controller.stop()
    controller.start()
    series = f'trainjob_fair_share_usage_gpu_seconds{{namespace="{namespace}"}}'
    apply(trainjob("next", nodes=1, gpus=4, run_time="2s"), "-n", namespace)
    wait_for("the deleted jobs' usage in the namespace's fair share",
             lambda: metric(controller.metrics(), series, 0.0) >= 0.9 * done["gpuSeconds"], timeout=60)
    wait_state(namespace, "next", "Complete", timeout=60)

    # The namespace deleted, with a job of it still running (whose record the API server
    # refuses in a namespace being deleted): none of its usage counts any more, as for
    # kubectl sshare or a new leader (the controller reads the records again every 30 s).
    apply(trainjob("left", nodes=1, gpus=4, run_time="120s"), "-n", namespace)
    running(namespace, "left", 1, timeout=60)
    kubectl("delete", "namespace", namespace, "--wait=false")
    wait_for("the deleted namespace's usage to leave the fair share",
             lambda: metric(controller.metrics(), series, None) is None, timeout=180, interval=2)


def test_gang_restart_wastes_the_failed_attempt(controller, namespace):
    wait_for("the GH200 nodes to be free", gh200_free, timeout=240, interval=1)
    apply(trainjob("twice", nodes=2, run_time="20s"), "-n", namespace)
    first = running(namespace, "twice", 2, attempt=0, timeout=90)
    time.sleep(5)
    kubectl("annotate", "pod", first[0]["metadata"]["name"], "-n", namespace, f"{SIM}fail-exit-code=1")
    done = wait_state(namespace, "twice", "Complete", timeout=120)
    s = done["status"]
    assert s["restartCount"] == 1
    assert {p["metadata"]["labels"][ATTEMPT] for p in pods(namespace, "twice")} == {"1"}
    # The second attempt's 20 s on 2 nodes x 4 GPUs are what was not wasted; the first
    # attempt's 5 s or so before its failure are.
    useful = s["gpuSeconds"] - s["wastedGpuSeconds"]
    assert abs(useful - 160) <= 8, s
    assert 4 * 8 <= s["wastedGpuSeconds"] <= 12 * 8, s
    acct = rows(plugin("sacct", "-n", namespace, "--format", "JobName,State,ExitCode,Restarts,GPUSeconds").stdout)[0]
    assert (acct["State"], acct["ExitCode"], acct["Restarts"], acct["GPUSeconds"]) == ("COMPLETED", "1:0", "1", str(s["gpuSeconds"]))
    text = wait_for("the counts in the metric", lambda: (m := controller.metrics()) and f'namespace="{namespace}",outcome="succeeded"' in m and m, timeout=10)
    labels = f'gpu_class="gh200",namespace="{namespace}"'
    assert metric(text, f"trainjob_gpu_seconds_total{{{labels},outcome=\"wasted\"}}") == s["wastedGpuSeconds"]
    assert metric(text, f"trainjob_gpu_seconds_total{{{labels},outcome=\"succeeded\"}}") == useful


def test_walltime_is_timeout_and_wasted(controller, namespace):
    apply(trainjob("short", nodes=1, gpus=8, runtime="torch-h100", run_time="120s", activeDeadlineSeconds=5), "-n", namespace)
    failed = wait_state(namespace, "short", "Failed", timeout=60)
    assert failed["status"]["reason"] == "DeadlineExceeded"
    row = wait_for("short to be TO once its pod is gone",
                   lambda: (got := rows(plugin("squeue", "-n", namespace, "-t", "TO").stdout)) and got[0],
                   timeout=60)
    assert (row["JOBID"], row["ST"], row["PARTITION"]) == ("short", "TO", "h100"), row
    acct = rows(plugin("sacct", "-n", namespace, "--format", "JobName,State,GPUSeconds,WastedGPUHours,GPUHours").stdout)[0]
    assert acct["State"] == "TIMEOUT"
    assert int(acct["GPUSeconds"]) > 0 and acct["WastedGPUHours"] == acct["GPUHours"], acct
    status = tj(namespace, "short")["status"]
    assert status["wastedGpuSeconds"] == status["gpuSeconds"] > 0, status


@pytest.mark.parametrize("args,message", [
    (["squeue", "-t", "XX"], "kubectl squeue: -t: 'XX' is not a job state"),
    (["squeue", "extra"], "kubectl squeue: takes no operands ('extra')"),
    (["sacct", "--format", "JobName,Nope"], "kubectl sacct: --format: 'Nope' is not a field"),
    (["sacct", "-S", "tomorrowish"], "kubectl sacct: -S: 'tomorrowish' is not a time"),
    (["scancel"], "kubectl scancel: name the TrainJobs to cancel, or give --state"),
    (["scancel", "--state", "WAITING", "x"], "kubectl scancel: --state: 'WAITING' is not a job state"),
])
def test_bad_input_is_one_line(args, message):
    out = plugin(*args, check=False)
    assert out.returncode == 2, out
    assert out.stderr.count("\n") == 1 and out.stderr.startswith(message), out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("name", ["squeue", "scancel", "sacct"])
def test_help_and_version(name):
    help_ = plugin(name, "--help")
    assert help_.stdout.startswith(f"Usage: kubectl {name} ") and "--kubeconfig" in help_.stdout
    version = plugin(name, "--version")
    assert version.stdout.startswith(f"kubectl-{name} (trainjob-controller) ")


def test_missing_job_fails_clearly(namespace):
    out = plugin("scancel", "-n", namespace, "nosuch", check=False)
    assert out.returncode == 1
    assert out.stderr == f"kubectl scancel: no TrainJob nosuch in namespace {namespace}\n"
