#!/usr/bin/env python3
"""The include graph of the product code points one way (docs/architecture.md):

  base < protocol < probes/readers < probes/capture, probes/judges < agent
  collector: base and protocol only (it links no guest code)
  agent/**/report_*: the renderers of daxprobe.check/1 reach no
    probes/capture header, even through others (the public report writes
    its own fields: a change to the capture format must not change it)

A file may include its own floor and the floors below it; capture and
judges are siblings and include neither the other. Modules (x.h with its
x.cpp) form no cycle anywhere; a header with no .cpp of its own compiles
as part of its includers, so what it includes counts as theirs. Prints every back arrow and every cycle with
their counts; exits 1 when there is one.

  check_include_graph.py SOURCE_ROOT
"""

import os
import re
import sys

BELOW = {
    "base": set(),
    "protocol": {"base"},
    "probes/readers": {"base", "protocol"},
    "probes/judges": {"base", "protocol", "probes/readers"},
    "probes/capture": {"base", "protocol", "probes/readers"},
    "agent": {"base", "protocol", "probes/readers", "probes/judges", "probes/capture"},
    "collector": {"base", "protocol"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def floor_of(path):
    """The floor a project path belongs to, or None (tests, generated)."""
    for floor in sorted(BELOW, key=len, reverse=True):
        if path.startswith(floor + "/"):
            return floor
    # A file of probes/ on no inner floor sits on none of them: every arrow
    # into or out of it is checked against "probes" as a whole.
    return "probes" if path.startswith("probes/") else None


def allowed(src, dst):
    if src == dst:
        return True
    if src == "probes" or dst == "probes":
        return dst == "probes" and src == "agent" or dst in ("base", "protocol") and src == "probes"
    return dst in BELOW[src]


def sources(root):
    for top in ("base", "protocol", "probes", "agent", "collector"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith((".h", ".cpp")):
                    yield os.path.relpath(os.path.join(d, n), root)


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    root = sys.argv[1]
    files = list(sources(root))
    stems = {os.path.splitext(p)[0] for p in files if p.endswith(".cpp")}
    includes = {}
    back = []
    for path in files:
        text = open(os.path.join(root, path), encoding="utf-8").read()
        includes[path] = [i for i in INCLUDE.findall(text) if floor_of(i) is not None]
        for inc in includes[path]:
            src, dst = floor_of(path), floor_of(inc)
            if not allowed(src, dst):
                back.append(f"{path} -> {inc} ({src} may not use {dst})")

    for path in files:
        if os.path.basename(path).startswith("report_") and floor_of(path) == "agent":
            seen, todo = set(), list(includes[path])
            while todo:
                inc = todo.pop()
                if inc in seen:
                    continue
                seen.add(inc)
                if inc.startswith("probes/capture/"):
                    back.append(f"{path} reaches {inc} (the report writes its own fields)")
                todo.extend(includes.get(inc, ()))

    def reach(path, seen):
        """The modules a file uses, through header-only files."""
        for inc in includes.get(path, ()):
            stem = os.path.splitext(inc)[0]
            if stem in stems:
                yield stem
            elif inc not in seen:
                seen.add(inc)
                yield from reach(inc, seen)

    graph = {}
    for path in files:
        module = os.path.splitext(path)[0]
        if module in stems:
            graph.setdefault(module, set()).update(m for m in reach(path, set()) if m != module)
    loops = cycles(graph)
    print(f"back arrows: {len(back)}")
    for b in back:
        print(f"  {b}")
    print(f"include cycles: {len(loops)}")
    for loop in loops:
        print(f"  {' <-> '.join(loop)}")
    if back or loops:
        print("FAIL: the include graph must point one way (docs/architecture.md)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
