#!/usr/bin/env python3
"""The documentation says what the code does, and its commands run.

Reads the sources of truth from the code and looks each item up in the page where it
belongs, in a code span or a code block:

  config keys       the field lists of controller/config/*.c          docs/operators.md
  controller flags  run_options[] of controller/flags.c                 docs/operators.md
  metrics           TJ_COUNTER/TJ_GAUGE/TJ_HISTOGRAM in controller/   docs/sre.md
                    and its subfolders
  alerts            "- alert:" in deploy/monitoring/prometheusrule.yaml docs/sre.md
  states            state_names[] of reconcilers/trainjob.c           docs/users.md
  reasons           what reconcilers/ writes to status.reason and to
                    events (see reasons() below)                      docs/users.md

Then, in README.md and every page of docs/:

  - every ```sh block parses (bash -n);
  - every repository path it names (scripts/..., deploy/..., tests/..., ...) exists, in
    the sh blocks and in the code spans of the prose;
  - every link to a file of the repository, and its #anchor, exists;
  - every tj_* function or type docs/architecture.md names is in the code.

Prints one line per failure naming the item and the page where it belongs, then
"docs: N passed, M failed"; exits non-zero when anything failed. Standard library only.
Usage: tests/docs/check_docs.py"""

import glob
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOP_DIRS = ("scripts", "deploy", "tests", "examples", "crds", "docs", "base", "kube",
            "informers", "reconcilers", "controller", "cli", ".ci")


def read(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def strip_comments(c_text):
    c_text = re.sub(r"/\*.*?\*/", " ", c_text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", c_text)


def call_args(text, name):
    """The argument lists (as source text) of every call of name in text."""
    calls = []
    for m in re.finditer(r"\b" + name + r"\(", text):
        i, depth, cur, args = m.end(), 1, "", []
        while depth and i < len(text):
            c = text[i]
            if c == '"':
                j = i + 1
                while text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                cur += text[i:j + 1]
                i = j + 1
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            if depth == 1 and c == ",":
                args.append(cur.strip())
                cur = ""
            elif depth:
                cur += c
            i += 1
        args.append(cur.strip())
        calls.append(args)
    return calls


# ---- the sources of truth ----

def config_keys():
    keys = {}
    for path in sorted(glob.glob(os.path.join(REPO, "controller", "config", "*.c"))):
        rel = os.path.relpath(path, REPO)
        text = strip_comments(read(rel))
        for m in re.finditer(r"static const char \*const \w+\[\]\s*=\s*\{(.*?)\};", text, re.S):
            for key in re.findall(r'"([^"]+)"', m.group(1)):
                keys.setdefault(key, rel)
    return keys


def controller_flags():
    text = strip_comments(read("controller/flags.c"))
    block = re.search(r"run_options\[\]\s*=\s*\{(.*?)\n\};", text, re.S).group(1)
    return {flag: "controller/flags.c" for flag in re.findall(r'\{\s*"(--[a-z-]+)"', block)
            if flag not in ("--help", "--version")}


def metrics():
    found = {}
    for path in sorted(glob.glob(os.path.join(REPO, "controller", "**", "*.c"), recursive=True)):
        rel = os.path.relpath(path, REPO)
        for name in re.findall(r'\bTJ_(?:COUNTER|GAUGE|HISTOGRAM)\(\s*"(\w+)"', read(rel)):
            found.setdefault(name, rel)
    return found


def alerts():
    rel = "deploy/monitoring/prometheusrule.yaml"
    return {name: rel for name in re.findall(r"^\s*-\s*alert:\s*(\w+)", read(rel), re.M)}


def states():
    rel = "reconcilers/trainjob.c"
    block = re.search(r"state_names\[\]\s*=\s*\{(.*?)\};", read(rel), re.S).group(1)
    return {s: rel for s in re.findall(r'"(\w+)"', block)}


def reasons():
    """What reconcilers/ writes as a status reason or an event reason: the macros named
    *REASON*, the reason argument of tj_planner_set_state, tj_planner_fail,
    tj_problem_set and tj_planner_event, what is assigned to a .reason, the node faults
    (tj_node_fault_reason) and the classes of a worker's own failure (pod_class)."""
    files = {os.path.relpath(p, REPO): strip_comments(read(os.path.relpath(p, REPO)))
             for p in sorted(glob.glob(os.path.join(REPO, "reconcilers", "**", "*.[ch]"),
                                       recursive=True))}
    macros = {}
    for text in files.values():
        macros.update(re.findall(r"#define\s+(TJ_\w+)\s+\"([^\"]*)\"", text))
    found = {}

    def add(expr, rel):
        for value in re.findall(r'"([A-Z][A-Za-z]+)"', expr):
            found.setdefault(value, rel)
        for macro in re.findall(r"\bTJ_\w+", expr):
            if macro in macros and macros[macro]:
                found.setdefault(macros[macro], rel)

    for rel, text in files.items():
        for macro, value in re.findall(r"#define\s+(TJ_\w*REASON\w*)\s+\"(\w+)\"", text):
            found.setdefault(value, rel)
        for name, index in (("tj_planner_set_state", 2), ("tj_planner_fail", 1),
                            ("tj_problem_set", 1), ("tj_planner_event", 2)):
            for args in call_args(text, name):
                if len(args) > index and not args[0].startswith("struct"):
                    add(args[index], rel)
        for expr in re.findall(r"\.reason\s*=\s*([^;]*);", text):
            add(expr, rel)
        for table in re.findall(r"\[TJ_NODE_\w+\]\s*=\s*\"(\w+)\"", text):
            found.setdefault(table, rel)
        m = re.search(r"static const char \*pod_class\([^)]*\)\s*\{(.*?)\n\}", text, re.S)
        if m:
            for value in re.findall(r'return "(\w+)"', m.group(1)):
                found.setdefault(value, rel)
    return found


# ---- the pages ----

FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)


def code_text(page_text):
    """The code spans and code blocks of a page, joined."""
    blocks = [m.group(2) for m in FENCE.finditer(page_text)]
    prose = FENCE.sub("", page_text)
    return "\n".join(blocks + re.findall(r"`([^`\n]+)`", prose))


def pages():
    paths = ["README.md"] + sorted(os.path.relpath(p, REPO)
                                  for p in glob.glob(os.path.join(REPO, "docs", "*.md")))
    return {p: read(p) for p in paths}


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    text = FENCE.sub("", read(path))
    return {slug(h) for h in re.findall(r"^#+\s+(.*)$", text, re.M)}


PATH_RE = re.compile(r"(?<![\w/.$-])((?:" + "|".join(re.escape(d) for d in TOP_DIRS) +
                     r")/[\w./+*-]*)")


def repo_paths(text):
    for m in PATH_RE.finditer(text):
        path = m.group(1).rstrip(".,:;")
        if "*" in path or "..." in path or text[m.end():m.end() + 1] in ("<", "{", "$"):
            continue
        # kubectl's deploy/NAME is a Deployment, not a folder of the repository.
        line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
        if "kubectl" in line and path.startswith("deploy/") and path.count("/") == 1:
            continue
        yield path


def main():
    failures = []
    passed = 0
    docs = pages()
    for page in ("docs/users.md", "docs/slurm.md", "docs/operators.md", "docs/sre.md",
                 "docs/architecture.md", "docs/testing.md", "docs/benchmarks.md"):
        if page not in docs:
            failures.append(f"{page}: the page is missing")
    code = {p: code_text(t) for p, t in docs.items()}

    checks = [
        ("config key", config_keys(), "docs/operators.md"),
        ("controller flag", controller_flags(), "docs/operators.md"),
        ("metric", metrics(), "docs/sre.md"),
        ("alert", alerts(), "docs/sre.md"),
        ("TrainJob state", states(), "docs/users.md"),
        ("reason", reasons(), "docs/users.md"),
    ]
    for what, items, page in checks:
        text = code.get(page, "")
        if not items:
            failures.append(f"{page}: found no {what} in the code: the checker needs fixing")
        for item, source in sorted(items.items()):
            if re.search(r"(?<![\w-])" + re.escape(item) + r"(?![\w-])", text):
                passed += 1
            else:
                failures.append(f"{page}: {what} {item} ({source}) is not documented")

    for page, text in docs.items():
        for m in FENCE.finditer(text):
            if m.group(1) != "sh":
                continue
            block = m.group(2)
            line = text[:m.start()].count("\n") + 1
            r = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True)
            if r.returncode == 0:
                passed += 1
            else:
                failures.append(f"{page}:{line}: sh block does not parse: "
                                f"{r.stderr.strip().splitlines()[0]}")
        for path in sorted(set(repo_paths(code[page]))):
            if os.path.exists(os.path.join(REPO, path)):
                passed += 1
            else:
                failures.append(f"{page}: names {path}, which does not exist")
        for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", text)):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
            if not os.path.exists(os.path.join(REPO, full)):
                failures.append(f"{page}: links to {target}, which does not exist")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                failures.append(f"{page}: links to {target}, a section {full} does not have")
            else:
                passed += 1

    sources = "\n".join(strip_comments(read(os.path.relpath(p, REPO)))
                        for d in ("base", "kube", "informers", "reconcilers", "controller", "cli")
                        for p in glob.glob(os.path.join(REPO, d, "**", "*.[ch]"), recursive=True))
    for name in sorted(set(re.findall(r"\btj_\w+", code.get("docs/architecture.md", "")))):
        # A name ending in "_" is a prefix: some name of the code must start with it.
        if re.search(r"\b" + name + (r"\w" if name.endswith("_") else r"\b"), sources):
            passed += 1
        else:
            failures.append(f"docs/architecture.md: names {name}, which the code does not have")

    for f in failures:
        print("FAILED: " + f)
    print(f"docs: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
