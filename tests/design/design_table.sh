#!/usr/bin/env bash
# DESIGN.md's "Where each concept lives" stays true. It holds two tables, the concepts the
# tutorials teach ("### The concepts", about a dozen rows) and the engineering around them
# ("### The engineering"); both must be there, and each row names a file, the function in it that
# does the work, and the test that checks it:
#   | concept | `file` | `function` | `test` |
# The function must be defined in its file (a line naming it followed by "(" that is not a
# declaration ending in ";"); the test must be registered: a Catch2 TEST_CASE of that name under
# tests/ (adjacent string literals joined, as the compiler joins them), or a ctest entry added by
# that NAME (tests/'s CMakeLists and the .cmake files of the tree). A "|" in a test's name is
# written "\|" in the table. A row marked *pending* names work in flight: its function must NOT be
# defined yet, and once it lands the mark has to go.
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
exec python3 - "$root" <<'PY'
import glob
import os
import re
import sys

root = sys.argv[1]
design = open(os.path.join(root, "DESIGN.md"), encoding="utf-8").read()
m = re.search(r"^## Where each concept lives\n(.*?)(?=^## )", design, re.S | re.M)
section = m.group(1) if m else ""

# Every registered test name: Catch2 cases (their literals joined) and ctest entries.
tests = set()
literal = r'"((?:[^"\\]|\\.)*)"'
for path in glob.glob(os.path.join(root, "tests", "**", "*.cpp"), recursive=True):
    src = open(path, encoding="utf-8", errors="replace").read()
    for case in re.finditer(r"TEST_CASE\(((?:\s*" + literal + r")+)", src):
        tests.add("".join(re.findall(literal, case.group(1))))
cmake = glob.glob(os.path.join(root, "tests", "**", "CMakeLists.txt"), recursive=True)
cmake += [p for p in glob.glob(os.path.join(root, "**", "*.cmake"), recursive=True)
          if "/build" not in p[len(root):]]
for path in cmake:
    for entry in re.finditer(r'add_test\(\s*NAME\s+"?([^"\s)]+)"?', open(path).read()):
        tests.add(entry.group(1))


def cells(row):
    """The cells of a table row, "\\|" kept inside its cell."""
    parts = re.split(r"(?<!\\)\|", row.strip())[1:-1]
    return [p.strip().replace("\\|", "|") for p in parts]


def defined(file, func):
    path = os.path.join(root, file)
    if not os.path.isfile(path):
        return False
    pattern = re.compile(r"(^|[^A-Za-z0-9_:])" + re.escape(func) + r"\s*\(")
    for line in open(path, encoding="utf-8", errors="replace"):
        if pattern.search(line) and not re.search(r";\s*(//.*)?$", line):
            return True
    return False


fail = False
counts = []
for table in ("The concepts", "The engineering"):
    t = re.search(r"^### " + table + r"\n(.*?)(?=^#|\Z)", section, re.S | re.M)
    rows = [r for r in (t.group(1).splitlines() if t else [])
            if r.startswith("| ") and not r.startswith("| ---")][1:]  # after the header
    if not rows:
        print(f'DESIGN.md: no "### {table}" table under "Where each concept lives"')
        fail = True
    for row in rows:
        c = cells(row)
        code = [x.strip("`") for x in c[1:] if x.startswith("`") and x.endswith("`")]
        if len(c) != 4 or len(code) != 3:
            print(f"DESIGN.md ({table}): a row without `file` | `function` | `test`: {row[:100]}")
            fail = True
            continue
        file, func, test = code
        pending = "*pending*" in row
        if pending and defined(file, func):
            print(f"DESIGN.md: {file} defines {func} now: take the *pending* mark off its row")
            fail = True
        elif not pending and not defined(file, func):
            print(f"DESIGN.md ({table}) names {file}:{func}, which is not defined there")
            fail = True
        if not pending and test not in tests:
            print(f"DESIGN.md ({table}): {func}'s test \"{test}\" is no test case or ctest entry")
            fail = True
    counts.append(f"{len(rows)} {table}")
if not fail:
    print(f"DESIGN.md: {', '.join(counts)} rows checked: each function defined, each test there")
sys.exit(1 if fail else 0)
PY
