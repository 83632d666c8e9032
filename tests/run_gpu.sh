#!/usr/bin/env bash
# Runs what needs a GPU, on a machine that has one: builds every allocator
# variant, runs the whole test suite (the GPU tests included), then
# compute-sanitizer memcheck and racecheck over the allocators' GPU stress
# test, the survey's tests and GPU builds with every allocator.
#
#   tests/run_gpu.sh [BUILD_DIR]          (default build-gpu)
# Environment: SCENES  folder of the shared scenes, if not ../shared/scenes
#              LOGS    where the logs go (default BUILD_DIR/logs)
#              SKIP_SANITIZER=1  stop after the test suite
#              SKIP_SUITE=1      only the build and compute-sanitizer
set -uo pipefail
build=${1:-build-gpu}
logs=${LOGS:-$build/logs}
mkdir -p "$logs"
status=0

step() { echo "=== $*"; }

step "configure and build (all allocators)"
cmake -S . -B "$build" -G Ninja -DKDA_ALL_ALLOCATORS=ON -DKDA_PEERS=ON ${SCENES:+-DKDA_SHARED_SCENES=$SCENES} >"$logs/configure.log" 2>&1 &&
  cmake --build "$build" >"$logs/build.log" 2>&1 || { tail -30 "$logs/build.log"; exit 1; }

if [ "${SKIP_SUITE:-0}" != 1 ]; then
  step "test suite"
  ctest --test-dir "$build" --output-on-failure -j4 --timeout 200 >"$logs/ctest.log" 2>&1 || status=1
  grep -E "tests passed|Failed|\*\*\*" "$logs/ctest.log"
  grep -hE "SAH GPU|pixels differ|allocations, [0-9]+ NULL|pool (grown|fixed)" "$build"/Testing/Temporary/LastTest.log \
    >"$logs/gpu_test_info.log" 2>/dev/null
fi

allocators=$(cat "$build/allocators.txt") # CMake's one list
sanitize() { # tool log command...
  local tool=$1 log=$2
  shift 2
  timeout 150 compute-sanitizer --tool "$tool" --error-exitcode 9 --target-processes all "$@" >"$log" 2>&1
  local rc=$?
  echo "$tool $(basename "$log" .log): exit $rc, $(grep -c '^========= ' "$log") sanitizer lines"
  [ $rc = 0 ] || status=1
}
[ "${SKIP_SANITIZER:-0}" = 1 ] && exit $status
step "compute-sanitizer"
for a in $allocators; do
  KDA_STRESS_WARPS=256 sanitize memcheck "$logs/memcheck_alloc_$a.log" \
    "$build/tests/alloc/test_gpu_alloc_$a" --jobs 1 --filter 'gpu_alloc/warp_coalesced'
  if "$build/kdalloc-$a" --version | grep -q "k-d tree builds: yes"; then
    sanitize memcheck "$logs/memcheck_build_$a.log" "$build/kdalloc-$a" build --gpu --pool-factor 200 \
      "${SCENES:-../shared/scenes}/teapot.obj.gz"
    # the parking kernel, from a start of 1x: the pool grows several times (fixed where it cannot)
    sanitize memcheck "$logs/memcheck_grow_$a.log" "$build/kdalloc-$a" build --gpu --watchdog 0 \
      --scene spheres --triangles 100000 --pool auto --pool-start 1
  fi
done
# the survey's tests (bench/survey.cu): live blocks, mixed sizes, exhaustion
for a in $allocators; do
  sanitize memcheck "$logs/memcheck_survey_$a.log" sh -c "
    for t in live-warp live-thread mixed; do $build/kdalloc-allocbench-$a --test \$t --requesters 2000 --size 256 || exit 1; done
    $build/kdalloc-allocbench-$a --test exhaustion --size 1024 --pool-bytes 268435456"
done
sanitize racecheck "$logs/racecheck_build.log" "$build/kdalloc-cmalloc" build --gpu --pool-factor 200 \
  "${SCENES:-../shared/scenes}/teapot.obj.gz"
for a in atomic cmalloc countedbump; do
  sanitize racecheck "$logs/racecheck_grow_$a.log" "$build/kdalloc-$a" build --gpu --watchdog 0 \
    --scene spheres --triangles 100000 --pool auto --pool-start 1
done
for a in cfmmalloc scatteralloc halloc fdgmalloc countedbump; do
  sanitize racecheck "$logs/racecheck_alloc_$a.log" env KDA_STRESS_WARPS=256 \
    "$build/tests/alloc/test_gpu_alloc_$a" --jobs 1 --filter 'gpu_alloc/warp_coalesced'
done
for a in scatteralloc halloc countedbump; do
  sanitize racecheck "$logs/racecheck_build_$a.log" "$build/kdalloc-$a" build --gpu "${SCENES:-../shared/scenes}/teapot.obj.gz"
done
exit $status
