#!/usr/bin/env python3
"""Every relative link in the repository's Markdown leads somewhere.

A link [text](path) or ![alt](path) must name a file or folder that exists,
relative to the page; one with a #fragment, or a bare [text](#fragment),
must also name a heading of that page, spelled as GitHub spells heading
anchors (lower case, punctuation dropped, spaces as hyphens, -1, -2, ...
after a repeated heading). Titles and <angle brackets> around the path are
allowed; links with a scheme (https:, mailto:) are not followed; fenced code
blocks and `code spans` hold no links or headings. docs/results/<gpu>/summary.md
is the line that opens docs/RESULTS.md (bench/compare copies it there), so
its links are read from docs/. Prints each broken link as file:line: what,
and exits 1 if there is any.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIP_DIRS = {".git", ".deps", ".scenes", ".ab"}
LINK = re.compile(r"\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
FENCE = re.compile(r"\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+).*?\1")


def prose_lines(path):
    """(number, line) of the page's lines outside fenced code, code spans blanked."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
            elif not fenced:
                yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def anchor(heading):
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link's text only
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fenced = False
        for line in text.splitlines():
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r"#{1,6} (.*)", line)
            if m:
                a = anchor(m.group(1))
                found.add(a if a not in seen else f"{a}-{seen[a]}")
                seen[a] = seen.get(a, 0) + 1
        cache[path] = found
    return cache[path]


def pages():
    for top, dirs, files in os.walk(ROOT):
        at_root = top == ROOT
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not (at_root and re.match(r"build($|-)", d))]
        for name in files:
            if name.endswith(".md"):
                yield os.path.join(top, name)


def base_of(page):
    rel = os.path.relpath(page, ROOT).split(os.sep)
    if len(rel) == 4 and rel[:2] == ["docs", "results"] and rel[3] == "summary.md":
        return os.path.join(ROOT, "docs")
    return os.path.dirname(page)


def main():
    broken = []
    for page in sorted(pages()):
        for number, line in prose_lines(page):
            for m in LINK.finditer(line):
                target = m.group(1)
                if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue
                path, _, fragment = target.partition("#")
                dest = os.path.normpath(os.path.join(base_of(page), path)) if path else page
                where = f"{os.path.relpath(page, ROOT)}:{number}"
                if not os.path.exists(dest):
                    broken.append(f"{where}: '{target}' names no file")
                elif fragment and dest.endswith(".md") and fragment not in anchors_of(dest):
                    broken.append(f"{where}: '{target}' names no heading of {os.path.relpath(dest, ROOT)}")
    for b in broken:
        print(b)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
