#!/bin/bash
# session 36 call 12: AtomicMalloc, AWMalloc, CMMalloc, CFMMalloc before (old), after 3a2d959 (new: chunks and big nodes from N / 1024) and with chunks from N / 1024 but big nodes from N / 2048 (c512)
# Conference (331K) and 200K procedural spheres, the two size bands whose chunks change
set -u
cd .bins/u12 && tar xzf bins.tgz && cd ../..
export LD_LIBRARY_PATH=$PWD/.bins/u12:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o; J=/tmp/o/alloc_ab.jsonl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/gpu.txt
for r in 1 2 3 4; do
for a in atomic awmalloc cmmalloc cfmmalloc; do
for sc in conference spheres200K; do
  if [ $sc = spheres200K ]; then args="--scene spheres --triangles 200000"; else args=.bins/u12/conference.obj.gz; fi
  for v in old new c512; do
    j=$(timeout 120 .bins/u12/kd-$a-$v build $args --gpu --repeat 5 --pool fixed --pool-factor 200 --json 2>/tmp/o/err.txt)
    echo "{\"round\":$r,\"allocator\":\"$a\",\"variant\":\"$v\",\"scene\":\"$sc\",\"res\":${j:-null}}" >> $J
    python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($r,'$a','$v','$sc', d['build_ms'], d['nodes'], d['n_alloc'], d['sah_cost'])" "$j" 2>/dev/null || echo "$r $a $v $sc FAILED $(head -c 200 /tmp/o/err.txt)"
  done
done; done; done > /tmp/o/log.txt 2>&1
python3 - <<'PY'
import json, collections, statistics as S
d = collections.defaultdict(list); trees = collections.defaultdict(set)
for l in open('/tmp/o/alloc_ab.jsonl'):
    r = json.loads(l); res = r['res']
    if not res: continue
    d[(r['allocator'], r['scene'], r['variant'])].append(res['build_ms'])
    trees[(r['allocator'], r['scene'])].add((res['nodes'], res['n_refs'], res['sah_cost'], res['n_alloc']))
for (a, sc) in sorted(set((k[0], k[1]) for k in d)):
    o, n, c = d[(a, sc, 'old')], d[(a, sc, 'new')], d[(a, sc, 'c512')]
    if o and n and c: print('%-12s %-12s old %8.3f new %8.3f (%.3fx) c512 %8.3f (%.3fx) trees %d' % (a, sc, S.mean(o), S.mean(n), S.mean(o) / S.mean(n), S.mean(c), S.mean(o) / S.mean(c), len(trees[(a, sc)])))
PY
tar czf $OUT/u12.tgz -C /tmp o
