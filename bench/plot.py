#!/usr/bin/env python3
"""Draws the figures of a bench/run-all.sh results directory, one PNG per figure, into it.

    python3 bench/plot.py RESULTS_DIR

Shaped like the ODCM paper's figures: latency and bandwidth vs message size, accumulate
vs put per type, message rate vs outstanding operations, strided bandwidth vs patch size,
connection setup vs processes, barriers, threads. A figure whose CSV file is missing is
skipped with a message. Needs matplotlib (Debian: python3-matplotlib).
"""
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (the backend is chosen first)
from matplotlib.ticker import FuncFormatter  # noqa: E402

from results_csv import num, rows  # noqa: E402

# One look per series across the figures.
OURS_CROSS = dict(label="ARMCI-ODCM, across nodes", color="tab:blue", marker="o")
OURS_SAME = dict(label="ARMCI-ODCM, same node", color="tab:green", marker="s")
MPI_SAME = dict(label="ARMCI-MPI, same host", color="tab:red", marker="^")
CONTIG_SERIES = [(("odcm", "cross-node"), OURS_CROSS), (("odcm", "same-node"), OURS_SAME),
                 (("armci-mpi", "same-host"), MPI_SAME)]
ACC_TYPES = [("int", "int"), ("lng", "long"), ("flt", "float"), ("dbl", "double"),
             ("cpl", "complex"), ("dcp", "double complex")]




def human_bytes(x, _pos=None):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if x >= size:
            return "%g %s" % (x / size, unit)
    return "%g B" % x


def log2_x(ax, formatter=None, ticks=None):
    ax.set_xscale("log", base=2)
    if ticks:
        ax.set_xticks(ticks)
        ax.xaxis.set_minor_formatter(FuncFormatter(lambda _v, _p: ""))
    if formatter:
        ax.xaxis.set_major_formatter(FuncFormatter(formatter))


SIZE_TICKS = [8 << (2 * k) for k in range(10)]  # 8 B, 32 B ... 2 MiB


def log_y(ax):
    """Log y axis; when it spans less than two decades, 2 and 5 times each power get labels too."""
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    if lo > 0 and hi / lo < 100:
        ax.yaxis.set_minor_formatter(FuncFormatter(
            lambda v, _p: plain(v) if round(v / 10 ** math.floor(math.log10(v) + 1e-9)) in (2, 5)
            else ""))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: plain(v)))


def plain(v):
    return "{:,.0f}".format(v) if v >= 1 else "%g" % v


def finish(fig, out, name, title, legend_from=None):
    """Titles and saves the figure; legend_from: an axis whose legend goes below all panels."""
    fig.suptitle(title, fontsize=13)
    if legend_from is not None:
        handles, labels = legend_from.get_legend_handles_labels()
        fig.legend(handles, labels, loc="lower center", ncol=len(labels), frameon=False)
        fig.tight_layout(rect=(0, 0.06, 1, 1))
    else:
        fig.tight_layout()
    path = out / name
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def series(table, x_key, y_key, **want):
    pts = sorted((num(r, x_key), num(r, y_key)) for r in table
                 if all(r.get(k) == v for k, v in want.items()))
    return [p[0] for p in pts], [p[1] for p in pts]


def rma_table(out):
    t = rows(out / "rma.csv")
    for r in t:
        if r["op"] == "acc":  # result folders from before accumulate ran for every type
            r["op"] = "acc-dbl"
    return t


def contiguous(out, y_key, ylabel, name, title):
    """(a) latency and (b) bandwidth vs message size: put, get, acc (double)."""
    t = rma_table(out)
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    for ax, (op, label) in zip(axes, (("put", "ARMCI_Put"), ("get", "ARMCI_Get"),
                                      ("acc-dbl", "ARMCI_Acc (double)"))):
        for (impl, layout), style in CONTIG_SERIES:
            x, y = series(t, "bytes", y_key, impl=impl, layout=layout, op=op)
            if x:
                ax.plot(x, y, markersize=4, **style)
        log2_x(ax, human_bytes, SIZE_TICKS)
        log_y(ax)
        ax.set_title(label)
        ax.set_xlabel("message size")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(axis="x", labelrotation=45)
    finish(fig, out, name, title, legend_from=axes[0])


def acc_ratio(out):
    """(c) accumulate bandwidth / put bandwidth at the same size, per type."""
    t = rma_table(out)
    fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    for ax, ((impl, layout), style) in zip(axes, CONTIG_SERIES):
        put = dict(zip(*series(t, "bytes", "MB_per_s", impl=impl, layout=layout, op="put")))
        for code, label in ACC_TYPES:
            x, y = series(t, "bytes", "MB_per_s", impl=impl, layout=layout, op="acc-" + code)
            pts = [(b, v / put[b]) for b, v in zip(x, y) if put.get(b)]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=label)
        ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
        log2_x(ax, human_bytes, SIZE_TICKS)
        ax.set_title(style["label"])
        ax.set_xlabel("message size")
        ax.grid(True, alpha=0.3)
        ax.tick_params(axis="x", labelrotation=45)
    axes[0].set_ylabel("ARMCI_Acc bandwidth / ARMCI_Put bandwidth")
    axes[0].legend(title="accumulate type")
    finish(fig, out, "acc-put-ratio.png",
           "Accumulate vs put bandwidth by type (1 = as fast as a put of the same size)")


def message_rate(out):
    """(d) 8-byte operations per second vs operations outstanding."""
    t = rows(out / "rate.csv")
    fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    for ax, (op, label) in zip(axes, (("put", "ARMCI_NbPut"), ("get", "ARMCI_NbGet"),
                                      ("acc", "ARMCI_NbAcc (double)"))):
        for (impl, layout), style in CONTIG_SERIES:
            x, y = series(t, "outstanding", "ops_per_s", impl=impl, layout=layout, op=op)
            if x:
                ax.plot(x, y, **style)
        log2_x(ax, lambda v, _p: "%d" % v, [1 << k for k in range(9)])
        log_y(ax)
        ax.set_title(label + ", 8 B")
        ax.set_xlabel("operations outstanding (window of handles)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("operations per second")
    finish(fig, out, "message-rate.png", "Message rate vs operations outstanding, one process",
           legend_from=axes[0])


def strided(out):
    """(e) strided bandwidth vs patch size: default vs the two forced paths, across nodes."""
    t = rows(out / "strided.csv")
    paths = [("default", dict(label="default (cost model)", color="tab:blue", marker="o")),
             ("all-rdma", dict(label="all RDMA (threshold 0)", color="tab:orange", marker="s")),
             ("all-packed", dict(label="all through the data server", color="tab:purple",
                                 marker="^"))]
    fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    for ax, (op, label) in zip(axes, (("puts", "ARMCI_PutS"), ("gets", "ARMCI_GetS"),
                                      ("accs", "ARMCI_AccS (double)"))):
        for variant, style in paths:
            x, y = series(t, "n", "MB_per_s", impl="odcm", layout="cross-node", variant=variant,
                          op=op)
            if x:
                ax.plot(x, y, **style)
        x, y = series(t, "n", "MB_per_s", impl="odcm", layout="cross-node", variant="default",
                      op="put-contig")
        if x:
            ax.plot(x, y, color="gray", linestyle="--", label="contiguous put, same bytes")
        x, y = series(t, "n", "MB_per_s", impl="armci-mpi", layout="same-host", op=op)
        if x:
            ax.plot(x, y, color="tab:red", linestyle=":", marker=".", label="ARMCI-MPI, same host")
        log2_x(ax, lambda v, _p: "%dx%d" % (v, v),
               sorted({int(r["n"]) for r in t if r["impl"] == "odcm"}))
        log_y(ax)
        ax.set_title(label + ", across nodes")
        ax.set_xlabel("patch of doubles (N x N)")
        ax.grid(True, which="both", alpha=0.3)
        ax.tick_params(axis="x", labelrotation=45)
    axes[0].set_ylabel("bandwidth (MB/s)")
    finish(fig, out, "strided.png", "Strided bandwidth vs patch size (ARMCI_STRIDED_THRESHOLD)",
           legend_from=axes[0])


def connect(out):
    """(f) connection setup time vs processes: overlap vs serial vs static."""
    t = rows(out / "connect.csv")
    modes = [(("ondemand", "overlap"), dict(label="on demand, overlap", color="tab:blue",
                                            marker="o")),
             (("ondemand", "serial"), dict(label="on demand, serial", color="tab:orange",
                                           marker="s")),
             (("static", "overlap"), dict(label="static (connected in ARMCI_Init)",
                                          color="tab:gray", marker="^"))]
    scenarios = [("init", "ARMCI_Init"), ("one-to-one", "one-to-one: first put to a new node\n"
                                          "(median over ranks, bars: min to max)"),
                 ("one-to-all", "one-to-all: first puts to every other node at once")]
    procs = sorted({int(r["procs"]) for r in t})
    fig, axes = plt.subplots(1, 3, figsize=(16, 5))
    for ax, (scenario, label) in zip(axes, scenarios):
        for (mode, protocol), style in modes:
            xs, med, lo, hi = [], [], [], []
            for p in procs:
                v = sorted(num(r, "usec") for r in t if r["mode"] == mode
                           and r["protocol"] == protocol and r["scenario"] == scenario
                           and int(r["procs"]) == p)
                if v:
                    m = v[len(v) // 2]
                    xs.append(p)
                    med.append(m)
                    lo.append(m - v[0])
                    hi.append(v[-1] - m)
            if xs:
                ax.errorbar(xs, med, yerr=[lo, hi] if scenario == "one-to-one" else None,
                            capsize=3, **style)
        log2_x(ax, lambda v, _p: "%d" % v, procs)
        log_y(ax)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("processes (one per virtual node)")
        ax.set_ylabel("time (us)")
        ax.grid(True, which="both", alpha=0.3)
    finish(fig, out, "connect.png",
           "Connection setup vs processes (softib paper cost model)", legend_from=axes[0])


def barrier(out):
    """(g) RDMA barrier vs MPI_Barrier vs a send/receive barrier."""
    t = rows(out / "barrier.csv")
    impls = [("armci-rdma-barrier", dict(label="ARMCI_Barrier (RDMA)", color="tab:blue",
                                         marker="o")),
             ("mpi-barrier", dict(label="MPI_Barrier", color="tab:red", marker="s")),
             ("sendrecv-dissemination", dict(label="send/receive dissemination",
                                             color="tab:green", marker="^"))]
    panels = sorted({(r["mpi_transport"], r["node_size"]) for r in t})
    fig, axes = plt.subplots(1, len(panels), figsize=(4.5 * len(panels), 4.8), sharey=True,
                             squeeze=False)
    for ax, (transport, node_size) in zip(axes[0], panels):
        for impl, style in impls:
            x, y = series(t, "procs", "usec_per_barrier", impl=impl, mpi_transport=transport,
                          node_size=node_size)
            if x:
                ax.plot(x, y, **style)
        log_y(ax)
        ax.set_title("MPI over %s, %s rank%s per node" % (transport, node_size,
                                                          "" if node_size == "1" else "s"))
        ax.set_xlabel("processes")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("time per barrier (us)")
    finish(fig, out, "barrier.png", "Barrier latency", legend_from=axes[0][0])


def threads(out):
    """(h) MPI_THREAD_SINGLE vs MULTIPLE: 8 B latency, and message rate with 1, 2, 4 threads."""
    t = rows(out / "threads.csv")
    layouts = [l for l in ("same-node", "cross-node") if any(r["layout"] == l for r in t)]
    ops = ("put", "get", "acc")
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.2))
    ax = axes[0]
    groups = [(layout, op) for layout in layouts for op in ops]
    width = 0.38
    for k, (level, color) in enumerate((("single", "tab:blue"), ("multiple", "tab:orange"))):
        vals = []
        for layout, op in groups:
            r = [r for r in t if r["layout"] == layout and r["level"] == level and r["op"] == op
                 and r["bytes"] == "8"]
            vals.append(num(r[0], "usec_per_op") if r else float("nan"))
        ax.bar([i + (k - 0.5) * width for i in range(len(groups))], vals, width,
               color=color, label="MPI_THREAD_" + level.upper())
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(["%s\n%s" % (op, layout.replace("-", " ")) for layout, op in groups],
                       fontsize=9)
    log_y(ax)
    ax.set_ylabel("latency, 8 B (us per operation)")
    ax.set_title("One thread: SINGLE vs MULTIPLE")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend()
    ax = axes[1]
    colors = {"put": "tab:blue", "get": "tab:green", "acc": "tab:red"}
    for layout, line in zip(layouts, ("--", "-")):
        for op in ops:
            x, y = series(t, "threads", "ops_per_s", layout=layout, level="multiple-rate", op=op)
            if x:
                ax.plot(x, y, linestyle=line, marker="o", color=colors[op],
                        label="%s, %s" % (op, layout))
    log2_x(ax, lambda v, _p: "%d" % v, sorted({int(r["threads"]) for r in t}))
    log_y(ax)
    ax.set_xlabel("threads issuing 8 B operations (MPI_THREAD_MULTIPLE)")
    ax.set_ylabel("operations per second (whole process)")
    ax.set_title("Message rate vs threads")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=9, ncol=2, loc="center left", bbox_to_anchor=(1.01, 0.5))
    finish(fig, out, "threads.png", "Threads")


FIGURES = [
    ("rma.csv", lambda out: contiguous(out, "usec_per_op", "latency (us per operation)",
                                       "latency.png", "Latency vs message size")),
    ("rma.csv", lambda out: contiguous(out, "MB_per_s", "bandwidth (MB/s)", "bandwidth.png",
                                       "Bandwidth vs message size")),
    ("rma.csv", acc_ratio),
    ("rate.csv", message_rate),
    ("strided.csv", strided),
    ("connect.csv", connect),
    ("barrier.csv", barrier),
    ("threads.csv", threads),
]


def main(out):
    out = Path(out)
    for csv_name, draw in FIGURES:
        if not (out / csv_name).exists():
            print("skipped a figure: no %s in %s" % (csv_name, out))
            continue
        draw(out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: plot.py RESULTS_DIR")
    main(sys.argv[1])
