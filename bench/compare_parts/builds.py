"""Tables 3 and 4 (k-d tree builds at pools of 200x and 20x the root array) and the pool that grows."""
import csv
import json
import os
import time

from .common import by_id, failure_message, failure_reason, geomean, log, run, scene_args, scene_label, write_lines

# ---------------------------------------------------------------- data structure builds

# (part, table, pool factor, reference allocator, title)
DS_TABLES = [("ds", "ds_table3", 200, "atomic",
              "k-d tree builds, pool = 200 x root array (the paper's Table 3 setting)"),
             ("ds20", "ds_table4", 20, "cmalloc",
              "k-d tree builds, pool = 20 x root array (the paper's Table 4 setting)")]
NOT_RUN = "not run: cannot free single arrays"
# Allocators whose pool is raised to their smallest where the factor asks for less
MIN_POOLS = {"halloc": "Halloc 256 MiB, as in the paper",
             "gallatin": "Gallatin 1 GiB (include/kdalloc/alloc/gallatin.h says why)"}
# The terms of the build tables, explained under the first (Table 3)
TERMS = ("N_tris: the scene's triangles.  N_ref: references per triangle in the tree's leaves (a triangle "
         "that straddles split planes is in several).  N_alloc: the arrays the build requests from the "
         "allocator (two a split node, none for an empty child), and their mean and standard deviation in "
         "bytes.  The root array: the N_tris 4-byte triangle indices the build starts from, so a pool of "
         "200 x the root array is 800 bytes a triangle.")


def build_sweep(args, runs, variants, table, pool_factor):
    """Builds every scene with every variant that builds; pool_factor None: --pool auto."""
    rows = []
    todo = [v for v in variants if v.builds]
    total = len(args.scene) * len(todo)
    i = 0
    for scene in args.scene:
        for v in todo:
            i += 1
            key = "%s|%s|%s" % (table, scene_label(scene), v.key)
            rec = runs.get(key, table=table, scene=scene_label(scene), allocator=v.key)
            if rec is None:
                t0 = time.time()
                pool = ["--pool", "auto"] if pool_factor is None else ["--pool-factor", str(pool_factor)]
                cmd = [v.kdalloc, "build", "--gpu", "--json", "--repeat", str(args.repeat)] + pool + scene_args(scene)
                rc, out, err = run(cmd, args.timeout)
                rec = {"key": key, "table": table, "scene": scene_label(scene), "allocator": v.key}
                if rc == 0 and out.strip().startswith("{"):
                    rec["stats"] = json.loads(out.strip().splitlines()[-1])
                else:
                    rec["failure"] = failure_reason(rc, err)
                    message = failure_message(err)
                    if message:
                        rec["message"] = message  # the cause in full, for runs.jsonl's readers
                rec["seconds"] = round(time.time() - t0, 1)
                runs.add(rec)
                status = "%.3f ms" % rec["stats"]["build_ms"] if "stats" in rec else rec["failure"]
                log("[%s %d/%d] %-12s %-18s %s" % (table, i, total, rec["scene"], v.name, status))
            rows.append(rec)
    return rows


def write_ds_csv(path, variants, scenes, cell):
    fields = ["scene", "allocator", "n_tris", "n_refs", "refs_per_tri", "nodes", "leaves", "max_depth",
              "sah_cost", "n_alloc", "alloc_mean", "alloc_sigma", "peak_pool_bytes", "pool_bytes", "pool_factor",
              "registers", "build_ms", "build_ms_min", "build_ms_max", "builds_timed", "failure"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        for sc in scenes:
            for v in variants:
                r = cell.get((sc, v.key), {} if v.builds else {"failure": NOT_RUN})
                if r:
                    s = r.get("stats", {})
                    w.writerow([sc, v.name] + [s.get(k, "") for k in fields[2:-1]] + [r.get("failure", "")])


def write_ds(args, variants, rows, table, pool_factor, ref, title):
    scenes = []
    for r in rows:
        if r["scene"] not in scenes:
            scenes.append(r["scene"])
    cell = {(r["scene"], r["allocator"]): r for r in rows}
    write_ds_csv(os.path.join(args.out, table + ".csv"), variants, scenes, cell)

    def stats(sc, v):
        return cell.get((sc, v.key), {}).get("stats")

    def props(sc):  # the scene's allocation properties, from the first variant that completed,
        # preferring one that frees (AWMalloc may finish a build over arrays it overwrote)
        ordered = [v for v in variants if v.frees] + [v for v in variants if not v.frees]
        return next((stats(sc, v) for v in ordered if stats(sc, v)), None)

    def raised(sc, v):  # the pool raised to the allocator's minimum: larger than the factor asked for
        s = stats(sc, v)
        return v.id in MIN_POOLS and s is not None and s["pool_factor"] > pool_factor * 1.01

    lines = ["# " + title, "", "| | " + " | ".join(scenes) + " |", "|---|" + "---:|" * len(scenes)]
    for label, k, fmt in [("N_tris", "n_tris", "{:,}"), ("N_ref", "refs_per_tri", "{:.2f}"),
                          ("N_alloc", "n_alloc", "{:,}"), ("mean alloc [B]", "alloc_mean", "{:.1f}"),
                          ("sigma alloc [B]", "alloc_sigma", "{:.1f}")]:
        vals = [fmt.format(props(sc)[k]) if props(sc) else "-" for sc in scenes]
        lines.append("| %s | %s |" % (label, " | ".join(vals)))
    base = by_id(variants, ref) or variants[0]  # the first, where --allocators left the reference out
    lines.append("| **%s T_build [ms]** | %s |" % (base.name, " | ".join(
        "%.3f" % stats(sc, base)["build_ms"] if stats(sc, base) else
        cell.get((sc, base.key), {}).get("failure", "-") for sc in scenes)))
    best = {}
    for sc in scenes:
        times = [(stats(sc, v)["build_ms"], v.key) for v in variants if v.frees and stats(sc, v)]
        best[sc] = min(times)[1] if times else None
    for v in variants:
        if v is base:
            continue
        vals = []
        for sc in scenes:
            s, b = stats(sc, v), stats(sc, base)
            if not v.builds:
                vals.append("-")
            elif s is None:
                vals.append(cell.get((sc, v.key), {}).get("failure", "-"))
            else:
                val = "%.2f" % (s["build_ms"] / b["build_ms"]) if b else "%.3f ms" % s["build_ms"]
                vals.append(("**%s**" % val if best[sc] == v.key else val) + ("†" if raised(sc, v) else ""))
        lines.append("| %s%s | %s |" % (v.name, "" if v.frees else "*", " | ".join(vals)))
    notes = ["Slowdowns are build times over %s's (each the median of 5 builds after a warm-up, CUDA events "
             "from the triangles' boxes to the end of the build kernel; \"timed out\": the warm-up and five builds "
             "took over 20 s); bold: the fastest full allocator (* marks allocators that cannot free, as in the "
             "paper)." % base.name]
    notes += ["%s cannot free single arrays: not run in the builds, as in the paper." % v.name
              for v in variants if not v.builds]
    mins = [MIN_POOLS[v.id] for v in variants if any(raised(sc, v) for sc in scenes)]
    if mins:
        notes.append("†: the pool raised to the allocator's minimum: %s." % "; ".join(mins))
    lines += ["", "  ".join(notes)]
    if pool_factor == DS_TABLES[0][2]:
        lines += ["", TERMS]
    write_lines(os.path.join(args.out, table + ".md"), lines)
    log("wrote %s.csv and %s.md" % (table, table))


# ---------------------------------------------------------------- the pool that grows

def pool_summary(rows):
    """The title, then per allocator over the scenes it built with --pool auto: the geometric mean and range
    of auto / 200x and the range of mapped / used."""
    lines = ["# The pool that grows (--pool auto) beside fixed pools", "",
             "| allocator | scenes grown | auto / 200x, mean (range) | mapped / used (range) |", "|---|---:|---:|---:|"]
    order = []
    for row in rows:
        if row["allocator"] not in order:
            order.append(row["allocator"])
    for name in order:
        grown = [r for r in rows if r["allocator"] == name and not r["failure"] and r.get("grown")]
        ratios = [r["ratio_200x"] for r in grown if isinstance(r.get("ratio_200x"), float)]
        mapped = [r["mapped_over_used"] for r in grown if isinstance(r.get("mapped_over_used"), float)]
        lines.append("| %s | %d | %s | %s |" % (
            name, len(grown), "%.2f (%.2f-%.2f)" % (geomean(ratios), min(ratios), max(ratios)) if ratios else "-",
            "%.2f-%.2f" % (min(mapped), max(mapped)) if mapped else "-"))
    return lines


def pool_part(args, runs, variants):
    auto = build_sweep(args, runs, variants, "pool_auto", None)
    fixed = {f: {(r["scene"], r["allocator"]): r.get("stats") for r in build_sweep(args, runs, variants, t, f)}
             for t, f in (("ds_table3", 200), ("ds_table4", 20))}
    mib = 1 << 20
    fields = ["scene", "allocator", "build_ms", "build_ms_200x", "ratio_200x", "build_ms_20x", "mapped_mib",
              "start_mib", "used_mib", "mapped_over_used", "grow_steps", "grow_ms", "failure"]
    rows = []
    for r in auto:
        v = by_id(variants, r["allocator"])
        s, f200, f20 = r.get("stats"), fixed[200].get((r["scene"], v.key)), fixed[20].get((r["scene"], v.key))
        row = {"scene": r["scene"], "allocator": v.name, "failure": r.get("failure", "")}
        if s:
            # what the pool must hold: the peak of live arrays, or every byte for an allocator that never reuses
            used = s["peak_pool_bytes"] if v.frees else s["n_alloc"] * s["alloc_mean"]
            row.update(build_ms=s["build_ms"], mapped_mib=s["pool_bytes"] / mib, used_mib=used / mib,
                       mapped_over_used=s["pool_bytes"] / used if used else "", grow_steps=s.get("grow_steps", ""),
                       grow_ms=s.get("grow_ms", ""), start_mib=s.get("pool_start_bytes", 0) / mib,
                       grown=s.get("pool") == "auto")
            if f200:
                row.update(build_ms_200x=f200["build_ms"], ratio_200x=s["build_ms"] / f200["build_ms"])
        if f20:
            row["build_ms_20x"] = f20["build_ms"]
        rows.append(row)
    with open(os.path.join(args.out, "pool_auto.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)

    def num(x, fmt):
        return fmt.format(x) if isinstance(x, (int, float)) else (x or "-")

    lines = pool_summary(rows) + ["", "# Every scene", "",
             "| scene | allocator | auto [ms] | 200x [ms] | auto / 200x | 20x [ms] | mapped [MiB] | start [MiB] "
             "| used [MiB] | mapped / used | steps | growing [ms] |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        if row["failure"]:
            lines.append("| %s | %s | %s |%s" % (row["scene"], row["allocator"], row["failure"], " |" * 9))
            continue
        grown = row.get("grown")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            row["scene"], row["allocator"], num(row.get("build_ms"), "{:.3f}"), num(row.get("build_ms_200x"), "{:.3f}"),
            num(row.get("ratio_200x"), "{:.2f}"), num(row.get("build_ms_20x"), "{:.3f}"),
            num(row.get("mapped_mib"), "{:.1f}") + ("" if grown else " (fixed)"),
            num(row.get("start_mib"), "{:.1f}") if grown else "-", num(row.get("used_mib"), "{:.1f}"),
            num(row.get("mapped_over_used"), "{:.2f}"), num(row.get("grow_steps"), "{}") if grown else "-",
            num(row.get("grow_ms"), "{:.3f}") if grown else "-"))
    lines += ["", "auto: `kdalloc build --pool auto` (it starts at 2x the root array, 32x for allocators that "
              "never reuse memory, rounded up to the GPU's mapping granule, and doubles whenever the allocator "
              "runs out; every timed build starts small again); 200x, 20x: the fixed pools of ds_table3 and ds_table4.  used: the peak of live arrays' "
              "bytes, or for allocators that never reuse memory every byte they handed out.  growing: host time "
              "in the growth steps of the last timed build.  (fixed): the allocator cannot grow its pool and "
              "built on the fixed 200x pool."]
    write_lines(os.path.join(args.out, "pool_auto.md"), lines)
    log("wrote pool_auto.csv and pool_auto.md")


