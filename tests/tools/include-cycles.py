#!/usr/bin/env python3
"""No two folders include each other, directly or around a longer circle.

A folder is the directory a source file is in (controller/ and controller/http/ are two
folders). Every `#include "dir/file.h"` of a .c or .h file of the repository is an edge from
the file's folder to the header's; the edges must make no cycle, so that the folders stand
in layers (docs/architecture.md, "The layers", says which folder may include which).

Prints each cycle with one include line of each of its edges, then "include-cycles: ..."
with the count of folders and edges; exits non-zero when there is a cycle.
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


def edges(paths):
    """{(from folder, to folder): the first "file:line includes header" seen}"""
    found = {}
    for path in paths:
        with open(os.path.join(REPO, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        src = os.path.dirname(path)
        for m in INCLUDE.finditer(text):
            dst = os.path.dirname(m.group(1))
            if dst != src:
                line = text.count("\n", 0, m.start()) + 1
                found.setdefault((src, dst), f"{path}:{line} includes {m.group(1)}")
    return found


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
    found = edges(sources())
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
    print(f"include-cycles: {len(graph)} folders, {len(found)} edges, "
          f"{len(comps)} cycle{'' if len(comps) == 1 else 's'}")
    return 1 if comps else 0


if __name__ == "__main__":
    sys.exit(main())
