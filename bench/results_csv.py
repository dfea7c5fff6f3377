"""Reading the benchmarks' CSV files: shared by plot.py, summarize.py, scale_model.py and
merge_csv.py.

A file is read by its header, not by line position: lines before the header (a launcher's
warning that reached the same stream) and lines that are not rows of it (a repeated header,
a line cut short) are left out, each named on stderr."""
import csv
import math
import re
import sys

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def is_header(fields):
    """A header: two or more column names and nothing else."""
    return len(fields) >= 2 and all(_NAME.match(f) for f in fields)


def table(lines, where="csv"):
    """(header, rows as dicts) of CSV text given as lines; ([], []) without a header."""
    header, out = [], []
    for n, fields in enumerate(csv.reader(lines), 1):
        if not fields:
            continue
        if not header:
            if is_header(fields):
                header = fields
            else:
                print("%s:%d: not a CSV row, left out: %s" % (where, n, ",".join(fields)),
                      file=sys.stderr)
            continue
        if fields == header:
            continue  # the header again: several runs' output in one file
        if len(fields) != len(header) or is_header(fields):
            print("%s:%d: not a row of this header, left out: %s" % (where, n, ",".join(fields)),
                  file=sys.stderr)
            continue
        out.append(dict(zip(header, fields)))
    return header, out


def rows(path):
    """Every row of a CSV file as a dict keyed by its header."""
    with open(path, newline="") as f:
        return table(f, str(path))[1]


def num(r, key):
    """r[key] as a float; NaN when the row, the column or a number is missing."""
    try:
        return float(r[key])
    except (KeyError, TypeError, ValueError):
        return math.nan
