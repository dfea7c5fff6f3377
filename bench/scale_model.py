#!/usr/bin/env python3
"""A model of connections, memory and all-connect time, fitted to bench/scale.sh runs.

    python3 bench/scale_model.py SCALE_CSV [CONNECT_CSV] [OUT_DIR]

SCALE_CSV is bench/scale.sh's output; CONNECT_CSV a bench/run-all.sh connect.csv (its
one-to-all rows time one process connecting to every other node). Prints the fitted
parameters, the model against every run (measured / model), and its predictions at 1 K,
8 K and 64 K processes next to the ODCM paper's Tables I-IV, as CSV sections; draws
scale-model.png into OUT_DIR (default: SCALE_CSV's folder) when matplotlib is there.

The model, per process, N processes in M = N / k nodes of k processes:
  connections  LU: the nodes of the process's row and column of the 2-D grid (lu.c's
               squarest grid), counted exactly; RandomAccess, LJ: the distinct nodes hit
               by D remote targets drawn uniformly, (M - 1)(1 - (1 - 1/(M - 1))^D), with
               D fitted per application (weak scaling: a process's work stays the same);
               in the runs LJ's blocks are on the first 216 processes (b mod n), so at 256
               a process reaches those processes' nodes alone (reach).
               With a cap and the hybrid path off: min(cap, that); with it on (the
               default under a cap) only the RDMA barrier's connections, a node master's
               partners (at most cap), a k-th a process: everything else goes over UD (no
               run promoted a node to RC but once). Servers: k x the clients' average,
               since every connection has one end in a client and one in a data server.
  QP memory    connections x (client QP + server QP bytes), both from the report's
               model (mem_bytes); static: every process to every other node.
  runtime      the sum of the kinds below when the runs have them; else rt_mem = a0 +
               aN N + aM M + aC C + aU U (non-negative least squares per application; the
               terms of docs/SCALING.md: per-process index and directory
               entries, per-node segment tables, per-connection records on both ends, and
               per node reached over UD instead (U: with the hybrid path under a cap, the
               nodes the uncapped run connects to beyond the C it keeps), its window at
               the client and the request engine's record of that client at the server).
  by kind      when the runs have the report's mem_<kind>_avg columns: each kind of
               runtime memory fitted alone (non-negative least squares on measured / model,
               per application) on the terms its code has (KIND_TERMS: docs/SCALING.md's
               formulas): N for the per-process tables, M for the per-node ones, C for
               connections (both ends: a server has k x C clients shared by k processes),
               the barrier's share of them (their send queues' chains), the nodes reached
               over UD (ud_nodes_avg); the shares of processes that write the barrier or
               send messages over RC (the records and reply tokens of what is in flight).
               Priced from the code, not fitted: the peer maps' tables (intmap, from the
               counts; LU's process by process) and what a node over UD holds (the
               client's peer record and first ring, the server's engine record and its
               ring of kept answers), and the block index (each application's block sizes
               by rank, cut into runs as api/segment.c does). The rings grow with the
               requests a process has in flight to a node: LU a block's rows, the others a
               burst fitted per application spread over the nodes they reach (Poisson),
               one for the server's kept answers (conns) and one for the client's rings
               (datagram). Each configuration weighs once in the fits, however many rounds
               ran it. A run's whole rt_mem is the peak of the sum of its kinds, at most
               the sum of their peaks, which is what the model adds up: both are printed.
  registered   buf_mem priced from the pools' sizes in the code (docs/SCALING.md's table
               of registered pools): every process's bounce and small buffers (4 x 64 KiB
               and 4 x 8 KiB at first), reply pool and connection UD pool; every node's
               data-server request buffers (one client's allowance of 32 for each client
               connected, at most 128), out buffers and connection UD pool, shared by its k
               processes; the hybrid UD pools when on (a server's receives: 64 for each
               client heard from over UD, k x the nodes a process reaches over UD, at most
               256). On top, what an application grows its own pools to (bounce and small
               buffers, the UD path's answer buffers; fitted, a process: the median over its
               runs of what they registered beyond this price).
  all-connect  one process connecting to M - 1 nodes: t0 + t1 (M - 1), fitted to the
               one-to-all rows per protocol.
"""
import csv
import functools
import math
import sys
from pathlib import Path

from results_csv import num, rows
from memory_plot import APP_COLORS, PLOT_PROCS, plot_memory, pyplot, save


APPS = ["lu", "randomaccess", "lj"]
PREDICT_PROCS = [1024, 8192, 65536]
PREDICT_NODE_SIZES = [1, 6, 16]  # 6: the paper's processes per node
CAP = 8
MIB = 1024 * 1024
# The runtime's kinds (armci/core/memstat.h) and the terms each grows by: N processes, M nodes,
# H 1 when the hybrid path is on, C connections a process keeps (both ends), LM the barrier's steps (1 + log2 M,
# M > 1), B the connections a process keeps for the barrier (of C), G the client's UD ring
# slots beyond their first four on the nodes still busy at the peak, Rb the share of processes
# that write the barrier over RC (node masters), Rm the share that send messages awaiting a
# reply over RC, off 1 with the hybrid path off (every operation over RC). Priced from the
# code (PRICED_TERMS: coefficient 1, not fitted): DB the node's block of the directory, a k-th
# a process, DR the records of the directory entries a process and its node's server learn
# (both ends of what it talks to, less what its node's block holds; DLr and DLh, fitted, count
# the server's lookups a process, over RC and UD), T the connection tables, K what a node
# reached over UD holds at both ends, P the client's record and first ring of such a node, X
# the block index's runs.
KIND_TERMS = {
    "segments": ("1", "M"),      # a record per segment, an rkey (4 B) per node of each
    # 16 B per run of an irregular array's blocks, priced from each application's layout
    # (index_bytes): kept once per node, a k-th a process
    "index": ("X",),
    # the node's block (holders', its own and, on holders, their span's entries) and a record
    # for every entry learned at first contact (DIR_RECORD and its map slot, each side's map):
    # both priced; the datagrams a node's server keeps while it asks for their senders' entries,
    # at the peak (at most DIR_PARK_BYTES a node), over RC and over UD: fitted, as bytes a
    # lookup (DLr, DLh: a process's share of its server's lookups, when they all wait at once)
    # and as bytes a node (DPr/k, DPh/k: when a few wait at a time)
    "directory": ("DB", "DR", "DLr", "DLh", "DPr/k", "DPh/k"),
    "topology": ("1", "N", "M"),   # 0 for equal nodes of consecutive ranks
    "groups": ("1", "N"),
    "sync": ("1", "LM/k"),       # the barrier's partners and slots, one a step, on masters
    # maps by peer (T); records of both ends a connection (C); a node over UD (K); with every
    # operation over RC, LJ's task counter's answers kept at rank 0's server (off: RMWs)
    "conns": ("T", "K", "C", "off"),
    # a connection's ring and replay log (C); the chain its RDMA reads and writes are batched
    # in (the barrier's writes, B; LJ's gets and puts: every connection, in C)
    "sendq": ("C", "B"),
    # work records grown by the peak in flight: the barrier's writes (Rb), messages (Rm), and
    # with the hybrid path off every operation (off)
    "work": ("Rb", "Rm", "off"),
    "replies": ("Rm",),          # the first 64 reply tokens, at a process's first message
    # a node's peer record and ring of 4 slots (P); the slots grown and the data they hold, on
    # the nodes still busy at the peak (G; an idle node's ring shrinks back to 4); the data of
    # what is in flight (H)
    "datagram": ("H", "P", "G"),
}
PRICED_TERMS = ("DB", "DR", "T", "K", "P", "X")
# The kinds whose rings grow with a process's burst of requests, each fitted apart: the
# server's kept answers (conns, K) and the client's ring slots (datagram, G).
BURST_KINDS = ("conns", "datagram")
HYBRID_WINDOW = 32  # ARMCI_HYBRID_WINDOW: the most a UD ring (client) or kept ring (server) holds
FEW_SLOTS = 4       # both rings' first size (dgram_peers.c FEW_SLOTS, engine.c FEW_KEPT)
# A node reached over UD: the client's request counter (numbering.c), the server's engine
# record of the client and its ring of kept answers, 24 B an answer (dataserver/engine.c).
UD_NODE_BYTES = 8 + 32
KEPT_ANSWER = 24
UD_PEER_BYTES = 96 + FEW_SLOTS * 104  # the client's dgram_peer and its first 4 dgram_slots
INTMAP_SLOT = 4 + 8  # core/intmap.c: a key and a pointer a slot


def kind_term(term, x):
    """The value of one of KIND_TERMS for the counts x of a process (Model.counts)."""
    if term.endswith("/k"):  # a node's table, each of its k processes counting a share
        return kind_term(term[:-2], x) / x["k"]
    n, m, h = x["n"], x["m"], x["hybrid"]
    servers, clients = x["dir_learned"]  # a process's; its k-th of its server's
    parks = 1.0 if x["dir_server_asks"] else 0.0  # its node's server asks for clients' entries
    return {"1": 1.0, "N": n, "M": m, "X": x["index"], "DB": x["dir_block"],
            "DR": x.get("dir_learned_bytes",
                        learned_bytes(servers) + learned_bytes(x["k"] * clients) / x["k"]),
            "DPr": 0.0 if h else parks, "DPh": parks if h else 0.0,
            "DLr": 0.0 if h else clients, "DLh": clients if h else 0.0,
            "LM": 1 + math.floor(math.log2(m)) if m > 1 else 0,
            "H": 1.0 if h else 0.0, "C": x["c"], "B": x["b"],
            "G": x["u"] * (x["ring"] - FEW_SLOTS) * x["busy"] if h else 0.0,
            "K": x["u"] * (UD_NODE_BYTES + KEPT_ANSWER * x["kept_ring"]) if h else 0.0,
            "P": x["u"] * UD_PEER_BYTES if h else 0.0,
            "Rb": x["rb"], "Rm": x["rm"], "off": 0.0 if h else 1.0, "T": x["tables"]}[term]


def intmap_bytes(count):
    """An intmap's table holding count entries: 16 slots at first, doubled while more than
    half full (core/intmap.c)."""
    count = round(count)
    if count <= 0:
        return 0
    cap = 16
    while 2 * count > cap:
        cap *= 2
    return INTMAP_SLOT * cap


def client_tables(m, c, u):
    """A client's connection tables: the bitmap of nodes connected to before (conn_table.c),
    its maps by node of connections (c), request counters and UD address handles (c + u: every
    node talked to) and UD peers (u)."""
    return m // 8 + 1 + intmap_bytes(c) + 2 * intmap_bytes(c + u) + intmap_bytes(u)


def server_tables(s, su):
    """A data server's maps by client: connections and setups (s clients over RC), request
    engines and UD address handles (s + su: every client heard, su over UD)."""
    return 2 * intmap_bytes(s) + 2 * intmap_bytes(s + su)


def ring(depth):
    """Slots a ring grows to, on average, for bursts to a node of depth requests on average:
    4 at first, doubled to hold a burst, at most the window; a node's share of a burst spread
    over many is Poisson."""
    sizes = [FEW_SLOTS << i for i in range(int(math.log2(HYBRID_WINDOW // FEW_SLOTS)))]
    p, cdf, slots, below = math.exp(-depth), 0.0, 0.0, 0.0
    for x in range(sizes[-1] + 1):
        p = p * depth / x if x else p  # P(burst = x)
        cdf += p
        if x in sizes:  # bursts of x or fewer fit a ring of x slots
            slots, below = slots + x * (cdf - below), cdf
    return slots + HYBRID_WINDOW * (1 - below)


def barrier_links(m, k, cap=0):
    """RC connections a process keeps for the barrier: its node master's partners
    (barrier_partners: log2 of the largest power of two p2 <= m, one more for the nodes paired
    with one beyond p2, one for those), at most cap, a k-th a process."""
    if m <= 1:
        return 0.0
    p2 = 1 << (m.bit_length() - 1)
    steps, extra = p2.bit_length() - 1, m - p2
    most = cap or math.inf
    links = ((p2 - extra) * min(most, steps) + extra * min(most, steps + 1)
             + extra * min(most, 1))
    return links / m / k


def uniform_rc_share(m, k, reach, links, hybrid):
    """RandomAccess, LJ: the share of processes sending messages over RC. All of them with the
    hybrid path off; with it on, the node masters whose barrier connections lead to a node
    their traffic goes to (reach of the m - 1 other nodes, hit uniformly)."""
    if m <= 1:
        return 0.0
    if not hybrid:
        return 1.0
    q = min(1.0, reach / (m - 1))
    return (1 - (1 - q) ** (links * k)) / k


PER_N_KINDS = ("index", "directory", "topology", "groups")  # grow with N: per-process tables
AIMS = [(1, 4.0), (16, 2.0)]  # issue 48: MiB a process at 64 K processes, by node size

# Registered pools (armci/transport/work.c, replies.c, dgram.c; armci/odcm/ud.c;
# armci/dataserver/resources.c, resources.h): bytes, softib's 4096-byte MTU.
KIB64 = 65536
SMALL_BUF = 8192                 # a small buffer: a data server's request buffer
POOL_RECORDS = 2 * 32 * 48       # the bounce and small pools' records (32 each)
UD_RECV_BUF = 40 + 4096          # GRH + the port's MTU
REQUEST_BUF = 152 + 8192          # a data-server request buffer: header + ARMCI_SERVER_BUF_SIZE
GROWN_BUF = 4 * KIB64 + 4 * SMALL_BUF + POOL_RECORDS            # bounce and small, at first
CHANNEL_SENDS = 16 * (128 + 48)  # a connection channel's send buffers and their records
# + the client's connection channel at first (8 receives; more while setups are under way:
# fitted as growth), the reply pool
PROC_BUF = GROWN_BUF + 8 * UD_RECV_BUF + CHANNEL_SENDS + 256 * 64
NODE_BUF = 2 * KIB64 + CHANNEL_SENDS                              # out buffers, server's channel
HYBRID_PROC_BUF = (32 + 8) * UD_RECV_BUF                         # client data UD pools
HYBRID_NODE_BUF = 16 * UD_RECV_BUF                               # server data UD sends


def is_hybrid(run):
    return run.get("hybrid", "off") not in ("off", "")


def request_bufs(clients):
    """The data server's request buffers: one allowance (32) for each client connected that
    has sent a request (dataserver/credits.c), at most 128."""
    return min(128, 32 * max(1, math.ceil(clients)))


def expected_request_bufs(clients, share):
    """request_bufs averaged over servers whose clients each send requests with probability
    share (binomial: the connections a node's clients keep lead to it at random)."""
    s = max(0, round(clients))
    if share >= 1.0 or s == 0:
        return request_bufs(clients)
    return sum(math.comb(s, j) * share ** j * (1 - share) ** (s - j) * request_bufs(j)
               for j in range(s + 1))


def server_channel_recv(clients):
    """The data server's connection-channel receives: two for each client connected, in chunks
    of 16, at most 64 (odcm/cm_server.c)."""
    want = min(64, 2 * max(0, math.ceil(clients)))
    return max(16, math.ceil(want / 16) * 16) * UD_RECV_BUF


def server_ud_recv(ud_clients):
    """The data server's UD data receives: two windows (64) for each client heard from over
    UD, at most 256 (dataserver/dgram_server.c)."""
    return min(256, 64 * max(1, math.ceil(ud_clients))) * UD_RECV_BUF


def priced_buf_mem(k, server_clients, hybrid, ud_clients, req_bufs=None, ud_recv=None):
    """Registered bytes a process from the pools' sizes alone (no growth by use); a node's
    server has server_clients clients connected (req_bufs request buffers: by default every
    client sends requests) and hears ud_clients over UD (ud_recv bytes of receives: by
    default at the average; LU's differ by node)."""
    if req_bufs is None:
        req_bufs = request_bufs(server_clients)
    if ud_recv is None:
        ud_recv = server_ud_recv(ud_clients)
    node = req_bufs * REQUEST_BUF + server_channel_recv(server_clients) + NODE_BUF
    proc = PROC_BUF
    if hybrid:
        proc += HYBRID_PROC_BUF
        node += HYBRID_NODE_BUF + ud_recv
    return proc + node / k


# The ODCM paper's published averages (6 processes per node).
PAPER_PROCS = [128, 256, 512, 1024]
PAPER_C2S = {"lu": [12, 19, 25, 31], "lj": [22, 44, 88, 176], "randomaccess": [21, 43, 87, 175]}
PAPER_S2C = {"lu": [71, 112, 197, 263], "lj": [128, 256, 512, 1024],
             "randomaccess": [123, 251, 507, 1021]}
STOMP_PROCS = [128, 256, 512, 1024, 2048, 4096]
STOMP_C2S = [3, 3, 3, 6, 10, 10]  # per process count, the largest grid run there
STOMP_S2C = [21, 22, 23, 35, 61, 62]


def lstsq(x, y):
    """Least squares by the normal equations (a few unknowns; no numpy needed)."""
    n = len(x[0])
    a = [[sum(r[i] * r[j] for r in x) for j in range(n)] + [sum(r[i] * v for r, v in zip(x, y))]
         for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(a[r][i]))
        a[i], a[p] = a[p], a[i]
        if abs(a[i][i]) < 1e-12:
            return [math.nan] * n
        for r in range(n):
            if r != i:
                f = a[r][i] / a[i][i]
                a[r] = [u - f * v for u, v in zip(a[r], a[i])]
    return [a[i][n] / a[i][i] for i in range(n)]


def nonnegative_lstsq(x, y):
    """Least squares with every coefficient >= 0 (memory does not shrink as a job grows):
    the best fit over the subsets of terms whose own fit is non-negative."""
    n = len(x[0])
    best = (math.inf, [math.nan] * n)
    for mask in range(1, 1 << n):
        cols = [j for j in range(n) if mask >> j & 1]
        coef = lstsq([[r[j] for j in cols] for r in x], y)
        if any(math.isnan(c) or c < 0 for c in coef):
            continue
        full = [0.0] * n
        for j, c in zip(cols, coef):
            full[j] = c
        res = sum((sum(a * b for a, b in zip(r, full)) - v) ** 2 for r, v in zip(x, y))
        best = min(best, (res, full))
    return best[1]


def median(v):
    v = sorted(v)
    return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2




def nodes(n, k):
    return (n + k - 1) // k


DIR_ENTRY = 44        # odcm/directory.c: struct dir_entry
DIR_COUNTS = 16       # its node block's counts
DIR_BUDGET = 65536    # ARMCI_DIRECTORY_BYTES: holders' entries a node keeps
DIR_RECORD = 80       # a learned entry's record (struct dir_known)
DIR_PARK_BYTES = 16384  # the datagrams a data server keeps while it asks, records included


def directory_holders(m):
    """Every span-th node holds its span's entries, the span as small as the budget of
    holders' entries allows (odcm/directory.c): the span and the number of holders."""
    span = max(1, -(-m * DIR_ENTRY // DIR_BUDGET))
    return span, -(-m // span)


def directory_block(n, k):
    """The node block a process counts, on average: the holders' entries and its node's own,
    a k-th a process, and with spans of more than one node every process's entry once more at
    its holder (N over N processes)."""
    span, holders = directory_holders(nodes(n, k))
    return (DIR_COUNTS + DIR_ENTRY * holders) / k + DIR_ENTRY + (DIR_ENTRY if span > 1 else 0)


def directory_learned(n, k, reach):
    """Entries learned, a process: by its clients' side, the servers of the nodes it reaches
    (but the holders' and, on a holder, its span's: about H + 1 of the M nodes); by its node's
    server, its k-th of the clients heard from, as many a process (but the holders' masters
    and its span's processes). Each is a lookup of the holder."""
    m = nodes(n, k)
    if m <= 1:
        return 0.0, 0.0
    span, holders = directory_holders(m)
    servers = 0.0 if span == 1 else reach * max(0.0, 1 - (holders + 1) / m)
    clients = reach * max(0.0, 1 - (holders + (k if span > 1 else 0)) / n)
    return servers, clients


def learned_bytes(entries):
    """A side's records and their map (a process's clients' side; a node's server's, which
    its master counts)."""
    return DIR_RECORD * entries + intmap_bytes(entries)


def in_directory_block(node, rank, n, k):
    """Whether the block of node holds rank's entry (odcm/directory.c's in_block)."""
    span, _ = directory_holders(nodes(n, k))
    of = rank // k
    return of == node or of // span * span == node or (of % span == 0 and rank % k == 0)


def directory_entries_learned(p, reached, n, k):
    """Entries learned for process p, which reaches the nodes `reached`: by its clients' side,
    each node's server unless p's node's block has it; by each of those nodes' servers, p's
    entry unless theirs has it (the nodes whose servers learn it)."""
    mine = p // k
    servers = sum(int(not in_directory_block(mine, j * k, n, k)) for j in reached)
    return servers, [j for j in reached if not in_directory_block(j, p, n, k)]


BLOCK_ALIGN = 64  # api/block_index.h: blocks start on cache lines
RUN_BYTES = 16    # struct block_run


def index_runs(sizes, k):
    """The runs api/segment.c keeps for a world array of these block sizes (bytes, by rank;
    nodes of k consecutive ranks): none when regular; else by rank a block starts a run unless
    the previous rank's block is of its size and placed one step after it on its node or at
    its place on the next node (as the run's second block set); a gap between blocks is one."""
    if sizes and sizes[0] > 0 and all(b == sizes[0] for b in sizes):
        return 0
    align = lambda b: -(-b // BLOCK_ALIGN) * BLOCK_ALIGN  # noqa: E731
    place, fill = [0] * len(sizes), {}
    for p, b in enumerate(sizes):
        place[p] = fill.get(p // k, 0)
        fill[p // k] = place[p] + align(b)
    runs, first, last, stepped = 0, -1, -1, False
    for p, b in enumerate(sizes):
        if not b:
            continue
        joins = first >= 0 and last == p - 1 and sizes[first] == b
        if joins and first == last:
            stepped = place[p] == place[first] + align(b)
            joins = stepped or place[p] == place[first]
        elif joins:
            joins = place[p] == place[first] + ((p - first) * align(b) if stepped else 0)
        if not joins:
            runs += 1 + (last >= 0 and last != p - 1)
            first = p
        last = p
    return runs


def app_block_sizes(app, n, run):
    """Each world array's block sizes by rank, as the application asks (apps/*.c). The runs:
    bench/scale.sh's problems; predictions grow them with the job (LU: four blocks a process;
    RandomAccess: a table a multiple of the processes; LJ: 3.375 blocks a process, as 216 at
    64)."""
    if app == "lu":
        pr, pc = lu_grid(n)
        nblk = LU_RUN_BLOCKS if run else 2 * max(pr, pc)
        extent = lambda first, step: LU_BLOCK_ROWS * len(range(first, nblk, step))  # noqa: E731
        return [[extent(p // pc, pr) * extent(p % pc, pc) * 8 for p in range(n)]]
    if app == "randomaccess":
        words = RA_RUN_WORDS if run else 4 * n
        return [[8 * (-(-(words - p) // n) if words > p else 0) for p in range(n)]]
    if app == "lj":
        blocks = LJ_RUN_BLOCKS if run else (27 * n) // 8
        slots = [(-(-(blocks - p) // n) if blocks > p else 0) for p in range(n)]
        values = [s * LJ_BLOCK_ATOMS * 3 * 8 for s in slots]
        return [values, values, [4] + [0] * (n - 1)]  # positions, forces, rank 0's counter
    return []


def index_bytes(app, n, k, run):
    """The block index a process counts: 16 B a run of every array, a k-th of its node's."""
    return sum(RUN_BYTES * index_runs(sizes, k) for sizes in app_block_sizes(app, n, run)) / k


# ---- connections ----

def lu_grid(n):
    pr = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return pr, n // pr


# bench/scale.sh runs lu -n 192 -b 24: 8 x 8 blocks. Predictions give every process
# four blocks (2 pr x 2 pc), so the problem grows with the job.
LU_RUN_BLOCKS = 8
LU_BLOCK_ROWS = 24  # -b 24: a block's 24 rows are 24 requests to its node
# bench/scale.sh runs randomaccess -l 16: 2^16 words, 4 updates a word, shared by the processes
RA_RUN_UPDATES = 4 << 16
RA_RUN_WORDS = 1 << 16
# bench/scale.sh runs lj -c 6 -b 4: 4 x 6^3 atoms in blocks of 4, 216 blocks
LJ_RUN_BLOCKS = 216
LJ_BLOCK_ATOMS = 4


def barrier_partners(node, m):
    """Nodes a node master writes to in the RDMA barrier (barrier.c: pairwise exchange by
    recursive doubling over the largest power of two; the nodes beyond it pair with one
    inside)."""
    p2 = 1 << (m.bit_length() - 1)
    if node >= p2:
        return {node - p2}
    out = {node ^ (1 << i) for i in range(p2.bit_length() - 1)}
    if node + p2 < m:
        out.add(node + p2)
    return out


def lu_data_nodes(p, n, k, nb):
    """The other nodes owning blocks that process p's blocks need.

    Block (I, J) (owner: grid process (I mod pr, J mod pc), as in lu.c) is computed
    from L(I, K) and U(K, J) for K < min(I, J) and the diagonal block, and checked
    by recomputing the product from those same blocks for K <= min(I, J).
    """
    pr, pc = lu_grid(n)
    r, c = divmod(p, pc)
    peers = set()
    for bi in range(r, nb, pr):
        for bj in range(c, nb, pc):
            for kk in range(min(bi, bj) + 1):
                peers.add((bi % pr) * pc + kk % pc)
                peers.add((kk % pr) * pc + bj % pc)
    return {q // k for q in peers} - {p // k}


@functools.lru_cache(maxsize=None)
def lu_profile(n, k, nb=None, cap=None, samples=256):
    """LU's reach, process by process (sampled), from lu.c's layout: the average RC and UD
    nodes, the share of processes that send messages over RC (the nodes of their blocks; with
    the hybrid path on under a cap, only those among a master's barrier connections), the
    connection tables (client_tables each; server_tables at each node's own clients when every
    process is sampled, at the averages else), a server's request buffers and UD receive
    bytes on average (each node's own clients: the pools' steps make the average's price
    differ from the price of the average), the directory entries learned (the clients' side's
    and the server's lookups, a process) and, when every process is sampled, their records'
    bytes (each side's map at its own size; else None). cap None: the hybrid path off. Node
    masters also reach their barrier partners (LU has a barrier after every phase)."""
    pr, pc = lu_grid(n)
    nb = nb or 2 * max(pr, pc)
    m, step = nodes(n, k), max(1, n // samples)
    rc_of, ud_of, req_of = [0] * m, [0] * m, [0] * m
    c = u = messaging = client = learned_servers = learned_clients = learned_mem = 0
    server_learned = [0] * m
    count = 0
    for p in range(0, n, step):
        data = lu_data_nodes(p, n, k, nb)
        partners = barrier_partners(p // k, m) if p % k == 0 and m > 1 else set()
        rc = data | partners if cap is None else set(sorted(partners)[:cap])
        ud = set() if cap is None else data - rc
        for j in rc:
            rc_of[j] += 1
            req_of[j] += j in data
        for j in ud:
            ud_of[j] += 1
        c, u, messaging = c + len(rc), u + len(ud), messaging + bool(data & rc)
        servers, at = directory_entries_learned(p, rc | ud, n, k)
        learned_servers += servers
        learned_clients += len(at)
        learned_mem += learned_bytes(servers)
        for j in at:
            server_learned[j] += 1
        client += client_tables(m, len(rc), len(ud))
        count += 1
    c, u = c / count, u / count
    learned = learned_servers / count, learned_clients / count
    if step == 1:
        server = sum(server_tables(s, su) for s, su in zip(rc_of, ud_of)) / n
        learned_mem = (learned_mem + sum(learned_bytes(e) for e in server_learned)) / n
    else:
        server = server_tables(k * c, k * u) / k
        learned_mem = None  # sampled: the servers' sets are not whole
    # A server's request buffers follow the clients whose connection carries their blocks'
    # requests (a barrier's alone carries none): sampled clients stand for `step` each.
    req_bufs = sum(request_bufs(step * q) for q in req_of) / m
    ud_recv = sum(server_ud_recv(step * q) for q in ud_of) / m
    return (c, u, messaging / count, client / count + server, req_bufs, ud_recv, learned,
            learned_mem)


def lu_connections(n, k, nb=None):
    """Average over processes of the other nodes whose blocks a process's blocks need, and
    for node masters the barrier's partners."""
    return lu_profile(n, k, nb)[0]


def distinct_nodes(m, d):
    """Expected distinct other nodes among m - 1 hit by d uniform draws."""
    if m <= 1:
        return 0.0
    return (m - 1) * (1 - (1 - 1 / (m - 1)) ** d)


def reach(app, n, k, d, run):
    """Distinct other nodes a process draws its d remote targets from, on average. LJ's
    blocks are on processes b mod n (lj.c): in the runs' problem (LJ_RUN_BLOCKS blocks) only
    the first nodes own any at 256 processes, and a process reaches those alone (the task
    counter is on rank 0, one of them); growing with n, every process owns blocks."""
    m = nodes(n, k)
    if app != "lj" or not run or LJ_RUN_BLOCKS >= n:
        return distinct_nodes(m, d)
    owners = math.ceil(LJ_RUN_BLOCKS / k)  # nodes 0 .. owners - 1
    on_owners = owners * k
    return (on_owners * distinct_nodes(owners, d)
            + (n - on_owners) * distinct_nodes(owners + 1, d)) / n


def fit_draws(app, runs):
    """The smallest D that explains the uncapped runs' c2s averages as well as any D does
    (least squares on a log grid; runs that reached every node only bound D from below)."""
    grid = [10 ** (6 * i / 2000) for i in range(2001)]
    err = [sum((reach(app, n, k, d, True) - c) ** 2 for n, k, c in runs) for d in grid]
    tolerance = min(err) + 1e-3 * sum(c * c for _, _, c in runs)
    return next(d for d, e in zip(grid, err) if e <= tolerance)


def config_key(r):
    return r["app"], r["procs"], r["node_size"], r["cap"], r.get("hybrid", "off")


def by_config(scale):
    """The runs that passed, by configuration (their rounds)."""
    rounds = {}
    for r in scale:
        if r["status"] == "ok":
            rounds.setdefault(config_key(r), []).append(r)
    return rounds


def repeat_spread(scale):
    """Per application and kind (and the whole rt_mem): the largest max / min of the kind
    over the rounds of one configuration, among those run more than once."""
    rounds = by_config(scale)
    out = []
    for app in APPS:
        for col in [f"mem_{kind}_avg" for kind in KIND_TERMS] + ["rt_mem_avg"]:
            worst, at, configs = 1.0, "", 0
            for key, rs in rounds.items():
                v = [num(r, col) for r in rs if not math.isnan(num(r, col))]
                if key[0] != app or len(v) < 2 or min(v) <= 0:
                    continue
                configs += 1
                if max(v) / min(v) > worst:
                    worst, at = max(v) / min(v), f"{key[1]}x{key[2]} cap {key[3]}"
            if configs:
                out.append([app, col[4:-4] if col.startswith("mem_") else col[:-4], configs,
                            fmt(worst, 2), at])
    return out


class Model:
    def __init__(self, scale, connect):
        ok = [r for r in scale if r["status"] == "ok"]
        self.rounds = {key: len(rs) for key, rs in by_config(ok).items()}
        self.draws = {}
        for app in ("randomaccess", "lj"):
            runs = [(int(r["procs"]), int(r["node_size"]), num(r, "c2s_avg"))
                    for r in ok if r["app"] == app and r["cap"] == "0"]
            self.draws[app] = fit_draws(app, runs) if runs else math.nan
        # bytes of QP memory per connection (client end + server end)
        per_conn = [num(r, "mem_bytes") / (int(r["procs"]) * num(r, "c2s_avg"))
                    for r in ok if num(r, "c2s_avg") > 0]
        self.qp_pair_bytes = median(per_conn) if per_conn else math.nan
        self.rt = {}
        for app in APPS:
            a = [r for r in ok if r["app"] == app and not math.isnan(num(r, "rt_mem_avg"))]
            if len(a) < 4:
                continue
            x = [[1, int(r["procs"]), nodes(int(r["procs"]), int(r["node_size"])),
                  num(r, "c2s_avg"), self.ud_nodes_of_run(r)] for r in a]
            self.rt[app] = nonnegative_lstsq(x, [num(r, "rt_mem_avg") for r in a])
        self.burst, self.kinds = {}, {}
        for app in APPS:
            a = [r for r in ok if r["app"] == app]
            if app != "lu":
                for kind in BURST_KINDS:
                    self.burst[app, kind] = self.fit_burst(a, kind)
            for kind in KIND_TERMS:
                fit = self.fit_kind(a, kind)
                if fit:
                    self.kinds[app, kind] = fit
        # What each application grows its bounce buffers to, beyond the pools' sizes: apart
        # with the hybrid path on, where most small operations go by UD and take none.
        self.bounce_growth = {}
        for app in APPS:
            for hybrid in (False, True):
                extra = [self.grown_of_run(r)
                         for r in ok if r["app"] == app and is_hybrid(r) == hybrid
                         and not math.isnan(num(r, "buf_mem_avg"))]
                self.bounce_growth[app, hybrid] = max(0.0, median(extra)) if extra else math.nan
        self.connect = {}
        for proto in ("overlap", "serial"):
            pts = [(num(r, "connections"), num(r, "usec")) for r in connect
                   if r["mode"] == "ondemand" and r["protocol"] == proto
                   and r["scenario"] == "one-to-all"]
            if len(pts) >= 2:
                self.connect[proto] = lstsq([[1, c] for c, _ in pts], [t for _, t in pts])

    def fit_kind(self, runs, kind):
        """A kind's coefficients over an application's runs (None: too few): its priced terms
        at 1, the others by non-negative least squares on the measured / model ratio (the fit
        is judged by it; a zero is fitted as bytes)."""
        col, terms = f"mem_{kind}_avg", KIND_TERMS[kind]
        pts = [(self.counts_of_run(r), num(r, col), self.round_weight(r))
               for r in runs if not math.isnan(num(r, col))]
        if len(pts) < 4:
            return None
        free = [t for t in terms if t not in PRICED_TERMS]
        x, y = [], []
        for c, v, weight in pts:
            w = weight / v if v > 0 else weight
            x.append([w * kind_term(t, c) for t in free])
            y.append(w * (v - sum(kind_term(t, c) for t in terms if t in PRICED_TERMS)))
        coef = iter(nonnegative_lstsq(x, y))
        return [1.0 if t in PRICED_TERMS else next(coef) for t in terms]

    def round_weight(self, r):
        """A run's weight in the fits: 1 over the runs of its configuration, so that every
        configuration counts once however often it was repeated (the square root: weights
        multiply residuals that are squared)."""
        return 1 / math.sqrt(self.rounds[config_key(r)])

    def fit_burst(self, runs, kind):
        """The requests a process sends at once, spread over the nodes it reaches, as the rings
        of a kind see it: the value on a log grid whose rings fit the kind best. conns: the
        engine's rings of kept answers, which never shrink (they keep the deepest burst a
        client sent); datagram: the client's rings at its peak, which shrink when a node goes
        idle. 0: the rings stay at their first size."""
        best = (math.inf, 0.0)
        for burst in [0.0] + [2 ** (i / 16) for i in range(241)]:
            self.burst[runs[0]["app"], kind] = burst
            coef, err = self.fit_kind(runs, kind), 0.0
            for r in runs if coef else []:
                v, c = num(r, f"mem_{kind}_avg"), self.counts_of_run(r)
                model = sum(a * kind_term(t, c) for a, t in zip(coef, KIND_TERMS[kind]))
                err += (math.log(v / model) ** 2 * self.round_weight(r) ** 2
                        if v > 0 and model > 0 else 0.0)
            best = min(best, (err, burst))
        return best[1]

    def depth(self, app, n, reach, run, kind):
        """Requests a process sends a node at once, on average, as kind's rings see it: LU a
        block's rows, one request each; the others their burst spread over the nodes they
        reach, in the runs at most the updates a process has (RandomAccess's fixed table: one
        batch a process at 256)."""
        if app == "lu":
            return LU_BLOCK_ROWS
        burst = self.burst.get((app, kind), 0.0)
        if app == "randomaccess" and run:
            burst = min(burst, RA_RUN_UPDATES / n)
        return burst / reach if reach else 0.0

    def c2s(self, app, n, k, cap=0, run=False, hybrid=None):
        """Per process; run: the problem bench/scale.sh ran, else one growing with n. Under a
        cap with the hybrid path on (ARMCI_HYBRID=auto's default there) a process keeps only
        the RDMA barrier's connections (its node master's partners, at most cap): the rest
        goes over UD, and no run promoted a node but once (LJ at 64 x 4)."""
        if hybrid is None:
            hybrid = cap > 0
        m = nodes(n, k)
        if cap and hybrid:
            return barrier_links(m, k, cap)
        if app == "lu":
            c = lu_connections(n, k, LU_RUN_BLOCKS if run else None)
        else:
            c = reach(app, n, k, self.draws[app], run)
        return min(c, cap) if cap else c

    def ud_nodes(self, app, n, k, cap=0, hybrid=False, run=False):
        """Nodes a process reaches over UD: with the hybrid path under a cap, those the
        uncapped pattern connects to beyond the barrier's connections."""
        if not (cap and hybrid):
            return 0.0
        return max(0.0, self.c2s(app, n, k, 0, run) - self.c2s(app, n, k, cap, run, hybrid))

    def ud_nodes_of_run(self, r):
        """The same for a measured run: what the report counted (ud_nodes_avg), or for older
        CSVs the model's uncapped count beyond the connections the run kept."""
        if not is_hybrid(r) or r["cap"] == "0":
            return 0.0
        if not math.isnan(num(r, "ud_nodes_avg")):
            return num(r, "ud_nodes_avg")
        uncapped = self.c2s(r["app"], int(r["procs"]), int(r["node_size"]), 0, run=True)
        return max(0.0, uncapped - num(r, "c2s_avg"))

    def counts(self, app, n, k, cap=0, hybrid=None, run=False):
        """What the kinds' terms count in a process of the model."""
        if hybrid is None:
            hybrid = cap > 0
        c = self.c2s(app, n, k, cap, run, hybrid)
        return self.counts_at(app, n, k, cap if hybrid else 0, run, c,
                              self.ud_nodes(app, n, k, cap, hybrid, run), k * c,
                              self.c2s(app, n, k, 0, run), hybrid)

    def counts_of_run(self, r):
        """The same at a run's measured connections, server clients and nodes over UD."""
        c, u, hybrid = num(r, "c2s_avg"), self.ud_nodes_of_run(r), is_hybrid(r)
        return self.counts_at(r["app"], int(r["procs"]), int(r["node_size"]),
                              int(r["cap"]) if hybrid else 0, True, c, u, num(r, "s2c_avg"),
                              c + u, hybrid)

    def counts_at(self, app, n, k, links_cap, run, c, u, s, reach, hybrid):
        """c connections, u nodes over UD, s clients at the node's server, reach nodes talked
        to; links_cap: the cap when the hybrid path keeps only the barrier's connections."""
        m = nodes(n, k)
        links = barrier_links(m, k, links_cap)
        x = {"n": n, "k": k, "m": m, "hybrid": hybrid, "c": c, "u": u, "b": min(c, links),
             "rb": 1 / k if m > 1 else 0.0, "index": self.index(app, n, k, run),
             "dir_block": directory_block(n, k), "dir_learned": directory_learned(n, k, reach),
             "dir_server_asks": m > 1 and (k > 1 or directory_holders(m)[0] > 1)}
        x["kept_ring"] = ring(self.depth(app, n, reach, run, "conns"))
        depth = self.depth(app, n, reach, run, "datagram")
        # A node's share beyond its window makes the sender wait on it, while the nodes before
        # it drain and shrink their rings: W / depth of them are still busy at the peak.
        x["ring"], x["busy"] = ring(depth), min(1.0, HYBRID_WINDOW / depth) if depth else 1.0
        if app == "lu":  # process by process: its averages are the runs' in every run
            (_, _, x["rm"], x["tables"], x["req_bufs"], x["ud_recv"], x["dir_learned"],
             exact) = lu_profile(n, k, LU_RUN_BLOCKS if run else None, links_cap or None)
            if exact is not None:  # every process counted: each side's records and map
                x["dir_learned_bytes"] = exact
        else:
            x["rm"] = uniform_rc_share(m, k, reach, links, hybrid and links_cap > 0)
            # A connection carries requests when it leads to a node the traffic goes to: all
            # of them without the cap; under it (the barrier's) reach of the m - 1 others.
            share = min(1.0, reach / (m - 1)) if hybrid and links_cap > 0 and m > 1 else 1.0
            x["req_bufs"] = expected_request_bufs(s, share)
            x["ud_recv"] = None
            x["tables"] = client_tables(m, c, u) + server_tables(s, k * u) / k
        return x

    @functools.lru_cache(maxsize=None)
    def index(self, app, n, k, run):
        return index_bytes(app, n, k, run)

    def kind_mem(self, app, kind, n, k, cap=0, hybrid=None, run=False):
        if (app, kind) not in self.kinds:
            return math.nan
        return self.kind_at(app, kind, self.counts(app, n, k, cap, hybrid, run))

    def kind_mem_of_run(self, r, kind):
        return self.kind_at(r["app"], kind, self.counts_of_run(r))

    def kind_at(self, app, kind, x):
        """A kind's bytes at the counts x; the datagrams a server keeps while it asks for
        entries at most DIR_PARK_BYTES a node (odcm/directory.c's bound)."""
        terms = [(c * kind_term(t, x), t) for c, t in zip(self.kinds[app, kind], KIND_TERMS[kind])]
        if kind != "directory":
            return sum(v for v, _ in terms)
        parked = sum(v for v, t in terms if t not in PRICED_TERMS)
        return sum(v for v, t in terms if t in PRICED_TERMS) + min(parked, DIR_PARK_BYTES / x["k"])

    def heap(self, app, n, k, cap=0, hybrid=None, run=False):
        return self.rt_mem(app, n, k, cap, run, hybrid)

    def s2c(self, app, n, k, cap=0, run=False, hybrid=None):
        return k * self.c2s(app, n, k, cap, run, hybrid) if nodes(n, k) > 1 else 0.0

    def qp_mem(self, app, n, k, cap=0):
        return self.c2s(app, n, k, cap) * self.qp_pair_bytes

    def static_qp_mem(self, n, k):
        return (nodes(n, k) - 1) * self.qp_pair_bytes

    def rt_mem(self, app, n, k, cap=0, run=False, hybrid=None):
        """The runtime's memory a process: the sum of its kinds, or without them the aggregate
        fit. hybrid: whether small operations to the nodes beyond the cap go over UD (the
        default under a cap, ARMCI_HYBRID=auto)."""
        if any((app, kind) in self.kinds for kind in KIND_TERMS):
            return sum(self.kind_mem(app, kind, n, k, cap, hybrid, run) for kind in KIND_TERMS)
        if app not in self.rt:
            return math.nan
        if hybrid is None:
            hybrid = cap > 0
        a0, an, am, ac, au = self.rt[app]
        return (a0 + an * n + am * nodes(n, k) + ac * self.c2s(app, n, k, cap, run, hybrid)
                + au * self.ud_nodes(app, n, k, cap, hybrid, run))

    def buf_mem(self, app, n, k, cap=0, hybrid=False, run=False):
        """Registered bytes a process: the pools' sizes at this job's server load, plus the
        application's fitted bounce-buffer growth (nothing here grows with n itself)."""
        return (priced_buf_mem(k, self.s2c(app, n, k, cap, run, hybrid), hybrid,
                               k * self.ud_nodes(app, n, k, cap, hybrid, run),
                               *self.server_pools(self.counts(app, n, k, cap, hybrid, run)))
                + self.bounce_growth.get((app, hybrid), math.nan))

    @staticmethod
    def server_pools(x):
        """A server's request buffers and UD receive bytes in a process's counts (ud_recv None:
        priced at the average clients)."""
        return x["req_bufs"], x["ud_recv"] if x["hybrid"] else None

    def priced_buf_mem_of_run(self, r):
        """The pools' sizes at a run's own measured server load and UD reach."""
        k = int(r["node_size"])
        return priced_buf_mem(k, num(r, "s2c_avg"), is_hybrid(r), k * self.ud_nodes_of_run(r),
                              *self.server_pools(self.counts_of_run(r)))

    def buf_mem_of_run(self, r):
        return (self.priced_buf_mem_of_run(r)
                + self.bounce_growth.get((r["app"], is_hybrid(r)), math.nan))

    def grown_of_run(self, r):
        """What a run's pools grew to beyond their price, a process: the bounce and small
        buffers, and the UD path's answer buffers, grown with what was in flight (the per-node
        pools are priced at the run's load)."""
        return num(r, "buf_mem_avg") - self.priced_buf_mem_of_run(r)

    def all_connect_us(self, proto, n, k):
        if proto not in self.connect:
            return math.nan
        t0, t1 = self.connect[proto]
        return t0 + t1 * (nodes(n, k) - 1)


def emit(title, header, lines):
    print(f"# {title}")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(header)
    w.writerows(lines)
    print()


def fmt(x, digits=1):
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def report(model, scale):
    emit("fitted parameters", ["parameter", "value", "meaning"],
         [[f"D_{a}", fmt(model.draws[a]), "remote targets per process (distinct-node model)"]
          for a in model.draws]
         + [["qp_pair_bytes", fmt(model.qp_pair_bytes, 0), "client + server QP per connection"]]
         + [[f"rt_{a}", " ".join(fmt(v, 2) for v in model.rt[a]),
             "rt_mem = a0 + aN*N + aM*M + aC*C + aU*U (bytes)"] for a in model.rt]
         + [[f"burst_{a}_{kind}", fmt(b, 0), "requests a process sends at once, spread over "
             "the nodes it reaches, as the kind's UD rings see it (kept answers; the client's)"]
            for (a, kind), b in model.burst.items()]
         + [[f"bounce_growth_{a}{'_hybrid' if h else ''}", fmt(model.bounce_growth[a, h], 0),
             "registered bytes a process beyond the pools' sizes (bounce buffers grown)"]
            for a, h in model.bounce_growth]
         + [[f"connect_{p}", " ".join(fmt(v, 1) for v in model.connect[p]),
             "one-to-all us = t0 + t1*(M-1)"] for p in model.connect])
    lines = []
    for r in scale:
        if r["status"] != "ok":
            lines.append([r["app"], r["procs"], r["node_size"], r["cap"], r["status"]] + [""] * 9)
            continue
        n, k, cap = int(r["procs"]), int(r["node_size"]), int(r["cap"])
        hybrid = is_hybrid(r)
        c_model = model.c2s(r["app"], n, k, cap, run=True, hybrid=hybrid)
        rt_model = model.rt_mem(r["app"], n, k, cap, run=True, hybrid=hybrid)
        # the registered pools at the run's own measured server load
        buf_model = model.buf_mem_of_run(r)
        # The model's rt_mem sums each kind's peak; the run's is the peak of the sum, which is
        # less when kinds peak at different moments: both sides of the like-for-like check.
        kinds = sum(num(r, f"mem_{kind}_avg") for kind in KIND_TERMS)
        lines.append([r["app"], n, k, cap, r["status"], r["c2s_avg"], fmt(c_model, 2),
                      fmt(num(r, "c2s_avg") / c_model if c_model else math.nan, 2),
                      r["rt_mem_avg"], fmt(rt_model, 0),
                      fmt(num(r, "rt_mem_avg") / rt_model, 2),
                      r.get("buf_mem_avg", ""), fmt(buf_model, 0),
                      fmt(num(r, "buf_mem_avg") / buf_model, 2),
                      fmt(kinds, 0), fmt(kinds / rt_model, 2),
                      fmt(num(r, "rt_mem_avg") / kinds, 2)])
    emit("model vs runs",
         ["app", "procs", "node_size", "cap", "status", "c2s_avg", "c2s_model", "c2s_ratio",
          "rt_mem_avg", "rt_mem_model", "rt_mem_ratio", "buf_mem_avg", "buf_mem_model",
          "buf_mem_ratio", "kinds_peaks_avg", "kinds_peaks_ratio", "rt_mem_of_kinds_peaks"],
         lines)
    pred = []
    for app in APPS:
        for n in PREDICT_PROCS:
            for k in PREDICT_NODE_SIZES:
                pred.append([app, n, k, nodes(n, k), fmt(model.c2s(app, n, k), 1),
                             fmt(model.c2s(app, n, k, CAP), 1), fmt(model.s2c(app, n, k), 1),
                             fmt(model.s2c(app, n, k, CAP), 1), nodes(n, k) - 1,
                             (nodes(n, k) - 1) * k if nodes(n, k) > 1 else 0,
                             fmt(model.qp_mem(app, n, k) / 1024, 0),
                             fmt(model.qp_mem(app, n, k, CAP) / 1024, 0),
                             fmt(model.static_qp_mem(n, k) / 1024, 0),
                             fmt(model.rt_mem(app, n, k) / 1024, 0),
                             fmt(model.rt_mem(app, n, k, CAP) / 1024, 0),
                             fmt(model.buf_mem(app, n, k) / 1024, 0),
                             fmt(model.buf_mem(app, n, k, CAP, hybrid=True) / 1024, 0),
                             fmt(model.all_connect_us("overlap", n, k) / 1000, 1),
                             fmt(model.all_connect_us("serial", n, k) / 1000, 1)])
    emit(f"predictions (cap = {CAP})",
         ["app", "procs", "node_size", "nodes", "c2s", "c2s_cap", "s2c", "s2c_cap",
          "static_c2s", "static_s2c", "qp_mem_kib", "qp_mem_cap_kib", "static_qp_mem_kib",
          "rt_mem_kib", "rt_mem_cap_kib", "buf_mem_kib", "buf_mem_cap_hybrid_kib",
          "all_connect_overlap_ms", "all_connect_serial_ms"],
         pred)
    if model.kinds:
        emit("runtime memory by kind: fitted (bytes a process)",
             ["app", "kind", "terms", "coefficients"],
             [[app, kind, " ".join(KIND_TERMS[kind]), " ".join(fmt(c, 2) for c in coef)]
              for (app, kind), coef in model.kinds.items()])
        fit, beyond = [], []
        for (app, kind), coef in model.kinds.items():
            ratios = []
            for r in scale:
                if r["status"] != "ok" or r["app"] != app:
                    continue
                measured = num(r, f"mem_{kind}_avg")
                priced = model.kind_mem_of_run(r, kind)
                if math.isnan(measured) or (measured == 0 and priced < 1):
                    continue
                ratios.append(measured / priced if priced > 0 else math.inf)
                if not 0.9 <= ratios[-1] <= 1.1:
                    beyond.append([app, r["procs"], r["node_size"], r["cap"], kind,
                                   fmt(measured, 0), fmt(priced, 0), fmt(ratios[-1], 2)])
            within = sum(1 for q in ratios if 0.9 <= q <= 1.1)
            fit.append([app, kind, len(ratios), within,
                        fmt(min(ratios), 2) if ratios else "", fmt(max(ratios), 2) if ratios else ""])
        emit("runtime memory by kind: measured / model over the runs (0 = 0 left out)",
             ["app", "kind", "runs", "within_10pct", "ratio_min", "ratio_max"], fit)
        emit("runtime memory by kind: the runs beyond 10 % (bytes a process)",
             ["app", "procs", "node_size", "cap", "kind", "measured", "model", "ratio"], beyond)
        emit("runs repeated: each kind's largest spread over a configuration's rounds "
             "(max / min; a model cannot fit runs closer than this)",
             ["app", "kind", "configurations", "spread_max", "at"], repeat_spread(scale))
        by_kind = []
        for app in APPS:
            for k in PREDICT_NODE_SIZES:
                n = PREDICT_PROCS[-1]
                by_kind.append([app, n, k] + [fmt(model.kind_mem(app, kind, n, k, CAP) / 1024, 0)
                                              for kind in KIND_TERMS])
        emit(f"runtime memory by kind at 64 K processes, cap {CAP}, hybrid on (KiB a process)",
             ["app", "procs", "node_size"] + list(KIND_TERMS), by_kind)
    aims = []
    for k, aim in AIMS:
        for app in APPS:
            n = PREDICT_PROCS[-1]
            rt = model.heap(app, n, k, CAP)
            per_n = sum(model.kind_mem(app, kind, n, k, CAP) for kind in PER_N_KINDS)
            buf = model.buf_mem(app, n, k, CAP, hybrid=True)
            aims.append([app, n, k, fmt(rt / MIB, 2), fmt(per_n / MIB, 2), fmt(buf / MIB, 2),
                         fmt((rt + buf) / MIB, 2), fmt(aim, 1),
                         "yes" if rt + buf <= aim * MIB else "no"])
    emit(f"aims: runtime heap + registered buffers a process, cap {CAP}, hybrid path on",
         ["app", "procs", "node_size", "heap_mib", "of_it_per_process_tables_mib",
          "registered_mib", "total_mib", "aim_mib", "within"], aims)
    paper = []
    for app in APPS:
        for i, n in enumerate(PAPER_PROCS):
            paper.append([app, n, PAPER_C2S[app][i], fmt(model.c2s(app, n, 6), 1),
                          PAPER_S2C[app][i], fmt(model.s2c(app, n, 6), 1)])
    emit("paper Tables I-II (6 processes per node) vs the model at the same size",
         ["app", "procs", "paper_c2s", "model_c2s", "paper_s2c", "model_s2c"], paper)


def measured_vs_model(ax, model, scale, key, model_of, title, unit=1.0):
    """One point per run: measured against the model at the run's own size, with y = x
    and the 2x band."""
    colors = {"lu": "tab:blue", "randomaccess": "tab:red", "lj": "tab:green"}
    lo, hi = math.inf, 0.0
    for app in APPS:
        for cap, marker in (("0", "o"), (str(CAP), "x")):
            pts = [(model_of(r) / unit, num(r, key) / unit) for r in scale
                   if r["app"] == app and r["status"] == "ok" and r["cap"] == cap]
            pts = [(x, y) for x, y in pts if x > 0 and y > 0]
            if not pts:
                continue
            ax.plot([x for x, _ in pts], [y for _, y in pts], ls="none", marker=marker,
                    color=colors[app], mfc="none",
                    label=f"{app}, {'no cap' if cap == '0' else f'cap {CAP}'}")
            lo = min(lo, *(min(p) for p in pts))
            hi = max(hi, *(max(p) for p in pts))
    if hi > 0:
        line = [lo / 2, hi * 2]
        ax.plot(line, line, color="k", lw=0.8, label="measured = model")
        ax.fill_between(line, [v / 2 for v in line], [v * 2 for v in line], color="k",
                        alpha=0.07, label="within 2x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("model")
    ax.set_ylabel("measured")


def plot(model, scale, out):
    plt = pyplot()
    if plt is None:
        return
    procs, colors = PLOT_PROCS, APP_COLORS
    fig, ax = plt.subplots(2, 3, figsize=(18, 10))
    (a_c2s, a_s2c, a_cfit), (a_mem, a_time, a_mfit) = ax
    for app in APPS:
        col = colors[app]
        for a, count, paper, table in ((a_c2s, model.c2s, PAPER_C2S, "I"),
                                       (a_s2c, model.s2c, PAPER_S2C, "II")):
            a.plot(procs, [count(app, n, 6) for n in procs], color=col, label=f"{app}: model")
            a.plot(procs, [count(app, n, 6, CAP) for n in procs], color=col, ls=":",
                   label=f"{app}: model, cap {CAP}")
            a.plot(PAPER_PROCS, paper[app], color=col, marker="s", ls="none",
                   label=f"{app}: paper Table {table}")
        a_mem.plot(procs, [model.rt_mem(app, n, 6) / 1024 for n in procs], color=col,
                   label=f"{app}: runtime memory")
        a_mem.plot(procs, [(model.rt_mem(app, n, 6) + model.qp_mem(app, n, 6)) / 1024
                           for n in procs], color=col, ls="--", label=f"{app}: + QP memory")
        a_mem.plot(procs, [(model.rt_mem(app, n, 6, CAP) + model.qp_mem(app, n, 6, CAP)) / 1024
                           for n in procs], color=col, ls=":", label=f"{app}: + QPs, cap {CAP}")
    a_c2s.plot(STOMP_PROCS, STOMP_C2S, color="k", marker="D", ls="none",
               label="STOMP: paper Table III")
    a_s2c.plot(STOMP_PROCS, STOMP_S2C, color="k", marker="D", ls="none",
               label="STOMP: paper Table IV")
    a_mem.plot(procs, [model.static_qp_mem(n, 6) / 1024 for n in procs], color="k",
               label="static: QP memory alone")
    for proto, ls in (("overlap", "-"), ("serial", "--")):
        for k in PREDICT_NODE_SIZES:
            a_time.plot(procs, [model.all_connect_us(proto, n, k) / 1000 for n in procs], ls=ls,
                        label=f"{proto}, {k} per node")
    for a, title, ylabel in (
            (a_c2s, "client-to-server connections per process, 6 per node", "connections"),
            (a_s2c, "server-to-client connections per data server, 6 per node", "connections"),
            (a_mem, "memory per process, 6 per node", "KiB"),
            (a_time, "one process connecting to every other node (model)", "ms")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_title(title, fontsize=10)
        a.set_xlabel("processes")
        a.set_ylabel(ylabel)
    measured_vs_model(a_cfit, model, scale, "c2s_avg",
                      lambda r: model.c2s(r["app"], int(r["procs"]), int(r["node_size"]),
                                          int(r["cap"]), run=True),
                      "bench/scale.sh runs: connections per process")
    measured_vs_model(a_mfit, model, scale, "rt_mem_avg",
                      lambda r: model.rt_mem(r["app"], int(r["procs"]), int(r["node_size"]),
                                             int(r["cap"]), run=True, hybrid=is_hybrid(r)),
                      "bench/scale.sh runs: runtime memory per process (KiB)", unit=1024)
    if not model.connect:  # no CONNECT_CSV: nothing to draw on a log scale there
        a_time.set_xscale("linear")
        a_time.set_yscale("linear")
        a_time.set_title("all-connect time: no bench_connect CSV given", fontsize=10)
    save(fig, ax.flat, Path(out) / "scale-model.png", dpi=100)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    scale = rows(sys.argv[1])
    connect = rows(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else []
    out = sys.argv[3] if len(sys.argv) > 3 else str(Path(sys.argv[1]).parent)
    model = Model(scale, connect)
    report(model, scale)
    plot(model, scale, out)
    plot_memory(model, APPS, CAP, AIMS, out)


if __name__ == "__main__":
    main()
