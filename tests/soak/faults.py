"""What the soak does to the cluster: the controller replicas it runs (and kills), and the
faults, each a method of Faults that logs what it did and to which jobs."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.request

from conftest import free_port
from kube import NOT_READY_LABEL, REPO, delete_node, kubectl, kubectl_json, metric_sum
from test_informers import CLUSTER_DIR, restart_apiserver
from test_leader_election import identity
from throttle import throttle_off, throttle_on

LEASE = ("--leader-elect-lease-duration=8s", "--leader-elect-renew-deadline=6s",
         "--leader-elect-retry-period=1s")


# The controller's shutdown grace (its default; the log's "grace_ms"), after which it exits 1
# saying so.
SHUTDOWN_GRACE_S = 30
GRACE_ENDED = "shutdown did not finish within the grace period"
# The namespace of the pods of no TrainJob that the foreign_pod fault runs beside the jobs.
FOREIGN = "soak-foreign"
# The label of a GPU node's block (deploy/local/cluster.sh: 4 nodes, gh200-block-0 is
# gh200-0 to gh200-3), which some of the soak's jobs select and the relabel fault takes off.
BLOCK = "topology.flame.dev/block"


def grace_ended(log_path):
    try:
        with open(log_path, errors="replace") as f:
            return GRACE_ENDED in f.read()
    except OSError:
        return False


class Replica:
    """One controller process with --leader-elect, started again by the soak whenever it
    ends, as the kubelet restarts a container; each start logs to a file of its own."""

    def __init__(self, name, config, kubeconfig, namespace, logdir):
        build = os.environ.get("TJC_BUILD_DIR", os.path.join(REPO, "build", "release"))
        self.binary = os.path.join(build, "trainjob-controller")
        self.name, self.config, self.namespace, self.logdir = name, config, namespace, logdir
        self.kubeconfig = kubeconfig
        self.proc = None
        self.starts = 0
        self.log_path = None
        self.stopping = False  # set while the soak itself stops or restarts it
        self.started_at = 0.0
        self.backoff = 0  # seconds before the next restart after a short run

    def start(self):
        self.metrics_port, self.probe_port = free_port(), free_port()
        self.starts += 1
        self.log_path = os.path.join(self.logdir, f"controller-{self.name}-{self.starts}.log")
        log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [self.binary, "--kubeconfig", self.kubeconfig, "--config", self.config,
             "--metrics-bind-address", f"127.0.0.1:{self.metrics_port}",
             "--health-probe-bind-address", f"127.0.0.1:{self.probe_port}",
             "--leader-elect", "--leader-election-id=trainjob-soak",
             f"--leader-election-namespace={self.namespace}", *LEASE],
            stdout=log, stderr=log)
        log.close()
        self.started_at = time.monotonic()
        self.stopping = False

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def ready(self):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.probe_port}/readyz", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def identity(self):
        try:
            return identity(self)
        except AssertionError:
            return None

    def kill(self):
        self.stopping = True
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def terminate(self, timeout=30):
        """SIGTERM; returns the exit status, or None if it did not exit in time (then it is
        killed)."""
        self.stopping = True
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
            return r.read().decode()

    def jobs_by_state(self, states):
        return jobs_by_state(self.metrics(), states)


def jobs_by_state(scrape, states):
    """The TrainJobs a scrape's trainjob_jobs counts in each state: every state of states
    (0 when no series has it) and any other state a series names, summed over the other
    labels (namespace, gpu_class). Never one exact series: with labels besides state no
    line is `trainjob_jobs{state="X"}`, and every state would read 0 whatever the cache
    holds."""
    names = list(states)
    for line in scrape.splitlines():
        m = re.match(r'trainjob_jobs\{(?:.*,)?state="([^"]*)"', line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return {s: int(metric_sum(scrape, "trainjob_jobs", state=s)) for s in names}


def job_of(pod):
    return (pod["metadata"].get("labels") or {}).get("trainer.kubeflow.org/trainjob-name")


def lease_holder(namespace):
    got = kubectl("get", "lease", "trainjob-soak", "-n", namespace, "-o", "json", check=False, timeout=20)
    if got.returncode != 0:
        return None
    return json.loads(got.stdout).get("spec", {}).get("holderIdentity") or None


def etcd_endpoint():
    """The cluster's etcd, as kwokctl's configuration of its kube-apiserver names it."""
    with open(os.path.join(CLUSTER_DIR, "kwok.yaml")) as f:
        m = re.search(r"--etcd-servers=(\S+)", f.read())
    if not m:
        raise RuntimeError(f"no --etcd-servers in {CLUSTER_DIR}/kwok.yaml")
    return m.group(1)


def etcdctl(*args):
    return subprocess.run(["etcdctl", "--endpoints", etcd_endpoint(), *args], capture_output=True, text=True,
                          timeout=30, env={**os.environ, "ETCDCTL_API": "3"})


# GPU classes whose nodes the faults may take away, with how many may be away at once: the
# workload's jobs stay small enough (soak.py) to fit on what is left, so no job is refused
# as never fitting because of a fault.
NODE_BUDGET = {"gh200": 2, "h100": 1}


def node_class(node):
    name = node["metadata"]["name"]
    return next((c for c in NODE_BUDGET if name.startswith(c + "-")), None)


class Faults:
    """The fault injector's actions. log(what) prints a line with the time; jobs records
    on the soak's job table which jobs a fault touched (soak.Job.touched)."""

    def __init__(self, rng, namespace, replicas, checker, jobs, log):
        self.rng, self.namespace, self.replicas, self.checker = rng, namespace, replicas, checker
        self.jobs, self.log = jobs, log
        self.pending = []  # (monotonic time, description, callable): undo steps due later
        self.not_ready = set()  # nodes labelled NotReady now
        self.away = {c: 0 for c in NODE_BUDGET}  # per class, nodes NotReady or deleted
        self.new_nodes = 0
        self.suspended = set()
        self.throttled = False
        self.foreign = 0
        self.quota_on = False
        self.relabeled = {}  # node -> the block label the relabel fault took off it
        self.flaky = set()  # nodes whose pods the flaky-node fault crashes now
        self.counts = {}

    def later(self, delay, what, fn):
        self.pending.append((time.monotonic() + delay, what, fn))

    def run_due(self, now=None, all_of_them=False):
        now = time.monotonic() if now is None else now
        due = [p for p in self.pending if all_of_them or p[0] <= now]
        self.pending = [p for p in self.pending if p not in due]
        for _, what, fn in sorted(due, key=lambda p: p[0]):
            self.log(what)
            fn()

    def touch(self, names, how):
        for n in names:
            if n in self.jobs:
                self.jobs[n].touched.add(how)

    def unfinished(self):
        return [j for j in self.jobs.values() if not j.deleted and not j.finished(self.checker)]

    def count(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    # -- the controller -------------------------------------------------------------------

    def leader(self):
        holder = lease_holder(self.namespace)
        return next((r for r in self.replicas if r.running() and holder and r.identity() == holder), None)

    def kill9(self):
        leader = self.leader()
        target = leader if leader and self.rng.random() < 0.7 else self.rng.choice(self.replicas)
        if not target.running():
            return False
        role = "leader" if target is leader else "follower"
        self.log(f"fault kill9: kill -9 replica {target.name} ({role}, pid {target.proc.pid})")
        target.kill()
        self.later(self.rng.uniform(0.5, 4), f"restart replica {target.name} after kill -9", target.start)
        return True

    def failover(self):
        leader = self.leader()
        if leader is None:
            return False
        self.log(f"fault failover: SIGTERM to leader {leader.name} (pid {leader.proc.pid})")
        throttled = self.throttled
        # Past the controller's own grace, so that a shutdown the grace ended is seen as such.
        rc = leader.terminate(timeout=SHUTDOWN_GRACE_S + 15)
        if rc == 1 and throttled and grace_ended(leader.log_path):
            # While APF answers every request 429, the in-flight writes and the lease's
            # release cannot finish: the grace bounds the shutdown, and it did.
            self.log(f"replica {leader.name} stopped at its {SHUTDOWN_GRACE_S} s grace: its "
                     "writes were throttled")
        elif rc != 0:
            self.checker.fail("a replica stops cleanly on SIGTERM",
                              f"replica {leader.name} exited {rc}; log {leader.log_path}")
        self.later(self.rng.uniform(0.5, 4), f"restart replica {leader.name} after SIGTERM", leader.start)
        return True

    def supervise(self):
        """Starts again any replica that ended by itself (a lost lease exits 1); one killed
        by a signal the soak did not send has crashed."""
        for r in self.replicas:
            if r.proc is None or r.stopping or r.running():
                continue
            rc = r.proc.returncode
            tail = [line[:300] for line in r.log().splitlines()[-3:]]
            if rc < 0:
                self.checker.fail("the controller never crashes",
                                  f"replica {r.name} died of signal {-rc}; log {r.log_path}: {tail}")
                return
            # Restarted as the kubelet restarts a container: at once after a good run, with
            # a doubling delay while it keeps ending soon after its start.
            ran = time.monotonic() - r.started_at
            r.backoff = 0 if ran > 30 else min(max(1, 2 * r.backoff), 16)
            self.count("replica-exit")
            self.log(f"replica {r.name} exited {rc} by itself after {ran:.0f} s "
                     f"({tail[-1] if tail else 'no log'}); restarting it in {r.backoff} s")
            r.stopping = True
            self.later(r.backoff, f"restart replica {r.name}", r.start)

    # -- the control plane ----------------------------------------------------------------

    def apiserver(self):
        self.log("fault apiserver: kill -9 kube-apiserver and start it again")
        self.checker.api_down()
        try:
            restart_apiserver()
        finally:
            self.checker.api_restarted()
        self.log("kube-apiserver is ready again")
        return True

    def compact(self):
        status = etcdctl("endpoint", "status", "-w", "json")
        if status.returncode != 0:
            self.log(f"etcdctl endpoint status failed: {status.stderr.strip()}")
            return False
        rev = json.loads(status.stdout)[0]["Status"]["header"]["revision"]
        out = etcdctl("compact", str(rev))
        self.log(f"fault compact: etcd compacted at revision {rev}: {(out.stdout or out.stderr).strip()}")
        return out.returncode == 0 or "compacted" in out.stderr

    def throttle(self):
        if self.throttled:
            return False
        throttle_on(self.namespace)
        self.throttled = True
        hold = self.rng.uniform(3, 15)
        self.log(f"fault throttle: the controller's requests are answered 429 for {hold:.0f} s (APF)")

        def off():
            throttle_off()
            self.throttled = False

        self.later(hold, "the controller's requests pass APF again", off)
        return True

    # -- nodes ----------------------------------------------------------------------------

    def candidates(self):
        nodes = kubectl_json("get", "nodes", timeout=20)["items"]
        return [n for n in nodes if node_class(n) and n["metadata"]["name"] not in self.not_ready
                and n["metadata"]["name"] not in self.flaky
                and self.away[node_class(n)] < NODE_BUDGET[node_class(n)]]

    def node_not_ready(self):
        nodes = self.candidates()
        if not nodes:
            return False
        node = self.rng.choice(nodes)
        name, cls = node["metadata"]["name"], node_class(node)
        kubectl("label", "node", name, f"{NOT_READY_LABEL}=true", "--overwrite", timeout=20)
        self.not_ready.add(name)
        self.away[cls] += 1
        hit = self.checker.live_pods_on(name)
        self.touch(hit, "node")
        hold = self.rng.uniform(3, 30)
        self.log(f"fault node-not-ready: {name} NotReady for {hold:.0f} s (jobs on it: {sorted(hit)})")

        def ready():
            kubectl("label", "node", name, f"{NOT_READY_LABEL}-", check=False, timeout=20)
            self.not_ready.discard(name)
            self.away[cls] -= 1

        self.later(hold, f"node {name} Ready again", ready)
        return True

    def node_replace(self):
        # Not a node without its block label: its replacement would join without it.
        nodes = [n for n in self.candidates() if n["metadata"]["name"] not in self.relabeled]
        if not nodes:
            return False
        node = self.rng.choice(nodes)
        name, cls = node["metadata"]["name"], node_class(node)
        hit = self.checker.live_pods_on(name)
        self.touch(hit, "node")
        body = delete_node(name)
        self.away[cls] += 1
        self.new_nodes += 1
        new = f"{cls}-soak-{self.new_nodes}"
        body["metadata"]["name"] = new
        body["metadata"]["labels"]["kubernetes.io/hostname"] = new
        info = body["status"].get("nodeInfo") or {}
        for k in ("machineID", "systemUUID", "bootID"):
            if k in info:
                info[k] = new
        delay = self.rng.uniform(1, 10)
        self.log(f"fault node-replace: deleted node {name} (jobs on it: {sorted(hit)}); {new} joins in {delay:.0f} s")

        def join():
            kubectl("create", "-f", "-", input=json.dumps(body), check=False, timeout=20)
            self.away[cls] -= 1

        self.later(delay, f"node {new} created", join)
        return True

    # -- what else holds or limits capacity ------------------------------------------------

    def foreign_pod(self):
        """A pod of no TrainJob (a notebook, in a namespace of its own) takes all the GPUs of
        one node for a while, placed by the scheduler as a user's pod is: the admission must
        count it, or a gang pinned there waits for its pin timeout."""
        nodes = [n for n in self.candidates() if node_class(n) in NODE_BUDGET]
        if not nodes:
            return False
        node = self.rng.choice(nodes)
        name = node["metadata"]["name"]
        gpus = node["status"]["allocatable"].get("nvidia.com/gpu", "0")
        self.foreign += 1
        pod = f"notebook-{self.foreign}"
        hold = self.rng.uniform(5, 30)
        kubectl("create", "namespace", FOREIGN, check=False, timeout=20)
        body = {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod, "namespace": FOREIGN,
                             "annotations": {"sim.trainjob.flame.dev/run-time": "10m"}},
                "spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                         "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                             "nodeSelectorTerms": [{"matchFields": [
                                 {"key": "metadata.name", "operator": "In", "values": [name]}]}]}}},
                         "containers": [{"name": "lab", "image": "busybox",
                                         "resources": {"requests": {"nvidia.com/gpu": gpus},
                                                       "limits": {"nvidia.com/gpu": gpus}}}]}}
        kubectl("create", "-f", "-", input=json.dumps(body), timeout=20)
        self.log(f"fault foreign-pod: {FOREIGN}/{pod} asks for the {gpus} GPUs of {name} for {hold:.0f} s")
        self.later(hold, f"pod {FOREIGN}/{pod} deleted",
                   lambda: kubectl("delete", "pod", pod, "-n", FOREIGN, "--wait=false", check=False, timeout=20))
        return True

    def quota(self):
        """A ResourceQuota on the namespace's GPUs for a while, at most what its jobs hold
        or a little more: the gangs it cannot hold wait (QuotaExceeded; those larger than
        the quota too, the soak's policy being neverFits: Wait, since the quota is lifted
        again), a gang admitted just before it has its creates refused in part, and no rank
        of any gang may run without the others."""
        if self.quota_on:
            return False
        hard = self.rng.choice([0, 4, 8, 12])
        hold = self.rng.uniform(5, 20)
        body = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "soak-gpus"},
                "spec": {"hard": {"requests.nvidia.com/gpu": str(hard)}}}
        kubectl("apply", "-n", self.namespace, "-f", "-", input=json.dumps(body), timeout=20)
        self.quota_on = True
        self.log(f"fault quota: the namespace may request {hard} GPUs for {hold:.0f} s")

        def lift():
            kubectl("delete", "resourcequota", "soak-gpus", "-n", self.namespace, "--wait=false",
                    check=False, timeout=20)
            self.quota_on = False

        self.later(hold, "quota lifted", lift)
        return True

    def relabel(self):
        """A GPU node loses its block label for a while, and gets it back: a gang pinned
        there before meets a node its nodeSelector no longer allows (given back after the
        pin timeout, and kept off that node), and the gangs of that block decided meanwhile
        must not pick it (the checker's selector invariant). A node a pod is pinned to and
        not bound yet is taken first, then one of a block an unfinished job selects."""
        if self.relabeled:
            return False
        nodes = [n for n in kubectl_json("get", "nodes", timeout=20)["items"]
                 if node_class(n) and BLOCK in (n["metadata"].get("labels") or {})]
        if not nodes:
            return False
        pinned = self.checker.pinned_unbound_on()
        wanted = {j.block for j in self.unfinished() if j.block}
        node = self.rng.choice([n for n in nodes if n["metadata"]["name"] in pinned]
                               or [n for n in nodes if n["metadata"]["labels"][BLOCK] in wanted] or nodes)
        name, block = node["metadata"]["name"], node["metadata"]["labels"][BLOCK]
        # Recorded first: the restore puts it back even if the answer is lost.
        self.relabeled[name] = block
        try:
            kubectl("label", "node", name, f"{BLOCK}-", timeout=20)
        except (AssertionError, subprocess.SubprocessError):
            self.later(0, f"node {name} keeps {BLOCK}={block} (the fault was not done)", lambda: self.unrelabel(name))
            raise
        hit = self.checker.live_pods_on(name)
        self.touch(hit, "relabel")
        hold = self.rng.uniform(5, 40)
        self.log(f"fault relabel: {name} loses {BLOCK}={block} for {hold:.0f} s "
                 f"({'a pod pinned there unbound, ' if name in pinned else ''}jobs on it: {sorted(hit)})")
        self.later(hold, f"node {name} labelled {BLOCK}={block} again", lambda: self.unrelabel(name))
        return True

    def unrelabel(self, name):
        """Puts the block label back on a node the relabel fault took it off; tried again
        2 s later if the API server refuses (a node that no longer exists is done)."""
        block = self.relabeled.get(name)
        if block is None:
            return
        try:
            got = kubectl("label", "node", name, f"{BLOCK}={block}", "--overwrite", check=False, timeout=20)
            if got.returncode == 0 or "NotFound" in got.stderr:
                del self.relabeled[name]
                return
            why = got.stderr.strip()[:200]
        except subprocess.SubprocessError as e:
            why = str(e)
        self.log(f"labelling node {name} {BLOCK}={block} again failed: {why}; again in 2 s")
        self.later(2, f"node {name} labelled {BLOCK}={block} again (another try)", lambda: self.unrelabel(name))

    def restore(self):
        """What the faults change that must not outlive the soak, put back now, even if the
        soak stopped early (the soak's close): the nodes' block labels."""
        for name in list(self.relabeled):
            try:
                self.unrelabel(name)
            except OSError as e:
                self.log(f"labelling node {name} {BLOCK}={self.relabeled[name]} again failed: {e}")
        if self.relabeled:
            self.log(f"nodes left without their {BLOCK} label: {self.relabeled}")

    # -- pods and jobs --------------------------------------------------------------------

    def pod_fail(self):
        pods = [p for p in self.checker.running_pods() if job_of(p) in self.jobs]
        if not pods:
            return False
        pod = self.rng.choice(pods)
        job = job_of(pod)
        code, reason = self.rng.choice([(1, "Error"), (2, "Error"), (3, "Error"), (137, "OOMKilled"),
                                        (139, "Error"), (126, "ContainerCannotRun"), (127, "Error")])
        kubectl("annotate", "pod", pod["metadata"]["name"], "-n", self.namespace, "--overwrite",
                f"sim.trainjob.flame.dev/fail-exit-code={code}", f"sim.trainjob.flame.dev/fail-reason={reason}",
                "sim.trainjob.flame.dev/fail-after=0s", check=False, timeout=20)
        self.touch([job], "permanent-exit" if code in (126, 127) else "exit")
        self.log(f"fault pod-fail: {pod['metadata']['name']} of {job} exits {code} ({reason})")
        return True

    def flaky_node(self):
        """A node that fails quietly: the soak's running pods on it crash with 135 (SIGBUS,
        the soak's only suspectNodes.exitCode) now and twice more within 20 s, whichever jobs
        they belong to, while it says nothing of itself. Ranks of three jobs crashing there
        make the controller mark it suspect; the checker allows that of this node alone. It
        counts as away meanwhile (it may take no new gangs), and is cleared at the end as an
        operator clears it: its taint removed."""
        nodes = self.candidates()
        if not nodes:
            return False
        node = self.rng.choice(nodes)
        name, cls = node["metadata"]["name"], node_class(node)
        self.flaky.add(name)
        self.checker.flaky_nodes.add(name)
        self.away[cls] += 1
        hold = self.rng.uniform(30, 60)
        self.log(f"fault flaky-node: {name} crashes its pods with 135 for {hold:.0f} s")

        def crash():
            if name not in self.flaky:
                return
            pods = [p for p in self.checker.running_pods()
                    if p["spec"].get("nodeName") == name and job_of(p) in self.jobs]
            for p in pods:
                kubectl("annotate", "pod", p["metadata"]["name"], "-n", self.namespace, "--overwrite",
                        "sim.trainjob.flame.dev/fail-exit-code=135", "sim.trainjob.flame.dev/fail-reason=Error",
                        "sim.trainjob.flame.dev/fail-after=0s", check=False, timeout=20)
            self.touch([job_of(p) for p in pods], "flaky")
            self.log(f"flaky node {name} crashes {sorted(p['metadata']['name'] for p in pods)}")

        def mended():
            kubectl("taint", "nodes", name, "trainjob.flame.dev/suspect-", check=False, timeout=20)
            self.flaky.discard(name)
            self.away[cls] -= 1

        crash()
        self.later(10, f"flaky node {name} crashes again", crash)
        self.later(20, f"flaky node {name} crashes again", crash)
        self.later(hold, f"flaky node {name} mended, its suspect taint removed", mended)
        return True

    def suspend(self):
        jobs = [j for j in self.unfinished() if j.name not in self.suspended]
        if not jobs:
            return False
        job = self.rng.choice(jobs)
        kubectl("patch", "trainjob", job.name, "-n", self.namespace, "--type", "merge",
                "-p", '{"spec":{"suspend":true}}', timeout=20)
        self.suspended.add(job.name)
        self.touch([job.name], "suspend")
        hold = self.rng.uniform(3, 25)
        self.log(f"fault suspend: {job.name} suspended for {hold:.0f} s")
        self.later(hold, f"resume {job.name}", lambda: self.resume(job.name))
        return True

    def resume(self, name):
        kubectl("patch", "trainjob", name, "-n", self.namespace, "--type", "merge",
                "-p", '{"spec":{"suspend":false}}', check=False, timeout=20)
        self.suspended.discard(name)

    def delete_job(self):
        jobs = [j for j in self.unfinished() if j.name not in self.suspended]
        if not jobs:
            return False
        job = self.rng.choice(jobs)
        kubectl("delete", "trainjob", job.name, "-n", self.namespace, "--wait=false", timeout=20)
        job.deleted = True
        self.log(f"fault delete-job: {job.name} deleted mid-run")
        return True

    KINDS = {
        "kill9": 1.0,
        "failover": 0.8,
        "apiserver": 0.4,
        "compact": 0.6,
        "node_not_ready": 1.0,
        "node_replace": 0.6,
        "pod_fail": 1.4,
        "suspend": 0.6,
        "delete_job": 0.3,
        "throttle": 0.5,
        "foreign_pod": 0.6,
        "quota": 0.4,
        "relabel": 0.6,
        "flaky_node": 0.5,
    }

    def inject(self):
        """One fault, chosen by the seed; another is tried when the chosen one has no
        target now (no running pod, every node of a class away)."""
        kinds = list(self.KINDS)
        weights = [self.KINDS[k] for k in kinds]
        for _ in range(5):
            kind = self.rng.choices(kinds, weights)[0]
            try:
                done = getattr(self, kind)()
            except (AssertionError, subprocess.SubprocessError, OSError) as e:
                if kind == "apiserver":
                    raise  # a control plane that does not come back ends the soak
                # A fault the API server refused (it may be busy after a restart) is no
                # fault; the next one comes soon.
                self.log(f"fault {kind} not done: {str(e).strip().splitlines()[-1:]}")
                continue
            if done:
                self.count(kind)
                return kind
        return None

    def heal(self):
        """The end of the faults: every undo step now (nodes Ready, nodes joined, jobs
        resumed, replicas started)."""
        self.run_due(all_of_them=True)
        for r in self.replicas:
            if not r.running() and not self.checker.violation:
                r.start()
