#!/bin/bash
# session 35 call 2: base / box / boxl2 again (4 rounds), and the circular allocators base / box
set -u

export LD_LIBRARY_PATH=$PWD/.bins:$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
O=/tmp/u2; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
pack() { tar czf $OUT/u2.tgz -C /tmp u2; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 250 bash .bins/ab.sh $O 4 base box boxl2 > $O/ab_log.txt 2>&1
grep FAIL $O/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/ab.jsonl | tee $O/summary.txt; el ab; pack
mkdir -p $O/circ
for a in cmalloc cmmalloc cfmmalloc; do ln -sf kd-base-$a .bins/kd-b$a; ln -sf kd-box-$a .bins/kd-x$a; done
SCENES="sponza conference dragon" timeout 300 bash .bins/ab.sh $O/circ 3 bcmalloc xcmalloc bcmmalloc xcmmalloc bcfmmalloc xcfmmalloc > $O/circ/ab_log.txt 2>&1
grep FAIL $O/circ/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/circ/ab.jsonl | tee $O/circ/summary.txt; el circ; pack
