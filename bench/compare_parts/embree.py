"""Embree 3's CPU BVH builds and rays beside kdalloc's GPU builds and rays, on the same machine."""
import json
import os
import tempfile
import time

from .common import (by_id, cell, cpu_model, failure_reason, log, ratio, run, scene_args, scene_label, write_csv,
                     write_lines)

# ---------------------------------------------------------------- Embree beside kdalloc

EMBREE_QUALITIES = ("medium", "high")
EMBREE_RUN_FACTOR = 4  # a kdalloc-embree run is 2 x (R + 1) CPU builds: four times --timeout


def embree_run(args, runs, exe, scene):
    """kdalloc-embree --json --quality both on the scene: {quality: its JSON object}, or a failure."""
    key = "embree|%s" % scene_label(scene)
    rec = runs.get(key, scene=scene_label(scene))
    if rec is None:
        t0 = time.time()
        rc, out, err = run([exe, "--json", "--quality", "both", "--repeat", str(args.repeat)] + scene_args(scene),
                           EMBREE_RUN_FACTOR * args.timeout)
        rec = {"key": key, "scene": scene_label(scene)}
        results = [json.loads(l) for l in out.splitlines() if l.startswith("{")] if rc == 0 else []
        if len(results) == len(EMBREE_QUALITIES):
            rec["results"] = {r["quality"]: r for r in results}
        else:
            rec["failure"] = failure_reason(rc, err.replace("kdalloc-embree: ", "kdalloc: "))
        rec["seconds"] = round(time.time() - t0, 1)
        runs.add(rec)
        status = ("medium %.1f ms, high %.1f ms, %.1f Mrays/s" % (
            rec["results"]["medium"]["build_ms"], rec["results"]["high"]["build_ms"],
            rec["results"]["medium"]["mrays_per_s"]) if "results" in rec else rec["failure"])
        log("[embree] %-18s %s" % (rec["scene"], status))
    return rec


def kdalloc_render_run(args, runs, v, scene):
    """`kdalloc render --gpu --json` of variant v on the scene (its default camera): the JSON, or a failure."""
    key = "embree|render|%s|%s" % (scene_label(scene), v.key)
    rec = runs.get(key, scene=scene_label(scene), allocator=v.key)
    if rec is None:
        png = os.path.join(tempfile.gettempdir(), "kdalloc-compare-%d.png" % os.getpid())
        rc, out, err = run([v.kdalloc, "render", "--gpu", "--json", "-o", png, "--frames", str(args.repeat)]
                           + scene_args(scene), args.timeout)
        if os.path.exists(png):
            os.remove(png)
        rec = {"key": key, "scene": scene_label(scene), "allocator": v.key}
        if rc == 0 and out.strip().startswith("{"):
            rec["stats"] = json.loads(out.strip().splitlines()[-1])
        else:
            rec["failure"] = failure_reason(rc, err)
        runs.add(rec)
        status = "%.0f Mrays/s" % rec["stats"]["mrays_per_s"] if "stats" in rec else rec["failure"]
        log("[embree] %-18s kdalloc render on the GPU (%s): %s" % (rec["scene"], v.name, status))
    return rec


def embree_part(args, runs, variants):
    exe = os.path.join(args.build, "kdalloc-embree")
    if not runs.offline and not os.access(exe, os.X_OK):
        log("embree: skipped: %s is missing (CMake did not find Embree 3: apt-get install libembree-dev, "
            "or on the GPU machine . .deps/env.sh before building)" % exe)
        return
    atomic, bump = by_id(variants, "atomic"), by_id(variants, "countedbump")
    rows = []
    for scene in args.scene:
        label = scene_label(scene)
        emb = embree_run(args, runs, exe, scene)
        render = kdalloc_render_run(args, runs, atomic, scene) if atomic else {}
        builds = {v.key: (runs.get("ds_table3|%s|%s" % (label, v.key)) or {}).get("stats") for v in (atomic, bump) if v}
        rows.append((label, emb, render, builds))
    write_embree(args, rows, atomic, bump)


def write_embree(args, rows, atomic, bump):
    fields = ["scene", "n_tris", "threads", "embree"]
    for q in EMBREE_QUALITIES:
        fields += ["%s_%s" % (q, k) for k in ("build_ms", "build_ms_min", "build_ms_max", "mrays_per_s")]
    fields += ["rays", "hits", "embree_view", "atomic_build_ms", "countedbump_build_ms", "medium_over_atomic",
               "kdalloc_mrays_per_s", "kdalloc_view", "gpu", "failure"]
    table = []
    for label, emb, render, builds in rows:
        res = emb.get("results", {})
        med = res.get("medium", {})
        row = {"scene": label, "n_tris": med.get("n_tris", ""), "threads": med.get("threads", ""),
               "embree": med.get("embree", ""), "rays": med.get("rays", ""), "hits": med.get("hits", ""),
               "embree_view": med.get("view", ""), "failure": emb.get("failure", "")}
        for q in EMBREE_QUALITIES:
            for k in ("build_ms", "build_ms_min", "build_ms_max", "mrays_per_s"):
                row["%s_%s" % (q, k)] = res.get(q, {}).get(k, "")
        for key, col in (("atomic", "atomic_build_ms"), ("countedbump", "countedbump_build_ms")):
            row[col] = (builds.get(key) or {}).get("build_ms", "")
        gpu_stats = builds.get("atomic") or builds.get("countedbump") or {}
        row["gpu"] = gpu_stats.get("gpu", "")
        rs = render.get("stats", {})
        row["kdalloc_mrays_per_s"] = rs.get("mrays_per_s", "")
        row["kdalloc_view"] = rs.get("camera", {}).get("view", "")
        x = ratio(med.get("build_ms"), row["atomic_build_ms"] or None)
        row["medium_over_atomic"] = round(x, 3) if x is not None else ""
        table.append(row)
    write_csv(os.path.join(args.out, "embree.csv"), fields, table)

    first = next((r for r in table if r["embree"]), {})
    gpu = next((r["gpu"] for r in table if r["gpu"]), "the GPU (no ds_table3 runs)")
    names = [atomic.name if atomic else "AtomicMalloc", bump.name if bump else "CountedBump"]
    lines = ["# Embree %s beside kdalloc" % first.get("embree", "3"), "",
             "Embree on %s CPU threads (%s); kdalloc on %s, in the same run." % (
                 first.get("threads", "?"), cpu_model(), gpu), "",
             "| scene | N_tris | Embree medium [ms] | Embree high [ms] | %s GPU [ms] | %s GPU [ms] | "
             "Embree medium / %s | Embree medium [Mrays/s] | Embree high [Mrays/s] | kdalloc GPU [Mrays/s] |"
             % (names[0], names[1], names[0]),
             "|---|" + "---:|" * 9]
    for r in table:
        if r["failure"]:
            embree_cells = [r["failure"], "-"]
            ray_cells = ["-", "-"]
        else:
            embree_cells = [cell(r["medium_build_ms"], "%.1f"), cell(r["high_build_ms"], "%.1f")]
            ray_cells = [cell(r["medium_mrays_per_s"], "%.1f"), cell(r["high_mrays_per_s"], "%.1f")]
        view_note = " ‡" if r["kdalloc_view"] and r["embree_view"] and r["kdalloc_view"] != r["embree_view"] else ""
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s%s |" % (
            r["scene"], "{:,}".format(r["n_tris"]) if r["n_tris"] != "" else "-",
            " | ".join(embree_cells), cell(r["atomic_build_ms"], "%.3f"), cell(r["countedbump_build_ms"], "%.3f"),
            cell(r["medium_over_atomic"], "%.2f"), " | ".join(ray_cells),
            cell(r["kdalloc_mrays_per_s"], "%.0f"), view_note))
    lines += ["", "Embree: `kdalloc-embree --json --quality both --repeat R`: the median of R rtcCommitScene "
              "(one triangle geometry, the device's default configuration: every core) after a warm-up build; "
              "rays: one primary ray per pixel of `kdalloc render`'s default camera (1280x720), rtcIntersect1 "
              "on every core, the median of R passes.  kdalloc: its k-d tree build on the GPU (ds_table3, pool "
              "200x, median of R), and `kdalloc render --gpu` (median of R frames, shading included).  "
              "-: no data (run the ds part for kdalloc's builds)."]
    if any(" ‡" in l for l in lines):
        lines += ["", "‡ kdalloc's render chose another default view than Embree's rays (embree.csv: the views)."]
    write_lines(os.path.join(args.out, "embree.md"), lines)
    log("wrote embree.csv and embree.md")


