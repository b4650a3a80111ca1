#!/usr/bin/env python3
"""The chaos soak: TrainJobs of mixed sizes and policies run and finish continuously while a
fault injector driven by a seed kills, fails over, restarts and breaks what they run on, and
an invariant checker reading the cluster asserts all the time and at the end that nothing is
lost, doubled or left behind.

    tests/soak/soak.py --duration SECONDS [--seed N] [--jobs N]

Runs against the cluster of KUBECONFIG (scripts/test.sh's stage soak starts one of its own,
deploy/local/cluster.sh, and sets it), with two replicas of this build's controller under
--leader-elect. The seed is printed first; on a broken invariant the seed and the invariant
are printed last and the exit status is 1. The same seed makes the same choices (which
fault, which job, which node, which sizes), so a failure can be replayed; the timing of the
cluster is not replayed.

Faults, one every 2 to 6 s: kill -9 of a replica (the leader more often), SIGTERM to the
leader (a failover; it must exit 0), kill -9 of kube-apiserver and its restart, etcd
compaction at the newest revision (etcdctl), a node NotReady for a while, a node deleted and
a new one joining, a running pod failing with a random exit code, a job suspended and
resumed, a job deleted mid-run, the controller's requests answered 429 for a while by
API Priority and Fairness (throttle.py; the replicas run as a ServiceAccount of their own),
a pod of no TrainJob taking a node's GPUs for a while, preemptions (one job in five is of the
scavenger tier low, which the normal jobs preempt), a ResourceQuota on the
namespace's GPUs for a while (gangs refused in part), a GPU node's block label taken off
for a while (one job in five selects a block with a nodeSelector), and a flaky node whose
pods crash with a hardware-like exit code for a while (the controller may mark it suspect;
its taint is removed when the fault ends).

Invariants, all the time: never two live pods of one rank and attempt of one job; never a
pod without a live owner TrainJob for longer than a grace; never some but not all ranks of
a job live for longer than a grace (a partial gang); a pod of a job that selects its nodes
is bound only to a node its selector allows; restart counts never go down; no node but
a flaky one is ever marked suspect; the controller
never dies of a signal and stops cleanly on SIGTERM. At the end (after a drain
time): every TrainJob is Complete or Failed with a reason its policy and the faults it met
allow, no finished job holds a live pod, the deleted jobs and their pods are gone, every
replica's TrainJob cache (its trainjob_jobs gauge) counts the states the API server holds,
and the caches of the controller's informers (tests/tools/informer-dump, run through every
fault) equal a fresh list."""

import argparse
import os
import random
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))

from checker import Checker, Violation, cleanup_pending, live  # noqa: E402
from conftest import config_with_policy, install_crds  # noqa: E402
from faults import BLOCK, Faults, Replica, lease_holder  # noqa: E402
from kube import REPO, apply, condition, kubectl, kubectl_json, trainjob, wait_for  # noqa: E402
from test_informers import api_pods, cache_pods, finish_dump, start_dump  # noqa: E402
from throttle import controller_kubeconfig  # noqa: E402

NAMESPACE = "soak"
# Restarts back off briefly and nodes are given up on soon, so that a job meets several
# faults and still finishes within the soak; the budgets are the shipped ones.
POLICY = """failurePolicy:
  maxRestarts: 3
  maxInfrastructureRestarts: 10
  nodeGracePeriodSeconds: 10
  restartBackoff:
    initialSeconds: 2
    maxSeconds: 20
  permanentExitCodes: [126, 127]
admission:
  enabled: true
  backfill: true
  neverFits: Wait
  pinTimeoutSeconds: 20
suspectNodes:
  jobs: 3
  window: 1h
  exitCodes: [135]
"""
STATES = ("Pending", "Queued", "Running", "Restarting", "Suspended", "Complete", "Failed")
# The blocks of each class (BLOCK, 4 nodes each on deploy/local/cluster.sh's node set) that a
# job may select: one job in five does, and is then 3 nodes at most, so that it still fits
# while the faults take nodes of its block away.
BLOCKS = {"gh200": ["gh200-block-0", "gh200-block-1"], "h100": ["h100-block-0"]}
BLOCK_NODES = 4
START = time.monotonic()


def log(what):
    print(f"[+{time.monotonic() - START:7.1f}s {time.strftime('%H:%M:%SZ', time.gmtime())}] {what}", flush=True)


class Job:
    """One TrainJob of the workload, its policy, and the faults that touched it."""

    def __init__(self, rng, index, low=False):
        self.name = f"soak-{index:04d}"
        # Of the scavenger tier: normal jobs that need its nodes preempt it (docs/users.md,
        # "Preemption"); it goes back to the queue and still ends as its kind says.
        self.low = low
        self.cls = rng.choice(["gh200", "gh200", "h100"])
        # Small enough to fit on what the node faults leave (faults.NODE_BUDGET).
        self.nodes = rng.randint(1, 4) if self.cls == "gh200" else rng.randint(1, 2)
        self.gpus = rng.choice([1, 2, 4]) if self.cls == "gh200" else rng.choice([4, 8])
        self.run_time = rng.randint(8, 30)
        self.max_restarts = rng.choice([None, None, 0, 1, 2, 3])
        self.kind = rng.choices(["runs", "walltime", "exits", "exits-permanent"], [6, 1.5, 1.5, 0.5])[0]
        self.deadline = None
        self.fail_code = None
        if self.kind == "walltime":
            self.deadline = rng.randint(6, 15)
            self.run_time = 3600
        elif self.kind == "exits":
            self.fail_code = rng.choice([1, 2, 42])
        elif self.kind == "exits-permanent":
            self.fail_code = rng.choice([126, 127])
        elif rng.random() < 0.3:
            self.deadline = 900  # a walltime it never reaches
        self.block = None
        if rng.random() < 0.2:
            self.block = rng.choice(BLOCKS[self.cls])
            self.nodes = min(self.nodes, BLOCK_NODES - 1)
        self.deleted = False
        self.touched = set()

    def manifest(self):
        pod_ann = {}
        if self.fail_code is not None:
            pod_ann = {"sim.trainjob.flame.dev/fail-exit-code": str(self.fail_code),
                       "sim.trainjob.flame.dev/fail-after": "2s"}
        ann = {} if self.max_restarts is None else {"trainjob.flame.dev/max-restarts": str(self.max_restarts)}
        if self.low:
            ann["trainjob.flame.dev/qos"] = "low"
        spec = {} if self.deadline is None else {"activeDeadlineSeconds": self.deadline}
        body = trainjob(self.name, nodes=self.nodes, gpus=self.gpus, runtime=f"torch-{self.cls}",
                        run_time=f"{self.run_time}s", pod_annotations=pod_ann, annotations=ann, **spec)
        if self.block:
            # As a user selects nodes: a podTemplateOverrides nodeSelector on the node pods.
            body["spec"]["podTemplateOverrides"][0]["spec"] = {"nodeSelector": {BLOCK: self.block}}
        return body

    def allowed(self):
        """The (condition, reason) pairs the job may end with, given its policy and the
        faults it met; the control plane's faults (kills, failovers, API server restarts,
        compactions), suspensions and a node's block label taken off (a gang given back
        before it ran) must change nothing."""
        if self.kind == "walltime":
            ok = {("Failed", "DeadlineExceeded")}
        elif self.kind == "exits":
            ok = {("Failed", "ReachedMaxRestarts")}
        elif self.kind == "exits-permanent":
            ok = {("Failed", "PermanentFailure")}
        else:
            ok = {("Complete", "AllPodsSucceeded")}
        if "exit" in self.touched:
            ok.add(("Failed", "ReachedMaxRestarts"))
        if "permanent-exit" in self.touched:
            ok.add(("Failed", "PermanentFailure"))
        if "node" in self.touched:
            ok.add(("Failed", "ReachedMaxInfrastructureRestarts"))
        if "flaky" in self.touched:
            # A crash on a flaky node is the job's until the node is marked, the
            # infrastructure's after.
            ok |= {("Failed", "ReachedMaxRestarts"), ("Failed", "ReachedMaxInfrastructureRestarts")}
        if self.deadline is not None and self.touched - {"suspend", "relabel"}:
            ok.add(("Failed", "DeadlineExceeded"))
        return ok

    def finished(self, checker):
        return outcome(checker.job(self.name)) is not None

    def describe(self):
        where = f" in {self.block}" if self.block else ""
        where += ", QOS low" if self.low else ""
        return (f"{self.name} ({self.cls}, {self.nodes}x{self.gpus} GPUs{where}, {self.kind}, run {self.run_time} s, "
                f"max-restarts {self.max_restarts}, deadline {self.deadline}, faults {sorted(self.touched) or 'none'})")


def outcome(obj):
    """(Complete|Failed, reason) of a finished TrainJob object, else None."""
    if obj is None:
        return None
    for ctype in ("Complete", "Failed"):
        c = condition(obj, ctype)
        if c and c.get("status") == "True":
            return ctype, c.get("reason")
    return None


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=int, required=True, help="seconds of faults and submissions")
    p.add_argument("--seed", type=int, default=None, help="the seed to replay (default: a new one)")
    p.add_argument("--jobs", type=int, default=None, help="TrainJobs to submit (default: 50 per 300 s)")
    p.add_argument("--inflight", type=int, default=12, help="unfinished TrainJobs at most at once")
    p.add_argument("--drain", type=int, default=300, help="seconds for the jobs to finish after the faults")
    a = p.parse_args()
    if a.seed is None:
        a.seed = int.from_bytes(os.urandom(4), "big")
    if a.jobs is None:
        a.jobs = max(50, a.duration * 50 // 300)
    return a


class Soak:
    def __init__(self, args):
        self.args = args
        self.jobs = {}
        self.logdir = os.path.join(REPO, "build", f"soak-{args.seed}")
        os.makedirs(self.logdir, exist_ok=True)
        self.checker = Checker(NAMESPACE)
        self.replicas = []
        self.dump = None
        self.faults = None

    def setup(self):
        install_crds()
        # The blocks the jobs select must be whole, or a job of one may never fit.
        blocks = [(n["metadata"].get("labels") or {}).get(BLOCK) for n in kubectl_json("get", "nodes")["items"]]
        short = {b: blocks.count(b) for bs in BLOCKS.values() for b in bs if blocks.count(b) < BLOCK_NODES}
        if short:
            raise RuntimeError(f"blocks of fewer than {BLOCK_NODES} nodes (by {BLOCK}): {short}; the soak's jobs "
                               "select them (deploy/local/cluster.sh's default node counts make them whole)")
        kubectl("create", "namespace", NAMESPACE, check=False)
        wait_for("the soak namespace's default ServiceAccount",
                 lambda: kubectl("get", "serviceaccount", "default", "-n", NAMESPACE, check=False).returncode == 0,
                 timeout=120)
        self.checker.start()
        self.dump = start_dump()
        config = config_with_policy(POLICY)
        kubeconfig = controller_kubeconfig(NAMESPACE, os.path.join(self.logdir, "controller.kubeconfig"))
        self.replicas = [Replica(n, config, kubeconfig, NAMESPACE, self.logdir) for n in ("a", "b")]
        for r in self.replicas:
            r.start()
        wait_for("a replica to hold the lease", lambda: lease_holder(NAMESPACE), timeout=90)
        self.faults = Faults(random.Random(self.args.seed), NAMESPACE, self.replicas, self.checker, self.jobs, log)
        log(f"set up: replicas a (pid {self.replicas[0].proc.pid}) and b (pid {self.replicas[1].proc.pid}), "
            f"logs in {self.logdir}")

    def submit(self, rng):
        # Drawn apart from rng, so that a seed's jobs are otherwise the ones they were.
        low = random.Random(f"{self.args.seed}/qos/{len(self.jobs)}").random() < 0.2
        job = Job(rng, len(self.jobs), low)
        for _ in range(10):
            if apply(job.manifest(), "-n", NAMESPACE, check=False).returncode == 0:
                break
            time.sleep(1)
        else:
            # Counted as submitted all the same (the seed's sequence stays), not waited for.
            job.deleted = True
            log(f"submit {job.name}: the API server refused it ten times; left out")
        self.jobs[job.name] = job
        log(f"submit {job.describe()}")

    def unfinished(self):
        return [j for j in self.jobs.values() if not j.deleted and not j.finished(self.checker)]

    def tick(self):
        self.faults.supervise()
        self.faults.run_due()
        if self.checker.violation:
            raise self.checker.violation

    def chaos(self):
        """The workload and the faults for --duration seconds."""
        rng_jobs = random.Random(f"{self.args.seed}/jobs")
        rng_faults = self.faults.rng
        begin = time.monotonic()
        pace = self.args.duration / self.args.jobs
        next_submit, next_fault = begin, begin + 10
        while time.monotonic() - begin < self.args.duration:
            self.tick()
            now = time.monotonic()
            if now >= next_submit and len(self.jobs) < self.args.jobs and len(self.unfinished()) < self.args.inflight:
                self.submit(rng_jobs)
                next_submit = now + pace
            if now >= next_fault:
                self.faults.inject()
                self.tick()
                next_fault = time.monotonic() + rng_faults.uniform(2, 6)
            time.sleep(0.2)
        log(f"faults over ({sum(self.faults.counts.values())} injected: {self.faults.counts}); healing")
        self.faults.heal()

    def drain(self):
        deadline = time.monotonic() + self.args.drain
        while self.unfinished():
            self.tick()
            if time.monotonic() > deadline:
                left = [f"{j.name}: {(self.checker.job(j.name) or {}).get('status', {}).get('state')}"
                        for j in self.unfinished()]
                raise Violation("every TrainJob reaches Complete or Failed",
                                f"{len(left)} unfinished {self.args.drain} s after the faults ended: {left}")
            time.sleep(1)
        log(f"drained: every one of {len(self.jobs)} TrainJobs finished or was deleted")

    def settle(self):
        """What the garbage collector and the controller do after the jobs end: no pod of a
        deleted job and no live pod of a finished one."""

        def leftovers():
            self.tick()
            bad = []
            for j in self.jobs.values():
                obj = self.checker.job(j.name)
                if j.deleted:
                    if obj is not None:
                        bad.append(f"{j.name} still exists")
                    continue
                if obj is None:
                    bad.append(f"{j.name} vanished")
                    continue
                bad += [f"{p['metadata']['name']} of finished {j.name} is {p['status'].get('phase')}"
                        for p in self.checker.pods_of(obj["metadata"]["uid"]) if live(p)]
            with self.checker.lock:
                names = {j["metadata"]["uid"] for j in self.checker.trainjobs.store.values()}
                bad += [f"pod {p['metadata']['name']} has no TrainJob"
                        for p in self.checker.pods.store.values()
                        if not any(r.get("uid") in names for r in p["metadata"].get("ownerReferences") or [])]
            return bad

        try:
            wait_for("nothing left behind", lambda: not leftovers(), timeout=90, interval=2)
        except AssertionError:
            raise Violation("a finished or deleted job leaves no live pod behind", "; ".join(leftovers()[:10]))

    def check_outcomes(self):
        bad, tally = [], {}
        for j in self.jobs.values():
            if j.deleted:
                continue
            got = outcome(self.checker.job(j.name))
            tally[got] = tally.get(got, 0) + 1
            if got not in j.allowed():
                msg = (self.checker.job(j.name).get("status") or {}).get("message", "")
                bad.append(f"{j.describe()} ended {got}, allowed {sorted(j.allowed())}: {msg}")
        log("outcomes: " + ", ".join(f"{k[0]}/{k[1]}: {v}" for k, v in sorted(tally.items())) +
            f", deleted: {sum(j.deleted for j in self.jobs.values())}")
        if bad:
            raise Violation("every TrainJob ends with a reason consistent with the faults injected into it",
                            "; ".join(bad))

    def check_controller_caches(self):
        """Every replica's TrainJob cache counts the states the API server holds."""

        def compare():
            items = kubectl_json("get", "trainjobs", "-A")["items"]
            want = {s: 0 for s in STATES}
            for i in items:
                s = (i.get("status") or {}).get("state") or "Pending"
                want[s] = want.get(s, 0) + 1
            got = {}
            for r in self.replicas:
                try:
                    got[r.name] = r.jobs_by_state(STATES)
                except OSError as e:
                    got[r.name] = f"no metrics: {e}"
            return all(g == want for g in got.values()), want, got

        try:
            wait_for("the replicas' caches to count the API's TrainJobs", lambda: compare()[0], timeout=60)
        except AssertionError:
            _, want, got = compare()
            raise Violation("the controller's caches equal the API server's state",
                            f"trainjob_jobs by replica {got}, the API server's TrainJobs {want}")
        log("every replica's TrainJob cache counts what the API server holds")

    def stop_replicas(self):
        for r in self.replicas:
            if r.running():
                # Its SIGTERM handler is set up once it has started: wait for that.
                wait_for(f"replica {r.name} to be ready", r.ready, timeout=90)
                rc = r.terminate()
                if rc != 0:
                    raise Violation("a replica stops cleanly on SIGTERM", f"replica {r.name} exited {rc}; log {r.log_path}")

    def check_informer_caches(self):
        """The informers that ran through every fault hold what a fresh list returns."""

        def api_nodes(items=None):
            return sorted((n["metadata"]["name"], n["metadata"]["uid"], n["metadata"]["resourceVersion"])
                          for n in items or kubectl_json("get", "nodes")["items"])

        pending = []

        def quiet():
            # A pod on a deleted node is still to be removed by the pod GC, maybe only after
            # the dump (seed 3834603182): the pods are quiet once no such work is left.
            pods = kubectl_json("get", "pods", "-n", NAMESPACE)["items"]
            nodes = kubectl_json("get", "nodes")["items"]
            pending[:] = cleanup_pending(pods, {n["metadata"]["name"] for n in nodes})
            if pending:
                return None
            first = (api_pods(NAMESPACE, pods), api_nodes(nodes))
            time.sleep(3)
            return first if (api_pods(NAMESPACE), api_nodes()) == first else None

        try:
            wait_for("the pods and nodes to stop changing", quiet, timeout=180, interval=1)
        except AssertionError as e:
            raise AssertionError(f"{e}; left to the collectors: {pending[:5]}") from None
        # After a run of faults an informer may wait out a backoff of up to a minute before
        # it relists, and the dump waits for it (seed 211909789).
        # A node may still change while the dump stops (the kubelet's status report of a
        # quiet node, every few minutes): what the dump holds of each node must be what a
        # list showed before it stopped or after.
        nodes_before = api_nodes()
        dump, self.dump = finish_dump(self.dump, timeout=300), None
        api = api_pods(NAMESPACE)
        cache = cache_pods(dump, NAMESPACE)
        nodes = api_nodes()
        cached_nodes = sorted((n["name"], n["uid"], n["resourceVersion"]) for n in dump["nodes"])
        seen = set(nodes_before) | set(nodes)
        if (cached_nodes != nodes and [n[0] for n in cached_nodes] == [n[0] for n in nodes]
                and all(n in seen for n in cached_nodes)):
            log(f"nodes changed while the dump stopped: {sorted(set(nodes) - set(cached_nodes))}")
            nodes = cached_nodes
        st = dump["stats"]
        log(f"informer stats: {st.get('podLists')} pod lists, {st.get('podWatches')} watches, "
            f"last error: {st.get('podLastError')!r}")
        if cache != api:
            diff = sorted(set(cache) ^ set(api)) + sorted(n for n in set(cache) & set(api) if cache[n] != api[n])
            raise Violation("the informers' caches equal the API server's state",
                            f"{len(diff)} pods differ, e.g. {[(n, cache.get(n), api.get(n)) for n in diff[:3]]}")
        if cached_nodes != nodes:
            raise Violation("the informers' caches equal the API server's state",
                            f"nodes cached {cached_nodes}, listed {nodes}")
        log(f"the informers' caches equal a fresh list: {len(api)} pods, {len(nodes)} nodes")

    def close(self):
        if self.faults:
            self.faults.restore()
        self.checker.stop()
        for r in self.replicas:
            if r.running():
                r.kill()
        if self.dump and self.dump.poll() is None:
            self.dump.kill()


def main():
    args = parse_args()
    print(f"soak: seed {args.seed}, {args.duration} s of faults, {args.jobs} TrainJobs "
          f"(replay: tests/soak/soak.py --duration {args.duration} --seed {args.seed})", flush=True)
    soak = Soak(args)
    try:
        soak.setup()
        soak.chaos()
        soak.drain()
        soak.settle()
        soak.check_outcomes()
        soak.check_controller_caches()
        soak.stop_replicas()
        soak.check_informer_caches()
    except Violation as v:
        log(f"INVARIANT BROKEN: {v}")
        print(f"soak: FAILED, seed {args.seed}, invariant: {v.invariant}\n  {v.detail}\n"
              f"  replay: tests/soak/soak.py --duration {args.duration} --seed {args.seed}; logs in {soak.logdir}",
              flush=True)
        return 1
    except Exception:
        log("the soak itself failed:")
        traceback.print_exc()
        print(f"soak: ERROR, seed {args.seed}: the soak could not run to its end (above); logs in {soak.logdir}",
              flush=True)
        return 2
    finally:
        soak.close()
    c = soak.checker
    print(f"soak: PASSED, seed {args.seed}: {len(soak.jobs)} TrainJobs, faults {soak.faults.counts}; "
          f"the checker saw {c.events} events, listed pods {c.pods.lists} and TrainJobs {c.trainjobs.lists} times, "
          f"judged {c.selector_checks} bindings of jobs that select a block",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
