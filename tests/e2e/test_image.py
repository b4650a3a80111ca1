"""The controller's image (deploy/Containerfile), built with podman (deploy/image.sh) and run
against the local cluster as a pod would run it: configured in-cluster (the ServiceAccount's
token, CA and namespace at /var/run/secrets/kubernetes.io/serviceaccount, the API server in
KUBERNETES_SERVICE_HOST/PORT, no kubeconfig), the config file where the ConfigMap is mounted,
a read-only root file system and the image's own user, 65532.

The container shares the host's network, where the local API server listens on 127.0.0.1
(tests/e2e/test_in_cluster.py runs the Deployment's own pods, on the real nodes). The
first build makes a debian:bookworm image from Debian's packages and the build stage's
packages (several minutes); later builds reuse the cached layers under
~/.cache/trainjob-controller/containers and redo only what the changed sources invalidate."""

import base64
import io
import json
import os
import subprocess
import tarfile
import urllib.parse
import urllib.request
import uuid

import pytest

from conftest import free_port
from kube import REPO, apply, kubectl, kubectl_json, pods, trainjob, undeploy, wait_for, wait_state

IMAGE_SH = os.path.join(REPO, "deploy", "image.sh")
NS = "trainjob-system"
SA = "trainjob-controller"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
ARCH = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                      check=True).stdout.strip()
MiB = 1 << 20
# ELF e_machine of each architecture the Deployment may run on.
ELF_MACHINE = {"amd64": 62, "arm64": 183}


def image_sh(*args, timeout=120, check=True):
    proc = subprocess.run([IMAGE_SH, *args], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"image.sh {' '.join(args)} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def build(platform):
    """Builds the image for platform; returns its tag. The build's output goes to a log file
    under build/, whose end a failure shows."""
    arch = platform.split("/")[1]
    log = os.path.join(REPO, "build", f"e2e-image-build-{arch}.log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        rc = subprocess.run([IMAGE_SH, "build", platform], stdout=f, stderr=subprocess.STDOUT,
                            timeout=3600).returncode
    if rc != 0:
        with open(log) as f:
            raise AssertionError(f"building the {arch} image failed ({rc}); {log}:\n{f.read()[-4000:]}")
    return f"localhost/trainjob-controller:{arch}"


@pytest.fixture(scope="module")
def image():
    return build(f"linux/{ARCH}")


def image_config(tag):
    return json.loads(image_sh("podman", "image", "inspect", tag).stdout)[0]


def read_from_image(tag, path):
    """The bytes of one file of the image, copied out of a container that never starts."""
    name = f"tjc-read-{uuid.uuid4().hex[:8]}"
    image_sh("podman", "create", "--name", name, tag)
    try:
        out = subprocess.run([IMAGE_SH, "podman", "cp", f"{name}:{path}", "-"], capture_output=True,
                             timeout=120, check=True).stdout
    finally:
        image_sh("podman", "rm", "-f", name, check=False)
    # podman cp to "-" writes a tar stream of the one file.
    with tarfile.open(fileobj=io.BytesIO(out)) as t:
        member = t.getmembers()[0]
        return t.extractfile(member).read()


def elf_machine(data):
    assert data[:4] == b"\x7fELF", "not an ELF file"
    return int.from_bytes(data[18:20], "little")


def test_image_is_small_and_runs_as_65532(image, tmp_path):
    config = image_config(image)
    assert config["Config"]["User"] == "65532:65532"
    assert config["Config"]["Entrypoint"] == ["/usr/bin/trainjob-controller"]
    assert config["Architecture"] == ARCH
    size = int(image_sh("save", ARCH, str(tmp_path / "image.oci.tar.gz"), timeout=600).stdout.split()[-1])
    print(f"image {image}: {size / MiB:.1f} MiB as a gzipped OCI archive")
    assert size < 40 * MiB, f"{size / MiB:.1f} MiB compressed"
    assert elf_machine(read_from_image(image, "/usr/bin/trainjob-controller")) == ELF_MACHINE[ARCH]


def test_arm64_and_amd64_images_build_on_this_machine_without_emulation():
    """The other architecture's image from the same Containerfile: its build stage runs on
    this machine and cross-compiles, so no emulator is needed (none is registered here
    unless binfmt_misc lists one)."""
    other = {"amd64": "arm64", "arm64": "amd64"}[ARCH]
    tag = build(f"linux/{other}")
    assert image_config(tag)["Architecture"] == other
    assert elf_machine(read_from_image(tag, "/usr/bin/trainjob-controller")) == ELF_MACHINE[other]
    # The libraries are the target's too (Debian's packages of that architecture).
    libc = {"arm64": "/lib/aarch64-linux-gnu/libc.so.6", "amd64": "/lib/x86_64-linux-gnu/libc.so.6"}[other]
    assert elf_machine(read_from_image(tag, libc)) == ELF_MACHINE[other]


@pytest.fixture(scope="module")
def deployed(crds):
    """deploy/base applied for its namespace, ServiceAccount and RBAC; removed afterwards,
    except the CRDs other suites use."""
    kubectl("apply", "-k", os.path.join(REPO, "deploy", "base"))
    yield
    undeploy()


def service_account_dir(path):
    """What the kubelet mounts for the pod's ServiceAccount: a token, the cluster's CA and
    the pod's namespace, readable by the container's user."""
    admin = kubectl_json("config", "view", "--raw", "--minify", "--flatten")
    cluster = admin["clusters"][0]["cluster"]
    path.mkdir()
    (path / "token").write_text(kubectl("create", "token", SA, "-n", NS, "--duration", "1h").stdout.strip())
    (path / "ca.crt").write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    (path / "namespace").write_text(NS)
    for f in path.iterdir():
        f.chmod(0o644)
    path.chmod(0o755)
    return str(path), urllib.parse.urlsplit(cluster["server"])


def ready(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def container_state(name):
    return json.loads(image_sh("podman", "inspect", name).stdout)[0]["State"]


def test_image_runs_a_trainjob_in_cluster(image, deployed, session_controller_aside, namespace, tmp_path):
    sa_dir, server = service_account_dir(tmp_path / "serviceaccount")
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        (config_dir / "config.yaml").write_text(f.read())
    config_dir.chmod(0o755)
    (config_dir / "config.yaml").chmod(0o644)
    metrics, probes = free_port(), free_port()
    name = f"tjc-e2e-{uuid.uuid4().hex[:8]}"
    # The Deployment's arguments, on free ports of the host's loopback.
    image_sh("podman", "run", "-d", "--name", name, "--network", "host", "--read-only",
             "--cap-drop", "all", "--security-opt", "no-new-privileges",
             "-e", f"KUBERNETES_SERVICE_HOST={server.hostname}",
             "-e", f"KUBERNETES_SERVICE_PORT={server.port}",
             "-v", f"{sa_dir}:{SA_DIR}:ro", "-v", f"{config_dir}:/etc/trainjob-controller:ro",
             image, "--config=/etc/trainjob-controller/config.yaml", "--leader-elect",
             f"--metrics-bind-address=127.0.0.1:{metrics}",
             f"--health-probe-bind-address=127.0.0.1:{probes}")
    try:
        def logs():
            out = image_sh("podman", "logs", name, check=False)
            return out.stdout + out.stderr

        wait_for("the container's controller to be ready",
                 lambda: ready(probes) or (not container_state(name)["Running"] and
                                           pytest.fail(f"the container exited:\n{logs()}")),
                 timeout=60)
        pid = container_state(name)["Pid"]
        with open(f"/proc/{pid}/status") as f:
            uids = next(l for l in f if l.startswith("Uid:")).split()[1:]
        assert uids == ["65532"] * 4, uids
        with open(f"/proc/{pid}/mountinfo") as f:
            root = next(l.split() for l in f if l.split()[4] == "/")
        assert "ro" in root[5].split(","), root
        started = [json.loads(l) for l in logs().splitlines() if '"using cluster"' in l]
        assert started and started[0].get("from") == "in-cluster", logs()
        # The namespace file is read: the Lease goes to the pod's namespace with no flag.
        wait_for("the Lease in the ServiceAccount's namespace to name a holder",
                 lambda: kubectl("get", "lease", SA, "-n", NS, "-o", "jsonpath={.spec.holderIdentity}",
                                 check=False).stdout)

        apply(trainjob("from-image", nodes=2, gpus=4, run_time="3s"), "-n", namespace)
        done = wait_state(namespace, "from-image", "Complete", timeout=120)
        # jobsStatus counts the replicated Job "node" as one, as JobSet's status does.
        assert done["status"]["jobsStatus"][0]["succeeded"] == 1
        assert len([p for p in pods(namespace, "from-image") if p["status"].get("phase") == "Succeeded"]) == 2

        image_sh("podman", "stop", "-t", "30", name, timeout=60)
        state = container_state(name)
        assert state["ExitCode"] == 0, f"exit code {state['ExitCode']} on SIGTERM:\n{logs()}"
        refused = [l for l in logs().lower().splitlines()
                   if ("forbidden" in l or " 403" in l) and "being terminated" not in l]
        assert not refused, refused[:3]
    finally:
        image_sh("podman", "rm", "-f", "-t", "0", name, check=False)
