"""Our reimplementations of the seed paper's allocators beside the authors' code (orig part).

The authors' code is built through its adapter (include/kdalloc/alloc/regeff.h over
../shared/peers/regeff, as <name>_orig, with -DKDA_PEERS=ON); this part runs each pair, ours and theirs,
in the same harness at the same points of the survey's live tests, with the same pool: ORIG_POOL bytes,
under the 2 GiB the original's fused variants address (their used flag is bit 31 of a byte offset).  orig.csv and orig.md: malloc and free [ms] of each (the
median of 5 runs after a warm-up, as every survey point) and ours over the original's.  The other parts
leave the <name>_orig variants out.
"""
import os

from .common import by_id, log, read_csv, short, write_csv, write_lines
from .microbench import allocbench_run

ORIG_POOL = (2 << 30) - (1 << 20)
# (test, requesters, size): the survey's 100,000 warps at 1 and 8 KiB, 10^6 threads x 64 B, 10,000 warps
ORIG_POINTS = [("live-warp", 100000, 1024), ("live-warp", 100000, 8192), ("live-thread", 1000000, 64),
               ("live-warp", 10000, 1024)]
ORIG_SUFFIX = "_orig"
ORIG_HEAD = ["test", "allocator", "requesters", "size", "malloc_ms", "free_ms", "nulls", "mismatches", "pool_bytes"]


def is_original(v):
    return v.key.endswith(ORIG_SUFFIX)


def point_label(test, n, size):
    who = "warps" if test == "live-warp" else "threads"
    return "{:,} {} x {}".format(n, who, "%d KiB" % (size >> 10) if size >= 1024 else "%d B" % size)


def orig_part(args, runs, variants, originals):
    """Runs every pair's points (resumably) into orig.csv, then orig.md."""
    rows = []
    for o in originals:
        ours = by_id(variants, o.key[:-len(ORIG_SUFFIX)])
        for v in [x for x in (ours, o) if x]:
            for test, n, size in ORIG_POINTS:
                rec = allocbench_run(args, runs, "orig", v, test, ["--requesters", str(n), "--size", str(size),
                                                                  "--pool-bytes", str(ORIG_POOL)],
                                     "%d/%d" % (n, size), args.survey_timeout)
                rows += [dict(zip(ORIG_HEAD, r.split(","))) for r in rec["rows"]]
                if not rec["rows"]:
                    rows.append({"test": test, "allocator": v.name, "requesters": n, "size": size,
                                 "failure": rec["failure"] or "no row"})
    write_csv(os.path.join(args.out, "orig.csv"), ORIG_HEAD + ["failure"], rows)
    write_orig_table(args.out, variants, originals)


def write_orig_table(out, variants, originals):
    """orig.md from orig.csv: a row per pair, a column per point."""
    got = {}
    for r in read_csv(os.path.join(out, "orig.csv")):
        got[(r["allocator"], r["test"], int(r["requesters"]), int(r["size"]))] = r

    def ms(name, point):
        r = got.get((name,) + point)
        if r is None or r.get("failure"):
            return None, (r or {}).get("failure") or "-"
        return (float(r["malloc_ms"]), float(r["free_ms"]), int(r["nulls"] or 0) + int(r["mismatches"] or 0)), None

    def pair(v):
        return "%.3g / %.3g%s" % (v[0], v[1], " !" if v[2] else "")

    lines = ["# Our reimplementations beside the authors' code", "",
             "| allocator | " + " | ".join(point_label(*p) for p in ORIG_POINTS) + " |",
             "|---|" + "---|" * len(ORIG_POINTS)]
    for o in originals:
        ours = by_id(variants, o.key[:-len(ORIG_SUFFIX)])
        if ours is None:
            continue
        cells = []
        for point in ORIG_POINTS:
            a, why_a = ms(ours.name, point)
            b, why_b = ms(o.name, point)
            if a and b and b[0] and b[1]:
                cells.append("%s vs %s (%s, %s)" % (pair(a), pair(b), short(a[0] / b[0]), short(a[1] / b[1])))
            else:
                cells.append("%s vs %s" % (pair(a) if a else why_a, pair(b) if b else why_b))
        lines.append("| %s | %s |" % (ours.name, " | ".join(cells)))
    lines += ["", "Malloc / free [ms], ours vs the original's, and ours over the original's (below 1, ours is "
              "faster): kdalloc-allocbench --test TEST --requesters N --size S --pool-bytes %d for both (the survey's "
              "live tests: every block live until a second kernel frees it, malloc and free timed apart, the median "
              "of 5 runs after a warm-up).  !: NULLs or mismatches at that point (orig.csv).  A run cut after the "
              "survey's time limit says timed out (the original's circular walks never return when no chunk fits)."
              % ORIG_POOL]
    write_lines(os.path.join(out, "orig.md"), lines)
    log("wrote orig.csv and orig.md")
