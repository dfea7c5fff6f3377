#!/usr/bin/env python3
"""The tables of bench/ga/run.sh: median wall time per program and variant,
the small-operation rates of ga_ops, and GA's perf.x/perf2.x bandwidth rows,
as Markdown; a plot (ga-wall.png) where matplotlib is installed.

    bench/ga/summarize.py RESULTS_DIR
"""
import csv
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

VARIANTS = ["odcm-1node", "odcm-2vnodes", "armci-mpi", "mpi-pr"]
SIZES = (8, 2048, 131072, 2097152)  # perf rows quoted in the table
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
ROW = re.compile(rf"^\s*(\d+)\s+\d+\s+({NUMBER})\s+({NUMBER})\s+({NUMBER})\s+({NUMBER})"
                 rf"\s+({NUMBER})\s+({NUMBER})\s*$")


def median_or_none(values):
    return statistics.median(values) if values else None


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def wall_table(out):
    times = defaultdict(list)
    failed = defaultdict(int)
    with open(out / "ga-wall.csv") as f:
        for r in csv.DictReader(f):
            if r["status"] == "0":
                times[(r["program"], r["variant"])].append(float(r["seconds"]))
            else:
                failed[(r["program"], r["variant"])] += 1
    programs = list(dict.fromkeys(p for p, _ in list(times) + list(failed)))
    variants = [v for v in VARIANTS if any(v == x for _, x in list(times) + list(failed))]
    print("## Wall time, seconds (median; launch included)\n")
    print("| program | " + " | ".join(variants) + " | 1node / best other | 2vnodes / best other |")
    print("|---" * (len(variants) + 3) + "|")
    med = {}
    for p in programs:
        cells = []
        for v in variants:
            m = median_or_none(times[(p, v)])
            med[(p, v)] = m
            cell = fmt(m)
            if failed[(p, v)]:
                cell += f" ({failed[(p, v)]} failed)"
            cells.append(cell)
        others = [med[(p, v)] for v in ("armci-mpi", "mpi-pr") if med.get((p, v))]
        best = min(others) if others else None
        ratio = [fmt(med.get((p, v)) / best) if best and med.get((p, v)) else "-"
                 for v in ("odcm-1node", "odcm-2vnodes")]
        print(f"| {p} | " + " | ".join(cells) + f" | {ratio[0]} | {ratio[1]} |")
    print("\nmpi-pr runs 5 processes (4 compute + the node's progress rank); the others 4.\n")
    return med, programs, variants


def ops_table(out):
    rates = defaultdict(list)
    for log in sorted((out / "logs").glob("ga_ops.*.log")):
        for line in log.read_text(errors="replace").splitlines():
            parts = line.split(",")
            if len(parts) == 6 and parts[1] in ("scatter", "gather", "read_inc"):
                rates[(parts[1], parts[0])].append(float(parts[4]))
    if not rates:
        return
    print("## Small GA operations, microseconds per call (median; slowest of 4 processes)\n")
    print("| operation | " + " | ".join(VARIANTS) + " |")
    print("|---" * (len(VARIANTS) + 1) + "|")
    for op in ("scatter", "gather", "read_inc"):
        print(f"| {op} | " + " | ".join(fmt(median_or_none(rates[(op, v)]), 1)
                                       for v in VARIANTS) + " |")
    print()


def perf_tables(out, program):
    mbs = defaultdict(list)  # (section, bytes, op, variant) -> MB/s
    for log in sorted((out / "logs").glob(f"{program}.*.log")):
        variant = log.name.split(".")[1]
        section = None
        for line in log.read_text(errors="replace").splitlines():
            if "Section" in line or "Data Transfer" in line:
                section = " ".join(line.split())
                continue
            m = ROW.match(line)
            if m and section:
                size = int(m.group(1))
                for op, col in (("get", 3), ("put", 5), ("acc", 7)):
                    mbs[(section, size, op, variant)].append(float(m.group(col)))
    if not mbs:
        return
    sections = list(dict.fromkeys(k[0] for k in mbs))
    print(f"## {program}.x: MB/s (median) at {', '.join(str(s) for s in SIZES)} bytes\n")
    print("| section | bytes | op | " + " | ".join(VARIANTS) + " |")
    print("|---" * (len(VARIANTS) + 3) + "|")
    for section in sections:
        for size in SIZES:
            for op in ("get", "put", "acc"):
                cells = [median_or_none(mbs.get((section, size, op, v), [])) for v in VARIANTS]
                if any(c is not None for c in cells):
                    print(f"| {section} | {size} | {op} | "
                          + " | ".join(fmt(c, 0) for c in cells) + " |")
    print()


def plot(out, med, programs, variants):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no plot: matplotlib is not installed)")
        return
    fig, ax = plt.subplots(figsize=(12, 5))
    width = 0.8 / max(len(variants), 1)
    for k, v in enumerate(variants):
        ys = []
        for p in programs:
            others = [med.get((p, o)) for o in ("armci-mpi", "mpi-pr") if med.get((p, o))]
            best = min(others) if others else None
            ys.append(med[(p, v)] / best if best and med.get((p, v)) else 0)
        ax.bar([i + k * width for i in range(len(programs))], ys, width, label=v)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xticks([i + width * (len(variants) - 1) / 2 for i in range(len(programs))])
    ax.set_xticklabels(programs, rotation=30)
    ax.set_ylabel("wall time / faster of ARMCI-MPI and MPI-PR")
    ax.set_title("GA programs at 4 compute processes (median of interleaved runs)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "ga-wall.png", dpi=100)
    print(f"(plot: {out / 'ga-wall.png'})")


def main(out):
    out = Path(out)
    info = out / "run-info.txt"
    if info.exists():
        print("```\n" + info.read_text().strip() + "\n```\n")
    med, programs, variants = wall_table(out)
    ops_table(out)
    perf_tables(out, "perf")
    perf_tables(out, "perf2")
    plot(out, med, programs, variants)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
