#!/bin/bash
# A/B: each variant in .bins (kd-*) builds each scene, rounds interleaved.
# usage: ab.sh OUTDIR ROUNDS VARIANT...
out=$1; rounds=$2; shift 2
export LD_LIBRARY_PATH=$PWD/.bins:$PWD/.deps/lib:$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in $(seq $rounds); do
for sc in ${SCENES:-sponza sibenik conference buddha_100k dragon spheres10M}; do
  if [ $sc = spheres10M ]; then args="--scene spheres --triangles 10000000"; else args=".scenes/$sc.obj.gz"; fi
  for v in "$@"; do
    j=$(timeout 120 .bins/kd-$v build $args --gpu --repeat 5 ${POOL:---pool fixed --pool-factor 200} --json 2>/tmp/err-$v-$sc.txt)
    echo "{\"round\":$r,\"variant\":\"$v\",\"scene\":\"$sc\",\"res\":$j}" >> $out/ab.jsonl
    python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($r, '$v', '$sc', d.get('build_ms', d.get('time_ms')), d.get('nodes'), d.get('sah_cost'))" "$j" 2>/dev/null || echo "$r $v $sc FAILED $(head -c 300 /tmp/err-$v-$sc.txt)"
  done
done
done
