"""What the Prometheus e2e modules share: deploy/monitoring's dashboard queries and alert
rules, a reader of the vector selectors of a PromQL expression, Debian's prometheus server
scraping the controller with the scrape jobs a module gives it, the TrainJobs whose aftermath
every panel and alert must find in the scrape, and the checks that they do."""

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import yaml

from conftest import free_port
from kube import REPO, SIM, apply, by_rank, kubectl, running, tj, trainjob, wait_for, wait_state

MONITORING = os.path.join(REPO, "deploy", "monitoring")
JOB = "trainjob-controller-metrics"  # the ServiceMonitor's job label, which the alerts select
LEASE = "trainjob-controller"
FAST_RESTARTS = """
failurePolicy:
  maxRestarts: 3
  restartBackoff: {initialSeconds: 1, maxSeconds: 2}
"""


def config_path():
    """deploy/config with the fast restarts above, admission as shipped."""
    with open(os.path.join(REPO, "deploy", "config", "config.yaml")) as f:
        shipped = f.read()
    classes = shipped.split("\nfailurePolicy:")[0]
    admission = "\nadmission:" + shipped.split("\nadmission:")[1].split("\nwalltime:")[0]
    path = os.path.join(REPO, "build", "e2e-prometheus-config.yaml")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(classes + "\n" + FAST_RESTARTS + admission)
    return path


def controller_args():
    """The controller flags of a monitored run: the fast restarts, and leader election on
    the lease the alerts watch."""
    return ["--config", config_path(), "--leader-elect", f"--leader-election-id={LEASE}",
            "--leader-election-namespace=default"]


def rule_groups():
    with open(os.path.join(MONITORING, "prometheusrule.yaml")) as f:
        return yaml.safe_load(f)["spec"]["groups"]


def alerts():
    return [r for g in rule_groups() for r in g["rules"] if "alert" in r]


def dashboard_queries():
    """(panel title, query) of every target of every panel of the dashboard."""
    with open(os.path.join(MONITORING, "dashboard.json")) as f:
        dash = json.load(f)
    out = []
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            out.append((panel["title"], target["expr"]))
    return out


# PromQL words that are not metric names: aggregations and functions are recognised by the
# "(" that follows them; these are not.
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "inf", "nan"}
LABEL_LISTS = {"by", "without", "on", "ignoring", "group_left", "group_right"}


def selectors(expr):
    """The vector selectors of a PromQL expression ("name{matchers}" or "name"), in order."""
    out, i, n = [], 0, len(expr)

    def skip_string(j):
        quote, j = expr[j], j + 1
        while expr[j] != quote:
            j += 2 if expr[j] == "\\" else 1
        return j + 1

    def skip_until(j, close):
        while expr[j] != close:
            j = skip_string(j) if expr[j] in "\"'" else j + 1
        return j + 1

    while i < n:
        c = expr[i]
        if c in "\"'":
            i = skip_string(i)
        elif c == "[":
            i = skip_until(i, "]")
        elif c == "{":
            raise AssertionError(f"a selector without a metric name in {expr!r}")
        elif c.isdigit() or (c == "." and i + 1 < n and expr[i + 1].isdigit()):
            while i < n and (expr[i].isalnum() or expr[i] in "."):
                i += 1
        elif c.isalpha() or c in "_:":
            j = i
            while j < n and (expr[j].isalnum() or expr[j] in "_:"):
                j += 1
            word, k = expr[i:j], j
            while k < n and expr[k] == " ":
                k += 1
            after = expr[k:].split("(")[0].strip()
            if word in LABEL_LISTS:
                i = skip_until(k, ")") if k < n and expr[k] == "(" else k
            elif word.lower() in KEYWORDS or (k < n and expr[k] == "(") or after in ("by", "without"):
                # a keyword, a function, or an aggregation whose grouping comes first
                i = j
            elif k < n and expr[k] == "{":
                end = skip_until(k, "}")
                out.append(word + expr[k:end])
                i = end
            else:
                out.append(word)
                i = j
        else:
            i += 1
    return out


def monitor_endpoints():
    """The endpoints of the shipped ServiceMonitor and PodMonitor, by kind."""
    found = {}
    for name in ("servicemonitor.yaml", "podmonitor.yaml"):
        with open(os.path.join(MONITORING, name)) as f:
            for doc in yaml.safe_load_all(f):
                spec = (doc or {}).get("spec") or {}
                eps = spec.get("endpoints") or spec.get("podMetricsEndpoints")
                if eps:
                    found[doc["kind"]] = eps
    return found


def plain_scrape(target):
    """The scrape job of a controller out of a cluster, plain HTTP on the loopback, with what
    the Prometheus Operator makes of the shipped ServiceMonitor: its targets carry the
    namespace and pod of the controller's pod, and honor_labels is the endpoint's
    honorLabels. Without it, Prometheus renames the namespace label of the series (the
    TrainJobs' namespace) to exported_namespace, and every query by namespace reads the
    controller's own."""
    endpoint = monitor_endpoints()["ServiceMonitor"][0]
    return {
        "job_name": JOB,
        "honor_labels": bool(endpoint.get("honorLabels")),
        "static_configs": [{"targets": [target],
                            "labels": {"namespace": "trainjob-system", "pod": "trainjob-controller-0"}}],
    }


class Prometheus:
    """Debian's prometheus server, scraping the given jobs every second, with the alert
    rules of deploy/monitoring loaded."""

    def __init__(self, scrape_configs):
        self.dir = tempfile.mkdtemp(prefix="e2e-prometheus-")
        self.port = free_port()
        rules = os.path.join(self.dir, "rules.yaml")
        with open(rules, "w") as f:
            yaml.safe_dump({"groups": rule_groups()}, f, sort_keys=False)
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [rules],
            "scrape_configs": scrape_configs,
        }
        with open(os.path.join(self.dir, "prometheus.yml"), "w") as f:
            yaml.safe_dump(config, f)
        self.log = open(os.path.join(REPO, "build", "e2e-prometheus.log"), "w")
        self.proc = subprocess.Popen([
            "prometheus",
            f"--config.file={self.dir}/prometheus.yml",
            f"--storage.tsdb.path={self.dir}/data",
            f"--web.listen-address=127.0.0.1:{self.port}",
        ], stdout=self.log, stderr=self.log)
        wait_for("Prometheus to be ready", lambda: self.ready(), timeout=60)

    def ready(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"prometheus exited ({self.proc.returncode}); log: {self.log.name}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as r:
            body = json.load(r)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr):
        return self.api("query", query=expr)["result"]

    def target(self, job):
        """The active target of a scrape job once it has been scraped: its health
        ("up"/"down") and lastError are those of its latest scrape."""
        def scraped():
            found = [t for t in self.api("targets", state="active")["activeTargets"]
                     if t["scrapePool"] == job and t["health"] != "unknown"]
            return found[0] if found else None

        return wait_for(f"a scrape of {job}", scraped, timeout=30)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def monitored_jobs(prom):
    """A TrainJob that completes and one whose worker crashes once and is restarted (and
    reports its progress), in a namespace of their own, and one whose progress stalls, which
    is gone by then; yields the namespace once Prometheus has scraped the aftermath."""
    ns = "e2e-prom-" + os.urandom(3).hex()
    kubectl("create", "namespace", ns)
    wait_for("the default ServiceAccount", lambda: kubectl("get", "serviceaccount", "default", "-n", ns,
                                                           check=False).returncode == 0, timeout=60)
    try:
        apply(trainjob("short", nodes=1, run_time="3s"), "-n", ns)
        apply(trainjob("crash", nodes=2, run_time="120s"), "-n", ns)
        apply(trainjob("stuck", nodes=1, run_time="120s", annotations={"trainjob.flame.dev/stall-timeout": "5s"}),
              "-n", ns)
        victim = by_rank(running(ns, "crash", 2), 1)["metadata"]["name"]
        # The attempt holds its GPUs for some seconds before it fails: wasted GPU-seconds.
        time.sleep(3)
        kubectl("annotate", "pod", victim, "-n", ns, f"{SIM}fail-message=CUDA error", f"{SIM}fail-exit-code=1")
        wait_for("the restart", lambda: tj(ns, "crash")["status"].get("restartCount") == 1)
        running(ns, "crash", 2, attempt=1)
        # What its training code would report (docs/users.md, "Progress and ETA"), written as
        # the trainer status server writes it.
        for name in ("crash", "stuck"):
            kubectl("patch", "tj", name, "-n", ns, "--subresource=status", "--type=merge", "-p",
                    '{"status": {"trainerStatus": {"progressPercentage": 30, "estimatedRemainingSeconds": 90,'
                    ' "lastUpdatedTime": "2026-01-01T10:00:00Z"}}}')
        # The stuck job reports nothing more: restarted as Stalled 5 s after (users.md); then
        # its timeout is switched off, so that it stalls once.
        wait_for("the stall", lambda: tj(ns, "stuck")["status"].get("lastFailure", {}).get("reason") == "Stalled",
                 timeout=60)
        kubectl("annotate", "--overwrite", "tj", "stuck", "-n", ns, "trainjob.flame.dev/stall-timeout=0")
        wait_state(ns, "short", "Complete")
        wait_for("Prometheus to scrape the restart",
                 lambda: prom.query(f'sum(trainjob_worker_restarts_total{{job="{JOB}",namespace="{ns}"}}) >= 1')
                 and prom.query(f'sum(trainjob_stalled_total{{job="{JOB}",namespace="{ns}"}}) >= 1'),
                 timeout=30)
        kubectl("delete", "tj", "stuck", "-n", ns)
        yield ns
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", check=False)


def wait_for_data(prom, expr, timeout=30):
    """The query's result once it has a sample (a rate needs two scrapes in its window)."""
    deadline = time.monotonic() + timeout
    while True:
        result = prom.query(expr)
        if result or time.monotonic() > deadline:
            return result
        time.sleep(1)


def assert_every_dashboard_query_returns_data(prom):
    queries = dashboard_queries()
    assert len(queries) >= 20
    empty = [(title, expr) for title, expr in queries if not wait_for_data(prom, expr, timeout=10)]
    assert not empty, "dashboard queries without data:\n" + "\n".join(f"  {t}: {e}" for t, e in empty)


def assert_every_alert_reads_series_that_exist(prom):
    missing = []
    for rule in alerts():
        prom.query(rule["expr"])  # a valid expression, whether or not it fires now
        found = selectors(rule["expr"])
        assert found, rule["alert"]
        for sel in found:
            if not wait_for_data(prom, sel, timeout=10):
                missing.append(f"  {rule['alert']}: {sel}")
    assert not missing, "alert selectors without data:\n" + "\n".join(missing)


def assert_every_rule_evaluates_without_error(prom):
    names = {r["alert"] for r in alerts()}

    def evaluated():
        rules = [r for g in prom.api("rules")["groups"] for r in g["rules"]]
        return {r["name"] for r in rules if r.get("lastEvaluation", "").startswith("20")} >= names and rules

    rules = wait_for("every rule to be evaluated", evaluated, timeout=30)
    bad = [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]
    assert not bad, bad
