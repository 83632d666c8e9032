#!/bin/bash
# session 36 call 4: A/B base / ptxas register usage level 0, 8, 10 / loads cached in L2 only (-dlcm=cg)
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u4/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="sponza sibenik conference buddha_100k dragon spheres10M" timeout 540 bash .bins/ab.sh /tmp/o 3 base rul0 rul8 rul10 dcg > /tmp/o/ab_log.txt 2>&1
tar czf $OUT/u4.tgz -C /tmp o
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
