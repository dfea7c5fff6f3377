#!/usr/bin/env python3
"""Prints the ratios the project's issues ask for from a bench/run-all.sh results directory."""
import csv
import sys
from pathlib import Path


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def pick(table, **want):
    for r in table:
        if all(str(r.get(k)) == str(v) for k, v in want.items()):
            return r
    return None


def num(r, key):
    return float(r[key]) if r and r.get(key) not in (None, "") else float("nan")


def threads_summary(out):
    path = out / "threads.csv"
    if not path.exists():
        return
    t = rows(path)
    for layout in ("same-node", "cross-node"):
        for op in ("put", "get", "acc"):
            single = num(pick(t, layout=layout, level="single", op=op, bytes=8), "usec_per_op")
            multi = num(pick(t, layout=layout, level="multiple", op=op, bytes=8), "usec_per_op")
            bw_s = num(pick(t, layout=layout, level="single", op=op, bytes=1048576), "MB_per_s")
            bw_m = num(pick(t, layout=layout, level="multiple", op=op, bytes=1048576), "MB_per_s")
            rates = [num(pick(t, layout=layout, level="multiple-rate", op=op, threads=n),
                         "ops_per_s") for n in (1, 2, 4)]
            print("threads %s %s: 8 B %.3f us SINGLE, %.3f us MULTIPLE (x%.2f); 1 MiB %.0f / %.0f"
                  " MB/s; 8 B rate with 1, 2, 4 threads %.0f, %.0f, %.0f ops/s"
                  % (layout, op, single, multi, multi / single, bw_s, bw_m, *rates))


def main(out):
    out = Path(out)
    soft = rows(out / "softib.csv")
    mib = pick(soft, size_bytes=1048576)
    print("softib: 8 B ping-pong %.2f us; 1 MiB RDMA write %.0f MB/s = %.2f x memcpy (%.0f MB/s)"
          % (num(pick(soft, size_bytes=8), "pingpong_lat_us"), num(mib, "rdma_write_MBps"),
             num(mib, "rdma_write_MBps") / num(mib, "memcpy_MBps"), num(mib, "memcpy_MBps")))
    raw_write = num(mib, "rdma_write_MBps")
    small = rows(out / "softib-4k.csv") if (out / "softib-4k.csv").exists() else []
    raw_write_4k = num(pick(small, size_bytes=1048576), "rdma_write_MBps") if small else float("nan")
    print("softib with 4 KiB pages (like shared-memory segments here): 1 MiB RDMA write %.0f MB/s"
          % raw_write_4k)

    rma = rows(out / "rma.csv")
    peak = lambda impl, layout, op: max((num(r, "MB_per_s") for r in rma
                                         if r["impl"] == impl and r["layout"] == layout
                                         and r["op"] == op), default=float("nan"))
    for layout in ("same-node", "cross-node"):
        put, get, acc = (peak("odcm", layout, o) for o in ("put", "get", "acc"))
        mem = peak("odcm", layout, "memcpy")
        lat = num(pick(rma, impl="odcm", layout=layout, op="put", bytes=8), "usec_per_op")
        print("%s: 8 B put %.2f us; peak put %.0f get %.0f acc %.0f MB/s; put/memcpy %.2f; "
              "acc/put %.2f" % (layout, lat, put, get, acc, put / mem, acc / put))
    print("cross-node peak put / softib raw RDMA write: %.2f (huge pages), %.2f (4 KiB pages); "
          "get: %.2f, %.2f"
          % (peak("odcm", "cross-node", "put") / raw_write,
             peak("odcm", "cross-node", "put") / raw_write_4k,
             peak("odcm", "cross-node", "get") / raw_write,
             peak("odcm", "cross-node", "get") / raw_write_4k))
    mpi_layouts = {r["layout"] for r in rma if r["impl"] == "armci-mpi"}
    for layout in mpi_layouts:
        for op in ("put", "get", "acc"):
            print("ARMCI-MPI (%s) peak %s %.0f MB/s; ours same-node / ARMCI-MPI %.2f, "
                  "cross-node / ARMCI-MPI %.2f"
                  % (layout, op, peak("armci-mpi", layout, op),
                     peak("odcm", "same-node", op) / peak("armci-mpi", layout, op),
                     peak("odcm", "cross-node", op) / peak("armci-mpi", layout, op)))

    st = rows(out / "strided.csv")
    speak = lambda impl, layout, variant, op: max(
        (num(r, "MB_per_s") for r in st if r["impl"] == impl and r["layout"] == layout
         and r["variant"] == variant and r["op"] == op), default=float("nan"))
    for layout in ("same-node", "cross-node"):
        contig = speak("odcm", layout, "default", "put-contig")
        mpi_puts = speak("armci-mpi", "same-host", "default", "puts")
        mpi_gets = speak("armci-mpi", "same-host", "default", "gets")
        print("strided %s vs ARMCI-MPI (same host): puts %.2f gets %.2f"
              % (layout, speak("odcm", layout, "default", "puts") / mpi_puts,
                 speak("odcm", layout, "default", "gets") / mpi_gets))
        print("strided %s: peak puts/contig %.2f gets/contig %.2f accs/contig %.2f"
              % (layout, speak("odcm", layout, "default", "puts") / contig,
                 speak("odcm", layout, "default", "gets") / contig,
                 speak("odcm", layout, "default", "accs") / contig))
        big = max(int(r["n"]) for r in st if r["impl"] == "odcm" and r["layout"] == layout)
        at = lambda op: num(pick(st, impl="odcm", layout=layout, variant="default", op=op, n=big),
                            "MB_per_s")
        print("strided %s at %dx%d (same bytes as the contiguous put): puts/contig %.2f "
              "gets/contig %.2f accs/contig %.2f"
              % (layout, big, big, at("puts") / at("put-contig"), at("gets") / at("put-contig"),
                 at("accs") / at("put-contig")))
    for n in (4, 8, 16, 32, 64):
        vals = []
        for variant in ("all-rdma", "all-packed", "default"):
            r = pick(st, impl="odcm", layout="cross-node", variant=variant, op="puts", n=n)
            vals.append(num(r, "MB_per_s"))
        print("cross-node PutS %3dx%-3d (chunk %5d B): all-RDMA %8.1f  packed %8.1f  default "
              "%8.1f MB/s" % (n, n, n * 8, *vals))

    con = rows(out / "connect.csv")
    def median(vals):
        vals = sorted(vals)
        return vals[len(vals) // 2] if vals else float("nan")
    def samples(mode, protocol, np_, scenario):
        return [num(r, "usec") for r in con if r["mode"] == mode and r["protocol"] == protocol
                and r["procs"] == np_ and r["scenario"] == scenario]
    for np_ in sorted({r["procs"] for r in con}, key=int):
        o = median(samples("ondemand", "overlap", np_, "one-to-one"))
        s = median(samples("ondemand", "serial", np_, "one-to-one"))
        oa = median(samples("ondemand", "overlap", np_, "one-to-all"))
        sa = median(samples("ondemand", "serial", np_, "one-to-all"))
        si = median(samples("static", "overlap", np_, "init"))
        oi = median(samples("ondemand", "overlap", np_, "init"))
        print("connect %s procs: one-to-one median overlap %.0f us, serial %.0f us (ratio %.2f, "
              "%d samples); one-to-all overlap %.0f, serial %.0f; ARMCI_Init static %.0f us vs "
              "on-demand %.0f us"
              % (np_, o, s, o / s, len(samples("ondemand", "overlap", np_, "one-to-one")), oa, sa,
                 si, oi))

    threads_summary(out)

    bar = rows(out / "barrier.csv")
    for r in bar:
        if r["impl"] != "armci-rdma-barrier":
            continue
        same = dict(mpi_transport=r["mpi_transport"], procs=r["procs"], node_size=r["node_size"])
        mpi = pick(bar, impl="mpi-barrier", **same)
        sr = pick(bar, impl="sendrecv-dissemination", **same)
        print("barrier %s procs, node size %s (%s nodes), MPI over %s: rdma %.1f us, MPI %.1f us, "
              "send/recv %.1f us; rdma/sendrecv %.2f, rdma/MPI %.2f"
              % (r["procs"], r["node_size"], r["nodes"], r["mpi_transport"],
                 num(r, "usec_per_barrier"), num(mpi, "usec_per_barrier"),
                 num(sr, "usec_per_barrier"),
                 num(r, "usec_per_barrier") / num(sr, "usec_per_barrier"),
                 num(r, "usec_per_barrier") / num(mpi, "usec_per_barrier")))

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
