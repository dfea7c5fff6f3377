#!/usr/bin/env python3
# Dependency circles between the .c files of armci/ (or of one folder of it): file A depends on
# file B when A's object refers to a function or variable B's object defines (nm). Prints every
# strongly connected group of more than one file, largest first.
#   scripts/file-circles.py BUILD_DIR [FOLDER]     e.g. scripts/file-circles.py build transport
import os, subprocess, sys

objdir = os.path.join(sys.argv[1], "armci", "libarmci_objects.a.p")
folder = sys.argv[2] + "_" if len(sys.argv) > 2 else ""
defs, uses = {}, {}
for o in sorted(os.listdir(objdir)):
    if not o.endswith(".c.o") or not o.startswith(folder):
        continue
    name = o[:-4].replace("_", "/", 1) if "_" in o else o[:-4]
    out = subprocess.run(["nm", os.path.join(objdir, o)], capture_output=True, text=True).stdout
    uses[name] = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            uses[name].add(f[1])
        elif len(f) == 3 and f[1] in "TDBRC":
            defs[f[2]] = name
graph = {a: {defs[s] for s in u if s in defs and defs[s] != a} for a, u in uses.items()}

# Tarjan's strongly connected components.
index, low, stack, on, comps = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        comps.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in sorted(graph):
    if v not in index:
        visit(v)
circles = sorted((c for c in comps if len(c) > 1), key=len, reverse=True)
for c in circles:
    print(f"{len(c)} files: " + " ".join(c))
    for a in c:
        print(f"   {a} -> " + ", ".join(sorted(b for b in graph[a] if b in c)))
if not circles:
    print("no circles")
