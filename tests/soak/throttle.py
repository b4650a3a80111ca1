"""API Priority and Fairness against the controller: its replicas run as a ServiceAccount of
their own (the cluster's admin certificate is in system:masters, which APF exempts), and the
throttle fault puts that user into a priority level with no seats, so that every request it
sends meanwhile is answered 429 Too Many Requests, as an overloaded API server answers."""

import json
import os

import yaml

from kube import apply, kubectl

USER = "trainjob-soak"
LEVEL = "trainjob-soak-starved"


def controller_kubeconfig(namespace, path):
    """A kubeconfig for the controller's own ServiceAccount (bound to cluster-admin: the
    soak is about faults, not RBAC), next to KUBECONFIG's cluster; returns its path."""
    kubectl("create", "serviceaccount", USER, "-n", namespace)
    kubectl("create", "clusterrolebinding", USER, "--clusterrole=cluster-admin",
            f"--serviceaccount={namespace}:{USER}")
    token = kubectl("create", "token", USER, "-n", namespace, "--duration=24h").stdout.strip()
    with open(os.environ["KUBECONFIG"]) as f:
        admin = yaml.safe_load(f)
    ctx = next(c for c in admin["contexts"] if c["name"] == admin["current-context"])["context"]
    cluster = next(c for c in admin["clusters"] if c["name"] == ctx["cluster"])
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [cluster],
        "users": [{"name": USER, "user": {"token": token}}],
        "contexts": [{"name": USER, "context": {"cluster": cluster["name"], "user": USER}}],
        "current-context": USER,
    }
    with open(path, "w") as f:
        yaml.safe_dump(config, f)
    # The priority level the throttle moves the user to: no seats of its own, none to
    # borrow, and requests beyond that rejected at once rather than queued.
    apply({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "PriorityLevelConfiguration",
        "metadata": {"name": LEVEL},
        "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 0, "lendablePercent": 0, "borrowingLimitPercent": 0,
            "limitResponse": {"type": "Reject"}}},
    })
    return path


def flow_schema(namespace):
    return {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
        "kind": "FlowSchema",
        "metadata": {"name": USER},
        "spec": {
            "priorityLevelConfiguration": {"name": LEVEL},
            "matchingPrecedence": 100,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{
                "subjects": [{"kind": "ServiceAccount", "serviceAccount": {"name": USER, "namespace": namespace}}],
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                   "clusterScope": True, "namespaces": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            }],
        },
    }


def throttle_on(namespace):
    apply(json.dumps(flow_schema(namespace)))


def throttle_off():
    kubectl("delete", "flowschema", USER, "--ignore-not-found", check=False, timeout=20)
