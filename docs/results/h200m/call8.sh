#!/bin/bash
# session 36 call 8: A/B base / blocks of 12 warps, two an SM (w12)
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u8/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="sponza sibenik conference buddha_100k dragon spheres10M" timeout 540 bash .bins/ab.sh /tmp/o 5 base w12 > /tmp/o/ab_log.txt 2>&1
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
tar czf $OUT/u8.tgz -C /tmp o
