#!/bin/bash
# session 34 call 8: GPU tests, sanitizers, --validate on the push_stamp mend
set -u
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
S=$PWD/.scenes; B=build-gpu
{ echo "commit $(cat .bins/commit.txt)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; }
cmake -S . -B $B -G Ninja -DKDA_ALL_ALLOCATORS=ON -DKDA_SHARED_SCENES=$S > /tmp/c.log 2>&1 && cmake --build $B --target test_gpu_build_atomic test_gpu_build_slots32 test_gpu_render kdalloc-atomic > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
for t in test_gpu_build_atomic test_gpu_build_slots32 test_gpu_render; do timeout 150 $B/tests/$t --jobs 8 > /tmp/$t.txt 2>&1; echo "$t rc $? $(tail -1 /tmp/$t.txt)"; done
K=$B/kdalloc-atomic
san() { tool=$1; name=$2; shift 2; timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 "$@" > /tmp/san.log 2>&1; echo "$tool $name: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log)"; }
san memcheck bunny $K build --gpu --pool-factor 200 --watchdog 0 $S/bunny.obj.gz
san racecheck bunny $K build --gpu --pool-factor 200 --watchdog 0 $S/bunny.obj.gz
san memcheck grow $K build --gpu --watchdog 0 --scene spheres --triangles 100000 --pool auto --pool-start 1
$K render --gpu $S/conference.obj.gz --eye=1500,500,500 --target=-800,0,-900 --width 1920 --height 1080 --validate 50000 -o /tmp/c.png 2>&1 | grep -iE "valid|mismatch" | sed 's/^/conference: /'
$K build $S/sponza.obj.gz --gpu --pool-factor 200 --repeat 5 2>&1 | grep -E "^nodes|SAH cost|build time"
