"""What every part of bench/compare shares: running a program, the resumable record of runs,
scenes, and the variants compared (each allocator as its `kdalloc --version` describes it)."""
import csv
import dataclasses
import json
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXTRA_SCATTERALLOC_PAGES = (8192, 16384)  # the main build has ScatterAlloc with pages of 4096 bytes
# The second line of `kdalloc --version`.
NOT_MEASURED = "not measured"
VERSION_LINE = re.compile(r"allocator: (.+) \((\w+)(?:, the default)?; frees single blocks: (yes|no); "
                          r"grows its pool: (yes|no); k-d tree builds: (yes|no)\)$")


def log(msg):
    print(msg, flush=True)


@dataclasses.dataclass
class Variant:
    """One allocator as compared: an allocator of the list, or ScatterAlloc at another page size."""
    key: str         # names its runs in runs.jsonl: the allocator's id, or scatteralloc8192 / scatteralloc16384
    id: str          # the allocator's id in CMake's list
    name: str        # display name, also the allocator column of kdalloc's and kdalloc-allocbench's output
    kdalloc: str     # paths of the two binaries
    allocbench: str
    frees: bool      # frees single blocks; those that cannot are never "the fastest" (as in the paper)
    builds: bool     # builds k-d trees (FDGMalloc cannot free single arrays)
    grows: bool = None  # its pool can grow (None: a variants.json written before this was recorded)


class Runs:
    """The resumable record of every run: one JSON object per line."""

    def __init__(self, path, fresh, offline=False, commit=None):
        self.path = path
        self.offline = offline  # tables from the record only: a run it lacks is "not measured", never run
        self.commit = commit  # the code each new record measured (report.commit())
        self.done = {}
        if fresh and os.path.exists(path):
            os.remove(path)
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    r = json.loads(line)
                    self.done[r["key"]] = r

    def get(self, key, **fields):
        """The record of key; offline, a record it lacks reads as not measured (fields fill it out)."""
        rec = self.done.get(key)
        if rec is None and self.offline:
            rec = dict(fields, key=key, failure=NOT_MEASURED)
        return rec

    def add(self, record):
        if self.commit:
            record.setdefault("commit", self.commit)
        self.done[record["key"]] = record
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")


def run(cmd, timeout):
    """Runs cmd; returns (returncode or 'timeout', stdout, stderr)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:  # its captured output is bytes whatever `text` says
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        return "timeout", text(e.stdout), text(e.stderr)


def failure_message(err):
    """The program's own last error line (kdalloc: ...), whole, or None."""
    lines = [l for l in (err or "").splitlines() if l.startswith("kdalloc")]
    return lines[-1].replace("kdalloc: ", "") if lines else None


def failure_reason(rc, err):
    """A failure's cell in a table: short, one of a few kinds."""
    if rc == "timeout":
        return "timed out"
    text = failure_message(err)
    if text:
        if "pool exhausted" in text:
            return "pool exhausted"
        if "overwrote" in text or "overwritten" in text:
            return "overwrote live data"
        if "two builds of this scene differ" in text:
            return "two builds differed"
        return text[:80]
    return "crashed (exit %s)" % rc


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def write_csv(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def write_lines(path, lines):
    """A Markdown file: the lines, each ended by a newline."""
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def cell(value, fmt):
    """A table cell: value formatted with fmt (%-style), or - where there is none ("" or None)."""
    return fmt % value if value not in ("", None) else "-"


def scene_label(scene):
    if scene.startswith("spheres:"):
        return "spheres %sM" % (int(scene.split(":")[1]) // 1000000)
    return os.path.basename(scene).replace(".obj.gz", "").replace(".obj", "")


def scene_args(scene):
    if scene.startswith("spheres:"):
        return ["--scene", "spheres", "--triangles", scene.split(":")[1]]
    return [scene]


# ---------------------------------------------------------------- builds and variants

def scatteralloc_dir(build, page):
    return "%s-sa%d" % (build.rstrip("/"), page)


def build_all(build):
    """Every allocator into build, and ScatterAlloc at the extra page sizes into build-sa<page>."""
    steps = [(build, ["-DKDA_ALL_ALLOCATORS=ON", "-DKDA_PEERS=ON", "-DKDA_SCATTERALLOC_PAGE_SIZE=4096"], [])]
    for page in EXTRA_SCATTERALLOC_PAGES:
        steps.append((scatteralloc_dir(build, page),
                      ["-DKDA_ALLOCATOR=scatteralloc", "-DKDA_SCATTERALLOC_PAGE_SIZE=%d" % page],
                      ["--target", "kdalloc", "kdalloc-allocbench"]))
    for d, options, targets in steps:
        log("building into %s" % d)
        for cmd in (["cmake", "-S", ROOT, "-B", d, "-G", "Ninja", "-DKDA_BUILD_TESTS=OFF"] + options,
                    ["cmake", "--build", d] + targets):
            if subprocess.run(cmd).returncode:
                sys.exit("bench/compare: %s %s failed" % (" ".join(cmd[:2]), d))


def describe(key, allocator, kdalloc, allocbench):
    """The variant whose binaries these are, as `kdalloc --version` describes it."""
    for path in (kdalloc, allocbench):
        if not os.access(path, os.X_OK):
            sys.exit("bench/compare: %s is missing (build without --skip-build)" % path)
    rc, out, _ = run([kdalloc, "--version"], 60)
    lines = out.splitlines() if rc == 0 else []
    m = VERSION_LINE.match(lines[1]) if len(lines) > 1 else None
    if not m or m.group(2) != allocator:
        sys.exit("bench/compare: '%s --version' does not describe allocator %s" % (kdalloc, allocator))
    return Variant(key, allocator, m.group(1), kdalloc, allocbench, m.group(3) == "yes", m.group(5) == "yes",
                   m.group(4) == "yes")


def load_variants(build):
    """The allocators of build/allocators.txt in its order, ScatterAlloc's extra page sizes right after it."""
    path = os.path.join(build, "allocators.txt")
    if not os.path.exists(path):
        sys.exit("bench/compare: %s is missing (build without --skip-build)" % path)
    with open(path) as f:
        ids = f.read().split()
    variants = []
    for a in ids:
        variants.append(describe(a, a, os.path.join(build, "kdalloc-" + a), os.path.join(build, "kdalloc-allocbench-" + a)))
        if a == "scatteralloc":
            for page in EXTRA_SCATTERALLOC_PAGES:
                d = scatteralloc_dir(build, page)
                variants.append(describe("scatteralloc%d" % page, a, os.path.join(d, "kdalloc"),
                                         os.path.join(d, "kdalloc-allocbench")))
    return variants


def save_variants(out, variants):
    """OUT/variants.json: the variants as described, so that tables and figures can be remade without the
    binaries (--skip-build on another machine)."""
    with open(os.path.join(out, "variants.json"), "w") as f:
        json.dump([dataclasses.asdict(v) for v in variants], f, indent=1)


def saved_variants(out):
    """The variants of OUT/variants.json, or None."""
    path = os.path.join(out, "variants.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [Variant(**v) for v in json.load(f)]


def by_id(variants, allocator):
    """The variant of an allocator id (for ScatterAlloc: its 4096-byte pages), or None."""
    return next((v for v in variants if v.key == allocator), None)


def ratio(a, b):
    return a / b if a is not None and b else None


def geomean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values)) if values else None


def short(value):
    """A ratio with two decimals, one above 10, none above 100."""
    return "%.2f" % value if value < 9.995 else "%.1f" % value if value < 99.95 else "%.0f" % value


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "CPU")
    except OSError:
        return "CPU"
