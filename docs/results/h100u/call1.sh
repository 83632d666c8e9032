#!/bin/bash
# session 35 call 1: A/B of one 32-byte box record (kd-box) and the same with L2 evict_last hints (kd-boxl2) against f5deb4e (kd-base)
set -u
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.bins:$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
O=/tmp/u1; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
pack() { tar czf $OUT/u1.tgz -C /tmp u1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 330 bash .bins/ab.sh $O 3 base box boxl2 > $O/ab_log.txt 2>&1
grep FAIL $O/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/ab.jsonl | tee $O/summary.txt; el ab; pack
