#!/usr/bin/env python3
"""Draws the code map, docs/architecture.svg, from the layer table the
`layers` test enforces (tests/core/test_layers.py: LAYERS, RANK, TRANSPORT)
and from the includes as they are: one band per layer, bottom up, one box
per folder, an arrow from a folder to every folder it includes headers of,
and armci/transport/'s files in their order beside it.

    scripts/draw-architecture.py [SOURCE_ROOT]          rewrites docs/architecture.svg
    scripts/draw-architecture.py --check [SOURCE_ROOT]  fails if it differs (core test)

Plain SVG written by hand: no dependency, and the same tree gives the same
bytes (sorted, no dates).
"""
import importlib.util
import os
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))


def load_layers(root):
    path = os.path.join(root, "tests", "core", "test_layers.py")
    spec = importlib.util.spec_from_file_location("test_layers", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# What each folder is for (README, docs/ARCHITECTURE.md); a folder missing here is drawn without.
ROLE = {
    "common": "header-only helpers",
    "armci/core": "config, errors, shm, topology",
    "armci/strided": "maps, acc kernels, strides",
    "armci/verbs": "provider, device, endpoint, MRs",
    "armci/odcm": "connection manager, UD, report",
    "armci/transport": "inter-node data path",
    "armci/dataserver": "the per-node server thread",
    "armci/api": "ARMCI_* calls: check, dispatch",
    "armci/init.c": "start-up and shutdown order",
}

BOX_W, BOX_H, BAND_H, GAP = 210, 46, 96, 30
LEFT, TOP = 130, 70
LIST_X = 900  # the transport's files
STAGGER = 110


def folder_edges(mod, root):
    """Counter of (from folder, to folder) include edges, from the same scan as the test."""
    places = [p for _, ps in mod.LAYERS for p in ps]

    def place_of(path):
        for p in places:
            if path == p or path.startswith(p + "/"):
                return p
        return None

    edges = Counter()
    files = Counter()
    for top in ("armci", "common"):
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                mine = place_of(path)
                if mine is None:
                    continue
                files[mine] += 1
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                for inc in mod.INCLUDE.findall(text):
                    for base in (os.path.dirname(path), "armci", "."):
                        cand = os.path.normpath(os.path.join(base, inc))
                        if os.path.exists(os.path.join(root, cand)):
                            theirs = place_of(cand)
                            if theirs and theirs != mine:
                                edges[(mine, theirs)] += 1
                            break
    return edges, files


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def draw(root):
    mod = load_layers(root)
    edges, files = folder_edges(mod, root)
    ranks = sorted(set(mod.RANK.values()))
    top_rank = ranks[-1]
    # Folders of each rank, left to right in the table's order.
    by_rank = {r: [] for r in ranks}
    layer_of = {}
    for name, places in mod.LAYERS:
        for p in places:
            by_rank[mod.RANK[name]].append(p)
            layer_of[p] = name
    width_used = max(len(v) for v in by_rank.values()) * (BOX_W + GAP) - GAP
    pos = {}
    for r, places in by_rank.items():
        row_w = len(places) * (BOX_W + GAP) - GAP
        x0 = LEFT + (width_used - row_w) / 2
        if len(places) == 1:  # single boxes alternate sides, so arrows past them stay visible
            x0 += STAGGER * (1 if r % 2 else -1)
        y = TOP + (top_rank - r) * BAND_H
        for i, p in enumerate(places):
            pos[p] = (x0 + i * (BOX_W + GAP), y)
    height = TOP + (top_rank + 1) * BAND_H + 40
    list_h = 24 + 15 * len(mod.TRANSPORT)
    height = max(height, TOP + list_h + 40)
    width = LIST_X + 260
    out, labels = [], []
    w = out.append
    w(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
      f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">')
    w('<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
      'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
      'fill="#555"/></marker></defs>')
    w('<rect width="100%" height="100%" fill="#ffffff"/>')
    w(f'<text x="20" y="30" font-size="18" font-weight="bold">ARMCI-ODCM code map: '
      f'layers of armci/, each including only its own or lower ones</text>')
    w(f'<text x="20" y="50" font-size="12" fill="#444">Generated by '
      f'scripts/draw-architecture.py from tests/core/test_layers.py (test layers) and the '
      f'includes; arrow: "includes headers of" (number of includes)</text>')
    # Bands.
    for r in ranks:
        y = TOP + (top_rank - r) * BAND_H
        names = sorted({n for n, rr in mod.RANK.items() if rr == r})
        fill = "#f4f7fb" if r % 2 else "#eaf0f7"
        w(f'<rect x="10" y="{y - 14}" width="{LIST_X - 40}" height="{BAND_H - 8}" '
          f'fill="{fill}" rx="6"/>')
        w(f'<text x="20" y="{y + BOX_H / 2 + 4}" font-size="13" font-weight="bold" '
          f'fill="#345">{esc(" / ".join(names))}</text>')
    # Arrows, below the boxes: each leaves its box's bottom and enters the target's top at a port
    # of its own (ordered by the other end's x, so they fan out instead of meeting in a point).
    outs, ins = {}, {}
    for a, b in sorted(edges):
        if abs(pos[a][1] - pos[b][1]) >= 1:
            outs.setdefault(a, []).append(b)
            ins.setdefault(b, []).append(a)

    def port(box, others, other, y_off):
        x, y = pos[box]
        order = sorted(others, key=lambda o: (pos[o][0], pos[o][1]))
        k = order.index(other)
        return x + BOX_W * (k + 1) / (len(order) + 1), y + y_off

    for (a, b), n in sorted(edges.items()):
        ax, ay = pos[a]
        bx, by = pos[b]
        if abs(ay - by) < 1:  # peers in one band: side to side
            y1 = y2 = ay + BOX_H / 2
            x1, x2 = (ax + BOX_W, bx) if ax < bx else (ax, bx + BOX_W)
            d = f"M{x1:.0f},{y1:.0f} L{x2:.0f},{y2:.0f}"
            lx, ly = (x1 + x2) / 2 - 3, y1 - 4
        else:
            x1, y1 = port(a, outs[a], b, BOX_H)
            x2, y2 = port(b, ins[b], a, 0)
            d = f"M{x1:.0f},{y1:.0f} C{x1:.0f},{y1 + 40:.0f} {x2:.0f},{y2 - 40:.0f} {x2:.0f},{y2:.0f}"
            lx, ly = x2 + 2, y2 - 6
        sw = 1 + min(n, 60) / 20
        w(f'<path d="{d}" fill="none" stroke="#555" stroke-opacity="0.6" '
          f'stroke-width="{sw:.2f}" marker-end="url(#head)"><title>{esc(a)} includes {esc(b)}: '
          f'{n}</title></path>')
        labels.append(f'<text x="{lx:.0f}" y="{ly:.0f}" font-size="10" fill="#1d3f5e">{n}</text>')
    # Boxes.
    for p, (x, y) in sorted(pos.items()):
        w(f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="#ffffff" '
          f'stroke="#2b5d8a" stroke-width="1.5"/>')
        label = p + ("/" if not p.endswith(".c") else "")
        w(f'<text x="{x + 8}" y="{y + 18}" font-size="13" font-weight="bold">{esc(label)} '
          f'<tspan font-weight="normal" fill="#666">({files[p]} file{"s" if files[p] != 1 else ""})</tspan></text>')
        w(f'<text x="{x + 8}" y="{y + 36}" font-size="11" fill="#333">'
          f'{esc(ROLE.get(p, ""))}</text>')
    # The transport's files, bottom up as TRANSPORT orders them.
    w(f'<rect x="{LIST_X - 10}" y="{TOP - 14}" width="250" height="{list_h}" rx="6" '
      f'fill="#fbf7ee" stroke="#c9b37e"/>')
    w(f'<text x="{LIST_X}" y="{TOP + 4}" font-size="13" font-weight="bold">armci/transport/, '
      f'top down</text>')
    for i, name in enumerate(reversed(mod.TRANSPORT)):
        w(f'<text x="{LIST_X + 8}" y="{TOP + 22 + 15 * i}" font-size="11" '
          f'font-family="DejaVu Sans Mono, monospace">{len(mod.TRANSPORT) - i:2d} '
          f'{esc(name)}</text>')
    out.extend(labels)
    w("</svg>")
    return "\n".join(out) + "\n"


def main(argv):
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    root = os.path.abspath(args[0]) if args else os.path.dirname(HERE)
    svg = draw(root)
    path = os.path.join(root, "docs", "architecture.svg")
    if check:
        try:
            with open(path, encoding="utf-8") as f:
                old = f.read()
        except FileNotFoundError:
            old = None
        if old != svg:
            print(f"FAIL: {os.path.relpath(path, root)} differs from the layer table and the "
                  "includes: run scripts/draw-architecture.py and commit the picture")
            return 1
        print(f"PASS: {os.path.relpath(path, root)} is the layer table's picture")
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(svg)
    print(f"wrote {os.path.relpath(path, root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
