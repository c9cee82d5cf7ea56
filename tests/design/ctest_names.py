#!/usr/bin/env python3
"""Every Catch2 test case runs under ctest, and every ctest entry of a Catch2 binary runs one.

catch_discover_tests registers one ctest entry per name that `BIN --list-test-names-only` prints,
whose command is `BIN <name as a test spec>`. A name CMake or Catch2's spec parser reads as syntax
breaks that: `;` splits it into several entries (CMake's list separator), each selecting nothing
(and a Catch2 binary given a spec that matches nothing exits 0: the entry passes having run
nothing); a leading `"` or `#`, a `\\`, `[` or `]` changes what the spec means. So:
  1. no test name holds `;`, `"`, `\\`, `[` or `]`, or starts or ends with a space;
  2. each ctest entry whose command is one of the binaries selects exactly its own test case
     (its command with --list-test-names-only lists that one name);
  3. each test case of each binary is selected by exactly one entry.
Usage: ctest_names.py BUILD_DIR CATCH2_BINARY...
"""
import collections
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

build_dir, binaries = sys.argv[1], [os.path.realpath(b) for b in sys.argv[2:]]
if not binaries:
    sys.exit("ctest_names.py: no Catch2 binary given")
listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build_dir, capture_output=True,
                         text=True, check=True).stdout
entries = collections.defaultdict(list)  # binary -> [(ctest name, command)]
for test in json.loads(listing)["tests"]:
    command = test.get("command") or []
    if command and os.path.realpath(command[0]) in binaries:
        entries[os.path.realpath(command[0])].append((test["name"], command))

BAD = re.compile(r'[;"\\\[\]]|^[\s#]|\s$')


def names_of(command):
    out = subprocess.run(command + ["--list-test-names-only"], capture_output=True, text=True,
                         cwd=build_dir).stdout
    return [line for line in out.splitlines() if line]


failures = []
checked = 0
with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for binary in binaries:
        short = os.path.basename(binary)
        names = names_of([binary])
        if not names:
            failures.append(f"{short}: lists no test case")
        for name in names:
            if BAD.search(name):
                failures.append(f"{short}: test name {name!r} holds a character that breaks its "
                                "ctest entry (; \" \\ [ ] or a leading/trailing space or #)")
        selected = collections.Counter()
        own = entries.get(binary, [])
        for (entry, _), got in zip(own, pool.map(lambda e: names_of(e[1]), own)):
            checked += 1
            selected.update(got)
            if got != [entry]:
                failures.append(f"{short}: ctest entry {entry!r} runs {len(got)} test cases "
                                f"{got[:3]!r}, not the one it is named for")
        for name in names:
            if selected[name] != 1:
                failures.append(f"{short}: test case {name!r} is run by {selected[name]} ctest "
                                "entries, not 1")
for line in failures:
    print(line)
print(f"ctest_names: {len(binaries)} Catch2 binaries, {checked} ctest entries checked, "
      f"{len(failures)} problems")
sys.exit(1 if failures else 0)
