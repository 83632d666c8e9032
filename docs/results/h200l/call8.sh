#!/bin/bash
# session 35 call 8: Nsight Compute SASS counts of the timed build on cf6a1fa (Buddha, Conference, Sponza)
set -u
export LD_LIBRARY_PATH=$PWD/.bins:${LD_LIBRARY_PATH:-}
O=/tmp/u8; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/gpu.txt
for sc in buddha_100k conference sponza; do
timeout 200 ncu --clock-control none -k regex:'^build_kernel$' -c 1 --section SourceCounters --section WarpStateStats --section SchedulerStats --import-source no -o /tmp/rep_$sc .bins/kd-li build .scenes/$sc.obj.gz --gpu --pool fixed --pool-factor 200 --repeat 1 > $O/ncu_run_$sc.txt 2>&1
ncu -i /tmp/rep_$sc.ncu-rep --page source --csv --print-source sass > $O/sass_$sc.csv 2>$O/sass_err_$sc.txt
ncu -i /tmp/rep_$sc.ncu-rep --page details > $O/details_$sc.txt 2>&1
gzip -f $O/sass_$sc.csv; echo "ncu $sc done"
done
tar czf $OUT/u8.tgz -C /tmp u8
