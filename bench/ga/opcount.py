#!/usr/bin/env python3
"""The bound of a latency-bound GA program: its one-sided calls as counted by
bench/opcount.c (one folder of opcount.<rank>.csv per program and variant,
opcount/<program>.<variant>/), priced at the per-call latency measured on the
same fabric in the same run (latency.csv: variant, call class, microseconds),
beside
the seconds the program really spent in those calls.

    bench/ga/opcount.py RESULTS_DIR

Per program and variant, each figure the largest over the processes: remote
calls and barriers counted, the model (count x latency), and the measured
seconds inside them.
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

# Which latency prices which call: a strided or vector call is priced as one
# operation of its kind (its rows travel together).
CLASS_OF = {
    "Put": "put", "NbPut": "put", "PutS": "put", "NbPutS": "put", "PutS_flag": "put",
    "PutV": "put", "NbPutV": "put",
    "Get": "get", "NbGet": "get", "GetS": "get", "NbGetS": "get", "GetV": "get", "NbGetV": "get",
    "Acc": "acc", "NbAcc": "acc", "AccS": "acc", "NbAccS": "acc", "AccV": "acc", "NbAccV": "acc",
    "Rmw": "rmw", "Lock": "lock", "Unlock": "lock",
    "Barrier": "barrier", "msg_barrier": "barrier",
}
WAITS = ("Wait", "WaitAll", "WaitProc", "Test", "Fence", "AllFence")


def read_latency(out):
    """{variant: {class: usec}}."""
    latency = defaultdict(dict)
    with open(out / "latency.csv") as f:
        for r in csv.DictReader(f):
            latency[r["variant"]][r["class"]] = float(r["usec"])
    return latency


def read_ranks(folder):
    """Per rank: {(call, where): (calls, seconds)}."""
    ranks = defaultdict(dict)
    for path in sorted(folder.glob("opcount.*.csv")):
        with open(path) as f:
            for r in csv.DictReader(f):
                ranks[int(r["rank"])][(r["call"], r["where"])] = (int(r["calls"]),
                                                                    float(r["seconds"]))
    return ranks


def bound_row(tally, latency):
    remote = barriers = 0
    model = in_remote = in_barrier = in_waits = 0.0
    for (call, where), (calls, seconds) in tally.items():
        cls = CLASS_OF.get(call)
        if cls == "barrier":
            barriers += calls
            in_barrier += seconds
            model += calls * latency.get("barrier", 0) * 1e-6
        elif cls and where == "remote":
            remote += calls
            in_remote += seconds
            model += calls * latency.get(cls, latency.get("get", 0)) * 1e-6
        elif call in WAITS:
            in_waits += seconds
    return remote, barriers, model, in_remote + in_waits, in_barrier


def main(out):
    out = Path(out)
    latency = read_latency(out)
    print("### Latency bound: one-sided calls counted x the fabric's per-call latency\n")
    for variant, prices in latency.items():
        print(f"Per-call latency measured in this run, {variant} (us): "
              + ", ".join(f"{k} {v:.2f}" for k, v in prices.items()) + "\n")
    print("| program | variant | run s | remote calls | barriers | model s | in remote calls "
          "and waits s | in barriers s |")
    print("|---|---|---|---|---|---|---|---|")
    for folder in sorted((out / "opcount").iterdir()):
        program, variant = folder.name.split(".", 1)
        ranks = read_ranks(folder)
        if not ranks:
            continue
        rows = [bound_row(t, latency[variant]) for t in ranks.values()]
        remote, barriers, model, in_remote, in_barrier = (max(col) for col in zip(*rows))
        run = max(t.get(("run", "-"), (0, 0.0))[1] for t in ranks.values())
        print(f"| {program} | {variant} | {run:.3f} | {remote} | {barriers} | {model:.3f} | "
              f"{in_remote:.3f} | {in_barrier:.3f} |")
    print("\nEach column is its largest over the 4 processes. Model: remote calls x the 8 B "
          "latency of their kind (a strided or vector call as one operation) + barriers x the "
          "barrier's latency; beside it the seconds measured inside those calls.")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
