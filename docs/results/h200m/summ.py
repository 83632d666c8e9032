import json,sys,collections,statistics as S
d=collections.defaultdict(list); tree=collections.defaultdict(set)
for l in open(sys.argv[1]):
    r=json.loads(l); res=r['res']
    d[(r['scene'],r['variant'])].append(res.get('build_ms'))
    tree[r['scene']].add((res.get('nodes'),res.get('n_refs'),res.get('sah_cost'),res.get('n_alloc')))
sc=[]; vs=[]
for (s,v) in d:
    if s not in sc: sc.append(s)
    if v not in vs: vs.append(v)
print('scene', *vs, 'trees')
for s in sc:
    base=S.mean(d[(s,vs[0])])
    print(s, *['%.3f (%.3fx)'%(S.mean(d[(s,v)]), base/S.mean(d[(s,v)])) if all(x is not None for x in d[(s,v)]) else 'FAIL' for v in vs], len(tree[s]))
