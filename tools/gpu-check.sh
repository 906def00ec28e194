#!/bin/sh
# gpu-check.sh — the checks that need a real GPU, in one run (DEVELOPERS.md: the device machine).
# Builds, lists the devices, runs the conformance suite, a training run in shadow mode and the
# benchmarks on every GPU backend that is present (Vulkan on the GPU's own driver; CUDA once its
# plugin exists), beside the CPU plugin measured in the same run. Prints everything; exit status 1
# when any step failed.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-gpu}
status=0
step() { echo "== $*"; "$@" || { echo "== FAILED ($?): $*"; status=1; }; }
step cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARITY_BUILD_TESTS=OFF
step cmake --build "$BUILD" -j "$(nproc)"
step "$BUILD/bin/parity-info"
for b in vulkan cuda; do
  if ! "$BUILD/bin/parity-info" --json 2>/dev/null | grep -q "\"name\": *\"$b\""; then echo "== $b: not built here"; continue; fi
  step "$BUILD/bin/parity-conform" --backend "$b"
  step env PARITY_BACKEND="$b" "$BUILD/bin/parity-train" --steps 50 --verify
  step "$BUILD/bin/parity-bench" --backend cpu --backend "$b" --reps 5
done
exit $status
