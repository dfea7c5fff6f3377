#!/usr/bin/env python3
"""Compares two or more pairs of bench/run-all.sh result folders, row by row.

    bench/compare.py BEFORE1 AFTER1 [BEFORE2 AFTER2 ...]

For each row of each CSV (the same benchmark, layout, size...), the slowdown is
the after figure over the before one, in time per operation (above 1: slower).
Pairs are sittings: a row counts as worse only if it is more than 10 % slower in
every sitting, since one run on a shared 2-core host is noisy. The rows of the
other runtimes (ARMCI-MPI, MPI's barrier) run the same code before and after:
their slowdowns show how noisy the sitting was.
"""
import csv
import statistics
import sys
from pathlib import Path

# Time per operation, lower is better, whichever the CSV has.
TIME_COLUMNS = ("usec_per_op", "usec_per_barrier", "usec")
NOT_KEYS = set(TIME_COLUMNS) | {"iterations", "MB_per_s", "ops_per_s"}
OURS = ("odcm", "static", "ondemand", "armci-rdma-barrier", "softib")
WORSE = 1.10


def rows(folder):
    out = {}
    for path in sorted(Path(folder).glob("*.csv")):
        with open(path) as f:
            for r in csv.DictReader(f):
                col = next((c for c in TIME_COLUMNS if c in r and r[c]), None)
                if col is None:
                    continue
                key = (path.stem,) + tuple(f"{k}={v}" for k, v in r.items() if k not in NOT_KEYS)
                try:
                    out[key] = float(r[col])
                except ValueError:
                    pass
    return out


def is_ours(key):
    return any(part.split("=", 1)[-1].startswith(OURS) for part in key[1:3]) or key[0] == "connect"


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    sittings = []
    for before, after in zip(argv[0::2], argv[1::2]):
        b, a = rows(before), rows(after)
        sittings.append({k: a[k] / b[k] for k in b.keys() & a.keys() if b[k] > 0})
    common = set.intersection(*(set(s) for s in sittings))
    print("file,rows,ours: median slowdown per sitting,others (noise): median slowdown per sitting")
    for stem in sorted({k[0] for k in common}):
        ours = [k for k in common if k[0] == stem and is_ours(k)]
        others = [k for k in common if k[0] == stem and not is_ours(k)]

        def medians(keys):
            if not keys:
                return "-"
            return " ".join(f"{statistics.median(s[k] for k in keys):.2f}" for s in sittings)

        print(f"{stem},{len(ours) + len(others)},{medians(ours)},{medians(others)}")
    worse = sorted(k for k in common if is_ours(k) and all(s[k] > WORSE for s in sittings))
    print(f"\nrows of ours more than {round((WORSE - 1) * 100)} % slower in every sitting: "
          f"{len(worse)} of {sum(1 for k in common if is_ours(k))}")
    for k in worse:
        print("  " + " ".join(k) + ": " + " ".join(f"{s[k]:.2f}" for s in sittings))


if __name__ == "__main__":
    main(sys.argv[1:])
