"""The correctness checks and ray rates (bench/device_checks.sh) as tables: checks.md and rays.md.

device_checks.sh writes into OUT/checks/ one line per GPU test binary (its Criterion synthesis), per
compute-sanitizer run (its summary) and per --validate run (rays, hits, mismatches against brute force),
and the render lines of the fixed Conference view at 1080p and 4K.  Its build logs are dropped here:
they are long and say nothing once the build passed.
"""
import glob
import os
import re
import subprocess

from .common import ROOT, log, write_lines

TEST_LINE = re.compile(r"^(\S+) rc (\d+) .*Tested: (\d+) \| Passing: (\d+) \| Failing: (\d+) \| Crashing: (\d+)")
SAN_LINE = re.compile(r"^(memcheck|racecheck) (\S+): rc (\d+) (.*)$")
VALID_LINE = re.compile(r"^(\S+): validation: (\d+) rays, (\d+) hits, (\d+) mismatches")
OCCLUSION_LINE = re.compile(r"^(\S+): validation: (\d+) shadow and ao rays, (\d+) occluded, (\d+) mismatches")
RAYS_LINE = re.compile(r"^rays (?:(\S+) )?(\d+)x(\d+): render: .*median of (\d+) frames ([\d.]+) ms.*: (\d+) Mrays/s")


def _lines(path):
    return open(path).read().splitlines() if os.path.exists(path) else []


def checks_part(args):
    """Runs bench/device_checks.sh into OUT/checks (unless --checks-from names a finished one), then tables."""
    d = os.path.join(args.out, "checks")
    if not args.checks_done:
        rc = subprocess.run(["bash", os.path.join(ROOT, "bench", "device_checks.sh"), d, args.scenes_dir],
                            cwd=ROOT).returncode
        log("checks: device_checks.sh exit %d" % rc)
    for f in glob.glob(os.path.join(d, "*.log")):
        os.remove(f)
    write_checks(args.out, d)


def write_checks(out, d):
    gpu = ", ".join(_lines(os.path.join(d, "gpu.txt")))
    lines = ["| check | result |", "|---|---|"]
    for line in _lines(os.path.join(d, "tests.txt")):
        m = TEST_LINE.match(line)
        if m:
            name, rc, tested, passing, failing, crashing = m.groups()
            lines.append("| `%s` | %s of %s passed%s |" % (name, passing, tested, "" if rc == "0" else
                                                                 ", %s failing, %s crashing (exit %s)" % (failing, crashing, rc)))
        elif line.strip():
            lines.append("| %s | did not finish |" % line.split()[0])
    # One row per sanitizer tool and per kind of validated ray; a run that found something gets its own row.
    clean, found = {}, []
    for line in _lines(os.path.join(d, "sanitizers.txt")):
        m = SAN_LINE.match(line)
        if m:
            tool, what, rc, summary = m.groups()
            summary = summary.replace("=========", "").strip()
            if rc == "0" and summary:
                clean.setdefault(tool, []).append(what)
            else:
                found.append("| compute-sanitizer %s, %s | %s |" % (tool, what, summary or "no summary (exit %s)" % rc))
    for tool, runs in clean.items():
        lines.append("| compute-sanitizer %s: %s | %s of %s runs clean |" % (tool, ", ".join(runs), len(runs),
                                                                          len(runs)))
    lines += found
    rays = {"camera rays": [[], 0, 0], "their shadow and ao rays": [[], 0, 0]}
    for line in _lines(os.path.join(d, "validate_rays.txt")):
        for kind, m in (("camera rays", VALID_LINE.match(line)), ("their shadow and ao rays", OCCLUSION_LINE.match(line))):
            if m:
                scene, n, _, bad = m.groups()
                rays[kind][0].append("%s (%s)" % (scene, n))
                rays[kind][1] += int(n)
                rays[kind][2] += int(bad)
    for kind, (scenes, n, bad) in rays.items():
        if scenes:
            lines.append("| `--validate`, %s: %s | %s rays, %s mismatches against brute force |" % (
                kind, ", ".join(scenes), "{:,}".format(n), bad))
    lines += ["", "From `bench/device_checks.sh` (%s); raw output in checks/." % (gpu or "GPU unknown")]
    write_lines(os.path.join(out, "checks.md"), lines)
    rays = ["| view | rays | frames | median frame [ms] | Mrays/s |", "|---|---|---:|---:|---:|"]
    for line in _lines(os.path.join(d, "validate_rays.txt")):
        m = RAYS_LINE.match(line)
        if m:
            kind, w, h, frames, ms, mrays = m.groups()
            kind = {None: "primary", "shadows": "primary + shadow", "ao": "primary + 4 ao"}.get(kind, kind)
            rays.append("| Conference, %sx%s | %s | %s | %s | %s |" % (w, h, kind, frames, ms, mrays))
    rays += ["", "`kdalloc-atomic render --gpu` on Conference from `--eye=1500,500,500 --target=-800,0,-900`: one "
             "primary ray a pixel, diffuse shading (with shadows: one shadow ray a hit; ao: 4 occlusion rays a hit, "
             "out to 0.1 of the scene's diagonal), the median frame of 10; Mrays/s counts the secondary rays of every "
             "pixel, hit or not."]
    write_lines(os.path.join(out, "rays.md"), rays)
    log("wrote checks.md and rays.md")
