#!/bin/bash
# session 36 call 9: A/B base / chunks of N/4096 or N/1024 references (cs4096, cs1024) / big nodes of 3 or 6 chunks (bc3, bc6)
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u9/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 540 bash .bins/ab.sh /tmp/o 3 base cs4096 cs1024 bc3 bc6 > /tmp/o/ab_log.txt 2>&1
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
tar czf $OUT/u9.tgz -C /tmp o
