#!/usr/bin/env python3
"""graph.py: the house's shape, drawn from src/ itself (issue 26).

Reads every src/**/*.c and .h and prints, per file, its lines, the files
it includes from src/ and the files whose functions it calls; then the
circles (strongly connected groups of files that call each other round)
and, where a file's layer is known, every call that climbs up a layer.

A file's layer is its folder under src/ once the tree has them
(src/<NN>_<name>/...: lower NN, lower layer); until then the PROPOSED map
below.  With --check it exits 1 on a circle, an upward call or include, or
a file over MAX_LINES lines, so that the rule stays true.

    python3 test/house/graph.py [--check]
"""
import os
import re
import sys
from collections import defaultdict

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
MAX_LINES = 600

# The layers of issue 26 for today's flat tree (lower number, lower layer).
PROPOSED = {
    "compat.h": 0, "booking.h": 0, "booking.c": 7,
    "spi_util.c": 0, "args.c": 0, "result.c": 0, "tables.c": 0, "once.c": 0,
    "rowlock.c": 1, "lock.c": 1,
    "call.c": 2, "idempotency.c": 2, "events.c": 2, "stats.c": 2,
    "counter.c": 3, "stripes.c": 3, "slots.c": 3, "limit.c": 3,
    "seat.c": 4, "stay.c": 4, "hold.c": 4, "resource.c": 4, "waitlist.c": 4,
    "passes.c": 4, "amend.c": 4, "outbox.c": 4, "group.c": 4,
    "shard.c": 5, "route.c": 5, "distribute.c": 5,
    "worker.c": 6,
}

DEF = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')


def sources():
    for root, _, names in os.walk(SRC):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                path = os.path.join(root, n)
                yield os.path.relpath(path, SRC), open(path, encoding="utf-8").read()


def layer(rel):
    head = rel.split(os.sep)[0]
    m = re.match(r"(\d+)_", head)
    if m and os.sep in rel:
        return int(m.group(1))
    return PROPOSED.get(os.path.basename(rel))


def main(argv):
    files = dict(sources())
    code = {f: STRING.sub('""', COMMENT.sub(" ", t)) for f, t in files.items()}
    by_base = {os.path.basename(f): f for f in files}

    # a function is defined where its name starts a line and is followed by '('
    # with a '{' before the next ';' (PostgreSQL's layout: type on the line above)
    defined = {}
    static = set()
    for f, t in code.items():
        if not f.endswith(".c"):
            continue
        for m in DEF.finditer(t):
            if m.group(1).isupper():
                continue        # a macro at the start of a line, not a definition
            rest = t[m.end():]
            brace, semi = rest.find("{"), rest.find(";")
            if brace < 0 or (0 <= semi < brace):
                continue
            before = t[:m.start()].rstrip().rsplit("\n", 1)[-1]
            if "static" in before:
                static.add((f, m.group(1)))
                continue
            defined[m.group(1)] = f

    calls = defaultdict(lambda: defaultdict(set))
    for f, t in code.items():
        if not f.endswith(".c"):
            continue
        local = {n for (g, n) in static if g == f}
        for name in set(IDENT.findall(t)):
            g = defined.get(name)
            if g and g != f and name not in local:
                calls[f][g].add(name)
    includes = {f: [by_base.get(os.path.basename(i)) for i in INCLUDE.findall(t)
                    if os.path.basename(i) in by_base] for f, t in files.items()}

    # circles: Tarjan's strongly connected components over calls + includes
    edges = {f: set(calls[f]) | {i for i in includes[f] if i.endswith(".c")} for f in files}
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(files):
        if v not in index:
            visit(v)

    problems = []
    print("# file                        lines layer  calls into")
    for f in sorted(files):
        n = files[f].count("\n")
        into = ", ".join(sorted(os.path.basename(g) for g in calls[f]))
        print(f"{f:30s}{n:5d} {str(layer(f)):5s}  {into}")
        if n > MAX_LINES:
            problems.append(f"{f}: {n} lines (more than {MAX_LINES})")
    for comp in sccs:
        problems.append("circle: " + " <-> ".join(comp))
    up = 0
    for f in sorted(calls):
        for g in sorted(calls[f]):
            lf, lg = layer(f), layer(g)
            if lf is not None and lg is not None and lg > lf:
                up += 1
                problems.append(f"up: {f} (layer {lf}) calls {g} (layer {lg}): "
                                + ", ".join(sorted(calls[f][g])))
    for f, incs in sorted(includes.items()):
        for i in incs:
            li, lf = layer(i), layer(f)
            if i and li is not None and lf is not None and li > lf:
                problems.append(f"up: {f} (layer {lf}) includes {i} (layer {li})")
    for p in problems:
        print(p)
    print(f"# {len(files)} files, {sum(t.count(chr(10)) for t in files.values())} lines, "
          f"{len(sccs)} circles, {up} file pairs calling up")
    return 1 if ("--check" in argv and problems) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
