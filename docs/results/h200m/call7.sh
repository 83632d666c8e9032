#!/bin/bash
# session 36 call 7: A/B base / block shared memory padded by 256 B (within the 100 KB carveout), 512 B and 3200 B (past it) / carveout hint 100% shared
set -u
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
tar xzf .bins/u7/bins.tgz -C .bins
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
SCENES="sponza sibenik conference buddha_100k dragon spheres10M" timeout 540 bash .bins/ab.sh /tmp/o 3 base pad256 pad512 pad3k c100 > /tmp/o/ab_log.txt 2>&1
python3 .bins/summ.py /tmp/o/ab.jsonl 2>&1 | tail -30
tar czf $OUT/u7.tgz -C /tmp o
