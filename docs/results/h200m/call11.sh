#!/bin/bash
# session 36 call 11: every allocator's build before (old: CHUNK_SHARE 2048, the kernel of fe564c6) and after (new: 1024, 3a2d959), rounds interleaved:
# Conference (331K) and 200K procedural spheres, the two size bands whose chunks change
set -u
cd .bins/u11 && tar xzf bins.tgz && cd ../..
export LD_LIBRARY_PATH=$PWD/.bins/u11:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o; J=/tmp/o/alloc_ab.jsonl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee /tmp/o/gpu.txt
for r in 1 2 3; do
for a in atomic awmalloc cmalloc cfmalloc cmmalloc cfmmalloc cudamalloc countedbump; do
for sc in conference spheres200K; do
  if [ $sc = spheres200K ]; then args="--scene spheres --triangles 200000"; else args=.bins/u11/conference.obj.gz; fi
  for v in old new; do
    j=$(timeout 120 .bins/u11/kd-$a-$v build $args --gpu --repeat 5 --pool fixed --pool-factor 200 --json 2>/tmp/o/err.txt)
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
    o, n = d[(a, sc, 'old')], d[(a, sc, 'new')]
    if o and n: print('%-12s %-12s old %8.3f new %8.3f  %.3fx  trees %d' % (a, sc, S.mean(o), S.mean(n), S.mean(o) / S.mean(n), len(trees[(a, sc)])))
PY
tar czf $OUT/u11.tgz -C /tmp o
