#!/usr/bin/env python3
"""The runtime's layers depend only downward (docs/ARCHITECTURE.md, "The layers").

Every file under armci/ (and common/, the header-only helpers at the
bottom) belongs to the layer of its folder; a file may
include headers of its own layer or of layers below it, never above. The
transport and the data server are peers that include nothing of each other:
what they share, the wire formats, is a folder below both that neither owns
(armci/wire/: protocol.h for RC, dgram_protocol.h for UD). Inside armci/transport/ the files have an order of
their own (docs/ARCHITECTURE.md, bottom up): a file there may include the
headers of its own file or of files below it in TRANSPORT, never above.
Prints every violation and fails if there is one.

Usage: test_layers.py SOURCE_ROOT
"""
import os
import re
import sys

# Bottom up. A folder not listed here is an error: every file has a layer.
LAYERS = [
    ("core", ["common", "armci/core", "armci/strided"]),
    ("wire", ["armci/wire"]),
    ("verbs", ["armci/verbs"]),
    ("odcm", ["armci/odcm"]),
    ("transport", ["armci/transport"]),
    ("dataserver", ["armci/dataserver"]),
    ("api", ["armci/api"]),
    ("init", ["armci/init.c"]),
]
RANK = {"core": 0, "wire": 1, "verbs": 2, "odcm": 3, "transport": 4, "dataserver": 4, "api": 5,
        "init": 6}
# armci/transport/, bottom up, by file name without .c/.h (x.h goes with x.c). The first
# three are types only.
TRANSPORT = [
    "target",         # where a range of another process's segment is
    "conn_io",        # the transport's state of a connection
    "transfer_desc",  # struct transfer: one put, get or accumulate
    "handle",         # what operations count in
    "numbering",      # one request counter per node, for both carriers
    "work",           # works in flight, bounce and small buffers, reply tokens
    "replay_log",     # what a connection sent and its server has not confirmed
    "send_queue",     # room, signaling, the chain of requests, lazy flushes
    "requests",       # requests to the data server: slots, credits, packs
    "recovery",       # broken connections set up anew, their requests replayed
    "retire",         # send completions
    "replies",        # reply buffers
    "liveness",       # probes of quiet nodes
    "progress",       # the progress engine
    "dgram_peers",    # the hybrid UD path's state per node
    "dgram",          # the hybrid UD data path
    "pieces",         # cutting a box into pieces
    "route",          # the choice of path
    "rdma_path",
    "server_path",
    "vector_path",
    "vector_rdma",
    "transfer",       # transfer_issue: which path
    "entry",          # transfer_start; connections, transport side
    "atomic_path",    # Rmw by device atomics
    "remote",         # the remote_* entry points
    "raw",            # hand-made requests for the tests
    "client",         # setup, the connection manager's callbacks
]
TRANSPORT_RANK = {name: i for i, name in enumerate(TRANSPORT)}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    for name, places in LAYERS:
        for place in places:
            if path == place or path.startswith(place + "/"):
                return name
    return None


def transport_rank(path):
    """The place of a file of armci/transport/ in TRANSPORT, or None."""
    return TRANSPORT_RANK.get(os.path.splitext(os.path.basename(path))[0])


def main(root):
    tops = [os.path.join(root, "armci"), os.path.join(root, "common")]
    problems = []
    files = 0
    for folder, _, names in (w for top in tops for w in os.walk(top)):
        for name in sorted(names):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.relpath(os.path.join(folder, name), root)
            files += 1
            mine = layer_of(path)
            if mine is None:
                problems.append(f"{path}: in no layer (add its folder to LAYERS)")
                continue
            if mine == "transport" and transport_rank(path) is None:
                problems.append(f"{path}: not in the transport's order (add it to TRANSPORT)")
                continue
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                # As the compiler looks: beside the file, then from armci/ (-I armci), then from
                # the root (common/).
                target = None
                for base in (os.path.dirname(path), "armci", "."):
                    candidate = os.path.normpath(os.path.join(base, inc))
                    if os.path.exists(os.path.join(root, candidate)):
                        target = candidate
                        break
                if target is None:
                    continue  # public headers (armci.h) and system ones
                theirs = layer_of(target)
                if theirs is None:
                    problems.append(f"{path}: includes {target}, which is in no layer")
                elif RANK[theirs] > RANK[mine]:
                    problems.append(f"{path} ({mine}) includes {target} ({theirs}): a layer above")
                elif theirs != mine and RANK[theirs] == RANK[mine]:
                    problems.append(f"{path} ({mine}) includes {target} ({theirs}): peers "
                                    "include nothing of each other (the wire formats are in "
                                    "armci/wire/)")
                elif mine == theirs == "transport" and transport_rank(target) is not None and \
                        transport_rank(target) > transport_rank(path):
                    problems.append(f"{path} includes {target}: a file above it in the "
                                    "transport's order (TRANSPORT)")
    for p in problems:
        print(p)
    if problems:
        print(f"FAIL: {len(problems)} include(s) against the layering")
        return 1
    print(f"PASS: {files} files, every include goes to the same layer or below, "
          f"and in transport/ ({len(TRANSPORT)} files) to the same file or below")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
