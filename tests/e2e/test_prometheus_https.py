"""Prometheus scrapes the controller as the shipped ServiceMonitor does in a cluster: over
HTTPS, trusting the serving certificate, with the bearer token of a ServiceAccount bound to
deploy/base's metrics reader ClusterRole, and the controller reviews that token
(TokenReview, SubjectAccessReview on /metrics) as it does in cluster (--metrics-secure).
Over that scrape, every dashboard panel's query and every alert's selectors find data, as in
test_prometheus.py's plain scrape. Two more scrape jobs of the same Prometheus are refused:
one with the token of a ServiceAccount without the role (403), one without a token (401).

The serving certificate is a file pair, as the Secret volume of a Deployment gives it; the
scrape job trusts that certificate (it is its own issuer)."""

import shutil
import uuid

import pytest

from conftest import Controller
from kube import kubectl, wait_for
from monitoring import (JOB, Prometheus, assert_every_alert_reads_series_that_exist,
                        assert_every_dashboard_query_returns_data, assert_every_rule_evaluates_without_error,
                        controller_args, monitored_jobs)
from scrapers import READER_ROLE, READER_ROLE_NAME, Scraper, make_pair, scrape

UNAUTHORISED = "e2e-metrics-unauthorised"
ANONYMOUS = "e2e-metrics-anonymous"


def https_scrape(job, target, ca_file, token_file=None):
    """A scrape job as the ServiceMonitor's endpoint becomes one: scheme https, the
    certificate's issuer trusted, and the token file as the Authorization credentials."""
    config = {
        "job_name": job,
        "scheme": "https",
        "tls_config": {"ca_file": ca_file},
        "static_configs": [{"targets": [target]}],
    }
    if token_file:
        config["authorization"] = {"type": "Bearer", "credentials_file": token_file}
    return config


@pytest.fixture(scope="module")
def monitored(session_controller_aside, crds, tmp_path_factory):
    assert shutil.which("prometheus"), "prometheus is not installed: run scripts/install-deps.sh"
    ns = "e2e-promtls-" + uuid.uuid4().hex[:6]
    work = tmp_path_factory.mktemp("prometheus-https")
    certs = work / "certs"
    certs.mkdir()
    ca_file = make_pair(str(certs), "trainjob-controller-metrics")
    kubectl("create", "namespace", ns)
    kubectl("apply", "-f", READER_ROLE)
    reader, nobody = Scraper(ns, "prometheus"), Scraper(ns, "nobody")
    reader.bind(READER_ROLE_NAME)
    tokens = {}
    for who in (reader, nobody):
        tokens[who.name] = str(work / f"{who.name}.token")
        with open(tokens[who.name], "w") as f:
            f.write(who.token(duration="1h"))
    c = prom = None
    try:
        c = Controller(*controller_args(), "--metrics-secure", f"--metrics-cert-path={certs}").start()
        # The binding reaches the API server's authorizer a moment after it is written.
        with open(tokens[reader.name]) as f:
            token = f.read()
        wait_for("the reader's token to be let in",
                 lambda: scrape(c.metrics_port, token, cafile=ca_file)[0] == 200, timeout=30)
        target = f"127.0.0.1:{c.metrics_port}"
        prom = Prometheus([
            https_scrape(JOB, target, ca_file, tokens[reader.name]),
            https_scrape(UNAUTHORISED, target, ca_file, tokens[nobody.name]),
            https_scrape(ANONYMOUS, target, ca_file),
        ])
        yield c, prom
    finally:
        if prom:
            prom.stop()
        if c:
            c.stop()
        reader.unbind()
        kubectl("delete", "namespace", ns, "--wait=false", check=False)


@pytest.fixture(scope="module")
def jobs_ran(monitored):
    with monitored_jobs(monitored[1]) as ns:
        yield ns


def test_the_reader_scrapes_over_https(monitored):
    _, prom = monitored
    target = prom.target(JOB)
    assert target["scrapeUrl"].startswith("https://")
    assert (target["health"], target["lastError"]) == ("up", "")
    assert prom.query(f'up{{job="{JOB}"}} == 1')
    assert prom.query(f'controller_runtime_reconcile_total{{job="{JOB}",controller="trainjob"}}')


def test_a_token_without_the_role_is_refused_403(monitored):
    _, prom = monitored
    target = prom.target(UNAUTHORISED)
    assert target["health"] == "down"
    assert "403" in target["lastError"], target["lastError"]
    assert prom.query(f'up{{job="{UNAUTHORISED}"}} == 0')
    assert not prom.query(f'workqueue_depth{{job="{UNAUTHORISED}"}}')


def test_no_token_is_refused_401(monitored):
    _, prom = monitored
    target = prom.target(ANONYMOUS)
    assert target["health"] == "down"
    assert "401" in target["lastError"], target["lastError"]
    assert prom.query(f'up{{job="{ANONYMOUS}"}} == 0')
    assert not prom.query(f'workqueue_depth{{job="{ANONYMOUS}"}}')


def test_every_dashboard_query_returns_data_over_https(monitored, jobs_ran):
    assert_every_dashboard_query_returns_data(monitored[1])


def test_every_alert_expression_reads_series_over_https(monitored, jobs_ran):
    assert_every_alert_reads_series_that_exist(monitored[1])


def test_prometheus_evaluates_every_rule_over_https(monitored, jobs_ran):
    assert_every_rule_evaluates_without_error(monitored[1])

