#!/usr/bin/env python3
"""The counts of a JUnit XML report, for scripts/test.sh: what passed, failed and was skipped,
and which suites skipped tests and why, so that no skip goes unseen.

    junit-counts.py REPORT [DIR]
    junit-counts.py --self-test

The first line is "<passed> <failed> <skipped>"; then one line per suite that skipped,
"<suite>\t<count>\t<why>". Both pytest's reports (--junitxml) and meson's
(meson-logs/<logbase>.junit.xml, one testcase per TAP subtest) are read: a testcase with a
<failure> or <error> failed, one with <skipped> was skipped, any other passed. A suite is the
test file when the testcase's classname names one under DIR (pytest's
"test_kueue" -> DIR/test_kueue.py), else meson's "<project>.<test>" (the classname of a TAP
subtest; a whole program's is the project, to which its name is added). The why is the skip's message (pytest's reason) or the
testcase's output (a TAP "# SKIP" explanation); a suite whose tests skipped for several
reasons shows the first and how many others."""
import os
import sys
import xml.etree.ElementTree as ET


def suite_of(case, root):
    """The file the testcase is in, under root, or its classname."""
    classname = case.get("classname") or ""
    parts = [p for p in (classname + "." + (case.get("name") or "")).split(".") if p]
    for i in range(len(parts), 0, -1):
        for base in (root, ""):
            path = os.path.join(base, *parts[:i]) + ".py" if base else "/".join(parts[:i]) + ".py"
            if os.path.isfile(path):
                return os.path.normpath(path)
    # meson: "<project>.<test>" for a TAP subtest, the project alone for a whole program.
    if "." in classname:
        return classname
    return ".".join(p for p in (classname, case.get("name")) if p) or "?"


def why_of(case, skipped):
    why = (skipped.get("message") or skipped.text or case.findtext("system-out") or "").strip()
    if why.startswith("Skipped: "):
        why = why[len("Skipped: "):]
    return " ".join(why.split())


def counts(tree, root="."):
    """(passed, failed, skipped, {suite: (count, [reasons])}) of a parsed report."""
    passed = failed = skipped = 0
    suites = {}
    for case in tree.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            continue
        skip = case.find("skipped")
        if skip is None:
            passed += 1
            continue
        skipped += 1
        n, reasons = suites.get(suite_of(case, root), (0, []))
        why = why_of(case, skip)
        if why and why not in reasons:
            reasons.append(why)
        suites[suite_of(case, root)] = (n + 1, reasons)
    return passed, failed, skipped, suites


def report(tree, root="."):
    passed, failed, skipped, suites = counts(tree, root)
    lines = [f"{passed} {failed} {skipped}"]
    for suite, (n, reasons) in suites.items():
        why = reasons[0] if reasons else "no reason given"
        if len(reasons) > 1:
            why += f" (and {len(reasons) - 1} other reason{'s' if len(reasons) > 2 else ''})"
        lines.append(f"{suite}\t{n}\t{why}")
    return "\n".join(lines)


def self_test():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "e2e"))
        for name in ("test_kueue", "test_mpi"):
            open(os.path.join(d, "e2e", name + ".py"), "w").close()
        pytest = ET.fromstring(
            '<testsuites><testsuite name="pytest" tests="6" failures="1" errors="1" skipped="3">'
            '<testcase classname="test_mpi" name="test_a"/>'
            '<testcase classname="test_mpi" name="test_b"><failure message="x"/></testcase>'
            '<testcase classname="test_mpi" name="test_c"><error message="y"/></testcase>'
            '<testcase classname="test_kueue" name="test_d"><skipped type="pytest.skip" '
            'message="the cluster does not run Kueue"/></testcase>'
            '<testcase classname="test_kueue" name="test_e"><skipped message="the cluster does '
            'not run Kueue"/></testcase>'
            '<testcase classname="test_mpi" name="test_f"><skipped message="Skipped: needs\n'
            '  TJC_E2E_DISRUPTIVE=1"/></testcase>'
            "</testsuite></testsuites>")
        got = report(ET.ElementTree(pytest), os.path.join(d, "e2e"))
        want = "\n".join([
            "1 2 3",
            f"{os.path.join(d, 'e2e', 'test_kueue.py')}\t2\tthe cluster does not run Kueue",
            f"{os.path.join(d, 'e2e', 'test_mpi.py')}\t1\tneeds TJC_E2E_DISRUPTIVE=1",
        ])
        assert got == want, (got, want)
    # meson: a testsuite per program, a testcase per TAP subtest, a skipped program alone.
    meson = ET.fromstring(
        '<testsuites><testsuite name="tjc.test_plan" tests="3" skipped="1">'
        '<testcase classname="tjc.test_plan" name="1 a"/>'
        '<testcase classname="tjc.test_plan" name="2 b"><skipped/>'
        "<system-out>no GPU here</system-out></testcase>"
        '<testcase classname="tjc.test_plan" name="3 c"><skipped/>'
        "<system-out>no network</system-out></testcase>"
        '</testsuite><testsuite name="tjc" tests="1" skipped="1">'
        '<testcase classname="tjc" name="test_http"><skipped/></testcase>'
        "</testsuite></testsuites>")
    got = report(ET.ElementTree(meson), "/nonexistent")
    want = "1 0 3\ntjc.test_plan\t2\tno GPU here (and 1 other reason)\ntjc.test_http\t1\tno reason given"
    assert got == want, (got, want)
    print("junit-counts: self-test passed")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    print(report(ET.parse(sys.argv[1]), sys.argv[2] if len(sys.argv) == 3 else "."))
    return 0


if __name__ == "__main__":
    sys.exit(main())
