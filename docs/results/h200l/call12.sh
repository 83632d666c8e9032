#!/bin/bash
# session 35 call 12: the planar loop not unrolled (kd-urp, as committed kd-urp2), and with the planar count by setp and set.and (kd-urpq), against cf6a1fa (kd-cur)
set -u
export LD_LIBRARY_PATH=$PWD/.bins:${LD_LIBRARY_PATH:-}
O=/tmp/u12; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 400 bash .bins/ab.sh $O 6 cur urp2 urpq > $O/ab_log.txt 2>&1
grep FAIL $O/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/ab.jsonl | tee $O/summary.txt; el ab
tar czf $OUT/u12.tgz -C /tmp u12
