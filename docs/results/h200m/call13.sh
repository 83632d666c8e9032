# session 36 call 13 (HEAD 93adcfe plus bench/device_checks.sh and bench/ab_builds.sh): the GPU checks through device_checks.sh, then ab_builds.sh on one binary against itself
set -u
O=$OUT/checks
bash bench/device_checks.sh $O .scenes > $OUT/device_checks.log 2>&1; echo "device_checks rc $?"
tail -2 $OUT/device_checks.log
cat $O/tests.txt $O/sanitizers.txt $O/validate_rays.txt
mkdir -p /tmp/abbins && cp build-compare/kdalloc-atomic /tmp/abbins/kd-base && cp build-compare/kdalloc-atomic /tmp/abbins/kd-same
export LD_LIBRARY_PATH=$PWD/.deps/lib
SCENES="sponza conference" SCENES_DIR=.scenes bash bench/ab_builds.sh $OUT/ab 2 /tmp/abbins base same > $OUT/ab_log.txt 2>&1; echo "ab rc $?"
bench/ab_summary $OUT/ab/ab.jsonl
