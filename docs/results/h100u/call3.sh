#!/bin/bash
# session 35 call 3: GPU tests, sanitizers, --validate on 94f9c77 (the 32-byte box records);
# Nsight Compute SASS counts of the timed build (Sponza, Conference, Buddha) for bench/ncu_lines
set -u
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.bins:$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
O=/tmp/u3; rm -rf $O; mkdir -p $O
pack() { tar czf $OUT/u3.tgz -C /tmp u3; }
S=$PWD/.scenes; B=build-gpu
{ echo "commit $(cat .bins/commit.txt)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $O/checks.txt
cmake -S . -B $B -G Ninja -DKDA_ALL_ALLOCATORS=ON -DKDA_SHARED_SCENES=$S > /tmp/c.log 2>&1 && cmake --build $B --target test_gpu_build_atomic test_gpu_build_slots32 test_gpu_render kdalloc-atomic kdalloc-cmalloc > /tmp/b.log 2>&1 || { tail -20 /tmp/b.log; exit 1; }
{
for t in test_gpu_build_atomic test_gpu_build_slots32 test_gpu_render; do timeout 150 $B/tests/$t --jobs 8 > /tmp/$t.txt 2>&1; echo "$t rc $? $(tail -1 /tmp/$t.txt)"; done
K=$B/kdalloc-atomic
san() { tool=$1; name=$2; shift 2; timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 "$@" > /tmp/san.log 2>&1; echo "$tool $name: rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log)"; }
san memcheck bunny $K build --gpu --pool-factor 200 --watchdog 0 $S/bunny.obj.gz
san racecheck bunny $K build --gpu --pool-factor 200 --watchdog 0 $S/bunny.obj.gz
san memcheck grow $K build --gpu --watchdog 0 --scene spheres --triangles 100000 --pool auto --pool-start 1
san memcheck teapot-cmalloc $B/kdalloc-cmalloc build --gpu --pool-factor 200 --watchdog 0 $S/teapot.obj.gz
for sc in conference sponza dragon; do
  $K render --gpu $S/$sc.obj.gz --width 1920 --height 1080 --validate 50000 -o /tmp/v.png 2>&1 | grep -iE "valid|mismatch" | sed "s/^/$sc: /"
done
$K build $S/sponza.obj.gz --gpu --pool-factor 200 --repeat 5 2>&1 | grep -E "^nodes|SAH cost|build time"
} 2>&1 | tee -a $O/checks.txt
pack
CU=$(dirname $(which nvcc))/cuobjdump
$CU -sass -fun build_kernel .bins/kd-li | grep -E "^\s+/\*[0-9a-f]{4}\*/" | sed 's/;.*//' > /tmp/a.sass
$CU -sass -fun build_kernel .bins/k_li.cubin | grep -E "^\s+/\*[0-9a-f]{4}\*/" | sed 's/;.*//' > /tmp/b.sass
echo "sass lines $(wc -l < /tmp/a.sass) $(wc -l < /tmp/b.sass), identical: $(cmp -s /tmp/a.sass /tmp/b.sass && echo yes || echo no)" | tee $O/sass_match.txt
for sc in sponza conference buddha_100k; do
timeout 200 ncu --clock-control none -k regex:'^build_kernel$' -c 1 --section SourceCounters --section WarpStateStats --section SchedulerStats --import-source no -o /tmp/rep_$sc .bins/kd-li build .scenes/$sc.obj.gz --gpu --pool fixed --pool-factor 200 --repeat 1 > $O/ncu_run_$sc.txt 2>&1
ncu -i /tmp/rep_$sc.ncu-rep --page source --csv --print-source sass > $O/sass_$sc.csv 2>$O/sass_err_$sc.txt
ncu -i /tmp/rep_$sc.ncu-rep --page details > $O/details_$sc.txt 2>&1
gzip -f $O/sass_$sc.csv
echo "ncu $sc done"
done
pack
