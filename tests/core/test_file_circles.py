#!/usr/bin/env python3
"""No dependency circle of more than 3 files in armci/ (docs/ARCHITECTURE.md) or in
softib/src/ (docs/softib.md, "Modules").

File A depends on file B when A's object uses a function or variable that B's
object defines (read with nm from the library's objects, so what is counted
is what the linker sees, not what the headers say). A circle is a set of
files each of which reaches every other through such uses (a strongly
connected component). Small circles of two or three files that share one job
are allowed; larger ones mean a layer calls up into the one above it.
Prints every circle with the symbols that tie it, and fails on one too large.

Symbols miss what the linker never sees: a static inline function, a macro or
a type of a header. So the same bound holds a second time over the includes
(--includes): file A (x.c and x.h together) depends on file B when one of A's
sources includes B's header; a header with no .c partner is a file of its own.

Usage: test_file_circles.py MAX_FILES ARCHIVE...
       test_file_circles.py --includes MAX_FILES SOURCE_ROOT FOLDER
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

FOLDERS = ("api", "core", "dataserver", "odcm", "strided", "transport", "verbs")


def source_of(member):
    """core_config.c.o -> armci/core/config.c, src_qp.c.o (of libsoftib_core.a) ->
    softib/src/qp.c (meson's object names)."""
    archive, _, member = member.rpartition(":")
    name = member.removesuffix(".o")
    if archive.startswith("libsoftib"):
        return f"softib/{name.replace('_', '/', 1)}"
    folder, _, rest = name.partition("_")
    if folder in FOLDERS and rest:
        return f"armci/{folder}/{rest}"
    return f"armci/{name}"


def symbols(archives):
    defined, used = {}, defaultdict(set)
    out = subprocess.run(["nm", "-A", *archives], check=True, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        where, _, rest = line.rpartition(":")
        fields = rest.split()
        if len(fields) < 2:
            continue
        archive, _, member = where.rpartition(":")
        member = archive.rsplit("/", 1)[-1] + ":" + member.rsplit("/", 1)[-1]
        kind, sym = fields[-2], fields[-1]
        src = source_of(member)
        if kind == "U":
            used[src].add(sym)
        elif kind in "TDBRVWC":  # global definitions only: static ones cannot be shared
            defined[sym] = src
    return defined, used


def circles(edges, nodes):
    """Strongly connected components (Tarjan), as sorted lists of files."""
    index, low, stack, on, out = {}, {}, [], set(), []

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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_ties(root, folder):
    """(file, file) -> the headers that tie them, files named without .c/.h, over FOLDER."""
    sources = []
    for d, _, names in os.walk(os.path.join(root, folder)):
        sources += [os.path.relpath(os.path.join(d, n), root) for n in names
                    if n.endswith((".c", ".h"))]
    files = {os.path.splitext(p)[0] for p in sources}
    # An include is looked for beside the file, then from armci/ (-I armci), then the root.
    bases = ["armci", folder, "."]
    ties = defaultdict(set)
    for path in sources:
        mine = os.path.splitext(path)[0]
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        for inc in INCLUDE.findall(text):
            for base in [os.path.dirname(path)] + bases:
                header = os.path.normpath(os.path.join(base, inc))
                if not os.path.exists(os.path.join(root, header)):
                    continue
                target = os.path.splitext(header)[0]
                if target in files and target != mine:
                    ties[(mine, target)].add(inc)
                break
    return ties, files


def main(argv):
    if argv and argv[0] == "--includes":
        limit = int(argv[1])
        ties, nodes = include_ties(argv[2], argv[3])
        return report(ties, nodes, limit, "includes")
    limit, archives = int(argv[0]), argv[1:]
    defined, used = symbols(archives)
    ties = defaultdict(set)
    for src, syms in used.items():
        for s in syms:
            dst = defined.get(s)
            if dst and dst != src:
                ties[(src, dst)].add(s)
    return report(ties, set(used) | set(defined.values()), limit, "symbols")


def report(ties, nodes, limit, reading):
    """Prints the circles of the graph `ties` and whether any is larger than `limit`."""
    edges = defaultdict(set)
    for src, dst in ties:
        edges[src].add(dst)
    found = circles(edges, nodes)
    too_large = [c for c in found if len(c) > limit]
    for c in sorted(found, key=len, reverse=True):
        mark = "TOO LARGE" if len(c) > limit else "allowed"
        print(f"circle of {len(c)} files ({mark}):")
        for src in c:
            for dst in c:
                if (src, dst) in ties:
                    print(f"  {src} -> {dst}: {', '.join(sorted(ties[(src, dst)]))}")
    print(f"{len(nodes)} files ({reading}), {len(found)} circles, {len(too_large)} larger than "
          f"{limit} files")
    return 1 if too_large else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
