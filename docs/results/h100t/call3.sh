#!/bin/bash
# session 34 call 3: A/B of L1 prefetch of boxes two steps ahead (kd-pf-*) against 7006959 (kd-base-*)
set -u
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.bins:$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
O=/tmp/t3; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
pack() { tar czf $OUT/t3.tgz -C /tmp t3; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
CU=$(dirname $(which nvcc))/cuobjdump
for v in base-atomic pf-atomic; do echo "$v CCTL: $($CU -sass -fun build_kernel .bins/kd-$v 2>/dev/null | grep -c CCTL) ATOMG.64: $($CU -sass -fun build_kernel .bins/kd-$v | grep -c 'ATOMG.E.ADD.64')"; done | tee $O/sass.txt
$CU -sass -fun build_kernel .bins/kd-pf-atomic | grep -B2 -A2 "CCTL" | head -30 >> $O/sass.txt
$CU -sass -fun build_kernel .bins/kd-base-atomic > $O/base_atomic.sass 2>&1
for v in base-atomic pf-atomic; do ln -sf kd-$v .bins/kd-${v%-atomic}; done
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 260 bash .bins/ab.sh $O 4 base pf > $O/ab_log.txt 2>&1
grep FAIL $O/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/ab.jsonl | tee $O/summary.txt; el ab; pack
mkdir -p $O/circ
for a in cmalloc cmmalloc cfmmalloc; do ln -sf kd-base-$a .bins/kd-b$a; ln -sf kd-pf-$a .bins/kd-p$a; done
SCENES="sponza conference dragon" timeout 250 bash .bins/ab.sh $O/circ 3 bcmalloc pcmalloc bcmmalloc pcmmalloc bcfmmalloc pcfmmalloc > $O/circ/ab_log.txt 2>&1
grep FAIL $O/circ/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/circ/ab.jsonl | tee $O/circ/summary.txt; el circ; pack
