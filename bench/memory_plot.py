"""Memory per process against the published anchors (issue 48), for scale_model.py.

Draws scale-memory.png: the fitted model's runtime heap plus registered buffers a process,
cap 8 with the hybrid path on, from 64 to 64 K processes, for LU, RandomAccess and LJ in
nodes of 1 and of 16 processes; beside them the published figures of GASNet-EX's ibv-conduit
(its receive buffers capped at 4 MB plus 4 MB of bounce buffers, README) and of Open MPI's
OpenSHMEM over UCX at 40 K processes (51 MB a process before its rkey cache was made dynamic,
about 3.2 MB after: ompi #9035, #9058), and issue 48's aims at 64 K processes.
"""
from pathlib import Path
import sys

MIB = 1024 * 1024
MB = 1e6
GASNET_IBV_BYTES = (4 + 4) * MB                  # receive buffers + bounce buffers, at most
OSHMEM_UCX_POINTS = [(40960, 51 * MB, "before #9035"), (40960, 3.2 * MB, "after #9058")]


PLOT_PROCS = [2 ** e for e in range(6, 17)]  # 64 .. 64 K
APP_COLORS = {"lu": "tab:blue", "randomaccess": "tab:red", "lj": "tab:green"}


def pyplot():
    """matplotlib's pyplot drawing to files, or None (said on stderr) when it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plots", file=sys.stderr)
        return None
    return plt


def plot_memory(model, apps, cap, aims, out):
    """Writes scale-memory.png into out; aims: [(node size, MiB at 64 K)]."""
    plt = pyplot()
    if plt is None:
        return
    procs, colors = PLOT_PROCS, APP_COLORS
    fig, axes = plt.subplots(1, len(aims), figsize=(14, 6), sharey=True)
    for ax, (k, aim) in zip(axes, aims):
        for app in apps:
            total = [(model.heap(app, n, k, cap) + model.buf_mem(app, n, k, cap, hybrid=True))
                     / MIB for n in procs]
            heap = [model.heap(app, n, k, cap) / MIB for n in procs]
            ax.plot(procs, total, color=colors[app], label=f"{app}: heap + registered")
            ax.plot(procs, heap, color=colors[app], ls=":", label=f"{app}: heap alone")
        ax.axhline(GASNET_IBV_BYTES / MIB, color="k", ls="--",
                   label="GASNet-EX ibv: 4 MB receive + 4 MB bounce (published caps)")
        for n, b, what in OSHMEM_UCX_POINTS:
            ax.plot([n], [b / MIB], marker="D", color="k", ls="none")
            ax.annotate(f"OpenSHMEM/UCX {what}", (n, b / MIB), textcoords="offset points",
                        xytext=(-150, 6), fontsize=7)
        ax.plot([procs[-1]], [aim], marker="*", markersize=12, color="tab:purple", ls="none",
                label=f"issue 48's aim: {aim:g} MiB at 64 K")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"memory per process, {k} a node, cap {cap}, hybrid path (model)",
                     fontsize=10)
        ax.set_xlabel("processes")
        ax.set_ylabel("MiB")
    save(fig, axes, Path(out) / "scale-memory.png", dpi=90)


def save(fig, axes, path, dpi):
    """Grids and legends on every panel, then the figure into path."""
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    print(f"# plot: {path}", file=sys.stderr)
