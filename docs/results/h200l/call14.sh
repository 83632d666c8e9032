#!/bin/bash
# session 35 call 14: Buddha, Embree's medium build against kdalloc's (AtomicMalloc) build, alternating, on one machine (fe564c6)
set -u
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
S=$PWD/.scenes; O=/tmp/u14; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
ls build-compare/kdalloc-embree build-compare/kdalloc-atomic > /dev/null 2>&1 || { python3 bench/compare --build build-compare --out /tmp/cmp --scenes-dir $S --parts none > $O/build.log 2>&1; }
for sc in buddha_100k sponza sibenik conference; do
for i in 1 2 3 4 5; do
  e=$(timeout 60 build-compare/kdalloc-embree $S/$sc.obj.gz --quality medium --json --repeat 5 2>/dev/null)
  k=$(timeout 60 build-compare/kdalloc-atomic build $S/$sc.obj.gz --gpu --repeat 5 --pool fixed --pool-factor 200 --json 2>/dev/null)
  echo "{\"scene\":\"$sc\",\"round\":$i,\"embree\":$e,\"kdalloc\":$k}" >> $O/pairs.jsonl
done; done
python3 - $O/pairs.jsonl <<'PY' | tee $O/summary.txt
import json,sys,statistics as S,collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    r=json.loads(l); e=r['embree']; k=r['kdalloc']
    em=e['build_ms']
    d[r['scene']].append((em,k['build_ms']))
for sc,v in d.items():
    print(sc,'embree medium ms',[round(x[0],2) for x in v],'kdalloc ms',[round(x[1],3) for x in v],'ratios',[round(x[0]/x[1],2) for x in v],'median ratio %.2f'%S.median([x[0]/x[1] for x in v]))
PY
tar czf $OUT/u14.tgz -C /tmp u14
