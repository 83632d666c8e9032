"""The ray rates of every scene: primary rays, with shadow rays, with ambient-occlusion rays (rays part).

For every scene of ds: `kdalloc-atomic render --gpu --json` at 1920x1080 from the scene's default view
(the median of --repeat x 2 frames after a warm-up), once per ray type, into rays_scenes.csv and
rays_scenes.md, with the time to the first image (the build and the warm-up frame).
"""
import json
import os
import tempfile

from .common import by_id, cell, failure_reason, log, run, scene_args, scene_label, write_csv, write_lines

RAY_MODES = (("primary", []), ("shadows", ["--shadows"]), ("ao", ["--shade", "ao"]))


def rays_run(args, runs, v, scene, mode, options):
    """One render of the scene with variant v's kdalloc: its JSON, or a failure."""
    key = "rays|%s|%s|%s" % (scene_label(scene), v.key, mode)
    rec = runs.get(key, scene=scene_label(scene), allocator=v.key, mode=mode)
    if rec is None:
        png = os.path.join(tempfile.gettempdir(), "kdalloc-rays-%d.png" % os.getpid())
        rc, out, err = run([v.kdalloc, "render", "--gpu", "--json", "-o", png, "--width", "1920", "--height", "1080",
                            "--frames", str(2 * args.repeat)] + options + scene_args(scene), args.timeout)
        if os.path.exists(png):
            os.remove(png)
        rec = {"key": key, "scene": scene_label(scene), "allocator": v.key, "mode": mode}
        if rc == 0 and out.strip().startswith("{"):
            rec["stats"] = json.loads(out.strip().splitlines()[-1])
        else:
            rec["failure"] = failure_reason(rc, err)
        runs.add(rec)
        s = rec.get("stats")
        log("[rays] %-18s %-8s %s" % (rec["scene"], mode, "%.3f ms, %.0f Mrays/s" % (s["render_ms"], s["mrays_per_s"])
                                       if s else rec["failure"]))
    return rec


def rays_part(args, runs, variants):
    atomic = by_id(variants, "atomic")
    if atomic is None:
        log("rays: skipped: no AtomicMalloc variant")
        return
    rows = [(scene_label(scene), {mode: rays_run(args, runs, atomic, scene, mode, options)
                                  for mode, options in RAY_MODES}) for scene in args.scene]
    write_rays(args, rows)


def write_rays(args, rows):
    fields = ["scene"] + ["%s_%s" % (m, k) for m, _ in RAY_MODES for k in ("ms", "mrays_per_s")] + \
             ["%s_%s" % (m, k) for m, _ in RAY_MODES[1:] for k in ("primary_ms", "secondary_ms",
                                                                   "secondary_mrays_per_s")] + \
             ["build_ms", "first_image_ms", "failure"]
    table = []
    for label, recs in rows:
        row = {"scene": label, "failure": "; ".join("%s: %s" % (m, r["failure"]) for m, r in recs.items()
                                                    if r.get("failure"))}
        for mode, _ in RAY_MODES:
            s = recs[mode].get("stats", {})
            row["%s_ms" % mode] = s.get("render_ms", "")
            row["%s_mrays_per_s" % mode] = s.get("mrays_per_s", "")
            if mode != "primary":
                for k in ("primary_ms", "secondary_ms", "secondary_mrays_per_s"):
                    row["%s_%s" % (mode, k)] = s.get(k, "")
        primary = recs["primary"].get("stats", {})
        row["build_ms"] = primary.get("build_ms", "")
        row["first_image_ms"] = primary.get("first_image_ms", "")
        table.append(row)
    write_csv(os.path.join(args.out, "rays_scenes.csv"), fields, table)
    lines = ["| scene | primary [ms] | Mrays/s | + shadow rays [ms] | shadow Mrays/s | + 4 ao rays [ms] | "
             "ao Mrays/s | build + first frame [ms] |", "|---|" + "---:|" * 7]
    for r in table:
        cells = [cell(r["primary_ms"], "%.3f"), cell(r["primary_mrays_per_s"], "%.0f")]
        for mode, _ in RAY_MODES[1:]:
            cells += [cell(r["%s_ms" % mode], "%.3f"), cell(r["%s_secondary_mrays_per_s" % mode], "%.0f")]
        lines.append("| %s | %s | %s |" % (r["scene"], " | ".join(cells), cell(r["first_image_ms"], "%.2f")))
    lines += ["", "`kdalloc-atomic render --gpu --json` at 1920x1080 from each scene's default view, the median "
              "frame after a warm-up: one camera ray a pixel; with shadows one shadow ray a hit (an occlusion query "
              "toward the light); with ao 4 occlusion rays a hit out to 0.1 of the scene's diagonal, in one kernel "
              "with the camera rays.  Shadow and ao Mrays/s: the secondary rays of every pixel, hit or not, over "
              "what they add to the frame (the frame's median less that of the camera rays alone, `secondary_ms`). "
              "The last column: the build and the first frame (on the GPU with the copy of the triangles its leaves read), what a first image waits for.  -: not measured, or "
              "failed (rays_scenes.csv says why)."]
    write_lines(os.path.join(args.out, "rays_scenes.md"), lines)
    log("wrote rays_scenes.csv and rays_scenes.md")
