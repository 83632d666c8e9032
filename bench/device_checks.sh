#!/bin/bash
# device_checks.sh - the GPU checks a change to GPU code must pass, in one
# run on the GPU machine: the GPU tests, compute-sanitizer (memcheck and
# racecheck), kdalloc render --validate, the ray rates on the fixed
# Conference view, and --profile.
#
#   bash bench/device_checks.sh OUTDIR [SCENES_DIR]
#
# Run from the project root on the GPU machine, with .deps carried
# (../shared/device/deps.sh) and the shared scenes in SCENES_DIR (default
# ../shared/scenes).  Builds build-gpu (tests) and build-compare (every
# allocator's kdalloc, as bench/compare does), then writes into OUTDIR:
# gpu.txt, tests.txt, sanitizers.txt, validate_rays.txt, profile.txt,
# times.txt and the build logs.  Exit status 1 when a test or a sanitizer
# fails or --validate reports a mismatch.  bench/compare --skip-build
# --build build-compare can follow in the same run for Tables 3 and 4
# and Embree beside kdalloc.
set -u
O=${1:?usage: device_checks.sh OUTDIR [SCENES_DIR]}
S=$(cd "${2:-../shared/scenes}" && pwd)
mkdir -p "$O"
. .deps/env.sh
export LD_LIBRARY_PATH=$PWD/.deps/lib:${LD_LIBRARY_PATH:-}
T0=$(date +%s)
el() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$O/times.txt"; }
failed=0
{ echo "commit ${KDA_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$O/gpu.txt"

B=build-gpu
# Every allocator's GPU tests where they differ from AtomicMalloc's: ours
# (CountedBump, SlabBump) and Gallatin (with its headers, KDA_PEERS_DIR).
# KDA_CHECK_TESTS replaces the list.
TESTS="test_gpu_build_atomic test_gpu_build_slots32 test_gpu_render test_gpu_countedbump test_gpu_alloc_countedbump
       test_gpu_build_countedbump test_gpu_alloc_slabbump test_gpu_build_slabbump test_embree"
[ -d "${KDA_PEERS_DIR:-../shared/peers}/gallatin" ] && TESTS="$TESTS test_gpu_alloc_gallatin test_gpu_build_gallatin"
TESTS=${KDA_CHECK_TESTS:-$TESTS}
(cmake -S . -B $B -G Ninja -DKDA_ALL_ALLOCATORS=ON -DKDA_PEERS=ON -DKDA_SHARED_SCENES="$S" > "$O/cmake_tests.log" 2>&1 &&
  cmake --build $B --target $TESTS kdalloc-embree > "$O/build_tests.log" 2>&1) &
P1=$!
python3 bench/compare --build build-compare --out "$O/compare" --scenes-dir "$S" --parts none > "$O/build_compare.log" 2>&1 &
P2=$!
wait $P1 || { echo "device_checks: building the tests failed ($O/build_tests.log)"; exit 1; }
wait $P2 || { echo "device_checks: building kdalloc failed ($O/build_compare.log)"; exit 1; }
el built

for t in $TESTS; do
  exe=$B/tests/alloc/$t # the allocators' and the GPU build's tests; the others in tests/
  [ -x "$exe" ] || exe=$B/tests/$t
  timeout -k 10 150 "$exe" --jobs 8 > "$O/$t.txt" 2>&1
  echo "$t rc $? $(tail -1 "$O/$t.txt")"
done | tee "$O/tests.txt"
grep -q "rc [^0]" "$O/tests.txt" && failed=1
el tests

K=build-compare/kdalloc-atomic
san() {
  local tool=$1 name=$2
  shift 2
  timeout -k 10 90 compute-sanitizer --tool "$tool" --error-exitcode 9 "$@" > /tmp/device_checks_san.log 2>&1
  local rc=$?
  echo "$tool $name: rc $rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/device_checks_san.log)"
}
{
  san memcheck bunny $K build --gpu --pool-factor 200 --watchdog 0 "$S/bunny.obj.gz"
  san racecheck bunny $K build --gpu --pool-factor 200 --watchdog 0 "$S/bunny.obj.gz"
  san memcheck grow $K build --gpu --watchdog 0 --scene spheres --triangles 100000 --pool auto --pool-start 1
  san racecheck grow $K build --gpu --watchdog 0 --scene spheres --triangles 100000 --pool auto --pool-start 1
  san memcheck cmalloc-teapot build-compare/kdalloc-cmalloc build --gpu --pool-factor 200 --watchdog 0 "$S/teapot.obj.gz"
  san memcheck countedbump-teapot build-compare/kdalloc-countedbump build --gpu --pool-factor 200 --watchdog 0 "$S/teapot.obj.gz"
  san memcheck slabbump-teapot build-compare/kdalloc-slabbump build --gpu --pool-factor 200 --watchdog 0 "$S/teapot.obj.gz"
  san racecheck slabbump-bunny build-compare/kdalloc-slabbump build --gpu --pool-factor 200 --watchdog 0 "$S/bunny.obj.gz"
  san memcheck slabbump-grow build-compare/kdalloc-slabbump build --gpu --watchdog 0 --scene spheres --triangles 100000 --pool auto --pool-start 1
  san memcheck slabbump-reuse build-compare/kdalloc-allocbench-slabbump --test reuse --size 64 --pool-bytes 33554432
  # the ray caster: primary rays, then shadow rays, every pixel checked on the CPU
  for tool in memcheck racecheck; do
    san $tool render-teapot $K render --gpu "$S/teapot.obj.gz" --width 320 --height 180 --validate all -o /tmp/device_checks.png
    san $tool render-teapot-shadows $K render --gpu "$S/teapot.obj.gz" --shadows --width 320 --height 180 --validate all -o /tmp/device_checks.png
  done
  case " $(echo $TESTS) " in *" test_gpu_render "*)
    san memcheck test_gpu_render --target-processes all $B/tests/test_gpu_render --jobs 1 ;; esac
  case " $(echo $TESTS) " in *" test_gpu_build_gallatin "*)
    san memcheck gallatin-teapot build-compare/kdalloc-gallatin build --gpu --pool-factor 200 --watchdog 0 "$S/teapot.obj.gz" ;; esac
  # CountedBump with slots shared by several SMs (tests/alloc/test_gpu_countedbump.c), smaller grids under the tools
  export KDA_STRESS_WARPS=256
  for t in one_slot_for_every_sm four_sms_a_slot_every_lane tight_pool_shared_slots; do
    san racecheck "countedbump-$t" --target-processes all $B/tests/alloc/test_gpu_countedbump --jobs 1 --filter "gpu_countedbump/$t"
  done
  san memcheck countedbump-shared-slots --target-processes all $B/tests/alloc/test_gpu_countedbump --jobs 1
  unset KDA_STRESS_WARPS
} 2>&1 | tee "$O/sanitizers.txt"
grep -q "rc [^0]" "$O/sanitizers.txt" && failed=1
el sanitizers

conf_view="--eye=1500,500,500 --target=-800,0,-900"
{
  $K render --gpu "$S/conference.obj.gz" $conf_view --width 1920 --height 1080 --validate 50000 -o /tmp/device_checks.png 2>&1 |
    grep -iE "valid|mismatch" | sed 's/^/conference: /'
  for sc in sponza dragon; do
    $K render --gpu "$S/$sc.obj.gz" --validate 20000 -o /tmp/device_checks.png 2>&1 | grep -iE "valid|mismatch" | sed "s/^/$sc: /"
  done
  for sc in sponza conference; do # shadow and ambient-occlusion rays: occlusion queries against brute force
    $K render --gpu "$S/$sc.obj.gz" --shade ao --shadows --validate 5000 -o /tmp/device_checks.png 2>&1 |
      grep -iE "valid|mismatch" | sed "s/^/$sc-ao-shadows: /"
  done
  for g in huge wide flat tilted coincident; do
    $K render --gpu --scene $g --validate 20000 -o /tmp/device_checks.png 2>&1 | grep -iE "valid|mismatch|error" | sed "s/^/$g: /"
  done
  for mode in shadows:--shadows ao:"--shade ao"; do
    $K render --gpu "$S/conference.obj.gz" $conf_view --width 1920 --height 1080 --frames 10 ${mode#*:} \
      -o /tmp/device_checks.png 2>&1 | grep -E "render:" | sed "s/^/rays ${mode%%:*} 1920x1080: /"
  done
  for wh in "1920 1080" "3840 2160"; do
    set -- $wh
    $K render --gpu "$S/conference.obj.gz" $conf_view --width $1 --height $2 --frames 10 -o /tmp/device_checks.png 2>&1 |
      grep -E "render:" | sed "s/^/rays $1x$2: /"
  done
} 2>&1 | tee "$O/validate_rays.txt"
grep -E "validation" "$O/validate_rays.txt" | grep -qv " 0 mismatches" && failed=1
el validate

for sc in sponza sibenik conference dragon; do
  echo "== profile $sc"
  $K build "$S/$sc.obj.gz" --gpu --pool fixed --pool-factor 200 --repeat 5 --profile 2>&1 |
    grep -E "waiting|nodes by|chunks of|pops|^nodes|N_ref|SAH cost|build time"
done > "$O/profile.txt" 2>&1
cat "$O/profile.txt"
el profile
[ $failed = 0 ] && echo "device_checks: all passed" || echo "device_checks: FAILED (see $O)"
exit $failed
