"""The later literature's tests (bench/survey.cu): every block live until a second kernel frees it."""
import os

from .common import NOT_MEASURED, by_id, log, ratio, read_csv, short, write_lines
from .microbench import allocbench_run

# ---------------------------------------------------------------- the later literature's tests

SURVEY_REQUESTERS = (10000, 100000, 1000000)
SURVEY_SIZES = {"live-warp": (16, 64, 256, 1024, 4096, 8192), "live-thread": (16, 64, 256, 1024)}
# (test, --requesters or None): one run each, so that a time-out loses one count only
SURVEY_JOBS = ([(t, n) for t in ("live-warp", "live-thread") for n in SURVEY_REQUESTERS]
               + [("mixed", None), ("exhaustion", None)])
LIVE_HEAD = "test,allocator,requesters,size,malloc_ms,free_ms,nulls,mismatches,pool_bytes"
EXHAUSTION_HEAD = "test,allocator,size,requests,second_round,share,mismatches,pool_bytes"
SURVEY_PROTOCOL = """\
Protocol (kdalloc-allocbench, bench/survey.cu): every block stays live until a second kernel frees it;
an untimed kernel writes a pattern into every byte of every block and another checks it (mismatches:
bytes read back wrong; NULL: requests that got no memory); the malloc and the free kernel are timed
apart; times are the median of 5 runs after a warm-up, the pool is reset between runs, untimed.
live-warp: lane 0 of each warp allocates; live-thread and mixed: every thread allocates itself.
x AtomicMalloc: malloc + free over AtomicMalloc's at the same count and size.  exhaustion: lane 0 of
each warp allocates until its first NULL; share = bytes handed out / pool; then everything is checked
and freed and the same is done again: the second round must succeed as often.  AWMalloc wraps around to
the pool's start and never returns NULL (the paper's design, for blocks freed soon): in exhaustion it
hands the pool out again over live blocks until the test's cap of pool / 16 requests, and its
mismatches are those overwritten blocks.  Pool sizes: the pool_bytes column of the CSVs."""


def survey_csv(args, test):
    return os.path.join(args.out, "survey_%s.csv" % test.replace("-", "_"))


def survey_sweep(args, runs, variants):
    """Every survey test for every variant into survey_*.csv; returns {(test, variant key, N): failure}."""
    rows, failures = {}, {}
    for v in variants:
        for test, n in SURVEY_JOBS:
            rec = allocbench_run(args, runs, "survey", v, test, ["--requesters", str(n)] if n else [], n or "-",
                                 args.survey_timeout)
            rows.setdefault(test, []).extend(rec["rows"])
            failures[(test, v.key, n)] = rec["failure"]
    for test, test_rows in rows.items():
        with open(survey_csv(args, test), "w") as f:
            f.write((EXHAUSTION_HEAD if test == "exhaustion" else LIVE_HEAD) + "\n")
            f.write("".join(r + "\n" for r in test_rows))
    log("wrote survey_*.csv")
    return failures


def size_label(size):
    """16 B, 1 KiB; size 0 stands for the mixed sizes."""
    if not size:
        return "mixed"
    return "%d KiB" % (size >> 10) if size >= 1024 and not size % 1024 else "%d B" % size


def missing(failures, test, v, n):
    """What a cell shows for a point without a row: why its run failed, or '-'."""
    return failures.get((test, v.key, n)) or "-"


def sum_ms(r):
    return float(r["malloc_ms"]) + float(r["free_ms"])


def problems(r):
    """'12 NULL, 3 bad' for a row with NULLs or mismatches, else ''."""
    found = [(r["nulls"], "NULL"), (r["mismatches"], "bad")]
    return ", ".join("%s %s" % (count, what) for count, what in found if int(count))


def live_table(title, test, n, sizes, variants, live, failures):
    """Per variant and size: malloc, free, their sum and the sum over AtomicMalloc's; NULLs and mismatches
    as notes."""
    atomic = by_id(variants, "atomic")
    prefixes = [size_label(s) + " " if len(sizes) > 1 else "" for s in sizes]
    head = [p + c for p in prefixes for c in ("malloc [ms]", "free [ms]", "malloc+free [ms]", "x AtomicMalloc")]
    lines = ["# " + title, "", "| Allocator | %s | notes |" % " | ".join(head), "|---|" + "---:|" * len(head) + "---|"]
    for v in variants:
        cells, notes = [], []
        for s in sizes:
            r = live.get((test, v.name, n, s))
            if r is None:
                cells += [missing(failures, test, v, n), "-", "-", "-"]
                continue
            base = live.get((test, atomic.name, n, s)) if atomic else None
            x = ratio(sum_ms(r), sum_ms(base) if base else None)
            cells += [r["malloc_ms"], r["free_ms"], "%.4f" % sum_ms(r), short(x) if x is not None else "-"]
            if problems(r):
                notes.append("%s: %s" % (size_label(s), problems(r)))
        lines.append("| %s | %s | %s |" % (v.name, " | ".join(cells), "; ".join(notes)))
    return lines


def mixed_table(variants, mixed, failures):
    lines = ["# mixed (10^6 threads, 16 B - 4 KiB)", "",
             "| Allocator | malloc [ms] | free [ms] | NULLs | mismatches |", "|---|---:|---:|---:|---:|"]
    for v in variants:
        r = mixed.get(v.name)
        cells = ([r["malloc_ms"], r["free_ms"], r["nulls"], r["mismatches"]] if r
                 else [missing(failures, "mixed", v, None), "-", "-", "-"])
        lines.append("| %s | %s |" % (v.name, " | ".join(cells)))
    return lines


def exhaustion_table(variants, exhaustion, failures):
    sizes = (1024, 0)
    head = [size_label(s) + " " + c for s in sizes for c in ("requests", "second round", "pool share", "mismatches")]
    lines = ["# exhaustion", "", "| Allocator | %s |" % " | ".join(head), "|---|" + "---:|" * len(head)]
    for v in variants:
        cells = []
        for s in sizes:
            r = exhaustion.get((v.name, s))
            cells += ([r["requests"], r["second_round"], "%.1f %%" % (100 * float(r["share"])), r["mismatches"]] if r
                      else [missing(failures, "exhaustion", v, None), "-", "-", "-"])
        lines.append("| %s | %s |" % (v.name, " | ".join(cells)))
    return lines


def every_point_table(test, variants, live, failures):
    """malloc + free at every (N, size) of a live test; ! marks NULLs or mismatches."""
    points = [(n, s) for n in SURVEY_REQUESTERS for s in SURVEY_SIZES[test]]
    lines = ["# %s: malloc + free [ms] at every point (requesters / size [B])" % test, "",
             "| Allocator | %s |" % " | ".join("{:,}/{}".format(n, s) for n, s in points), "|---|" + "---:|" * len(points)]
    for v in variants:
        cells = []
        for n, s in points:
            r = live.get((test, v.name, n, s))
            cells.append(missing(failures, test, v, n) if r is None else
                         "%.4f%s" % (sum_ms(r), " !" if problems(r) else ""))
        lines.append("| %s | %s |" % (v.name, " | ".join(cells)))
    return lines


def survey_tables(args, variants, failures):
    """survey_tables.md from survey_*.csv and the failures of the runs."""
    live = {(r["test"], r["allocator"], int(r["requesters"]), int(r["size"])): r
            for test in SURVEY_SIZES for r in read_csv(survey_csv(args, test))}
    mixed = {r["allocator"]: r for r in read_csv(survey_csv(args, "mixed"))}
    exhaustion = {(r["allocator"], int(r["size"])): r for r in read_csv(survey_csv(args, "exhaustion"))}
    lines = live_table("live, warp-based, 100,000 warps", "live-warp", 100000, (1024, 8192), variants, live,
                       failures)
    lines += [""] + live_table("live, thread-based, 1,000,000 threads x 64 B", "live-thread", 1000000, (64,),
                               variants, live, failures)
    lines += [""] + mixed_table(variants, mixed, failures)
    lines += [""] + exhaustion_table(variants, exhaustion, failures)
    for test in SURVEY_SIZES:
        lines += [""] + every_point_table(test, variants, live, failures)
    lines += ["", "! NULLs or mismatches at that point (survey_live_*.csv).  -: no data.", "", SURVEY_PROTOCOL]
    write_lines(os.path.join(args.out, "survey_tables.md"), lines)
    log("wrote survey_tables.md")




# ---------------------------------------------------------------- reuse around live blocks

REUSE_SIZES = (16, 64, 256, 1024, 4096)
REUSE_HEAD = "test,allocator,size,k,refill_size,filled,served,mismatches,pool_bytes"
REUSE_PROTOCOL = """\
Protocol (kdalloc-allocbench --test reuse, bench/reuse.cu; a 256 MiB pool, or the allocator's smallest where that is more: Gallatin's 1 GiB): lane 0 of each warp allocates
blocks of one size until its first NULL (filled: the share of the pool handed out); all but one block in
every K of that list (in the order they were handed out, every SM's mixed) are freed; then blocks of the
same size, or of 64 B (1 KiB after 64 B), are allocated until the first NULL or until as many bytes as
were freed are served (served: that share of the freed bytes); every live block is checked (mismatches:
words read back wrong: a block handed out twice).  Each cell: the lowest share over K = 2, 4, 16 and 64."""


def one_point_sweep(args, runs, variants, test, flag, points, head, timeout):
    """kdalloc-allocbench --test TEST FLAG P for every variant and point P, into TEST.csv (its header: head);
    returns {(variant key, P): failure}."""
    rows, failures = [], {}
    for v in variants:
        for p in points:
            rec = allocbench_run(args, runs, test, v, test, [flag, str(p)], p, timeout)
            rows.extend(rec["rows"])
            failures[(v.key, p)] = rec["failure"]
    with open(os.path.join(args.out, test + ".csv"), "w") as f:
        f.write(head + "\n" + "".join(r + "\n" for r in rows))
    log("wrote %s.csv" % test)
    return failures


def reuse_sweep(args, runs, variants):
    """The reuse test for every variant, one run per block size, into reuse.csv; returns the failures."""
    return one_point_sweep(args, runs, variants, "reuse", "--size", REUSE_SIZES, REUSE_HEAD, args.timeout)


def reuse_table(args, variants, failures):
    """reuse.md: per variant and block size, the fill, and the lowest share served again over K, at the same
    size and at another; mismatches summed."""
    got = {}
    for r in read_csv(os.path.join(args.out, "reuse.csv")):
        got.setdefault((r["allocator"], int(r["size"])), []).append(r)
    head = [size_label(s) + " " + c for s in REUSE_SIZES for c in ("fill", "same", "other")]
    lines = ["# Reuse around live blocks", "", "| Allocator | %s | mismatches |" % " | ".join(head),
             "|---|" + "---:|" * len(head) + "---:|"]
    unmeasured = []
    for v in variants:
        cells, bad, measured = [], 0, False
        if not any(got.get((v.name, s)) or failures.get((v.key, s)) not in (None, NOT_MEASURED) for s in REUSE_SIZES):
            unmeasured.append(v.name)  # a row of nothing but "not measured" says it in one line below
            continue
        for s in REUSE_SIZES:
            rs = got.get((v.name, s))
            if not rs:
                cells += [failures.get((v.key, s)) or "-", "-", "-"]
                continue
            measured = True
            same = [float(r["served"]) for r in rs if int(r["refill_size"]) == s]
            other = [float(r["served"]) for r in rs if int(r["refill_size"]) != s]
            cells += ["%.2f" % min(float(r["filled"]) for r in rs), "%.2f" % min(same) if same else "-",
                      "%.2f" % min(other) if other else "-"]
            bad += sum(int(r["mismatches"]) for r in rs)
        lines.append("| %s | %s | %s |" % (v.name, " | ".join(cells), bad if measured else "-"))
    lines += ["", "fill: share of the pool handed out; same, other: share of the freed bytes served again, at the "
              "same size and at another (the lowest over K).  -: no data." +
              ("  Not yet measured: %s." % ", ".join(unmeasured) if unmeasured else "") +
              "  reuse.md gives the protocol.", "", "# The reuse test's protocol", "", REUSE_PROTOCOL]
    write_lines(os.path.join(args.out, "reuse.md"), lines)
    log("wrote reuse.md")


# ---------------------------------------------------------------- the list workload

LIST_THREADS = (16384, 100000)
LIST_HEAD = "test,allocator,threads,rounds,allocations,failures,bad_blocks,ms,pool_bytes"
LIST_PROTOCOL = """\
Protocol (kdalloc-allocbench --test list, bench/list.cu: the workload of examples/list_workload, the same
text): every GPU thread, for 4 rounds, builds 32 lists of 1 to 256 elements of 8 B by appending, moving
a full list to a block twice as large (32 B to 2 KiB) and freeing the old one; finished lists stay live
in 16 slots a thread, and about half are freed at the end of each round; every block is checked before
its free.  A 4 GiB pool (reset before each run); one warm-up run, then the median of 3 (of 1 where the
warm-up took over 2 s).  failures: requests answered NULL; bad: blocks found overwritten."""


def list_sweep(args, runs, variants):
    """The list workload for every variant at each thread count, into list.csv; returns the failures."""
    return one_point_sweep(args, runs, variants, "list", "--requesters", LIST_THREADS, LIST_HEAD,
                           args.list_timeout)


def list_table(args, variants, failures):
    """list.md: per variant and thread count, the time, the NULLs among the requests and the bad blocks."""
    got = {(r["allocator"], int(r["threads"])): r for r in read_csv(os.path.join(args.out, "list.csv"))}
    head = ["%s threads: %s" % ("{:,}".format(n), c) for n in LIST_THREADS for c in ("ms", "NULL", "bad")]
    lines = ["# The list workload", "", "| Allocator | %s |" % " | ".join(head), "|---|" + "---:|" * len(head)]
    for v in variants:
        cells = []
        for n in LIST_THREADS:
            r = got.get((v.name, n))
            if not r:
                cells += [failures.get((v.key, n)) or "-", "-", "-"]
                continue
            nulls = int(r["failures"])
            share = "%d (%.1f%%)" % (nulls, 100.0 * nulls / int(r["allocations"])) if nulls else "0"
            cells += ["%.1f" % float(r["ms"]), share, r["bad_blocks"]]
        lines.append("| %s | %s |" % (v.name, " | ".join(cells)))
    lines += ["", "failures: requests answered NULL; bad: blocks found overwritten.  list.md gives the protocol.", "",
              "# The list workload's protocol", "", LIST_PROTOCOL]
    write_lines(os.path.join(args.out, "list.md"), lines)
    log("wrote list.md")
