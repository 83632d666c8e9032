#!/bin/bash
# session 34 call 5: timelines of the timed builds (7006959 + -DKDA_TIMELINE -DKDA_TIMELINE_TIMED), AtomicMalloc
set -u
export LD_LIBRARY_PATH=$PWD/.bins:${LD_LIBRARY_PATH:-}
O=/tmp/t5; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
for sc in sponza sibenik conference buddha_100k; do
  .bins/kd-tl build .scenes/$sc.obj.gz --gpu --repeat 5 --pool fixed --pool-factor 200 > $O/timeline_$sc.txt 2>&1
  .bins/kd-base-atomic build .scenes/$sc.obj.gz --gpu --repeat 5 --pool fixed --pool-factor 200 --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sys.argv[1], d["build_ms"])' $sc
done | tee $O/plain.txt
tar czf $OUT/t5.tgz -C /tmp t5
