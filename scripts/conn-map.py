#!/usr/bin/env python3
"""Draws a job's connection map (ARMCI_CONN_MAP=file:MAP.json) as heat maps.

    python3 scripts/conn-map.py MAP.json [OUT_PREFIX]

Writes OUT_PREFIX.png and OUT_PREFIX.svg (default: MAP without .json): the
node x node matrix of the processes of each node that connected to each
node's data server, beside the matrix static mode would have opened for the
same job (every process to every other node), with the totals of the
connection report. Under a cap (ARMCI_MAX_CONNECTIONS) or with the hybrid UD
path, a second row shows how often each pair's connections were opened
(reopenings included) and the share of its operations that went over UD.
Needs matplotlib (Debian: python3-matplotlib); the SVG is deterministic.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "armci-odcm-conn-map"
import matplotlib.pyplot as plt  # noqa: E402 (the backend is chosen first)
from matplotlib.colors import LinearSegmentedColormap  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

# White for "no connection", so the pattern stands out.
CMAP = LinearSegmentedColormap.from_list("conn", ["#ffffff", "#9ecae1", "#08306b"])


def static_matrix(m):
    n, procs = m["nodes"], m["node_procs"]
    return [[procs[i] if i != j or m["loopback"] else 0 for j in range(n)] for i in range(n)]


def ud_share(m):
    n = m["nodes"]
    out = []
    for i in range(n):
        row = []
        for j in range(n):
            total = m["rc_ops"][i][j] + m["ud_ops"][i][j]
            row.append(m["ud_ops"][i][j] / total if total else 0.0)
        out.append(row)
    return out


def panel(fig, ax, matrix, title, label, vmax=None):
    vmax = vmax or max(1, max(map(max, matrix)))
    im = ax.imshow(matrix, cmap=CMAP, vmin=0, vmax=vmax, interpolation="nearest")
    cells = sum(1 for row in matrix for v in row if v)
    ax.set_title(f"{title}\n{cells} of {len(matrix) ** 2} node pairs", fontsize=10)
    ax.set_xlabel("data server's node")
    ax.set_ylabel("client's node")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=8))
    fig.colorbar(im, ax=ax, label=label, shrink=0.85)


def totals_text(m):
    t = m["totals"]
    ratio = t["mem_bytes"] / t["static_mem_bytes"] if t["static_mem_bytes"] else 0
    lines = [
        f"{m['mode']} connections ({m['protocol']} protocol), {m['procs']} processes on "
        f"{m['nodes']} nodes" + (f", cap {m['cap']}" if m["cap"] else "") +
        (", hybrid UD path" if m["hybrid"] else ""),
        f"client->server per process: min {t['c2s_min']}, avg {t['c2s_avg']:.2f}, "
        f"max {t['c2s_max']} (static mode {t['static_c2s']}); server->client per server: "
        f"min {t['s2c_min']}, avg {t['s2c_avg']:.2f}, max {t['s2c_max']}",
        f"connection memory {t['mem_bytes'] / 1024:.1f} KiB (static mode "
        f"{t['static_mem_bytes'] / 1024:.1f} KiB, ratio {ratio:.3f}); {t['setups']} setups, "
        f"{t['closed']} closed, {t['reopened']} reopened; operations over RC "
        f"{sum(map(sum, m['rc_ops']))}, over UD {sum(map(sum, m['ud_ops']))}",
    ]
    return "\n".join(lines)


def main(path, prefix):
    with open(path, encoding="utf-8") as f:
        m = json.load(f)
    churn = m["cap"] or m["hybrid"] or sum(map(sum, m["closed"]))
    rows = 2 if churn else 1
    fig, axes = plt.subplots(rows, 2, figsize=(11, 4.4 * rows + 0.8), squeeze=False,
                             layout="constrained")
    static = static_matrix(m)
    vmax = max(1, max(map(max, static)))
    panel(fig, axes[0][0], m["connected"], "this job: processes connected", "processes", vmax)
    panel(fig, axes[0][1], static, "static mode: every process to every other node",
          "processes", vmax)
    if churn:
        panel(fig, axes[1][0], m["opened"], "connections opened (reopenings included)",
              "openings")
        panel(fig, axes[1][1], ud_share(m), "share of operations over UD", "UD / (RC + UD)", 1.0)
    fig.suptitle(totals_text(m), fontsize=8.5, x=0.02, ha="left")
    fig.savefig(prefix + ".png", dpi=80)
    fig.savefig(prefix + ".svg", metadata={"Date": None, "Creator": None})
    print(f"wrote {prefix}.png and {prefix}.svg")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip())
        sys.exit(2)
    map_path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else map_path.removesuffix(".json")
    sys.exit(main(map_path, out))
