#!/usr/bin/env python3
"""Checks a connection map (ARMCI_CONN_MAP) against the pattern the job ran.

Usage: conn-map-check.py MAP PATTERN
  ring:   node i's processes talk to node i+1 only: only those cells are
          nonzero, each holding all of node i's processes, and they carried
          operations over RC (none over UD: no hybrid path without a cap)
  static: every process is connected to every other node (the full matrix)
The diagonal may hold loopback connections when the map says loopback=1.
"""
import json
import sys


def main(path, pattern):
    with open(path, encoding="utf-8") as f:
        m = json.load(f)
    n = m["nodes"]
    procs = m["node_procs"]
    problems = []
    for i in range(n):
        for j in range(n):
            if i == j and m["loopback"]:
                continue
            if pattern == "ring":
                want = procs[i] if j == (i + 1) % n and j != i else 0
            else:
                want = procs[i] if j != i else 0
            got = m["connected"][i][j]
            if got != want:
                problems.append(f"node {i} -> node {j}: {got} processes connected, expected {want}")
            if want and m["opened"][i][j] < want:
                problems.append(f"node {i} -> node {j}: opened {m['opened'][i][j]} < {want}")
            if pattern == "ring" and bool(m["rc_ops"][i][j]) != bool(want):
                problems.append(f"node {i} -> node {j}: {m['rc_ops'][i][j]} operations over RC")
            if m["ud_ops"][i][j]:
                problems.append(f"node {i} -> node {j}: {m['ud_ops'][i][j]} operations over UD")
    opened = sum(map(sum, m["opened"]))
    if opened != m["totals"]["setups"]:
        problems.append(f"{opened} connections opened in the matrix, the report counts "
                        f"{m['totals']['setups']} setups")
    for row in m["connected"]:
        print(" ".join(f"{v:2d}" for v in row))
    for p in problems:
        print(p)
    if problems:
        print(f"FAIL: the {pattern} map differs from its pattern")
        return 1
    print(f"PASS: the {pattern} map of {m['procs']} processes on {n} nodes is the pattern's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
