#!/bin/bash
# session 35 call 13 (fe564c6): builds, GPU tests, sanitizers, validate, rays, profile, then Table 3 (ds) with eight allocators
set -u
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
S=$PWD/.scenes; O=/tmp/u13; rm -rf $O; mkdir -p $O
pack() { tar czf $OUT/u13.tgz -C /tmp u13; }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*" | tee -a $O/times.txt; }
{ echo "commit $(cat .bins/commit.txt)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } | tee $O/gpu.txt
B=build-gpu
( cmake -S . -B $B -G Ninja -DKDA_ALL_ALLOCATORS=ON -DKDA_SHARED_SCENES=$S > $O/cmake_tests.log 2>&1 &&
  cmake --build $B --target test_gpu_build_atomic test_gpu_build_slots32 test_gpu_render test_embree kdalloc-embree > $O/build_tests.log 2>&1 ) &
P1=$!
python3 bench/compare --build build-compare --out $O/compare --scenes-dir $S --parts none > $O/build_compare.log 2>&1 &
P2=$!
wait $P1; echo "tests build rc $?"; wait $P2; echo "compare build rc $?"; tail -3 $O/build_compare.log
el built
for t in test_gpu_build_atomic test_gpu_build_slots32 test_gpu_render test_embree; do timeout 150 $B/tests/$t --jobs 8 > $O/$t.txt 2>&1; echo "$t rc $? $(tail -1 $O/$t.txt)"; done | tee $O/tests.txt
el tests; pack
K=build-compare/kdalloc-atomic
san() { tool=$1; name=$2; shift 2; timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 "$@" > /tmp/san.log 2>&1; echo "$tool $name: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log)"; }
{
san memcheck bunny $K build --gpu --pool-factor 200 --watchdog 0 $S/bunny.obj.gz
san racecheck bunny $K build --gpu --pool-factor 200 --watchdog 0 $S/bunny.obj.gz
san memcheck grow $K build --gpu --watchdog 0 --scene spheres --triangles 100000 --pool auto --pool-start 1
san racecheck grow $K build --gpu --watchdog 0 --scene spheres --triangles 100000 --pool auto --pool-start 1
san memcheck cmalloc-teapot build-compare/kdalloc-cmalloc build --gpu --pool-factor 200 --watchdog 0 $S/teapot.obj.gz
san memcheck countedbump-teapot build-compare/kdalloc-countedbump build --gpu --pool-factor 200 --watchdog 0 $S/teapot.obj.gz
} 2>&1 | tee $O/sanitizers.txt
el sanitizers
{
$K render --gpu $S/conference.obj.gz --eye=1500,500,500 --target=-800,0,-900 --width 1920 --height 1080 --validate 50000 -o /tmp/c.png 2>&1 | grep -iE "valid|mismatch" | sed 's/^/conference: /'
for sc in sponza dragon; do $K render --gpu $S/$sc.obj.gz --validate 20000 -o /tmp/$sc.png 2>&1 | grep -iE "valid|mismatch" | sed "s/^/$sc: /"; done
for g in huge wide flat tilted coincident; do $K render --gpu --scene $g --validate 20000 -o /tmp/$g.png 2>&1 | grep -iE "valid|mismatch|error" | sed "s/^/$g: /"; done
for wh in "1920 1080" "3840 2160"; do set -- $wh
  $K render --gpu $S/conference.obj.gz --eye=1500,500,500 --target=-800,0,-900 --width $1 --height $2 --frames 10 -o /tmp/c.png 2>&1 | grep -E "render:" | sed "s/^/rays $1x$2: /"
done
} 2>&1 | tee $O/validate_rays.txt
el validate; pack
for sc in sponza sibenik conference dragon; do echo "== profile $sc"; $K build $S/$sc.obj.gz --gpu --pool fixed --pool-factor 200 --repeat 5 --profile 2>&1 | grep -E "waiting|nodes by|chunks of|pops|^nodes|N_ref|SAH cost|build time"; done > $O/profile.txt 2>&1
cat $O/profile.txt; el profile; pack
A=atomic,awmalloc,cmalloc,cfmalloc,cmmalloc,cfmmalloc,cudamalloc,countedbump
timeout 150 python3 bench/compare --build build-compare --skip-build --out $O/compare --scenes-dir $S --parts ds --allocators $A --timeout 60 > $O/compare_ds.log 2>&1
echo "ds rc $?"; el ds; pack
timeout 60 python3 bench/compare --build build-compare --skip-build --out $O/compare --scenes-dir $S --parts ds,embree --allocators $A --timeout 40 > $O/compare_embree.log 2>&1
echo "embree rc $?"; el embree; pack
timeout $(( 585 - ($(date +%s) - T0) )) python3 bench/compare --build build-compare --skip-build --out $O/compare --scenes-dir $S --parts ds20 --allocators $A --timeout 40 > $O/compare_ds20.log 2>&1
echo "ds20 rc $?"; el ds20; pack
