#!/usr/bin/env python3
"""The site as one HTML file (scripts/web.sh --single-file): index.html with kvscope.js inline,
and the WebAssembly module and the data package (default model, lessons, fonts, recorded runs)
inside it as base64. Opened from file://, a page cannot fetch the files beside it (Chromium
refuses; Firefox ESR 153 allows it, but the file must open in both), so the page hands them to
Emscripten's loader itself: Module.wasmBinary (the loader then compiles these bytes instead of fetching kvscope.wasm)
and Module.getPreloadedPackage (the file packager's hook: it returns the package instead of
fetching kvscope.data). Nothing is served; the file can be sent by mail or put on a USB stick.

usage: single_file.py SITE_FOLDER OUT.html"""
import base64
import os
import sys

LOADER = """<script>
  // The page's own files, carried inside it (a file:// page cannot fetch its neighbours).
  (() => {
    const bytes = (id) => {
      const text = atob(document.getElementById(id).textContent.trim());
      const out = new Uint8Array(text.length);
      for (let i = 0; i < text.length; ++i) out[i] = text.charCodeAt(i);
      return out;
    };
    Module.wasmBinary = bytes('kvscope-wasm');
    const data = bytes('kvscope-data').buffer;
    Module.getPreloadedPackage = (name, size) => data;
  })();
</script>
"""


def main():
    if len(sys.argv) != 3:
        print(__doc__.splitlines()[-1], file=sys.stderr)
        return 2
    site, out = sys.argv[1], sys.argv[2]
    page = open(os.path.join(site, "index.html"), encoding="utf-8").read()
    js = open(os.path.join(site, "kvscope.js"), encoding="utf-8").read()
    wasm = open(os.path.join(site, "kvscope.wasm"), "rb").read()
    data = open(os.path.join(site, "kvscope.data"), "rb").read()
    tag = '<script async src="kvscope.js"></script>'
    if page.count(tag) != 1:
        print(f"single_file.py: {site}/index.html does not load kvscope.js as {tag}",
              file=sys.stderr)
        return 1
    # Inline, "</script" would end the element early; "<\\/script" means the same to JavaScript.
    js = js.replace("</script", "<\\/script")
    blobs = "".join(
        f'<script id="{name}" type="application/octet-stream">\n'
        f'{base64.b64encode(b).decode("ascii")}\n</script>\n'
        for name, b in (("kvscope-wasm", wasm), ("kvscope-data", data)))
    inline = blobs + LOADER + "<script>\n" + js + "\n</script>"
    text = page.replace(tag, inline)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)
    print(f"kvscope: {out}: {os.path.getsize(out) / 1e6:.1f} MB (kvscope.wasm "
          f"{len(wasm) / 1e6:.1f} MB, kvscope.data {len(data) / 1e6:.1f} MB, base64 inside)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
