#!/bin/bash
# session 36 call 2: A/B base / sorted exact split (count fixed at 64) n>=33 / rows unrolled / n>=49
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u2/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="sponza sibenik conference buddha_100k dragon" timeout 540 bash .bins/ab.sh /tmp/o 3 base s33i s33u s49i > /tmp/o/ab_log.txt 2>&1
tar czf $OUT/u2.tgz -C /tmp o
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
