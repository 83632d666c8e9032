"""decision.md: which allocator to use, one row each, from the tables the other parts wrote.

Columns and where they come from (a results folder's files; nothing is measured here):
  frees single blocks        variants.json (`kdalloc --version`)
  serves freed memory again  reuse.csv: the lowest share of the freed bytes served again at the same size,
                             over every size and K (yes from 0.99 on)
  grows its pool             pool_auto.csv: a growable start (allocators that cannot grow build on the fixed
                             200x pool there, with no start); for one that builds no tree, variants.json
                             (`kdalloc --version`)
  builds                     ds_table3.csv: build time over AtomicMalloc's, lowest to highest over the shared
                             scenes (the procedural 10M-triangle scene left out)
  survey                     survey_live_warp.csv (100,000 warps x 1 KiB and x 8 KiB) and survey_live_thread.csv
                             (10^6 threads x 64 B): malloc + free in ms
  fills before NULL          survey_exhaustion.csv: the bytes handed out, over the pool, when each warp has
                             allocated until its own first NULL; 1 KiB requests / mixed sizes (AWMalloc wraps
                             over live blocks instead)
  list workload              list.csv at 100,000 threads: the time, and the requests answered NULL
  use it when                USE_WHEN below, by hand: what the numbers mean for a user
"""
import json
import os

from .common import cell, log, read_csv, write_lines
from .orig import ORIG_SUFFIX

USE_WHEN = {
    "atomic": "the fastest builds when the pool can hold every request: it never frees",
    "awmalloc": "a ring buffer whose blocks die young: it wraps over blocks still live",
    "cmalloc": "reproducing the paper; the circular family, slow to start on today's GPUs",
    "cfmalloc": "reproducing the paper (CMalloc with fused headers)",
    "cmmalloc": "reproducing the paper (CMalloc, a list per SM)",
    "cfmmalloc": "reproducing the paper (fused, a list per SM)",
    "cudamalloc": "a baseline: CUDA's own device malloc (its heap faults now and then when filled and refilled)",
    "scatteralloc": "reproducing the paper's ScatterAlloc (its 4 KiB pages); larger pages do better here",
    "scatteralloc8192": "ScatterAlloc with 8 KiB pages",
    "scatteralloc16384": "a general workload of blocks up to a page",
    "halloc": "a published peer with size classes on slabs; slow at scale",
    "fdgmalloc": "freeing a warp's blocks all at once: it frees nothing singly",
    "countedbump": "builds and workloads whose blocks die together: fastest that frees in builds and at "
                   "1-8 KiB, but a chunk with one live block is not served again",
    "slabbump": "a general workload: freed blocks served again at their size, no NULL in the list workload",
    "gallatin": "a published 2024 peer, for comparison",
}


def _float(row, key):
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        return None


def _serves_again(reuse, name):
    shares = [_float(r, "served") for r in reuse if r["allocator"] == name and r["refill_size"] == r["size"]]
    shares = [s for s in shares if s is not None]
    if not shares:
        return "not measured"
    if any(int(r.get("mismatches") or 0) for r in reuse if r["allocator"] == name):
        return "no: overwrites live blocks"  # a ring that wraps serves everything, live blocks included
    low = min(shares)
    return "yes" if low >= 0.99 else ("no" if low == 0 else "in part (%.2f)" % low)


def _grows(pool, v):
    starts = [_float(r, "start_mib") for r in pool if r["allocator"] == v["name"]]
    starts = [s for s in starts if s is not None]
    if not starts:
        return "-" if v.get("grows") is None else ("yes" if v["grows"] else "no")
    return "yes" if max(starts) > 0 else "no"


def _builds(ds, name):
    atomic = {r["scene"]: _float(r, "build_ms") for r in ds if r["allocator"] == "AtomicMalloc"}
    ratios = []
    for r in ds:
        base, ms = atomic.get(r["scene"]), _float(r, "build_ms")
        if r["allocator"] == name and not r["scene"].startswith("spheres") and base and ms:
            ratios.append(ms / base)
    if not ratios:
        return "no builds" if any(r["allocator"] == name for r in ds) else "-"
    if name == "AtomicMalloc":
        return "1.00 (the reference)"
    return "%.2f-%.2fx" % (min(ratios), max(ratios))


def _survey(warp, thread, name):
    def total(rows, requesters, size):
        for r in rows:
            if r["allocator"] == name and r["requesters"] == requesters and r["size"] == size:
                m, f = _float(r, "malloc_ms"), _float(r, "free_ms")
                return m + f if m is not None and f is not None else None
        return None
    cells = [total(warp, "100000", "1024"), total(warp, "100000", "8192"), total(thread, "1000000", "64")]
    return " / ".join(cell(c, "%.3f") for c in cells)


def _fills(rows, name):
    def share(size):
        for r in rows:
            if r["allocator"] == name and r["size"] == size:
                v = _float(r, "share")
                if v is None:
                    return "-"
                return "wraps" if v > 1.0 else "%.0f%%" % (100.0 * v)
        return "-"
    return "%s / %s" % (share("1024"), share("0"))


def _list(rows, name):
    for r in rows:
        if r["allocator"] == name and r["threads"] == "100000":
            ms, fails, n = _float(r, "ms"), _float(r, "failures"), _float(r, "allocations")
            text = cell(ms, "%.0f ms")
            if fails:
                text += ", %.0f%% NULL" % (100.0 * fails / n) if n else ", NULLs"
            if _float(r, "bad_blocks"):
                text += ", blocks handed out twice"
            return text
    return "timed out" if any(r["allocator"] == name for r in rows) else "-"


def write_decision(out):
    path = os.path.join(out, "variants.json")
    if not os.path.exists(path):
        return
    with open(path) as f:
        variants = json.load(f)
    ds = read_csv(os.path.join(out, "ds_table3.csv"))
    pool = read_csv(os.path.join(out, "pool_auto.csv"))
    reuse = read_csv(os.path.join(out, "reuse.csv"))
    warp = read_csv(os.path.join(out, "survey_live_warp.csv"))
    thread = read_csv(os.path.join(out, "survey_live_thread.csv"))
    lists = read_csv(os.path.join(out, "list.csv"))
    exhaustion = read_csv(os.path.join(out, "survey_exhaustion.csv"))
    lines = ["| allocator | frees single blocks | serves freed memory again | grows its pool | builds, x AtomicMalloc "
             "| survey malloc+free [ms]: 1 KiB / 8 KiB / 64 B | fills the pool before NULL: 1 KiB / mixed "
             "| list workload, 100,000 threads | use it when |",
             "|---|---|---|---|---|---|---|---|---|"]
    for v in variants:
        if v["key"].endswith(ORIG_SUFFIX):  # the authors' code: measured in the orig part alone
            continue
        name = v["name"]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, "yes" if v["frees"] else "no", _serves_again(reuse, name), _grows(pool, v), _builds(ds, name),
            _survey(warp, thread, name), _fills(exhaustion, name), _list(lists, name), USE_WHEN.get(v["key"], "")))
    lines += ["", "Serves freed memory again: the reuse test's lowest share of the freed bytes served again at the "
              "same size (blocks kept live around them).  Builds: `kdalloc build --gpu --pool-factor 200` (a pool "
              "of 200 x the root array, the scene's triangle indices) over AtomicMalloc's time, the range over the "
              "nine OBJ scenes of the headline table (the 10M spheres apart: that table has them).  Survey: 100,000 warps x 1 KiB and x 8 KiB, 10^6 threads x 64 B, every block live "
              "until a second kernel frees it.  Fills: the exhaustion test, each warp allocating until its own first "
              "NULL: the bytes handed out over the pool (256 MiB; Gallatin's 1 GiB), with 1 KiB requests and with "
              "mixed sizes of 16 B-4 KiB (wraps: AWMalloc hands out live blocks again instead).  List workload: examples/list_workload's GPU program, 4 GiB pool; "
              "NULL: the share of requests answered NULL.  -: not measured, failed, or cut after the survey's time "
              "limit (survey_tables.md says which).  Each column comes from its table below."]
    write_lines(os.path.join(out, "decision.md"), lines)
    log("wrote decision.md")
