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
    ap.add_argument("--budget-ms", type=int, default=20000, help="Chromium's virtual time")
    a = ap.parse_args()
    if not os.path.isfile(os.path.join(a.site, "kvscope.wasm")):
        print(f"skipped: no site in {a.site}: build it with scripts/web.sh")
        return 77
    params = dict(urllib.parse.parse_qsl(a.params, keep_blank_values=True))
    httpd = serve(a.site)
    url = (f"http://127.0.0.1:{httpd.server_address[1]}/index.html?"
           f"{a.params}&no-settings&report=500")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        cmd = [a.chromium, "--headless=new", "--no-sandbox", "--use-gl=angle",
               "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-first-run",
               f"--user-data-dir={profile}", f"--window-size={a.size}",
               f"--virtual-time-budget={a.budget_ms}", "--enable-logging=stderr", "--v=0",
               f"--screenshot={os.path.abspath(a.out)}", url]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    httpd.shutdown()
    console = [m.group(1) for m in re.finditer(r'CONSOLE[:(]\d+\)?\] "(.*)", source:', r.stderr)]
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
        failures.append("the page never reported (its engine did not settle, or it crashed); "
                        "Chromium said:\n" + r.stderr[-3000:])
    if not os.path.isfile(a.out):
        failures.append("no screenshot")
    else:
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
