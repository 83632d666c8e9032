#!/bin/bash
# session 35 call 6: against cf6a1fa (kd-cur) and 94f9c77 (kd-box): count_sides unrolled 4 (kd-u4), planar counts by setp and set.and (kd-pq), the planar loop only in passes with planar axes (kd-pa), both (kd-pqa)
set -u
export LD_LIBRARY_PATH=$PWD/.bins:$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
O=/tmp/u6; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
pack() { tar czf $OUT/u6.tgz -C /tmp u6; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
CU=$(ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1); [ -z "$CU" ] && CU=$(dirname $(which nvcc))/cuobjdump
for v in cur pq; do
  $CU -sass .bins/kd-$v > $O/$v.sass 2>/dev/null
  python3 - $O/$v.sass $v <<'PY' | tee -a $O/sass_loops.txt
import sys,re
lines=open(sys.argv[1]).read().split('\n')
# the build_kernel function only
start=None
for i,l in enumerate(lines):
    if 'Function : build_kernel' in l and 'parking' not in l and 'stats' not in l: start=i
    elif start is not None and 'Function :' in l: end=i; break
else: end=len(lines)
body=[l for l in lines[start:end] if re.search(r'/\*[0-9a-f]{4}\*/',l)]
idx=[i for i,l in enumerate(body) if 'LDS.128' in l]
print(sys.argv[2],'build_kernel SASS instructions',len(body),'LDS.128 at',idx[:12])
if idx:
    i0=idx[0]
    for l in body[i0-3:i0+34]: print('   ',re.sub(r'\s+',' ',l.split(';')[0].strip()))
PY
done
SCENES="teapot sponza sibenik conference buddha_100k dragon spheres10M" timeout 500 bash .bins/ab.sh $O 4 box cur u4 pq pa pqa > $O/ab_log.txt 2>&1
grep FAIL $O/ab_log.txt | cut -c1-200
python3 .bins/summ.py $O/ab.jsonl | tee $O/summary.txt; el ab; pack
