"""The soak's invariant checker: it reads the cluster, never the controller's log.

Two reflectors (a list, then a watch from its resourceVersion, a relist after a 410 or a
broken stream, as client-go's do) keep a copy of the soak namespace's pods and TrainJobs,
through `kubectl get --raw`, and a third the nodes' labels. Every event is checked as it
arrives; what may hold for a moment but not for long (a pod without its owner, a partial
gang) is checked every second against a grace period, and a pod's binding once the nodes'
watch has caught up with it (the selector check below)."""

import json
import subprocess
import threading
import time
import urllib.parse

RANK = "trainjob.flame.dev/rank"
ATTEMPT = "trainjob.flame.dev/attempt"
STEP = "jobset.sigs.k8s.io/replicatedjob-name"
PINNED = "trainjob.flame.dev/node"
SUSPECT = "trainjob.flame.dev/suspect"


class Violation(Exception):
    """An invariant broken: its name and what was seen."""

    def __init__(self, invariant, detail):
        super().__init__(f"{invariant}: {detail}")
        self.invariant = invariant
        self.detail = detail


def live(pod):
    """Whether a pod runs or may still run: not finished and not being deleted."""
    return pod.get("status", {}).get("phase") not in ("Succeeded", "Failed") and not pod["metadata"].get(
        "deletionTimestamp"
    )


def cleanup_pending(pods, node_names):
    """What Kubernetes' own collectors have still to do with pods, one line each: a pod being
    deleted, or a pod bound to a node that no longer exists, which the pod GC deletes up to
    a minute after the node went (40 s of quarantine, checked every 20 s), whatever its
    phase. Until none is left, the pods may still change with no fault and no controller."""
    left = []
    for p in pods:
        meta, node = p["metadata"], p.get("spec", {}).get("nodeName")
        if meta.get("deletionTimestamp"):
            left.append(f"pod {meta['name']} is being deleted")
        elif node and node not in node_names:
            left.append(f"pod {meta['name']} is bound to {node}, which no longer exists")
    return left


def resource_version(obj):
    """An object's resourceVersion as a number: the cluster has one etcd, whose revisions
    order the versions of every object, pods and nodes alike."""
    try:
        return int(obj["metadata"]["resourceVersion"])
    except (KeyError, TypeError, ValueError):
        return 0


def selects(selector, labels):
    return labels is not None and all(labels.get(k) == v for k, v in selector.items())


def owner_uid(obj):
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref.get("uid")
    return None


class Reflector(threading.Thread):
    """A list and watch of one resource path; calls sink(kind, type, obj) for every event
    (type ADDED, MODIFIED, DELETED; a relist replays the whole list as SYNC events and a
    DELETED for what vanished), under the checker's lock."""

    def __init__(self, kind, path, checker):
        super().__init__(name=f"reflector-{kind}", daemon=True)
        self.kind, self.path, self.checker = kind, path, checker
        self.store = {}  # uid -> object
        self.rv = None
        self.lists = 0
        self.watches = 0
        self.synced = threading.Event()
        self.proc = None

    def run(self):
        while not self.checker.stopping.is_set():
            try:
                if self.rv is None:
                    self.relist()
                self.watch()
            except (OSError, ValueError, subprocess.SubprocessError):
                pass
            self.checker.stopping.wait(0.5)

    def relist(self):
        out = subprocess.run(["kubectl", "get", "--raw", self.path, "--request-timeout=20s"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            return
        body = json.loads(out.stdout)
        items = {o["metadata"]["uid"]: o for o in body.get("items") or []}
        with self.checker.lock:
            for uid in list(self.store):
                if uid not in items:
                    self.checker.sink(self.kind, "DELETED", self.store.pop(uid))
            for uid, o in items.items():
                self.store[uid] = o
                self.checker.sink(self.kind, "SYNC", o)
            self.rv = body["metadata"]["resourceVersion"]
            self.lists += 1
        self.synced.set()

    def watch(self):
        if self.rv is None:
            return
        query = urllib.parse.urlencode(
            {"watch": "1", "resourceVersion": self.rv, "allowWatchBookmarks": "true", "timeoutSeconds": "120"}
        )
        self.proc = subprocess.Popen(["kubectl", "get", "--raw", f"{self.path}?{query}"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.watches += 1
        try:
            for line in self.proc.stdout:
                if self.checker.stopping.is_set():
                    break
                line = line.strip()
                if not line:
                    continue
                ev = json.loads(line)
                if ev["type"] == "ERROR":
                    # 410 Gone ("too old resource version") and anything else the server
                    # ends a watch with: start again from a fresh list.
                    self.rv = None
                    break
                obj = ev["object"]
                with self.checker.lock:
                    self.rv = obj["metadata"]["resourceVersion"]
                    if ev["type"] == "BOOKMARK":
                        continue
                    uid = obj["metadata"]["uid"]
                    if ev["type"] == "DELETED":
                        self.store.pop(uid, None)
                    else:
                        self.store[uid] = obj
                    self.checker.sink(self.kind, ev["type"], obj)
        finally:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()


class Checker:
    """The invariants of the soak, on the pods and TrainJobs of one namespace.

    orphan_grace: how long a pod may live without a live owner TrainJob (the garbage
    collector deletes it); gang_grace: how long a job may have some but not all of its ranks
    live (pods finish a moment apart, a restart replaces them one by one). Both are counted
    from when the API server last came back, since nothing can happen while it is away.

    A pod of a TrainJob whose podTemplateOverrides select nodes (a nodeSelector) must be
    bound to a node with those labels: the node's labels are those it had between the last
    version of the pod seen unbound and the first seen bound (by resourceVersion, so that a
    label taken off just after the binding, or put back just before it, is judged as the
    scheduler saw it). A binding is judged once the nodes' watch has reached its version,
    or binding_wait seconds after it was seen if no node event comes."""

    def __init__(self, namespace, orphan_grace=60, gang_grace=60, binding_wait=20):
        self.namespace = namespace
        self.orphan_grace, self.gang_grace, self.binding_wait = orphan_grace, gang_grace, binding_wait
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self.violation = None
        self.api_back_at = time.monotonic()
        self.api_away = False
        self.restarts = {}  # TrainJob uid -> (restartCount, infrastructureRestarts) seen last
        self.orphan_since = {}  # pod uid -> when it was first seen without a live owner
        self.partial_since = {}  # TrainJob uid -> when it was first seen as a partial gang
        self.node_labels = {}  # node name -> [(resourceVersion, labels)], an entry at each change
        self.unbound_rv = {}  # pod uid -> resourceVersion of its newest version seen unbound
        self.bound = set()  # pod uids whose binding has been seen
        self.bindings = []  # bindings of pods with a selector, to judge
        self.selector_checks = 0  # bindings judged
        # Nodes the flaky-node fault made flaky, now or before: the only ones the controller
        # may mark suspect (reconcilers/policy/suspect.h).
        self.flaky_nodes = set()
        self.suspect_seen = set()  # nodes seen with the suspect taint
        self.events = 0
        self.pods = Reflector("pod", f"/api/v1/namespaces/{namespace}/pods", self)
        self.trainjobs = Reflector(
            "trainjob", f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs", self)
        self.nodes = Reflector("node", "/api/v1/nodes", self)
        self.ticker = threading.Thread(target=self.tick_loop, name="checker-tick", daemon=True)

    def start(self):
        # The nodes first, so that no binding is seen before its node.
        self.nodes.start()
        if not self.nodes.synced.wait(120):
            raise RuntimeError("the node list never answered")
        self.pods.start()
        self.trainjobs.start()
        for r in (self.pods, self.trainjobs):
            if not r.synced.wait(120):
                raise RuntimeError(f"the {r.kind} list never answered")
        self.ticker.start()

    def stop(self):
        self.stopping.set()
        self.pods.stop()
        self.trainjobs.stop()
        self.nodes.stop()

    def fail(self, invariant, detail):
        if self.violation is None:
            self.violation = Violation(invariant, detail)

    def api_down(self):
        with self.lock:
            self.api_away = True

    def api_restarted(self):
        with self.lock:
            self.api_away = False
            self.api_back_at = time.monotonic()

    # -- checked at every event ---------------------------------------------------------

    def sink(self, kind, etype, obj):
        self.events += 1
        if kind == "trainjob" and etype != "DELETED":
            self.check_restart_counts(obj)
        if kind == "pod" and etype != "DELETED":
            self.check_one_pod_per_rank(obj)
            self.note_binding(obj)
        if kind == "pod" and etype == "DELETED":
            self.unbound_rv.pop(obj["metadata"]["uid"], None)
            self.bound.discard(obj["metadata"]["uid"])
        if kind == "node" and etype != "DELETED":
            self.note_node(obj)
            self.check_suspect(obj)

    def check_restart_counts(self, job):
        st = job.get("status") or {}
        now = (st.get("restartCount") or 0, st.get("infrastructureRestarts") or 0)
        uid = job["metadata"]["uid"]
        before = self.restarts.get(uid, (0, 0))
        if now[0] < before[0] or now[1] < before[1]:
            self.fail("restart counts never go down",
                      f"TrainJob {job['metadata']['name']} went from restartCount={before[0]} "
                      f"infrastructureRestarts={before[1]} to {now[0]}/{now[1]} "
                      f"(resourceVersion {job['metadata']['resourceVersion']})")
        self.restarts[uid] = (max(now[0], before[0]), max(now[1], before[1]))

    def check_one_pod_per_rank(self, pod):
        if not live(pod):
            return
        key = self.rank_key(pod)
        if key is None:
            return
        same = [p["metadata"]["name"] for p in self.pods.store.values()
                if p["metadata"]["uid"] != pod["metadata"]["uid"] and live(p) and self.rank_key(p) == key]
        if same:
            self.fail("never two live pods of one rank and attempt",
                      f"{pod['metadata']['name']} and {', '.join(same)} are both live for job uid {key[0]}, "
                      f"step {key[1]}, rank {key[2]}, attempt {key[3]}")

    @staticmethod
    def rank_key(pod):
        labels = pod["metadata"].get("labels") or {}
        if RANK not in labels or ATTEMPT not in labels:
            return None
        # A replaced attempt's pods lose the step label; they are finished or being deleted,
        # hence never live, so the pod name's step part is not needed.
        return (owner_uid(pod), labels.get(STEP, "node"), labels[RANK], labels[ATTEMPT])

    def check_suspect(self, node):
        name = node["metadata"]["name"]
        if not any(t.get("key") == SUSPECT for t in (node.get("spec") or {}).get("taints") or []):
            return
        self.suspect_seen.add(name)
        if name not in self.flaky_nodes:
            mark = (node["metadata"].get("annotations") or {}).get(SUSPECT, "")
            self.fail("no healthy node is marked suspect",
                      f"{name} carries the taint {SUSPECT} but was never made flaky ({mark!r})")

    def note_node(self, node):
        """A new entry in the node's label history when its labels changed."""
        history = self.node_labels.setdefault(node["metadata"]["name"], [])
        labels = node["metadata"].get("labels") or {}
        if not history or history[-1][1] != labels:
            history.append((resource_version(node), dict(labels)))
            del history[:-50]

    def selector_of(self, pod):
        """The nodeSelector the pod's TrainJob asks for its step (podTemplateOverrides), {}
        if none or if the job is gone."""
        job = self.trainjobs.store.get(owner_uid(pod))
        if job is None:
            return {}
        step = (pod["metadata"].get("labels") or {}).get(STEP, "node")
        selector = {}
        for o in (job.get("spec") or {}).get("podTemplateOverrides") or []:
            if any(t.get("name") == step for t in o.get("targetJobs") or []):
                selector.update((o.get("spec") or {}).get("nodeSelector") or {})
        return selector

    def note_binding(self, pod):
        uid, node = pod["metadata"]["uid"], pod.get("spec", {}).get("nodeName")
        if not node:
            self.unbound_rv[uid] = resource_version(pod)
            return
        if uid in self.bound:
            return
        self.bound.add(uid)
        selector = self.selector_of(pod)
        if not selector:
            return
        self.bindings.append({
            "pod": pod["metadata"]["name"],
            "job": (pod["metadata"].get("labels") or {}).get("trainer.kubeflow.org/trainjob-name"),
            "node": node, "selector": selector,
            # A pod first seen bound (a relist) was bound at some version before: any the
            # history holds.
            "after": self.unbound_rv.pop(uid, 0), "seen": resource_version(pod), "at": time.monotonic(),
        })

    def labels_between(self, node, after, seen):
        """The label sets the node had from version after to version seen (the first one
        known if it was first seen later); [] if the node was never seen."""
        history = self.node_labels.get(node) or []
        start = max([i for i, (rv, _) in enumerate(history) if rv <= after] or [0])
        within = [labels for rv, labels in history[start:] if rv <= seen]
        return within or [labels for _, labels in history[:1]]

    def check_bindings(self, now):
        caught_up = resource_version({"metadata": {"resourceVersion": self.nodes.rv}})
        left = []
        for b in self.bindings:
            if caught_up < b["seen"] and now - b["at"] < self.binding_wait:
                left.append(b)
                continue
            self.selector_checks += 1
            had = self.labels_between(b["node"], b["after"], b["seen"])
            if had and not any(selects(b["selector"], labels) for labels in had):
                keys = sorted(b["selector"])
                self.fail("a pod of a job that selects its nodes is bound only to a node its selector allows",
                          f"pod {b['pod']} of TrainJob {b['job']} (nodeSelector {b['selector']}) was bound to "
                          f"{b['node']} (seen at resourceVersion {b['seen']}, unbound at {b['after'] or '?'}), "
                          f"whose labels {keys} were "
                          f"{[{k: labels.get(k) for k in keys} for labels in had]} meanwhile")
        self.bindings = left

    # -- checked every second, with a grace ---------------------------------------------

    def tick_loop(self):
        while not self.stopping.wait(1.0):
            with self.lock:
                if not self.api_away:
                    self.check_graces(time.monotonic())
                    self.check_bindings(time.monotonic())

    def live_jobs(self):
        return {uid: j for uid, j in self.trainjobs.store.items() if not j["metadata"].get("deletionTimestamp")}

    def check_graces(self, now):
        jobs = self.live_jobs()
        # Pods without a live owner.
        seen = set()
        for uid, p in self.pods.store.items():
            if owner_uid(p) in jobs:
                continue
            seen.add(uid)
            since = self.orphan_since.setdefault(uid, now)
            if now - max(since, self.api_back_at) > self.orphan_grace:
                self.fail("never a pod without a live owner for longer than the grace",
                          f"pod {p['metadata']['name']} (owner uid {owner_uid(p)}, phase "
                          f"{p.get('status', {}).get('phase')}) has had no live TrainJob for "
                          f"{now - since:.0f} s (grace {self.orphan_grace} s)")
        for uid in list(self.orphan_since):
            if uid not in seen:
                del self.orphan_since[uid]
        # Partial gangs: some ranks of a job live, others not.
        ranks = {}
        for p in self.pods.store.values():
            o = owner_uid(p)
            if o in jobs and live(p) and RANK in (p["metadata"].get("labels") or {}):
                ranks.setdefault(o, set()).add(p["metadata"]["labels"][RANK])
        partial = set()
        for uid, r in ranks.items():
            n = ((jobs[uid].get("spec") or {}).get("trainer") or {}).get("numNodes") or 1
            if len(r) >= n:
                continue
            partial.add(uid)
            since = self.partial_since.setdefault(uid, now)
            if now - max(since, self.api_back_at) > self.gang_grace:
                self.fail("never a partial gang for longer than the grace",
                          f"TrainJob {jobs[uid]['metadata']['name']} has had live pods for ranks "
                          f"{sorted(r)} only, of {n}, for {now - since:.0f} s (grace {self.gang_grace} s)")
        for uid in list(self.partial_since):
            if uid not in partial:
                del self.partial_since[uid]

    # -- read by the soak -----------------------------------------------------------------

    def job(self, name):
        with self.lock:
            return next((j for j in self.trainjobs.store.values() if j["metadata"]["name"] == name), None)

    def pinned_unbound_on(self):
        """The nodes (by name) some live pod is pinned to and not bound yet."""
        with self.lock:
            return {(p["metadata"].get("annotations") or {}).get(PINNED) for p in self.pods.store.values()
                    if live(p) and not p["spec"].get("nodeName")} - {None}

    def live_pods_on(self, node):
        """The jobs (by name) with a live pod bound or pinned to node."""
        with self.lock:
            out = set()
            for p in self.pods.store.values():
                ann = p["metadata"].get("annotations") or {}
                if live(p) and node in (p["spec"].get("nodeName"), ann.get("trainjob.flame.dev/node")):
                    out.add((p["metadata"].get("labels") or {}).get("trainer.kubeflow.org/trainjob-name"))
            return out - {None}

    def running_pods(self):
        with self.lock:
            return [p for p in self.pods.store.values()
                    if live(p) and p.get("status", {}).get("phase") == "Running"]

    def pods_of(self, uid):
        with self.lock:
            return [p for p in self.pods.store.values() if owner_uid(p) == uid]
