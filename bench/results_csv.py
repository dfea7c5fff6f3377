"""Reading the benchmarks' CSV files: shared by plot.py, summarize.py and scale_model.py."""
import csv
import math


def rows(path):
    """Every line of a CSV file as a dict keyed by its header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(r, key):
    """r[key] as a float; NaN when the row, the column or a number is missing."""
    try:
        return float(r[key])
    except (KeyError, TypeError, ValueError):
        return math.nan
