#!/bin/bash
# ab_builds.sh - A/B builds of kdalloc variants, rounds interleaved, as the
# build kernel's measurements in docs/experiments/builder.md#build-kernel were made.
#
#   bash bench/ab_builds.sh OUTDIR ROUNDS BINDIR VARIANT...
#
# BINDIR/kd-VARIANT is one kdalloc binary per variant (a CMake option such
# as -DKDA_PROBE=ON, a -D flag through CMAKE_CUDA_FLAGS, or an experiment's
# patch); the first variant is the
# base.  Each round builds each scene with each variant in turn:
# `kdalloc build SCENE --gpu --repeat 5 --json` (POOL, default
# "--pool fixed --pool-factor 200"), appending one JSON line per build to
# OUTDIR/ab.jsonl.  SCENES picks the scenes of SCENES_DIR (default
# ../shared/scenes); spheres10M is the 10M-triangle procedural scene.
# bench/ab_summary OUTDIR/ab.jsonl prints the comparison.
set -u
out=${1:?usage: ab_builds.sh OUTDIR ROUNDS BINDIR VARIANT...}
rounds=${2:?rounds}
bins=${3:?bin dir}
shift 3
dir=${SCENES_DIR:-../shared/scenes}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in $(seq "$rounds"); do
  for sc in ${SCENES:-sponza sibenik conference buddha_100k dragon spheres10M}; do
    if [ "$sc" = spheres10M ]; then args="--scene spheres --triangles 10000000"; else args="$dir/$sc.obj.gz"; fi
    for v in "$@"; do
      j=$(timeout 120 "$bins/kd-$v" build $args --gpu --repeat 5 ${POOL:---pool fixed --pool-factor 200} --json 2>"$out/err-$v-$sc.txt")
      echo "{\"round\":$r,\"variant\":\"$v\",\"scene\":\"$sc\",\"res\":${j:-null}}" >> "$out/ab.jsonl"
      echo "$r $v $sc $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["build_ms"], d["nodes"], d["sah_cost"])' "$j" 2>/dev/null ||
        echo "FAILED $(head -c 300 "$out/err-$v-$sc.txt")")"
    done
  done
done
