"""Small helpers the e2e tests use to drive the real cluster through the real kubectl."""

import calendar
import json
import os
import re
import signal
import socket
import subprocess
import time
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kubectl(*args, input=None, check=True, timeout=120):
    """Runs kubectl against the test cluster (KUBECONFIG is set by the test runner).

    Returns the CompletedProcess; raises AssertionError with kubectl's stderr when check is
    set and kubectl fails, so a failing test shows what the API server said."""
    proc = subprocess.run(
        ["kubectl", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}"
        )
    return proc


def kubectl_json(*args, **kw):
    """kubectl ... -o json, decoded."""
    return json.loads(kubectl(*args, "-o", "json", **kw).stdout)


def apply(manifest, *extra, check=True):
    """kubectl apply -f - of a YAML or JSON string (or of a dict, sent as JSON)."""
    if not isinstance(manifest, str):
        manifest = json.dumps(manifest)
    return kubectl("apply", "-f", "-", *extra, input=manifest, check=check)


def wait_for(what, predicate, timeout=60.0, interval=0.5):
    """Polls predicate() until it returns a truthy value, which is returned.

    A KeyError counts as not yet: an object the controller has not written a status to yet
    has no "status" (a TrainJob just applied), and a field comes when it is written. On
    timeout raises AssertionError naming what was awaited and the last value seen (or the
    last KeyError, so that a misspelt key still fails, and says which)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = predicate()
        except KeyError as e:
            last = f"KeyError: {e}"
        else:
            if last:
                return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}")
        time.sleep(interval)


def ts(rfc3339):
    """Unix seconds of a time as the API server writes it (2026-12-01T12:00:00Z)."""
    return calendar.timegm(time.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ"))


def condition(obj, ctype):
    """The condition of type ctype in obj['status']['conditions'], or None."""
    for c in obj.get("status", {}).get("conditions", []) or []:
        if c.get("type") == ctype:
            return c
    return None


# ---------------------------------------------------------------------------------------
# TrainJobs and their pods

SIM = "sim.trainjob.flame.dev/"
RANK = "trainjob.flame.dev/rank"
ATTEMPT = "trainjob.flame.dev/attempt"


def trainjob(name, nodes=1, gpus=4, runtime="torch-gh200", run_time="3s", pod_annotations=None,
             annotations=None, **spec):
    """A TrainJob whose pods run for run_time in the simulated cluster."""
    ann = {SIM + "run-time": run_time}
    ann.update(pod_annotations or {})
    body = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "runtimeRef": {"name": runtime},
            "trainer": {
                "numNodes": nodes,
                "command": ["torchrun", "/workspace/train.py"],
                "resourcesPerNode": {
                    "requests": {"nvidia.com/gpu": gpus, "cpu": "4"},
                    "limits": {"nvidia.com/gpu": gpus},
                },
            },
            "podTemplateOverrides": [{"targetJobs": [{"name": "node"}], "metadata": {"annotations": ann}}],
        },
    }
    body["spec"].update(spec)
    return body


def kubeflow_runtime_file(kubeflow_module, name):
    """The manifest of one of Kubeflow's shipped runtimes (deepspeed-distributed, ...) in its
    Go module (the kubeflow_module fixture), applied unchanged."""
    return os.path.join(kubeflow_module, "manifests", "base", "runtimes", name.replace("-", "_") + ".yaml")


def tj(namespace, name):
    return kubectl_json("get", "trainjob", name, "-n", namespace)


# terminationGracePeriodSeconds of a pod that does not set it: at its deadline a job's pods
# are told to stop and may hold their nodes that much longer, so a reservation counts it.
GRACE = 30

FAILED_ATTEMPT = "trainjob.flame.dev/failed-attempt"


def pods(namespace, name):
    """The job's pods, without those of a replaced attempt kept for their logs."""
    return kubectl_json("get", "pods", "-n", namespace, "-l",
                        f"trainer.kubeflow.org/trainjob-name={name},!{FAILED_ATTEMPT}")["items"]


def kept_pods(namespace, name):
    """The pods of a replaced attempt kept for their logs."""
    return kubectl_json("get", "pods", "-n", namespace, "-l",
                        f"trainer.kubeflow.org/trainjob-name={name},{FAILED_ATTEMPT}")["items"]


def state(namespace, name):
    return tj(namespace, name).get("status", {}).get("state")


def wait_state(namespace, name, want, timeout=90):
    return wait_for(f"TrainJob {name} to be {want}", lambda: (j := tj(namespace, name)).get("status", {}).get("state") == want and j, timeout=timeout)


def running(namespace, name, n, attempt=None, timeout=120):
    """The n pods of the job once all run (and are of attempt, if given), by rank."""

    def ok():
        p = [x for x in pods(namespace, name) if x["status"].get("phase") == "Running" and not x["metadata"].get("deletionTimestamp")]
        if attempt is not None:
            p = [x for x in p if x["metadata"]["labels"][ATTEMPT] == str(attempt)]
        return len(p) == n and sorted(p, key=lambda x: int(x["metadata"]["labels"][RANK]))

    return wait_for(f"{n} running pods of {name}", ok, timeout=timeout)


def by_rank(pod_list, rank):
    return next(p for p in pod_list if p["metadata"]["labels"][RANK] == str(rank))


def events(namespace, name, reason):
    return kubectl_json("get", "events", "-n", namespace, "--field-selector", f"involvedObject.name={name},reason={reason}")["items"]


def table(out):
    """kubectl get's table as a list of {column: value} (columns may be empty). Columns are
    at least 3 spaces apart, so a header of two words ("EXPECTED START") is one column."""
    header, *rows = out.splitlines()
    cols = list(re.finditer(r"\S+(?: \S+)*", header))
    names = [c.group() for c in cols]
    starts = [c.start() for c in cols]
    ends = starts[1:] + [None]
    return [{n: row[a:b].strip() for n, a, b in zip(names, starts, ends)} for row in rows]


_NO_DEFAULT = object()


def metric(text, series, default=_NO_DEFAULT):
    """The value of one series (name and labels, as /metrics prints them) in a scrape; when
    it is absent, default, or AssertionError without one."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    if default is not _NO_DEFAULT:
        return default
    raise AssertionError(f"no series {series}")


_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def metric_sum(text, name, **labels):
    """The sum of every series of name in a scrape whose labels include the given ones; 0
    when none does. A total across the labels a test does not pin (a job's GPU class)."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        head, value = line.rsplit(" ", 1)
        have = dict(_LABEL.findall(head[len(name):]))
        if all(have.get(k) == v for k, v in labels.items()):
            total += float(value)
    return total


# ---------------------------------------------------------------------------------------
# Nodes

NOT_READY_LABEL = "node-not-ready.stage.kwok.x-k8s.io"


def delete_node(node):
    """Deletes a node as if its machine were gone; returns what restore_node needs to bring
    it back as cluster.sh made it: its labels (not a test's NotReady label), annotations and
    GPU taint, and the capacity and node info a kubelet would report again. The node
    lifecycle controller's taints and the conditions are left for the simulated kubelet."""
    saved = kubectl_json("get", "node", node)
    meta, st = saved["metadata"], saved.get("status", {})
    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node, "labels": {k: v for k, v in meta.get("labels", {}).items() if k != NOT_READY_LABEL},
                     "annotations": meta.get("annotations", {})},
        "spec": {"taints": [t for t in saved["spec"].get("taints") or [] if not t["key"].startswith("node.kubernetes.io/")]},
        "status": {**{k: st[k] for k in ("allocatable", "capacity", "nodeInfo") if k in st}, "phase": "Running"},
    }
    kubectl("delete", "node", node)
    return body


def restore_node(body):
    """Creates a node delete_node removed again, and waits until it is Ready."""
    name = body["metadata"]["name"]
    kubectl("create", "-f", "-", input=json.dumps(body), check=False)
    wait_for(f"{name} to be Ready again", lambda: node_ready(name))


def node_ready(node):
    got = kubectl("get", "node", node, "-o", "json", check=False)
    if got.returncode != 0:
        return False
    return any(c["type"] == "Ready" and c["status"] == "True" for c in json.loads(got.stdout).get("status", {}).get("conditions") or [])


# ---------------------------------------------------------------------------------------
# Watches


def decode_stream(text):
    """The JSON objects kubectl --watch -o json printed one after another (a half-written
    last object is left out)."""
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError:
            return out
        out.append(obj)


class Watch:
    """kubectl get KIND --watch in the background: every version of the namespace's objects
    of that kind, in the API server's order."""

    def __init__(self, namespace, kind="pods"):
        self.path = os.path.join(REPO, "build", f"e2e-watch-{uuid.uuid4().hex[:6]}.json")
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.out = open(self.path, "w")
        self.proc = subprocess.Popen(
            ["kubectl", "get", kind, "-n", namespace, "--watch", "--output-watch-events", "-o", "json"],
            stdout=self.out,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1)  # the initial list

    def events(self):
        with open(self.path) as f:
            return decode_stream(f.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        self.out.close()


class PodWatch(Watch):
    """A Watch of pods, to see how they were deleted."""

    def __init__(self, namespace):
        super().__init__(namespace, "pods")

    def deletion_grace(self, pod_name):
        """The grace period of the first deletion of the pod, or None. (KWOK then removes a
        gracefully deleted pod with a forced delete of its own, so later events say 0.)"""
        for e in self.events():
            o = e["object"]
            if o["metadata"]["name"] == pod_name and "deletionGracePeriodSeconds" in o["metadata"]:
                return o["metadata"]["deletionGracePeriodSeconds"]
        return None


def cluster_dir():
    """The state folder of the local cluster TJC_CLUSTER names (kwokctl's binary runtime)."""
    cache = os.environ.get("TJC_CACHE", os.path.expanduser("~/.cache/trainjob-controller"))
    return os.path.join(os.environ.get("KWOK_WORKDIR", os.path.join(cache, "kwok")), "clusters",
                        os.environ.get("TJC_CLUSTER", "trainjob"))


def gone(pid):
    """Whether process pid has exited, every thread of it: the leader of a multi-threaded
    process shows as a zombie while its other threads still exit and hold its sockets."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return True
    for tid in tids:
        # A thread that exits between the listing and the read is gone: its stat file vanishes
        # (FileNotFoundError) or was opened and reads as ESRCH (ProcessLookupError).
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if state not in ("Z", "X"):
            return False
    return True


def port_free(port):
    """Whether a server could listen on port now (with SO_REUSEADDR, as Go's listeners do)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
            return True
        except OSError:
            return False


def restart_apiserver():
    """Stops the cluster's kube-apiserver and starts it again with the same command line (the
    binary runtime of kwokctl keeps its pid in pids/), then waits until it is ready."""
    pidfile = os.path.join(cluster_dir(), "pids", "kube-apiserver.pid")
    pid = int(open(pidfile).read().strip())
    argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[:-1]
    cwd = os.readlink(f"/proc/{pid}/cwd")
    port = next(int(a.split(b"=", 1)[1]) for a in argv if a.startswith(b"--secure-port="))
    # Killed, as by a crash or an OOM kill: a graceful stop drains watches for a minute.
    os.kill(pid, signal.SIGKILL)
    wait_for("the API server to stop", lambda: gone(pid), timeout=60)
    wait_for(f"port {port} to be free", lambda: port_free(port), timeout=60)
    logpath = os.path.join(cluster_dir(), "logs", "kube-apiserver.log")
    start = os.path.getsize(logpath)
    with open(logpath, "ab") as log:
        proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=log, start_new_session=True)
    with open(pidfile, "w") as f:
        f.write(str(proc.pid))

    def ready():
        if proc.poll() is not None:
            return f"exited with {proc.returncode}"
        try:
            r = kubectl("get", "--raw", "/readyz", check=False, timeout=10)
        except subprocess.TimeoutExpired:
            return None  # a loaded machine: still starting
        return True if r.returncode == 0 else None

    try:
        state = wait_for("the API server to be ready", ready, timeout=120)
    except AssertionError as e:
        state = str(e)
    if state is not True:
        with open(logpath, "rb") as f:
            f.seek(start)
            tail = f.read().decode(errors="replace").splitlines()[-40:]
        raise AssertionError(f"the restarted API server: {state}\n" + "\n".join(tail))


# The GH200 nodes of the local cluster, which the queue's scenarios fill.
GH200_PRODUCT = "NVIDIA-GH200-480GB"
GH200_SELECTOR = f"nvidia.com/gpu.product={GH200_PRODUCT}"
TERMINAL = ("Succeeded", "Failed")


def takes_pods(node):
    """Ready, not cordoned, no taint but the GPU nodes' own, not made NotReady by a test."""
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions") or [])
    taints = [t for t in node["spec"].get("taints") or [] if t["key"] != "nvidia.com/gpu"]
    return ready and not node["spec"].get("unschedulable") and not taints and NOT_READY_LABEL not in node["metadata"]["labels"]


def gh200_busy():
    """What keeps the GH200 nodes from being free: their non-terminal pods (of any namespace,
    Terminating ones too), pods that wait for a GPU, TrainJobs waiting in a queue, and the
    unfinished TrainJobs of a namespace being deleted (a restarted one has no pod and is not
    Queued, and a controller still admits it until it is gone: its creates are refused)."""
    nodes = {n["metadata"]["name"]: n for n in kubectl_json("get", "nodes", "-l", GH200_SELECTOR)["items"]}
    busy = [f"node {name} does not take pods" for name, n in nodes.items() if not takes_pods(n)]
    for p in kubectl_json("get", "pods", "-A")["items"]:
        if p["status"].get("phase") in TERMINAL:
            continue
        node = p["spec"].get("nodeName")
        wants_gpu = any("nvidia.com/gpu" in (c.get("resources", {}).get("requests") or {}) for c in p["spec"]["containers"])
        if node in nodes or (not node and wants_gpu):
            busy.append(f"pod {p['metadata']['namespace']}/{p['metadata']['name']} on {node or '(unbound)'}")
    going = {n["metadata"]["name"] for n in kubectl_json("get", "namespaces")["items"] if n.get("status", {}).get("phase") == "Terminating"}
    for j in kubectl_json("get", "trainjobs", "-A")["items"]:
        state, namespace = j.get("status", {}).get("state"), j["metadata"]["namespace"]
        name = f"TrainJob {namespace}/{j['metadata']['name']}"
        if state == "Queued":
            busy.append(f"{name} is queued")
        elif namespace in going and state not in ("Complete", "Failed"):
            busy.append(f"{name} is {state or 'new'} in a namespace being deleted")
    return sorted(nodes), busy


def other_namespace():
    """A namespace of the test's own beside the fixture's, once it can take pods."""
    name = "e2e-" + uuid.uuid4().hex[:8]
    kubectl("create", "namespace", name)
    wait_for(f"the default ServiceAccount of {name}",
             lambda: kubectl("get", "serviceaccount", "default", "-n", name, check=False).returncode == 0, timeout=60)
    return name


def drop_namespaces(*names):
    for name in names:
        kubectl("delete", "trainjobs", "--all", "-n", name, "--timeout=60s", check=False)
        kubectl("delete", "namespace", name, "--wait=false", check=False)


def undeploy():
    """Removes what deploy/base applied, except the CRDs other suites use: its cluster-wide
    RBAC and its namespace (with the Deployment's pods and the Lease)."""
    kubectl("delete", "clusterrolebinding,clusterrole", "trainjob-controller", "--ignore-not-found")
    kubectl("delete", "clusterrole", "trainjob-controller-metrics-reader", "--ignore-not-found")
    kubectl("delete", "namespace", "trainjob-system", "--ignore-not-found", "--timeout=90s")
