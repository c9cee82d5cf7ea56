#!/usr/bin/env python3
"""The docs hold: every relative link resolves, and every count they state about the product is
the count the tree has.

1. Links. In README.md, DESIGN.md, every Markdown page under docs/ and lessons/README.md, each
   relative link or image (`[text](path)`, `![alt](path)`, `<img src=...>`, `<a href=...>`;
   outside code) names a file or folder of the tree, and an `#anchor` names a heading (GitHub's
   slug of it) or an `<a id=...>` of the page it points to. Web addresses are not followed.
2. Counts. Each rule below finds a stated count in those pages' prose (digits or a number word:
   "thirteen lessons", "7 gpu tests") and compares it with the count computed from the tree:
   the lesson files, the languages they are written in, the fuzz targets, the gpu and web test
   cases, the scripts' thresholds, the Serving view's built-in prompts; the lesson tables have a
   row for each lesson, numbered in order; and scripts/web.sh and scripts/gpu-check.sh require as
   many web and gpu tests to run as are registered. A count that no rule computes is not checked here:
   write it where a rule reads it, or add a rule.
Usage: docs_check.py SOURCE_ROOT
"""
import functools
import glob
import os
import re
import sys

ROOT = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else
                        os.path.join(os.path.dirname(__file__), "..", ".."))
errors = []


@functools.lru_cache(maxsize=None)
def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def pages():
    out = ["README.md", "DESIGN.md", "lessons/README.md"]
    out += sorted(os.path.relpath(p, ROOT)
                  for p in glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return out


def prose_lines(text, keep_code=False):
    """(line number, line) outside fenced code, with `inline code` blanked unless keep_code."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            fence = None if fence == marker else (fence or marker)
            continue
        if fence:
            continue
        yield n, line if keep_code else re.sub(r"`[^`]*`", lambda m: " " * len(m.group(0)), line)


# --- 1. links ----------------------------------------------------------------------------------

def slug(heading):
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    s = re.sub(r"<[^>]+>", "", heading)
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", s)  # a link's text stays
    s = s.replace("`", "").strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


anchor_cache = {}


def anchors(rel):
    if rel not in anchor_cache:
        found, seen = set(), {}
        text = read(rel)
        for _, line in prose_lines(text, keep_code=True):
            m = re.match(r"\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                base = slug(m.group(2))
                k = seen.get(base, 0)
                seen[base] = k + 1
                found.add(base if k == 0 else f"{base}-{k}")
        # explicit anchors, wherever they are (headings above are read outside code only)
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
        anchor_cache[rel] = found
    return anchor_cache[rel]


LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML = re.compile(r"<(?:img|a)\s[^>]*?(?:src|href)=\"([^\"]+)\"")


links_checked = 0


def check_link(page, n, target):
    global links_checked
    links_checked += 1
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # http:, https:, mailto:
        return
    path, _, anchor = target.partition("#")
    where = f"{page}:{n}: link '{target}'"
    if path:
        full = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path))
        if not (full == ROOT or full.startswith(ROOT + os.sep)):
            errors.append(f"{where}: leaves the repository")
            return
        if not os.path.exists(full):
            errors.append(f"{where}: {os.path.relpath(full, ROOT)} does not exist")
            return
        rel = os.path.relpath(full, ROOT)
    else:
        rel = page
    if anchor and rel.endswith(".md") and os.path.isfile(os.path.join(ROOT, rel)):
        if anchor not in anchors(rel):
            errors.append(f"{where}: {rel} has no heading or anchor '#{anchor}'")


def check_links():
    for page in pages():
        for n, line in prose_lines(read(page)):
            for m in LINK.finditer(line):
                check_link(page, n, m.group(1))
            for m in HTML.finditer(line):
                check_link(page, n, m.group(1))


# --- 2. counts ---------------------------------------------------------------------------------

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen", "twenty"]
NUM = r"(\d[\d,]*|" + "|".join(WORDS) + r")"


def value(word):
    w = word.lower().replace(",", "")
    return int(w) if w.isdigit() else WORDS.index(w)


def lesson_files(lang):
    return sorted(glob.glob(os.path.join(ROOT, "lessons", lang, "[0-9][0-9]-*.md")))


def n_lessons():
    langs = lesson_languages()
    counts = {lang: len(lesson_files(lang)) for lang in langs}
    if len(set(counts.values())) != 1:
        errors.append(f"lessons/: the languages hold different numbers of lessons: {counts}")
    return counts.get("en", 0)


def lesson_languages():
    return sorted(d for d in os.listdir(os.path.join(ROOT, "lessons"))
                  if os.path.isdir(os.path.join(ROOT, "lessons", d)))


def cmake_list(text, start):
    """The words after `start` up to the closing parenthesis (add_executable, set)."""
    m = re.search(re.escape(start) + r"([^)]*)\)", text)
    return m.group(1).split() if m else []


def n_fuzz_targets():
    return len(cmake_list(read("tests/fuzz/CMakeLists.txt"), "set(KVSCOPE_FUZZ_TARGETS"))


def n_gpu_tests():
    sources = cmake_list(read("tests/CMakeLists.txt"), "add_executable(kvscope_gpu_tests")
    return sum(len(re.findall(r"^TEST_CASE\(", read(os.path.join("tests", s)), re.M))
               for s in sources if s.endswith(".cpp"))


def web_tests():
    """The ctest entries web/web_tests.cmake registers (kvscope_web_test, and the add_test of
    the file one of them opens): (everywhere, in all); those inside an if() on ../shared's
    models are registered only where they exist, and those inside an if() on Firefox are not
    counted (a browser the scripts do not install)."""
    everywhere = total = 0
    depth_shared, depth_firefox = [], []
    in_function = False
    for line in read("web/web_tests.cmake").split("\n"):
        s = line.strip()
        if s.startswith("function(") or s.startswith("endfunction("):
            in_function = s.startswith("function(")
        elif in_function:
            continue
        elif s.startswith("if("):
            depth_shared.append("shared" in s)
            depth_firefox.append("FIREFOX" in s)
        elif s.startswith("endif("):
            depth_shared.pop()
            depth_firefox.pop()
        elif any(depth_firefox):
            continue
        elif s.startswith("kvscope_web_test(") or s.startswith("add_test(NAME web_"):
            total += 1
            everywhere += not any(depth_shared)
    return everywhere, total


def ctest_minimum(script):
    m = re.search(r"(?:kvs_ctest|ctest_checked\.sh'?) (\d+) ", read(script))
    return int(m.group(1)) if m else -1


def n_builtin_serve_prompts():
    body = read("core/serving/prompt_file.cpp").split("builtin_serve_prompts()", 1)[-1]
    m = re.search(r"for \(const char\* \w+ :\s*\{(.*?)\}\)", body, re.S)
    return len(re.findall(r"\"[^\"]*\"", m.group(1))) if m else -1


# (what is counted, pattern whose group 1 is the stated count, the count computed)
RULES = [
    ("lessons", r"\b" + NUM + r"\s+(?:guided\s+)?lessons\b", n_lessons),
    ("languages lessons are written in", r"\b" + NUM + r"\s+languages\b",
     lambda: len(lesson_languages())),
    ("fuzz targets (tests/fuzz/CMakeLists.txt)", r"\b" + NUM + r"\s+(?:fuzz\s+)?(?:targets|fuzzers)\b",
     n_fuzz_targets),
    ("fuzz targets run by scripts/fuzz.sh", r"\b" + NUM + r"\s+22 s runs\b", n_fuzz_targets),
    ("gpu test cases (kvscope_gpu_tests)", r"\b" + NUM + r"\s+gpu\s+tests\b", n_gpu_tests),
    ("web tests registered without ../shared", r"\b" + NUM + r"\s+web\s+tests\b",
     lambda: web_tests()[0]),
    ("web tests registered with ../shared", r"\(" + NUM + r" with \.\./shared\)",
     lambda: web_tests()[1]),
    ("scripts/test.sh's least number of tests", r"at least " + NUM + r" tests for the suite",
     lambda: ctest_minimum("scripts/test.sh")),
    ("scripts/sanitize.sh's least number of tests", r"\b" + NUM + r" under the sanitizers",
     lambda: ctest_minimum("scripts/sanitize.sh")),
    ("the Serving view's built-in prompts (builtin_serve_prompts)",
     r"\b" + NUM + r"\s+(?:built-in prompts|requests over one paged KV cache)\b",
     n_builtin_serve_prompts),
]


def check_counts():
    for what, pattern, compute in RULES:
        want = compute()
        if want < 0:
            errors.append(f"docs_check.py: cannot compute the {what} any more; update its rule")
            continue
        rx = re.compile(pattern, re.I)
        for page in pages():
            for n, line in prose_lines(read(page)):
                for m in rx.finditer(line):
                    if value(m.group(1)) != want:
                        errors.append(f"{page}:{n}: says '{m.group(0)}'; the tree has {want} "
                                      f"({what})")


def check_script_minimums():
    """The scripts that require every test of a label to run ask for as many as there are."""
    for script, label, have in (("scripts/web.sh", "web", web_tests()[0]),
                                ("scripts/gpu-check.sh", "gpu", n_gpu_tests())):
        asked = ctest_minimum(script)
        if asked != have:
            errors.append(f"{script}: requires {asked} {label} tests to run; the tree registers "
                          f"{have}")


def check_lesson_tables():
    """README.md's and docs/lessons.md's lesson tables: one row per lesson, numbered 1..N."""
    want = n_lessons()
    for page, heading in (("README.md", "## Lessons"), ("docs/lessons.md", "## The lessons")):
        text = read(page)
        if heading not in text:
            errors.append(f"{page}: no '{heading}' section with the lessons' table")
            continue
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        rows = [int(m) for m in re.findall(r"^\|\s*(\d+)\s*\|", section, re.M)]
        if rows != list(range(1, want + 1)):
            errors.append(f"{page}: the lessons' table numbers {rows or 'no rows'}; the tree has "
                          f"lessons 1 to {want}")


check_links()
check_counts()
check_script_minimums()
check_lesson_tables()
for e in errors:
    print(e)
if errors:
    print(f"docs_check: {len(errors)} problems")
    sys.exit(1)
print(f"docs_check: {len(pages())} pages, {links_checked} links resolve; every count checked holds "
      f"({n_lessons()} lessons, {n_fuzz_targets()} fuzz targets, {n_gpu_tests()} gpu tests, "
      f"{web_tests()[0]} web tests, {web_tests()[1]} with ../shared)")
