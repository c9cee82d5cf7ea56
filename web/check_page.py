#!/usr/bin/env python3
"""One web test (ctest -L web): serves the site on 127.0.0.1, opens the page in headless Chromium
with the window's options as URL parameters, and checks what a user would see and what the engine
computed:
  - the page reached its frames (the report came) with no error on the console;
  - the screenshot is not blank (many colours, not one flat fill);
  - with --cli: each session's tokens equal kvscope-cli generate's for the same run (cached and,
    in compare mode, uncached) and every top logit is within --tol of the CLI's;
  - with --pixels: the pixels the desktop's screenshot tests check (the lower triangle, one row
    per decode step, one KV column per token), where the page's layout record says it drew;
  - with --open or --drop: a checkpoint from disk, picked or dropped, opens as in kvscope-cli.
With --file, the page is the one-file build (scripts/web.sh --single-file) opened from file://,
no server at all. Prints the figures it read (first frame, frame time) so the log has them.
Exit 0: passed, 1: failed, 77: skipped (no site built: run scripts/web.sh)."""
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


def png_rows(path):
    """Width, height and the RGB rows (bytes, 3 per pixel) of an 8-bit RGB/RGBA PNG (Chromium's
    screenshots), decoded by hand: no third-party module needed."""
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
    rows = []
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
        rows.append(bytes(line) if bpp == 3 else
                    b"".join(line[x:x + 3] for x in range(0, stride, 4)))
        prev = line
    return w, h, rows


def png_colours(path):
    """Width, height and the distinct RGB colours (every other pixel is plenty)."""
    w, h, rows = png_rows(path)
    return w, h, {r[x:x + 3] for r in rows for x in range(0, len(r), 6)}


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


LAYOUT = "kvscope-web-layout: "


def last_report(console):
    for c in reversed(console):
        if c.startswith("kvscope-web-report: "):
            return json.loads(c[len("kvscope-web-report: "):])
    return None


class Page:
    """One page in one headless Chromium (a profile of its own, kept across load() calls so that
    localStorage is too)."""

    def __init__(self, chromium, w, h, profile, downloads=None):
        self.cdp = Cdp(chromium, w, h, profile)
        self.w, self.h = w, h
        self.downloads = downloads

    def load(self, url, timeout_s):
        """Opens `url`, waits until the page says it reported (its title)."""
        import time
        cdp = self.cdp
        target = cdp.call("Target.createTarget", url="about:blank")["targetId"]
        self.target = target
        s = self.s = cdp.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        cdp.call("Runtime.enable", session=s)
        cdp.call("Emulation.setDeviceMetricsOverride", session=s, width=self.w, height=self.h,
                 deviceScaleFactor=1, mobile=False)
        if self.downloads:
            cdp.call("Browser.setDownloadBehavior", behavior="allow",
                     downloadPath=self.downloads)
        cdp.call("Page.navigate", session=s, url=url)
        end = time.time() + timeout_s
        while time.time() < end:
            if self.eval("document.title") == "kvscope reported":
                return True
            time.sleep(0.2)
        return False

    def eval(self, expression):
        r = self.cdp.call("Runtime.evaluate", session=self.s, expression=expression,
                          awaitPromise=True)
        return r["result"].get("value")

    def screenshot(self):
        import base64
        shot = self.cdp.call("Page.captureScreenshot", session=self.s, format="png")["data"]
        return base64.b64decode(shot)

    def close_tab(self):
        self.cdp.call("Target.closeTarget", targetId=self.target)

    def report_when_idle(self, done, timeout_s):
        """Asks for reports (once the engine is idle) until done(report) holds; the last one."""
        import time
        end = time.time() + timeout_s
        report = None
        while time.time() < end:
            time.sleep(0.5)
            if self.eval("Module._kvscope_web_idle()") == 1:
                self.eval("Module._kvscope_web_report()")
                report = last_report(self.cdp.console)
                if report is not None and done(report):
                    break
        return report

    def press_ctrl(self, key):
        """Ctrl+key as a keyboard sends it: Control down, the key, both up (GLFW in the page
        takes the modifiers from the keys it saw go down)."""
        ctrl = dict(key="Control", code="ControlLeft", windowsVirtualKeyCode=17)
        k = dict(key=key.lower(), code="Key" + key.upper(), windowsVirtualKeyCode=ord(key.upper()))
        for kind, ev, mods in (("rawKeyDown", ctrl, 2), ("rawKeyDown", k, 2), ("keyUp", k, 2),
                               ("keyUp", ctrl, 0)):
            self.cdp.call("Input.dispatchKeyEvent", session=self.s, type=kind, modifiers=mods,
                          **ev)

    def set_files(self, paths, selector="#files"):
        doc = self.cdp.call("DOM.getDocument", session=self.s)["root"]["nodeId"]
        node = self.cdp.call("DOM.querySelector", session=self.s, nodeId=doc,
                             selector=selector)["nodeId"]
        self.cdp.call("DOM.setFileInputFiles", session=self.s, nodeId=node,
                      files=[os.path.abspath(p) for p in paths])

    def layout(self, timeout_s):
        """The layout record (gui/views/layout_record.h) of the next frame the page draws."""
        import time
        self.eval("Module._kvscope_web_layout()")
        end = time.time() + timeout_s
        while time.time() < end:
            time.sleep(0.2)
            self.eval("0")  # the console's messages arrive with the answer
            for c in reversed(self.cdp.console):
                if c.startswith(LAYOUT):
                    return json.loads(c[len(LAYOUT):])
        return None

    def drop(self, paths):
        """Drops files on the page as a user drags them from a file manager: a drop event on the
        window whose DataTransfer holds the files (read from disk through a file input the test
        adds for it)."""
        self.eval("(() => { const i = document.createElement('input'); i.type = 'file'; "
                  "i.multiple = true; i.id = 'drop-source'; i.hidden = true; "
                  "document.body.appendChild(i); })()")
        self.set_files(paths, "#drop-source")
        return self.eval("(() => { const dt = new DataTransfer(); "
                         "for (const f of document.getElementById('drop-source').files) "
                         "dt.items.add(f); window.dispatchEvent(new DragEvent('drop', "
                         "{dataTransfer: dt, bubbles: true, cancelable: true})); "
                         "return dt.files.length; })()")

    def page_boxes(self, w, h):
        """At a viewport of w x h, after the page followed it (two frames): the canvas's and the
        open button's rectangles, the canvas's pixel size and the viewport's."""
        import time
        self.cdp.call("Emulation.setDeviceMetricsOverride", session=self.s, width=w, height=h,
                      deviceScaleFactor=1, mobile=False)
        end = time.time() + 10
        js = ("(() => { const r = (e) => { const b = e.getBoundingClientRect(); "
              "return [b.left, b.top, b.right, b.bottom]; }; "
              "const c = document.getElementById('canvas'); return JSON.stringify({"
              "canvas: r(c), open: r(document.getElementById('open')), "
              "pixels: [c.width, c.height], view: [innerWidth, innerHeight]}); })()")
        boxes = None
        while time.time() < end:
            boxes = json.loads(self.eval(js))
            if boxes["view"] == [w, h] and boxes["canvas"][2] == w:
                break
            time.sleep(0.2)
        return boxes

    def close(self):
        self.cdp.close()


def cli_run(cli, model, prompt, decode, mode, isa=None):
    """kvscope-cli generate's trace for the page's run (prefill + decode steps), on the SIMD path
    `isa` (KVSCOPE_ISA) when given."""
    with tempfile.TemporaryDirectory() as d:
        trace = os.path.join(d, "trace.json")
        cmd = [cli, "generate", "--model", model, "--prompt", prompt, "--max-new-tokens",
               str(decode + 1), "--trace-json", trace]
        if mode == "uncached":
            cmd.append("--no-cache")
        env = dict(os.environ, **({"KVSCOPE_ISA": isa} if isa else {}))
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=env)
        return json.load(open(trace))


def compare_with_cli(a, params, report, failures):
    """Each session's tokens equal kvscope-cli's; every top logit within a.tol of its."""
    decode = int(params.get("decode", "0"))
    for s in report["sessions"]:
        t = cli_run(a.cli, params.get("model", "default"), params["prompt"], decode, s["mode"],
                    a.cli_isa)
        want = [(x["token_out"], [(y["id"], y["logit"]) for y in x["top"]]) for x in t["steps"]]
        got = [(x["token_out"], [(y["id"], y["logit"]) for y in x["top"]]) for x in s["steps"]]
        if len(got) != decode + 1:
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


def check_pixels(layout, report, shot, params, failures):
    """What the desktop's screenshot tests check (tests/gui/test_gui_app.cpp), on the page's own
    screenshot, where the page's layout record says it drew: each main heatmap has one row per
    token in the cache (the prompt's, plus one per decode step); cells above the diagonal are
    exactly the mask colour and no other cell is; the step's new rows are the last one after a
    cached decode step and all of them after the prefill; the KV grid has one column per token,
    each drawn, and nothing past the last; a cached decode step wrote one column, a step without
    the cache all of them."""
    if layout is None:
        failures.append("the page printed no layout record")
        return
    w, h, rows = png_rows(shot)
    # The canvas at the page's top left, the bar under it (web/index.html): the page is as wide
    # as the window and taller by the bar.
    if w != layout["width"] or h < layout["height"] or layout["scale"] != [1, 1]:
        failures.append(f"screenshot {w}x{h}, layout {layout['width']}x{layout['height']} at "
                        f"scale {layout['scale']}: pixels cannot be matched")
        return

    def at(x, y):
        ix, iy = int(x), int(y)
        return tuple(rows[iy][3 * ix:3 * ix + 3]) if 0 <= ix < w and 0 <= iy < h else None

    mask = tuple(layout["colours"]["mask"][:3])
    bg = tuple(layout["colours"]["background"][:3])
    decode = int(params.get("decode", "0"))
    mains = [m for m in layout["heatmaps"] if m["main"]]
    sessions = report["sessions"]
    if len(mains) != len(sessions):
        failures.append(f"{len(mains)} main heatmaps drawn for {len(sessions)} sessions")
    for hm, s in zip(mains, sessions):
        mode = s["mode"]
        if ("without" in hm["session"]) != (mode == "uncached"):
            failures.append(f"the heatmap of {hm['session']!r} is drawn where {mode} was")
        n, prompt = hm["n"], len(s["prompt_tokens"])
        if n != prompt + decode:
            failures.append(f"{mode}: the heatmap has {n} rows, not {prompt} prompt tokens + "
                            f"{decode} decode steps")
        want_new = [n - 1, n] if decode > 0 else [0, n]
        if mode == "cached" and hm["new_rows"] != want_new:
            failures.append(f"{mode}: new rows {hm['new_rows']}, not {want_new}")
        k, r = n - hm["first"], hm["rect"]
        cw, ch = r["w"] / k, r["h"] / k
        wrong = [(i, j) for i in range(k) for j in range(k)
                 if (at(r["x"] + (j + 0.5) * cw, r["y"] + (i + 0.5) * ch) == mask) != (j > i)]
        print(f"{mode}: heatmap of {n} rows ({prompt} prompt tokens + {decode} decode steps), "
              f"{k}x{k} cells of {cw:.1f} px drawn: {k * (k - 1) // 2} above the diagonal must "
              f"be the mask colour {mask}, {k * (k + 1) // 2} weights must not; wrong: "
              f"{len(wrong)}")
        if cw < 2 or ch < 2:
            failures.append(f"{mode}: cells of {cw:.1f} px are too small to check")
        if wrong:
            failures.append(f"{mode}: {len(wrong)} cells break the lower triangle, first "
                            f"(row, column) {wrong[0]}")
        grids = [g for g in layout["kv_grids"] if g["session"] == hm["session"]]
        if len(grids) != 1:
            failures.append(f"{mode}: {len(grids)} KV grids for {hm['session']!r}")
            continue
        g = grids[0]
        want_written = [n - 1, n] if decode > 0 and mode == "cached" else [0, n]
        if g["columns"] != n or g["written"] != want_written:
            failures.append(f"{mode}: KV grid of {g['columns']} columns, written "
                            f"{g['written']}; want {n}, {want_written}")
        r, gw = g["rect"], g["cell"][0]
        y = r["y"] + r["h"] * 0.25  # inside the K block
        undrawn = [p for p in range(g["columns"])
                   if at(r["x"] + (p + 0.5) * gw, y) in (bg, None)]
        past = at(r["x"] + (g["columns"] + 2.5) * gw, y)
        print(f"{mode}: KV grid {g['columns']} columns of {gw:.1f} px, written {g['written']}; "
              f"columns not drawn: {len(undrawn)}; past the last: "
              f"{'background' if past == bg else past}")
        if undrawn:
            failures.append(f"{mode}: KV columns {undrawn[:5]} not drawn")
        if past != bg:
            failures.append(f"{mode}: something drawn past the KV grid's last column: {past}")


def check_page_boxes(page, sizes, failures):
    """The open button lies in the bar under the canvas at every size: no pixel of the window
    under it, itself wholly in view, the canvas as wide as the page and ending above the bar."""
    for size in sizes.split(","):
        w, h = (int(x) for x in size.split("x"))
        b = page.page_boxes(w, h)
        c, o = b["canvas"], b["open"]
        print(f"at {w}x{h}: canvas {c}, open button {o}")
        overlap = min(c[2], o[2]) > max(c[0], o[0]) and min(c[3], o[3]) > max(c[1], o[1])
        if overlap:
            failures.append(f"at {w}x{h} the open button {o} lies over the canvas {c}")
        if o[0] < 0 or o[1] < 0 or o[2] > w + 0.5 or o[3] > h + 0.5 or o[2] - o[0] < 40:
            failures.append(f"at {w}x{h} the open button {o} is not wholly in view")
        if c[0] != 0 or abs(c[2] - w) > 0.5 or c[3] > o[1] + 0.5:
            failures.append(f"at {w}x{h} the canvas {c} does not fill the page above the bar")


def site_mb(site):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(site)
               for f in fs) / 1e6


def check_serving(layout, steps, failures):
    """The Serving view as the page drew it: open at step `steps`, the built-in eight requests,
    some prefix blocks shared, fewer blocks held than contiguous caches reserve, cells a
    projector shows."""
    s = (layout or {}).get("serving", {})
    print(f"serving: {json.dumps(s)}")
    if not s.get("open"):
        failures.append("the Serving view is not open")
        return
    if s["shot"] != steps or len(s["states"]) != 8:
        failures.append(f"the Serving view shows step {s['shot']} of {len(s['states'])} "
                        f"requests, not step {steps} of 8")
    if s["multi_holder_blocks"] < 1 or s["used_blocks"] >= s["contiguous_blocks"]:
        failures.append("the Serving view shares no prefix block, or holds as many blocks as "
                        "contiguous caches")
    if s["cell"] < 40:
        failures.append(f"the Serving view's cells are {s['cell']} px")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--site", help="the site folder, served on 127.0.0.1")
    ap.add_argument("--file", help="or the one-file page, opened from file://")
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--out", required=True, help="the screenshot to write")
    ap.add_argument("--params", required=True, help="URL query, e.g. model=toy&decode=3")
    ap.add_argument("--cli", help="kvscope-cli: compare the engine's numbers with it")
    ap.add_argument("--tol", type=float, default=1e-5, help="largest |logit difference|")
    ap.add_argument("--cli-isa", help="run kvscope-cli on this SIMD path (KVSCOPE_ISA)")
    ap.add_argument("--expect-device", help="the CPU backend's device line, e.g. "
                    "'WebAssembly, SIMD128'")
    ap.add_argument("--max-site-mb", type=float, help="the site folder's budget")
    ap.add_argument("--download", action="store_true",
                    help="Ctrl+S must download a PNG of the page")
    ap.add_argument("--open", help="FILE[,FILE]: pick these in the page's file input; the "
                    "checkpoint must open and tokenize the prompt as kvscope-cli does")
    ap.add_argument("--drop", help="FILE[,FILE]: drop these on the page; the checkpoint must "
                    "open and tokenize the prompt as kvscope-cli does")
    ap.add_argument("--pixels", action="store_true",
                    help="check the heatmaps' and KV grids' pixels where the page drew them")
    ap.add_argument("--settings", action="store_true",
                    help="load again without the parameters: lang and model must persist")
    ap.add_argument("--bench", help="kvscope-cli bench's options for the page's bench parameter: "
                    "it must finish (exit 0) with a decode_cached row")
    ap.add_argument("--serving", type=int, help="N: the Serving view must be open after N "
                    "scheduler steps, its prefix blocks shared and its grid drawn")
    ap.add_argument("--size", default="1280,800")
    ap.add_argument("--page-sizes", help="WxH,WxH...: at each viewport size, the open button "
                    "must lie beside the canvas, not over it, and wholly in view")
    ap.add_argument("--report-ms", type=int, default=1000,
                    help="frames drawn after the engine went idle, before the report")
    ap.add_argument("--timeout-s", type=float, default=120, help="for the report to come")
    a = ap.parse_args()
    if a.file and not os.path.isfile(a.file):
        print(f"skipped: no {a.file}: build it with scripts/web.sh --single-file")
        return 77
    if not a.file and not os.path.isfile(os.path.join(a.site, "kvscope.wasm")):
        print(f"skipped: no site in {a.site}: build it with scripts/web.sh")
        return 77
    params = dict(urllib.parse.parse_qsl(a.params, keep_blank_values=True))
    failures = []
    if a.max_site_mb is not None:
        mb = os.path.getsize(a.file) / 1e6 if a.file else site_mb(a.site)
        print(f"{a.file or 'site ' + a.site}: {mb:.2f} MB (budget {a.max_site_mb} MB)")
        if mb > a.max_site_mb:
            failures.append(f"the page is {mb:.2f} MB, over its budget of {a.max_site_mb} MB")
    if a.file:
        httpd = None
        base = "file://" + urllib.parse.quote(os.path.abspath(a.file)) + "?"
    else:
        httpd = serve(a.site)
        base = f"http://127.0.0.1:{httpd.server_address[1]}/index.html?"
    # The settings test keeps them; every other test leaves localStorage alone.
    url = f"{base}{a.params}{'' if a.settings else '&no-settings'}&report={a.report_ms}"
    if a.bench:
        url += "&bench=" + urllib.parse.quote(a.bench)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    w, h = (int(x) for x in a.size.split(","))
    report = None
    with tempfile.TemporaryDirectory() as profile, tempfile.TemporaryDirectory() as downloads:
        page = Page(a.chromium, w, h, profile, downloads)
        try:
            layout = None
            if page.load(url, a.timeout_s):
                report = last_report(page.cdp.console)
                if a.pixels or a.serving is not None:
                    layout = page.layout(30)
            shot = page.screenshot()
            with open(a.out, "wb") as f:
                f.write(shot)
            if report is not None and a.pixels:
                check_pixels(layout, report, a.out, params, failures)
            if report is not None and a.serving is not None:
                check_serving(layout, a.serving, failures)
            if report is not None and a.page_sizes:
                check_page_boxes(page, a.page_sizes, failures)
            if report is not None and a.download:
                page.press_ctrl("s")
                import time
                end = time.time() + 30
                pngs = []
                while time.time() < end and not pngs:
                    time.sleep(0.5)
                    pngs = [f for f in os.listdir(downloads) if f.endswith(".png")]
                if not pngs:
                    failures.append("Ctrl+S downloaded no PNG")
                else:
                    dw, dh, colours = png_colours(os.path.join(downloads, pngs[0]))
                    print(f"Ctrl+S downloaded {pngs[0]}: {dw}x{dh}, {len(colours)} colours")
                    if (dw, dh) != (report["width"], report["height"]) or len(colours) < 20:
                        failures.append(f"the download is {dw}x{dh} with {len(colours)} "
                                        f"colours; the page is {report['width']}x"
                                        f"{report['height']}")
            if report is not None and (a.open or a.drop):
                files = (a.open or a.drop).split(",")
                if a.open:
                    page.set_files(files)
                else:
                    print(f"dropped {page.drop(files)} files on the page")
                name = os.path.basename(files[0])
                opened = page.report_when_idle(
                    lambda r: r["model"].endswith("/" + name) or r["error"], a.timeout_s)
                if opened is None or not opened["model"].endswith("/" + name):
                    failures.append(f"{name} did not open in the page: "
                                    f"{opened and opened['error']}")
                else:
                    t = cli_run(a.cli, files[0], opened.get("prompt", "Once upon a time"), 0,
                                "cached")
                    got = opened["sessions"][0]["prompt_tokens"]
                    print(f"opened {opened['model']}: prompt tokens {got}; kvscope-cli's "
                          f"{t['prompt_tokens']}")
                    if got != t["prompt_tokens"]:
                        failures.append("the prompt's tokens differ from kvscope-cli's")
            if report is not None and a.settings:
                import time
                time.sleep(3)  # the page saves every 2 s
                stored = page.eval("localStorage.getItem('kvscope/settings.txt')") or ""
                print("localStorage kvscope/settings.txt: " +
                      " ".join(l for l in stored.splitlines() if l.startswith(("lang", "model"))))
                page.close_tab()
                page.cdp.console.clear()
                again = None
                if page.load(f"{base}report={a.report_ms}", a.timeout_s):
                    again = last_report(page.cdp.console)
                if again is None:
                    failures.append("the page did not report on the second visit")
                else:
                    print(f"second visit, no parameters: lang {again['lang']}, model "
                          f"{again['model']}")
                    for k in ("lang", "model"):
                        if k in params and again[k] != params[k]:
                            failures.append(f"{k} on the second visit is {again[k]}, not "
                                            f"{params[k]}")
        finally:
            page.close()
            if httpd:
                httpd.shutdown()
    console = page.cdp.console
    errors = [c for c in console if re.search(r"error|abort|exception|uncaught", c, re.I)
              and not c.startswith(("kvscope-web-report:", LAYOUT))]
    failures += [f"console: {c}" for c in errors]
    for c in console:
        if c.startswith("kvscope-web-") and not c.startswith(("kvscope-web-report:", LAYOUT)):
            print(c[:300])
    if a.bench:
        rows = [c for c in console if re.match(r"\s*\d+\s+decode_cached\s+\d", c)]
        for r in rows:
            print("page bench:", r.strip())
        if "kvscope-web-bench: exit 0" not in console or not rows:
            failures.append("the page's bench did not finish with a decode_cached row")
    if report is None:
        failures.append("the page never reported (its engine did not settle, or it crashed)")
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
        if a.expect_device and report["device"] != a.expect_device:
            failures.append(f"the backend line says {report['device']!r}, not "
                            f"{a.expect_device!r}")
        if a.cli and not a.open and not a.drop:
            compare_with_cli(a, params, report, failures)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
