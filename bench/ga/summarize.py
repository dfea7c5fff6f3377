#!/usr/bin/env python3
"""The tables of bench/ga/run.sh: median wall time per program and variant,
the small-operation rates of ga_ops, and GA's perf.x/perf2.x bandwidth rows,
as Markdown; a plot (ga-wall.png) where matplotlib is installed. With
--cross-host, the tables of bench/ga/cross-host.sh (medians with their spread).

    bench/ga/summarize.py [--cross-host] RESULTS_DIR
"""
import csv
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

VARIANTS = ["odcm-1node", "odcm-2vnodes", "armci-mpi", "mpi-pr", "armci-mpi-tcp", "mpi-pr-tcp"]
PEERS = ("armci-mpi", "mpi-pr")  # the peers on one host, shared memory on
PEERS_TCP = ("armci-mpi-tcp", "mpi-pr-tcp")  # the same with Open MPI's shared memory off
CROSS = {"odcm": "ours", "armci-mpi-tcp": "ARMCI-MPI, TCP", "mpi-pr-tcp": "MPI-PR (+1 a host), TCP",
         "armci-mpi-ucx": "ARMCI-MPI, UCX", "mpi-pr-ucx": "MPI-PR (+1 a host), UCX"}
SIZES = (8, 2048, 131072, 2097152)  # perf rows quoted in the table
NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
ROW = re.compile(rf"^\s*(\d+)\s+\d+\s+({NUMBER})\s+({NUMBER})\s+({NUMBER})\s+({NUMBER})"
                 rf"\s+({NUMBER})\s+({NUMBER})\s*$")


def spread(values, digits=2):
    """median (min-max), or - when there are none"""
    if not values:
        return "-"
    return f"{fmt(statistics.median(values), digits)} ({fmt(min(values), digits)}-{fmt(max(values), digits)})"


def median_or_none(values):
    return statistics.median(values) if values else None


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio_to_best(med, program, ours, others):
    best = min((med[(program, o)] for o in others if med.get((program, o))), default=None)
    mine = med.get((program, ours))
    return fmt(mine / best) if best and mine else "-"


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
    tcp = any(v in variants for v in PEERS_TCP)
    print("| program | " + " | ".join(variants) + " | 1node / best other | 2vnodes / best other |"
          + (" 2vnodes / best other over TCP |" if tcp else ""))
    print("|---" * (len(variants) + 3 + tcp) + "|")
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
        ratio = [ratio_to_best(med, p, v, PEERS) for v in ("odcm-1node", "odcm-2vnodes")]
        if tcp:
            ratio.append(ratio_to_best(med, p, "odcm-2vnodes", PEERS_TCP))
        print(f"| {p} | " + " | ".join(cells + ratio) + " |")
    print("\nmpi-pr runs 5 processes (4 compute + the node's progress rank); the others 4."
          + (" The -tcp variants run with Open MPI's shared memory off (btl self,tcp, osc pt2pt)."
             if tcp else "") + "\n")
    return med, programs, variants


def ops_table(out, variants=VARIANTS, names=None):
    rates = defaultdict(list)
    for log in sorted((out / "logs").glob("ga_ops.*.log")):
        for line in log.read_text(errors="replace").splitlines():
            parts = line.split(",")
            if len(parts) == 6 and parts[1] in ("scatter", "gather", "read_inc"):
                rates[(parts[1], parts[0])].append(float(parts[4]))
    if not rates:
        return
    print("## Small GA operations, microseconds per call (median; slowest of 4 processes)\n")
    variants = [v for v in variants if any(rates[(op, v)] for op in ("scatter", "gather", "read_inc"))]
    print("| operation | " + " | ".join((names or {}).get(v, v) for v in variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for op in ("scatter", "gather", "read_inc"):
        print(f"| {op} | " + " | ".join(spread(rates[(op, v)], 1) if names else
                                       fmt(median_or_none(rates[(op, v)]), 1)
                                       for v in variants) + " |")
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


def read_rows(path):
    if not path.exists():
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def cross_host(out):
    """bench/ga/cross-host.sh's tables: medians (min-max) over the interleaved rounds."""
    wall, failed = defaultdict(list), defaultdict(int)
    runs = read_rows(out / "ga-wall.csv")
    for r in runs:
        if r["status"] == "0":
            wall[(r["program"], r["variant"])].append(float(r["seconds"]))
        else:
            failed[(r["program"], r["variant"])] += 1
    rounds = max((len(v) for v in wall.values()), default=0)
    print(f"## Between two hosts over rdma_rxe: medians (min-max) of {rounds} interleaved rounds\n")
    info = out / "peers-info.txt"
    if info.exists():
        print(info.read_text().strip().replace("peers: ", "") + "\n")
    present = {r["variant"] for r in runs}
    cols = [c for c in CROSS if c in present]
    print("| row | " + " | ".join(CROSS[c] for c in cols) + " | raw rxe0 | ours / best other |")
    print("|---" * (len(cols) + 3) + "|")
    raw = {(r["what"], r["bytes"]): r for r in read_rows(out / "raw.csv")}
    rma = defaultdict(list)
    for r in read_rows(out / "rma.csv"):
        rma[(r["op"], r["bytes"], r["variant"])].append(r)
    for op, raw_lat, raw_bw in (("put", "ib_write_lat", "ib_write_bw"), ("get", "ib_read_lat", "ib_read_bw"),
                                ("acc-dbl", None, None)):
        for size, field, raw_name, better in (("8", "usec_per_op", raw_lat, min), ("1048576", "MB_per_s", raw_bw, max)):
            vals = {c: [float(r[field]) for r in rma[(op, size, c)]] for c in cols}
            label = f"{op} 8 B latency, µs" if size == "8" else f"{op} 1 MiB bandwidth, MB/s"
            rawcell = "-"
            if raw_name and (raw_name, size) in raw:
                rawcell = raw[(raw_name, size)]["usec" if size == "8" else "MB_per_s"] or "-"
            ours, others = median_or_none(vals["odcm"]), [median_or_none(vals[c]) for c in cols[1:] if vals[c]]
            ratio = "-"
            if ours and others:
                best = better(others)
                ratio = fmt(ours / best if size == "8" else best / ours)
            print(f"| {label} | " + " | ".join(spread(vals[c], 1) for c in cols) + f" | {rawcell} | {ratio} |")
    patch = defaultdict(list)  # (variant, local memory) -> MB/s
    for r in read_rows(out / "patch.csv"):
        patch[(r["variant"], r["local"])].append(float(r["MB_per_s"]))
    for local in ("malloc", "registered"):
        vals = {c: patch.get((c, local), []) for c in cols}
        if not any(vals.values()):
            continue
        ours = median_or_none(vals["odcm"])
        other = max((median_or_none(vals[c]) for c in cols[1:] if vals[c]), default=None)
        ratio = fmt(other / ours) if ours and other else "-"
        label = "malloc'd" if local == "malloc" else "registered (ARMCI_Malloc_local)"
        print(f"| GA 2-D 2 MiB patch get into {label} memory, MB/s | "
              + " | ".join(spread(vals[c], 1) for c in cols) + f" | - | {ratio} |")
    programs = list(dict.fromkeys(p for p, _ in list(wall) + list(failed)))
    for p in programs:
        if p in ("rma", "patch"):
            continue
        meds = {c: median_or_none(wall[(p, c)]) for c in cols}
        others = [meds[c] for c in cols[1:] if meds[c]]
        ratio = fmt(meds["odcm"] / min(others)) if meds["odcm"] and others else "-"
        cells = [spread(wall[(p, c)]) + (f" ({failed[(p, c)]} failed)" if failed[(p, c)] else "") for c in cols]
        print(f"| {p}, wall s | " + " | ".join(cells) + f" | - | {ratio} |")
    print("\nLatency: ours / best other (below 1: ours is faster); bandwidth: best other / ours (below 1:"
          " ours moves more). Wall seconds include the launch over ssh (row `launch`).\n")
    ops_table(out, variants=cols, names=CROSS)
    counters(out)


def counters(out):
    """rxe0's retransmission and error counters over the run, per host (they include the peers' UCX runs)"""
    rows = []
    for host in ("node1", "node2"):
        before, after = out / "logs" / f"rxe-counters-{host}.before", out / "logs" / f"rxe-counters-{host}.after"
        if not (before.exists() and after.exists()):
            continue
        read = lambda f: dict(line.split(":", 1) for line in f.read_text().splitlines() if ":" in line)
        b, a = read(before), read(after)
        moved = {k: int(a[k]) - int(b.get(k, 0)) for k in a if a[k].strip().isdigit() and int(a[k]) != int(b.get(k, 0))}
        rows.append(f"- {host}: " + (", ".join(f"{k} {v}" for k, v in sorted(moved.items())) or "no change"))
    if rows:
        print("rxe0's counters over the run (every variant's traffic on the device):\n")
        print("\n".join(rows) + "\n")


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
    args = sys.argv[1:]
    if args and args[0] == "--cross-host":
        cross_host(Path(args[1] if len(args) > 1 else "."))
    else:
        main(args[0] if args else ".")
