"""What the results folder says about itself, and docs/RESULTS.md filled from it.

A results folder (docs/results/<gpu>/, one per GPU model) holds every table and figure bench/compare
writes, plus:
  machine.json   every measuring invocation: date, commit, GPU, driver, CUDA, CPU, command, parts
  README.md      the same for a reader, and what each file holds
  summary.md     one line: GPU, driver, CUDA, commit(s), date(s), and the command that regenerates it
  headline.md    every allocator's build time per scene in ms (pool 200x) with Embree's CPU builds beside
  decision.md    one row per allocator, what to use it for, from the other tables (decision.py)

docs/RESULTS.md is prose around generated blocks.  A block is
    <!-- from results/h200/ds_table3.md -->
    ...the file's text, copied here by `bench/compare --parts report`...
    <!-- end -->
and `#Title` after the path takes only the section of that file under the heading `# Title`.  The
report part rewrites every block from its file; with --check it only says which blocks differ.
"""
import datetime
import json
import os
import re
import shlex
import subprocess
import sys

from .common import EXTRA_SCATTERALLOC_PAGES, ROOT, cpu_model, log, read_csv, write_lines

BLOCK = re.compile(r"(<!-- from ([^ #]+)(?:#([^>]+?))? -->\n)(.*?)(<!-- end -->)", re.S)
NOTES = "notes.md"  # hand-written: which tables were measured on which code, what is not yet measured
FILES = [("summary.md", "the line that opens docs/RESULTS.md"),
         ("headline.md", "every allocator's build times in ms beside Embree's"),
         ("decision.md", "which allocator to use: one row each, from the tables below it"),
         ("ds_table3.md", "Table 3: builds at a pool of 200x the root array, slowdowns over AtomicMalloc"),
         ("ds_table4.md", "Table 4: builds at a pool of 20x, slowdowns over CMalloc"),
         ("pool_auto.md", "the pool that grows beside the fixed pools"),
         ("alloc_tables.md", "Table 1 (registers) and the 100,000-warp test"),
         ("table5.md", "Table 5 re-derived, with the rules and the paper's own verdicts"),
         ("survey_tables.md", "the survey protocol: live blocks, mixed sizes, exhaustion"),
         ("reuse.md", "the reuse test: memory freed around live blocks served again"),
         ("list.md", "the list workload: examples/list_workload's GPU threads, time and NULLs"),
         ("embree.md", "Embree 3's builds and rays beside kdalloc's"),
         ("checks.md", "GPU tests, compute-sanitizer, --validate against brute force"),
         ("rays.md", "ray rates on the fixed Conference view"),
         ("*.csv", "every statistic behind the tables"),
         ("*.png", "Figures 3a-d, 4, 5 and the survey's curves"),
         ("runs.jsonl", "every run, one JSON object each (bench/compare resumes from it)"),
         ("checks/", "bench/device_checks.sh's raw output"),
         (NOTES, "by hand: which tables were measured on which code, and what is not yet measured")]


def _out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def gpu_folder():
    """The results folder's name for the GPU at hand (NVIDIA H200 -> h200), or None without one."""
    name = _out(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]).splitlines()
    m = re.search(r"\b([A-Z]+\d+[A-Za-z]*)\b", name[0].replace("NVIDIA", "")) if name else None
    return m.group(1).lower() if m else None


def commit():
    """HEAD's short hash, with -dirty when tracked files outside docs/ differ from it; KDA_COMMIT names it
    where the checkout has no .git (a copy of the tree on a GPU machine)."""
    if os.environ.get("KDA_COMMIT"):
        return os.environ["KDA_COMMIT"]
    head = _out(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]) or "unknown"
    dirty = _out(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs"])
    return head + ("-dirty" if dirty else "")


def record_machine(out, parts):
    """Adds this invocation to OUT/machine.json (measuring parts only) and rewrites README.md."""
    path = os.path.join(out, "machine.json")
    runs = json.load(open(path)) if os.path.exists(path) else []
    gpu = _out(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).splitlines()
    name, driver = (gpu[0].split(", ") + ["?"])[:2] if gpu else ("no GPU", "-")
    nvcc = re.search(r"release ([\d.]+), V([\d.]+)", _out(["nvcc", "--version"]))
    runs.append({"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "commit": commit(),
                 "gpu": name, "driver": driver, "cuda": nvcc.group(1) if nvcc else "?",
                 "nvcc": nvcc.group(2) if nvcc else "?", "cpu": "%s x %d" % (cpu_model(), os.cpu_count()),
                 "command": "bench/compare " + " ".join(shlex.quote(a) for a in sys.argv[1:]), "parts": parts})
    with open(path, "w") as f:
        json.dump(runs, f, indent=1)
    write_readme(out, runs)


def _joined(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return ", ".join(seen)


# runs.jsonl's key prefixes, and the tables their records make
RECORD_PARTS = [("ds_table3", "Table 3 and the headline table"), ("ds_table4", "Table 4"),
                ("pool_auto", "the growing pool"), ("alloc", "the generic tests (Tables 1 and 5, Figures 3-5)"),
                ("survey", "the survey"), ("reuse", "the reuse test"), ("list", "the list workload"),
                ("orig", "beside the authors' code"), ("rays", "the ray rates"), ("embree", "Embree's builds"),
                ("checks", "the checks")]


def record_counts(out):
    """{key prefix: {commit or None: records}} from runs.jsonl (records name their commit since the
    field was added; older ones count under None), and the checks' commit (checks/gpu.txt) as one record."""
    path = os.path.join(out, "runs.jsonl")
    counts = {}
    gpu = os.path.join(out, "checks", "gpu.txt")
    first = open(gpu).readline().split() if os.path.exists(gpu) else []
    if len(first) == 2 and first[0] == "commit":
        counts["checks"] = {first[1]: 1}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                r = json.loads(line)
                part = r["key"].split("|")[0]
                counts.setdefault(part, {}).setdefault(r.get("commit"), 0)
                counts[part][r.get("commit")] += 1
    return counts


def record_commits(counts):
    """Lines: for each table, the commits its records measured (counts: record_counts)."""
    if not counts:
        return []
    lines = ["", "Which commit each table's records measured (runs.jsonl):", "", "| table | records |", "|---|---|"]
    for part, label in RECORD_PARTS:
        got = counts.get(part)
        if got:
            cells = ["`%s` (%d)" % (c, n) for c, n in sorted(got.items(), key=lambda x: -x[1]) if c]
            if None in got:
                cells.append("%d from before records named their commit (the invocations above)" % got[None])
            lines.append("| %s | %s |" % (label, ", ".join(cells)))
    return lines


def tables_apart(counts):
    """A sentence naming the commit most tables' records measured and the tables measured elsewhere
    (wholly or in part); empty when every record names one commit (counts: record_counts)."""
    tally = {}
    for got in counts.values():
        for c, n in got.items():
            tally[c] = tally.get(c, 0) + n
    named = {c: n for c, n in tally.items() if c}
    if not named or len(tally) == 1:
        return ""
    main = max(named, key=lambda c: named[c])
    groups = {}  # where -> the tables measured there, in the page's order
    for part, label in RECORD_PARTS:
        others = [c for c in counts.get(part, {}) if c != main]
        if others:
            whole = main not in counts[part]
            where = " and ".join("at `%s`" % c if c else "before records named their commit" for c in others)
            groups.setdefault(where, []).append(label + ("" if whole else " in part"))
    apart = ["%s %s" % (labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1], where)
             for where, labels in groups.items()]
    return "  Tables measured at `%s`, but: %s." % (main, "; ".join(apart)) if apart else ""


def write_readme(out, runs):
    last = runs[-1]
    lines = ["# Results on the %s" % last["gpu"], "",
             "Written by `bench/compare` (do not edit); docs/RESULTS.md takes its tables from here.", "",
             "| date | commit | GPU, driver | CUDA (nvcc) | CPU | command | parts |", "|---|---|---|---|---|---|---|"]
    for r in runs:
        lines.append("| %s | `%s` | %s, %s | %s (%s) | %s | `%s` | %s |" % (
            r["date"], r["commit"], r["gpu"], r["driver"], r["cuda"], r["nvcc"], r["cpu"], r["command"],
            ", ".join(r["parts"])))
    counts = record_counts(out)
    lines += record_commits(counts)
    lines += ["", "Binaries: `-O3 --fmad=false` for sm_90, every allocator of CMake's list, ScatterAlloc also with "
              "pages of %s bytes.  A later invocation resumes from runs.jsonl; `--fresh` starts over." %
              " and ".join(str(p) for p in EXTRA_SCATTERALLOC_PAGES), "", "| file | what |", "|---|---|"]
    lines += ["| `%s` | %s |" % f for f in FILES if f[0] == "*.csv" or "*" in f[0] or f[0].endswith("/")
              or os.path.exists(os.path.join(out, f[0]))]
    notes = os.path.join(out, NOTES)
    if os.path.exists(notes):  # what the table of invocations cannot say, written by hand
        lines += ["", open(notes).read().strip()]
    write_lines(os.path.join(out, "README.md"), lines)
    measured = set(c for got in counts.values() for c in got if c)  # the commits the tables' records name
    kept = [r for r in runs if r["commit"] in measured] or runs
    gpus = _joined("%s (driver %s)" % (r["gpu"], r["driver"]) for r in kept)
    dates = sorted(set(r["date"] for r in kept))
    apart = tables_apart(counts)
    where = ("at `%s` (every table)" % measured.pop() if len(measured) == 1 and not apart else
             "at %d commits" % len(set(r["commit"] for r in kept)))
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("**%s**, CUDA %s (nvcc %s), measured %s %s: [results/%s/README.md](results/%s/README.md) "
                "says which part ran at which commit, with which command.  `bench/compare` on that GPU measures "
                "it all again.%s\n" % (
                    gpus, _joined(r["cuda"] for r in kept), _joined(r["nvcc"] for r in kept),
                    dates[0] if len(dates) == 1 else "%s to %s" % (dates[0], dates[-1]), where,
                    os.path.basename(out.rstrip("/")), os.path.basename(out.rstrip("/")), apart))


def headline(out):
    """headline.md: build times in ms (ds_table3.csv) per allocator and scene, Embree's (embree.csv) below."""
    builds = read_csv(os.path.join(out, "ds_table3.csv"))
    if not builds:
        return
    scenes, names = [], []
    for r in builds:
        scenes += [] if r["scene"] in scenes else [r["scene"]]
        names += [] if r["allocator"] in names else [r["allocator"]]
    cell = {(r["scene"], r["allocator"]): r for r in builds}
    lines = ["| build [ms] | %s |" % " | ".join(scenes), "|---|" + "---:|" * len(scenes),
             "| triangles | %s |" % " | ".join(
                 next(("{:,}".format(int(r["n_tris"])) for r in builds if r["scene"] == sc and r["n_tris"]), "-")
                 for sc in scenes)]
    for n in names:
        cells = []
        for sc in scenes:
            r = cell.get((sc, n), {})
            cells.append("%.3f" % float(r["build_ms"]) if r.get("build_ms") else (r.get("failure") or "-"))
        if any(c != "-" and not c.startswith("not run") for c in cells):
            lines.append("| %s | %s |" % (n, " | ".join(cells)))
    embree = {r["scene"]: r for r in read_csv(os.path.join(out, "embree.csv"))}
    threads = next((r["threads"] for r in embree.values() if r["threads"]), "?")
    for q in ("medium", "high"):
        if embree:
            lines.append("| Embree %s, %s CPU threads | %s |" % (q, threads, " | ".join(
                "%.2f" % float(embree[sc]["%s_build_ms" % q]) if sc in embree and embree[sc]["%s_build_ms" % q]
                else "-" for sc in scenes)))
    lines += ["", "GPU builds: `kdalloc build --gpu --pool-factor 200`, median of the timed builds after a warm-up "
              "(ds_table3.csv)%s.  A failed build names its cause." % (
                  "; Embree: its BVH build on every CPU core (embree.csv)" if embree else "")]
    write_lines(os.path.join(out, "headline.md"), lines)
    log("wrote headline.md")


def section(text, title):
    """The lines under the heading `# title` up to the next `# ` heading, or None."""
    lines, keep, found = text.splitlines(), [], False
    for line in lines:
        if line.startswith("# "):
            if found:
                break
            found = line[2:].strip() == title.strip()
            continue
        if found:
            keep.append(line)
    return "\n".join(keep).strip("\n") + "\n" if found else None


def fill_results(results_md, check):
    """Rewrites every generated block of results_md from its file; with check, reports differences only.
    Returns the number of blocks that differ or could not be filled."""
    with open(results_md) as f:
        text = f.read()
    base = os.path.dirname(results_md)
    bad = []

    def fill(m):
        head, path, title, old, end = m.groups()
        src = os.path.join(base, path)
        if not os.path.exists(src):
            bad.append("%s: missing" % path)
            return m.group(0)
        with open(src) as f:
            new = f.read()
        new = section(new, title) if title else new.strip("\n") + "\n"
        if new is None:
            bad.append("%s: no section '# %s'" % (path, title))
            return m.group(0)
        if new != old:
            bad.append("%s%s: differs" % (path, "#" + title if title else ""))
        return head + new + end

    filled = BLOCK.sub(fill, text)
    for b in bad:
        log("report: %s" % b)
    if not check and filled != text:
        with open(results_md, "w") as f:
            f.write(filled)
        log("report: rewrote %s" % os.path.relpath(results_md, ROOT))
    return len([b for b in bad if check or not b.endswith("differs")])
