#!/usr/bin/env python3
"""Medians of bench/scale.sh's CSV as a markdown table, one row per app and
layout, one column per configuration (cap:hybrid), each cell the median of
the app's own time_s over the rounds with its ratio to the first
configuration (RC uncapped, when run as 0:off first), then setups and
memory per process (rt_mem_avg + buf_mem_avg). A run whose digest differs
from the first configuration's, or that did not pass, is flagged.

Usage: bench/scale_table.py scale.csv [CONFIG ...]
(default configurations: in the order they first appear in the file)
"""
import csv
import statistics
import sys


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    configs = sys.argv[2:]
    if not configs:
        for r in rows:
            c = f"{r['cap']}:{r['hybrid']}"
            if c not in configs:
                configs.append(c)
    groups = {}
    for r in rows:
        key = (r["app"], int(r["procs"]), int(r["node_size"]))
        groups.setdefault(key, {}).setdefault(f"{r['cap']}:{r['hybrid']}", []).append(r)

    def med(runs, field):
        vals = [float(r[field]) for r in runs if r.get(field)]
        return statistics.median(vals) if vals else float("nan")

    head = ["app", "procs x node size"] + [f"{c} time_s (x first)" for c in configs]
    head += [f"{c} setups" for c in configs] + [f"{c} KiB/proc" for c in configs]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key in sorted(groups):
        by = groups[key]
        base_runs = by.get(configs[0], [])
        base = med(base_runs, "app_time_s")
        digest = base_runs[0]["digest"] if base_runs else None
        cells, setups, mem = [], [], []
        for c in configs:
            runs = by.get(c, [])
            if not runs:
                cells.append("-")
                setups.append("-")
                mem.append("-")
                continue
            t = med(runs, "app_time_s")
            flag = ""
            if any(r["status"] != "ok" or r["check"] != "PASS" for r in runs):
                flag = " FAILED"
            elif digest and any(r["digest"] != digest for r in runs):
                flag = " DIGEST"
            cells.append(f"{t:.2f} ({t / base:.2f}){flag} n={len(runs)}")
            setups.append(f"{med(runs, 'setups'):.0f}")
            kib = statistics.median(
                (float(r["rt_mem_avg"] or 0) + float(r["buf_mem_avg"] or 0)) / 1024 for r in runs)
            mem.append(f"{kib:.0f}")
        print(f"| {key[0]} | {key[1]} x {key[2]} | " + " | ".join(cells + setups + mem) + " |")


if __name__ == "__main__":
    main()
