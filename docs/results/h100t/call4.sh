#!/bin/bash
# session 34 call 4: why lingering (6e1953f) made CMMalloc and CFMMalloc slow on Conference:
# base (4e8f167's kernel = 7006959) / lg (6e1953f) / lgw0 (no warp lingers) / lgc10k (lingering cut at 10,000 cycles); DIAG walks base vs lg
set -u
export LD_LIBRARY_PATH=$PWD/.bins:${LD_LIBRARY_PATH:-}
O=/tmp/t4; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
pack() { tar czf $OUT/t4.tgz -C /tmp t4; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
for v in diag-base diag-lg; do for sc in conference sponza; do echo "== $v $sc"; timeout 60 .bins/kd-$v-cmmalloc build .scenes/$sc.obj.gz --gpu --repeat 3 --pool fixed --pool-factor 200 2>&1 | tail -40; done; done > $O/diag.txt 2>&1
el diag; pack
for a in cmmalloc cfmmalloc; do for v in base lg lgw0 lgc10k; do ln -sf kd-$v-$a .bins/kd-$v$a; done; done
SCENES="conference sponza dragon" timeout 420 bash .bins/ab.sh $O 3 basecmmalloc lgcmmalloc lgw0cmmalloc lgc10kcmmalloc basecfmmalloc lgcfmmalloc lgw0cfmmalloc lgc10kcfmmalloc > $O/ab_log.txt 2>&1
grep FAIL $O/ab_log.txt | cut -c1-200
el ab; pack
