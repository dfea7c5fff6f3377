#!/usr/bin/env python3
"""The fresh-machine check: scripts/deps.txt, the one table of program -> Debian
package that scripts/install-deps.sh installs, is complete and true.

1. Every row: its program (on Debian's PATH) or file (an absolute path, * within
   one part) exists, and dpkg says the row's package provides it (the package
   itself owns the path, a symlink on the way to it, or the file it resolves to,
   or one of the packages it directly depends on does: python3 -> python3-minimal).
   A program that is missing fails the check: it never skips.
2. Every program that scripts/, tests/, bench/, .ci/ or a meson file asks for
   (`command -v P`, `find_program('P')`, a `for p in A B C` list checked with
   `command -v "$p"`, `scripts/check-programs.sh A B`, or a `# programs: A B` comment on or just above a
   `command -v` whose word the scan cannot read) has a row, unless the package
   that provides it here is Essential or of Priority required (coreutils,
   util-linux, ...), which every Debian machine has, or the project builds it
   itself (an `executable('NAME', ...)` of a meson file: armci-info, lu, ...).

CI runs on a machine that is not fresh: a package installed by hand there
hides a missing install step from every other test. This check does not look
at what is installed beyond the table's rows, so it cannot be fooled that way.

Usage: test_deps.py SOURCE_ROOT
"""
import glob
import os
import re
import subprocess
import sys

DEBIAN_PATH = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
SCANNED_DIRS = ["scripts", "tests", "bench", ".ci"]
SKIPPED_DIRS = {"corpus", "__pycache__"}
# The checkers themselves: they name programs only as examples or arguments.
SKIPPED_FILES = {"tests/core/test_deps.py", "scripts/check-programs.sh"}

COMMAND_V = re.compile(r'command\s+-v\s+("[^"]*"|\'[^\']*\'|[^\s;|&)]+)')
FOR_LIST = re.compile(r"\bfor\s+(\w+)\s+in\s+([^;\n]*)")
ASSIGN = re.compile(r"^\s*(\w+)=(\S+)", re.M)
PROGRAMS_NOTE = re.compile(r"#\s*programs:\s*(.*)$")
CHECK_PROGRAMS = re.compile(r'check-programs\.sh"?((?:[ \t]+[\w.+-]+)+)')
OWN_EXECUTABLE = re.compile(r"executable\(\s*'([^']+)'")
FIND_PROGRAM = re.compile(r"find_program\(([^)]*)\)")
STRING = re.compile(r"'([^']*)'")


def read_table(path):
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) < 2:
                sys.exit(f"{path}:{number}: a row needs a program or file and a package")
            rows.append((number, fields[0], fields[1]))
    return rows


def which(program):
    for d in DEBIAN_PATH:
        candidate = os.path.join(d, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def locate(thing):
    """The path a row names: a program on Debian's PATH, or a file (glob)."""
    if thing.startswith("/"):
        found = sorted(glob.glob(thing))
        return found[0] if found else None
    return which(thing)


def path_variants(path):
    """The path, every symlink on the way to its target, and the target, each
    also with and without /usr (Debian 12's merged /usr: the package may have
    registered /bin/busybox while the link resolves to /usr/bin/busybox)."""
    seen = []
    current = path
    for _ in range(16):
        seen.append(current)
        if not os.path.islink(current):
            break
        target = os.readlink(current)
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
    seen.append(os.path.realpath(path))
    out = []
    for p in seen:
        for v in (p, p[4:] if p.startswith("/usr/") else "/usr" + p):
            if v not in out:
                out.append(v)
    return out


def dpkg_owners(paths):
    """{path: set of packages} for the paths dpkg knows (one dpkg -S call)."""
    result = subprocess.run(["dpkg", "-S"] + paths, capture_output=True, text=True)
    owners = {}
    for line in result.stdout.splitlines():
        if line.startswith("diversion ") or ": " not in line:
            continue
        pkgs, path = line.split(": ", 1)
        owners.setdefault(path.strip(), set()).update(
            p.strip().split(":")[0] for p in pkgs.split(","))
    return owners


def package_fields(packages):
    """{package: (installed, essential_or_required, direct dependencies)}."""
    fmt = "${Package}\t${Status}\t${Essential}\t${Priority}\t${Depends},${Pre-Depends}\n"
    result = subprocess.run(["dpkg-query", "-W", "-f", fmt] + sorted(packages),
                            capture_output=True, text=True)
    fields = {}
    for line in result.stdout.splitlines():
        name, status, essential, priority, depends = (line.split("\t") + [""] * 5)[:5]
        deps = set()
        for alternative in depends.replace("|", ",").split(","):
            word = alternative.strip().split(" ")[0].split(":")[0]
            if word:
                deps.add(word)
        fields[name] = (status.endswith("install ok installed"),
                        essential == "yes" or priority == "required", deps)
    return fields


def check_rows(rows):
    problems = []
    located = {}
    for number, thing, package in rows:
        path = locate(thing)
        if path is None:
            problems.append(f"scripts/deps.txt:{number}: {thing} is not installed (package "
                            f"{package}): run scripts/install-deps.sh")
        else:
            located[(number, thing, package)] = path
    variants = {row: path_variants(path) for row, path in located.items()}
    owners = dpkg_owners(sorted({v for vs in variants.values() for v in vs}))
    fields = package_fields({package for _, _, package in rows})
    for row, vs in variants.items():
        number, thing, package = row
        installed, _, deps = fields.get(package, (False, False, set()))
        if not installed:
            problems.append(f"scripts/deps.txt:{number}: package {package} is not installed: "
                            "run scripts/install-deps.sh")
            continue
        found = set().union(*(owners.get(v, set()) for v in vs))
        if package not in found and not (deps & found):
            said = ", ".join(sorted(found)) or "no package"
            problems.append(f"scripts/deps.txt:{number}: {thing} ({located[row]}) comes from "
                            f"{said}, not from {package}")
    return problems


def source_files(root):
    for d in SCANNED_DIRS:
        for folder, subdirs, files in os.walk(os.path.join(root, d)):
            subdirs[:] = [s for s in subdirs if s not in SKIPPED_DIRS]
            for name in files:
                yield os.path.join(folder, name)
    for folder, subdirs, files in os.walk(root):
        subdirs[:] = [s for s in subdirs if not s.startswith((".", "build"))
                      and s not in SKIPPED_DIRS]
        if "meson.build" in files and not any(
                os.path.relpath(folder, root).split(os.sep)[0] == d for d in SCANNED_DIRS):
            yield os.path.join(folder, "meson.build")


def is_script(path):
    if path.endswith((".sh", ".py", ".bash")) or os.path.basename(path) in ("meson.build", "run"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def words_of_variable(text, before, name):
    """What $name holds where it is used: the nearest `for name in ...` list
    above, or a `name=value` / `name=${X:-value}` assignment in the file."""
    lists = [m for m in FOR_LIST.finditer(text, 0, before) if m.group(1) == name]
    if lists:
        return [w for w in lists[-1].group(2).split() if "$" not in w and w != "do"]
    for m in ASSIGN.finditer(text):
        if m.group(1) != name:
            continue
        value = m.group(2).strip("\"'")
        default = re.fullmatch(r"\$\{\w+:-([^}$]+)\}", value)
        if default:
            return [default.group(1)]
        if "$" not in value:
            return [value]
    return None


def scan(root):
    """(file, line, program) for every program the tree asks for, the problems met, and the
    programs this project builds itself (meson's executable('NAME', ...): no package has them)."""
    found = []
    problems = []
    own = set()
    for path in source_files(root):
        rel = os.path.relpath(path, root)
        if not is_script(path) or rel in SKIPPED_FILES:
            continue
        with open(path, errors="replace") as f:
            text = f.read()
        lines = text.splitlines()
        if os.path.basename(path) == "meson.build":
            own.update(OWN_EXECUTABLE.findall(text))
            for m in FIND_PROGRAM.finditer(text):
                args = m.group(1)
                if re.search(r"[\w)']\s*/\s*['\w]", re.sub(r"'[^']*'", "''", args)):
                    continue  # a path expression: a file of the project
                line = text.count("\n", 0, m.start()) + 1
                for s in STRING.finditer(args):
                    name = s.group(1)
                    after = args[s.end():].lstrip()
                    before = args[:s.start()].rstrip()
                    if after.startswith(("+", "?", "==", "!=")) or before.endswith(("==", "!=")):
                        continue  # part of an expression, not a program's name
                    if "/" in name:
                        continue
                    if os.path.exists(os.path.join(os.path.dirname(path), name)):
                        continue
                    found.append((rel, line, name))
            continue
        for m in CHECK_PROGRAMS.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.extend((rel, line, n) for n in m.group(1).split())
        for m in COMMAND_V.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            word = m.group(1).strip("\"'")
            note = None
            for candidate in lines[max(0, line - 2):line]:
                n = PROGRAMS_NOTE.search(candidate)
                if n:
                    note = n.group(1).split()
            if note is not None:
                names = note
            elif "$" not in word:
                names = [word]
            else:
                v = re.fullmatch(r"\$\{?(\w+)\}?", word)
                names = words_of_variable(text, m.start(), v.group(1)) if v else None
            if not names:
                problems.append(f"{rel}:{line}: cannot tell which program `command -v {word}` "
                                "asks for: say it in a '# programs: NAME...' comment")
                continue
            found.extend((rel, line, n) for n in names)
    return found, problems, own


def check_scan(root, rows):
    found, problems, own = scan(root)
    listed = {thing for _, thing, _ in rows} | own
    unlisted = [(f, line, p) for f, line, p in found if p not in listed]
    paths = {p: which(p) for _, _, p in unlisted}
    owners = dpkg_owners(sorted({v for p in paths.values() if p for v in path_variants(p)}))
    owner_of = {}
    for p, path in paths.items():
        if path:
            owner_of[p] = set().union(*(owners.get(v, set()) for v in path_variants(path)))
    fields = package_fields({pkg for s in owner_of.values() for pkg in s})
    for f, line, p in unlisted:
        pkgs = owner_of.get(p, set())
        if pkgs and all(fields.get(k, (False, False, set()))[1] for k in pkgs):
            continue  # Essential or required: on every Debian machine
        said = f"package {', '.join(sorted(pkgs))}" if pkgs else "not installed here"
        problems.append(f"{f}:{line}: runs {p} ({said}), which scripts/deps.txt lacks: "
                        "add a row, so that scripts/install-deps.sh installs it")
    return problems, len(found)


# The quick start's first command builds the library and runs LU on softib: it needs these
# packages, and none of the test beds' (a user's workstation or a login node is no test bed).
RUN_NEEDS = {"gcc", "build-essential", "meson", "ninja-build", "pkg-config", "python3",
             "libibverbs-dev", "openmpi-bin", "libopenmpi-dev"}
RUN_NEVER = {"qemu-system-x86", "slurmd", "slurmctld", "slurm-client", "munge",
             "openssh-server", "lmod", "perftest", "libglobalarrays-dev", "mpich"}


def read_sets(path):
    """package -> set ("run" or "tests"), from the "#= SET" lines; a row before any is None."""
    sets, current = {}, None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if line.startswith("#= "):
                current = line.split()[1]
                continue
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 2:
                sets.setdefault(fields[1], set()).add(current or f"none (line {number})")
    return sets


def check_sets(path):
    problems = []
    sets = read_sets(path)
    for package, where in sorted(sets.items()):
        bad = [w for w in where if w not in ("run", "tests")]
        if bad:
            problems.append(f"deps.txt: {package} is in no set of run/tests: {', '.join(bad)}")
    run = {p for p, where in sets.items() if "run" in where}
    for package in sorted(RUN_NEEDS - run):
        problems.append(f"deps.txt: the quick start needs {package}, which is not in the run set")
    for package in sorted(RUN_NEVER & run):
        problems.append(f"deps.txt: {package} is a test bed's package, not for the run set "
                        f"(the quick start would install it)")
    return problems


def main(root):
    path = os.path.join(root, "scripts", "deps.txt")
    rows = read_table(path)
    problems = check_rows(rows) + check_sets(path)
    scan_problems, calls = check_scan(root, rows)
    problems += scan_problems
    for p in problems:
        print(p)
    packages = len({package for _, _, package in rows})
    print(f"deps: {len(rows)} rows, {packages} packages, {calls} program look-ups in the tree")
    print(f"{len(rows) + calls - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
