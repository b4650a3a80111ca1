"""kubectl sbatch against the real control plane: run as a kubectl plugin (the build directory
on PATH, as docs/slurm.md tells a user to put the installed one), a Slurm batch script becomes
a TrainJob that runs on the GPU nodes with the SLURM_* variables, and its time limit ends
it (DESIGN.md section 3, cli/)."""

import os
import subprocess

from kube import REPO, SIM, condition, kubectl, kubectl_json, pods, tj, wait_for, wait_state

BUILD = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))

FOUR_BY_FOUR = """#!/bin/bash
#SBATCH --job-name=llama-4x4
#SBATCH --partition=gh200
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=16
#SBATCH --time=00:10:00
#SBATCH --output=logs/%x-%j.out

srun torchrun --nnodes="$SLURM_NNODES" --nproc-per-node=4 --node-rank="$SLURM_NODEID" train.py
"""

LONG = """#!/bin/bash
#SBATCH -J too-long
#SBATCH -N 2
#SBATCH --gres=gpu:gh200:4
srun python train.py --epochs 1000
"""


def sbatch(*args, env=None, check=True):
    """The real `kubectl sbatch`: kubectl finds kubectl-sbatch on PATH."""
    e = dict(os.environ if env is None else env)
    e["PATH"] = BUILD + os.pathsep + e.get("PATH", "")
    proc = subprocess.run(["kubectl", "sbatch", *args], capture_output=True, text=True, env=e, timeout=60)
    if check:
        assert proc.returncode == 0, f"kubectl sbatch {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
    return proc


def script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def value_from(env, name):
    return next(e for e in env if e["name"] == name).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")


def test_four_node_script_runs_to_complete_on_four_gh200_nodes(controller, namespace, tmp_path):
    path = script(tmp_path, "pretrain.sh", FOUR_BY_FOUR)
    out = sbatch("-n", namespace, path)
    assert out.stdout == "Submitted batch job llama-4x4\n"
    assert out.stderr == ("kubectl sbatch: note: --output/--error: no file is written; each node's output "
                          "is in kubectl logs of its pod\n")
    job = tj(namespace, "llama-4x4")
    ann = job["metadata"]["annotations"]
    # Who submitted it, as the API server names the caller (kubectl auth whoami).
    whoami = kubectl_json("auth", "whoami")["status"]["userInfo"]["username"]
    assert ann["trainjob.flame.dev/submitted-by"] == whoami
    assert ann["trainjob.flame.dev/partition"] == "gh200"
    assert job["spec"]["runtimeRef"]["name"] == "torch-gh200"
    assert job["spec"]["activeDeadlineSeconds"] == 600
    assert job["spec"]["trainer"]["numNodes"] == 4

    running = wait_for("4 running pods", lambda: len(p := [x for x in pods(namespace, "llama-4x4")
                                                          if x["status"].get("phase") == "Running"]) == 4 and p,
                       timeout=90)
    nodes = set()
    hosts = ",".join(f"llama-4x4-node-0-{r}.llama-4x4" for r in range(4))
    for pod in running:
        rank = pod["metadata"]["labels"]["trainjob.flame.dev/rank"]
        node = kubectl_json("get", "node", pod["spec"]["nodeName"])
        assert node["metadata"]["labels"]["nvidia.com/gpu.product"] == "NVIDIA-GH200-480GB"
        nodes.add(node["metadata"]["name"])
        c = pod["spec"]["containers"][0]
        assert c["resources"]["limits"]["nvidia.com/gpu"] == "4"
        assert c["resources"]["requests"]["cpu"] == "16"
        # The script, intact, is the container's command on every node.
        assert c["command"][:2] == ["/bin/bash", "-c"]
        assert c["command"][2].endswith(FOUR_BY_FOUR)
        assert c["args"] == ["pretrain.sh"]
        env = {e["name"]: e.get("value") for e in c["env"]}
        assert env["SLURM_JOB_ID"] == "llama-4x4"
        assert env["SLURM_JOB_NAME"] == "llama-4x4"
        assert env["SLURM_JOB_NUM_NODES"] == env["SLURM_NNODES"] == "4"
        assert env["SLURM_NTASKS"] == "4"
        assert env["SLURM_NTASKS_PER_NODE"] == "1"
        assert env["SLURM_GPUS_ON_NODE"] == "4"
        assert env["SLURM_CPUS_PER_TASK"] == "16"
        assert env["SLURM_JOB_PARTITION"] == "gh200"
        assert env["SLURM_JOB_NODELIST"] == hosts
        # Each node reads its own rank, from the annotation the controller sets per pod.
        index = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        assert value_from(c["env"], "SLURM_NODEID") == index
        assert value_from(c["env"], "SLURM_PROCID") == index
        assert pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == rank
        # Beside the torchrun wiring of the controller.
        assert env["PET_NNODES"] == "4" and env["PET_NODE_RANK"] == rank
    assert len(nodes) == 4, "one pod per node"
    done = wait_state(namespace, "llama-4x4", "Complete", timeout=90)
    assert condition(done, "Complete")["status"] == "True"

    # A second submission of the same name is refused in one line, and changes nothing.
    again = sbatch("-n", namespace, path, check=False)
    assert again.returncode == 1
    assert again.stderr.splitlines()[-1] + "\n" == (f"kubectl sbatch: a TrainJob llama-4x4 already exists in namespace {namespace}: "
                            "cancel it (kubectl scancel llama-4x4) or give another -J\n")


def test_time_limit_on_the_command_line_ends_the_job_deadline_exceeded(controller, namespace, tmp_path):
    path = script(tmp_path, "long.sh", LONG)
    assert sbatch("-n", namespace, "--time=00:00:30", path).stdout == "Submitted batch job too-long\n"
    assert tj(namespace, "too-long")["spec"]["activeDeadlineSeconds"] == 30
    running = wait_for("2 running pods", lambda: len(p := [x for x in pods(namespace, "too-long")
                                                          if x["status"].get("phase") == "Running"]) == 2 and p,
                       timeout=90)
    # The simulated training would run for 10 minutes.
    for pod in running:
        kubectl("annotate", "pod", pod["metadata"]["name"], "-n", namespace, SIM + "run-time=10m", "--overwrite")
    job = wait_state(namespace, "too-long", "Failed", timeout=90)
    c = condition(job, "Failed")
    assert c["status"] == "True" and c["reason"] == "DeadlineExceeded"


def test_plugin_finds_the_cluster_as_kubectl_does_and_dry_run_creates_nothing(controller, namespace, tmp_path):
    path = script(tmp_path, "long.sh", LONG)
    kubeconfig = os.environ["KUBECONFIG"]
    context = kubectl("config", "current-context").stdout.strip()
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env["HOME"] = str(tmp_path)  # no ~/.kube/config to fall back on
    # Without --kubeconfig, $KUBECONFIG or ~/.kube/config there is no cluster: one line.
    lost = sbatch("-n", namespace, path, env=env, check=False)
    assert lost.returncode == 1 and lost.stderr.count("\n") == 1 and lost.stderr.startswith("kubectl sbatch: ")
    # A context that does not exist: one line naming it.
    bad = sbatch("--kubeconfig", kubeconfig, "--context", "nowhere", "-n", namespace, path, env=env, check=False)
    assert bad.returncode == 1
    assert bad.stderr == f'kubectl sbatch: {kubeconfig}: context "nowhere" not found\n'
    # --dry-run prints the YAML and creates nothing.
    dry = sbatch("--kubeconfig", kubeconfig, "--context", context, "-n", namespace, "--dry-run", path, env=env)
    assert "kind: TrainJob\n" in dry.stdout and "  name: too-long\n" in dry.stdout
    assert kubectl_json("get", "trainjobs", "-n", namespace)["items"] == []
    # The same flags reach the cluster for real.
    real = sbatch("--kubeconfig", kubeconfig, "--context", context, "-n", namespace, "--parsable",
                  "-J", "found-it", path, env=env)
    assert real.stdout == "found-it\n"
    assert tj(namespace, "found-it")["metadata"]["annotations"]["trainjob.flame.dev/partition"] == "gh200"
    kubectl("delete", "trainjob", "found-it", "-n", namespace)


def test_help_version_and_bad_input(tmp_path):
    assert sbatch("--help").stdout.startswith("Usage: kubectl sbatch [OPTION]... SCRIPT [ARG]...\n")
    assert sbatch("--version").stdout.startswith("kubectl-sbatch (trainjob-controller) ")
    unknown = sbatch("--frobnicate", "x.sh", check=False)
    assert unknown.returncode == 2
    assert unknown.stderr == "kubectl sbatch: unknown option --frobnicate (see --help)\n"
    path = script(tmp_path, "resv.sh", "#!/bin/bash\n#SBATCH -N 1\n#SBATCH --reservation=maint\necho\n")
    refused = sbatch("--dry-run", path, check=False)
    assert refused.returncode == 1
    assert refused.stderr == (f"kubectl sbatch: {path}: line 3: #SBATCH --reservation=maint: not supported "
                              "by kubectl sbatch (see kubectl sbatch --help)\n")
