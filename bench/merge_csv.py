#!/usr/bin/env python3
"""Merges the CSV output of several benchmark runs into one file, by header:
    merge_csv.py OUT PART...
Each part is read by its own header (results_csv.table: whatever stands before the header or
is no row of it is left out and named on stderr); OUT gets the union of the parts' columns in
the order they first appear, and every row under it. A part without a header (a run that
died before its first row) is named on stderr and adds nothing."""
import csv
import sys

from results_csv import table


def merge(out_path, parts):
    columns, all_rows = [], []
    for part in parts:
        with open(part, newline="") as f:
            header, rows = table(f, part)
        if not header:
            print("%s: no CSV header, nothing taken" % part, file=sys.stderr)
        columns += [c for c in header if c not in columns]
        all_rows += rows
    with open(out_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(all_rows)
    return len(all_rows)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: merge_csv.py OUT PART...")
    merge(sys.argv[1], sys.argv[2:])
