#!/usr/bin/env python3
"""Every relative link in the repository's Markdown leads somewhere.

A link [text](path) must name a file or folder that exists, relative to the
page; a link [text](path#fragment) or [text](#fragment) must also name a
heading of that page, spelled as GitHub spells heading anchors (lower case,
punctuation dropped, spaces as hyphens). Links with a scheme (https:, mailto:)
are not followed. docs/results/<gpu>/summary.md is the line that opens
docs/RESULTS.md (bench/compare copies it there), so its links are read from
docs/. Prints each broken link as file:line: what, exits 1 if any.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIP_DIRS = {".git", ".deps", ".scenes", ".ab"}
LINK = re.compile(r"\]\(([^)\s]*)\)")


def anchor(heading):
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def pages():
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for name in files:
            if name.endswith(".md"):
                yield os.path.join(top, name)


def base_of(page):
    rel = os.path.relpath(page, ROOT).split(os.sep)
    if len(rel) == 4 and rel[:2] == ["docs", "results"] and rel[3] == "summary.md":
        return os.path.join(ROOT, "docs")
    return os.path.dirname(page)


def anchors_of(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            cache[path] = {anchor(m.group(1)) for m in (re.match(r"#+ (.*)", l) for l in f) if m}
    return cache[path]


def main():
    broken = []
    for page in sorted(pages()):
        with open(page, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                for m in LINK.finditer(line):
                    target = m.group(1)
                    if re.match(r"[a-z]+:", target):
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
