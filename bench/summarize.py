#!/usr/bin/env python3
"""Prints the ratios the project's issues ask for from a bench/run-all.sh results directory."""
import sys
from pathlib import Path

from results_csv import num, rows



def pick(table, **want):
    for r in table:
        if all(str(r.get(k)) == str(v) for k, v in want.items()):
            return r
    return None



ACC_TYPES = ("int", "lng", "flt", "dbl", "cpl", "dcp")


def rate_summary(out):
    path = out / "rate.csv"
    if not path.exists():
        return
    t = rows(path)
    for impl, layout in (("odcm", "cross-node"), ("odcm", "same-node"), ("armci-mpi", "same-host")):
        for op in ("put", "get", "acc"):
            sel = sorted(((int(r["outstanding"]), num(r, "ops_per_s")) for r in t
                          if r["impl"] == impl and r["layout"] == layout and r["op"] == op))
            if not sel:
                continue
            one = dict(sel).get(1, float("nan"))
            print("rate %s %s 8 B %s: %s ops/s by outstanding; %d outstanding / 1: %.2f"
                  % (impl, layout, op, " ".join("%d:%.0f" % (w, v) for w, v in sel), sel[-1][0],
                     sel[-1][1] / one))
        # Vectors of 1024 x 8 B against one contiguous transfer of the same 8 KiB.
        for vec, contig in (("putv-1024x8", "put-8k"), ("accv-1024x8", "acc-8k")):
            v = pick(t, impl=impl, layout=layout, op=vec)
            c = pick(t, impl=impl, layout=layout, op=contig)
            if v and c:
                print("rate %s %s %s: %.1f us a call, %.0f pieces/s; / %s: %.2f"
                      % (impl, layout, vec, num(v, "usec_per_op"), 1024 * num(v, "ops_per_s"),
                         contig, num(v, "ops_per_s") / num(c, "ops_per_s")))
        get1 = pick(t, impl=impl, layout=layout, op="get", outstanding=1)
        for rmw in ("rmw-fadd-long", "rmw-fadd-int", "rmw-swap-long", "rmw-fadd-long-own",
                    "rmw-fadd-int-own", "rmw-swap-long-own"):
            r = pick(t, impl=impl, layout=layout, op=rmw)
            if r and get1:
                print("rate %s %s %s: %.2f us, %.0f ops/s; / 8 B get latency: %.2f"
                      % (impl, layout, rmw, num(r, "usec_per_op"), num(r, "ops_per_s"),
                         num(r, "usec_per_op") / num(get1, "usec_per_op")))


def ga_patch_summary(out):
    """GA's shapes: malloc'd local memory (4 KiB and huge pages) against registered, and against a
    contiguous put of the same bytes."""
    path = out / "ga-patch.csv"
    if not path.exists():
        return
    t = rows(path)
    for layout in sorted({r["layout"] for r in t}):
        for variant in sorted({r["variant"] for r in t if r["layout"] == layout}):
            for r in t:
                if (r["layout"], r["variant"]) != (layout, variant) or not r["local"].startswith(
                        "malloc"):
                    continue
                shape = dict(layout=layout, variant=variant, rows=r["rows"], cols=r["cols"])
                reg = pick(t, local="registered", op=r["op"], **shape)
                contig = pick(t, op="put-contig", **shape)
                print("ga-patch %s %s %s %sx%s (%s B): %s %.0f, registered %.0f MB/s; "
                      "/registered %.2f, /contiguous put %.2f"
                      % (layout, variant, r["op"], r["rows"], r["cols"], r["bytes"], r["local"],
                         num(r, "MB_per_s"), num(reg, "MB_per_s"),
                         num(r, "MB_per_s") / num(reg, "MB_per_s"),
                         num(r, "MB_per_s") / num(contig, "MB_per_s")))


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
    for r in rma:
        if r["op"] == "acc":  # result folders from before accumulate ran for every type
            r["op"] = "acc-dbl"
    peak = lambda impl, layout, op: max((num(r, "MB_per_s") for r in rma
                                         if r["impl"] == impl and r["layout"] == layout
                                         and r["op"] == op), default=float("nan"))
    for layout in ("same-node", "cross-node"):
        put, get, acc = (peak("odcm", layout, o) for o in ("put", "get", "acc-dbl"))
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
    acc_types = [t for t in ACC_TYPES if any(r["op"] == "acc-" + t for r in rma)]
    for impl, layout in (("odcm", "cross-node"), ("odcm", "same-node"), ("armci-mpi", "same-host")):
        put = peak(impl, layout, "put")
        if put != put:
            continue
        print("acc/put peak %s %s: %s"
              % (impl, layout, "  ".join("%s %.2f" % (t, peak(impl, layout, "acc-" + t) / put)
                                         for t in acc_types)))
    put = peak("odcm", "cross-node", "put")
    accs = {t: peak("odcm", "cross-node", "acc-" + t) for t in acc_types}
    best = max(accs, key=accs.get, default=None)
    worst = min(accs, key=accs.get, default=None)
    if best:
        print("cross-node peak accumulate / peak put: %.2f (acc-dbl %.0f / put %.0f MB/s); best "
              "type %s %.2f, worst %s %.2f"
              % (accs.get("dbl", float("nan")) / put, accs.get("dbl", float("nan")), put,
                 best, accs[best] / put, worst, accs[worst] / put))
    mpi_layouts = sorted({r["layout"] for r in rma if r["impl"] == "armci-mpi"})
    for layout in mpi_layouts:
        for op in ("put", "get", "acc-dbl"):
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
        for n in sorted({512, max(int(r["n"]) for r in st if r["impl"] == "odcm"
                                   and r["layout"] == layout)}):
            at = lambda op: num(pick(st, impl="odcm", layout=layout, variant="default", op=op,
                                     n=n), "MB_per_s")
            print("strided %s at %dx%d (same bytes as the contiguous put): puts/contig %.2f "
                  "gets/contig %.2f accs/contig %.2f"
                  % (layout, n, n, at("puts") / at("put-contig"), at("gets") / at("put-contig"),
                     at("accs") / at("put-contig")))
    # Default (cost model) vs the two forced paths, shape by shape; '*' marks a shape where the
    # default takes more than 10 % longer than the better forced path.
    flagged = 0
    shapes = sorted({int(r["n"]) for r in st if r["impl"] == "odcm" and r["layout"] == "cross-node"})
    for op, label in (("puts", "PutS"), ("gets", "GetS"), ("accs", "AccS")):
        for n in shapes:
            t = {v: num(pick(st, impl="odcm", layout="cross-node", variant=v, op=op, n=n),
                        "usec_per_op") for v in ("default", "all-rdma", "all-packed")}
            bw = {v: n * n * 8 / t[v] for v in t}
            best = min(t["all-rdma"], t["all-packed"])
            slow = t["default"] > 1.10 * best
            flagged += slow
            print("strided cross-node %s %4dx%-4d (row %5d B): default %8.1f  all-RDMA %8.1f  "
                  "all-packed %8.1f MB/s; default time / best forced %.2f%s"
                  % (label, n, n, n * 8, bw["default"], bw["all-rdma"], bw["all-packed"],
                     t["default"] / best, " *" if slow else ""))
    print("strided cross-node: %d of %d shapes (* above) with the default more than 10 %% slower "
          "than the better forced path" % (flagged, 3 * len(shapes)))

    con = rows(out / "connect.csv")
    def median(vals):
        vals = sorted(vals)
        return vals[len(vals) // 2] if vals else float("nan")
    def samples(mode, protocol, np_, scenario):
        return [num(r, "usec") for r in con if r["mode"] == mode and r["protocol"] == protocol
                and r["procs"] == np_ and r["scenario"] == scenario]
    for np_ in sorted({r["procs"] for r in con}, key=int):
        med = {(m, p, sc): median(samples(m, p, np_, sc))
               for m, p in (("ondemand", "overlap"), ("ondemand", "serial"), ("static", "overlap"))
               for sc in ("init", "one-to-one", "one-to-all")}
        o, s = med["ondemand", "overlap", "one-to-one"], med["ondemand", "serial", "one-to-one"]
        oa, sa = med["ondemand", "overlap", "one-to-all"], med["ondemand", "serial", "one-to-all"]
        print("connect %s procs: one-to-one median overlap %.0f us, serial %.0f us, static %.0f us "
              "(overlap/serial %.2f, %d samples); one-to-all overlap %.0f, serial %.0f, static "
              "%.0f us (overlap/serial %.2f); ARMCI_Init static %.0f us vs on-demand %.0f us"
              % (np_, o, s, med["static", "overlap", "one-to-one"], o / s,
                 len(samples("ondemand", "overlap", np_, "one-to-one")), oa, sa,
                 med["static", "overlap", "one-to-all"], oa / sa,
                 med["static", "overlap", "init"], med["ondemand", "overlap", "init"]))

    rate_summary(out)
    ga_patch_summary(out)
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
