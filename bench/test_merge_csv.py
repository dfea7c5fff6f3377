#!/usr/bin/env python3
"""Test of the merge of benchmark CSV runs (bench/run-all.sh, issue 50 item 5):
    test_merge_csv.py [MERGE_COMMAND...]
On 94a6bea a 32-process run of bench_connect did not begin with its header; run-all.sh
dropped its first line by position (tail -n +2), so connect.csv lost a data row and kept
that header in the middle, and summarize.py died on int('procs'). Here the second of three
runs has a stray line in front of its header and the third one inside it. The merged file
must hold every row, no header among them, and parse with the plain csv module; the
tolerant reader (results_csv.rows) must read a single file with a stray line in front.
MERGE_COMMAND (default: merge_csv.py beside this file) is called as MERGE_COMMAND OUT PART..."""
import csv
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from results_csv import rows  # noqa: E402

HEADER = "mode,protocol,procs,scenario,connections,usec"
RUNS = [
    ["ondemand,overlap,2,init,0,812.5", "ondemand,overlap,2,one-to-one,1,95.0"],
    ["ondemand,overlap,32,init,0,9123.0", "ondemand,overlap,32,one-to-one,1,101.5",
     "ondemand,overlap,32,one-to-all,31,2210.0"],
    ["static,overlap,32,init,31,40210.0", "static,overlap,32,one-to-one,1,4.5"],
]
STRAY = "[host:01234] mca_base_component_repository_open: unable to open mca_btl_openib"


def main():
    merge = sys.argv[1:] or [sys.executable, os.path.join(here, "merge_csv.py")]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        parts = []
        for i, run in enumerate(RUNS):
            lines = [HEADER] + run
            if i == 1:
                lines = [STRAY] + lines  # in front: the 94a6bea failure
            if i == 2:
                lines.insert(2, STRAY)  # between two rows
            parts.append(os.path.join(d, "connect.%03d.csv" % (i + 1)))
            with open(parts[-1], "w") as f:
                f.write("\n".join(lines) + "\n")
        out = os.path.join(d, "connect.csv")
        subprocess.run(merge + [out] + parts, check=True, stderr=subprocess.DEVNULL)

        with open(out, newline="") as f:
            merged = list(csv.DictReader(f))
        want = [dict(zip(HEADER.split(","), r.split(","))) for run in RUNS for r in run]
        if merged != want:
            failures.append("merged rows differ:\n  got  %s\n  want %s" % (merged, want))
        for r in merged:
            try:
                int(r["procs"])
            except (KeyError, TypeError, ValueError):
                failures.append("a row that summarize.py cannot read: %s" % r)

        # The reader itself, on one run's file with a stray line in front of its header.
        single = os.path.join(d, "single.csv")
        with open(single, "w") as f:
            f.write("\n".join([STRAY, HEADER] + RUNS[1]) + "\n")
        got = rows(single)
        if got != [dict(zip(HEADER.split(","), r.split(","))) for r in RUNS[1]]:
            failures.append("results_csv.rows with a stray line in front: %s" % got)
    for f in failures:
        print("FAIL:", f)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
