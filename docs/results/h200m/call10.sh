#!/bin/bash
# session 36 call 10: A/B base / chunks of N/1024 (cs1024) with big nodes of 4, 3 or 6 chunks / chunks of N/512 (cs512)
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u10/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 540 bash .bins/ab.sh /tmp/o 4 base cs1024 cs1024bc3 cs1024bc6 cs512 > /tmp/o/ab_log.txt 2>&1
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
tar czf $OUT/u10.tgz -C /tmp o
