#!/bin/bash
# session 34 call 6: README examples on 7006959 (CMalloc), verbatim
set -u
export LD_LIBRARY_PATH=$PWD/.bins:${LD_LIBRARY_PATH:-}
O=/tmp/t6; rm -rf $O; mkdir -p $O
mkdir -p /tmp/x/shared /tmp/x/work; ln -sfn $PWD/.scenes /tmp/x/shared/scenes
cp .bins/kd-base-cmalloc /tmp/kdalloc; K=/tmp/kdalloc
cd /tmp/x/work
{ echo '$ kdalloc build ../shared/scenes/conference.obj.gz --repeat 5 --pool-factor 200'; $K build ../shared/scenes/conference.obj.gz --repeat 5 --pool-factor 200; } > $O/build_fixed.txt 2>&1
{ echo '$ kdalloc build ../shared/scenes/conference.obj.gz --repeat 5'; $K build ../shared/scenes/conference.obj.gz --repeat 5; } > $O/build_auto.txt 2>&1
{ $K render ../shared/scenes/conference.obj.gz -o /tmp/conf.png --eye=1500,500,500 --target=-800,0,-900 --width 1920 --height 1080 --frames 10 --validate 20000; } > $O/render.txt 2>&1
cat $O/*.txt
tar czf $OUT/t6.tgz -C /tmp t6
