#!/usr/bin/env python3
"""The docs' commands, run (ctest docs.commands; docs.kquant_recipe in the peer step).

Every `kvscope-cli` command line in a fenced code block of README.md and docs/**/*.md is run, in
the order the page gives them, each page in a scratch folder of its own that holds what the
commands read: build/cli/kvscope-cli (this build's), a copy of docs/ without its images, the
repository's assets/ and lessons/, and the files the docs name as placeholders (path/to/model.gguf,
path/to/hf-folder, path/to/model.bin: the built-in model exported). A command must exit 0, or
what an HTML comment on the line before its block says:

  <!-- docs-test: exit 2 -->           every command of the block must exit 2 (an error shown)
  <!-- docs-test: skip: REASON -->     not run, the reason printed (a GPU, minutes of measuring)
  <!-- docs-test: peer -->             a recipe run whole (every line, by bash) only with --peer
                                       DIR, where scripts/peer.sh installed llama.cpp's library

A line is a command when its first word, after `$ ` and VAR=value assignments, is kvscope-cli or
a path ending in /kvscope-cli; in a block that marks commands with `$ `, only those lines are
(the rest is output). A line ending in a backslash continues on the next. Exit codes are checked,
not output: the built-in model may change.

usage: docs_commands.py REPO KVSCOPE_CLI [--peer PEER_DIR] [--only-peer] [--list]"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

MARK = re.compile(r"<!--\s*docs-test:\s*(exit\s+(\d+)|skip:\s*(.+?)|peer)\s*-->")


class Block:
    def __init__(self, page, line, lines, mark):
        self.page, self.line, self.lines, self.mark = page, line, lines, mark

    def commands(self):
        """(line number, command) of each kvscope-cli command in the block."""
        dollar = any(l.startswith("$ ") for l in self.lines)
        out, pending, start = [], "", 0
        for i, raw in enumerate(self.lines):
            text = raw[2:] if dollar and raw.startswith("$ ") else (raw if not dollar or pending else None)
            if text is None:
                continue
            if not pending:
                start = self.line + 1 + i
            if text.rstrip().endswith("\\"):
                pending += text.rstrip()[:-1] + " "
                continue
            whole, pending = pending + text, ""
            if is_kvscope_cli(whole):
                out.append((start, whole.strip()))
        return out


def is_kvscope_cli(command):
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return False
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]
    return bool(words) and (words[0] == "kvscope-cli" or words[0].endswith("/kvscope-cli"))


def blocks_of(repo, page):
    """The fenced blocks of a page, each with the mark on the line before it."""
    lines = open(os.path.join(repo, page), encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            before = next((l for l in reversed(lines[:i]) if l.strip()), "")
            m = MARK.search(before)
            out.append(Block(page, i + 1, lines[i + 1:j], m))
            i = j + 1
        else:
            i += 1
    return out


def pages(repo):
    return ["README.md"] + sorted(os.path.relpath(p, repo) for p in
                                  glob.glob(os.path.join(repo, "docs", "**", "*.md"), recursive=True))


def scratch(repo, cli, peer):
    """A folder the commands run in: what they read, nothing of the repository they could
    overwrite (docs/ is a copy, assets/ and lessons/ are only read)."""
    d = tempfile.mkdtemp(prefix="kvscope-docs-")
    os.makedirs(os.path.join(d, "build", "cli"))
    os.symlink(os.path.abspath(cli), os.path.join(d, "build", "cli", "kvscope-cli"))
    if peer:
        os.symlink(os.path.abspath(peer), os.path.join(d, "build", "peer"))
    shutil.copytree(os.path.join(repo, "docs"), os.path.join(d, "docs"),
                    ignore=shutil.ignore_patterns("*.png", "*.jpg", "screenshots"))
    for folder in ("assets", "lessons", "tools"):
        os.symlink(os.path.join(repo, folder), os.path.join(d, folder))
    # The placeholders the docs use for "your model": the built-in one, in each format.
    p = os.path.join(d, "path", "to")
    os.makedirs(p)
    run = lambda *a: subprocess.run([cli, *a], cwd=d, check=True, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
    run("export", "default", "--gguf", os.path.join(p, "model.gguf"))
    run("export", "default", "--hf", os.path.join(p, "hf-folder"))
    models = os.path.join(repo, "assets", "models")
    shutil.copy(os.path.join(models, "kvscope-tiny.bin"), os.path.join(p, "model.bin"))
    shutil.copy(os.path.join(models, "kvscope-tiny.tok.bin"), os.path.join(p, "model.tok.bin"))
    return d


def run_one(command, cwd, env, timeout_s=300):
    t0 = time.time()
    try:
        r = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout_s)
        return r.returncode, r.stderr.decode(errors="replace"), time.time() - t0
    except subprocess.TimeoutExpired:
        return None, f"still running after {timeout_s} s", time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("cli")
    ap.add_argument("--peer", help="where scripts/peer.sh installed llama.cpp (build/peer)")
    ap.add_argument("--only-peer", action="store_true", help="run the peer recipes alone")
    ap.add_argument("--list", action="store_true", help="list the commands, run nothing")
    a = ap.parse_args()
    repo = os.path.abspath(a.repo)
    a.cli = os.path.abspath(a.cli)  # the commands run in scratch folders
    ran = skipped = 0
    failures, skips = [], []
    # Stores of models the pages name as not there: empty here, whatever this machine holds.
    env = dict(os.environ)
    stores = tempfile.mkdtemp(prefix="kvscope-docs-stores-")
    env.update(HF_HUB_CACHE=os.path.join(stores, "hf"), OLLAMA_MODELS=os.path.join(stores, "ollama"))
    env.pop("HF_HOME", None)
    shared = os.path.isfile(os.path.join(repo, "..", "shared", "models", "stories260K.bin"))
    for page in pages(repo):
        blocks = [b for b in blocks_of(repo, page)
                  if b.commands() or (b.mark and b.mark.group(1) == "peer")]
        if not blocks:
            continue
        work = None if a.list else scratch(repo, a.cli, a.peer)
        env["PATH"] = os.path.join(work or "", "build", "cli") + os.pathsep + os.environ["PATH"]
        try:
            for b in blocks:
                mark = b.mark.group(1) if b.mark else ""
                if mark == "peer":
                    if not a.peer:
                        skips.append(f"{page}:{b.line}: a llama.cpp recipe (the peer step runs it)")
                        skipped += 1
                        continue
                    todo = [(b.line + 1, "set -euo pipefail\n" + "\n".join(b.lines))]
                    want = 0
                elif a.only_peer:
                    continue
                elif mark.startswith("skip"):
                    for line, _ in b.commands():
                        skips.append(f"{page}:{line}: {b.mark.group(3)}")
                        skipped += 1
                    continue
                else:
                    todo = b.commands()
                    want = int(b.mark.group(2)) if mark.startswith("exit") else 0
                for line, command in todo:
                    where = f"{page}:{line}"
                    if a.list:
                        print(f"{where}: {command}")
                        continue
                    if "stories260K" in command and not shared:
                        skips.append(f"{where}: stories260K is not in ../shared/models here")
                        skipped += 1
                        continue
                    rc, err, s = run_one(command, work, env)
                    ran += 1
                    shown = command if "\n" not in command else "(recipe) " + b.lines[0]
                    print(f"{where}: exit {rc} in {s:.1f} s: {shown}")
                    if rc != want:
                        last = err.strip().splitlines()[-1:] or [""]
                        failures.append(f"{where}: exit {rc}, the page expects {want}: {shown}"
                                        f" -- {last[0]}")
        finally:
            if work:
                shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(stores, ignore_errors=True)
    for s in skips:
        print(f"not run: {s}")
    for f in failures:
        print(f"FAIL: {f}")
    print(f"docs: {ran} commands run, {len(failures)} not as the docs say; {skipped} not run")
    if a.list:
        return 0
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
