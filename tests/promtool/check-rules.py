#!/usr/bin/env python3
"""Checks the alerts of deploy/monitoring/prometheusrule.yaml with Prometheus's own promtool.

The PrometheusRule is a Kubernetes object; promtool reads plain rule files. This writes its
spec.groups to WORKDIR/trainjob-controller.rules.yaml (so the rules live in one place only),
runs `promtool check rules` on it, and runs the unit tests of rules-test.yaml with each
expected alert given its rule's runbook annotation. It also refuses an alert without a
summary and a runbook, or without a test that fires it and one that keeps it quiet.

Prints one line per check ("ok: ..." or "FAILED: ...") and exits non-zero if any failed.
Usage: check-rules.py WORKDIR"""

import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RULE = os.path.join(REPO, "deploy", "monitoring", "prometheusrule.yaml")
RULES_FILE = "trainjob-controller.rules.yaml"


def alerts_of(groups):
    return {r["alert"]: r for g in groups for r in g["rules"] if "alert" in r}


def annotation_problems(alerts):
    problems = []
    for name, rule in alerts.items():
        ann = rule.get("annotations", {})
        if not ann.get("summary"):
            problems.append(f"{name} has no summary annotation")
        runbook = ann.get("runbook", "")
        if len(runbook) < 80:
            problems.append(f"{name} has no runbook annotation worth the name")
        if "{{" in runbook:
            problems.append(f"{name}'s runbook is a template: keep it plain text")
    return problems


def with_runbooks(tests, alerts):
    """The unit tests with each expected alert's runbook filled in from its rule; and the
    alerts some test fires and some test checks for quiet."""
    fired, quiet = set(), set()
    for test in tests["tests"]:
        for case in test.get("alert_rule_test", []):
            name = case["alertname"]
            if name not in alerts:
                raise SystemExit(f"FAILED: test '{test['name']}' names an unknown alert {name}")
            expected = case.get("exp_alerts") or []
            (fired if expected else quiet).add(name)
            for exp in expected:
                exp.setdefault("exp_annotations", {})["runbook"] = alerts[name]["annotations"]["runbook"]
    return tests, fired, quiet


def run(what, argv):
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stdout + out.stderr)
        print(f"FAILED: {what}")
        return False
    print(f"ok: {what}")
    return True


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    with open(RULE) as f:
        obj = yaml.safe_load(f)
    groups = obj["spec"]["groups"]
    alerts = alerts_of(groups)
    with open(os.path.join(work, RULES_FILE), "w") as f:
        yaml.safe_dump({"groups": groups}, f, sort_keys=False)
    with open(os.path.join(HERE, "rules-test.yaml")) as f:
        tests, fired, quiet = with_runbooks(yaml.safe_load(f), alerts)
    test_path = os.path.join(work, "rules-test.yaml")
    with open(test_path, "w") as f:
        yaml.safe_dump(tests, f, sort_keys=False)

    ok = 0
    failed = 0
    problems = annotation_problems(alerts)
    problems += [f"{a} has no test that fires it" for a in sorted(set(alerts) - fired)]
    problems += [f"{a} has no test that keeps it quiet" for a in sorted(set(alerts) - quiet)]
    for p in problems:
        print(f"FAILED: {p}")
    failed += len(problems)
    if not problems:
        print(f"ok: {len(alerts)} alerts, each with a summary, a runbook, and tests that fire it and keep it quiet")
        ok += 1
    for what, argv in [
        ("promtool check rules", ["promtool", "check", "rules", os.path.join(work, RULES_FILE)]),
        (f"promtool test rules ({len(tests['tests'])} tests)", ["promtool", "test", "rules", test_path]),
    ]:
        if run(what, argv):
            ok += 1
        else:
            failed += 1
    print(f"promtool: {ok} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
