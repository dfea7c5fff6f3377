#!/usr/bin/env python3
"""No fact without its page: every ARMCI_* and SOFTIB_* environment variable
the code reads, every script under scripts/ and every meson test suite is
named somewhere in README.md or docs/ (docs/TESTING.md, "The docs check").

Variables: the configuration table and the list of other known names in
armci/core/config.c, and every getenv (or softib's env_* helpers) of a
literal name in armci/, softib/ and tools/. Scripts: by file name. Suites:
the literal names of `suite :` in every meson.build, written as `name` in
backquotes (a bare word such as "core" proves nothing).
Prints what is missing and fails if anything is.

Usage: test_docs_complete.py SOURCE_ROOT
"""
import os
import re
import sys

TABLE = re.compile(r'\{"((?:ARMCI|SOFTIB)_[A-Z0-9_]+)",\s*CFG_')
KNOWN = re.compile(r"other_known_names\[\]\s*=\s*\{(.*?)\};", re.S)
READ = re.compile(r'\b(?:getenv|env_[a-z0-9]+)\(\s*"((?:ARMCI|SOFTIB)_[A-Z0-9_]+)"')
NAME = re.compile(r'"((?:ARMCI|SOFTIB)_[A-Z0-9_]+)"')
SUITE = re.compile(r"\bsuite\s*:\s*(\[[^\]]*\]|[^,)\n]+)")
LITERAL = re.compile(r"'([^']+)'")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def sources(root, tops, exts):
    for top in tops:
        for folder, dirs, names in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "build")))
            for name in sorted(names):
                if name.endswith(exts):
                    yield os.path.join(folder, name)


def variables(root):
    config = read(os.path.join(root, "armci", "core", "config.c"))
    found = set(TABLE.findall(config))
    known = KNOWN.search(config)
    if known:
        found |= set(NAME.findall(known.group(1)))
    for path in sources(root, ["armci", "softib", "tools"], (".c", ".h")):
        found |= set(READ.findall(read(path)))
    return found


def suites(root):
    found = set()
    for path in sources(root, ["."], ("meson.build",)):
        for expr in SUITE.findall(read(path)):
            # cond ? a : b: the names are after the question mark
            found |= set(LITERAL.findall(expr.split("?", 1)[-1]))
    return found


def docs_text(root):
    texts = [read(os.path.join(root, "README.md"))]
    for path in sources(root, ["docs"], (".md",)):
        texts.append(read(path))
    return "\n".join(texts)


def main(root):
    text = docs_text(root)
    missing = []
    for var in sorted(variables(root)):
        if not re.search(r"\b" + re.escape(var) + r"\b", text):
            missing.append(f"variable {var}")
    scripts = sorted(n for n in os.listdir(os.path.join(root, "scripts"))
                     if os.path.isfile(os.path.join(root, "scripts", n)))
    for name in scripts:
        if not re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w-])", text):
            missing.append(f"script scripts/{name}")
    for suite in sorted(suites(root)):
        if f"`{suite}`" not in text:
            missing.append(f"suite `{suite}`")
    for m in missing:
        print(f"{m}: named nowhere in README.md or docs/")
    if missing:
        print(f"FAIL: {len(missing)} name(s) the documentation does not give")
        return 1
    print(f"PASS: {len(variables(root))} variables, {len(scripts)} scripts and "
          f"{len(suites(root))} suites are all named in README.md or docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
