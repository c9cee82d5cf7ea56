#!/usr/bin/env python3
"""The one-file page (scripts/web.sh --single-file) in Firefox, from file:// (ctest
web_single_file_firefox, where Firefox is installed; run on a virtual display by
tests/gui/with-xvfb.sh: headless Firefox has no WebGL on a machine without a GPU, Firefox on Xvfb
draws it with Mesa). Firefox is driven through Marionette, its own remote protocol (length-prefixed
JSON over a local socket, nothing to install): the page is opened with the window's options as URL
parameters, and must reach its report (the engine idle, frames drawn) with no error shown and a
screenshot that is not blank. Exit 0: passed, 1: failed, 77: skipped (no file built)."""
import argparse
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_page import png_colours  # noqa: E402


class Marionette:
    def __init__(self, firefox, profile, port):
        with open(os.path.join(profile, "user.js"), "w") as f:
            f.write(f'user_pref("marionette.port", {port});\n')
        self.proc = subprocess.Popen([firefox, "--marionette", "-no-remote", "-profile", profile],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.time() + 60
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.time() > end:
                    raise RuntimeError("Firefox's Marionette port did not open")
                time.sleep(0.3)
        self.buf, self.id = b"", 0
        self._read()  # the greeting

    def _read(self):
        while b":" not in self.buf:
            self.buf += self.sock.recv(1 << 16)
        n, rest = self.buf.split(b":", 1)
        while len(rest) < int(n):
            rest += self.sock.recv(1 << 20)
        self.buf = rest[int(n):]
        return json.loads(rest[:int(n)])

    def call(self, name, **params):
        self.id += 1
        m = json.dumps([0, self.id, name, params]).encode()
        self.sock.sendall(str(len(m)).encode() + b":" + m)
        while True:
            r = self._read()
            if r[0] == 1 and r[1] == self.id:
                if r[2]:
                    raise RuntimeError(f"{name}: {r[2]}")
                return r[3]

    def script(self, js):
        return self.call("WebDriver:ExecuteScript", script=js, args=[])["value"]

    def close(self):
        try:
            self.call("WebDriver:DeleteSession")
        except (RuntimeError, OSError):
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True, help="the one-file page")
    ap.add_argument("--firefox", required=True)
    ap.add_argument("--out", required=True, help="the screenshot to write")
    ap.add_argument("--params", required=True, help="URL query, e.g. model=toy&decode=3")
    ap.add_argument("--timeout-s", type=float, default=120)
    a = ap.parse_args()
    if not os.path.isfile(a.file):
        print(f"skipped: no {a.file}: build it with scripts/web.sh --single-file")
        return 77
    url = ("file://" + urllib.parse.quote(os.path.abspath(a.file)) + "?" + a.params +
           "&no-settings&report=1000")
    failures = []
    with tempfile.TemporaryDirectory() as profile:
        ff = Marionette(a.firefox, profile, free_port())
        try:
            ff.call("WebDriver:NewSession", capabilities={})
            print("browser:", ff.script("return navigator.userAgent"))
            ff.call("WebDriver:SetWindowRect", width=1280, height=880)
            t0 = time.time()
            ff.call("WebDriver:Navigate", url=url)
            title = ""
            while time.time() - t0 < a.timeout_s:
                title = ff.script("return document.title")
                if title == "kvscope reported":
                    break
                time.sleep(0.5)
            status = ff.script("const s = document.getElementById('status'); "
                               "return s.hidden ? '' : s.textContent")
            print(f"title {title!r} after {time.time() - t0:.1f} s; status {status!r}")
            if title != "kvscope reported":
                failures.append("the page never reported (its engine did not settle)")
            if status:
                failures.append(f"the page shows: {status}")
            os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
            with open(a.out, "wb") as f:
                f.write(base64.b64decode(ff.call("WebDriver:TakeScreenshot", full=False)["value"]))
        finally:
            ff.close()
    w, h, colours = png_colours(a.out)
    print(f"screenshot {a.out}: {w}x{h}, {len(colours)} colours")
    if len(colours) < 20:
        failures.append(f"screenshot nearly blank: {len(colours)} colours")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
