#!/bin/bash
# Builds and runs the driver-fact probe on the GPU machine; results go to $OUT (or ./out).
# Usage (from the repository root): ci/gpu-probes/run.sh [all|second|graph|vmm]
#   graph: builds and runs graph_probe.cc (stream capture and graphs, issue 12) instead.
#   vmm:   builds and runs vmm_probe.cc (virtual memory management) instead; the machine info
#          and the result are also printed to stdout.
set -u
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
here=$(cd "$(dirname "$0")" && pwd)
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv
  ls -l /usr/lib/x86_64-linux-gnu/libnccl.so* 2>&1
  g++ --version | head -1
} > "$OUT/machine.txt" 2>&1
mode=${1:-all}
if [ "$mode" = graph ]; then
  g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include "$here/graph_probe.cc" \
    -o /tmp/cuhal_graph_probe -lcuda > "$OUT/build-graph.txt" 2>&1 \
    || { cat "$OUT/build-graph.txt"; exit 1; }
  timeout 500 /tmp/cuhal_graph_probe all 8 > "$OUT/probe-graph.txt" 2>&1
  echo "graph probe rc=$?"
  grep "^== " "$OUT/probe-graph.txt" | awk '{print $3}' | sort | uniq -c
  exit 0
fi
if [ "$mode" = vmm ]; then
  g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include "$here/vmm_probe.cc" \
    -o /tmp/cuhal_vmm_probe -lcuda > "$OUT/build-vmm.txt" 2>&1 \
    || { cat "$OUT/build-vmm.txt"; exit 1; }
  start=$(date +%s)
  timeout 360 /tmp/cuhal_vmm_probe all 8 > "$OUT/probe-vmm.txt" 2>&1
  echo "vmm probe rc=$? in $(( $(date +%s) - start )) s"
  cat "$OUT/machine.txt"
  grep "^== " "$OUT/probe-vmm.txt" | awk '{print $3}' | sort | uniq -c
  grep -c . "$OUT/probe-vmm.txt"
  cat "$OUT/probe-vmm.txt"
  exit 0
fi
g++ -std=c++17 -O1 -Wall -I/usr/local/cuda/include "$here/probe.cc" -o /tmp/cuhal_probe \
  -ldl -lcuda > "$OUT/build.txt" 2>&1 || { cat "$OUT/build.txt"; exit 1; }
export NCCL_DEBUG=WARN
timeout 500 /tmp/cuhal_probe $mode 8 > "$OUT/probe-$mode.txt" 2>&1
echo "probe rc=$?"
grep "^== " "$OUT/probe-$mode.txt" | awk '{print $3}' | sort | uniq -c
