#!/usr/bin/env bash
# One device call for issue 13 item 5 (one allocator at most 200 ns/op AND at most 1.3x reserved
# over used on random_mixed): builds replay_real_test and alloc_bench (Release, with
# -DCUHAL_WITH_TORCH=ON when TORCH_PY's torch is installed, so PyTorch's allocator runs in the
# same process), then
#   1. replays every shipped trace on every allocator (replay_real_test, CUHAL_REPLAY_REPEAT
#      passes each, a fresh allocator per pass): the table of ns/op and reserved/used per trace
#      and allocator, core-expandable and pytorch included;
#   2. alloc_bench on the real driver: what one expandable growth costs the driver by size
#      (BM_VmmGrowth: cuMemCreate + cuMemMap + cuMemSetAccess, then cuMemUnmap + cuMemRelease)
#      against a classic segment (BM_MemAlloc), and core-expandable with a least growth of 8 and
#      16 MiB (CachingAllocatorParams::expandable_min_growth) beside the other allocators on
#      every trace.
# Everything lands in $OUT; the summary goes to stdout. Timeouts: build 230 s, replay 100 s,
# alloc_bench 100 s (under 8 minutes with the configure step).
#   ci/gpu-probes/alloc_speed.sh      (on the GPU machine; .deb/ carried for the offline deps)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/alloc-speed-out}; mkdir -p "$OUT"
D=/tmp/deps; mkdir -p $D
for deb in .deb/*.deb; do dpkg -x "$deb" $D; done
TORCH_PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
CMAKE_ARGS=(-G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DCUHAL_WERROR=OFF
  "-DCMAKE_PREFIX_PATH=$D/usr;$D/usr/lib/x86_64-linux-gnu/cmake;$D/usr/share/cmake"
  "-DCMAKE_CXX_FLAGS=-isystem $D/usr/include")
if [ -x "$TORCH_PY" ]; then
  CMAKE_ARGS+=(-DCUHAL_WITH_TORCH=ON -DPython3_EXECUTABLE="$TORCH_PY")
else
  echo "no torch at $TORCH_PY: PyTorch's allocator is left out"
fi
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
T0=$SECONDS
# CUHAL_ALLOC_BUILD: an existing build directory to reuse (configured by the caller, e.g. a
# nightly build made with -DCUHAL_WITH_TORCH=ON); otherwise build/alloc-speed is configured here.
B=${CUHAL_ALLOC_BUILD:-build/alloc-speed}
if [ -z "${CUHAL_ALLOC_BUILD:-}" ]; then
  cmake -S . -B "$B" "${CMAKE_ARGS[@]}" > "$OUT/configure.log" 2>&1 \
    || { tail -30 "$OUT/configure.log"; exit 1; }
fi
timeout 230 cmake --build "$B" -j16 --target replay_real_test alloc_bench \
  > "$OUT/build.log" 2>&1 || { grep -m8 -B2 -A8 "error" "$OUT/build.log"; tail -5 "$OUT/build.log"; exit 1; }
echo "build: $((SECONDS-T0)) s"
export CUHAL_REAL_REQUIRED=1

CUHAL_REPLAY_REPEAT=${CUHAL_REPLAY_REPEAT:-5} timeout 100 "$B"/tests/trace/replay_real_test \
  > "$OUT/replay.log" 2>&1
echo "replay_real_test rc $? at $((SECONDS-T0)) s (ns/op: passes timed whole, the mean over the passes)"
grep -E "^REPLAY" "$OUT/replay.log" | python3 -c '
import json, sys
print("| trace | allocator | ns/op | p99 ns | reserved high MiB | used high MiB | reserved/used | driver calls |")
print("|---|---|---|---|---|---|---|---|")
for line in sys.stdin:
    if line.startswith("REPLAY-SKIP"):
        print(line.strip()); continue
    r = json.loads(line[len("REPLAY "):])
    print("| %s | %s | %.0f | %.0f | %.1f | %.1f | %.3f | %d |" % (r["trace"], r["allocator"],
          r["ns_per_op"], r["p99_ns"], r["reserved_high"] / 2**20, r["used_high"] / 2**20,
          r["reserved_per_used"], r["driver_calls"]))
'
grep -E "Failure|FAILED" "$OUT/replay.log" | head -20

timeout 100 "$B"/bench/alloc_bench --backend=real --min_growth_mib=8,16 \
  --benchmark_filter='BM_VmmGrowth|BM_MemAlloc|BM_Replay/.*/(core|core-expandable.*|pytorch)/' \
  --benchmark_min_time=0.1s --benchmark_out="$OUT/alloc_bench.json" \
  --benchmark_out_format=json > "$OUT/alloc_bench.txt" 2>&1
echo "alloc_bench rc $? at $((SECONDS-T0)) s (ns/op: every operation timed alone, clock reads included)"
python3 - "$OUT/alloc_bench.json" <<'EOF'
import json, sys
try:
    runs = json.load(open(sys.argv[1]))["benchmarks"]
except Exception as e:  # the text output says why
    sys.exit(f"no alloc_bench.json: {e}")
for b in runs:
    name = b["name"].removesuffix("/manual_time")
    if "error_message" in b:
        print(f"{name}: {b['error_message']}")
    elif "grow_us" in b:
        print(f"{name}: grow {b['grow_us']:.1f} us, give back {b['release_us']:.1f} us")
    elif "alloc_us" in b:
        print(f"{name}: cuMemAlloc {b['alloc_us']:.1f} us, cuMemFree {b['free_us']:.1f} us")
    else:
        print(f"{name}: {b['ns_per_op']:.0f} ns/op, p99 {b['p99_ns']:.0f} ns, "
              f"{b['reserved_per_used']:.3f}x ({b['reserved_high'] / 2**20:.1f} / "
              f"{b['used_high'] / 2**20:.1f} MiB), {b['driver_calls']:.0f} driver calls")
EOF
grep -E "not benchmarked|error" "$OUT/alloc_bench.txt" | head -10
echo "total $((SECONDS-T0)) s"
