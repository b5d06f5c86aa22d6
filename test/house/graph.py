#!/usr/bin/env python3
"""graph.py: the house's shape, drawn from src/ itself (issue 26).

A file's layer is the number of its folder, src/<N>_<name>/ (lower N,
lower layer); src/booking.h, which every file includes, is below them all,
and src/booking.c, the module's _PG_init, above them all.  The rule is that
a file uses only files of its own layer or of a lower one: a call of a
function, a read of a variable (a GUC) and an #include all count, and a
header counts as the .c file of its name beside it.

It prints, per file, its lines, its layer and the files it uses; then every
problem: a circle (files that use each other round, whatever their layers),
a use of a higher layer, a .c file over MAX_LINES lines, and a .c file whose
first comment does not say its layer ("Layer N").  With --check it exits 1
when there is any, so that the rule stays true (test/run.sh, stage house).

    python3 test/house/graph.py [--check] [--src DIR]
"""
import os
import re
import sys
from collections import defaultdict

MAX_LINES = 600
TOP = 99            # src/booking.c

DEF = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.M)
# a file-scope variable that is not static: "int booking_x = 3;", "char *x;"
VAR = re.compile(r"^(?:const\s+)?(?:unsigned\s+)?[A-Za-z_][A-Za-z0-9_]*\s+\**"
                 r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=[^;]*)?;", re.M)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')
LAYER_LINE = re.compile(r"Layer (\d+)")


def sources(src):
    for root, _, names in os.walk(src):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                path = os.path.join(root, n)
                with open(path, encoding="utf-8") as f:
                    yield os.path.relpath(path, src), f.read()


def layer(rel):
    parts = rel.split(os.sep)
    if len(parts) == 1:
        return 0 if rel.endswith(".h") else TOP
    m = re.match(r"(\d+)_", parts[0])
    return int(m.group(1)) if m else None


def main(argv):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src")
    if "--src" in argv:
        src = argv[argv.index("--src") + 1]
    files = dict(sources(src))
    code = {f: STRING.sub('""', COMMENT.sub(" ", t)) for f, t in files.items()}

    # functions and variables defined at file scope, and which are static
    defined = {}
    static = defaultdict(set)
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
                static[f].add(m.group(1))
                continue
            defined[m.group(1)] = f
        for m in VAR.finditer(t):
            line = t[m.start():m.end()]
            if line.startswith(("static", "extern", "typedef", "return")):
                continue
            defined.setdefault(m.group(1), f)

    # what each file uses: the files defining what it names, the headers it includes
    uses = defaultdict(lambda: defaultdict(set))
    for f, t in code.items():
        for name in set(IDENT.findall(t)):
            g = defined.get(name)
            if g and g != f and name not in static[f]:
                uses[f][g].add(name)
    for f, t in files.items():
        for inc in INCLUDE.findall(t):
            if inc in files and inc != f:
                uses[f][inc].add("#include")

    # a header of a layer stands for the .c file of its name beside it
    # (src/booking.h is every file's, not booking.c's)
    def unit(f):
        c = f[:-2] + ".c"
        return c if f.endswith(".h") and os.sep in f and c in files else f

    edges = defaultdict(set)
    for f in files:
        for g in uses[f]:
            a, b = unit(f), unit(g)
            if a != b:
                edges[a].add(b)

    # circles: Tarjan's strongly connected components
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
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
    print("# file                              lines layer  uses")
    for f in sorted(files, key=lambda x: (layer(x) if layer(x) is not None else -1, x)):
        n = files[f].count("\n")
        into = ", ".join(sorted(uses[f]))
        print(f"{f:36s}{n:5d} {str(layer(f)):5s}  {into}")
        if layer(f) is None:
            problems.append(f"{f}: not in a layer folder (src/<N>_<name>/)")
        if f.endswith(".c") and n > MAX_LINES:
            problems.append(f"{f}: {n} lines (more than {MAX_LINES})")
        if f.endswith(".c") and os.sep in f:
            m = LAYER_LINE.search(files[f].split("*/", 1)[0])
            if not m or int(m.group(1)) != layer(f):
                problems.append(f"{f}: its first comment does not say \"Layer {layer(f)}\"")
    for comp in sccs:
        problems.append("circle: " + " <-> ".join(comp))
    up = 0
    for f in sorted(uses):
        for g in sorted(uses[f]):
            lf, lg = layer(f), layer(g)
            if lf is not None and lg is not None and lg > lf:
                up += 1
                problems.append(f"up: {f} (layer {lf}) uses {g} (layer {lg}): "
                                + ", ".join(sorted(uses[f][g])))
    for p in problems:
        print(p)
    print(f"# {len(files)} files, {sum(t.count(chr(10)) for t in files.values())} lines, "
          f"{len(sccs)} circles, {up} uses of a higher layer, {len(problems)} problems")
    return 1 if ("--check" in argv and problems) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
