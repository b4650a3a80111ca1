"""/metrics for those who may read it (docs/sre.md, "Scraping the metrics"): with --metrics-secure
(the default in cluster) the metrics server speaks HTTPS, asks the API server who each
request's bearer token belongs to (TokenReview) and whether that user may get /metrics
(SubjectAccessReview), and answers 401 without a valid token and 403 without the permission,
as controller-runtime's metrics filter does. The probes stay plain HTTP and open.

The controller runs as a process with the kubeconfig's credentials for the reviews; the
scrapers are ServiceAccounts with tokens from `kubectl create token`, and the permission is
the ClusterRole deploy/base ships (trainjob-controller-metrics-reader)."""

import hashlib
import http.client
import os
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
import uuid

import pytest

from conftest import Controller
from kube import kubectl, wait_for
from scrapers import READER_ROLE, READER_ROLE_NAME, Scraper, make_pair, scrape


@pytest.fixture(scope="module")
def module_namespace():
    name = "e2e-mauth-" + uuid.uuid4().hex[:6]
    kubectl("create", "namespace", name)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="module")
def reader_role():
    kubectl("apply", "-f", READER_ROLE)
    yield READER_ROLE_NAME


@pytest.fixture(scope="module")
def secure(crds, module_namespace):
    """A controller with the HTTPS metrics on and a self-signed certificate, watching only
    the module's namespace so that it stays out of the other suites' jobs."""
    c = Controller("--metrics-secure", f"--namespace={module_namespace}").start()
    yield c
    c.stop()


@pytest.fixture
def scrapers(module_namespace):
    made = []

    def make(name):
        s = Scraper(module_namespace, name + "-" + uuid.uuid4().hex[:4])
        made.append(s)
        return s

    yield make
    for s in made:
        s.unbind()


def can_reach(port, token, want, timeout=30):
    """Waits until a scrape answers want: an RBAC change reaches the API server's authorizer
    a moment after the write (it reads its own informer's copy)."""
    wait_for(f"a scrape to answer {want}", lambda: scrape(port, token)[0] == want, timeout=timeout)


def test_anonymous_and_invalid_tokens_get_401(secure):
    assert scrape(secure.metrics_port) == (401, "Unauthorized\n")
    assert scrape(secure.metrics_port, token="not-a-token") == (401, "Unauthorized\n")
    # An unknown path is refused the same way: nothing is told to who has no valid token.
    assert scrape(secure.metrics_port, path="/debug")[0] == 401
    # A scheme other than Bearer is no token.
    req = urllib.request.Request(f"https://127.0.0.1:{secure.metrics_port}/metrics")
    req.add_header("Authorization", "Basic dXNlcjpwYXNz")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10, context=ssl._create_unverified_context())
    assert e.value.code == 401


def test_token_without_the_permission_gets_403(secure, scrapers):
    s = scrapers("nobody")
    status, body = scrape(secure.metrics_port, s.token())
    assert status == 403
    assert body == f"Authorization denied for user system:serviceaccount:{s.namespace}:{s.name}\n"


def test_token_bound_to_metrics_reader_gets_the_metrics(secure, scrapers, reader_role):
    s = scrapers("prometheus")
    s.bind(reader_role)
    token = s.token()
    can_reach(secure.metrics_port, token, 200)
    status, body = scrape(secure.metrics_port, token)
    assert status == 200
    assert "# TYPE workqueue_depth gauge" in body
    assert 'controller_runtime_reconcile_total{controller="trainjob",result="success"}' in body
    # The permission is get on /metrics, and the verb is the method: HEAD is not get.
    assert scrape(secure.metrics_port, token, method="HEAD")[0] == 403
    assert scrape(secure.metrics_port, token, path="/other")[0] == 403


def test_answers_are_cached_allow_5_minutes_deny_30_seconds(secure, scrapers, reader_role):
    """A scrape every 15 s costs no review while the answer is cached: a revoked binding
    still lets the scraper in (controller-runtime keeps an allow 5 minutes), a new one does
    not yet let a refused scraper in, until its deny (30 s) expires."""
    allowed = scrapers("allowed")
    allowed.bind(reader_role)
    token = allowed.token()
    can_reach(secure.metrics_port, token, 200)
    allowed.unbind()
    time.sleep(3)  # well past the authorizer's own informer lag
    assert scrape(secure.metrics_port, token)[0] == 200

    refused = scrapers("refused")
    late = refused.token()
    assert scrape(secure.metrics_port, late)[0] == 403
    denied_at = time.monotonic()
    refused.bind(reader_role)
    time.sleep(3)
    assert scrape(secure.metrics_port, late)[0] == 403, "a deny is kept 30 s"
    can_reach(secure.metrics_port, late, 200, timeout=60)
    assert time.monotonic() - denied_at >= 29


def test_plain_http_is_not_served_on_the_secure_port(secure):
    with pytest.raises((OSError, http.client.HTTPException)):
        with urllib.request.urlopen(f"http://127.0.0.1:{secure.metrics_port}/metrics", timeout=5) as r:
            r.read()


def test_probes_stay_plain_and_open(secure):
    assert secure.get("/healthz", secure.probe_port) == 200
    assert secure.get("/readyz", secure.probe_port) == 200


def test_self_signed_certificate_names_localhost(secure):
    pem = ssl.get_server_certificate(("127.0.0.1", secure.metrics_port))
    text = subprocess.run(["openssl", "x509", "-noout", "-text"], input=pem, capture_output=True,
                          text=True, check=True).stdout
    assert "DNS:localhost" in text and "IP Address:127.0.0.1" in text
    assert "Issuer: CN" in text and "ASN1 OID: prime256v1" in text


def served_fingerprint(port):
    der = ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate(("127.0.0.1", port)))
    return hashlib.sha256(der).hexdigest()


def file_fingerprint(path):
    with open(path) as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


def test_certificate_from_files_is_verified_and_reloaded(crds, module_namespace, scrapers, reader_role, tmp_path):
    certs = tmp_path / "certs"
    certs.mkdir()
    first = make_pair(str(certs), "first")
    c = Controller("--metrics-secure", f"--metrics-cert-path={certs}",
                   f"--namespace={module_namespace}").start()
    try:
        s = scrapers("verifier")
        s.bind(reader_role)
        token = s.token()
        # A client that trusts only this certificate gets through: chain and name check.
        keep = str(tmp_path / "first.crt")
        shutil.copy(first, keep)
        wait_for("a verified scrape", lambda: scrape(c.metrics_port, token, cafile=keep)[0] == 200, timeout=30)
        assert served_fingerprint(c.metrics_port) == file_fingerprint(keep)

        second = make_pair(str(certs), "second")
        want = file_fingerprint(second)
        wait_for("the new certificate to be served", lambda: served_fingerprint(c.metrics_port) == want,
                 timeout=30)
        assert scrape(c.metrics_port, token, cafile=second)[0] == 200
        # The old certificate is no longer what the server presents.
        with pytest.raises(urllib.error.URLError) as refused:
            scrape(c.metrics_port, token, cafile=keep)
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError), refused.value
        assert "reloaded the serving certificate" in c.log()
    finally:
        c.stop()


def test_unusable_certificate_files_stop_the_start(crds, tmp_path):
    (tmp_path / "tls.crt").write_text("not a certificate\n")
    (tmp_path / "tls.key").write_text("not a key\n")
    binary = Controller().binary
    r = subprocess.run([binary, "--kubeconfig", os.environ["KUBECONFIG"], "--metrics-secure",
                        f"--metrics-cert-path={tmp_path}", "--metrics-bind-address=127.0.0.1:0",
                        "--health-probe-bind-address=127.0.0.1:0"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "no usable serving certificate" in r.stdout + r.stderr
    assert "the certificate does not parse" in r.stdout + r.stderr
