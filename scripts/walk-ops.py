# gdb script for scripts/walk-ops.sh: follows the operations tools/walk-ops
# announces through the library, function by function, and counts the moves
# between files on the sending side: from the ARMCI_* call until the first
# work request reaches the verbs provider (softib's post_send).
# WALK_FUNCS names a file of "path function" lines: the library's functions.
import os

import gdb

walk = {"op": None, "calls": [], "thread": None}  # only the calling thread counts


# Folders every layer uses as a library (checks, tables, stride arithmetic, the
# kernels): a call there and back is not a step of the walk a reader follows.
UTILITY = ("armci/core/", "armci/strided/")


def moves(calls):
    return sum(1 for a, b in zip(calls, calls[1:]) if a[0] != b[0])


def report(op, calls):
    path_calls = [c for c in calls if not c[0].startswith(UTILITY)]
    print(f"== {op}: {moves(path_calls)} moves between files of the data path "
          f"({moves(calls)} counting core/ and strided/)")
    runs = []
    for path, func in calls:
        if runs and runs[-1][0] == path:
            runs[-1][1].append(func)
        else:
            runs.append((path, [func]))
    for path, funcs in runs:
        print(f"   {path}: {', '.join(funcs)}")
    print(f"WALK,{op},{moves(path_calls)},{moves(calls)}")


class Entry(gdb.Breakpoint):
    """A function of the library: its entry is noted while an operation is followed."""

    def __init__(self, path, func):
        super().__init__(f"{path}:{func}", internal=True)
        self.path, self.func = path, func
        self.enabled = False

    def stop(self):
        if walk["op"] is not None and gdb.selected_thread().num == walk["thread"]:
            walk["calls"].append((self.path, self.func))
        return False


class Posted(gdb.Breakpoint):
    """The provider's post_send: the sending side of the followed operation ends here."""

    def stop(self):
        if walk["op"] is not None and gdb.selected_thread().num == walk["thread"]:
            report(walk["op"], walk["calls"])
            walk["op"] = None
        return False


gdb.execute("set breakpoint pending on")
gdb.execute("set pagination off")
gdb.execute("set confirm off")
entries = []
with open(os.environ["WALK_FUNCS"]) as f:
    for line in f:
        path, func = line.split()
        entries.append((path, func))
mark = gdb.Breakpoint("walk_mark")
gdb.execute("run")
bps = [Entry(p, fn) for p, fn in entries]
Posted("sib_post_send", internal=True)
while gdb.selected_inferior().pid != 0:
    name = gdb.newest_frame().read_var("next").string()
    follow = name != "end"
    for bp in bps:
        bp.enabled = follow
    walk["op"] = name if follow else None
    walk["calls"] = []
    walk["thread"] = gdb.selected_thread().num
    if not follow:
        mark.enabled = False
    gdb.execute("continue")
