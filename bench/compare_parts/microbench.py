"""The paper's generic tests (AD, ACD, P, the 100,000-warp test, registers, fragmentation) and its
Table 5 re-derived from them."""
import os
import time

from .common import by_id, failure_reason, geomean, log, ratio, read_csv, run, short, write_lines

# ---------------------------------------------------------------- allocator micro-benchmarks

ALLOC_TESTS = [("ad", []), ("acd-size", ["--pool-bytes", str(16 << 30)]), ("acd-iters", []), ("p", []),
               ("warps", []), ("regs", []), ("frag", [])]
ACD_POOLS = [128 << 10, 1 << 20, 8 << 20, 64 << 20, 512 << 20, 2 << 30]


def allocbench_run(args, runs, part, v, test, extra, point, timeout=None):
    """The record of `kdalloc-allocbench --test TEST EXTRA` of variant v, key PART|TEST|VARIANT|POINT: run now
    unless runs has it.  It keeps the rows printed (those starting with the test's name) and why it failed."""
    key = "%s|%s|%s|%s" % (part, test, v.key, point)
    rec = runs.get(key, test=test, allocator=v.key, rows=[])
    if rec is None:
        t0 = time.time()
        rc, out, err = run([v.allocbench, "--test", test] + extra, timeout or args.timeout)
        # a run that timed out keeps the rows it printed before (one per point, flushed)
        rows = [l for l in out.strip().splitlines() if l.startswith(test + ",")] if rc in (0, "timeout") else []
        rec = {"key": key, "test": test, "allocator": v.key, "rows": rows,
               "failure": None if rc == 0 else failure_reason(rc, err.replace("kdalloc-allocbench", "kdalloc")),
               "seconds": round(time.time() - t0, 1)}  # what the run cost, to plan a rerun by
        runs.add(rec)
        status = "%d rows" % len(rows) if rc == 0 else rec["failure"] + (" (%d rows kept)" % len(rows) if rows else "")
        log("[%s] %-18s %-36s %s" % (part, v.name, "%s %s" % (test, point), status))
    return rec


def alloc_sweep(args, runs, variants):
    jobs = [(t, extra) for t, extra in ALLOC_TESTS] + [("acd-pool", ["--pool-bytes", str(p)]) for p in ACD_POOLS]
    out_rows, failures = {}, {}
    for v in variants:
        for test, extra in jobs:
            # frag prints no rows for the allocators it cannot scan (a note on stderr): kept as no rows
            rec = allocbench_run(args, runs, "alloc", v, test, extra, " ".join(extra))
            out_rows.setdefault(test, []).extend(rec["rows"])
            failures[(test, v.key)] = rec["failure"]
    heads = {"regs": "test,allocator,plain,coalesced",
             "frag": "test,allocator,payload,internal,external,chunks,well_formed"}
    for test, rows in out_rows.items():
        with open(os.path.join(args.out, "alloc_%s.csv" % test.replace("-", "_")), "w") as f:
            f.write(heads.get(test, "test,allocator,blocks,warps,payload,iterations,pool_bytes,ms,failures") + "\n")
            f.write("".join(r + "\n" for r in rows))
    # the two small tables; a variant without rows shows why (its run's failure, or not measured)
    regs = {r.split(",")[1]: r.split(",")[2:] for r in out_rows.get("regs", [])}
    lines = ["# Registers (the paper's Table 1)", "", "| Allocator | uncoalesced | coalesced |", "|---|---:|---:|"]
    for v in variants:
        plain, coal = regs.get(v.name, [failures.get(("regs", v.key)) or "-", "-"])
        lines.append("| %s | %s | %s |" % (v.name, plain, coal))
    lines += ["", "# 100,000 warps, one allocation each", "", "| Allocator | 1 KiB [ms] | fails | 8 KiB [ms] | fails |",
              "|---|---:|---:|---:|---:|"]
    by = {}
    for r in out_rows.get("warps", []):
        f = r.split(",")
        by.setdefault(f[1], {})[f[4]] = (f[7], f[8])
    for v in variants:
        why = failures.get(("warps", v.key)) or "-"
        a, b = (by[v.name].get(k, ("-", "-")) for k in ("1024", "8192")) if v.name in by else ((why, "-"), ("-", "-"))
        lines.append("| %s | %s | %s | %s | %s |" % (v.name, a[0], a[1], b[0], b[1]))
    write_lines(os.path.join(args.out, "alloc_tables.md"), lines)
    log("wrote alloc_*.csv and alloc_tables.md")


# ---------------------------------------------------------------- Table 5

PROPERTIES = ["Register usage", "Variable requests", "Successive requests", "Scaling", "Overall speed"]
# The paper's Table 5, in the order of PROPERTIES; † and ‡ are its own footnotes.
PAPER_TABLE5 = [("CudaMalloc", "+ + 0 0 -"), ("AtomicMalloc*", "+ + + + +"), ("CMalloc", "+(†) + 0 0(‡) +"),
                ("ScatterAlloc", "- - 0 + 0"), ("FDGMalloc*", "0 + + 0 -"), ("Halloc", "- 0 + + 0")]
TABLE5_LEGEND = """\
n/a: a run failed or its data is missing.  ! some requests of that test returned no memory (the
failures column of its CSV); their time is in the measurement.  * cannot free single blocks.  §: graded
by the AD test (Figure 3a: every warp allocates once and frees, 4 B to 128 KiB; no k-d tree builds).
Each verdict is followed by the number it grades; the rules: table5.md."""

TABLE5_RULES = """\
# The rules of the verdicts

Each verdict is followed by the number it grades, in parentheses.

- Register usage: registers of the uncoalesced malloc + free kernel (alloc_regs.csv, column plain)
  against CMalloc's (%s): + if at most CMalloc's + 4, 0 if at most twice CMalloc's, - otherwise.
- Variable requests: AD test (alloc_ad.csv), the largest time over the payloads / the smallest:
  + if at most 3, 0 if at most 30, - otherwise.
- Successive requests: ACD test with 4 B payloads (alloc_acd_iters.csv), the time at 100 allocations
  per warp / the time at 10: + if at most 3, 0 if at most 12, - otherwise (linear growth gives 10).
- Scaling: P test (alloc_p.csv), the time at the largest block count / the time at 1 block:
  + if at most 3, 0 if at most 30, - otherwise.
- Overall speed: geometric mean over the scenes of ds_table3.csv (pool = 200 x root array) of the
  build time / AtomicMalloc's on the same scene: + if at most 1.5, 0 if at most 4, - otherwise.
  A variant that failed on a scene AtomicMalloc built gets n/a.
  § Variants that build no k-d trees: the geometric mean over the payloads of the AD time /
  AtomicMalloc's AD time, with the same thresholds.
"""


def grade(value, plus, zero, shown=None):
    """'+' up to plus, '0' up to zero, '-' above, followed by the number graded."""
    if value is None:
        return "n/a"
    symbol = "+" if value <= plus else "0" if value <= zero else "-"
    return "%s (%s)" % (symbol, short(value) if shown is None else shown)


def ms_by(rows, name, column):
    """{value of column: ms} over one allocator's rows of an allocbench CSV."""
    return {float(r[column]): float(r["ms"]) for r in rows if r["allocator"] == name}


def failed_requests(rows, name):
    return any(int(r["failures"]) > 0 for r in rows if r["allocator"] == name)


def speed(v, atomic, builds, ad):
    """The overall-speed number of v against AtomicMalloc, and whether it comes from the AD test."""
    if atomic is None:
        return None, not v.builds
    if v.builds:
        base = {sc: ms for (sc, name), ms in builds.items() if name == atomic.name and ms is not None}
        mine = [builds.get((sc, v.name)) for sc in base]
        return (None if None in mine else geomean([m / base[sc] for m, sc in zip(mine, base)])), False
    base, mine = ms_by(ad, atomic.name, "payload"), ms_by(ad, v.name, "payload")
    return geomean([mine[p] / base[p] for p in mine if base.get(p)]), True


def table5(args, variants):
    """The paper's Table 5 re-derived from the micro-benchmarks and ds_table3.csv (rules in TABLE5_RULES)."""
    csvs = {t: read_csv(os.path.join(args.out, "alloc_%s.csv" % t)) for t in ("regs", "ad", "acd_iters", "p")}
    builds = {(r["scene"], r["allocator"]): float(r["build_ms"]) if r["build_ms"] else None
              for r in read_csv(os.path.join(args.out, "ds_table3.csv"))}
    regs = {r["allocator"]: int(r["plain"]) for r in csvs["regs"]}
    cmalloc, atomic = by_id(variants, "cmalloc"), by_id(variants, "atomic")
    c = regs.get(cmalloc.name) if cmalloc else None
    lines = ["# The paper's Table 5, re-derived on this GPU", "",
             "| Allocator | %s |" % " | ".join(PROPERTIES), "|---|" + ":-:|" * len(PROPERTIES)]
    for v in variants:
        iters = ms_by(csvs["acd_iters"], v.name, "iterations")
        p = ms_by(csvs["p"], v.name, "blocks")
        ad = list(ms_by(csvs["ad"], v.name, "payload").values())
        fast, from_ad = speed(v, atomic, builds, csvs["ad"])
        r = regs.get(v.name)
        cells = [grade(r, c + 4, 2 * c, str(r)) if r is not None and c else "n/a",
                 grade(ratio(max(ad), min(ad)) if ad else None, 3, 30),
                 grade(ratio(iters.get(100), iters.get(10)), 3, 12),
                 grade(ratio(p[max(p)], p.get(1)) if p else None, 3, 30),
                 grade(fast, 1.5, 4) + (" §" if from_ad and fast is not None else "")]
        for i, test in ((1, "ad"), (2, "acd_iters"), (3, "p")):
            if cells[i] != "n/a" and failed_requests(csvs[test], v.name):
                cells[i] += " !"
        lines.append("| %s%s | %s |" % (v.name, "" if v.frees else "*", " | ".join(cells)))
    lines += ["", TABLE5_LEGEND, "", TABLE5_RULES % (c if c else "n/a"), "# The paper's own Table 5", "",
              "| Allocator | %s |" % " | ".join(PROPERTIES), "|---|" + ":-:|" * len(PROPERTIES)]
    for name, verdicts in PAPER_TABLE5:
        lines.append("| %s | %s |" % (name, " | ".join(verdicts.split())))
    lines += ["", "† and ‡ are the paper's footnotes; * cannot free single blocks.  The paper measured one "
              "ScatterAlloc row, here each page size is a row."]
    write_lines(os.path.join(args.out, "table5.md"), lines)
    log("wrote table5.md")


