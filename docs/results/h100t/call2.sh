#!/bin/bash
# session 34 call 2 (HEAD, warm machine): Table 3 (ds), Table 4 (ds20), Embree side-by-side; one tarball back
set -u
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
S=$PWD/.scenes; O=/tmp/t2; rm -rf $O; mkdir -p $O
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
pack() { tar czf $OUT/t2.tgz -C /tmp t2; }
{ echo "commit $(cat .bins/commit.txt)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)"; } | tee $O/gpu.txt
ls build-compare/kdalloc-atomic build-gpu/bench/kdalloc-embree build-gpu/kdalloc-embree 2>&1
E=$(ls build-gpu/kdalloc-embree build-gpu/bench/kdalloc-embree 2>/dev/null | head -1); cp $E build-compare/ 2>/dev/null; ls -la build-compare/kdalloc-embree
A=atomic,awmalloc,cmalloc,cfmalloc,cmmalloc,cfmmalloc,cudamalloc,countedbump
timeout 200 python3 bench/compare --build build-compare --skip-build --out $O/compare --scenes-dir $S --parts ds --allocators $A --timeout 60 > $O/compare_ds.log 2>&1
echo "ds rc $?"; el ds; pack
timeout 220 python3 bench/compare --build build-compare --skip-build --out $O/compare --scenes-dir $S --parts ds20 --allocators $A --timeout 40 > $O/compare_ds20.log 2>&1
echo "ds20 rc $?"; el ds20; pack
timeout 200 python3 bench/compare --build build-compare --skip-build --out $O/compare --scenes-dir $S --parts ds,embree --allocators $A --timeout 40 > $O/compare_embree.log 2>&1
echo "embree rc $?"; el embree; pack
tail -3 $O/compare_*.log
