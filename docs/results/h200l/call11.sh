#!/bin/bash
# session 35 call 11: the counting loops unrolled less: the plain one not at all (kd-ur1), both not at all (kd-ur1p), the planar one not at all (kd-urp), against cf6a1fa (kd-cur)
set -u
export LD_LIBRARY_PATH=$PWD/.bins:${LD_LIBRARY_PATH:-}
O=/tmp/u11; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 400 bash .bins/ab.sh $O 5 cur ur1 ur1p urp > $O/ab_log.txt 2>&1
grep FAIL $O/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/ab.jsonl | tee $O/summary.txt; el ab
tar czf $OUT/u11.tgz -C /tmp u11
