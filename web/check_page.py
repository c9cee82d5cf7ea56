#!/usr/bin/env python3
"""One web test (ctest -L web): serves the site on 127.0.0.1, opens the page in headless Chromium
with the window's options as URL parameters, and checks what a user would see and what the engine
computed:
  - the page reached its frames (the report came) with no error on the console;
  - the screenshot is not blank (many colours, not one flat fill);
  - with --cli: each session's tokens equal kvscope-cli generate's for the same run (cached and,
    in compare mode, uncached) and every top logit is within --tol of the CLI's.
Prints the figures it read (first frame, frame time) so the log has them. Exit 0: passed, 1:
failed, 77: skipped (no site built: run scripts/web.sh)."""
import argparse
import functools
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import zlib


def serve(site):
    handler = functools.partial(QuietHandler, directory=site)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript"}

    def log_message(self, *args):
        pass


def png_colours(path):
    """Distinct RGB colours of an 8-bit RGB/RGBA PNG (Chromium's screenshots), by hand: no
    third-party module needed."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w, h, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = int.from_bytes(body[:4], "big"), int.from_bytes(body[4:8], "big")
            assert body[8] == 8, "bit depth"
            ctype = body[9]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    bpp = {2: 3, 6: 4}[ctype]
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    colours = set()
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp * 2):  # every other pixel is plenty
            colours.add(bytes(line[x:x + 3]))
        prev = line
    return w, h, colours


class Cdp:
    """Chrome's DevTools protocol over --remote-debugging-pipe (fds 3 and 4 of the browser):
    real time, unlike --screenshot's virtual time, so the page's clocks measure."""

    def __init__(self, chromium, w, h, profile):
        # Above 9, so that putting them at 3 and 4 in the browser overwrites none of them.
        cmd_r, self.cmd_w, self.res_r, res_w = (os.dup2(fd, 10 + i)
                                                for i, fd in enumerate(os.pipe() + os.pipe()))

        def fds():
            os.dup2(cmd_r, 3)
            os.dup2(res_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--use-gl=angle",
             "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-first-run",
             f"--user-data-dir={profile}", f"--window-size={w},{h}", "--remote-debugging-pipe",
             "about:blank"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=fds, pass_fds=(3, 4))
        os.close(cmd_r)
        os.close(res_w)
        self.buf = b""
        self.next_id = 0
        self.console = []

    def _read(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.res_r, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=None, **params):
        self.next_id += 1
        m = {"id": self.next_id, "method": method, "params": params}
        if session:
            m["sessionId"] = session
        os.write(self.cmd_w, json.dumps(m).encode() + b"\0")
        while True:
            r = self._read()
            if r.get("method") == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(x.get("value", x.get("description", "")))
                                             for x in r["params"]["args"]))
            elif r.get("method") == "Runtime.exceptionThrown":
                d = r["params"]["exceptionDetails"]
                self.console.append("uncaught exception: " +
                                    d.get("exception", {}).get("description", d.get("text", "")))
            if r.get("id") == self.next_id:
                if "error" in r:
                    raise RuntimeError(f"{method}: {r['error']}")
                return r.get("result", {})

    def close(self):
        try:
            self.call("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def load_page(chromium, url, w, h, timeout_s):
    """Opens `url` at w x h, waits until the page says it reported (its title), screenshots it.
    Returns (console lines, PNG bytes)."""
    import base64
    import time
    with tempfile.TemporaryDirectory() as profile:
        cdp = Cdp(chromium, w, h, profile)
        try:
            target = cdp.call("Target.createTarget", url="about:blank")["targetId"]
            s = cdp.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            cdp.call("Runtime.enable", session=s)
            cdp.call("Emulation.setDeviceMetricsOverride", session=s, width=w, height=h,
                     deviceScaleFactor=1, mobile=False)
            cdp.call("Page.navigate", session=s, url=url)
            end = time.time() + timeout_s
            while time.time() < end:
                t = cdp.call("Runtime.evaluate", session=s, expression="document.title")
                if t["result"].get("value") == "kvscope reported":
                    break
                time.sleep(0.2)
            shot = cdp.call("Page.captureScreenshot", session=s, format="png")["data"]
            return cdp.console, base64.b64decode(shot)
        finally:
            cdp.close()


def cli_steps(cli, params, mode):
    """kvscope-cli generate's steps for the page's run: [(token_out, [(id, logit)...]), ...]."""
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.json")
        cmd = [cli, "generate", "--model", params.get("model", "default"),
               "--prompt", params["prompt"], "--max-new-tokens",
               str(int(params.get("decode", "0")) + 1), "--trace-json", trace]
        if mode == "uncached":
            cmd.append("--no-cache")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = json.load(open(trace))
    return [(s["token_out"], [(x["id"], x["logit"]) for x in s["top"]]) for s in t["steps"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--out", required=True, help="the screenshot to write")
    ap.add_argument("--params", required=True, help="URL query, e.g. model=toy&decode=3")
    ap.add_argument("--cli", help="kvscope-cli: compare the engine's numbers with it")
    ap.add_argument("--tol", type=float, default=1e-5, help="largest |logit difference|")
    ap.add_argument("--size", default="1280,800")
    ap.add_argument("--report-ms", type=int, default=1000,
                    help="frames drawn after the engine went idle, before the report")
    ap.add_argument("--timeout-s", type=float, default=120, help="for the report to come")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.site, "kvscope.wasm")):
        print(f"skipped: no site in {a.site}: build it with scripts/web.sh")
        return 77
    params = dict(urllib.parse.parse_qsl(a.params, keep_blank_values=True))
    httpd = serve(a.site)
    url = (f"http://127.0.0.1:{httpd.server_address[1]}/index.html?"
           f"{a.params}&no-settings&report={a.report_ms}")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    w, h = (int(x) for x in a.size.split(","))
    try:
        console, shot = load_page(a.chromium, url, w, h, a.timeout_s)
    finally:
        httpd.shutdown()
    with open(a.out, "wb") as f:
        f.write(shot)
    failures = []
    errors = [c for c in console if re.search(r"error|abort|exception|uncaught", c, re.I)
              and not c.startswith("kvscope-web-report:")]
    failures += [f"console: {c}" for c in errors]
    report = None
    for c in console:
        if c.startswith("kvscope-web-"):
            print(c[:300])
        if c.startswith("kvscope-web-report: "):
            report = json.loads(c[len("kvscope-web-report: "):])
    if report is None:
        failures.append("the page never reported (its engine did not settle, or it crashed)")
    if True:
        w, h, colours = png_colours(a.out)
        print(f"screenshot {a.out}: {w}x{h}, {len(colours)} colours")
        if len(colours) < 20:
            failures.append(f"screenshot nearly blank: {len(colours)} colours")
    if report is not None:
        print(f"first frame {report['first_frame_ms']:.0f} ms after the page started loading; "
              f"frame time median {report['frame_ms_median']:.2f} ms over {report['frames']} "
              f"frames (engine slice median {report['engine_ms_median']:.2f} ms); "
              f"backend {report['backend']} ({report['device']})")
        if report["error"]:
            failures.append(f"the engine reported: {report['error']}")
        if a.cli:
            for s in report["sessions"]:
                want = cli_steps(a.cli, params, s["mode"])
                got = [(x["token_out"], [(t["id"], t["logit"]) for t in x["top"]])
                       for x in s["steps"]]
                if len(got) != int(params.get("decode", "0")) + 1:
                    failures.append(f"{s['mode']}: {len(got)} steps in the page")
                worst = 0.0
                for i, ((tg, topg), (tw, topw)) in enumerate(zip(got, want)):
                    if tg != tw:
                        failures.append(f"{s['mode']} step {i}: token {tg} in the page, {tw} "
                                        "from kvscope-cli")
                    if [x[0] for x in topg] != [x[0] for x in topw]:
                        failures.append(f"{s['mode']} step {i}: top ids differ")
                    for (_, lg), (_, lw) in zip(topg, topw):
                        worst = max(worst, abs(lg - lw))
                print(f"{s['mode']}: {len(got)} steps, tokens equal kvscope-cli's: "
                      f"{all(g[0] == w_[0] for g, w_ in zip(got, want))}; "
                      f"largest |logit difference| {worst:.3g}")
                if worst > a.tol:
                    failures.append(f"{s['mode']}: logits differ by {worst:.3g} > {a.tol}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
