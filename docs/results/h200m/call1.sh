#!/bin/bash
# session 36 call 1: A/B base (1902ce4) / sorted exact split n>=33 inline / noinline / n>=25 / n>=17
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u1/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="sponza sibenik conference buddha_100k dragon spheres10M" timeout 540 bash .bins/ab.sh /tmp/o 3 base s33i s33n s25i s17i > /tmp/o/ab_log.txt 2>&1
tar czf $OUT/u1.tgz -C /tmp o
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
