#!/bin/bash
# session 36 call 3 (run with four rounds: the device command changed the 3 below to 4 before running it, as here): A/B base / exact split two candidates a lane (pr), only from 6 or 11 references (ph6, ph11) / planar count from flat coordinates (fl)
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u3/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="sponza sibenik conference buddha_100k dragon spheres10M" timeout 540 bash .bins/ab.sh /tmp/o 4 base pr ph6 ph11 fl > /tmp/o/ab_log.txt 2>&1
tar czf $OUT/u3.tgz -C /tmp o
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
