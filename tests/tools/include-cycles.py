#!/usr/bin/env python3
"""No two folders include each other, directly or around a longer circle.

A folder is the directory a source file is in (controller/ and controller/http/ are two
folders, and so are reconcilers/ and reconcilers/plan/). Every `#include "dir/file.h"` of a
.c or .h file of the repository is an edge from the file's folder to the header's; the
edges must make no cycle, so that the folders stand in layers (docs/architecture.md, "The
layers", says which folder may include which). Two rules of that page are checked too:
nothing in reconcilers/ or below includes a header of kube/ or of controller/ (the
decisions are pure), and an X_internal.h is included only from its own folder and by the
unit tests.

Prints each cycle with one include line of each of its edges, and each include that breaks
a rule, then "include-cycles: ..." with the count of folders and edges; exits non-zero when
there is a cycle or a broken rule.
Usage: tests/tools/include-cycles.py [--graph]   (--graph also prints every edge)"""

import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+/[^"/]+)"', re.M)


def sources():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
                          "*.c", "*.h"], cwd=REPO, capture_output=True, text=True, check=True)
    return [p for p in out.stdout.splitlines() if os.path.isfile(os.path.join(REPO, p))]


def includes(paths):
    """Every (file, line, header) of a quoted include with a folder."""
    for path in paths:
        with open(os.path.join(REPO, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            yield path, text.count("\n", 0, m.start()) + 1, m.group(1)


def edges(found_includes):
    """{(from folder, to folder): the first "file:line includes header" seen}"""
    found = {}
    for path, line, header in found_includes:
        src, dst = os.path.dirname(path), os.path.dirname(header)
        if dst != src:
            found.setdefault((src, dst), f"{path}:{line} includes {header}")
    return found


def under(path, folder):
    return path == folder or path.startswith(folder + "/")


def broken_rules(found_includes):
    """The includes that break a rule of docs/architecture.md, as lines to print."""
    broken = []
    for path, line, header in found_includes:
        src, dst = os.path.dirname(path), os.path.dirname(header)
        if under(src, "reconcilers") and (under(dst, "kube") or under(dst, "controller")):
            broken.append(f"FAILED: {path}:{line} includes {header}: reconcilers/ is pure")
        if header.endswith("_internal.h") and src != dst and not under(src, "tests/unit"):
            broken.append(f"FAILED: {path}:{line} includes {header}, internal to {dst}/")
    return broken


def cycles(graph):
    """The strongly connected components of more than one folder (Tarjan's algorithm)."""
    index, low, stack, on_stack, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def circle(graph, comp):
    """One circle through the first folder of comp, as a list of folders."""
    start, members = comp[0], set(comp)
    path, seen = [start], {start}

    def walk(v):
        for w in sorted(graph.get(v, ())):
            if w == start and len(path) > 1:
                return True
            if w in members and w not in seen:
                seen.add(w)
                path.append(w)
                if walk(w):
                    return True
                path.pop()
        return False

    walk(start)
    return path + [start]


def main():
    found_includes = list(includes(sources()))
    found = edges(found_includes)
    graph = {}
    for src, dst in found:
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
    if "--graph" in sys.argv[1:]:
        for (src, dst), where in sorted(found.items()):
            print(f"{src}/ -> {dst}/   ({where})")
    comps = cycles(graph)
    for comp in comps:
        folders = circle(graph, comp)
        print("FAILED: folders include each other: " + " -> ".join(f + "/" for f in folders))
        for src, dst in zip(folders, folders[1:]):
            print(f"  {found[(src, dst)]}")
    broken = broken_rules(found_includes)
    for b in broken:
        print(b)
    print(f"include-cycles: {len(graph)} folders, {len(found)} edges, "
          f"{len(comps)} cycle{'' if len(comps) == 1 else 's'}, "
          f"{len(broken)} broken rule{'' if len(broken) == 1 else 's'}")
    return 1 if comps or broken else 0


if __name__ == "__main__":
    sys.exit(main())
