#!/bin/bash
# session 36 call 5: A/B base / teams of a block's warps for big nodes of at most 4096, 8192, 16384 references
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u5/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
ok=1
for v in t4k t8k t16k; do for sc in sponza conference; do
  timeout 60 .bins/kd-$v build .scenes/$sc.obj.gz --gpu --repeat 3 --pool fixed --pool-factor 200 --watchdog 5 > /tmp/o/smoke_${v}_$sc.txt 2>&1 || ok=0
  echo "smoke $v $sc rc=$? $(grep -i 'build time\|nodes \|error\|stall\|kdalloc:' /tmp/o/smoke_${v}_$sc.txt | head -4 | tr '\n' ' ')"
done; done
if [ $ok = 1 ]; then
SCENES="sponza sibenik conference buddha_100k dragon spheres10M" timeout 480 bash .bins/ab.sh /tmp/o 3 base t4k t8k t16k > /tmp/o/ab_log.txt 2>&1
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
fi
tar czf $OUT/u5.tgz -C /tmp o
