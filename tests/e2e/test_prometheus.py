"""What deploy/monitoring promises, against a real Prometheus: Debian's prometheus server
scrapes a controller of this module's own (on the loopback, plain HTTP, as out of a cluster)
while TrainJobs run, one of which fails and restarts. Then every query of every panel of the
dashboard, and every selector of every alert's expression, must return data from that live
scrape; so a metric renamed or dropped in the controller, or misspelt in the dashboard or the
rules, fails here rather than leaving an empty panel or an alert that can never fire. The
alert rules are loaded into the same Prometheus, which must evaluate each without error.

The module's controller has a one-second restart backoff and leader election on (the lease
the alerts watch, trainjob-controller, in namespace default); the session's controller steps
aside meanwhile."""

import json
import os
import shutil
import subprocess

import pytest
import yaml

from conftest import Controller
from kube import REPO, kubectl, wait_for
from monitoring import (JOB, MONITORING, Prometheus, assert_every_alert_reads_series_that_exist,
                        assert_every_dashboard_query_returns_data, assert_every_rule_evaluates_without_error,
                        controller_args, monitor_endpoints, monitored_jobs, plain_scrape, selectors)


def test_selectors_of_an_expression():
    """The reader of expressions the live checks rely on."""
    assert selectors('absent(up{job="a"} == 1)') == ['up{job="a"}']
    assert selectors('sum by (namespace) (increase(x_total{a="}"}[30m])) > 3') == ['x_total{a="}"}']
    assert selectors('(sum by (c) (g{s="capacity"}) == 0) and on (c) (sum by (c) (q) > 0)') == \
        ['g{s="capacity"}', "q"]
    assert selectors("histogram_quantile(0.9, sum by (le) (rate(h_bucket[1h]))) > 1e-9") == ["h_bucket"]
    assert selectors("max(a) / clamp_min(sum(b offset 5m), 1)") == ["a", "b"]
    assert selectors("sum without (x) (a) + sum(b) by (y)") == ["a", "b"]
    assert selectors('sum by (s) (max by (n, c, s) (j{s=~"a|b"}))') == ['j{s=~"a|b"}']


@pytest.fixture(scope="module")
def monitored(session_controller_aside):
    assert shutil.which("prometheus"), "prometheus is not installed: run scripts/install-deps.sh"
    c = Controller(*controller_args()).start()
    prom = None
    try:
        prom = Prometheus([plain_scrape(f"127.0.0.1:{c.metrics_port}")])
        yield c, prom
    finally:
        if prom:
            prom.stop()
        c.stop()


@pytest.fixture(scope="module")
def jobs_ran(monitored, crds):
    with monitored_jobs(monitored[1]) as ns:
        yield ns


def test_every_dashboard_query_returns_data(monitored, jobs_ran):
    assert_every_dashboard_query_returns_data(monitored[1])


def test_every_alert_expression_reads_series_that_exist(monitored, jobs_ran):
    assert_every_alert_reads_series_that_exist(monitored[1])


def test_prometheus_evaluates_every_rule_without_error(monitored, jobs_ran):
    assert_every_rule_evaluates_without_error(monitored[1])


def test_the_monitoring_component_renders_in_the_overlay():
    out = subprocess.run(["kubectl", "kustomize", os.path.join(REPO, "deploy", "overlays", "flame-monitoring")],
                         check=True, capture_output=True, text=True).stdout
    objs = [o for o in yaml.safe_load_all(out) if o]
    kinds = {(o["kind"], o["metadata"]["name"]) for o in objs}
    assert {("ServiceMonitor", "trainjob-controller"), ("PrometheusRule", "trainjob-controller"),
            ("ConfigMap", "trainjob-controller-dashboard"), ("Deployment", "trainjob-controller")} <= kinds
    board = next(o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "trainjob-controller-dashboard")
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    with open(os.path.join(MONITORING, "dashboard.json")) as f:
        assert json.loads(board["data"]["trainjob-controller.json"]) == json.load(f)
    monitor = next(o for o in objs if o["kind"] == "ServiceMonitor")
    endpoint = monitor["spec"]["endpoints"][0]
    assert endpoint["scheme"] == "https" and endpoint["port"] == "metrics"
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    service = next(o for o in objs if o["kind"] == "Service" and o["metadata"]["name"] == JOB)
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()


def test_job_gpus_count_the_running_gang(monitored, jobs_ran):
    """The crashed job's second attempt runs whole: its 2 x 4 GH200 GPUs are requested and
    running, under its namespace, and none of them idles."""
    _, prom = monitored
    ns = jobs_ran

    def value(state):
        r = prom.query(f'sum(trainjob_job_gpus{{job="{JOB}",namespace="{ns}",gpu_class="gh200",state="{state}"}})')
        return float(r[0]["value"][1]) if r else None

    wait_for("the running gang in trainjob_job_gpus",
             lambda: value("requested") == value("running") == 8, timeout=30)
    assert value("idle") == 0


def test_jobs_by_namespace_and_class(monitored, jobs_ran):
    """trainjob_jobs counts the module's jobs under their namespace and the class of their
    runtime (torch-gh200), every state there, at 0 where no job is."""
    _, prom = monitored
    ns = jobs_ran

    def states():
        r = prom.query(f'trainjob_jobs{{job="{JOB}",namespace="{ns}"}}')
        return {(s["metric"]["gpu_class"], s["metric"]["state"]): float(s["value"][1]) for s in r}

    want = {("gh200", st): 0.0 for st in ("Pending", "Queued", "Running", "Restarting", "Suspended",
                                          "Complete", "Failed")}
    want[("gh200", "Running")] = want[("gh200", "Complete")] = 1.0
    wait_for("the module's jobs in trainjob_jobs", lambda: states() == want, timeout=30)


def test_queue_jobs_by_namespace_class_and_reason(monitored, jobs_ran):
    """trainjob_queue_jobs has the module's namespace and class with every reason to wait, at
    0 as none of its jobs waits; a series of the controller's own (workqueue_depth) keeps the
    namespace of the controller's pod, which the scrape adds."""
    _, prom = monitored
    ns = jobs_ran

    def reasons():
        r = prom.query(f'trainjob_queue_jobs{{job="{JOB}",namespace="{ns}"}}')
        return {(s["metric"]["gpu_class"], s["metric"]["reason"]): float(s["value"][1]) for s in r}

    want = {("gh200", r): 0.0 for r in ("Resources", "Priority", "QuotaExceeded", "NeverFits", "QOSMaxGRESPerNamespace",
                                      "JobHeldUser", "Dependency", "Preempted", "Requeued")}
    wait_for("the module's namespace in trainjob_queue_jobs", lambda: reasons() == want, timeout=30)
    own = prom.query(f'workqueue_depth{{job="{JOB}"}}')
    assert own and {s["metric"]["namespace"] for s in own} == {"trainjob-system"}


def test_both_monitors_keep_the_jobs_namespace_label():
    """The ServiceMonitor and the PodMonitor honour the series' labels: their namespace is the
    TrainJobs', not renamed to make room for the controller pod's."""
    found = monitor_endpoints()
    assert set(found) == {"ServiceMonitor", "PodMonitor"}
    for kind, endpoints in found.items():
        assert all(e.get("honorLabels") is True for e in endpoints), kind


def test_a_namespace_without_jobs_has_no_job_series(monitored, jobs_ran):
    """Once the namespace's TrainJobs and their pods are gone, the gauges of the namespace are
    gone from the scrape, not left at 0 (its counters stay for the grace period)."""
    c, _ = monitored
    ns = jobs_ran
    assert f'namespace="{ns}"' in c.metrics()
    kubectl("delete", "trainjobs", "--all", "-n", ns, "--wait=true", "--timeout=60s")

    def gauges_gone():
        lines = [line for line in c.metrics().splitlines() if f'namespace="{ns}"' in line]
        if any(line.startswith(("trainjob_jobs{", "trainjob_job_gpus{")) for line in lines):
            return None
        return lines or ["(no series of the namespace left)"]

    left = wait_for("the namespace's gauges to go", gauges_gone, timeout=60)
    assert any(line.startswith("trainjob_worker_restarts_total{") for line in left), left
