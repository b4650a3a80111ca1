"""Who scrapes the HTTPS metrics in the e2e modules: ServiceAccounts with tokens from
`kubectl create token`, bound to deploy/base's metrics reader ClusterRole or not; a client
for one scrape; and serving certificates made with openssl for the controller to load."""

import os
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request

from kube import REPO, kubectl

READER_ROLE = os.path.join(REPO, "deploy", "base", "metrics-reader.yaml")
READER_ROLE_NAME = "trainjob-controller-metrics-reader"


class Scraper:
    """A ServiceAccount of a namespace, bound to the metrics reader ClusterRole or not."""

    def __init__(self, namespace, name):
        self.namespace, self.name = namespace, name
        self.binding = f"e2e-mauth-{namespace}-{name}"
        kubectl("create", "serviceaccount", name, "-n", namespace)

    def token(self, duration="10m"):
        return kubectl("create", "token", self.name, "-n", self.namespace,
                       f"--duration={duration}").stdout.strip()

    def bind(self, role):
        kubectl("create", "clusterrolebinding", self.binding, f"--clusterrole={role}",
                f"--serviceaccount={self.namespace}:{self.name}")

    def unbind(self):
        kubectl("delete", "clusterrolebinding", self.binding, "--ignore-not-found")


def scrape(port, token=None, path="/metrics", method="GET", cafile=None):
    """(status, body) of an HTTPS request to the controller."""
    ctx = ssl.create_default_context(cafile=cafile) if cafile else ssl._create_unverified_context()
    req = urllib.request.Request(f"https://127.0.0.1:{port}{path}", method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def make_pair(directory, cn):
    """A self-signed certificate for 127.0.0.1, as tls.crt and tls.key in directory, written
    the way the kubelet updates a Secret volume (new files renamed into place)."""
    tmp = os.path.join(directory, ".new")
    os.makedirs(tmp, exist_ok=True)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-days", "1", "-subj", f"/CN={cn}", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", os.path.join(tmp, "tls.key"), "-out", os.path.join(tmp, "tls.crt")],
                   check=True, capture_output=True)
    for f in ("tls.crt", "tls.key"):
        os.replace(os.path.join(tmp, f), os.path.join(directory, f))
    shutil.rmtree(tmp)
    return os.path.join(directory, "tls.crt")
