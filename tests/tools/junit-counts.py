#!/usr/bin/env python3
"""The counts of a JUnit XML report, for scripts/test.sh: what passed, failed and was skipped,
which tests failed and why, and which suites skipped tests and why, so that no failure or
skip goes unseen.

    junit-counts.py REPORT [DIR [RERUN]]
    junit-counts.py --failed REPORT [DIR]
    junit-counts.py --self-test

The first line is "<passed> <failed> <skipped>"; then one line per test that failed,
"failed\t<test>\t<why>", one per test that failed and then passed in RERUN (a report of
those tests run once more), "flaky\t<test>\t<why it failed first>", which counts as passed,
and one per suite that skipped, "skipped\t<suite>\t<count>\t<why>". A test is named as
pytest names it ("tests/e2e/test_mpi.py::test_b[x]") when its file is found under DIR,
else by its classname and name; a why is the first line of the failure's message, cut to
200 characters. --failed prints the names of the tests that failed, one a line, to run
them again. Both pytest's reports (--junitxml) and meson's
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


def test_id(case, root):
    """pytest's node id of the testcase ("dir/test_x.py::Class::test_y[p]") when its file
    is under root, else "<classname>::<name>"."""
    classname = [p for p in (case.get("classname") or "").split(".") if p]
    name = case.get("name") or "?"
    for i in range(len(classname), 0, -1):
        path = os.path.join(*classname[:i]) + ".py"
        for candidate in (path, os.path.join(root, os.path.basename(path))):
            if os.path.isfile(candidate):
                return "::".join([os.path.normpath(candidate), *classname[i:], name])
    return "::".join([".".join(classname) or "?", name])


def failure_of(case):
    """The <failure> or <error> of a testcase, or None."""
    found = case.find("failure")
    return found if found is not None else case.find("error")


def first_line(failure):
    text = (failure.get("message") or failure.text or "").strip()
    line = text.splitlines()[0] if text else "no message"
    return line if len(line) <= 200 else line[:197] + "..."


def why_of(case, skipped):
    why = (skipped.get("message") or skipped.text or case.findtext("system-out") or "").strip()
    if why.startswith("Skipped: "):
        why = why[len("Skipped: "):]
    return " ".join(why.split())


def counts(tree, root=".", rerun=None):
    """(passed, failed, skipped, {suite: (count, [reasons])}, [(test, why)] failed,
    [(test, why)] flaky) of a parsed report; a test that failed in it and passed in the
    parsed report rerun is flaky and counts as passed."""
    passed = failed = skipped = 0
    suites = {}
    failures, flakes = [], []
    passed_again = set()
    if rerun is not None:
        passed_again = {test_id(c, root) for c in rerun.iter("testcase")
                        if failure_of(c) is None and c.find("skipped") is None}
    for case in tree.iter("testcase"):
        failure = failure_of(case)
        if failure is not None:
            test = test_id(case, root)
            if test in passed_again:
                passed += 1
                flakes.append((test, first_line(failure)))
            else:
                failed += 1
                failures.append((test, first_line(failure)))
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
    return passed, failed, skipped, suites, failures, flakes


def report(tree, root=".", rerun=None):
    passed, failed, skipped, suites, failures, flakes = counts(tree, root, rerun)
    lines = [f"{passed} {failed} {skipped}"]
    lines += [f"failed\t{test}\t{why}" for test, why in failures]
    lines += [f"flaky\t{test}\t{why}" for test, why in flakes]
    for suite, (n, reasons) in suites.items():
        why = reasons[0] if reasons else "no reason given"
        if len(reasons) > 1:
            why += f" (and {len(reasons) - 1} other reason{'s' if len(reasons) > 2 else ''})"
        lines.append(f"skipped\t{suite}\t{n}\t{why}")
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
        e2e = os.path.join(d, "e2e")
        mpi = os.path.join(e2e, "test_mpi.py")
        got = report(ET.ElementTree(pytest), e2e)
        want = "\n".join([
            "1 2 3",
            f"failed\t{mpi}::test_b\tx",
            f"failed\t{mpi}::test_c\ty",
            f"skipped\t{os.path.join(e2e, 'test_kueue.py')}\t2\tthe cluster does not run Kueue",
            f"skipped\t{mpi}\t1\tneeds TJC_E2E_DISRUPTIVE=1",
        ])
        assert got == want, (got, want)
        assert failed_tests(ET.ElementTree(pytest), e2e) == [f"{mpi}::test_b", f"{mpi}::test_c"]
        # A rerun of the two that failed: test_b passes (a flake, counted as passed), test_c
        # fails again; a test the rerun skipped or did not run stays failed.
        rerun = ET.fromstring(
            '<testsuites><testsuite name="pytest" tests="2" failures="1">'
            '<testcase classname="test_mpi" name="test_b"/>'
            '<testcase classname="test_mpi" name="test_c"><failure message="y again"/></testcase>'
            "</testsuite></testsuites>")
        got = report(ET.ElementTree(pytest), e2e, ET.ElementTree(rerun)).splitlines()
        assert got[:3] == ["2 1 3", f"failed\t{mpi}::test_c\ty", f"flaky\t{mpi}::test_b\tx"], got
        # A class's test and a parametrized one, a long message cut to its first line.
        cases = ET.fromstring(
            '<testsuites><testsuite name="pytest">'
            '<testcase classname="test_mpi.TestLauncher" name="test_ssh[a-b]">'
            '<failure message="' + "z" * 300 + '&#10;second line"/></testcase>'
            "</testsuite></testsuites>")
        got = report(ET.ElementTree(cases), e2e).splitlines()
        assert got == ["0 1 0", f"failed\t{mpi}::TestLauncher::test_ssh[a-b]\t{'z' * 197}..."], got
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
    want = ("1 0 3\nskipped\ttjc.test_plan\t2\tno GPU here (and 1 other reason)\n"
            "skipped\ttjc.test_http\t1\tno reason given")
    assert got == want, (got, want)
    print("junit-counts: self-test passed")


def failed_tests(tree, root="."):
    """The names of the tests of a parsed report that failed."""
    return [test_id(c, root) for c in tree.iter("testcase") if failure_of(c) is not None]


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
        return 0
    if args[:1] == ["--failed"] and len(args) in (2, 3):
        print("\n".join(failed_tests(ET.parse(args[1]), args[2] if len(args) == 3 else ".")))
        return 0
    if len(args) not in (1, 2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    rerun = ET.parse(args[2]) if len(args) == 3 else None
    print(report(ET.parse(args[0]), args[1] if len(args) >= 2 else ".", rerun))
    return 0


if __name__ == "__main__":
    sys.exit(main())
